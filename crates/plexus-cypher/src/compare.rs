//! Comparing values, the three ways openCypher needs it.
//!
//! * **Equality** ([`equals`]): the ternary `=`. `null` on either side (or inside lists and maps, where it
//!   decides the outcome) gives `None`; `1 = 1.0`; `NaN` equals nothing; values of different types are unequal.
//! * **Comparability** ([`compare`], [`compare_op`]): `<`, `<=`, `>`, `>=`. Only numbers, strings, booleans,
//!   temporal values of one type and lists of comparable values compare; anything else is `null`. `NaN` is
//!   comparable but unordered, so every inequality involving it is `false`.
//! * **Orderability** ([`order`]): the total order of `ORDER BY`, defined for every pair of values, following the
//!   openCypher global sort order: MAP < NODE < RELATIONSHIP < LIST < PATH < POINT < DATETIME < LOCAL DATETIME < DATE <
//!   TIME < LOCAL TIME < DURATION < STRING < BOOLEAN < NUMBER < NULL, with `NaN` after every other number.
//!   (`BYTES`, which openCypher does not have, sorts between LIST and PATH.)
//! * **Equivalence** ([`equivalent`], [`Equivalent`]): the equality of `DISTINCT`, grouping keys and `UNION`:
//!   exactly "[`order`] says `Equal`", so `null` is equivalent to `null` and `NaN` to `NaN`. [`Equivalent`] wraps a
//!   value with `Eq`, `Hash` and `Ord` that agree with each other, for hash maps and sorted sets.
//!
//! Also here: `IN` ([`in_list`]) and `STARTS WITH`, `ENDS WITH`, `CONTAINS` ([`string_op`]).
//!
//! Temporal values compare through [`temporal::compare`]; when it has no answer for two values of one type (which
//! is always the case for durations, which have no order) the values' stored fields decide.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use plexus_storage::value::{DateTime, Duration, Point, Time};

use crate::temporal;
use crate::value::Value;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SECOND;

/// The ternary `a = b`. `None` is `null`.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    use Value::*;
    match (a, b) {
        (Null, _) | (_, Null) => None,
        (Int(x), Int(y)) => Some(x == y),
        (Float(x), Float(y)) => Some(x == y),
        (Int(i), Float(f)) | (Float(f), Int(i)) => Some(cmp_int_float(*i, *f) == Some(Ordering::Equal)),
        (Bool(x), Bool(y)) => Some(x == y),
        (String(x), String(y)) => Some(x == y),
        (Bytes(x), Bytes(y)) => Some(x == y),
        (List(x), List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            all_equal(x.iter().zip(y.iter()))
        }
        (Map(x), Map(y)) => {
            if x.len() != y.len() || x.keys().zip(y.keys()).any(|(k, l)| k != l) {
                return Some(false);
            }
            all_equal(x.values().zip(y.values()))
        }
        (Node(x), Node(y)) => Some(x == y),
        (Rel(x), Rel(y)) => Some(x == y),
        (Path(x), Path(y)) => Some(x == y),
        (Duration(x), Duration(y)) => Some(x == y),
        (Point(x), Point(y)) => Some(point_order(x, y) == Ordering::Equal),
        _ if temporal_rank(a).is_some() => {
            Some(temporal_rank(a) == temporal_rank(b) && temporal_cmp(a, b) == Some(Ordering::Equal))
        }
        _ => Some(false),
    }
}

/// Conjunction of pairwise equalities: `false` wins over `null`, `null` over `true`.
fn all_equal<'a>(pairs: impl Iterator<Item = (&'a Value, &'a Value)>) -> Option<bool> {
    let mut unknown = false;
    for (x, y) in pairs {
        match equals(x, y) {
            Some(false) => return Some(false),
            None => unknown = true,
            Some(true) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(true)
    }
}

/// `v IN list`: `true` if some element equals `v`, else `null` if some comparison was `null`, else `false`.
pub fn in_list(v: &Value, list: &[Value]) -> Option<bool> {
    let mut unknown = false;
    for item in list {
        match equals(v, item) {
            Some(true) => return Some(true),
            None => unknown = true,
            Some(false) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(false)
    }
}

/// A string predicate operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringOp {
    StartsWith,
    EndsWith,
    Contains,
}

/// `a STARTS WITH b`, `a ENDS WITH b`, `a CONTAINS b`: `null` unless both are strings.
pub fn string_op(op: StringOp, a: &Value, b: &Value) -> Option<bool> {
    let (Value::String(a), Value::String(b)) = (a, b) else { return None };
    Some(match op {
        StringOp::StartsWith => a.starts_with(&**b),
        StringOp::EndsWith => a.ends_with(&**b),
        StringOp::Contains => a.contains(&**b),
    })
}

/// An inequality operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareOp {
    Lt,
    Le,
    Gt,
    Ge,
}

/// The outcome of comparing two values for an inequality.
enum Cmp {
    Ordered(Ordering),
    /// Comparable but without an order (`NaN`): every inequality is `false`.
    Unordered,
    /// Not comparable (or `null`): every inequality is `null`.
    Incomparable,
    /// Equal points: `<=` and `>=` hold, `<` and `>` are `null` (points have no order, as in Neo4j).
    EqualOnly,
}

/// `a op b` for the inequality operators. `None` is `null`.
pub fn compare_op(op: CompareOp, a: &Value, b: &Value) -> Option<bool> {
    match partial(a, b) {
        Cmp::Ordered(o) => Some(match op {
            CompareOp::Lt => o == Ordering::Less,
            CompareOp::Le => o != Ordering::Greater,
            CompareOp::Gt => o == Ordering::Greater,
            CompareOp::Ge => o != Ordering::Less,
        }),
        Cmp::Unordered => Some(false),
        Cmp::Incomparable => None,
        Cmp::EqualOnly => matches!(op, CompareOp::Le | CompareOp::Ge).then_some(true),
    }
}

/// How `a` compares with `b` under `<`, `<=`, `>`, `>=`. `None` when they are not comparable, including `NaN`
/// (which [`compare_op`] turns into `false` rather than `null`).
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match partial(a, b) {
        Cmp::Ordered(o) => Some(o),
        _ => None,
    }
}

fn partial(a: &Value, b: &Value) -> Cmp {
    use Value::*;
    match (a, b) {
        (Null, _) | (_, Null) => Cmp::Incomparable,
        (Int(_) | Float(_), Int(_) | Float(_)) => match cmp_numbers(a, b) {
            Some(o) => Cmp::Ordered(o),
            None => Cmp::Unordered,
        },
        (String(x), String(y)) => Cmp::Ordered(x.cmp(y)),
        (Bool(x), Bool(y)) => Cmp::Ordered(x.cmp(y)),
        (List(x), List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                match partial(p, q) {
                    // Equal points are equal elements: the next element decides.
                    Cmp::Ordered(Ordering::Equal) | Cmp::EqualOnly => {}
                    other => return other,
                }
            }
            Cmp::Ordered(x.len().cmp(&y.len()))
        }
        // As Neo4j compares maps: the smaller map first, then the sorted key lists, then the values key by key;
        // a pair of values that does not compare (null, NaN, different types) leaves the maps incomparable.
        (Map(x), Map(y)) => {
            let by_keys = x.len().cmp(&y.len()).then_with(|| x.keys().cmp(y.keys()));
            if by_keys != Ordering::Equal {
                return Cmp::Ordered(by_keys);
            }
            for (p, q) in x.values().zip(y.values()) {
                match partial(p, q) {
                    Cmp::Ordered(Ordering::Equal) | Cmp::EqualOnly => {}
                    Cmp::Unordered => return Cmp::Incomparable,
                    other => return other,
                }
            }
            Cmp::Ordered(Ordering::Equal)
        }
        (Duration(_), _) | (_, Duration(_)) => Cmp::Incomparable,
        (Point(x), Point(y)) if point_order(x, y) == Ordering::Equal => Cmp::EqualOnly,
        _ if temporal_rank(a).is_some() && temporal_rank(a) == temporal_rank(b) => match temporal_cmp(a, b) {
            Some(o) => Cmp::Ordered(o),
            None => Cmp::Incomparable,
        },
        _ => Cmp::Incomparable,
    }
}

/// Compares two numbers (`Int` or `Float`) exactly, without rounding the integer. `None` if either is `NaN`.
fn cmp_numbers(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(i), Value::Float(f)) => cmp_int_float(*i, *f),
        (Value::Float(f), Value::Int(i)) => cmp_int_float(*i, *f).map(Ordering::reverse),
        _ => None,
    }
}

/// Compares an integer with a float exactly. `None` if the float is `NaN`.
fn cmp_int_float(i: i64, f: f64) -> Option<Ordering> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() {
        return None;
    }
    if f >= TWO_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_63 {
        return Some(Ordering::Greater);
    }
    let whole = f.trunc();
    // In range, so exact.
    let w = whole as i64;
    Some(i.cmp(&w).then_with(|| 0.0f64.partial_cmp(&(f - whole)).unwrap_or(Ordering::Equal)))
}

/// Where temporal types sit in the global sort order; `None` for other values.
fn temporal_rank(v: &Value) -> Option<u8> {
    Some(match v {
        Value::DateTime(_) => 0,
        Value::LocalDateTime(_) => 1,
        Value::Date(_) => 2,
        Value::Time(_) => 3,
        Value::LocalTime(_) => 4,
        Value::Duration(_) => 5,
        _ => return None,
    })
}

/// Orders two temporal values of one type (not durations): [`temporal::compare`] first, the instant they denote
/// otherwise.
fn temporal_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    if let Some(o) = temporal::compare(a, b) {
        return Some(o);
    }
    match (a, b) {
        (Value::Date(x), Value::Date(y)) => Some(x.cmp(y)),
        (Value::LocalTime(x), Value::LocalTime(y)) => Some(x.cmp(y)),
        (Value::LocalDateTime(x), Value::LocalDateTime(y)) => Some(x.cmp(y)),
        (Value::Time(x), Value::Time(y)) => Some(time_utc(x).cmp(&time_utc(y))),
        (Value::DateTime(x), Value::DateTime(y)) => Some((x.seconds, x.nanos).cmp(&(y.seconds, y.nanos))),
        _ => None,
    }
}

/// A time of day with an offset as nanoseconds since midnight UTC (not wrapped into one day).
fn time_utc(t: &Time) -> i128 {
    t.nanos as i128 - t.offset_seconds as i128 * NANOS_PER_SECOND as i128
}

/// The total order of temporal values of one type. Durations (which have no order of their own) by their
/// average length; the others by [`temporal::compare`], or when it has no answer by instant.
fn temporal_order(a: &Value, b: &Value) -> Ordering {
    if let (Value::Duration(x), Value::Duration(y)) = (a, b) {
        return duration_key(x).cmp(&duration_key(y));
    }
    if let Some(o) = temporal::compare(a, b) {
        return o;
    }
    match (a, b) {
        (Value::Time(x), Value::Time(y)) => time_utc(x).cmp(&time_utc(y)),
        (Value::DateTime(x), Value::DateTime(y)) => datetime_key(x).cmp(&datetime_key(y)),
        _ => temporal_cmp(a, b).unwrap_or(Ordering::Equal),
    }
}

/// Zoned values are ordered, grouped and compared by the instant they denote, so that equality, equivalence and
/// order agree.
fn datetime_key(d: &DateTime) -> (i64, u32) {
    (d.seconds, d.nanos)
}

/// Durations sort as Neo4j sorts them: by their average length (a month as 365.25 / 12 days), then by their
/// months, days and seconds, so that `P1M` and `P30DT10H30M` (of one average length) still differ.
fn duration_key(d: &Duration) -> (i128, i64, i64, i64) {
    const AVERAGE_SECONDS_PER_MONTH: i128 = 2_629_800;
    let seconds = d.months as i128 * AVERAGE_SECONDS_PER_MONTH + d.days as i128 * 86_400 + d.seconds as i128;
    (seconds * NANOS_PER_SECOND as i128 + d.nanos as i128, d.months, d.days, d.seconds)
}

/// Points by system (SRID), then coordinate by coordinate; `-0.0` and `0.0` differ, as in Neo4j.
fn point_order(a: &Point, b: &Point) -> Ordering {
    a.crs().cmp(&b.crs()).then_with(|| {
        a.coords().iter().zip(b.coords()).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
    })
}

/// Position of a value's type in the global sort order. Integers and floats share a rank.
fn rank(v: &Value) -> u8 {
    match v {
        Value::Map(_) => 0,
        Value::Node(_) => 1,
        Value::Rel(_) => 2,
        Value::List(_) => 3,
        Value::Bytes(_) => 4,
        Value::Path(_) => 5,
        Value::Point(_) => 6,
        Value::DateTime(_) => 7,
        Value::LocalDateTime(_) => 8,
        Value::Date(_) => 9,
        Value::Time(_) => 10,
        Value::LocalTime(_) => 11,
        Value::Duration(_) => 12,
        Value::String(_) => 13,
        Value::Bool(_) => 14,
        Value::Int(_) | Value::Float(_) => 15,
        Value::Null => 16,
    }
}

/// The total order of `ORDER BY` (ascending). Values of different types follow the global sort order; within a
/// type: maps by size, then keys, then values, nodes and relationships by id, lists element by
/// element then by length, paths by their node ids then relationship ids, numbers numerically with `NaN` last.
pub fn order(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    // Sort keys are integers more often than anything else (ids, counts, epoch timestamps).
    if let (Int(x), Int(y)) = (a, b) {
        return x.cmp(y);
    }
    let (ra, rb) = (rank(a), rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        // As Neo4j orders maps: smaller first, then by the sorted keys, then by the values in key order.
        (Map(x), Map(y)) => x.len().cmp(&y.len()).then_with(|| x.keys().cmp(y.keys())).then_with(|| {
            x.values().zip(y.values()).map(|(v, w)| order(v, w)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
        }),
        (Node(x), Node(y)) => x.cmp(y),
        (Rel(x), Rel(y)) => x.cmp(y),
        (List(x), List(y)) => {
            for (v, w) in x.iter().zip(y.iter()) {
                let o = order(v, w);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (Path(x), Path(y)) => x.cmp(y),
        (Point(x), Point(y)) => point_order(x, y),
        (String(x), String(y)) => x.cmp(y),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Int(_) | Float(_), Int(_) | Float(_)) => {
            let nan = |v: &Value| matches!(v, Float(f) if f.is_nan());
            match (nan(a), nan(b)) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => cmp_numbers(a, b).unwrap_or(Ordering::Equal),
            }
        }
        (Null, Null) => Ordering::Equal,
        _ => temporal_order(a, b),
    }
}

/// Whether `a` and `b` are the same for `DISTINCT` and grouping: [`order`] finds them equal. Unlike [`equals`],
/// `null` is equivalent to `null` and `NaN` to `NaN`.
pub fn equivalent(a: &Value, b: &Value) -> bool {
    order(a, b) == Ordering::Equal
}

/// A value compared by equivalence: `Eq`, `Hash` and `Ord` agree with [`equivalent`] and [`order`], so it can key
/// a hash map (grouping, `DISTINCT`) or a sorted set.
#[derive(Clone, Debug, Default)]
pub struct Equivalent(pub Value);

/// The name grouping code may prefer.
pub type GroupKey = Equivalent;

impl PartialEq for Equivalent {
    fn eq(&self, other: &Self) -> bool {
        equivalent(&self.0, &other.0)
    }
}

impl Eq for Equivalent {}

impl PartialOrd for Equivalent {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Equivalent {
    fn cmp(&self, other: &Self) -> Ordering {
        order(&self.0, &other.0)
    }
}

impl Hash for Equivalent {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(&self.0, state);
    }
}

/// Hashes a value so that equivalent values hash alike: integral floats hash as the integer they equal, every
/// `NaN` alike, zoned times and datetimes by the instant they denote.
fn hash_value<H: Hasher>(v: &Value, state: &mut H) {
    rank(v).hash(state);
    match v {
        Value::Null => {}
        Value::Bool(b) => b.hash(state),
        Value::Int(i) => i.hash(state),
        Value::Float(f) => {
            const TWO_63: f64 = 9_223_372_036_854_775_808.0;
            if f.is_nan() {
                0xdead_u16.hash(state);
            } else if f.fract() == 0.0 && *f >= -TWO_63 && *f < TWO_63 {
                (*f as i64).hash(state);
            } else {
                f.to_bits().hash(state);
            }
        }
        Value::String(s) => s.hash(state),
        Value::Bytes(b) => b.hash(state),
        Value::List(items) => {
            items.len().hash(state);
            for item in items.iter() {
                hash_value(item, state);
            }
        }
        Value::Map(m) => {
            m.len().hash(state);
            for (k, v) in m.iter() {
                k.hash(state);
                hash_value(v, state);
            }
        }
        Value::Node(n) => n.hash(state),
        Value::Rel(r) => r.hash(state),
        Value::Path(p) => p.hash(state),
        Value::Date(d) => d.hash(state),
        Value::LocalTime(t) => t.hash(state),
        Value::LocalDateTime(t) => t.hash(state),
        // Coarse enough for any notion of "same instant" the temporal module may use.
        Value::Time(t) => (time_utc(t).rem_euclid(NANOS_PER_DAY as i128)).hash(state),
        Value::DateTime(t) => (t.seconds, t.nanos).hash(state),
        Value::Duration(d) => d.hash(state),
        Value::Point(p) => {
            p.crs().hash(state);
            for c in p.coords() {
                c.to_bits().hash(state);
            }
        }
    }
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
