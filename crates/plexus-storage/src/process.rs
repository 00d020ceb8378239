//! The id of the current process, kept in memory so that checking it costs a load: every commit asks whether it
//! runs in the process that opened the store (a forked child must not write to its parent's log), and
//! `getpid` is a system call.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

static CURRENT: AtomicU32 = AtomicU32::new(0);
static WATCH_FORKS: Once = Once::new();

/// The current process's id.
pub(crate) fn id() -> u32 {
    WATCH_FORKS.call_once(|| {
        CURRENT.store(std::process::id(), Ordering::Relaxed);
        #[cfg(unix)]
        // SAFETY: the handler only calls `getpid` (async-signal-safe) and stores an atomic.
        unsafe {
            libc::pthread_atfork(None, None, Some(forked));
        }
    });
    CURRENT.load(Ordering::Relaxed)
}

/// Runs in the child after a fork, before `fork` returns there.
#[cfg(unix)]
extern "C" fn forked() {
    // SAFETY: getpid has no preconditions.
    CURRENT.store(unsafe { libc::getpid() } as u32, Ordering::Relaxed);
}
