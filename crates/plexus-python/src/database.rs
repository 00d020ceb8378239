//! `plexus.Database` and `plexus.Transaction`: opening and closing, queries, explicit transactions.
//!
//! Every call into the engine runs with the GIL released (`Python::detach`), so Python threads run queries in
//! parallel. Locks that a detached thread may hold are only ever taken while detached too, so no thread can
//! wait for one while holding the GIL that the holder needs to return.

use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, RwLock};
use plexus::cypher::Interrupt;
use plexus::{Durability, Options, Params, WriteTxn};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::bulk;
use crate::errors::{self, Failure};
use crate::graph::Graph;
use crate::opened::Opened;
use crate::result::QueryResult;
use crate::values::from_py;

/// An open Plexus database: in memory (``path=None``) or in a directory, created when missing.
///
/// ``durability`` says when a commit is acknowledged: ``"sync"`` (after fsync, the default), ``"batch"``
/// (at once; fsync at least every 10 ms) or ``"off"`` (never fsync; survives a process crash, not an OS crash).
/// ``load_csv`` says which files ``LOAD CSV`` may read: ``"anywhere"`` (the default), ``"none"``, or a directory
/// (``file:///a.csv`` is then ``DIR/a.csv``, and nothing outside it is read).
/// Opening a directory this process already has open shares that database (as re-running a notebook cell
/// does), when asked with the same settings. Use it as a context manager, or call :meth:`close`.
///
/// >>> import plexus
/// >>> with plexus.Database() as db:
/// ...     _ = db.execute("CREATE (:Person {name: $name})", {"name": "Ann"})
/// ...     db.execute("MATCH (p:Person) RETURN p.name AS name").tuples()
/// [('Ann',)]
#[pyclass(module = "plexus", frozen)]
pub struct Database {
    /// The open database, shared with the other handles of this process on its directory ([`crate::opened`]);
    /// `None` once closed.
    inner: RwLock<Option<Arc<Opened>>>,
    path: Option<PathBuf>,
    durability: Durability,
    /// Whether it was opened read-only (still answered after `close`, as `path` and `durability` are).
    read_only: bool,
    /// Explicit transactions begun here and perhaps still open: `close` rolls them back, since each holds the
    /// database open (and its directory locked) for as long as it lives.
    transactions: Mutex<Vec<std::sync::Weak<TxSlot>>>,
    /// Calls running on other threads: `close` stops their queries and waits for them, so that when it returns
    /// the directory is free to open again.
    in_flight: Arc<InFlight>,
    /// Result streams made here and perhaps still open: `close` ends them, since each holds a snapshot, and
    /// with it the database open.
    streams: Mutex<Vec<std::sync::Weak<crate::stream::StreamSlot>>>,
}

#[derive(Default)]
struct InFlight {
    /// How many handles are out. A returned handle notifies `idle` only once `closed` is set, so a call
    /// pays two atomic operations, not a lock.
    calls: AtomicUsize,
    closed: AtomicBool,
    idle_lock: Mutex<()>,
    idle: Condvar,
    /// Tripped by `close`: queries off the main thread share it (nothing to allocate per query), and those on
    /// the main thread ask it with their signal checks.
    closing: Arc<Interrupt>,
}

thread_local! {
    /// Whether this is the process's main thread, where Python runs signal handlers.
    static MAIN_THREAD: bool = {
        // SAFETY: plain system calls.
        unsafe { libc::gettid() == libc::getpid() }
    };
    /// The main thread's interrupt for the database it last queried, reused until a signal trips it: making
    /// one per query would cost a fast query a fifth of its time.
    /// Kept with that database's `closing`, which also names it (held here, its address cannot be reused).
    static MAIN_INTERRUPT: std::cell::RefCell<Option<(Arc<Interrupt>, Arc<Interrupt>)>> = const { std::cell::RefCell::new(None) };
    /// What a signal handler raised while a query ran on the main thread, to raise in turn.
    static RAISED: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// The open database, lent to one call; `close` waits until every one is returned.
pub struct Handle {
    db: plexus::Database,
    in_flight: Arc<InFlight>,
}

impl std::ops::Deref for Handle {
    type Target = plexus::Database;
    fn deref(&self) -> &plexus::Database {
        &self.db
    }
}

impl Handle {
    /// What stops a query run through this handle: `close`, and on the main thread also a signal. There it asks
    /// Python every 100 ms for a pending signal, so Ctrl-C (a notebook's interrupt button) stops a long query
    /// instead of waiting for it (see [`take_raised`]).
    pub(crate) fn interrupt(&self) -> Arc<Interrupt> {
        if !MAIN_THREAD.with(|main| *main) {
            return self.in_flight.closing.clone();
        }
        MAIN_INTERRUPT.with_borrow_mut(|cached| {
            if let Some((closing, interrupt)) = cached.as_ref() {
                if Arc::ptr_eq(closing, &self.in_flight.closing) && !interrupt.is_cancelled() {
                    return interrupt.clone();
                }
            }
            let interrupt = self.own_interrupt();
            *cached = Some((self.in_flight.closing.clone(), interrupt.clone()));
            interrupt
        })
    }

    /// A new interrupt that stops at `close`, and at a signal when asked on the main thread (elsewhere Python has
    /// none to give). A statement that outlives one call (a result stream) takes one of its own: one shared with
    /// the thread's other queries would stop it when a signal stopped any of them.
    pub(crate) fn own_interrupt(&self) -> Arc<Interrupt> {
        let closing = self.in_flight.closing.clone();
        Arc::new(Interrupt::new(None, None).with_probe(std::time::Duration::from_millis(100), move || {
            closing.is_cancelled()
                || (MAIN_THREAD.with(|main| *main)
                    && Python::attach(|py| match py.check_signals() {
                        Ok(()) => false,
                        Err(e) => {
                            RAISED.with_borrow_mut(|raised| *raised = Some(e));
                            true
                        }
                    }))
        }))
    }
}

/// What a signal handler raised while this thread's query ran, if it stopped the query.
pub(crate) fn take_raised() -> Option<PyErr> {
    RAISED.with_borrow_mut(Option::take)
}

/// The outcome of a write that may have been interrupted (closing the database, Ctrl-C) by a call that is not a
/// query (`import_edges`, the graph view's writes): what the signal handler raised (KeyboardInterrupt) if the
/// write stopped before committing; if it had committed, its result stands with `warning`, since raising would
/// tell the caller nothing was written and a rerun would write it twice.
pub(crate) fn committed_unless_raised<T>(py: Python<'_>, out: Result<T, Failure>, warning: &CStr) -> PyResult<T> {
    // A signal that came after the last check (during the commit) is still pending: taken here, it is this
    // call's to answer, instead of Python raising it as the call returns and losing the committed result.
    if let Some(raised) = take_raised().or_else(|| py.check_signals().err()) {
        if out.is_err() {
            return Err(raised);
        }
        PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(), warning, 1)?;
    }
    Ok(out?)
}

impl Drop for Handle {
    fn drop(&mut self) {
        // Sequentially consistent with `close`, which sets `closed` and then reads `calls`: one of the two sees
        // the other's write, so the last handle back never misses a waiting `close`.
        if self.in_flight.calls.fetch_sub(1, Ordering::SeqCst) == 1 && self.in_flight.closed.load(Ordering::SeqCst) {
            let _guard = self.in_flight.idle_lock.lock();
            self.in_flight.idle.notify_all();
        }
    }
}

/// An explicit transaction's state: `None` once committed, rolled back, or ended by `Database.close`.
type TxSlot = Mutex<Option<WriteTxn>>;

impl Database {
    /// A handle to the open database, for one call.
    pub fn handle(&self) -> Result<Handle, Failure> {
        let inner = self.inner.read();
        let db = inner.as_ref().map(|opened| opened.db.clone()).ok_or(Failure::Closed("database"))?;
        // Counted under the read lock, so a `close` (which takes the write lock) sees every handle lent before it.
        self.in_flight.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Handle { db, in_flight: self.in_flight.clone() })
    }

    /// Runs `f` on the open database without cloning its handle (for calls that take well under a microsecond).
    pub fn with<R>(&self, f: impl FnOnce(&plexus::Database) -> R) -> Result<R, Failure> {
        self.inner.read().as_ref().map(|opened| f(&opened.db)).ok_or(Failure::Closed("database"))
    }
}

fn durability_name(durability: Durability) -> &'static str {
    match durability {
        Durability::Sync => "sync",
        Durability::Batch => "batch",
        Durability::Off => "off",
    }
}

/// Query parameters from a mapping (a dict, or any object with `keys()` and item access) of names to values.
pub fn params(parameters: Option<&Bound<'_, PyAny>>) -> PyResult<Params> {
    let mut out = Params::new();
    let Some(p) = parameters.filter(|p| !p.is_none()) else { return Ok(out) };
    let copied;
    let dict = match p.cast::<PyDict>() {
        Ok(dict) => dict,
        Err(_) if p.hasattr("keys")? && p.hasattr("__getitem__")? => {
            copied = PyDict::new(p.py());
            for key in p.call_method0("keys")?.try_iter()? {
                let key = key?;
                copied.set_item(&key, p.get_item(&key)?)?;
            }
            &copied
        }
        Err(_) => return Err(errors::argument("parameters must be a mapping of names to values")),
    };
    for (k, v) in dict.iter() {
        let name =
            k.cast::<PyString>().map_err(|_| errors::argument(format!("parameter names must be strings, not {k}")))?;
        out.insert(name.to_cow()?.into_owned(), from_py(&v)?);
    }
    Ok(out)
}

fn run(
    py: Python<'_>,
    db: &Handle,
    tx: Option<&Mutex<Option<WriteTxn>>>,
    query: &str,
    params: Params,
) -> PyResult<QueryResult> {
    let interrupt = db.interrupt();
    let result = py.detach(|| {
        let outcome = match tx {
            None => db.engine().execute_with(db.store(), query, &params, Some(&interrupt)),
            Some(tx) => {
                let mut guard = tx.lock();
                let Some(tx) = guard.as_mut() else { return Err(Failure::Closed("transaction")) };
                db.engine().execute_in_with(tx, query, &params, Some(&interrupt))
            }
        };
        outcome.map_err(|error| Failure::Query { error, query: query.to_string() })
    });
    if let Some(raised) = take_raised() {
        // The query stopped for a signal: what the handler raised (KeyboardInterrupt) is the answer.
        return Err(raised);
    }
    Ok(QueryResult::new(result?))
}

/// Refuses a directory that holds files but no database, as the command line does
/// ([`plexus::Database::holds_foreign_files`]).
fn refuse_foreign_files(dir: &std::path::Path) -> plexus::Result<()> {
    if plexus::Database::holds_foreign_files(dir)? {
        let why = "holds files but no Plexus database; give a new or empty directory to create one";
        return Err(plexus::Error::io(dir, std::io::Error::new(std::io::ErrorKind::AlreadyExists, why)));
    }
    Ok(())
}

#[pymethods]
impl Database {
    #[new]
    #[pyo3(signature = (path=None, durability="sync", read_only=false, load_csv="anywhere"))]
    fn new(py: Python<'_>, path: Option<PathBuf>, durability: &str, read_only: bool, load_csv: &str) -> PyResult<Self> {
        let durability: Durability = durability.parse().map_err(errors::argument)?;
        // What `LOAD CSV` may read: a program running Cypher it did not write should say "none" or a directory.
        let files = match load_csv {
            "anywhere" => plexus::cypher::FileAccess::Anywhere,
            "none" => plexus::cypher::FileAccess::Nowhere,
            dir => plexus::cypher::FileAccess::Under(PathBuf::from(dir)),
        };
        let opened = match &path {
            None if read_only => return Err(errors::argument("read_only=True needs the path of a database")),
            None => {
                let db = plexus::Database::in_memory();
                db.engine().set_file_access(files);
                Arc::new(Opened::alone(db))
            }
            Some(dir) => {
                let options = Options { durability, ..Options::default() };
                let settings = format!(
                    "durability='{}', read_only={}, load_csv='{load_csv}'",
                    durability_name(durability),
                    if read_only { "True" } else { "False" }
                );
                let shared = py.detach(|| {
                    crate::opened::open_shared(dir, settings, || match read_only {
                        true => plexus::Database::open_read_only(dir),
                        false => {
                            refuse_foreign_files(dir)?;
                            plexus::Database::open_with(dir, options)
                        }
                    })
                })?;
                if shared.fresh {
                    let db = &shared.opened.db;
                    db.engine().set_file_access(files);
                    let report = db.recovery_report();
                    if !report.is_clean() {
                        // Recovery dropped log data: a torn last write after a crash, or (with intact commits
                        // among it) damage. Python shows a warning once per call site; `recovery` keeps the details.
                        let warnings = py.import("warnings")?;
                        warnings.call_method1("warn", (format!("plexus: recovery of {}: {report}", dir.display()),))?;
                    }
                }
                shared.opened
            }
        };
        let read_only = opened.db.is_read_only();
        Ok(Database {
            inner: RwLock::new(Some(opened)),
            path,
            durability,
            read_only,
            transactions: Mutex::new(Vec::new()),
            in_flight: Arc::default(),
            streams: Mutex::new(Vec::new()),
        })
    }

    /// Runs one openCypher statement in its own transaction (committed when it succeeds, nothing left behind when
    /// it fails) and returns its :class:`Result`. ``parameters`` maps names used as ``$name`` to values.
    ///
    /// A statement whose commit meets a write conflict (another thread wrote the same data first) runs again by
    /// itself, taking turns with the other statements that did, before :class:`ConflictError` is raised (after
    /// 60 s waiting for its turn or 2 s of reruns in it); a statement that commits in parts
    /// (``CALL { } IN TRANSACTIONS``) runs again the part that met the conflict, not the whole. In
    /// :meth:`transaction` the conflict is the caller's to retry.
    #[pyo3(signature = (query, parameters=None))]
    fn execute(&self, py: Python<'_>, query: &str, parameters: Option<&Bound<'_, PyAny>>) -> PyResult<QueryResult> {
        let params = params(parameters)?;
        let db = self.handle()?;
        run(py, &db, None, query, params)
    }

    /// Runs a read-only openCypher statement and returns its rows as a :class:`ResultStream` of :class:`Result`
    /// batches of up to ``batch_size`` rows: the first is produced by this call (so that an error in the statement
    /// is raised here, not at the first iteration), the others as the stream is iterated. A result of any size
    /// needs the memory of one batch. All batches read the snapshot the statement started on.
    ///
    /// >>> import plexus
    /// >>> db = plexus.Database()
    /// >>> for batch in db.stream("UNWIND range(1, 250000) AS i RETURN i", batch_size=100_000):
    /// ...     print(len(batch.df()))
    /// 100000
    /// 100000
    /// 50000
    #[pyo3(signature = (query, parameters=None, batch_size=100_000))]
    fn stream(
        slf: Bound<'_, Self>,
        py: Python<'_>,
        query: &str,
        parameters: Option<&Bound<'_, PyAny>>,
        batch_size: i128,
    ) -> PyResult<crate::stream::ResultStream> {
        if batch_size < 1 {
            return Err(errors::argument(format!("batch_size must be at least 1, not {batch_size}")));
        }
        // Past what memory could hold anyway: as many as there are.
        let batch_size = usize::try_from(batch_size).unwrap_or(usize::MAX);
        let params = params(parameters)?;
        let this = slf.get();
        let db = this.handle()?;
        let stream = crate::stream::ResultStream::open(py, slf.clone().unbind(), &db, query, params, batch_size)?;
        let mut open = this.streams.lock();
        open.retain(|s| s.strong_count() > 0);
        open.push(stream.slot());
        Ok(stream)
    }

    /// Starts an explicit write transaction. Use it as a context manager: committed when the block ends normally,
    /// rolled back when it raises. A commit that conflicts with a concurrent one raises
    /// :class:`plexus.ConflictError`; run the whole transaction again.
    fn transaction(slf: Bound<'_, Self>, py: Python<'_>) -> PyResult<Transaction> {
        let this = slf.get();
        let db = this.handle()?;
        let tx = std::sync::Arc::new(Mutex::new(Some(py.detach(|| db.write()))));
        let mut open = this.transactions.lock();
        open.retain(|t| t.strong_count() > 0);
        open.push(std::sync::Arc::downgrade(&tx));
        drop(open);
        Ok(Transaction { owner: slf.unbind(), tx })
    }

    /// A NetworkX-like view for fast reads and edge upserts by external id: nodes with ``label`` identified by
    /// their integer property ``key`` (``plexus import --edges`` and :meth:`import_edges` make label ``Node``,
    /// key ``id``), relationships of ``type`` (all types when ``None``), weights in property ``weight``.
    #[pyo3(signature = (label="Node", key="id", r#type=None, weight="weight"))]
    fn graph(slf: Bound<'_, Self>, label: &str, key: &str, r#type: Option<&str>, weight: &str) -> PyResult<Graph> {
        slf.get().handle()?;
        crate::args::names(&[("label", Some(label)), ("key", Some(key)), ("type", r#type), ("weight", Some(weight))])?;
        Ok(Graph::new(slf.unbind(), label, key, r#type, weight))
    }

    /// Loads edges from arrays of source and target ids (NumPy arrays, pyarrow arrays or pandas columns of
    /// integers), with optional numeric weights stored as property ``weight`` (a NaN weight is a missing one: that
    /// relationship gets no ``weight``). Vertices are nodes with label
    /// ``Node`` and unique key ``id``, created when missing, as ``plexus import --edges`` makes them. Into an
    /// empty database the graph is built in one bulk pass (and checkpointed on disk); otherwise it is added in one
    /// transaction. Returns a dict of counts.
    #[pyo3(signature = (src, dst, weight=None, r#type="EDGE", label="Node", key="id"))]
    #[allow(clippy::too_many_arguments)]
    fn import_edges<'py>(
        &self,
        py: Python<'py>,
        src: &Bound<'py, PyAny>,
        dst: &Bound<'py, PyAny>,
        weight: Option<&Bound<'py, PyAny>>,
        r#type: &str,
        label: &str,
        key: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let db = self.handle()?;
        let interrupt = db.own_interrupt();
        bulk::import_edges(py, &db, src, dst, weight, r#type, label, key, Some(&interrupt))
    }

    /// Imports CSV files with the engine of ``plexus import``. ``edges``: edge-list files (``source,target[,weight]``,
    /// header detected, delimiter too unless given, ``.gz``/``.zst`` read); ``nodes`` and ``relationships``: files in the format
    /// of Neo4j's offline importer, given as a path, a list of paths, or a dict from label (``"A:B"``) or type to
    /// path(s). Edge lists into an empty database are built in one bulk pass; node and relationship files are added
    /// through transactions of ``batch_size`` operations, matching existing nodes by label and unique key.
    /// Returns a dict of counts.
    #[pyo3(signature = (edges=None, nodes=None, relationships=None, *, delimiter=None, array_delimiter=";", id_type="string", skip_bad_lines=0, batch_size=20000, r#type="EDGE", label="Node", undirected=false))]
    #[allow(clippy::too_many_arguments)]
    fn import_csv<'py>(
        &self,
        py: Python<'py>,
        edges: Option<&Bound<'py, PyAny>>,
        nodes: Option<&Bound<'py, PyAny>>,
        relationships: Option<&Bound<'py, PyAny>>,
        delimiter: Option<&str>,
        array_delimiter: &str,
        id_type: &str,
        skip_bad_lines: usize,
        batch_size: usize,
        r#type: &str,
        label: &str,
        undirected: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let db = self.handle()?;
        crate::args::names(&[("type", Some(r#type)), ("label", Some(label))])?;
        let spec = bulk::CsvSpec {
            delimiter,
            array_delimiter,
            id_type,
            skip_bad_lines,
            batch_size,
            rel_type: r#type,
            label,
            undirected,
        };
        bulk::import_csv(py, &db, edges, nodes, relationships, &spec)
    }

    /// Writes a checkpoint (a compressed image of the whole graph) and retires the log it covers. Returns its
    /// size in bytes (0 in memory).
    fn checkpoint(&self, py: Python<'_>) -> PyResult<u64> {
        let db = self.handle()?;
        Ok(py.detach(|| db.checkpoint()).map_err(Failure::Storage)?)
    }

    /// Writes what a query starting now would see as a new database in ``path`` (absent, or an empty
    /// directory), while queries and writes go on: ``path`` appears complete or not at all and opens as a
    /// database of its own (restoring is opening it). Works for an in-memory database too, which it saves to
    /// disk. Returns the backup's ``version``, ``nodes``, ``relationships`` and ``bytes``.
    fn backup<'py>(&self, py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
        let db = self.handle()?;
        let backup = py.detach(|| db.backup(&path)).map_err(Failure::Storage)?;
        let d = PyDict::new(py);
        d.set_item("version", backup.version)?;
        d.set_item("nodes", backup.nodes)?;
        d.set_item("relationships", backup.relationships)?;
        d.set_item("bytes", backup.bytes)?;
        Ok(d)
    }

    /// Closes this handle: queries running on other threads stop, open transactions roll back and result
    /// streams end (asked for more, they raise :class:`ClosedError`). The files are released once graph views
    /// made from it, and other handles of this process on the same directory, are gone too. Closing twice is
    /// harmless.
    fn close(&self, py: Python<'_>) {
        let db = py.detach(|| self.inner.write().take());
        // Queries running on other threads stop at their next check (they raise QueryError, Terminated), and
        // every call still out is waited for: each holds the database, and its directory locked, until it returns.
        py.detach(|| {
            self.in_flight.closing.cancel();
            self.in_flight.closed.store(true, Ordering::SeqCst);
            let mut guard = self.in_flight.idle_lock.lock();
            while self.in_flight.calls.load(Ordering::SeqCst) > 0 {
                self.in_flight.idle.wait(&mut guard);
            }
        });
        // Transactions still open end here, rolled back: otherwise one could commit after `close`, and the
        // directory would stay locked until the garbage collector got to it.
        let open: Vec<_> = self.transactions.lock().drain(..).filter_map(|t| t.upgrade()).collect();
        py.detach(|| {
            for tx in open {
                if let Some(tx) = tx.lock().take() {
                    tx.rollback();
                }
            }
        });
        // So do result streams, letting go of their snapshots.
        let streams: Vec<_> = self.streams.lock().drain(..).filter_map(|s| s.upgrade()).collect();
        py.detach(|| streams.iter().for_each(|s| s.end()));
        // Dropping the last handle flushes the log and joins background threads: not with the GIL held.
        py.detach(move || drop(db));
    }

    /// What opening the database recovered: ``{"checkpoint_version", "replayed", "version", "dropped"}``, where
    /// each dropped stretch of log is ``{"file", "offset", "bytes", "reason", "intact_commits", "kept_in",
    /// "unknown_loss"}`` (``intact_commits`` above zero, or ``unknown_loss``, means commits were lost to damage,
    /// not just a torn last write).
    #[getter]
    fn recovery<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let report = self.with(|db| db.recovery_report().clone())?;
        let out = pyo3::types::PyDict::new(py);
        out.set_item("checkpoint_version", report.checkpoint_version)?;
        out.set_item("replayed", report.replayed)?;
        out.set_item("version", report.version)?;
        let dropped = pyo3::types::PyList::empty(py);
        for d in &report.dropped {
            let item = pyo3::types::PyDict::new(py);
            item.set_item("file", d.file.display().to_string())?;
            item.set_item("offset", d.offset)?;
            item.set_item("bytes", d.bytes)?;
            item.set_item("reason", &d.reason)?;
            item.set_item("intact_commits", d.intact_commits)?;
            item.set_item("kept_in", d.kept_in.as_ref().map(|p| p.display().to_string()))?;
            item.set_item("unknown_loss", d.unknown_loss)?;
            dropped.append(item)?;
        }
        out.set_item("dropped", dropped)?;
        Ok(out)
    }

    /// Whether :meth:`close` has been called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.read().is_none()
    }

    /// The database directory, or ``None`` in memory.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// Whether the database was opened with ``read_only=True``: nothing on disk changes, statements that write
    /// raise :class:`plexus.QueryError` (code ``ForbiddenOnReadOnlyDatabase``).
    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// ``"sync"``, ``"batch"`` or ``"off"``.
    #[getter]
    fn durability(&self) -> &'static str {
        durability_name(self.durability)
    }

    /// Number of nodes and relationships in the newest committed state, as a dict.
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (nodes, rels) = self.with(|db| {
            let r = db.read();
            (r.node_count(), r.rel_count())
        })?;
        let d = PyDict::new(py);
        d.set_item("nodes", nodes)?;
        d.set_item("relationships", rels)?;
        Ok(d)
    }

    /// Returns the database itself; leaving the ``with`` block closes it.
    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Closes the database.
    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { ", closed" } else { "" };
        match &self.path {
            None => format!("Database(in memory{state})"),
            Some(p) => format!("Database({:?}, durability={:?}{state})", p.display().to_string(), self.durability()),
        }
    }
}

/// An explicit write transaction (from :meth:`Database.transaction`). Its queries see its own writes; nothing is
/// visible to others until :meth:`commit`. Dropping it uncommitted rolls it back.
#[pyclass(module = "plexus", frozen)]
pub struct Transaction {
    owner: Py<Database>,
    tx: std::sync::Arc<TxSlot>,
}

impl Transaction {
    fn finish(&self, py: Python<'_>, commit: bool) -> PyResult<()> {
        py.detach(|| {
            let tx = self.tx.lock().take().ok_or(Failure::Closed("transaction"))?;
            if commit {
                tx.commit().map(|_| ()).map_err(Failure::Storage)
            } else {
                tx.rollback();
                Ok(())
            }
        })?;
        Ok(())
    }
}

#[pymethods]
impl Transaction {
    /// Runs an openCypher statement inside this transaction. A failing statement leaves the transaction as it
    /// was before the statement.
    #[pyo3(signature = (query, parameters=None))]
    fn execute(&self, py: Python<'_>, query: &str, parameters: Option<&Bound<'_, PyAny>>) -> PyResult<QueryResult> {
        let params = params(parameters)?;
        // Detached, like every other use of the lock: a query in this transaction on another thread holds it
        // and may need the GIL to check for signals.
        if py.detach(|| self.tx.lock().is_none()) {
            return Err(Failure::Closed("transaction").into());
        }
        let db = self.owner.get().handle()?;
        run(py, &db, Some(&self.tx), query, params)
    }

    /// Commits. Raises :class:`plexus.ConflictError` when a concurrent transaction wrote the same data first.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.finish(py, true)
    }

    /// Discards everything the transaction did.
    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        self.finish(py, false)
    }

    /// Whether the transaction has been committed or rolled back.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        py.detach(|| self.tx.lock().is_none())
    }

    /// Returns the transaction itself.
    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Commits when the block ended normally, rolls back when it raised.
    #[pyo3(signature = (exc_type, _exc=None, _tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if self.closed(py) {
            return Ok(false);
        }
        let failed = exc_type.is_some_and(|t| !t.is_none());
        self.finish(py, !failed)?;
        Ok(false)
    }
}
