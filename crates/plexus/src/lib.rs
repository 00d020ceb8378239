//! Plexus: an embedded property-graph database.
//!
//! ```
//! use plexus::{Database, Direction, TypeFilter, Value};
//!
//! let db = Database::in_memory();
//! let mut tx = db.write();
//! let person = tx.label("Person");
//! let knows = tx.rel_type("KNOWS");
//! let name = tx.prop_key("name");
//! tx.declare_unique_key(person, name).unwrap();
//! let ann = tx.create_node(&[person], vec![(name, Value::from("Ann"))]).unwrap();
//! let bob = tx.create_node(&[person], vec![(name, Value::from("Bob"))]).unwrap();
//! tx.create_rel(ann, knows, bob, vec![]).unwrap();
//! tx.commit().unwrap();
//!
//! let snapshot = db.read();
//! assert_eq!(snapshot.node_by_key(person, &Value::from("Bob")), Some(bob));
//! assert_eq!(snapshot.degree(bob, Direction::In, TypeFilter::All), 1);
//! ```
//!
//! This crate is the public face of the engine: [`Database`] opens a directory (durable, recovered on open) or
//! lives in memory; [`ReadTxn`] is a snapshot that never blocks; [`WriteTxn`] buffers changes and commits them
//! atomically with snapshot isolation. [`algo`] holds traversals built on the public API.

pub mod algo;
pub mod random;

use std::path::Path;
use std::sync::Arc;

pub use plexus_cypher as cypher;
pub use plexus_cypher::{CypherError, Params, QueryResult, QueryStats, ResultValue};

pub use plexus_storage::value;
pub use plexus_storage::{
    Backup, Direction, Durability, EdgeUpsert, IdSlice, IndexKey, LabelId, NodeId, Options, PropKeyId, PropMap,
    PropertyIndex, ReadTxn, RecoveryReport, RelEntry, RelId, RelRecord, Result, Savepoint, StorageError as Error,
    TokenKind, TypeFilter, TypeId, UpsertCounts, Value, WriteTxn,
};

/// An open Plexus database. Cloning gives another handle to the same database.
#[derive(Clone)]
pub struct Database {
    store: plexus_storage::Store,
    recovery: RecoveryReport,
    engine: Arc<plexus_cypher::Engine>,
}

impl Database {
    /// Opens or creates the database in `dir` with `sync` durability.
    pub fn open(dir: impl AsRef<Path>) -> Result<Database> {
        Self::open_with(dir, Options::default())
    }

    /// Whether `dir` holds a database (or what is left of one), which [`Database::open`] would open rather
    /// than create.
    pub fn exists(dir: impl AsRef<Path>) -> bool {
        plexus_storage::Store::holds_database(dir)
    }

    /// Removes what a creation of a database in `dir` killed before it finished left behind (a lock file and a
    /// temporary metadata file, no data), when nothing else is there; returns whether it removed anything.
    pub fn clear_unfinished_creation(dir: impl AsRef<Path>) -> Result<bool> {
        plexus_storage::Store::clear_unfinished_creation(dir)
    }

    /// Whether `dir` holds files but no database (after clearing what a creation killed before its metadata
    /// left): most likely a mistyped path, or what an interrupted import left, which an open should not turn into
    /// a database by scattering its files among the others.
    pub fn holds_foreign_files(dir: impl AsRef<Path>) -> Result<bool> {
        let dir = dir.as_ref();
        if Self::exists(dir) {
            return Ok(false);
        }
        Self::clear_unfinished_creation(dir)?;
        Ok(std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()))
    }

    /// Log data that recoveries of the database in `dir` set aside, with the intact commits each file holds
    /// (`None`: some, but how many cannot be told).
    pub fn set_aside_log(dir: impl AsRef<Path>) -> Result<Vec<(std::path::PathBuf, Option<u64>)>> {
        plexus_storage::recovery::set_aside_files(dir.as_ref())
    }

    /// Opens or creates the database in `dir`.
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<Database> {
        let (store, recovery) = plexus_storage::Store::open_with(dir, options)?;
        Ok(Database::assemble(store, recovery))
    }

    /// Opens the database in `dir` for reading only, changing nothing on disk (see
    /// [`plexus_storage::Store::open_read_only`]): queries that write, and checkpoints, fail with
    /// [`Error::ReadOnlyDatabase`].
    pub fn open_read_only(dir: impl AsRef<Path>) -> Result<Database> {
        let (store, recovery) = plexus_storage::Store::open_read_only(dir)?;
        Ok(Database::assemble(store, recovery))
    }

    /// Whether the database was opened with [`Database::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.store.is_read_only()
    }

    /// A database that lives only in memory and vanishes when the last handle drops.
    pub fn in_memory() -> Database {
        Database::assemble(plexus_storage::Store::in_memory(), RecoveryReport::default())
    }

    /// A database over `store`, with a query engine that knows the facts about it that only it can tell:
    /// `CALL db.info()`.
    fn assemble(store: plexus_storage::Store, recovery: RecoveryReport) -> Database {
        let engine = Arc::new(plexus_cypher::Engine::new());
        let row = db_info_row(store.identity());
        let text = cypher::ParamType::String;
        let signature = cypher::ProcedureSignature {
            name: "db.info".into(),
            inputs: Vec::new(),
            outputs: vec![("id".into(), text), ("name".into(), text), ("creationDate".into(), text)],
            description: "Provides information regarding the database.".into(),
        };
        engine.register_procedure(signature, move |_| Ok(vec![row.clone()]));
        Database { store, recovery, engine }
    }

    /// What recovery did when the database was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// A snapshot of the newest committed state.
    pub fn read(&self) -> ReadTxn {
        self.store.read()
    }

    /// Starts a write transaction.
    pub fn write(&self) -> WriteTxn {
        self.store.write()
    }

    /// Runs `work` in a write transaction and commits, retrying on write-write conflicts up to `attempts` times.
    pub fn write_with_retry<T>(&self, attempts: usize, mut work: impl FnMut(&mut WriteTxn) -> Result<T>) -> Result<T> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut tx = self.write();
            let value = work(&mut tx)?;
            match tx.commit() {
                Ok(_) => return Ok(value),
                Err(e) if e.is_retryable() && attempt < attempts => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Runs an openCypher query in its own transaction (committed when it succeeds, nothing left behind when it
    /// fails).
    pub fn execute(&self, query: &str, params: &Params) -> std::result::Result<QueryResult, CypherError> {
        self.engine.execute(&self.store, query, params)
    }

    /// The query engine (plan cache and procedures), for callers that need its finer controls: running with an
    /// [`cypher::Interrupt`] (time limits, cancellation), against a chosen snapshot, or asking whether a query writes.
    pub fn engine(&self) -> &plexus_cypher::Engine {
        &self.engine
    }

    /// Runs an openCypher query inside an open write transaction.
    pub fn execute_in(
        &self,
        tx: &mut WriteTxn,
        query: &str,
        params: &Params,
    ) -> std::result::Result<QueryResult, CypherError> {
        self.engine.execute_in(tx, query, params)
    }

    /// Makes a procedure callable from Cypher with `CALL name(...)` (see [`cypher::Engine::register_procedure`]).
    pub fn register_procedure(
        &self,
        signature: cypher::ProcedureSignature,
        body: impl Fn(&[cypher::Value]) -> std::result::Result<Vec<Vec<cypher::Value>>, CypherError> + Send + Sync + 'static,
    ) {
        self.engine.register_procedure(signature, body)
    }

    /// Writes a checkpoint and retires the log it covers; returns the checkpoint size in bytes.
    pub fn checkpoint(&self) -> Result<u64> {
        self.store.checkpoint()
    }

    /// Writes what a reader starting now would see as a new database in `dest` (absent or an empty directory),
    /// while readers and writers go on: `dest` appears complete or not at all, and opens as a database of its own
    /// (restoring is opening it). Works for an in-memory database too, which it saves to disk.
    pub fn backup(&self, dest: impl AsRef<std::path::Path>) -> Result<Backup> {
        self.store.backup(dest)
    }

    /// [`Database::backup`], with `files` (name, contents) written into the backup before it appears (a server's
    /// users, say).
    pub fn backup_with_files(&self, dest: impl AsRef<std::path::Path>, files: &[(&str, &[u8])]) -> Result<Backup> {
        self.store.backup_with_files(dest, files)
    }

    pub fn durability(&self) -> Durability {
        self.store.durability()
    }

    pub fn path(&self) -> Option<&Path> {
        self.store.path()
    }

    /// Why every commit is refused until the database is reopened, if it is (a write to the log failed, say on
    /// a full disk). Cheap enough for a health check.
    pub fn refusing_writes(&self) -> Option<Error> {
        self.store.refusing_writes()
    }

    /// Number of log fsyncs so far.
    pub fn wal_fsyncs(&self) -> u64 {
        self.store.wal_fsyncs()
    }

    /// Why the log could not start its next segment, while that goes on failing: commits continue in the
    /// current one, but the cause (a full disk, no file descriptor left, a directory made read-only) wants fixing.
    pub fn log_rollover_failure(&self) -> Option<String> {
        self.store.log_rollover_failure()
    }

    /// Checkpoints written since the database opened, automatic ones included.
    pub fn checkpoints(&self) -> u64 {
        self.store.checkpoints()
    }

    /// Checkpoints that failed since the database opened (automatic ones included), and the last one's error.
    /// A failed checkpoint loses nothing (the log keeps every commit) and the next one tries again.
    pub fn checkpoint_failures(&self) -> (u64, Option<String>) {
        self.store.checkpoint_failures()
    }

    /// The storage engine underneath, for tools that need more than the public API.
    pub fn store(&self) -> &plexus_storage::Store {
        &self.store
    }
}

/// The row of `CALL db.info()`, in Neo4j's columns: the database's id (in upper-case hexadecimal, as Neo4j writes
/// its own), the name clients address it by, and when it was created (as `toString(datetime(...))` writes it).
fn db_info_row(identity: &plexus_storage::Identity) -> Vec<cypher::Value> {
    let id: String = identity.id.iter().map(|b| format!("{b:02X}")).collect();
    let millis = identity.created.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let clock = cypher::temporal::Clock::now();
    let created = cypher::temporal::call_function("datetime.fromepochmillis", &[cypher::Value::Int(millis)], &clock)
        .and_then(|v| v.ok())
        .and_then(|v| cypher::temporal::to_string(&v))
        .unwrap_or_default();
    vec![cypher::Value::string(id), cypher::Value::string(DATABASE_NAME), cypher::Value::string(created)]
}

/// The name clients address the database by: drivers and tools send Neo4j's default database name.
pub const DATABASE_NAME: &str = "neo4j";
