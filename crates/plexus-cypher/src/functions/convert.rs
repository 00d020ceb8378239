//! Type conversions: `toInteger`, `toFloat`, `toString`, `toBoolean`, their `...OrNull` forms (which answer `null`
//! where the plain ones raise an error) and their `...List` forms (which convert each element of a list, `null`
//! for those that do not convert).
//!
//! A string that does not parse converts to `null`; a value of a type that cannot convert at all (a list, a map,
//! a node...) is a runtime `TypeError` (`InvalidArgumentValue`, as the TCK expects).

use super::arg;
use crate::error::{CypherError, Result};
use crate::format::{float_to_string, to_cypher_string};
use crate::value::Value;

fn cannot_convert(function: &str, v: &Value) -> CypherError {
    CypherError::type_error("InvalidArgumentValue", format!("{function}() cannot convert a {}", v.type_name()))
}

/// Parses a float the way Java's `Double.parseDouble` does (surrounding whitespace, `NaN`, `Infinity`, exponent,
/// a trailing `d` or `f`), without hexadecimal floats.
pub fn parse_float(s: &str) -> Option<f64> {
    let s = s.trim_matches(|c: char| c <= ' ');
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    match unsigned {
        "NaN" => return Some(f64::NAN),
        "Infinity" => return Some(if s.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY }),
        _ => {}
    }
    let s = s.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(s);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E')) {
        return None;
    }
    s.parse().ok()
}

/// Parses an integer: digits with an optional sign, or failing that a decimal float (truncated towards zero). As in
/// Neo4j, and unlike `toFloat`, neither surrounding whitespace nor a `d`/`f` suffix is accepted. A number outside
/// the integer range has no integer: `None`, never the nearest one (`toInteger` then raises an error).
pub fn parse_integer(s: &str) -> Option<i64> {
    if !number_chars(s) {
        return None;
    }
    match s.parse::<i64>() {
        Ok(i) => return Some(i),
        Err(e) if matches!(e.kind(), std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow) => {
            return None
        }
        Err(_) => {}
    }
    if let Some(truncated) = truncate_decimal(s) {
        return truncated;
    }
    parse_float(s).and_then(float_to_integer)
}

/// A decimal without an exponent (`-12.999`), truncated by dropping its fraction's digits: exact, where the
/// nearest float of `0.9999999999999999999` is 1. `Some(None)` when the integer part is out of range; `None`
/// when `s` is not of that form.
fn truncate_decimal(s: &str) -> Option<Option<i64>> {
    let (whole, fraction) = s.split_once('.')?;
    let digits = whole.strip_prefix(['+', '-']).unwrap_or(whole);
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(digits) || !all_digits(fraction) || (digits.is_empty() && fraction.is_empty()) {
        return None;
    }
    if digits.is_empty() {
        return Some(Some(0));
    }
    Some(whole.parse::<i64>().ok())
}

/// A float truncated towards zero, if that is an integer (not NaN, an infinity or beyond 64 bits).
fn float_to_integer(f: f64) -> Option<i64> {
    // 2^63 is exact as a float; every float below it and at least -2^63 truncates into range.
    (f.is_finite() && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f)).then_some(f as i64)
}

fn integer(v: &Value) -> Option<Result<Value>> {
    Some(Ok(match v {
        Value::Null => Value::Null,
        Value::Int(_) => v.clone(),
        // Truncates towards zero, saturating as Java's cast does in Neo4j: beyond the integer range (and the
        // infinities) to the nearest end, NaN to 0.
        Value::Float(f) => Value::Int(*f as i64),
        Value::Bool(b) => Value::Int(*b as i64),
        Value::String(s) => match parse_integer(s) {
            Some(i) => Value::Int(i),
            // A number, but beyond the integer range: an error, as in Neo4j (toIntegerOrNull answers null).
            None if is_number_text(s) => {
                return Some(Err(CypherError::type_error(
                    "NumberOutOfRange",
                    format!("integer, {s}, is too large: integers lie between {} and {}", i64::MIN, i64::MAX),
                )))
            }
            None => Value::Null,
        },
        _ => return None,
    }))
}

/// Whether `s` holds only what [`parse_integer`] reads: digits, signs, a point, an exponent.
fn number_chars(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
}

/// Whether `s` is a number as [`parse_integer`] reads them, whatever its size.
fn is_number_text(s: &str) -> bool {
    number_chars(s) && parse_float(s).is_some()
}

fn float(v: &Value) -> Option<Result<Value>> {
    Some(Ok(match v {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Float(*i as f64),
        Value::Float(_) => v.clone(),
        Value::String(s) => parse_float(s).map_or(Value::Null, Value::Float),
        _ => return None,
    }))
}

fn string(v: &Value) -> Option<Result<Value>> {
    Some(Ok(match v {
        Value::Null => Value::Null,
        Value::String(_) => v.clone(),
        Value::Float(f) => Value::from(float_to_string(*f)),
        Value::Point(p) => Value::from(super::spatial::to_string(p)),
        Value::Int(_)
        | Value::Bool(_)
        | Value::Date(_)
        | Value::LocalTime(_)
        | Value::Time(_)
        | Value::LocalDateTime(_)
        | Value::DateTime(_)
        | Value::Duration(_) => Value::from(to_cypher_string(v)),
        _ => return None,
    }))
}

fn boolean(v: &Value) -> Option<Result<Value>> {
    Some(Ok(match v {
        Value::Null => Value::Null,
        Value::Bool(_) => v.clone(),
        Value::Int(i) => Value::Bool(*i != 0),
        Value::String(s) => {
            let s = s.trim();
            if s.eq_ignore_ascii_case("true") {
                Value::Bool(true)
            } else if s.eq_ignore_ascii_case("false") {
                Value::Bool(false)
            } else {
                Value::Null
            }
        }
        _ => return None,
    }))
}

type Conversion = fn(&Value) -> Option<Result<Value>>;

fn strict(function: &str, convert: Conversion, args: &[Value]) -> Result<Value> {
    let v = arg(args, 0);
    convert(v).unwrap_or_else(|| Err(cannot_convert(function, v)))
}

fn or_null(convert: Conversion, v: &Value) -> Value {
    match convert(v) {
        Some(Ok(v)) => v,
        _ => Value::Null,
    }
}

fn list(function: &str, convert: Conversion, args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::List(items) => Ok(Value::list(items.iter().map(|v| or_null(convert, v)).collect())),
        other => Err(CypherError::type_error(
            "InvalidArgumentValue",
            format!("{function}() expects a list, got {}", other.type_name()),
        )),
    }
}

pub fn to_integer(args: &[Value]) -> Result<Value> {
    strict("toInteger", integer, args)
}

pub fn to_float(args: &[Value]) -> Result<Value> {
    strict("toFloat", float, args)
}

pub fn to_string(args: &[Value]) -> Result<Value> {
    strict("toString", string, args)
}

pub fn to_boolean(args: &[Value]) -> Result<Value> {
    strict("toBoolean", boolean, args)
}

pub fn to_integer_or_null(args: &[Value]) -> Result<Value> {
    Ok(or_null(integer, arg(args, 0)))
}

pub fn to_float_or_null(args: &[Value]) -> Result<Value> {
    Ok(or_null(float, arg(args, 0)))
}

pub fn to_string_or_null(args: &[Value]) -> Result<Value> {
    Ok(or_null(string, arg(args, 0)))
}

pub fn to_boolean_or_null(args: &[Value]) -> Result<Value> {
    Ok(or_null(boolean, arg(args, 0)))
}

pub fn to_integer_list(args: &[Value]) -> Result<Value> {
    list("toIntegerList", integer, args)
}

pub fn to_float_list(args: &[Value]) -> Result<Value> {
    list("toFloatList", float, args)
}

pub fn to_string_list(args: &[Value]) -> Result<Value> {
    list("toStringList", string, args)
}

pub fn to_boolean_list(args: &[Value]) -> Result<Value> {
    list("toBooleanList", boolean, args)
}
