//! Execution: operators instantiated from a [`PlanNode`] tree pull batches of rows from their inputs.
//!
//! Reading operators stream, so `LIMIT` stops the work early. Updating operators are eager: they read all their
//! input before changing anything, which gives each clause the openCypher semantics of seeing the graph as the
//! previous clause left it.

pub(crate) mod aggregate;
mod apply;
pub(crate) mod ctx;
pub(crate) mod expand;
pub(crate) mod expand_aggregate;
mod flat_map;
mod key_scans;
pub(crate) mod load_csv;
pub(crate) mod lookup;
pub(crate) mod neighbour_counts;
pub(crate) mod nodemap;
mod order;
pub(crate) mod rel_lookup;
pub(crate) mod schema_properties;
pub(crate) mod schema_visualization;
mod shortest;
mod sources;
pub(crate) mod update;

pub(crate) use flat_map::RowExpander;
use flat_map::{source, FlatMap};

use std::collections::HashSet;
use std::ops::ControlFlow;

use plexus_storage::fxhash::FxHashSet;
use plexus_storage::{NodeId, RelId};

use crate::compare::{self, Equivalent};
use crate::error::{CypherError, Result};
use crate::plan::PlanNode;
use crate::value::Value;
use ctx::Ctx;
pub(crate) use order::count_value;
use order::{Limit, Skip, Sort};
pub(crate) use sources::Scan;
use sources::{CountFromStore, Optional, Union, Unwind};

pub(crate) type Row = Vec<Value>;
pub(crate) type Batch = Vec<Row>;

/// Empties `row`, keeping its allocation. `Vec::clear` calls the value's drop once per slot, out of line, and a
/// row has a slot for every variable of the query, most of them null or plain numbers and ids in any one clause:
/// dropping the rows an aggregation or a projection consumes was a tenth of some queries' instructions.
#[inline]
pub(crate) fn clear_row(row: &mut Row) {
    for value in row.iter_mut() {
        if value.frees_on_drop() {
            drop(std::mem::take(value));
        }
    }
    // SAFETY: a length of zero needs no initialised elements; every value left behind frees nothing on drop
    // (`Value::frees_on_drop`), so forgetting them leaks nothing.
    unsafe { row.set_len(0) };
}

/// A row of `width` nulls, written in place (`vec![Value::Null; width]` calls the value's clone for each).
#[inline]
pub(crate) fn null_row(width: usize) -> Row {
    let mut row = Vec::with_capacity(width);
    row.resize_with(width, || Value::Null);
    row
}

/// Drops `row` as [`clear_row`] empties it: without a drop call per slot that frees nothing.
pub(crate) fn drop_row(mut row: Row) {
    clear_row(&mut row);
}

/// A copy of `row`. `Vec::clone` calls the value's clone once per slot, out of line, where most slots hold
/// nulls, numbers or ids that copy as plain bits: an operator that makes a row per match (an expansion, a
/// label scan, UNWIND) copies its input row that way for every row it makes.
#[inline]
pub(crate) fn clone_row(row: &Row) -> Row {
    let mut copy = Vec::with_capacity(row.len());
    // SAFETY: `copy` is empty with room for the row.
    unsafe { copy_into_empty(&mut copy, row) };
    copy
}

/// Makes `dst` a copy of `src` in `dst`'s memory, as [`clone_row`] copies.
#[inline]
pub(crate) fn copy_row_into(dst: &mut Row, src: &Row) {
    clear_row(dst);
    dst.reserve(src.len());
    // SAFETY: `dst` was just emptied and has room for `src`.
    unsafe { copy_into_empty(dst, src) };
}

/// Copies `src` into `dst`, which must be empty with capacity for all of it.
///
/// # Safety
/// `dst.len() == 0` and `dst.capacity() >= src.len()`.
#[inline(always)]
unsafe fn copy_into_empty(dst: &mut Row, src: &Row) {
    let len = src.len();
    debug_assert!(dst.is_empty() && dst.capacity() >= len);
    // SAFETY: `dst` gets the row's bits whole, then every value that owns memory is overwritten, without being
    // dropped, by a clone of its own; a value that frees nothing on drop owns nothing (`Value::frees_on_drop`,
    // whose payloads a compile-time assertion in `value.rs` checks), so its bitwise copy is an independent equal
    // value. The length is set only once all are written: a clone that panics leaves an empty vector, and the
    // bitwise copies are forgotten, never dropped twice.
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr(), len);
        for (i, value) in src.iter().enumerate() {
            if value.frees_on_drop() {
                std::ptr::write(dst.as_mut_ptr().add(i), value.clone());
            }
        }
        dst.set_len(len);
    }
}

/// Writes `value` into a row's slot. A plain assignment calls the old value's drop out of line, and the slot
/// usually holds a null or a number that frees nothing.
#[inline]
pub(crate) fn put(slot: &mut Value, value: Value) {
    let old = std::mem::replace(slot, value);
    if old.frees_on_drop() {
        drop(old);
    } else {
        std::mem::forget(old);
    }
}

/// Rows per batch passed between operators.
pub(crate) const BATCH: usize = 1024;

/// What an operator does with each row lent to it by [`Operator::for_each_row`]: `Break` stops the input early.
pub(crate) type RowSink<'a> = dyn FnMut(&mut Row, &Ctx) -> Result<ControlFlow<()>> + 'a;

pub(crate) trait Operator {
    /// The next batch (never empty), or `None` when done.
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>>;

    /// Lends each remaining row to `sink` instead of handing batches over. An operator that builds its rows
    /// (the groups of a fused aggregation) writes them one after another into one reused row, so a consumer
    /// that keeps few rows (a top-k sort, another aggregation) allocates nothing per row. The sink may take
    /// the row (`std::mem::take`); otherwise the lender overwrites its in-scope slots for the next row and
    /// leaves the other slots as the sink left them, so a sink must write a slot before reading it again.
    fn for_each_row(&mut self, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        lend_batches(self, ctx, sink)
    }

    /// Lends the remaining groups of a fused count to `sink` as their parts, in runs that share their outer
    /// keys, when this operator is one (or projects one's slots, see `crate::plan::fuse::cell_parts`); false,
    /// with nothing consumed, when not.
    fn lend_cell_runs(&mut self, _ctx: &mut Ctx, _sink: &mut CellRunSink<'_>) -> Result<bool> {
        Ok(false)
    }

    /// Lends the matches of a single hop to a new node along a new relationship to `sink` without writing
    /// them into rows: each input row with runs of its matches, (relationship, neighbour). For a consumer that
    /// takes most matches without a row of their own (a fused count batching them, see
    /// `neighbour_counts::NeighbourCounts::count_hops`); false, with nothing consumed, when this operator is
    /// not such a hop.
    fn lend_hops(&mut self, _ctx: &mut Ctx, _sink: &mut HopSink<'_>) -> Result<bool> {
        Ok(false)
    }
}

/// The receiver of [`Operator::lend_hops`]: an input row and a run of its matches. It may write the hop's
/// relationship and neighbour slots of the row, and the slots after them, but no other.
pub(crate) type HopSink<'a> = dyn FnMut(&mut Row, &[(RelId, NodeId)], &Ctx) -> Result<ControlFlow<()>> + 'a;

/// Groups of a fused count that share their outer keys, lent by [`Operator::lend_cell_runs`]: the cells
/// `cells` of the count's arrays, in cell order.
pub(crate) struct CellRun<'a> {
    /// The values of the outer keys.
    pub outer: &'a [Value],
    /// Every cell's (outer group, neighbour) and aggregate values (`width` per cell).
    pub keys: &'a [(u32, u64)],
    pub values: CellValues<'a>,
    pub width: usize,
    pub cells: CellIndices<'a>,
}

/// Which cells a [`CellRun`] holds.
#[derive(Clone, Copy)]
pub(crate) enum CellIndices<'a> {
    Range(usize, usize),
    List(&'a [usize]),
}

impl CellIndices<'_> {
    pub fn len(&self) -> usize {
        match self {
            CellIndices::Range(from, to) => to - from,
            CellIndices::List(list) => list.len(),
        }
    }

    /// The `k`-th cell of the run.
    #[inline]
    pub fn get(&self, k: usize) -> usize {
        match self {
            CellIndices::Range(from, _) => from + k,
            CellIndices::List(list) => list[k],
        }
    }
}

impl<'a> CellRun<'a> {
    /// The `k`-th group of the run.
    pub fn cell(&self, k: usize) -> CellRef<'a> {
        let c = self.cells.get(k);
        let (w, width) = (c * self.width, self.width);
        let aggregates = match self.values {
            CellValues::Ints(ints) => CellValues::Ints(&ints[w..w + width]),
            CellValues::Values(values) => CellValues::Values(&values[w..w + width]),
        };
        CellRef { outer: self.outer, neighbour: self.keys[c].1, aggregates }
    }
}

/// One group of a fused count (see [`CellRun`]).
pub(crate) struct CellRef<'a> {
    /// The values of the outer keys.
    pub outer: &'a [Value],
    pub neighbour: u64,
    pub aggregates: CellValues<'a>,
}

#[derive(Clone, Copy)]
pub(crate) enum CellValues<'a> {
    Ints(&'a [i64]),
    Values(&'a [Value]),
}

impl CellRef<'_> {
    pub fn value(&self, part: crate::plan::fuse::CellPart) -> Value {
        use crate::plan::fuse::CellPart;
        match part {
            CellPart::Outer(i) => self.outer[i].clone(),
            CellPart::Neighbour => Value::Node(NodeId(self.neighbour)),
            CellPart::NeighbourId => Value::Int(self.neighbour as i64),
            CellPart::Aggregate(i) => match &self.aggregates {
                CellValues::Ints(ints) => Value::Int(ints[i]),
                CellValues::Values(values) => values[i].clone(),
            },
        }
    }
}

/// What an operator does with each run of groups lent by [`Operator::lend_cell_runs`].
pub(crate) type CellRunSink<'a> = dyn FnMut(&CellRun<'_>, &Ctx) -> Result<ControlFlow<()>> + 'a;

/// [`Operator::for_each_row`] over the operator's own batches.
fn lend_batches<O: Operator + ?Sized>(op: &mut O, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
    while let Some(batch) = op.next(ctx)? {
        for mut row in batch {
            if sink(&mut row, ctx)?.is_break() {
                return Ok(());
            }
            drop_row(row);
        }
    }
    Ok(())
}

type Op<'p> = Box<dyn Operator + 'p>;

/// A rough count of the bytes a value held by an operator takes: for the memory limit, which this keeps from
/// being exceeded by an order of magnitude, not to the byte.
pub(crate) fn approx_bytes(v: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match v {
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::List(items) => items.iter().map(approx_bytes).sum(),
            Value::Map(m) => m.iter().map(|(k, v)| 32 + k.len() + approx_bytes(v)).sum(),
            Value::Path(p) => 16 * (p.nodes.len() + p.rels.len()),
            _ => 0,
        }
}

/// The bytes a held row takes, by [`approx_bytes`], with its allocation.
pub(crate) fn row_bytes(row: &[Value]) -> usize {
    32 + row.iter().map(approx_bytes).sum::<usize>()
}

/// Under a memory limit, an error once an operator holds more than the limit in rows or values (`held` bytes):
/// a sort of every row, the groups of an aggregation and what they collect, the rows DISTINCT has seen.
pub(crate) fn check_held(ctx: &Ctx, held: usize, what: &str) -> Result<()> {
    let Some(interrupt) = &ctx.interrupt else { return Ok(()) };
    interrupt.check_memory(held, |limit| {
        format!("the {what} needs more than the query's memory limit of {limit} bytes; add a LIMIT or hold less")
    })
}

/// Runs `plan` to completion (or until `limit` rows) and returns its rows.
pub(crate) fn run_plan(plan: &PlanNode, arg: Option<Row>, ctx: &mut Ctx, limit: Option<usize>) -> Result<Vec<Row>> {
    let mut op = open(plan, arg);
    let mut rows = Vec::new();
    while let Some(batch) = op.next(ctx)? {
        if rows.is_empty() {
            rows = batch;
        } else {
            rows.extend(batch);
        }
        if limit.is_some_and(|l| rows.len() >= l) {
            break;
        }
    }
    Ok(rows)
}

/// [`run_plan`] for a statement's result rows: held in memory until the statement ends, so they are counted
/// against the memory limit as they come (the limit was checked only when they were converted for the client,
/// after all of them had been made: a 1 GiB limit let a result grow to 5.7 GB).
pub(crate) fn collect_result(plan: &PlanNode, ctx: &mut Ctx) -> Result<Vec<Row>> {
    let Some(interrupt) = ctx.interrupt.clone().filter(|i| i.max_result_bytes.is_some()) else {
        return run_plan(plan, None, ctx, None);
    };
    let mut op = open(plan, None);
    let mut rows = Vec::new();
    let mut bytes = 0usize;
    while let Some(batch) = op.next(ctx)? {
        bytes = bytes.saturating_add(batch.iter().map(|row| row_bytes(row)).sum::<usize>());
        interrupt.check_result_size(bytes.saturating_add(rows.capacity() * std::mem::size_of::<Row>()))?;
        if rows.is_empty() {
            rows = batch;
        } else {
            rows.extend(batch);
        }
    }
    Ok(rows)
}

/// Wraps the operator of plan node `node` with the interrupt check (and, under PROFILE, its counters), in the
/// same allocation (a query opens its operators every time it runs, so a point query pays for each box).
fn boxed<'p, O: Operator + 'p>(node: &'p PlanNode, op: O) -> Op<'p> {
    Box::new(Interruptible { node, op })
}

struct Interruptible<'p, O> {
    node: &'p PlanNode,
    op: O,
}

impl<O: Operator> Operator for Interruptible<'_, O> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        ctx.check_interrupt()?;
        let Some(profile) = ctx.profile.clone() else {
            return self.op.next(ctx);
        };
        let started = std::time::Instant::now();
        let batch = self.op.next(ctx)?;
        profile.borrow_mut().record(self.node, batch.as_ref().map_or(0, Vec::len), started.elapsed());
        Ok(batch)
    }

    fn for_each_row(&mut self, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        ctx.check_interrupt()?;
        if ctx.profile.is_some() {
            // Through batches, so that PROFILE counts each operator's rows and time.
            return lend_batches(self, ctx, sink);
        }
        // A lending operator may produce every row without returning here (an UNWIND under a top-k sort): the
        // interrupt is checked every batch's worth of rows instead.
        let mut lent = 0usize;
        self.op.for_each_row(ctx, &mut |row, ctx| {
            lent += 1;
            if lent.is_multiple_of(BATCH) {
                ctx.check_interrupt()?;
            }
            sink(row, ctx)
        })
    }

    fn lend_hops(&mut self, ctx: &mut Ctx, sink: &mut HopSink<'_>) -> Result<bool> {
        if ctx.profile.is_some() {
            // Rows, so that PROFILE counts each operator's rows and time.
            return Ok(false);
        }
        ctx.check_interrupt()?;
        self.op.lend_hops(ctx, &mut |row, hops, ctx| {
            ctx.check_interrupt()?;
            sink(row, hops, ctx)
        })
    }

    /// The consumer checks the interrupt as it goes through a run (a run may hold every group).
    fn lend_cell_runs(&mut self, ctx: &mut Ctx, sink: &mut CellRunSink<'_>) -> Result<bool> {
        if ctx.profile.is_some() {
            // Rows, so that PROFILE counts each operator's rows and time.
            return Ok(false);
        }
        ctx.check_interrupt()?;
        self.op.lend_cell_runs(ctx, &mut |run, ctx| {
            ctx.check_interrupt()?;
            sink(run, ctx)
        })
    }
}

/// Instantiates the operators of `plan`; `arg` is the row a subquery starts from. Every operator checks for an
/// interrupt before each batch, so a stopped query ends within one batch of work wherever it is.
pub(crate) fn open(plan: &PlanNode, arg: Option<Row>) -> Op<'_> {
    use PlanNode as P;
    match plan {
        P::Start => boxed(plan, Start { row: Some(arg), done: false }),
        P::ScanNodes { input, slot, label } => {
            boxed(plan, FlatMap::new(source(input, arg), Scan { slot: *slot, label: label.clone(), candidates: None }))
        }
        P::KeyLookup { input, slot, label, key, value, any_of } => {
            boxed(plan, FlatMap::new(source(input, arg), lookup::KeyLookup::new(*slot, label, key, value, *any_of)))
        }
        P::NodeById { input, slot, id } => {
            boxed(plan, FlatMap::new(source(input, arg), lookup::NodeById { slot: *slot, id }))
        }
        P::CompositeSeek { input, slot, label, keys, values, range } => {
            let seek = lookup::CompositeSeek { slot: *slot, label, keys, values, range: range.as_deref() };
            boxed(plan, FlatMap::new(source(input, arg), seek))
        }
        P::RelIndexSeek { input, rel, left, right, dir, ty, key, lookup } => {
            let seek = rel_lookup::RelIndexSeek { rel: *rel, left: *left, right: *right, dir: *dir, ty, key, lookup };
            boxed(plan, FlatMap::new(source(input, arg), seek))
        }
        P::IndexRange { input, slot, label, key, lower, upper } => boxed(
            plan,
            FlatMap::new(
                source(input, arg),
                lookup::IndexRange::new(*slot, label, key, lower.as_ref(), upper.as_ref()),
            ),
        ),
        P::Expand { .. } | P::VarExpand { .. } | P::ShortestPath { .. } => {
            let input = source(plan.input().unwrap(), arg);
            boxed(plan, FlatMap::new(input, expand::Expander::new(plan)))
        }
        P::Filter { input, predicate } => boxed(plan, Filter { input: open(input, arg), predicate }),
        P::Optional { input, inner } => boxed(plan, FlatMap::new(source(input, arg), Optional { inner })),
        P::Apply { input, inner, rows_per_transaction, .. } => {
            let op = boxed(plan, FlatMap::new(source(input, arg), apply::Apply::new(plan)));
            // A subquery that writes finishes every row before a later clause reads the graph or a LIMIT stops
            // its input, as an updating clause does. (Not `IN TRANSACTIONS`, whose point is to hold one part of
            // a large input at a time.)
            if inner.writes_anywhere() && rows_per_transaction.is_none() {
                Box::new(Eager { input: op, rows: None })
            } else {
                op
            }
        }
        P::LoadCsv { input, url, slot, position, headers, separator, access } => boxed(
            plan,
            FlatMap::new(
                source(input, arg),
                load_csv::LoadCsv {
                    url,
                    slot: *slot,
                    position: *position,
                    headers: *headers,
                    separator: *separator,
                    access,
                    reading: None,
                },
            ),
        ),
        P::Unwind { input, list, slot } => {
            boxed(plan, FlatMap::new(source(input, arg), Unwind { list, slot: *slot, pending: None }))
        }
        P::Project { input, items } => boxed(plan, Project { input: open(input, arg), items }),
        P::Aggregate { input, keys, aggs, per_run } => {
            // The carried keys' values in the argument row, read now: `open` hands the row on to the input.
            let run_keys = (!per_run.is_empty()).then(|| {
                let value = |slot: usize| arg.as_ref().and_then(|a| a.get(slot)).cloned().unwrap_or(Value::Null);
                per_run.iter().map(|&(arg_slot, slot)| (slot, value(arg_slot))).collect()
            });
            boxed(plan, aggregate::Aggregate::new(open(input, arg), keys, aggs, run_keys))
        }
        P::ExpandAggregate { expand, .. } => {
            let input = open(expand.input().expect("an expand has an input"), arg);
            boxed(plan, expand_aggregate::ExpandAggregate::new(plan, input))
        }
        P::CountFromStore { input, slot, counted } => {
            boxed(plan, FlatMap::new(source(input, arg), CountFromStore { slot: *slot, counted }))
        }
        P::Distinct { input, slots } => {
            // The key of each row is built in one reused buffer; only a row not seen before allocates its own.
            let mut seen: FxHashSet<Vec<Equivalent>> = FxHashSet::default();
            let mut key: Vec<Equivalent> = Vec::with_capacity(slots.len());
            let mut held = 0usize;
            boxed(
                plan,
                MapBatch::new(open(input, arg), move |mut batch: Batch, ctx: &mut Ctx| {
                    let counted = ctx.memory_limited();
                    let mut kept = 0;
                    for i in 0..batch.len() {
                        key.clear();
                        key.extend(slots.iter().map(|s| Equivalent(batch[i][*s].clone())));
                        if !seen.contains(key.as_slice()) {
                            if counted {
                                held += 48 + key.iter().map(|k| approx_bytes(&k.0)).sum::<usize>();
                            }
                            seen.insert(key.clone());
                            batch.swap(kept, i);
                            kept += 1;
                        }
                    }
                    batch.truncate(kept);
                    if counted {
                        check_held(ctx, held, "DISTINCT")?;
                    }
                    Ok(batch)
                }),
            )
        }
        P::Sort { input, keys } => boxed(plan, Sort::new(open(input, arg), keys, None, None)),
        P::Skip { input, count } => boxed(plan, Skip { input: open(input, arg), count, remaining: None }),
        P::Limit { input, count } => {
            // ORDER BY ... [SKIP s] LIMIT n keeps only the first s + n rows while it sorts (the Limit wrapped around
            // these checks for interrupts).
            let below = match &**input {
                P::Sort { input: rows, keys } => Box::new(Sort::new(open(rows, arg), keys, None, Some(count))) as Op,
                P::Skip { input: sorted, count: skip } => match &**sorted {
                    P::Sort { input: rows, keys } => Box::new(Skip {
                        input: Box::new(Sort::new(open(rows, arg), keys, Some(skip), Some(count))),
                        count: skip,
                        remaining: None,
                    }),
                    _ => open(input, arg),
                },
                _ => open(input, arg),
            };
            // Rows the limit drops still run the side effects of a `CALL { } IN TRANSACTIONS` below it, which
            // writes as rows arrive (other writes have all happened before their first row comes up).
            let drain = input.commits_in_parts();
            boxed(plan, Limit { input: below, count, remaining: None, pulled: false, drain })
        }
        P::Create { .. } | P::Merge { .. } | P::Set { .. } | P::Delete { .. } | P::Foreach { .. } => {
            boxed(plan, update::Update::new(open(plan.input().unwrap(), arg), plan))
        }
        P::Call { input, procedure, args, yields, optional } => boxed(
            plan,
            FlatMap::new(
                source(input, arg),
                update::ProcedureCall { procedure, args, yields, optional: optional.as_ref() },
            ),
        ),
        P::Produce { input, columns } => {
            boxed(
                plan,
                MapBatch::new(open(input, arg), move |mut batch: Batch, _: &mut Ctx| {
                    let mut values: smallvec::SmallVec<[Value; 8]> = smallvec::SmallVec::with_capacity(columns.len());
                    for row in batch.iter_mut() {
                        // Reuses the row's allocation: the columns are taken out, then written back in order.
                        values.extend(columns.iter().map(|c| std::mem::take(&mut row[*c])));
                        clear_row(row);
                        row.extend(values.drain(..));
                    }
                    Ok(batch)
                }),
            )
        }
        P::Union { parts, all } => boxed(
            plan,
            Union { parts, arg, current: None, index: 0, seen: if *all { None } else { Some(HashSet::new()) } },
        ),
    }
}

struct Start {
    row: Option<Option<Row>>,
    done: bool,
}

impl Operator for Start {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        let row = self.row.take().flatten().unwrap_or_else(|| null_row(ctx.width));
        Ok(Some(vec![row]))
    }
}

/// Keeps the rows for which the predicate is true.
struct Filter<'p> {
    input: Op<'p>,
    predicate: &'p crate::expr::CExpr,
}

impl Operator for Filter<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        while let Some(mut batch) = self.input.next(ctx)? {
            // In place: kept rows move to the front.
            let mut kept = 0;
            for i in 0..batch.len() {
                if self.predicate.is_true(&batch[i], ctx)? {
                    batch.swap(kept, i);
                    kept += 1;
                }
            }
            batch.truncate(kept);
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
        }
        Ok(None)
    }

    fn for_each_row(&mut self, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        let predicate = self.predicate;
        self.input.for_each_row(ctx, &mut |row, ctx| {
            if predicate.is_true(row, ctx)? {
                sink(row, ctx)
            } else {
                Ok(ControlFlow::Continue(()))
            }
        })
    }
}

/// Evaluates the projected items of each row into their slots, in place.
struct Project<'p> {
    input: Op<'p>,
    items: &'p [(crate::expr::CExpr, usize)],
}

/// Writes the projection `items` of `row` into their slots (all evaluated before any is written).
fn project(items: &[(crate::expr::CExpr, usize)], row: &mut Row, ctx: &Ctx) -> Result<()> {
    if let [(e, slot)] = items {
        let value = e.eval(row, ctx)?;
        put(&mut row[*slot], value);
        return Ok(());
    }
    let mut values: smallvec::SmallVec<[Value; 8]> = smallvec::SmallVec::with_capacity(items.len());
    for (e, _) in items {
        values.push(e.eval(row, ctx)?);
    }
    for ((_, slot), v) in items.iter().zip(values) {
        put(&mut row[*slot], v);
    }
    Ok(())
}

impl Operator for Project<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        let Some(mut batch) = self.input.next(ctx)? else { return Ok(None) };
        for row in batch.iter_mut() {
            project(self.items, row, ctx)?;
        }
        Ok(Some(batch))
    }

    fn for_each_row(&mut self, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        let items = self.items;
        self.input.for_each_row(ctx, &mut |row, ctx| {
            project(items, row, ctx)?;
            sink(row, ctx)
        })
    }

    /// The consumer reads the cells' parts through the copies (`cell_parts`); a computed item has to run.
    fn lend_cell_runs(&mut self, ctx: &mut Ctx, sink: &mut CellRunSink<'_>) -> Result<bool> {
        if !self.items.iter().all(|(e, _)| matches!(e, crate::expr::CExpr::Slot(_))) {
            return Ok(false);
        }
        self.input.lend_cell_runs(ctx, sink)
    }
}

/// An operator that transforms whole batches.
struct MapBatch<'p, F> {
    input: Op<'p>,
    f: F,
}

impl<'p, F> MapBatch<'p, F> {
    fn new(input: Op<'p>, f: F) -> Self {
        MapBatch { input, f }
    }
}

impl<F: FnMut(Batch, &mut Ctx) -> Result<Batch>> Operator for MapBatch<'_, F> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        while let Some(batch) = self.input.next(ctx)? {
            let out = (self.f)(batch, ctx)?;
            if !out.is_empty() {
                return Ok(Some(out));
            }
        }
        Ok(None)
    }
}

/// Holds every row of its input before passing any on (see the subqueries that write, in [`open`]).
struct Eager<'p> {
    input: Op<'p>,
    rows: Option<std::vec::IntoIter<Row>>,
}

impl Operator for Eager<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        if self.rows.is_none() {
            self.rows = Some(update::read_all(&mut self.input, ctx)?.0.into_iter());
        }
        let out: Batch = self.rows.as_mut().expect("filled above").take(BATCH).collect();
        Ok((!out.is_empty()).then_some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values with and without memory of their own, nested too.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::Int),
            any::<f64>().prop_map(Value::Float),
            any::<u64>().prop_map(|n| Value::Node(plexus_storage::NodeId(n))),
            any::<u64>().prop_map(|r| Value::Rel(plexus_storage::RelId(r))),
            "[a-z]{0,12}".prop_map(Value::string),
        ];
        leaf.prop_recursive(2, 8, 4, |inner| prop::collection::vec(inner, 0..4).prop_map(Value::list))
    }

    proptest! {
        /// A row copied with `clone_row` equals the row, and stays equal after the row is cleared and dropped
        /// (a copy sharing memory it does not own would be freed with the row).
        #[test]
        fn clone_row_copies_every_value(row in prop::collection::vec(value(), 0..24)) {
            let expected = row.clone();
            let mut original = row;
            let copy = clone_row(&original);
            prop_assert_eq!(format!("{copy:?}"), format!("{expected:?}"));
            clear_row(&mut original);
            drop(original);
            let again = clone_row(&copy);
            drop(copy);
            prop_assert_eq!(format!("{again:?}"), format!("{expected:?}"));
            let mut into = vec![Value::string("held"), Value::Int(1)];
            copy_row_into(&mut into, &again);
            drop(again);
            prop_assert_eq!(format!("{into:?}"), format!("{expected:?}"));
        }
    }
}
