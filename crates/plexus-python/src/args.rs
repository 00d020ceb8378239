//! Array arguments: ids and weights arrive as Python ints or as NumPy arrays (anything NumPy can view as one:
//! pyarrow arrays, pandas columns, lists). Contiguous int64/float64 arrays are read in place; anything else goes
//! through `plexus._arrays`, which checks the dtype and converts with one vectorised NumPy call.

use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

use crate::errors;

/// One value or an array of them (ids, weights): one value stands for every row.
pub enum OneOrMany<'py, T: numpy::Element> {
    One(T),
    Many(PyReadonlyArray1<'py, T>),
}

/// One id or many.
pub type Ids<'py> = OneOrMany<'py, i64>;

impl<T: numpy::Element + Copy> OneOrMany<'_, T> {
    /// The length of an array; `None` for one value.
    pub fn len(&self) -> Option<usize> {
        match self {
            OneOrMany::One(_) => None,
            OneOrMany::Many(a) => Some(a.len()),
        }
    }

    /// The values of `n` rows: an array's in place, one value repeated.
    pub fn rows(&self, n: usize) -> PyResult<std::borrow::Cow<'_, [T]>> {
        Ok(match self {
            OneOrMany::One(v) => std::borrow::Cow::Owned(vec![*v; n]),
            OneOrMany::Many(a) => std::borrow::Cow::Borrowed(a.as_slice()?),
        })
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
            .map(OneOrMany::One)
            .map_err(|_| errors::argument(format!("{name}: {obj} does not fit in 64 bits")));
    }
    if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i64>>() {
        if a.is_contiguous() {
            return Ok(OneOrMany::Many(a));
        }
    }
    // NumPy integer scalars.
    if !obj.hasattr("__len__")? && obj.hasattr("__index__")? {
        return obj.extract::<i64>().map(OneOrMany::One);
    }
    Ok(OneOrMany::Many(helper(obj.py(), "int64_array")?.call1((obj, name))?.extract()?))
}

/// Many ids, whatever was given.
pub fn id_array<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray1<'py, i64>> {
    match ids(obj, name)? {
        OneOrMany::Many(a) => Ok(a),
        OneOrMany::One(_) => helper(obj.py(), "int64_array")?.call1((obj, name))?.extract(),
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

/// Weights: one number for every row, or an array of them.
pub fn weights<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<OneOrMany<'py, f64>> {
    if !obj.hasattr("__len__")? && !obj.is_instance_of::<PyBool>() {
        if let Ok(w) = obj.extract::<f64>() {
            return Ok(OneOrMany::One(w));
        }
    }
    Ok(OneOrMany::Many(float_array(obj, name)?))
}

/// The row count of arguments given together, from the length of each (`None` for one value): the length their
/// arrays share (refused when they differ), or `None` when each is one value.
pub fn common_len(lengths: &[(&str, Option<usize>)]) -> PyResult<Option<usize>> {
    let arrays: Vec<(&str, usize)> = lengths.iter().filter_map(|&(name, n)| n.map(|n| (name, n))).collect();
    if arrays.is_empty() {
        return Ok(None);
    }
    same_length(&arrays).map(Some)
}

/// Refuses an empty label, type or property name: Cypher cannot name it, so what it would make could only be
/// found by scanning.
pub fn names(given: &[(&str, Option<&str>)]) -> PyResult<()> {
    match given.iter().find(|(_, value)| *value == Some("")) {
        Some((what, _)) => Err(errors::argument(format!("{what} must not be empty"))),
        None => Ok(()),
    }
}
