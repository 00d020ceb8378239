//! `CALL { }`: the subquery runs once per input row. With `IN TRANSACTIONS OF n ROWS` the work is committed
//! every `n` input rows, and the rows of each transaction are held until it ends: they leave with the
//! subquery's results when it commits (so nothing after the subquery runs on uncommitted work), and under
//! `ON ERROR CONTINUE | BREAK` (or `REPORT STATUS AS s`), where a transaction that fails is rolled back instead
//! of failing the statement, with those results null when it fails.

use std::sync::Arc;

use plexus_storage::Savepoint;

use super::ctx::{Ctx, Deleted};
use super::{run_plan, Batch, Row, RowExpander};
use crate::ast::OnError;
use crate::error::{CypherError, ErrorKind, Result};
use crate::plan::PlanNode;
use crate::value::{Map, Value};
use crate::QueryStats;

pub(crate) struct Apply<'p> {
    inner: &'p PlanNode,
    returns: &'p [usize],
    /// `OPTIONAL CALL`: an input row the subquery returns nothing for stays, with its columns null.
    optional: bool,
    /// `IN TRANSACTIONS OF n ROWS`: `n`, evaluated at the first row, and the input rows done in this part.
    rows_per_transaction: Option<&'p crate::expr::CExpr>,
    per_part: Option<u64>,
    rows: u64,
    on_error: OnError,
    status: Option<usize>,
    /// Under `IN TRANSACTIONS`: the rows of the transaction under way, with the subquery's rows for each
    /// (`None` once the transaction failed, when failures are caught), ...
    held: Vec<(Row, Option<Vec<Row>>)>,
    /// ... where the transaction started (a savepoint to roll back to, when failures are caught; the statistics
    /// and deletions to go back to, for a rollback or a rerun), ...
    start: Option<(Option<Savepoint>, QueryStats, Option<Arc<Deleted>>)>,
    /// ... why it failed, if it did, ...
    failure: Option<String>,
    /// ... how many transactions there were before it, and whether a failure stopped them (`BREAK`).
    parts: u64,
    stopped: bool,
}

impl<'p> Apply<'p> {
    pub fn new(node: &'p PlanNode) -> Apply<'p> {
        let PlanNode::Apply { inner, returns, optional, rows_per_transaction, on_error, status, .. } = node else {
            unreachable!("an Apply node")
        };
        Apply {
            inner,
            returns,
            optional: *optional,
            rows_per_transaction: rows_per_transaction.as_ref(),
            per_part: None,
            rows: 0,
            on_error: *on_error,
            status: *status,
            held: Vec::new(),
            start: None,
            failure: None,
            parts: 0,
            stopped: false,
        }
    }

    /// Whether failed transactions are caught rather than failing the statement.
    fn catches(&self) -> bool {
        self.rows_per_transaction.is_some() && (self.on_error != OnError::Fail || self.status.is_some())
    }

    /// `n` of `IN TRANSACTIONS OF n ROWS`, evaluated at the first row.
    fn per_part(&mut self, row: &Row, ctx: &Ctx) -> Result<Option<u64>> {
        let Some(rows) = self.rows_per_transaction else { return Ok(None) };
        if let Some(n) = self.per_part {
            return Ok(Some(n));
        }
        let n = match rows.eval(row, ctx)? {
            Value::Int(n) if n > 0 => n as u64,
            other => {
                let shown = match &other {
                    Value::Int(_) | Value::Float(_) => crate::format::to_cypher_string(&other),
                    _ => other.type_name().to_string(),
                };
                return Err(CypherError::argument(
                    "InvalidArgumentType",
                    format!("IN TRANSACTIONS OF n ROWS takes a positive integer, not {shown}"),
                ));
            }
        };
        self.per_part = Some(n);
        Ok(Some(n))
    }

    /// Under `IN TRANSACTIONS` without catching failures: the subquery runs for `row` in the transaction under
    /// way, and its rows are held until that transaction commits, every `n` input rows and after the last, as
    /// in Neo4j: what follows the subquery sees only committed work, so its failure rolls back none of it.
    fn expand_in_parts(&mut self, row: &Row, per_part: u64, ctx: &mut Ctx, out: &mut Batch) -> Result<()> {
        if self.start.is_none() {
            self.start = Some((None, ctx.stats.clone(), ctx.deleted.clone()));
        }
        let rows = run_plan(self.inner, Some(row.clone()), ctx, None)?;
        self.held.push((row.clone(), Some(rows)));
        self.rows += 1;
        if self.rows == per_part {
            self.rows = 0;
            self.end_part(ctx, out)?;
        }
        Ok(())
    }

    /// Appends `row` with the subquery's `inner` rows (or nulls for them, with `None`) and its status.
    fn emit(&self, row: Row, inner: Option<Vec<Row>>, status: Value, out: &mut Batch) {
        let with_status = |mut r: Row| {
            if let Some(slot) = self.status {
                r[slot] = status.clone();
            }
            r
        };
        match inner {
            Some(rows) if rows.is_empty() && self.optional => {
                let mut r = row;
                for slot in self.returns {
                    r[*slot] = Value::Null;
                }
                out.push(with_status(r));
            }
            Some(rows) if !self.returns.is_empty() => {
                for inner in rows {
                    let mut r = row.clone();
                    for (slot, v) in self.returns.iter().zip(inner) {
                        r[*slot] = v;
                    }
                    out.push(with_status(r));
                }
            }
            _ => out.push(with_status(row)),
        }
    }

    /// Ends the transaction under way: commits it and lets its rows go, or (it failed) lets them go with the
    /// subquery's results null.
    fn end_part(&mut self, ctx: &mut Ctx, out: &mut Batch) -> Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let id = Value::string(format!("part-{}", self.parts + 1));
        let mut failure = self.failure.take();
        if failure.is_none() {
            match self.commit_rerunning(ctx) {
                Ok(()) => {}
                // A part whose commit still met a write conflict after its reruns, or whose subquery failed in
                // a rerun, failed as a part whose row failed does (ON ERROR CONTINUE, BREAK, REPORT STATUS); its
                // transaction was replaced by a new one.
                Err(e) if self.catches() && (e.is_retryable() || recoverable(&e)) => {
                    if let Some((_, stats, deleted)) = self.start.take() {
                        ctx.stats = stats;
                        ctx.deleted = deleted;
                    }
                    failure = Some(e.message.clone());
                }
                Err(e) => return Err(e),
            }
        }
        let status = status(true, failure.is_none(), id, failure.as_deref());
        let failed = failure.is_some();
        for (row, inner) in std::mem::take(&mut self.held) {
            self.emit(row, if failed { None } else { inner }, status.clone(), out);
        }
        self.parts += 1;
        self.start = None;
        self.stopped = failed && self.on_error == OnError::Break;
        Ok(())
    }

    /// Commits the part under way. A commit that meets a write conflict left nothing of the part (its
    /// transaction was replaced by a new one on the newest state), so the part runs again there: its input rows
    /// are fixed and nobody has seen its rows, so a rerun gives what waiting for a lock gives in Neo4j. Reruns
    /// take the database's turn as a whole statement's do ([`crate::ConflictReruns`]); the last conflict is
    /// returned when they run out. A subquery failing in a rerun returns its error, with the transaction replaced.
    fn commit_rerunning(&mut self, ctx: &mut Ctx) -> Result<()> {
        let conflict = match ctx.commit_part() {
            Err(e) if e.is_retryable() => e,
            done => return done,
        };
        let Some(turn) = ctx.rerun_turn.clone() else { return Err(conflict) };
        let interrupt = ctx.interrupt.clone();
        let interrupted = || interrupt.as_ref().is_some_and(|i| i.check().is_err());
        crate::ConflictReruns::in_turn(&turn, conflict, interrupted, CypherError::is_retryable, || self.rerun_part(ctx))
    }

    /// Runs the part under way again in the transaction that replaced the one whose commit failed, from the
    /// statistics and deletions it started with, and commits it; a subquery failing in it replaces the
    /// transaction again and returns its error.
    fn rerun_part(&mut self, ctx: &mut Ctx) -> Result<()> {
        if let Some((_, stats, deleted)) = &self.start {
            ctx.stats = stats.clone();
            ctx.deleted = deleted.clone();
        }
        for (row, inner) in self.held.iter_mut() {
            match run_plan(self.inner, Some(row.clone()), ctx, None) {
                Ok(rows) => *inner = Some(rows),
                Err(e) => {
                    ctx.tx()?.restart();
                    return Err(e);
                }
            }
        }
        ctx.commit_part()
    }

    /// The catching path for one input row.
    fn expand_catching(&mut self, row: &Row, ctx: &mut Ctx, out: &mut Batch) -> Result<()> {
        let per_part = self.per_part(row, ctx)?.expect("catching needs IN TRANSACTIONS");
        if self.stopped {
            // After a failure under BREAK, no other transaction is tried.
            self.emit(row.clone(), None, status(false, false, Value::Null, None), out);
            return Ok(());
        }
        if self.start.is_none() {
            let tx = ctx.tx()?;
            let mark = tx.savepoint();
            self.start = Some((Some(mark), ctx.stats.clone(), ctx.deleted.clone()));
        }
        let inner = if self.failure.is_some() {
            // The rest of a failed transaction's rows are not run.
            None
        } else {
            match run_plan(self.inner, Some(row.clone()), ctx, None) {
                Ok(rows) => Some(rows),
                Err(e) if recoverable(&e) => {
                    let (mark, stats, deleted) = self.start.take().expect("a transaction under way");
                    ctx.tx()?.rollback_to(mark.expect("a savepoint where failures are caught"));
                    ctx.stats = stats;
                    ctx.deleted = deleted;
                    self.failure = Some(e.message.clone());
                    None
                }
                Err(e) => return Err(e),
            }
        };
        self.held.push((row.clone(), inner));
        self.rows += 1;
        if self.rows == per_part {
            self.rows = 0;
            self.end_part(ctx, out)?;
        }
        Ok(())
    }
}

/// Errors of the subquery's own making, which a transaction can be rolled back for; not the statement being
/// stopped, out of memory, or storage failing.
fn recoverable(e: &CypherError) -> bool {
    !matches!(e.kind, ErrorKind::Timeout | ErrorKind::Terminated | ErrorKind::MemoryLimit | ErrorKind::Storage)
}

/// The map `REPORT STATUS AS s` binds, as Neo4j's.
fn status(started: bool, committed: bool, transaction_id: Value, error: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("started".into(), Value::Bool(started));
    m.insert("committed".into(), Value::Bool(committed));
    m.insert("transactionId".into(), transaction_id);
    m.insert("errorMessage".into(), error.map_or(Value::Null, Value::string));
    Value::map(m)
}

impl RowExpander for Apply<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        if self.catches() {
            self.expand_catching(row, ctx, out)?;
            return Ok(false);
        }
        if let Some(per_part) = self.per_part(row, ctx)? {
            self.expand_in_parts(row, per_part, ctx, out)?;
            return Ok(false);
        }
        let rows = run_plan(self.inner, Some(row.clone()), ctx, None)?;
        self.emit(row.clone(), Some(rows), Value::Null, out);
        Ok(false)
    }

    fn finish(&mut self, ctx: &mut Ctx, out: &mut Batch) -> Result<()> {
        if self.rows_per_transaction.is_some() {
            self.end_part(ctx, out)?;
        }
        Ok(())
    }
}
