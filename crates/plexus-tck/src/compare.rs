//! Between the engine and the notation: results into [`TckValue`]s, parameters out of them, and the comparison of
//! a query result with an expected table.
//!
//! Comparison follows the reference implementation: columns by name and position; rows as a multiset or in
//! order; values by [`TckValue::canonical`] (nodes by labels and properties, relationships by type and properties,
//! paths by their entities and directions, floats by value). Temporal values appear as strings in the notation, so
//! the engine's temporal values are compared through `plexus_cypher::temporal::to_tck_string`.

use std::collections::BTreeMap;
use std::sync::Arc;

use plexus_cypher::{NodeData, QueryResult, RelData, ResultValue, Value};

use crate::notation::{self, Hop, TckMap, TckNode, TckPath, TckRel, TckValue};
use crate::scenario::ResultOrder;

/// The string form of an engine temporal value, or `None` when it is not temporal (or the engine cannot print it).
fn temporal_text(value: &ResultValue) -> Option<String> {
    let v = match value {
        ResultValue::Date(d) => Value::Date(*d),
        ResultValue::LocalTime(t) => Value::LocalTime(*t),
        ResultValue::Time(t) => Value::Time(*t),
        ResultValue::LocalDateTime(t) => Value::LocalDateTime(*t),
        ResultValue::DateTime(t) => Value::DateTime(t.clone()),
        ResultValue::Duration(d) => Value::duration(*d),
        _ => return None,
    };
    Some(plexus_cypher::temporal::to_tck_string(&v).unwrap_or_else(|| format!("{v:?}")))
}

fn props_of(props: &BTreeMap<Arc<str>, ResultValue>) -> TckMap {
    props.iter().map(|(k, v)| (k.to_string(), from_result(v))).collect()
}

fn node_of(n: &NodeData) -> TckNode {
    TckNode { labels: n.labels.iter().map(|l| l.to_string()).collect(), props: props_of(&n.properties) }
}

fn rel_of(r: &RelData) -> TckRel {
    TckRel { rel_type: r.rel_type.to_string(), props: props_of(&r.properties) }
}

/// An engine result value in the notation.
pub fn from_result(value: &ResultValue) -> TckValue {
    match value {
        ResultValue::Null => TckValue::Null,
        ResultValue::Bool(b) => TckValue::Bool(*b),
        ResultValue::Int(i) => TckValue::Int(*i),
        ResultValue::Float(f) => TckValue::Float(*f),
        ResultValue::String(s) => TckValue::String(s.to_string()),
        // The notation has no byte strings; none of the TCK's queries produce one.
        ResultValue::Bytes(b) => TckValue::String(format!("bytes{b:?}")),
        ResultValue::List(items) => TckValue::List(items.iter().map(from_result).collect()),
        ResultValue::Map(m) => TckValue::Map(props_of(m)),
        ResultValue::Node(n) => TckValue::Node(node_of(n)),
        ResultValue::Rel(r) => TckValue::Rel(rel_of(r)),
        ResultValue::Path(p) => {
            let Some(first) = p.nodes.first() else {
                return TckValue::String(format!("malformed path {p:?}"));
            };
            let hops = p
                .rels
                .iter()
                .zip(p.nodes.iter().zip(p.nodes.iter().skip(1)))
                .map(|(r, (from, to))| Hop { rel: rel_of(r), forward: r.start == from.id, node: node_of(to) })
                .collect();
            TckValue::Path(TckPath { start: node_of(first), hops })
        }
        temporal => TckValue::String(temporal_text(temporal).unwrap_or_default()),
    }
}

/// A parameter value written in the notation, for the engine.
pub fn to_param(value: &TckValue) -> Result<Value, String> {
    Ok(match value {
        TckValue::Null => Value::Null,
        TckValue::Bool(b) => Value::Bool(*b),
        TckValue::Int(i) => Value::Int(*i),
        TckValue::Float(f) => Value::Float(*f),
        TckValue::String(s) => Value::from(s.as_str()),
        TckValue::List(items) => Value::list(items.iter().map(to_param).collect::<Result<_, _>>()?),
        TckValue::Map(m) => {
            Value::map(m.iter().map(|(k, v)| Ok((Arc::from(k.as_str()), to_param(v)?))).collect::<Result<_, String>>()?)
        }
        TckValue::Node(_) | TckValue::Rel(_) | TckValue::Path(_) => {
            return Err(format!("a graph entity cannot be a parameter: {value}"));
        }
    })
}

/// An expected result table: a header row of column names, then rows of values in the notation.
#[derive(Debug)]
pub struct ExpectedTable {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<TckValue>>,
}

impl ExpectedTable {
    pub fn parse(table: &[Vec<String>]) -> Result<ExpectedTable, String> {
        let Some((header, rows)) = table.split_first() else {
            return Err("the expected result has no header row".into());
        };
        let rows = rows
            .iter()
            .map(|row| row.iter().map(|cell| notation::parse(cell)).collect::<Result<Vec<_>, _>>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("in the expected result: {e}"))?;
        Ok(ExpectedTable { columns: header.clone(), rows })
    }
}

fn render_rows(columns: &[String], rows: &[Vec<TckValue>]) -> String {
    let mut out = format!("  | {} |\n", columns.join(" | "));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        out.push_str(&format!("  | {} |\n", cells.join(" | ")));
    }
    out
}

/// Checks an actual result against the expected table; the error explains the difference with both tables.
pub fn check_result(expected: &ExpectedTable, actual: &QueryResult, order: ResultOrder) -> Result<(), String> {
    let actual_rows: Vec<Vec<TckValue>> = actual.rows.iter().map(|row| row.iter().map(from_result).collect()).collect();
    let show = || {
        format!(
            "expected:\n{}actual:\n{}",
            render_rows(&expected.columns, &expected.rows),
            render_rows(&actual.columns, &actual_rows)
        )
    };
    if expected.columns[..] != actual.columns[..] {
        return Err(format!("columns differ\n{}", show()));
    }
    if expected.rows.len() != actual_rows.len() {
        return Err(format!("{} rows expected, {} returned\n{}", expected.rows.len(), actual_rows.len(), show()));
    }
    let canon = |rows: &[Vec<TckValue>]| -> Vec<Vec<String>> {
        let mut c: Vec<Vec<String>> =
            rows.iter().map(|r| r.iter().map(|v| v.canonical(order.unordered_lists)).collect()).collect();
        if !order.rows_ordered {
            c.sort();
        }
        c
    };
    if canon(&expected.rows) != canon(&actual_rows) {
        let how = if order.rows_ordered { "in order" } else { "in any order" };
        return Err(format!("rows differ ({how})\n{}", show()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(cells: &[&[&str]]) -> ExpectedTable {
        let owned: Vec<Vec<String>> = cells.iter().map(|r| r.iter().map(|c| c.to_string()).collect()).collect();
        ExpectedTable::parse(&owned).unwrap()
    }

    fn node(id: u64, labels: &[&str], props: &[(&str, ResultValue)]) -> NodeData {
        NodeData {
            id,
            labels: labels.iter().map(|l| Arc::from(*l)).collect(),
            properties: props.iter().map(|(k, v)| (Arc::from(*k), v.clone())).collect(),
        }
    }

    fn rel(id: u64, start: u64, end: u64, ty: &str) -> RelData {
        RelData { id, start, end, rel_type: ty.into(), properties: BTreeMap::new() }
    }

    fn result(columns: &[&str], rows: Vec<Vec<ResultValue>>) -> QueryResult {
        QueryResult { columns: columns.iter().map(|c| c.to_string()).collect(), rows, ..Default::default() }
    }

    const ANY: ResultOrder = ResultOrder { rows_ordered: false, unordered_lists: false };
    const ORDERED: ResultOrder = ResultOrder { rows_ordered: true, unordered_lists: false };

    #[test]
    fn entities_compare_without_ids() {
        let n = ResultValue::Node(Box::new(node(7, &["B", "A"], &[("name", ResultValue::String("x".into()))])));
        let expected = table(&[&["n"], &["(:A:B {name: 'x'})"]]);
        assert!(check_result(&expected, &result(&["n"], vec![vec![n.clone()]]), ANY).is_ok());
        let wrong = table(&[&["n"], &["(:A {name: 'x'})"]]);
        assert!(check_result(&wrong, &result(&["n"], vec![vec![n]]), ANY).is_err());
    }

    #[test]
    fn paths_keep_directions() {
        let a = node(1, &["A"], &[]);
        let b = node(2, &["B"], &[]);
        let c = node(3, &[], &[]);
        let path = ResultValue::Path(Box::new(plexus_cypher::PathData {
            nodes: vec![a, b, c],
            rels: vec![rel(10, 1, 2, "T"), rel(11, 3, 2, "S")],
        }));
        assert_eq!(from_result(&path).to_string(), "<(:A)-[:T]->(:B)<-[:S]-()>");
    }

    #[test]
    fn rows_as_multiset_or_in_order() {
        let rows = vec![vec![ResultValue::Int(2)], vec![ResultValue::Int(1)], vec![ResultValue::Int(1)]];
        let actual = result(&["x"], rows);
        assert!(check_result(&table(&[&["x"], &["1"], &["1"], &["2"]]), &actual, ANY).is_ok());
        assert!(check_result(&table(&[&["x"], &["1"], &["2"], &["2"]]), &actual, ANY).is_err());
        assert!(check_result(&table(&[&["x"], &["1"], &["1"], &["2"]]), &actual, ORDERED).is_err());
        assert!(check_result(&table(&[&["x"], &["2"], &["1"], &["1"]]), &actual, ORDERED).is_ok());
        assert!(check_result(&table(&[&["y"], &["2"], &["1"], &["1"]]), &actual, ORDERED).is_err());
        assert!(check_result(&table(&[&["x"]]), &result(&["x"], vec![]), ANY).is_ok());
    }

    #[test]
    fn list_order_and_number_types() {
        let list = ResultValue::List(vec![ResultValue::Int(2), ResultValue::Int(1)]);
        let actual = result(&["l"], vec![vec![list]]);
        let expected = table(&[&["l"], &["[1, 2]"]]);
        assert!(check_result(&expected, &actual, ANY).is_err());
        assert!(check_result(&expected, &actual, ResultOrder { rows_ordered: false, unordered_lists: true }).is_ok());
        let float = result(&["f"], vec![vec![ResultValue::Float(1.0)]]);
        assert!(check_result(&table(&[&["f"], &["1"]]), &float, ANY).is_err());
        assert!(check_result(&table(&[&["f"], &["1.0"]]), &float, ANY).is_ok());
        let nan = result(&["f"], vec![vec![ResultValue::Float(f64::NAN)]]);
        assert!(check_result(&table(&[&["f"], &["NaN"]]), &nan, ANY).is_ok());
    }

    #[test]
    fn parameters_from_notation() {
        let v = to_param(&notation::parse("{a: [1, 2.5, 'x', null, true]}").unwrap()).unwrap();
        let Value::Map(m) = v else { panic!() };
        let Value::List(items) = &m["a"] else { panic!() };
        assert!(matches!(
            items[..],
            [Value::Int(1), Value::Float(_), Value::String(_), Value::Null, Value::Bool(true)]
        ));
        assert!(to_param(&notation::parse("(:A)").unwrap()).is_err());
    }
}
