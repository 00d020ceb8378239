//! The Plexus openCypher query engine.
//!
//! A query goes text → [`lexer`] tokens → [`parser`] AST ([`ast`]) → semantic checks and a logical plan
//! ([`plan`]) → execution ([`exec`]) over a storage snapshot or write transaction. Plans are cached by query text
//! in the [`Engine`], so a repeated parameterised query skips parsing and planning.
//!
//! Values: [`value::Value`] inside the engine (graph entities are ids), [`value::ResultValue`] in results.

pub mod arith;
pub mod compare;
pub mod error;
pub mod format;
pub mod functions;
pub mod temporal;
pub mod value;

use std::collections::BTreeMap;

pub use error::{CypherError, ErrorKind, Phase, Position, Result};
pub use value::{Map, NodeData, PathData, RelData, ResultValue, Value};

/// Query parameters by name.
pub type Params = BTreeMap<String, Value>;

/// What a statement changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    pub nodes_created: u64,
    pub nodes_deleted: u64,
    pub relationships_created: u64,
    pub relationships_deleted: u64,
    pub properties_set: u64,
    pub labels_added: u64,
    pub labels_removed: u64,
    pub indexes_added: u64,
    pub indexes_removed: u64,
    pub constraints_added: u64,
    pub constraints_removed: u64,
}

impl QueryStats {
    pub fn contains_updates(&self) -> bool {
        *self != QueryStats::default()
    }
}

/// The answer to a query: column names, rows of resolved values, and what it changed.
#[derive(Clone, Debug, Default)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<ResultValue>>,
    pub stats: QueryStats,
    /// The plan, for `EXPLAIN` and `PROFILE` (with rows and time per operator for the latter).
    pub plan: Option<String>,
}

/// Runs queries; holds the plan cache. One engine serves a whole database and is shared between threads.
#[derive(Default)]
pub struct Engine {}

impl Engine {
    pub fn new() -> Engine {
        Engine::default()
    }

    /// Runs `query` in its own transaction: a snapshot for a read-only query, a write transaction committed at the
    /// end otherwise (nothing is left behind if it fails).
    pub fn execute(&self, store: &plexus_storage::Store, query: &str, params: &Params) -> Result<QueryResult> {
        let _ = (store, query, params);
        Err(CypherError::new(ErrorKind::SyntaxError, Phase::CompileTime, "", "the query engine is not built yet"))
    }

    /// Runs `query` inside an open write transaction (explicit transactions). A failing statement rolls back its
    /// own changes and leaves the transaction's earlier work in place.
    pub fn execute_in(&self, tx: &mut plexus_storage::WriteTxn, query: &str, params: &Params) -> Result<QueryResult> {
        let _ = (tx, query, params);
        Err(CypherError::new(ErrorKind::SyntaxError, Phase::CompileTime, "", "the query engine is not built yet"))
    }
}
