//! What runs now: the statements executing (auto-commit, or inside an explicit transaction) and the explicit
//! transactions open, idle or not. `SHOW TRANSACTIONS` lists them, `TERMINATE TRANSACTIONS` stops them, and a
//! shutdown cancels every statement. Both protocols register here through [`crate::service::Service`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use parking_lot::Mutex;
use plexus::cypher::Interrupt;

/// Who runs a statement or opened a transaction, as `SHOW TRANSACTIONS` shows it.
#[derive(Clone, Default)]
pub struct Caller {
    pub user: Arc<str>,
    /// The connection's id (`bolt-7`); empty over HTTP.
    pub connection: Arc<str>,
    /// The client's address, where known.
    pub client: Arc<str>,
    /// The `tx_metadata` of the request that began the transaction or ran the auto-commit statement (`metaData`).
    pub metadata: Option<Arc<plexus::cypher::Map>>,
}

thread_local! {
    /// The caller of the request this thread serves: set by the protocol layer around a request, read where
    /// statements and transactions are registered (deep in the service, which has no other reason to know).
    static CALLER: std::cell::RefCell<Option<Caller>> = const { std::cell::RefCell::new(None) };
}

/// Runs `work` with `caller` as the one whose statements and transactions this thread registers.
pub fn as_caller<T>(caller: Caller, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Caller>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CALLER.with(|c| *c.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(CALLER.with(|c| c.borrow_mut().replace(caller)));
    work()
}

/// The caller set by [`as_caller`] on this thread, if any.
pub fn current_caller() -> Caller {
    CALLER.with(|c| c.borrow().clone()).unwrap_or_default()
}

/// A statement running now.
#[derive(Clone)]
struct Running {
    interrupt: Arc<Interrupt>,
    query: Arc<str>,
    /// When it started (a burst of a streamed result: when that burst started).
    started: SystemTime,
    since: Instant,
    /// The explicit transaction it runs in, if any.
    transaction: Option<u64>,
    caller: Caller,
}

/// An explicit transaction open now.
struct Open {
    started: SystemTime,
    since: Instant,
    fate: Arc<AtomicU8>,
    caller: Caller,
}

/// One row of `SHOW TRANSACTIONS`: an explicit transaction (with the statement running in it, if any) or an
/// auto-commit statement.
pub struct Listed {
    /// The transaction's id (an auto-commit statement's own id).
    pub id: u64,
    /// The statement running in it: its id and text.
    pub statement: Option<(u64, Arc<str>)>,
    pub started: SystemTime,
    pub since: Instant,
    pub caller: Caller,
    /// Terminated, and not yet touched by its client since (its next statement or commit fails).
    pub terminated: bool,
}

#[derive(Default)]
struct Entries {
    statements: HashMap<u64, Running>,
    transactions: HashMap<u64, Open>,
}

/// The statements and explicit transactions of a server. Ids of both come from one counter, so a transaction id
/// names one or the other.
pub struct Registry {
    entries: Mutex<Entries>,
    next_id: AtomicU64,
    /// Set by [`Registry::cancel_all`]: statements started from then on are cancelled at once.
    stopping: AtomicBool,
}

/// Removes a statement from the registry when it ends, however it ends.
pub struct RunningGuard<'a> {
    registry: &'a Registry,
    id: u64,
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        self.registry.entries.lock().statements.remove(&self.id);
    }
}

/// [`Registry::register_open`]'s entry: the statement is listed until this is dropped.
pub struct ListedStatement {
    registry: Arc<Registry>,
    id: u64,
    interrupt: Arc<Interrupt>,
}

impl ListedStatement {
    /// An error once the statement was terminated (or the server is stopping).
    pub fn check(&self) -> Result<(), plexus::CypherError> {
        self.interrupt.check()
    }
}

impl Drop for ListedStatement {
    fn drop(&mut self) {
        self.registry.entries.lock().statements.remove(&self.id);
    }
}

/// An explicit transaction's place in the registry, given up when the transaction ends (dropped with it).
pub struct TransactionTicket {
    registry: Arc<Registry>,
    pub id: u64,
    fate: Arc<AtomicU8>,
}

/// What became of an explicit transaction: still open, terminated, or committing. A transaction is either
/// terminated or committed, never reported terminated while its commit goes through.
const OPEN: u8 = 0;
const TERMINATED: u8 = 1;
const COMMITTING: u8 = 2;

impl TransactionTicket {
    /// Whether `TERMINATE TRANSACTIONS` stopped the transaction: it then runs and commits nothing more.
    pub fn terminated(&self) -> bool {
        self.fate.load(Ordering::Acquire) == TERMINATED
    }

    /// Claims the transaction for its commit; false if it was terminated first (then it must not commit).
    pub fn start_commit(&self) -> bool {
        self.fate.compare_exchange(OPEN, COMMITTING, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
}

impl Drop for TransactionTicket {
    fn drop(&mut self) {
        self.registry.entries.lock().transactions.remove(&self.id);
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry { entries: Mutex::default(), next_id: AtomicU64::new(1), stopping: AtomicBool::new(false) }
    }
}

impl Registry {
    /// Counts a statement as running while the guard lives, in explicit transaction `transaction` if given.
    pub fn register(&self, interrupt: &Arc<Interrupt>, query: &str, transaction: Option<u64>) -> RunningGuard<'_> {
        RunningGuard { registry: self, id: self.insert(interrupt, query, transaction) }
    }

    /// Lists an auto-commit statement whose result stays open between the client's PULLs, for as long as the
    /// returned entry lives: `TERMINATE TRANSACTIONS` cancels its interrupt, which each PULL checks.
    pub fn register_open(self: &Arc<Self>, query: &str) -> ListedStatement {
        let interrupt = Arc::new(Interrupt::new(None, None));
        let id = self.insert(&interrupt, query, None);
        ListedStatement { registry: self.clone(), id, interrupt }
    }

    fn insert(&self, interrupt: &Arc<Interrupt>, query: &str, transaction: Option<u64>) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let entry = Running {
            interrupt: interrupt.clone(),
            query: Arc::from(query),
            started: SystemTime::now(),
            since: Instant::now(),
            transaction,
            caller: current_caller(),
        };
        let mut entries = self.entries.lock();
        // Under the lock `cancel_all` takes, so a statement is either cancelled there or sees the flag here.
        if self.stopping.load(Ordering::SeqCst) {
            interrupt.cancel();
        }
        entries.statements.insert(id, entry);
        id
    }

    /// Registers an explicit transaction until the ticket is dropped.
    pub fn open_transaction(self: &Arc<Self>) -> TransactionTicket {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let fate = Arc::new(AtomicU8::new(OPEN));
        let open =
            Open { started: SystemTime::now(), since: Instant::now(), fate: fate.clone(), caller: current_caller() };
        self.entries.lock().transactions.insert(id, open);
        TransactionTicket { registry: self.clone(), id, fate }
    }

    /// Cancels every running statement, and any started later (shutdown).
    pub fn cancel_all(&self) {
        let entries = self.entries.lock();
        self.stopping.store(true, Ordering::SeqCst);
        for r in entries.statements.values() {
            r.interrupt.cancel();
        }
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// The explicit transactions open and the auto-commit statements running, by id.
    pub fn listed(&self) -> Vec<Listed> {
        let entries = self.entries.lock();
        let mut rows: Vec<Listed> = entries
            .transactions
            .iter()
            .map(|(&id, open)| {
                let statement = entries
                    .statements
                    .iter()
                    .filter(|(_, r)| r.transaction == Some(id))
                    .max_by_key(|(&sid, _)| sid)
                    .map(|(&sid, r)| (sid, r.query.clone()));
                let terminated = open.fate.load(Ordering::Acquire) == TERMINATED;
                Listed {
                    id,
                    statement,
                    started: open.started,
                    since: open.since,
                    caller: open.caller.clone(),
                    terminated,
                }
            })
            .collect();
        rows.extend(entries.statements.iter().filter(|(_, r)| r.transaction.is_none()).map(|(&id, r)| Listed {
            id,
            statement: Some((id, r.query.clone())),
            started: r.started,
            since: r.since,
            caller: r.caller.clone(),
            terminated: r.interrupt.is_cancelled(),
        }));
        rows.sort_by_key(|row| row.id);
        rows
    }

    /// Replaces explicit transaction `id`'s metadata (`CALL tx.setMetaData`); false when no such transaction
    /// is open.
    pub fn set_metadata(&self, id: u64, metadata: Option<Arc<plexus::cypher::Map>>) -> bool {
        match self.entries.lock().transactions.get_mut(&id) {
            Some(open) => {
                open.caller.metadata = metadata;
                true
            }
            None => false,
        }
    }

    /// Stops transaction or statement `id`: an explicit transaction is marked terminated (its next statement and
    /// its commit fail; a rollback still succeeds) and the statement running in it is cancelled. False when
    /// nothing runs under that id.
    pub fn terminate(&self, id: u64) -> bool {
        self.terminate_owned(id).is_some()
    }

    /// [`terminate`](Self::terminate), answering whose transaction or statement was stopped.
    pub fn terminate_owned(&self, id: u64) -> Option<Arc<str>> {
        let entries = self.entries.lock();
        if let Some(open) = entries.transactions.get(&id) {
            if open.fate.compare_exchange(OPEN, TERMINATED, Ordering::AcqRel, Ordering::Acquire) == Err(COMMITTING) {
                return None; // Committing already: too late to stop.
            }
            for r in entries.statements.values().filter(|r| r.transaction == Some(id)) {
                r.interrupt.cancel();
            }
            return Some(open.caller.user.clone());
        }
        let r = entries.statements.get(&id)?;
        r.interrupt.cancel();
        Some(r.caller.user.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transactions_are_listed_idle_or_running_and_terminated_by_id() {
        let registry = Arc::new(Registry::default());
        let ticket = registry.open_transaction();
        let auto = Arc::new(Interrupt::new(None, None));
        let _auto = registry.register(&auto, "RETURN 1", None);
        let rows = registry.listed();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].id, ticket.id);
        assert!(rows[0].statement.is_none(), "an idle transaction is listed without a statement");
        assert_eq!(rows[1].statement.as_ref().map(|(_, q)| &**q), Some("RETURN 1"));

        let inside = Arc::new(Interrupt::new(None, None));
        let guard = registry.register(&inside, "MATCH (n) RETURN n", Some(ticket.id));
        let rows = registry.listed();
        assert_eq!(rows.len(), 2, "a statement in a transaction is listed as the transaction");
        assert_eq!(rows[0].statement.as_ref().map(|(_, q)| &**q), Some("MATCH (n) RETURN n"));
        assert!(!rows[0].terminated);
        assert!(registry.terminate(ticket.id));
        assert!(ticket.terminated() && inside.check().is_err() && auto.check().is_ok());
        let rows = registry.listed();
        assert!(rows[0].terminated && !rows[1].terminated, "listed as terminated until its client sees it");
        drop(guard);
        drop(ticket);
        assert_eq!(registry.listed().len(), 1);
        assert!(!registry.terminate(9999));
    }

    /// A transaction is terminated or committed, never reported terminated while it commits.
    #[test]
    fn terminating_and_committing_exclude_each_other() {
        let registry = Arc::new(Registry::default());
        let committing = registry.open_transaction();
        assert!(committing.start_commit());
        assert!(!registry.terminate(committing.id), "a committing transaction was reported terminated");
        let terminated = registry.open_transaction();
        assert!(registry.terminate(terminated.id));
        assert!(!terminated.start_commit() && terminated.terminated());
    }
}
