//! List, map and path functions, and the general ones: `size`, `reverse` (strings too), `head`, `last`, `tail`,
//! `range`, `coalesce`, `isEmpty`, `keys` and `properties` of maps, `nullIf`, and `length`, `nodes` and
//! `relationships` of paths (a path holds its ids, so these need no graph).

use std::sync::Arc;

use super::{arg, invalid_type, out_of_range};
use crate::compare::equals;
use crate::error::{CypherError, Result};
use crate::value::Value;

/// The most elements `range()` builds into a list (the executor may iterate [`range_iter`] lazily instead).
pub const MAX_RANGE_LEN: u64 = 100_000_000;

/// `size(list)` or `size(string)` (in characters).
pub fn size(args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        Value::List(items) => Value::Int(items.len() as i64),
        Value::String(s) => Value::Int(s.chars().count() as i64),
        // A byte array counts its bytes, as in Neo4j.
        Value::Bytes(b) => Value::Int(b.len() as i64),
        other => return Err(invalid_type("size", "a list or a string", other)),
    })
}

/// `reverse(list)` or `reverse(string)`.
pub fn reverse(args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        Value::List(items) => Value::list(items.iter().rev().cloned().collect()),
        Value::String(s) => Value::from(s.chars().rev().collect::<String>()),
        other => return Err(invalid_type("reverse", "a list or a string", other)),
    })
}

/// The argument as a list; `None` for `null`.
fn list<'a>(function: &str, v: &'a Value) -> Result<Option<&'a [Value]>> {
    match v {
        Value::Null => Ok(None),
        Value::List(items) => Ok(Some(items)),
        other => Err(invalid_type(function, "a list", other)),
    }
}

/// `head(list)`: the first element, `null` for an empty list.
pub fn head(args: &[Value]) -> Result<Value> {
    Ok(list("head", arg(args, 0))?.and_then(|items| items.first().cloned()).unwrap_or_default())
}

/// `last(list)`: the last element, `null` for an empty list.
pub fn last(args: &[Value]) -> Result<Value> {
    Ok(list("last", arg(args, 0))?.and_then(|items| items.last().cloned()).unwrap_or_default())
}

/// `tail(list)`: all but the first element.
pub fn tail(args: &[Value]) -> Result<Value> {
    Ok(list("tail", arg(args, 0))?.map_or(Value::Null, |items| Value::list(items.iter().skip(1).cloned().collect())))
}

fn range_bound(v: &Value, what: &str) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(CypherError::argument(
            "InvalidArgumentType",
            format!("range() expects an integer {what}, got {}", other.type_name()),
        )),
    }
}

/// `range()`'s arguments checked as [`range`] checks them: `(start, end, step)`.
pub fn range_args(args: &[Value]) -> Result<(i64, i64, i64)> {
    let start = range_bound(arg(args, 0), "start")?;
    let end = range_bound(arg(args, 1), "end")?;
    let step = match args.get(2) {
        None => 1,
        Some(v) => range_bound(v, "step")?,
    };
    Ok((start, end, step))
}

/// The integers from `start` to `end` inclusive, `step` apart, without building a list.
pub fn range_iter(start: i64, end: i64, step: i64) -> Result<impl Iterator<Item = i64>> {
    let count = range_len(start, end, step)?;
    Ok((0..count).map(move |k| (start as i128 + k as i128 * step as i128) as i64))
}

/// How many integers `range(start, end, step)` has.
pub fn range_len(start: i64, end: i64, step: i64) -> Result<u64> {
    if step == 0 {
        return Err(out_of_range("range", "step must not be zero"));
    }
    Ok(if (step > 0 && start <= end) || (step < 0 && start >= end) {
        // range(i64::MIN, i64::MAX) has 2^64 integers, one more than a u64 counts: it saturates, which is
        // as good as endless for a lazy UNWIND and more than the longest list `range()` may build.
        u64::try_from((end as i128 - start as i128) / step as i128 + 1).unwrap_or(u64::MAX)
    } else {
        0
    })
}

/// `range(start, end[, step])`: integers only; a zero step is an `ArgumentError` (`NumberOutOfRange`), other
/// arguments an `ArgumentError` (`InvalidArgumentType`), as the TCK expects.
pub fn range(args: &[Value]) -> Result<Value> {
    let (start, end, step) = range_args(args)?;
    if range_len(start, end, step)? > MAX_RANGE_LEN {
        return Err(out_of_range("range", format!("more than {MAX_RANGE_LEN} elements")));
    }
    Ok(Value::list(range_iter(start, end, step)?.map(Value::Int).collect()))
}

/// `coalesce(a, b, ...)`: the first argument that is not `null`.
pub fn coalesce(args: &[Value]) -> Result<Value> {
    Ok(args.iter().find(|v| !v.is_null()).cloned().unwrap_or_default())
}

/// `isEmpty(list | map | string)`.
pub fn is_empty(args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        Value::List(items) => Value::Bool(items.is_empty()),
        Value::Map(m) => Value::Bool(m.is_empty()),
        Value::String(s) => Value::Bool(s.is_empty()),
        other => return Err(invalid_type("isEmpty", "a list, a map or a string", other)),
    })
}

/// `keys(map)`, in key order. (Of nodes and relationships: the executor's.)
pub fn keys(args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        Value::Map(m) => Value::list(m.keys().map(|k| Value::String(Arc::clone(k))).collect()),
        other => return Err(invalid_type("keys", "a map, a node or a relationship", other)),
    })
}

/// `properties(map)`: the map itself. (Of nodes and relationships: the executor's.)
pub fn properties(args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        v @ (Value::Null | Value::Map(_)) => v.clone(),
        other => return Err(invalid_type("properties", "a map, a node or a relationship", other)),
    })
}

/// `nullIf(a, b)`: `null` if `a = b`, else `a`.
pub fn null_if(args: &[Value]) -> Result<Value> {
    let (a, b) = (arg(args, 0), arg(args, 1));
    Ok(if equals(a, b) == Some(true) { Value::Null } else { a.clone() })
}

/// `length(path)`: the number of relationships.
pub fn length(args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        Value::Path(p) => Value::Int(p.rels.len() as i64),
        other => return Err(invalid_type("length", "a path", other)),
    })
}

/// `nodes(path)`.
pub fn nodes(args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        Value::Path(p) => Value::list(p.nodes.iter().map(|n| Value::Node(*n)).collect()),
        other => return Err(invalid_type("nodes", "a path", other)),
    })
}

/// `relationships(path)`.
pub fn relationships(args: &[Value]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Value::Null => Value::Null,
        Value::Path(p) => Value::list(p.rels.iter().map(|r| Value::Rel(*r)).collect()),
        other => return Err(invalid_type("relationships", "a path", other)),
    })
}
