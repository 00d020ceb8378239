//! `date.truncate(unit, value[, overrides])` and its `localtime`, `time`, `localdatetime` and `datetime` siblings.
//!
//! The value is cut down to the start of its `unit` (millennium, century, decade, year, weekYear, quarter, month,
//! week, day, hour, minute, second, millisecond, microsecond); then `overrides` set fields as a constructor map
//! would over the truncated value (`{day: 2}`, `{dayOfWeek: 2}`, `{nanosecond: 2}`). A `timezone` override
//! replaces the zone and keeps the wall time; otherwise the value's own zone is kept (UTC for local values).

use super::civil::{self, NANOS_PER_SECOND};
use super::construct::{self, Fields};
use super::instant::Parts;
use super::{invalid, wrong_type, Clock, Kind};
use crate::error::Result;
use crate::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Millennium,
    Century,
    Decade,
    Year,
    WeekYear,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
}

impl Unit {
    fn parse(name: &str) -> Option<Unit> {
        Some(match name.to_ascii_lowercase().as_str() {
            "millennium" => Unit::Millennium,
            "century" => Unit::Century,
            "decade" => Unit::Decade,
            "year" => Unit::Year,
            "weekyear" => Unit::WeekYear,
            "quarter" => Unit::Quarter,
            "month" => Unit::Month,
            "week" => Unit::Week,
            "day" => Unit::Day,
            "hour" => Unit::Hour,
            "minute" => Unit::Minute,
            "second" => Unit::Second,
            "millisecond" => Unit::Millisecond,
            "microsecond" => Unit::Microsecond,
            _ => return None,
        })
    }

    /// Units that cut into the date (and so reset the time).
    fn is_date_based(self) -> bool {
        matches!(
            self,
            Unit::Millennium
                | Unit::Century
                | Unit::Decade
                | Unit::Year
                | Unit::WeekYear
                | Unit::Quarter
                | Unit::Month
                | Unit::Week
                | Unit::Day
        )
    }
}

/// The first day of the unit holding `days`.
fn truncate_days(unit: Unit, days: i64) -> i64 {
    let (y, m, _) = civil::civil_from_days(days);
    let year_start = |y: i64| civil::days_from_civil(y, 1, 1);
    match unit {
        Unit::Millennium => year_start(y - y.rem_euclid(1000)),
        Unit::Century => year_start(y - y.rem_euclid(100)),
        Unit::Decade => year_start(y - y.rem_euclid(10)),
        Unit::Year => year_start(y),
        Unit::WeekYear => civil::week_year_start(civil::week_date(days).0),
        Unit::Quarter => civil::days_from_civil(y, (civil::quarter(m) - 1) * 3 + 1, 1),
        Unit::Month => civil::days_from_civil(y, m, 1),
        Unit::Week => days - (civil::day_of_week(days) as i64 - 1),
        _ => days,
    }
}

/// The start of the unit holding time of day `nanos`.
fn truncate_nanos(unit: Unit, nanos: i64) -> i64 {
    let step = match unit {
        Unit::Hour => 3600 * NANOS_PER_SECOND,
        Unit::Minute => 60 * NANOS_PER_SECOND,
        Unit::Second => NANOS_PER_SECOND,
        Unit::Millisecond => 1_000_000,
        Unit::Microsecond => 1_000,
        _ => return 0,
    };
    nanos - nanos.rem_euclid(step)
}

pub fn truncate(kind: Kind, unit: &Value, value: &Value, overrides: Option<&Value>, clock: &Clock) -> Result<Value> {
    if unit.is_null() || value.is_null() {
        return Ok(Value::Null);
    }
    let name = kind.name();
    let unit_name = unit
        .as_str()
        .ok_or_else(|| wrong_type(format!("{name}.truncate() unit must be a string, got {}", unit.type_name())))?;
    let unit = Unit::parse(unit_name).ok_or_else(|| invalid(format!("unknown unit for truncation: '{unit_name}'")))?;
    let parts = Parts::from_value(value).ok_or_else(|| {
        wrong_type(format!("{name}.truncate() expects a temporal instant, got {}", value.type_name()))
    })?;
    let mut fields = match overrides {
        None | Some(Value::Null) => Fields::default(),
        Some(Value::Map(m)) => Fields::from_map(m)?,
        Some(other) => {
            return Err(wrong_type(format!("truncation overrides must be a map, got {}", other.type_name())))
        }
    };
    if fields.date.is_some() || fields.time.is_some() || fields.datetime.is_some() {
        return Err(invalid("truncation overrides cannot select other values"));
    }
    if fields.epoch_seconds.is_some() || fields.epoch_millis.is_some() {
        return Err(invalid("truncation overrides cannot hold epoch fields"));
    }
    if kind == Kind::Date && !unit.is_date_based() {
        return Err(wrong_type(format!("cannot truncate a date to a {unit_name}")));
    }
    if !kind.has_date() && unit.is_date_based() && unit != Unit::Day {
        return Err(wrong_type(format!("cannot truncate a {name} to a {unit_name}")));
    }
    if kind.has_date() && parts.days.is_none() {
        return Err(wrong_type(format!("cannot truncate a {} to a {name}: it has no date", value.type_name())));
    }
    if !kind.has_date() && parts.nanos.is_none() {
        return Err(wrong_type(format!("cannot truncate a {} to a {name}: it has no time", value.type_name())));
    }
    let nanos = truncate_nanos(unit, parts.nanos.unwrap_or(0));
    // A sub-second override below the truncation unit keeps the truncated part above it.
    let below = nanos % NANOS_PER_SECOND;
    if unit == Unit::Millisecond
        && fields.millisecond.is_none()
        && (fields.microsecond.is_some() || fields.nanosecond.is_some())
    {
        fields.millisecond = Some(below / 1_000_000);
    }
    if unit == Unit::Microsecond && fields.microsecond.is_none() && fields.nanosecond.is_some() {
        fields.microsecond = Some(if fields.millisecond.is_some() { below / 1_000 % 1_000 } else { below / 1_000 });
    }
    if kind.has_date() {
        let days = truncate_days(unit, parts.days.unwrap_or(0));
        fields.date = Some(Parts { days: Some(days), nanos: None, zone: None, offset: None });
    }
    if kind.has_time() {
        let keep_zone = fields.timezone.is_none();
        fields.time = Some(Parts {
            days: None,
            nanos: Some(nanos),
            zone: if keep_zone { parts.zone.clone() } else { None },
            offset: if keep_zone { parts.offset } else { None },
        });
    }
    construct::build(kind, fields, clock)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::civil::days_from_civil;

    #[test]
    fn date_units() {
        let d = days_from_civil(2017, 10, 11);
        let ymd = |u: Unit, days: i64| civil::civil_from_days(truncate_days(u, days));
        assert_eq!(ymd(Unit::Millennium, d), (2000, 1, 1));
        assert_eq!(ymd(Unit::Century, days_from_civil(1984, 10, 11)), (1900, 1, 1));
        assert_eq!(ymd(Unit::Decade, days_from_civil(1984, 10, 11)), (1980, 1, 1));
        assert_eq!(ymd(Unit::WeekYear, days_from_civil(1984, 2, 1)), (1984, 1, 2));
        assert_eq!(ymd(Unit::WeekYear, days_from_civil(1984, 1, 1)), (1983, 1, 3));
        assert_eq!(ymd(Unit::Quarter, days_from_civil(1984, 11, 11)), (1984, 10, 1));
        assert_eq!(ymd(Unit::Week, days_from_civil(1984, 10, 11)), (1984, 10, 8));
        assert_eq!(ymd(Unit::Century, days_from_civil(-1, 5, 5)), (-100, 1, 1));
    }

    #[test]
    fn time_units() {
        let n = ((12 * 60 + 31) * 60 + 14) * NANOS_PER_SECOND + 645_876_123;
        assert_eq!(truncate_nanos(Unit::Microsecond, n), n - 123);
        assert_eq!(truncate_nanos(Unit::Millisecond, n), n - 876_123);
        assert_eq!(truncate_nanos(Unit::Hour, n), 12 * 3600 * NANOS_PER_SECOND);
        assert_eq!(truncate_nanos(Unit::Day, n), 0);
    }
}
