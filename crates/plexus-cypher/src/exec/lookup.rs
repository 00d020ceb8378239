//! Operators that find start nodes without scanning everything: by id, by equality through a unique key or a
//! property index, by range through a property index. Each falls back to a label scan when the schema it hoped
//! for is not there (plans are cached across schema changes, so the choice is made when the operator runs).

use std::ops::{Bound, ControlFlow};

use plexus_storage::{GraphState, LabelId, NodeId, PropKeyId, Value as StoredValue};

use super::ctx::Ctx;
use super::{clone_row, put, Batch, Row, RowExpander, RowSink, Scan};
use crate::compare::{self, CompareOp};
use crate::error::Result;
use crate::expr::CExpr;
use crate::token::Token;
use crate::value::Value;

pub(crate) struct NodeById<'p> {
    pub slot: usize,
    pub id: &'p CExpr,
}

impl NodeById<'_> {
    /// The node the id names, if it exists.
    fn find(&self, row: &Row, ctx: &Ctx) -> Result<Option<NodeId>> {
        let id = match self.id.eval(row, ctx)? {
            Value::Int(i) if i >= 0 => NodeId(i as u64),
            Value::Float(f) if f >= 0.0 && f.fract() == 0.0 => NodeId(f as u64),
            _ => return Ok(None),
        };
        Ok(ctx.g().node_exists(id).then_some(id))
    }
}

impl RowExpander for NodeById<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        if let Some(id) = self.find(row, ctx)? {
            let mut r = std::mem::take(row);
            r[self.slot] = Value::Node(id);
            out.push(r);
        }
        Ok(false)
    }

    fn lends(&self) -> bool {
        true
    }

    /// The one match written into `row` and lent: a point query's first operator hands its consumer the row
    /// without a batch around it.
    fn lend(&mut self, row: &mut Row, ctx: &Ctx, sink: &mut RowSink<'_>) -> Result<ControlFlow<()>> {
        match self.find(row, ctx)? {
            Some(id) => {
                put(&mut row[self.slot], Value::Node(id));
                sink(row, ctx)
            }
            None => Ok(ControlFlow::Continue(())),
        }
    }
}

/// The nodes of a label whose properties equal the values given one for one, or all but the last and that one
/// in a range, through their composite index (planned only when it existed; should it be gone, every node of the
/// label). Candidates: the predicates stay as filters above, which also settle what the index keys alike (zoned
/// times of one instant).
pub(crate) struct CompositeSeek<'p> {
    pub slot: usize,
    pub label: &'p Token,
    pub keys: &'p [Token],
    pub values: &'p [CExpr],
    pub range: Option<&'p crate::plan::Bounds>,
}

impl RowExpander for CompositeSeek<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        let Some(l) = ctx.label_token(self.label) else { return Ok(false) };
        let Some(keys) = self.keys.iter().map(|k| ctx.prop_token(k)).collect::<Option<Vec<PropKeyId>>>() else {
            return Ok(false);
        };
        let mut wanted = Vec::with_capacity(self.values.len());
        for v in self.values {
            // A null equals nothing, and a value that cannot be stored is held by no node.
            match v.eval(row, ctx)?.to_lookup() {
                Ok(stored) if !stored.is_null() => wanted.push(stored),
                _ => return Ok(false),
            }
        }
        let nodes = match self.range {
            _ if ctx.g().composite_index(l, &keys).is_none() => ctx.g().nodes_with_label(l),
            None => ctx.g().composite_seek(l, &keys, &wanted),
            Some((lower, upper)) => {
                let (lo, hi) = (bound(lower.as_ref(), row, ctx)?, bound(upper.as_ref(), row, ctx)?);
                if lower.is_some() && lo.is_none() || upper.is_some() && hi.is_none() {
                    // A bound that is null or not storable: the comparison is never true.
                    return Ok(false);
                }
                // Zoned values of one instant are one key but order by zone: an exclusive bound takes its
                // instant in, and the filter above keeps what compares as asked.
                let zoned = [&lo, &hi].into_iter().flatten().any(|(v, _)| is_zoned(&Value::from_stored(v)));
                let as_bound = |b: &Option<(plexus_storage::Value, bool)>| match b {
                    None => Bound::Unbounded,
                    Some((v, inclusive)) if *inclusive || zoned => Bound::Included(v.clone()),
                    Some((v, _)) => Bound::Excluded(v.clone()),
                };
                let (lo, hi) = (as_bound(&lo), as_bound(&hi));
                ctx.g().composite_range(l, &keys, &wanted, lo.as_ref(), hi.as_ref())
            }
        };
        push(row, self.slot, nodes, out);
        Ok(false)
    }
}

/// How a lookup finds its nodes, decided on first use (and told by EXPLAIN).
pub(crate) enum Access {
    UniqueKey(LabelId, PropKeyId),
    Index(LabelId, PropKeyId),
    Scan(Scan),
    /// The label or key does not exist: nothing can match.
    Nothing,
}

pub(crate) fn choose(ctx: &Ctx, slot: usize, label: &Token, key: &Token, equality: bool) -> Access {
    let (Some(l), Some(k)) = (ctx.label_token(label), ctx.prop_token(key)) else { return Access::Nothing };
    let g = ctx.g();
    if equality && g.has_unique_key(l, k) {
        Access::UniqueKey(l, k)
    } else if g.has_index(l, k) {
        Access::Index(l, k)
    } else {
        Access::Scan(Scan { slot, label: Some(label.clone()), candidates: None })
    }
}

/// One output row per node; the last one takes `row` itself.
fn push(row: &mut Row, slot: usize, nodes: impl IntoIterator<Item = NodeId>, out: &mut Batch) {
    let mut nodes = nodes.into_iter().peekable();
    while let Some(n) = nodes.next() {
        let mut r = if nodes.peek().is_some() { clone_row(row) } else { std::mem::take(row) };
        r[slot] = Value::Node(n);
        out.push(r);
    }
}

pub(crate) struct KeyLookup<'p> {
    slot: usize,
    label: &'p Token,
    key: &'p Token,
    value: &'p CExpr,
    /// `value` is a list and a node matches when its property equals one of the elements.
    any_of: bool,
    access: Option<Access>,
}

impl<'p> KeyLookup<'p> {
    pub fn new(slot: usize, label: &'p Token, key: &'p Token, value: &'p CExpr, any_of: bool) -> Self {
        KeyLookup { slot, label, key, value, any_of, access: None }
    }

    /// `n.key IN list`: the nodes whose property equals an element, each once, in the order of the first element
    /// each equals (a unique key or index answers per element; without one, the statement's table does, or one
    /// scan of the label tests every node against the list).
    fn expand_any_of(&mut self, list: Value, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        let Some(items) = crate::expr::in_operand(&list)? else { return Ok(false) };
        let mut found: Vec<NodeId> = Vec::new();
        let mut seen = plexus_storage::fxhash::FxHashSet::default();
        let mut keep = |n: NodeId, found: &mut Vec<NodeId>| {
            if seen.insert(n) {
                found.push(n);
            }
        };
        let stored: Vec<(&Value, plexus_storage::Value)> =
            items.iter().filter(|v| !v.is_null()).filter_map(|v| v.to_lookup().ok().map(|s| (v, s))).collect();
        match self.access.as_ref().expect("chosen") {
            Access::Nothing => {}
            Access::UniqueKey(l, k) => {
                for (v, s) in &stored {
                    if let Some(n) = unique_seek(ctx.g(), *l, *k, v, s) {
                        keep(n, &mut found);
                    }
                }
            }
            Access::Index(l, k) => {
                for (v, s) in &stored {
                    for n in index_seek_equal(ctx.g(), *l, *k, v, s) {
                        keep(n, &mut found);
                    }
                }
            }
            Access::Scan(_) => {
                let (Some(l), Some(k)) = (ctx.label_token(self.label), ctx.prop_token(self.key)) else {
                    return Ok(false);
                };
                // Once the statement has a table, it answers element by element (the first call says whether it
                // has one); until then one scan tests every node against the list, hashed when long.
                let mut elements = stored.iter();
                let first = elements.next().and_then(|(wanted, s)| Some((*wanted, ctx.key_candidates(l, k, s)?)));
                if let Some((wanted, candidates)) = first {
                    for n in candidates.into_iter().filter(|&n| holds(ctx.g(), n, l, k, wanted)) {
                        keep(n, &mut found);
                    }
                    for (wanted, s) in elements {
                        let candidates = ctx.key_candidates(l, k, s).unwrap_or_default();
                        for n in candidates.into_iter().filter(|&n| holds(ctx.g(), n, l, k, wanted)) {
                            keep(n, &mut found);
                        }
                    }
                } else {
                    let list = crate::expr::constant_in::ConstantList::of_items(items.clone());
                    let g = ctx.g();
                    let _ = g.visit_label::<()>(l, |n| {
                        if let Some(v) = g.node_prop(n, k) {
                            if list.contains(&Value::from_stored(v)) == Some(true) {
                                keep(n, &mut found);
                            }
                        }
                        std::ops::ControlFlow::Continue(())
                    });
                }
            }
        }
        push(row, self.slot, found, out);
        Ok(false)
    }
}

/// The node the unique key `(l, k)` finds for `wanted` (`stored` its storage form): none for NaN, which `=` finds equal
/// to nothing, itself included, though the key map files it under one key.
fn unique_seek(g: &GraphState, l: LabelId, k: PropKeyId, wanted: &Value, stored: &StoredValue) -> Option<NodeId> {
    if has_nan(wanted) {
        return None;
    }
    g.node_by_unique(l, k, stored)
}

/// The nodes the index on `l`.`k` holds equal to `wanted` (`stored` its storage form). The index keys zoned times
/// by instant, and `12:00Z` and `13:00+01:00` share a key but are not equal: those candidates are checked.
fn index_seek_equal(g: &GraphState, l: LabelId, k: PropKeyId, wanted: &Value, stored: &StoredValue) -> Vec<NodeId> {
    let found = g.index_seek(l, k, stored);
    if !is_zoned(wanted) {
        return found;
    }
    found.into_iter().filter(|&n| holds(g, n, l, k, wanted)).collect()
}

/// Whether `v` is a time or datetime with an offset or zone, which a property index keys by instant alone.
fn is_zoned(v: &Value) -> bool {
    matches!(v, Value::Time(_) | Value::DateTime(_))
}

/// Whether `v` is NaN or a list holding one: `=` finds it equal to nothing.
fn has_nan(v: &Value) -> bool {
    match v {
        Value::Float(f) => f.is_nan(),
        Value::List(items) => items.iter().any(has_nan),
        _ => false,
    }
}

/// Whether node `n` has label `l` and a value under `k` that `=` finds equal to `wanted` (a candidate from the
/// statement's table is only a candidate).
fn holds(g: &GraphState, n: NodeId, l: LabelId, k: PropKeyId, wanted: &Value) -> bool {
    g.node_has_label(n, l)
        && g.node_prop(n, k).is_some_and(|v| compare::equals(&Value::from_stored(v), wanted) == Some(true))
}

impl RowExpander for KeyLookup<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        if self.access.is_none() {
            self.access = Some(choose(ctx, self.slot, self.label, self.key, true));
        }
        let wanted = self.value.eval(row, ctx)?;
        if self.any_of {
            return self.expand_any_of(wanted, row, ctx, out);
        }
        if wanted.is_null() {
            return Ok(false);
        }
        match self.access.as_mut().expect("chosen") {
            Access::Nothing => Ok(false),
            Access::UniqueKey(l, k) => {
                let Ok(stored) = wanted.to_lookup() else { return Ok(false) };
                // The key map keys numbers by value (`key_form`): `1.0` finds the node keyed `1`, as `=` does.
                push(row, self.slot, unique_seek(ctx.g(), *l, *k, &wanted, &stored), out);
                Ok(false)
            }
            Access::Index(l, k) => {
                let Ok(stored) = wanted.to_lookup() else { return Ok(false) };
                push(row, self.slot, index_seek_equal(ctx.g(), *l, *k, &wanted, &stored), out);
                Ok(false)
            }
            Access::Scan(scan) => {
                let key = ctx.prop_token(self.key);
                // Between rows (not part-way through one row's scan), the statement may have a table instead.
                if scan.candidates.as_ref().is_none_or(|(_, pos)| *pos == 0) {
                    if let (Some(l), Some(k), Ok(stored)) = (ctx.label_token(self.label), key, wanted.to_lookup()) {
                        if let Some(nodes) = ctx.key_candidates(l, k, &stored) {
                            let g = ctx.g();
                            let found: super::key_scans::Candidates =
                                nodes.into_iter().filter(|&n| holds(g, n, l, k, &wanted)).collect();
                            push(row, self.slot, found, out);
                            return Ok(false);
                        }
                    }
                }
                let mut found = Vec::new();
                let more = scan.expand(row, ctx, &mut found)?;
                for r in found {
                    let Value::Node(n) = r[self.slot] else { continue };
                    let v = key.and_then(|k| ctx.g().node_prop(n, k)).map_or(Value::Null, Value::from_stored);
                    if compare::equals(&v, &wanted) == Some(true) {
                        out.push(r);
                    }
                }
                Ok(more)
            }
        }
    }
}

pub(crate) struct IndexRange<'p> {
    slot: usize,
    label: &'p Token,
    key: &'p Token,
    lower: Option<&'p (CExpr, bool)>,
    upper: Option<&'p (CExpr, bool)>,
    access: Option<Access>,
}

impl<'p> IndexRange<'p> {
    pub fn new(
        slot: usize,
        label: &'p Token,
        key: &'p Token,
        lower: Option<&'p (CExpr, bool)>,
        upper: Option<&'p (CExpr, bool)>,
    ) -> Self {
        IndexRange { slot, label, key, lower, upper, access: None }
    }
}

fn bound(b: Option<&(CExpr, bool)>, row: &Row, ctx: &Ctx) -> Result<Option<(plexus_storage::Value, bool)>> {
    let Some((e, inclusive)) = b else { return Ok(None) };
    Ok(e.eval(row, ctx)?.to_lookup().ok().map(|v| (v, *inclusive)))
}

impl RowExpander for IndexRange<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        if self.access.is_none() {
            self.access = Some(choose(ctx, self.slot, self.label, self.key, false));
        }
        match self.access.as_mut().expect("chosen") {
            Access::Nothing => Ok(false),
            // Equality-only access is never chosen for ranges.
            Access::UniqueKey(..) => Ok(false),
            Access::Index(l, k) => {
                let (lower, upper) = (bound(self.lower, row, ctx)?, bound(self.upper, row, ctx)?);
                let as_bound = |b: &Option<(plexus_storage::Value, bool)>| -> Bound<plexus_storage::Value> {
                    match b {
                        None => Bound::Unbounded,
                        Some((v, true)) => Bound::Included(v.clone()),
                        Some((v, false)) => Bound::Excluded(v.clone()),
                    }
                };
                let (lo, hi) = (as_bound(&lower), as_bound(&upper));
                if self.lower.is_some() && lower.is_none() || self.upper.is_some() && upper.is_none() {
                    // A bound that is null or not storable: the comparison is never true.
                    return Ok(false);
                }
                let zoned = [&lower, &upper].into_iter().flatten().any(|(v, _)| is_zoned(&Value::from_stored(v)));
                if !zoned {
                    let nodes = ctx.g().index_range(*l, *k, lo.as_ref(), hi.as_ref());
                    push(row, self.slot, nodes, out);
                    return Ok(false);
                }
                // The index keys zoned times by instant, and Cypher orders those of one instant by zone: take the
                // bounds' instants in, then keep what compares as asked.
                let widen = |b: Bound<plexus_storage::Value>| match b {
                    Bound::Excluded(v) => Bound::Included(v),
                    other => other,
                };
                let (l, k, g) = (*l, *k, ctx.g());
                let nodes = g.index_range(l, k, widen(lo).as_ref(), widen(hi).as_ref());
                let within = |v: &Value, bound: &Option<(StoredValue, bool)>, strict: CompareOp, loose: CompareOp| {
                    bound.as_ref().is_none_or(|(b, inclusive)| {
                        let op = if *inclusive { loose } else { strict };
                        compare::compare_op(op, v, &Value::from_stored(b)) == Some(true)
                    })
                };
                let found: Vec<NodeId> = nodes
                    .into_iter()
                    .filter(|&n| {
                        g.node_prop(n, k).is_some_and(|v| {
                            let v = Value::from_stored(v);
                            within(&v, &lower, CompareOp::Gt, CompareOp::Ge)
                                && within(&v, &upper, CompareOp::Lt, CompareOp::Le)
                        })
                    })
                    .collect();
                push(row, self.slot, found, out);
                Ok(false)
            }
            Access::Scan(scan) => scan.expand(row, ctx, out),
        }
    }
}
