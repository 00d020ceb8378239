//! Printing query results as a table (like `cypher-shell`), JSON or CSV.

use std::fmt::Write;

use plexus::{QueryResult, ResultValue};
use plexus_import::edgelist::{escape_control, printable};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// Byte arrays up to this long are shown in a table as hexadecimal; longer ones by their length. JSON and CSV
/// write every byte (base64, as Neo4j's HTTP API does).
const SHOWN_BYTES: usize = 64;

/// `bytes` in standard base64.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A value in Cypher literal notation, as the table shows it.
pub fn literal(v: &ResultValue) -> String {
    let mut s = String::new();
    write_literal(v, &mut s);
    s
}

fn props(p: &std::collections::BTreeMap<std::sync::Arc<str>, ResultValue>, out: &mut String) {
    if p.is_empty() {
        return;
    }
    out.push_str(" {");
    for (i, (k, v)) in p.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_name(k, out);
        out.push_str(": ");
        write_literal(v, out);
    }
    out.push('}');
}

/// A label, type or key as Cypher reads it back (`plexus::cypher::format::identifier`: in backticks unless it is a
/// plain name, as `cypher-shell` prints `(:`my label` {`a b`: 1})`), control characters escaped.
fn write_name(name: &str, out: &mut String) {
    for c in plexus::cypher::format::identifier(name).chars() {
        escape_control(c, out);
    }
}

/// A column name as a table header shows it, control characters escaped.
fn header(name: &str) -> String {
    printable(name).into_owned()
}

fn write_literal(v: &ResultValue, out: &mut String) {
    match v {
        ResultValue::Null => out.push_str("null"),
        ResultValue::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        ResultValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        ResultValue::Float(f) => out.push_str(&plexus::cypher::format::float_to_string(*f)),
        ResultValue::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c => escape_control(c, out),
                }
            }
            out.push('"');
        }
        ResultValue::Bytes(b) if b.len() <= SHOWN_BYTES => {
            out.push_str("0x");
            for byte in b.iter() {
                let _ = write!(out, "{byte:02x}");
            }
        }
        ResultValue::Bytes(b) => {
            let _ = write!(out, "<{} bytes>", b.len());
        }
        ResultValue::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_literal(item, out);
            }
            out.push(']');
        }
        ResultValue::Map(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_name(k, out);
                out.push_str(": ");
                write_literal(v, out);
            }
            out.push('}');
        }
        ResultValue::Node(n) => {
            out.push('(');
            for l in &n.labels {
                out.push(':');
                write_name(l, out);
            }
            props(&n.properties, out);
            out.push(')');
        }
        ResultValue::Rel(r) => {
            out.push_str("[:");
            write_name(&r.rel_type, out);
            props(&r.properties, out);
            out.push(']');
        }
        ResultValue::Path(p) => {
            for (i, n) in p.nodes.iter().enumerate() {
                if i > 0 {
                    let r = &p.rels[i - 1];
                    let forward = r.start == p.nodes[i - 1].id;
                    out.push_str(if forward { "-" } else { "<-" });
                    write_literal(&ResultValue::Rel(Box::new(r.clone())), out);
                    out.push_str(if forward { "->" } else { "-" });
                }
                write_literal(&ResultValue::Node(Box::new(n.clone())), out);
            }
        }
        ResultValue::Point(p) => out.push_str(&plexus::cypher::functions::spatial::to_string(p)),
        other => match plexus::cypher::temporal::to_string(&other.clone().into_value()) {
            Some(s) => out.push_str(&s),
            None => {
                let _ = write!(out, "{other:?}");
            }
        },
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_props(p: &std::collections::BTreeMap<std::sync::Arc<str>, ResultValue>, out: &mut String) {
    out.push('{');
    for (i, (k, v)) in p.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(k, out);
        out.push(':');
        json(v, out);
    }
    out.push('}');
}

/// A value as JSON: nodes and relationships as objects with their id, labels or type, and properties.
pub fn json(v: &ResultValue, out: &mut String) {
    match v {
        ResultValue::Null => out.push_str("null"),
        ResultValue::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        ResultValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        ResultValue::Float(f) if f.is_finite() => {
            let _ = write!(out, "{f:?}");
        }
        ResultValue::Float(f) => json_string(&plexus::cypher::format::float_to_string(*f), out),
        ResultValue::String(s) => json_string(s, out),
        ResultValue::Bytes(b) => json_string(&base64(b), out),
        ResultValue::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json(item, out);
            }
            out.push(']');
        }
        ResultValue::Map(m) => json_props(m, out),
        ResultValue::Node(n) => {
            let _ = write!(out, "{{\"id\":{},\"labels\":[", n.id);
            for (i, l) in n.labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(l, out);
            }
            out.push_str("],\"properties\":");
            json_props(&n.properties, out);
            out.push('}');
        }
        ResultValue::Rel(r) => {
            let _ = write!(out, "{{\"id\":{},\"type\":", r.id);
            json_string(&r.rel_type, out);
            let _ = write!(out, ",\"start\":{},\"end\":{},\"properties\":", r.start, r.end);
            json_props(&r.properties, out);
            out.push('}');
        }
        ResultValue::Path(p) => {
            out.push_str("{\"nodes\":");
            json(&ResultValue::List(p.nodes.iter().map(|n| ResultValue::Node(Box::new(n.clone()))).collect()), out);
            out.push_str(",\"relationships\":");
            json(&ResultValue::List(p.rels.iter().map(|r| ResultValue::Rel(Box::new(r.clone()))).collect()), out);
            out.push('}');
        }
        other => json_string(&literal(other), out),
    }
}

/// A CSV field; an empty string is quoted (`""`), so that it reads back apart from null (an empty field).
fn csv_field(s: &str) -> String {
    if s.is_empty() || s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The start of a JSON or CSV result, before its rows (a table needs every row first, for its widths).
pub fn begin(columns: &[String], format: Format, out: &mut String) {
    match format {
        Format::Table => {}
        Format::Json => {
            out.push_str("{\"columns\":[");
            for (i, c) in columns.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(c, out);
            }
            out.push_str("],\"rows\":[");
        }
        Format::Csv => {
            if !columns.is_empty() {
                out.push_str(&columns.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(","));
                out.push('\n');
            }
        }
    }
}

/// Rows of a JSON or CSV result, `before` rows having been written already.
pub fn rows(rows: &[Vec<ResultValue>], format: Format, before: usize, out: &mut String) {
    match format {
        Format::Table => {}
        Format::Json => {
            for (i, row) in rows.iter().enumerate() {
                if i + before > 0 {
                    out.push(',');
                }
                out.push('[');
                for (j, v) in row.iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    json(v, out);
                }
                out.push(']');
            }
        }
        Format::Csv => {
            for row in rows {
                let fields: Vec<String> = row
                    .iter()
                    .map(|v| match v {
                        ResultValue::String(s) => csv_field(s),
                        ResultValue::Bytes(b) => base64(b),
                        ResultValue::Null => String::new(),
                        other => csv_field(&literal(other)),
                    })
                    .collect();
                out.push_str(&fields.join(","));
                out.push('\n');
            }
        }
    }
}

/// The end of a JSON or CSV result, after its rows.
pub fn end(format: Format, out: &mut String) {
    if format == Format::Json {
        out.push_str("]}\n");
    }
}

/// Columns on a terminal: wide (East Asian) characters take two, combining marks none.
fn display_width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// A table's columns and their widths: from all of its rows, or for a streamed table from its first rows (a
/// later cell wider than its column is written whole, past the column's edge, rather than cut).
pub struct TableLayout {
    columns: Vec<String>,
    widths: Vec<usize>,
    line: String,
}

impl TableLayout {
    /// The layout fitting `columns` and `rows`, with the rows' cells as they are shown.
    pub fn fit(columns: &[String], rows: &[Vec<ResultValue>]) -> (TableLayout, Vec<Vec<String>>) {
        let cells: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(literal).collect()).collect();
        let columns: Vec<String> = columns.iter().map(|c| header(c)).collect();
        let mut widths: Vec<usize> = columns.iter().map(|c| display_width(c)).collect();
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(display_width(c));
            }
        }
        let line = widths.iter().map(|w| format!("+{}", "-".repeat(w + 2))).collect::<String>() + "+\n";
        (TableLayout { columns, widths, line }, cells)
    }

    /// The lines above the rows: a rule, the column names, a rule.
    pub fn top(&self, out: &mut String) {
        out.push_str(&self.line);
        self.row(&self.columns, out);
        out.push_str(&self.line);
    }

    pub fn row(&self, cells: &[String], out: &mut String) {
        for (v, w) in cells.iter().zip(&self.widths) {
            out.push_str("| ");
            out.push_str(v);
            out.push_str(&" ".repeat(w.saturating_sub(display_width(v)) + 1));
        }
        out.push_str("|\n");
    }

    /// `rows` as cells, a line each.
    pub fn rows(&self, rows: &[Vec<ResultValue>], out: &mut String) {
        for r in rows {
            let cells: Vec<String> = r.iter().map(literal).collect();
            self.row(&cells, out);
        }
    }

    pub fn bottom(&self, out: &mut String) {
        out.push_str(&self.line);
    }
}

/// Renders a whole result.
pub fn render(result: &QueryResult, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Table => {
            if result.columns.is_empty() || (result.plan.is_some() && result.rows.is_empty()) {
                return out;
            }
            let (layout, cells) = TableLayout::fit(&result.columns, &result.rows);
            layout.top(&mut out);
            for row in &cells {
                layout.row(row, &mut out);
            }
            layout.bottom(&mut out);
        }
        Format::Json | Format::Csv => {
            begin(&result.columns, format, &mut out);
            rows(&result.rows, format, 0, &mut out);
            end(format, &mut out);
        }
    }
    out
}

/// What the database told about the statement (an unknown label, a cartesian product), a line each, as
/// `warning: ... (line 1, column 10)`; empty when it told nothing.
pub fn notifications(result: &QueryResult) -> String {
    let mut out = String::new();
    for n in &result.notifications {
        let severity = n.severity.name().to_ascii_lowercase();
        let at = n.position;
        out.push_str(&format!("{severity}: {} (line {}, column {})\n", n.description, at.line, at.column));
    }
    out
}

/// The one-line summary after a result: rows, changes, time.
pub fn summary(result: &QueryResult, elapsed: std::time::Duration) -> String {
    summary_of(result, result.rows.len(), elapsed)
}

/// [`summary`] of a result whose `rows` rows were streamed (and are no longer in it).
pub fn summary_of(result: &QueryResult, rows: usize, elapsed: std::time::Duration) -> String {
    let s = &result.stats;
    let mut parts = Vec::new();
    let mut add = |n: u64, one: &str, many: &str, what: &str| {
        if n > 0 {
            parts.push(format!("{n} {} {what}", if n == 1 { one } else { many }));
        }
    };
    add(s.nodes_created, "node", "nodes", "created");
    add(s.nodes_deleted, "node", "nodes", "deleted");
    add(s.relationships_created, "relationship", "relationships", "created");
    add(s.relationships_deleted, "relationship", "relationships", "deleted");
    add(s.properties_set, "property", "properties", "set");
    add(s.labels_added, "label", "labels", "added");
    add(s.labels_removed, "label", "labels", "removed");
    add(s.indexes_added, "index", "indexes", "added");
    add(s.indexes_removed, "index", "indexes", "removed");
    add(s.constraints_added, "constraint", "constraints", "added");
    add(s.constraints_removed, "constraint", "constraints", "removed");
    add(s.system_updates, "system update", "system updates", "made");
    let head = if result.columns.is_empty() {
        "0 rows".to_string()
    } else {
        format!("{rows} row{}", if rows == 1 { "" } else { "s" })
    };
    let changes = if parts.is_empty() { String::new() } else { format!(", {}", parts.join(", ")) };
    format!("{head}{changes} ({:.2} ms)", elapsed.as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_in_table_cells_and_headers() {
        let text = "a\tb|x\ry|\u{1b}[31mred|\u{7f}\u{85}|\n";
        assert_eq!(literal(&ResultValue::String(text.into())), r#""a\tb|x\ry|\u001B[31mred|\u007F\u0085|\n""#);
        assert_eq!(header("a\tb\u{1b}"), "a\\tb\\u001B");
        assert_eq!(literal(&ResultValue::String("é 字".into())), "\"é 字\"");
    }

    #[test]
    fn json_and_csv_write_every_byte_and_tables_show_short_byte_arrays() {
        let short = ResultValue::Bytes(vec![0u8, 1, 0xff].into());
        let long = ResultValue::Bytes(vec![7u8; 100].into());
        let result = QueryResult {
            columns: vec!["b".into(), "l".into()].into(),
            rows: vec![vec![short.clone(), ResultValue::List(vec![long.clone()])]],
            ..Default::default()
        };
        let expected_long = base64(&[7u8; 100]);
        assert_eq!(
            render(&result, Format::Json),
            format!("{{\"columns\":[\"b\",\"l\"],\"rows\":[[\"AAH/\",[\"{expected_long}\"]]]}}\n")
        );
        assert!(render(&result, Format::Csv).starts_with("b,l\nAAH/,"), "{}", render(&result, Format::Csv));
        assert_eq!(literal(&short), "0x0001ff");
        assert_eq!(literal(&long), "<100 bytes>");
    }

    #[test]
    fn summaries_count_in_the_singular_and_plural() {
        let mut result = QueryResult::default();
        result.stats.nodes_created = 1;
        result.stats.relationships_created = 2;
        result.stats.properties_set = 1;
        result.stats.constraints_added = 1;
        let s = summary(&result, std::time::Duration::ZERO);
        assert!(
            s.starts_with("0 rows, 1 node created, 2 relationships created, 1 property set, 1 constraint added ("),
            "{s}"
        );
        let mut result = QueryResult::default();
        result.stats.indexes_added = 1;
        result.stats.indexes_removed = 2;
        let s = summary(&result, std::time::Duration::ZERO);
        assert!(s.starts_with("0 rows, 1 index added, 2 indexes removed ("), "{s}");
    }
}
