//! Temporal values in queries: construction, parsing, formatting, arithmetic, comparison and components.
//!
//! The rest of the engine reaches temporal behaviour only through the functions below; each returns `None` when
//! its arguments are not temporal, so callers can fall through to their other cases.

use std::cmp::Ordering;

use crate::error::Result;
use crate::value::Value;

/// The instant a statement runs at, which `date()`, `datetime.statement()` and friends read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Seconds since the Unix epoch, UTC.
    pub seconds: i64,
    pub nanos: u32,
}

impl Clock {
    pub fn now() -> Clock {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Clock { seconds: now.as_secs() as i64, nanos: now.subsec_nanos() }
    }
}

/// Arithmetic operators that may involve temporal values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// Calls a temporal function by its lower-cased name (`date`, `datetime.fromepochmillis`, `duration.between`,
/// `localtime.truncate`, ...). `None`: not a temporal function.
pub fn call_function(_name: &str, _args: &[Value], _clock: &Clock) -> Option<Result<Value>> {
    None
}

/// A component of a temporal value (`d.year`, `dt.epochMillis`, `dur.minutes`, `t.timezone`, ...).
/// `None`: the value is not temporal.
pub fn property(_value: &Value, _key: &str) -> Option<Result<Value>> {
    None
}

/// `a op b` when either side is temporal (date + duration, duration * number, ...). `None`: neither is.
pub fn arithmetic(_op: ArithOp, _a: &Value, _b: &Value) -> Option<Result<Value>> {
    None
}

/// Orders two temporal values of the same type. `None`: not comparable (different types, or not temporal).
pub fn compare(_a: &Value, _b: &Value) -> Option<Ordering> {
    None
}

/// The string form used by `toString` and by results printed in the TCK's notation. `None`: not temporal.
pub fn to_string(_value: &Value) -> Option<String> {
    None
}
