//! Building a whole graph state at once from node and relationship records (checkpoint load, bulk import,
//! compaction): leaves are filled directly and every adjacency base is built in one sorted pass per direction,
//! without going through per-relationship deltas.

use std::sync::Arc;

use crate::adjacency::{AdjBase, AdjEntry, AdjLeaf};
use crate::error::{Result, StorageError};
use crate::graph::{GraphState, RelRecord};
use crate::ids::{LabelId, NodeId, PropKeyId};
use crate::records::{Labels, PropMap, BITS_PER_LEAF};
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
    mut nodes: Vec<NodeInput>,
    mut rels: Vec<RelInput>,
    unique_keys: &[(LabelId, PropKeyId)],
) -> Result<GraphState> {
    let mut state = GraphState::new();
    state.version = version;
    nodes.sort_unstable_by_key(|n| n.id);
    rels.sort_unstable_by_key(|r| r.rec.id);
    if let Some(w) = nodes.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(StorageError::ConstraintViolation(format!("{} appears twice", w[0].id)));
    }
    if let Some(w) = rels.windows(2).find(|w| w[0].rec.id == w[1].rec.id) {
        return Err(StorageError::ConstraintViolation(format!("{} appears twice", w[0].rec.id)));
    }
    let mut label_bits: Vec<crate::graph::LabelIndex> = Vec::new();
    for n in nodes {
        let (leaf_index, slot) = (n.id.0 >> LEAF_BITS, (n.id.0 as usize) & (LEAF_SIZE - 1));
        for &l in &n.labels {
            if label_bits.len() <= l.0 as usize {
                label_bits.resize_with(l.0 as usize + 1, Default::default);
            }
            let index = &mut label_bits[l.0 as usize];
            let bit = (n.id.0 % BITS_PER_LEAF as u64) as usize;
            index.bits.get_mut(n.id.0 / BITS_PER_LEAF as u64).0[bit / 64] |= 1 << (bit % 64);
            index.count += 1;
        }
        let leaf = state.nodes.get_mut(leaf_index);
        leaf.live |= 1 << slot;
        if !n.labels.is_empty() {
            *leaf.labels_mut(slot) = n.labels;
        }
        if n.props.is_some() {
            *leaf.props_mut(slot) = n.props;
        }
        state.node_count += 1;
    }
    state.labels = Arc::new(label_bits);
    for r in &rels {
        for end in [r.rec.src, r.rec.dst] {
            if !state.node_exists(end) {
                return Err(StorageError::NodeNotFound(end));
            }
        }
    }
    let node_bound = state.node_id_bound() as usize;
    install_adjacency(&mut state, &rels, node_bound, true);
    install_adjacency(&mut state, &rels, node_bound, false);
    for r in rels {
        let (leaf_index, slot) = (r.rec.id.0 >> LEAF_BITS, (r.rec.id.0 as usize) & (LEAF_SIZE - 1));
        let leaf = state.rels.get_mut(leaf_index);
        leaf.ensure_slots();
        leaf.live |= 1 << slot;
        leaf.ty[slot] = r.rec.ty;
        leaf.set_ends(slot, r.rec.src.0, r.rec.dst.0);
        if r.props.is_some() {
            *leaf.props_mut(slot) = r.props;
        }
        state.rel_count += 1;
    }
    for &(label, key) in unique_keys {
        state.apply(&crate::ops::Op::DeclareUniqueKey { label, key })?;
    }
    Ok(state)
}

/// Fills every node leaf's adjacency base for one direction: a counting sort of the relationships by node (two
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
