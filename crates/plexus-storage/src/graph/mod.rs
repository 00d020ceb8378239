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
use crate::idvec::{without_neighbour, IdSlice};
use crate::index::{CompositeIndex, IndexKey, PropertyIndex, RelPropertyIndex};
use crate::ops::Op;
use crate::pvec::PVec;
use crate::records::{props_get, props_set, BitLeaf, Labels, NodeLeaf, PropMap, RelLeaf, BITS_PER_LEAF};
use crate::value::Value;
use crate::{LEAF_BITS, LEAF_SIZE};

mod composite;
mod read;
mod write;

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
    /// The name its creator gave, if any.
    pub name: Option<Arc<str>>,
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
pub(crate) fn split(id: u64) -> (u64, usize) {
    (id >> LEAF_BITS, (id as usize) & (LEAF_SIZE - 1))
}

#[derive(Clone, Default)]
pub struct GraphState {
    pub(crate) nodes: PVec<NodeLeaf>,
    pub(crate) rels: PVec<RelLeaf>,
    pub(crate) node_count: u64,
    pub(crate) rel_count: u64,
    /// Live relationships per type.
    pub(crate) type_counts: TypeCounts,
    pub(crate) labels: Arc<Vec<LabelIndex>>,
    pub(crate) unique: Arc<Vec<UniqueIndex>>,
    pub(crate) indexes: Arc<Vec<PropertyIndex>>,
    /// Property indexes on relationships of one type.
    pub(crate) rel_indexes: Arc<Vec<RelPropertyIndex>>,
    /// Indexes on several properties of the nodes of one label.
    pub(crate) composites: Arc<Vec<CompositeIndex>>,
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

    /// Moves the state out, leaving an empty one behind: how a commit takes a transaction's state. The empty
    /// state is a clone of one made once per thread, where `mem::take` would allocate six empty lists per commit
    /// (and a clone of the transaction's own lists would make the commit copy any it then changes).
    pub(crate) fn take(&mut self) -> GraphState {
        // One per thread: a process-wide one would have every committer on every core update the same
        // reference counts.
        thread_local!(static EMPTY: GraphState = GraphState::default());
        let empty = EMPTY.try_with(GraphState::clone).unwrap_or_default();
        std::mem::replace(self, empty)
    }

    pub fn node_count(&self) -> u64 {
        self.node_count
    }

    pub fn rel_count(&self) -> u64 {
        self.rel_count
    }

    /// The number of live relationships of type `ty`.
    pub fn type_count(&self, ty: TypeId) -> u64 {
        self.type_counts.get(ty)
    }

    /// Counts `added` more relationships of type `ty` (fewer when negative).
    #[inline]
    pub(crate) fn count_type(&mut self, ty: TypeId, added: i64) {
        self.type_counts.add(ty, added);
    }
}

/// Types counted inline in a state, so that a commit's count update copies no shared list (a commit used to
/// copy the whole list, an allocation and a free per commit); later types go to a shared list.
const INLINE_TYPES: usize = 8;

/// Live relationships per type.
#[derive(Clone, Default)]
pub(crate) struct TypeCounts {
    first: [u64; INLINE_TYPES],
    rest: Option<Arc<Vec<u64>>>,
}

impl TypeCounts {
    #[inline]
    pub(crate) fn get(&self, ty: TypeId) -> u64 {
        let i = ty.0 as usize;
        match self.first.get(i) {
            Some(&n) => n,
            None => self.rest.as_ref().and_then(|rest| rest.get(i - INLINE_TYPES)).copied().unwrap_or(0),
        }
    }

    #[inline]
    fn add(&mut self, ty: TypeId, added: i64) {
        let i = ty.0 as usize;
        let count = match self.first.get_mut(i) {
            Some(n) => n,
            None => {
                let rest = Arc::make_mut(self.rest.get_or_insert_with(Default::default));
                if rest.len() <= i - INLINE_TYPES {
                    rest.resize(i - INLINE_TYPES + 1, 0);
                }
                &mut rest[i - INLINE_TYPES]
            }
        };
        *count = count.wrapping_add_signed(added);
    }

    /// One more than the highest type id that may have a count.
    pub(crate) fn len(&self) -> usize {
        INLINE_TYPES + self.rest.as_ref().map_or(0, |rest| rest.len())
    }
}
