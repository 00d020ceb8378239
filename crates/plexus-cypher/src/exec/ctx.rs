//! The execution context: the graph a query runs against (a snapshot or a write transaction), its parameters,
//! its clock and the statistics of what it changed.

use plexus_storage::catalog::Catalog;
use plexus_storage::{GraphState, LabelId, PropKeyId, ReadTxn, TokenKind, TypeId, WriteTxn};

use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::temporal::Clock;
use crate::token::Token;
use crate::{Params, QueryStats};

pub(crate) enum Graph<'a> {
    Read { state: &'a GraphState, catalog: &'a Catalog },
    Write(&'a mut WriteTxn),
}

pub(crate) struct Ctx<'a> {
    pub graph: Graph<'a>,
    pub params: &'a Params,
    /// The statement's instant, read from the system clock the first time a temporal function asks for it (most
    /// statements never do) and shared with the contexts of subqueries.
    clock: PerStatement<'a, std::cell::OnceCell<Clock>>,
    pub stats: QueryStats,
    /// Slots per row.
    pub width: usize,
    /// Entities this statement deleted, with each relationship's type, so that reading them can say so and
    /// `type(r)` still answers; `None` until the statement deletes something (most never do, and a read should
    /// not allocate for it).
    pub deleted: Option<std::sync::Arc<Deleted>>,
    /// Nodes and relationships a procedure made up for its answer, which the graph does not hold
    /// (`db.schema.visualization()`): results resolve them from here. Shared with the contexts of subqueries,
    /// whose answers the statement may return.
    virtuals: PerStatement<'a, std::cell::RefCell<Virtuals>>,
    /// Set when someone outside may stop the query (time limit, cancellation).
    pub interrupt: Option<std::sync::Arc<crate::Interrupt>>,
    /// Under PROFILE: rows and time per operator, shared with the contexts of subqueries.
    pub profile: Option<std::rc::Rc<std::cell::RefCell<Profile>>>,
    /// Whether the statement may write while its reading operators are part-way through their input
    /// ([`crate::plan::PlanNode::writes_per_row`]). When it cannot, a variable-length expansion hands a row's
    /// paths on a batch at a time, keeping its walk between batches; when it can, the walk finishes first, so
    /// that what it finds does not depend on writes made while it was under way.
    pub writes_per_row: bool,
    /// Whether the statement runs in a transaction of its own, which it may commit part-way through
    /// (`CALL { } IN TRANSACTIONS`); not in an explicit transaction.
    pub may_commit_parts: bool,
    /// With `may_commit_parts`: the database's turn for reruns after a write conflict, which a part of
    /// `CALL { } IN TRANSACTIONS` whose commit met one takes to run again ([`crate::ConflictReruns`]).
    pub rerun_turn: Option<std::sync::Arc<parking_lot::Mutex<()>>>,
    /// Tables standing in for missing indexes when the statement looks the same label and key up many times.
    key_scans: super::key_scans::KeyScans,
    /// The lists of the statement's `IN` tests, kept between rows; shared with the contexts of subqueries.
    in_lists: std::rc::Rc<std::cell::RefCell<crate::expr::constant_in::InLists>>,
    /// Steps of the loops inside expressions (comprehensions, quantifiers, `reduce`) since the statement began,
    /// counted only when someone may stop the query (see [`Ctx::tick`]).
    loop_steps: std::cell::Cell<u32>,
}

/// What each operator of a profiled statement produced, keyed by its plan node.
#[derive(Default)]
pub(crate) struct Profile {
    ops: plexus_storage::fxhash::FxHashMap<*const crate::plan::PlanNode, OperatorProfile>,
}

/// Rows an operator produced and the time spent in it, its inputs included, over all its runs (an operator
/// of a subquery runs once per outer row).
#[derive(Clone, Copy, Default)]
pub(crate) struct OperatorProfile {
    pub rows: u64,
    pub time: std::time::Duration,
}

impl Profile {
    pub fn record(&mut self, node: &crate::plan::PlanNode, rows: usize, time: std::time::Duration) {
        let entry = self.ops.entry(node as *const _).or_default();
        entry.rows += rows as u64;
        entry.time += time;
    }

    pub fn of(&self, node: &crate::plan::PlanNode) -> Option<OperatorProfile> {
        self.ops.get(&(node as *const _)).copied()
    }
}

/// Something a statement has once for all its subqueries (its clock, its made-up entities): the statement's
/// context owns it, and a subquery's context refers to its statement's.
#[derive(Default)]
struct PerStatement<'a, T> {
    own: T,
    shared: Option<&'a T>,
}

impl<T: Default> PerStatement<'_, T> {
    fn cell(&self) -> &T {
        self.shared.unwrap_or(&self.own)
    }

    /// The same for a subquery's context.
    fn for_subquery(&self) -> PerStatement<'_, T> {
        PerStatement { own: T::default(), shared: Some(self.cell()) }
    }
}

/// Nodes and relationships made up for a procedure's answer, by id: ids count down from `u64::MAX`, which
/// Bolt sends as -1, -2, ... as Neo4j numbers its virtual entities, and which no stored entity reaches.
#[derive(Debug, Default)]
pub(crate) struct Virtuals {
    pub nodes: plexus_storage::fxhash::FxHashMap<u64, crate::value::NodeData>,
    pub rels: plexus_storage::fxhash::FxHashMap<u64, crate::value::RelData>,
}

/// Whether `id` is in the range made-up entities take ([`Virtuals`]): far above any stored id, so a test of it
/// on the path of every property read costs one comparison.
#[inline]
pub(crate) fn is_virtual(id: u64) -> bool {
    id > u64::MAX - (1 << 32)
}

/// What a statement deleted (shared copy-on-write with the contexts of its subqueries).
#[derive(Clone, Debug, Default)]
pub(crate) struct Deleted {
    pub nodes: std::collections::HashSet<plexus_storage::NodeId>,
    /// Each deleted relationship's type, start and end: what a result still shows of it.
    pub rels: std::collections::HashMap<plexus_storage::RelId, DeletedRel>,
    /// Nodes deleted while they still had relationships: still stored until their last relationship goes,
    /// which must happen before the statement ends (see `update::settle_deletions`).
    pub connected: std::collections::BTreeSet<plexus_storage::NodeId>,
}

/// What is kept of a relationship a statement deleted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeletedRel {
    pub ty: TypeId,
    pub start: plexus_storage::NodeId,
    pub end: plexus_storage::NodeId,
}

impl<'a> Ctx<'a> {
    /// Whether the statement runs under a memory limit: only then do operators count what they hold.
    pub fn memory_limited(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.max_result_bytes.is_some())
    }

    pub fn read(txn: &'a ReadTxn, params: &'a Params, width: usize) -> Ctx<'a> {
        Ctx {
            graph: Graph::Read { state: txn, catalog: txn.catalog() },
            params,
            clock: PerStatement::default(),
            stats: QueryStats::default(),
            width,
            deleted: None,
            virtuals: PerStatement::default(),
            interrupt: None,
            profile: None,
            writes_per_row: false,
            may_commit_parts: false,
            rerun_turn: None,
            key_scans: Default::default(),
            in_lists: Default::default(),
            loop_steps: Default::default(),
        }
    }

    pub fn write(txn: &'a mut WriteTxn, params: &'a Params, width: usize) -> Ctx<'a> {
        Ctx {
            graph: Graph::Write(txn),
            params,
            clock: PerStatement::default(),
            stats: QueryStats::default(),
            width,
            deleted: None,
            virtuals: PerStatement::default(),
            interrupt: None,
            profile: None,
            writes_per_row: true,
            may_commit_parts: false,
            rerun_turn: None,
            key_scans: Default::default(),
            in_lists: Default::default(),
            loop_steps: Default::default(),
        }
    }

    /// The made-up node `id`, if a procedure of this statement made it ([`Virtuals`]).
    pub fn virtual_node(&self, id: u64) -> Option<crate::value::NodeData> {
        self.virtuals.cell().borrow().nodes.get(&id).cloned()
    }

    /// The made-up relationship `id`, if a procedure of this statement made it ([`Virtuals`]).
    pub fn virtual_rel(&self, id: u64) -> Option<crate::value::RelData> {
        self.virtuals.cell().borrow().rels.get(&id).cloned()
    }

    #[cold]
    fn virtual_node_has_labels(&self, id: u64, labels: &[Token]) -> bool {
        self.virtual_node(id).is_some_and(|v| labels.iter().all(|l| v.labels.contains(l.name())))
    }

    /// Keeps made-up entities for the rest of the statement, for its results to resolve.
    pub fn add_virtuals(&self, more: Virtuals) {
        let mut v = self.virtuals.cell().borrow_mut();
        v.nodes.extend(more.nodes);
        v.rels.extend(more.rels);
    }

    /// Whether this statement deleted node `n`.
    #[inline]
    pub fn deleted_node(&self, n: plexus_storage::NodeId) -> bool {
        self.deleted.as_ref().is_some_and(|d| d.nodes.contains(&n))
    }

    /// Whether this transaction created node `n`.
    pub fn created_here(&self, n: plexus_storage::NodeId) -> bool {
        matches!(&self.graph, Graph::Write(tx) if tx.created_node(n))
    }

    /// What is kept of relationship `r` if this statement deleted it.
    #[inline]
    pub fn deleted_rel(&self, r: plexus_storage::RelId) -> Option<DeletedRel> {
        self.deleted.as_ref().and_then(|d| d.rels.get(&r).copied())
    }

    /// The record of what this statement deleted, for adding to it.
    pub fn deleted_mut(&mut self) -> &mut Deleted {
        std::sync::Arc::make_mut(self.deleted.get_or_insert_with(Default::default))
    }

    /// Commits what the statement did so far and goes on in a new transaction (`CALL { } IN TRANSACTIONS`).
    pub fn commit_part(&mut self) -> Result<()> {
        match &mut self.graph {
            Graph::Write(_) if self.may_commit_parts => {
                super::update::settle_deletions(self)?;
                let tx = self.tx()?;
                if let Err(e) = tx.commit_and_continue() {
                    // A conflict leaves the part uncommitted: the statement goes on (if it catches failures) in
                    // a new transaction, not in the one that failed.
                    if e.is_retryable() {
                        tx.restart();
                    }
                    return Err(e.into());
                }
                // What was deleted is gone from the transaction that goes on, as from any later one: a row
                // still holding a deleted node reads it as missing (null properties), as in Neo4j, rather than
                // as deleted by this transaction (an error).
                self.deleted = None;
                Ok(())
            }
            _ => Err(CypherError::implicit_transaction_required(Phase::Runtime)),
        }
    }

    /// Fails when the query was stopped (time limit, cancellation, result size).
    /// Counts one step of a loop inside an expression and checks for an interrupt every batch of steps. The
    /// operators check between batches of rows, but one row's expression can loop for minutes (nested
    /// comprehensions multiply), and a time limit, a cancellation or a client gone must stop it too.
    #[inline]
    pub fn tick(&self) -> Result<()> {
        if self.interrupt.is_none() {
            return Ok(());
        }
        let steps = self.loop_steps.get().wrapping_add(1);
        self.loop_steps.set(steps);
        if steps.is_multiple_of(super::BATCH as u32) {
            self.check_interrupt()
        } else {
            Ok(())
        }
    }

    pub fn check_interrupt(&self) -> Result<()> {
        match &self.interrupt {
            Some(interrupt) => interrupt.check(),
            None => Ok(()),
        }
    }

    /// A read-only context over the same state, for subqueries inside expressions.
    pub fn reader(&self) -> Ctx<'_> {
        Ctx {
            graph: Graph::Read { state: self.g(), catalog: self.catalog() },
            params: self.params,
            clock: self.clock.for_subquery(),
            stats: QueryStats::default(),
            width: self.width,
            deleted: self.deleted.clone(),
            virtuals: self.virtuals.for_subquery(),
            interrupt: self.interrupt.clone(),
            profile: self.profile.clone(),
            writes_per_row: false,
            may_commit_parts: false,
            rerun_turn: None,
            key_scans: Default::default(),
            in_lists: self.in_lists.clone(),
            loop_steps: Default::default(),
        }
    }

    /// Nodes labelled `label` that may have `value` under `key`, from a table the statement keeps over them, or
    /// `None` when the caller should scan the label (see [`super::key_scans`]).
    pub fn key_candidates(
        &mut self,
        label: LabelId,
        key: PropKeyId,
        value: &plexus_storage::Value,
    ) -> Option<super::key_scans::Candidates> {
        let (state, log): (&GraphState, _) = match &self.graph {
            Graph::Read { state, .. } => (state, None),
            Graph::Write(tx) => (tx, Some(tx.change_log())),
        };
        let memory_limit = self.interrupt.as_ref().and_then(|i| i.max_result_bytes);
        self.key_scans.candidates(state, log, (label, key), value, memory_limit)
    }

    /// The evaluated `list` of the `IN` test `at` (see [`crate::expr::constant_in`]): evaluated on `row` the first
    /// time and kept for the statement, unless a parameter it reads holds a graph entity (whose properties the
    /// statement may change between rows).
    pub fn constant_list(
        &self,
        at: &crate::expr::CExpr,
        list: &crate::expr::CExpr,
        row: &[crate::value::Value],
    ) -> Result<std::rc::Rc<crate::expr::constant_in::ConstantList>> {
        if let Some(known) = self.in_lists.borrow().constant(at) {
            return Ok(known);
        }
        let evaluated = std::rc::Rc::new(crate::expr::constant_in::ConstantList::new(&list.eval(row, self)?)?);
        if !crate::expr::constant_in::reads_entity_parameters(list, self.params) {
            self.in_lists.borrow_mut().keep_constant(at, evaluated.clone());
        }
        Ok(evaluated)
    }

    /// The hashed form of the list `items` of the `IN` test `at` when the test met the same list before.
    pub fn repeated_list(
        &self,
        at: &crate::expr::CExpr,
        items: &std::sync::Arc<Vec<crate::value::Value>>,
    ) -> Option<std::rc::Rc<crate::expr::constant_in::ConstantList>> {
        self.in_lists.borrow_mut().repeated(at, items)
    }

    /// The statement's instant (the same for every call within one statement).
    pub fn clock(&self) -> &Clock {
        self.clock.cell().get_or_init(Clock::now)
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

    pub fn prop_key(&self, name: &str) -> Option<PropKeyId> {
        self.catalog().lookup(TokenKind::PropKey, name).map(PropKeyId)
    }

    pub fn label_id(&self, name: &str) -> Option<LabelId> {
        self.catalog().lookup(TokenKind::Label, name).map(LabelId)
    }

    /// [`Ctx::prop_key`] for a name of the plan, resolved once per catalog.
    #[inline]
    pub fn prop_token(&self, token: &Token) -> Option<PropKeyId> {
        token.resolve(self.catalog(), TokenKind::PropKey).map(PropKeyId)
    }

    #[inline]
    pub fn label_token(&self, token: &Token) -> Option<LabelId> {
        token.resolve(self.catalog(), TokenKind::Label).map(LabelId)
    }

    /// Whether node `n` has every one of `labels` (a label no node has yet it has not).
    #[inline]
    pub fn node_has_labels(&self, n: plexus_storage::NodeId, labels: &[Token]) -> bool {
        if is_virtual(n.0) {
            return self.virtual_node_has_labels(n.0, labels);
        }
        let g = self.g();
        labels.iter().all(|l| self.label_token(l).is_some_and(|id| g.node_has_label(n, id)))
    }

    #[inline]
    pub fn type_token(&self, token: &Token) -> Option<TypeId> {
        token.resolve(self.catalog(), TokenKind::Type).map(TypeId)
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
