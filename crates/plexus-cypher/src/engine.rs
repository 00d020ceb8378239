//! The engine: the plan cache, and running a statement in the right kind of transaction (schema commands run in
//! [`crate::index_schema`], result rows become client values in [`crate::results`]).

use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use plexus_storage::{GraphState, ReadTxn, Store, WriteTxn};

use crate::ast::{RunMode, SchemaCommand, StatementKind};
use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::exec::ctx::Ctx;
use crate::index_schema::{explained_schema, schema, schema_plan};
use crate::plan::statistics::LabelCounts;
use crate::plan::{explain, planner, Plan, PlanNode};
use crate::results::{materialize, materialize_lent};
use crate::value::Value;
use crate::{Interrupt, Params, QueryResult, QueryStats};

/// What a statement compiles to.
pub(crate) enum Compiled {
    Query(Box<Plan>),
    Schema(SchemaCommand),
}

pub(crate) struct Statement {
    pub(crate) compiled: Compiled,
    pub(crate) mode: RunMode,
}

impl Statement {
    /// Whether its plan suits a graph with `counts` (see [`crate::plan::statistics`]).
    fn suits(&self, counts: &LabelCounts) -> bool {
        match &self.compiled {
            Compiled::Query(plan) => plan.planned_on.still_fits(counts),
            Compiled::Schema(_) => true,
        }
    }

    /// Whether its plan made a choice that label counts decide (a cached plan is then checked against the graph).
    fn consults_counts(&self) -> bool {
        matches!(&self.compiled, Compiled::Query(plan) if plan.planned_on.consults_counts())
    }

    /// Whether running it changes the database: a schema command or a writing plan, except under EXPLAIN.
    fn writes(&self) -> bool {
        self.mode != RunMode::Explain
            && match &self.compiled {
                Compiled::Schema(_) => true,
                Compiled::Query(plan) => plan.writes,
            }
    }
}

/// Plans kept per engine; beyond this the cache starts over (a simple bound against unbounded distinct texts).
const PLAN_CACHE_CAPACITY: usize = 1024;

/// Runs queries; holds the plan cache. One engine serves a whole database and is shared between threads.
#[derive(Default)]
pub struct Engine {
    cache: Mutex<plexus_storage::fxhash::FxHashMap<String, Arc<Statement>>>,
    procedures: parking_lot::RwLock<crate::procedures::ProcedureRegistry>,
    /// The files `LOAD CSV` may read (any, by default).
    files: parking_lot::RwLock<Arc<crate::files::FileAccess>>,
    /// Counts procedure registrations: a plan made while one happened may have resolved names (and listed
    /// procedures) before it, so it is not cached.
    registrations: std::sync::atomic::AtomicU64,
    /// Taken by an auto-commit statement for its reruns after a write conflict ([`ConflictReruns`]), and by a
    /// part of `CALL { } IN TRANSACTIONS` for its own.
    rerun_turn: Arc<parking_lot::Mutex<()>>,
}

impl Engine {
    pub fn new() -> Engine {
        Engine::default()
    }

    /// The statement's plan, from the cache when there: for running, [`Engine::compile_for`] (which checks that
    /// the plan suits the graph); for what does not depend on the graph (whether it writes, EXPLAIN without a
    /// graph), this.
    fn compile(&self, query: &str) -> Result<Arc<Statement>> {
        self.compile_on(query, None)
    }

    /// The statement's plan for a run on `graph`: a cached plan whose choice of where patterns start rested on
    /// label counts that have since changed a lot (or on none) is made again for this graph.
    fn compile_for(
        &self,
        query: &str,
        graph: &GraphState,
        catalog: &plexus_storage::Catalog,
    ) -> Result<Arc<Statement>> {
        self.compile_on(query, Some(LabelCounts::new(graph, catalog)))
    }

    fn compile_on(&self, query: &str, counts: Option<LabelCounts>) -> Result<Arc<Statement>> {
        if let Some(s) = self.cache.lock().get(query) {
            if counts.as_ref().is_none_or(|counts| s.suits(counts)) {
                return Ok(s.clone());
            }
        }
        let parsed = crate::parser::parse(query).map_err(|e| e.locate_in(query))?;
        let registrations = self.registrations.load(std::sync::atomic::Ordering::Acquire);
        let files = self.files.read().clone();
        let compiled = match &parsed.kind {
            StatementKind::Query(q) => Compiled::Query(Box::new(
                planner::plan_query(query, q, &self.procedures.read(), files.clone(), counts)
                    .map_err(|e| e.locate_in(query))?,
            )),
            StatementKind::Schema(cmd) => Compiled::Schema(cmd.clone()),
        };
        let statement = Arc::new(Statement { compiled, mode: parsed.mode });
        let mut cache = self.cache.lock();
        if cache.len() >= PLAN_CACHE_CAPACITY {
            cache.clear();
        }
        // Not kept when the file access changed while it was planned (its LOAD CSV holds the old one), nor when a
        // procedure was registered meanwhile.
        if Arc::ptr_eq(&files, &self.files.read())
            && registrations == self.registrations.load(std::sync::atomic::Ordering::Acquire)
        {
            cache.insert(query.to_string(), statement.clone());
        }
        Ok(statement)
    }

    /// Sets which files `LOAD CSV` may read: any (the default, for a program embedding its database), only those
    /// under a directory (a server's import directory), or none. Plans compiled before are dropped.
    pub fn set_file_access(&self, access: crate::files::FileAccess) {
        *self.files.write() = Arc::new(access);
        self.cache.lock().clear();
    }

    /// Makes a procedure callable with `CALL name(...)`: `body` maps the arguments (checked against the
    /// signature's types) to rows of outputs in signature order. Replaces a procedure of the same name.
    pub fn register_procedure(
        &self,
        signature: crate::procedures::ProcedureSignature,
        body: impl Fn(&[Value]) -> Result<Vec<Vec<Value>>> + Send + Sync + 'static,
    ) {
        self.procedures.write().register(crate::procedures::UserProcedure { signature, body: Box::new(body) });
        self.registrations.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        // Plans resolved procedure names when they were made.
        self.cache.lock().clear();
    }

    /// Parses and plans `query` without running it; the plan text for `EXPLAIN`.
    pub fn explain(&self, query: &str) -> Result<String> {
        let s = self.compile(query)?;
        Ok(match &s.compiled {
            Compiled::Query(plan) => explain::render(&plan.root, None, None),
            Compiled::Schema(cmd) => schema_plan(cmd, None).0,
        })
    }

    /// Runs `query` in its own transaction: a snapshot for a read-only query, a write transaction committed at the
    /// end otherwise (nothing is left behind if it fails).
    pub fn execute(&self, store: &Store, query: &str, params: &Params) -> Result<QueryResult> {
        self.execute_with(store, query, params, None)
    }

    /// [`Engine::execute`], stoppable through `interrupt` (time limit, cancellation, result size).
    pub fn execute_with(
        &self,
        store: &Store,
        query: &str,
        params: &Params,
        interrupt: Option<&Arc<Interrupt>>,
    ) -> Result<QueryResult> {
        let mut statement = self.compile(query)?;
        if statement.consults_counts() {
            let snapshot = store.read();
            let counts = LabelCounts::new(&snapshot, snapshot.catalog());
            if !statement.suits(&counts) {
                statement = self.compile_on(query, Some(counts))?;
            }
        }
        let stopped = || interrupt.is_some_and(|i| i.check().is_err());
        let writes = statement.writes();
        if writes && store.is_read_only() {
            // Refused before anything runs, rather than at commit after all the work.
            return Err(CypherError::new(
                ErrorKind::ReadOnlyDatabase,
                Phase::CompileTime,
                "",
                format!(
                    "this statement writes, but the database{} was opened read-only",
                    store.path().map(|p| format!(" at {}", p.display())).unwrap_or_default()
                ),
            ));
        }
        match &statement.compiled {
            Compiled::Schema(cmd) if statement.mode == RunMode::Explain => Ok(explained_schema(cmd)),
            Compiled::Schema(cmd) => self.rerun_on_conflict(true, stopped, CypherError::is_retryable, || {
                let mut tx = store.write();
                let result = schema(&mut tx, cmd, statement.mode)?;
                tx.commit()?;
                Ok(result)
            }),
            Compiled::Query(plan) => {
                if statement.mode == RunMode::Explain {
                    let snapshot: ReadTxn = store.read();
                    return Ok(explained(plan, &Ctx::read(&snapshot, params, plan.width)));
                }
                if plan.writes {
                    // Retrying the whole of a statement that committed parts would repeat them.
                    let parts_stay = |e: CypherError| {
                        if !plan.commits_in_parts || !e.is_retryable() {
                            return e;
                        }
                        let message = format!("{} ({PARTS_STAY})", e.message);
                        CypherError::new(ErrorKind::ExecutionFailed, Phase::Runtime, "", message)
                    };
                    self.rerun_on_conflict(plan.reruns_on_conflict, stopped, CypherError::is_retryable, || {
                        let mut tx = store.write();
                        let mut ctx = Ctx::write(&mut tx, params, plan.width);
                        ctx.may_commit_parts = true;
                        ctx.rerun_turn = plan.parts_rerun_on_conflict.then(|| self.rerun_turn.clone());
                        let result = run(plan, statement.mode, ctx, interrupt)?;
                        tx.commit()?;
                        Ok(result)
                    })
                    .map_err(parts_stay)
                } else {
                    let snapshot: ReadTxn = store.read();
                    run(plan, statement.mode, Ctx::read(&snapshot, params, plan.width), interrupt)
                }
            }
        }
    }
}

/// What a statement that committed parts of `CALL { } IN TRANSACTIONS` before failing says of them.
pub const PARTS_STAY: &str =
    "the parts of CALL { } IN TRANSACTIONS committed before it stay committed, and running the statement again \
     repeats them";

/// How an auto-commit statement that meets a write conflict runs again. A statement that fails only because a
/// concurrent commit wrote the same data first runs again on a newer snapshot: nobody saw the failed run's
/// rows and its writes were never visible, so a rerun gives what waiting for a lock gives in Neo4j. Reruns take
/// turns, one statement at a time per database: under a hot spot, statements that all rerun against one another
/// would each waste its run on a conflict with the next (64 clients incrementing one node with a 10 ms statement
/// managed 3 a second and most gave up), while in turn they go at the rate one statement runs. A turn's reruns
/// pause a little longer after each conflict (randomised; the first-time runs of other statements may still
/// win), and a statement gives up with its conflict after [`ConflictReruns::WAIT`] waiting for its turn or
/// [`ConflictReruns::FOR`] of reruns in it; an interrupt (time limit, cancellation) ends either sooner.
pub struct ConflictReruns {
    started: std::time::Instant,
    pause_micros: u64,
}

impl Default for ConflictReruns {
    fn default() -> Self {
        ConflictReruns { started: std::time::Instant::now(), pause_micros: 20 }
    }
}

impl ConflictReruns {
    /// How long a statement keeps running again in its turn before reporting its conflict.
    pub const FOR: std::time::Duration = std::time::Duration::from_secs(2);
    /// How long a statement waits for its turn before reporting its conflict.
    pub const WAIT: std::time::Duration = std::time::Duration::from_secs(60);

    /// Waits before the next run in a turn, or returns false when the time for reruns is over.
    fn wait(&mut self) -> bool {
        if self.started.elapsed() >= Self::FOR {
            return false;
        }
        let jitter = crate::functions::math::random_u64() % self.pause_micros;
        std::thread::sleep(std::time::Duration::from_micros(self.pause_micros / 2 + jitter));
        self.pause_micros = (self.pause_micros * 2).min(20_000);
        true
    }
}

impl Engine {
    /// Runs `attempt` (a whole auto-commit statement: a transaction of its own, committed), and again in the
    /// statement's turn while `reruns` and it fails on a write conflict (`is_conflict`); see [`ConflictReruns`].
    /// `interrupted` tells whether the statement's interrupt has stopped it.
    pub fn rerun_on_conflict<T, E>(
        &self,
        reruns: bool,
        interrupted: impl Fn() -> bool,
        is_conflict: impl Fn(&E) -> bool,
        mut attempt: impl FnMut() -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        match attempt() {
            Err(e) if reruns && is_conflict(&e) => {
                ConflictReruns::in_turn(&self.rerun_turn, e, interrupted, is_conflict, attempt)
            }
            other => other,
        }
    }
}

impl ConflictReruns {
    /// After a first run failed with `conflict`: waits for the database's `turn`, then runs `attempt` again while
    /// it fails on a conflict, pausing between runs, until it succeeds, fails otherwise, is interrupted, or the
    /// time for waiting or for reruns is over (then the last conflict is returned). Whole auto-commit statements
    /// and the parts of `CALL { } IN TRANSACTIONS` rerun through it.
    pub(crate) fn in_turn<T, E>(
        turn: &parking_lot::Mutex<()>,
        conflict: E,
        interrupted: impl Fn() -> bool,
        is_conflict: impl Fn(&E) -> bool,
        mut attempt: impl FnMut() -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let asked = std::time::Instant::now();
        let _turn = loop {
            if let Some(turn) = turn.try_lock_for(std::time::Duration::from_millis(20)) {
                break turn;
            }
            if interrupted() || asked.elapsed() >= ConflictReruns::WAIT {
                return Err(conflict);
            }
        };
        let mut pauses = ConflictReruns::default();
        loop {
            match attempt() {
                Err(e) if is_conflict(&e) => {
                    if interrupted() || !pauses.wait() {
                        return Err(e);
                    }
                }
                other => return other,
            }
        }
    }
}

impl Engine {
    /// Runs `query` as an auto-commit statement in `tx`, a write transaction of its own that the caller commits
    /// (or drops, on an error) afterwards: like [`Engine::execute_in_with`], but the statement may commit
    /// part-way through (`CALL { } IN TRANSACTIONS`), going on in a new transaction that `tx` then is.
    pub fn execute_implicit_with(
        &self,
        tx: &mut WriteTxn,
        query: &str,
        params: &Params,
        interrupt: Option<&Arc<Interrupt>>,
    ) -> Result<QueryResult> {
        let statement = self.compile_for(query, tx, tx.catalog())?;
        match &statement.compiled {
            Compiled::Query(plan) if plan.commits_in_parts && statement.mode != RunMode::Explain => {
                let mut ctx = Ctx::write(tx, params, plan.width);
                ctx.may_commit_parts = true;
                ctx.rerun_turn = plan.parts_rerun_on_conflict.then(|| self.rerun_turn.clone());
                run(plan, statement.mode, ctx, interrupt)
            }
            _ => self.execute_in_with(tx, query, params, interrupt),
        }
    }

    /// Runs `query` inside an open write transaction (explicit transactions). A failing statement rolls back its
    /// own changes and leaves the transaction's earlier work in place.
    pub fn execute_in(&self, tx: &mut WriteTxn, query: &str, params: &Params) -> Result<QueryResult> {
        self.execute_in_with(tx, query, params, None)
    }

    /// [`Engine::execute_in`], stoppable through `interrupt`.
    pub fn execute_in_with(
        &self,
        tx: &mut WriteTxn,
        query: &str,
        params: &Params,
        interrupt: Option<&Arc<Interrupt>>,
    ) -> Result<QueryResult> {
        let statement = self.compile_for(query, tx, tx.catalog())?;
        let writes = statement.writes();
        if let Some(refusal) = writes.then(|| tx.refusal()).flatten() {
            return Err(CypherError::from(refusal));
        }
        match &statement.compiled {
            Compiled::Schema(cmd) if statement.mode == RunMode::Explain => Ok(explained_schema(cmd)),
            Compiled::Schema(cmd) => schema(tx, cmd, statement.mode),
            Compiled::Query(plan) => {
                if statement.mode == RunMode::Explain {
                    return Ok(explained(plan, &Ctx::write(tx, params, plan.width)));
                }
                if plan.commits_in_parts {
                    return Err(CypherError::implicit_transaction_required(Phase::CompileTime));
                }
                if !plan.writes {
                    return run(plan, statement.mode, Ctx::write(tx, params, plan.width), interrupt);
                }
                let mark = tx.savepoint();
                match run(plan, statement.mode, Ctx::write(tx, params, plan.width), interrupt) {
                    Ok(r) => Ok(r),
                    Err(e) => {
                        tx.rollback_to(mark);
                        Err(e)
                    }
                }
            }
        }
    }

    /// Runs a read-only query against a snapshot.
    pub fn execute_read(&self, snapshot: &ReadTxn, query: &str, params: &Params) -> Result<QueryResult> {
        self.execute_read_with(snapshot, query, params, None)
    }

    /// [`Engine::execute_read`], stoppable through `interrupt`.
    pub fn execute_read_with(
        &self,
        snapshot: &ReadTxn,
        query: &str,
        params: &Params,
        interrupt: Option<&Arc<Interrupt>>,
    ) -> Result<QueryResult> {
        let statement = self.compile_for(query, snapshot, snapshot.catalog())?;
        match &statement.compiled {
            Compiled::Query(plan) if !plan.writes => {
                if statement.mode == RunMode::Explain {
                    return Ok(explained(plan, &Ctx::read(snapshot, params, plan.width)));
                }
                run(plan, statement.mode, Ctx::read(snapshot, params, plan.width), interrupt)
            }
            Compiled::Schema(cmd) if statement.mode == RunMode::Explain => Ok(explained_schema(cmd)),
            _ => Err(CypherError::new(
                ErrorKind::SemanticError,
                Phase::CompileTime,
                "WriteInReadOnlyTransaction",
                "this query writes, but the transaction is read-only",
            )),
        }
    }

    /// Runs a read-only query against `snapshot` until it has produced at least `first_rows` rows (or all of
    /// them), and keeps the rest for later: the returned cursor produces them a batch at a time, against the
    /// same snapshot. A statement that cannot stream (EXPLAIN, PROFILE) runs whole. Errors as
    /// [`Engine::execute_read_with`], except those of the rows, which the cursor reports after the rows before
    /// them (even when none came first; [`ReadStream::failed_before_any_row`] reports those at once).
    ///
    /// [`ReadStream::failed_before_any_row`]: crate::cursor::ReadStream::failed_before_any_row
    pub fn execute_read_streaming(
        &self,
        snapshot: ReadTxn,
        query: &str,
        params: Arc<Params>,
        interrupt: Option<&Arc<Interrupt>>,
        first_rows: usize,
    ) -> Result<crate::cursor::ReadStream> {
        let statement = self.compile_for(query, &snapshot, snapshot.catalog())?;
        let plan = match &statement.compiled {
            Compiled::Query(plan) if !plan.writes && statement.mode == RunMode::Normal && !plan.columns.is_empty() => {
                plan
            }
            _ => {
                let first = self.execute_read_with(&snapshot, query, &params, interrupt)?;
                return Ok(crate::cursor::ReadStream { first, rest: None });
            }
        };
        let columns = plan.columns.clone();
        let notifications = plan.notices.for_run(snapshot.catalog());
        let mut cursor = crate::cursor::ReadCursor::open(statement.clone(), snapshot, params, interrupt)?;
        let mut rows = Vec::new();
        while rows.len() < first_rows.max(1) {
            match cursor.next_batch() {
                Ok(Some(batch)) if rows.is_empty() => rows = batch,
                Ok(Some(batch)) => rows.extend(batch),
                Ok(None) => break,
                // A row that fails is reported after the rows before it, as a later batch's would be: the stream
                // has begun (its columns are known) whatever its rows turn out to be. What stops the statement
                // itself (time limit, cancellation, result size, storage) ends it at once.
                Err(e) if e.kind.is_about_a_row() => {
                    cursor.hold(e);
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        let first = QueryResult { columns, rows, notifications, ..Default::default() };
        Ok(crate::cursor::ReadStream { first, rest: (!cursor.is_done()).then_some(cursor) })
    }

    /// Whether `query` commits part-way through (`CALL { } IN TRANSACTIONS`): a failure then leaves the parts
    /// before it committed, so running it again is not a safe retry.
    /// Whether `query`, run on its own, may run again after a write conflict ([`ConflictReruns`]): it writes,
    /// commits only at its end, and calls no procedure of the embedding program.
    pub fn reruns_on_conflict(&self, query: &str) -> bool {
        match self.compile(query).as_deref() {
            Ok(Statement { compiled: Compiled::Query(plan), mode: RunMode::Normal | RunMode::Profile }) => {
                plan.reruns_on_conflict
            }
            Ok(Statement { compiled: Compiled::Schema(_), mode: RunMode::Normal | RunMode::Profile }) => true,
            _ => false,
        }
    }

    pub fn commits_in_parts(&self, query: &str) -> bool {
        matches!(self.compile(query).as_deref(), Ok(Statement { compiled: Compiled::Query(plan), mode: RunMode::Normal | RunMode::Profile }) if plan.commits_in_parts)
    }

    /// Whether `query` only reads (EXPLAIN of a read included): it may then run on a snapshot of a write
    /// transaction, and stream.
    pub fn reads_only(&self, query: &str) -> bool {
        matches!(self.compile(query).as_deref(), Ok(Statement { compiled: Compiled::Query(plan), .. }) if !plan.writes)
    }

    /// What `query` may do to the database (it compiles the query, so a repeated query costs a cache lookup).
    /// Servers use it to route statements and to refuse writes from read-only users before running anything.
    pub fn access(&self, query: &str) -> Result<Access> {
        let statement = self.compile(query)?;
        Ok(match &statement.compiled {
            _ if !statement.writes() => Access::Read,
            Compiled::Schema(_) => Access::Schema,
            Compiled::Query(_) => Access::Write,
        })
    }
}

/// What a statement may do, for access control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reads only.
    Read,
    /// Changes data.
    Write,
    /// Changes the schema (indexes, constraints).
    Schema,
}

/// The answer to EXPLAIN: the plan as it would run against the graph `ctx` reads.
fn explained(plan: &Plan, ctx: &Ctx) -> QueryResult {
    QueryResult {
        columns: plan.columns.clone(),
        rows: vec![],
        stats: QueryStats::default(),
        plan: Some(explain::render(&plan.root, None, Some(ctx))),
        plan_tree: Some(explain::tree(&plan.root, None, Some(ctx))),
        notifications: plan.notices.for_run(ctx.catalog()),
    }
}

/// The first node or relationship inside parameter value `v` that `g` does not hold, named. A parameter can
/// carry one only from an embedding program (the Python package passes its `Node` objects back); one deleted
/// since would otherwise read as an empty entity in some places and fail in others.
fn missing_entity(v: &Value, g: &plexus_storage::GraphState) -> Option<String> {
    // Only values that are or may hold an entity are looked at: most parameters are scalars (no walk, no
    // allocation; this runs for every parameter of every query), and a list of a million maps of scalars (rows
    // for UNWIND) costs a look at each map's values, not a stack entry for each.
    let holds =
        |v: &&Value| matches!(v, Value::Node(_) | Value::Rel(_) | Value::Path(_) | Value::List(_) | Value::Map(_));
    if !holds(&v) {
        return None;
    }
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Node(n) if !g.node_exists(*n) => return Some(format!("node {}", n.0)),
            Value::Rel(r) if !g.rel_exists(*r) => return Some(format!("relationship {}", r.0)),
            Value::Path(p) => {
                if let Some(n) = p.nodes.iter().find(|n| !g.node_exists(**n)) {
                    return Some(format!("a path through node {}", n.0));
                }
                if let Some(r) = p.rels.iter().find(|r| !g.rel_exists(**r)) {
                    return Some(format!("a path along relationship {}", r.0));
                }
            }
            Value::List(items) => stack.extend(items.iter().filter(holds)),
            Value::Map(map) => stack.extend(map.values().filter(holds)),
            _ => {}
        }
    }
    None
}

fn run(plan: &Plan, mode: RunMode, mut ctx: Ctx, interrupt: Option<&Arc<Interrupt>>) -> Result<QueryResult> {
    ctx.interrupt = interrupt.cloned();
    ctx.writes_per_row = plan.writes_per_row;
    check_params(plan, &ctx)?;
    let started = (mode == RunMode::Profile).then(Instant::now);
    if mode == RunMode::Profile {
        ctx.profile = Some(Default::default());
    }
    let rows = match &plan.root {
        // A read converts each row as it is made. PROFILE counts the rows of the projection to the columns,
        // and a write first settles its deletions, which decide how a deleted entity is returned.
        PlanNode::Produce { input, columns } if !plan.writes && ctx.profile.is_none() && !columns.is_empty() => {
            materialize_lent(input, columns, &mut ctx)?
        }
        _ => {
            let rows = if plan.columns.is_empty() {
                // Nothing is returned: run for the side effects without keeping rows.
                let mut op = crate::exec::open(&plan.root, None);
                while op.next(&mut ctx)?.is_some() {}
                Vec::new()
            } else {
                crate::exec::collect_result(&plan.root, &mut ctx)?
            };
            if plan.writes {
                crate::exec::update::settle_deletions(&mut ctx)?;
            }
            materialize(rows, &ctx)?
        }
    };
    let profile = ctx.profile.as_ref().map(|p| p.borrow());
    let plan_text = profile.as_ref().map(|profile| {
        format!(
            "{}rows: {}, time: {:.3} ms\n",
            explain::render(&plan.root, Some(profile), Some(&ctx)),
            rows.len(),
            started.map_or(0.0, |s| s.elapsed().as_secs_f64() * 1e3)
        )
    });
    let plan_tree = profile.as_ref().map(|profile| explain::tree(&plan.root, Some(profile), Some(&ctx)));
    drop(profile);
    let notifications = plan.notices.for_run(ctx.catalog());
    Ok(QueryResult { columns: plan.columns.clone(), rows, stats: ctx.stats, plan: plan_text, plan_tree, notifications })
}

/// Refuses a run whose parameters are missing or hold entities that do not exist.
pub(crate) fn check_params(plan: &Plan, ctx: &Ctx) -> Result<()> {
    // One lookup per parameter answers both checks; a missing parameter is reported before a deleted entity.
    let mut deleted = None;
    for (name, position) in &plan.params {
        match ctx.params.get(name.as_str()) {
            None => {
                let missing = CypherError::new(
                    ErrorKind::ParameterMissing,
                    Phase::CompileTime,
                    "MissingParameter",
                    format!("expected parameter ${name}"),
                );
                return Err(match position {
                    Some(at) => missing.at(*at),
                    None => missing,
                });
            }
            Some(v) if deleted.is_none() => deleted = missing_entity(v, ctx.g()).map(|what| (name, what)),
            Some(_) => {}
        }
    }
    for typed in &plan.typed_params {
        if let Some(value) = ctx.params.get(typed.name.as_str()) {
            typed.check(value)?;
        }
    }
    if let Some((name, missing)) = deleted {
        return Err(CypherError::new(
            ErrorKind::EntityNotFound,
            Phase::Runtime,
            "DeletedEntityAccess",
            format!(
                "parameter ${name} holds {missing}, which does not exist (it was deleted, or is from another database)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled form of `query`'s plan, as text.
    fn plan_debug(query: &str) -> String {
        let engine = Engine::new();
        let statement = engine.compile(query).expect("compiles");
        match &statement.compiled {
            Compiled::Query(plan) => format!("{:?}", plan.root),
            Compiled::Schema(cmd) => format!("{cmd:?}"),
        }
    }

    #[test]
    fn exists_of_one_relationship_compiles_to_an_adjacency_check() {
        let fast = plan_debug("MATCH (a), (b) WHERE NOT EXISTS { (a)-[:T]->(b) } RETURN a");
        assert!(fast.contains("HasEdge") && fast.contains("exists: true") && !fast.contains("Subquery"), "{fast}");
        // Anything more than one relationship between bound nodes still runs as a subquery.
        for query in [
            "MATCH (a), (b) WHERE EXISTS { (a)-[:T]->(b:L) } RETURN a",
            "MATCH (a) WHERE EXISTS { (a)-[:T]->(c) } RETURN a",
            "MATCH (a), (b) WHERE EXISTS { (a)-[:T]->(b) WHERE a.x > 1 } RETURN a",
            "MATCH (a), (b) WHERE EXISTS { MATCH (a)-[:T]->(b) RETURN 1 } RETURN a",
        ] {
            assert!(plan_debug(query).contains("Subquery"), "{query}");
        }
    }

    #[test]
    fn union_parts_share_their_slots() {
        let width = |query: &str| match &Engine::new().compile(query).expect("compiles").compiled {
            Compiled::Query(plan) => plan.width,
            Compiled::Schema(_) => unreachable!("a query"),
        };
        let part = "MATCH (a)-[r]->(b) WITH a, b, r UNWIND [1, 2] AS z RETURN a.x AS x, z";
        let one = width(part);
        let many = width(&vec![part; 50].join(" UNION ALL "));
        assert!(many <= one + 1, "50 parts take {many} slots, one takes {one}");
    }
}
