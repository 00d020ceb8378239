//! The Plexus openCypher query engine.
//!
//! A query goes text → [`lexer`] tokens → [`parser`] AST ([`ast`]) → semantic checks and a logical plan
//! ([`plan`]) → execution ([`exec`]) over a storage snapshot or write transaction. Plans are cached by query text
//! in the [`Engine`], so a repeated parameterised query skips parsing and planning.
//!
//! Values: [`value::Value`] inside the engine (graph entities are ids), [`value::ResultValue`] in results.

pub mod arith;
pub mod ast;
pub mod builtin;
pub mod compare;
mod cursor;
mod engine;
pub mod error;
mod exec;
mod expr;
pub mod files;
pub mod format;
pub mod functions;
mod index_schema;
pub mod interrupt;
pub mod lexer;
pub mod notices;
pub mod parser;
mod plan;
pub mod procedures;
mod regex;
mod results;
pub mod temporal;
mod token;
pub mod value;

use std::collections::BTreeMap;

pub use cursor::{ReadCursor, ReadStream};
pub use engine::{Access, ConflictReruns, Engine, PARTS_STAY};
pub use error::{CypherError, ErrorKind, Phase, Position, Result};
pub use expr::MAX_VALUE_NESTING;
pub use files::FileAccess;
pub use interrupt::Interrupt;
pub use procedures::{ParamType, ProcedureSignature};
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
    /// Changes to what the server keeps beside the graph (users and roles), as Neo4j counts those to `system`.
    pub system_updates: u64,
}

impl QueryStats {
    /// Whether the statement changed the graph or its schema.
    pub fn contains_updates(&self) -> bool {
        *self != QueryStats { system_updates: self.system_updates, ..QueryStats::default() }
    }
}

/// The answer to a query: column names, rows of resolved values, and what it changed.
#[derive(Clone, Debug, Default)]
pub struct QueryResult {
    /// Shared with the cached plan, so a repeated query does not copy its column names.
    pub columns: std::sync::Arc<[String]>,
    pub rows: Vec<Vec<ResultValue>>,
    pub stats: QueryStats,
    /// The plan, for `EXPLAIN` and `PROFILE` (with rows and time per operator for the latter).
    pub plan: Option<String>,
    /// The same plan as a tree of operators, for clients that show plans as trees (Bolt drivers).
    pub plan_tree: Option<PlanTree>,
    /// What Neo4j would tell about the statement: unknown names, cartesian products, deprecations.
    pub notifications: Vec<notices::Notification>,
}

/// One operator of a plan and the operators it reads from: its input first, then any nested plan (an
/// OPTIONAL MATCH, a subquery, a MERGE pattern). Under PROFILE, the rows it produced and the time spent in it
/// with its inputs; `None` under EXPLAIN, and for an operator that ran inside another (a sort under its LIMIT).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanTree {
    pub operator: String,
    pub rows: Option<u64>,
    pub time: Option<std::time::Duration>,
    pub children: Vec<PlanTree>,
}

impl PlanTree {
    /// The operator's type as drivers show it (`AllNodesScan@neo4j`): its name without the details after it, and
    /// the database it ran on, as Neo4j writes it (the one database is `neo4j`).
    pub fn operator_type(&self) -> String {
        format!("{}@neo4j", self.operator.split(['(', ' ']).next().unwrap_or("Operator"))
    }
}

/// A random 64-bit number for `rand()` and `randomUUID()`: a per-thread SplitMix64 stream seeded from the clock.
pub(crate) fn random_u64() -> u64 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0x9e37_79b9, |d| d.as_nanos() as u64)
                ^ (&STATE as *const _ as u64),
        );
    }
    STATE.with(|s| {
        let mut z = s.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        s.set(z);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}
