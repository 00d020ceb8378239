//! The fused expand-and-aggregate operator ([`PlanNode::ExpandAggregate`]): for each input row, visit the
//! start node's relationships and fold each one that passes the filters straight into its group.
//!
//! Each input row serves as the scratch row: the relationship and neighbour slots are overwritten for every
//! relationship visited, so filters, keys and aggregate arguments are the plan's own expressions evaluated as
//! the unfused plan would, without a row being copied per relationship. With a [`CountShape`], the per-row
//! parts are computed once per input row, costly filters on the neighbour are remembered per neighbour, and
//! counts and sums are added into cells keyed by (group of the input row, neighbour).

use std::ops::ControlFlow;

use plexus_storage::{TypeFilter, TypeId};

use super::aggregate::{next_batch, Grouper};
use super::ctx::Ctx;
use super::expand::{cached_types, rel_in};
use super::neighbour_counts::NeighbourCounts;
use super::{lend_batches, Batch, CellSink, Op, Operator, Row, RowSink};
use crate::error::{CypherError, Result};
use crate::expr::CExpr;
use crate::plan::fuse::{cell_parts, slot_deps, CellPart, CountShape};
use crate::plan::{AggSpec, PlanNode};
use crate::value::Value;

pub(crate) struct ExpandAggregate<'p> {
    input: Op<'p>,
    expand: &'p PlanNode,
    filters: &'p [CExpr],
    keys: &'p [(CExpr, usize)],
    aggs: &'p [AggSpec],
    shape: Option<&'p CountShape>,
    /// When the input is a fused count's groups and this reads only their parts: the parts, by slot.
    cells_in: Option<Vec<(usize, CellPart)>>,
    output: Option<std::vec::IntoIter<Row>>,
}

impl<'p> ExpandAggregate<'p> {
    pub fn new(plan: &'p PlanNode, input: Op<'p>) -> Self {
        let PlanNode::ExpandAggregate { expand, filters, keys, aggs, shape } = plan else {
            unreachable!("opened for an ExpandAggregate node")
        };
        let cells_in = shape.as_ref().and_then(|_| cells_in(expand, filters, keys, aggs));
        ExpandAggregate { input, expand, filters, keys, aggs, shape: shape.as_deref(), cells_in, output: None }
    }

    /// Folds every input row's relationships into the groups.
    fn fold(&mut self, ctx: &mut Ctx) -> Result<Fold<'p>> {
        let PlanNode::Expand { from, rel, to, dir, types, distinct_from, input, .. } = self.expand else {
            unreachable!("an ExpandAggregate expands one hop")
        };
        // Looked up at each row until every type has an id: the input may create one (see `cached_types`).
        let mut ids: Option<Vec<TypeId>> = None;
        let mut fold = match self.shape {
            Some(shape) => Fold::Counts(Box::new(NeighbourCounts::new(
                shape,
                self.filters,
                self.keys,
                self.aggs,
                ctx.g().node_id_bound(),
            ))),
            None => Fold::Rows(Grouper::new(self.keys, self.aggs)),
        };
        let filters = self.filters;
        let degrees = counts_degrees(self.filters, self.keys, self.aggs, *dir, distinct_from, (*rel, *to));
        let mut step = |fold: &mut Fold<'p>, row: &mut Row, ctx: &Ctx| -> Result<()> {
            let ids = cached_types(&mut ids, ctx, types);
            if !types.is_empty() && ids.is_empty() {
                return Ok(());
            }
            let filter = if types.is_empty() { TypeFilter::All } else { TypeFilter::Only(ids) };
            let Value::Node(start) = row[*from] else { return Ok(()) };
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
                Fold::Counts(counts) => {
                    counts.start_row(row, distinct_from, ctx);
                    // Runs of neighbour and relationship ids straight from the adjacency: no entry is decoded
                    // one at a time.
                    let _ = g.visit_rel_slices(start, *dir, filter, |nbrs, rels| {
                        match counts.visit_run(row, (*rel, *to), distinct_from, nbrs, rels, ctx) {
                            Ok(true) => ControlFlow::Continue(()),
                            Ok(false) => ControlFlow::Break(()),
                            Err(e) => {
                                failed = Some(e);
                                ControlFlow::Break(())
                            }
                        }
                    });
                }
            }
            failed.map_or(Ok(()), Err)
        };
        if let Some(parts) = &self.cells_in {
            // The slots this reads, and only those, written from each group's cell: no row is built and
            // projected per group.
            let mut row: Row = vec![Value::Null; ctx.width];
            let lent = self.input.lend_cells(ctx, &mut |cell, ctx| {
                for &(slot, part) in parts {
                    row[slot] = cell.value(part);
                }
                step(&mut fold, &mut row, ctx)?;
                Ok(ControlFlow::Continue(()))
            })?;
            if lent {
                return Ok(fold);
            }
        }
        if lends_groups(input) {
            // The input computed its groups before lending the first: nothing writes while they are read.
            self.input.for_each_row(ctx, &mut |row, ctx| {
                step(&mut fold, row, ctx)?;
                Ok(ControlFlow::Continue(()))
            })?;
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
        }
        Ok(fold)
    }
}

/// The parts of the input's groups that the slots read by this count come from, when the input is a fused
/// count lending them (`crate::plan::fuse::cell_parts`). The expand's own relationship and neighbour slots are
/// written per relationship, not read from the input.
fn cells_in(
    expand: &PlanNode,
    filters: &[CExpr],
    keys: &[(CExpr, usize)],
    aggs: &[AggSpec],
) -> Option<Vec<(usize, CellPart)>> {
    let PlanNode::Expand { from, rel, to, distinct_from, input, .. } = expand else { return None };
    let mut reads = vec![*from];
    reads.extend(distinct_from);
    let exprs = filters.iter().chain(keys.iter().map(|(k, _)| k));
    let args = aggs.iter().flat_map(|a| a.arg.iter().chain(&a.extra));
    for e in exprs.chain(args) {
        reads.extend(slot_deps(e)?);
    }
    reads.retain(|s| s != rel && s != to);
    reads.sort_unstable();
    reads.dedup();
    cell_parts(input, &reads)
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
                Fold::Counts(counts) => counts.finish(ctx.width)?,
            };
            self.output = Some(rows.into_iter());
        }
        Ok(next_batch(self.output.as_mut()))
    }

    fn lend_cells(&mut self, ctx: &mut Ctx, sink: &mut CellSink<'_>) -> Result<bool> {
        if self.output.is_some() || self.shape.is_none() || self.keys.is_empty() {
            return Ok(false);
        }
        match self.fold(ctx)? {
            Fold::Counts(counts) => counts.lend_cells(ctx, sink)?,
            Fold::Rows(_) => unreachable!("a count shape folds into counts"),
        }
        Ok(true)
    }

    fn for_each_row(&mut self, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        if self.output.is_some() || self.shape.is_none() {
            return lend_batches(self, ctx, sink);
        }
        match self.fold(ctx)? {
            Fold::Counts(counts) => counts.lend(ctx, sink),
            Fold::Rows(grouper) => {
                self.output = Some(grouper.finish(ctx.width)?.into_iter());
                lend_batches(self, ctx, sink)
            }
        }
    }
}

enum Fold<'p> {
    /// Any keys and aggregates: each relationship's row goes through the ordinary grouping.
    Rows(Grouper<'p>),
    Counts(Box<NeighbourCounts<'p>>),
}
