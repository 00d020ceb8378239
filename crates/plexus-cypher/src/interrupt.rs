//! Stopping a running query from outside: a cancel flag (a client that went away, a server shutting down), a
//! deadline, and a bound on the memory its result may take. Operators check it once per batch, so a query stops
//! within one batch of work.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::error::{CypherError, ErrorKind, Phase, Result};

/// Limits and a cancel switch shared between a running query and whoever may stop it.
#[derive(Debug, Default)]
pub struct Interrupt {
    cancelled: AtomicBool,
    deadline: Option<Instant>,
    /// Bytes the materialised result may take (an estimate of the values' in-memory size).
    pub max_result_bytes: Option<usize>,
}

impl Interrupt {
    pub fn new(deadline: Option<Instant>, max_result_bytes: Option<usize>) -> Interrupt {
        Interrupt { cancelled: AtomicBool::new(false), deadline, max_result_bytes }
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
        match self.max_result_bytes {
            Some(limit) if bytes > limit => Err(CypherError::new(
                ErrorKind::MemoryLimit,
                Phase::Runtime,
                "MemoryLimitExceeded",
                format!("the result needs more than its memory limit of {limit} bytes; add a LIMIT or return less"),
            )),
            _ => Ok(()),
        }
    }
}
