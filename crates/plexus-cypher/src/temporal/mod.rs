//! Temporal values in queries: construction, parsing, formatting, arithmetic, comparison and components.
//!
//! The rest of the engine reaches temporal behaviour only through the functions below; each returns `None` when
//! its arguments are not temporal, so callers can fall through to their other cases.
//!
//! The work is split by concern:
//! - `civil`: calendar math on day numbers (calendar, week, ordinal and quarter dates);
//! - `zone`: fixed offsets and named IANA zones (the only user of the zone database);
//! - `parse`: ISO 8601 strings for every temporal type and durations;
//! - `format`: the string forms `toString` returns;
//! - `instant`: the stored structs taken apart into local date, time and zone, and put back together;
//! - `construct`: `date()`, `datetime({...})`, conversions, the clock, epoch constructors;
//! - `truncate`: `X.truncate(unit, value, overrides)`;
//! - `duration`: building, normalising and combining durations;
//! - `between`: `duration.between`, `inMonths`, `inDays`, `inSeconds`;
//! - `arith`: instant ± duration and ordering;
//! - `component`: `d.year`, `dt.epochMillis`, `dur.minutesOfHour`, ...
//!
//! Conventions: the session time zone is UTC; a [`Duration`](plexus_storage::value::Duration) is kept normalised
//! with `0 <= nanos < 1_000_000_000` (its `seconds` rounded towards negative infinity), so equal durations are equal
//! structs. Invalid text, maps and values are `ArgumentError: InvalidArgumentValue`, arguments of the wrong type
//! `TypeError: InvalidArgumentType`, results outside the supported range (years ±999,999,999, 64-bit components)
//! `ArgumentError: NumberOutOfRange`.
//!
//! Fuzzing: `call_function("date" | "localtime" | "time" | "localdatetime" | "datetime" | "duration", [text])`
//! takes any string and returns a value or an error, never a panic, and `to_string` of a value it returns parses
//! back to the same value: a round-trip fuzz target needs nothing else. The property tests in `tests.rs` do a
//! small version of this, and also feed arbitrary stored structs through every entry point.

mod arith;
mod between;
mod civil;
mod component;
mod construct;
mod duration;
mod format;
mod instant;
mod parse;
mod truncate;
mod zone;

use std::cmp::Ordering;

/// The fixed offset (seconds) a zone id stands for, when it is one: `+02:00`, `Z`, `GMT+02:00`, `UTC+2`
/// (as Java's `ZoneId.of` reads them, which is what drivers send); `None` for a region such as
/// `Europe/Berlin`.
pub fn zone_id_offset(id: &str) -> Option<i32> {
    match zone::Zone::parse(id) {
        Ok(zone::Zone::Offset(seconds)) => Some(seconds),
        _ => None,
    }
}

/// A datetime a client sent with a zone id (Bolt's `DateTimeZoneId`): its UTC seconds, the offset in force then
/// and the zone's canonical name (`None` for an offset written as a zone id). `given_is_local`: the seconds are
/// the local wall time (Bolt 4 without the `utc` patch), else UTC. Years beyond the zone database's use the rules
/// at its nearest end, as values made in queries do; beyond ±999,999,999 years, or for an unknown zone, an error.
pub fn zoned_from_client(
    zone: &str,
    given_seconds: i64,
    given_is_local: bool,
) -> std::result::Result<(i64, i32, Option<std::sync::Arc<str>>), String> {
    let zone = zone::Zone::parse(zone).map_err(|e| e.message)?;
    let utc = if given_is_local {
        given_seconds.checked_sub(zone.offset_for_local(given_seconds, None) as i64).ok_or("datetime out of range")?
    } else {
        given_seconds
    };
    let offset = zone.offset_at(utc);
    if !epoch_seconds_in_range(utc.saturating_add(offset as i64)) {
        return Err("datetime is out of range: years lie between -999999999 and 999999999".into());
    }
    Ok((utc, offset, zone.name().cloned()))
}

/// A duration as this module keeps them, `0 <= nanos < 1e9` (its seconds rounded towards negative infinity),
/// whoever made it: a driver's parameter, a stored value, the embedding program.
pub fn canonical_duration(d: &plexus_storage::value::Duration) -> plexus_storage::value::Duration {
    duration::canonical(d)
}

/// Whether a date (days since 1970-01-01) lies within the years Cypher's temporal values cover.
pub fn epoch_days_in_range(days: i64) -> bool {
    civil::days_in_range(days)
}

/// Whether a local date-time (seconds since 1970-01-01T00:00) lies within the years Cypher's temporal values
/// cover.
pub fn epoch_seconds_in_range(seconds: i64) -> bool {
    civil::days_in_range(seconds.div_euclid(86_400))
}

use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::value::Value;

/// Parses `text` as the constructor function `function` (`date`, `localtime`, `time`, `localdatetime`,
/// `datetime` or `duration`) does from a string, returning the stored value: the one temporal
/// text parser, shared by queries and the bulk importer so both accept and store exactly the same values.
/// `None`: `function` is not one of these; `Err` carries the message the function raises (e.g. "offset and time
/// zone do not match").
pub fn parse_stored(function: &str, text: &str) -> Option<std::result::Result<plexus_storage::Value, String>> {
    use plexus_storage::Value as Stored;
    let parsed = if function == "duration" {
        construct::read_any_case(text, parse::duration).map(Value::duration)
    } else {
        construct::from_string(Kind::from_name(function)?, text)
    };
    Some(match parsed {
        Ok(Value::Date(d)) => Ok(Stored::Date(d)),
        Ok(Value::LocalTime(t)) => Ok(Stored::LocalTime(t)),
        Ok(Value::Time(t)) => Ok(Stored::Time(t)),
        Ok(Value::LocalDateTime(t)) => Ok(Stored::LocalDateTime(t)),
        Ok(Value::DateTime(t)) => Ok(Stored::DateTime(t)),
        Ok(Value::Duration(d)) => Ok(Stored::Duration(d)),
        Ok(other) => Err(format!("{function}() returned {}", other.type_name())),
        Err(e) => Err(e.message),
    })
}

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

/// The five instant types, as the constructor functions name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
}

impl Kind {
    fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "date" => Kind::Date,
            "localtime" => Kind::LocalTime,
            "time" => Kind::Time,
            "localdatetime" => Kind::LocalDateTime,
            "datetime" => Kind::DateTime,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::LocalTime => "localtime",
            Kind::Time => "time",
            Kind::LocalDateTime => "localdatetime",
            Kind::DateTime => "datetime",
        }
    }

    pub(crate) fn has_date(self) -> bool {
        matches!(self, Kind::Date | Kind::LocalDateTime | Kind::DateTime)
    }

    pub(crate) fn has_time(self) -> bool {
        !matches!(self, Kind::Date)
    }

    pub(crate) fn has_zone(self) -> bool {
        matches!(self, Kind::Time | Kind::DateTime)
    }
}

/// `ArgumentError: InvalidArgumentValue`.
pub(crate) fn invalid(message: impl Into<String>) -> CypherError {
    CypherError::argument("InvalidArgumentValue", message)
}

/// A text a temporal function cannot read, as Neo4j reports it: a `SyntaxError` (raised at run time, where the
/// same mistake in a map of fields, `date({month: 13})`, is an `ArgumentError`).
pub(crate) fn unreadable_text(e: CypherError) -> CypherError {
    match e.kind {
        ErrorKind::ArgumentError => {
            CypherError::new(ErrorKind::SyntaxError, crate::error::Phase::Runtime, "InvalidTemporalText", e.message)
        }
        _ => e,
    }
}

/// `TypeError: InvalidArgumentType`.
pub(crate) fn wrong_type(message: impl Into<String>) -> CypherError {
    CypherError::type_error("InvalidArgumentType", message)
}

/// `ArgumentError: NumberOutOfRange`.
pub(crate) fn out_of_range(message: impl Into<String>) -> CypherError {
    CypherError::argument("NumberOutOfRange", message)
}

fn arity(name: &str, expected: &str, got: usize) -> CypherError {
    CypherError::new(
        ErrorKind::SyntaxError,
        Phase::Runtime,
        "InvalidNumberOfArguments",
        format!("{name}() takes {expected} argument(s), got {got}"),
    )
}

pub(crate) fn is_temporal(value: &Value) -> bool {
    matches!(
        value,
        Value::Date(_)
            | Value::LocalTime(_)
            | Value::Time(_)
            | Value::LocalDateTime(_)
            | Value::DateTime(_)
            | Value::Duration(_)
    )
}

/// The least and greatest number of arguments the temporal function `name` (lower-cased: `date`,
/// `datetime.fromepochmillis`, `duration.between`, ...) takes; `None`: not a temporal function. The query
/// compiler checks calls against it, so a wrong count is reported where the call is written.
pub fn function_arity(name: &str) -> Option<(usize, usize)> {
    let (base, method) = match name.split_once('.') {
        Some((base, method)) => (base, Some(method)),
        None => (name, None),
    };
    if base == "duration" {
        return match method {
            None => Some((1, 1)),
            Some("between" | "inmonths" | "indays" | "inseconds") => Some((2, 2)),
            Some(_) => None,
        };
    }
    let kind = Kind::from_name(base)?;
    match method {
        None | Some("transaction" | "statement" | "realtime") => Some((0, 1)),
        Some("truncate") => Some((2, 3)),
        Some("fromepoch") if kind == Kind::DateTime => Some((2, 2)),
        Some("fromepochmillis") if kind == Kind::DateTime => Some((1, 1)),
        Some(_) => None,
    }
}

/// Calls a temporal function by its lower-cased name (`date`, `datetime.fromepochmillis`, `duration.between`,
/// `localtime.truncate`, ...). `None`: not a temporal function.
pub fn call_function(name: &str, args: &[Value], clock: &Clock) -> Option<Result<Value>> {
    let (min, max) = function_arity(name)?;
    if args.len() < min || args.len() > max {
        let expected = if min == max { min.to_string() } else { format!("{min} to {max}") };
        return Some(Err(arity(name, &expected, args.len())));
    }
    let (base, method) = match name.split_once('.') {
        Some((base, method)) => (base, Some(method)),
        None => (name, None),
    };
    if base == "duration" {
        let unit = match method {
            None => return Some(duration::construct(&args[0])),
            Some("between") => between::Unit::All,
            Some("inmonths") => between::Unit::Months,
            Some("indays") => between::Unit::Days,
            _ => between::Unit::Seconds,
        };
        return Some(between::between(unit, &args[0], &args[1]));
    }
    let kind = Kind::from_name(base)?;
    Some(match method {
        None => construct::construct(kind, args.first(), clock),
        Some("transaction") | Some("statement") | Some("realtime") => {
            let clock = if method == Some("realtime") { Clock::now() } else { *clock };
            construct::now_with(kind, args.first(), &clock)
        }
        Some("truncate") => truncate::truncate(kind, &args[0], &args[1], args.get(2), clock),
        Some("fromepoch") => construct::from_epoch(&args[0], &args[1]),
        _ => construct::from_epoch_millis(&args[0]),
    })
}

/// A component of a temporal value (`d.year`, `dt.epochMillis`, `dur.minutes`, `t.timezone`, ...).
/// `None`: the value is not temporal.
pub fn property(value: &Value, key: &str) -> Option<Result<Value>> {
    if !is_temporal(value) {
        return None;
    }
    Some(component::get(value, key))
}

/// `a op b` when either side is temporal (date + duration, duration * number, ...). `None`: neither is, or the
/// other side is a string or list, whose concatenation rules belong to the caller.
pub fn arithmetic(op: ArithOp, a: &Value, b: &Value) -> Option<Result<Value>> {
    if !is_temporal(a) && !is_temporal(b) {
        return None;
    }
    if matches!(a, Value::String(_) | Value::List(_)) || matches!(b, Value::String(_) | Value::List(_)) {
        return None;
    }
    Some(arith::apply(op, a, b))
}

/// Orders two temporal values of the same type. `None`: not comparable (different types, or not temporal).
///
/// Times and datetimes order by the instant they denote; equal instants written with different offsets (or zones)
/// are then ordered by offset and zone name, so the order agrees with equality.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    arith::compare(a, b)
}

/// The string form `toString` gives (as Neo4j writes it). `None`: not temporal.
pub fn to_string(value: &Value) -> Option<String> {
    format::to_string(value)
}

/// The string form of the TCK's notation for expected results (Java's `toString`). `None`: not temporal.
pub fn to_tck_string(value: &Value) -> Option<String> {
    format::to_tck_string(value)
}

#[cfg(test)]
mod tests;
