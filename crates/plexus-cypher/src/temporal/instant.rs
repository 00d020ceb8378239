//! The stored temporal structs taken apart into a local date, a local time of day and a zone, and put back
//! together with range checks. Construction, truncation, arithmetic and `duration.between` all work on these parts.

use plexus_storage::value::{Date, DateTime, LocalDateTime, LocalTime, Time};

use super::civil::{self, NANOS_PER_SECOND, SECONDS_PER_DAY};
use super::out_of_range;
use super::zone::{Zone, MAX_OFFSET_SECONDS};
use crate::error::Result;
use crate::value::Value;

/// An instant's local fields. Which are present tells the type: a date has only `days`, a local time only
/// `nanos`, a time `nanos` and a zone, and so on.
#[derive(Clone, Debug, PartialEq)]
pub struct Parts {
    /// The local date, as days since 1970-01-01.
    pub days: Option<i64>,
    /// The local time of day, in nanoseconds since midnight.
    pub nanos: Option<i64>,
    pub zone: Option<Zone>,
    /// The offset in force, for zoned values (differs from a named zone's other offsets around DST changes).
    pub offset: Option<i32>,
}

impl Parts {
    /// The parts of an instant. `None` for other values, and for instants outside the supported range (which
    /// only a foreign writer can store), so nothing downstream has to guard against overflow.
    pub fn from_value(value: &Value) -> Option<Parts> {
        if !in_range(value) {
            return None;
        }
        Some(match value {
            Value::Date(d) => Parts { days: Some(d.days), nanos: None, zone: None, offset: None },
            Value::LocalTime(t) => Parts { days: None, nanos: Some(t.nanos), zone: None, offset: None },
            Value::Time(t) => Parts {
                days: None,
                nanos: Some(t.nanos),
                zone: Some(Zone::Offset(t.offset_seconds)),
                offset: Some(t.offset_seconds),
            },
            Value::LocalDateTime(t) => {
                let (days, nanos) = split_local(t.seconds, t.nanos);
                Parts { days: Some(days), nanos: Some(nanos), zone: None, offset: None }
            }
            Value::DateTime(t) => {
                let (days, nanos) = split_local(t.seconds + t.offset_seconds as i64, t.nanos);
                let zone = match &t.zone {
                    Some(name) => Zone::Named(name.clone()),
                    None => Zone::Offset(t.offset_seconds),
                };
                Parts { days: Some(days), nanos: Some(nanos), zone: Some(zone), offset: Some(t.offset_seconds) }
            }
            _ => return None,
        })
    }
}

/// Whether a stored instant is one this module can produce: dates within the supported years, times of day
/// within a day, offsets within ±18 hours.
fn in_range(value: &Value) -> bool {
    let day = |n: i64| (0..civil::NANOS_PER_DAY).contains(&n);
    let offset = |o: i32| o.abs() <= MAX_OFFSET_SECONDS;
    let local = |seconds: i64, nanos: u32| {
        civil::days_in_range(civil::split_seconds(seconds).0) && (nanos as i64) < NANOS_PER_SECOND
    };
    match value {
        Value::Date(d) => civil::days_in_range(d.days),
        Value::LocalTime(t) => day(t.nanos),
        Value::Time(t) => day(t.nanos) && offset(t.offset_seconds),
        Value::LocalDateTime(t) => local(t.seconds, t.nanos),
        Value::DateTime(t) => {
            offset(t.offset_seconds)
                && t.seconds.checked_add(t.offset_seconds as i64).is_some_and(|l| local(l, t.nanos))
        }
        _ => true,
    }
}

/// Seconds since the epoch (local) and nanoseconds into a day number and nanoseconds of that day.
pub fn split_local(seconds: i64, nanos: u32) -> (i64, i64) {
    let (days, secs) = civil::split_seconds(seconds);
    (days, secs * NANOS_PER_SECOND + nanos as i64)
}

/// A day number and time of day as local seconds since the epoch and the nanoseconds of that second.
pub fn join_local(days: i64, nanos: i64) -> (i64, u32) {
    (days * SECONDS_PER_DAY + nanos.div_euclid(NANOS_PER_SECOND), nanos.rem_euclid(NANOS_PER_SECOND) as u32)
}

fn check_days(days: i64) -> Result<()> {
    if civil::days_in_range(days) {
        Ok(())
    } else {
        Err(out_of_range("date is out of range (years -999999999 to 999999999)"))
    }
}

pub fn date(days: i64) -> Result<Value> {
    check_days(days)?;
    Ok(Value::Date(Date { days }))
}

pub fn local_time(nanos: i64) -> Value {
    Value::LocalTime(LocalTime { nanos: nanos.rem_euclid(civil::NANOS_PER_DAY) })
}

pub fn time(nanos: i64, offset: i32) -> Value {
    Value::Time(Time { nanos: nanos.rem_euclid(civil::NANOS_PER_DAY), offset_seconds: offset })
}

pub fn local_datetime(days: i64, nanos: i64) -> Result<Value> {
    check_days(days)?;
    let (seconds, nanos) = join_local(days, nanos);
    Ok(Value::LocalDateTime(LocalDateTime { seconds, nanos }))
}

/// A datetime from local fields read in `zone` (see [`Zone::offset_for_local`] for gaps and overlaps).
pub fn datetime(days: i64, nanos: i64, zone: &Zone, preferred: Option<i32>) -> Result<Value> {
    check_days(days)?;
    let (local, nanos) = join_local(days, nanos);
    let offset = zone.offset_for_local(local, preferred);
    datetime_at(local - offset as i64, nanos, zone)
}

/// A datetime at a UTC instant, seen in `zone`.
pub fn datetime_at(utc_seconds: i64, nanos: u32, zone: &Zone) -> Result<Value> {
    let offset = zone.offset_at(utc_seconds);
    let local = utc_seconds.checked_add(offset as i64).ok_or_else(|| out_of_range("datetime is out of range"))?;
    check_days(civil::split_seconds(local).0)?;
    Ok(Value::DateTime(Box::new(DateTime {
        seconds: utc_seconds,
        nanos,
        offset_seconds: offset,
        zone: zone.name().cloned(),
    })))
}

/// The UTC instant of a zoned value's parts, as seconds and nanoseconds; `None` without a date or zone.
pub fn instant(parts: &Parts) -> Option<(i64, u32)> {
    let (days, nanos, zone) = (parts.days?, parts.nanos.unwrap_or(0), parts.zone.as_ref()?);
    let (local, nanos) = join_local(days, nanos);
    Some((local - zone.offset_for_local(local, parts.offset) as i64, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::civil::days_from_civil;

    #[test]
    fn parts_round_trip_through_values() {
        let zone = Zone::parse("Europe/Stockholm").unwrap();
        let days = days_from_civil(2017, 10, 29);
        let nanos = (2 * 3600 + 30 * 60) * NANOS_PER_SECOND;
        // The second 02:30 of the day, after clocks went back.
        let v = datetime(days, nanos, &zone, Some(3600)).unwrap();
        let p = Parts::from_value(&v).unwrap();
        assert_eq!((p.days, p.nanos, p.offset), (Some(days), Some(nanos), Some(3600)));
        assert_eq!(format!("{:?}", datetime(days, nanos, &zone, p.offset).unwrap()), format!("{v:?}"));
        let first = datetime(days, nanos, &zone, None).unwrap();
        assert_eq!(Parts::from_value(&first).unwrap().offset, Some(7200));
        // In the spring gap the wall time moves forward.
        let gap = datetime(days_from_civil(2017, 3, 26), nanos, &zone, None).unwrap();
        assert_eq!(super::super::format::to_tck_string(&gap).unwrap(), "2017-03-26T03:30+02:00[Europe/Stockholm]");
    }

    #[test]
    fn range_is_checked() {
        assert!(date(civil::max_days() + 1).is_err());
        assert!(local_datetime(civil::min_days() - 1, 0).is_err());
        assert!(datetime_at(i64::MAX - 10, 0, &Zone::Offset(3600)).is_err());
        assert!(matches!(local_time(-1), Value::LocalTime(LocalTime { nanos }) if nanos == civil::NANOS_PER_DAY - 1));
    }
}
