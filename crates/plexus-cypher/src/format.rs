//! Values as text: the strings `toString` and string concatenation produce ([`to_cypher_string`], with floats
//! printed the way Java and Neo4j print them: `1.0`, `0.001`, `1.0E7`, `1.0E-4`) and values in Cypher literal
//! notation ([`literal`]) for `EXPLAIN` and the shell.

use std::fmt::Write;

use crate::temporal;
use crate::value::Value;

/// A float as `toString` prints it (Java's `Double.toString`): plain decimal notation with at least one fractional
/// digit when `1e-3 <= |v| < 1e7`, otherwise `d.dddE±n`; the shortest digits that read back as the same float.
pub fn float_to_string(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    let sci = format!("{:e}", v.abs());
    let (mantissa, exp) = sci.split_once('e').expect("exponent notation");
    let exp: i32 = exp.parse().expect("exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::new();
    if v < 0.0 {
        out.push('-');
    }
    let magnitude = v.abs();
    if (1e-3..1e7).contains(&magnitude) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        out.push('.');
        out.push_str(if digits.len() > 1 { &digits[1..] } else { "0" });
        let _ = write!(out, "E{exp}");
    }
    out
}

/// The string `toString(v)` returns, and what a value turns into when concatenated to a string: strings as they
/// are, numbers, booleans and temporal values in their usual text forms. Other values (which `toString` rejects)
/// print as [`literal`]s; `null` as `null`.
pub fn to_cypher_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => float_to_string(*f),
        Value::Bool(b) => b.to_string(),
        _ => match temporal::to_string(v) {
            Some(s) => s,
            None => literal(v),
        },
    }
}

/// A value in Cypher literal notation: `null`, `true`, `1`, `1.5`, `'it\'s'`, `[1, 2]`, ``{a: 1, `b c`: 2}``,
/// `date('2024-01-31')`. Values without a literal form print as `Node(3)`, `Relationship(4)`,
/// `Path(Node(1), Relationship(4), Node(2))`, `bytes('00ff')`, `NaN`, `Infinity`.
pub fn literal(v: &Value) -> String {
    let mut out = String::new();
    write_literal(&mut out, v);
    out
}

fn write_literal(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&float_to_string(*f)),
        Value::String(s) => write_string(out, s),
        Value::Bytes(b) => {
            out.push_str("bytes('");
            for byte in b.iter() {
                let _ = write!(out, "{byte:02x}");
            }
            out.push_str("')");
        }
        Value::List(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write_literal(out, item);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (n, (k, v)) in m.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                out.push_str(&identifier(k));
                out.push_str(": ");
                write_literal(out, v);
            }
            out.push('}');
        }
        Value::Node(n) => {
            let _ = write!(out, "Node({})", n.0);
        }
        Value::Rel(r) => {
            let _ = write!(out, "Relationship({})", r.0);
        }
        Value::Path(p) => {
            out.push_str("Path(");
            for (n, node) in p.nodes.iter().enumerate() {
                if n > 0 {
                    let _ = write!(out, ", Relationship({}), ", p.rels[n - 1].0);
                }
                let _ = write!(out, "Node({})", node.0);
            }
            out.push(')');
        }
        Value::Point(p) => out.push_str(&crate::functions::spatial::to_string(p)),
        Value::Date(_)
        | Value::LocalTime(_)
        | Value::Time(_)
        | Value::LocalDateTime(_)
        | Value::DateTime(_)
        | Value::Duration(_) => {
            let function = match v {
                Value::Date(_) => "date",
                Value::LocalTime(_) => "localtime",
                Value::Time(_) => "time",
                Value::LocalDateTime(_) => "localdatetime",
                Value::DateTime(_) => "datetime",
                _ => "duration",
            };
            match temporal::to_string(v) {
                Some(s) => {
                    out.push_str(function);
                    out.push('(');
                    write_string(out, &s);
                    out.push(')');
                }
                // The temporal module cannot print it: show the stored fields.
                None => {
                    let _ = write!(out, "{v:?}");
                }
            }
        }
    }
}

/// Writes a single-quoted string literal with Cypher escapes.
fn write_string(out: &mut String, s: &str) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// A name as Cypher accepts it: bare if it is a plain identifier, otherwise in backticks.
pub fn identifier(name: &str) -> String {
    let mut chars = name.chars();
    let plain = matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use plexus_storage::{NodeId, RelId};

    use super::*;
    use crate::value::Path;

    #[test]
    fn floats_print_like_java() {
        let cases = [
            (1.0, "1.0"),
            (1.5, "1.5"),
            (2.3, "2.3"),
            (3.6, "3.6"),
            (-82.9, "-82.9"),
            (100.0, "100.0"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1234567.0, "1234567.0"),
            (9999999.5, "9999999.5"),
            (1e7, "1.0E7"),
            (1.25e10, "1.25E10"),
            (1e20, "1.0E20"),
            (-1.5e-7, "-1.5E-7"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::MAX, "1.7976931348623157E308"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (v, want) in cases {
            assert_eq!(float_to_string(v), want);
        }
    }

    #[test]
    fn to_string_forms() {
        // TypeConversion4 [1], [2], [5]
        assert_eq!(to_cypher_string(&Value::Int(42)), "42");
        assert_eq!(to_cypher_string(&Value::Bool(true)), "true");
        assert_eq!(to_cypher_string(&Value::Float(2.3)), "2.3");
        assert_eq!(to_cypher_string(&Value::from("apa")), "apa");
    }

    #[test]
    fn literals() {
        let map = Value::map(
            [
                (Arc::from("a"), Value::Int(1)),
                (Arc::from("b c"), Value::list(vec![Value::Null, Value::Float(1.0)])),
                (Arc::from("d`"), Value::from("it's\n\\")),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(literal(&map), r"{a: 1, `b c`: [null, 1.0], `d```: 'it\'s\n\\'}");
        let path = Value::Path(Arc::new(Path { nodes: vec![NodeId(1), NodeId(2)], rels: vec![RelId(7)] }));
        assert_eq!(literal(&path), "Path(Node(1), Relationship(7), Node(2))");
        assert_eq!(literal(&Value::Node(NodeId(3))), "Node(3)");
        assert_eq!(literal(&Value::Bytes(Arc::from(&[0u8, 255][..]))), "bytes('00ff')");
        assert_eq!(literal(&Value::from("\u{1}")), r"'\u0001'");
        assert_eq!(literal(&Value::Float(f64::NAN)), "NaN");
    }
}
