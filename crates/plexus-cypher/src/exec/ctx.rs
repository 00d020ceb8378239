//! The execution context: the graph a query runs against (a snapshot or a write transaction), its parameters,
//! its clock and the statistics of what it changed.

use plexus_storage::catalog::Catalog;
use plexus_storage::{GraphState, LabelId, PropKeyId, ReadTxn, TokenKind, TypeId, WriteTxn};

use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::temporal::Clock;
use crate::{Params, QueryStats};

pub(crate) enum Graph<'a> {
    Read { state: &'a GraphState, catalog: &'a Catalog },
    Write(&'a mut WriteTxn),
}

pub(crate) struct Ctx<'a> {
    pub graph: Graph<'a>,
    pub params: &'a Params,
    pub clock: Clock,
    pub stats: QueryStats,
    /// Slots per row.
    pub width: usize,
    /// Entities this statement deleted, with each relationship's type, so that reading them can say so and
    /// `type(r)` still answers.
    pub deleted: std::sync::Arc<Deleted>,
    /// Set when someone outside may stop the query (time limit, cancellation).
    pub interrupt: Option<std::sync::Arc<crate::Interrupt>>,
    /// Tokens (property keys, labels, types) this context has resolved by name. Expressions and patterns name
    /// them; the catalog answers under a lock with a SipHash per lookup, a tenth of a point query's instructions.
    /// Tokens are never removed and keep their ids, so a found one stays valid; a missing one is looked up again
    /// (it may be created meanwhile).
    tokens: std::cell::RefCell<Vec<(TokenKind, Box<str>, u32)>>,
}

/// Tokens a context remembers (queries name few; a linear scan of short strings beats hashing).
const TOKEN_CACHE: usize = 32;

/// What a statement deleted (shared copy-on-write with the contexts of its subqueries).
#[derive(Clone, Debug, Default)]
pub(crate) struct Deleted {
    pub nodes: std::collections::HashSet<plexus_storage::NodeId>,
    pub rels: std::collections::HashMap<plexus_storage::RelId, TypeId>,
}

impl<'a> Ctx<'a> {
    pub fn read(txn: &'a ReadTxn, params: &'a Params, clock: Clock, width: usize) -> Ctx<'a> {
        Ctx {
            graph: Graph::Read { state: txn, catalog: txn.catalog() },
            params,
            clock,
            stats: QueryStats::default(),
            width,
            deleted: Default::default(),
            interrupt: None,
            tokens: Default::default(),
        }
    }

    pub fn write(txn: &'a mut WriteTxn, params: &'a Params, clock: Clock, width: usize) -> Ctx<'a> {
        Ctx {
            graph: Graph::Write(txn),
            params,
            clock,
            stats: QueryStats::default(),
            width,
            deleted: Default::default(),
            interrupt: None,
            tokens: Default::default(),
        }
    }

    /// A read-only context over the same state, for subqueries inside expressions.
    pub fn reader(&self) -> Ctx<'_> {
        Ctx {
            graph: Graph::Read { state: self.g(), catalog: self.catalog() },
            params: self.params,
            clock: self.clock,
            stats: QueryStats::default(),
            width: self.width,
            deleted: self.deleted.clone(),
            interrupt: self.interrupt.clone(),
            tokens: Default::default(),
        }
    }

    #[inline]
    pub fn g(&self) -> &GraphState {
        match &self.graph {
            Graph::Read { state, .. } => state,
            Graph::Write(tx) => tx,
        }
    }

    pub fn catalog(&self) -> &Catalog {
        match &self.graph {
            Graph::Read { catalog, .. } => catalog,
            Graph::Write(tx) => tx.catalog(),
        }
    }

    pub fn tx(&mut self) -> Result<&mut WriteTxn> {
        match &mut self.graph {
            Graph::Write(tx) => Ok(tx),
            Graph::Read { .. } => {
                Err(CypherError::new(ErrorKind::Storage, Phase::Runtime, "", "cannot write in a read-only transaction"))
            }
        }
    }

    fn token(&self, kind: TokenKind, name: &str) -> Option<u32> {
        let cached = self.tokens.borrow().iter().find(|(k, known, _)| *k == kind && &**known == name).map(|t| t.2);
        if cached.is_some() {
            return cached;
        }
        let id = self.catalog().lookup(kind, name)?;
        let mut cache = self.tokens.borrow_mut();
        if cache.len() < TOKEN_CACHE {
            cache.push((kind, name.into(), id));
        }
        Some(id)
    }

    pub fn prop_key(&self, name: &str) -> Option<PropKeyId> {
        self.token(TokenKind::PropKey, name).map(PropKeyId)
    }

    pub fn label_id(&self, name: &str) -> Option<LabelId> {
        self.token(TokenKind::Label, name).map(LabelId)
    }

    pub fn type_id(&self, name: &str) -> Option<TypeId> {
        self.token(TokenKind::Type, name).map(TypeId)
    }

    pub fn label_name(&self, id: LabelId) -> std::sync::Arc<str> {
        self.catalog().name(TokenKind::Label, id.0).unwrap_or_else(|| "?".into())
    }

    pub fn type_name(&self, id: TypeId) -> std::sync::Arc<str> {
        self.catalog().name(TokenKind::Type, id.0).unwrap_or_else(|| "?".into())
    }

    pub fn key_name(&self, id: PropKeyId) -> std::sync::Arc<str> {
        self.catalog().name(TokenKind::PropKey, id.0).unwrap_or_else(|| "?".into())
    }

    pub fn param(&self, name: &str) -> Result<crate::value::Value> {
        self.params.get(name).cloned().ok_or_else(|| {
            CypherError::new(
                ErrorKind::ParameterMissing,
                Phase::Runtime,
                "MissingParameter",
                format!("expected parameter ${name}"),
            )
        })
    }
}
