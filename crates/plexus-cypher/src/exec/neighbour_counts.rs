//! Counts and sums per (group of the input row, neighbour) for [`super::expand_aggregate`], following a
//! [`CountShape`]: what the plan can decide once per input row is decided once, costly filters on the
//! neighbour are remembered per neighbour, and each relationship then costs a few array reads.
//!
//! Input rows are counted one by one or in batches. One by one, [`NeighbourCounts::visit`] handles any
//! relationship and evaluates whatever expression it needs; once a row's keys, arguments and filters are
//! known, the common case (integer counts or sums, the first group of input rows, dense arrays) runs the
//! loop of `dense` over a run of neighbour ids, falling back to `visit` only for a neighbour it has not judged
//! yet. Rows that share everything but their start node and addend are counted as one batch (`batch`): walked
//! into a dense counter (`counter`) and merged into the cells once per neighbour, or walked straight into
//! the cells (`direct`). A sort under a LIMIT over the groups takes only those it keeps (`top`).

use std::ops::ControlFlow;

use plexus_storage::fxhash::FxHashMap;
use plexus_storage::{Direction, IdSlice, NodeId, RelId, TypeFilter, TypeId};

use super::aggregate::{add_to_sum, check_number};
use super::ctx::Ctx;
use super::expand::rel_in;
use super::nodemap::NodeMap;
use super::{put, CellIndices, CellRun, CellRunSink, CellValues, Row, RowSink};
use crate::compare::Equivalent;
use crate::error::Result;
use crate::expr::CExpr;
use crate::plan::fuse::CountShape;
use crate::plan::{AggFn, AggSpec};
use crate::value::Value;

mod batch;
mod counter;
mod dense;
mod direct;
mod top;

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

/// Cell arrays up to this many cells go back to the pool when a count is done.
const POOLED_CELLS_MAX: usize = 1 << 16;

/// A count's cell keys (group, neighbour) and integer values.
type CellArrays = (Vec<(u32, u64)>, Vec<i64>);

thread_local! {
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
    addends: smallvec::SmallVec<[Option<Value>; 2]>,
    /// The same as integers (null as 0), valid when `all_ints` (they all are).
    int_addends: smallvec::SmallVec<[i64; 4]>,
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
    /// Groups of input rows by their outer keys, once there are two (one group, the usual case, is found by
    /// comparing its keys), and every group's key values, one after another.
    outer_index: FxHashMap<Vec<Equivalent>, u32>,
    outer_keys: smallvec::SmallVec<[Value; 2]>,
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
    key: smallvec::SmallVec<[Equivalent; 2]>,
    hop: Hop<'p>,
    /// Input rows taken in batches, when the count's shape allows it.
    batcher: Option<batch::Batcher<'p>>,
    /// A batch's counter standing for all the cells, not drained yet (see [`top::Held`]).
    held: Option<top::Held>,
    /// A bound on the magnitude of every integer cell (`i64::MAX`: unknown), so that a batch can add to the
    /// cells without checking each for overflow.
    reach: i64,
    /// The last batch walked into a counter reached mostly new neighbours (then the next is walked straight
    /// into the cells, which saves a pass over them; else the counter, which adds a repeat cheaply).
    mostly_new: bool,
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
            outer_keys: smallvec::SmallVec::new(),
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
                addends: smallvec::SmallVec::with_capacity(aggs.len()),
                int_addends: smallvec::SmallVec::with_capacity(aggs.len()),
                all_ints: false,
                excluded: None,
                bound_rels: None,
                adjacent_ready: false,
            },
            key: smallvec::SmallVec::with_capacity(keys.len()),
            hop,
            batcher: None,
            held: None,
            reach: 0,
            mostly_new: false,
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
        // A batch flushed just before this row (one the batch could not take) may have left its counter held.
        self.settle();
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
        self.settle();
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
                let ids: smallvec::SmallVec<[TypeId; 2]> =
                    spec.types.iter().filter_map(|t| ctx.type_token(t)).collect();
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
            let cells = &mut ints[cell * width..cell * width + width];
            if fits(cells, &self.row.int_addends) {
                for (acc, &a) in cells.iter_mut().zip(&self.row.int_addends) {
                    *acc += a;
                }
                return Ok(true);
            }
            // A sum past the integers goes on as a float (see `add_to_sum`): in the cells of values below.
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
        if self.shape.outer_keys.is_empty() {
            // One group for every row, without keys.
            return Ok(0);
        }
        self.key.clear();
        for &k in &self.shape.outer_keys {
            self.key.push(Equivalent(self.keys[k].0.eval(row, ctx)?));
        }
        let width = self.key.len();
        let groups = (self.outer_keys.len() / width) as u32;
        if groups == 1 && self.outer_index.is_empty() {
            let first = &self.outer_keys[..width];
            if self.key.iter().zip(first).all(|(k, v)| crate::compare::equivalent(&k.0, v)) {
                return Ok(0);
            }
            // A second group: from now on groups are found by the index.
            self.outer_index.insert(first.iter().map(|v| Equivalent(v.clone())).collect(), 0);
        } else if let Some(&g) = self.outer_index.get(self.key.as_slice()) {
            return Ok(g);
        }
        self.outer_keys.extend(self.key.iter().map(|k| k.0.clone()));
        if groups > 0 {
            self.outer_index.insert(self.key.to_vec(), groups);
        }
        Ok(groups)
    }

    /// One row per cell lent ([`Self::lent_cells`]); with no keys and no relationship counted, the one row of
    /// zero counts.
    pub fn finish(mut self, ctx: &Ctx) -> Result<Vec<Row>> {
        let width = ctx.width;
        let cells = self.lent_cells(ctx);
        if self.cell_keys.is_empty() && self.keys.is_empty() {
            return Ok(vec![self.zero_row(width)]);
        }
        let mut out = Vec::with_capacity(cells.len());
        for c in cells {
            // Only the key and aggregate slots are in scope after an aggregation: the rest stay null.
            let mut row = super::null_row(width);
            self.write_group(c, &mut row);
            out.push(row);
        }
        Ok(out)
    }

    /// The rows of [`Self::finish`] lent to `sink` one after another in one reused row.
    pub fn lend(&mut self, ctx: &Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        // Picked (or drained) first: a held counter's cells are not in `cell_keys` yet.
        let cells = self.lent_cells(ctx);
        if self.cell_keys.is_empty() && self.keys.is_empty() {
            let _ = sink(&mut self.zero_row(ctx.width), ctx)?;
            return Ok(());
        }
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
        super::drop_row(row);
        Ok(())
    }

    /// The cells to lend: those [`Self::top_cells`] picks (in sort order when it knows every sort key), every
    /// one in sort order when it knows every sort key but picks none (the sort is then gone from the plan), or
    /// every one in cell order.
    fn lent_cells(&mut self, ctx: &Ctx) -> std::vec::IntoIter<usize> {
        let cells = match self.top_cells(ctx) {
            Some(cells) => cells,
            None => {
                self.settle();
                let mut all: Vec<usize> = (0..self.cell_keys.len()).collect();
                if self.shape.top.as_ref().is_some_and(|top| top.exact) {
                    self.sort_cells(&mut all);
                }
                all
            }
        };
        cells.into_iter()
    }

    /// The groups of [`Self::lend`] as their parts, in runs of the same outer group, for a consumer that reads
    /// nothing else ([`super::Operator::lend_cell_runs`]). Not for a count without keys (its one row of zeros
    /// has no cell).
    pub fn lend_cell_runs(&mut self, ctx: &Ctx, sink: &mut CellRunSink<'_>) -> Result<()> {
        // In cell order, so that runs of one outer group stay whole.
        let top = self.top_cells(ctx).map(|mut cells| {
            cells.sort_unstable();
            cells
        });
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
            let run =
                CellRun { outer: self.group_keys(group), keys: &self.cell_keys, values, width: self.aggs.len(), cells };
            if sink(&run, ctx)?.is_break() {
                break;
            }
            from = to;
        }
        Ok(())
    }

    fn zero_row(&self, width: usize) -> Row {
        let mut row = super::null_row(width);
        for spec in self.aggs {
            row[spec.slot] = Value::Int(0);
        }
        row
    }

    /// The outer key values of group `group`.
    fn group_keys(&self, group: u32) -> &[Value] {
        let width = self.shape.outer_keys.len();
        &self.outer_keys[group as usize * width..(group as usize + 1) * width]
    }

    /// Writes cell `c`'s keys and aggregates into their slots of `row`.
    fn write_group(&self, c: usize, row: &mut Row) {
        let (group, nbr) = self.cell_keys[c];
        for (&k, v) in self.shape.outer_keys.iter().zip(self.group_keys(group)) {
            put(&mut row[self.keys[k].1], v.clone());
        }
        if let Some((k, as_id)) = self.shape.neighbour_key {
            put(&mut row[self.keys[k].1], if as_id { Value::Int(nbr as i64) } else { Value::Node(NodeId(nbr)) });
        }
        let n = self.aggs.len();
        for (i, spec) in self.aggs.iter().enumerate() {
            let value = match &self.cells {
                Cells::Ints(ints) => Value::Int(ints[c * n + i]),
                Cells::Values(values) => values[c * n + i].clone(),
            };
            put(&mut row[spec.slot], value);
        }
    }
}

impl Drop for NeighbourCounts<'_> {
    fn drop(&mut self) {
        if let Some(held) = self.held.take() {
            held.counter.give_back();
        }
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

/// Up to two ids as a pair padded with `u64::MAX` (no node or relationship has that id); `None` for more, or
/// when one is `None`.
fn pair(ids: impl Iterator<Item = Option<u64>>) -> Option<[u64; 2]> {
    let mut out = [u64::MAX; 2];
    for (i, id) in ids.enumerate() {
        *out.get_mut(i)? = id?;
    }
    Some(out)
}

/// Whether adding `addends` to `cells`, one to one, keeps every cell an integer.
#[inline]
fn fits(cells: &[i64], addends: &[i64]) -> bool {
    cells.iter().zip(addends).all(|(acc, &a)| acc.checked_add(a).is_some())
}
