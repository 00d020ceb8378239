//! Traversal operators: single-hop expand, variable-length expand (with quantified path patterns) and shortest
//! paths (the searches themselves are in `shortest.rs`).

use std::ops::ControlFlow;

use plexus_storage::{Direction, NodeId, RelId, TypeFilter, TypeId};

use super::ctx::Ctx;
use super::shortest::{shortest_paths, shortest_paths_passing, shortest_repetitions, Search};
use super::{clear_row, clone_row, put, Batch, HopSink, Row, RowExpander, RowSink, BATCH};
use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::expr::CExpr;
use crate::plan::{GroupItem, HopCycle, PlanNode};
use crate::token::Token;
use crate::value::{Path, Value};

pub(crate) struct Expander<'p> {
    plan: &'p PlanNode,
    /// Resolved type ids; `None` until first use. An empty list with `any_type == false` matches nothing.
    types: Option<TypeIds>,
    /// Results for the current row not yet emitted (a high-degree node can exceed a batch).
    pending: Vec<Row>,
    /// A variable-length walk paused with a full batch, to go on from where it stopped for the same row.
    walk: Option<VarWalk<'p>>,
    /// The run of matches being gathered by [`RowExpander::lend_hops`], kept between rows.
    hops: Vec<(RelId, NodeId)>,
}

impl<'p> Expander<'p> {
    pub fn new(plan: &'p PlanNode) -> Self {
        Expander { plan, types: None, pending: Vec::new(), walk: None, hops: Vec::new() }
    }
}

/// Resolved relationship type ids: a pattern names one or two types nearly always, kept without an allocation
/// (operators are made afresh for every run of a query, so each would allocate again).
pub(super) type TypeIds = smallvec::SmallVec<[TypeId; 4]>;

fn resolve_types(ctx: &Ctx, names: &[Token]) -> TypeIds {
    names.iter().filter_map(|n| ctx.type_token(n)).collect()
}

/// The ids of the relationship types `names`, kept in `cache` once every name has one: a name without one
/// yet is looked up again for the next row, since a write earlier in the query (`CREATE (a)-[:NEW]->(b)
/// WITH a MATCH (a)-[:NEW]->(x)`) may create the type while the query runs.
pub(super) fn cached_types<'c>(cache: &'c mut Option<TypeIds>, ctx: &Ctx, names: &[Token]) -> &'c [TypeId] {
    if cache.as_ref().is_none_or(|ids| ids.len() < names.len()) {
        *cache = Some(resolve_types(ctx, names));
    }
    cache.as_deref().unwrap_or_default()
}

/// The filter of a single hop's types `names` (resolved through `cache`, see [`cached_types`]); `None` when
/// none of them has an id yet, so no relationship matches.
pub(super) fn type_filter<'c>(cache: &'c mut Option<TypeIds>, ctx: &Ctx, names: &[Token]) -> Option<TypeFilter<'c>> {
    if names.is_empty() {
        return Some(TypeFilter::All);
    }
    let ids = cached_types(cache, ctx, names);
    (!ids.is_empty()).then_some(TypeFilter::Only(ids))
}

/// The node a single hop starts from (`from`, the row's value in the hop's start slot) and the filter of its
/// types; `None` when that is no node, or when no relationship has one of the types.
pub(super) fn hop_start<'t>(
    types: &'t mut Option<TypeIds>,
    names: &[Token],
    from: &Value,
    ctx: &Ctx,
) -> Option<(NodeId, TypeFilter<'t>)> {
    let &Value::Node(start) = from else { return None };
    Some((start, type_filter(types, ctx, names)?))
}

pub(super) fn rel_in(row: &Row, slots: &[usize], rel: RelId) -> bool {
    slots.iter().any(|s| match &row[*s] {
        Value::Rel(r) => *r == rel,
        Value::List(items) => items.iter().any(|v| matches!(v, Value::Rel(r) if *r == rel)),
        _ => false,
    })
}

impl RowExpander for Expander<'_> {
    fn lends(&self) -> bool {
        matches!(self.plan, PlanNode::Expand { to_bound: false, rel_bound: false, .. })
    }

    /// A single hop to a new node along a new relationship: each match is written into `row` and lent, so a
    /// sort under a LIMIT (`MATCH (p)<-[:HAS_CREATOR]-(m) ... ORDER BY m.date LIMIT 10`) copies only the rows
    /// it keeps. The input row is copied once, at its first match, to restore it when the sink takes it.
    fn lend(&mut self, row: &mut Row, ctx: &Ctx, sink: &mut RowSink<'_>) -> Result<ControlFlow<()>> {
        let PlanNode::Expand { from, rel, to, dir, distinct_from, types: names, to_labels, .. } = self.plan else {
            unreachable!("lends only for a single hop")
        };
        let Some((start, filter)) = hop_start(&mut self.types, names, &row[*from], ctx) else {
            return Ok(ControlFlow::Continue(()));
        };
        // Copied at the first match (a row without one copies nothing).
        let mut original: Option<Row> = None;
        let mut outcome = Ok(ControlFlow::Continue(()));
        let mut lent = 0usize;
        let _ = ctx.g().visit_rels(start, *dir, filter, |e| {
            // The sink writes only slots of its own, never the bound relationships.
            if rel_in(original.as_ref().unwrap_or(row), distinct_from, e.rel)
                || (!to_labels.is_empty() && !ctx.node_has_labels(e.nbr, to_labels))
            {
                return ControlFlow::Continue(());
            }
            lent += 1;
            if lent.is_multiple_of(BATCH) {
                if let Err(err) = ctx.check_interrupt() {
                    outcome = Err(err);
                    return ControlFlow::Break(());
                }
            }
            let original = original.get_or_insert_with(|| clone_row(row));
            if row.len() != original.len() {
                // Taken by the sink.
                *row = clone_row(original);
            }
            put(&mut row[*rel], Value::Rel(e.rel));
            put(&mut row[*to], Value::Node(e.nbr));
            match sink(row, ctx) {
                Ok(ControlFlow::Continue(())) => ControlFlow::Continue(()),
                other => {
                    outcome = other;
                    ControlFlow::Break(())
                }
            }
        });
        if let Some(mut original) = original {
            clear_row(&mut original);
        }
        outcome
    }

    fn lends_hops(&self) -> bool {
        self.lends()
    }

    /// [`RowExpander::lend`] without writing each match into the row: the matches are gathered in runs of up
    /// to a batch and lent with the row, which the sink may then write them into.
    fn lend_hops(&mut self, row: &mut Row, ctx: &Ctx, sink: &mut HopSink<'_>) -> Result<ControlFlow<()>> {
        let PlanNode::Expand { from, dir, distinct_from, types: names, to_labels, .. } = self.plan else {
            unreachable!("lends hops only for a single hop")
        };
        let Some((start, filter)) = hop_start(&mut self.types, names, &row[*from], ctx) else {
            return Ok(ControlFlow::Continue(()));
        };
        let mut hops = std::mem::take(&mut self.hops);
        hops.clear();
        if hops.capacity() == 0 {
            // Grown from empty, a run of ten matches would be reallocated three times, in every query.
            hops.reserve(32);
        }
        let mut outcome = Ok(ControlFlow::Continue(()));
        let _ = ctx.g().visit_rels(start, *dir, filter, |e| {
            // The sink writes only the hop's slots and those after them, never the bound relationships.
            if rel_in(row, distinct_from, e.rel) || (!to_labels.is_empty() && !ctx.node_has_labels(e.nbr, to_labels)) {
                return ControlFlow::Continue(());
            }
            hops.push((e.rel, e.nbr));
            if hops.len() < BATCH {
                return ControlFlow::Continue(());
            }
            match sink(row, &hops, ctx) {
                Ok(ControlFlow::Continue(())) => {
                    hops.clear();
                    ControlFlow::Continue(())
                }
                other => {
                    outcome = other;
                    ControlFlow::Break(())
                }
            }
        });
        if matches!(outcome, Ok(ControlFlow::Continue(()))) && !hops.is_empty() {
            outcome = sink(row, &hops, ctx);
        }
        self.hops = hops;
        outcome
    }

    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        if !self.pending.is_empty() {
            let take = (BATCH - out.len().min(BATCH)).max(1).min(self.pending.len());
            out.extend(self.pending.drain(..take));
            return Ok(!self.pending.is_empty() || self.walk.is_some());
        }
        let (names, any_type, single_hop) = match self.plan {
            PlanNode::Expand { types, .. } => (types, types.is_empty(), true),
            PlanNode::VarExpand { types, .. } | PlanNode::ShortestPath { types, .. } => {
                (types, types.is_empty(), false)
            }
            _ => unreachable!(),
        };
        let types = cached_types(&mut self.types, ctx, names);
        // No relationship has one of the types: a single hop has no match, but a path of zero hops still does
        // (an empty type list below lets none through).
        if !any_type && types.is_empty() && single_hop {
            return Ok(false);
        }
        let filter = if any_type { TypeFilter::All } else { TypeFilter::Only(types) };
        // Rows go straight into the output batch; what overflows it waits in `pending`.
        let limit = BATCH.max(out.len() + 1);
        let results: &mut Batch = out;
        match self.plan {
            PlanNode::Expand { from, rel, to, dir, to_bound, rel_bound, distinct_from, to_labels, .. } => {
                let Value::Node(start) = row[*from] else { return Ok(false) };
                let bound_to = if *to_bound {
                    match row[*to] {
                        Value::Node(n) => Some(n),
                        _ => return Ok(false),
                    }
                } else {
                    None
                };
                let bound_rel = if *rel_bound {
                    match row[*rel] {
                        Value::Rel(r) => Some(r),
                        _ => return Ok(false),
                    }
                } else {
                    None
                };
                let g = ctx.g();
                // Each match is written out when the next one arrives; the last takes the row itself, so a
                // node with one match (the common case in point queries) copies nothing.
                let mut last: Option<(RelId, NodeId)> = None;
                let mut emit = |e: plexus_storage::RelEntry| {
                    if bound_rel.is_some_and(|r| r != e.rel)
                        || rel_in(row, distinct_from, e.rel)
                        || (!to_labels.is_empty() && !ctx.node_has_labels(e.nbr, to_labels))
                    {
                        return ControlFlow::<()>::Continue(());
                    }
                    if let Some((prev_rel, prev_nbr)) = last.replace((e.rel, e.nbr)) {
                        let mut r = clone_row(row);
                        r[*rel] = Value::Rel(prev_rel);
                        r[*to] = Value::Node(prev_nbr);
                        results.push(r);
                    }
                    ControlFlow::Continue(())
                };
                match bound_to {
                    Some(target) => {
                        let _ = g.visit_rels_between(start, target, *dir, filter, &mut emit);
                        // An undirected pattern between a node and itself also matches each self-loop once
                        // from each side in openCypher; our adjacency reports a self-loop once for `Both`.
                    }
                    None => {
                        let _ = g.visit_rels(start, *dir, filter, &mut emit);
                    }
                }
                if let Some((last_rel, last_nbr)) = last {
                    let mut r = std::mem::take(row);
                    r[*rel] = Value::Rel(last_rel);
                    r[*to] = Value::Node(last_nbr);
                    results.push(r);
                }
            }
            PlanNode::VarExpand {
                from,
                rel,
                to,
                dir,
                min,
                max,
                to_bound,
                rel_scratch,
                rel_filter,
                distinct_from,
                reverse,
                rel_bound,
                list_unread,
                hop_nodes,
                cycle,
                to_labels,
                ..
            } => {
                let Value::Node(start) = row[*from] else { return Ok(false) };
                if *rel_bound {
                    // Walk the given relationships in order (the list is in pattern order; a reversed step walks
                    // it from the end).
                    let Value::List(items) = &row[*rel] else { return Ok(false) };
                    let mut rels: Vec<RelId> = Vec::with_capacity(items.len());
                    for v in items.iter() {
                        let Value::Rel(r) = v else { return Ok(false) };
                        rels.push(*r);
                    }
                    if *reverse {
                        rels.reverse();
                    }
                    let len = rels.len() as u64;
                    if len < *min || max.is_some_and(|m| len > m) {
                        return Ok(false);
                    }
                    let g = ctx.g();
                    let mut at = start;
                    for r in &rels {
                        let Some(rec) = g.rel(*r) else { return Ok(false) };
                        if !any_type && !types.contains(&rec.ty) {
                            return Ok(false);
                        }
                        at = match dir {
                            Direction::Out if rec.src == at => rec.dst,
                            Direction::In if rec.dst == at => rec.src,
                            Direction::Both if rec.src == at => rec.dst,
                            Direction::Both if rec.dst == at => rec.src,
                            _ => return Ok(false),
                        };
                    }
                    if *to_bound && row[*to] != Value::Node(at) {
                        return Ok(false);
                    }
                    let mut r = clone_row(row);
                    r[*to] = Value::Node(at);
                    out.push(r);
                    return Ok(false);
                }
                let target = if *to_bound {
                    match row[*to] {
                        Value::Node(n) => Some(n),
                        _ => return Ok(false),
                    }
                } else {
                    None
                };
                // A repetition of several relationships is walked whole: the bounds count relationships.
                let k = cycle.as_ref().map_or(1, |c| c.steps.len() as u64);
                let spec = VarSpec {
                    dir: *dir,
                    filter,
                    min: min.saturating_mul(k),
                    max: max.map_or(u64::MAX, |m| m.saturating_mul(k)),
                };
                // Unless a subquery may write between rows, a row's paths leave a batch at a time: a LIMIT above
                // stops the walk, and memory holds a batch of paths rather than all of them.
                let stream = !ctx.writes_per_row;
                let mut emit = |end: NodeId, rels: &[RelId], nodes: &[NodeId]| -> Result<bool> {
                    if target.is_some_and(|t| t != end) || !ctx.node_has_labels(end, to_labels) {
                        return Ok(false);
                    }
                    let mut r = clone_row(row);
                    if !*list_unread {
                        let mut list: Vec<Value> = rels.iter().map(|x| Value::Rel(*x)).collect();
                        if *reverse {
                            list.reverse();
                        }
                        if let Some(cycle) = cycle {
                            set_groups(&mut r, cycle, &list, nodes, *reverse);
                        }
                        r[*rel] = Value::list(list);
                    }
                    r[*to] = Value::Node(end);
                    results.push(r);
                    if stream {
                        return Ok(results.len() >= limit);
                    }
                    // Otherwise one row's paths are held until the row is done: under a memory limit, their
                    // size is checked as they grow (a rough count: the row's values and the path's relationships).
                    if results.len().is_multiple_of(BATCH) {
                        if let Some(interrupt) = &ctx.interrupt {
                            let listed = if *list_unread { 0 } else { rels.len() };
                            let bytes = results.len() * (row.len() + listed) * std::mem::size_of::<Value>();
                            interrupt.check_result_size(bytes)?;
                        }
                    }
                    Ok(false)
                };
                let mut walk = match self.walk.take() {
                    Some(walk) => walk,
                    None => {
                        let check = RelCheck::new(rel_filter.as_slice(), *rel_scratch, row)
                            .with_hop_nodes(*hop_nodes, *reverse);
                        let cycle = cycle.as_deref().map(|c| CycleWalk::new(c, ctx, row, *reverse));
                        match VarWalk::start(ctx, &spec, start, check, cycle, &mut emit)? {
                            Some(walk) => walk,
                            None => return Ok(false),
                        }
                    }
                };
                if !walk.go_on(ctx, &spec, row, distinct_from, &mut emit)? {
                    self.walk = Some(walk);
                }
            }
            PlanNode::ShortestPath {
                from,
                to,
                rel,
                path,
                dir,
                min,
                max,
                all,
                count,
                selector,
                rel_scratch,
                rel_filters,
                path_filters,
                hop_nodes,
                cycle,
                ..
            } => {
                let (Value::Node(a), Value::Node(b)) = (&row[*from], &row[*to]) else { return Ok(false) };
                let (a, b) = (*a, *b);
                if a == b && !*selector && *min > 0 {
                    // As Neo4j does by default: rather than quietly drop the row (the path of at least one
                    // relationship from a node to itself is no shortest path), say so.
                    return Err(CypherError::new(
                        ErrorKind::SemanticError,
                        Phase::Runtime,
                        "ShortestPathCommonEndNodes",
                        "shortestPath() does not search from a node to itself: this row gives it the same start and \
                         end node (as a cartesian product may); filter those rows out with WHERE a <> b first, or \
                         use the selector SHORTEST 1 to find the shortest cycle",
                    ));
                }
                let mut check = RelCheck::new(rel_filters, *rel_scratch, row).with_hop_nodes(*hop_nodes, false);
                let mut rel_ok = |r: RelId, from: NodeId, to: NodeId| check.passes_step(r, from, to, ctx);
                let search = Search {
                    a,
                    b,
                    dir: *dir,
                    filter,
                    min: *min,
                    max: max.unwrap_or(u64::MAX),
                    all: *all,
                    count: *count,
                    oriented: hop_nodes.is_some() && !rel_filters.is_empty(),
                    cycles: *selector,
                };
                let path_row = |rels: &[RelId]| {
                    let mut r = clone_row(row);
                    let mut nodes = vec![a];
                    if path.is_some() || cycle.is_some() {
                        for x in rels {
                            let rec = ctx.g().rel(*x).expect("relationship on a path exists");
                            let last = *nodes.last().unwrap();
                            nodes.push(if rec.src == last { rec.dst } else { rec.src });
                        }
                    }
                    let list: Vec<Value> = rels.iter().map(|x| Value::Rel(*x)).collect();
                    if let Some(cycle) = cycle {
                        set_groups(&mut r, cycle, &list, &nodes, false);
                    }
                    if let Some(p) = path {
                        r[*p] = Value::Path(std::sync::Arc::new(Path { nodes, rels: rels.to_vec() }));
                    }
                    r[*rel] = Value::list(list);
                    r
                };
                // A path found length by length is taken if it passes the WHERE conditions on whole paths.
                let mut accept = |rels: &[RelId]| -> Result<bool> {
                    let r = path_row(rels);
                    for f in path_filters {
                        if !f.is_true(&r, ctx)? {
                            return Ok(false);
                        }
                    }
                    results.push(r);
                    Ok(true)
                };
                if let Some(plan) = cycle {
                    // Whole repetitions of several relationships, length by length.
                    let mut walk = CycleWalk::new(plan, ctx, row, false);
                    shortest_repetitions(ctx, &search, &mut walk, &mut accept)?;
                } else if path_filters.is_empty() && *count == 1 && *min <= 1 && (a != b || !*selector) {
                    // Breadth first, which settles each node at its first (shortest) distance: right for one
                    // path of any length from 1, not for a longer minimum or a cycle back to the start.
                    for rels in shortest_paths(ctx, &search, &mut rel_ok)? {
                        accept(&rels)?;
                    }
                } else {
                    shortest_paths_passing(ctx, &search, &mut rel_ok, &mut accept)?;
                }
            }
            _ => unreachable!(),
        }
        if results.len() <= limit {
            Ok(self.walk.is_some())
        } else {
            self.pending = results.split_off(limit);
            Ok(true)
        }
    }
}

struct VarSpec<'a> {
    dir: Direction,
    filter: TypeFilter<'a>,
    min: u64,
    max: u64,
}

/// Conditions every relationship of a walk must meet (a pattern's property map, a pushed-down `all(...)`),
/// evaluated on a copy of the input row with the candidate relationship in a scratch slot. The copy is made only
/// when there are conditions.
struct RelCheck<'p> {
    filters: &'p [CExpr],
    slot: usize,
    /// A quantified path pattern's slots for the relationship's two nodes, and whether the walk goes against
    /// the pattern's direction (right to left), which makes the node walked from the right one.
    hop: Option<((usize, usize), bool)>,
    scratch: Row,
}

impl<'p> RelCheck<'p> {
    fn new(filters: &'p [CExpr], slot: usize, row: &Row) -> RelCheck<'p> {
        RelCheck { filters, slot, hop: None, scratch: if filters.is_empty() { Vec::new() } else { row.clone() } }
    }

    /// Sets each candidate's nodes into `slots` (left, right as written) before the filters run.
    fn with_hop_nodes(mut self, slots: Option<(usize, usize)>, reversed: bool) -> RelCheck<'p> {
        self.hop = slots.map(|s| (s, reversed));
        self
    }

    /// Whether `rel`, walked from node `at` to node `next`, passes.
    fn passes_step(&mut self, rel: RelId, at: NodeId, next: NodeId, ctx: &Ctx) -> Result<bool> {
        if let Some(((left, right), reversed)) = self.hop {
            if self.filters.is_empty() {
                return Ok(true);
            }
            let (l, r) = if reversed { (next, at) } else { (at, next) };
            self.scratch[left] = Value::Node(l);
            self.scratch[right] = Value::Node(r);
        }
        self.passes(rel, ctx)
    }

    fn passes(&mut self, rel: RelId, ctx: &Ctx) -> Result<bool> {
        if self.filters.is_empty() {
            return Ok(true);
        }
        self.scratch[self.slot] = Value::Rel(rel);
        for f in self.filters {
            if !f.is_true(&self.scratch, ctx)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The list of each variable of a quantified path pattern of several relationships over the repetitions of a
/// path: `rels` (in the pattern's order), and `nodes` as the walk met them (from the right when `reversed`).
fn set_groups(row: &mut Row, cycle: &HopCycle, rels: &[Value], nodes: &[NodeId], reversed: bool) {
    let k = cycle.steps.len();
    let repetitions = rels.len() / k;
    let node = |i: usize| Value::Node(if reversed { nodes[nodes.len() - 1 - i] } else { nodes[i] });
    for &(slot, item) in &cycle.groups {
        let list = match item {
            GroupItem::Node(j) => (0..repetitions).map(|i| node(i * k + j)).collect(),
            GroupItem::Rel(j) => (0..repetitions).map(|i| rels[i * k + j].clone()).collect(),
        };
        row[slot] = Value::list(list);
    }
}

/// A repetition of a quantified path pattern of several relationships as a walk takes it: its relationships in
/// the walk's order (the pattern's reversed, each direction turned, when the walk goes right to left), and the
/// condition every repetition meets, evaluated on a copy of the input row with the repetition in scratch slots.
pub(super) struct CycleWalk<'p> {
    plan: &'p HopCycle,
    /// Direction and types (`None`: any type) of each step of a repetition, in the walk's order.
    steps: Vec<(Direction, Option<TypeIds>)>,
    reversed: bool,
    scratch: Row,
}

impl<'p> CycleWalk<'p> {
    pub(super) fn len(&self) -> usize {
        self.steps.len()
    }

    fn new(plan: &'p HopCycle, ctx: &Ctx, row: &Row, reversed: bool) -> CycleWalk<'p> {
        let k = plan.steps.len();
        let steps = (0..k)
            .map(|s| {
                let (dir, names) = &plan.steps[if reversed { k - 1 - s } else { s }];
                let dir = match (reversed, dir) {
                    (true, Direction::Out) => Direction::In,
                    (true, Direction::In) => Direction::Out,
                    (_, d) => *d,
                };
                (dir, (!names.is_empty()).then(|| resolve_types(ctx, names)))
            })
            .collect();
        let scratch = if plan.condition.is_some() { row.clone() } else { Vec::new() };
        CycleWalk { plan, steps, reversed, scratch }
    }

    /// The direction and types of the relationship a walk of `depth` relationships takes next.
    pub(super) fn step(&self, depth: usize) -> (Direction, TypeFilter<'_>) {
        let (dir, types) = &self.steps[depth % self.steps.len()];
        (*dir, types.as_deref().map_or(TypeFilter::All, TypeFilter::Only))
    }

    /// Whether the repetition that ends the walk so far (`at`, its nodes, one more than `path`, its
    /// relationships, a whole number of repetitions) meets the condition.
    pub(super) fn passes(&mut self, at: &[NodeId], path: &[RelId], ctx: &Ctx) -> Result<bool> {
        let Some(condition) = &self.plan.condition else { return Ok(true) };
        let (k, d) = (self.steps.len(), path.len());
        let (nodes, rels) = (&at[d - k..=d], &path[d - k..d]);
        for (j, &slot) in self.plan.node_slots.iter().enumerate() {
            self.scratch[slot] = Value::Node(if self.reversed { nodes[k - j] } else { nodes[j] });
        }
        for (j, &slot) in self.plan.rel_slots.iter().enumerate() {
            self.scratch[slot] = Value::Rel(if self.reversed { rels[k - 1 - j] } else { rels[j] });
        }
        condition.is_true(&self.scratch, ctx)
    }
}

/// Depth-first enumeration of relationship-unique paths from one node, reporting each whose length is within
/// bounds, in depth-first order. The walk keeps its own stack rather than recursing, since a path may be as long
/// as the graph (`-[*]->` along a chain of a million nodes), and it checks the query's interrupt as it goes: the
/// paths of one row can be more than a query is allowed the time for. It pauses when `emit` says its batch is
/// full, and goes on from there when called again.
struct VarWalk<'p> {
    /// The relationships out of each node of the path so far, one run after another: a frame's run is pushed
    /// when the walk reaches its node and cut off when it leaves, so one buffer serves the whole walk.
    entries: Vec<plexus_storage::RelEntry>,
    /// One frame per node of the path so far (the start, then one per relationship in `path`): where its run
    /// starts and ends in `entries`, and the next of them to try.
    frames: Vec<Frame>,
    /// The node of each frame.
    at: Vec<NodeId>,
    path: PathRels,
    check: RelCheck<'p>,
    /// For a quantified path pattern of several relationships: the repetition the walk takes whole.
    cycle: Option<CycleWalk<'p>>,
    steps: usize,
}

/// Makes `node`'s relationships the run of a new frame of a [`VarWalk`].
fn push_frame(
    entries: &mut Vec<plexus_storage::RelEntry>,
    frames: &mut Vec<Frame>,
    ctx: &Ctx,
    node: NodeId,
    (dir, filter): (plexus_storage::Direction, TypeFilter),
) {
    let start = entries.len();
    let _ = ctx.g().visit_rels::<()>(node, dir, filter, |e| {
        entries.push(e);
        ControlFlow::Continue(())
    });
    frames.push(Frame { start, end: entries.len(), next: start });
}

/// A node of a walk's path: its run of relationships in [`VarWalk::entries`] and the next one to try.
struct Frame {
    start: usize,
    end: usize,
    next: usize,
}

/// Reports a path (its end, relationships and nodes in the walk's order); returns whether the batch is full and
/// the walk should pause.
type Emit<'e> = dyn FnMut(NodeId, &[RelId], &[NodeId]) -> Result<bool> + 'e;

impl<'p> VarWalk<'p> {
    /// A walk from `node`, after reporting the path of no relationships if the bounds allow it; `None` when no
    /// longer path is wanted.
    fn start(
        ctx: &Ctx,
        spec: &VarSpec,
        node: NodeId,
        check: RelCheck<'p>,
        cycle: Option<CycleWalk<'p>>,
        emit: &mut Emit,
    ) -> Result<Option<VarWalk<'p>>> {
        if spec.min == 0 {
            emit(node, &[], &[node])?;
        }
        if spec.max == 0 {
            return Ok(None);
        }
        let (dir, filter) = cycle.as_ref().map_or((spec.dir, spec.filter), |c| c.step(0));
        let (mut entries, mut frames) = (Vec::new(), Vec::new());
        push_frame(&mut entries, &mut frames, ctx, node, (dir, filter));
        Ok(Some(VarWalk { entries, frames, at: vec![node], path: PathRels::default(), check, cycle, steps: 0 }))
    }

    /// Walks on until every path is reported (`true`) or `emit` asks for a pause (`false`).
    fn go_on(
        &mut self,
        ctx: &Ctx,
        spec: &VarSpec,
        row: &Row,
        distinct_from: &[usize],
        emit: &mut Emit,
    ) -> Result<bool> {
        while let Some(frame) = self.frames.last_mut() {
            if frame.next == frame.end {
                self.entries.truncate(frame.start);
                self.frames.pop();
                self.at.pop();
                self.path.pop();
                continue;
            }
            let e = self.entries[frame.next];
            frame.next += 1;
            self.steps += 1;
            if self.steps.is_multiple_of(BATCH) {
                ctx.check_interrupt()?;
            }
            let at = *self.at.last().expect("a node per frame");
            if self.path.contains(e.rel)
                || rel_in(row, distinct_from, e.rel)
                || !self.check.passes_step(e.rel, at, e.nbr, ctx)?
            {
                continue;
            }
            self.path.push(e.rel);
            self.at.push(e.nbr);
            let depth = self.path.len();
            // Within a repetition of several relationships a path is neither checked nor reported.
            let whole = self.cycle.as_ref().is_none_or(|c| depth.is_multiple_of(c.steps.len()));
            if whole {
                if let Some(cycle) = &mut self.cycle {
                    if !cycle.passes(&self.at, &self.path.rels, ctx)? {
                        self.path.pop();
                        self.at.pop();
                        continue;
                    }
                }
            }
            let full = whole && depth as u64 >= spec.min && emit(e.nbr, &self.path.rels, &self.at)?;
            if (depth as u64) < spec.max {
                let (dir, filter) = self.cycle.as_ref().map_or((spec.dir, spec.filter), |c| c.step(depth));
                push_frame(&mut self.entries, &mut self.frames, ctx, e.nbr, (dir, filter));
            } else {
                self.path.pop();
                self.at.pop();
            }
            if full {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The relationships of a walk's path, in order, and a set of them once the path has been long enough that
/// looking through it for each candidate would make walking a long chain quadratic. Once made, the set is kept
/// exact as the path shrinks and grows again, rather than rebuilt each time the path passes that length.
#[derive(Default)]
struct PathRels {
    rels: Vec<RelId>,
    set: Option<plexus_storage::fxhash::FxHashSet<RelId>>,
}

impl PathRels {
    /// Up to this length a path is searched rather than hashed.
    const SCANNED: usize = 32;

    fn len(&self) -> usize {
        self.rels.len()
    }

    fn contains(&self, rel: RelId) -> bool {
        match &self.set {
            Some(set) if self.rels.len() > Self::SCANNED => set.contains(&rel),
            _ => self.rels.contains(&rel),
        }
    }

    fn push(&mut self, rel: RelId) {
        self.rels.push(rel);
        match &mut self.set {
            Some(set) => {
                set.insert(rel);
            }
            None if self.rels.len() > Self::SCANNED => self.set = Some(self.rels.iter().copied().collect()),
            None => {}
        }
    }

    fn pop(&mut self) {
        if let (Some(rel), Some(set)) = (self.rels.pop(), &mut self.set) {
            set.remove(&rel);
        }
    }
}
