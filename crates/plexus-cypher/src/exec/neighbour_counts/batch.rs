//! Batches of input rows for a fused count that differ only in their start node, their addend and the
//! relationships they must not reuse, as the rows of a two-hop count do (`MATCH (me)-[:LIKES]->(i)<-[:LIKES]-(o)`:
//! one row per item, all with the same `me`) and the groups one count lends another (one per co-liker).
//!
//! Such rows share everything the per-row set-up of [`NeighbourCounts`] works out: the row filters' verdict,
//! the group, the neighbour sets of pattern predicates, the nodes the neighbour must differ from. So a batch
//! is set up once, from its first row, and its rows are then only walked: every relationship adds the row's
//! addend to its neighbour's entry in a dense per-thread counter, without a filter or a cell in the loop.
//! Filters on the neighbour are applied afterwards, once per distinct neighbour, in the order the neighbours
//! were first reached, which is the order in which the row-by-row path would have created their cells: the
//! cells, their order and their values come out the same.
//!
//! Nothing can fail in the walk. When something could (a sum that might overflow, a filter that raises an
//! error, values that are not integers), the batch is counted again row by row from its start, before any
//! cell has changed, so that errors are raised exactly where the row-by-row path raises them.

use std::cell::RefCell;
use std::ops::ControlFlow;

use plexus_storage::{IdSlice, NodeId, RelId, TypeFilter, TypeId};

use super::counter::Counter;
use super::top::Held;
use super::{CellRun, CellValues, Cells, NeighbourCounts};
use crate::error::Result;
use crate::exec::ctx::Ctx;
use crate::exec::nodemap::NodeMap;
use crate::exec::Row;
use crate::plan::fuse::{Addend, BatchShape, CellPart};
use crate::value::Value;

/// Graphs with more node ids than this are counted row by row (the counter takes 16 bytes per node id).
pub(super) const BATCH_NODE_LIMIT: u64 = 1 << 24;
/// Batches of one row in a row after which a count stops batching.
const GIVE_UP_AFTER: u32 = 16;
/// Rows queued before they are walked: a batch of a million groups lent by another count is walked in
/// slices, so the queue stays small.
const MAX_QUEUED: usize = 4096;

thread_local! {
    static BUFFERS: RefCell<Vec<Buffers>> = const { RefCell::new(Vec::new()) };
}

/// One queued row: its start node, addend and the relationships it must not reuse (padded with `u64::MAX`).
#[derive(Clone, Copy)]
pub(super) struct Start {
    pub node: u64,
    pub addend: i64,
    pub bound: [u64; 2],
}

/// A batcher's vectors, kept per thread between queries (a query would otherwise regrow them every time).
#[derive(Default)]
struct Buffers {
    /// A copy of the open batch's first row: its state slots hold the batch's values.
    row: Row,
    starts: Vec<Start>,
}

/// The batch being gathered: the rows since the last whose state differed from theirs.
pub(super) struct Batcher<'p> {
    shape: &'p BatchShape,
    open: bool,
    /// The open batch's row filters failed: its rows count nothing.
    dead: bool,
    buffers: Buffers,
    types: Option<TypeIds>,
    /// How many batches in a row held a single row: rows that never share a state are counted one by one
    /// after [`GIVE_UP_AFTER`] of them.
    lone_batches: u32,
}

impl<'p> Batcher<'p> {
    pub(super) fn new(shape: &'p BatchShape) -> Batcher<'p> {
        let buffers = BUFFERS.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        Batcher { shape, open: false, dead: false, buffers, types: None, lone_batches: 0 }
    }

    /// What `row` (starting at `node`) would queue, when it can be batched at all: its addend is a positive
    /// integer and the relationships it must not reuse are relationships.
    fn start(&self, row: &Row, node: NodeId) -> Option<Start> {
        let addend = match self.shape.addend {
            Addend::One => 1,
            Addend::Count(s) if !matches!(row[s], Value::Null) => 1,
            Addend::Sum(s) => match row[s] {
                Value::Int(i) if i > 0 => i,
                _ => return None,
            },
            Addend::Count(_) => return None,
        };
        let mut bound = [u64::MAX; 2];
        for (b, &slot) in bound.iter_mut().zip(&self.shape.distinct) {
            match row[slot] {
                Value::Rel(r) => *b = r.0,
                _ => return None,
            }
        }
        Some(Start { node: node.0, addend, bound })
    }

    /// Whether `row`'s state is the open batch's.
    fn joins(&self, row: &Row, filter: TypeFilter) -> bool {
        self.open
            && same_types(&self.types, filter)
            && self.shape.state.iter().all(|&s| same(&row[s], &self.buffers.row[s]))
    }
}

impl Drop for Batcher<'_> {
    fn drop(&mut self) {
        let mut buffers = std::mem::take(&mut self.buffers);
        // Values are let go now, not when the buffers are next used.
        crate::exec::clear_row(&mut buffers.row);
        buffers.starts.clear();
        if buffers.starts.capacity() <= MAX_QUEUED {
            BUFFERS.with(|p| p.borrow_mut().push(buffers));
        }
    }
}

/// Whether two values are the same for every expression: identical, floats by their bits. Values that are
/// costly to compare count as different (a batch then simply does not form).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Node(x), Value::Node(y)) => x == y,
        (Value::Rel(x), Value::Rel(y)) => x == y,
        _ => false,
    }
}

/// The relationship types a batch walks: one or two nearly always, kept without an allocation.
type TypeIds = smallvec::SmallVec<[TypeId; 2]>;

fn types_of(filter: TypeFilter) -> Option<TypeIds> {
    match filter {
        TypeFilter::All => None,
        TypeFilter::Only(ids) => Some(TypeIds::from_slice(ids)),
    }
}

fn same_types(kept: &Option<TypeIds>, filter: TypeFilter) -> bool {
    match (kept, filter) {
        (None, TypeFilter::All) => true,
        (Some(kept), TypeFilter::Only(ids)) => kept.as_slice() == ids,
        _ => false,
    }
}

fn filter_of(types: &Option<TypeIds>) -> TypeFilter<'_> {
    match types {
        None => TypeFilter::All,
        Some(ids) => TypeFilter::Only(ids),
    }
}

impl NeighbourCounts<'_> {
    /// Counts the relationships of the input row `row` along `filter`, now or as part of a batch (then
    /// [`Self::flush`] must run before anything else reads the cells or writes the graph).
    pub fn count_row(&mut self, row: &mut Row, filter: TypeFilter, ctx: &Ctx) -> Result<()> {
        self.settle();
        let Value::Node(node) = row[self.hop.from] else { return Ok(()) };
        let Some(batcher) = &mut self.batcher else { return self.count_now(row, node, filter, ctx) };
        let start = batcher.start(row, node);
        if let Some(start) = start {
            if batcher.joins(row, filter) {
                return self.queue(start, ctx);
            }
        }
        self.flush(ctx)?;
        let batcher = self.batcher.as_mut().expect("checked above");
        let Some(start) = start.filter(|_| batcher.lone_batches < GIVE_UP_AFTER) else {
            return self.count_now(row, node, filter, ctx);
        };
        // The row's set-up is the batch's; a row it cannot decide without its relationships is counted now.
        self.start_row(row, self.hop.distinct_from, ctx);
        if !(self.row.decided && (!self.row.passes || self.row.ready)) {
            return self.count_started(row, node, filter, ctx);
        }
        let batcher = self.batcher.as_mut().expect("checked above");
        batcher.open = true;
        batcher.dead = !self.row.passes;
        crate::exec::copy_row_into(&mut batcher.buffers.row, row);
        batcher.types = types_of(filter);
        self.queue(start, ctx)
    }

    /// [`Self::count_row`] for each of `hops`, the matches of the single hop below that writes the
    /// relationship and the neighbour slots `(rel, to)` (see [`crate::exec::Operator::lend_hops`]): each is
    /// written into `row` and counted. A match after the first differs from the one before only in those two
    /// slots, so when the batch's state reads neither and the one before left a batch open, it joins that batch
    /// without the checks of [`Self::count_row`].
    pub fn count_hops(
        &mut self,
        row: &mut Row,
        hops: &[(RelId, NodeId)],
        (rel, to): (usize, usize),
        filter: TypeFilter,
        ctx: &Ctx,
    ) -> Result<()> {
        let state_kept =
            self.batcher.as_ref().is_some_and(|b| !b.shape.state.contains(&rel) && !b.shape.state.contains(&to));
        for (k, &(r, n)) in hops.iter().enumerate() {
            crate::exec::put(&mut row[rel], Value::Rel(r));
            crate::exec::put(&mut row[to], Value::Node(n));
            if k > 0 && state_kept && self.held.is_none() {
                if let (Some(batcher), Value::Node(node)) = (&self.batcher, &row[self.hop.from]) {
                    if let Some(start) = batcher.start(row, *node).filter(|_| batcher.open) {
                        self.queue(start, ctx)?;
                        continue;
                    }
                }
            }
            self.count_row(row, filter, ctx)?;
        }
        Ok(())
    }

    /// Queues the groups of `run` from its `from`-th on as rows of the open batch, while they suit it: the
    /// caller knows them to have the open batch's state (the run's earlier groups share their outer keys,
    /// and one of them opened it). Returns how many it queued: none when no batch is open. `addend` is the
    /// aggregate of the groups that the addend comes from (see [`Self::direct_cells`]).
    pub fn queue_run(&mut self, run: &CellRun, from: usize, addend: Option<usize>, ctx: &Ctx) -> Result<usize> {
        self.settle();
        let Some(batcher) = &mut self.batcher else { return Ok(0) };
        if !batcher.open || !batcher.shape.distinct.is_empty() {
            return Ok(0);
        }
        let n = run.cells.len();
        if batcher.dead {
            // Rows whose filters failed count nothing.
            return Ok(n - from);
        }
        let ints = match (addend, &run.values) {
            (None, _) => &[][..],
            (Some(_), CellValues::Ints(ints)) => ints,
            (Some(_), CellValues::Values(_)) => return Ok(0),
        };
        let sums = matches!(batcher.shape.addend, Addend::Sum(_));
        let mut k = from;
        while k < n {
            let batcher = self.batcher.as_mut().expect("checked above");
            let room = MAX_QUEUED.saturating_sub(batcher.buffers.starts.len()).max(1);
            let end = n.min(k + room);
            while k < end {
                let c = run.cells.get(k);
                let addend = match addend {
                    Some(i) if sums => ints[c * run.width + i],
                    _ => 1,
                };
                if addend <= 0 {
                    return Ok(k - from);
                }
                batcher.buffers.starts.push(Start { node: run.keys[c].1, addend, bound: [u64::MAX; 2] });
                k += 1;
            }
            if batcher.buffers.starts.len() >= MAX_QUEUED {
                self.walk_queued(ctx)?;
                ctx.check_interrupt()?;
            }
        }
        Ok(k - from)
    }

    /// When groups lent by another count can be queued with [`Self::queue_run`] (given `parts`, the parts of
    /// them that the input slots hold): the index of the aggregate the addend comes from, if any. The start
    /// node must be the lent neighbour, the state must come from the lender's outer keys, and no relationship
    /// must be excluded.
    pub fn direct_cells(&self, parts: &[(usize, CellPart)]) -> Option<Option<usize>> {
        let shape = self.batcher.as_ref()?.shape;
        let part = |slot: usize| parts.iter().find(|(s, _)| *s == slot).map(|(_, p)| *p);
        if !shape.distinct.is_empty() || part(self.hop.from) != Some(CellPart::Neighbour) {
            return None;
        }
        if !shape.state.iter().all(|&s| matches!(part(s), Some(CellPart::Outer(_)))) {
            return None;
        }
        match shape.addend {
            Addend::One => Some(None),
            Addend::Count(s) | Addend::Sum(s) => match part(s) {
                Some(CellPart::Aggregate(i)) => Some(Some(i)),
                _ => None,
            },
        }
    }

    fn queue(&mut self, start: Start, ctx: &Ctx) -> Result<()> {
        let batcher = self.batcher.as_mut().expect("only with a batcher");
        if batcher.dead {
            return Ok(());
        }
        batcher.buffers.starts.push(start);
        if batcher.buffers.starts.len() >= MAX_QUEUED {
            self.walk_queued(ctx)?;
        }
        Ok(())
    }

    /// Counts the open batch's rows and closes it.
    pub fn flush(&mut self, ctx: &Ctx) -> Result<()> {
        match &mut self.batcher {
            Some(batcher) if batcher.open => {
                batcher.open = false;
                let lone = batcher.buffers.starts.len() <= 1;
                batcher.lone_batches = if lone { batcher.lone_batches + 1 } else { 0 };
                self.walk_queued(ctx)
            }
            _ => Ok(()),
        }
    }

    /// Counts the queued rows of the open batch: walked at once, or row by row when walking cannot decide.
    fn walk_queued(&mut self, ctx: &Ctx) -> Result<()> {
        self.settle();
        let batcher = self.batcher.as_mut().expect("only with a batcher");
        let starts = std::mem::take(&mut batcher.buffers.starts);
        let mut row = std::mem::take(&mut batcher.buffers.row);
        let types = batcher.types.take();
        let result = if starts.is_empty() {
            Ok(())
        } else {
            let walked = match self.walk_direct(&starts, filter_of(&types), ctx) {
                Ok(false) => self.walk(&starts, &mut row, filter_of(&types), ctx),
                done => done,
            };
            match walked {
                Ok(true) => Ok(()),
                Ok(false) => self.replay(&starts, &mut row, filter_of(&types), ctx),
                Err(e) => Err(e),
            }
        };
        let batcher = self.batcher.as_mut().expect("only with a batcher");
        batcher.buffers.starts = starts;
        batcher.buffers.starts.clear();
        batcher.buffers.row = row;
        batcher.types = types;
        result
    }

    /// The fast path: false (with no cell changed) when the batch must be counted row by row instead.
    fn walk(&mut self, starts: &[Start], row: &mut Row, filter: TypeFilter, ctx: &Ctx) -> Result<bool> {
        if !matches!(self.cells, Cells::Ints(_)) {
            return Ok(false);
        }
        let g = ctx.g();
        let mut counter = Counter::take();
        counter.reserve(g.node_id_bound() as usize);
        let dir = self.hop.dir;
        // What an entry can reach is bounded by the largest addend times the relationships walked: the walk
        // stops (and the batch is counted row by row) before that could pass i64::MAX.
        let largest = starts.iter().map(|s| s.addend).max().unwrap_or(1);
        let most = usize::try_from(i64::MAX / largest).unwrap_or(usize::MAX);
        let mut walked = true;
        for (k, start) in starts.iter().enumerate() {
            if k % crate::exec::BATCH == crate::exec::BATCH - 1 {
                if let Err(e) = ctx.check_interrupt() {
                    counter.give_back();
                    return Err(e);
                }
            }
            let mut add = |nbrs: IdSlice, rels: Option<IdSlice>| {
                if counter.added + nbrs.len() > most {
                    return false;
                }
                // Whether an id is new to the counter is a coin toss while few have been seen, and nearly always
                // "no" once the relationships walked far outnumber the ids (many likes of few items): each run
                // takes the loop that suits what the counter shows so far.
                let seen = counter.len * 8 < counter.added;
                counter.added += nbrs.len();
                match (nbrs, rels, seen) {
                    (IdSlice::Narrow(ids), None, false) => counter.add(ids, start.addend),
                    (IdSlice::Wide(ids), None, false) => counter.add(ids, start.addend),
                    (IdSlice::Narrow(ids), None, true) => counter.add_mostly_seen(ids, start.addend),
                    (IdSlice::Wide(ids), None, true) => counter.add_mostly_seen(ids, start.addend),
                    (nbrs, Some(rels), _) => counter.add_unless(nbrs, rels, start.bound, start.addend),
                }
            };
            let flow = if start.bound[0] == u64::MAX {
                g.visit_neighbour_slices(NodeId(start.node), dir, filter, |nbrs| {
                    if add(nbrs, None) {
                        ControlFlow::Continue(())
                    } else {
                        ControlFlow::Break(())
                    }
                })
            } else {
                g.visit_rel_slices(NodeId(start.node), dir, filter, |nbrs, rels| {
                    if add(nbrs, Some(rels)) {
                        ControlFlow::Continue(())
                    } else {
                        ControlFlow::Break(())
                    }
                })
            };
            if flow.is_break() {
                walked = false;
                break;
            }
        }
        self.mostly_new = counter.len * 2 > counter.added;
        // Below i64::MAX, as the walk made sure.
        let reach = counter.added as i64 * largest;
        let merged = walked && self.merge(&mut counter, reach, row, ctx);
        counter.give_back();
        Ok(merged)
    }

    /// Adds the counter's entries that pass the filters on the neighbour to their cells, in the order the
    /// neighbours were first reached; false, with no cell changed, when a filter fails with an error or a
    /// cell could overflow. `reach` bounds every entry of the counter.
    fn merge(&mut self, counter: &mut Counter, reach: i64, row: &mut Row, ctx: &Ctx) -> bool {
        // No cell can overflow when everything ever added to the cells and this batch stay below i64::MAX.
        let safe = self.reach.checked_add(reach).is_some_and(|r| r < i64::MAX);
        if safe {
            if let Some((excluded, negated)) = self.quick_verdict() {
                if self.cell_keys.is_empty() && self.appends_first_cells() {
                    // An empty count's cells are the passing neighbours in order: appended, with their lookup
                    // left until something needs it.
                    let sets = std::mem::take(&mut self.adjacent);
                    let may_hold = self.may_hold();
                    let Cells::Ints(ints) = &mut self.cells else { unreachable!("checked by walk") };
                    let set = match (negated, sets.first()) {
                        (Some(_), Some((_, NodeMap::Dense { slots, set: members }))) => {
                            Some((&slots[..], &members[..]))
                        }
                        _ => None,
                    };
                    if negated.is_none() || set.is_some() {
                        // Nodes that must not be counted are dropped before the counter is read: the excluded
                        // ones and, for `NOT (x)-->(neighbour)`, the few neighbours of x.
                        counter.drop_entries(excluded.iter().copied());
                        let adjacency = match (set, negated) {
                            (Some((_, members)), Some(true)) => {
                                counter.drop_entries(members.iter().copied());
                                None
                            }
                            (Some((slots, _)), Some(false)) => Some(slots),
                            _ => None,
                        };
                        if may_hold {
                            let in_set = adjacency.is_some();
                            self.held = Some(Held { counter: std::mem::take(counter), in_set });
                        } else {
                            counter.drain_passing(adjacency, &mut self.cell_keys, ints);
                            self.unindexed = true;
                        }
                        self.adjacent = sets;
                        self.reach += reach;
                        return true;
                    }
                    self.adjacent = sets;
                }
                self.index_cells();
                // The neighbour set is set aside while cells are created, and put back.
                let sets = std::mem::take(&mut self.adjacent);
                for i in 0..counter.len {
                    let nbr = counter.touched[i];
                    let adjacent = |negated: bool| sets[0].1.get(nbr).is_some() != negated;
                    if nbr != excluded[0] && nbr != excluded[1] && negated.is_none_or(adjacent) {
                        let c = self.cell(nbr);
                        let Cells::Ints(ints) = &mut self.cells else { unreachable!("checked by walk") };
                        ints[c] += counter.acc[nbr as usize];
                    }
                }
                self.adjacent = sets;
                self.reach += reach;
                return true;
            }
        }
        self.index_cells();
        let (to, rel) = (self.hop.to, self.hop.rel);
        let by_neighbour = self.shape.neighbour_key.is_some();
        counter.verdicts.clear();
        let mut one_cell: i64 = 0;
        for i in 0..counter.len {
            let nbr = counter.touched[i];
            let mut write = |row: &mut Row| {
                row[to] = Value::Node(NodeId(nbr));
                row[rel] = Value::Null;
            };
            let Ok(pass) = self.neighbour_passes(row, nbr, &mut write, ctx) else { return false };
            if pass && !safe {
                let amount = counter.acc[nbr as usize];
                let Cells::Ints(ints) = &self.cells else { return false };
                // Without a neighbour key every neighbour adds to one cell.
                let total = if by_neighbour { Some(amount) } else { one_cell.checked_add(amount) };
                let existing = self.find_cell(nbr).map_or(0, |c| ints[c]);
                match total.and_then(|t| existing.checked_add(t).map(|_| t)) {
                    Some(t) if !by_neighbour => one_cell = t,
                    Some(_) => {}
                    None => return false,
                }
            }
            counter.verdicts.push(pass);
        }
        for i in 0..counter.len {
            if counter.verdicts[i] {
                let nbr = counter.touched[i];
                let c = self.cell(nbr);
                let Cells::Ints(ints) = &mut self.cells else { unreachable!("checked by walk") };
                ints[c] += counter.acc[nbr as usize];
            }
        }
        self.reach = self.reach.saturating_add(reach);
        true
    }

    /// Whether cells of the first group, counted by neighbour with one integer aggregate, are where this count's
    /// rows go.
    pub(super) fn appends_first_cells(&self) -> bool {
        self.row.group == 0
            && self.shape.neighbour_key.is_some()
            && self.aggs.len() == 1
            && matches!(self.first_cells, NodeMap::Dense { .. })
    }

    /// The batch's filters on the neighbour when they are at most two excluded nodes and one neighbour set:
    /// the excluded ids, and whether the set's filter is negated.
    pub(super) fn quick_verdict(&self) -> Option<([u64; 2], Option<bool>)> {
        if !self.shape.memo_filters.is_empty() || !self.row.adjacent_ready {
            return None;
        }
        let negated = match self.shape.adjacent.as_slice() {
            [] => None,
            [spec] => Some(spec.negated),
            _ => return None,
        };
        Some((self.row.excluded?, negated))
    }

    /// Counts the batch's rows one by one, as they came.
    fn replay(&mut self, starts: &[Start], row: &mut Row, filter: TypeFilter, ctx: &Ctx) -> Result<()> {
        let shape = self.batcher.as_ref().expect("only with a batcher").shape;
        let from = self.hop.from;
        // Slots of the state hold the batch's values already, and must keep them.
        let varying = |s: &usize| !shape.state.contains(s);
        let addend_slot = match shape.addend {
            Addend::Count(s) | Addend::Sum(s) => Some(s).filter(varying),
            Addend::One => None,
        };
        for start in starts {
            row[from] = Value::Node(NodeId(start.node));
            if let Some(s) = addend_slot {
                row[s] = Value::Int(start.addend);
            }
            for (&slot, &rel) in shape.distinct.iter().zip(&start.bound) {
                if varying(&slot) {
                    row[slot] = Value::Rel(plexus_storage::RelId(rel));
                }
            }
            self.count_now(row, NodeId(start.node), filter, ctx)?;
        }
        Ok(())
    }
}
