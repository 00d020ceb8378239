//! Reads of a [`GraphState`]: records, adjacency (through the flat arrays when they cover a node, else through
//! its leaf), labels, keys and indexes.

use super::*;
use std::borrow::Cow;

impl GraphState {
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
    pub(super) fn node_leaf(&self, id: NodeId) -> Option<(&NodeLeaf, usize)> {
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

    pub fn rel_props(&self, id: RelId) -> Option<Option<Cow<'_, PropMap>>> {
        self.rel_leaf(id).map(|(l, s)| l.props().get(s))
    }

    pub fn rel_prop(&self, id: RelId, key: PropKeyId) -> Option<Value> {
        self.rel_leaf(id).and_then(|(l, s)| l.props().value(s, key))
    }

    /// A relationship's property as a float, when it is a number (an edge's weight).
    pub fn rel_prop_f64(&self, id: RelId, key: PropKeyId) -> Option<f64> {
        self.rel_leaf(id).and_then(|(l, s)| l.props().number(s, key))
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

    /// [`GraphState::prefetch_adjacency`] for a walk that reads relationship ids as well as neighbours: in a
    /// bulk-loaded adjacency those are a separate array, whose line is requested too.
    #[inline]
    pub fn prefetch_rel_entries(&self, node: NodeId, dir: Direction) {
        match self.flat_for(node) {
            Some(flat) => flat.prefetch_rel_entries(node.0, dir),
            None => self.each_adjacency(node, dir, AdjLeaf::prefetch),
        }
    }

    /// [`GraphState::prefetch_rel_entries`] for a walk that reads weights from the flat arrays
    /// ([`GraphState::weighted_neighbour_runs`]) instead of relationship ids.
    #[inline]
    pub fn prefetch_weighted_entries(&self, node: NodeId, dir: Direction) {
        match self.flat_for(node) {
            Some(flat) => flat.prefetch_weighted_entries(node.0, dir),
            None => self.each_adjacency(node, dir, AdjLeaf::prefetch),
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

    /// `node`'s neighbour ids in `dir` as two sorted runs borrowed from the flat arrays (outgoing, then incoming),
    /// when those cover the node; `None` otherwise (then [`GraphState::visit_neighbour_slices`] reads them).
    /// Repeats are left in: a neighbour joined twice, or on both sides, appears each time.
    #[inline]
    pub fn sorted_neighbour_runs(&self, node: NodeId, dir: Direction, filter: TypeFilter) -> Option<(&[u32], &[u32])> {
        self.flat_for(node).map(|flat| flat.sorted_runs(node.0, dir, filter))
    }

    /// `node`'s neighbour ids in `dir` as runs from the flat arrays (outgoing, then incoming) with each
    /// relationship's value of `key` beside its neighbour (NaN where it has none): one contiguous read per run
    /// instead of a read per relationship. `None` when the arrays do not cover the node or do not hold that
    /// key's values, and for `Both` at a node with a self-loop; then [`GraphState::visit_rel_slices`] and the
    /// relationships' properties answer.
    #[inline]
    pub fn weighted_neighbour_runs(
        &self,
        node: NodeId,
        dir: Direction,
        filter: TypeFilter,
        key: PropKeyId,
    ) -> Option<[(&[u32], &[f64]); 2]> {
        self.flat_for(node)?.weighted_runs(node.0, dir, filter, key)
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
                leaf.inc.visit_rel_slices(slot, filter, |nbrs, rels| without_neighbour(nbrs, rels, node.0, &mut f))
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
            let b_covered = self.flat_for(b).is_some();
            return flat.visit_between(a.0, b.0, dir, filter, b_covered, |rel, dir| {
                f(RelEntry { rel: RelId(rel), ty, nbr: b, dir })
            });
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

    /// [`GraphState::count_and_weight`] when the flat arrays answer it (in one direction, from two loads: the
    /// node's offsets and its stored sum); `None` otherwise.
    #[inline]
    pub fn flat_count_and_weight(
        &self,
        node: NodeId,
        dir: Direction,
        filter: TypeFilter,
        weight: PropKeyId,
    ) -> Option<(u64, f64)> {
        self.flat_for(node)?.count_and_weight(node.0, dir, filter, weight)
    }

    /// Requests the lines [`GraphState::flat_count_and_weight`] reads for `node` beyond its offsets.
    #[inline]
    pub fn prefetch_weight_sums(&self, node: NodeId, dir: Direction) {
        if let Some(flat) = self.flat_for(node) {
            flat.prefetch_weight_sums(node.0, dir);
        }
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
            if let Some(w) = leaf.and_then(|l| l.props().number(slot, weight)) {
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

    /// The node with `label` whose key (its first declared unique key) equals `value`, when the label declares
    /// a unique key.
    pub fn node_by_key(&self, label: LabelId, value: &Value) -> Option<NodeId> {
        self.unique.iter().find(|u| u.label == label).and_then(|u| u.map.get(value)).map(|&id| NodeId(id))
    }

    /// The node with `label` whose unique property `key` equals `value`, when `(label, key)` is declared unique.
    pub fn node_by_unique(&self, label: LabelId, key: PropKeyId, value: &Value) -> Option<NodeId> {
        self.unique_index(label, key).and_then(|u| u.map.get(value)).map(|&id| NodeId(id))
    }

    /// The key of `label`: the first of its unique keys to be declared. A label may declare more unique
    /// properties; this one is what imports and the edge-list API address nodes by.
    pub fn unique_key(&self, label: LabelId) -> Option<PropKeyId> {
        self.unique.iter().find(|u| u.label == label).map(|u| u.key)
    }

    /// Whether `(label, key)` is declared unique.
    pub fn has_unique_key(&self, label: LabelId, key: PropKeyId) -> bool {
        self.unique_index(label, key).is_some()
    }

    fn unique_index(&self, label: LabelId, key: PropKeyId) -> Option<&UniqueIndex> {
        self.unique.iter().find(|u| u.label == label && u.key == key)
    }

    /// Every declared unique key, as `(label, key)`, in declaration order.
    pub fn unique_keys(&self) -> Vec<(LabelId, PropKeyId)> {
        self.unique.iter().map(|u| (u.label, u.key)).collect()
    }

    /// The name the unique key `(label, key)` was given when it was declared, if it has one.
    pub fn unique_key_name(&self, label: LabelId, key: PropKeyId) -> Option<Arc<str>> {
        self.unique_index(label, key).and_then(|u| u.name.clone())
    }

    /// The name the index on `(label, key)` was given when it was created, if it has one.
    pub fn index_name(&self, label: LabelId, key: PropKeyId) -> Option<Arc<str>> {
        self.property_index(label, key).and_then(|i| i.name.clone())
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

    /// The relationship property indexes, as `(type, key)`, in creation order.
    pub fn rel_indexes(&self) -> Vec<(TypeId, PropKeyId)> {
        self.rel_indexes.iter().map(|i| (i.ty, i.key)).collect()
    }

    pub fn has_rel_index(&self, ty: TypeId, key: PropKeyId) -> bool {
        self.rel_property_index(ty, key).is_some()
    }

    /// The property index on the relationships of type `ty` holding `key` (see [`RelPropertyIndex`]).
    pub fn rel_property_index(&self, ty: TypeId, key: PropKeyId) -> Option<&RelPropertyIndex> {
        self.rel_indexes.iter().find(|i| i.ty == ty && i.key == key)
    }

    /// The name the relationship index on `(ty, key)` was given when it was created, if it has one.
    pub fn rel_index_name(&self, ty: TypeId, key: PropKeyId) -> Option<Arc<str>> {
        self.rel_property_index(ty, key).and_then(|i| i.name.clone())
    }

    /// The operations that declare this state's unique keys, indexes and constraints, with their names: how a
    /// state built apart (a bulk load) takes them over.
    pub fn schema_ops(&self) -> Vec<Op> {
        let name = |n: &Option<Arc<str>>| n.as_deref().map(str::to_owned);
        let unique =
            self.unique.iter().map(|u| Op::DeclareUniqueKey { label: u.label, key: u.key, name: name(&u.name) });
        let indexes = self.indexes.iter().map(|i| Op::CreateIndex { label: i.label, key: i.key, name: name(&i.name) });
        let rel_indexes = self.rel_indexes.iter().map(|i| Op::CreateRelIndex {
            ty: i.ty,
            key: i.key,
            name: name(&i.name),
            unique: i.unique,
        });
        let composites = self.composites.iter().map(|i| Op::CreateCompositeIndex {
            label: i.label,
            keys: i.keys.clone(),
            name: name(&i.name),
            unique: i.unique,
        });
        unique.chain(indexes).chain(rel_indexes).chain(composites).collect()
    }

    /// Whether the relationship property index on `(ty, key)` backs a uniqueness constraint.
    pub fn rel_index_is_unique(&self, ty: TypeId, key: PropKeyId) -> bool {
        self.rel_property_index(ty, key).is_some_and(|i| i.unique)
    }

    /// The relationships of type `ty` whose property `key` equals `value` under Cypher's `=`, by id. Empty when
    /// there is no such index.
    pub fn rel_index_seek(&self, ty: TypeId, key: PropKeyId, value: &Value) -> Vec<RelId> {
        gathered(|f| self.rel_property_index(ty, key).map(|i| i.visit_eq(value, f)))
    }

    /// The relationships of type `ty` whose property `key` lies between `lower` and `upper`, ascending by value,
    /// then id (see [`GraphState::index_range`]). Empty when there is no such index.
    pub fn rel_index_range(
        &self,
        ty: TypeId,
        key: PropKeyId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Vec<RelId> {
        gathered(|f| self.rel_property_index(ty, key).map(|i| i.visit_range(lower, upper, f)))
    }

    /// Number of entries in the index on `(label, key)`: the nodes of `label` holding `key`.
    pub fn index_len(&self, label: LabelId, key: PropKeyId) -> Option<usize> {
        self.property_index(label, key).map(PropertyIndex::len)
    }

    /// The nodes of `label` whose property `key` equals `value` under Cypher's `=` (so `1` finds `1.0`; `null`
    /// and `NaN` find nothing), by node id. Empty when there is no such index.
    pub fn index_seek(&self, label: LabelId, key: PropKeyId, value: &Value) -> Vec<NodeId> {
        gathered(|f| self.property_index(label, key).map(|i| i.visit_eq(value, f)))
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
        gathered(|f| self.property_index(label, key).map(|i| i.visit_range(lower, upper, f)))
    }
}

/// What a visitor hands to the function `visit` gives it, in order (nothing when `visit` has no index to ask).
pub(super) fn gathered<T>(
    visit: impl FnOnce(&mut dyn FnMut(T) -> ControlFlow<()>) -> Option<ControlFlow<()>>,
) -> Vec<T> {
    let mut out = Vec::new();
    let _ = visit(&mut |item| {
        out.push(item);
        ControlFlow::Continue(())
    });
    out
}
