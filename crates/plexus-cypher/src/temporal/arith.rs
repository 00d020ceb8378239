//! Arithmetic with temporal operands (instant ± duration, duration ± duration, duration × ÷ number) and the
//! ordering of temporal values of one type.
//!
//! Adding a duration to an instant adds its months first (the day of month clamped to the target month), then its
//! days, both on the wall clock, then its seconds as elapsed time. A date takes only whole days of the seconds; a
//! time of day wraps around midnight and ignores months and days.

use std::cmp::Ordering;

use plexus_storage::value::Duration;

use super::civil::{self, NANOS_PER_DAY, NANOS_PER_SECOND};
use super::duration::{self, total_nanos};
use super::instant::{self, Parts};
use super::zone::Zone;
use super::{out_of_range, wrong_type, ArithOp};
use crate::error::Result;
use crate::value::Value;

pub fn apply(op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    use ArithOp::*;
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let dur = |d: Duration| Ok(Value::duration(d));
    match (op, a, b) {
        (Add, Value::Duration(x), Value::Duration(y)) => dur(duration::add(x, y)?),
        (Sub, Value::Duration(x), Value::Duration(y)) => dur(duration::sub(x, y)?),
        (Add, Value::Duration(d), t) | (Add, t, Value::Duration(d)) if Parts::from_value(t).is_some() => plus(t, d),
        (Sub, t, Value::Duration(d)) if Parts::from_value(t).is_some() => plus(t, &duration::negate(d)?),
        (Mul, Value::Duration(d), Value::Int(k)) | (Mul, Value::Int(k), Value::Duration(d)) => {
            dur(duration::mul_int(d, *k)?)
        }
        (Mul, Value::Duration(d), Value::Float(f)) | (Mul, Value::Float(f), Value::Duration(d)) => {
            dur(duration::mul_float(d, *f)?)
        }
        (Div, Value::Duration(d), Value::Int(k)) => dur(duration::div(d, *k as f64)?),
        (Div, Value::Duration(d), Value::Float(f)) => dur(duration::div(d, *f)?),
        _ => {
            let symbol = match op {
                Add => "+",
                Sub => "-",
                Mul => "*",
                Div => "/",
            };
            Err(wrong_type(format!("cannot compute {} {symbol} {}", a.type_name(), b.type_name())))
        }
    }
}

/// An instant moved by a duration.
fn plus(value: &Value, d: &Duration) -> Result<Value> {
    let parts = Parts::from_value(value).expect("checked by the caller");
    let elapsed = total_nanos(d);
    let too_far = || out_of_range("temporal arithmetic result is out of range");
    // Months then days on the calendar.
    let shift_days = |days: i64, extra: i128| -> Result<i64> {
        let moved = civil::add_months(days, d.months).ok_or_else(too_far)?;
        let total = moved as i128 + d.days as i128 + extra;
        i64::try_from(total).map_err(|_| too_far())
    };
    match value {
        Value::Date(_) => {
            let whole_days = elapsed / NANOS_PER_DAY as i128;
            instant::date(shift_days(parts.days.unwrap_or(0), whole_days)?)
        }
        Value::LocalTime(t) => Ok(instant::local_time(wrap(t.nanos, elapsed))),
        Value::Time(t) => Ok(instant::time(wrap(t.nanos, elapsed), t.offset_seconds)),
        Value::LocalDateTime(_) => {
            let days = shift_days(parts.days.unwrap_or(0), 0)?;
            let local = days as i128 * NANOS_PER_DAY as i128 + parts.nanos.unwrap_or(0) as i128 + elapsed;
            let (days, nanos) = split_nanos(local).ok_or_else(too_far)?;
            instant::local_datetime(days, nanos)
        }
        Value::DateTime(t) => {
            let zone = match &t.zone {
                Some(name) => Zone::Named(name.clone()),
                None => Zone::Offset(t.offset_seconds),
            };
            let nanos = parts.nanos.unwrap_or(0);
            let days = shift_days(parts.days.unwrap_or(0), 0)?;
            if !civil::days_in_range(days) {
                return Err(too_far());
            }
            let (local, n) = instant::join_local(days, nanos);
            let utc = local - zone.offset_for_local(local, Some(t.offset_seconds)) as i64;
            let total = utc as i128 * NANOS_PER_SECOND as i128 + n as i128 + elapsed;
            let seconds = i64::try_from(total.div_euclid(NANOS_PER_SECOND as i128)).map_err(|_| too_far())?;
            instant::datetime_at(seconds, total.rem_euclid(NANOS_PER_SECOND as i128) as u32, &zone)
        }
        _ => Err(wrong_type(format!("cannot add a duration to {}", value.type_name()))),
    }
}

/// A time of day moved by elapsed nanoseconds, around the clock.
fn wrap(nanos: i64, elapsed: i128) -> i64 {
    (nanos as i128 + elapsed).rem_euclid(NANOS_PER_DAY as i128) as i64
}

fn split_nanos(local: i128) -> Option<(i64, i64)> {
    let days = i64::try_from(local.div_euclid(NANOS_PER_DAY as i128)).ok()?;
    Some((days, local.rem_euclid(NANOS_PER_DAY as i128) as i64))
}

pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    Some(match (a, b) {
        (Value::Date(x), Value::Date(y)) => x.days.cmp(&y.days),
        (Value::LocalTime(x), Value::LocalTime(y)) => x.nanos.cmp(&y.nanos),
        (Value::Time(x), Value::Time(y)) => {
            let utc =
                |t: &plexus_storage::value::Time| t.nanos as i128 - t.offset_seconds as i128 * NANOS_PER_SECOND as i128;
            utc(x).cmp(&utc(y)).then(x.offset_seconds.cmp(&y.offset_seconds))
        }
        (Value::LocalDateTime(x), Value::LocalDateTime(y)) => (x.seconds, x.nanos).cmp(&(y.seconds, y.nanos)),
        (Value::DateTime(x), Value::DateTime(y)) => (x.seconds, x.nanos)
            .cmp(&(y.seconds, y.nanos))
            .then(x.offset_seconds.cmp(&y.offset_seconds))
            .then_with(|| x.zone.cmp(&y.zone)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::temporal::{format, Clock};
    use crate::value::Map;

    fn clock() -> Clock {
        Clock { seconds: 0, nanos: 0 }
    }

    fn call(f: &str, arg: Value) -> Value {
        crate::temporal::call_function(f, &[arg], &clock()).unwrap().unwrap()
    }

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::map(entries.iter().map(|(k, v)| (Arc::<str>::from(*k), v.clone())).collect::<Map>())
    }

    fn show(v: &Value) -> String {
        format::to_tck_string(v).unwrap()
    }

    fn tck_durations() -> [Value; 3] {
        let (i, f) = (Value::Int, Value::Float);
        [
            call(
                "duration",
                map(&[
                    ("years", i(12)),
                    ("months", i(5)),
                    ("days", i(14)),
                    ("hours", i(16)),
                    ("minutes", i(12)),
                    ("seconds", i(70)),
                    ("nanoseconds", i(2)),
                ]),
            ),
            call(
                "duration",
                map(&[("months", i(1)), ("days", i(-14)), ("hours", i(16)), ("minutes", i(-12)), ("seconds", i(70))]),
            ),
            call(
                "duration",
                map(&[
                    ("years", f(12.5)),
                    ("months", f(5.5)),
                    ("days", f(14.5)),
                    ("hours", f(16.5)),
                    ("minutes", f(12.5)),
                    ("seconds", f(70.5)),
                    ("nanoseconds", i(3)),
                ]),
            ),
        ]
    }

    fn check(x: &Value, expected: [(&str, &str); 3]) {
        for (d, (sum, diff)) in tck_durations().iter().zip(expected) {
            assert_eq!(show(&apply(ArithOp::Add, x, d).unwrap()), sum);
            assert_eq!(show(&apply(ArithOp::Sub, x, d).unwrap()), diff);
        }
    }

    #[test]
    fn instants_plus_durations_from_the_tck() {
        check(
            &call("date", "1984-10-11".into()),
            [("1997-03-25", "1972-04-27"), ("1984-10-28", "1984-09-25"), ("1997-10-11", "1971-10-12")],
        );
        check(
            &call("localtime", "12:31:14.000000001".into()),
            [
                ("04:44:24.000000003", "20:18:03.999999999"),
                ("04:20:24.000000001", "20:42:04.000000001"),
                ("22:29:27.500000004", "02:33:00.499999998"),
            ],
        );
        check(
            &call("time", "12:31:14.000000001+01:00".into()),
            [
                ("04:44:24.000000003+01:00", "20:18:03.999999999+01:00"),
                ("04:20:24.000000001+01:00", "20:42:04.000000001+01:00"),
                ("22:29:27.500000004+01:00", "02:33:00.499999998+01:00"),
            ],
        );
        check(
            &call("localdatetime", "1984-10-11T12:31:14.000000001".into()),
            [
                ("1997-03-26T04:44:24.000000003", "1972-04-26T20:18:03.999999999"),
                ("1984-10-29T04:20:24.000000001", "1984-09-24T20:42:04.000000001"),
                ("1997-10-11T22:29:27.500000004", "1971-10-12T02:33:00.499999998"),
            ],
        );
        check(
            &call("datetime", "1984-10-11T12:31:14.000000001+01:00".into()),
            [
                ("1997-03-26T04:44:24.000000003+01:00", "1972-04-26T20:18:03.999999999+01:00"),
                ("1984-10-29T04:20:24.000000001+01:00", "1984-09-24T20:42:04.000000001+01:00"),
                ("1997-10-11T22:29:27.500000004+01:00", "1971-10-12T02:33:00.499999998+01:00"),
            ],
        );
    }

    #[test]
    fn named_zones_keep_the_wall_clock_across_dst() {
        let dt = call("datetime", "2017-03-25T12:00+01:00[Europe/Stockholm]".into());
        let day = call("duration", "P1D".into());
        let hours = call("duration", "PT24H".into());
        assert_eq!(show(&apply(ArithOp::Add, &dt, &day).unwrap()), "2017-03-26T12:00+02:00[Europe/Stockholm]");
        assert_eq!(show(&apply(ArithOp::Add, &dt, &hours).unwrap()), "2017-03-26T13:00+02:00[Europe/Stockholm]");
        let month_end = call("date", "2020-01-31".into());
        assert_eq!(show(&apply(ArithOp::Add, &month_end, &call("duration", "P1M".into())).unwrap()), "2020-02-29");
    }

    #[test]
    fn errors_and_nulls() {
        let d = call("date", "2020-01-31".into());
        let dur = call("duration", "P1D".into());
        assert!(apply(ArithOp::Add, &d, &Value::Null).unwrap().is_null());
        assert_eq!(apply(ArithOp::Add, &d, &d).unwrap_err().detail, "InvalidArgumentType");
        assert!(apply(ArithOp::Sub, &dur, &d).is_err());
        assert!(apply(ArithOp::Mul, &d, &Value::Int(2)).is_err());
        let huge = call("duration", map(&[("years", Value::Int(2_000_000_000))]));
        assert_eq!(apply(ArithOp::Add, &d, &huge).unwrap_err().detail, "NumberOutOfRange");
        let max = call("date", "+999999999-12-31".into());
        assert!(apply(ArithOp::Add, &max, &dur).is_err());
        // The most days a duration can hold (its length in seconds fits in 64 bits), past any date.
        let big_days = call("duration", map(&[("days", Value::Int(i64::MAX / 86_400))]));
        assert!(apply(ArithOp::Add, &call("localdatetime", "2020-01-01".into()), &big_days).is_err());
        assert!(apply(ArithOp::Add, &call("datetime", "2020-01-01".into()), &big_days).is_err());
    }

    #[test]
    fn ordering() {
        let t = |s: &str| call("time", s.into());
        let mut times = [
            "10:35-08:00",
            "12:31:14.645876123+01:00",
            "12:31:14.645876124+01:00",
            "12:35:15+05:00",
            "12:30:14.645876123+01:01",
        ]
        .map(t)
        .to_vec();
        times.sort_by(|a, b| compare(a, b).unwrap());
        let shown: Vec<String> = times.iter().map(show).collect();
        assert_eq!(
            shown,
            [
                "12:35:15+05:00",
                "12:30:14.645876123+01:01",
                "12:31:14.645876123+01:00",
                "12:31:14.645876124+01:00",
                "10:35-08:00"
            ]
        );
        let dt = |s: &str| call("datetime", s.into());
        assert_eq!(compare(&dt("1980-12-11T12:31:14Z"), &dt("1984-10-11T12:31:14+05:00")), Some(Ordering::Less));
        assert_eq!(compare(&dt("2020-01-01T01:00+01:00"), &dt("2020-01-01T00:00Z")), Some(Ordering::Greater));
        assert_eq!(compare(&call("duration", "P1D".into()), &call("duration", "P2D".into())), None);
        assert_eq!(compare(&call("date", "2020-01-01".into()), &dt("2020-01-01T00:00Z")), None);
    }
}
