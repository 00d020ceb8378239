//! Pure scalar functions (interim set).

use crate::error::{CypherError, Result};
use crate::value::Value;

fn arg_type(name: &str, v: &Value) -> CypherError {
    CypherError::type_error("InvalidArgumentType", format!("{name}() cannot take a {}", v.type_name()))
}

/// Calls a pure function by lower-cased name; `None` when the name is not one of them.
pub fn call(name: &str, args: &[Value]) -> Option<Result<Value>> {
    let a = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
    Some(match name {
        "tostring" => match a(0) {
            Value::Null => Ok(Value::Null),
            Value::String(s) => Ok(Value::String(s)),
            Value::Int(i) => Ok(Value::string(i.to_string())),
            Value::Float(f) => Ok(Value::string(format_float(f))),
            Value::Bool(b) => Ok(Value::string(b.to_string())),
            v => match crate::temporal::to_string(&v) {
                Some(s) => Ok(Value::string(s)),
                None => Err(arg_type(name, &v)),
            },
        },
        "tointeger" => match a(0) {
            Value::Null => Ok(Value::Null),
            Value::Int(i) => Ok(Value::Int(i)),
            Value::Float(f) => Ok(Value::Int(f as i64)),
            Value::String(s) => Ok(s
                .trim()
                .parse::<i64>()
                .ok()
                .or_else(|| s.trim().parse::<f64>().ok().map(|f| f as i64))
                .map_or(Value::Null, Value::Int)),
            v => Err(arg_type(name, &v)),
        },
        "tofloat" => match a(0) {
            Value::Null => Ok(Value::Null),
            Value::Int(i) => Ok(Value::Float(i as f64)),
            Value::Float(f) => Ok(Value::Float(f)),
            Value::String(s) => Ok(s.trim().parse::<f64>().map_or(Value::Null, Value::Float)),
            v => Err(arg_type(name, &v)),
        },
        "abs" => match a(0) {
            Value::Null => Ok(Value::Null),
            Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
            Value::Float(f) => Ok(Value::Float(f.abs())),
            v => Err(arg_type(name, &v)),
        },
        "range" => {
            let (Value::Int(start), Value::Int(end)) = (a(0), a(1)) else {
                return Some(Err(CypherError::argument("InvalidArgumentType", "range() takes integers")));
            };
            let step = match args.get(2) {
                Some(Value::Int(s)) => *s,
                None => 1,
                Some(_) => return Some(Err(CypherError::argument("InvalidArgumentType", "range() takes integers"))),
            };
            if step == 0 {
                return Some(Err(CypherError::argument("NumberOutOfRange", "range() step cannot be 0")));
            }
            let mut out = Vec::new();
            let mut i = start;
            while (step > 0 && i <= end) || (step < 0 && i >= end) {
                out.push(Value::Int(i));
                match i.checked_add(step) {
                    Some(n) => i = n,
                    None => break,
                }
            }
            Ok(Value::list(out))
        }
        "toupper" | "upper" => match a(0) {
            Value::Null => Ok(Value::Null),
            Value::String(s) => Ok(Value::string(s.to_uppercase())),
            v => Err(arg_type(name, &v)),
        },
        "tolower" | "lower" => match a(0) {
            Value::Null => Ok(Value::Null),
            Value::String(s) => Ok(Value::string(s.to_lowercase())),
            v => Err(arg_type(name, &v)),
        },
        "head" => match a(0) {
            Value::List(l) => Ok(l.first().cloned().unwrap_or(Value::Null)),
            Value::Null => Ok(Value::Null),
            v => Err(arg_type(name, &v)),
        },
        "last" => match a(0) {
            Value::List(l) => Ok(l.last().cloned().unwrap_or(Value::Null)),
            Value::Null => Ok(Value::Null),
            v => Err(arg_type(name, &v)),
        },
        "tail" => match a(0) {
            Value::List(l) => Ok(Value::list(l.iter().skip(1).cloned().collect())),
            Value::Null => Ok(Value::Null),
            v => Err(arg_type(name, &v)),
        },
        "coalesce" => Ok(args.iter().find(|v| !v.is_null()).cloned().unwrap_or(Value::Null)),
        "sqrt" => match a(0) {
            Value::Int(i) => Ok(Value::Float((i as f64).sqrt())),
            Value::Float(f) => Ok(Value::Float(f.sqrt())),
            Value::Null => Ok(Value::Null),
            v => Err(arg_type(name, &v)),
        },
        _ => return None,
    })
}

/// Whether `name` is a pure function known here.
pub fn is_known(name: &str) -> bool {
    matches!(
        name,
        "tostring"
            | "tointeger"
            | "tofloat"
            | "abs"
            | "range"
            | "toupper"
            | "upper"
            | "tolower"
            | "lower"
            | "head"
            | "last"
            | "tail"
            | "coalesce"
            | "sqrt"
    )
}

/// Allowed argument counts `(min, max)`.
pub fn arity(name: &str) -> Option<(usize, usize)> {
    Some(match name {
        "range" => (2, 3),
        "coalesce" => (1, usize::MAX),
        n if is_known(n) => (1, 1),
        _ => return None,
    })
}

pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else if f == f.trunc() && f.abs() < 1e15 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}
