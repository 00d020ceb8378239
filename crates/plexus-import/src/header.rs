//! Header rows in the format of Neo4j's offline importer.
//!
//! Each header field is `name:type`, or just `name` for a string property. Types (case-insensitive):
//! `ID` or `ID(space)` (the node's id; with a name it is also stored as that property), `LABEL` (labels, split
//! on the array delimiter), `START_ID[(space)]`, `END_ID[(space)]`, `TYPE`, `IGNORE`, and the property types
//! of [`ScalarType`], each optionally followed by `[]` for an array.

use crate::values::ScalarType;

/// What one column holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Column {
    /// The node id, in an id space (`None`: the global one); stored as `property` when named.
    Id {
        space: Option<String>,
        property: Option<String>,
    },
    Label,
    StartId {
        space: Option<String>,
    },
    EndId {
        space: Option<String>,
    },
    Type,
    Ignore,
    Property {
        name: String,
        ty: ScalarType,
        array: bool,
    },
}

/// The `(space)` after a keyword of `len` bytes at the start of `kind`.
fn space(kind: &str, upper: &str, len: usize) -> Result<Option<String>, String> {
    let inner = &kind[len..];
    if inner.is_empty() {
        return Ok(None);
    }
    match inner.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
        Some(name) if !name.is_empty() => Ok(Some(name.to_string())),
        _ => Err(format!("'{kind}' should be {upper} or {upper}(id space)")),
    }
}

/// Parses one header field.
pub fn parse_column(field: &str) -> Result<Column, String> {
    let field = field.trim();
    // Options follow the type: only a point column's default system (`location:point{crs:WGS-84}`).
    let (typed, options) = match field.find('{') {
        Some(at) if field.ends_with('}') => (&field[..at], Some(&field[at..])),
        _ => (field, None),
    };
    // Spaces around the name and the type are dropped as around the whole field (`age :int` is `age`).
    let (name, kind) = match typed.rsplit_once(':') {
        Some((name, kind)) => (name.trim(), kind.trim()),
        None if field.is_empty() => return Err("empty column name".into()),
        None => return Ok(Column::Property { name: field.to_string(), ty: ScalarType::String, array: false }),
    };
    if options.is_some() && !kind.trim_end_matches("[]").eq_ignore_ascii_case("point") {
        return Err(format!("column options in '{field}' are not supported (only a point column's {{crs: ...}})"));
    }
    let upper = kind.to_ascii_uppercase();
    let named = (!name.is_empty()).then(|| name.to_string());
    let column = if upper.starts_with("START_ID") {
        Column::StartId { space: space(kind, "START_ID", 8)? }
    } else if upper.starts_with("END_ID") {
        Column::EndId { space: space(kind, "END_ID", 6)? }
    } else if upper.starts_with("ID") && (upper.len() == 2 || upper.as_bytes()[2] == b'(') {
        Column::Id { space: space(kind, "ID", 2)?, property: named }
    } else if upper == "LABEL" {
        Column::Label
    } else if upper == "TYPE" {
        Column::Type
    } else if upper == "IGNORE" {
        Column::Ignore
    } else {
        let (base, array) = match kind.strip_suffix("[]") {
            Some(base) => (base, true),
            None => (kind, false),
        };
        let mut ty = ScalarType::from_name(base).ok_or_else(|| format!("'{field}': unknown type '{kind}'"))?;
        if let Some(options) = options {
            let entries = crate::values::parse_point_map(options).map_err(|e| format!("'{field}': {e}"))?;
            ty = ScalarType::Point(crate::values::named_crs(&entries).map_err(|e| format!("'{field}': {e}"))?);
        }
        let name = named.ok_or_else(|| format!("'{field}': a property column needs a name"))?;
        // `id:ID:int` would otherwise make a property named `id:ID`.
        if let Some((_, inner)) = name.rsplit_once(':') {
            let upper = inner.to_ascii_uppercase();
            let keyword = ["ID", "START_ID", "END_ID", "LABEL", "TYPE", "IGNORE"]
                .iter()
                .any(|k| upper == *k || upper.starts_with(&format!("{k}(")));
            if keyword || ScalarType::from_name(inner.trim_end_matches("[]")).is_some() {
                return Err(format!(
                    "'{field}': a column takes one kind or type after its name, not both '{inner}' and '{kind}' \
                     (the ids' type is set for the whole import with --id-type)"
                ));
            }
        }
        Column::Property { name, ty, array }
    };
    Ok(column)
}

/// A node file's columns, checked.
#[derive(Clone, Debug)]
pub struct NodeHeader {
    pub columns: Vec<Column>,
    pub id: Option<usize>,
}

/// A relationship file's columns, checked.
#[derive(Clone, Debug)]
pub struct RelHeader {
    pub columns: Vec<Column>,
    pub start: usize,
    pub end: usize,
    pub ty: Option<usize>,
}

/// A header error: the 1-based column and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderError {
    pub column: usize,
    pub message: String,
}

fn parse_all(fields: &[String]) -> Result<Vec<Column>, HeaderError> {
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| parse_column(f).map_err(|message| HeaderError { column: i + 1, message }))
        .collect()
}

fn check_names(columns: &[Column]) -> Result<(), HeaderError> {
    let mut seen = std::collections::HashSet::new();
    for (i, c) in columns.iter().enumerate() {
        let name = match c {
            Column::Property { name, .. } | Column::Id { property: Some(name), .. } => name,
            _ => continue,
        };
        if !seen.insert(name.as_str()) {
            return Err(HeaderError { column: i + 1, message: format!("property '{name}' appears twice") });
        }
    }
    Ok(())
}

impl NodeHeader {
    pub fn parse(fields: &[String]) -> Result<NodeHeader, HeaderError> {
        let columns = parse_all(fields)?;
        let mut id = None;
        for (i, c) in columns.iter().enumerate() {
            let err = |message: &str| Err(HeaderError { column: i + 1, message: message.into() });
            match c {
                Column::Id { .. } if id.is_some() => return err("a node file has one ID column"),
                Column::Id { .. } => id = Some(i),
                Column::StartId { .. } | Column::EndId { .. } | Column::Type => {
                    return err("START_ID, END_ID and TYPE belong in relationship files")
                }
                _ => {}
            }
        }
        check_names(&columns)?;
        Ok(NodeHeader { columns, id })
    }

    /// The id space of the file's nodes.
    pub fn space(&self) -> Option<&str> {
        match self.id.map(|i| &self.columns[i]) {
            Some(Column::Id { space, .. }) => space.as_deref(),
            _ => None,
        }
    }

    /// The property that stores the id, if any.
    pub fn id_property(&self) -> Option<&str> {
        match self.id.map(|i| &self.columns[i]) {
            Some(Column::Id { property, .. }) => property.as_deref(),
            _ => None,
        }
    }
}

impl RelHeader {
    /// `has_default_type`: the file was given with a type, so a TYPE column is optional.
    pub fn parse(fields: &[String], has_default_type: bool) -> Result<RelHeader, HeaderError> {
        let columns = parse_all(fields)?;
        let (mut start, mut end, mut ty) = (None, None, None);
        for (i, c) in columns.iter().enumerate() {
            let err = |message: &str| Err(HeaderError { column: i + 1, message: message.into() });
            match c {
                Column::StartId { .. } if start.is_some() => return err("a relationship file has one START_ID"),
                Column::EndId { .. } if end.is_some() => return err("a relationship file has one END_ID"),
                Column::Type if ty.is_some() => return err("a relationship file has one TYPE column"),
                Column::StartId { .. } => start = Some(i),
                Column::EndId { .. } => end = Some(i),
                Column::Type => ty = Some(i),
                Column::Id { .. } | Column::Label => return err("ID and LABEL belong in node files"),
                _ => {}
            }
        }
        let missing = |message: &str| HeaderError { column: 1, message: message.into() };
        let start = start.ok_or_else(|| missing("no :START_ID column"))?;
        let end = end.ok_or_else(|| missing("no :END_ID column"))?;
        if ty.is_none() && !has_default_type {
            return Err(missing("no :TYPE column: add one or give the type as --relationships TYPE=FILE"));
        }
        check_names(&columns)?;
        Ok(RelHeader { columns, start, end, ty })
    }

    pub fn start_space(&self) -> Option<&str> {
        match &self.columns[self.start] {
            Column::StartId { space } => space.as_deref(),
            _ => None,
        }
    }

    pub fn end_space(&self) -> Option<&str> {
        match &self.columns[self.end] {
            Column::EndId { space } => space.as_deref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_storage::value::Crs;

    fn cols(s: &str) -> Vec<String> {
        s.split(',').map(String::from).collect()
    }

    #[test]
    fn columns() {
        assert_eq!(
            parse_column("name").unwrap(),
            Column::Property { name: "name".into(), ty: ScalarType::String, array: false }
        );
        assert_eq!(parse_column(":ID").unwrap(), Column::Id { space: None, property: None });
        assert_eq!(
            parse_column("personId:ID(Person)").unwrap(),
            Column::Id { space: Some("Person".into()), property: Some("personId".into()) }
        );
        assert_eq!(parse_column(":start_id(Person)").unwrap(), Column::StartId { space: Some("Person".into()) });
        assert_eq!(parse_column(":END_ID").unwrap(), Column::EndId { space: None });
        assert_eq!(parse_column(":LABEL").unwrap(), Column::Label);
        assert_eq!(parse_column("x:IGNORE").unwrap(), Column::Ignore);
        assert_eq!(
            parse_column("scores:int[]").unwrap(),
            Column::Property { name: "scores".into(), ty: ScalarType::Int, array: true }
        );
        assert_eq!(
            parse_column("a:b:Double").unwrap(),
            Column::Property { name: "a:b".into(), ty: ScalarType::Float, array: false }
        );
        assert!(parse_column("x:whatever").unwrap_err().contains("unknown type"));
        assert!(parse_column("id:ID:int").unwrap_err().contains("not both 'ID' and 'int'"));
        assert!(parse_column("x:int:string").unwrap_err().contains("one kind or type"));
        assert!(matches!(parse_column("a:b:int"), Ok(Column::Property { name, .. }) if name == "a:b"));
        assert_eq!(
            parse_column("at:point{crs:WGS-84}").unwrap(),
            Column::Property { name: "at".into(), ty: ScalarType::Point(Some(Crs::Wgs84)), array: false }
        );
        assert_eq!(
            parse_column("trail:point[]").unwrap(),
            Column::Property { name: "trail".into(), ty: ScalarType::Point(None), array: true }
        );
        assert!(parse_column("at:point{crs:mars}").unwrap_err().contains("unknown crs"));
        assert!(parse_column("n:int{crs:WGS-84}").unwrap_err().contains("not supported"));
        assert!(parse_column(":int").unwrap_err().contains("needs a name"));
        assert!(parse_column(":ID()").is_err());
        assert!(parse_column("id:ID(Person){id-type:long}").is_err());
    }

    #[test]
    fn node_and_relationship_headers() {
        let h = NodeHeader::parse(&cols("id:ID(Person),name,:LABEL,age:int")).unwrap();
        assert_eq!((h.id, h.space(), h.id_property()), (Some(0), Some("Person"), Some("id")));
        assert_eq!(NodeHeader::parse(&cols(":ID,:ID")).unwrap_err().column, 2);
        assert_eq!(NodeHeader::parse(&cols("a,b,a:int")).unwrap_err().column, 3);
        assert!(NodeHeader::parse(&cols(":ID,:START_ID")).is_err());
        let r = RelHeader::parse(&cols(":START_ID(Person),since:int,:END_ID(City),:TYPE"), false).unwrap();
        assert_eq!(
            (r.start, r.end, r.ty, r.start_space(), r.end_space()),
            (0, 2, Some(3), Some("Person"), Some("City"))
        );
        assert!(RelHeader::parse(&cols(":START_ID,:END_ID"), false).unwrap_err().message.contains("TYPE"));
        assert!(RelHeader::parse(&cols(":START_ID,:END_ID"), true).is_ok());
        assert!(RelHeader::parse(&cols(":START_ID,x"), true).unwrap_err().message.contains("END_ID"));
    }
}
