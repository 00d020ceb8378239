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
    /// When the query must stop, and the same on the coarse clock ([`coarse_nanos`]), which tells when the
    /// precise clock is worth reading: only within one coarse tick of the deadline.
    deadline: Option<(Instant, u64)>,
    /// Bytes the materialised result may take (an estimate of the values' in-memory size).
    pub max_result_bytes: Option<usize>,
    /// Whether the deadline is one the client asked for (a driver's transaction timeout) rather than the
    /// server's own limit: Neo4j reports the two with different codes.
    pub deadline_from_client: bool,
    probe: Option<Probe>,
}

/// A question asked now and then while the query runs ("is the client still there?"); `true` stops the query.
struct Probe {
    ask: Box<dyn Fn() -> bool + Send + Sync>,
    every: u64,
    /// The coarse clock when it was last asked.
    last: AtomicU64,
}

/// How far the coarse clock may lag the precise one, in nanoseconds.
fn coarse_resolution() -> u64 {
    static RESOLUTION: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *RESOLUTION.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: a valid clock id and a pointer to a timespec owned here.
            if unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) } == 0 {
                return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
            }
        }
        0
    })
}

/// Nanoseconds on a monotonic clock that advances once per scheduler tick (a few milliseconds) and costs a
/// few nanoseconds to read: a check runs several times even in a query of a microsecond, where reading the
/// precise clock each time took a tenth of the query. Deadlines and probes need no finer grain.
fn coarse_nanos() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid clock id and a pointer to a timespec owned here.
        if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) } == 0 {
            return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        }
    }
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
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
        let deadline =
            deadline.map(|d| (d, coarse_nanos() + d.saturating_duration_since(Instant::now()).as_nanos() as u64));
        Interrupt {
            cancelled: AtomicBool::new(false),
            deadline,
            max_result_bytes,
            deadline_from_client: false,
            probe: None,
        }
    }

    /// Also stops the query when `ask` returns true; it is asked at most once per `every`, so it may be a
    /// system call.
    pub fn with_probe(mut self, every: Duration, ask: impl Fn() -> bool + Send + Sync + 'static) -> Interrupt {
        let every = every.as_nanos() as u64;
        self.probe = Some(Probe { ask: Box::new(ask), every, last: AtomicU64::new(coarse_nanos()) });
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
        if self.probe.is_none() && self.deadline.is_none() {
            return Ok(());
        }
        let now = coarse_nanos();
        if let Some(p) = &self.probe {
            let last = p.last.load(Ordering::Relaxed);
            if now.saturating_sub(last) >= p.every {
                p.last.store(now, Ordering::Relaxed);
                if (p.ask)() {
                    self.cancel();
                    return self.check();
                }
            }
        }
        // The coarse clock lags the precise one by less than a tick, so a deadline never passes unseen, and a
        // short one (the server's 2 ms for inline statements) is judged on the precise clock.
        if self.deadline.is_some_and(|(at, coarse)| now + coarse_resolution() >= coarse && Instant::now() >= at) {
            let (detail, whose) = if self.deadline_from_client {
                ("TransactionTimedOutClientConfiguration", "the transaction timeout the client set")
            } else {
                ("TransactionTimedOut", "the server's query time limit")
            };
            return Err(CypherError::new(
                ErrorKind::Timeout,
                Phase::Runtime,
                detail,
                format!("the query ran past {whose} and was stopped"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_deadlines_are_kept_to_the_precise_clock() {
        // Shorter than one tick of the coarse clock: neither early nor missed.
        let started = Instant::now();
        let i = Interrupt::new(Some(started + Duration::from_millis(30)), None);
        while started.elapsed() < Duration::from_millis(25) {
            if i.check().is_err() {
                assert!(started.elapsed() >= Duration::from_millis(30), "tripped early");
            }
        }
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(i.check().unwrap_err().kind, ErrorKind::Timeout);
        assert!(Interrupt::new(None, None).check().is_ok());
    }

    #[test]
    fn probes_are_asked_at_most_once_per_interval_and_stop_the_query() {
        let asked = std::sync::Arc::new(AtomicU64::new(0));
        let counter = asked.clone();
        let i = Interrupt::new(None, None)
            .with_probe(Duration::from_millis(20), move || counter.fetch_add(1, Ordering::Relaxed) >= 1);
        assert!(i.check().is_ok(), "not asked before its interval");
        std::thread::sleep(Duration::from_millis(30));
        assert!(i.check().is_ok(), "asked once: false");
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(i.check().unwrap_err().kind, ErrorKind::Terminated);
        assert_eq!(asked.load(Ordering::Relaxed), 2);
        assert!(i.is_cancelled());
    }
}
