//! Property values: the types a node or relationship property can hold.
//!
//! Storage owns only what can be *stored*: scalars, the temporal types and homogeneous lists of them. Query-level
//! values (maps, nodes, paths) live in the query engine. Equality and hashing here are *storage* equality: two
//! values are equal when they would be stored identically (floats compare by canonical bits), which is what a
//! unique key index needs; Cypher's three-valued comparison is the query engine's business.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

pub use crate::point::{Crs, Point};

/// A calendar date, as days since 1970-01-01 (proleptic Gregorian).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Date {
    pub days: i64,
}

/// A time of day without a zone, as nanoseconds since midnight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalTime {
    pub nanos: i64,
}

/// A time of day with a UTC offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Time {
    pub nanos: i64,
    pub offset_seconds: i32,
}

/// A date and time without a zone: seconds since the epoch (as if UTC) plus nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalDateTime {
    pub seconds: i64,
    pub nanos: u32,
}

/// A date and time at a fixed offset or in a named zone. `seconds` is the UTC instant; `offset_seconds` is the
/// offset in force at that instant (so the local wall time is recoverable without a zone database).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DateTime {
    pub seconds: i64,
    pub nanos: u32,
    pub offset_seconds: i32,
    /// IANA zone name, when the value was given with a zone rather than a bare offset.
    pub zone: Option<Arc<str>>,
}

/// A duration with calendar components, as in openCypher: months, days, seconds and nanoseconds kept apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Duration {
    pub months: i64,
    pub days: i64,
    pub seconds: i64,
    pub nanos: i32,
}

/// A storable property value.
#[derive(Clone, Debug, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    Date(Date),
    LocalTime(LocalTime),
    Time(Time),
    LocalDateTime(LocalDateTime),
    DateTime(Box<DateTime>),
    /// Boxed, like `DateTime`: inline, its 28 bytes made every value 40 bytes instead of 24, and every property
    /// of every node and relationship paid for it.
    Duration(Box<Duration>),
    /// Boxed for the same reason: a system and three coordinates are 32 bytes.
    Point(Box<Point>),
    /// A homogeneous list: every element has the same type and none is null (checked by [`Value::validate`]).
    List(Arc<[Value]>),
}

/// The type of a value, used for error messages and list homogeneity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    Null,
    Bool,
    Int,
    Float,
    String,
    Bytes,
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
    Duration,
    Point,
    List,
}

/// A key value as a message shows it: numbers and booleans as written, text quoted, others as their debug form.
pub fn shown(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => format!("'{s}'"),
        other => format!("{other:?}"),
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ValueType::Null => "null",
            ValueType::Bool => "boolean",
            ValueType::Int => "integer",
            ValueType::Float => "float",
            ValueType::String => "string",
            ValueType::Bytes => "bytes",
            ValueType::Date => "date",
            ValueType::LocalTime => "local time",
            ValueType::Time => "time",
            ValueType::LocalDateTime => "local datetime",
            ValueType::DateTime => "datetime",
            ValueType::Duration => "duration",
            ValueType::Point => "point",
            ValueType::List => "list",
        };
        f.write_str(name)
    }
}

impl Value {
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Null => ValueType::Null,
            Value::Bool(_) => ValueType::Bool,
            Value::Int(_) => ValueType::Int,
            Value::Float(_) => ValueType::Float,
            Value::String(_) => ValueType::String,
            Value::Bytes(_) => ValueType::Bytes,
            Value::Date(_) => ValueType::Date,
            Value::LocalTime(_) => ValueType::LocalTime,
            Value::Time(_) => ValueType::Time,
            Value::LocalDateTime(_) => ValueType::LocalDateTime,
            Value::DateTime(_) => ValueType::DateTime,
            Value::Duration(_) => ValueType::Duration,
            Value::Point(_) => ValueType::Point,
            Value::List(_) => ValueType::List,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// Numeric view used by weight sums: integers and floats both count.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Checks that the value can be stored: lists are homogeneous (points all of one system), hold no nulls and
    /// no nested lists.
    pub fn validate(&self) -> Result<(), String> {
        if let Value::List(items) = self {
            let mut first: Option<ValueType> = None;
            let mut crs: Option<Crs> = None;
            for item in items.iter() {
                if let Value::Point(p) = item {
                    if crs.is_some_and(|c| c != p.crs()) {
                        return Err("a stored list of points must have all its points in one coordinate reference \
                                    system"
                            .into());
                    }
                    crs = Some(p.crs());
                }
                let t = item.value_type();
                if t == ValueType::Null {
                    return Err("a stored list cannot contain null".into());
                }
                if t == ValueType::List {
                    return Err("a stored list cannot contain lists".into());
                }
                match first {
                    None => first = Some(t),
                    Some(f) if f != t => return Err(format!("a stored list must be homogeneous, found {f} and {t}")),
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

fn canonical_float_bits(f: f64) -> u64 {
    if f.is_nan() {
        f64::NAN.to_bits()
    } else if f == 0.0 {
        0
    } else {
        f.to_bits()
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => canonical_float_bits(*a) == canonical_float_bits(*b),
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Date(a), Value::Date(b)) => a == b,
            (Value::LocalTime(a), Value::LocalTime(b)) => a == b,
            (Value::Time(a), Value::Time(b)) => a == b,
            (Value::LocalDateTime(a), Value::LocalDateTime(b)) => a == b,
            (Value::DateTime(a), Value::DateTime(b)) => a == b,
            (Value::Duration(a), Value::Duration(b)) => a == b,
            // Bit for bit, as Cypher's `=` compares points (`-0.0` is not `0.0` there, unlike for floats), so a
            // unique key on points agrees with `=`.
            (Value::Point(a), Value::Point(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            Value::Int(i) => i.hash(state),
            Value::Float(f) => canonical_float_bits(*f).hash(state),
            Value::String(s) => s.hash(state),
            Value::Bytes(b) => b.hash(state),
            Value::Date(d) => d.hash(state),
            Value::LocalTime(t) => t.hash(state),
            Value::Time(t) => t.hash(state),
            Value::LocalDateTime(t) => t.hash(state),
            Value::DateTime(t) => t.hash(state),
            Value::Duration(d) => d.hash(state),
            Value::Point(p) => {
                p.crs().hash(state);
                for c in p.coords() {
                    c.to_bits().hash(state);
                }
            }
            Value::List(items) => items.hash(state),
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v as i64)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::String(Arc::from(v))
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(Arc::from(v))
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Bytes(Arc::from(v))
    }
}
impl From<Date> for Value {
    fn from(v: Date) -> Self {
        Value::Date(v)
    }
}
impl From<Duration> for Value {
    fn from(v: Duration) -> Self {
        Value::Duration(Box::new(v))
    }
}
impl From<Point> for Value {
    fn from(v: Point) -> Self {
        Value::Point(Box::new(v))
    }
}
impl From<DateTime> for Value {
    fn from(v: DateTime) -> Self {
        Value::DateTime(Box::new(v))
    }
}
impl From<LocalDateTime> for Value {
    fn from(v: LocalDateTime) -> Self {
        Value::LocalDateTime(v)
    }
}
impl From<LocalTime> for Value {
    fn from(v: LocalTime) -> Self {
        Value::LocalTime(v)
    }
}
impl From<Time> for Value {
    fn from(v: Time) -> Self {
        Value::Time(v)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value
where
    T: NotBytes,
{
    fn from(v: Vec<T>) -> Self {
        Value::List(v.into_iter().map(Into::into).collect())
    }
}

/// Marker so `Vec<u8>` converts to bytes and other vectors to lists.
pub trait NotBytes {}
impl NotBytes for bool {}
impl NotBytes for i64 {}
impl NotBytes for f64 {}
impl NotBytes for &str {}
impl NotBytes for String {}
impl NotBytes for Value {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_must_be_homogeneous() {
        assert!(Value::from(vec![1i64, 2, 3]).validate().is_ok());
        let mixed = Value::List(Arc::from(vec![Value::Int(1), Value::from("a")]));
        assert!(mixed.validate().unwrap_err().contains("homogeneous"));
        let with_null = Value::List(Arc::from(vec![Value::Int(1), Value::Null]));
        assert!(with_null.validate().is_err());
    }

    #[test]
    fn float_keys_are_canonical() {
        assert_eq!(Value::Float(0.0), Value::Float(-0.0));
        assert_eq!(Value::Float(f64::NAN), Value::Float(f64::NAN));
        assert_ne!(Value::Int(1), Value::Float(1.0));
    }
}

#[cfg(test)]
mod size_tests {
    /// Every stored property pays for the largest variant: keep it at three words.
    #[test]
    fn a_value_is_three_words() {
        assert_eq!(std::mem::size_of::<super::Value>(), 24);
    }
}
