//! The flat adjacency of a bulk-loaded graph: one compressed-sparse-row array per direction over every node, read
//! without going through the node's leaf.
//!
//! A random read through the leaves is a chain of dependent cache misses: the radix spine, the node leaf, its
//! adjacency block, the block's slot index, then the neighbours. A graph that arrives in bulk (an edge list,
//! a checkpoint) with one relationship type keeps, beside its leaves, per direction an array of where each
//! node's relationships start, and the neighbour and relationship ids of all nodes in node order, which the
//! leaves' blocks share instead of holding copies (a block's ids are a run of the flat arrays, see
//! [`crate::idvec::SharedIds`]). A read of a node whose leaf is unchanged goes straight to the offsets and the
//! ids: two misses instead of five or six.
//!
//! Writes change leaves, not the flat arrays. Each node leaf has a stamp, shared by every snapshot of the graph:
//! the lowest version of a state in which the leaf may have changed (`u64::MAX` while it has not). A write
//! lowers the stamp to the version of the state it changes, before that state can be published, so a snapshot
//! uses the flat arrays for a leaf only while its version is below the stamp, that is, while its leaf is still
//! the one the arrays were made from. A transaction that rolls back leaves its stamps lowered: the leaf is then
//! read through the leaf, which is always right, only slower.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::adjacency::TypeFilter;
use crate::graph::GraphState;
use crate::ids::{NodeId, PropKeyId, TypeId};
use crate::idvec::{without_neighbour, IdSlice, SharedArray};
use crate::{Direction, LEAF_BITS, LEAF_SIZE};

/// One direction: node `n`'s relationships are entries `offsets[n]..offsets[n + 1]`.
#[derive(Debug)]
struct FlatSide {
    offsets: Box<[u32]>,
    nbr: SharedArray,
    rel: SharedArray,
}

impl FlatSide {
    #[inline]
    fn range(&self, node: usize) -> std::ops::Range<usize> {
        self.offsets[node] as usize..self.offsets[node + 1] as usize
    }

    #[inline]
    fn slices(&self, node: usize) -> (IdSlice<'_>, IdSlice<'_>) {
        let range = self.range(node);
        (IdSlice::Narrow(&self.nbr[range.clone()]), IdSlice::Narrow(&self.rel[range]))
    }
}

/// See the module documentation.
#[derive(Debug)]
pub struct FlatAdjacency {
    /// The type of every relationship; `None` when there are several (the arrays then serve no reads).
    ty: Option<TypeId>,
    /// Nodes `0..nodes` are covered.
    nodes: u64,
    out: FlatSide,
    inc: FlatSide,
    /// Per node leaf, the slots that may have a self-loop (the leaves' `loops` when the arrays were made).
    loops: Box<[u64]>,
    /// Per node leaf, the lowest version of a state in which the leaf may differ from the arrays.
    changed: Box<[AtomicU64]>,
    /// How many entries (of both sides) no leaf block shares any more: blocks folded into ids of their own, or
    /// removed with their leaf.
    released: AtomicUsize,
    /// What the relationships' properties were when the arrays were made (a change to one stamps both ends).
    props: RelProps,
}

/// The properties of a bulk-loaded graph's relationships, as the flat arrays know them.
#[derive(Debug)]
enum RelProps {
    /// No relationship has any.
    None,
    /// Every relationship has at most one, `key`, numeric: its value for each entry of each side, in entry
    /// order (NaN where absent), so that a count with summed weight reads one run instead of a property map per
    /// relationship (what an edge list's weight column loads as).
    /// `sums`: per side, each node's sum of its values (NaN skipped), added in entry order from 0 as a walk of
    /// the entries would, so a count with summed weight in one direction is two loads.
    Weights { key: PropKeyId, out: Box<[f64]>, inc: Box<[f64]>, sums: [Box<[f64]>; 2] },
    /// Anything else: read through the relationship leaves.
    Other,
}

impl FlatAdjacency {
    /// Attaches flat arrays to a freshly built state whose leaf blocks hold their ids as consecutive runs of one
    /// pair of arrays per direction (what the bulk builder makes) and have no deltas; returns false, leaving the
    /// state as it was, for any other state. With more than one relationship type the arrays serve no reads
    /// (a node's entries would need their groups), but still track changes, so that [`GraphState::seal`] gives
    /// the leaves their own ids and frees the arrays once most of them have changed.
    pub(crate) fn attach(state: &mut GraphState) -> bool {
        Self::attach_with(state, None)
    }

    /// [`FlatAdjacency::attach`] for an edge list just built with relationship ids in list order: `weights`
    /// (its weight column in that order, if any) says what the relationships' properties are, so they need not
    /// be read back from every relationship leaf.
    pub(crate) fn attach_edge_list(state: &mut GraphState, weights: Option<(PropKeyId, &[f64])>) -> bool {
        Self::attach_with(state, Some(weights))
    }

    /// `known`: `None` to find the properties by reading the relationship leaves, else what the builder knows
    /// they are.
    fn attach_with(state: &mut GraphState, known: Option<Option<(PropKeyId, &[f64])>>) -> bool {
        if state.flat.is_some() {
            return false;
        }
        let nodes = state.node_id_bound();
        let leaves = (nodes >> LEAF_BITS) as usize;
        let mut ty: Option<Option<TypeId>> = None;
        let mut loops = vec![0u64; leaves];
        let mut sides: [Option<(SharedArray, SharedArray)>; 2] = [None, None];
        let mut offsets: [Vec<u32>; 2] =
            [Vec::with_capacity(nodes as usize + 1), Vec::with_capacity(nodes as usize + 1)];
        offsets.iter().for_each(crate::prefetch::advise_huge_pages);
        let mut ends = [0usize; 2];
        let mut ok = true;
        for index in 0..leaves as u64 {
            let leaf = state.nodes.get(index);
            if let Some(leaf) = leaf {
                loops[index as usize] = leaf.loops;
            }
            for (side, out) in [true, false].into_iter().enumerate() {
                let next = ends[side];
                let adjacency = leaf.map(|l| l.adjacency(out));
                let base = adjacency.map(|a| a.base()).filter(|b| !b.is_empty());
                let Some(base) = base else {
                    ok &= adjacency.is_none_or(|a| a.delta_len() == 0);
                    offsets[side].extend(std::iter::repeat_n(next as u32, LEAF_SIZE));
                    continue;
                };
                let Some((nbr, rel, start)) = base.shared_ids() else { return false };
                let arrays = sides[side].get_or_insert_with(|| (nbr.clone(), rel.clone()));
                // One pair of arrays, the runs in leaf order and back to back, no changes yet.
                ok &= Arc::ptr_eq(&arrays.0, nbr)
                    && Arc::ptr_eq(&arrays.1, rel)
                    && start == next
                    && adjacency.is_some_and(|a| a.delta_len() == 0);
                // `Some(None)` once the types differ, between blocks or within one.
                let this = base.uniform_type();
                match ty {
                    None => ty = Some(this),
                    Some(t) if t != this => ty = Some(None),
                    _ => {}
                }
                offsets[side].extend((0..LEAF_SIZE).map(|slot| (start + base.entry_start(slot)) as u32));
                ends[side] = start + base.len();
                if !ok {
                    return false;
                }
            }
        }
        let ([Some(out), Some(inc)], true) = (sides, ok) else { return false };
        let [out_offsets, inc_offsets] = [0, 1].map(|side| {
            let mut o = std::mem::take(&mut offsets[side]);
            o.push(ends[side] as u32);
            o.into_boxed_slice()
        });
        if *out_offsets.last().expect("an end") as usize != out.0.len()
            || *inc_offsets.last().expect("an end") as usize != inc.0.len()
        {
            return false;
        }
        let changed = (0..leaves).map(|_| AtomicU64::new(u64::MAX)).collect();
        let props = match known {
            None => Self::rel_props(state, [&out.1, &inc.1], [&out_offsets, &inc_offsets]),
            Some(None) => RelProps::None,
            // A stored NaN could not be told from an absent value: then the leaves answer.
            Some(Some((_, by_rel))) if by_rel.iter().any(|w| w.is_nan()) => RelProps::Other,
            Some(Some((key, by_rel))) => Self::weights(key, by_rel, [&out.1, &inc.1], [&out_offsets, &inc_offsets]),
        };
        state.flat = Some(Arc::new(FlatAdjacency {
            ty: ty.flatten(),
            nodes,
            out: FlatSide { offsets: out_offsets, nbr: out.0, rel: out.1 },
            inc: FlatSide { offsets: inc_offsets, nbr: inc.0, rel: inc.1 },
            loops: loops.into_boxed_slice(),
            changed,
            released: AtomicUsize::new(0),
            props,
        }));
        true
    }

    /// What the relationships' properties are, and for a single numeric key its values in entry order.
    fn rel_props(state: &GraphState, rels: [&[u32]; 2], offsets: [&[u32]; 2]) -> RelProps {
        // One pass: the key and its values by relationship id, until a relationship shows otherwise.
        let mut weights: Option<(PropKeyId, Vec<f64>)> = None;
        let mut other = false;
        state.rels.for_each(|index, leaf| {
            if other {
                return;
            }
            if let Some((k, present)) = leaf.props().number_key() {
                // A number column: read straight from it, no map per relationship.
                if present & leaf.live == 0 {
                    return;
                }
                let (key, by_rel) = weights.get_or_insert_with(|| (k, vec![f64::NAN; state.rel_id_bound() as usize]));
                if *key != k {
                    other = true;
                    return;
                }
                let mut slots = present & leaf.live;
                while slots != 0 && !other {
                    let slot = slots.trailing_zeros() as usize;
                    slots &= slots - 1;
                    match leaf.props().number(slot, k).filter(|w| !w.is_nan()) {
                        Some(w) => by_rel[(index as usize) << LEAF_BITS | slot] = w,
                        None => other = true,
                    }
                }
                return;
            }
            for slot in 0..LEAF_SIZE {
                if other || !leaf.is_live(slot) {
                    continue;
                }
                let Some(map) = leaf.props().get(slot) else { continue };
                let mut entries = map.iter();
                match (entries.next(), entries.next()) {
                    (None, _) => {}
                    (Some((k, v)), None) => {
                        let (key, by_rel) =
                            weights.get_or_insert_with(|| (k, vec![f64::NAN; state.rel_id_bound() as usize]));
                        // A stored NaN could not be told from an absent value.
                        match v.as_f64().filter(|w| !w.is_nan()) {
                            Some(w) if *key == k => by_rel[(index as usize) << LEAF_BITS | slot] = w,
                            _ => other = true,
                        }
                    }
                    _ => other = true,
                }
            }
        });
        match (weights, other) {
            (_, true) => RelProps::Other,
            (None, false) => RelProps::None,
            (Some((key, by_rel)), false) => Self::weights(key, &by_rel, rels, offsets),
        }
    }

    /// Properties that are one numeric `key` per relationship, `by_rel` (by relationship id, NaN where absent),
    /// gathered into each side's entry order (`rels`: each side's relationship ids), with each node's sum per
    /// side (`offsets`: each side's runs).
    fn weights(key: PropKeyId, by_rel: &[f64], rels: [&[u32]; 2], offsets: [&[u32]; 2]) -> RelProps {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let [out, inc] = rels.map(|rel| crate::bulk::gather(by_rel, rel, threads).into_boxed_slice());
        let out_sums = run_sums(&out, offsets[0], threads);
        let inc_sums = run_sums(&inc, offsets[1], threads);
        RelProps::Weights { key, out, inc, sums: [out_sums, inc_sums] }
    }

    /// [`GraphState::count_and_weight`] for a covered node, when the arrays can answer it.
    #[inline]
    pub(crate) fn count_and_weight(
        &self,
        node: u64,
        dir: Direction,
        filter: TypeFilter,
        key: PropKeyId,
    ) -> Option<(u64, f64)> {
        if matches!(self.props, RelProps::Other) || (dir == Direction::Both && self.may_loop(node)) {
            return None;
        }
        if !filter.accepts(self.rel_type()) {
            return Some((0, 0.0));
        }
        let (mut n, mut sum) = (0u64, 0.0);
        for (side, out) in sides(dir).enumerate() {
            let range = self.side(out).range(node as usize);
            n += range.len() as u64;
            if let RelProps::Weights { key: k, out: w_out, inc: w_in, sums } = &self.props {
                if *k == key {
                    // One running sum in visit order, as the leaves' path adds them, so both give the same bits:
                    // the first side's is the node's stored sum, the second side's values are added to it.
                    if side == 0 {
                        sum = sums[usize::from(!out)][node as usize];
                        continue;
                    }
                    let weights = if out { &w_out[range] } else { &w_in[range] };
                    for &w in weights.iter().filter(|w| !w.is_nan()) {
                        sum += w;
                    }
                }
            }
        }
        Some((n, sum))
    }

    /// Whether a state at `version` reads `node`'s relationships from here.
    #[inline]
    pub fn covers(&self, node: u64, version: u64) -> bool {
        node < self.nodes
            && self.ty.is_some()
            && self.changed[(node >> LEAF_BITS) as usize].load(Ordering::Relaxed) > version
    }

    /// Whether reads go to the arrays (a graph of one relationship type) or only through the leaves.
    pub fn serves_reads(&self) -> bool {
        self.ty.is_some()
    }

    /// Records that node leaf `leaf` changes in a state at `version`.
    #[inline]
    pub(crate) fn mark_changed(&self, leaf: u64, version: u64) {
        if let Some(stamp) = self.changed.get(leaf as usize) {
            stamp.fetch_min(version, Ordering::Relaxed);
        }
    }

    /// Whether any leaf has changed since the arrays were made.
    pub(crate) fn any_changed(&self) -> bool {
        self.changed.iter().any(|s| s.load(Ordering::Relaxed) != u64::MAX)
    }

    /// Records that `entries` entries are no longer shared by any block (counted once, by the commit that
    /// folded or removed them); true once that is most of them: the arrays then hold mostly dead ids, kept
    /// alive by the blocks that still share them.
    pub(crate) fn release(&self, entries: usize) -> bool {
        let released = self.released.fetch_add(entries, Ordering::Relaxed) + entries;
        released * 2 > self.out.nbr.len() + self.inc.nbr.len()
    }

    fn side(&self, out: bool) -> &FlatSide {
        if out {
            &self.out
        } else {
            &self.inc
        }
    }

    #[inline]
    fn may_loop(&self, node: u64) -> bool {
        self.loops[(node >> LEAF_BITS) as usize] & (1 << (node as usize & (LEAF_SIZE - 1))) != 0
    }

    /// Requests the lines locating `node`'s relationships in each direction `dir` covers.
    #[inline]
    pub fn prefetch_offsets(&self, node: u64, dir: Direction) {
        for out in sides(dir) {
            crate::prefetch::prefetch(&self.side(out).offsets[node as usize]);
        }
    }

    /// Every relationship's value of `key` by relationship id (NaN where it has none), `bound` long, straight from
    /// the outgoing side, when the arrays hold that key's values, no node has changed by `version` and the state
    /// has `rel_count` relationships, as many as the arrays (then every relationship is in them as it was
    /// loaded); `None` otherwise.
    pub fn weights_by_rel(&self, key: PropKeyId, version: u64, bound: usize, rel_count: u64) -> Option<Vec<f64>> {
        let RelProps::Weights { key: k, out: w_out, .. } = &self.props else { return None };
        // Relationships made since between nodes made since mark no leaf of the arrays changed, but are counted:
        // their values are in their leaves only. (A loaded one removed marks its ends' leaves.)
        let unchanged = !self.changed.iter().any(|c| c.load(Ordering::Relaxed) <= version);
        if *k != key || rel_count != self.out.rel.len() as u64 || !unchanged {
            return None;
        }
        let mut by_rel = crate::prefetch::filled_on_huge_pages(f64::NAN, bound);
        for (&rel, &w) in self.out.rel.iter().zip(w_out.iter()) {
            *by_rel.get_mut(rel as usize)? = w;
        }
        Some(by_rel)
    }

    /// Whether the arrays hold every relationship's value of `key` (and each node's sums of them).
    pub fn holds_weights_of(&self, key: PropKeyId) -> bool {
        matches!(&self.props, RelProps::Weights { key: k, .. } if *k == key)
    }

    /// Requests the lines of `node`'s sums of weights in each direction `dir` covers.
    #[inline]
    pub fn prefetch_weight_sums(&self, node: u64, dir: Direction) {
        if let RelProps::Weights { sums, .. } = &self.props {
            for out in sides(dir) {
                crate::prefetch::prefetch_at(&sums[usize::from(!out)], node as usize);
            }
        }
    }

    /// Requests `node`'s first neighbours in each direction `dir` covers (once its offsets have arrived).
    #[inline]
    pub fn prefetch_entries(&self, node: u64, dir: Direction) {
        self.prefetch_first(node, dir, Beside::Nothing);
    }

    /// [`FlatAdjacency::prefetch_entries`], plus the line of the first relationship ids next to them.
    #[inline]
    pub fn prefetch_rel_entries(&self, node: u64, dir: Direction) {
        self.prefetch_first(node, dir, Beside::Rels);
    }

    /// Requests `node`'s neighbours in each direction `dir` covers and their weights beside them (what
    /// [`FlatAdjacency::weighted_runs`] reads), once its offsets have arrived.
    #[inline]
    pub fn prefetch_weighted_entries(&self, node: u64, dir: Direction) {
        let RelProps::Weights { out: w_out, inc: w_in, .. } = &self.props else {
            return self.prefetch_entries(node, dir);
        };
        for out in sides(dir) {
            let side = self.side(out);
            let run = side.range(node as usize);
            prefetch_lines(&side.nbr[run.clone()]);
            prefetch_lines(if out { &w_out[run] } else { &w_in[run] });
        }
    }

    /// Requests the line of `node`'s first neighbour in each direction `dir` covers, and of what `beside` names
    /// at the same entry.
    #[inline]
    fn prefetch_first(&self, node: u64, dir: Direction, beside: Beside) {
        for out in sides(dir) {
            let side = self.side(out);
            let first = side.offsets[node as usize] as usize;
            crate::prefetch::prefetch_at(&side.nbr, first);
            if let Beside::Rels = beside {
                crate::prefetch::prefetch_at(&side.rel, first);
            }
        }
    }

    /// [`GraphState::degree`] for a covered node.
    #[inline]
    pub(crate) fn degree(&self, node: u64, dir: Direction, filter: TypeFilter) -> u64 {
        if !filter.accepts(self.rel_type()) {
            return 0;
        }
        let n = node as usize;
        match dir {
            Direction::Out => self.out.range(n).len() as u64,
            Direction::In => self.inc.range(n).len() as u64,
            Direction::Both => {
                let loops = if self.may_loop(node) { self.count_to(n, true, node) } else { 0 };
                (self.out.range(n).len() + self.inc.range(n).len()) as u64 - loops
            }
        }
    }

    fn count_to(&self, node: usize, out: bool, other: u64) -> u64 {
        let (nbrs, _) = self.side(out).slices(node);
        let first = nbrs.lower_bound(other);
        (first..nbrs.len()).take_while(|&i| nbrs.get(i) == other).count() as u64
    }

    /// [`GraphState::visit_rel_slices`] for a covered node: `f(neighbours, relationships, direction)` per side.
    #[inline]
    pub(crate) fn visit_slices<B>(
        &self,
        node: u64,
        dir: Direction,
        filter: TypeFilter,
        mut f: impl FnMut(IdSlice, IdSlice, Direction) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        if !filter.accepts(self.rel_type()) {
            return ControlFlow::Continue(());
        }
        let n = node as usize;
        if dir != Direction::In {
            let (nbrs, rels) = self.out.slices(n);
            f(nbrs, rels, Direction::Out)?;
        }
        if dir != Direction::Out {
            let (nbrs, rels) = self.inc.slices(n);
            // With `Both`, a self-loop is reported once, as outgoing.
            if dir == Direction::Both && self.may_loop(node) {
                without_neighbour(nbrs, rels, node, |n, r| f(n, r, Direction::In))?;
            } else {
                f(nbrs, rels, Direction::In)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// A covered node's neighbour ids in `dir` as two runs straight from the arrays, each sorted (outgoing, then
    /// incoming; empty for a side `dir` leaves out or a `filter` that rejects the type). A neighbour joined
    /// more than once, or on both sides (a self-loop too), appears each time.
    #[inline]
    pub(crate) fn sorted_runs(&self, node: u64, dir: Direction, filter: TypeFilter) -> (&[u32], &[u32]) {
        if !filter.accepts(self.rel_type()) {
            return (&[], &[]);
        }
        let run = |out: bool| {
            let side = self.side(out);
            &side.nbr[side.range(node as usize)]
        };
        match dir {
            Direction::Out => (run(true), &[]),
            Direction::In => (&[], run(false)),
            Direction::Both => (run(true), run(false)),
        }
    }

    /// A covered node's neighbour ids in `dir` as runs (outgoing, then incoming) with each relationship's value
    /// of `key` beside its neighbour (NaN where it has none), when the arrays hold that key's values; `None`
    /// otherwise, and for `Both` at a node with a self-loop (which the other reads report once).
    #[inline]
    pub(crate) fn weighted_runs(
        &self,
        node: u64,
        dir: Direction,
        filter: TypeFilter,
        key: PropKeyId,
    ) -> Option<[(&[u32], &[f64]); 2]> {
        let RelProps::Weights { key: k, out: w_out, inc: w_in, .. } = &self.props else { return None };
        if *k != key || (dir == Direction::Both && self.may_loop(node)) {
            return None;
        }
        if !filter.accepts(self.rel_type()) {
            return Some([(&[], &[]), (&[], &[])]);
        }
        let run = |out: bool| {
            let range = self.side(out).range(node as usize);
            let weights = if out { &w_out[range.clone()] } else { &w_in[range.clone()] };
            (&self.side(out).nbr[range], weights)
        };
        let none: (&[u32], &[f64]) = (&[], &[]);
        Some(match dir {
            Direction::Out => [run(true), none],
            Direction::In => [none, run(false)],
            Direction::Both => [run(true), run(false)],
        })
    }

    /// [`GraphState::neighbours`] for a covered node: each side is sorted by neighbour already, so this is a
    /// merge without a sort.
    pub(crate) fn neighbours(&self, node: u64, dir: Direction, filter: TypeFilter) -> Vec<NodeId> {
        let (a, b) = self.sorted_runs(node, dir, filter);
        let mut merged = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let next = match (a.get(i), b.get(j)) {
                (Some(&x), Some(&y)) if x <= y => {
                    i += 1;
                    j += usize::from(x == y);
                    x
                }
                (Some(_), Some(&y)) | (None, Some(&y)) => {
                    j += 1;
                    y
                }
                (Some(&x), None) => {
                    i += 1;
                    x
                }
                (None, None) => unreachable!("one side has more"),
            };
            if merged.last() != Some(&NodeId(next as u64)) {
                merged.push(NodeId(next as u64));
            }
        }
        merged
    }

    /// [`GraphState::visit_rels_between`] for a covered `a`: `f(relationship, direction)` for each relationship
    /// joining `a` and `b` in `dir`. With `b_covered`, a long list of `a`'s is not searched when `b`'s list on
    /// the other side is shorter: a hub's list costs a cache miss per step of a binary search, and an edge picked
    /// at random usually joins a hub to a node of small degree. Both lists order a pair's parallel
    /// relationships by id, so the answer is the same either way.
    #[inline]
    pub(crate) fn visit_between<B>(
        &self,
        a: u64,
        b: u64,
        dir: Direction,
        filter: TypeFilter,
        b_covered: bool,
        mut f: impl FnMut(u64, Direction) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        /// Lists up to this long (one cache line of ids) are searched without looking at the other end.
        const SHORT_LIST: usize = 16;
        if !filter.accepts(self.rel_type()) {
            return ControlFlow::Continue(());
        }
        for out in sides(dir) {
            if !out && dir == Direction::Both && a == b {
                break;
            }
            let side = if out { Direction::Out } else { Direction::In };
            let (mut nbrs, mut rels) = self.side(out).slices(a as usize);
            let mut wanted = b;
            if b_covered && nbrs.len() > SHORT_LIST {
                let (other_nbrs, other_rels) = self.side(!out).slices(b as usize);
                if other_nbrs.len() < nbrs.len() {
                    (nbrs, rels, wanted) = (other_nbrs, other_rels, a);
                }
            }
            let first = nbrs.lower_bound(wanted);
            for i in first..nbrs.len() {
                if nbrs.get(i) != wanted {
                    break;
                }
                f(rels.get(i), side)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The type of every relationship.
    #[inline]
    pub fn rel_type(&self) -> TypeId {
        self.ty.unwrap_or(TypeId(u32::MAX))
    }
}

/// Requests the lines `run` covers, up to [`PREFETCHED_LINES`] of them: a run of weights of a handful of
/// relationships straddles two lines about half the time, and requesting only the first left the copy of the
/// run waiting for the second (measured: a fifth of a batch of edge lists on the patents-shaped graph).
#[inline]
fn prefetch_lines<T>(run: &[T]) {
    let per_line = (64 / size_of::<T>()).max(1);
    // Each step of a line's width from the run's first entry lands on the next line; the last entry covers the
    // line a step may have jumped past at the end.
    for line in run.chunks(per_line).take(PREFETCHED_LINES) {
        crate::prefetch::prefetch(line.as_ptr());
    }
    if let Some(last) = run.last() {
        crate::prefetch::prefetch(last);
    }
}

/// The most lines of one run [`prefetch_lines`] requests: a hub's run is read long enough for the hardware
/// prefetcher to follow it.
const PREFETCHED_LINES: usize = 8;

/// Each node's sum of `values` over its run (`offsets[node]..offsets[node + 1]`), NaN skipped, added in order
/// from 0; nodes split over `threads`.
fn run_sums(values: &[f64], offsets: &[u32], threads: usize) -> Box<[f64]> {
    let nodes = offsets.len().saturating_sub(1);
    let mut sums = vec![0.0; nodes];
    let per = nodes.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        for (part, chunk) in sums.chunks_mut(per).enumerate() {
            scope.spawn(move || {
                for (i, sum) in chunk.iter_mut().enumerate() {
                    let node = part * per + i;
                    let run = &values[offsets[node] as usize..offsets[node + 1] as usize];
                    *sum = run.iter().filter(|w| !w.is_nan()).fold(0.0, |s, w| s + w);
                }
            });
        }
    });
    sums.into_boxed_slice()
}

/// What [`FlatAdjacency::prefetch_first`] requests beside a node's first neighbour.
#[derive(Clone, Copy)]
enum Beside {
    Nothing,
    Rels,
}

/// The sides a direction reads: outgoing (`true`) and/or incoming.
#[inline]
fn sides(dir: Direction) -> impl Iterator<Item = bool> {
    [true, false].into_iter().filter(move |&out| if out { dir != Direction::In } else { dir != Direction::Out })
}
