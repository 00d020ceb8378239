//! Constructing instants: `date()` and friends with no argument (the statement clock, optionally in a zone), from
//! strings, from maps of fields (`{year, month, day}`, `{year, week, dayOfWeek}`, `{year, ordinalDay}`,
//! `{year, quarter, dayOfQuarter}`, `{hour, ..., nanosecond}`, `timezone`, `{epochSeconds}`, `{epochMillis}`), by
//! selecting from other values (`{date: d, day: 28}`, `{time: t, timezone: '+05:00'}`, `{datetime: dt}`), by
//! converting another temporal value, and `datetime.fromepoch[millis]`.
//!
//! Selection rules, as in openCypher implementations: fields override the selected value's; a selected time with a
//! zone combined with a new `timezone` is moved to that zone keeping the instant, while a local one is just placed
//! in it; without `timezone` the selected time's zone is kept, and the default zone is UTC. A `time` given a
//! named zone takes the offset that zone has at the selected datetime's instant, or else at the clock's.

use super::civil::{self, NANOS_PER_SECOND};
use super::instant::{self, Parts};
use super::zone::Zone;
use super::{invalid, parse, wrong_type, Clock, Kind};
use crate::error::Result;
use crate::value::{Map, Value};

/// `date(arg)`, `datetime(arg)`, ...: no argument is the clock's instant in UTC.
pub fn construct(kind: Kind, arg: Option<&Value>, clock: &Clock) -> Result<Value> {
    match arg {
        None => now(kind, &Zone::UTC, clock),
        Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(s)) => from_string(kind, s).map_err(super::unreadable_text),
        Some(Value::Map(m)) => build(kind, Fields::from_map(m)?, clock),
        Some(v) => match Parts::from_value(v) {
            Some(parts) => {
                let mut fields = Fields::default();
                match (parts.days.is_some(), parts.nanos.is_some()) {
                    (true, true) => fields.datetime = Some(parts),
                    (true, false) => fields.date = Some(parts),
                    _ => fields.time = Some(parts),
                }
                build(kind, fields, clock)
            }
            None => Err(wrong_type(format!(
                "{}() expects a string, a map or a temporal value, got {}",
                kind.name(),
                v.type_name()
            ))),
        },
    }
}

/// `date.transaction([timezone])`, `datetime.realtime({timezone: ...})`, ...: the clock's instant, in UTC or the
/// given zone.
pub fn now_with(kind: Kind, arg: Option<&Value>, clock: &Clock) -> Result<Value> {
    match arg {
        None => now(kind, &Zone::UTC, clock),
        Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(s)) => now(kind, &Zone::parse(s)?, clock),
        Some(Value::Map(m)) => {
            let fields = Fields::from_map(m)?;
            match fields.timezone {
                Some(zone) if m.len() == 1 => now(kind, &zone, clock),
                _ => Err(invalid(format!("{}() at the clock takes only a timezone", kind.name()))),
            }
        }
        Some(v) => Err(wrong_type(format!("expected a time zone, got {}", v.type_name()))),
    }
}

/// The clock's instant in `zone`, as a value of `kind`.
fn now(kind: Kind, zone: &Zone, clock: &Clock) -> Result<Value> {
    let v = instant::datetime_at(clock.seconds, clock.nanos, zone)?;
    if kind == Kind::DateTime {
        return Ok(v);
    }
    let parts = Parts::from_value(&v).expect("a datetime has parts");
    let (days, nanos) = (parts.days.unwrap_or(0), parts.nanos.unwrap_or(0));
    Ok(match kind {
        Kind::Date => instant::date(days)?,
        Kind::LocalTime => instant::local_time(nanos),
        Kind::Time => instant::time(nanos, parts.offset.unwrap_or(0)),
        _ => instant::local_datetime(days, nanos)?,
    })
}

/// Reads `s` with `parse`, and failing that with its ISO 8601 designators in upper case (`t`, `z`, `w`, `p`,
/// units) outside a bracketed zone name, which keeps its case: Neo4j reads `2020-01-01t10:00z` and `p1d` as
/// their upper-case forms. An error is the one the text as written gives.
pub(super) fn read_any_case<T>(s: &str, parse: impl Fn(&str) -> Result<T>) -> Result<T> {
    let first = parse(s);
    if first.is_ok() || !s.bytes().any(|b| b.is_ascii_lowercase()) {
        return first;
    }
    let zone_at = s.find('[').unwrap_or(s.len());
    let (text, zone) = s.split_at(zone_at);
    parse(&format!("{}{zone}", text.to_ascii_uppercase())).or(first)
}

pub(super) fn from_string(kind: Kind, s: &str) -> Result<Value> {
    read_any_case(s, |s| from_string_as_written(kind, s))
}

fn from_string_as_written(kind: Kind, s: &str) -> Result<Value> {
    // A time may be written with ISO 8601's time designator in front (`T12:00`), as Neo4j reads it.
    let time_text = |s: &str| -> String { s.strip_prefix(['T', 't']).filter(|t| !t.is_empty()).unwrap_or(s).into() };
    match kind {
        Kind::Date => instant::date(parse::date(s)?),
        Kind::LocalTime => Ok(instant::local_time(parse::local_time(&time_text(s))?)),
        Kind::Time => {
            let (nanos, offset) = parse::time(&time_text(s))?;
            Ok(instant::time(nanos, offset.unwrap_or(0)))
        }
        Kind::LocalDateTime => {
            let dt = parse::datetime(s)?;
            if dt.offset.is_some() || dt.zone.is_some() {
                return Err(invalid(format!("a local datetime has no time zone: '{s}'")));
            }
            instant::local_datetime(dt.days, dt.nanos)
        }
        Kind::DateTime => {
            let dt = parse::datetime(s)?;
            match (dt.zone, dt.offset) {
                (Some(zone), offset) => {
                    let v = instant::datetime(dt.days, dt.nanos, &zone, offset)?;
                    match (&v, offset) {
                        (Value::DateTime(t), Some(o)) if t.offset_seconds != o => {
                            Err(invalid(format!("offset and time zone do not match in '{s}'")))
                        }
                        _ => Ok(v),
                    }
                }
                (None, offset) => instant::datetime(dt.days, dt.nanos, &Zone::Offset(offset.unwrap_or(0)), None),
            }
        }
    }
}

/// The fields of a constructor map, checked for type but not yet for combination.
#[derive(Clone, Debug, Default)]
pub struct Fields {
    pub year: Option<i64>,
    pub month: Option<i64>,
    pub day: Option<i64>,
    pub week: Option<i64>,
    pub day_of_week: Option<i64>,
    pub ordinal_day: Option<i64>,
    pub quarter: Option<i64>,
    pub day_of_quarter: Option<i64>,
    pub hour: Option<i64>,
    pub minute: Option<i64>,
    pub second: Option<i64>,
    pub millisecond: Option<i64>,
    pub microsecond: Option<i64>,
    pub nanosecond: Option<i64>,
    pub timezone: Option<Zone>,
    pub date: Option<Parts>,
    pub time: Option<Parts>,
    pub datetime: Option<Parts>,
    pub epoch_seconds: Option<i64>,
    pub epoch_millis: Option<i64>,
}

impl Fields {
    /// Reads a map; keys match case-insensitively.
    pub fn from_map(map: &Map) -> Result<Fields> {
        let mut f = Fields::default();
        for (key, value) in map {
            let lower = key.to_ascii_lowercase();
            let slot = match lower.as_str() {
                "year" => &mut f.year,
                "month" => &mut f.month,
                "day" => &mut f.day,
                "week" => &mut f.week,
                "dayofweek" | "weekday" => &mut f.day_of_week,
                "ordinalday" => &mut f.ordinal_day,
                "quarter" => &mut f.quarter,
                "dayofquarter" => &mut f.day_of_quarter,
                "hour" => &mut f.hour,
                "minute" => &mut f.minute,
                "second" => &mut f.second,
                "millisecond" => &mut f.millisecond,
                "microsecond" => &mut f.microsecond,
                "nanosecond" => &mut f.nanosecond,
                "epochseconds" => &mut f.epoch_seconds,
                "epochmillis" => &mut f.epoch_millis,
                "timezone" => {
                    f.timezone = Some(match value {
                        Value::String(s) => Zone::parse(s)?,
                        other => {
                            return Err(wrong_type(format!("timezone must be a string, got {}", other.type_name())))
                        }
                    });
                    continue;
                }
                "date" | "time" | "datetime" => {
                    let parts = Parts::from_value(value).ok_or_else(|| {
                        wrong_type(format!("'{key}' must be a temporal value, got {}", value.type_name()))
                    })?;
                    let (needs_date, needs_time) = match lower.as_str() {
                        "date" => (true, false),
                        "time" => (false, true),
                        _ => (true, false),
                    };
                    if (needs_date && parts.days.is_none()) || (needs_time && parts.nanos.is_none()) {
                        return Err(invalid(format!("cannot select '{key}' from a {}", value.type_name())));
                    }
                    *match lower.as_str() {
                        "date" => &mut f.date,
                        "time" => &mut f.time,
                        _ => &mut f.datetime,
                    } = Some(parts);
                    continue;
                }
                _ => return Err(invalid(format!("no such temporal field: '{key}'"))),
            };
            *slot = Some(match value {
                Value::Int(i) => *i,
                // A null field is left out, as in Neo4j (`{year: 2020, month: $m}` with no month).
                Value::Null => continue,
                other => return Err(wrong_type(format!("'{key}' must be an integer, got {}", other.type_name()))),
            });
        }
        Ok(f)
    }

    fn has_date_fields(&self) -> bool {
        [
            self.year,
            self.month,
            self.day,
            self.week,
            self.day_of_week,
            self.ordinal_day,
            self.quarter,
            self.day_of_quarter,
        ]
        .iter()
        .any(Option::is_some)
    }

    fn has_time_fields(&self) -> bool {
        [self.hour, self.minute, self.second, self.millisecond, self.microsecond, self.nanosecond]
            .iter()
            .any(Option::is_some)
    }
}

/// Builds a value of `kind` from map fields.
pub fn build(kind: Kind, f: Fields, clock: &Clock) -> Result<Value> {
    if f.epoch_seconds.is_some() || f.epoch_millis.is_some() {
        return epoch(kind, &f);
    }
    if f.datetime.is_some() && (f.date.is_some() || f.time.is_some()) {
        return Err(invalid("cannot select both 'datetime' and 'date' or 'time'"));
    }
    let name = kind.name();
    if !kind.has_date() && (f.has_date_fields() || f.date.is_some()) {
        return Err(invalid(format!("{name}() has no date fields")));
    }
    if !kind.has_time() && (f.has_time_fields() || f.time.is_some()) {
        return Err(invalid(format!("{name}() has no time fields")));
    }
    let anything =
        f.date.is_some() || f.time.is_some() || f.datetime.is_some() || f.has_date_fields() || f.has_time_fields();
    if !kind.has_zone() && f.timezone.is_some() && anything {
        return Err(invalid(format!("{name}() has no time zone")));
    }
    if !anything {
        return match &f.timezone {
            Some(zone) => now(kind, zone, clock),
            None => Err(invalid(format!("{name}() needs at least one field"))),
        };
    }
    let base_date = f.datetime.as_ref().or(f.date.as_ref()).and_then(|p| p.days);
    let base_time = f.datetime.as_ref().or(f.time.as_ref()).map(|p| p.nanos.unwrap_or(0));
    let days = if kind.has_date() { Some(build_date(&f, base_date)?) } else { None };
    let nanos = if kind.has_time() { build_time(&f, base_time)? } else { 0 };
    let source = f.datetime.as_ref().or(f.time.as_ref()).filter(|p| p.zone.is_some());
    match kind {
        Kind::Date => instant::date(days.unwrap_or(0)),
        Kind::LocalTime => Ok(instant::local_time(nanos)),
        Kind::LocalDateTime => instant::local_datetime(days.unwrap_or(0), nanos),
        Kind::Time => {
            let src_offset = source.and_then(|p| p.offset);
            Ok(match (&f.timezone, src_offset) {
                (Some(tz), Some(o)) => {
                    let at = source.and_then(instant::instant).map(|(s, _)| s).unwrap_or(clock.seconds);
                    let o2 = tz.offset_at(at);
                    instant::time(nanos + (o2 as i64 - o as i64) * NANOS_PER_SECOND, o2)
                }
                (Some(tz), None) => instant::time(nanos, tz.offset_at(clock.seconds)),
                (None, Some(o)) => instant::time(nanos, o),
                (None, None) => instant::time(nanos, 0),
            })
        }
        Kind::DateTime => {
            let days = days.unwrap_or(0);
            match (&f.timezone, source) {
                (Some(tz), Some(src)) => {
                    let zone = src.zone.as_ref().expect("filtered on zone");
                    let (local, n) = instant::join_local(days, nanos);
                    let utc = local - zone.offset_for_local(local, src.offset) as i64;
                    instant::datetime_at(utc, n, tz)
                }
                (Some(tz), None) => instant::datetime(days, nanos, tz, None),
                (None, Some(src)) => instant::datetime(days, nanos, src.zone.as_ref().expect("zone"), src.offset),
                (None, None) => instant::datetime(days, nanos, &Zone::UTC, None),
            }
        }
    }
}

/// The date from date fields, over a selected date when there is one.
fn build_date(f: &Fields, base: Option<i64>) -> Result<i64> {
    let calendar = f.month.is_some() || f.day.is_some();
    let week = f.week.is_some() || f.day_of_week.is_some();
    let ordinal = f.ordinal_day.is_some();
    let quarter = f.quarter.is_some() || f.day_of_quarter.is_some();
    if [calendar, week, ordinal, quarter].iter().filter(|&&b| b).count() > 1 {
        return Err(invalid("cannot mix calendar, week, ordinal and quarter date fields"));
    }
    let Some(base) = base else {
        let year = f.year.ok_or_else(|| invalid("'year' must be specified"))?;
        return if week {
            let w = f.week.ok_or_else(|| invalid("'dayOfWeek' needs 'week'"))?;
            parse::week_date(year, w, f.day_of_week.unwrap_or(1))
        } else if ordinal {
            parse::ordinal_date(year, f.ordinal_day.unwrap_or(1))
        } else if quarter {
            let q = f.quarter.ok_or_else(|| invalid("'dayOfQuarter' needs 'quarter'"))?;
            quarter_day(year, q, f.day_of_quarter.unwrap_or(1))
        } else {
            if f.day.is_some() && f.month.is_none() {
                return Err(invalid("'day' needs 'month'"));
            }
            parse::calendar(year, f.month.unwrap_or(1), f.day.unwrap_or(1))
        };
    };
    // Over a selected date: fields not given come from it, and a day taken from it is clamped to fit.
    if week {
        let (wy, w, dow) = civil::week_date(base);
        let year = f.year.unwrap_or(wy);
        let w = f.week.unwrap_or_else(|| (w as i64).min(weeks_in(year)));
        parse::week_date(year, w, f.day_of_week.unwrap_or(dow as i64))
    } else if ordinal {
        let (y, _, _) = civil::civil_from_days(base);
        parse::ordinal_date(f.year.unwrap_or(y), f.ordinal_day.unwrap_or(1))
    } else if quarter {
        let (y, m, d) = civil::civil_from_days(base);
        let year = f.year.unwrap_or(y);
        let q = f.quarter.unwrap_or(civil::quarter(m) as i64);
        match f.day_of_quarter {
            Some(doq) => quarter_day(year, q, doq),
            // A new quarter keeps the month within the quarter and the day of the month (clamped to fit), as in
            // Neo4j: 2020-05-31 in the first quarter is 2020-02-29.
            None if (1..=4).contains(&q) => {
                let month = (q - 1) * 3 + (m as i64 - 1) % 3 + 1;
                let max = if year_ok(year) { civil::days_in_month(year, month as u32) } else { 31 };
                parse::calendar(year, month, (d as i64).min(max as i64))
            }
            None => parse::quarter_date(year, q, 1),
        }
    } else {
        let (y, m, d) = civil::civil_from_days(base);
        let year = f.year.unwrap_or(y);
        let month = f.month.unwrap_or(m as i64);
        let day = f.day.unwrap_or_else(|| {
            let max =
                if (1..=12).contains(&month) && year_ok(year) { civil::days_in_month(year, month as u32) } else { 31 };
            (d as i64).min(max as i64)
        });
        parse::calendar(year, month, day)
    }
}

/// Day `doq` of a quarter. A day past the quarter's end but within the longest quarter (92 days) rolls into the
/// next quarter, as in Neo4j: day 92 of 2020's first quarter is 2020-04-01.
fn quarter_day(year: i64, quarter: i64, doq: i64) -> Result<i64> {
    let rolls = (1..=4).contains(&quarter)
        && year_ok(year)
        && doq > civil::days_in_quarter(year, quarter as u32) as i64
        && doq <= 92;
    if rolls {
        return Ok(parse::quarter_date(year, quarter, 1)? + doq - 1);
    }
    parse::quarter_date(year, quarter, doq)
}

fn year_ok(year: i64) -> bool {
    (civil::MIN_YEAR..=civil::MAX_YEAR).contains(&year)
}

fn weeks_in(year: i64) -> i64 {
    if year_ok(year) {
        civil::weeks_in_year(year) as i64
    } else {
        53
    }
}

/// The time of day from time fields, over a selected time when there is one.
fn build_time(f: &Fields, base: Option<i64>) -> Result<i64> {
    if base.is_none() {
        if f.minute.is_some() && f.hour.is_none() {
            return Err(invalid("'minute' needs 'hour'"));
        }
        if f.second.is_some() && f.minute.is_none() {
            return Err(invalid("'second' needs 'minute'"));
        }
        if subsecond_given(f) && f.second.is_none() {
            return Err(invalid("sub-second fields need 'second'"));
        }
    }
    let base = base.unwrap_or(0);
    let secs = base / NANOS_PER_SECOND;
    let hour = f.hour.unwrap_or(secs / 3600);
    let minute = f.minute.unwrap_or(secs / 60 % 60);
    let second = f.second.unwrap_or(secs % 60);
    let nanos = if subsecond_given(f) { subsecond(f)? } else { base % NANOS_PER_SECOND };
    parse::time_of_day(hour, minute, second, nanos)
}

fn subsecond_given(f: &Fields) -> bool {
    f.millisecond.is_some() || f.microsecond.is_some() || f.nanosecond.is_some()
}

/// `millisecond`, `microsecond` and `nanosecond` together: each finer field fills in below the coarser ones.
fn subsecond(f: &Fields) -> Result<i64> {
    let check = |name: &str, v: Option<i64>, max: i64| -> Result<i64> {
        match v {
            Some(v) if !(0..=max).contains(&v) => Err(invalid(format!("invalid value for {name}: {v}"))),
            v => Ok(v.unwrap_or(0)),
        }
    };
    let ms = check("millisecond", f.millisecond, 999)?;
    let us = check("microsecond", f.microsecond, if f.millisecond.is_some() { 999 } else { 999_999 })?;
    let ns_max = if f.microsecond.is_some() {
        999
    } else if f.millisecond.is_some() {
        999_999
    } else {
        999_999_999
    };
    let ns = check("nanosecond", f.nanosecond, ns_max)?;
    Ok(ms * 1_000_000 + us * 1_000 + ns)
}

/// `datetime({epochSeconds, nanosecond})`, `datetime({epochMillis})`, with an optional timezone.
fn epoch(kind: Kind, f: &Fields) -> Result<Value> {
    if kind != Kind::DateTime {
        return Err(invalid(format!("{}() cannot be built from epoch fields", kind.name())));
    }
    if f.has_date_fields()
        || f.hour.is_some()
        || f.minute.is_some()
        || f.second.is_some()
        || f.date.is_some()
        || f.time.is_some()
        || f.datetime.is_some()
    {
        return Err(invalid("epoch fields cannot be combined with date or time fields"));
    }
    let zone = f.timezone.clone().unwrap_or(Zone::UTC);
    let extra = if subsecond_given(f) { subsecond(f)? } else { 0 };
    let total = match (f.epoch_seconds, f.epoch_millis) {
        (Some(s), None) => s as i128 * NANOS_PER_SECOND as i128 + extra as i128,
        (None, Some(ms)) => {
            if f.millisecond.is_some() || extra >= 1_000_000 {
                return Err(invalid("epochMillis takes only microsecond and nanosecond below it"));
            }
            // Microseconds and nanoseconds replace the second's fraction the milliseconds gave, as in Neo4j
            // (`{epochMillis: 1500000000123, nanosecond: 7}` ends in .000000007).
            if subsecond_given(f) {
                ms.div_euclid(1000) as i128 * NANOS_PER_SECOND as i128 + extra as i128
            } else {
                ms as i128 * 1_000_000
            }
        }
        _ => return Err(invalid("cannot give both 'epochSeconds' and 'epochMillis'")),
    };
    at_epoch_nanos(total, &zone)
}

fn at_epoch_nanos(total: i128, zone: &Zone) -> Result<Value> {
    let n = NANOS_PER_SECOND as i128;
    let seconds = i64::try_from(total.div_euclid(n)).map_err(|_| super::out_of_range("datetime is out of range"))?;
    instant::datetime_at(seconds, total.rem_euclid(n) as u32, zone)
}

fn int_arg(name: &str, v: &Value) -> Result<Option<i64>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i)),
        other => Err(wrong_type(format!("{name} must be an integer, got {}", other.type_name()))),
    }
}

/// `datetime.fromepoch(seconds, nanoseconds)`.
pub fn from_epoch(seconds: &Value, nanos: &Value) -> Result<Value> {
    match (int_arg("seconds", seconds)?, int_arg("nanoseconds", nanos)?) {
        (Some(s), Some(n)) => at_epoch_nanos(s as i128 * NANOS_PER_SECOND as i128 + n as i128, &Zone::UTC),
        _ => Ok(Value::Null),
    }
}

/// `datetime.fromepochmillis(milliseconds)`.
pub fn from_epoch_millis(millis: &Value) -> Result<Value> {
    match int_arg("milliseconds", millis)? {
        Some(ms) => at_epoch_nanos(ms as i128 * 1_000_000, &Zone::UTC),
        None => Ok(Value::Null),
    }
}
