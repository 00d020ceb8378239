//! Progress counters an import updates from its worker threads and a front end reads from another thread (the
//! command line draws a bar on a terminal and prints plain lines otherwise).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Shared progress of one import. Bytes count input read and parsed; rows count records parsed, or in
/// incremental mode operations committed.
#[derive(Debug, Default)]
pub struct Progress {
    bytes_total: AtomicU64,
    bytes_done: AtomicU64,
    rows: AtomicU64,
    phase: Mutex<String>,
}

/// A consistent-enough reading of [`Progress`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub bytes_total: u64,
    pub bytes_done: u64,
    pub rows: u64,
    pub phase: String,
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

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes_total: self.bytes_total.load(Ordering::Relaxed),
            bytes_done: self.bytes_done.load(Ordering::Relaxed),
            rows: self.rows.load(Ordering::Relaxed),
            phase: self.phase.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }
}
