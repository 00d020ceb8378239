//! Progress counters an import updates from its worker threads and a front end reads from another thread (the
//! command line draws a bar on a terminal and prints plain lines otherwise).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Shared progress of one import. Bytes count input read and parsed; rows count records parsed, or in
/// incremental mode operations committed.
#[derive(Debug, Default)]
pub struct Progress {
    bytes_total: AtomicU64,
    bytes_done: AtomicU64,
    rows: AtomicU64,
    phase: Mutex<String>,
    /// A front end asked the import to stop (Ctrl-C).
    stop: AtomicBool,
    /// Whether an incremental import has begun to write; taken by [`Progress::request_stop`] too.
    writing: Mutex<bool>,
    /// Stop once this many operations are committed (0: no such limit).
    stop_after: AtomicU64,
    /// Operations an incremental import committed.
    committed: AtomicU64,
}

/// Where a requested stop takes effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAt {
    /// Nothing has been written: the caller may end the process now. The import does not begin to write from
    /// then on ([`Progress::start_writing`] says no).
    Now,
    /// Batches are being committed: the import stops at the next batch boundary and reports what it committed.
    NextBatch,
}

/// A consistent-enough reading of [`Progress`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub bytes_total: u64,
    pub bytes_done: u64,
    pub rows: u64,
    pub phase: String,
    /// An incremental import is committing: `rows` counts the operations committed since it began to.
    pub writing: bool,
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    pub fn set_total(&self, bytes: u64) {
        self.bytes_total.store(bytes, Ordering::Relaxed);
    }

    pub fn add_bytes(&self, bytes: u64) {
        self.bytes_done.fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn add_rows(&self, rows: u64) {
        self.rows.fetch_add(rows, Ordering::Relaxed);
    }

    /// Names what the import is doing now (shown next to the counters).
    pub fn phase(&self, phase: impl Into<String>) {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner()) = phase.into();
    }

    /// Asks the import to stop (an incremental import rolls back its open batch, keeps the committed ones and
    /// reports how far it got). With [`StopAt::Now`], nothing was written and none will be.
    pub fn request_stop(&self) -> StopAt {
        let writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        self.stop.store(true, Ordering::Release);
        if *writing {
            StopAt::NextBatch
        } else {
            StopAt::Now
        }
    }

    /// Requests a stop once `ops` operations are committed (as an interruption at that point would; for tests).
    #[doc(hidden)]
    pub fn request_stop_after(&self, ops: u64) {
        self.stop_after.store(ops, Ordering::Release);
    }

    /// Whether a stop was requested.
    pub fn stop_requested(&self) -> bool {
        if self.stop.load(Ordering::Acquire) {
            return true;
        }
        let after = self.stop_after.load(Ordering::Acquire);
        after > 0 && self.committed.load(Ordering::Acquire) >= after
    }

    /// Counts operations an incremental import committed (and shows them as rows).
    pub fn add_committed(&self, ops: u64) {
        self.committed.fetch_add(ops, Ordering::AcqRel);
        self.add_rows(ops);
    }

    /// Called by an import before its first write: false when a stop was requested before it.
    pub fn start_writing(&self) -> bool {
        let mut writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        if !*writing {
            // From here on rows count operations committed, not records parsed (which would add up past the input).
            self.rows.store(0, Ordering::Relaxed);
        }
        *writing = true;
        !self.stop_requested()
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes_total: self.bytes_total.load(Ordering::Relaxed),
            bytes_done: self.bytes_done.load(Ordering::Relaxed),
            rows: self.rows.load(Ordering::Relaxed),
            phase: self.phase.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            writing: *self.writing.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}
