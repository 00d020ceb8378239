//! The fused expand-and-aggregate operator ([`PlanNode::ExpandAggregate`]): for each input row, visit the
//! start node's relationships and fold each one that passes the filters straight into its group.
//!
//! Each input row serves as the scratch row: the relationship and neighbour slots are overwritten for every
//! relationship visited, so filters, keys and aggregate arguments are the plan's own expressions evaluated as
//! the unfused plan would, without a row being copied per relationship. With a [`CountShape`], the per-row
//! parts are computed once per input row, costly filters on the neighbour are remembered per neighbour, and
//! counts and sums are added into cells keyed by (group of the input row, neighbour).

use std::ops::ControlFlow;

use super::aggregate::{next_batch, Grouper};
use super::ctx::Ctx;
use super::expand::{hop_start, rel_in, type_filter, TypeIds};
use super::neighbour_counts::{Hop, NeighbourCounts};
use super::{lend_batches, Batch, CellRunSink, Op, Operator, Row, RowSink};
use crate::error::{CypherError, Result};
use crate::expr::CExpr;
use crate::plan::fuse::CountShape;
use crate::plan::{AggSpec, PlanNode};
use crate::value::Value;

pub(crate) struct ExpandAggregate<'p> {
    input: Op<'p>,
    expand: &'p PlanNode,
    filters: &'p [CExpr],
    keys: &'p [(CExpr, usize)],
    aggs: &'p [AggSpec],
    shape: Option<&'p CountShape>,
    output: Option<std::vec::IntoIter<Row>>,
}

impl<'p> ExpandAggregate<'p> {
    pub fn new(plan: &'p PlanNode, input: Op<'p>) -> Self {
        let PlanNode::ExpandAggregate { expand, filters, keys, aggs, shape } = plan else {
            unreachable!("opened for an ExpandAggregate node")
        };
        ExpandAggregate { input, expand, filters, keys, aggs, shape: shape.as_deref(), output: None }
    }

    /// Folds every input row's relationships into the groups.
    fn fold(&mut self, ctx: &mut Ctx) -> Result<Fold<'p>> {
        let PlanNode::Expand { from, rel, to, dir, types, distinct_from, input, .. } = self.expand else {
            unreachable!("an ExpandAggregate expands one hop")
        };
        // Looked up at each row until every type has an id: the input may create one (see `cached_types`).
        let mut ids: Option<TypeIds> = None;
        let mut fold = match self.shape {
            Some(shape) => Fold::Counts(Box::new(NeighbourCounts::new(
                shape,
                self.filters,
                self.keys,
                self.aggs,
                ctx.g().node_id_bound(),
                Hop { from: *from, rel: *rel, to: *to, dir: *dir, distinct_from },
            ))),
            None => Fold::Rows(Grouper::new(self.keys, self.aggs)),
        };
        let filters = self.filters;
        let degrees = counts_degrees(self.filters, self.keys, self.aggs, *dir, distinct_from, (*rel, *to));
        let mut step = |fold: &mut Fold<'p>, row: &mut Row, ctx: &Ctx| -> Result<()> {
            let Some((start, filter)) = hop_start(&mut ids, types, &row[*from], ctx) else { return Ok(()) };
            let mut failed: Option<CypherError> = None;
            let g = ctx.g();
            match fold {
                Fold::Rows(grouper) if degrees => {
                    let n = g.degree(start, *dir, filter);
                    if n > 0 {
                        grouper.add_count(row, ctx, n)?;
                    }
                }
                Fold::Rows(grouper) => {
                    let _ = g.visit_rels(start, *dir, filter, |e| {
                        if rel_in(row, distinct_from, e.rel) {
                            return ControlFlow::Continue(());
                        }
                        row[*rel] = Value::Rel(e.rel);
                        row[*to] = Value::Node(e.nbr);
                        let step =
                            filters.iter().try_fold(true, |pass, f| Ok::<_, CypherError>(pass && f.is_true(row, ctx)?));
                        match step.and_then(|pass| if pass { grouper.add(row, ctx) } else { Ok(()) }) {
                            Ok(()) => ControlFlow::Continue(()),
                            Err(e) => {
                                failed = Some(e);
                                ControlFlow::Break(())
                            }
                        }
                    });
                }
                Fold::Counts(counts) => counts.count_row(row, filter, ctx)?,
            }
            failed.map_or(Ok(()), Err)
        };
        if let Some(parts) = self.shape.and_then(|s| s.cells_in.as_deref()) {
            // The slots this reads, and only those, written from each group's cell: no row is built and
            // projected per group.
            let mut row: Row = super::null_row(ctx.width);
            // A batching count takes the groups after the first of a run straight into its open batch: they
            // share that one's outer keys, so its state.
            let direct = match &fold {
                Fold::Counts(counts) => counts.direct_cells(parts),
                Fold::Rows(_) => None,
            };
            let lent = self.input.lend_cell_runs(ctx, &mut |run, ctx| {
                let mut k = 0;
                while k < run.cells.len() {
                    if let (Some(addend), Fold::Counts(counts), true) = (direct, &mut fold, k > 0) {
                        k += counts.queue_run(run, k, addend, ctx)?;
                        if k == run.cells.len() {
                            break;
                        }
                    }
                    let cell = run.cell(k);
                    for &(slot, part) in parts {
                        row[slot] = cell.value(part);
                    }
                    step(&mut fold, &mut row, ctx)?;
                    k += 1;
                    if k % super::BATCH == 0 {
                        ctx.check_interrupt()?;
                    }
                }
                Ok(ControlFlow::Continue(()))
            })?;
            super::drop_row(row);
            if lent {
                fold.flush(ctx)?;
                return Ok(fold);
            }
        }
        if let (Fold::Counts(_), PlanNode::Expand { rel: hop_rel, to: hop_to, .. }) = (&fold, &**input) {
            if !input.writes_anywhere() {
                // A single hop below lends its matches in runs, which a batching count takes mostly without a
                // row of their own (`MATCH (me)-[:LIKES]->(i)<-[:LIKES]-(o)`: the items of one person).
                let mut hop_ids: Option<TypeIds> = None;
                let lent = self.input.lend_hops(ctx, &mut |row, hops, ctx| {
                    let Some(filter) = type_filter(&mut hop_ids, ctx, types) else {
                        return Ok(ControlFlow::Continue(()));
                    };
                    let Fold::Counts(counts) = &mut fold else { unreachable!("checked above") };
                    counts.count_hops(row, hops, (*hop_rel, *hop_to), filter, ctx)?;
                    Ok(ControlFlow::Continue(()))
                })?;
                if lent {
                    fold.flush(ctx)?;
                    return Ok(fold);
                }
            }
        }
        if lends_groups(input) || !input.writes_anywhere() {
            // The input computed its groups before lending the first, or writes nothing at all: nothing writes
            // while its rows are read, so they can be lent one by one instead of copied into batches.
            self.input.for_each_row(ctx, &mut |row, ctx| {
                step(&mut fold, row, ctx)?;
                Ok(ControlFlow::Continue(()))
            })?;
            fold.flush(ctx)?;
            return Ok(fold);
        }
        while let Some(batch) = self.input.next(ctx)? {
            if let Fold::Counts(counts) = &mut fold {
                // Operators below may write between batches: what was remembered about neighbours may be stale.
                counts.forget();
            }
            for mut row in batch {
                step(&mut fold, &mut row, ctx)?;
            }
            // Rows still queued are counted before the input is asked for more (it may write).
            fold.flush(ctx)?;
        }
        Ok(fold)
    }
}

/// Whether the aggregation is counts of a node's relationships grouped by what the input row alone decides
/// (`MATCH (a)-[:R]->(b) RETURN a.name, count(b)`): then each input row adds its node's degree to its group, one
/// lookup instead of a visit and a group lookup per relationship (`bench/results/cypher.md`: 873 → 441 ms over
/// 3.3 M relationships, the rest being one group per node). Only for one direction (a self-loop walked both ways is two rows but one
/// degree), without filters or relationships the pattern must not reuse, and with counts that are plain
/// (`count(*)`, or `count` of the relationship or the neighbour, which are never null).
fn counts_degrees(
    filters: &[CExpr],
    keys: &[(CExpr, usize)],
    aggs: &[AggSpec],
    dir: plexus_storage::Direction,
    distinct_from: &[usize],
    (rel, to): (usize, usize),
) -> bool {
    let plain_count = |spec: &AggSpec| {
        spec.func == crate::plan::AggFn::Count
            && !spec.distinct
            && spec.extra.is_none()
            && match &spec.arg {
                None => true,
                Some(CExpr::Slot(s)) => *s == rel || *s == to,
                Some(_) => false,
            }
    };
    let key_of_the_row = |key: &(CExpr, usize)| {
        crate::plan::fuse::slot_deps(&key.0).is_some_and(|deps| !deps.iter().any(|s| *s == rel || *s == to))
    };
    dir != plexus_storage::Direction::Both
        && filters.is_empty()
        && distinct_from.is_empty()
        && !aggs.is_empty()
        && aggs.iter().all(plain_count)
        && keys.iter().all(key_of_the_row)
}

/// Whether the operator of `plan` lends rows it builds itself, all computed before the first is lent: a
/// fused count's groups, possibly projected.
fn lends_groups(plan: &PlanNode) -> bool {
    match plan {
        PlanNode::Project { input, .. } => lends_groups(input),
        PlanNode::ExpandAggregate { shape, .. } => shape.is_some(),
        _ => false,
    }
}

impl Operator for ExpandAggregate<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        if self.output.is_none() {
            let rows = match self.fold(ctx)? {
                Fold::Rows(grouper) => grouper.finish(ctx.width)?,
                Fold::Counts(counts) => counts.finish(ctx)?,
            };
            self.output = Some(rows.into_iter());
        }
        Ok(next_batch(self.output.as_mut()))
    }

    fn lend_cell_runs(&mut self, ctx: &mut Ctx, sink: &mut CellRunSink<'_>) -> Result<bool> {
        if self.output.is_some() || self.shape.is_none() || self.keys.is_empty() {
            return Ok(false);
        }
        match self.fold(ctx)? {
            Fold::Counts(mut counts) => counts.lend_cell_runs(ctx, sink)?,
            Fold::Rows(_) => unreachable!("a count shape folds into counts"),
        }
        Ok(true)
    }

    fn for_each_row(&mut self, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        if self.output.is_some() || self.shape.is_none() {
            return lend_batches(self, ctx, sink);
        }
        match self.fold(ctx)? {
            Fold::Counts(mut counts) => counts.lend(ctx, sink),
            Fold::Rows(grouper) => {
                self.output = Some(grouper.finish(ctx.width)?.into_iter());
                lend_batches(self, ctx, sink)
            }
        }
    }
}

impl Fold<'_> {
    /// Counts the rows a batching count still holds.
    fn flush(&mut self, ctx: &Ctx) -> Result<()> {
        match self {
            Fold::Counts(counts) => counts.flush(ctx),
            Fold::Rows(_) => Ok(()),
        }
    }
}

enum Fold<'p> {
    /// Any keys and aggregates: each relationship's row goes through the ordinary grouping.
    Rows(Grouper<'p>),
    Counts(Box<NeighbourCounts<'p>>),
}
