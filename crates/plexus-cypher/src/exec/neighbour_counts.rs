//! Counts and sums per (group of the input row, neighbour) for [`super::expand_aggregate`], following a
//! [`CountShape`]: what the plan can decide once per input row is decided once, costly filters on the
//! neighbour are remembered per neighbour, and each relationship then costs a few array reads.
//!
//! Two paths share the state. [`NeighbourCounts::visit`] handles any relationship and evaluates whatever
//! expression it needs. Once a row's keys, arguments and filters are known, the common case (integer
//! counts or sums, the first group of input rows, dense arrays) runs [`NeighbourCounts::run_dense`]: a loop
//! over a run of neighbour ids that falls back to `visit` only for a neighbour it has not judged yet.

use std::cmp::Ordering;
use std::ops::ControlFlow;

use plexus_storage::fxhash::FxHashMap;
use plexus_storage::{Direction, IdSlice, NodeId, RelId, TypeFilter, TypeId};

use super::aggregate::{add_to_sum, check_number};
use super::ctx::Ctx;
use super::expand::rel_in;
use super::nodemap::NodeMap;
use super::{CellIndices, CellRun, CellRunSink, CellValues, Row, RowSink};
use crate::arith;
use crate::compare::Equivalent;
use crate::error::Result;
use crate::expr::CExpr;
use crate::plan::fuse::{CountShape, TopKey};
use crate::plan::{AggFn, AggSpec};
use crate::value::Value;

mod batch;

/// The hop a fused count walks: from the node in slot `from` along `dir`, writing the relationship and the
/// neighbour into `rel` and `to`, never reusing the relationships in `distinct_from`.
#[derive(Clone, Copy)]
pub(crate) struct Hop<'p> {
    pub from: usize,
    pub rel: usize,
    pub to: usize,
    pub dir: Direction,
    pub distinct_from: &'p [usize],
}

/// Up to this many top groups are kept by insertion into a sorted list as the cells are scanned; more by
/// selection over all of them.
const TOP_BY_INSERTION: usize = 64;

/// Cell arrays up to this many cells go back to the pool when a count is done.
const POOLED_CELLS_MAX: usize = 1 << 16;

/// A count's cell keys (group, neighbour) and integer values.
type CellArrays = (Vec<(u32, u64)>, Vec<i64>);

thread_local! {
    /// A reused column of packed sort keys for [`top_pairs`].
    static PAIRS: std::cell::Cell<Vec<(i64, i64)>> = const { std::cell::Cell::new(Vec::new()) };
    /// Emptied cell arrays (keys, integer values) ready for reuse: a query counting a few hundred groups
    /// would otherwise spend more on growing them than on counting.
    static CELL_POOL: std::cell::RefCell<Vec<CellArrays>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What the current input row contributes, worked out when first needed: the row filters at its first
/// relationship, its group and addends at the first relationship that passes every filter (a row without one
/// must not raise the errors its keys or arguments might).
struct RowState {
    decided: bool,
    /// The row filters passed.
    passes: bool,
    /// `group`, `addends` and `int_addends` are set.
    ready: bool,
    group: u32,
    /// Per aggregate, what each of the row's relationships adds (`None`: a null argument, nothing).
    addends: Vec<Option<Value>>,
    /// The same as integers (null as 0), valid when `all_ints` (they all are).
    int_addends: Vec<i64>,
    all_ints: bool,
    /// The ids of the nodes the neighbour must differ from (the `not_equal` filters) and of the relationships
    /// already bound in the row (which this one must differ from), as pairs padded with `u64::MAX`; `None`
    /// when there are more than two, or one is not a node (a relationship) or is a path's list: then `visit`
    /// decides.
    excluded: Option<[u64; 2]>,
    bound_rels: Option<[u64; 2]>,
    /// Every `adjacent` filter asks about a node (so its set answers it).
    adjacent_ready: bool,
}

/// The cells' values, one per aggregate, in the order the cells were created: integers while every addend
/// is one, values once any is not.
enum Cells {
    Ints(Vec<i64>),
    Values(Vec<Value>),
}

pub(crate) struct NeighbourCounts<'p> {
    shape: &'p CountShape,
    filters: &'p [CExpr],
    keys: &'p [(CExpr, usize)],
    aggs: &'p [AggSpec],
    /// Groups of input rows by their outer keys, and each group's key values.
    outer_index: FxHashMap<Vec<Equivalent>, u32>,
    outer_keys: Vec<Vec<Value>>,
    /// Cells of the first outer group (usually the only one) by neighbour id, and of the others by (group,
    /// neighbour id).
    first_cells: NodeMap,
    /// The cells a batch appended to an empty count (all of the first group) are not in `first_cells` yet:
    /// most counts fold one batch and never look a cell up again (see [`Self::index_cells`]).
    unindexed: bool,
    other_cells: FxHashMap<(u32, u64), u32>,
    cell_keys: Vec<(u32, u64)>,
    cells: Cells,
    /// Verdicts (1: pass) of the remembered filters per neighbour, valid while `memo_values` are the row's
    /// values of the slots they read.
    memo: NodeMap,
    memo_values: Vec<Value>,
    /// Per `adjacent` filter of the shape, the neighbours of the node it asks about (and which node that is).
    adjacent: Vec<(Option<NodeId>, NodeMap)>,
    row: RowState,
    key: Vec<Equivalent>,
    hop: Hop<'p>,
    /// Input rows taken in batches, when the count's shape allows it.
    batcher: Option<batch::Batcher<'p>>,
    /// A bound on the magnitude of every integer cell (`i64::MAX`: unknown), so that a batch can add to the
    /// cells without checking each for overflow.
    reach: i64,
}

impl<'p> NeighbourCounts<'p> {
    pub fn new(
        shape: &'p CountShape,
        filters: &'p [CExpr],
        keys: &'p [(CExpr, usize)],
        aggs: &'p [AggSpec],
        node_bound: u64,
        hop: Hop<'p>,
    ) -> Self {
        let (cell_keys, ints) = CELL_POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        let mut counts = NeighbourCounts {
            shape,
            filters,
            keys,
            aggs,
            outer_index: FxHashMap::default(),
            outer_keys: Vec::new(),
            first_cells: NodeMap::new(if shape.neighbour_key.is_some() { node_bound } else { 1 }),
            unindexed: false,
            other_cells: FxHashMap::default(),
            cell_keys,
            cells: Cells::Ints(ints),
            memo: NodeMap::new(if shape.memo_filters.is_empty() { 0 } else { node_bound }),
            memo_values: Vec::new(),
            adjacent: shape.adjacent.iter().map(|_| (None, NodeMap::new(node_bound))).collect(),
            row: RowState {
                decided: false,
                passes: false,
                ready: false,
                group: 0,
                addends: Vec::with_capacity(aggs.len()),
                int_addends: Vec::with_capacity(aggs.len()),
                all_ints: false,
                excluded: None,
                bound_rels: None,
                adjacent_ready: false,
            },
            key: Vec::with_capacity(keys.len()),
            hop,
            batcher: None,
            reach: 0,
        };
        if node_bound <= batch::BATCH_NODE_LIMIT {
            counts.batcher = shape.batch.as_ref().map(batch::Batcher::new);
        }
        counts
    }

    /// Counts `row`'s relationships from `start` now, one by one.
    fn count_now(&mut self, row: &mut Row, start: NodeId, filter: TypeFilter, ctx: &Ctx) -> Result<()> {
        self.start_row(row, self.hop.distinct_from, ctx);
        self.count_started(row, start, filter, ctx)
    }

    /// [`Self::count_now`] after [`Self::start_row`].
    fn count_started(&mut self, row: &mut Row, start: NodeId, filter: TypeFilter, ctx: &Ctx) -> Result<()> {
        self.index_cells();
        let hop = self.hop;
        let mut failed = None;
        let mut visited = 0usize;
        // Runs of neighbour and relationship ids straight from the adjacency: no entry is decoded one at a time.
        let _ = ctx.g().visit_rel_slices(start, hop.dir, filter, |nbrs, rels| {
            visited += nbrs.len();
            match self.visit_run(row, (hop.rel, hop.to), hop.distinct_from, nbrs, rels, ctx) {
                Ok(true) => ControlFlow::Continue(()),
                Ok(false) => ControlFlow::Break(()),
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            }
        });
        if self.row.ready {
            let largest = self.row.int_addends.iter().map(|a| a.unsigned_abs()).max().unwrap_or(0);
            let added = if self.row.all_ints { (visited as u64).saturating_mul(largest) } else { u64::MAX };
            self.reach = self.reach.saturating_add(i64::try_from(added).unwrap_or(i64::MAX));
        }
        failed.map_or(Ok(()), Err)
    }

    /// Forgets the remembered verdicts and neighbour sets (operators below may have written to the graph).
    pub fn forget(&mut self) {
        self.memo.clear();
        self.memo_values.clear();
        for (of, _) in &mut self.adjacent {
            *of = None;
        }
    }

    fn start_row(&mut self, row: &Row, distinct_from: &[usize], ctx: &Ctx) {
        self.row.adjacent_ready = true;
        for (spec, (of, set)) in self.shape.adjacent.iter().zip(&mut self.adjacent) {
            let Value::Node(node) = row[spec.from] else {
                self.row.adjacent_ready = false;
                continue;
            };
            if *of != Some(node) {
                set.clear();
                let ids: Vec<TypeId> = spec.types.iter().filter_map(|t| ctx.type_token(t)).collect();
                if spec.types.is_empty() || !ids.is_empty() {
                    let filter = if spec.types.is_empty() { TypeFilter::All } else { TypeFilter::Only(&ids) };
                    let _ = ctx.g().visit_neighbour_slices::<()>(node, spec.dir, filter, |nbrs| {
                        nbrs.for_each(|n| set.insert(n, 0));
                        ControlFlow::Continue(())
                    });
                }
                *of = Some(node);
            }
        }
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
        self.row.excluded = pair(self.shape.not_equal.iter().map(|&(_, slot)| match row[slot] {
            Value::Node(n) => Some(n.0),
            _ => None,
        }));
        self.row.bound_rels = pair(distinct_from.iter().filter_map(|&slot| match &row[slot] {
            Value::Rel(r) => Some(Some(r.0)),
            Value::List(_) => Some(None),
            _ => None,
        }));
        // The row's verdict, group and addends read neither the relationship nor the neighbour: worked out now,
        // the dense loop takes the row from its first relationship. An error is not raised here but left to
        // `visit`, which raises it where the unfused plan would: at the first relationship that gets that far.
        if let Ok(passes) = self.all_true(&self.shape.row_filters, row, ctx) {
            self.row.decided = true;
            self.row.passes = passes;
            if passes && self.prepare_row(row, ctx).is_err() {
                self.row.ready = false;
            }
        }
    }

    /// Folds a run of the current row's relationships (parallel neighbour and relationship ids); false when
    /// the rest of the row's relationships can be skipped (a row filter failed).
    fn visit_run(
        &mut self,
        row: &mut Row,
        slots: (usize, usize),
        distinct_from: &[usize],
        nbrs: IdSlice,
        rels: IdSlice,
        ctx: &Ctx,
    ) -> Result<bool> {
        let mut i = 0;
        while i < nbrs.len() {
            if self.dense_ready() {
                i = match nbrs {
                    IdSlice::Narrow(ids) => self.run_dense(ids, rels, i)?,
                    IdSlice::Wide(ids) => self.run_dense(ids, rels, i)?,
                };
                if i == nbrs.len() {
                    break;
                }
            }
            let rel = RelId(rels.get(i));
            let distinct = distinct_from.is_empty() || !rel_in(row, distinct_from, rel);
            if distinct && !self.visit(row, slots, rel, NodeId(nbrs.get(i)), ctx)? {
                return Ok(false);
            }
            i += 1;
        }
        Ok(true)
    }

    /// Whether the current row can go through [`Self::run_dense`].
    fn dense_ready(&self) -> bool {
        self.row.ready
            && self.row.group == 0
            && self.row.all_ints
            && self.row.excluded.is_some()
            && self.row.bound_rels.is_some()
            && self.shape.rel_filters.is_empty()
            && self.row.adjacent_ready
            && match self.adjacent.as_slice() {
                [] => true,
                [(_, set)] => matches!(set, NodeMap::Dense { .. }),
                _ => false,
            }
            && matches!(self.cells, Cells::Ints(_))
            && matches!(self.first_cells, NodeMap::Dense { .. })
            && (self.shape.memo_filters.is_empty() || matches!(self.memo, NodeMap::Dense { .. }))
    }

    /// The common case as a plain loop from `from`: returns the index of the first relationship it cannot
    /// decide (a neighbour not judged yet, or beyond the arrays), or the run's length. The loop is compiled
    /// once per combination of the checks a row needs, so a row pays only for its own.
    #[inline(never)]
    fn run_dense<T: Copy + Into<u64>>(&mut self, nbrs: &[T], rels: IdSlice, from: usize) -> Result<usize> {
        let (Cells::Ints(ints), NodeMap::Dense { slots: cell_slots, set: cell_set }) =
            (&mut self.cells, &mut self.first_cells)
        else {
            unreachable!("checked by dense_ready")
        };
        // At most one neighbour set (checked by `dense_ready`), complete: absent means not adjacent.
        let adjacency: Option<(&[u32], bool)> = match (self.adjacent.first(), self.shape.adjacent.first()) {
            (Some((_, NodeMap::Dense { slots, .. })), Some(spec)) => Some((slots, spec.negated)),
            _ => None,
        };
        let memo: Option<&[u32]> = match &self.memo {
            NodeMap::Dense { slots, .. } if !self.shape.memo_filters.is_empty() => Some(slots),
            _ => None,
        };
        let (Some(bound_rels), Some(excluded)) = (self.row.bound_rels, self.row.excluded) else {
            unreachable!("checked by dense_ready")
        };
        let mut run = DenseRun {
            nbrs,
            rels,
            bound_rels,
            excluded,
            adjacency: adjacency.map_or((&[][..], false), |a| a),
            memo,
            addends: &self.row.int_addends,
            by_neighbour: self.shape.neighbour_key.is_some(),
            cell_slots,
            cell_set,
            cell_keys: &mut self.cell_keys,
            ints,
        };
        let distinct = bound_rels[0] != u64::MAX;
        let one = run.addends.len() == 1;
        match (distinct, adjacency.is_some(), one) {
            (false, false, true) => run.fold::<false, false, true>(from),
            (false, true, true) => run.fold::<false, true, true>(from),
            (true, false, true) => run.fold::<true, false, true>(from),
            (true, true, true) => run.fold::<true, true, true>(from),
            (false, false, false) => run.fold::<false, false, false>(from),
            (false, true, false) => run.fold::<false, true, false>(from),
            (true, false, false) => run.fold::<true, false, false>(from),
            (true, true, false) => run.fold::<true, true, false>(from),
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
        if !self.neighbour_passes(row, nbr.0, &mut write, ctx)? {
            return Ok(true);
        }
        if !self.shape.rel_filters.is_empty() {
            write(row);
            if !self.all_true(&self.shape.rel_filters, row, ctx)? {
                return Ok(true);
            }
        }
        if !self.row.ready {
            self.prepare_row(row, ctx)?;
        }
        let cell = self.cell(nbr.0);
        let width = self.aggs.len();
        if let (Cells::Ints(ints), true) = (&mut self.cells, self.row.all_ints) {
            for (acc, &a) in ints[cell * width..cell * width + width].iter_mut().zip(&self.row.int_addends) {
                add_int(acc, a)?;
            }
            return Ok(true);
        }
        if let Cells::Ints(ints) = &self.cells {
            self.cells = Cells::Values(ints.iter().map(|&i| Value::Int(i)).collect());
        }
        let Cells::Values(values) = &mut self.cells else { unreachable!("converted above") };
        for (acc, addend) in values[cell * width..cell * width + width].iter_mut().zip(&self.row.addends) {
            if let Some(b) = addend {
                *acc = add_to_sum(acc, b)?;
            }
        }
        Ok(true)
    }

    /// Whether neighbour `nbr` passes the filters that read it but not the relationship (in the order the
    /// unfused plan evaluates them), given the row's verdict. `write` puts the neighbour into the row before
    /// an expression reads it.
    fn neighbour_passes(
        &mut self,
        row: &mut Row,
        nbr: u64,
        write: &mut dyn FnMut(&mut Row),
        ctx: &Ctx,
    ) -> Result<bool> {
        for &(i, slot) in &self.shape.not_equal {
            let pass = match row[slot] {
                Value::Node(other) => other.0 != nbr,
                _ => {
                    write(row);
                    self.filters[i].is_true(row, ctx)?
                }
            };
            if !pass {
                return Ok(false);
            }
        }
        for (spec, (_, set)) in self.shape.adjacent.iter().zip(&self.adjacent) {
            let pass = if self.row.adjacent_ready {
                set.get(nbr).is_some() != spec.negated
            } else {
                write(row);
                self.filters[spec.filter].is_true(row, ctx)?
            };
            if !pass {
                return Ok(false);
            }
        }
        if !self.shape.memo_filters.is_empty() {
            let pass = match self.memo.get(nbr) {
                Some(verdict) => verdict == 1,
                None => {
                    write(row);
                    let pass = self.all_true(&self.shape.memo_filters, row, ctx)?;
                    self.memo.insert(nbr, u32::from(pass));
                    pass
                }
            };
            if !pass {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Keys and arguments are evaluated for rows that pass every filter, as in the unfused plan; but only
    /// once per input row (they read neither the relationship nor the neighbour).
    fn prepare_row(&mut self, row: &Row, ctx: &Ctx) -> Result<()> {
        self.row.group = self.outer_group(row, ctx)?;
        self.row.addends.clear();
        for spec in self.aggs {
            let addend = match &spec.arg {
                None => Some(Value::Int(1)),
                // The common argument, a slot holding an integer (`sum(shared)`), without evaluating it.
                Some(CExpr::Slot(s)) if matches!(row[*s], Value::Int(_)) => match spec.func {
                    AggFn::Count => Some(Value::Int(1)),
                    _ => Some(row[*s].clone()),
                },
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
        self.row.int_addends.clear();
        self.row.all_ints = true;
        for a in &self.row.addends {
            match a {
                None => self.row.int_addends.push(0),
                Some(Value::Int(i)) => self.row.int_addends.push(*i),
                Some(_) => self.row.all_ints = false,
            }
        }
        self.row.ready = true;
        Ok(())
    }

    /// The cell of neighbour `nbr` in the current row's group, created if new.
    #[inline]
    fn cell(&mut self, nbr: u64) -> usize {
        // The common case inline: the first group, counted by neighbour in a dense map, one integer aggregate.
        if let (0, Some(_), NodeMap::Dense { slots, set }, Cells::Ints(ints), 1) =
            (self.row.group, self.shape.neighbour_key, &mut self.first_cells, &mut self.cells, self.aggs.len())
        {
            if let Some(slot) = slots.get_mut(nbr as usize) {
                if *slot != 0 {
                    return *slot as usize - 1;
                }
                let c = self.cell_keys.len();
                *slot = c as u32 + 1;
                set.push(nbr);
                self.cell_keys.push((0, nbr));
                ints.push(0);
                return c;
            }
        }
        self.new_cell(nbr)
    }

    #[inline(never)]
    fn new_cell(&mut self, nbr: u64) -> usize {
        if let Some(c) = self.find_cell(nbr) {
            return c;
        }
        let group = self.row.group;
        let nbr = if self.shape.neighbour_key.is_some() { nbr } else { 0 };
        let c = self.cell_keys.len() as u32;
        if group == 0 {
            self.first_cells.insert(nbr, c);
        } else {
            self.other_cells.insert((group, nbr), c);
        }
        self.cell_keys.push((group, nbr));
        let width = self.aggs.len();
        match &mut self.cells {
            Cells::Ints(ints) => ints.extend(std::iter::repeat_n(0, width)),
            Cells::Values(values) => values.extend(std::iter::repeat_n(Value::Int(0), width)),
        }
        c as usize
    }

    /// Records in `first_cells` the cells a batch appended without (before anything looks a cell up).
    fn index_cells(&mut self) {
        if std::mem::take(&mut self.unindexed) {
            for (c, &(_, nbr)) in self.cell_keys.iter().enumerate() {
                self.first_cells.insert(nbr, c as u32);
            }
        }
    }

    /// The cell of neighbour `nbr` in the current row's group, if it has one.
    fn find_cell(&self, nbr: u64) -> Option<usize> {
        let group = self.row.group;
        let nbr = if self.shape.neighbour_key.is_some() { nbr } else { 0 };
        let found = if group == 0 { self.first_cells.get(nbr) } else { self.other_cells.get(&(group, nbr)).copied() };
        found.map(|c| c as usize)
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
        if self.shape.outer_keys.is_empty() && !self.outer_keys.is_empty() {
            return Ok(0);
        }
        self.key.clear();
        for &k in &self.shape.outer_keys {
            self.key.push(Equivalent(self.keys[k].0.eval(row, ctx)?));
        }
        if let Some(&g) = self.outer_index.get(self.key.as_slice()) {
            return Ok(g);
        }
        self.outer_keys.push(self.key.iter().map(|k| k.0.clone()).collect());
        let g = (self.outer_keys.len() - 1) as u32;
        self.outer_index.insert(self.key.clone(), g);
        Ok(g)
    }

    /// One row per cell; with no keys and no relationship counted, the one row of zero counts.
    pub fn finish(self, width: usize) -> Result<Vec<Row>> {
        if self.cell_keys.is_empty() && self.keys.is_empty() {
            return Ok(vec![self.zero_row(width)]);
        }
        let mut out = Vec::with_capacity(self.cell_keys.len());
        for c in 0..self.cell_keys.len() {
            // Only the key and aggregate slots are in scope after an aggregation: the rest stay null.
            let mut row = Vec::with_capacity(width);
            row.resize_with(width, || Value::Null);
            self.write_group(c, &mut row);
            out.push(row);
        }
        Ok(out)
    }

    /// The rows of [`Self::finish`] lent to `sink` one after another in one reused row.
    pub fn lend(&self, ctx: &Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        if self.cell_keys.is_empty() && self.keys.is_empty() {
            let _ = sink(&mut self.zero_row(ctx.width), ctx)?;
            return Ok(());
        }
        let cells = self.lent_cells(ctx);
        let mut row: Row = Vec::new();
        for (n, c) in cells.enumerate() {
            if n % super::BATCH == super::BATCH - 1 {
                if let Some(interrupt) = &ctx.interrupt {
                    interrupt.check()?;
                }
            }
            if row.len() != ctx.width {
                // New, or taken by the sink: nulls written in place rather than cloned one by one.
                row.clear();
                row.resize_with(ctx.width, || Value::Null);
            }
            self.write_group(c, &mut row);
            if sink(&mut row, ctx)?.is_break() {
                break;
            }
        }
        Ok(())
    }

    /// The cells to lend, in cell order: those [`Self::top_cells`] picks, or every one.
    fn lent_cells(&self, ctx: &Ctx) -> Box<dyn Iterator<Item = usize>> {
        match self.top_cells(ctx) {
            Some(cells) => Box::new(cells.into_iter()),
            None => Box::new(0..self.cell_keys.len()),
        }
    }

    /// The groups of [`Self::lend`] as their parts, in runs of the same outer group, for a consumer that reads
    /// nothing else ([`super::Operator::lend_cell_runs`]). Not for a count without keys (its one row of zeros
    /// has no cell).
    pub fn lend_cell_runs(&self, ctx: &Ctx, sink: &mut CellRunSink<'_>) -> Result<()> {
        let top = self.top_cells(ctx);
        let n = top.as_ref().map_or(self.cell_keys.len(), Vec::len);
        let values = match &self.cells {
            Cells::Ints(ints) => CellValues::Ints(ints),
            Cells::Values(values) => CellValues::Values(values),
        };
        let index = |k: usize| top.as_ref().map_or(k, |t| t[k]);
        let mut from = 0;
        while from < n {
            let group = self.cell_keys[index(from)].0;
            let mut to = from + 1;
            while to < n && self.cell_keys[index(to)].0 == group {
                to += 1;
            }
            let cells = match &top {
                Some(t) => CellIndices::List(&t[from..to]),
                None => CellIndices::Range(from, to),
            };
            let run = CellRun {
                outer: &self.outer_keys[group as usize],
                keys: &self.cell_keys,
                values,
                width: self.aggs.len(),
                cells,
            };
            if sink(&run, ctx)?.is_break() {
                break;
            }
            from = to;
        }
        Ok(())
    }

    /// With [`CountShape::top`], the cells that sort into the first `skip + limit` under its keys (ties in
    /// cell order, as the stable sort above breaks them; with more sort keys than it knows, every cell tied
    /// with the last of those), in cell order; `None` to lend every cell.
    fn top_cells(&self, ctx: &Ctx) -> Option<Vec<usize>> {
        let top = self.shape.top.as_ref()?;
        let Cells::Ints(ints) = &self.cells else { return None };
        // The sort evaluates its bound before it reads a row, so an invalid one has failed already.
        let skip = match &top.skip {
            Some(s) => super::count_value(s, ctx, "SKIP").ok()?,
            None => 0,
        };
        let keep = skip.saturating_add(super::count_value(&top.limit, ctx, "LIMIT").ok()?);
        let n = self.cell_keys.len();
        if keep >= n {
            return None;
        }
        let width = self.aggs.len();
        let key = |c: usize, k: TopKey| match k {
            TopKey::Aggregate(i) => ints[c * width + i],
            TopKey::NeighbourId => self.cell_keys[c].1 as i64,
        };
        let on_keys = |a: usize, b: usize| {
            for &(k, desc) in &top.keys {
                let o = key(a, k).cmp(&key(b, k));
                let o = if desc { o.reverse() } else { o };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        };
        if keep == 0 {
            return Some(Vec::new());
        }
        // The first `keep` cells in sort order, ties in cell order, and the last of them.
        let (mut best, last) = if keep > TOP_BY_INSERTION {
            let mut cells: Vec<usize> = (0..n).collect();
            let (_, &mut last, _) = cells.select_nth_unstable_by(keep - 1, |&a, &b| on_keys(a, b).then(a.cmp(&b)));
            cells.truncate(keep);
            (cells, last)
        } else if let Some(best) = self.top_by_aggregate(ints, &top.keys, keep) {
            let last = best[keep - 1];
            (best, last)
        } else if let [first, rest @ ..] = top.keys.as_slice() {
            if rest.len() <= 1 {
                // Up to two keys packed as a pair of integers that compares in sort order (a descending key
                // bitwise negated, which reverses the order of every i64): one compare per cell.
                // Each key is gathered into a column in one pass over the cells, then compared.
                let best = PAIRS.with(|pairs| {
                    let mut pairs = pairs.take();
                    pairs.clear();
                    pairs.resize(n, (0, 0));
                    for (column, key) in [Some(first), rest.first()].into_iter().enumerate() {
                        let Some(&(k, desc)) = key else { continue };
                        let flip = if desc { -1 } else { 0 };
                        let mut put = |c: usize, v: i64| {
                            // `!v` (bitwise) when descending: it reverses the order of every i64.
                            let v = v ^ flip;
                            if column == 0 {
                                pairs[c].0 = v
                            } else {
                                pairs[c].1 = v
                            }
                        };
                        match k {
                            TopKey::Aggregate(i) => (0..n).for_each(|c| put(c, ints[c * width + i])),
                            TopKey::NeighbourId => (0..n).for_each(|c| put(c, self.cell_keys[c].1 as i64)),
                        }
                    }
                    let best = top_pairs(&pairs, keep);
                    if pairs.capacity() <= POOLED_CELLS_MAX {
                        PAIRS.set(pairs);
                    }
                    best
                });
                let last = best[keep - 1];
                (best, last)
            } else {
                top_by_insertion(n, keep, *first, key, on_keys)
            }
        } else {
            unreachable!("a sort has at least one key")
        };
        let cells = if top.exact {
            best.sort_unstable();
            best
        } else {
            // Every group that sorts before the keep-th on the keys known here, and every one tied with it.
            (0..n).filter(|&c| on_keys(c, last) != Ordering::Greater).collect()
        };
        Some(cells)
    }

    /// [`top_pairs`] for the common sort on an aggregate, then perhaps the neighbour's id (`ORDER BY count
    /// DESC, id(n)`), reading both keys straight from the cells; `None` for other sorts.
    fn top_by_aggregate(&self, ints: &[i64], keys: &[(TopKey, bool)], keep: usize) -> Option<Vec<usize>> {
        let (i, first_desc, second) = match keys {
            [(TopKey::Aggregate(i), desc)] => (*i, *desc, None),
            [(TopKey::Aggregate(i), desc), (TopKey::NeighbourId, second)] => (*i, *desc, Some(*second)),
            _ => return None,
        };
        // A descending key bitwise negated reverses the order of every i64.
        let (flip0, flip1) = (-i64::from(first_desc), -i64::from(second == Some(true)));
        let width = self.aggs.len();
        let mut best: Vec<((i64, i64), usize)> = Vec::with_capacity(keep + 1);
        let mut floor = (i64::MAX, i64::MAX);
        for (c, &(_, nbr)) in self.cell_keys.iter().enumerate() {
            let a = ints[c * width + i] ^ flip0;
            // Most cells fail against the worst kept one at the first key.
            if a > floor.0 {
                continue;
            }
            let key = (a, if second.is_some() { nbr as i64 ^ flip1 } else { 0 });
            // A later cell tied with the worst kept sorts after it.
            if best.len() == keep && key >= floor {
                continue;
            }
            let at = best.partition_point(|&(b, _)| b <= key);
            best.insert(at, (key, c));
            best.truncate(keep);
            if best.len() == keep {
                floor = best[keep - 1].0;
            }
        }
        Some(best.into_iter().map(|(_, c)| c).collect())
    }

    fn zero_row(&self, width: usize) -> Row {
        let mut row = vec![Value::Null; width];
        for spec in self.aggs {
            row[spec.slot] = Value::Int(0);
        }
        row
    }

    /// Writes cell `c`'s keys and aggregates into their slots of `row`.
    fn write_group(&self, c: usize, row: &mut Row) {
        let (group, nbr) = self.cell_keys[c];
        for (&k, v) in self.shape.outer_keys.iter().zip(&self.outer_keys[group as usize]) {
            row[self.keys[k].1] = v.clone();
        }
        if let Some((k, as_id)) = self.shape.neighbour_key {
            row[self.keys[k].1] = if as_id { Value::Int(nbr as i64) } else { Value::Node(NodeId(nbr)) };
        }
        let n = self.aggs.len();
        for (i, spec) in self.aggs.iter().enumerate() {
            row[spec.slot] = match &self.cells {
                Cells::Ints(ints) => Value::Int(ints[c * n + i]),
                Cells::Values(values) => values[c * n + i].clone(),
            };
        }
    }
}

impl Drop for NeighbourCounts<'_> {
    fn drop(&mut self) {
        let mut keys = std::mem::take(&mut self.cell_keys);
        if let Cells::Ints(ints) = &mut self.cells {
            let mut ints = std::mem::take(ints);
            // Arrays grown by a huge aggregation are let go rather than held by the thread.
            if keys.capacity() <= POOLED_CELLS_MAX {
                keys.clear();
                ints.clear();
                CELL_POOL.with(|p| p.borrow_mut().push((keys, ints)));
            }
        }
    }
}

/// The first `keep` (at least one) of `n` cells in sort order, ties in cell order, found in one pass: once
/// there are `keep`, a cell enters only if it sorts before the worst of them, which most cells fail at the
/// first key. Returns them and the last of them.
fn top_by_insertion(
    n: usize,
    keep: usize,
    (first, first_desc): (TopKey, bool),
    key: impl Fn(usize, TopKey) -> i64,
    on_keys: impl Fn(usize, usize) -> Ordering,
) -> (Vec<usize>, usize) {
    let mut best: Vec<usize> = Vec::with_capacity(keep + 1);
    let mut floor = i64::MIN;
    for c in 0..n {
        if best.len() == keep {
            let v = key(c, first);
            let o = if first_desc { floor.cmp(&v) } else { v.cmp(&floor) };
            // A later cell tied on every key sorts after the kept one.
            if o == Ordering::Greater || (o == Ordering::Equal && on_keys(c, best[keep - 1]) != Ordering::Less) {
                continue;
            }
        }
        let at = best.partition_point(|&b| on_keys(b, c) != Ordering::Greater);
        best.insert(at, c);
        best.truncate(keep);
        if best.len() == keep {
            floor = key(best[keep - 1], first);
        }
    }
    let last = best[keep - 1];
    (best, last)
}

/// [`top_by_insertion`] for keys packed into pairs that compare in sort order, one per cell: the first `keep`
/// (at least one) cells, ties in cell order.
fn top_pairs(pairs: &[(i64, i64)], keep: usize) -> Vec<usize> {
    let mut best: Vec<((i64, i64), usize)> = Vec::with_capacity(keep + 1);
    let mut floor = (i64::MAX, i64::MAX);
    for (c, &k) in pairs.iter().enumerate() {
        // A later cell tied with the worst kept sorts after it.
        if best.len() == keep && k >= floor {
            continue;
        }
        let at = best.partition_point(|&(b, _)| b <= k);
        best.insert(at, (k, c));
        best.truncate(keep);
        if best.len() == keep {
            floor = best[keep - 1].0;
        }
    }
    best.into_iter().map(|(_, c)| c).collect()
}

/// Up to two ids as a pair padded with `u64::MAX` (no node or relationship has that id); `None` for more, or
/// when one is `None`.
fn pair(ids: impl Iterator<Item = Option<u64>>) -> Option<[u64; 2]> {
    let mut out = [u64::MAX; 2];
    for (i, id) in ids.enumerate() {
        *out.get_mut(i)? = id?;
    }
    Some(out)
}

/// What [`NeighbourCounts::run_dense`] reads and writes, borrowed apart so that its loop can be
/// specialised.
struct DenseRun<'a, T> {
    nbrs: &'a [T],
    rels: IdSlice<'a>,
    bound_rels: [u64; 2],
    /// Node ids the neighbour must differ from.
    excluded: [u64; 2],
    /// The one neighbour set a filter asks about (complete: absent means not adjacent), and whether the
    /// filter wants the neighbour absent from it.
    adjacency: (&'a [u32], bool),
    /// Remembered verdicts per neighbour, plus one (0: not judged yet).
    memo: Option<&'a [u32]>,
    addends: &'a [i64],
    by_neighbour: bool,
    cell_slots: &'a mut Vec<u32>,
    cell_set: &'a mut Vec<u64>,
    cell_keys: &'a mut Vec<(u32, u64)>,
    ints: &'a mut Vec<i64>,
}

impl<T: Copy + Into<u64>> DenseRun<'_, T> {
    /// The loop of [`NeighbourCounts::run_dense`]; `DISTINCT`: relationships are checked against
    /// `bound_rels`, `ADJACENT`: the neighbour set is consulted, `ONE`: a single aggregate.
    #[inline(always)]
    fn fold<const DISTINCT: bool, const ADJACENT: bool, const ONE: bool>(&mut self, from: usize) -> Result<usize> {
        let width = self.addends.len();
        let (set, negated) = self.adjacency;
        for i in from..self.nbrs.len() {
            let nbr: u64 = self.nbrs[i].into();
            if DISTINCT {
                let rel = self.rels.get(i);
                if rel == self.bound_rels[0] || rel == self.bound_rels[1] {
                    continue;
                }
            }
            if nbr == self.excluded[0] || nbr == self.excluded[1] {
                continue;
            }
            // Whether the neighbour passes the adjacency filter; a failing neighbour that already has a cell
            // adds zero to it rather than branching on a verdict that is often a coin toss.
            let passes = !ADJACENT || (set.get(nbr as usize).is_some_and(|&v| v != 0) != negated);
            if let Some(memo) = self.memo {
                // Stored verdict plus one: 2 passes, 1 fails, 0 not judged yet.
                match memo.get(nbr as usize) {
                    Some(2) => {}
                    Some(1) => continue,
                    _ => return Ok(i),
                }
            }
            let key = if self.by_neighbour { nbr } else { 0 };
            let Some(&slot) = self.cell_slots.get(key as usize) else { return Ok(i) };
            if ONE {
                // Whether the neighbour has a cell is as unpredictable as whether it passes (a neighbour that
                // fails never gets one), so neither is branched on: only creating a cell is, which is rare. A
                // neighbour without a cell that fails adds zero to cell 0 instead.
                let slot = if (slot == 0) & passes { self.create(key, width) } else { slot };
                if self.ints.is_empty() {
                    continue;
                }
                let cell = (slot as usize).saturating_sub(1);
                let a = self.addends[0] & (passes as i64).wrapping_neg();
                add_int(&mut self.ints[cell], a)?;
                continue;
            }
            let cell = match slot {
                0 if !passes => continue,
                0 => self.create(key, width),
                c => c,
            } as usize
                - 1;
            if passes {
                for (acc, &a) in self.ints[cell * width..cell * width + width].iter_mut().zip(self.addends) {
                    add_int(acc, a)?;
                }
            }
        }
        Ok(self.nbrs.len())
    }

    /// A new cell of the first group for `key`; returns its slot value (index plus one).
    #[cold]
    fn create(&mut self, key: u64, width: usize) -> u32 {
        let c = self.cell_keys.len() as u32;
        self.cell_slots[key as usize] = c + 1;
        self.cell_set.push(key);
        self.cell_keys.push((0, key));
        if width == 1 {
            self.ints.push(0);
        } else {
            self.ints.resize(self.ints.len() + width, 0);
        }
        c + 1
    }
}

/// Adds an integer addend to an integer cell, with Cypher's overflow error.
#[inline]
fn add_int(acc: &mut i64, a: i64) -> Result<()> {
    match acc.checked_add(a) {
        Some(sum) => {
            *acc = sum;
            Ok(())
        }
        None => Err(arith::add(&Value::Int(*acc), &Value::Int(a)).expect_err("an overflowing sum is an error")),
    }
}
