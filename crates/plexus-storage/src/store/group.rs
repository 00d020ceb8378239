//! Grouped commits for `sync` durability: committers hand their transactions to whichever of them holds the
//! commit lock, which applies them all, logs them, waits for the one fsync that covers them and wakes each
//! committer with its result.
//!
//! Why: with one commit per lock hold, 64 concurrent committers spent most of their CPU in the kernel (about
//! 2.7 context switches per small transaction: queueing on the lock, then waiting for the fsync), and every
//! commit copied the spine paths it changed because the state before it was still shared with the states
//! waiting to be published. Here a committer sleeps once, on its own slot; the combiner applies a whole group
//! onto one working state (copying a path once per group: later transactions of the group write in place) and
//! publishes one state per group.
//!
//! Each transaction still gets its own version and log record, so recovery, conflict detection and the log
//! format are those of single commits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::{Disk, Head, Shared};
use crate::error::{Result, StorageError};
use crate::graph::GraphState;
use crate::ops::Op;
use crate::txn::{WriteKey, WriteTxn};

/// A transaction waiting to be committed by the group's combiner.
pub(super) struct Request {
    start_version: u64,
    schema_change: bool,
    ops: Vec<Op>,
    writes: Vec<WriteKey>,
    /// The transaction's own state, adopted when nothing committed since it began, once its pending operations
    /// (`ops[settled..]`, see [`crate::txn`]) are applied to it.
    state: Option<GraphState>,
    settled: usize,
    slot: Arc<Slot>,
}

/// Where a committer waits for its result (the commit version, or why it failed).
#[derive(Default)]
struct Slot {
    result: Mutex<Option<Result<u64>>>,
    ready: Condvar,
    /// A combiner took the request from the queue: it answers the slot once the group is durable, so its
    /// committer waits instead of trying the combiner's role.
    taken: AtomicBool,
}

impl Slot {
    fn fill(&self, result: Result<u64>) {
        *self.result.lock() = Some(result);
        self.ready.notify_one();
    }
}

/// How long a committer sleeps before looking again without being woken. Combiners look at the queue again
/// after giving up the combiner's role, so no request is left behind and this is only a safety net.
const RETRY: Duration = Duration::from_millis(50);

impl Shared {
    /// Commits `txn` with `sync` durability through the group (see the module documentation).
    pub(super) fn commit_grouped(&self, txn: &mut WriteTxn, disk: &Disk) -> Result<u64> {
        let slot = Arc::new(Slot::default());
        self.queue.lock().push(Request {
            start_version: txn.start_version,
            schema_change: txn.schema_change,
            ops: std::mem::take(&mut txn.ops),
            writes: std::mem::take(&mut txn.writes),
            state: Some(txn.state.take()),
            settled: txn.settled,
            slot: slot.clone(),
        });
        #[cfg(test)]
        if tests::SLOW_FSYNC.load(Ordering::SeqCst) {
            // A committer descheduled between queueing and trying the role, as on a machine with more committers
            // than cores: meanwhile another one combines its request.
            std::thread::sleep(Duration::from_micros(500));
        }
        let result = loop {
            if let Some(result) = slot.result.lock().take() {
                break result;
            }
            // A combiner gives the role up before its group's fsync, so that the next group can form. A committer
            // whose request that combiner took used to find the role free and the queue empty, again and again
            // until the fsync ended: a busy loop of lock round trips that took two fifths of the server's CPU
            // under batched inserts. Such a committer waits on its slot instead.
            if !slot.taken.load(Ordering::Acquire) {
                if let Some(role) = self.combiner.try_lock() {
                    #[cfg(test)]
                    tests::COMBINES.with(|c| c.set(c.get() + 1));
                    // Our request is in the queue or in a group that answers it, and this group takes it if it
                    // is still queued.
                    self.combine(role, disk);
                    continue;
                }
            }
            let mut result = slot.result.lock();
            if result.is_none() {
                slot.ready.wait_for(&mut result, RETRY);
            }
            if let Some(result) = result.take() {
                break result;
            }
        };
        if result.is_ok() {
            txn.registered = false;
            self.unregister_writer(txn.start_version);
        }
        result
    }

    /// Applies and logs every queued request (again after giving up the role while more arrive), then makes
    /// them durable with one fsync, publishes the state, and fills their slots. `role` is the combiner's lock:
    /// committers only try it, so they never queue on it; the commit lock is taken per group, and may wait for
    /// a checkpoint.
    fn combine(&self, role: MutexGuard<'_, ()>, disk: &Disk) {
        let mut role = Some(role);
        // If anything below panics (a bug), the committers of this group must not wait forever, and the working
        // state may hold part of a transaction: answer them and refuse further commits.
        let mut unanswered = Unanswered { shared: self, slots: Vec::new() };
        let mut done: Vec<(Arc<Slot>, u64)> = Vec::new();
        let mut last_lsn = 0;
        let mut want_checkpoint = false;
        let mut waited = false;
        while let Some(guard) = role.take() {
            let batch = std::mem::take(&mut *self.queue.lock());
            for req in &batch {
                req.slot.taken.store(true, Ordering::Release);
            }
            unanswered.slots.extend(batch.iter().map(|req| req.slot.clone()));
            if !batch.is_empty() {
                let mut head = self.head.lock();
                if let Some(lsn) = self.apply_group(&mut head, batch, disk, &mut done) {
                    last_lsn = lsn;
                }
                want_checkpoint |= self.options.checkpoint_after_bytes > 0
                    && head.log_bytes_since_checkpoint >= self.options.checkpoint_after_bytes;
                drop(head);
                role = Some(guard);
                continue;
            }
            drop(guard);
            // While more than half the open writers are outside this group, give the core away once before the
            // fsync (PostgreSQL's `commit_delay` sleeps instead): on a machine with fewer cores than committers,
            // those of the previous group (woken by its fsync) and the rest reach their next commit meanwhile,
            // and one fsync (about 60 µs of CPU in the kernel here) covers them too. The role is given up first,
            // so that a long wait for the core (hundreds of runnable committers) never stalls the others: one of
            // them combines the next requests instead, and the log's flush covers both groups' records.
            if !waited && !done.is_empty() && self.open_writers.load(Ordering::Relaxed) > 2 * done.len() {
                waited = true;
                std::thread::yield_now();
            }
            // A request queued while we held the role found it taken and waits for a combiner: us, unless
            // another committer takes the role now.
            if !self.queue.lock().is_empty() {
                role = self.combiner.try_lock();
            }
        }
        if !done.is_empty() {
            #[cfg(test)]
            if tests::SLOW_FSYNC.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(2));
            }
            match disk.wal.sync_to(last_lsn, true) {
                Ok(()) => {
                    self.publish_durable(last_lsn);
                    for (slot, version) in done {
                        slot.fill(Ok(version));
                    }
                }
                Err(e) => {
                    let message = e.cause();
                    for (slot, _) in done {
                        slot.fill(Err(StorageError::Poisoned(message.clone())));
                    }
                }
            }
        }
        unanswered.slots.clear();
        if want_checkpoint {
            *self.checkpoint_wanted.lock() = true;
            self.checkpoint_cv.notify_one();
        }
    }

    /// Applies `batch` in order onto the head state, in place where this group already copied, and logs each
    /// request. Failures go to their slots; successes are added to `done`. Returns the log position after the
    /// last record appended, with the group's state queued for publication at it.
    fn apply_group(
        &self,
        head: &mut Head,
        batch: Vec<Request>,
        disk: &Disk,
        done: &mut Vec<(Arc<Slot>, u64)>,
    ) -> Option<u64> {
        // The state before the group: a replay that fails part-way restarts from it.
        let base = head.state.clone();
        let mut applied: Vec<(Vec<Op>, u64)> = Vec::new();
        let mut last_lsn = None;
        for mut req in batch {
            match self.apply_one(head, &mut req, disk, &base, &applied) {
                Ok((version, lsn)) => {
                    done.push((req.slot.clone(), version));
                    applied.push((std::mem::take(&mut req.ops), version));
                    last_lsn = Some(lsn);
                }
                Err(e) => req.slot.fill(Err(e)),
            }
        }
        let lsn = last_lsn?;
        Arc::make_mut(&mut head.state).seal();
        self.pending.lock().push_back((lsn, head.state.clone()));
        Some(lsn)
    }

    fn apply_one(
        &self,
        head: &mut Head,
        req: &mut Request,
        disk: &Disk,
        base: &Arc<GraphState>,
        applied: &[(Vec<Op>, u64)],
    ) -> Result<(u64, u64)> {
        disk.wal.check_poisoned()?;
        if self.broken.load(Ordering::Acquire) {
            return Err(StorageError::Poisoned(BROKEN.into()));
        }
        #[cfg(test)]
        if tests::PANIC_IN_APPLY.swap(false, Ordering::SeqCst) {
            panic!("injected failure while applying a group");
        }
        if head.commits_since_prune >= 4096 || head.last_write.len() > 1 << 16 {
            self.prune(head);
        }
        Self::check_conflicts_of(head, req.start_version, req.schema_change, &req.writes)?;
        let version = head.state.version() + 1;
        // The record first: a transaction too large to log changes nothing.
        let (payload, tokens) = self.log_record(version, &req.ops)?;
        if head.state.version() == req.start_version {
            let mut own = req.state.take().expect("a request's state is taken once");
            crate::txn::apply_pending(&mut own, &req.ops[req.settled..]);
            own.version = version;
            head.state = Arc::new(own);
        } else {
            let state = Arc::make_mut(&mut head.state);
            if let Some(e) = req.ops.iter().find_map(|op| state.apply(op).err()) {
                // Conflict detection rules this out, except between writers of one value under a uniqueness
                // constraint on a relationship property or several node properties (those values carry no write
                // key). The state then has part of the transaction: rebuild it from before the group and the
                // transactions already applied.
                self.catalog.return_unlogged(&tokens);
                head.state = base.clone();
                for (ops, v) in applied {
                    let state = Arc::make_mut(&mut head.state);
                    for op in ops {
                        state.apply(op).expect("a replay that succeeded succeeds again");
                    }
                    state.version = *v;
                }
                return Err(StorageError::Conflict(format!("replay failed: {e}")));
            }
            state.version = version;
        }
        let lsn = disk.wal.append(&payload, version);
        head.log_bytes_since_checkpoint += payload.len() as u64 + 8;
        if req.schema_change {
            head.last_schema_change = version;
        }
        head.commits_since_prune += 1;
        for key in req.writes.drain(..) {
            head.last_write.insert(key, version);
        }
        Ok((version, lsn))
    }
}

/// The slots of a group being combined; if the combiner unwinds, each slot not yet answered gets an error, and
/// the store refuses further commits.
struct Unanswered<'a> {
    shared: &'a Shared,
    slots: Vec<Arc<Slot>>,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if self.slots.is_empty() {
            return;
        }
        self.shared.broken.store(true, Ordering::Release);
        for slot in &self.slots {
            let mut result = slot.result.lock();
            if result.is_none() {
                *result = Some(Err(StorageError::Poisoned(BROKEN.into())));
                slot.ready.notify_one();
            }
        }
    }
}

/// Why commits are refused after a combiner failed part-way.
pub(super) const BROKEN: &str = "a commit failed part-way through applying its group (a bug, please report it)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::value::Value;

    /// Makes the next request applied by a combiner panic.
    pub(super) static PANIC_IN_APPLY: AtomicBool = AtomicBool::new(false);

    /// Makes each group's fsync take at least 2 ms, as a slow disk's does, and committers pause after queueing.
    pub(super) static SLOW_FSYNC: AtomicBool = AtomicBool::new(false);

    /// Held by the tests of this module, which commit from several threads: the failure injected by one must not
    /// land in another's commits.
    static SERIAL: Mutex<()> = Mutex::new(());

    thread_local! {
        /// How many times this thread took the combiner's role.
        pub(super) static COMBINES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn committers_whose_request_another_combiner_took_wait_for_its_fsync_instead_of_combining_again() {
        let _serial = SERIAL.lock();
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::open(dir.path()).unwrap();
        let label = store.write().label("N");
        let (threads, each) = (8u64, 50u64);
        SLOW_FSYNC.store(true, Ordering::SeqCst);
        let combines: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let store = &store;
                    s.spawn(move || {
                        for i in 0..each {
                            let mut tx = store.write();
                            tx.create_node(&[label], vec![]).unwrap();
                            tx.commit().unwrap_or_else(|e| panic!("commit {t}/{i}: {e}"));
                        }
                        COMBINES.with(|c| c.get())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        SLOW_FSYNC.store(false, Ordering::SeqCst);
        assert_eq!(store.read().label_count(label), threads * each);
        // Each commit takes the role at most about once (its own group, or one that found the queue just
        // emptied by another combiner). Spinning on the role while another group's fsync ran took it hundreds
        // of times per commit.
        assert!(combines <= 2 * threads * each, "{combines} combines for {} commits", threads * each);
    }

    #[test]
    fn a_combiner_that_fails_answers_its_group_and_the_store_refuses_further_commits() {
        let _serial = SERIAL.lock();
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::open(dir.path()).unwrap();
        let label = store.write().label("N");
        let key = store.write().prop_key("i");
        let commit = |i: i64| {
            let mut tx = store.write();
            tx.create_node(&[label], vec![(key, Value::Int(i))]).unwrap();
            tx.commit()
        };
        commit(0).unwrap();
        assert!(store.refusing_writes().is_none());
        PANIC_IN_APPLY.store(true, Ordering::SeqCst);
        // The committer that combines panics; whatever it had taken from the queue is answered with an error
        // instead of leaving its committers waiting.
        let outcomes: Vec<std::thread::Result<Result<u64>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (1..=8).map(|i| s.spawn(move || commit(i))).collect();
            handles.into_iter().map(|h| h.join()).collect()
        });
        let panicked = outcomes.iter().filter(|o| o.is_err()).count();
        assert_eq!(panicked, 1, "exactly the combiner that failed panics");
        for outcome in outcomes.iter().flatten() {
            if let Err(e) = outcome {
                assert!(matches!(e, StorageError::Poisoned(_)), "{e}");
            }
        }
        // No further commit, and no checkpoint of a state that may hold part of a transaction; health checks
        // can ask why without trying to commit.
        assert!(matches!(store.refusing_writes(), Some(StorageError::Poisoned(_))));
        assert!(matches!(commit(100), Err(StorageError::Poisoned(_))));
        assert!(matches!(store.checkpoint(), Err(StorageError::Poisoned(_))));
        let acknowledged = outcomes.iter().filter(|o| matches!(o, Ok(Ok(_)))).count() as u64;
        drop(store);
        // What was acknowledged survives a reopen, and the database accepts commits again.
        let (store, _) = Store::open(dir.path()).unwrap();
        assert!(store.refusing_writes().is_none());
        assert_eq!(store.read().label_count(label), 1 + acknowledged);
        let mut tx = store.write();
        tx.create_node(&[label], vec![]).unwrap();
        tx.commit().unwrap();
    }
}
