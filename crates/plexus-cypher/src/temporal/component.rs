//! Components of temporal values: `d.year`, `d.weekYear`, `t.offsetMinutes`, `dt.epochMillis`, `dur.days`,
//! `dur.minutesOfHour`, ... Names match case-insensitively; a name the value's type does not have is an error.
//!
//! Duration components come in two families: totals in a unit (`dur.minutes` is all the seconds part in minutes)
//! and remainders within the next larger unit (`dur.minutesOfHour`). Months, days and seconds never mix.

use plexus_storage::value::Duration;

use super::civil::{self, NANOS_PER_SECOND};
use super::duration::canonical;
use super::format::offset_string;
use super::instant::Parts;
use super::out_of_range;
use crate::error::Result;
use crate::value::Value;

pub fn get(value: &Value, key: &str) -> Result<Value> {
    let lower = key.to_ascii_lowercase();
    let found = match value {
        Value::Duration(d) => duration(&canonical(d), &lower)?,
        _ => match Parts::from_value(value) {
            Some(parts) => instant(value, &parts, &lower)?,
            None => None,
        },
    };
    // A component the type lacks is a type mistake, as Neo4j reports it (`date(...).hour`: TypeError).
    found.ok_or_else(|| super::wrong_type(format!("{} has no component '{key}'", value.type_name())))
}

fn instant(value: &Value, parts: &Parts, key: &str) -> Result<Option<Value>> {
    if let Some(days) = parts.days {
        let (year, month, day) = civil::civil_from_days(days);
        let (week_year, week, dow) = civil::week_date(days);
        let v = match key {
            "year" => Some(year),
            "quarter" => Some(civil::quarter(month) as i64),
            "month" => Some(month as i64),
            "week" => Some(week as i64),
            "weekyear" => Some(week_year),
            "dayofquarter" | "quarterday" => Some(civil::day_of_quarter(days) as i64),
            "day" => Some(day as i64),
            "ordinalday" => Some(civil::ordinal_day(days) as i64),
            "dayofweek" | "weekday" => Some(dow as i64),
            _ => None,
        };
        if let Some(v) = v {
            return Ok(Some(Value::Int(v)));
        }
    }
    if let Some(nanos) = parts.nanos {
        let secs = nanos / NANOS_PER_SECOND;
        let sub = nanos % NANOS_PER_SECOND;
        let v = match key {
            "hour" => Some(secs / 3600),
            "minute" => Some(secs / 60 % 60),
            "second" => Some(secs % 60),
            "millisecond" => Some(sub / 1_000_000),
            "microsecond" => Some(sub / 1_000),
            "nanosecond" => Some(sub),
            _ => None,
        };
        if let Some(v) = v {
            return Ok(Some(Value::Int(v)));
        }
    }
    if let Some(offset) = parts.offset {
        let v = match key {
            "timezone" => Some(match &parts.zone {
                Some(super::zone::Zone::Named(name)) => Value::String(name.clone()),
                _ => Value::from(offset_string(offset)),
            }),
            "offset" => Some(Value::from(offset_string(offset))),
            "offsetminutes" => Some(Value::Int(offset as i64 / 60)),
            "offsetseconds" => Some(Value::Int(offset as i64)),
            _ => None,
        };
        if v.is_some() {
            return Ok(v);
        }
    }
    if let Value::DateTime(t) = value {
        match key {
            // Whole seconds towards zero, as Neo4j counts them: half a second before 1970 is second 0.
            "epochseconds" => return Ok(Some(Value::Int(t.seconds + (t.seconds < 0 && t.nanos > 0) as i64))),
            "epochmillis" => {
                let millis = t.seconds as i128 * 1000 + t.nanos as i128 / 1_000_000;
                let millis = i64::try_from(millis).map_err(|_| out_of_range("epochMillis is out of range"))?;
                return Ok(Some(Value::Int(millis)));
            }
            _ => {}
        }
    }
    Ok(None)
}

fn duration(d: &Duration, key: &str) -> Result<Option<Value>> {
    let total = |unit: i128| {
        let v = (d.seconds as i128 * NANOS_PER_SECOND as i128 + d.nanos as i128).div_euclid(unit);
        i64::try_from(v).map_err(|_| out_of_range(format!("duration component '{key}' is out of range")))
    };
    let nanos = d.nanos as i64;
    let v = match key {
        "years" => d.months / 12,
        "quarters" => d.months / 3,
        "months" => d.months,
        "quartersofyear" => d.months / 3 % 4,
        "monthsofquarter" => d.months % 3,
        "monthsofyear" => d.months % 12,
        "weeks" => d.days / 7,
        "days" => d.days,
        "daysofweek" => d.days % 7,
        "hours" => d.seconds / 3600,
        "minutes" => d.seconds / 60,
        "seconds" => d.seconds,
        "minutesofhour" => d.seconds / 60 % 60,
        "secondsofminute" => d.seconds % 60,
        "milliseconds" => total(1_000_000)?,
        "microseconds" => total(1_000)?,
        "nanoseconds" => total(1)?,
        "millisecondsofsecond" => nanos / 1_000_000,
        "microsecondsofsecond" => nanos / 1_000,
        "nanosecondsofsecond" => nanos,
        _ => return Ok(None),
    };
    Ok(Some(Value::Int(v)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::temporal::Clock;
    use crate::value::Map;

    fn call(f: &str, arg: Value) -> Value {
        crate::temporal::call_function(f, &[arg], &Clock { seconds: 0, nanos: 0 }).unwrap().unwrap()
    }

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::map(entries.iter().map(|(k, v)| (Arc::<str>::from(*k), v.clone())).collect::<Map>())
    }

    fn ints(v: &Value, keys: &[&str]) -> Vec<i64> {
        keys.iter().map(|k| get(v, k).unwrap().as_int().unwrap_or_else(|| panic!("{k}"))).collect()
    }

    fn text(v: &Value, key: &str) -> String {
        get(v, key).unwrap().as_str().unwrap().to_string()
    }

    const DATE_KEYS: [&str; 9] =
        ["year", "quarter", "month", "week", "weekYear", "day", "ordinalDay", "weekDay", "dayOfQuarter"];
    const TIME_KEYS: [&str; 6] = ["hour", "minute", "second", "millisecond", "microsecond", "nanosecond"];

    #[test]
    fn dates_and_times_from_the_tck() {
        let d = call("date", "1984-10-11".into());
        assert_eq!(ints(&d, &DATE_KEYS), [1984, 4, 10, 41, 1984, 11, 285, 4, 11]);
        let d = call("date", "1984-01-01".into());
        assert_eq!(ints(&d, &["year", "weekYear", "week", "weekDay"]), [1984, 1983, 52, 7]);
        let t = call("localtime", "12:31:14.645876123".into());
        assert_eq!(ints(&t, &TIME_KEYS), [12, 31, 14, 645, 645876, 645876123]);
        let t = call("time", "12:31:14.645876123+01:00".into());
        assert_eq!(ints(&t, &TIME_KEYS), [12, 31, 14, 645, 645876, 645876123]);
        assert_eq!((text(&t, "timezone"), text(&t, "offset")), ("+01:00".into(), "+01:00".into()));
        assert_eq!(ints(&t, &["offsetMinutes", "offsetSeconds"]), [60, 3600]);
        let ldt = call("localdatetime", "1984-11-11T12:31:14.645876123".into());
        assert_eq!(ints(&ldt, &DATE_KEYS), [1984, 4, 11, 45, 1984, 11, 316, 7, 42]);
        assert_eq!(ints(&ldt, &TIME_KEYS), [12, 31, 14, 645, 645876, 645876123]);
        assert!(get(&ldt, "timezone").is_err());
        assert!(get(&ldt, "epochSeconds").is_err());
    }

    #[test]
    fn datetime_from_the_tck() {
        let dt = call(
            "datetime",
            map(&[
                ("year", Value::Int(1984)),
                ("month", Value::Int(11)),
                ("day", Value::Int(11)),
                ("hour", Value::Int(12)),
                ("minute", Value::Int(31)),
                ("second", Value::Int(14)),
                ("nanosecond", Value::Int(645876123)),
                ("timezone", "Europe/Stockholm".into()),
            ]),
        );
        assert_eq!(ints(&dt, &DATE_KEYS), [1984, 4, 11, 45, 1984, 11, 316, 7, 42]);
        assert_eq!(ints(&dt, &TIME_KEYS), [12, 31, 14, 645, 645876, 645876123]);
        assert_eq!((text(&dt, "timezone"), text(&dt, "offset")), ("Europe/Stockholm".into(), "+01:00".into()));
        assert_eq!(
            ints(&dt, &["offsetMinutes", "offsetSeconds", "epochSeconds", "epochMillis"]),
            [60, 3600, 469020674, 469020674645]
        );
        let before_1970 = call("datetime", "1969-12-31T23:59:59.999Z".into());
        // Neo4j 5.26 counts whole seconds towards zero and milliseconds down.
        assert_eq!(ints(&before_1970, &["epochSeconds", "epochMillis"]), [0, -1]);
    }

    #[test]
    fn durations_from_the_tck() {
        let d = call(
            "duration",
            map(&[
                ("years", Value::Int(1)),
                ("months", Value::Int(4)),
                ("days", Value::Int(10)),
                ("hours", Value::Int(1)),
                ("minutes", Value::Int(1)),
                ("seconds", Value::Int(1)),
                ("nanoseconds", Value::Int(111111111)),
            ]),
        );
        let keys = [
            "years",
            "quarters",
            "months",
            "weeks",
            "days",
            "hours",
            "minutes",
            "seconds",
            "milliseconds",
            "microseconds",
            "nanoseconds",
            "quartersOfYear",
            "monthsOfQuarter",
            "monthsOfYear",
            "daysOfWeek",
            "minutesOfHour",
            "secondsOfMinute",
            "millisecondsOfSecond",
            "microsecondsOfSecond",
            "nanosecondsOfSecond",
        ];
        assert_eq!(
            ints(&d, &keys),
            [
                1,
                5,
                16,
                1,
                10,
                1,
                61,
                3661,
                3661111,
                3661111111,
                3661111111111,
                1,
                1,
                4,
                3,
                1,
                1,
                111,
                111111,
                111111111
            ]
        );
        let neg = call("duration", "PT-23H-59M-59.9S".into());
        assert_eq!(
            ints(&neg, &["days", "seconds", "nanosecondsOfSecond", "milliseconds"]),
            [0, -86400, 100_000_000, -86_399_900]
        );
        let huge = Value::duration(Duration { months: 0, days: 0, seconds: i64::MAX, nanos: 0 });
        assert_eq!(get(&huge, "nanoseconds").unwrap_err().detail, "NumberOutOfRange");
        assert!(get(&d, "year").is_err());
    }
}
