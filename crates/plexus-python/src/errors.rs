//! Errors crossing into Python: every failure becomes an instance of a class from `plexus.errors`, with the
//! query position, file position or retry hint set as attributes.
//!
//! Work done without the GIL returns [`Failure`]; converting it needs the interpreter, so it happens after the
//! work returns (through `From<Failure> for PyErr`).

use plexus::cypher::{CypherError, ErrorKind, Phase};
use plexus::Error as StorageError;
use plexus_import::import::ImportError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

/// A failure of work done outside the interpreter.
#[derive(Debug)]
pub enum Failure {
    Query { error: CypherError, query: String },
    Storage(StorageError),
    Import(ImportError),
    Argument(String),
    Closed(&'static str),
}

impl From<StorageError> for Failure {
    fn from(e: StorageError) -> Self {
        Failure::Storage(e)
    }
}

impl From<ImportError> for Failure {
    fn from(e: ImportError) -> Self {
        Failure::Import(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        Python::attach(|py| match make(py, f) {
            Ok(e) | Err(e) => e,
        })
    }
}

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let module = ERRORS.get_or_try_init(py, || py.import("plexus.errors").map(Bound::unbind))?;
    module.bind(py).getattr(name)
}

/// An exception of `plexus.errors.<name>` with `message` and attributes.
pub fn raise(py: Python<'_>, name: &str, message: &str, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let instance = class(py, name)?.call1((message,))?;
        for (k, v) in attrs {
            instance.setattr(*k, v)?;
        }
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|e| e)
}

pub fn argument(message: impl AsRef<str>) -> PyErr {
    Python::attach(|py| raise(py, "ArgumentError", message.as_ref(), &[]))
}

pub fn conversion(message: impl AsRef<str>) -> PyErr {
    Python::attach(|py| raise(py, "ConversionError", message.as_ref(), &[]))
}

/// A storage error of a call that is not a query (the graph view, imports): a conflict is a `ConflictError` and
/// an I/O, corruption or lock failure a `StorageError`, while one about the data (a unique key taken, a read-only
/// database, a missing node) is the `QueryError` the same failure raises through Cypher, with its code.
fn storage(py: Python<'_>, e: StorageError) -> PyResult<PyErr> {
    let error = plexus::CypherError::from(e);
    match error.kind {
        ErrorKind::Conflict => Ok(raise(py, "ConflictError", &error.message, &[])),
        ErrorKind::Storage => Ok(raise(py, "StorageError", &error.message, &[])),
        _ => make(py, Failure::Query { error, query: String::new() }),
    }
}

fn make(py: Python<'_>, f: Failure) -> PyResult<PyErr> {
    Ok(match f {
        Failure::Query { error, query } => {
            let message = error.to_string();
            match error.kind {
                ErrorKind::Conflict => raise(py, "ConflictError", &message, &[]),
                ErrorKind::Storage => raise(py, "StorageError", &message, &[]),
                kind => {
                    let phase = match error.phase {
                        Phase::CompileTime => "compile time",
                        Phase::Runtime => "runtime",
                    };
                    let pos = error.position;
                    let attrs = [
                        ("code", kind.name().into_pyobject(py)?.into_any().unbind()),
                        ("detail", error.detail.into_pyobject(py)?.into_any().unbind()),
                        ("phase", phase.into_pyobject(py)?.into_any().unbind()),
                        ("line", pos.map(|p| p.line).into_pyobject(py)?.unbind()),
                        ("column", pos.map(|p| p.column).into_pyobject(py)?.unbind()),
                        ("offset", pos.map(|p| p.offset).into_pyobject(py)?.unbind()),
                        ("query", query.into_pyobject(py)?.into_any().unbind()),
                    ];
                    raise(py, "QueryError", &message, &attrs)
                }
            }
        }
        Failure::Storage(e) | Failure::Import(ImportError::Storage(e)) => storage(py, e)?,
        Failure::Import(e) => match &e {
            ImportError::Storage(s) => raise(py, "StorageError", &s.to_string(), &[]),
            ImportError::Parse { path, error } => {
                let attrs = [
                    ("path", path.display().to_string().into_pyobject(py)?.into_any().unbind()),
                    ("line", error.bad.line.into_pyobject(py)?.into_any().unbind()),
                    ("column", error.bad.column.into_pyobject(py)?.into_any().unbind()),
                ];
                raise(py, "InputError", &e.to_string(), &attrs)
            }
            ImportError::Io { path, .. } => {
                let attrs = [("path", path.display().to_string().into_pyobject(py)?.into_any().unbind())];
                raise(py, "InputError", &e.to_string(), &attrs)
            }
            ImportError::Target(m) => raise(py, "InputError", m, &[]),
        },
        Failure::Argument(m) => raise(py, "ArgumentError", &m, &[]),
        Failure::Closed(what) => raise(py, "ClosedError", &format!("the {what} is closed"), &[]),
    })
}
