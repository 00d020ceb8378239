//! Durations: building them from maps and parsed text (fractional components cascade down into smaller units),
//! keeping them normalised, and combining them (`+`, `-`, `*`, `/` by numbers).
//!
//! A duration keeps months, days and seconds apart, because their lengths vary: a month is not a fixed number of
//! days, nor a day (across a DST change) a fixed number of seconds. A fraction of a month becomes days at the
//! average month length (365.2425 / 12 days), a fraction of a day becomes 86,400ths, a fraction of a second
//! nanoseconds (truncated). Normal form: `0 <= nanos < 1_000_000_000`.

use plexus_storage::value::Duration;

use super::civil::{NANOS_PER_SECOND, SECONDS_PER_DAY};
use super::parse::Decimal;
use super::{invalid, out_of_range, wrong_type};
use crate::error::Result;
use crate::value::{Map, Value};

/// The average Gregorian month, in days.
const AVG_DAYS_PER_MONTH: f64 = 365.2425 / 12.0;
/// The same month in seconds (365.2425 × 86,400 / 12, a whole number), as Neo4j measures a duration's length.
const AVG_SECONDS_PER_MONTH: i128 = 2_629_746;

const NANOS: i128 = NANOS_PER_SECOND as i128;

/// The largest magnitude a fractional part may reach before it is an overflow rather than a value.
const FLOAT_LIMIT: f64 = 1e30;

/// A component value: exact integers stay exact, fractions are carried as floats.
#[derive(Clone, Copy, Debug)]
pub enum Amount {
    Int(i128),
    Float(f64),
}

impl From<Decimal> for Amount {
    fn from(d: Decimal) -> Self {
        if d.frac_nanos == 0 {
            let magnitude = d.int as i128;
            Amount::Int(if d.negative { -magnitude } else { magnitude })
        } else {
            Amount::Float(d.value)
        }
    }
}

/// One unit's accumulated amount: an exact integer part and a fractional remainder.
#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    whole: i128,
    frac: f64,
}

impl Bucket {
    fn add(&mut self, amount: Amount, factor: i64) -> Result<()> {
        match amount {
            Amount::Int(v) => self.whole += v * factor as i128,
            Amount::Float(f) => self.add_float(f * factor as f64)?,
        }
        Ok(())
    }

    fn add_float(&mut self, x: f64) -> Result<()> {
        if !x.is_finite() || x.abs() > FLOAT_LIMIT {
            return Err(out_of_range(format!("duration component {x} is out of range")));
        }
        let t = x.trunc();
        self.whole += t as i128;
        self.frac += x - t;
        Ok(())
    }

    /// The whole amount, moving the fraction's whole part in; the fraction left over.
    fn take(self) -> (i128, f64) {
        let t = self.frac.trunc();
        (self.whole + t as i128, self.frac - t)
    }
}

/// Collects duration components, in any order, then cascades fractions and normalises.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    months: Bucket,
    days: Bucket,
    seconds: Bucket,
    nanos: Bucket,
}

impl Builder {
    pub fn years(&mut self, d: impl Into<Amount>) -> Result<()> {
        self.months.add(d.into(), 12)
    }
    pub fn quarters(&mut self, d: impl Into<Amount>) -> Result<()> {
        self.months.add(d.into(), 3)
    }
    pub fn months(&mut self, d: impl Into<Amount>) -> Result<()> {
        self.months.add(d.into(), 1)
    }
    pub fn weeks(&mut self, d: impl Into<Amount>) -> Result<()> {
        self.days.add(d.into(), 7)
    }
    pub fn days(&mut self, d: impl Into<Amount>) -> Result<()> {
        self.days.add(d.into(), 1)
    }
    pub fn hours(&mut self, d: impl Into<Amount>) -> Result<()> {
        self.seconds.add(d.into(), 3600)
    }
    pub fn minutes(&mut self, d: impl Into<Amount>) -> Result<()> {
        self.seconds.add(d.into(), 60)
    }
    /// Seconds; a parsed decimal fraction stays exact down to the nanosecond.
    pub fn seconds(&mut self, d: Decimal) -> Result<()> {
        let sign = if d.negative { -1 } else { 1 };
        self.seconds.whole += sign * d.int as i128;
        self.nanos.whole += sign * d.frac_nanos as i128;
        Ok(())
    }
    pub fn seconds_amount(&mut self, d: Amount) -> Result<()> {
        self.seconds.add(d, 1)
    }
    pub fn nanos(&mut self, d: Amount, factor: i64) -> Result<()> {
        self.nanos.add(d, factor)
    }

    pub fn build(self) -> Result<Duration> {
        let (months, frac) = self.months.take();
        let mut days = self.days;
        days.add_float(frac * AVG_DAYS_PER_MONTH)?;
        let (days, frac) = days.take();
        let mut seconds = self.seconds;
        seconds.add_float(frac * SECONDS_PER_DAY as f64)?;
        let (seconds, frac) = seconds.take();
        let mut nanos = self.nanos;
        nanos.add_float(frac * NANOS_PER_SECOND as f64)?;
        let (nanos, _) = nanos.take();
        let total = seconds.checked_mul(NANOS).and_then(|s| s.checked_add(nanos));
        normalize(months, days, total.ok_or_else(|| out_of_range("duration is out of range"))?)
    }
}

/// A duration from months, days and a signed count of nanoseconds, or an error when a component leaves 64 bits.
///
/// Its average length in seconds must fit in 64 bits too, as Neo4j and the drivers require: a duration of 10^17
/// days would be refused by Neo4j, and would break the official drivers if returned.
pub fn normalize(months: i128, days: i128, nanos: i128) -> Result<Duration> {
    let too_big = || out_of_range("duration is out of range");
    let d = Duration {
        months: i64::try_from(months).map_err(|_| too_big())?,
        days: i64::try_from(days).map_err(|_| too_big())?,
        seconds: i64::try_from(nanos.div_euclid(NANOS)).map_err(|_| too_big())?,
        nanos: nanos.rem_euclid(NANOS) as i32,
    };
    let average_seconds =
        d.months as i128 * AVG_SECONDS_PER_MONTH + d.days as i128 * SECONDS_PER_DAY as i128 + d.seconds as i128;
    i64::try_from(average_seconds).map_err(|_| too_big())?;
    Ok(d)
}

/// The seconds and nanoseconds of a duration as one signed count of nanoseconds.
pub fn total_nanos(d: &Duration) -> i128 {
    d.seconds as i128 * NANOS + d.nanos as i128
}

/// Re-normalises a duration that may come from elsewhere (a stored value written by another writer).
pub fn canonical(d: &Duration) -> Duration {
    normalize(d.months as i128, d.days as i128, total_nanos(d)).unwrap_or(*d)
}

pub fn negate(d: &Duration) -> Result<Duration> {
    normalize(-(d.months as i128), -(d.days as i128), -total_nanos(d))
}

pub fn add(a: &Duration, b: &Duration) -> Result<Duration> {
    normalize(a.months as i128 + b.months as i128, a.days as i128 + b.days as i128, total_nanos(a) + total_nanos(b))
}

pub fn sub(a: &Duration, b: &Duration) -> Result<Duration> {
    normalize(a.months as i128 - b.months as i128, a.days as i128 - b.days as i128, total_nanos(a) - total_nanos(b))
}

pub fn mul_int(d: &Duration, k: i64) -> Result<Duration> {
    let k = k as i128;
    let nanos = total_nanos(d).checked_mul(k).ok_or_else(|| out_of_range("duration is out of range"))?;
    normalize(d.months as i128 * k, d.days as i128 * k, nanos)
}

/// Scales each component by a float (see [`approximate`]).
pub fn mul_float(d: &Duration, f: f64) -> Result<Duration> {
    // Named before scaling: a zero component times an infinite factor is NaN, which would be reported instead.
    if !f.is_finite() {
        let f = crate::format::float_to_string(f);
        return Err(out_of_range(format!("a duration cannot be multiplied by {f}")));
    }
    approximate(d.months as f64 * f, d.days as f64 * f, d.seconds as f64 * f, d.nanos as f64 * f)
}

pub fn div(d: &Duration, divisor: f64) -> Result<Duration> {
    if divisor == 0.0 {
        return Err(crate::error::CypherError::arithmetic("DivisionByZero", "division of a duration by zero"));
    }
    if divisor.is_nan() {
        return Err(out_of_range("a duration cannot be divided by NaN"));
    }
    // Divide each component rather than multiply by the reciprocal, which is not exact.
    approximate(
        d.months as f64 / divisor,
        d.days as f64 / divisor,
        d.seconds as f64 / divisor,
        d.nanos as f64 / divisor,
    )
}

/// A duration from fractional components, as Neo4j computes the product or quotient of a duration and a float:
/// the months' fraction joins the days (at the average month) before the days are cut to a whole number, and
/// the days' fraction joins the seconds and nanoseconds, all in nanoseconds, before the seconds are cut. Cutting
/// each component apart gives the same length written differently (`P15DT-6H-45M-27S` for `P14DT17H14M33S`),
/// which then compares unequal to Neo4j's answer.
fn approximate(months: f64, days: f64, seconds: f64, nanos: f64) -> Result<Duration> {
    const NANOS_PER_DAY: f64 = (NANOS_PER_SECOND * SECONDS_PER_DAY) as f64;
    const AVG_NANOS_PER_MONTH: f64 = AVG_DAYS_PER_MONTH * NANOS_PER_DAY;
    let whole = |x: f64| -> Result<i64> {
        if !x.is_finite() || x.abs() >= 9.2e18 {
            return Err(out_of_range(format!("duration component {x} is out of range")));
        }
        Ok(x.trunc() as i64)
    };
    let whole_months = whole(months)?;
    let days = days + (AVG_NANOS_PER_MONTH * months - AVG_NANOS_PER_MONTH * whole_months as f64) / NANOS_PER_DAY;
    let whole_days = whole(days)?;
    let total_nanos =
        (NANOS_PER_DAY * days - NANOS_PER_DAY * whole_days as f64) + nanos + NANOS_PER_SECOND as f64 * seconds;
    let whole_seconds = whole(total_nanos / NANOS_PER_SECOND as f64)?;
    let rest = whole(total_nanos - NANOS_PER_SECOND as f64 * whole_seconds as f64)?;
    normalize(whole_months as i128, whole_days as i128, whole_seconds as i128 * NANOS + rest as i128)
}

/// `duration(x)`: from a string, a map of components, or another duration.
pub fn construct(arg: &Value) -> Result<Value> {
    match arg {
        Value::Null => Ok(Value::Null),
        Value::String(s) => {
            let d = super::construct::read_any_case(s, super::parse::duration);
            Ok(Value::duration(d.map_err(super::unreadable_text)?))
        }
        Value::Map(m) => Ok(Value::duration(from_map(m)?)),
        Value::Duration(d) => Ok(Value::duration(canonical(d))),
        other => Err(wrong_type(format!("duration() expects a string or a map, got {}", other.type_name()))),
    }
}

/// `duration({years: 1, days: 1.5, ...})`.
pub fn from_map(map: &Map) -> Result<Duration> {
    let mut b = Builder::default();
    for (key, value) in map {
        let amount = match value {
            Value::Int(i) => Amount::Int(*i as i128),
            Value::Float(f) => Amount::Float(*f),
            other => {
                return Err(wrong_type(format!(
                    "duration component '{key}' must be a number, got {}",
                    other.type_name()
                )))
            }
        };
        match key.to_ascii_lowercase().as_str() {
            "years" => b.years(amount)?,
            "quarters" => b.quarters(amount)?,
            "months" => b.months(amount)?,
            "weeks" => b.weeks(amount)?,
            "days" => b.days(amount)?,
            "hours" => b.hours(amount)?,
            "minutes" => b.minutes(amount)?,
            "seconds" => b.seconds_amount(amount)?,
            "milliseconds" => b.nanos(amount, 1_000_000)?,
            "microseconds" => b.nanos(amount, 1_000)?,
            "nanoseconds" => b.nanos(amount, 1)?,
            _ => return Err(invalid(format!("no such duration component: '{key}'"))),
        }
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::temporal::format;

    fn map(entries: &[(&str, Value)]) -> Map {
        entries.iter().map(|(k, v)| (Arc::<str>::from(*k), v.clone())).collect()
    }

    fn show(d: Duration) -> String {
        format::duration(&d)
    }

    #[test]
    fn maps_from_the_tck() {
        let i = Value::Int;
        let f = Value::Float;
        for (entries, expected) in [
            (vec![("days", i(14)), ("hours", i(16)), ("minutes", i(12))], "P14DT16H12M"),
            (vec![("months", i(5)), ("days", f(1.5))], "P5M1DT12H"),
            (vec![("months", f(0.75))], "P22DT19H51M49.5S"),
            (vec![("weeks", f(2.5))], "P17DT12H"),
            (
                vec![
                    ("years", i(12)),
                    ("months", i(5)),
                    ("days", i(14)),
                    ("hours", i(16)),
                    ("minutes", i(12)),
                    ("seconds", i(70)),
                ],
                "P12Y5M14DT16H13M10S",
            ),
            (vec![("days", i(14)), ("seconds", i(70)), ("milliseconds", i(1))], "P14DT1M10.001S"),
            (vec![("days", i(14)), ("seconds", i(70)), ("microseconds", i(1))], "P14DT1M10.000001S"),
            (vec![("days", i(14)), ("seconds", i(70)), ("nanoseconds", i(1))], "P14DT1M10.000000001S"),
            (vec![("minutes", f(1.5)), ("seconds", i(1))], "PT1M31S"),
            (vec![("years", i(12)), ("months", i(5)), ("days", i(-14)), ("hours", i(16))], "P12Y5M-14DT16H"),
            (vec![("minutes", i(12)), ("seconds", i(-60))], "PT11M"),
            (vec![("seconds", i(2)), ("milliseconds", i(-1))], "PT1.999S"),
            (vec![("seconds", i(-2)), ("milliseconds", i(1))], "PT-1.999S"),
            (vec![("seconds", i(-2)), ("milliseconds", i(-1))], "PT-2.001S"),
            (vec![("days", i(1)), ("milliseconds", i(1))], "P1DT0.001S"),
            (vec![("days", i(1)), ("milliseconds", i(-1))], "P1DT-0.001S"),
            (vec![("seconds", i(60)), ("milliseconds", i(-1))], "PT59.999S"),
            (vec![("seconds", i(-60)), ("milliseconds", i(1))], "PT-59.999S"),
            (vec![("seconds", i(-60)), ("milliseconds", i(-1))], "PT-1M-0.001S"),
        ] {
            let d = from_map(&map(&entries)).unwrap();
            assert_eq!(show(d), expected);
            assert_eq!(super::super::parse::duration(expected).unwrap(), d, "{expected}");
        }
    }

    fn tck_durations() -> [Duration; 3] {
        let i = Value::Int;
        let f = Value::Float;
        [
            from_map(&map(&[
                ("years", i(12)),
                ("months", i(5)),
                ("days", i(14)),
                ("hours", i(16)),
                ("minutes", i(12)),
                ("seconds", i(70)),
                ("nanoseconds", i(1)),
            ]))
            .unwrap(),
            from_map(&map(&[
                ("months", i(1)),
                ("days", i(-14)),
                ("hours", i(16)),
                ("minutes", i(-12)),
                ("seconds", i(70)),
            ]))
            .unwrap(),
            from_map(&map(&[
                ("years", f(12.5)),
                ("months", f(5.5)),
                ("days", f(14.5)),
                ("hours", f(16.5)),
                ("minutes", f(12.5)),
                ("seconds", f(70.5)),
                ("nanoseconds", i(3)),
            ]))
            .unwrap(),
        ]
    }

    #[test]
    fn sums_and_differences_from_the_tck() {
        let [a, b, c] = tck_durations();
        let cases = [
            (a, a, "P24Y10M28DT32H26M20.000000002S", "PT0S"),
            (a, b, "P12Y6MT32H2M20.000000001S", "P12Y4M28DT24M0.000000001S"),
            (a, c, "P25Y4M43DT50H11M23.500000004S", "P-6M-15DT-17H-45M-3.500000002S"),
            (b, a, "P12Y6MT32H2M20.000000001S", "P-12Y-4M-28DT-24M-0.000000001S"),
            (b, b, "P2M-28DT31H38M20S", "PT0S"),
            (b, c, "P13Y15DT49H47M23.500000003S", "P-12Y-10M-43DT-18H-9M-3.500000003S"),
            (c, a, "P25Y4M43DT50H11M23.500000004S", "P6M15DT17H45M3.500000002S"),
            (c, c, "P25Y10M58DT67H56M27.000000006S", "PT0S"),
        ];
        for (x, y, sum, diff) in cases {
            assert_eq!(show(add(&x, &y).unwrap()), sum);
            assert_eq!(show(sub(&x, &y).unwrap()), diff);
        }
    }

    #[test]
    fn products_and_quotients_from_the_tck() {
        let [a, ..] = tck_durations();
        assert_eq!(show(mul_int(&a, 1).unwrap()), "P12Y5M14DT16H13M10.000000001S");
        assert_eq!(show(mul_int(&a, 2).unwrap()), "P24Y10M28DT32H26M20.000000002S");
        assert_eq!(show(mul_float(&a, 0.5).unwrap()), "P6Y2M22DT13H21M8S");
        assert_eq!(show(div(&a, 1.0).unwrap()), "P12Y5M14DT16H13M10.000000001S");
        assert_eq!(show(div(&a, 2.0).unwrap()), "P6Y2M22DT13H21M8S");
        assert_eq!(show(div(&a, 0.5).unwrap()), "P24Y10M28DT32H26M20.000000002S");
        assert_eq!(div(&a, 0.0).unwrap_err().kind, crate::error::ErrorKind::ArithmeticError);
        // Fractions of months and days join the smaller units before each is cut, as in Neo4j.
        let month_less_a_day = Duration { months: 1, days: -1, seconds: 0, nanos: 0 };
        assert_eq!(show(div(&month_less_a_day, 2.0).unwrap()), "P14DT17H14M33S");
        let month = Duration { months: 1, days: 0, seconds: 0, nanos: 0 };
        assert_eq!(show(div(&month, 1.5).unwrap()), "P20DT6H59M24S");
        assert_eq!(show(mul_float(&month, -0.5).unwrap()), "P-15DT-5H-14M-33S");
    }

    #[test]
    fn overflow_is_an_error() {
        let big = Duration { months: i64::MAX, days: 0, seconds: 0, nanos: 0 };
        assert_eq!(mul_int(&big, 2).unwrap_err().detail, "NumberOutOfRange");
        assert!(add(&big, &big).is_err());
        assert!(from_map(&map(&[("years", Value::Int(i64::MAX))])).is_err());
        assert!(from_map(&map(&[("days", Value::Float(f64::INFINITY))])).is_err());
        assert!(from_map(&map(&[("days", Value::Float(f64::NAN))])).is_err());
        assert!(mul_float(&big, 1e300).is_err());
        assert!(from_map(&map(&[("hours", Value::Float(1e29))])).is_err());
        assert!(from_map(&map(&[("seconds", Value::Float(-1e29)), ("hours", Value::Float(-1e29))])).is_err());
        assert!(from_map(&map(&[("fortnights", Value::Int(1))])).is_err());
        assert!(from_map(&map(&[("days", Value::from("1"))])).is_err());
        // Within 64 bits component by component, but not as a length in seconds.
        assert!(from_map(&map(&[("days", Value::Int(106_751_991_167_301))])).is_err());
        assert!(from_map(&map(&[("days", Value::Int(106_751_991_167_300))])).is_ok());
        assert!(from_map(&map(&[("months", Value::Int(i64::MAX / 2_629_746 + 1))])).is_err());
    }
}
