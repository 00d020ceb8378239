//! The graph state of one version: nodes, relationships, adjacency both ways, label, unique-key and property
//! indexes.
//!
//! A `GraphState` is a value: cloning it is cheap (a handful of reference counts) and a clone never sees changes
//! made to the other. Snapshots are published clones; transactions and the committer mutate private clones, and
//! only the leaves they touch are copied. Every mutation goes through [`GraphState::apply`], which checks an
//! operation completely before changing anything, so a failed operation leaves the state as it was.

use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

use crate::adjacency::{AdjEntry, AdjLeaf, TypeFilter};
use crate::error::{Result, StorageError};
use crate::flat::FlatAdjacency;
use crate::ids::{Direction, LabelId, NodeId, PropKeyId, RelId, TypeId};
use crate::idvec::IdSlice;
use crate::index::PropertyIndex;
use crate::ops::Op;
use crate::pvec::PVec;
use crate::records::{props_get, props_set, BitLeaf, Labels, NodeLeaf, PropMap, RelLeaf, BITS_PER_LEAF};
use crate::value::Value;
use crate::{LEAF_BITS, LEAF_SIZE};

/// Nodes carrying one label, as a persistent bitmap.
#[derive(Clone, Default)]
pub struct LabelIndex {
    pub bits: PVec<BitLeaf>,
    pub count: u64,
}

/// A declared unique key `(label, property)` and its hash index from value to node.
#[derive(Clone)]
pub struct UniqueIndex {
    pub label: LabelId,
    pub key: PropKeyId,
    pub map: crate::keymap::KeyMap,
}

/// A relationship as seen from one of its ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RelEntry {
    pub rel: RelId,
    pub ty: TypeId,
    /// The node at the other end.
    pub nbr: NodeId,
    /// `Out` when the relationship leaves the node the read started from.
    pub dir: Direction,
}

/// A relationship record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelRecord {
    pub id: RelId,
    pub ty: TypeId,
    pub src: NodeId,
    pub dst: NodeId,
}

/// The bits of `count` slots from `slot` (`slot + count` at most the leaf size).
#[inline]
fn slot_mask(slot: usize, count: u64) -> u64 {
    let run = if count >= 64 { u64::MAX } else { (1u64 << count) - 1 };
    run << slot
}

#[inline]
fn split(id: u64) -> (u64, usize) {
    (id >> LEAF_BITS, (id as usize) & (LEAF_SIZE - 1))
}

#[derive(Clone, Default)]
pub struct GraphState {
    pub(crate) nodes: PVec<NodeLeaf>,
    pub(crate) rels: PVec<RelLeaf>,
    pub(crate) node_count: u64,
    pub(crate) rel_count: u64,
    pub(crate) labels: Arc<Vec<LabelIndex>>,
    pub(crate) unique: Arc<Vec<UniqueIndex>>,
    pub(crate) indexes: Arc<Vec<PropertyIndex>>,
    /// Node leaves changed since the last seal.
    pub(crate) dirty: Vec<u64>,
    /// The flat adjacency of a bulk-loaded graph, shared by its snapshots ([`crate::flat`]).
    pub(crate) flat: Option<Arc<FlatAdjacency>>,
    /// The commit version this state reflects.
    pub(crate) version: u64,
}

impl GraphState {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn node_count(&self) -> u64 {
        self.node_count
    }

    pub fn rel_count(&self) -> u64 {
        self.rel_count
    }

    // ----- reads -----

    /// The flat adjacency, when it holds `node`'s relationships as this state sees them.
    #[inline]
    fn flat_for(&self, node: NodeId) -> Option<&FlatAdjacency> {
        self.flat.as_deref().filter(|f| f.covers(node.0, self.version))
    }

    /// The flat adjacency, if the graph has one (whether it covers a node depends on the node).
    pub fn flat(&self) -> Option<&FlatAdjacency> {
        self.flat.as_deref()
    }

    #[inline]
    fn node_leaf(&self, id: NodeId) -> Option<(&NodeLeaf, usize)> {
        let (leaf, slot) = split(id.0);
        let l = self.nodes.get(leaf)?;
        l.is_live(slot).then_some((l, slot))
    }

    #[inline]
    fn rel_leaf(&self, id: RelId) -> Option<(&RelLeaf, usize)> {
        let (leaf, slot) = split(id.0);
        let l = self.rels.get(leaf)?;
        l.is_live(slot).then_some((l, slot))
    }

    pub fn node_exists(&self, id: NodeId) -> bool {
        self.node_leaf(id).is_some()
    }

    pub fn node_labels(&self, id: NodeId) -> Option<&[LabelId]> {
        self.node_leaf(id).map(|(l, s)| l.labels(s))
    }

    pub fn node_has_label(&self, id: NodeId, label: LabelId) -> bool {
        self.node_labels(id).is_some_and(|ls| ls.contains(&label))
    }

    pub fn node_props(&self, id: NodeId) -> Option<Option<&PropMap>> {
        self.node_leaf(id).map(|(l, s)| l.props(s).as_deref())
    }

    pub fn node_prop(&self, id: NodeId, key: PropKeyId) -> Option<&Value> {
        self.node_leaf(id).and_then(|(l, s)| props_get(l.props(s), key))
    }

    pub fn rel_exists(&self, id: RelId) -> bool {
        self.rel_leaf(id).is_some()
    }

    pub fn rel(&self, id: RelId) -> Option<RelRecord> {
        self.rel_leaf(id).map(|(l, s)| RelRecord { id, ty: l.ty[s], src: NodeId(l.src(s)), dst: NodeId(l.dst(s)) })
    }

    pub fn rel_props(&self, id: RelId) -> Option<Option<&PropMap>> {
        self.rel_leaf(id).map(|(l, s)| l.props(s).as_deref())
    }

    pub fn rel_prop(&self, id: RelId, key: PropKeyId) -> Option<&Value> {
        self.rel_leaf(id).and_then(|(l, s)| props_get(l.props(s), key))
    }

    /// First of three prefetch steps for reading `node`'s adjacency a little later: requests its leaf. A batch
    /// reader calls this some positions ahead, [`GraphState::prefetch_adjacency`] fewer positions ahead,
    /// [`GraphState::prefetch_entries`] fewer still, and reads at the current one, so each read finds its lines
    /// arriving instead of missing one after another.
    #[inline]
    pub fn prefetch_node(&self, node: NodeId) {
        match self.flat_for(node) {
            Some(flat) => flat.prefetch_offsets(node.0, Direction::Both),
            None => self.nodes.prefetch(split(node.0).0),
        }
    }

    /// Second prefetch step, once the leaf has been requested: requests the line of `node`'s adjacency in
    /// `dir` that its degree and its groups are found from.
    #[inline]
    pub fn prefetch_adjacency(&self, node: NodeId, dir: Direction) {
        match self.flat_for(node) {
            Some(flat) => flat.prefetch_entries(node.0, dir),
            None => self.each_adjacency(node, dir, AdjLeaf::prefetch),
        }
    }

    /// Third prefetch step, once the adjacency line has arrived: requests `node`'s first group and first
    /// neighbours in `dir`, which a search for a neighbour or a walk of the relationships reads next.
    #[inline]
    pub fn prefetch_entries(&self, node: NodeId, dir: Direction) {
        if self.flat_for(node).is_none() {
            self.each_adjacency(node, dir, AdjLeaf::prefetch_entries);
        }
    }

    /// `f(adjacency, slot)` for `node`'s adjacency in each direction `dir` covers.
    #[inline]
    fn each_adjacency(&self, node: NodeId, dir: Direction, f: impl Fn(&AdjLeaf, usize)) {
        let Some((leaf, slot)) = self.node_leaf(node) else { return };
        if dir != Direction::In {
            f(&leaf.out, slot);
        }
        if dir != Direction::Out {
            f(&leaf.inc, slot);
        }
    }

    /// Number of relationships of `node` in direction `dir` passing `filter`; a self-loop counts once for `Both`.
    pub fn degree(&self, node: NodeId, dir: Direction, filter: TypeFilter) -> u64 {
        if let Some(flat) = self.flat_for(node) {
            return flat.degree(node.0, dir, filter);
        }
        let Some((leaf, slot)) = self.node_leaf(node) else {
            return 0;
        };
        match dir {
            Direction::Out => leaf.out.degree(slot, filter),
            Direction::In => leaf.inc.degree(slot, filter),
            Direction::Both => {
                let loops = if leaf.loops & (1 << slot) == 0 {
                    0
                } else {
                    self.count_between_one_way(leaf, slot, node, true, filter)
                };
                leaf.out.degree(slot, filter) + leaf.inc.degree(slot, filter) - loops
            }
        }
    }

    fn count_between_one_way(&self, leaf: &NodeLeaf, slot: usize, other: NodeId, out: bool, filter: TypeFilter) -> u64 {
        let mut n = 0;
        let _ = leaf.adjacency(out).visit_to::<()>(slot, other.0, filter, |_| {
            n += 1;
            ControlFlow::Continue(())
        });
        n
    }

    /// Calls `f` for each relationship of `node` in `dir` passing `filter`, until it breaks. With `Both`, a
    /// self-loop is reported once (as outgoing).
    #[inline]
    pub fn visit_rels<B>(
        &self,
        node: NodeId,
        dir: Direction,
        filter: TypeFilter,
        mut f: impl FnMut(RelEntry) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        if let Some(flat) = self.flat_for(node) {
            let ty = flat.rel_type();
            return flat.visit_slices(node.0, dir, filter, |nbrs, rels, dir| {
                for i in 0..nbrs.len() {
                    f(RelEntry { rel: RelId(rels.get(i)), ty, nbr: NodeId(nbrs.get(i)), dir })?;
                }
                ControlFlow::Continue(())
            });
        }
        let Some((leaf, slot)) = self.node_leaf(node) else {
            return ControlFlow::Continue(());
        };
        if matches!(dir, Direction::Out | Direction::Both) {
            leaf.out.visit(slot, filter, |e| {
                f(RelEntry { rel: RelId(e.rel), ty: e.ty, nbr: NodeId(e.nbr), dir: Direction::Out })
            })?;
        }
        if matches!(dir, Direction::In | Direction::Both) {
            let skip_loops = dir == Direction::Both;
            leaf.inc.visit(slot, filter, |e| {
                if skip_loops && e.nbr == node.0 {
                    return ControlFlow::Continue(());
                }
                f(RelEntry { rel: RelId(e.rel), ty: e.ty, nbr: NodeId(e.nbr), dir: Direction::In })
            })?;
        }
        ControlFlow::Continue(())
    }

    /// Calls `f` with the neighbour ids of `node` in runs of contiguous memory (see
    /// [`crate::adjacency::AdjLeaf::visit_nbr_slices`]); one id per relationship, so a neighbour joined twice appears
    /// twice. With `Both`, a self-loop appears once.
    #[inline]
    pub fn visit_neighbour_slices<B>(
        &self,
        node: NodeId,
        dir: Direction,
        filter: TypeFilter,
        mut f: impl FnMut(IdSlice) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        self.visit_rel_slices(node, dir, filter, |nbrs, _| f(nbrs))
    }

    /// Calls `f` with the neighbour and relationship ids of `node`'s relationships in `dir` as parallel runs of
    /// contiguous memory (see [`crate::adjacency::AdjLeaf::visit_rel_slices`]). With `Both`, a self-loop appears
    /// once.
    #[inline]
    pub fn visit_rel_slices<B>(
        &self,
        node: NodeId,
        dir: Direction,
        filter: TypeFilter,
        mut f: impl FnMut(IdSlice, IdSlice) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        if let Some(flat) = self.flat_for(node) {
            return flat.visit_slices(node.0, dir, filter, |nbrs, rels, _| f(nbrs, rels));
        }
        let Some((leaf, slot)) = self.node_leaf(node) else { return ControlFlow::Continue(()) };
        match dir {
            Direction::Out => leaf.out.visit_rel_slices(slot, filter, f),
            Direction::In => leaf.inc.visit_rel_slices(slot, filter, f),
            Direction::Both => {
                leaf.out.visit_rel_slices(slot, filter, &mut f)?;
                leaf.inc.visit_rel_slices(slot, filter, |nbrs, rels| {
                    if !nbrs.contains(node.0) {
                        return f(nbrs, rels);
                    }
                    for i in 0..nbrs.len() {
                        let (n, r) = (nbrs.get(i), rels.get(i));
                        if n != node.0 {
                            f(IdSlice::one(&n), IdSlice::one(&r))?;
                        }
                    }
                    ControlFlow::Continue(())
                })
            }
        }
    }

    /// One more than the largest node id that can be live (a bound for dense per-node arrays).
    pub fn node_id_bound(&self) -> u64 {
        self.nodes.last_leaf().map_or(0, |leaf| (leaf + 1) << LEAF_BITS)
    }

    /// One more than the largest relationship id that can be live.
    pub fn rel_id_bound(&self) -> u64 {
        self.rels.last_leaf().map_or(0, |leaf| (leaf + 1) << LEAF_BITS)
    }

    /// Calls `f` with the outgoing relationships of `node` sorted by (type, target, id) (checkpoints rely on it).
    pub fn visit_out_sorted(&self, node: NodeId, mut f: impl FnMut(AdjEntry)) {
        let Some((leaf, slot)) = self.node_leaf(node) else { return };
        if leaf.out.has_delta(slot) {
            leaf.out.merged_sorted(slot).into_iter().for_each(f);
        } else {
            let _ = leaf.out.visit::<()>(slot, TypeFilter::All, |e| {
                f(e);
                ControlFlow::Continue(())
            });
        }
    }

    /// Calls `f` for each relationship between `a` and `b` (leaving `a` for `Out`, entering `a` for `In`).
    pub fn visit_rels_between<B>(
        &self,
        a: NodeId,
        b: NodeId,
        dir: Direction,
        filter: TypeFilter,
        mut f: impl FnMut(RelEntry) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        if let Some(flat) = self.flat_for(a) {
            let ty = flat.rel_type();
            return flat
                .visit_between(a.0, b.0, dir, filter, |rel, dir| f(RelEntry { rel: RelId(rel), ty, nbr: b, dir }));
        }
        let Some((leaf, slot)) = self.node_leaf(a) else {
            return ControlFlow::Continue(());
        };
        if matches!(dir, Direction::Out | Direction::Both) {
            leaf.out.visit_to(slot, b.0, filter, |e| {
                f(RelEntry { rel: RelId(e.rel), ty: e.ty, nbr: b, dir: Direction::Out })
            })?;
        }
        if matches!(dir, Direction::In | Direction::Both) && !(dir == Direction::Both && a == b) {
            leaf.inc.visit_to(slot, b.0, filter, |e| {
                f(RelEntry { rel: RelId(e.rel), ty: e.ty, nbr: b, dir: Direction::In })
            })?;
        }
        ControlFlow::Continue(())
    }

    /// The relationships of `node`, collected.
    pub fn rels_of(&self, node: NodeId, dir: Direction, filter: TypeFilter) -> Vec<RelEntry> {
        let mut out = Vec::new();
        let _ = self.visit_rels::<()>(node, dir, filter, |e| {
            out.push(e);
            ControlFlow::Continue(())
        });
        out
    }

    /// The relationships between `a` and `b`, collected.
    pub fn rels_between(&self, a: NodeId, b: NodeId, dir: Direction, filter: TypeFilter) -> Vec<RelEntry> {
        let mut out = Vec::new();
        let _ = self.visit_rels_between::<()>(a, b, dir, filter, |e| {
            out.push(e);
            ControlFlow::Continue(())
        });
        out
    }

    /// Whether any relationship joins `a` to `b` in `dir`.
    pub fn has_edge(&self, a: NodeId, b: NodeId, dir: Direction, filter: TypeFilter) -> bool {
        self.visit_rels_between(a, b, dir, filter, |_| ControlFlow::Break(())).is_break()
    }

    /// Distinct neighbours of `node`, sorted.
    pub fn neighbours(&self, node: NodeId, dir: Direction, filter: TypeFilter) -> Vec<NodeId> {
        if let Some(flat) = self.flat_for(node) {
            return flat.neighbours(node.0, dir, filter);
        }
        let mut out = Vec::with_capacity(self.degree(node, dir, filter) as usize);
        let _ = self.visit_rels::<()>(node, dir, filter, |e| {
            out.push(e.nbr);
            ControlFlow::Continue(())
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Number of relationships and the sum of their numeric property `weight` (missing or non-numeric counts 0).
    pub fn count_and_weight(&self, node: NodeId, dir: Direction, filter: TypeFilter, weight: PropKeyId) -> (u64, f64) {
        if let Some(answer) = self.flat_for(node).and_then(|f| f.count_and_weight(node.0, dir, filter, weight)) {
            return answer;
        }
        let mut n = 0u64;
        let mut sum = 0.0;
        // A node's relationships often have neighbouring ids (created or imported together): remember the last
        // relationship leaf instead of walking the spine for each one.
        let mut cached: Option<(u64, Option<&RelLeaf>)> = None;
        let _ = self.visit_rels::<()>(node, dir, filter, |e| {
            n += 1;
            let (leaf_index, slot) = split(e.rel.0);
            let leaf = match cached {
                Some((i, leaf)) if i == leaf_index => leaf,
                _ => {
                    let leaf = self.rels.get(leaf_index);
                    cached = Some((leaf_index, leaf));
                    leaf
                }
            };
            if let Some(w) = leaf.and_then(|l| props_get(l.props(slot), weight)).and_then(Value::as_f64) {
                sum += w;
            }
            ControlFlow::Continue(())
        });
        (n, sum)
    }

    /// Calls `f` with every live node id, in id order.
    pub fn visit_nodes<B>(&self, mut f: impl FnMut(NodeId) -> ControlFlow<B>) -> ControlFlow<B> {
        let mut result = ControlFlow::Continue(());
        self.nodes.for_each(|leaf_index, leaf| {
            if result.is_break() {
                return;
            }
            let mut live = leaf.live;
            while live != 0 {
                let slot = live.trailing_zeros() as u64;
                live &= live - 1;
                if let ControlFlow::Break(b) = f(NodeId((leaf_index << LEAF_BITS) | slot)) {
                    result = ControlFlow::Break(b);
                    return;
                }
            }
        });
        result
    }

    /// Calls `f` with every live relationship, in id order.
    pub fn visit_all_rels<B>(&self, mut f: impl FnMut(RelRecord) -> ControlFlow<B>) -> ControlFlow<B> {
        let mut result = ControlFlow::Continue(());
        self.rels.for_each(|leaf_index, leaf| {
            if result.is_break() {
                return;
            }
            let mut live = leaf.live;
            while live != 0 {
                let slot = live.trailing_zeros() as usize;
                live &= live - 1;
                let rec = RelRecord {
                    id: RelId((leaf_index << LEAF_BITS) | slot as u64),
                    ty: leaf.ty[slot],
                    src: NodeId(leaf.src(slot)),
                    dst: NodeId(leaf.dst(slot)),
                };
                if let ControlFlow::Break(b) = f(rec) {
                    result = ControlFlow::Break(b);
                    return;
                }
            }
        });
        result
    }

    /// Calls `f` with every node carrying `label`, in id order.
    pub fn visit_label<B>(&self, label: LabelId, mut f: impl FnMut(NodeId) -> ControlFlow<B>) -> ControlFlow<B> {
        let Some(index) = self.labels.get(label.0 as usize) else {
            return ControlFlow::Continue(());
        };
        let mut result = ControlFlow::Continue(());
        index.bits.for_each(|leaf_index, bits| {
            if result.is_break() {
                return;
            }
            for (w, word) in bits.0.iter().enumerate() {
                let mut word = *word;
                while word != 0 {
                    let bit = word.trailing_zeros() as u64;
                    word &= word - 1;
                    let id = leaf_index * BITS_PER_LEAF as u64 + (w as u64) * 64 + bit;
                    if let ControlFlow::Break(b) = f(NodeId(id)) {
                        result = ControlFlow::Break(b);
                        return;
                    }
                }
            }
        });
        result
    }

    pub fn label_count(&self, label: LabelId) -> u64 {
        self.labels.get(label.0 as usize).map_or(0, |i| i.count)
    }

    pub fn nodes_with_label(&self, label: LabelId) -> Vec<NodeId> {
        let mut out = Vec::with_capacity(self.label_count(label) as usize);
        let _ = self.visit_label::<()>(label, |n| {
            out.push(n);
            ControlFlow::Continue(())
        });
        out
    }

    /// The node with `label` whose unique key equals `value`, when the label declares a unique key.
    pub fn node_by_key(&self, label: LabelId, value: &Value) -> Option<NodeId> {
        self.unique.iter().find(|u| u.label == label).and_then(|u| u.map.get(value)).map(|&id| NodeId(id))
    }

    /// The unique key declared for `label`.
    pub fn unique_key(&self, label: LabelId) -> Option<PropKeyId> {
        self.unique.iter().find(|u| u.label == label).map(|u| u.key)
    }

    pub fn unique_keys(&self) -> Vec<(LabelId, PropKeyId)> {
        self.unique.iter().map(|u| (u.label, u.key)).collect()
    }

    /// The property indexes, as `(label, key)`, in creation order.
    pub fn indexes(&self) -> Vec<(LabelId, PropKeyId)> {
        self.indexes.iter().map(|i| (i.label, i.key)).collect()
    }

    pub fn has_index(&self, label: LabelId, key: PropKeyId) -> bool {
        self.property_index(label, key).is_some()
    }

    /// The property index on `(label, key)`, for visitors and statistics (see [`PropertyIndex`]).
    pub fn property_index(&self, label: LabelId, key: PropKeyId) -> Option<&PropertyIndex> {
        self.indexes.iter().find(|i| i.label == label && i.key == key)
    }

    /// Number of entries in the index on `(label, key)`: the nodes of `label` holding `key`.
    pub fn index_len(&self, label: LabelId, key: PropKeyId) -> Option<usize> {
        self.property_index(label, key).map(PropertyIndex::len)
    }

    /// The nodes of `label` whose property `key` equals `value` under Cypher's `=` (so `1` finds `1.0`; `null`
    /// and `NaN` find nothing), by node id. Empty when there is no such index.
    pub fn index_seek(&self, label: LabelId, key: PropKeyId, value: &Value) -> Vec<NodeId> {
        let mut out = Vec::new();
        if let Some(index) = self.property_index(label, key) {
            let _ = index.visit_eq::<()>(value, |n| {
                out.push(n);
                ControlFlow::Continue(())
            });
        }
        out
    }

    /// The nodes of `label` whose property `key` lies between `lower` and `upper` under Cypher's `<`, `<=`,
    /// ascending by value, then node id. A range never leaves the type of its bounds (numbers, strings, booleans,
    /// one temporal type, lists); see [`PropertyIndex::visit_range`]. Empty when there is no such index.
    pub fn index_range(
        &self,
        label: LabelId,
        key: PropKeyId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Vec<NodeId> {
        let mut out = Vec::new();
        if let Some(index) = self.property_index(label, key) {
            let _ = index.visit_range::<()>(lower, upper, |n| {
                out.push(n);
                ControlFlow::Continue(())
            });
        }
        out
    }

    // ----- writes -----

    /// Checks `op` against this state and applies it; on error nothing has changed.
    pub fn apply(&mut self, op: &Op) -> Result<()> {
        match op {
            Op::Token { .. } => Ok(()),
            Op::CreateNode { id, labels, props } => self.create_node(*id, labels, props),
            Op::CreateEmptyNodes { first, count } => self.create_empty_nodes(*first, *count),
            Op::SetNodeProp { id, key, value } => self.set_node_prop(*id, *key, value.clone()),
            Op::AddLabel { id, label } => self.add_label(*id, *label),
            Op::RemoveLabel { id, label } => self.remove_label(*id, *label),
            Op::DeleteNode { id } => self.delete_node(*id),
            Op::CreateRel { id, ty, src, dst, props } => self.create_rel(*id, *ty, *src, *dst, props),
            Op::SetRelProp { id, key, value } => self.set_rel_prop(*id, *key, value.clone()),
            Op::DeleteRel { id } => self.delete_rel(*id),
            Op::DeclareUniqueKey { label, key } => self.declare_unique_key(*label, *key),
            Op::DropUniqueKey { label, key } => {
                let mut unique = (*self.unique).clone();
                unique.retain(|u| !(u.label == *label && u.key == *key));
                self.unique = Arc::new(unique);
                Ok(())
            }
            Op::CreateIndex { label, key } => self.create_index(*label, *key),
            Op::DropIndex { label, key } => {
                if !self.has_index(*label, *key) {
                    return Err(StorageError::ConstraintViolation(format!(
                        "there is no index on label {} and key {}",
                        label.0, key.0
                    )));
                }
                Arc::make_mut(&mut self.indexes).retain(|i| !(i.label == *label && i.key == *key));
                Ok(())
            }
        }
    }

    fn create_index(&mut self, label: LabelId, key: PropKeyId) -> Result<()> {
        if self.has_index(label, key) {
            return Err(StorageError::ConstraintViolation(format!(
                "an index on label {} and key {} already exists",
                label.0, key.0
            )));
        }
        let mut entries = Vec::new();
        let _ = self.visit_label::<()>(label, |n| {
            if let Some(k) = self.node_prop(n, key).and_then(crate::index::IndexKey::from_value) {
                entries.push((k, n.0));
            }
            ControlFlow::Continue(())
        });
        Arc::make_mut(&mut self.indexes).push(PropertyIndex::build(label, key, entries));
        Ok(())
    }

    /// Adds (`present`) or removes the entry of node `id` with `value` for `key` in the property indexes of
    /// `labels`.
    fn update_indexes(&mut self, id: NodeId, labels: &[LabelId], key: PropKeyId, value: &Value, present: bool) {
        if !self.indexes.iter().any(|i| i.key == key && labels.contains(&i.label)) {
            return;
        }
        for index in Arc::make_mut(&mut self.indexes).iter_mut() {
            if index.key == key && labels.contains(&index.label) {
                if present {
                    index.insert(value, id);
                } else {
                    index.remove(value, id);
                }
            }
        }
    }

    fn mark_dirty(&mut self, leaf: u64) {
        if let Some(flat) = &self.flat {
            flat.mark_changed(leaf, self.version);
        }
        if self.dirty.last() != Some(&leaf) {
            self.dirty.push(leaf);
        }
    }

    /// Folds unique-key maps that a transaction grew a lot (see [`crate::keymap::KeyMap::wants_fold_at_commit`]).
    /// Called by the committing transaction before it takes the commit lock, so other committers never wait
    /// for a fold.
    pub(crate) fn fold_large_key_maps(&mut self) {
        if self.unique.iter().any(|u| u.map.wants_fold_at_commit()) {
            for u in Arc::make_mut(&mut self.unique).iter_mut().filter(|u| u.map.wants_fold_at_commit()) {
                u.map.fold();
            }
        }
    }

    /// Sorts the adjacency deltas touched since the last seal and folds oversized ones into their bases.
    pub fn seal(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        let mut released = 0;
        for leaf_index in dirty {
            if self.nodes.get(leaf_index).is_some() {
                released += self.settle_leaf(leaf_index, false);
            }
        }
        self.release_flat(released);
    }

    /// Seals node leaf `index`'s adjacency (with `rebuild`, folds every delta into a new base), and removes the
    /// leaf once it holds nothing. Returns how many entries of the flat arrays its blocks stopped sharing.
    pub(crate) fn settle_leaf(&mut self, index: u64, rebuild: bool) -> usize {
        let leaf = self.nodes.get_mut(index);
        let shared = leaf.out.shared_len() + leaf.inc.shared_len();
        if rebuild {
            leaf.out.rebuild();
            leaf.inc.rebuild();
        } else {
            leaf.out.seal();
            leaf.inc.seal();
        }
        if leaf.live == 0 && leaf.out.is_empty() && leaf.inc.is_empty() {
            self.nodes.remove(index);
            shared
        } else {
            shared - (leaf.out.shared_len() + leaf.inc.shared_len())
        }
    }

    /// Counts `released` entries of the flat arrays as no longer shared, and drops the arrays once most are.
    pub(crate) fn release_flat(&mut self, released: usize) {
        if released > 0 && self.flat.as_ref().is_some_and(|f| f.release(released)) {
            self.drop_flat();
        }
    }

    /// Detaches the flat adjacency, giving every leaf block that shares its arrays ids of its own, so that the
    /// arrays are freed once the snapshots that still use them are gone (deleting most of a bulk-loaded graph
    /// must return its memory). Costs a copy of the unchanged leaves' ids, once.
    pub(crate) fn drop_flat(&mut self) {
        if self.flat.take().is_none() {
            return;
        }
        let mut shared = Vec::new();
        self.nodes.for_each(|index, leaf| {
            if leaf.out.has_shared_base() || leaf.inc.has_shared_base() {
                shared.push(index);
            }
        });
        for index in shared {
            let leaf = self.nodes.get_mut(index);
            leaf.out.own_base();
            leaf.inc.own_base();
        }
    }

    fn check_unique(&self, id: NodeId, labels: &[LabelId], key: PropKeyId, value: &Value) -> Result<()> {
        for u in self.unique.iter() {
            if u.key == key && labels.contains(&u.label) {
                if let Some(&holder) = u.map.get(value) {
                    if holder != id.0 {
                        return Err(StorageError::ConstraintViolation(format!(
                            "node {holder} already has label {} and key {} = {value:?}",
                            u.label.0, u.key.0
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn index_key(&mut self, id: NodeId, labels: &[LabelId], key: PropKeyId, value: Option<&Value>, present: bool) {
        if value.is_none() || !self.unique.iter().any(|u| u.key == key && labels.contains(&u.label)) {
            return;
        }
        let value = value.expect("checked");
        for u in Arc::make_mut(&mut self.unique).iter_mut() {
            if u.key == key && labels.contains(&u.label) {
                if present {
                    u.map.insert(value.clone(), id.0);
                } else if u.map.get(value) == Some(&id.0) {
                    u.map.remove(value);
                }
            }
        }
    }

    fn set_label_bit(&mut self, label: LabelId, id: NodeId, on: bool) {
        let labels = Arc::make_mut(&mut self.labels);
        if labels.len() <= label.0 as usize {
            labels.resize_with(label.0 as usize + 1, LabelIndex::default);
        }
        let index = &mut labels[label.0 as usize];
        let leaf_index = id.0 / BITS_PER_LEAF as u64;
        let bit = (id.0 % BITS_PER_LEAF as u64) as usize;
        let leaf = index.bits.get_mut(leaf_index);
        let mask = 1u64 << (bit % 64);
        let was = leaf.0[bit / 64] & mask != 0;
        if on && !was {
            leaf.0[bit / 64] |= mask;
            index.count += 1;
        } else if !on && was {
            leaf.0[bit / 64] &= !mask;
            index.count -= 1;
            if leaf.is_empty() {
                index.bits.remove(leaf_index);
            }
        }
    }

    fn validate_props(props: &[(PropKeyId, Value)]) -> Result<()> {
        for (_, v) in props {
            v.validate().map_err(StorageError::InvalidValue)?;
        }
        Ok(())
    }

    fn create_node(&mut self, id: NodeId, labels: &[LabelId], props: &[(PropKeyId, Value)]) -> Result<()> {
        if self.node_exists(id) {
            return Err(StorageError::ConstraintViolation(format!("{id} already exists")));
        }
        Self::validate_props(props)?;
        let mut label_set: Labels = labels.iter().copied().collect();
        if label_set.len() > 1 {
            label_set.sort_unstable();
            label_set.dedup();
        }
        let map = if props.is_empty() { PropMap::default() } else { PropMap::from_pairs(props.to_vec()) };
        for (k, v) in map.iter() {
            self.check_unique(id, &label_set, k, v)?;
        }
        for (k, v) in map.iter() {
            self.index_key(id, &label_set, k, Some(v), true);
            self.update_indexes(id, &label_set, k, v, true);
        }
        for &l in &label_set {
            self.set_label_bit(l, id, true);
        }
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        leaf.live |= 1 << slot;
        leaf.clear_slot(slot);
        if !label_set.is_empty() {
            *leaf.labels_mut(slot) = label_set;
        }
        if !map.is_empty() {
            *leaf.props_mut(slot) = Some(Arc::new(map));
        }
        self.node_count += 1;
        Ok(())
    }

    /// Creates the nodes `first .. first + count` without labels or properties, a leaf at a time; all or none.
    pub(crate) fn create_empty_nodes(&mut self, first: NodeId, count: u64) -> Result<()> {
        let end = first.0.checked_add(count).ok_or_else(|| {
            StorageError::InvalidValue(format!("{count} node ids from {} run past the largest id", first.0))
        })?;
        // (leaf index, first id in the leaf, the run's slots there), one per leaf the run touches.
        let chunks = || {
            let mut id = first.0;
            std::iter::from_fn(move || {
                (id < end).then(|| {
                    let (leaf_index, slot) = split(id);
                    let n = (LEAF_SIZE as u64 - slot as u64).min(end - id);
                    let chunk = (leaf_index, id, slot_mask(slot, n));
                    id += n;
                    chunk
                })
            })
        };
        let taken = |leaf: &NodeLeaf, id: u64, mask: u64| {
            let slot = (id as usize) & (LEAF_SIZE - 1);
            let bit = (leaf.live & mask).trailing_zeros() as u64;
            StorageError::ConstraintViolation(format!("{} already exists", NodeId(id - slot as u64 + bit)))
        };
        // A run over several leaves is checked before any changes, so a refused one leaves the state as it was;
        // a run in one leaf (a single node, usually) is checked below, in the one walk down the spine.
        if chunks().nth(1).is_some() {
            for (leaf_index, id, mask) in chunks() {
                if let Some(leaf) = self.nodes.get(leaf_index).filter(|l| l.live & mask != 0) {
                    return Err(taken(leaf, id, mask));
                }
            }
        }
        for (leaf_index, id, mask) in chunks() {
            let leaf = self.nodes.get_mut(leaf_index);
            if leaf.live & mask != 0 {
                return Err(taken(leaf, id, mask));
            }
            leaf.live |= mask;
            leaf.clear_slots(mask);
        }
        self.node_count += count;
        Ok(())
    }

    fn set_node_prop(&mut self, id: NodeId, key: PropKeyId, value: Value) -> Result<()> {
        value.validate().map_err(StorageError::InvalidValue)?;
        let labels: Labels = self.node_labels(id).ok_or(StorageError::NodeNotFound(id))?.iter().copied().collect();
        if !value.is_null() {
            self.check_unique(id, &labels, key, &value)?;
        }
        let old = self.node_prop(id, key).cloned();
        self.index_key(id, &labels, key, old.as_ref(), false);
        self.index_key(id, &labels, key, Some(&value).filter(|v| !v.is_null()), true);
        if let Some(old) = &old {
            self.update_indexes(id, &labels, key, old, false);
        }
        self.update_indexes(id, &labels, key, &value, true);
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        props_set(leaf.props_mut(slot), key, value);
        Ok(())
    }

    fn add_label(&mut self, id: NodeId, label: LabelId) -> Result<()> {
        let labels = self.node_labels(id).ok_or(StorageError::NodeNotFound(id))?;
        if labels.contains(&label) {
            return Ok(());
        }
        let props: Vec<(PropKeyId, Value)> =
            self.node_props(id).flatten().map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
        for (k, v) in &props {
            self.check_unique(id, &[label], *k, v)?;
        }
        for (k, v) in &props {
            self.index_key(id, &[label], *k, Some(v), true);
            self.update_indexes(id, &[label], *k, v, true);
        }
        self.set_label_bit(label, id, true);
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        let set = leaf.labels_mut(slot);
        let pos = set.binary_search(&label).unwrap_or_else(|p| p);
        set.insert(pos, label);
        Ok(())
    }

    fn remove_label(&mut self, id: NodeId, label: LabelId) -> Result<()> {
        let labels = self.node_labels(id).ok_or(StorageError::NodeNotFound(id))?;
        if !labels.contains(&label) {
            return Ok(());
        }
        let props: Vec<(PropKeyId, Value)> =
            self.node_props(id).flatten().map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
        for (k, v) in &props {
            self.index_key(id, &[label], *k, Some(v), false);
            self.update_indexes(id, &[label], *k, v, false);
        }
        self.set_label_bit(label, id, false);
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        leaf.labels_mut(slot).retain(|l| *l != label);
        Ok(())
    }

    fn delete_node(&mut self, id: NodeId) -> Result<()> {
        let (leaf, slot) = self.node_leaf(id).ok_or(StorageError::NodeNotFound(id))?;
        let degree = leaf.out.degree(slot, TypeFilter::All) + leaf.inc.degree(slot, TypeFilter::All);
        if degree > 0 {
            return Err(StorageError::NodeHasRelationships(id, self.degree(id, Direction::Both, TypeFilter::All)));
        }
        let labels: Labels = leaf.labels(slot).iter().copied().collect();
        let props: Vec<(PropKeyId, Value)> =
            leaf.props(slot).as_deref().map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
        for (k, v) in &props {
            self.index_key(id, &labels, *k, Some(v), false);
            self.update_indexes(id, &labels, *k, v, false);
        }
        for &l in &labels {
            self.set_label_bit(l, id, false);
        }
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        leaf.live &= !(1 << slot);
        leaf.clear_slot(slot);
        let empty = leaf.live == 0 && leaf.out.is_empty() && leaf.inc.is_empty();
        if empty {
            self.nodes.remove(leaf_index);
        }
        self.node_count -= 1;
        Ok(())
    }

    fn create_rel(
        &mut self,
        id: RelId,
        ty: TypeId,
        src: NodeId,
        dst: NodeId,
        props: &[(PropKeyId, Value)],
    ) -> Result<()> {
        if self.rel_exists(id) {
            return Err(StorageError::ConstraintViolation(format!("{id} already exists")));
        }
        if !self.node_exists(src) {
            return Err(StorageError::NodeNotFound(src));
        }
        if !self.node_exists(dst) {
            return Err(StorageError::NodeNotFound(dst));
        }
        Self::validate_props(props)?;
        let (leaf_index, slot) = split(id.0);
        let leaf = self.rels.get_mut(leaf_index);
        leaf.ensure_slots();
        leaf.live |= 1 << slot;
        leaf.ty[slot] = ty;
        leaf.set_ends(slot, src.0, dst.0);
        let map = PropMap::from_pairs(props.to_vec());
        if !map.is_empty() {
            *leaf.props_mut(slot) = Some(Arc::new(map));
        } else if !leaf.props.is_empty() {
            leaf.props[slot] = None;
        }
        let (src_leaf, src_slot) = split(src.0);
        let leaf = self.nodes.get_mut(src_leaf);
        leaf.out.add(src_slot, AdjEntry { ty, nbr: dst.0, rel: id.0 });
        if src == dst {
            leaf.loops |= 1 << src_slot;
        }
        self.mark_dirty(src_leaf);
        let (dst_leaf, dst_slot) = split(dst.0);
        self.nodes.get_mut(dst_leaf).inc.add(dst_slot, AdjEntry { ty, nbr: src.0, rel: id.0 });
        self.mark_dirty(dst_leaf);
        self.rel_count += 1;
        Ok(())
    }

    fn set_rel_prop(&mut self, id: RelId, key: PropKeyId, value: Value) -> Result<()> {
        value.validate().map_err(StorageError::InvalidValue)?;
        if !self.rel_exists(id) {
            return Err(StorageError::RelNotFound(id));
        }
        if let (Some(flat), Some(rec)) = (&self.flat, self.rel(id)) {
            // The flat arrays may hold this relationship's properties for both its ends.
            flat.mark_changed(split(rec.src.0).0, self.version);
            flat.mark_changed(split(rec.dst.0).0, self.version);
        }
        let (leaf_index, slot) = split(id.0);
        let leaf = self.rels.get_mut(leaf_index);
        if value.is_null() && leaf.props.is_empty() {
            return Ok(());
        }
        props_set(leaf.props_mut(slot), key, value);
        Ok(())
    }

    fn delete_rel(&mut self, id: RelId) -> Result<()> {
        let rec = self.rel(id).ok_or(StorageError::RelNotFound(id))?;
        let (leaf_index, slot) = split(id.0);
        let leaf = self.rels.get_mut(leaf_index);
        leaf.live &= !(1 << slot);
        if !leaf.props.is_empty() {
            leaf.props[slot] = None;
        }
        if leaf.live == 0 {
            self.rels.remove(leaf_index);
        }
        let (src_leaf, src_slot) = split(rec.src.0);
        let removed_out =
            self.nodes.get_mut(src_leaf).out.remove(src_slot, AdjEntry { ty: rec.ty, nbr: rec.dst.0, rel: id.0 });
        self.mark_dirty(src_leaf);
        let (dst_leaf, dst_slot) = split(rec.dst.0);
        let removed_in =
            self.nodes.get_mut(dst_leaf).inc.remove(dst_slot, AdjEntry { ty: rec.ty, nbr: rec.src.0, rel: id.0 });
        self.mark_dirty(dst_leaf);
        debug_assert!(removed_out && removed_in, "adjacency out of step with {id}");
        if rec.src == rec.dst {
            let leaf = self.nodes.get_mut(src_leaf);
            let mut more = false;
            let _ = leaf.out.visit_to::<()>(src_slot, rec.src.0, TypeFilter::All, |_| {
                more = true;
                ControlFlow::Break(())
            });
            if !more {
                leaf.loops &= !(1 << src_slot);
            }
        }
        self.rel_count -= 1;
        Ok(())
    }

    fn declare_unique_key(&mut self, label: LabelId, key: PropKeyId) -> Result<()> {
        if let Some(existing) = self.unique.iter().find(|u| u.label == label) {
            if existing.key == key {
                return Ok(());
            }
            return Err(StorageError::ConstraintViolation(format!(
                "label {} already declares unique key {}",
                label.0, existing.key.0
            )));
        }
        let mut entries = Vec::new();
        let _ = self.visit_label::<()>(label, |n| {
            if let Some(v) = self.node_prop(n, key) {
                entries.push((v.clone(), n.0));
            }
            ControlFlow::Continue(())
        });
        let map = crate::keymap::KeyMap::build(entries).map_err(|(a, b, v)| {
            StorageError::ConstraintViolation(format!(
                "cannot declare the unique key: nodes {a} and {b} share the value {v:?}"
            ))
        })?;
        Arc::make_mut(&mut self.unique).push(UniqueIndex { label, key, map });
        Ok(())
    }

    /// Approximate heap bytes of adjacency bases and deltas (for `info` and the memory benchmark).
    pub fn adjacency_bytes(&self) -> usize {
        let mut total = 0;
        self.nodes.for_each(|_, leaf| total += leaf.out.base_bytes() + leaf.inc.base_bytes());
        total
    }
}
