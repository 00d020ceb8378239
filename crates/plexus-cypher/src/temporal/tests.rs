//! End-to-end checks through the public interface, with examples from the openCypher TCK's temporal features,
//! and property tests that every type's string form parses back to the same value.

use std::sync::Arc;

use plexus_storage::value::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use proptest::prelude::*;

use super::*;
use crate::value::Map;

const CLOCK: Clock = Clock { seconds: 1_500_000_000, nanos: 123_456_789 };

/// Reads a map literal as the TCK writes them: `{year: 1984, days: 1.5, timezone: '+01:00', date: other}`, where
/// bare words name values in `vars`.
fn lit(text: &str, vars: &[(&str, &Value)]) -> Value {
    let inner = text.trim().strip_prefix('{').and_then(|t| t.strip_suffix('}')).expect("a map literal");
    let mut map = Map::new();
    for entry in inner.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once(':').expect("key: value");
        let value = value.trim();
        let v = if let Some(s) = value.strip_prefix('\'') {
            Value::from(s.strip_suffix('\'').expect("closing quote"))
        } else if let Ok(i) = value.parse::<i64>() {
            Value::Int(i)
        } else if let Ok(f) = value.parse::<f64>() {
            Value::Float(f)
        } else {
            vars.iter().find(|(n, _)| *n == value).map(|(_, v)| (*v).clone()).expect("a known variable")
        };
        map.insert(Arc::from(key.trim()), v);
    }
    Value::map(map)
}

fn call(name: &str, args: &[Value]) -> Result<Value> {
    call_function(name, args, &CLOCK).expect("a temporal function")
}

fn show(v: &Value) -> String {
    to_tck_string(v).expect("a temporal value")
}

/// `name(map)` printed.
fn from_map(name: &str, map: &str, vars: &[(&str, &Value)]) -> String {
    show(&call(name, &[lit(map, vars)]).unwrap_or_else(|e| panic!("{name}({map}): {e}")))
}

fn parsed(name: &str, text: &str) -> Value {
    call(name, &[Value::from(text)]).unwrap_or_else(|e| panic!("{name}('{text}'): {e}"))
}

#[test]
fn week_dates_from_maps() {
    for (map, expected) in [
        ("{year: 1816, week: 1}", "1816-01-01"),
        ("{year: 1816, week: 52}", "1816-12-23"),
        ("{year: 1817, week: 1}", "1816-12-30"),
        ("{year: 1817, week: 10}", "1817-03-03"),
        ("{year: 1818, week: 53}", "1818-12-28"),
        ("{year: 1819, week: 52}", "1819-12-27"),
        ("{dayOfWeek: 2, year: 1817, week: 1}", "1816-12-31"),
    ] {
        assert_eq!(from_map("date", map, &[]), expected);
        assert_eq!(from_map("localdatetime", map, &[]), format!("{expected}T00:00"));
        assert_eq!(from_map("datetime", map, &[]), format!("{expected}T00:00Z"));
    }
    let d1 = parsed("date", "1816-12-30");
    let d2 = parsed("date", "1816-12-31");
    assert_eq!(from_map("date", "{date: d, week: 2, dayOfWeek: 3}", &[("d", &d1)]), "1817-01-08");
    assert_eq!(from_map("date", "{date: d, week: 2}", &[("d", &d2)]), "1817-01-07");
    assert_eq!(from_map("date", "{date: d, year: 1817, week: 2}", &[("d", &d2)]), "1817-01-07");
}

#[test]
fn instants_from_maps() {
    for (map, expected) in [
        ("{year: 1984, month: 10, day: 11}", "1984-10-11"),
        ("{year: 1984, month: 10}", "1984-10-01"),
        ("{year: 1984, week: 10, dayOfWeek: 3}", "1984-03-07"),
        ("{year: 1984}", "1984-01-01"),
        ("{year: 1984, ordinalDay: 202}", "1984-07-20"),
        ("{year: 1984, quarter: 3, dayOfQuarter: 45}", "1984-08-14"),
        ("{year: 1984, quarter: 3}", "1984-07-01"),
    ] {
        assert_eq!(from_map("date", map, &[]), expected);
    }
    let time = "hour: 12, minute: 31, second: 14";
    for (fields, expected) in [
        ("nanosecond: 789, millisecond: 123, microsecond: 456", "12:31:14.123456789"),
        ("nanosecond: 645876123", "12:31:14.645876123"),
        ("nanosecond: 3", "12:31:14.000000003"),
        ("microsecond: 645876", "12:31:14.645876"),
        ("millisecond: 645", "12:31:14.645"),
    ] {
        assert_eq!(from_map("localtime", &format!("{{{time}, {fields}}}"), &[]), expected);
        assert_eq!(from_map("time", &format!("{{{time}, {fields}}}"), &[]), format!("{expected}Z"));
        let with_zone = format!("{{{time}, {fields}, timezone: '+01:00'}}");
        assert_eq!(from_map("time", &with_zone, &[]), format!("{expected}+01:00"));
    }
    assert_eq!(from_map("localtime", "{hour: 12, minute: 31}", &[]), "12:31");
    assert_eq!(from_map("time", "{hour: 12}", &[]), "12:00Z");
    assert_eq!(
        from_map(
            "localdatetime",
            "{year: 1984, week: 10, dayOfWeek: 3, hour: 12, minute: 31, second: 14, millisecond: 645}",
            &[]
        ),
        "1984-03-07T12:31:14.645"
    );
    assert_eq!(
        from_map("localdatetime", "{year: 1984, quarter: 3, dayOfQuarter: 45, hour: 12}", &[]),
        "1984-08-14T12:00"
    );
    assert_eq!(
        from_map("datetime", "{year: 1984, ordinalDay: 202, hour: 12, minute: 31, timezone: '+01:00'}", &[]),
        "1984-07-20T12:31+01:00"
    );
    for (map, expected) in [
        (
            "{year: 1984, month: 10, day: 11, hour: 12, minute: 31, second: 14, nanosecond: 645876123, timezone: 'Europe/Stockholm'}",
            "1984-10-11T12:31:14.645876123+01:00[Europe/Stockholm]",
        ),
        ("{year: 1984, ordinalDay: 202, timezone: 'Europe/Stockholm'}", "1984-07-20T00:00+02:00[Europe/Stockholm]"),
        ("{year: 1984, quarter: 3, dayOfQuarter: 45, hour: 12, timezone: 'Europe/Stockholm'}", "1984-08-14T12:00+02:00[Europe/Stockholm]"),
        ("{year: 1984, timezone: 'Europe/Stockholm'}", "1984-01-01T00:00+01:00[Europe/Stockholm]"),
        ("{year: 1984, month: 10, day: 11, hour: 12, minute: 34, second: 56, timezone: '+02:05:59'}", "1984-10-11T12:34:56+02:05:59"),
    ] {
        assert_eq!(from_map("datetime", map, &[]), expected);
    }
    assert_eq!(from_map("time", "{hour: 12, minute: 34, second: 56, timezone: '+02:05:00'}", &[]), "12:34:56+02:05");
    assert_eq!(from_map("time", "{hour: 12, minute: 34, second: 56, timezone: '-02:05:07'}", &[]), "12:34:56-02:05:07");
}

#[test]
fn epochs() {
    let d1 = call("datetime.fromepoch", &[Value::Int(416779), Value::Int(999999999)]).unwrap();
    assert_eq!(show(&d1), "1970-01-05T19:46:19.999999999Z");
    let d2 = call("datetime.fromepochmillis", &[Value::Int(237821673987)]).unwrap();
    assert_eq!(show(&d2), "1977-07-15T13:34:33.987Z");
    assert_eq!(
        from_map("datetime", "{epochSeconds: 416779, nanosecond: 999999999}", &[]),
        "1970-01-05T19:46:19.999999999Z"
    );
    assert_eq!(
        from_map("datetime", "{epochMillis: 237821673987, timezone: '+01:00'}", &[]),
        "1977-07-15T14:34:33.987+01:00"
    );
    assert!(call("datetime.fromepoch", &[Value::Int(i64::MAX), Value::Int(0)]).is_err());
    assert!(call("datetime.fromepochmillis", &[Value::Null]).unwrap().is_null());
}

#[test]
fn strings_from_the_tck() {
    for (name, text, expected) in [
        ("date", "2015-W30-2", "2015-07-21"),
        ("date", "2015202", "2015-07-21"),
        ("localtime", "214032.142", "21:40:32.142"),
        ("localtime", "21", "21:00"),
        ("time", "21:40:32.142+0100", "21:40:32.142+01:00"),
        ("time", "2140-00:00", "21:40Z"),
        ("time", "2140-02", "21:40-02:00"),
        ("localdatetime", "2015-W30-2T214032.142", "2015-07-21T21:40:32.142"),
        ("localdatetime", "2015T214032", "2015-01-01T21:40:32"),
        ("localdatetime", "2015202T21", "2015-07-21T21:00"),
        ("datetime", "2015-202T21:40:32+01:00", "2015-07-21T21:40:32+01:00"),
        ("datetime", "2015-W30T2140-00:00", "2015-07-20T21:40Z"),
        ("datetime", "2015-07-21T21:40:32.142+0845[Australia/Eucla]", "2015-07-21T21:40:32.142+08:45[Australia/Eucla]"),
        ("datetime", "2015-07-21T21:40:32.142-04[America/New_York]", "2015-07-21T21:40:32.142-04:00[America/New_York]"),
        ("datetime", "2015-07-21T21:40:32.142[Europe/London]", "2015-07-21T21:40:32.142+01:00[Europe/London]"),
        ("datetime", "1818-07-21T21:40:32.142[Europe/Stockholm]", "1818-07-21T21:40:32.142+00:53:28[Europe/Stockholm]"),
        ("duration", "P5M1.5D", "P5M1DT12H"),
        ("duration", "P2012-02-02T14:37:21.545", "P2012Y2M2DT14H37M21.545S"),
    ] {
        assert_eq!(show(&parsed(name, text)), expected, "{name}('{text}')");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    for (name, arg) in [
        ("date", Value::from("2015-02-30")),
        ("date", Value::from("not a date")),
        ("localtime", Value::from("25:00")),
        ("localdatetime", Value::from("2015-07-21T21:40+01:00")),
        ("datetime", Value::from("2015-07-21T21:40:32+05:00[Europe/Stockholm]")),
        ("date", lit("{year: 1984, month: 13}", &[])),
        ("date", lit("{month: 1}", &[])),
        ("date", lit("{year: 1984, day: 3}", &[])),
        ("date", lit("{year: 1984, month: 1, week: 3}", &[])),
        ("date", lit("{year: 1000000000}", &[])),
        ("date", lit("{year: 1984, hour: 1}", &[])),
        ("date", lit("{}", &[])),
        ("localtime", lit("{minute: 1}", &[])),
        ("localtime", lit("{hour: 1, timezone: '+01:00'}", &[])),
        ("time", lit("{hour: 1, timezone: 'Nowhere/Special'}", &[])),
        ("time", lit("{hour: 1, minute: 2, second: 3, millisecond: 1000}", &[])),
        ("time", lit("{hour: 1, minute: 2, second: 3, millisecond: 1, microsecond: 1000}", &[])),
        ("datetime", lit("{year: 1984, colour: 3}", &[])),
        ("duration", lit("{days: 'one'}", &[])),
        ("date", Value::Int(3)),
    ] {
        let err = call(name, std::slice::from_ref(&arg)).expect_err(&format!("{name}({arg:?})"));
        assert!(
            matches!(
                err.detail,
                "InvalidArgumentValue" | "InvalidArgumentType" | "NumberOutOfRange" | "InvalidTemporalText"
            ),
            "{name}({arg:?}): {err}"
        );
    }
    assert_eq!(call("date", &[Value::Int(3)]).unwrap_err().kind, ErrorKind::TypeError);
    // A text the function cannot read is a SyntaxError, as Neo4j reports it; the same month in a map is not.
    assert_eq!(call("date", &[Value::from("2015-13-01")]).unwrap_err().kind, ErrorKind::SyntaxError);
    assert_eq!(call("date", &[lit("{year: 2015, month: 13}", &[])]).unwrap_err().kind, ErrorKind::ArgumentError);
    assert!(call("date", &[Value::Null, Value::Null]).is_err());
}

#[test]
fn selecting_from_other_values() {
    let date = from_map("date", "{year: 1984, month: 11, day: 11}", &[]);
    let date = parsed("date", &date);
    let ldt = parsed("localdatetime", "1984-11-11T12:31:14.645876123");
    let dt = parsed("datetime", "1984-11-11T12:00+01:00");
    for other in [&date, &ldt, &dt] {
        let vars = [("other", other)];
        assert_eq!(show(&call("date", std::slice::from_ref(other)).unwrap()), "1984-11-11");
        assert_eq!(from_map("date", "{date: other, year: 28}", &vars), "0028-11-11");
        assert_eq!(from_map("date", "{date: other, day: 28}", &vars), "1984-11-28");
        assert_eq!(from_map("date", "{date: other, week: 1}", &vars), "1984-01-08");
        assert_eq!(from_map("date", "{date: other, ordinalDay: 28}", &vars), "1984-01-28");
        assert_eq!(from_map("date", "{date: other, quarter: 3}", &vars), "1984-08-11");
    }
    let t = parsed("time", "12:31:14.645876+01:00");
    let vars = [("other", &t)];
    assert_eq!(from_map("localtime", "{time: other, second: 42}", &vars), "12:31:42.645876");
    assert_eq!(from_map("time", "{time: other, timezone: '+05:00'}", &vars), "16:31:14.645876+05:00");
    assert_eq!(from_map("time", "{time: other, second: 42, timezone: '+05:00'}", &vars), "16:31:42.645876+05:00");
    let lt = parsed("localtime", "12:31:14.645876123");
    assert_eq!(from_map("time", "{time: other, timezone: '+05:00'}", &[("other", &lt)]), "12:31:14.645876123+05:00");
    let sthlm = from_map("datetime", "{year: 1984, month: 10, day: 11, hour: 12, timezone: 'Europe/Stockholm'}", &[]);
    let sthlm = parsed("datetime", &sthlm);
    let vars = [("other", &sthlm)];
    assert_eq!(show(&call("time", std::slice::from_ref(&sthlm)).unwrap()), "12:00+01:00");
    assert_eq!(show(&call("localtime", std::slice::from_ref(&sthlm)).unwrap()), "12:00");
    assert_eq!(from_map("time", "{time: other, second: 42, timezone: '+05:00'}", &vars), "16:00:42+05:00");
    assert_eq!(from_map("datetime", "{datetime: other, timezone: '+05:00'}", &vars), "1984-10-11T16:00+05:00");
    assert_eq!(
        from_map("datetime", "{datetime: other, day: 28, second: 42, timezone: 'Pacific/Honolulu'}", &vars),
        "1984-10-28T01:00:42-10:00[Pacific/Honolulu]"
    );
    assert_eq!(
        from_map("datetime", "{year: 1984, month: 10, day: 11, time: other, second: 42}", &vars),
        "1984-10-11T12:00:42+01:00[Europe/Stockholm]"
    );
    let march = parsed("localdatetime", "1984-03-07T12:31:14.645");
    let both = [("d", &march), ("t", &sthlm)];
    assert_eq!(
        from_map("datetime", "{date: d, time: t, day: 28, second: 42}", &both),
        "1984-03-28T12:00:42+02:00[Europe/Stockholm]"
    );
    assert_eq!(
        from_map("datetime", "{date: d, time: t, day: 28, second: 42, timezone: 'Pacific/Honolulu'}", &both),
        "1984-03-28T00:00:42-10:00[Pacific/Honolulu]"
    );
    let vars = [("other", &march)];
    assert_eq!(
        from_map("datetime", "{datetime: other, day: 28, second: 42, timezone: 'Pacific/Honolulu'}", &vars),
        "1984-03-28T12:31:42.645-10:00[Pacific/Honolulu]"
    );
    assert_eq!(
        from_map("localdatetime", "{date: other, hour: 10, minute: 10, second: 10}", &vars),
        "1984-03-07T10:10:10"
    );
    assert_eq!(
        from_map("localdatetime", "{year: 1984, month: 10, day: 11, time: other, second: 42}", &vars),
        "1984-10-11T12:31:42.645"
    );
    let dtz = parsed("datetime", "1984-10-11T12:00+01:00");
    assert_eq!(
        from_map("datetime", "{date: other, hour: 10, minute: 10, second: 10}", &[("other", &dtz)]),
        "1984-10-11T10:10:10Z"
    );
}

#[test]
fn truncation_from_the_tck() {
    let d = parsed("date", "2017-10-11");
    let dt = parsed("datetime", "1984-10-11T12:31:14.645876123-01:00");
    let ldt = parsed("localdatetime", "1984-01-01T12:31:14.645876123");
    let t = parsed("time", "12:31:14.645876123+01:00");
    let trunc = |f: &str, unit: &str, v: &Value, map: &str| {
        show(&call(&format!("{f}.truncate"), &[Value::from(unit), v.clone(), lit(map, &[])]).unwrap())
    };
    assert_eq!(trunc("date", "millennium", &d, "{day: 2}"), "2000-01-02");
    assert_eq!(trunc("date", "weekYear", &ldt, "{day: 5}"), "1983-01-05");
    assert_eq!(trunc("date", "weekYear", &ldt, "{}"), "1983-01-03");
    assert_eq!(trunc("date", "week", &dt, "{dayOfWeek: 2}"), "1984-10-09");
    assert_eq!(
        trunc("datetime", "millennium", &d, "{timezone: 'Europe/Stockholm'}"),
        "2000-01-01T00:00+01:00[Europe/Stockholm]"
    );
    assert_eq!(
        trunc("datetime", "decade", &dt, "{timezone: 'Europe/Stockholm'}"),
        "1980-01-01T00:00+01:00[Europe/Stockholm]"
    );
    assert_eq!(trunc("datetime", "hour", &dt, "{}"), "1984-10-11T12:00-01:00");
    assert_eq!(trunc("datetime", "day", &d, "{nanosecond: 2}"), "2017-10-11T00:00:00.000000002Z");
    assert_eq!(trunc("datetime", "millisecond", &dt, "{nanosecond: 2}"), "1984-10-11T12:31:14.645000002-01:00");
    assert_eq!(trunc("localdatetime", "microsecond", &dt, "{nanosecond: 2}"), "1984-10-11T12:31:14.645876002");
    assert_eq!(trunc("localtime", "day", &dt, "{nanosecond: 2}"), "00:00:00.000000002");
    assert_eq!(trunc("localtime", "second", &t, "{}"), "12:31:14");
    assert_eq!(trunc("time", "hour", &dt, "{timezone: '+01:00'}"), "12:00+01:00");
    assert_eq!(trunc("time", "day", &ldt, "{}"), "00:00Z");
    assert_eq!(trunc("time", "microsecond", &t, "{}"), "12:31:14.645876+01:00");
    assert!(call("date.truncate", &[Value::from("hour"), d.clone()]).is_err());
    assert!(call("localtime.truncate", &[Value::from("year"), t.clone()]).is_err());
    assert!(call("date.truncate", &[Value::from("fortnight"), d.clone()]).is_err());
    assert!(call("date.truncate", &[Value::from("year"), Value::Null]).unwrap().is_null());
}

#[test]
fn clock_and_nulls() {
    assert_eq!(show(&call("datetime", &[]).unwrap()), "2017-07-14T02:40:00.123456789Z");
    assert_eq!(show(&call("date.statement", &[]).unwrap()), "2017-07-14");
    assert_eq!(show(&call("localtime.transaction", &[]).unwrap()), "02:40:00.123456789");
    assert_eq!(show(&call("time", &[lit("{timezone: '+01:00'}", &[])]).unwrap()), "03:40:00.123456789+01:00");
    assert_eq!(
        show(&call("datetime", &[lit("{timezone: 'Europe/Stockholm'}", &[])]).unwrap()),
        "2017-07-14T04:40:00.123456789+02:00[Europe/Stockholm]"
    );
    assert_eq!(
        show(&call("localdatetime.statement", &[Value::from("Pacific/Honolulu")]).unwrap()),
        "2017-07-13T16:40:00.123456789"
    );
    assert!(matches!(call("date.realtime", &[]).unwrap(), Value::Date(_)));
    for f in ["date", "localtime", "time", "localdatetime", "datetime", "duration"] {
        for suffix in ["", ".transaction", ".statement", ".realtime"] {
            if f == "duration" && !suffix.is_empty() {
                continue;
            }
            assert!(call(&format!("{f}{suffix}"), &[Value::Null]).unwrap().is_null(), "{f}{suffix}");
        }
    }
    for f in ["duration.between", "duration.inmonths", "duration.indays", "duration.inseconds"] {
        assert!(call(f, &[Value::Null, Value::Null]).unwrap().is_null());
    }
    for v in ["localtime", "time", "date", "localdatetime", "datetime"] {
        let x = call(v, &[]).unwrap();
        assert_eq!(show(&call("duration.inseconds", &[x.clone(), x]).unwrap()), "PT0S");
    }
    assert!(call_function("tostring", &[], &CLOCK).is_none());
    assert!(call_function("date.unknown", &[], &CLOCK).is_none());
}

#[test]
fn interface_falls_through_for_other_values() {
    assert!(property(&Value::Int(1), "year").is_none());
    assert!(arithmetic(ArithOp::Add, &Value::Int(1), &Value::Int(2)).is_none());
    assert!(arithmetic(ArithOp::Add, &Value::from("a"), &parsed("date", "2020-01-01")).is_none());
    assert!(compare(&Value::Int(1), &Value::Int(2)).is_none());
    assert!(to_string(&Value::Int(1)).is_none());
    let d = parsed("date", "1984-10-11");
    assert_eq!(property(&d, "year").unwrap().unwrap().as_int(), Some(1984));
    let dur = parsed("duration", "P1D");
    let sum = arithmetic(ArithOp::Add, &d, &dur).unwrap().unwrap();
    assert_eq!(show(&sum), "1984-10-12");
    assert_eq!(show(&arithmetic(ArithOp::Mul, &Value::Int(2), &dur).unwrap().unwrap()), "P2D");
}

/// Days within the supported range.
fn any_days() -> impl Strategy<Value = i64> {
    civil::min_days()..=civil::max_days()
}

fn any_nanos_of_day() -> impl Strategy<Value = i64> {
    prop_oneof![
        0..civil::NANOS_PER_DAY,
        (0..86_400i64).prop_map(|s| s * civil::NANOS_PER_SECOND),
        (0..86_400_000i64).prop_map(|ms| ms * 1_000_000),
    ]
}

fn any_offset() -> impl Strategy<Value = i32> {
    prop_oneof![Just(0), (-18 * 3600..=18 * 3600), (-18 * 4..=18 * 4).prop_map(|q| q * 900)]
}

fn round_trip(name: &str, v: Value) -> std::result::Result<(), TestCaseError> {
    let text = show(&v);
    let back = call(name, &[Value::from(text.as_str())]).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
    prop_assert_eq!(format!("{back:?}"), format!("{v:?}"), "{}", text);
    Ok(())
}

proptest! {
    #[test]
    fn dates_round_trip(days in any_days()) {
        round_trip("date", Value::Date(Date { days }))?;
    }

    #[test]
    fn local_times_round_trip(nanos in any_nanos_of_day()) {
        round_trip("localtime", Value::LocalTime(LocalTime { nanos }))?;
    }

    #[test]
    fn times_round_trip(nanos in any_nanos_of_day(), offset in any_offset()) {
        round_trip("time", Value::Time(Time { nanos, offset_seconds: offset }))?;
    }

    #[test]
    fn local_datetimes_round_trip(days in any_days(), nanos in any_nanos_of_day()) {
        let (seconds, nanos) = instant::join_local(days, nanos);
        round_trip("localdatetime", Value::LocalDateTime(LocalDateTime { seconds, nanos }))?;
    }

    #[test]
    fn offset_datetimes_round_trip(days in any_days(), nanos in any_nanos_of_day(), offset in any_offset()) {
        let (local, nanos) = instant::join_local(days, nanos);
        let v = Value::DateTime(Box::new(DateTime { seconds: local - offset as i64, nanos, offset_seconds: offset, zone: None }));
        round_trip("datetime", v)?;
    }

    #[test]
    fn zoned_datetimes_round_trip(
        seconds in -20_000_000_000i64..20_000_000_000,
        nanos in 0u32..1_000_000_000,
        zone in prop::sample::select(vec!["Europe/Stockholm", "America/New_York", "Australia/Eucla", "Asia/Kolkata", "UTC"]),
    ) {
        let v = instant::datetime_at(seconds, nanos, &zone::Zone::parse(zone).unwrap()).unwrap();
        round_trip("datetime", v)?;
    }

    #[test]
    fn durations_round_trip(
        months in prop_oneof![Just(0i64), -1_000_000_000_000i64..1_000_000_000_000, -10_000i64..10_000],
        days in prop_oneof![Just(0i64), -10_000_000_000_000i64..10_000_000_000_000, -10_000i64..10_000],
        seconds in prop_oneof![Just(0i64), -5_000_000_000_000_000_000i64..5_000_000_000_000_000_000, -1_000_000i64..1_000_000],
        nanos in prop_oneof![Just(0i32), 0..1_000_000_000i32],
    ) {
        // Durations whose average length in seconds fits in 64 bits (the others are refused, as in Neo4j).
        let average = months as i128 * 2_629_746 + days as i128 * 86_400 + seconds as i128;
        prop_assume!(i64::try_from(average).is_ok());
        round_trip("duration", Value::duration(Duration { months, days, seconds, nanos }))?;
    }

    #[test]
    fn foreign_values_never_panic(
        a in any::<i64>(),
        b in any::<i64>(),
        n in any::<u32>(),
        o in any::<i32>(),
        kind in 0..6usize,
        key in prop::sample::select(vec!["year", "week", "weekYear", "dayOfQuarter", "hour", "timezone", "epochMillis", "nanoseconds", "minutesOfHour"]),
    ) {
        let v = match kind {
            0 => Value::Date(Date { days: a }),
            1 => Value::LocalTime(LocalTime { nanos: a }),
            2 => Value::Time(Time { nanos: a, offset_seconds: o }),
            3 => Value::LocalDateTime(LocalDateTime { seconds: a, nanos: n }),
            4 => Value::DateTime(Box::new(DateTime { seconds: a, nanos: n, offset_seconds: o, zone: None })),
            _ => Value::duration(Duration { months: a, days: b, seconds: a, nanos: o }),
        };
        let dur = Value::duration(Duration { months: b, days: b, seconds: b, nanos: 0 });
        let _ = to_string(&v);
        let _ = property(&v, key);
        let _ = compare(&v, &v);
        for op in [ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div] {
            let _ = arithmetic(op, &v, &dur);
            let _ = arithmetic(op, &v, &Value::Float(b as f64));
        }
        for f in ["date", "localtime", "time", "localdatetime", "datetime", "duration.between"] {
            let _ = call_function(f, std::slice::from_ref(&v), &CLOCK);
            let _ = call_function(&format!("{f}.truncate"), &[Value::from("week"), v.clone()], &CLOCK);
        }
        let _ = call_function("duration.between", &[v.clone(), call("date", &[]).unwrap()], &CLOCK);
    }

    #[test]
    fn parsers_never_panic(text in "[-+0-9:.,TWQZPYMDHS\\[\\]A-Za-z/]{0,40}") {
        for name in ["date", "localtime", "time", "localdatetime", "datetime", "duration"] {
            let _ = call(name, &[Value::from(text.as_str())]);
        }
    }
}
