//! Operators that turn each input row into zero or more output rows ([`RowExpander`]: lookups, scans,
//! expansions, subqueries), and [`FlatMap`], which runs one over its input: by batches, by lending each
//! output row, or by lending the matches of a single hop in runs ([`Operator::lend_hops`]).

use std::ops::ControlFlow;

use super::ctx::Ctx;
use super::{drop_row, lend_batches, null_row, open, Batch, HopSink, Op, Operator, Row, RowSink, BATCH};
use crate::error::Result;
use crate::plan::PlanNode;

/// Produces output rows for one input row, possibly more than fit in a batch: `expand` is called again with the
/// same row while it returns `true` ("more to come").
pub(crate) trait RowExpander {
    /// Appends output rows for `row` to `out`; returns `true` if it stopped early and must be called again.
    /// An expander may move `row` into its last output row (leaving it empty) once it will not read it again:
    /// a lookup or an expansion that yields one row per input then copies no rows at all.
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool>;

    /// Called once when the input is exhausted, for output held back until then.
    fn finish(&mut self, _ctx: &mut Ctx, _out: &mut Batch) -> Result<()> {
        Ok(())
    }

    /// Whether [`RowExpander::lend`] serves this expander.
    fn lends(&self) -> bool {
        false
    }

    /// Lends each output row for `row` to `sink` (see [`Operator::for_each_row`]) instead of appending it to
    /// a batch; `Break` when the sink stopped. Only called when [`RowExpander::lends`].
    fn lend(&mut self, _row: &mut Row, _ctx: &Ctx, _sink: &mut RowSink<'_>) -> Result<ControlFlow<()>> {
        unreachable!("lend is only called on an expander that lends")
    }

    /// Whether [`RowExpander::lend_hops`] serves this expander.
    fn lends_hops(&self) -> bool {
        false
    }

    /// Lends the matches for `row` in runs (see [`Operator::lend_hops`]). Only called when
    /// [`RowExpander::lends_hops`].
    fn lend_hops(&mut self, _row: &mut Row, _ctx: &Ctx, _sink: &mut HopSink<'_>) -> Result<ControlFlow<()>> {
        unreachable!("lend_hops is only called on an expander that lends hops")
    }
}

/// Where a [`FlatMap`]'s input rows come from: an operator, or the starting row itself when the input is
/// `Start` (the first operator of most queries), which then costs no operator and no batch around one row.
pub(super) enum Source<'p> {
    Op(Op<'p>),
    /// The starting row (`None` inside: a row of nulls), until taken.
    Start(Option<Option<Row>>),
}

pub(super) fn source(input: &PlanNode, arg: Option<Row>) -> Source<'_> {
    match input {
        PlanNode::Start => Source::Start(Some(arg)),
        _ => Source::Op(open(input, arg)),
    }
}

/// Lends each row of `input` to `sink`: the starting row itself, or each row its operator lends.
fn each_input_row(input: &mut Source<'_>, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
    match input {
        Source::Start(start) => {
            if let Some(arg) = start.take() {
                let mut row = arg.unwrap_or_else(|| null_row(ctx.width));
                let _ = sink(&mut row, ctx)?;
                drop_row(row);
            }
            Ok(())
        }
        Source::Op(input) => input.for_each_row(ctx, sink),
    }
}

pub(super) struct FlatMap<'p, E> {
    input: Source<'p>,
    expander: E,
    pending: std::vec::IntoIter<Row>,
    current: Option<Row>,
    finished: bool,
}

impl<'p, E> FlatMap<'p, E> {
    pub(super) fn new(input: Source<'p>, expander: E) -> Self {
        FlatMap { input, expander, pending: Vec::new().into_iter(), current: None, finished: false }
    }
}

impl<E: RowExpander> Operator for FlatMap<'_, E> {
    fn for_each_row(&mut self, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        if !self.expander.lends() || self.current.is_some() || self.pending.len() != 0 {
            return lend_batches(self, ctx, sink);
        }
        let expander = &mut self.expander;
        each_input_row(&mut self.input, ctx, &mut |row, ctx| expander.lend(row, ctx, sink))
    }

    fn lend_hops(&mut self, ctx: &mut Ctx, sink: &mut HopSink<'_>) -> Result<bool> {
        if !self.expander.lends_hops() || self.current.is_some() || self.pending.len() != 0 {
            return Ok(false);
        }
        let expander = &mut self.expander;
        each_input_row(&mut self.input, ctx, &mut |row, ctx| expander.lend_hops(row, ctx, sink))?;
        Ok(true)
    }

    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        let mut out = Vec::new();
        loop {
            if let Some(row) = &mut self.current {
                // Sized for a few rows once there is something to expand (the last call, which finds the input
                // exhausted, allocates nothing): growing from empty reallocates several times for a small result.
                if out.capacity() == 0 {
                    out.reserve(8);
                }
                let more = self.expander.expand(row, ctx, &mut out)?;
                if !more {
                    self.current = None;
                }
                if out.len() >= BATCH {
                    return Ok(Some(out));
                }
                continue;
            }
            if let Some(row) = self.pending.next() {
                self.current = Some(row);
                continue;
            }
            let exhausted = match &mut self.input {
                Source::Op(input) => match input.next(ctx)? {
                    Some(batch) => {
                        self.pending = batch.into_iter();
                        false
                    }
                    None => true,
                },
                Source::Start(start) => match start.take() {
                    Some(arg) => {
                        self.current = Some(arg.unwrap_or_else(|| null_row(ctx.width)));
                        false
                    }
                    None => true,
                },
            };
            if exhausted {
                if !self.finished {
                    self.finished = true;
                    self.expander.finish(ctx, &mut out)?;
                }
                return Ok(if out.is_empty() { None } else { Some(out) });
            }
        }
    }
}
