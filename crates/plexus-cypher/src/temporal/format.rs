//! String forms of temporal values: as `toString` returns them (and Neo4j prints them), and as the openCypher
//! TCK writes them.
//!
//! Dates are `YYYY-MM-DD` (years beyond four digits signed: `+10000-01-01`, `-0001-01-01`); times `HH:MM:SS` with
//! the fraction's significant digits (`12:00:00`, `12:00:00.5`, `.000000003`), as Neo4j's `toString` gives them;
//! offsets `Z` or `+HH:MM[:SS]`; named zones follow in brackets. The TCK's notation, Java's `toString`, leaves out
//! seconds that are zero along with their fraction and writes the fraction in groups of three digits (`12:00`,
//! `12:00:00.500`). Durations are `P…YMDTHMS` with components that are zero left out, signs on each component,
//! and seconds without trailing zeros (`PT-1M-0.001S`); the zero duration is `PT0S`.

use std::fmt::Write;

use plexus_storage::value::{DateTime, Duration, LocalDateTime, Time};

use super::civil::{self, NANOS_PER_SECOND};
use super::duration;
use crate::value::Value;

/// How the time of day is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Seconds always, the fraction's significant digits: Neo4j's `toString`.
    Neo4j,
    /// Seconds only when they or a fraction are non-zero, the fraction in groups of three: the TCK's notation.
    Tck,
}

/// The string `toString` gives for a temporal value (`None` for any other value).
pub fn to_string(value: &Value) -> Option<String> {
    styled(value, Style::Neo4j)
}

/// A temporal value as the openCypher TCK writes it in its expected results.
pub fn to_tck_string(value: &Value) -> Option<String> {
    styled(value, Style::Tck)
}

fn styled(value: &Value, style: Style) -> Option<String> {
    let mut s = String::new();
    match value {
        Value::Date(d) => date(&mut s, d.days),
        Value::LocalTime(t) => time_of_day(&mut s, t.nanos, style),
        Value::Time(t) => time(&mut s, t, style),
        Value::LocalDateTime(t) => local_datetime(&mut s, t, style),
        Value::DateTime(t) => datetime(&mut s, t, style),
        Value::Duration(d) => return Some(duration(d)),
        _ => return None,
    }
    Some(s)
}

pub fn date(s: &mut String, days: i64) {
    let (y, m, d) = civil::civil_from_days(days);
    if y > 9999 {
        let _ = write!(s, "+{y}");
    } else if y < 0 {
        let _ = write!(s, "-{:04}", -y);
    } else {
        let _ = write!(s, "{y:04}");
    }
    let _ = write!(s, "-{m:02}-{d:02}");
}

fn time_of_day(s: &mut String, nanos: i64, style: Style) {
    let secs = nanos / NANOS_PER_SECOND;
    let frac = nanos % NANOS_PER_SECOND;
    let _ = write!(s, "{:02}:{:02}", secs / 3600, secs / 60 % 60);
    if style == Style::Tck && secs % 60 == 0 && frac == 0 {
        return;
    }
    let _ = write!(s, ":{:02}", secs % 60);
    if frac == 0 {
        return;
    }
    match style {
        Style::Neo4j => {
            let digits = format!("{frac:09}");
            let _ = write!(s, ".{}", digits.trim_end_matches('0'));
        }
        Style::Tck if frac % 1_000_000 == 0 => {
            let _ = write!(s, ".{:03}", frac / 1_000_000);
        }
        Style::Tck if frac % 1_000 == 0 => {
            let _ = write!(s, ".{:06}", frac / 1_000);
        }
        Style::Tck => {
            let _ = write!(s, ".{frac:09}");
        }
    }
}

pub fn offset(s: &mut String, offset: i32) {
    if offset == 0 {
        s.push('Z');
        return;
    }
    let sign = if offset < 0 { '-' } else { '+' };
    let o = offset.unsigned_abs();
    let _ = write!(s, "{sign}{:02}:{:02}", o / 3600, o / 60 % 60);
    if !o.is_multiple_of(60) {
        let _ = write!(s, ":{:02}", o % 60);
    }
}

pub fn offset_string(o: i32) -> String {
    let mut s = String::new();
    offset(&mut s, o);
    s
}

fn time(s: &mut String, t: &Time, style: Style) {
    time_of_day(s, t.nanos, style);
    offset(s, t.offset_seconds);
}

fn local_parts(s: &mut String, seconds: i64, nanos: u32, style: Style) {
    let (days, secs) = civil::split_seconds(seconds);
    date(s, days);
    s.push('T');
    time_of_day(s, secs * NANOS_PER_SECOND + nanos as i64, style);
}

fn local_datetime(s: &mut String, t: &LocalDateTime, style: Style) {
    local_parts(s, t.seconds, t.nanos, style);
}

fn datetime(s: &mut String, t: &DateTime, style: Style) {
    local_parts(s, t.seconds.saturating_add(t.offset_seconds as i64), t.nanos, style);
    offset(s, t.offset_seconds);
    if let Some(zone) = &t.zone {
        let _ = write!(s, "[{zone}]");
    }
}

pub fn duration(d: &Duration) -> String {
    let d = duration::canonical(d);
    let mut s = String::from("P");
    let part = |s: &mut String, v: i64, unit: char| {
        if v != 0 {
            let _ = write!(s, "{v}{unit}");
        }
    };
    part(&mut s, d.months / 12, 'Y');
    part(&mut s, d.months % 12, 'M');
    part(&mut s, d.days, 'D');
    if d.seconds != 0 || d.nanos != 0 {
        s.push('T');
        // Signed total, split towards zero: -61.5 s is -1M -1.5S.
        let total = duration::total_nanos(&d);
        let secs = (total / NANOS_PER_SECOND as i128) as i64;
        let frac = (total % NANOS_PER_SECOND as i128) as i64;
        part(&mut s, secs / 3600, 'H');
        part(&mut s, secs % 3600 / 60, 'M');
        let sec = secs % 60;
        if sec != 0 || frac != 0 {
            if sec == 0 && frac < 0 {
                s.push('-');
            }
            let _ = write!(s, "{sec}");
            if frac != 0 {
                let digits = format!("{:09}", frac.unsigned_abs());
                let _ = write!(s, ".{}", digits.trim_end_matches('0'));
            }
            s.push('S');
        }
    }
    if s.len() == 1 {
        s.push_str("T0S");
    }
    s
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use plexus_storage::value::{Date, LocalTime};

    use super::*;
    use crate::temporal::civil::days_from_civil;

    fn ldt(y: i64, mo: u32, d: u32, h: i64, mi: i64, s: i64, n: u32) -> LocalDateTime {
        LocalDateTime { seconds: days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s, nanos: n }
    }

    #[test]
    fn instants() {
        let show = |v: Value| to_string(&v).unwrap();
        assert_eq!(show(Value::Date(Date { days: days_from_civil(1984, 10, 11) })), "1984-10-11");
        assert_eq!(show(Value::Date(Date { days: days_from_civil(28, 11, 11) })), "0028-11-11");
        assert_eq!(show(Value::Date(Date { days: days_from_civil(-999_999_999, 1, 1) })), "-999999999-01-01");
        assert_eq!(show(Value::Date(Date { days: days_from_civil(12_345, 1, 1) })), "+12345-01-01");
        assert_eq!(show(Value::Date(Date { days: days_from_civil(-1, 1, 1) })), "-0001-01-01");
        let t = |h: i64, m: i64, s: i64, n: i64| ((h * 60 + m) * 60 + s) * NANOS_PER_SECOND + n;
        assert_eq!(show(Value::LocalTime(LocalTime { nanos: t(12, 31, 14, 645_876_123) })), "12:31:14.645876123");
        assert_eq!(show(Value::LocalTime(LocalTime { nanos: t(12, 31, 14, 645_876_000) })), "12:31:14.645876");
        assert_eq!(show(Value::LocalTime(LocalTime { nanos: t(12, 31, 14, 645_000_000) })), "12:31:14.645");
        assert_eq!(show(Value::LocalTime(LocalTime { nanos: t(12, 0, 0, 0) })), "12:00:00");
        assert_eq!(show(Value::LocalTime(LocalTime { nanos: t(12, 0, 0, 500_000_000) })), "12:00:00.5");
        assert_eq!(show(Value::LocalTime(LocalTime { nanos: t(12, 0, 1, 20_000) })), "12:00:01.00002");
        let tck = |v: Value| to_tck_string(&v).unwrap();
        assert_eq!(tck(Value::LocalTime(LocalTime { nanos: t(12, 0, 0, 0) })), "12:00");
        assert_eq!(tck(Value::LocalTime(LocalTime { nanos: t(12, 0, 0, 500_000_000) })), "12:00:00.500");
        assert_eq!(tck(Value::LocalTime(LocalTime { nanos: t(12, 0, 1, 20_000) })), "12:00:01.000020");
        assert_eq!(show(Value::LocalTime(LocalTime { nanos: t(0, 0, 0, 2) })), "00:00:00.000000002");
        assert_eq!(show(Value::Time(Time { nanos: t(12, 31, 14, 0), offset_seconds: 0 })), "12:31:14Z");
        assert_eq!(show(Value::Time(Time { nanos: t(12, 34, 56, 0), offset_seconds: -7507 })), "12:34:56-02:05:07");
        assert_eq!(
            show(Value::LocalDateTime(ldt(1984, 10, 11, 12, 31, 14, 645_876_123))),
            "1984-10-11T12:31:14.645876123"
        );
        assert_eq!(show(Value::LocalDateTime(ldt(1912, 1, 1, 0, 0, 0, 0))), "1912-01-01T00:00:00");
        let local = ldt(2015, 7, 21, 21, 40, 32, 142_000_000);
        let dt = DateTime {
            seconds: local.seconds - 7200,
            nanos: local.nanos,
            offset_seconds: 7200,
            zone: Some(Arc::from("Europe/Stockholm")),
        };
        assert_eq!(show(Value::DateTime(Box::new(dt))), "2015-07-21T21:40:32.142+02:00[Europe/Stockholm]");
        let local = ldt(1818, 7, 21, 21, 40, 32, 142_000_000);
        let dt = DateTime { seconds: local.seconds - 3208, nanos: local.nanos, offset_seconds: 3208, zone: None };
        assert_eq!(show(Value::DateTime(Box::new(dt))), "1818-07-21T21:40:32.142+00:53:28");
    }

    #[test]
    fn durations() {
        let d = |months, days, seconds, nanos| duration(&Duration { months, days, seconds, nanos });
        assert_eq!(d(0, 0, 0, 0), "PT0S");
        assert_eq!(d(0, 0, 73, 500_000_000), "PT1M13.5S");
        assert_eq!(d(14, 10, 12 * 3600 + 45 * 60 + 30, 250_000_000), "P1Y2M10DT12H45M30.25S");
        assert_eq!(d(0, 0, -86_400, 100_000_000), "PT-23H-59M-59.9S");
        assert_eq!(d(-20, 0, 0, 0), "P-1Y-8M");
        assert_eq!(d(0, 0, -1, 999_000_000), "PT-0.001S");
        assert_eq!(d(0, 0, -61, 999_000_000), "PT-1M-0.001S");
        assert_eq!(d(0, 0, 17_531_639_991_215 * 3600 + 59 * 60 + 59, 0), "PT17531639991215H59M59S");
        // Not normalised on input: formatted as its normal form.
        assert_eq!(d(0, 0, 1, -1), "PT0.999999999S");
    }
}
