//! Typed property values from CSV text, in the types of Neo4j's importer: integers (`int`, `long`, `short`,
//! `byte`, range-checked), floats, booleans, strings, ISO 8601 temporal values (`date`, `localtime`, `time`,
//! `localdatetime`, `datetime`, `duration`) and arrays of any of these split on the array delimiter.
//!
//! Temporal text is read by Cypher's own parser ([`plexus_cypher::temporal::parse_stored`]): a `date` column
//! accepts and stores exactly what `date(text)` does, and so on for `localtime`, `time`, `localdatetime`,
//! `datetime` and `duration` (week, ordinal and reduced dates, zone names with or without an offset, fractional
//! durations, ...). Text the function refuses is a bad value, with its message (an offset that does not match
//! the named zone, for one). A `time` or `datetime` without an offset is taken as UTC, as Neo4j does with its
//! default time zone. Points are maps (`point`, see [`ScalarType::Point`]).

use std::sync::Arc;

use plexus_storage::value::{Crs, Point};
use plexus_storage::Value;

/// The type of a property column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    Long,
    Int,
    Short,
    Byte,
    Float,
    Boolean,
    String,
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
    Duration,
    /// A point written as a map, `{latitude: 55.6, longitude: 12.9}` or `{x: 1, y: 2, crs: 'cartesian'}`; the
    /// system a value does not name is the column's (`location:point{crs:WGS-84}`), or follows from its keys.
    Point(Option<Crs>),
}

impl ScalarType {
    /// The type named in a header (case-insensitive), e.g. `int`, `double`, `localdatetime`.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        Some(match name.to_ascii_lowercase().as_str() {
            "long" => ScalarType::Long,
            "int" | "integer" => ScalarType::Int,
            "short" => ScalarType::Short,
            "byte" => ScalarType::Byte,
            "float" | "double" => ScalarType::Float,
            "boolean" => ScalarType::Boolean,
            "string" | "char" => ScalarType::String,
            "date" => ScalarType::Date,
            "localtime" => ScalarType::LocalTime,
            "time" => ScalarType::Time,
            "localdatetime" => ScalarType::LocalDateTime,
            "datetime" => ScalarType::DateTime,
            "duration" => ScalarType::Duration,
            "point" => ScalarType::Point(None),
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            ScalarType::Long => "long",
            ScalarType::Int => "int",
            ScalarType::Short => "short",
            ScalarType::Byte => "byte",
            ScalarType::Float => "float",
            ScalarType::Boolean => "boolean",
            ScalarType::String => "string",
            ScalarType::Date => "date",
            ScalarType::LocalTime => "localtime",
            ScalarType::Time => "time",
            ScalarType::LocalDateTime => "localdatetime",
            ScalarType::DateTime => "datetime",
            ScalarType::Duration => "duration",
            ScalarType::Point(_) => "point",
        }
    }
}

/// Parses an integer without allocating: optional sign, decimal digits, no spaces.
#[inline]
pub fn parse_int(field: &[u8]) -> Option<i64> {
    let (neg, digits) = match field.first() {
        Some(b'-') => (true, &field[1..]),
        Some(b'+') => (false, &field[1..]),
        _ => (false, field),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    // Accumulated negatively: the most negative i64 has no positive counterpart.
    let mut v: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_sub(d as i64)?;
    }
    if neg {
        Some(v)
    } else {
        v.checked_neg()
    }
}

fn utf8(text: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(text).map_err(|_| {
        format!("the value '{}' is not valid UTF-8", String::from_utf8_lossy(&text[..text.len().min(100)]))
    })
}

fn not_a(ty: ScalarType, text: &[u8]) -> String {
    format!("'{}' is not a valid {}", String::from_utf8_lossy(&text[..text.len().min(100)]), ty.name())
}

/// Parses one value of type `ty`. Numbers and booleans may have spaces around them (` 3 `), as Neo4j's importer
/// reads them. A boolean is `true` or `false` in any case, anything else a bad value, where Neo4j's importer
/// takes every text but `true` as false: a typo is told rather than stored as false. Every integer type is stored as a 64-bit integer, so `int`, `short` and `byte` columns take any
/// 64-bit value, as Neo4j's importer does by default (it normalises them to `long`).
pub fn parse_scalar(ty: ScalarType, text: &[u8]) -> Result<Value, String> {
    let bad = || not_a(ty, text);
    let trimmed = text.trim_ascii();
    match ty {
        ScalarType::Long | ScalarType::Int | ScalarType::Short | ScalarType::Byte => {
            parse_int(trimmed).map(Value::Int).ok_or_else(bad)
        }
        ScalarType::Float => utf8(trimmed)?.parse::<f64>().map(Value::Float).map_err(|_| bad()),
        ScalarType::Boolean => {
            let text = trimmed;
            if text.eq_ignore_ascii_case(b"true") {
                Ok(Value::Bool(true))
            } else if text.eq_ignore_ascii_case(b"false") {
                Ok(Value::Bool(false))
            } else {
                Err(bad())
            }
        }
        ScalarType::String => Ok(Value::String(Arc::from(utf8(text)?))),
        ScalarType::Date
        | ScalarType::LocalTime
        | ScalarType::Time
        | ScalarType::LocalDateTime
        | ScalarType::DateTime
        | ScalarType::Duration => {
            let text = std::str::from_utf8(text).map_err(|_| format!("{} (not valid UTF-8)", bad()))?;
            match plexus_cypher::temporal::parse_stored(ty.name(), text) {
                Some(Ok(value)) => Ok(value),
                Some(Err(e)) => Err(format!("{} ({e})", bad())),
                None => Err(bad()),
            }
        }
        ScalarType::Point(default) => parse_point(utf8(text)?, default).map_err(|e| format!("{} ({e})", bad())),
    }
}

/// `{key: value, ...}` with numbers, and names that may be quoted (`crs: 'WGS-84'` or `crs: WGS-84`).
pub fn parse_point_map(text: &str) -> Result<Vec<(String, String)>, String> {
    let inner = text.trim().strip_prefix('{').and_then(|t| t.strip_suffix('}')).ok_or("expected {key: value, ...}")?;
    let mut entries = Vec::new();
    for part in inner.split(',').filter(|p| !p.trim().is_empty()) {
        let (key, value) = part.split_once(':').ok_or_else(|| format!("'{}' is not key: value", part.trim()))?;
        let value = value.trim();
        let value = value
            .strip_prefix('\'')
            .and_then(|v| v.strip_suffix('\''))
            .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
            .unwrap_or(value);
        entries.push((key.trim().to_ascii_lowercase(), value.to_string()));
    }
    Ok(entries)
}

/// The coordinate reference system named by a `crs` or `srid` entry.
pub fn named_crs(entries: &[(String, String)]) -> Result<Option<Crs>, String> {
    let get = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    match (get("crs"), get("srid")) {
        (Some(_), Some(_)) => Err("give a crs or an srid, not both".into()),
        (Some(name), None) => Crs::from_name(name).map(Some).ok_or_else(|| format!("unknown crs '{name}'")),
        (None, Some(srid)) => {
            srid.parse().ok().and_then(Crs::from_srid).map(Some).ok_or_else(|| format!("unknown srid '{srid}'"))
        }
        (None, None) => Ok(None),
    }
}

fn parse_point(text: &str, default: Option<Crs>) -> Result<Value, String> {
    let entries = parse_point_map(text)?;
    let number = |k: &str| -> Result<Option<f64>, String> {
        match entries.iter().find(|(key, _)| key == k) {
            None => Ok(None),
            Some((_, v)) => v.parse().map(Some).map_err(|_| format!("{k} '{v}' is not a number")),
        }
    };
    let Some((coords, geographic)) = plexus_storage::point::named_coordinates(number)? else {
        return Err("a point needs x and y, or longitude and latitude".into());
    };
    let crs = match named_crs(&entries)?.or(default) {
        Some(crs) if geographic && !crs.is_geographic() => {
            return Err(format!("longitude and latitude are not coordinates of the {crs} system"))
        }
        // A named system fixes the number of coordinates: `Point::new` refuses others, as `point()` does.
        Some(crs) => crs,
        None if geographic => Crs::Wgs84.with_dimensions(coords.len()),
        None => Crs::Cartesian.with_dimensions(coords.len()),
    };
    Point::new(crs, &coords).map(Value::from)
}

/// Parses a value of type `ty`, or an array of them split on `array_delimiter`, each element's surrounding
/// whitespace removed when `trim_items`.
pub fn parse_typed(
    ty: ScalarType,
    array: bool,
    array_delimiter: u8,
    text: &[u8],
    trim_items: bool,
) -> Result<Value, String> {
    if !array {
        return parse_scalar(ty, text);
    }
    let items: Result<Vec<Value>, String> = text
        .split(|&b| b == array_delimiter)
        .map(|item| parse_scalar(ty, if trim_items { item.trim_ascii() } else { item }))
        .collect();
    let list = Value::List(Arc::from(items?));
    if let ScalarType::Point(_) = ty {
        // Points of one list share a system, as any stored list of points must.
        list.validate()?;
    }
    Ok(list)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use plexus_storage::value::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};

    use super::*;

    fn ok(ty: ScalarType, text: &str) -> Value {
        parse_scalar(ty, text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn points_as_maps() {
        let p = |crs: Crs, c: &[f64]| Value::from(Point::new(crs, c).unwrap());
        assert_eq!(ok(ScalarType::Point(None), "{latitude:55.6, longitude:12.9}"), p(Crs::Wgs84, &[12.9, 55.6]));
        assert_eq!(ok(ScalarType::Point(None), "{x: 1, y: 2, z: 3}"), p(Crs::Cartesian3d, &[1.0, 2.0, 3.0]));
        assert_eq!(ok(ScalarType::Point(None), "{x:1,y:2,crs:'WGS-84'}"), p(Crs::Wgs84, &[1.0, 2.0]));
        assert_eq!(ok(ScalarType::Point(Some(Crs::Wgs84)), "{x:1,y:2}"), p(Crs::Wgs84, &[1.0, 2.0]));
        assert_eq!(ok(ScalarType::Point(None), "{x:1,y:2,srid:9157,z:5}"), p(Crs::Cartesian3d, &[1.0, 2.0, 5.0]));
        for bad in ["1,2", "{x:1}", "{x:a,y:2}", "{latitude:95,longitude:1}", "{x:1,y:2,crs:mars}"] {
            assert!(parse_scalar(ScalarType::Point(None), bad.as_bytes()).is_err(), "{bad}");
        }
        // As many coordinates as the named system has, no more or fewer.
        for bad in ["{x:1,y:2,crs:wgs-84-3d}", "{x:1,y:2,z:3,crs:'cartesian'}", "{x:1,y:2,z:3,srid:7203}"] {
            let e = parse_scalar(ScalarType::Point(None), bad.as_bytes()).unwrap_err();
            assert!(e.contains("coordinate reference system and"), "{bad}: {e}");
        }
        assert!(parse_scalar(ScalarType::Point(Some(Crs::Wgs84)), b"{x:1,y:2,z:3}").is_err());
        let wgs3 = ok(ScalarType::Point(Some(Crs::Wgs84_3d)), "{x:1,y:2,z:3}");
        assert_eq!(wgs3, p(Crs::Wgs84_3d, &[1.0, 2.0, 3.0]));
        let list = parse_typed(ScalarType::Point(None), true, b';', b"{x:1,y:2};{x:3,y:4}", false).unwrap();
        assert_eq!(list, Value::List(vec![p(Crs::Cartesian, &[1.0, 2.0]), p(Crs::Cartesian, &[3.0, 4.0])].into()));
        assert!(parse_typed(ScalarType::Point(None), true, b';', b"{x:1,y:2};{x:3,y:4,z:5}", false).is_err());
    }

    #[test]
    fn numbers_booleans_and_strings() {
        assert_eq!(ok(ScalarType::Long, "-9000000000"), Value::Int(-9_000_000_000));
        assert_eq!(ok(ScalarType::Long, "-9223372036854775808"), Value::Int(i64::MIN));
        assert_eq!(ok(ScalarType::Long, "9223372036854775807"), Value::Int(i64::MAX));
        assert!(parse_scalar(ScalarType::Long, b"9223372036854775808").is_err());
        assert!(parse_scalar(ScalarType::Long, b"-9223372036854775809").is_err());
        assert!(parse_scalar(ScalarType::Date, b"+999999999-12-31").is_ok());
        assert!(parse_scalar(ScalarType::Date, b"-999999999-01-01").is_ok());
        assert!(parse_scalar(ScalarType::Date, b"1000000000-01-01").is_err());
        assert!(parse_scalar(ScalarType::Date, b"99999999999999999999-01-01").is_err());
        assert!(parse_scalar(ScalarType::LocalDateTime, b"99999999999999999-01-01T00:00").is_err());
        assert_eq!(ok(ScalarType::Int, "+42"), Value::Int(42));
        // Every integer column holds 64-bit integers, with spaces around them or not.
        assert_eq!(ok(ScalarType::Int, "3000000000"), Value::Int(3_000_000_000));
        assert_eq!(ok(ScalarType::Byte, " 128 "), Value::Int(128));
        assert_eq!(ok(ScalarType::Boolean, " true\t"), Value::Bool(true));
        assert_eq!(ok(ScalarType::Float, " 1.5 "), Value::Float(1.5));
        assert!(parse_scalar(ScalarType::Int, b"1 2").is_err());
        assert_eq!(parse_scalar(ScalarType::Int, b"abc").unwrap_err(), "'abc' is not a valid int");
        assert_eq!(ok(ScalarType::Float, "1.5e3"), Value::Float(1500.0));
        assert_eq!(ok(ScalarType::Boolean, "TRUE"), Value::Bool(true));
        assert!(parse_scalar(ScalarType::Boolean, b"yes").is_err());
        assert_eq!(ok(ScalarType::String, "héllo"), Value::from("héllo"));
        assert!(parse_scalar(ScalarType::String, b"\xff").is_err());
    }

    #[test]
    fn arrays_split_on_the_array_delimiter() {
        assert_eq!(parse_typed(ScalarType::Int, true, b';', b"1;2;3", false).unwrap(), Value::from(vec![1i64, 2, 3]));
        assert_eq!(parse_typed(ScalarType::String, true, b';', b"a", false).unwrap(), Value::from(vec!["a"]));
        assert!(parse_typed(ScalarType::Int, true, b';', b"1;x", false).is_err());
    }

    #[test]
    fn temporal_values() {
        assert_eq!(ok(ScalarType::Date, "1970-01-01"), Value::Date(Date { days: 0 }));
        assert_eq!(ok(ScalarType::Date, "2024-02-29"), Value::Date(Date { days: 19_782 }));
        assert!(parse_scalar(ScalarType::Date, b"2023-02-29").is_err());
        assert_eq!(ok(ScalarType::LocalTime, "01:02:03.5"), Value::LocalTime(LocalTime { nanos: 3_723_500_000_000 }));
        assert_eq!(
            ok(ScalarType::Time, "12:00+01:00"),
            Value::Time(Time { nanos: 43_200_000_000_000, offset_seconds: 3600 })
        );
        assert_eq!(
            ok(ScalarType::LocalDateTime, "1970-01-02T00:00:01.000000002"),
            Value::LocalDateTime(LocalDateTime { seconds: 86_401, nanos: 2 })
        );
        let dt = |seconds, offset_seconds, zone: Option<&str>| {
            Value::from(DateTime { seconds, nanos: 0, offset_seconds, zone: zone.map(Arc::from) })
        };
        assert_eq!(ok(ScalarType::DateTime, "1970-01-01T01:00+01:00"), dt(0, 3600, None));
        assert_eq!(ok(ScalarType::DateTime, "1970-01-01T00:00:00Z"), dt(0, 0, None));
        assert_eq!(ok(ScalarType::DateTime, "1970-01-01T00:00"), dt(0, 0, None));
        assert_eq!(
            ok(ScalarType::DateTime, "1970-01-01T01:00+0100[Europe/Berlin]"),
            dt(0, 3600, Some("Europe/Berlin"))
        );
        // A zone name alone takes the zone's offset at that time; an offset that is not the zone's is refused.
        assert_eq!(ok(ScalarType::DateTime, "1970-01-01T01:00[Europe/Berlin]"), dt(0, 3600, Some("Europe/Berlin")));
        let mismatch = parse_scalar(ScalarType::DateTime, b"2024-01-01T10:00:00Z[Europe/Berlin]").unwrap_err();
        assert!(mismatch.contains("offset and time zone do not match"), "{mismatch}");
        assert_eq!(ok(ScalarType::Date, "2024-W01-1"), Value::Date(Date { days: 19_723 }));
        assert_eq!(ok(ScalarType::Date, "2024-001"), Value::Date(Date { days: 19_723 }));
        assert_eq!(ok(ScalarType::Date, "2024-01"), Value::Date(Date { days: 19_723 }));
        assert_eq!(ok(ScalarType::DateTime, "1970-01-01"), dt(0, 0, None));
        assert_eq!(ok(ScalarType::Time, "10:00"), Value::Time(Time { nanos: 36_000_000_000_000, offset_seconds: 0 }));
        assert_eq!(ok(ScalarType::LocalTime, "10"), Value::LocalTime(LocalTime { nanos: 36_000_000_000_000 }));
        assert_eq!(
            ok(ScalarType::Duration, "P0.5D"),
            Value::from(Duration { months: 0, days: 0, seconds: 12 * 3600, nanos: 0 })
        );
        assert_eq!(
            ok(ScalarType::Duration, "P1Y2M3W4DT5H6M7.5S"),
            Value::from(Duration { months: 14, days: 25, seconds: 5 * 3600 + 6 * 60 + 7, nanos: 500_000_000 })
        );
        assert_eq!(
            ok(ScalarType::Duration, "-PT1S"),
            Value::from(Duration { months: 0, days: 0, seconds: -1, nanos: 0 })
        );
        assert!(parse_scalar(ScalarType::Duration, b"P").is_err());
        assert!(parse_scalar(ScalarType::Duration, b"1D").is_err());
    }
}
