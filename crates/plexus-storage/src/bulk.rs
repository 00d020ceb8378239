//! Building a whole graph state at once (checkpoint load, bulk import): leaves are filled directly and every
//! adjacency base comes from one bucketed sort per direction ([`crate::bulk_adjacency`]), without transactions or
//! per-relationship deltas. Three entry points, by how the relationships arrive: records ([`build_state`], any
//! ids), packed 32-bit records with properties apart ([`build_state_packed`], checkpoint loading), and keyed edge
//! lists as columns ([`build_edge_list`], the Python package's `import_edges` and `import_csv` into an empty
//! database; `plexus import --edges` writes its checkpoint without a graph, [`crate::edge_list_image`]).

use std::sync::Arc;

use crate::adjacency::{AdjBase, AdjEntry, AdjLeaf};
use crate::bulk_adjacency::LeafAdjacency;
use crate::error::{Result, StorageError};
use crate::graph::{GraphState, RelRecord};
use crate::ids::{LabelId, NodeId, PropKeyId, RelId, TypeId};
use crate::idvec::SharedArray;
use crate::keymap::KeyMap;
use crate::pvec::PVec;
use crate::records::{BitLeaf, Labels, NodeLeaf, PropMap, RelLeaf, BITS_PER_LEAF};
use crate::rel_props::{NumberKind, RelPropColumn};
use crate::value::Value;
use crate::{LEAF_BITS, LEAF_SIZE};

/// A node to load.
pub struct NodeInput {
    pub id: NodeId,
    pub labels: Labels,
    pub props: Option<Arc<PropMap>>,
}

/// A relationship to load.
pub struct RelInput {
    pub rec: RelRecord,
    pub props: Option<Arc<PropMap>>,
}

/// Builds a state at `version` from records; ids must be unique and relationships must join loaded nodes.
pub fn build_state(
    version: u64,
    nodes: Vec<NodeInput>,
    rels: Vec<RelInput>,
    unique_keys: &[(LabelId, PropKeyId)],
) -> Result<GraphState> {
    add_records(build_nodes(version, nodes, unique_keys)?, rels)
}

/// A state holding only its nodes, the first half of a bulk build: a checkpoint load builds it while it decodes
/// the relationships.
pub(crate) struct BuiltNodes {
    state: GraphState,
    /// Each leaf's live mask by leaf index, when ids are dense enough for a flat table.
    live: Option<Vec<u64>>,
}

/// The relationships' half of [`build_state`].
pub(crate) fn add_records(nodes: BuiltNodes, mut rels: Vec<RelInput>) -> Result<GraphState> {
    // Importers and checkpoints hand records over in id order already: checking is one pass, sorting is not.
    if !rels.is_sorted_by_key(|r| r.rec.id) {
        rels.sort_unstable_by_key(|r| r.rec.id);
    }
    if let Some(w) = rels.windows(2).find(|w| w[0].rec.id == w[1].rec.id) {
        return Err(StorageError::ConstraintViolation(format!("{} appears twice", w[0].rec.id)));
    }
    let BuiltNodes { mut state, live } = nodes;
    for r in &rels {
        for end in [r.rec.src, r.rec.dst] {
            if !node_live(&state, &live, end) {
                return Err(StorageError::NodeNotFound(end));
            }
        }
    }
    let node_bound = state.node_id_bound() as usize;
    let narrow = node_bound <= 1 << 32 && rels.last().is_none_or(|r| r.rec.id.0 <= u32::MAX as u64);
    if narrow {
        install_built_adjacency(&mut state, &Records(&rels), node_bound);
    } else {
        install_adjacency(&mut state, &rels, node_bound, true);
        install_adjacency(&mut state, &rels, node_bound, false);
    }
    fill_rels(&mut state, rels);
    // A graph of one relationship type also gets flat arrays its reads can go to directly.
    crate::flat::FlatAdjacency::attach(&mut state);
    Ok(state)
}

/// A relationship whose id, type and ends fit 32 bits: 16 bytes instead of a 40-byte [`RelInput`] (checkpoint
/// loading decodes into these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedRel {
    pub id: u32,
    pub ty: u32,
    pub src: u32,
    pub dst: u32,
}

/// The properties of the relationships of a packed build that have any, sorted by id.
pub enum PackedRelProps {
    /// A map per relationship.
    Maps(Vec<(u64, Option<PropMap>)>),
    /// One float under `key` per relationship listed (a weighted edge list's shape), `values[i]` that of
    /// relationship `ids[i]`: no map per relationship is made, and the leaves' columns fill straight from it.
    Floats { key: PropKeyId, ids: Vec<u64>, values: Vec<f64> },
}

impl PackedRelProps {
    /// The properties as a map per relationship.
    pub fn into_maps(self) -> Vec<(u64, Option<PropMap>)> {
        match self {
            PackedRelProps::Maps(maps) => maps,
            PackedRelProps::Floats { key, ids, values } => {
                ids.into_iter().zip(values).map(|(id, f)| (id, Some(PropMap::single(key, Value::Float(f))))).collect()
            }
        }
    }
}

/// [`build_state`] for relationships given packed, with the properties of those that have any, sorted by id.
pub fn build_state_packed(
    version: u64,
    nodes: Vec<NodeInput>,
    rels: Vec<PackedRel>,
    rel_props: Vec<(u64, Option<PropMap>)>,
    unique_keys: &[(LabelId, PropKeyId)],
) -> Result<GraphState> {
    add_packed(build_nodes(version, nodes, unique_keys)?, rels, PackedRelProps::Maps(rel_props))
}

/// The relationships' half of [`build_state_packed`].
pub(crate) fn add_packed(nodes: BuiltNodes, mut rels: Vec<PackedRel>, rel_props: PackedRelProps) -> Result<GraphState> {
    if !rels.is_sorted_by_key(|r| r.id) {
        rels.sort_unstable_by_key(|r| r.id);
    }
    if let Some(w) = rels.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(StorageError::ConstraintViolation(format!("relationship {} appears twice", w[0].id)));
    }
    let BuiltNodes { mut state, live } = nodes;
    for r in &rels {
        for end in [r.src, r.dst] {
            if !node_live(&state, &live, NodeId(end as u64)) {
                return Err(StorageError::NodeNotFound(NodeId(end as u64)));
            }
        }
    }
    let node_bound = state.node_id_bound() as usize;
    install_built_adjacency(&mut state, &Packed(&rels), node_bound);
    let no_such =
        |id: u64| StorageError::ConstraintViolation(format!("properties for relationship {id}, which does not exist"));
    let (mut maps, mut floats) = match rel_props {
        PackedRelProps::Maps(maps) => (Some(maps.into_iter().peekable()), None),
        PackedRelProps::Floats { key, ids, values } => (None, Some((key, ids, values))),
    };
    // Floats: the next one to place, and whether every relationship got one (ids dense from zero), in which
    // case the flat arrays take the values as they are instead of reading them back from the leaves.
    let (mut next_float, mut every_rel_weighted) = (0usize, true);
    let mut per_type: Vec<u64> = Vec::new();
    for chunk in rels.chunk_by(|a, b| a.id >> LEAF_BITS == b.id >> LEAF_BITS) {
        let leaf = state.rels.get_mut((chunk[0].id >> LEAF_BITS) as u64);
        leaf.ensure_slots();
        let (mut present, mut bits) = (0u64, [0u64; LEAF_SIZE]);
        for r in chunk {
            let slot = r.id as usize & (LEAF_SIZE - 1);
            leaf.live |= 1 << slot;
            leaf.ty[slot] = TypeId(r.ty);
            leaf.set_ends(slot, r.src as u64, r.dst as u64);
            if let Some(props) = maps.as_mut() {
                while let Some((id, p)) = props.next_if(|(id, _)| *id <= r.id as u64) {
                    if id != r.id as u64 {
                        return Err(no_such(id));
                    }
                    if let Some(map) = p {
                        leaf.props_mut().set_map(slot, map);
                    }
                }
            } else if let Some((_, ids, values)) = &floats {
                match ids.get(next_float) {
                    Some(&id) if id == r.id as u64 => {
                        present |= 1 << slot;
                        bits[slot] = values[next_float].to_bits();
                        next_float += 1;
                    }
                    Some(&id) if id < r.id as u64 => return Err(no_such(id)),
                    _ => every_rel_weighted = false,
                }
            }
        }
        if let (Some((key, _, _)), true) = (&floats, present != 0) {
            *leaf.props_mut() =
                RelPropColumn::Numbers { key: *key, kind: NumberKind::Float, present, bits: Arc::new(bits) };
        }
        state.rel_count += chunk.len() as u64;
        for r in chunk {
            let ty = r.ty as usize;
            if per_type.len() <= ty {
                per_type.resize(ty + 1, 0);
            }
            per_type[ty] += 1;
        }
    }
    for (ty, count) in per_type.into_iter().enumerate().filter(|(_, c)| *c > 0) {
        state.count_type(TypeId(ty as u32), count as i64);
    }
    if let Some((id, _)) = maps.as_mut().and_then(|props| props.next()) {
        return Err(no_such(id));
    }
    if let Some(&id) = floats.as_ref().and_then(|(_, ids, _)| ids.get(next_float)) {
        return Err(no_such(id));
    }
    // A graph of one relationship type also gets flat arrays its reads can go to directly.
    let dense = rels.last().is_none_or(|last| last.id as usize + 1 == rels.len());
    match floats.take() {
        Some((key, _, values)) if every_rel_weighted && dense => {
            crate::flat::FlatAdjacency::attach_edge_list(&mut state, Some((key, &values[..])));
        }
        _ => {
            crate::flat::FlatAdjacency::attach(&mut state);
        }
    }
    Ok(state)
}

/// The nodes' half of a bulk build (see [`build_state`]): a state holding `nodes` (sorted by id first if they are
/// not) with `unique_keys` declared, and each leaf's live mask by leaf index when ids are dense enough for a flat
/// table.
pub(crate) fn build_nodes(
    version: u64,
    mut nodes: Vec<NodeInput>,
    unique_keys: &[(LabelId, PropKeyId)],
) -> Result<BuiltNodes> {
    let mut state = GraphState::new();
    state.version = version;
    if !nodes.is_sorted_by_key(|n| n.id) {
        nodes.sort_unstable_by_key(|n| n.id);
    }
    if let Some(w) = nodes.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(StorageError::ConstraintViolation(format!("{} appears twice", w[0].id)));
    }
    // The unique keys' entries come straight from the records, in one pass, instead of a walk over the state.
    let mut entries: Vec<Vec<(Value, u64)>> = vec![Vec::new(); unique_keys.len()];
    for n in &nodes {
        for (k, &(label, key)) in unique_keys.iter().enumerate() {
            if n.labels.contains(&label) {
                if let Some(v) = n.props.as_deref().and_then(|p| p.get(key)) {
                    entries[k].push((v.clone(), n.id.0));
                }
            }
        }
    }
    // The key tables build on another thread while the node leaves fill: both are one pass on one thread.
    let (live, maps) = std::thread::scope(|scope| {
        let tables = scope.spawn(move || entries.into_iter().map(KeyMap::build).collect::<Vec<_>>());
        let live = fill_nodes(&mut state, nodes);
        (live, tables.join().expect("key table thread"))
    });
    for (&(label, key), map) in unique_keys.iter().zip(maps) {
        if state.has_unique_key(label, key) {
            // A repeated declaration: let the state's own check judge it.
            state.apply(&crate::ops::Op::DeclareUniqueKey { label, key, name: None })?;
            continue;
        }
        let map = map.map_err(|(a, b, v)| {
            StorageError::ConstraintViolation(format!(
                "cannot declare the unique key: nodes {a} and {b} share the value {}",
                crate::value::shown(&v)
            ))
        })?;
        Arc::make_mut(&mut state.unique).push(crate::graph::UniqueIndex { label, key, map, name: None });
    }
    Ok(BuiltNodes { state, live })
}

fn node_live(state: &GraphState, live: &Option<Vec<u64>>, n: NodeId) -> bool {
    match live {
        Some(live) => {
            live.get((n.0 >> LEAF_BITS) as usize).is_some_and(|w| w >> (n.0 & (LEAF_SIZE as u64 - 1)) & 1 == 1)
        }
        None => state.node_exists(n),
    }
}

/// Builds both directions' leaf bases from `edges` (ids within 32 bits) and installs them.
fn install_built_adjacency<E: crate::bulk_adjacency::EdgeSource>(state: &mut GraphState, edges: &E, node_bound: usize) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (out, inc) = crate::bulk_adjacency::build_both(edges, node_bound, threads);
    install_leaves(state, out, inc);
}

/// Installs built leaf bases of both directions into the state's node leaves.
fn install_leaves(state: &mut GraphState, out: Vec<LeafAdjacency>, inc: Vec<LeafAdjacency>) {
    for (built, outgoing) in [(out, true), (inc, false)] {
        for l in built {
            let leaf = state.nodes.get_mut(l.leaf);
            leaf.loops |= l.loops;
            *(if outgoing { &mut leaf.out } else { &mut leaf.inc }) = AdjLeaf::from_base(l.base);
        }
    }
}

/// Packed relationships as the bulk adjacency builder reads them.
struct Packed<'a>(&'a [PackedRel]);

impl crate::bulk_adjacency::EdgeSource for Packed<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    fn edge(&self, i: usize) -> (u32, u32, u32, u32) {
        let r = &self.0[i];
        (r.src, r.dst, r.ty, r.id)
    }
}

/// Relationship records as the bulk adjacency builder reads them (only used when every id fits 32 bits).
struct Records<'a>(&'a [RelInput]);

impl crate::bulk_adjacency::EdgeSource for Records<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    fn edge(&self, i: usize) -> (u32, u32, u32, u32) {
        let r = &self.0[i].rec;
        (r.src.0 as u32, r.dst.0 as u32, r.ty.0, r.id.0 as u32)
    }
}

/// Fills the node leaves and label bitmaps from nodes sorted by id, one leaf at a time. Returns each leaf's live
/// mask by leaf index, for checking relationship ends without walking the spine, unless ids are too sparse for
/// a flat table.
fn fill_nodes(state: &mut GraphState, nodes: Vec<NodeInput>) -> Option<Vec<u64>> {
    let leaves = nodes.last().map_or(0, |n| (n.id.0 >> LEAF_BITS) + 1);
    let mut live = (leaves <= 4 * (nodes.len() as u64 / LEAF_SIZE as u64 + 1024)).then(Vec::new);
    if let Some(live) = &mut live {
        live.resize(leaves as usize, 0);
    }
    // One bitmap leaf per label is filled at a time and stored when the ids move past it (ids only grow).
    struct Pending {
        leaf: u64,
        bits: BitLeaf,
    }
    let mut label_bits: Vec<crate::graph::LabelIndex> = Vec::new();
    let mut pending: Vec<Option<Pending>> = Vec::new();
    let mut nodes = nodes.into_iter().peekable();
    while let Some(first) = nodes.peek() {
        let leaf_index = first.id.0 >> LEAF_BITS;
        let leaf = state.nodes.get_mut(leaf_index);
        while let Some(mut n) = nodes.next_if(|n| n.id.0 >> LEAF_BITS == leaf_index) {
            let slot = (n.id.0 as usize) & (LEAF_SIZE - 1);
            // A node's labels are kept sorted by id, as `create_node` and `add_label` keep them.
            if n.labels.len() > 1 {
                n.labels.sort_unstable();
                n.labels.dedup();
            }
            for &l in &n.labels {
                let l = l.0 as usize;
                if label_bits.len() <= l {
                    label_bits.resize_with(l + 1, Default::default);
                    pending.resize_with(l + 1, || None);
                }
                let bit_leaf = n.id.0 / BITS_PER_LEAF as u64;
                if pending[l].as_ref().is_some_and(|p| p.leaf != bit_leaf) {
                    let p = pending[l].take().expect("pending leaf");
                    *label_bits[l].bits.get_mut(p.leaf) = p.bits;
                }
                let p = pending[l].get_or_insert_with(|| Pending { leaf: bit_leaf, bits: BitLeaf::default() });
                let bit = (n.id.0 % BITS_PER_LEAF as u64) as usize;
                p.bits.0[bit / 64] |= 1 << (bit % 64);
                label_bits[l].count += 1;
            }
            leaf.live |= 1 << slot;
            if !n.labels.is_empty() {
                *leaf.labels_mut(slot) = n.labels;
            }
            if n.props.is_some() {
                *leaf.props_mut(slot) = n.props;
            }
            state.node_count += 1;
        }
        if let Some(live) = &mut live {
            live[leaf_index as usize] = leaf.live;
        }
    }
    for (l, p) in pending.into_iter().enumerate() {
        if let Some(p) = p {
            *label_bits[l].bits.get_mut(p.leaf) = p.bits;
        }
    }
    state.labels = Arc::new(label_bits);
    live
}

/// Fills the relationship leaves from relationships sorted by id, one leaf at a time.
fn fill_rels(state: &mut GraphState, rels: Vec<RelInput>) {
    let mut per_type: Vec<u64> = Vec::new();
    let mut rels = rels.into_iter().peekable();
    while let Some(first) = rels.peek() {
        let leaf_index = first.rec.id.0 >> LEAF_BITS;
        let leaf = state.rels.get_mut(leaf_index);
        leaf.ensure_slots();
        while let Some(r) = rels.next_if(|r| r.rec.id.0 >> LEAF_BITS == leaf_index) {
            let slot = (r.rec.id.0 as usize) & (LEAF_SIZE - 1);
            leaf.live |= 1 << slot;
            leaf.ty[slot] = r.rec.ty;
            leaf.set_ends(slot, r.rec.src.0, r.rec.dst.0);
            if r.props.is_some() {
                leaf.props_mut().set_shared(slot, r.props);
            }
            state.rel_count += 1;
            let ty = r.rec.ty.0 as usize;
            if per_type.len() <= ty {
                per_type.resize(ty + 1, 0);
            }
            per_type[ty] += 1;
        }
    }
    for (ty, count) in per_type.into_iter().enumerate().filter(|(_, c)| *c > 0) {
        state.count_type(TypeId(ty as u32), count as i64);
    }
}

/// Fills every node leaf's adjacency base for one direction (ids wider than 32 bits): a counting sort of the relationships by node (two
/// linear passes), then a sort of each node's own short run by (type, neighbour, id).
fn install_adjacency(state: &mut GraphState, rels: &[RelInput], node_bound: usize, outgoing: bool) {
    let ends = |r: &RelInput| if outgoing { (r.rec.src.0, r.rec.dst.0) } else { (r.rec.dst.0, r.rec.src.0) };
    let mut offsets = vec![0usize; node_bound + 1];
    for r in rels {
        offsets[ends(r).0 as usize + 1] += 1;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    let mut cursor = offsets.clone();
    let mut entries = vec![AdjEntry { ty: crate::ids::TypeId(0), nbr: 0, rel: 0 }; rels.len()];
    for r in rels {
        let (node, nbr) = ends(r);
        let at = &mut cursor[node as usize];
        entries[*at] = AdjEntry { ty: r.rec.ty, nbr, rel: r.rec.id.0 };
        *at += 1;
    }
    drop(cursor);
    for node in 0..node_bound {
        let run = &mut entries[offsets[node]..offsets[node + 1]];
        if run.len() > 1 {
            run.sort_unstable();
        }
    }
    for leaf_index in 0..node_bound.div_ceil(LEAF_SIZE) {
        let first = leaf_index * LEAF_SIZE;
        let last = (first + LEAF_SIZE).min(node_bound);
        if offsets[first] == offsets[last] {
            continue;
        }
        let base = AdjBase::build(|slot| {
            let node = first + slot;
            if node < last {
                &entries[offsets[node]..offsets[node + 1]]
            } else {
                &[][..]
            }
        });
        let leaf = state.nodes.get_mut(leaf_index as u64);
        for node in first..last {
            if entries[offsets[node]..offsets[node + 1]].iter().any(|e| e.nbr == node as u64) {
                leaf.loops |= 1 << (node & (LEAF_SIZE - 1));
            }
        }
        if outgoing {
            leaf.out = AdjLeaf::from_base(base);
        } else {
            leaf.inc = AdjLeaf::from_base(base);
        }
    }
}

/// A graph given as an edge list over keyed vertices, as `plexus import --edges` and the Python package's
/// `import_edges` produce it: vertex `i` becomes node `i` with `label` and property `key = keys[i]` (a unique
/// key); edge `i` becomes relationship `i` of type `ty` from node `src[i]` to node `dst[i]`, with property
/// `weight.0 = weight.1[i]` when weights are given. Columns instead of one record per relationship: an edge costs
/// 8 bytes here instead of 40, and the builder reads them in place.
pub struct EdgeListGraph {
    pub label: LabelId,
    pub key: PropKeyId,
    pub keys: Vec<Value>,
    pub ty: TypeId,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub weight: Option<(PropKeyId, Vec<f64>)>,
}

impl EdgeListGraph {
    /// Checks what the builders rely on: at most 2^32 vertices and edges (ids are 32 bits wide), columns of one
    /// length, and every end a vertex.
    pub(crate) fn validate(&self) -> Result<()> {
        let (n, m) = (self.keys.len(), self.src.len());
        if n > u32::MAX as usize || m > u32::MAX as usize {
            return Err(StorageError::ConstraintViolation(format!(
                "{n} vertices and {m} edges: an edge list takes up to 2^32 of each"
            )));
        }
        if self.dst.len() != m || self.weight.as_ref().is_some_and(|(_, w)| w.len() != m) {
            return Err(StorageError::ConstraintViolation("edge columns of different lengths".into()));
        }
        if let Some(&bad) = self.src.iter().chain(&self.dst).find(|&&v| v as usize >= n) {
            return Err(StorageError::NodeNotFound(NodeId(bad as u64)));
        }
        Ok(())
    }

    /// The same graph as node and relationship records, for merging with other inputs.
    pub fn into_records(self) -> (Vec<NodeInput>, Vec<RelInput>) {
        let (label, key, ty) = (self.label, self.key, self.ty);
        let nodes = self
            .keys
            .into_iter()
            .enumerate()
            .map(|(i, value)| NodeInput {
                id: NodeId(i as u64),
                labels: Labels::from_slice(&[label]),
                props: Some(Arc::new(PropMap::single(key, value))),
            })
            .collect();
        let weight = self.weight.as_ref();
        let rels = (0..self.src.len())
            .map(|i| RelInput {
                rec: RelRecord {
                    id: RelId(i as u64),
                    ty,
                    src: NodeId(self.src[i] as u64),
                    dst: NodeId(self.dst[i] as u64),
                },
                props: weight.map(|(k, w)| Arc::new(PropMap::single(*k, Value::Float(w[i])))),
            })
            .collect();
        (nodes, rels)
    }
}

impl crate::bulk_adjacency::EdgeSource for EdgeListGraph {
    fn len(&self) -> usize {
        self.src.len()
    }

    #[inline]
    fn edge(&self, i: usize) -> (u32, u32, u32, u32) {
        (self.src[i], self.dst[i], self.ty.0, i as u32)
    }
}

/// Builds a state at `version` from an edge list over keyed vertices; relationship ids are assigned in source
/// order. The list is only read (the state holds its own copies, in another order), so a caller that must fall
/// back to something else when the state cannot be installed still has it, without having copied it first.
pub fn build_edge_list(version: u64, g: &EdgeListGraph) -> Result<GraphState> {
    g.validate()?;
    let (n, m) = (g.keys.len(), g.src.len());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (label, key, keys) = (g.label, g.key, &g.keys[..]);
    // Node leaves and the key map on one thread, adjacency on the others.
    let ((nodes, labels, map), (out, inc, g)) = std::thread::scope(|scope| {
        let node_side = scope.spawn(move || build_keyed_nodes(label, key, keys));
        let adjacency = numbered_adjacency(g, n, threads);
        (node_side.join().expect("node builder thread"), adjacency)
    });
    let map = map.map_err(|(a, b, v)| {
        StorageError::ConstraintViolation(format!("nodes {a} and {b} share the key value {v:?}"))
    })?;
    let mut state = GraphState::new();
    state.version = version;
    state.nodes = nodes;
    state.labels = Arc::new(labels);
    state.node_count = n as u64;
    install_leaves(&mut state, out, inc);
    for (index, leaf) in rel_leaves(&g).into_iter().enumerate() {
        *state.rels.get_mut(index as u64) = leaf;
    }
    state.rel_count = m as u64;
    state.count_type(g.ty, m as i64);
    Arc::make_mut(&mut state.unique).push(crate::graph::UniqueIndex { label: g.label, key: g.key, map, name: None });
    // A graph of one relationship type also gets flat arrays its reads can go to directly. The weights come
    // from the column: reading them back from every relationship leaf took a fifth of an import's time.
    crate::flat::FlatAdjacency::attach_edge_list(&mut state, g.weight.as_ref().map(|(k, w)| (*k, &w[..])));
    Ok(state)
}

type KeyedNodes = (PVec<NodeLeaf>, Vec<crate::graph::LabelIndex>, std::result::Result<KeyMap, (u64, u64, Value)>);

/// Node leaves for vertices `0..keys.len()`, all with `label` and `key = keys[i]`, their label bitmap and key map.
fn build_keyed_nodes(label: LabelId, key: PropKeyId, keys: &[Value]) -> KeyedNodes {
    let n = keys.len();
    let map = KeyMap::build(keys.iter().cloned().zip(0u64..).collect());
    let mut label_bits = crate::graph::LabelIndex { count: n as u64, ..Default::default() };
    for first in (0..n).step_by(BITS_PER_LEAF) {
        let mut bits = BitLeaf::default();
        for v in first..(first + BITS_PER_LEAF).min(n) {
            bits.0[(v - first) / 64] |= 1 << (v % 64);
        }
        *label_bits.bits.get_mut((first / BITS_PER_LEAF) as u64) = bits;
    }
    let mut labels = vec![crate::graph::LabelIndex::default(); label.0 as usize + 1];
    labels[label.0 as usize] = label_bits;
    let mut nodes: PVec<NodeLeaf> = PVec::new();
    let mut keys = keys.iter().cloned();
    for first in (0..n).step_by(LEAF_SIZE) {
        let leaf = nodes.get_mut((first / LEAF_SIZE) as u64);
        for slot in 0..(n - first).min(LEAF_SIZE) {
            leaf.live |= 1 << slot;
            *leaf.labels_mut(slot) = Labels::from_slice(&[label]);
            let value = keys.next().expect("one key per vertex");
            *leaf.props_mut(slot) = Some(Arc::new(PropMap::single(key, value)));
        }
    }
    (nodes, labels, map)
}

/// Both directions' leaf bases for an edge list, with relationship ids renumbered in the order of the outgoing
/// bases: by source, then target, then input position. The checkpoint lists relationships in that order, so
/// their id deltas there are zero: an edge list given in random order images in about 4 bytes an edge instead of
/// 7. Returns the bases and the edge list in the new order, without its keys (an edge list's ids carry no
/// meaning of their own).
fn numbered_adjacency(
    g: &EdgeListGraph,
    n: usize,
    threads: usize,
) -> (Vec<LeafAdjacency>, Vec<LeafAdjacency>, EdgeListGraph) {
    let mut out = crate::bulk_adjacency::build_direction(g, n, true, threads);
    let m = g.src.len();
    let (mut src, mut dst) = (Vec::with_capacity(m), Vec::with_capacity(m));
    // Where each relationship was in the input, for the weights: gathered afterwards, since a gather from an
    // input in random order is a cache miss per edge, which prefetching and both cores hide.
    let mut order: Vec<u32> = Vec::with_capacity(if g.weight.is_some() { m } else { 0 });
    // Relationship ids follow the outgoing bases: the entry at position `p` of the direction's arrays gets id
    // `p`, so the outgoing relationship ids of every base are a run of one array holding 0, 1, 2, ...
    let mut ids = Vec::with_capacity(m);
    crate::prefetch::advise_huge_pages(&ids);
    ids.extend(0..m as u32);
    let ids: SharedArray = Arc::new(ids.into_boxed_slice());
    for l in &mut out {
        let first = l.leaf * LEAF_SIZE as u64;
        l.base.for_each_entry(|slot, nbr, old| {
            src.push((first + slot as u64) as u32);
            dst.push(nbr as u32);
            if order.capacity() > 0 {
                order.push(old as u32);
            }
        });
        debug_assert_eq!(l.start, src.len() - l.base.len());
        l.base.share_rel_ids(&ids, l.start);
    }
    let weight = g.weight.as_ref().map(|(k, from)| (*k, gather(from, &order, threads)));
    drop(order);
    let g = EdgeListGraph { label: g.label, key: g.key, keys: Vec::new(), ty: g.ty, src, dst, weight };
    let inc = crate::bulk_adjacency::build_direction(&g, n, false, threads);
    (out, inc, g)
}

/// `values[order[i]]` for every `i`, on `threads` threads, each requesting the values a few positions ahead.
pub(crate) fn gather(values: &[f64], order: &[u32], threads: usize) -> Vec<f64> {
    const AHEAD: usize = 16;
    let mut out = vec![0.0; order.len()];
    let chunk = order.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        for (to, from) in out.chunks_mut(chunk).zip(order.chunks(chunk)) {
            scope.spawn(move || {
                for (i, slot) in to.iter_mut().enumerate() {
                    if let Some(&ahead) = from.get(i + AHEAD) {
                        crate::prefetch::prefetch(values.as_ptr().wrapping_add(ahead as usize));
                    }
                    *slot = values[from[i] as usize];
                }
            });
        }
    });
    out
}

/// The relationship leaves of an edge list whose relationships are numbered in list order. (Built on one
/// thread: on two, the second thread's allocations came from a fresh arena and cost more in page faults than
/// the thread saved.)
fn rel_leaves(g: &EdgeListGraph) -> Vec<RelLeaf> {
    let m = g.src.len();
    (0..m.div_ceil(LEAF_SIZE))
        .map(|index| {
            let mut leaf = RelLeaf::default();
            leaf.ensure_slots();
            let first = index * LEAF_SIZE;
            let len = (m - first).min(LEAF_SIZE);
            for slot in 0..len {
                let i = first + slot;
                leaf.live |= 1 << slot;
                leaf.ty[slot] = g.ty;
                leaf.set_ends(slot, g.src[i] as u64, g.dst[i] as u64);
            }
            if let Some((k, w)) = &g.weight {
                *leaf.props_mut() = RelPropColumn::floats(*k, &w[first..first + len]);
            }
            leaf
        })
        .collect()
}

#[cfg(test)]
mod tests;
