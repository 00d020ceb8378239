//! The store: opening and recovering a database directory, the commit path, checkpoints.
//!
//! Commit path: under the commit lock a transaction is checked for write-write conflicts against the keys
//! written by transactions that committed after it began (first committer wins); if nothing committed in between
//! its private state is adopted as is, otherwise its redo operations are replayed onto the newest state. The
//! record is appended to the log buffer and the lock released; the committer then waits for the group fsync that
//! covers it and publishes the newest durable state with one atomic pointer swap. Readers load that pointer and
//! never take a lock.

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};
use std::collections::{BTreeMap, VecDeque};

use crate::fxhash::FxHashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::catalog::Catalog;
use crate::checkpoint;
use crate::error::{Result, StorageError};
use crate::graph::GraphState;
use crate::ids::IdAllocator;
use crate::ops::{decode_commit, encode_commit_with_tokens, Op};
use crate::recovery::{self, RecoveryReport};
use crate::txn::{ReadTxn, WriteKey, WriteTxn};
use crate::wal::{sync_dir, Wal};
use crate::LEAF_SIZE;

mod backup;
mod commit;
mod create;
mod group;

pub use backup::Backup;
pub use create::remove_abandoned_imports;
pub use create::IMPORT_INSIDE_PREFIX;
use create::{new_db_id, read_meta, write_meta};

/// Tokens (kind, id, name) created since the last log record, which the next record carries.
type UnloggedTokens = Vec<(crate::catalog::TokenKind, u32, Arc<str>)>;

/// When a commit is acknowledged relative to the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// fsync before acknowledging (group commit shares one fsync among concurrent committers).
    #[default]
    Sync,
    /// Acknowledge at once; a background thread fsyncs at least every 10 ms.
    Batch,
    /// Acknowledge at once; write the log without fsync (survives a process crash, not an OS crash).
    Off,
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "sync" => Ok(Durability::Sync),
            "batch" => Ok(Durability::Batch),
            "off" => Ok(Durability::Off),
            other => Err(format!("unknown durability '{other}' (expected sync, batch or off)")),
        }
    }
}

/// Options for [`Store::open_with`].
#[derive(Clone, Debug)]
pub struct Options {
    pub durability: Durability,
    /// Checkpoint automatically once this many log bytes accumulate since the last checkpoint (0: never).
    pub checkpoint_after_bytes: u64,
    /// Open even when the log is damaged with intact commits after the damage, without those commits (they are
    /// set aside in `wal-*.log.dropped*` files, not deleted). Off by default: such an open is refused, since the
    /// next commits would take those commits' versions and the loss would become final. The torn last write of
    /// a crash has no commit after it and never stops an open.
    pub drop_damaged_log: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { durability: Durability::Sync, checkpoint_after_bytes: 256 << 20, drop_damaged_log: false }
    }
}

/// Who a database is: an id made when it was created (kept in its metadata file, and stamped on its log and
/// checkpoint files so that files of another database are never replayed), and when that was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub id: [u8; 16],
    /// When the metadata file was written, which happens once, as the database is created (an in-memory
    /// database: when it was made).
    pub created: std::time::SystemTime,
}

impl Identity {
    fn new_in_memory() -> Identity {
        Identity { id: new_db_id(), created: std::time::SystemTime::now() }
    }

    fn of_directory(dir: &Path, id: [u8; 16]) -> Identity {
        let written = std::fs::metadata(dir.join(META_FILE)).and_then(|m| m.modified());
        Identity { id, created: written.unwrap_or_else(|_| std::time::SystemTime::now()) }
    }
}

const META_FILE: &str = "plexus.meta";
const LOCK_FILE: &str = "LOCK";
const META_MAGIC: &[u8; 8] = b"PLEXUS\x00\x01";
/// How often the batch-durability thread fsyncs.
const BATCH_INTERVAL: Duration = Duration::from_millis(10);

/// The committer's view: the newest state and what conflict checks need.
pub(crate) struct Head {
    state: Arc<GraphState>,
    /// For each key, the version of the last commit that wrote it (pruned below the oldest active writer).
    last_write: FxHashMap<WriteKey, u64>,
    last_schema_change: u64,
    commits_since_prune: u64,
    log_bytes_since_checkpoint: u64,
}

pub(crate) struct Disk {
    dir: PathBuf,
    db_id: [u8; 16],
    wal: Wal,
    // Released in this order (fields drop in order): the directory's lock before the lock file's, since an
    // opener takes the lock file's first, and so never finds the directory still locked after getting it.
    _dir_lock: File,
    _lock: File,
}

/// The directory of a database opened read-only, with the shared lock that keeps a writer out while it is open.
pub(crate) struct ReadOnlyDir {
    dir: PathBuf,
    _dir_lock: File,
}

/// State shared by a store's handles and transactions.
pub(crate) struct Shared {
    pub(crate) catalog: Catalog,
    pub(crate) node_ids: IdAllocator,
    pub(crate) rel_ids: IdAllocator,
    published: ArcSwap<GraphState>,
    head: Mutex<Head>,
    /// Committed but not yet durable states, in version order, with the log position that makes each durable.
    pending: Mutex<VecDeque<(u64, Arc<GraphState>)>>,
    /// `sync` commits waiting for a combiner, and the combiner's role ([`group`]).
    queue: Mutex<Vec<group::Request>>,
    combiner: Mutex<()>,
    /// Set when a combiner failed part-way: the head state may hold part of a transaction, so no commit is
    /// accepted any more (readers keep the published, consistent states).
    broken: AtomicBool,
    /// Start versions of open write transactions (for pruning conflict history).
    writers: Mutex<BTreeMap<u64, usize>>,
    /// How many write transactions are open (the sum of `writers`), read without its lock by a combiner
    /// deciding whether to wait for more committers ([`group`]).
    open_writers: AtomicUsize,
    disk: Option<Disk>,
    /// Set for a database opened with [`Store::open_read_only`]: its directory, shared-locked.
    read_only: Option<ReadOnlyDir>,
    options: Options,
    stop: AtomicBool,
    checkpoint_lock: Mutex<()>,
    /// Set by a commit that finds enough log since the last checkpoint; the checkpointer thread waits on it, so
    /// no committer pays for a checkpoint.
    checkpoint_wanted: Mutex<bool>,
    checkpoint_cv: Condvar,
    /// Checkpoints written since the store opened, by whoever asked (the checkpointer thread, a caller).
    checkpoints: std::sync::atomic::AtomicU64,
    /// Checkpoints that failed (a full disk), and the last one's error: nothing else would tell of a failed
    /// automatic one while the log still keeps every commit.
    checkpoint_failures: std::sync::atomic::AtomicU64,
    last_checkpoint_error: Mutex<Option<String>>,
    /// The process that opened the store. A child forked from it inherits the handle but not the background
    /// threads, and shares the log's file offsets with the parent: it may read, never write.
    owner: u32,
    identity: Identity,
}

/// A handle to an open database. Cheap to clone; the database closes when the last handle and transaction drop.
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
    _flusher: Option<Arc<Flusher>>,
}

/// The background threads of an on-disk store (the batch-mode log flusher, the automatic checkpointer); they
/// stop, and the log is flushed, when the last store handle drops.
struct Flusher {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Drop for Flusher {
    fn drop(&mut self) {
        if crate::process::id() != self.shared.owner {
            // A forked child: the threads are not in this process (joining them would wait forever) and the
            // files are the parent's (flushing or trimming the log would damage it).
            std::mem::forget(std::mem::take(&mut *self.threads.lock()));
            return;
        }
        self.shared.stop.store(true, Ordering::Release);
        {
            let _wanted = self.shared.checkpoint_wanted.lock();
            self.shared.checkpoint_cv.notify_all();
        }
        for t in self.threads.lock().drain(..) {
            t.thread().unpark();
            let _ = t.join();
        }
        if let Some(disk) = &self.shared.disk {
            if disk.wal.sync_to(disk.wal.end_lsn(), true).is_ok() {
                let _ = disk.wal.trim_zeroed();
            }
        }
    }
}

impl Store {
    /// A database that lives only in memory.
    pub fn in_memory() -> Store {
        Self::from_parts(
            GraphState::new(),
            Catalog::new(),
            0,
            0,
            None,
            None,
            Options::default(),
            Identity::new_in_memory(),
        )
    }

    /// An in-memory database holding `state` (for example one made by [`crate::bulk::build_state`]), whose
    /// token ids refer to `catalog`. New ids are allocated above every id the state holds.
    pub fn from_state(state: GraphState, catalog: Catalog) -> Store {
        let (next_node, next_rel) = (state.node_id_bound(), state.rel_id_bound());
        Self::from_parts(state, catalog, next_node, next_rel, None, None, Options::default(), Identity::new_in_memory())
    }

    /// Opens (creating if needed) the database in `dir` with default options.
    pub fn open(dir: impl AsRef<Path>) -> Result<(Store, RecoveryReport)> {
        Self::open_with(dir, Options::default())
    }

    /// Opens the database in `dir`: takes the directory lock, loads the newest checkpoint, replays the log.
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<(Store, RecoveryReport)> {
        let dir = dir.as_ref().to_path_buf();
        if dir.exists() && !dir.is_dir() {
            let not_a_dir = std::io::Error::other("not a directory: a database is a directory of files");
            return Err(StorageError::io(&dir, not_a_dir));
        }
        std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| StorageError::io(&lock_path, e))?;
        // The directory itself is locked too: deleting the lock file (by hand, or a cleanup script) must not let
        // a second process in, whose recovery would remove the running one's current log segment.
        let dir_lock = File::open(&dir).map_err(|e| StorageError::io(&dir, e))?;
        for (file, path) in [(&lock, &lock_path), (&dir_lock, &dir)] {
            locked(file.try_lock(), &dir, path)?;
        }
        // A directory that takes no new files (its mode, a read-only mount) while its files stay writable would
        // take commits until the log had to start a segment or a checkpoint had to be written: such a database is
        // refused for writing at once, so that a caller opens it read-only (the command line does) instead.
        let probe = dir.join(format!(".write-probe-{}", std::process::id()));
        File::create(&probe).and_then(|_| std::fs::remove_file(&probe)).map_err(|e| StorageError::io(&dir, e))?;
        let db_id = if dir.join(META_FILE).exists() {
            read_meta(&dir)?
        } else {
            if recovery::has_data_files(&dir)? {
                return Err(missing_meta(&dir));
            }
            let id = new_db_id();
            write_meta(&dir, &id)?;
            id
        };
        let catalog = Catalog::new();
        let recovered = recovery::recover(
            &dir,
            &db_id,
            &catalog,
            recovery::Mode::Repair { drop_damaged: options.drop_damaged_log },
        )?;
        let next_version = recovered.state.version() + 1;
        let wal = match &recovered.resumable {
            Some((seq, path, end)) => Wal::resume(&dir, db_id, *seq, path, *end, next_version)?,
            None => Wal::create(&dir, db_id, recovered.next_segment, next_version)?,
        };
        for empty in &recovered.empty_segments {
            std::fs::remove_file(empty).map_err(|e| StorageError::io(empty, e))?;
        }
        let identity = Identity::of_directory(&dir, db_id);
        let disk = Disk { dir, db_id, wal, _lock: lock, _dir_lock: dir_lock };
        let store = Self::from_parts(
            recovered.state,
            catalog,
            recovered.next_node,
            recovered.next_rel,
            Some(disk),
            None,
            options,
            identity,
        );
        // The log kept from before counts towards the next automatic checkpoint: otherwise a database reopened
        // often (a crashing process, short sessions) would grow its log without bound.
        store.shared.head.lock().log_bytes_since_checkpoint = recovered.report.log_bytes;
        Ok((store, recovered.report))
    }

    /// Opens the database in `dir` for reading: nothing in the directory is created, changed or removed, so a
    /// database on read-only media, in a read-only directory, or owned by another user can be inspected and
    /// queried. Recovery replays the log in memory up to any torn or corrupt record and reports what it would
    /// drop, without setting anything aside. Commits and checkpoints fail with
    /// [`StorageError::ReadOnlyDatabase`]. Several read-only openers may share a directory; a writer and a
    /// reader exclude each other (the writer's recovery and checkpoints remove files a reader may be loading).
    pub fn open_read_only(dir: impl AsRef<Path>) -> Result<(Store, RecoveryReport)> {
        let dir = dir.as_ref().to_path_buf();
        if !dir.is_dir() || !Self::holds_database(&dir) {
            let why = if dir.is_dir() { "holds no Plexus database" } else { "is not a database directory" };
            return Err(StorageError::io(&dir, std::io::Error::new(std::io::ErrorKind::NotFound, why)));
        }
        let dir_lock = File::open(&dir).map_err(|e| StorageError::io(&dir, e))?;
        locked(dir_lock.try_lock_shared(), &dir, &dir)?;
        if !dir.join(META_FILE).exists() {
            return Err(missing_meta(&dir));
        }
        let db_id = read_meta(&dir)?;
        let catalog = Catalog::new();
        let recovered = recovery::recover(&dir, &db_id, &catalog, recovery::Mode::ReadOnly)?;
        let identity = Identity::of_directory(&dir, db_id);
        let read_only = ReadOnlyDir { dir, _dir_lock: dir_lock };
        let options = Options { checkpoint_after_bytes: 0, ..Options::default() };
        let store = Self::from_parts(
            recovered.state,
            catalog,
            recovered.next_node,
            recovered.next_rel,
            None,
            Some(read_only),
            options,
            identity,
        );
        Ok((store, recovered.report))
    }

    /// Whether the store was opened with [`Store::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.shared.read_only.is_some()
    }

    #[allow(clippy::too_many_arguments)] // each part is one of the store's, named at every call
    fn from_parts(
        mut state: GraphState,
        catalog: Catalog,
        next_node: u64,
        next_rel: u64,
        disk: Option<Disk>,
        read_only: Option<ReadOnlyDir>,
        options: Options,
        identity: Identity,
    ) -> Store {
        state.seal();
        let state = Arc::new(state);
        let shared = Arc::new(Shared {
            catalog,
            node_ids: IdAllocator::new(next_node),
            rel_ids: IdAllocator::new(next_rel),
            published: ArcSwap::new(state.clone()),
            head: Mutex::new(Head {
                state,
                last_write: FxHashMap::default(),
                last_schema_change: 0,
                commits_since_prune: 0,
                log_bytes_since_checkpoint: 0,
            }),
            pending: Mutex::new(VecDeque::new()),
            queue: Mutex::new(Vec::new()),
            combiner: Mutex::new(()),
            broken: AtomicBool::new(false),
            writers: Mutex::new(BTreeMap::new()),
            open_writers: AtomicUsize::new(0),
            disk,
            read_only,
            options,
            stop: AtomicBool::new(false),
            checkpoint_lock: Mutex::new(()),
            checkpoint_wanted: Mutex::new(false),
            checkpoint_cv: Condvar::new(),
            checkpoints: std::sync::atomic::AtomicU64::new(0),
            checkpoint_failures: std::sync::atomic::AtomicU64::new(0),
            last_checkpoint_error: Mutex::new(None),
            owner: crate::process::id(),
            identity,
        });
        let flusher = shared.disk.as_ref().map(|_| {
            let flusher = Arc::new(Flusher { shared: shared.clone(), threads: Mutex::new(Vec::new()) });
            let spawn = |name: &str, body: fn(Arc<Shared>)| {
                let s = shared.clone();
                let handle = std::thread::Builder::new()
                    .name(name.into())
                    .spawn(move || body(s))
                    .expect("spawn a background thread");
                flusher.threads.lock().push(handle);
            };
            if shared.options.durability == Durability::Batch {
                spawn("plexus-wal-batch", batch_flush_loop);
            }
            if shared.options.checkpoint_after_bytes > 0 {
                spawn("plexus-checkpoint", checkpoint_loop);
            }
            flusher
        });
        Store { shared, _flusher: flusher }
    }

    /// A snapshot of the newest durable state.
    pub fn read(&self) -> ReadTxn {
        ReadTxn { snapshot: self.shared.published.load_full(), shared: self.shared.clone() }
    }

    /// Starts a write transaction on the newest durable state.
    pub fn write(&self) -> WriteTxn {
        Shared::begin_write(&self.shared)
    }

    pub fn catalog(&self) -> &Catalog {
        &self.shared.catalog
    }

    pub fn durability(&self) -> Durability {
        self.shared.options.durability
    }

    /// The database's id and when it was created.
    pub fn identity(&self) -> &Identity {
        &self.shared.identity
    }

    pub fn is_in_memory(&self) -> bool {
        self.shared.disk.is_none() && self.shared.read_only.is_none()
    }

    pub fn path(&self) -> Option<&Path> {
        let read_only = self.shared.read_only.as_ref().map(|r| r.dir.as_path());
        self.shared.disk.as_ref().map(|d| d.dir.as_path()).or(read_only)
    }

    /// Why every commit is refused until the database is reopened, if it is: a write to the log failed (a full
    /// disk, an I/O error), or a commit failed part-way. Two atomic loads, for health checks to ask often.
    pub fn refusing_writes(&self) -> Option<StorageError> {
        if let Err(refused) = self.shared.writable() {
            return Some(refused);
        }
        if self.shared.broken.load(Ordering::Acquire) {
            return Some(StorageError::Poisoned(group::BROKEN.into()));
        }
        self.shared.disk.as_ref().and_then(|d| d.wal.check_poisoned().err())
    }

    /// Why the log could not start its next segment, while that goes on failing (commits continue in the current
    /// one; see `Wal::rollover_failure`).
    pub fn log_rollover_failure(&self) -> Option<String> {
        self.shared.disk.as_ref().and_then(|d| d.wal.rollover_failure())
    }

    /// Number of fsyncs the log has made (group commit makes this far lower than the number of commits).
    pub fn wal_fsyncs(&self) -> u64 {
        self.shared.disk.as_ref().map_or(0, |d| d.wal.fsync_count())
    }

    /// Checkpoints written since the store opened, automatic ones included.
    pub fn checkpoints(&self) -> u64 {
        self.shared.checkpoints.load(Ordering::Relaxed)
    }

    /// Writes a checkpoint of the newest state, retires the log it covers and returns memory to the OS.
    /// Returns the checkpoint's size in bytes (0 for an in-memory database).
    pub fn checkpoint(&self) -> Result<u64> {
        self.shared.checkpoint()
    }

    /// How many checkpoints failed since the store opened (automatic ones included), and the last failure.
    pub fn checkpoint_failures(&self) -> (u64, Option<String>) {
        let shared = &self.shared;
        (shared.checkpoint_failures.load(Ordering::Relaxed), shared.last_checkpoint_error.lock().clone())
    }

    /// Makes every commit so far durable and sends later ones to a new log segment, so that the files of the
    /// log up to now are closed (for a backup copying them, say). Nothing to do for an in-memory database.
    pub fn start_log_segment(&self) -> Result<()> {
        self.shared.start_log_segment()
    }

    /// Replaces the state of an empty store with `state`, built by [`crate::bulk::build_state`] with this store's
    /// catalog (bulk loading into a new database without a transaction per entity), and on disk makes it durable
    /// with a checkpoint. Refused while the store holds any node or relationship or a write transaction is open;
    /// the indexes and constraints it has are built over the loaded graph (one that breaks a constraint is
    /// refused).
    /// Readers that pinned the empty state keep it. On disk the checkpoint is written before the state is
    /// published, and commits wait meanwhile: a commit building on the loaded graph must never reach a log whose
    /// checkpoint lacks it (a crash, or a failed checkpoint write, would leave a log that does not replay). When
    /// the checkpoint cannot be written the store stays empty.
    pub fn load_bulk(&self, mut state: GraphState) -> Result<u64> {
        let shared = &self.shared;
        shared.writable()?;
        // The checkpoint path's lock order: checkpoint, head, then writers.
        let _checkpointing = shared.checkpoint_lock.lock();
        let size = {
            let mut head = shared.head.lock();
            let writers = shared.writers.lock();
            if head.state.node_count() > 0 || head.state.rel_count() > 0 || !shared.pending.lock().is_empty() {
                return Err(StorageError::ConstraintViolation("a bulk load needs an empty database".into()));
            }
            if !writers.is_empty() {
                return Err(StorageError::Conflict("a bulk load needs no open write transaction".into()));
            }
            // The indexes and constraints declared before the load hold over the loaded graph too (built over it;
            // a constraint it breaks refuses the load).
            for op in head.state.schema_ops() {
                state.apply(&op).map_err(|e| {
                    StorageError::ConstraintViolation(format!("the loaded graph breaks the database's schema: {e}"))
                })?;
            }
            // The version after the empty state it replaces, as a commit's would be: anything that caches what it
            // read by version (a Python graph view's id tables) must see that the graph changed. No log record
            // stands for the load; its checkpoint (below, with the log rotated to the version after it) does, so
            // the next commit's version follows the checkpoint's directly.
            let version = head.state.version() + 1;
            if state.version != version && state.flat.as_ref().is_some_and(|f| f.any_changed()) {
                // Stamps are versions of the state as built; under another version they would mislead reads.
                state.drop_flat();
            }
            state.version = version;
            state.seal();
            shared.node_ids.raise_floor(state.node_id_bound());
            shared.rel_ids.raise_floor(state.rel_id_bound());
            let size = shared.checkpoint_unpublished(&state, head.state.version() + 1)?;
            let state = Arc::new(state);
            head.state = state.clone();
            shared.published.store(state);
            size
        };
        commit::trim_heap();
        Ok(size)
    }
}

/// A lock taken on `path` for the database in `dir`, or why not: another holder, or an I/O error.
fn locked(taken: std::result::Result<(), std::fs::TryLockError>, dir: &Path, path: &Path) -> Result<()> {
    match taken {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(StorageError::Locked { path: dir.to_path_buf() }),
        Err(std::fs::TryLockError::Error(e)) => Err(StorageError::io(path, e)),
    }
}

/// A directory with log or checkpoint files but no metadata: opening it anew would hide the data.
fn missing_meta(dir: &Path) -> StorageError {
    // An import into an existing empty directory moves its files in one by one, the metadata last
    // (`plexus_import::publish`): killed meanwhile, it leaves its working directory inside.
    let importing = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with(IMPORT_INSIDE_PREFIX));
    let message = if importing {
        "missing, but the directory holds log or checkpoint files: an import into it was interrupted while moving \
         its files in; run the same `plexus import` again, which finishes or clears it"
    } else {
        "missing, but the directory holds log or checkpoint files"
    };
    StorageError::Corrupt { path: dir.join(META_FILE), message: message.into() }
}

fn checkpoint_loop(shared: Arc<Shared>) {
    lower_priority();
    loop {
        let mut wanted = shared.checkpoint_wanted.lock();
        while !*wanted && !shared.stop.load(Ordering::Acquire) {
            shared.checkpoint_cv.wait(&mut wanted);
        }
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        *wanted = false;
        drop(wanted);
        // A failure here (the disk) poisons the log, and the next commit reports it.
        let _ = shared.checkpoint();
    }
}

/// Automatic checkpoints run at a lower CPU priority than the commits and queries they serve (the threads a
/// checkpoint starts to encode its segments inherit it): on a machine with few cores, encoding and compressing
/// the whole graph on every core otherwise stalls everything else while it runs (a server phase of 16,000
/// inserts a second that overlapped one had p99 716 ms instead of 5-12 ms). Explicit checkpoints, and the one
/// taken at shutdown, keep the caller's priority.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority changes a nice value and nothing else; on Linux, PRIO_PROCESS with `who` 0 means the
    // calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

fn batch_flush_loop(shared: Arc<Shared>) {
    let disk = shared.disk.as_ref().expect("batch mode has a disk");
    while !shared.stop.load(Ordering::Acquire) {
        std::thread::park_timeout(BATCH_INTERVAL);
        // Commits have written their records already; anything still buffered is written, then all of it
        // fsynced.
        if disk.wal.sync_to(disk.wal.end_lsn(), false).and_then(|()| disk.wal.fsync_written()).is_err() {
            return;
        }
    }
}

/// Number of ids per leaf (re-exported for tools that size things by leaf).
pub const IDS_PER_LEAF: usize = LEAF_SIZE;
