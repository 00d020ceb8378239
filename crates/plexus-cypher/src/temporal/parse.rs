//! ISO 8601 text: dates (calendar `2015-07-21`/`20150721`, `2015-07`, `2015`, week `2015-W30-2`/`2015W302`,
//! ordinal `2015-202`/`2015202`, quarter `2015-Q3-45`), times (`21:40:32.142`, `214032`, `21`), offsets (`Z`,
//! `+01:00`, `-0130`, `+02`, `+02:05:59`), date-times joined by `T` with an optional `[Zone/Name]`, and durations
//! (`P1Y2M3W4DT5H6M7.5S` with signed or fractional components, and `P2012-02-02T14:37:21.545`).
//!
//! Years are four digits, or a sign and one to nine digits. Every entry point takes any text and returns an error
//! rather than panicking.

use plexus_storage::value::Duration;

use super::civil::{self, NANOS_PER_SECOND};
use super::duration::Builder;
use super::zone::{Zone, MAX_OFFSET_SECONDS};
use super::{invalid, out_of_range};
use crate::error::Result;

/// A parsed date-time string: the local date and time, and the offset and zone written after it.
#[derive(Clone, Debug, PartialEq)]
pub struct DateTimeText {
    pub days: i64,
    pub nanos: i64,
    pub offset: Option<i32>,
    pub zone: Option<Zone>,
}

/// A small cursor over ASCII text.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Cursor { s: s.as_bytes(), i: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    /// How many ASCII digits follow.
    fn digit_run(&self) -> usize {
        self.s[self.i..].iter().take_while(|c| c.is_ascii_digit()).count()
    }

    /// Exactly `n` digits as a number.
    fn digits(&mut self, n: usize) -> Option<i64> {
        if self.digit_run() < n {
            return None;
        }
        let v = self.s[self.i..self.i + n].iter().fold(0i64, |acc, c| acc * 10 + (c - b'0') as i64);
        self.i += n;
        Some(v)
    }
}

fn bad(kind: &str, text: &str) -> crate::error::CypherError {
    invalid(format!("text cannot be parsed to a {kind}: '{text}'"))
}

/// Parses a date.
pub fn date(text: &str) -> Result<i64> {
    let mut c = Cursor::new(text);
    let days = date_at(&mut c).ok_or_else(|| bad("date", text))??;
    if !c.done() {
        return Err(bad("date", text));
    }
    Ok(days)
}

/// Parses a date at the cursor. `None`: not a date; `Some(Err)`: a date with fields out of range.
fn date_at(c: &mut Cursor) -> Option<Result<i64>> {
    let year = match c.peek()? {
        sign @ (b'+' | b'-') => {
            c.i += 1;
            let n = c.digit_run();
            if !(1..=9).contains(&n) {
                return None;
            }
            let y = c.digits(n)?;
            if sign == b'-' {
                -y
            } else {
                y
            }
        }
        _ => c.digits(4)?,
    };
    let at_end = |c: &Cursor| c.done() || c.peek() == Some(b'T');
    if at_end(c) {
        return Some(calendar(year, 1, 1));
    }
    let dash = c.eat(b'-');
    if c.eat(b'W') {
        let week = c.digits(2)?;
        let mut dow = 1;
        if !at_end(c) {
            let dash2 = c.eat(b'-');
            if dash2 != dash {
                return None;
            }
            dow = c.digits(1)?;
        }
        return Some(week_date(year, week, dow));
    }
    if dash && c.eat(b'Q') {
        let quarter = c.digits(1)?;
        let mut day = 1;
        if c.eat(b'-') {
            let n = c.digit_run();
            if !(1..=2).contains(&n) {
                return None;
            }
            day = c.digits(n)?;
        }
        return Some(quarter_date(year, quarter, day));
    }
    let run = c.digit_run();
    if dash {
        if run == 3 {
            let day = c.digits(3)?;
            return Some(ordinal_date(year, day));
        }
        if !(1..=2).contains(&run) {
            return None;
        }
        let month = c.digits(run)?;
        let mut day = 1;
        if c.eat(b'-') {
            let n = c.digit_run();
            if !(1..=2).contains(&n) {
                return None;
            }
            day = c.digits(n)?;
        }
        return Some(calendar(year, month, day));
    }
    match run {
        2 => Some(calendar(year, c.digits(2)?, 1)),
        3 => Some(ordinal_date(year, c.digits(3)?)),
        4 => {
            let month = c.digits(2)?;
            Some(calendar(year, month, c.digits(2)?))
        }
        _ => None,
    }
}

fn check_year(year: i64) -> Result<()> {
    if !(civil::MIN_YEAR..=civil::MAX_YEAR).contains(&year) {
        return Err(out_of_range(format!("year {year} is out of range")));
    }
    Ok(())
}

pub(crate) fn calendar(year: i64, month: i64, day: i64) -> Result<i64> {
    check_year(year)?;
    if !(1..=12).contains(&month) {
        return Err(invalid(format!("invalid month {month}")));
    }
    if day < 1 || day > civil::days_in_month(year, month as u32) as i64 {
        return Err(invalid(format!("invalid day of month {day} for {year}-{month:02}")));
    }
    Ok(civil::days_from_civil(year, month as u32, day as u32))
}

pub(crate) fn week_date(year: i64, week: i64, dow: i64) -> Result<i64> {
    check_year(year)?;
    if week < 1 || week > civil::weeks_in_year(year) as i64 {
        return Err(invalid(format!("invalid week {week} for week-based year {year}")));
    }
    if !(1..=7).contains(&dow) {
        return Err(invalid(format!("invalid day of week {dow}")));
    }
    in_range(civil::from_week_date(year, week as u32, dow as u32))
}

pub(crate) fn ordinal_date(year: i64, day: i64) -> Result<i64> {
    check_year(year)?;
    if day < 1 || day > civil::days_in_year(year) as i64 {
        return Err(invalid(format!("invalid ordinal day {day} for year {year}")));
    }
    Ok(civil::from_ordinal(year, day as u32))
}

pub(crate) fn quarter_date(year: i64, quarter: i64, day: i64) -> Result<i64> {
    check_year(year)?;
    if !(1..=4).contains(&quarter) {
        return Err(invalid(format!("invalid quarter {quarter}")));
    }
    if day < 1 || day > civil::days_in_quarter(year, quarter as u32) as i64 {
        return Err(invalid(format!("invalid day of quarter {day}")));
    }
    Ok(civil::from_quarter(year, quarter as u32, day as u32))
}

fn in_range(days: i64) -> Result<i64> {
    if civil::days_in_range(days) {
        Ok(days)
    } else {
        Err(out_of_range("date is out of range"))
    }
}

/// Parses a time of day without offset, as nanoseconds since midnight.
pub fn local_time(text: &str) -> Result<i64> {
    let mut c = Cursor::new(text);
    let nanos = time_at(&mut c).ok_or_else(|| bad("local time", text))??;
    if !c.done() {
        return Err(bad("local time", text));
    }
    Ok(nanos)
}

/// Parses a time of day with an optional offset.
pub fn time(text: &str) -> Result<(i64, Option<i32>)> {
    let mut c = Cursor::new(text);
    let nanos = time_at(&mut c).ok_or_else(|| bad("time", text))??;
    let offset = if c.done() { None } else { Some(offset_at(&mut c).ok_or_else(|| bad("time", text))??) };
    if !c.done() {
        return Err(bad("time", text));
    }
    Ok((nanos, offset))
}

fn time_at(c: &mut Cursor) -> Option<Result<i64>> {
    let run = c.digit_run();
    let hour = match run {
        1 => c.digits(1)?,
        0 => return None,
        _ => c.digits(2)?,
    };
    let (mut minute, mut second, mut nanos) = (0, 0, 0);
    if c.eat(b':') {
        let n = c.digit_run();
        if !(1..=2).contains(&n) {
            return None;
        }
        minute = c.digits(n)?;
        if c.eat(b':') {
            let n = c.digit_run();
            if !(1..=2).contains(&n) {
                return None;
            }
            second = c.digits(n)?;
            nanos = fraction_at(c)?;
        }
    } else if c.digit_run() >= 2 && run >= 2 {
        minute = c.digits(2)?;
        if c.digit_run() >= 2 {
            second = c.digits(2)?;
            nanos = fraction_at(c)?;
        }
    }
    Some(time_of_day(hour, minute, second, nanos))
}

/// An optional `.fff` or `,fff` fraction of one to nine digits, as nanoseconds. `None`: malformed.
fn fraction_at(c: &mut Cursor) -> Option<i64> {
    if !(c.eat(b'.') || c.eat(b',')) {
        return Some(0);
    }
    let n = c.digit_run();
    if !(1..=9).contains(&n) {
        return None;
    }
    let v = c.digits(n)?;
    Some(v * 10i64.pow(9 - n as u32))
}

pub(crate) fn time_of_day(hour: i64, minute: i64, second: i64, nanos: i64) -> Result<i64> {
    if !(0..24).contains(&hour) {
        return Err(invalid(format!("invalid hour {hour}")));
    }
    if !(0..60).contains(&minute) {
        return Err(invalid(format!("invalid minute {minute}")));
    }
    if !(0..60).contains(&second) {
        return Err(invalid(format!("invalid second {second}")));
    }
    if !(0..NANOS_PER_SECOND).contains(&nanos) {
        return Err(invalid(format!("invalid nanosecond {nanos}")));
    }
    Ok(((hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + nanos)
}

/// Parses an offset. `None`: the text does not look like one (it may be a zone name).
pub fn offset(text: &str) -> Option<Result<i32>> {
    // `Z` alone is UTC; a longer word starting with it is a zone name (`Zulu`).
    if !matches!(text.as_bytes().first(), Some(b'+' | b'-')) && text != "Z" {
        return None;
    }
    let mut c = Cursor::new(text);
    let bad_offset = || invalid(format!("invalid time zone offset '{text}'"));
    Some(match offset_at(&mut c) {
        Some(Ok(o)) if c.done() => Ok(o),
        Some(Err(e)) => Err(e),
        _ => Err(bad_offset()),
    })
}

fn offset_at(c: &mut Cursor) -> Option<Result<i32>> {
    let sign = match c.peek()? {
        b'Z' => {
            c.i += 1;
            return Some(Ok(0));
        }
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    c.i += 1;
    let hours = c.digits(2)?;
    let (mut minutes, mut seconds) = (0, 0);
    let colon = c.eat(b':');
    if colon || c.digit_run() >= 2 {
        minutes = c.digits(2)?;
        if (colon && c.eat(b':')) || (!colon && c.digit_run() >= 2) {
            seconds = c.digits(2)?;
        }
    }
    if minutes >= 60 || seconds >= 60 {
        return Some(Err(invalid("invalid time zone offset")));
    }
    let total = (hours * 3600 + minutes * 60 + seconds) as i32;
    if total > MAX_OFFSET_SECONDS {
        return Some(Err(invalid("time zone offset out of range (at most ±18:00)")));
    }
    Some(Ok(sign * total))
}

/// Parses a date with an optional `T` and time, offset and `[zone]`. Which parts are allowed is the caller's
/// business (a local date-time has neither offset nor zone).
pub fn datetime(text: &str) -> Result<DateTimeText> {
    let mut c = Cursor::new(text);
    let days = date_at(&mut c).ok_or_else(|| bad("datetime", text))??;
    let mut nanos = 0;
    if c.eat(b'T') {
        nanos = time_at(&mut c).ok_or_else(|| bad("datetime", text))??;
    }
    let mut offset = None;
    if matches!(c.peek(), Some(b'Z' | b'+' | b'-')) {
        offset = Some(offset_at(&mut c).ok_or_else(|| bad("datetime", text))??);
    }
    let mut zone = None;
    if c.eat(b'[') {
        let rest = &text[c.i..];
        let end = rest.find(']').ok_or_else(|| bad("datetime", text))?;
        zone = Some(Zone::parse(&rest[..end])?);
        c.i += end + 1;
    }
    if !c.done() {
        return Err(bad("datetime", text));
    }
    Ok(DateTimeText { days, nanos, offset, zone })
}

/// Parses a duration.
pub fn duration(text: &str) -> Result<Duration> {
    let body = text.strip_prefix('-');
    let negate = body.is_some();
    let body = body.or_else(|| text.strip_prefix('+')).unwrap_or(text);
    let body = body.strip_prefix('P').ok_or_else(|| bad("duration", text))?;
    let d = match designators(body) {
        Some(r) => r?,
        None => alternative(body).ok_or_else(|| bad("duration", text))??,
    };
    if negate {
        super::duration::negate(&d)
    } else {
        Ok(d)
    }
}

/// `nYnMnWnDTnHnMnS`: each part optional, signed, and fractional; at least one part.
fn designators(body: &str) -> Option<Result<Duration>> {
    let (date_part, time_part) = match body.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (body, None),
    };
    let mut b = Builder::default();
    let mut any = false;
    let mut units: &[u8] = b"YMWD";
    let mut rest = date_part;
    while !rest.is_empty() {
        let (num, unit, tail) = number_and_unit(rest)?;
        let at = units.iter().position(|&u| u == unit)?;
        units = &units[at + 1..];
        let r = match unit {
            b'Y' => b.years(num),
            b'M' => b.months(num),
            b'W' => b.weeks(num),
            _ => b.days(num),
        };
        if let Err(e) = r {
            return Some(Err(e));
        }
        any = true;
        rest = tail;
    }
    if let Some(t) = time_part {
        if t.is_empty() {
            return None;
        }
        let mut units: &[u8] = b"HMS";
        let mut rest = t;
        while !rest.is_empty() {
            let (num, unit, tail) = number_and_unit(rest)?;
            let at = units.iter().position(|&u| u == unit)?;
            units = &units[at + 1..];
            let r = match unit {
                b'H' => b.hours(num),
                b'M' => b.minutes(num),
                _ => b.seconds(num),
            };
            if let Err(e) = r {
                return Some(Err(e));
            }
            any = true;
            rest = tail;
        }
    }
    if !any {
        return None;
    }
    Some(b.build())
}

/// A number as written in a duration: an exact integer part and fraction, kept apart so seconds stay exact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Decimal {
    pub negative: bool,
    /// The integer part's magnitude.
    pub int: u64,
    /// Nanoseconds-scale fraction: 0.5 is 500_000_000.
    pub frac_nanos: i64,
    /// The exact value as a float, for non-second units.
    pub value: f64,
}

fn number_and_unit(s: &str) -> Option<(Decimal, u8, &str)> {
    let bytes = s.as_bytes();
    let mut i = 0;
    let negative = match bytes.first()? {
        b'-' => {
            i += 1;
            true
        }
        b'+' => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i == start || i - start > 20 {
        return None;
    }
    let int: u64 = s[start..i].parse().ok()?;
    let mut frac_nanos = 0;
    let frac_start;
    let mut frac_end = i;
    if i < bytes.len() && (bytes[i] == b'.' || bytes[i] == b',') {
        i += 1;
        frac_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let n = i - frac_start;
        if !(1..=9).contains(&n) {
            return None;
        }
        frac_nanos = s[frac_start..i].parse::<i64>().ok()? * 10i64.pow(9 - n as u32);
        frac_end = i;
    }
    let unit = *bytes.get(i)?;
    let text = s[start..frac_end].replace(',', ".");
    let value: f64 = text.parse().ok()?;
    let value = if negative { -value } else { value };
    Some((Decimal { negative, int, frac_nanos, value }, unit, &s[i + 1..]))
}

/// `yyyy-mm-ddThh:mm:ss.fff` (or without separators), each field a plain count of its unit.
fn alternative(body: &str) -> Option<Result<Duration>> {
    let mut c = Cursor::new(body);
    let (mut years, mut months, mut days) = (0, 0, 0);
    if c.peek() != Some(b'T') {
        years = c.digits(4)?;
        let dash = c.eat(b'-');
        if !c.done() && c.peek() != Some(b'T') {
            months = c.digits(2)?;
            if (dash && c.eat(b'-')) || (!dash && c.digit_run() >= 2) {
                days = c.digits(2)?;
            }
        }
    }
    let (mut hours, mut minutes, mut seconds, mut nanos) = (0, 0, 0, 0);
    if c.eat(b'T') {
        hours = c.digits(2)?;
        let colon = c.eat(b':');
        if !c.done() {
            minutes = c.digits(2)?;
            if (colon && c.eat(b':')) || (!colon && c.digit_run() >= 2) {
                seconds = c.digits(2)?;
                nanos = fraction_at(&mut c)?;
            }
        }
    }
    if !c.done() {
        return None;
    }
    let total_seconds = (hours * 60 + minutes) * 60 + seconds;
    Some(super::duration::normalize(
        years as i128 * 12 + months as i128,
        days as i128,
        total_seconds as i128 * NANOS_PER_SECOND as i128 + nanos as i128,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::civil::days_from_civil;

    fn d(y: i64, m: u32, day: u32) -> i64 {
        days_from_civil(y, m, day)
    }

    #[test]
    fn dates_from_the_tck() {
        for (text, expected) in [
            ("2015-07-21", d(2015, 7, 21)),
            ("20150721", d(2015, 7, 21)),
            ("2015-07", d(2015, 7, 1)),
            ("201507", d(2015, 7, 1)),
            ("2015-W30-2", d(2015, 7, 21)),
            ("2015W302", d(2015, 7, 21)),
            ("2015-W30", d(2015, 7, 20)),
            ("2015W30", d(2015, 7, 20)),
            ("2015-202", d(2015, 7, 21)),
            ("2015202", d(2015, 7, 21)),
            ("2015", d(2015, 1, 1)),
            ("2015-Q3", d(2015, 7, 1)),
            ("2015-Q3-21", d(2015, 7, 21)),
            ("-999999999-01-01", d(-999_999_999, 1, 1)),
            ("+999999999-12-31", d(999_999_999, 12, 31)),
        ] {
            assert_eq!(date(text).unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn bad_dates() {
        for text in ["", "2015-13-01", "2015-02-29", "2015-W54", "2015-366", "15-07-21", "2015-07-21T", "2015/07/21"] {
            assert!(date(text).is_err(), "{text}");
        }
        assert_eq!(date("2015-13-01").unwrap_err().detail, "InvalidArgumentValue");
    }

    #[test]
    fn times_from_the_tck() {
        let t = |h: i64, m: i64, s: i64, n: i64| ((h * 60 + m) * 60 + s) * NANOS_PER_SECOND + n;
        assert_eq!(local_time("21:40:32.142").unwrap(), t(21, 40, 32, 142_000_000));
        assert_eq!(local_time("214032.142").unwrap(), t(21, 40, 32, 142_000_000));
        assert_eq!(local_time("214032").unwrap(), t(21, 40, 32, 0));
        assert_eq!(local_time("2140").unwrap(), t(21, 40, 0, 0));
        assert_eq!(local_time("21").unwrap(), t(21, 0, 0, 0));
        assert_eq!(time("21:40:32.142+0100").unwrap(), (t(21, 40, 32, 142_000_000), Some(3600)));
        assert_eq!(time("214032.142Z").unwrap(), (t(21, 40, 32, 142_000_000), Some(0)));
        assert_eq!(time("214032-0100").unwrap(), (t(21, 40, 32, 0), Some(-3600)));
        assert_eq!(time("21:40-01:30").unwrap(), (t(21, 40, 0, 0), Some(-5400)));
        assert_eq!(time("2140-02").unwrap(), (t(21, 40, 0, 0), Some(-7200)));
        assert_eq!(time("22+18:00").unwrap(), (t(22, 0, 0, 0), Some(64_800)));
        assert!(time("22+18:01").is_err());
        assert!(local_time("24:00").is_err());
        assert!(local_time("21:40+01:00").is_err());
    }

    #[test]
    fn datetimes_from_the_tck() {
        let dt = datetime("2015-07-21T21:40:32.142+02:00[Europe/Stockholm]").unwrap();
        assert_eq!(dt.days, d(2015, 7, 21));
        assert_eq!(dt.offset, Some(7200));
        assert!(matches!(dt.zone, Some(Zone::Named(ref n)) if &**n == "Europe/Stockholm"));
        let dt = datetime("2015-W30T2140-02").unwrap();
        assert_eq!(
            (dt.days, dt.nanos, dt.offset),
            (d(2015, 7, 20), (21 * 60 + 40) * 60 * NANOS_PER_SECOND, Some(-7200))
        );
        assert_eq!(datetime("2015202T21+18:00").unwrap().offset, Some(18 * 3600));
        assert_eq!(datetime("2015T214032-0100").unwrap().days, d(2015, 1, 1));
        assert!(datetime("2015-07-21T21:40[Nowhere/Special]").is_err());
        assert!(datetime("2015-07-21T21:40[Europe/Stockholm").is_err());
    }

    #[test]
    fn durations_parse() {
        let p = |s: &str| duration(s).unwrap();
        let dur = |months, days, seconds, nanos| Duration { months, days, seconds, nanos };
        assert_eq!(p("P14DT16H12M"), dur(0, 14, 16 * 3600 + 12 * 60, 0));
        assert_eq!(p("P5M1.5D"), dur(5, 1, 12 * 3600, 0));
        assert_eq!(p("P0.75M"), dur(0, 22, 19 * 3600 + 51 * 60 + 49, 500_000_000));
        assert_eq!(p("PT0.75M"), dur(0, 0, 45, 0));
        assert_eq!(p("P2.5W"), dur(0, 17, 12 * 3600, 0));
        assert_eq!(p("P12Y5M14DT16H12M70S"), dur(149, 14, 16 * 3600 + 13 * 60 + 10, 0));
        assert_eq!(p("P2012-02-02T14:37:21.545"), dur(2012 * 12 + 2, 2, 14 * 3600 + 37 * 60 + 21, 545_000_000));
        assert_eq!(p("PT-1.999S"), dur(0, 0, -2, 1_000_000));
        assert_eq!(p("PT-1M-0.001S"), dur(0, 0, -61, 999_000_000));
        assert_eq!(p("-P1DT1S"), dur(0, -1, -1, 0));
        assert_eq!(p("PT0S"), dur(0, 0, 0, 0));
        for bad in ["P", "PT", "P1S", "PT1D", "P1D2Y", "14D", "P1.5.5D", "PT1.0000000001S", "P1YT"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }
}
