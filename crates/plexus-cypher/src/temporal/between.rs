//! `duration.between(a, b)`, `duration.inMonths`, `duration.inDays` and `duration.inSeconds` over any two instants.
//!
//! Values of different types are first brought to a common shape: one without a zone takes the other's zone, one
//! without a time of day takes midnight, one without a date takes the other's date. Months and days are then
//! counted on the wall clock (in the first value's zone) the way `java.time` counts them, and the rest is exact
//! elapsed time. Months and days are only counted when both values have dates.

use plexus_storage::value::Duration;

use super::civil::{self, NANOS_PER_DAY, NANOS_PER_SECOND};
use super::duration::normalize;
use super::instant::Parts;
use super::zone::Zone;
use super::{out_of_range, wrong_type};
use crate::error::Result;
use crate::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Months, then days, then the rest.
    All,
    Months,
    Days,
    Seconds,
}

pub fn between(unit: Unit, a: &Value, b: &Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let parts = |v: &Value| {
        Parts::from_value(v)
            .ok_or_else(|| wrong_type(format!("duration.between() expects temporal instants, got {}", v.type_name())))
    };
    Ok(Value::duration(between_parts(unit, parts(a)?, parts(b)?)?))
}

fn between_parts(unit: Unit, mut from: Parts, mut to: Parts) -> Result<Duration> {
    let both_dated = from.days.is_some() && to.days.is_some();
    share(&mut from, &to);
    share(&mut to, &from);
    match (from.days, to.days) {
        (Some(_), Some(_)) => dated(unit, &from, &to, both_dated),
        _ => {
            if matches!(unit, Unit::Months | Unit::Days) {
                return normalize(0, 0, 0);
            }
            let utc = |p: &Parts| {
                let offset = p.offset.or_else(|| p.zone.as_ref().map(|z| z.offset_at(0))).unwrap_or(0);
                p.nanos.unwrap_or(0) as i128 - offset as i128 * NANOS_PER_SECOND as i128
            };
            let local = |p: &Parts| p.nanos.unwrap_or(0) as i128;
            let diff = if from.zone.is_some() { utc(&to) - utc(&from) } else { local(&to) - local(&from) };
            normalize(0, 0, diff)
        }
    }
}

/// Gives `target` what it lacks of `source`: its zone, midnight, its date.
fn share(target: &mut Parts, source: &Parts) {
    if target.zone.is_none() && source.zone.is_some() {
        target.zone = source.zone.clone();
        if let Some(Zone::Offset(o)) = target.zone {
            target.offset = Some(o);
        }
    }
    if target.nanos.is_none() && source.nanos.is_some() {
        target.nanos = Some(0);
    }
    if target.days.is_none() && source.days.is_some() {
        target.days = source.days;
    }
}

/// Local nanoseconds since the epoch.
fn local(days: i64, nanos: i64) -> i128 {
    days as i128 * NANOS_PER_DAY as i128 + nanos as i128
}

/// The UTC instant of local fields read in `zone`, in nanoseconds since the epoch.
fn instant(days: i64, nanos: i64, zone: &Zone, preferred: Option<i32>) -> i128 {
    let local_seconds = days * civil::SECONDS_PER_DAY + nanos / NANOS_PER_SECOND;
    local(days, nanos) - zone.offset_for_local(local_seconds, preferred) as i128 * NANOS_PER_SECOND as i128
}

fn dated(unit: Unit, from: &Parts, to: &Parts, count_calendar: bool) -> Result<Duration> {
    let (from_days, from_nanos) = (from.days.unwrap_or(0), from.nanos.unwrap_or(0));
    let (to_days, to_nanos) = (to.days.unwrap_or(0), to.nanos.unwrap_or(0));
    let zone = from.zone.as_ref();
    // The end as an instant (or local time), and as a wall time in the start's zone.
    let (end, end_days, end_nanos) = match (zone, &to.zone) {
        (Some(fz), Some(tz)) => {
            let end = instant(to_days, to_nanos, tz, to.offset);
            let seconds = end.div_euclid(NANOS_PER_SECOND as i128) as i64;
            let wall = end + fz.offset_at(seconds) as i128 * NANOS_PER_SECOND as i128;
            let days = wall.div_euclid(NANOS_PER_DAY as i128) as i64;
            (end, days, wall.rem_euclid(NANOS_PER_DAY as i128) as i64)
        }
        _ => (local(to_days, to_nanos), to_days, to_nanos),
    };
    let (mut months, mut days) = (0, 0);
    let mut cur_days = from_days;
    if count_calendar && unit != Unit::Seconds {
        if unit != Unit::Days {
            months = civil::months_between(from_days, from_nanos, end_days, end_nanos);
            cur_days = civil::add_months(from_days, months).ok_or_else(|| out_of_range("date is out of range"))?;
        }
        if unit != Unit::Months {
            days = civil::days_between(cur_days, from_nanos, end_days, end_nanos);
            cur_days += days;
        }
    }
    match unit {
        Unit::Months => return normalize(months as i128, 0, 0),
        Unit::Days => return normalize(0, days as i128, 0),
        _ => {}
    }
    let start = match zone {
        Some(z) => instant(cur_days, from_nanos, z, from.offset),
        None => local(cur_days, from_nanos),
    };
    normalize(months as i128, days as i128, end - start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::{format, Clock};

    fn v(f: &str, arg: &str) -> Value {
        crate::temporal::call_function(f, &[Value::from(arg)], &Clock { seconds: 0, nanos: 0 }).unwrap().unwrap()
    }

    fn check(unit: Unit, a: &Value, b: &Value, expected: &str) {
        let d = between(unit, a, b).unwrap();
        assert_eq!(format::to_string(&d).unwrap(), expected, "{unit:?} {a:?} {b:?}");
    }

    #[test]
    fn splits_between_boundaries() {
        let ldt = |s| v("localdatetime", s);
        check(Unit::All, &ldt("2018-01-01T12:00"), &ldt("2018-01-02T10:00"), "PT22H");
        check(Unit::All, &ldt("2018-01-02T10:00"), &ldt("2018-01-01T12:00"), "PT-22H");
        check(Unit::All, &ldt("2018-01-01T10:00:00.2"), &ldt("2018-01-02T10:00:00.1"), "PT23H59M59.9S");
        check(Unit::All, &ldt("2018-01-02T10:00:00.1"), &ldt("2018-01-01T10:00:00.2"), "PT-23H-59M-59.9S");
        let dt = |s| v("datetime", s);
        let (a, b) = (dt("2017-10-28T23:00+02:00[Europe/Stockholm]"), dt("2017-10-29T04:00+01:00[Europe/Stockholm]"));
        check(Unit::All, &a, &b, "PT6H");
        check(Unit::All, &b, &a, "PT-6H");
    }

    #[test]
    fn mixed_types_from_the_tck() {
        let lhs = [
            v("date", "1984-10-11"),
            v("localtime", "14:30"),
            v("time", "14:30"),
            v("localdatetime", "2015-07-21T21:40:32.142"),
            v("datetime", "2014-07-21T21:40:36.143+0200"),
        ];
        let rhs = [
            v("date", "2015-06-24"),
            v("localdatetime", "2016-07-21T21:45:22.142"),
            v("datetime", "2015-07-21T21:40:32.142+0100"),
            v("localtime", "16:30"),
            v("time", "16:30+0100"),
        ];
        let expected = [
            ["P30Y8M13D", "P31Y9M10DT21H45M22.142S", "P30Y9M10DT21H40M32.142S", "PT16H30M", "PT16H30M"],
            ["PT-14H-30M", "PT7H15M22.142S", "PT7H10M32.142S", "PT2H", "PT2H"],
            ["PT-14H-30M", "PT7H15M22.142S", "PT6H10M32.142S", "PT2H", "PT1H"],
            ["P-27DT-21H-40M-32.142S", "P1YT4M50S", "PT0S", "PT-5H-10M-32.142S", "PT-5H-10M-32.142S"],
            ["P11M2DT2H19M23.857S", "P2YT4M45.999S", "P1YT59M55.999S", "PT-5H-10M-36.143S", "PT-4H-10M-36.143S"],
        ];
        let months = [
            ["P30Y8M", "P31Y9M", "P30Y9M", "PT0S", "PT0S"],
            ["PT0S"; 5],
            ["PT0S"; 5],
            ["PT0S", "P1Y", "PT0S", "PT0S", "PT0S"],
            ["P11M", "P2Y", "P1Y", "PT0S", "PT0S"],
        ];
        let days = [
            ["P11213D", "P11606D", "P11240D", "PT0S", "PT0S"],
            ["PT0S"; 5],
            ["PT0S"; 5],
            ["P-27D", "P366D", "PT0S", "PT0S", "PT0S"],
            ["P337D", "P731D", "P365D", "PT0S", "PT0S"],
        ];
        let seconds = [
            ["PT269112H", "PT278565H45M22.142S", "PT269781H40M32.142S", "PT16H30M", "PT16H30M"],
            ["PT-14H-30M", "PT7H15M22.142S", "PT7H10M32.142S", "PT2H", "PT2H"],
            ["PT-14H-30M", "PT7H15M22.142S", "PT6H10M32.142S", "PT2H", "PT1H"],
            ["PT-669H-40M-32.142S", "PT8784H4M50S", "PT0S", "PT-5H-10M-32.142S", "PT-5H-10M-32.142S"],
            ["PT8090H19M23.857S", "PT17544H4M45.999S", "PT8760H59M55.999S", "PT-5H-10M-36.143S", "PT-4H-10M-36.143S"],
        ];
        for (i, a) in lhs.iter().enumerate() {
            for (j, b) in rhs.iter().enumerate() {
                check(Unit::All, a, b, expected[i][j]);
                check(Unit::Months, a, b, months[i][j]);
                check(Unit::Days, a, b, days[i][j]);
                check(Unit::Seconds, a, b, seconds[i][j]);
            }
        }
    }

    #[test]
    fn negative_months_and_large_spans() {
        check(Unit::Months, &v("date", "2018-03-11"), &v("date", "2016-06-24"), "P-1Y-8M");
        check(Unit::Months, &v("date", "2018-07-21"), &v("datetime", "2016-07-21T21:40:32.142+0100"), "P-1Y-11M");
        check(Unit::Months, &v("localdatetime", "2018-07-21T21:40:32.142"), &v("date", "2016-07-21"), "P-2Y");
        check(
            Unit::Months,
            &v("datetime", "2018-07-21T21:40:36.143+0500"),
            &v("datetime", "1984-07-21T22:40:36.143+0200"),
            "P-33Y-11M",
        );
        check(Unit::All, &v("date", "-999999999-01-01"), &v("date", "+999999999-12-31"), "P1999999998Y11M30D");
        check(
            Unit::Seconds,
            &v("localdatetime", "-999999999-01-01"),
            &v("localdatetime", "+999999999-12-31T23:59:59"),
            "PT17531639991215H59M59S",
        );
        check(
            Unit::Seconds,
            &v("localdatetime", "2014-07-21T21:40:36.143"),
            &v("localdatetime", "2014-07-21T21:40:36.142"),
            "PT-0.001S",
        );
    }

    #[test]
    fn sub_second_signs() {
        for (a, b, expected) in [
            ("12:34:54.7", "12:34:54.3", "PT-0.4S"),
            ("12:34:54.3", "12:34:54.7", "PT0.4S"),
            ("12:34:54.7", "12:34:55.3", "PT0.6S"),
            ("12:34:54.7", "12:44:55.3", "PT10M0.6S"),
            ("12:44:54.7", "12:34:55.3", "PT-9M-59.4S"),
            ("12:34:56", "12:34:55.7", "PT-0.3S"),
            ("12:34:56", "12:44:55.7", "PT9M59.7S"),
            ("12:44:56", "12:34:55.7", "PT-10M-0.3S"),
            ("12:34:56.3", "12:34:54.7", "PT-1.6S"),
            ("12:34:54.7", "12:34:56.3", "PT1.6S"),
        ] {
            check(Unit::Seconds, &v("localtime", a), &v("localtime", b), expected);
        }
    }

    #[test]
    fn nulls_and_wrong_types() {
        assert!(between(Unit::All, &Value::Null, &Value::Null).unwrap().is_null());
        assert!(between(Unit::All, &Value::Int(1), &v("date", "2015-06-24")).is_err());
    }
}
