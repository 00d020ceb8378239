//! Time zones: fixed UTC offsets and named IANA zones, and the only place that touches the time-zone database.
//!
//! Named zones come from the IANA database compiled into the binary (through `jiff`), so they work offline and
//! without system zone files. Instants beyond the database's range (years outside ±9999) use the rules in force at
//! the nearest end of that range.

use std::sync::Arc;

use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;

use super::{civil, invalid, parse};
use crate::error::Result;

/// A zone a temporal value can carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A fixed offset from UTC, in seconds.
    Offset(i32),
    /// An IANA zone, by its canonical spelling.
    Named(Arc<str>),
}

/// The largest offset allowed, as in ISO 8601 implementations: ±18:00.
pub const MAX_OFFSET_SECONDS: i32 = 18 * 3600;

impl Zone {
    pub const UTC: Zone = Zone::Offset(0);

    /// Parses a `timezone` value: an offset (`Z`, `+01:00`, `-0130`, `+02:05:59`) or a zone name
    /// (`Europe/Stockholm`, `UTC`).
    pub fn parse(text: &str) -> Result<Zone> {
        match (parse::offset(text), prefixed_offset(text)) {
            (Some(Ok(offset)), _) | (_, Some(Ok(offset))) => Ok(Zone::Offset(offset)),
            (Some(Err(e)), _) | (None, Some(Err(e))) => Err(e),
            (None, None) => named(text),
        }
    }

    /// The offset in force at a UTC instant (seconds since the epoch).
    pub fn offset_at(&self, utc_seconds: i64) -> i32 {
        match self {
            Zone::Offset(o) => *o,
            Zone::Named(name) => match lookup(name) {
                Some(tz) => tz.to_offset(timestamp(utc_seconds)).seconds(),
                None => 0,
            },
        }
    }

    /// The offset to read a local date-time (seconds since the epoch, as if UTC) with. In a gap the offset before
    /// the gap is used, which moves the wall time forward by the gap's length; in an overlap `preferred` is kept
    /// when it is one of the two candidates, else the earlier offset.
    pub fn offset_for_local(&self, local_seconds: i64, preferred: Option<i32>) -> i32 {
        let name = match self {
            Zone::Offset(o) => return *o,
            Zone::Named(name) => name,
        };
        let Some(tz) = lookup(name) else { return 0 };
        let (days, secs) = civil::split_seconds(local_seconds);
        let (year, month, day) = civil::civil_from_days(days);
        if !(-9998..=9998).contains(&year) {
            let guess = tz.to_offset(timestamp(local_seconds)).seconds();
            return tz.to_offset(timestamp(local_seconds - guess as i64)).seconds();
        }
        let dt = jiff::civil::DateTime::new(
            year as i16,
            month as i8,
            day as i8,
            (secs / 3600) as i8,
            (secs / 60 % 60) as i8,
            (secs % 60) as i8,
            0,
        );
        let Ok(dt) = dt else { return 0 };
        match tz.to_ambiguous_timestamp(dt).offset() {
            AmbiguousOffset::Unambiguous { offset } => offset.seconds(),
            AmbiguousOffset::Gap { before, .. } => before.seconds(),
            AmbiguousOffset::Fold { before, after } => match preferred {
                Some(p) if p == after.seconds() => p,
                _ => before.seconds(),
            },
        }
    }

    /// The zone's name for a value's `timezone` component and the bracketed suffix of its string form.
    pub fn name(&self) -> Option<&Arc<str>> {
        match self {
            Zone::Named(name) => Some(name),
            Zone::Offset(_) => None,
        }
    }
}

/// An offset written as Java's `ZoneId.of` also takes it, and drivers send it as a zone id: after `GMT`, `UTC` or
/// `UT` (`GMT+02:00`, `UTC+2`), or with a one-digit hour (`+2`, `-5:30`). It is kept as the fixed offset it is.
fn prefixed_offset(text: &str) -> Option<Result<i32>> {
    let rest = ["GMT", "UTC", "UT"].iter().find_map(|p| text.strip_prefix(p)).unwrap_or(text);
    let sign = rest.chars().next().filter(|c| matches!(c, '+' | '-'))?;
    let digits = &rest[1..];
    let hour_len = digits.bytes().take_while(u8::is_ascii_digit).count();
    let padded = if hour_len == 1 { format!("{sign}0{digits}") } else { rest.to_string() };
    if padded == text {
        return None;
    }
    parse::offset(&padded).map(|r| r.map_err(|_| invalid(format!("invalid time zone offset '{text}'"))))
}

/// Looks a zone name up in the database.
fn named(text: &str) -> Result<Zone> {
    let tz = TimeZone::get(text).map_err(|_| invalid(format!("unknown time zone '{text}'")))?;
    let name = tz.iana_name().unwrap_or(text);
    Ok(Zone::Named(name.into()))
}

fn lookup(name: &str) -> Option<TimeZone> {
    TimeZone::get(name).ok()
}

fn timestamp(seconds: i64) -> Timestamp {
    let s = seconds.clamp(Timestamp::MIN.as_second(), Timestamp::MAX.as_second());
    Timestamp::from_second(s).unwrap_or(Timestamp::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(y: i64, m: u32, d: u32, h: i64, min: i64) -> i64 {
        civil::days_from_civil(y, m, d) * 86_400 + h * 3600 + min * 60
    }

    #[test]
    fn named_zones_resolve_offsets() {
        let sthlm = Zone::parse("Europe/Stockholm").unwrap();
        assert_eq!(sthlm.name().map(|n| &**n), Some("Europe/Stockholm"));
        assert_eq!(sthlm.offset_for_local(local(1984, 10, 11, 12, 0), None), 3600);
        assert_eq!(sthlm.offset_for_local(local(1984, 7, 20, 12, 0), None), 7200);
        // Local mean time before standard time, as the TCK expects.
        assert_eq!(sthlm.offset_for_local(local(1818, 7, 21, 21, 40), None), 3208);
        let eucla = Zone::parse("Australia/Eucla").unwrap();
        assert_eq!(eucla.offset_for_local(local(2015, 7, 21, 21, 40), None), 8 * 3600 + 45 * 60);
        assert_eq!(Zone::parse("Pacific/Honolulu").unwrap().offset_at(0), -36_000);
        // Far outside the database's range: the nearest rules.
        assert_eq!(sthlm.offset_for_local(local(999_999, 1, 1, 0, 0), None), 3600);
    }

    #[test]
    fn gaps_and_folds() {
        let sthlm = Zone::parse("Europe/Stockholm").unwrap();
        // 2017-03-26 02:30 does not exist: read with the offset before the gap.
        assert_eq!(sthlm.offset_for_local(local(2017, 3, 26, 2, 30), None), 3600);
        // 2017-10-29 02:30 happens twice.
        assert_eq!(sthlm.offset_for_local(local(2017, 10, 29, 2, 30), None), 7200);
        assert_eq!(sthlm.offset_for_local(local(2017, 10, 29, 2, 30), Some(3600)), 3600);
    }

    #[test]
    fn offsets_and_bad_names() {
        assert_eq!(Zone::parse("+01:00").unwrap(), Zone::Offset(3600));
        assert_eq!(Zone::parse("Z").unwrap(), Zone::UTC);
        assert_eq!(Zone::parse("-02:05:07").unwrap(), Zone::Offset(-(2 * 3600 + 5 * 60 + 7)));
        assert!(Zone::parse("Mars/Olympus").is_err());
        assert!(Zone::parse("+25:00").is_err());
        assert!(matches!(Zone::parse("UTC").unwrap(), Zone::Named(_)));
        // A name that starts as `Z` does is a name, not a bad offset.
        assert!(matches!(Zone::parse("Zulu").unwrap(), Zone::Named(_)));
        assert!(Zone::parse("Zz").unwrap_err().to_string().contains("unknown time zone"));
        // As Java's ZoneId.of takes them, and drivers send them.
        assert_eq!(Zone::parse("GMT+02:00").unwrap(), Zone::Offset(7200));
        assert_eq!(Zone::parse("UTC+2").unwrap(), Zone::Offset(7200));
        assert_eq!(Zone::parse("UT-05:30").unwrap(), Zone::Offset(-(5 * 3600 + 30 * 60)));
        assert_eq!(Zone::parse("+2").unwrap(), Zone::Offset(7200));
        assert!(Zone::parse("GMT+25:00").is_err());
        assert!(Zone::parse("GMT+").is_err());
    }
}
