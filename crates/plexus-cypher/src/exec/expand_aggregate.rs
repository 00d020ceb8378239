//! The fused expand-and-aggregate operator ([`PlanNode::ExpandAggregate`]): for each input row, visit the
//! start node's relationships and fold each one that passes the filters straight into its group.
//!
//! Each input row serves as the scratch row: the relationship and neighbour slots are overwritten for every
//! relationship visited, so filters, keys and aggregate arguments are the plan's own expressions evaluated as
//! the unfused plan would, without a row being copied per relationship. With a [`CountShape`], the per-row
//! parts are computed once per input row, costly filters on the neighbour are remembered per neighbour, and
//! counts and sums are added into cells keyed by (group of the input row, neighbour).

use std::ops::ControlFlow;

use plexus_storage::fxhash::FxHashMap;
use plexus_storage::{NodeId, RelId, TypeFilter, TypeId};

use super::aggregate::{check_number, Grouper};
use super::ctx::Ctx;
use super::expand::rel_in;
use super::nodemap::NodeMap;
use super::{Batch, Op, Operator, Row, BATCH};
use crate::arith;
use crate::compare::Equivalent;
use crate::error::{CypherError, Result};
use crate::expr::CExpr;
use crate::plan::fuse::CountShape;
use crate::plan::{AggFn, AggSpec, PlanNode};
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

    fn compute(&mut self, ctx: &mut Ctx) -> Result<Vec<Row>> {
        let PlanNode::Expand { from, rel, to, dir, types, distinct_from, .. } = self.expand else {
            unreachable!("an ExpandAggregate expands one hop")
        };
        let ids: Vec<TypeId> = types.iter().filter_map(|n| ctx.type_token(n)).collect();
        let nothing_matches = !types.is_empty() && ids.is_empty();
        let filter = if types.is_empty() { TypeFilter::All } else { TypeFilter::Only(&ids) };
        let mut fold = match self.shape {
            Some(shape) => {
                Fold::Counts(Box::new(Counts::new(shape, self.filters, self.keys, self.aggs, ctx.g().node_id_bound())))
            }
            None => Fold::Rows(Grouper::new(self.keys, self.aggs)),
        };
        while let Some(batch) = self.input.next(ctx)? {
            if let Fold::Counts(counts) = &mut fold {
                // Operators below may write between batches: what was remembered about neighbours may be stale.
                counts.memo.clear();
            }
            if nothing_matches {
                continue;
            }
            for mut row in batch {
                let Value::Node(start) = row[*from] else { continue };
                let mut failed: Option<CypherError> = None;
                let ctx: &Ctx = ctx;
                let g = ctx.g();
                match &mut fold {
                    Fold::Rows(grouper) => {
                        let _ = g.visit_rels(start, *dir, filter, |e| {
                            if rel_in(&row, distinct_from, e.rel) {
                                return ControlFlow::Continue(());
                            }
                            row[*rel] = Value::Rel(e.rel);
                            row[*to] = Value::Node(e.nbr);
                            let step = self
                                .filters
                                .iter()
                                .try_fold(true, |pass, f| Ok::<_, CypherError>(pass && f.is_true(&row, ctx)?));
                            match step.and_then(|pass| if pass { grouper.add(&row, ctx) } else { Ok(()) }) {
                                Ok(()) => ControlFlow::Continue(()),
                                Err(e) => {
                                    failed = Some(e);
                                    ControlFlow::Break(())
                                }
                            }
                        });
                    }
                    Fold::Counts(counts) => {
                        counts.start_row(&row);
                        let _ = g.visit_rels(start, *dir, filter, |e| {
                            if rel_in(&row, distinct_from, e.rel) {
                                return ControlFlow::Continue(());
                            }
                            match counts.visit(&mut row, (*rel, *to), e.rel, e.nbr, ctx) {
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
                if let Some(e) = failed {
                    return Err(e);
                }
            }
        }
        match fold {
            Fold::Rows(grouper) => grouper.finish(ctx.width),
            Fold::Counts(counts) => counts.finish(ctx.width),
        }
    }
}

impl Operator for ExpandAggregate<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        if self.output.is_none() {
            let rows = self.compute(ctx)?;
            self.output = Some(rows.into_iter());
        }
        let out: Batch = self.output.as_mut().unwrap().take(BATCH).collect();
        Ok(if out.is_empty() { None } else { Some(out) })
    }
}

enum Fold<'p> {
    /// Any keys and aggregates: each relationship's row goes through the ordinary grouping.
    Rows(Grouper<'p>),
    Counts(Box<Counts<'p>>),
}

/// What the current input row contributes, worked out when first needed: the row filters at its first
/// relationship, its group and addends at the first relationship that passes every filter (a row without one
/// must not raise the errors its keys or arguments might).
struct RowState {
    decided: bool,
    /// The row filters passed.
    passes: bool,
    /// `group` and `addends` are set.
    ready: bool,
    group: u32,
    /// Per aggregate, what each of the row's relationships adds (`None`: a null argument, nothing).
    addends: Vec<Option<Value>>,
}

/// Counting and summing per (group of the input row, neighbour), following a [`CountShape`].
struct Counts<'p> {
    shape: &'p CountShape,
    filters: &'p [CExpr],
    keys: &'p [(CExpr, usize)],
    aggs: &'p [AggSpec],
    /// Groups of input rows by their outer keys: the first row of each, its key slots set.
    outer_index: FxHashMap<Vec<Equivalent>, u32>,
    outer_rows: Vec<Row>,
    /// Cells of the first outer group (usually the only one) by neighbour id, and of the others by (group,
    /// neighbour id). Cells hold one value per aggregate, in first-seen order.
    first_cells: NodeMap,
    other_cells: FxHashMap<(u32, u64), u32>,
    cell_keys: Vec<(u32, u64)>,
    cells: Vec<Value>,
    /// Verdicts (1: pass) of the remembered filters per neighbour, valid while `memo_values` are the row's
    /// values of the slots they read.
    memo: NodeMap,
    memo_values: Vec<Value>,
    row: RowState,
    key: Vec<Equivalent>,
}

impl<'p> Counts<'p> {
    fn new(
        shape: &'p CountShape,
        filters: &'p [CExpr],
        keys: &'p [(CExpr, usize)],
        aggs: &'p [AggSpec],
        node_bound: u64,
    ) -> Self {
        Counts {
            shape,
            filters,
            keys,
            aggs,
            outer_index: FxHashMap::default(),
            outer_rows: Vec::new(),
            first_cells: NodeMap::new(if shape.neighbour_key.is_some() { node_bound } else { 0 }),
            other_cells: FxHashMap::default(),
            cell_keys: Vec::new(),
            cells: Vec::new(),
            memo: NodeMap::new(if shape.memo_filters.is_empty() { 0 } else { node_bound }),
            memo_values: Vec::new(),
            row: RowState {
                decided: false,
                passes: false,
                ready: false,
                group: 0,
                addends: Vec::with_capacity(aggs.len()),
            },
            key: Vec::with_capacity(keys.len()),
        }
    }

    fn start_row(&mut self, row: &Row) {
        self.row.decided = false;
        self.row.ready = false;
        let deps = &self.shape.memo_deps;
        if !deps.is_empty()
            && (self.memo_values.len() != deps.len() || deps.iter().zip(&self.memo_values).any(|(&s, v)| row[s] != *v))
        {
            self.memo.clear();
            self.memo_values.clear();
            self.memo_values.extend(deps.iter().map(|&s| row[s].clone()));
        }
    }

    /// Folds one relationship of the current row; false when the rest of the row's relationships can be
    /// skipped (a row filter failed). The relationship and neighbour slots of `row` are written only when an
    /// expression is about to read them.
    fn visit(&mut self, row: &mut Row, slots: (usize, usize), rel: RelId, nbr: NodeId, ctx: &Ctx) -> Result<bool> {
        let (rel_slot, to_slot) = slots;
        let mut written = false;
        let mut write = |row: &mut Row| {
            if !written {
                row[rel_slot] = Value::Rel(rel);
                row[to_slot] = Value::Node(nbr);
                written = true;
            }
        };
        if !self.row.decided {
            // Row filters read neither slot.
            self.row.passes = self.all_true(&self.shape.row_filters, row, ctx)?;
            self.row.decided = true;
        }
        if !self.row.passes {
            return Ok(false);
        }
        for &(i, slot) in &self.shape.not_equal {
            let pass = match row[slot] {
                Value::Node(other) => other != nbr,
                _ => {
                    write(row);
                    self.filters[i].is_true(row, ctx)?
                }
            };
            if !pass {
                return Ok(true);
            }
        }
        if !self.shape.memo_filters.is_empty() {
            let pass = match self.memo.get(nbr.0) {
                Some(verdict) => verdict == 1,
                None => {
                    write(row);
                    let pass = self.all_true(&self.shape.memo_filters, row, ctx)?;
                    self.memo.insert(nbr.0, u32::from(pass));
                    pass
                }
            };
            if !pass {
                return Ok(true);
            }
        }
        if !self.shape.rel_filters.is_empty() {
            write(row);
            if !self.all_true(&self.shape.rel_filters, row, ctx)? {
                return Ok(true);
            }
        }
        if !self.row.ready {
            // Keys and arguments are evaluated for rows that pass every filter, as in the unfused plan; but
            // only once per input row (they read neither slot).
            self.row.group = self.outer_group(row, ctx)?;
            self.row.addends.clear();
            for spec in self.aggs {
                let addend = match &spec.arg {
                    None => Some(Value::Int(1)),
                    Some(arg) => match arg.eval(row, ctx)? {
                        Value::Null => None,
                        _ if spec.func == AggFn::Count => Some(Value::Int(1)),
                        v => {
                            check_number(&v, "sum")?;
                            Some(v)
                        }
                    },
                };
                self.row.addends.push(addend);
            }
            self.row.ready = true;
        }
        let cell = self.cell(nbr.0) * self.aggs.len();
        for (acc, addend) in self.cells[cell..cell + self.aggs.len()].iter_mut().zip(&self.row.addends) {
            match (acc, addend) {
                (_, None) => {}
                (Value::Int(a), Some(Value::Int(b))) if a.checked_add(*b).is_some() => *a += b,
                (Value::Float(a), Some(Value::Float(b))) => *a += b,
                (acc, Some(b)) => *acc = arith::add(acc, b)?,
            }
        }
        Ok(true)
    }

    /// The cell of neighbour `nbr` in the current row's group, created if new.
    #[inline]
    fn cell(&mut self, nbr: u64) -> usize {
        let group = self.row.group;
        let nbr = if self.shape.neighbour_key.is_some() { nbr } else { 0 };
        let found = if group == 0 { self.first_cells.get(nbr) } else { self.other_cells.get(&(group, nbr)).copied() };
        if let Some(c) = found {
            return c as usize;
        }
        let c = self.cell_keys.len() as u32;
        if group == 0 {
            self.first_cells.insert(nbr, c);
        } else {
            self.other_cells.insert((group, nbr), c);
        }
        self.cell_keys.push((group, nbr));
        self.cells.extend(std::iter::repeat_n(Value::Int(0), self.aggs.len()));
        c as usize
    }

    fn all_true(&self, which: &[usize], row: &Row, ctx: &Ctx) -> Result<bool> {
        for &i in which {
            if !self.filters[i].is_true(row, ctx)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn outer_group(&mut self, row: &Row, ctx: &Ctx) -> Result<u32> {
        if self.shape.outer_keys.is_empty() && !self.outer_rows.is_empty() {
            return Ok(0);
        }
        self.key.clear();
        for &k in &self.shape.outer_keys {
            self.key.push(Equivalent(self.keys[k].0.eval(row, ctx)?));
        }
        if let Some(&g) = self.outer_index.get(self.key.as_slice()) {
            return Ok(g);
        }
        let mut first = row.clone();
        for (&k, v) in self.shape.outer_keys.iter().zip(&self.key) {
            first[self.keys[k].1] = v.0.clone();
        }
        self.outer_rows.push(first);
        let g = (self.outer_rows.len() - 1) as u32;
        self.outer_index.insert(self.key.clone(), g);
        Ok(g)
    }

    fn finish(self, width: usize) -> Result<Vec<Row>> {
        if self.cell_keys.is_empty() && self.keys.is_empty() {
            let mut row = vec![Value::Null; width];
            for spec in self.aggs {
                row[spec.slot] = Value::Int(0);
            }
            return Ok(vec![row]);
        }
        let mut out = Vec::with_capacity(self.cell_keys.len());
        let mut cells = self.cells.into_iter();
        for (group, nbr) in self.cell_keys {
            let mut row = self.outer_rows[group as usize].clone();
            if let Some((k, as_id)) = self.shape.neighbour_key {
                row[self.keys[k].1] = if as_id { Value::Int(nbr as i64) } else { Value::Node(NodeId(nbr)) };
            }
            for spec in self.aggs {
                row[spec.slot] = cells.next().expect("one cell per aggregate");
            }
            out.push(row);
        }
        debug_assert_eq!(cells.len(), 0);
        Ok(out)
    }
}
