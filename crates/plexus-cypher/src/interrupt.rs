//! Stopping a running query from outside: a cancel flag (a client that went away, a server shutting down), a
//! deadline, and a bound on the memory its result may take. Operators check it once per batch, so a query stops
//! within one batch of work.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{CypherError, ErrorKind, Phase, Result};

/// Limits and a cancel switch shared between a running query and whoever may stop it.
#[derive(Default)]
pub struct Interrupt {
    cancelled: AtomicBool,
    deadline: Option<Instant>,
    /// Bytes the materialised result may take (an estimate of the values' in-memory size).
    pub max_result_bytes: Option<usize>,
    probe: Option<Probe>,
}

/// A question asked now and then while the query runs ("is the client still there?"); `true` stops the query.
struct Probe {
    ask: Box<dyn Fn() -> bool + Send + Sync>,
    every: Duration,
    created: Instant,
    /// Nanoseconds after `created` of the last time it was asked.
    last: AtomicU64,
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupt")
            .field("cancelled", &self.is_cancelled())
            .field("deadline", &self.deadline)
            .field("max_result_bytes", &self.max_result_bytes)
            .field("probe", &self.probe.is_some())
            .finish()
    }
}

impl Interrupt {
    pub fn new(deadline: Option<Instant>, max_result_bytes: Option<usize>) -> Interrupt {
        Interrupt { cancelled: AtomicBool::new(false), deadline, max_result_bytes, probe: None }
    }

    /// Also stops the query when `ask` returns true; it is asked at most once per `every`, so it may be a
    /// system call.
    pub fn with_probe(mut self, every: Duration, ask: impl Fn() -> bool + Send + Sync + 'static) -> Interrupt {
        self.probe = Some(Probe { ask: Box::new(ask), every, created: Instant::now(), last: AtomicU64::new(0) });
        self
    }

    /// Asks the query to stop at its next check.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// An error if the query should stop now.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            return Err(CypherError::new(
                ErrorKind::Terminated,
                Phase::Runtime,
                "Terminated",
                "the query was cancelled",
            ));
        }
        if let Some(p) = &self.probe {
            let now = p.created.elapsed().as_nanos() as u64;
            let last = p.last.load(Ordering::Relaxed);
            if now.saturating_sub(last) >= p.every.as_nanos() as u64 {
                p.last.store(now, Ordering::Relaxed);
                if (p.ask)() {
                    self.cancel();
                    return self.check();
                }
            }
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(CypherError::new(
                ErrorKind::Timeout,
                Phase::Runtime,
                "TransactionTimedOut",
                "the query ran past its time limit and was stopped",
            ));
        }
        Ok(())
    }

    /// An error if a result of `bytes` is over the limit.
    pub fn check_result_size(&self, bytes: usize) -> Result<()> {
        self.check_memory(bytes, |limit| {
            format!("the result needs more than its memory limit of {limit} bytes; add a LIMIT or return less")
        })
    }

    /// An error saying `message(limit)` if `bytes` are over the memory limit.
    pub fn check_memory(&self, bytes: usize, message: impl FnOnce(usize) -> String) -> Result<()> {
        match self.max_result_bytes {
            Some(limit) if bytes > limit => {
                Err(CypherError::new(ErrorKind::MemoryLimit, Phase::Runtime, "MemoryLimitExceeded", message(limit)))
            }
            _ => Ok(()),
        }
    }
}
