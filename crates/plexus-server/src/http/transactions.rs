//! Explicit transactions of the Query API between requests: each has an unguessable id, belongs to the user who
//! opened it, and is rolled back when it stays idle past its timeout (every request that uses it pushes the
//! deadline back). A transaction in use is locked, so two requests on one transaction run one after the other.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rand::RngCore;

use crate::service::{ServerError, Service, Transaction};

/// One open transaction.
pub struct OpenTransaction {
    /// The user who opened it; nobody else may use it.
    pub user: String,
    pub state: Mutex<TxState>,
}

/// The mutable part of an open transaction, held under its lock while a statement runs.
pub struct TxState {
    /// `None` once committed, rolled back or expired.
    pub tx: Option<Transaction>,
    pub expires: Instant,
}

/// The open transactions of one HTTP listener.
pub struct Transactions {
    open: Mutex<HashMap<String, Arc<OpenTransaction>>>,
    pub timeout: Duration,
}

pub fn not_found(id: &str) -> ServerError {
    ServerError::new(
        "Neo.ClientError.Transaction.TransactionNotFound",
        format!(
            "Transaction with id '{id}' does not exist: it was committed, rolled back, or expired after being idle"
        ),
    )
}

impl Transactions {
    pub fn new(timeout: Duration) -> Transactions {
        Transactions { open: Mutex::default(), timeout }
    }

    /// Registers a new transaction; returns its id.
    pub fn open(&self, user: &str, tx: Transaction) -> (String, Arc<OpenTransaction>) {
        let mut bytes = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let entry = Arc::new(OpenTransaction {
            user: user.to_string(),
            state: Mutex::new(TxState { tx: Some(tx), expires: Instant::now() + self.timeout }),
        });
        self.open.lock().insert(id.clone(), entry.clone());
        (id, entry)
    }

    /// The transaction `id` if it is open and belongs to `user`.
    pub fn get(&self, id: &str, user: &str) -> Result<Arc<OpenTransaction>, ServerError> {
        match self.open.lock().get(id) {
            Some(t) if t.user == user => Ok(t.clone()),
            _ => Err(not_found(id)),
        }
    }

    /// Forgets the transaction `id` (after commit, rollback or a failed statement).
    pub fn remove(&self, id: &str) {
        self.open.lock().remove(id);
    }

    pub fn len(&self) -> usize {
        self.open.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rolls back every idle transaction past its deadline; returns how many. Transactions busy with a statement
    /// are left alone: their deadline moves when the statement ends.
    pub fn expire(&self, service: &Service, now: Instant) -> usize {
        let candidates: Vec<(String, Arc<OpenTransaction>)> =
            self.open.lock().iter().map(|(id, t)| (id.clone(), t.clone())).collect();
        let mut expired = 0;
        for (id, t) in candidates {
            let Some(mut state) = t.state.try_lock() else { continue };
            if state.expires <= now {
                if let Some(tx) = state.tx.take() {
                    service.rollback(tx);
                }
                self.remove(&id);
                expired += 1;
            }
        }
        expired
    }

    /// Rolls back everything still open (shutdown).
    pub fn close_all(&self, service: &Service) {
        let all: Vec<Arc<OpenTransaction>> = self.open.lock().drain().map(|(_, t)| t).collect();
        for t in all {
            if let Some(tx) = t.state.lock().tx.take() {
                service.rollback(tx);
            }
        }
    }
}

impl TxState {
    /// The transaction, unless it has been finished or has expired (an expired one is rolled back here).
    pub fn live(&mut self, service: &Service, id: &str) -> Result<&mut Transaction, ServerError> {
        if self.expires <= Instant::now() {
            if let Some(tx) = self.tx.take() {
                service.rollback(tx);
            }
        }
        self.tx.as_mut().ok_or_else(|| not_found(id))
    }

    pub fn touch(&mut self, timeout: Duration) {
        self.expires = Instant::now() + timeout;
    }
}

/// `expires` as the Query API reports it: an RFC 3339 UTC timestamp.
pub fn expiry_timestamp(expires: Instant) -> String {
    let left = expires.saturating_duration_since(Instant::now());
    let now = jiff::Timestamp::now();
    let at = jiff::SignedDuration::try_from(left).ok().and_then(|d| now.checked_add(d).ok()).unwrap_or(now);
    at.round(jiff::Unit::Millisecond).unwrap_or(at).to_string()
}
