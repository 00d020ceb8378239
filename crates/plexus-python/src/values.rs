//! Values between Python and Plexus: query parameters in, result values out.
//!
//! Temporal values map onto the `datetime` module (Python keeps microseconds, so nanoseconds are rounded down on
//! the way out); durations that a `timedelta` cannot hold exactly become `plexus.Duration` (see its docstring).
//! The temporal constructors are looked up once per interpreter and called by attribute, which also keeps this
//! module within the stable ABI.

use std::collections::BTreeMap;
use std::sync::Arc;

use plexus::cypher::{ResultValue, Value};
use plexus::value::{Crs, Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time};
use plexus::{NodeId, RelId};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::entities::{Node, Path, Relationship};
use crate::errors;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
/// `date.toordinal()` of 1970-01-01.
const EPOCH_ORDINAL: i64 = 719_163;

/// The Python classes temporal values are made of.
struct Temporal {
    date: Py<PyAny>,
    time: Py<PyAny>,
    datetime: Py<PyAny>,
    timedelta: Py<PyAny>,
    timezone: Py<PyAny>,
    /// `zoneinfo.ZoneInfo`, when the interpreter has it (3.9+) and its zone data is usable.
    zoneinfo: Option<Py<PyAny>>,
    duration: Py<PyAny>,
    point: Py<PyAny>,
}

static TEMPORAL: PyOnceLock<Temporal> = PyOnceLock::new();

fn temporal(py: Python<'_>) -> PyResult<&Temporal> {
    TEMPORAL.get_or_try_init(py, || {
        let dt = py.import("datetime")?;
        let get = |name: &str| dt.getattr(name).map(Bound::unbind);
        let zoneinfo = py.import("zoneinfo").and_then(|m| m.getattr("ZoneInfo")).ok().map(Bound::unbind);
        Ok(Temporal {
            date: get("date")?,
            time: get("time")?,
            datetime: get("datetime")?,
            timedelta: get("timedelta")?,
            timezone: get("timezone")?,
            zoneinfo,
            duration: py.import("plexus._types")?.getattr("Duration")?.unbind(),
            point: py.import("plexus._types")?.getattr("Point")?.unbind(),
        })
    })
}

/// (year, month, day) of a day count since 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn check_year(y: i64, what: &str) -> PyResult<()> {
    if (1..=9999).contains(&y) {
        Ok(())
    } else {
        Err(errors::conversion(format!("{what} in year {y} is outside Python's range (years 1 to 9999)")))
    }
}

/// (hour, minute, second, microsecond) of nanoseconds since midnight.
fn clock(nanos: i64) -> (i64, i64, i64, i64) {
    let secs = nanos.div_euclid(NANOS_PER_SECOND);
    let micros = nanos.rem_euclid(NANOS_PER_SECOND) / 1000;
    (secs / 3600 % 24, secs / 60 % 60, secs % 60, micros)
}

fn offset_tz<'py>(
    py: Python<'py>,
    t: &Temporal,
    offset_seconds: i32,
    name: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let delta = t.timedelta.bind(py).call1((0, offset_seconds))?;
    match name {
        Some(n) => t.timezone.bind(py).call1((delta, n)),
        None => t.timezone.bind(py).call1((delta,)),
    }
}

fn naive_datetime<'py>(
    py: Python<'py>,
    t: &Temporal,
    seconds: i64,
    nanos: u32,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let (y, m, d) = civil_from_days(seconds.div_euclid(SECONDS_PER_DAY));
    check_year(y, what)?;
    let (h, mi, s, _) = clock(seconds.rem_euclid(SECONDS_PER_DAY) * NANOS_PER_SECOND);
    t.datetime.bind(py).call1((y, m, d, h, mi, s, nanos / 1000))
}

/// A Cypher duration as a `timedelta` when that is exact (it comes back as the same duration), else as a
/// `plexus.Duration`.
fn duration<'py>(py: Python<'py>, t: &Temporal, d: &Duration) -> PyResult<Bound<'py, PyAny>> {
    if d.months == 0 && d.nanos % 1000 == 0 {
        let total =
            (d.days as i128 * SECONDS_PER_DAY as i128 + d.seconds as i128) * 1_000_000 + (d.nanos / 1000) as i128;
        let (days, seconds, micros) = timedelta_parts(total);
        if days.abs() <= 999_999_999 && duration_of_timedelta(days, seconds, micros, 0) == *d {
            return t.timedelta.bind(py).call1((days, seconds, micros));
        }
    }
    t.duration.bind(py).call1((d.months, d.days, d.seconds, d.nanos))
}

/// A span of microseconds as Python's `timedelta` holds it: days (any sign), then seconds in [0, 86400) and
/// microseconds in [0, 1,000,000).
fn timedelta_parts(total_micros: i128) -> (i64, i64, i64) {
    let per_day = SECONDS_PER_DAY as i128 * 1_000_000;
    let days = total_micros.div_euclid(per_day);
    let rest = total_micros.rem_euclid(per_day);
    (days as i64, (rest / 1_000_000) as i64, (rest % 1_000_000) as i64)
}

/// The duration a `timedelta` (its normalised parts, and the nanoseconds a pandas `Timedelta` adds) stands for.
/// A negative one keeps its sign on every part: Python holds `timedelta(hours=-1)` as -1 day + 23 hours, which
/// as a Cypher duration (`P-1DT23H`) would differ from `PT-1H` across a daylight-saving change.
fn duration_of_timedelta(days: i64, seconds: i64, micros: i64, extra_nanos: i64) -> Duration {
    const NANOS_PER_DAY: i128 = SECONDS_PER_DAY as i128 * NANOS_PER_SECOND as i128;
    let total = ((days as i128 * SECONDS_PER_DAY as i128 + seconds as i128) * 1_000_000 + micros as i128) * 1000
        + extra_nanos as i128;
    // The span's size split into days, seconds and nanoseconds, each then given the span's sign.
    let (sign, size) = (if total < 0 { -1 } else { 1 }, total.abs());
    let nanos = sign * (size % NANOS_PER_SECOND as i128) as i64;
    Duration {
        months: 0,
        days: sign * (size / NANOS_PER_DAY) as i64,
        seconds: sign * (size % NANOS_PER_DAY / NANOS_PER_SECOND as i128) as i64 + nanos.div_euclid(NANOS_PER_SECOND),
        nanos: nanos.rem_euclid(NANOS_PER_SECOND) as i32,
    }
}

/// A result value as a Python object.
pub fn to_py<'py>(py: Python<'py>, v: &ResultValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        ResultValue::Null => py.None().into_bound(py),
        ResultValue::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        ResultValue::Int(i) => i.into_bound_py_any(py)?,
        ResultValue::Float(f) => PyFloat::new(py, *f).into_any(),
        ResultValue::String(s) => PyString::new(py, s).into_any(),
        ResultValue::Bytes(b) => PyBytes::new(py, b).into_any(),
        ResultValue::List(items) => {
            let items = items.iter().map(|i| to_py(py, i)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        ResultValue::Map(m) => map_to_py(py, m)?.into_any(),
        ResultValue::Node(n) => Bound::new(py, Node::from_data(py, n)?)?.into_any(),
        ResultValue::Rel(r) => Bound::new(py, Relationship::from_data(py, r)?)?.into_any(),
        ResultValue::Path(p) => Bound::new(py, Path::from_data(py, p)?)?.into_any(),
        ResultValue::Date(d) => date(py, d)?,
        ResultValue::LocalTime(lt) => {
            let t = temporal(py)?;
            let (h, m, s, us) = clock(lt.nanos);
            t.time.bind(py).call1((h, m, s, us))?
        }
        ResultValue::Time(tm) => {
            let t = temporal(py)?;
            let (h, m, s, us) = clock(tm.nanos);
            let tz = offset_tz(py, t, tm.offset_seconds, None)?;
            t.time.bind(py).call1((h, m, s, us, tz))?
        }
        ResultValue::LocalDateTime(ldt) => {
            naive_datetime(py, temporal(py)?, ldt.seconds, ldt.nanos, "a local datetime")?
        }
        ResultValue::DateTime(dt) => datetime(py, dt)?,
        ResultValue::Duration(d) => duration(py, temporal(py)?, d)?,
        ResultValue::Point(p) => {
            let z = p.z();
            temporal(py)?.point.bind(py).call1((p.crs().srid(), p.x(), p.y(), z))?
        }
    })
}

pub fn map_to_py<'py>(py: Python<'py>, m: &BTreeMap<Arc<str>, ResultValue>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in m {
        dict.set_item(&**k, to_py(py, v)?)?;
    }
    Ok(dict)
}

fn date<'py>(py: Python<'py>, d: &Date) -> PyResult<Bound<'py, PyAny>> {
    let ordinal = d.days + EPOCH_ORDINAL;
    if !(1..=3_652_059).contains(&ordinal) {
        return Err(errors::conversion(format!("the date {} days from 1970-01-01 is outside Python's range", d.days)));
    }
    temporal(py)?.date.bind(py).call_method1("fromordinal", (ordinal,))
}

fn with_tz<'py>(naive: Bound<'py, PyAny>, tz: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(naive.py());
    kwargs.set_item("tzinfo", tz)?;
    naive.call_method("replace", (), Some(&kwargs))
}

fn datetime<'py>(py: Python<'py>, dt: &DateTime) -> PyResult<Bound<'py, PyAny>> {
    let t = temporal(py)?;
    // The wall time is built directly (not from UTC, which may fall outside Python's years when the wall time
    // does not: 0001-01-01T00:30+01:00). A named zone becomes a `ZoneInfo` when the interpreter knows it and
    // agrees on the offset (`fold` picks the later of two in a repeated hour); otherwise the offset, named.
    let local = dt.seconds + i64::from(dt.offset_seconds);
    let naive = naive_datetime(py, t, local, dt.nanos, "a datetime")?;
    if let (Some(zone), Some(zoneinfo)) = (&dt.zone, &t.zoneinfo) {
        if let Ok(tz) = zoneinfo.bind(py).call1((&**zone,)) {
            for fold in [0, 1] {
                let kwargs = PyDict::new(py);
                kwargs.set_item("tzinfo", &tz)?;
                kwargs.set_item("fold", fold)?;
                let aware = naive.call_method("replace", (), Some(&kwargs))?;
                if offset_seconds(&aware.call_method0("utcoffset")?)? == dt.offset_seconds {
                    return Ok(aware);
                }
            }
        }
    }
    with_tz(naive, offset_tz(py, t, dt.offset_seconds, dt.zone.as_deref())?)
}

/// A Python string as UTF-8; one holding a lone surrogate (which UTF-8 cannot encode) is the package's
/// `ArgumentError`, not a `UnicodeEncodeError` from deep inside a call.
fn text_of<'a>(s: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, str>> {
    s.to_cow().map_err(|_| {
        errors::argument(
            "a string holding a lone surrogate (\\ud800-\\udfff) cannot be stored: it is not valid Unicode text",
        )
    })
}

fn int_attr(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<i64> {
    obj.getattr(name)?.extract()
}

/// Seconds of a `timedelta` (days folded in), for UTC offsets.
/// A UTC offset in whole seconds, as Cypher's temporal values keep it; Python allows microseconds in an offset,
/// which cannot be stored without moving the instant, so one is refused.
fn offset_seconds(delta: &Bound<'_, PyAny>) -> PyResult<i32> {
    if int_attr(delta, "microseconds")? != 0 {
        return Err(crate::errors::argument(format!(
            "the UTC offset {} has a fraction of a second; offsets are kept in whole seconds",
            delta.str()?
        )));
    }
    let s = int_attr(delta, "days")? * SECONDS_PER_DAY + int_attr(delta, "seconds")?;
    Ok(s as i32)
}

fn nanos_of_day(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    let (h, m, s, us) =
        (int_attr(obj, "hour")?, int_attr(obj, "minute")?, int_attr(obj, "second")?, int_attr(obj, "microsecond")?);
    Ok(((h * 60 + m) * 60 + s) * NANOS_PER_SECOND + us * 1000)
}

/// A Python object as a query parameter value.
pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    from_py_at(obj, 0)
}

/// A NumPy `datetime64` or `timedelta64` scalar as nanoseconds (`None` for `NaT`), at its own precision, and
/// its unit with how many of them make a tick.
fn numpy_nanos(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<(i128, String, i64)>> {
    let py = obj.py();
    let numpy = py.import("numpy")?;
    if numpy.call_method1("isnat", (obj,))?.is_truthy()? {
        return Ok(None);
    }
    let (unit, count): (String, i64) = numpy.call_method1("datetime_data", (obj.getattr("dtype")?,))?.extract()?;
    let ticks = obj.call_method1("astype", ("int64",))?.extract::<i64>()?;
    let nanos_per_tick: i64 = match unit.as_str() {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "D" => 86_400_000_000_000,
        "W" if what == "timedelta64" => 7 * 86_400_000_000_000,
        _ => return Err(errors::argument(format!("a {what} in units of '{unit}' cannot be passed to Plexus"))),
    };
    let nanos = i128::from(ticks) * i128::from(nanos_per_tick) * i128::from(count.max(1));
    Ok(Some((nanos, unit, count)))
}

/// A NumPy `datetime64` as a local date-time (NumPy's times have no zone), at its own precision; `NaT` is null.
/// One in whole days (`datetime64('2020-01-01')`, unit `D`) is a date, as pandas and NumPy read it.
fn numpy_datetime(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let Some((nanos, unit, count)) = numpy_nanos(obj, "datetime64")? else { return Ok(Value::Null) };
    if unit == "D" && count == 1 {
        let days = i64::try_from(nanos / i128::from(NANOS_PER_SECOND * 86_400))
            .map_err(|_| errors::argument("a datetime64 out of range"))?;
        return Ok(Value::Date(Date { days }));
    }
    let seconds = nanos.div_euclid(i128::from(NANOS_PER_SECOND));
    let seconds = i64::try_from(seconds).map_err(|_| errors::argument("a datetime64 out of range"))?;
    let nanos = nanos.rem_euclid(i128::from(NANOS_PER_SECOND)) as u32;
    Ok(Value::LocalDateTime(LocalDateTime { seconds, nanos }))
}

/// A NumPy `timedelta64` as a duration, exact at any unit; `NaT` is null. One in days or weeks is a duration of
/// days, as `timedelta(days=1)` and `pd.Timedelta("1D")` are (a day in a zone is not always 24 hours); any other
/// unit, of seconds and nanoseconds.
fn numpy_timedelta(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let Some((nanos, unit, _)) = numpy_nanos(obj, "timedelta64")? else { return Ok(Value::Null) };
    if unit == "D" || unit == "W" {
        let days = i64::try_from(nanos / i128::from(NANOS_PER_SECOND * 86_400))
            .map_err(|_| errors::argument("a timedelta64 out of range"))?;
        return Ok(Value::duration(Duration { months: 0, days, seconds: 0, nanos: 0 }));
    }
    let seconds = nanos.div_euclid(i128::from(NANOS_PER_SECOND));
    let seconds = i64::try_from(seconds).map_err(|_| errors::argument("a timedelta64 out of range"))?;
    let nanos = nanos.rem_euclid(i128::from(NANOS_PER_SECOND)) as i32;
    Ok(Value::duration(Duration { months: 0, days: 0, seconds, nanos }))
}

fn point_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let srid: i64 = obj.getattr("srid")?.extract()?;
    let coords: Vec<f64> = if obj.is_instance_of::<PyTuple>() {
        obj.extract()?
    } else {
        let mut c: Vec<f64> = vec![obj.getattr("x")?.extract()?, obj.getattr("y")?.extract()?];
        if let Some(z) = obj.getattr("z")?.extract::<Option<f64>>()? {
            c.push(z);
        }
        c
    };
    let crs = Crs::from_srid(srid)
        .ok_or_else(|| errors::argument(format!("a point's SRID must be 4326, 4979, 7203 or 9157, not {srid}")))?;
    Point::new(crs, &coords).map(Value::from_point).map_err(errors::argument)
}

/// How deeply a value passed in may nest lists, tuples and dicts: conversion recurses once per level, and a
/// list that contains itself would recurse until the stack overflows.
const MAX_NESTING: usize = 200;

fn from_py_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    let py = obj.py();
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if depth > MAX_NESTING {
        return Err(errors::argument(format!(
            "a value nests lists or dicts more than {MAX_NESTING} levels deep (or contains itself)"
        )));
    }
    let from_py = |item: &Bound<'_, PyAny>| from_py_at(item, depth + 1);
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj
            .extract::<i64>()
            .map(Value::Int)
            .map_err(|_| errors::argument(format!("the integer {obj} does not fit in 64 bits")));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(Arc::from(&*text_of(s)?)));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::Bytes(Arc::from(b.as_bytes())));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Value::Bytes(Arc::from(b.to_vec())));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        // Its bytes, in order (`tolist` below would make a list of integers of it).
        let bytes = obj.call_method0("tobytes")?;
        return Ok(Value::Bytes(Arc::from(bytes.cast::<PyBytes>()?.as_bytes())));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return Ok(Value::list(list.iter().map(|i| from_py(&i)).collect::<PyResult<_>>()?));
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        // The `neo4j` driver's points are tuples of coordinates with an `srid` (asked only of tuple subclasses:
        // a failed attribute lookup is costly, and plain tuples are common).
        if !obj.is_exact_instance_of::<PyTuple>() && obj.hasattr("srid")? {
            return point_from_py(obj);
        }
        return Ok(Value::list(tuple.iter().map(|i| from_py(&i)).collect::<PyResult<_>>()?));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = plexus::cypher::Map::new();
        for (k, v) in dict.iter() {
            let key =
                k.cast::<PyString>().map_err(|_| errors::argument(format!("map keys must be strings, not {k}")))?;
            map.insert(Arc::from(&*text_of(key)?), from_py(&v)?);
        }
        return Ok(Value::map(map));
    }
    if let Ok(n) = obj.cast::<Node>() {
        return Ok(Value::Node(NodeId(n.get().id)));
    }
    if let Ok(r) = obj.cast::<Relationship>() {
        return Ok(Value::Rel(RelId(r.get().id)));
    }
    let t = temporal(py)?;
    if obj.is_instance(t.point.bind(py))? {
        return point_from_py(obj);
    }
    // `datetime` is a subclass of `date`: test it first.
    if obj.is_instance(t.datetime.bind(py))? {
        // pandas' missing time is a `datetime` too.
        if obj.get_type().name()? == "NaTType" {
            return Ok(Value::Null);
        }
        let days =
            days_from_civil(int_attr(obj, "year")?, int_attr(obj, "month")? as u32, int_attr(obj, "day")? as u32);
        let mut of_day = nanos_of_day(obj)?;
        if !obj.is_exact_instance(t.datetime.bind(py)) {
            // A pandas `Timestamp` is a `datetime` with nanoseconds past its microseconds.
            of_day += obj.getattr("nanosecond").ok().and_then(|n| n.extract::<i64>().ok()).unwrap_or(0);
        }
        let local = days * SECONDS_PER_DAY + of_day / NANOS_PER_SECOND;
        let nanos = (of_day % NANOS_PER_SECOND) as u32;
        let offset = obj.call_method0("utcoffset")?;
        if offset.is_none() {
            return Ok(Value::LocalDateTime(LocalDateTime { seconds: local, nanos }));
        }
        let offset_seconds = offset_seconds(&offset)?;
        let utc = local - i64::from(offset_seconds);
        let Some(zone) = obj.getattr("tzinfo")?.getattr("key").ok().and_then(|k| k.extract::<String>().ok()) else {
            return Ok(Value::DateTime(Box::new(DateTime { seconds: utc, nanos, offset_seconds, zone: None })));
        };
        // The zone's own offset at that instant, as Cypher's `datetime()` gives it: a wall time in a gap (which
        // Python reads with the offset before it) moves forward, and the name is checked and made canonical.
        let (utc, offset_seconds, zone) =
            plexus::cypher::temporal::zoned_from_client(&zone, utc, false).map_err(|e| {
                errors::argument(format!(
                    "a datetime in the time zone '{zone}' cannot be passed to Plexus ({e}): use a zone of the IANA \
                     database (zoneinfo.ZoneInfo(\"Europe/Berlin\")) or a fixed offset (datetime.timezone)"
                ))
            })?;
        return Ok(Value::DateTime(Box::new(DateTime { seconds: utc, nanos, offset_seconds, zone })));
    }
    if obj.is_instance(t.date.bind(py))? {
        let days =
            days_from_civil(int_attr(obj, "year")?, int_attr(obj, "month")? as u32, int_attr(obj, "day")? as u32);
        return Ok(Value::Date(Date { days }));
    }
    if obj.is_instance(t.time.bind(py))? {
        let nanos = nanos_of_day(obj)?;
        let offset = obj.call_method0("utcoffset")?;
        if offset.is_none() {
            return Ok(Value::LocalTime(LocalTime { nanos }));
        }
        return Ok(Value::Time(Time { nanos, offset_seconds: offset_seconds(&offset)? }));
    }
    if obj.is_instance(t.timedelta.bind(py))? {
        // A pandas `Timedelta` is a `timedelta` with nanoseconds past its microseconds.
        let extra_nanos = obj.getattr("nanoseconds").ok().and_then(|n| n.extract::<i64>().ok()).unwrap_or(0);
        return Ok(Value::duration(duration_of_timedelta(
            int_attr(obj, "days")?,
            int_attr(obj, "seconds")?,
            int_attr(obj, "microseconds")?,
            extra_nanos,
        )));
    }
    if obj.is_instance(t.duration.bind(py))? {
        let nanos = int_attr(obj, "nanoseconds")?;
        let (carry, nanos) = (nanos.div_euclid(NANOS_PER_SECOND), nanos.rem_euclid(NANOS_PER_SECOND));
        return Ok(Value::duration(Duration {
            months: int_attr(obj, "months")?,
            days: int_attr(obj, "days")?,
            seconds: int_attr(obj, "seconds")? + carry,
            nanos: nanos as i32,
        }));
    }
    // NumPy scalars and arrays, and anything else that says it is a number or a sequence of them.
    let type_name = obj.get_type().name()?.to_string();
    if type_name == "bool_" || type_name == "bool" {
        return Ok(Value::Bool(obj.is_truthy()?));
    }
    if type_name == "datetime64" {
        return numpy_datetime(obj);
    }
    if type_name == "timedelta64" {
        return numpy_timedelta(obj);
    }
    if type_name == "NAType" {
        // pandas' missing value, as the nullable columns `df()` gives hold it.
        return Ok(Value::Null);
    }
    if type_name == "ndarray"
        && matches!(obj.getattr("dtype")?.getattr("kind")?.extract::<String>()?.as_str(), "M" | "m")
    {
        // Element by element: `tolist` turns nanosecond times and durations into plain integers.
        return Ok(Value::list(obj.try_iter()?.map(|item| from_py(&item?)).collect::<PyResult<_>>()?));
    }
    if obj.hasattr("tolist")? {
        let plain = obj.call_method0("tolist")?;
        // NumPy's long doubles give a long double back, not a Python number: those are taken as numbers below
        // (recursing on them never ended).
        if !plain.is(obj) && !plain.get_type().is(obj.get_type()) {
            return from_py_at(&plain, depth + 1);
        }
    }
    if obj.hasattr("__index__")? {
        return obj.extract::<i64>().map(Value::Int);
    }
    // A decimal or a fraction would lose digits as a float, which Cypher's numbers are besides integers: refused
    // (as integers past 64 bits are), for the caller to choose the conversion.
    if matches!(type_name.as_str(), "Decimal" | "Fraction") {
        return Err(errors::argument(format!(
            "a {type_name} cannot be passed to Plexus exactly: pass float(x), or str(x) to keep every digit"
        )));
    }
    // A complex number has `__float__` in NumPy, which would drop its imaginary part.
    let complex = type_name.contains("complex") || matches!(type_name.as_str(), "csingle" | "cdouble" | "clongdouble");
    if obj.hasattr("__float__")? && !complex {
        return obj.extract::<f64>().map(Value::Float);
    }
    Err(errors::argument(format!("a {type_name} cannot be passed to Plexus as a value")))
}
