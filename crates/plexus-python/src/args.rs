//! Array arguments: ids and weights arrive as Python ints or as NumPy arrays (anything NumPy can view as one:
//! pyarrow arrays, pandas columns, lists). Contiguous int64/float64 arrays are read in place; anything else goes
//! through `plexus._arrays`, which checks the dtype and converts with one vectorised NumPy call.

use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

use crate::errors;

/// One id or many.
pub enum Ids<'py> {
    One(i64),
    Many(PyReadonlyArray1<'py, i64>),
}

impl Ids<'_> {
    pub fn len(&self) -> Option<usize> {
        match self {
            Ids::One(_) => None,
            Ids::Many(a) => Some(a.len()),
        }
    }
}

fn helper<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("plexus._arrays")?.getattr(name)
}

pub fn ids<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Ids<'py>> {
    // A bool is an int to Python, but `True` for node 1 is a mistake, as a bool array is (refused below).
    if obj.is_instance_of::<PyBool>() {
        return Err(errors::argument(format!("{name} must be an integer id or an array of them, got {obj}")));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj
            .extract::<i64>()
            .map(Ids::One)
            .map_err(|_| errors::argument(format!("{name}: {obj} does not fit in 64 bits")));
    }
    if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i64>>() {
        if a.is_contiguous() {
            return Ok(Ids::Many(a));
        }
    }
    // NumPy integer scalars.
    if !obj.hasattr("__len__")? && obj.hasattr("__index__")? {
        return obj.extract::<i64>().map(Ids::One);
    }
    Ok(Ids::Many(helper(obj.py(), "int64_array")?.call1((obj, name))?.extract()?))
}

/// Many ids, whatever was given.
pub fn id_array<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray1<'py, i64>> {
    match ids(obj, name)? {
        Ids::Many(a) => Ok(a),
        Ids::One(_) => helper(obj.py(), "int64_array")?.call1((obj, name))?.extract(),
    }
}

pub fn float_array<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray1<'py, f64>> {
    if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, f64>>() {
        if a.is_contiguous() {
            return Ok(a);
        }
    }
    helper(obj.py(), "float64_array")?.call1((obj, name))?.extract()
}

/// Checks that arrays given together have one length.
pub fn same_length(lengths: &[(&str, usize)]) -> PyResult<usize> {
    let first = lengths[0].1;
    if let Some((name, n)) = lengths.iter().find(|(_, n)| *n != first) {
        return Err(errors::argument(format!(
            "{} has {} elements but {} has {}: arrays given together must have the same length",
            lengths[0].0, first, name, n
        )));
    }
    Ok(first)
}

/// Ids or weights given to a batch write, one value or many: one value stands for every row.
pub enum Column<'a, T> {
    One(T),
    Many(&'a [T]),
}

impl<'a, T: Copy> Column<'a, T> {
    /// The length of an array given; `None` for one value.
    pub fn len(&self) -> Option<usize> {
        match self {
            Column::One(_) => None,
            Column::Many(v) => Some(v.len()),
        }
    }

    /// The values of `n` rows (a single value repeated).
    pub fn rows(&self, n: usize) -> std::borrow::Cow<'a, [T]> {
        match self {
            Column::One(v) => std::borrow::Cow::Owned(vec![*v; n]),
            Column::Many(v) => std::borrow::Cow::Borrowed(v),
        }
    }
}

/// A single number (not an array), as a weight given for every row.
pub fn one_number(obj: &Bound<'_, PyAny>) -> Option<f64> {
    if obj.hasattr("__len__").unwrap_or(true) || obj.is_instance_of::<PyBool>() {
        return None;
    }
    obj.extract::<f64>().ok()
}

/// The row count of columns given together, from the length of each (`None` for a single value): the length
/// their arrays share (refused when they differ), or 1 when every one is a single value.
pub fn rows_of(columns: &[(&str, Option<usize>)]) -> PyResult<usize> {
    let lengths: Vec<(&str, usize)> = columns.iter().filter_map(|&(name, n)| n.map(|n| (name, n))).collect();
    if lengths.is_empty() {
        return Ok(1);
    }
    same_length(&lengths)
}

/// Refuses an empty label, type or property name: Cypher cannot name it, so what it would make could only be
/// found by scanning.
pub fn names(given: &[(&str, &str)]) -> PyResult<()> {
    match given.iter().find(|(_, value)| value.is_empty()) {
        Some((what, _)) => Err(errors::argument(format!("{what} must not be empty"))),
        None => Ok(()),
    }
}
