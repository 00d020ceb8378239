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
    let mut out: Vec<(u64, AdjEntry)> = Vec::with_capacity(rels.len());
    for r in &rels {
        out.push((r.rec.src.0, AdjEntry { ty: r.rec.ty, nbr: r.rec.dst.0, rel: r.rec.id.0 }));
    }
    install_adjacency(&mut state, out, true);
    let mut inc: Vec<(u64, AdjEntry)> = Vec::with_capacity(rels.len());
    for r in &rels {
        inc.push((r.rec.dst.0, AdjEntry { ty: r.rec.ty, nbr: r.rec.src.0, rel: r.rec.id.0 }));
    }
    install_adjacency(&mut state, inc, false);
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

fn install_adjacency(state: &mut GraphState, mut entries: Vec<(u64, AdjEntry)>, outgoing: bool) {
    entries.sort_unstable();
    let mut i = 0;
    while i < entries.len() {
        let leaf_index = entries[i].0 >> LEAF_BITS;
        let mut j = i;
        while j < entries.len() && entries[j].0 >> LEAF_BITS == leaf_index {
            j += 1;
        }
        let chunk = &entries[i..j];
        let mut k = 0;
        let base = AdjBase::build(|slot| {
            let mut v = Vec::new();
            while k < chunk.len() && (chunk[k].0 as usize & (LEAF_SIZE - 1)) == slot {
                v.push(chunk[k].1);
                k += 1;
            }
            v
        });
        let leaf = state.nodes.get_mut(leaf_index);
        for (node, e) in chunk {
            if *node == e.nbr {
                leaf.loops |= 1 << (*node as usize & (LEAF_SIZE - 1));
            }
        }
        if outgoing {
            leaf.out = AdjLeaf::from_base(base);
        } else {
            leaf.inc = AdjLeaf::from_base(base);
        }
        i = j;
    }
}
