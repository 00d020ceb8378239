//! `plexus.ResultStream`: a read-only query's rows in batches of `Result`s, produced as they are asked for, so a
//! result larger than memory can go to pandas or Arrow a batch at a time (`Database.stream`).
//!
//! Each batch is produced with the GIL released and a handle of the database lent for that call, so `close`
//! stops it and waits as for any call. The stream's state sits behind a lock that `Database.close` takes too, to
//! end the stream and let go of its snapshot (which keeps the database, and its directory lock, alive).

use std::sync::Arc;

use parking_lot::Mutex;
use plexus::cypher::ReadCursor;
use plexus::{Params, ResultValue};
use pyo3::prelude::*;

use crate::database::{take_raised, Database, Handle};
use crate::errors::Failure;
use crate::result::QueryResult;

/// What a stream still holds: rows produced and not handed out, and the cursor for the rest.
#[derive(Default)]
struct Pending {
    rows: Vec<Vec<ResultValue>>,
    cursor: Option<ReadCursor>,
}

/// A stream's state, shared with the database that made it so that `close` can end it.
#[derive(Default)]
pub struct StreamSlot {
    pending: Mutex<Pending>,
    /// Set when an interrupt (Ctrl-C) or a failing row ended the stream part-way: iterating again must say the
    /// rest is lost, not end as if the result were complete (as a Python generator would after its error).
    broken: Mutex<Option<&'static str>>,
}

impl StreamSlot {
    /// Ends the stream: nothing more is produced and its snapshot is let go.
    pub fn end(&self) {
        *self.pending.lock() = Pending::default();
    }
}

/// The rows of a read-only query, a :class:`Result` of up to ``batch_size`` rows at a time (the last may hold
/// fewer), all read from the snapshot the query started on. Iterate it, or call :meth:`close` to stop early.
/// ``Database.close`` ends it too.
#[pyclass(module = "plexus", name = "ResultStream", frozen)]
pub struct ResultStream {
    owner: Py<Database>,
    query: String,
    columns: Arc<[String]>,
    batch_size: usize,
    slot: Arc<StreamSlot>,
    /// The Arrow type of each column so far, shared by the batches (`QueryResult::batch`).
    arrow_types: Py<pyo3::types::PyList>,
}

impl ResultStream {
    /// Opens `query` on `db` and produces its first batch.
    pub fn open(
        py: Python<'_>,
        owner: Py<Database>,
        db: &Handle,
        query: &str,
        params: Params,
        batch_size: usize,
    ) -> PyResult<ResultStream> {
        let interrupt = db.own_interrupt();
        let params = Arc::new(params);
        let opened = py.detach(|| {
            db.engine()
                .execute_read_streaming(db.read(), query, params, Some(&interrupt), batch_size)
                .and_then(plexus::cypher::ReadStream::failed_before_any_row)
                .map(|stream| (stream.first, stream.rest))
                .map_err(|error| Failure::Query { error, query: query.to_string() })
        });
        if let Some(raised) = take_raised() {
            return Err(raised);
        }
        let (first, cursor) = opened?;
        let slot =
            Arc::new(StreamSlot { pending: Mutex::new(Pending { rows: first.rows, cursor }), ..Default::default() });
        let arrow_types = pyo3::types::PyList::empty(py).unbind();
        Ok(ResultStream { owner, query: query.to_string(), columns: first.columns, batch_size, slot, arrow_types })
    }

    /// The state `Database.close` ends.
    pub fn slot(&self) -> std::sync::Weak<StreamSlot> {
        Arc::downgrade(&self.slot)
    }

    fn batch(&self, py: Python<'_>, rows: Vec<Vec<ResultValue>>) -> QueryResult {
        let result = plexus::QueryResult { columns: self.columns.clone(), rows, ..Default::default() };
        QueryResult::batch(result, self.arrow_types.clone_ref(py))
    }
}

#[pymethods]
impl ResultStream {
    /// The column names.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.to_vec()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<QueryResult>> {
        if let Some(why) = *self.slot.broken.lock() {
            return Err(Failure::Closed(why).into());
        }
        // A closed database ends its streams, even between rows already produced.
        let db = match self.owner.get().handle() {
            Ok(db) => db,
            Err(e) => {
                py.detach(|| self.slot.end());
                return Err(e.into());
            }
        };
        let batch_size = self.batch_size;
        let query = &self.query;
        // The lock is taken with the GIL released: another thread may hold it while it produces a batch.
        let (rows, failure) = py.detach(|| {
            let mut pending = self.slot.pending.lock();
            let mut failure = None;
            let Pending { rows, cursor } = &mut *pending;
            while let Some(c) = cursor.as_mut() {
                if rows.len() >= batch_size {
                    break;
                }
                match c.next_batch() {
                    Ok(Some(more)) if rows.is_empty() => *rows = more,
                    Ok(Some(more)) => rows.extend(more),
                    Ok(None) => *cursor = None,
                    Err(error) => {
                        *cursor = None;
                        rows.clear();
                        failure = Some(Failure::Query { error, query: query.clone() });
                    }
                }
            }
            let mut batch = std::mem::take(rows);
            if batch.len() > batch_size {
                *rows = batch.split_off(batch_size);
            }
            drop(db);
            (batch, failure)
        });
        if let Some(raised) = take_raised() {
            py.detach(|| self.slot.end());
            *self.slot.broken.lock() =
                Some("stream, interrupted part-way (its remaining rows are lost: run the query again),");
            return Err(raised);
        }
        if let Some(failure) = failure {
            *self.slot.broken.lock() = Some(
                "stream, failed part-way (its remaining rows are lost: the error was raised by an earlier batch),",
            );
            return Err(failure.into());
        }
        Ok((!rows.is_empty()).then(|| self.batch(py, rows)))
    }

    /// Stops the query: no more batches are produced, and the snapshot it read is let go.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.slot.end());
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (_exc_type=None, _exc=None, _tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<Py<PyAny>>,
        _exc: Option<Py<PyAny>>,
        _tb: Option<Py<PyAny>>,
    ) -> bool {
        self.close(py);
        false
    }
}
