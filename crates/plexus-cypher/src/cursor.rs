//! Results read a batch at a time: a read-only statement's operators kept open between requests for rows, so a
//! server streams a large result in the batches its client pulls instead of building it whole first.
//!
//! A [`ReadCursor`] owns everything its operators and context borrow (the compiled statement, the snapshot, the
//! parameters), each behind an `Arc` whose address does not move when the cursor does. The borrows are made
//! `'static` by hand; the cursor's field order drops the borrowers before what they borrow.

use std::sync::Arc;

use plexus_storage::ReadTxn;

use crate::engine::{check_params, Compiled, Statement};
use crate::error::{CypherError, Result};
use crate::exec::ctx::Ctx;
use crate::exec::Operator;
use crate::plan::Plan;
use crate::results::materialize;
use crate::value::ResultValue;
use crate::{Interrupt, Params, QueryResult};

/// The rows a read-only statement has not produced yet. Each [`ReadCursor::next_batch`] runs the operators for
/// one more batch against the snapshot the statement started on, so later writes never show.
///
/// `Send`, so a server or the Python package can hand a stream to another thread (see the `unsafe impl` below);
/// not `Sync`: one thread uses it at a time.
pub struct ReadCursor {
    // Field order is drop order: `op` borrows the plan inside `statement`, `ctx` the snapshot and the parameters.
    op: Option<Box<dyn Operator + 'static>>,
    /// An error met while the first rows were made, reported after them ([`Engine::execute_read_streaming`]).
    held: Option<CypherError>,
    ctx: Ctx<'static>,
    _params: Arc<Params>,
    _snapshot: Arc<ReadTxn>,
    _statement: Arc<Statement>,
}

// SAFETY: what keeps the compiler from deriving `Send` is the context's profile, an `Rc`, and the operators,
// trait objects without a `Send` bound. A cursor never profiles (`Ctx::read` leaves the profile out, PROFILE runs
// whole and never opens a cursor), its operators hold plain data (rows, positions, buffers), and everything they
// borrow is owned by the cursor itself behind `Arc`s. Moving the whole cursor to another thread therefore moves
// nothing another thread still refers to.
unsafe impl Send for ReadCursor {}

impl ReadCursor {
    /// Opens `statement` (a query that does not write) against `snapshot`.
    pub(crate) fn open(
        statement: Arc<Statement>,
        snapshot: ReadTxn,
        params: Arc<Params>,
        interrupt: Option<&Arc<Interrupt>>,
    ) -> Result<ReadCursor> {
        let Compiled::Query(plan) = &statement.compiled else {
            unreachable!("only queries are opened as cursors");
        };
        debug_assert!(!plan.writes);
        let snapshot = Arc::new(snapshot);
        // SAFETY: `plan` lives inside `statement` and the context borrows the contents of `snapshot` and
        // `params`; the cursor keeps all three alive, in `Arc`s that never hand out a mutable reference, and
        // drops `op` and `ctx` before them (field order). Nothing borrowed is reachable from outside as mutable.
        let plan: &'static Plan = unsafe { &*(&**plan as *const Plan) };
        let snapshot_ref: &'static ReadTxn = unsafe { &*Arc::as_ptr(&snapshot) };
        let params_ref: &'static Params = unsafe { &*Arc::as_ptr(&params) };
        let mut ctx = Ctx::read(snapshot_ref, params_ref, plan.width);
        ctx.interrupt = interrupt.cloned();
        ctx.writes_per_row = false;
        check_params(plan, &ctx)?;
        let op = crate::exec::open(&plan.root, None);
        Ok(ReadCursor { op: Some(op), held: None, ctx, _params: params, _snapshot: snapshot, _statement: statement })
    }

    /// The next rows (never empty), or `None` when the statement has produced them all. After an error the
    /// cursor is finished.
    pub fn next_batch(&mut self) -> Result<Option<Vec<Vec<ResultValue>>>> {
        if let Some(e) = self.held.take() {
            return Err(e);
        }
        let Some(op) = self.op.as_mut() else { return Ok(None) };
        match op.next(&mut self.ctx) {
            Ok(Some(rows)) => match materialize(rows, &self.ctx) {
                Ok(rows) => Ok(Some(rows)),
                Err(e) => {
                    self.op = None;
                    Err(e)
                }
            },
            Ok(None) => {
                self.op = None;
                Ok(None)
            }
            Err(e) => {
                self.op = None;
                Err(e)
            }
        }
    }

    /// What stops the statement (time limit, cancellation).
    pub fn interrupt(&self) -> Option<&Arc<Interrupt>> {
        self.ctx.interrupt.as_ref()
    }

    /// Replaces what stops the statement from here on: a server gives each burst of rows a client asks for the
    /// time limit afresh, rather than counting the time the client spends between requests.
    pub fn set_interrupt(&mut self, interrupt: Option<Arc<Interrupt>>) {
        self.ctx.interrupt = interrupt;
    }

    /// Whether every row has been produced (and any error reported).
    pub fn is_done(&self) -> bool {
        self.op.is_none() && self.held.is_none()
    }

    /// Ends the cursor with `error`, which its next batch reports.
    pub(crate) fn hold(&mut self, error: CypherError) {
        self.op = None;
        self.held = Some(error);
    }
}

/// A read-only statement's first rows, and a cursor over the rest when there may be more.
pub struct ReadStream {
    /// Columns, the first rows, and (for EXPLAIN and PROFILE, which run whole) the plan.
    pub first: QueryResult,
    /// The rest of the rows, or `None` when `first` holds them all.
    pub rest: Option<ReadCursor>,
}

impl ReadStream {
    /// The stream, or the error that ended it before any row: for callers that report such an error instead of
    /// an empty start (Bolt reports it after RUN has succeeded, as Neo4j does).
    pub fn failed_before_any_row(mut self) -> Result<ReadStream> {
        if self.first.rows.is_empty() {
            if let Some(error) = self.rest.as_mut().and_then(|c| c.held.take()) {
                return Err(error);
            }
        }
        Ok(self)
    }

    /// Every row in one result: the first ones and whatever the cursor still produces.
    pub fn collect(self) -> Result<QueryResult> {
        let ReadStream { mut first, rest } = self;
        if let Some(mut cursor) = rest {
            while let Some(rows) = cursor.next_batch()? {
                first.rows.extend(rows);
            }
        }
        Ok(first)
    }
}
