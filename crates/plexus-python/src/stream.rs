//! `plexus.ResultStream`: a read-only query's rows in batches of `Result`s, produced as they are asked for, so a
//! result larger than memory can go to pandas or Arrow a batch at a time (`Database.stream`).
//!
//! The stream holds the engine's read cursor, which stays on the thread that opened it (hence `unsendable`:
//! another thread touching the stream gets an error). Each batch is produced with the GIL released and a handle
//! of the database lent for that call, so `close` stops it and waits as for any call; between batches the stream
//! holds no handle, and a stream whose database was closed raises when asked for more.

use std::sync::Arc;

use plexus::cypher::ReadCursor;
use plexus::Params;
use pyo3::prelude::*;

use crate::database::{take_raised, Database, Handle};
use crate::errors::Failure;
use crate::result::QueryResult;

/// Lets the engine's cursor cross `Python::detach`, which asks for `Send` because it may release the GIL: the
/// closure runs on the calling thread and returns to it, so nothing moves between threads.
struct SameThread<T>(T);
// SAFETY: used only around `Python::detach`, which runs its closure on the current thread.
unsafe impl<T> Send for SameThread<T> {}

/// The rows of a read-only query, a :class:`Result` of up to ``batch_size`` rows at a time (the last may hold
/// fewer), all read from the snapshot the query started on. Iterate it, or call :meth:`close` to stop early.
#[pyclass(module = "plexus", name = "ResultStream", unsendable)]
pub struct ResultStream {
    owner: Py<Database>,
    query: String,
    columns: Arc<[String]>,
    /// Rows produced when the stream was opened, not yet handed out.
    first: Vec<Vec<plexus::ResultValue>>,
    cursor: Option<ReadCursor>,
    batch_size: usize,
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
        let interrupt = db.interrupt();
        let params = Arc::new(params);
        let opened = py.detach(|| {
            let stream = db
                .engine()
                .execute_read_streaming(db.read(), query, params, Some(&interrupt), batch_size)
                .map_err(|error| Failure::Query { error, query: query.to_string() });
            SameThread(stream)
        });
        if let Some(raised) = take_raised() {
            return Err(raised);
        }
        let stream = opened.0?;
        Ok(ResultStream {
            owner,
            query: query.to_string(),
            columns: stream.first.columns.clone(),
            first: stream.first.rows,
            cursor: stream.rest,
            batch_size,
        })
    }

    fn batch(&self, rows: Vec<Vec<plexus::ResultValue>>) -> QueryResult {
        QueryResult::new(plexus::QueryResult { columns: self.columns.clone(), rows, ..Default::default() })
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

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<QueryResult>> {
        if self.first.is_empty() && self.cursor.is_none() {
            return Ok(None);
        }
        // A closed database ends its streams, even between rows already produced.
        let db = match self.owner.get().handle() {
            Ok(db) => db,
            Err(e) => {
                self.close();
                return Err(e.into());
            }
        };
        let mut rows = std::mem::take(&mut self.first);
        if rows.len() > self.batch_size {
            self.first = rows.split_off(self.batch_size);
            return Ok(Some(self.batch(rows)));
        }
        if rows.len() < self.batch_size && self.cursor.is_some() {
            let batch_size = self.batch_size;
            let query = &self.query;
            let mut work = SameThread((self.cursor.take(), rows));
            let produced = py.detach(move || {
                let (cursor, rows) = &mut work.0;
                let mut failure = None;
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
                            failure = Some(Failure::Query { error, query: query.clone() });
                        }
                    }
                }
                drop(db);
                SameThread((work, failure))
            });
            let (work, failure) = produced.0;
            let (cursor, produced_rows) = work.0;
            self.cursor = cursor;
            rows = produced_rows;
            if let Some(raised) = take_raised() {
                self.cursor = None;
                return Err(raised);
            }
            if let Some(failure) = failure {
                return Err(failure.into());
            }
            if rows.len() > self.batch_size {
                self.first = rows.split_off(self.batch_size);
            }
        }
        Ok((!rows.is_empty()).then(|| self.batch(rows)))
    }

    /// Stops the query: no more batches are produced, and the snapshot it read is let go.
    fn close(&mut self) {
        self.cursor = None;
        self.first = Vec::new();
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (_exc_type=None, _exc=None, _tb=None))]
    fn __exit__(&mut self, _exc_type: Option<Py<PyAny>>, _exc: Option<Py<PyAny>>, _tb: Option<Py<PyAny>>) -> bool {
        self.close();
        false
    }
}
