//! Which auto-commit statements are quick reads, so the HTTP handler can run them on the event-loop thread.
//!
//! Handing a statement to the blocking pool and back costs two thread wake-ups; for a point read that is most of
//! the request (IS1 over HTTP saturated two cores at about 40,000 requests/s with the hand-off). A statement whose
//! recent runs were all short reads runs inline instead: the event loop is held for about as long as the hand-off
//! would have cost. Writes never run inline (a durable commit waits for its fsync), nor do statements not seen
//! yet or with any recent slow run.
//!
//! The estimate comes from the statement's text, but its parameters decide how much work it is, so an inline run
//! is given [`BUDGET`] and stopped there; it then runs again on the blocking pool, and its estimate records the
//! slow run so the statement is not inlined again until its runs are quick once more.

use std::time::Duration;

use parking_lot::Mutex;
use plexus_storage::fxhash::FxHashMap;

/// A statement runs inline while its running estimate stays under this.
const QUICK: Duration = Duration::from_micros(200);
/// How long an inline run may hold the event loop before it is stopped and handed to the blocking pool: long
/// enough that a quick statement's odd slow run (a cold cache, a preempted thread) rarely pays for running twice,
/// short enough that other requests on the thread hardly notice.
pub const BUDGET: Duration = Duration::from_millis(2);
/// Statements remembered; the table is cleared when it fills (a workload has few distinct statements).
const CAPACITY: usize = 1024;

/// Running estimates of how long statements take, by statement text. Hashed as the plan cache hashes it (FxHash):
/// SipHash over a statement of a few hundred bytes, twice per request, was about 2 % of a point read's
/// instructions. The table is small and emptied when full, so colliding texts cost little.
#[derive(Default)]
pub struct QuickStatements {
    estimates: Mutex<FxHashMap<String, Estimate>>,
}

#[derive(Clone, Copy)]
struct Estimate {
    /// Jumps to a slower run at once and decays towards faster runs by an eighth of the gap per run.
    nanos: u64,
    read_only: bool,
}

impl QuickStatements {
    /// Whether `statement` may run on the event loop.
    pub fn is_quick(&self, statement: &str) -> bool {
        self.estimates.lock().get(statement).is_some_and(|e| e.read_only && e.nanos <= QUICK.as_nanos() as u64)
    }

    /// Records one run of `statement`.
    pub fn record(&self, statement: &str, took: Duration, read_only: bool) {
        let nanos = took.as_nanos().min(u64::MAX as u128) as u64;
        let mut estimates = self.estimates.lock();
        if let Some(e) = estimates.get_mut(statement) {
            e.nanos = if nanos >= e.nanos { nanos } else { e.nanos - (e.nanos - nanos) / 8 };
            e.read_only = read_only;
            return;
        }
        if estimates.len() >= CAPACITY {
            estimates.clear();
        }
        estimates.insert(statement.to_string(), Estimate { nanos, read_only });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_reads_seen_before_are_quick() {
        let q = QuickStatements::default();
        assert!(!q.is_quick("RETURN 1"));
        q.record("RETURN 1", Duration::from_micros(20), true);
        assert!(q.is_quick("RETURN 1"));
        q.record("CREATE ()", Duration::from_micros(20), false);
        assert!(!q.is_quick("CREATE ()"));
        // One slow run stops inlining at once; fast runs bring it back gradually.
        q.record("RETURN 1", Duration::from_millis(5), true);
        assert!(!q.is_quick("RETURN 1"));
        let mut runs = 0;
        while !q.is_quick("RETURN 1") {
            q.record("RETURN 1", Duration::from_micros(20), true);
            runs += 1;
        }
        assert!((20..40).contains(&runs), "{runs}");
    }
}
