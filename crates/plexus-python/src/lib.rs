//! The `plexus` Python package's native module (`plexus._plexus`): the database, transactions, results and
//! their conversions, the graph view and bulk loading. The pure-Python part of the package (`python/plexus`)
//! holds the exception classes, `Duration`, argument conversions and the pandas/Arrow/NetworkX builders.
//!
//! - [`database`]: `Database`, `Transaction`
//! - [`result`], [`columns`], [`entities`], [`values`]: results and the values in them; [`stream`]: results in batches
//! - [`graph`], [`idindex`]: the NetworkX-like graph view over external ids
//! - [`bulk`], [`args`]: loading from arrays and files, array arguments
//! - [`errors`]: the exception each failure becomes

mod args;
mod batch;
mod bufpool;
mod bulk;
mod columns;
mod database;
mod entities;
mod errors;
mod graph;
mod idindex;
mod opened;
mod result;
mod stream;
mod values;
mod view;

use pyo3::prelude::*;

#[pymodule]
fn _plexus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<database::Database>()?;
    m.add_class::<database::Transaction>()?;
    m.add_class::<result::QueryResult>()?;
    m.add_class::<result::Rows>()?;
    m.add_class::<stream::ResultStream>()?;
    m.add_class::<entities::Node>()?;
    m.add_class::<entities::Relationship>()?;
    m.add_class::<entities::Path>()?;
    m.add_class::<graph::Graph>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("NO_ID", idindex::NO_ID)?;
    // NumPy's C API is otherwise loaded at the first array argument, and a Ctrl-C arriving while it loads
    // (imports run Python code) made numpy's bindings panic instead of raising KeyboardInterrupt.
    let _ = numpy::PyArray1::<i64>::zeros(m.py(), 0, false);
    Ok(())
}
