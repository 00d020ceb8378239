//! Rewrites of a finished plan. The main one: an aggregation directly over a single-hop expand (and the filters
//! between them) becomes one [`PlanNode::ExpandAggregate`], which folds each relationship into its group as
//! it is visited instead of building a row for it. Recommendation-style queries
//! (`MATCH (a)-[:R]->(b) ... RETURN b, count(*)`) spend most of their time in exactly these rows.
//!
//! When the keys and aggregates allow it, the plan also records a [`CountShape`]: what can be computed once
//! per input row (keys not involving the neighbour, the aggregates' arguments, filters not involving it), what
//! can be remembered per neighbour (costly filters on the neighbour and the input row, such as a pattern
//! predicate), and what is left per relationship (the neighbour key, counting and summing).
//!
//! Another: a bare count of the nodes of a scan or the relationships of an expand over every node reads the
//! counts the graph keeps ([`PlanNode::CountFromStore`]).

use std::sync::Arc;

use plexus_storage::Direction;

use super::{AggFn, AggSpec, PlanNode, StoreCount, Token};
use crate::expr::{CExpr, GraphFn, MapProjItem};

/// The split of an aggregation over an expand that lets [`crate::exec::expand_aggregate`] count per
/// neighbour. Indices point into the operator's `keys` and `filters`.
#[derive(Clone, Debug)]
pub(crate) struct CountShape {
    /// Keys read from the input row alone.
    pub outer_keys: Vec<usize>,
    /// The key that is the neighbour itself: its index and whether it is `id(neighbour)` (else the node).
    pub neighbour_key: Option<(usize, bool)>,
    /// Filters that read neither the neighbour nor the relationship: decided once per input row.
    pub row_filters: Vec<usize>,
    /// Costly filters that read the neighbour but not the relationship: remembered per neighbour while the
    /// input slots in `memo_deps` keep their values.
    pub memo_filters: Vec<usize>,
    pub memo_deps: Vec<usize>,
    /// Filters `neighbour <> x` for an input slot `x` (filter index, `x`): an id comparison when `x` holds a
    /// node.
    pub not_equal: Vec<(usize, usize)>,
    /// Pattern predicates `(x)-[:T]->(neighbour)`, or their negation, for an input slot `x`: a lookup in the
    /// set of `x`'s neighbours, gathered once per value of `x`.
    pub adjacent: Vec<Adjacent>,
    /// Everything else, evaluated for each relationship.
    pub rel_filters: Vec<usize>,
    /// Set when the groups go (through projections of slots) to an ORDER BY ... LIMIT on aggregates and the
    /// neighbour's id: only the groups that sort into the first `skip + limit` need to be lent.
    pub top: Option<TopGroups>,
    /// Set when input rows that agree on the slots in its `state` can be counted as one batch.
    pub batch: Option<BatchShape>,
    /// When the input is another fused count's groups and this count reads only their parts: the parts, by
    /// slot (see [`crate::exec::Operator::lend_cell_runs`]).
    pub cells_in: Option<Vec<(usize, CellPart)>>,
}

/// How a fused count with one aggregate takes its input rows in batches
/// (`crate::exec::neighbour_counts`): rows that agree on every slot its set-up reads (their state) differ only
/// in their start node, their addend and the relationships they must not reuse.
#[derive(Clone, Debug)]
pub(crate) struct BatchShape {
    /// The slots read by the outer keys and by every filter but through the neighbour, sorted.
    pub state: Vec<usize>,
    pub addend: Addend,
    /// The relationship slots the new relationship must differ from (at most two).
    pub distinct: Vec<usize>,
}

/// What each input row adds to its neighbours' cells in a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Addend {
    /// `count(*)`.
    One,
    /// `count(x)` of a slot: one when it holds a value.
    Count(usize),
    /// `sum(x)` of a slot holding a positive integer.
    Sum(usize),
}

/// The ORDER BY keys and the bound of a sort over a fused count's groups, in terms of the groups' cells.
#[derive(Clone, Debug)]
pub(crate) struct TopGroups {
    /// The first sort keys (at least one) and whether each sorts descending.
    pub keys: Vec<(TopKey, bool)>,
    /// `keys` are all the sort keys: the count lends its groups in the sort's order, and the sort is gone
    /// from the plan. Otherwise the later ones are expressions the groups cannot answer, and groups tied with
    /// the last one kept on `keys` are lent too, for the sort that stays to decide between.
    pub exact: bool,
    pub skip: Option<CExpr>,
    pub limit: CExpr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TopKey {
    /// The value of aggregate `i`.
    Aggregate(usize),
    /// `id(neighbour)`.
    NeighbourId,
}

/// A filter that asks whether the neighbour is adjacent to the node in an input slot.
#[derive(Clone, Debug)]
pub(crate) struct Adjacent {
    /// Index of the filter (evaluated as written when the slot does not hold a node).
    pub filter: usize,
    pub from: usize,
    pub dir: Direction,
    pub types: Vec<Token>,
    /// `NOT (x)-->(neighbour)`.
    pub negated: bool,
}

/// Applies the rewrites to `node` and everything under it.
pub(crate) fn fuse(node: &mut PlanNode) {
    fuse_below(node, true)
}

/// [`fuse`], where `may_fuse` says whether `node` itself may become a fused count.
fn fuse_below(node: &mut PlanNode, may_fuse: bool) {
    let child_may_fuse = !reads_beyond_groups(node);
    for_each_nested_plan(node, fuse);
    if let Some(input) = node.input_mut() {
        fuse_below(input, child_may_fuse);
    }
    if may_fuse && is_fusable(node) {
        let PlanNode::Aggregate { input, keys, aggs, .. } = std::mem::replace(node, PlanNode::Start) else {
            unreachable!("checked by is_fusable")
        };
        let mut expand = *input;
        let mut filters = Vec::new();
        while let PlanNode::Filter { input, predicate } = expand {
            filters.push(predicate);
            expand = *input;
        }
        filters.reverse();
        let shape = count_shape(&expand, &filters, &keys, &aggs).map(Box::new);
        *node = PlanNode::ExpandAggregate { expand: Box::new(expand), filters, keys, aggs, shape };
    }
    if may_fuse {
        count_from_store(node);
    }
    push_group_filter(node);
    push_top_groups(node);
}

/// Calls `f` on the plans nested in `node` other than its input: a union's parts, and the inner plan of an
/// optional match or a subquery while this plan is its only owner.
fn for_each_nested_plan(node: &mut PlanNode, f: fn(&mut PlanNode)) {
    match node {
        PlanNode::Union { parts, .. } => parts.iter_mut().for_each(f),
        PlanNode::Optional { inner, .. } | PlanNode::Apply { inner, .. } => {
            if let Some(inner) = Arc::get_mut(inner) {
                f(inner)
            }
        }
        _ => {}
    }
}

/// After fusion: a label test on the node a hop reaches, in a filter right above the hop, moves into it. A
/// single hop (`(a)-[:R]->(b:L)`) then neither writes nor lends a row for a neighbour the filter would drop
/// (C2's `(:Item)`), and a variable-length walk (`-[:REPLY_OF*0..]->(post:Post)`) never copies a path ending
/// elsewhere into a row (on LDBC's IS2 most of a message's chain ends at comments). Done once the plan is
/// fused, since the fusion rules read such filters where the planner put them; children first, so stacked
/// label filters all move.
pub(crate) fn push_hop_labels(node: &mut PlanNode) {
    for_each_nested_plan(node, push_hop_labels);
    if let Some(input) = node.input_mut() {
        push_hop_labels(input);
    }
    let PlanNode::Filter { input, predicate: CExpr::HasLabels(on, labels) } = node else { return };
    let (PlanNode::Expand { to, to_bound: false, to_labels, .. }
    | PlanNode::VarExpand { to, to_bound: false, to_labels, .. }) = &mut **input
    else {
        return;
    };
    if !matches!(**on, CExpr::Slot(s) if s == *to) {
        return;
    }
    to_labels.append(labels);
    let hop = std::mem::replace(&mut **input, PlanNode::Start);
    *node = hop;
}

/// An aggregation that only counts the nodes a scan of all nodes or of one label finds, or the relationships an
/// expand in one direction from every node finds (of any type or of the types named, to any node, no filter),
/// reads the count the graph keeps instead of counting them one by one: `MATCH (n:L) RETURN count(n)` and
/// `MATCH ()-[r:T]->() RETURN count(r)` cost the same on every graph.
/// Only at the start of a query or subquery, where the scan's input is its one starting row.
fn count_from_store(node: &mut PlanNode) {
    let (input, slot, counted) = match node {
        PlanNode::Aggregate { input, keys, aggs, per_run } if keys.is_empty() && per_run.is_empty() => {
            let [agg] = &aggs[..] else { return };
            let PlanNode::ScanNodes { input, slot, label } = &mut **input else { return };
            if !counts_rows(agg, &[*slot]) {
                return;
            }
            (input, agg.slot, StoreCount::Nodes(label.clone()))
        }
        PlanNode::ExpandAggregate { expand, filters, keys, aggs, .. } if filters.is_empty() && keys.is_empty() => {
            let [agg] = &aggs[..] else { return };
            let PlanNode::Expand { input, from, rel, to, dir, types, to_bound, rel_bound, distinct_from, to_labels } =
                &mut **expand
            else {
                return;
            };
            let plain = !*to_bound && !*rel_bound && distinct_from.is_empty() && to_labels.is_empty();
            if !plain || *dir == Direction::Both || !counts_rows(agg, &[*from, *rel, *to]) {
                return;
            }
            let PlanNode::ScanNodes { input, slot, label: None } = &mut **input else { return };
            if slot != from {
                return;
            }
            let mut named: Vec<Token> = Vec::with_capacity(types.len());
            for t in types.iter() {
                if !named.iter().any(|n| n.name() == t.name()) {
                    named.push(t.clone());
                }
            }
            (input, agg.slot, StoreCount::Rels(named))
        }
        _ => return,
    };
    if !matches!(**input, PlanNode::Start) {
        return;
    }
    let input = std::mem::replace(input, Box::new(PlanNode::Start));
    *node = PlanNode::CountFromStore { input, slot, counted };
}

/// Whether `agg` is `count(*)`, or `count(x)` without DISTINCT of a variable in one of `slots` (a scanned node, an
/// expanded relationship or node: never null in the rows counted).
fn counts_rows(agg: &AggSpec, slots: &[usize]) -> bool {
    agg.func == AggFn::Count
        && !agg.distinct
        && agg.arg.as_ref().is_none_or(|arg| matches!(arg, CExpr::Slot(s) if slots.contains(s)))
}

/// A filter over a fused count's groups that is a pattern predicate between two grouping keys holding bare
/// variables keeps or drops whole groups, and cannot fail; so it moves below the count and drops the groups'
/// rows before they are counted instead (`WITH me, rec, sum(x) AS n WHERE NOT EXISTS { (me)-[:R]->(rec) }`).
/// Between the input node and the neighbour it is then a lookup in the count's neighbour set.
fn push_group_filter(node: &mut PlanNode) {
    let PlanNode::Filter { input, predicate } = node else { return };
    let edge = match predicate {
        CExpr::Not(inner) => &**inner,
        other => other,
    };
    let CExpr::HasEdge { from, to: Some(to), .. } = edge else { return };
    // Down through projections that copy slots, to the count's output slots.
    let mut slots = [*from, *to];
    let mut below: &PlanNode = input;
    while let PlanNode::Project { input, items } = below {
        for s in &mut slots {
            let Some(source) = source_before(items, *s) else { return };
            *s = source;
        }
        below = input;
    }
    let PlanNode::ExpandAggregate { keys, .. } = below else { return };
    for s in &mut slots {
        match keys.iter().find(|(_, out)| out == s) {
            Some((CExpr::Slot(x), _)) => *s = *x,
            _ => return,
        }
    }
    let PlanNode::Filter { input, mut predicate } = std::mem::replace(node, PlanNode::Start) else {
        unreachable!("matched above")
    };
    let edge = match &mut predicate {
        CExpr::Not(inner) => &mut **inner,
        other => other,
    };
    if let CExpr::HasEdge { from, to, .. } = edge {
        *from = slots[0];
        *to = Some(slots[1]);
    }
    *node = *input;
    let mut below: &mut PlanNode = node;
    while let PlanNode::Project { input, .. } = below {
        below = input;
    }
    let PlanNode::ExpandAggregate { expand, filters, keys, aggs, shape } = below else { unreachable!("found above") };
    filters.push(predicate);
    *shape = count_shape(expand, filters, keys, aggs).map(Box::new);
}

/// Under `LIMIT` over `ORDER BY` (with or without `SKIP`) over projections of slots over a fused count whose
/// first sort keys are its aggregates and the neighbour's id, records the sort in the count's shape
/// ([`CountShape::top`]). When those are all the sort keys, the count lends its groups in the sort's order and
/// the sort leaves the plan; otherwise it stays, and the count only leaves out groups it would drop.
fn push_top_groups(node: &mut PlanNode) {
    if !record_top_groups(node) {
        return;
    }
    let PlanNode::Limit { input, .. } = node else { unreachable!("recorded under a limit") };
    let sort = match &mut **input {
        PlanNode::Skip { input, .. } => &mut **input,
        other => other,
    };
    let PlanNode::Sort { input, .. } = std::mem::replace(sort, PlanNode::Start) else {
        unreachable!("recorded under a sort")
    };
    *sort = *input;
}

/// [`push_top_groups`] up to the sort's removal: records the top and says whether it is exact.
fn record_top_groups(node: &mut PlanNode) -> bool {
    let PlanNode::Limit { input, count: limit } = node else { return false };
    let limit = limit.clone();
    let (sort, skip) = match &mut **input {
        PlanNode::Skip { input: sorted, count } if matches!(**sorted, PlanNode::Sort { .. }) => {
            (&mut **sorted, Some(count.clone()))
        }
        other => (other, None),
    };
    let PlanNode::Sort { input, keys } = sort else { return false };
    // Each key's slot while it is one (`None` from the first key that is another expression on).
    let mut slots: Vec<Option<usize>> = keys
        .iter()
        .scan(true, |plain, (key, _)| {
            let slot = match key {
                CExpr::Slot(s) if *plain => Some(*s),
                _ => None,
            };
            *plain = slot.is_some();
            Some(slot)
        })
        .collect();
    let descending: Vec<bool> = keys.iter().map(|(_, desc)| *desc).collect();
    let sort_keys = keys.len();
    // Down through projections, following each key to the slot it was copied from.
    let mut below: &mut PlanNode = input;
    while let PlanNode::Project { input, items } = below {
        for s in &mut slots {
            *s = s.and_then(|slot| source_before(items, slot));
        }
        below = input;
    }
    let PlanNode::ExpandAggregate { keys, aggs, shape: Some(shape), .. } = below else { return false };
    let mut top = Vec::with_capacity(slots.len());
    for (s, desc) in slots.into_iter().zip(descending) {
        let Some(s) = s else { break };
        let key = match aggs.iter().position(|spec| spec.slot == s) {
            Some(i) => TopKey::Aggregate(i),
            None if shape.neighbour_key.is_some_and(|(k, as_id)| as_id && keys[k].1 == s) => TopKey::NeighbourId,
            None => break,
        };
        top.push((key, desc));
    }
    if top.is_empty() {
        return false;
    }
    let exact = top.len() == sort_keys;
    shape.top = Some(TopGroups { keys: top, exact, skip, limit });
    exact
}

/// Where a slot's value comes from when a fused count's groups are lent as cells
/// ([`crate::exec::Operator::lend_cell_runs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CellPart {
    /// The value of outer key `i` (the `i`-th of [`CountShape::outer_keys`]).
    Outer(usize),
    /// The neighbour key: the node, or its id.
    Neighbour,
    NeighbourId,
    /// The value of aggregate `i`.
    Aggregate(usize),
}

/// When `input` is a fused count with a [`CountShape`] under projections that only copy slots, and each slot
/// in `reads` holds a part of its groups: those parts, by slot. An operator over it that reads only these
/// slots can take the groups as cells, without rows being built and projected for it.
fn cell_parts(input: &PlanNode, reads: &[usize]) -> Option<Vec<(usize, CellPart)>> {
    let mut sources: Vec<(usize, usize)> = reads.iter().map(|&s| (s, s)).collect();
    let mut below = input;
    while let PlanNode::Project { input, items } = below {
        // A computed item could fail: skipping it would hide the error.
        if !items.iter().all(|(e, _)| matches!(e, CExpr::Slot(_))) {
            return None;
        }
        for (_, s) in &mut sources {
            *s = source_before(items, *s)?;
        }
        below = input;
    }
    let PlanNode::ExpandAggregate { keys, aggs, shape: Some(shape), .. } = below else { return None };
    sources
        .into_iter()
        .map(|(read, s)| {
            if let Some(i) = aggs.iter().position(|a| a.slot == s) {
                return Some((read, CellPart::Aggregate(i)));
            }
            let k = keys.iter().position(|(_, out)| *out == s)?;
            if let Some(i) = shape.outer_keys.iter().position(|&o| o == k) {
                return Some((read, CellPart::Outer(i)));
            }
            match shape.neighbour_key {
                Some((n, as_id)) if n == k => {
                    Some((read, if as_id { CellPart::NeighbourId } else { CellPart::Neighbour }))
                }
                _ => None,
            }
        })
        .collect()
}

/// The slot whose value a projection's `items` leave in `slot`: the one it copies from, `slot` itself when
/// no item writes it, `None` when an item computes it.
fn source_before(items: &[(CExpr, usize)], slot: usize) -> Option<usize> {
    match items.iter().find(|(_, written)| *written == slot) {
        Some((CExpr::Slot(from), _)) => Some(*from),
        Some(_) => None,
        None => Some(slot),
    }
}

/// Whether `node` projects over an aggregation something other than its groups' keys and aggregates: an item
/// mixing an aggregate with an input variable (`count(*) * o.age` grouped by `o`) reads the input row a group
/// came from, which an aggregation keeps and a fused count, building no row per relationship, does not.
fn reads_beyond_groups(node: &PlanNode) -> bool {
    let PlanNode::Project { input, items } = node else { return false };
    let PlanNode::Aggregate { keys, aggs, .. } = &**input else { return false };
    let groups: Vec<usize> = keys.iter().map(|(_, slot)| *slot).chain(aggs.iter().map(|a| a.slot)).collect();
    items.iter().any(|(e, _)| slot_deps(e).is_none_or(|deps| deps.iter().any(|s| !groups.contains(s))))
}

/// An aggregation over filters over an expand to a new node along a new relationship (and not one whose row
/// comes from the subquery's argument when it has no input, which a fused count does not keep).
fn is_fusable(node: &PlanNode) -> bool {
    let PlanNode::Aggregate { input, per_run, .. } = node else { return false };
    if !per_run.is_empty() {
        return false;
    }
    let mut below: &PlanNode = input;
    while let PlanNode::Filter { input, .. } = below {
        below = input;
    }
    matches!(below, PlanNode::Expand { to_bound: false, rel_bound: false, .. })
}

fn count_shape(expand: &PlanNode, filters: &[CExpr], keys: &[(CExpr, usize)], aggs: &[AggSpec]) -> Option<CountShape> {
    let PlanNode::Expand { to, rel, distinct_from, .. } = expand else { return None };
    let (to, rel) = (*to, *rel);
    let reads_new = |deps: &[usize]| deps.iter().any(|&s| s == to || s == rel);
    for spec in aggs {
        if !matches!(spec.func, AggFn::Count | AggFn::Sum) || spec.distinct || spec.extra.is_some() {
            return None;
        }
        if let Some(arg) = &spec.arg {
            if reads_new(&slot_deps(arg)?) {
                return None;
            }
        }
    }
    let mut shape = CountShape {
        outer_keys: Vec::new(),
        neighbour_key: None,
        row_filters: Vec::new(),
        memo_filters: Vec::new(),
        memo_deps: Vec::new(),
        not_equal: Vec::new(),
        adjacent: Vec::new(),
        rel_filters: Vec::new(),
        top: None,
        batch: None,
        cells_in: None,
    };
    for (i, (key, _)) in keys.iter().enumerate() {
        let neighbour = match key {
            CExpr::Slot(s) if *s == to => Some(false),
            CExpr::Graph(GraphFn::Id, args) if matches!(args.as_slice(), [CExpr::Slot(s)] if *s == to) => Some(true),
            _ => None,
        };
        match neighbour {
            Some(as_id) if shape.neighbour_key.is_none() => shape.neighbour_key = Some((i, as_id)),
            Some(_) => return None,
            None if reads_new(&slot_deps(key)?) => return None,
            None => shape.outer_keys.push(i),
        }
    }
    for (i, f) in filters.iter().enumerate() {
        if let CExpr::Binary(crate::ast::BinaryOp::Ne, a, b) = f {
            let other = match (&**a, &**b) {
                (CExpr::Slot(x), CExpr::Slot(y)) if *x == to => Some(*y),
                (CExpr::Slot(x), CExpr::Slot(y)) if *y == to => Some(*x),
                _ => None,
            };
            if let Some(x) = other.filter(|&x| x != to && x != rel) {
                shape.not_equal.push((i, x));
                continue;
            }
        }
        let (negated, pattern) = match f {
            CExpr::Not(inner) => (true, &**inner),
            other => (false, other),
        };
        if let CExpr::HasEdge { from, to: Some(t), dir, types, .. } = pattern {
            if *t == to && *from != to && *from != rel {
                shape.adjacent.push(Adjacent { filter: i, from: *from, dir: *dir, types: types.clone(), negated });
                continue;
            }
        }
        match slot_deps(f) {
            Some(deps) if !reads_new(&deps) => shape.row_filters.push(i),
            Some(deps) if !deps.contains(&rel) && worth_remembering(f) => {
                shape.memo_filters.push(i);
                for d in deps {
                    if d != to && !shape.memo_deps.contains(&d) {
                        shape.memo_deps.push(d);
                    }
                }
            }
            _ => shape.rel_filters.push(i),
        }
    }
    shape.batch = batch_shape(&shape, (to, rel), distinct_from, filters, keys, aggs);
    shape.cells_in = cells_in(expand, filters, keys, aggs);
    Some(shape)
}

/// The parts of the input's groups that the slots read by a count come from, when the input is a fused
/// count lending them ([`cell_parts`]). The expand's own relationship and neighbour slots are written per
/// relationship, not read from the input.
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

/// The [`BatchShape`] of a count with one aggregate (`count(*)`, or a count or sum of a slot) and no filter
/// that reads the relationship; `None` for any other.
fn batch_shape(
    shape: &CountShape,
    (to, rel): (usize, usize),
    distinct: &[usize],
    filters: &[CExpr],
    keys: &[(CExpr, usize)],
    aggs: &[AggSpec],
) -> Option<BatchShape> {
    let [spec] = aggs else { return None };
    let addend = match (&spec.func, &spec.arg) {
        (AggFn::Count, None) => Addend::One,
        (AggFn::Count, Some(CExpr::Slot(s))) => Addend::Count(*s),
        (AggFn::Sum, Some(CExpr::Slot(s))) => Addend::Sum(*s),
        _ => return None,
    };
    if !shape.rel_filters.is_empty() || distinct.len() > 2 {
        return None;
    }
    let mut state = Vec::new();
    for &k in &shape.outer_keys {
        state.extend(slot_deps(&keys[k].0)?);
    }
    // Every filter left reads the neighbour through one of these, or not at all.
    for filter in filters {
        state.extend(slot_deps(filter)?);
    }
    state.retain(|&s| s != to && s != rel);
    state.sort_unstable();
    state.dedup();
    Some(BatchShape { state, addend, distinct: distinct.to_vec() })
}

/// Whether evaluating `e` costs more than a hash probe: it reads the graph or calls a function.
fn worth_remembering(e: &CExpr) -> bool {
    let mut costly = false;
    walk(e, &mut |e| {
        costly |= matches!(
            e,
            CExpr::HasEdge { .. }
                | CExpr::Property(..)
                | CExpr::HasLabels(..)
                | CExpr::LabelTest(..)
                | CExpr::Scalar(..)
                | CExpr::Graph(..)
                | CExpr::PropsMatch(..)
        );
        true
    });
    costly
}

/// The row slots `e` reads, or `None` when that cannot be known (a subquery sees the whole row) or `e` may
/// give a different answer each time (`rand()`), so that it must be evaluated on every row as written.
pub(crate) fn slot_deps(e: &CExpr) -> Option<Vec<usize>> {
    let mut deps = Vec::new();
    let known = walk(e, &mut |e| {
        match e {
            CExpr::Slot(s) => deps.push(*s),
            CExpr::PathOf { nodes, rels } => deps.extend(nodes.iter().chain(rels)),
            CExpr::HasEdge { from, to, .. } => deps.extend(std::iter::once(*from).chain(*to)),
            CExpr::Subquery { .. } => return false,
            CExpr::Scalar(name, _) if matches!(name.to_ascii_lowercase().as_str(), "rand" | "randomuuid") => {
                return false
            }
            CExpr::Graph(GraphFn::RandomUuid | GraphFn::Timestamp, _) => return false,
            _ => {}
        }
        true
    });
    known.then_some(deps)
}

/// Whether `e` reads graph data beyond the entities its row holds: a subquery (`COUNT { ... }`, `EXISTS`, a
/// pattern comprehension) or a pattern predicate, which see what other rows changed.
pub(crate) fn reads_beyond_row(e: &CExpr) -> bool {
    !walk(e, &mut |e| !matches!(e, CExpr::Subquery { .. } | CExpr::HasEdge { .. }))
}

/// Calls `visit` on `e` and every expression inside it until `visit` returns false; returns whether it never
/// did.
fn walk(e: &CExpr, visit: &mut dyn FnMut(&CExpr) -> bool) -> bool {
    if !visit(e) {
        return false;
    }
    let mut all = |es: &mut dyn Iterator<Item = &CExpr>| {
        for e in es {
            if !walk(e, visit) {
                return false;
            }
        }
        true
    };
    match e {
        CExpr::Const(_)
        | CExpr::Param(_)
        | CExpr::Slot(_)
        | CExpr::Subquery { .. }
        | CExpr::PathOf { .. }
        | CExpr::HasEdge { .. } => true,
        CExpr::Property(b, _)
        | CExpr::Not(b)
        | CExpr::Neg(b)
        | CExpr::Plus(b)
        | CExpr::IsNull(b, _)
        | CExpr::TypeTest(b, _, _)
        | CExpr::HasLabels(b, _)
        | CExpr::LabelTest(b, _) => all(&mut std::iter::once(&**b)),
        CExpr::List(items) | CExpr::Scalar(_, items) | CExpr::Graph(_, items) => all(&mut items.iter()),
        CExpr::Map(entries) => all(&mut entries.iter().map(|(_, e)| e)),
        CExpr::Index(a, b)
        | CExpr::And(a, b)
        | CExpr::Or(a, b)
        | CExpr::Xor(a, b)
        | CExpr::Binary(_, a, b)
        | CExpr::InConstant(a, b)
        | CExpr::PropsMatch(a, b) => all(&mut [&**a, &**b].into_iter()),
        CExpr::Slice(base, from, to) => all(&mut std::iter::once(&**base).chain(from.as_deref()).chain(to.as_deref())),
        CExpr::Case { operand, whens, otherwise } => all(&mut operand
            .as_deref()
            .into_iter()
            .chain(whens.iter().flat_map(|(w, t)| [w, t]))
            .chain(otherwise.as_deref())),
        CExpr::ListComprehension { list, filter, map, .. } => {
            all(&mut std::iter::once(&**list).chain(filter.as_deref()).chain(map.as_deref()))
        }
        CExpr::Quantified { list, predicate, .. } => all(&mut [&**list, &**predicate].into_iter()),
        CExpr::Reduce { init, list, expr, .. } => all(&mut [&**init, &**list, &**expr].into_iter()),
        CExpr::MapProjection { base, items } => {
            all(&mut std::iter::once(&**base).chain(items.iter().filter_map(|item| match item {
                MapProjItem::Entry(_, e) => Some(e),
                MapProjItem::Property(_) | MapProjItem::AllProperties => None,
            })))
        }
    }
}
