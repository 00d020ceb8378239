//! Columns of a result as flat buffers, for pandas and Arrow: each column's values are copied once, in Rust and
//! without the GIL, into the layout Arrow uses (values, validity bitmap, string offsets and bytes), then handed
//! to Python as NumPy arrays that `plexus._frames` wraps without copying. Only columns whose values have no such
//! layout (nodes, lists, maps, mixed types) are converted value by value.

use numpy::PyArray1;
use plexus::cypher::ResultValue;
use plexus::QueryResult;
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::IntoPyObjectExt;

use crate::values::to_py;

/// Who will read the columns: pandas keeps strings, dates, times, durations and zoned datetimes as Python
/// objects (its own conventions for them differ from Arrow's), Arrow takes them as buffers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Arrow,
    Pandas,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Null,
    Int,
    Float,
    Bool,
    Str,
    Date,
    LocalTime,
    LocalDateTime,
    DateTime,
    Duration,
    Objects,
}

fn kind_of_value(v: &ResultValue) -> Kind {
    match v {
        ResultValue::Null => Kind::Null,
        ResultValue::Int(_) => Kind::Int,
        ResultValue::Float(_) => Kind::Float,
        ResultValue::Bool(_) => Kind::Bool,
        ResultValue::String(_) => Kind::Str,
        ResultValue::Date(_) => Kind::Date,
        ResultValue::LocalTime(_) => Kind::LocalTime,
        ResultValue::LocalDateTime(_) => Kind::LocalDateTime,
        ResultValue::DateTime(_) => Kind::DateTime,
        ResultValue::Duration(_) => Kind::Duration,
        _ => Kind::Objects,
    }
}

fn kind_of(rows: &[Vec<ResultValue>], c: usize, target: Target) -> Kind {
    let mut kind = Kind::Null;
    // Integers and floats share a float column only if every integer is exactly a float: beyond 2^53 the
    // column would silently change them (pyarrow itself refuses such a conversion).
    let mut inexact_int = false;
    for row in rows {
        let k = kind_of_value(&row[c]);
        if let ResultValue::Int(i) = &row[c] {
            inexact_int |= (*i as f64) as i64 != *i || *i == i64::MAX;
        }
        kind = match (kind, k) {
            (_, Kind::Null) => kind,
            (Kind::Null, k) => k,
            (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
            (a, b) if a == b => a,
            _ => return Kind::Objects,
        };
        if kind == Kind::Objects || (kind == Kind::Float && inexact_int) {
            return Kind::Objects;
        }
    }
    for_target(kind, target)
}

fn for_target(kind: Kind, target: Target) -> Kind {
    let pandas_objects = matches!(kind, Kind::Str | Kind::Date | Kind::LocalTime | Kind::Duration | Kind::DateTime);
    if target == Target::Pandas && pandas_objects {
        Kind::Objects
    } else {
        kind
    }
}

enum Buf {
    I64(Vec<i64>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    U8(Vec<u8>),
}

/// One column in Arrow's layout; `kind` and `param` name the Arrow type for `plexus._frames`.
struct Built {
    kind: &'static str,
    param: Option<&'static str>,
    nulls: usize,
    validity: Option<Vec<u8>>,
    buffers: Vec<Buf>,
}

struct Validity {
    bits: Vec<u8>,
    nulls: usize,
}

impl Validity {
    fn new(n: usize) -> Self {
        Validity { bits: vec![0; n.div_ceil(8)], nulls: 0 }
    }
    fn set(&mut self, i: usize, valid: bool) {
        if valid {
            self.bits[i / 8] |= 1 << (i % 8);
        } else {
            self.nulls += 1;
        }
    }
    fn finish(self, kind: &'static str, param: Option<&'static str>, buffers: Vec<Buf>) -> Built {
        let validity = (self.nulls > 0).then_some(self.bits);
        Built { kind, param, nulls: self.nulls, validity, buffers }
    }
}

/// Fixed-width values: `f` gives each non-null value, or `None` when it does not fit (the column then falls back
/// to Python objects).
fn fixed<T: Default + Copy>(
    rows: &[Vec<ResultValue>],
    c: usize,
    f: impl Fn(&ResultValue) -> Option<T>,
) -> Option<(Vec<T>, Validity)> {
    let mut values = Vec::with_capacity(rows.len());
    let mut valid = Validity::new(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let v = &row[c];
        if matches!(v, ResultValue::Null) {
            values.push(T::default());
            valid.set(i, false);
        } else {
            values.push(f(v)?);
            valid.set(i, true);
        }
    }
    Some((values, valid))
}

/// Timestamps in nanoseconds when every value fits, else microseconds.
fn timestamps(
    rows: &[Vec<ResultValue>],
    c: usize,
    parts: impl Fn(&ResultValue) -> Option<(i64, u32)>,
) -> Option<(Vec<i64>, Validity, &'static str)> {
    let ns = fixed(rows, c, |v| {
        let (s, n) = parts(v)?;
        s.checked_mul(1_000_000_000)?.checked_add(i64::from(n))
    });
    if let Some((v, valid)) = ns {
        return Some((v, valid, "ns"));
    }
    let us = fixed(rows, c, |v| {
        let (s, n) = parts(v)?;
        s.checked_mul(1_000_000)?.checked_add(i64::from(n / 1000))
    })?;
    Some((us.0, us.1, "us"))
}

/// Column `c` in Arrow's layout, or `None` when it has none. Built first as the kind of its first non-null
/// value, in one pass over the rows; a column whose values turn out to differ in kind is then classified and
/// built again.
fn column(rows: &[Vec<ResultValue>], c: usize, target: Target) -> Option<Built> {
    let first = rows.iter().map(|r| kind_of_value(&r[c])).find(|&k| k != Kind::Null).unwrap_or(Kind::Null);
    match for_target(first, target) {
        Kind::Objects => None,
        guess => build(rows, c, guess).or_else(|| build(rows, c, kind_of(rows, c, target))),
    }
}

/// Builds column `c` as `kind`; `None` when a value does not have that kind (an integer in a float column
/// does) or does not fit its layout.
fn build(rows: &[Vec<ResultValue>], c: usize, kind: Kind) -> Option<Built> {
    Some(match kind {
        Kind::Null => Validity { bits: Vec::new(), nulls: rows.len() }.finish("null", None, Vec::new()),
        Kind::Int => {
            let (v, valid) = fixed(rows, c, |v| if let ResultValue::Int(i) = v { Some(*i) } else { None })?;
            valid.finish("int64", None, vec![Buf::I64(v)])
        }
        Kind::Float => {
            let (v, valid) = fixed(rows, c, |v| match v {
                ResultValue::Float(f) => Some(*f),
                ResultValue::Int(i) => Some(*i as f64),
                _ => None,
            })?;
            valid.finish("float64", None, vec![Buf::F64(v)])
        }
        Kind::Bool => {
            let mut bits = vec![0u8; rows.len().div_ceil(8)];
            let mut valid = Validity::new(rows.len());
            for (i, row) in rows.iter().enumerate() {
                match &row[c] {
                    ResultValue::Bool(b) => {
                        bits[i / 8] |= u8::from(*b) << (i % 8);
                        valid.set(i, true);
                    }
                    ResultValue::Null => valid.set(i, false),
                    _ => return None,
                }
            }
            valid.finish("bool", None, vec![Buf::U8(bits)])
        }
        Kind::Str => {
            let mut offsets = Vec::with_capacity(rows.len() + 1);
            let mut data = Vec::new();
            let mut valid = Validity::new(rows.len());
            offsets.push(0i64);
            for (i, row) in rows.iter().enumerate() {
                match &row[c] {
                    ResultValue::String(s) => {
                        data.extend_from_slice(s.as_bytes());
                        valid.set(i, true);
                    }
                    ResultValue::Null => valid.set(i, false),
                    _ => return None,
                }
                offsets.push(data.len() as i64);
            }
            valid.finish("string", None, vec![Buf::I64(offsets), Buf::U8(data)])
        }
        Kind::Date => {
            let (v, valid) =
                fixed(rows, c, |v| if let ResultValue::Date(d) = v { i32::try_from(d.days).ok() } else { None })?;
            valid.finish("date32", None, vec![Buf::I32(v)])
        }
        Kind::LocalTime => {
            let (v, valid) = fixed(rows, c, |v| if let ResultValue::LocalTime(t) = v { Some(t.nanos) } else { None })?;
            valid.finish("time64", Some("ns"), vec![Buf::I64(v)])
        }
        Kind::LocalDateTime => {
            let (v, valid, unit) = timestamps(rows, c, |v| match v {
                ResultValue::LocalDateTime(t) => Some((t.seconds, t.nanos)),
                _ => None,
            })?;
            valid.finish("timestamp", Some(unit), vec![Buf::I64(v)])
        }
        Kind::DateTime => {
            let (v, valid, unit) = timestamps(rows, c, |v| match v {
                ResultValue::DateTime(t) => Some((t.seconds, t.nanos)),
                _ => None,
            })?;
            valid.finish("timestamp_utc", Some(unit), vec![Buf::I64(v)])
        }
        Kind::Duration => {
            let (v, valid) = fixed(rows, c, |v| {
                let ResultValue::Duration(d) = v else { return None };
                let months = i32::try_from(d.months).ok()?;
                let days = i32::try_from(d.days).ok()?;
                let nanos = d.seconds.checked_mul(1_000_000_000)?.checked_add(i64::from(d.nanos))?;
                let mut bytes = [0u8; 16];
                bytes[..4].copy_from_slice(&months.to_le_bytes());
                bytes[4..8].copy_from_slice(&days.to_le_bytes());
                bytes[8..].copy_from_slice(&nanos.to_le_bytes());
                Some(bytes)
            })?;
            valid.finish("interval", None, vec![Buf::U8(v.concat())])
        }
        Kind::Objects => return None,
    })
}

/// Every column, built on as many threads as there are cores and columns when the result is large: each
/// column is its own pass over the rows.
fn columns_in_parallel(rows: &[Vec<ResultValue>], columns: usize, target: Target) -> Vec<Option<Built>> {
    const PARALLEL_ROWS: usize = 1 << 15;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let threads = cores.min(columns);
    if threads <= 1 || rows.len() < PARALLEL_ROWS {
        return (0..columns).map(|c| column(rows, c, target)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut built: Vec<(usize, Option<Built>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let c = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if c >= columns {
                            return mine;
                        }
                        mine.push((c, column(rows, c, target)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a column worker panicked")).collect()
    });
    built.sort_by_key(|(c, _)| *c);
    built.into_iter().map(|(_, b)| b).collect()
}

fn buffer<'py>(py: Python<'py>, b: Buf) -> Bound<'py, PyAny> {
    match b {
        Buf::I64(v) => PyArray1::from_vec(py, v).into_any(),
        Buf::F64(v) => PyArray1::from_vec(py, v).into_any(),
        Buf::I32(v) => PyArray1::from_vec(py, v).into_any(),
        Buf::U8(v) => PyArray1::from_vec(py, v).into_any(),
    }
}

/// Every column of `result` as a tuple `(kind, length, null_count, validity, buffers, param)`; `kind` is
/// `"object"` with `buffers` a list of Python values when the column has no flat layout.
pub fn export<'py>(py: Python<'py>, result: &QueryResult, target: Target) -> PyResult<Bound<'py, PyList>> {
    let rows = &result.rows;
    let n = rows.len();
    let built: Vec<Option<Built>> = py.detach(|| columns_in_parallel(rows, result.columns.len(), target));
    let mut out = Vec::with_capacity(built.len());
    for (c, b) in built.into_iter().enumerate() {
        let item = match b {
            Some(b) => {
                let validity = b.validity.map(|v| PyArray1::from_vec(py, v).into_any());
                let buffers = PyList::new(py, b.buffers.into_iter().map(|x| buffer(py, x)))?;
                (b.kind, n, b.nulls, validity, buffers, b.param).into_pyobject(py)?
            }
            None => {
                let values = rows.iter().map(|r| to_py(py, &r[c])).collect::<PyResult<Vec<_>>>()?;
                let values = PyList::new(py, values)?;
                ("object", n, 0usize, None::<Bound<'py, PyAny>>, values, None::<&str>).into_pyobject(py)?
            }
        };
        out.push(item.into_bound_py_any(py)?);
    }
    PyList::new(py, out)
}
