//! Leaf records: the nodes and relationships of one `LEAF_SIZE`-wide id range, and property maps.

use smallvec::SmallVec;
use std::sync::Arc;

use crate::adjacency::AdjLeaf;
use crate::ids::{LabelId, PropKeyId, TypeId};
use crate::rel_props::RelPropColumn;
use crate::value::Value;
use crate::LEAF_SIZE;

/// A node's labels, sorted.
pub type Labels = SmallVec<[LabelId; 2]>;

/// A property map, sorted by key. Shared between snapshots; replaced, never mutated in place once published.
/// One entry is stored inline: an imported node with only its key, or an edge with only its weight, is then one
/// allocation (the shared pointer's) instead of two.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PropMap {
    entries: SmallVec<[(PropKeyId, Value); PROPS_INLINE]>,
}

/// Properties a map holds without a separate allocation (a weight, a key).
const PROPS_INLINE: usize = 1;

impl PropMap {
    pub fn from_pairs(pairs: Vec<(PropKeyId, Value)>) -> PropMap {
        Self::from_entries(SmallVec::from_vec(pairs))
    }

    /// [`PropMap::from_pairs`] of a copy of `pairs`: a few are copied inline, with no list allocated and freed.
    pub fn from_slice(pairs: &[(PropKeyId, Value)]) -> PropMap {
        Self::from_entries(pairs.iter().cloned().collect())
    }

    fn from_entries(mut pairs: SmallVec<[(PropKeyId, Value); PROPS_INLINE]>) -> PropMap {
        pairs.sort_by_key(|p| p.0);
        pairs.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                // Keep the last value given for a key.
                std::mem::swap(&mut later.1, &mut earlier.1);
                true
            } else {
                false
            }
        });
        pairs.retain(|p| !p.1.is_null());
        PropMap { entries: pairs }
    }

    /// The map of `pairs` as [`PropMap::from_pairs`] builds it, shared; nothing when no property is left.
    pub fn shared(pairs: Vec<(PropKeyId, Value)>) -> Props {
        let map = PropMap::from_pairs(pairs);
        (!map.is_empty()).then(|| Arc::new(map))
    }

    /// A map of one property (nothing when `value` is null).
    pub fn single(key: PropKeyId, value: Value) -> PropMap {
        let mut entries = SmallVec::new();
        if !value.is_null() {
            entries.push((key, value));
        }
        PropMap { entries }
    }

    pub fn get(&self, key: PropKeyId) -> Option<&Value> {
        self.entries.binary_search_by_key(&key, |p| p.0).ok().map(|i| &self.entries[i].1)
    }

    /// Sets `key` (null removes it); returns the previous value.
    pub fn set(&mut self, key: PropKeyId, value: Value) -> Option<Value> {
        match self.entries.binary_search_by_key(&key, |p| p.0) {
            Ok(i) if value.is_null() => Some(self.entries.remove(i).1),
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(_) if value.is_null() => None,
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (PropKeyId, &Value)> {
        self.entries.iter().map(|(k, v)| (*k, v))
    }

    /// The entries, sorted by key.
    pub fn entries(&self) -> &[(PropKeyId, Value)] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Properties of one entity: absent (the common case for edges of large graphs) or a shared map.
pub type Props = Option<Arc<PropMap>>;

pub fn props_get(props: &Props, key: PropKeyId) -> Option<&Value> {
    props.as_deref().and_then(|p| p.get(key))
}

/// The entries of a possibly absent map, sorted by key.
pub fn props_entries(props: &Props) -> &[(PropKeyId, Value)] {
    props.as_deref().map_or(&[], PropMap::entries)
}

/// Sets a property in a shared map, copying it first if another snapshot holds it.
pub fn props_set(props: &mut Props, key: PropKeyId, value: Value) -> Option<Value> {
    if props.is_none() && value.is_null() {
        return None;
    }
    let map = Arc::make_mut(props.get_or_insert_with(Default::default));
    let old = map.set(key, value);
    if map.is_empty() {
        *props = None;
    }
    old
}

/// The nodes whose ids fall in one leaf. Label and property columns are allocated only once some node of the
/// leaf has labels or properties: graphs loaded from edge lists have neither, and a leaf then costs its
/// adjacency alone.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct NodeLeaf {
    pub live: u64,
    /// Slots that may have a self-loop (set when one is created, cleared when a check finds none), so that
    /// degree in both directions needs no search for the common node without one.
    pub loops: u64,
    pub out: AdjLeaf,
    pub inc: AdjLeaf,
    /// Columns shared between copies of the leaf: an edge write copies the leaf for its adjacency, and must not
    /// pay a label and a reference count for each of its 64 nodes to do so.
    /// Fixed-size arrays, so that a read goes from the leaf to the column's allocation and no further.
    labels: Option<Arc<[Labels; LEAF_SIZE]>>,
    props: Option<Arc<[Props; LEAF_SIZE]>>,
}

impl NodeLeaf {
    #[inline]
    pub fn is_live(&self, slot: usize) -> bool {
        self.live & (1u64 << slot) != 0
    }

    /// The labels of `slot`, sorted by id: the order their names were first created in the catalog.
    #[inline]
    pub fn labels(&self, slot: usize) -> &[LabelId] {
        self.labels.as_ref().map_or(&[], |l| &l[slot][..])
    }

    /// The labels of `slot`, copying the column first if another snapshot shares it.
    pub fn labels_mut(&mut self, slot: usize) -> &mut Labels {
        let column = self.labels.get_or_insert_with(|| Arc::new(std::array::from_fn(|_| Labels::new())));
        if Arc::get_mut(column).is_none() {
            // Label ids are plain numbers and a node's few fit inline: copy each node's as a slice. The column's
            // `Clone` (what `Arc::make_mut` calls) went through the small vector's generic `extend` for each of
            // the 64 nodes, a tenth of the instructions of a transaction creating 10 nodes.
            let copy: [Labels; LEAF_SIZE] = std::array::from_fn(|i| Labels::from_slice(&column[i]));
            *column = Arc::new(copy);
        }
        &mut Arc::get_mut(column).expect("the column was just made this leaf's own")[slot]
    }

    #[inline]
    pub fn props(&self, slot: usize) -> &Props {
        static NONE: Props = None;
        self.props.as_ref().map_or(&NONE, |p| &p[slot])
    }

    /// The properties of `slot`, copying the column first if another snapshot shares it.
    pub fn props_mut(&mut self, slot: usize) -> &mut Props {
        let column = self.props.get_or_insert_with(|| Arc::new(std::array::from_fn(|_| None)));
        &mut Arc::make_mut(column)[slot]
    }

    /// Forgets the labels and properties of the slots in `mask` (nothing to do in a leaf without those columns).
    pub fn clear_slots(&mut self, mask: u64) {
        if self.labels.is_none() && self.props.is_none() {
            return;
        }
        let mut bits = mask;
        while bits != 0 {
            self.clear_slot(bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }

    /// Forgets a deleted node's labels and properties.
    pub fn clear_slot(&mut self, slot: usize) {
        if self.labels.as_ref().is_some_and(|l| !l[slot].is_empty()) {
            self.labels_mut(slot).clear();
        }
        if self.props.as_ref().is_some_and(|p| p[slot].is_some()) {
            *self.props_mut(slot) = None;
        }
    }

    pub fn adjacency(&self, outgoing: bool) -> &AdjLeaf {
        if outgoing {
            &self.out
        } else {
            &self.inc
        }
    }
}

/// Source and target ids of a leaf's relationships, interleaved; 32 bits wide until an id needs more.
#[derive(Clone, Debug)]
pub enum Ends {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Default for Ends {
    fn default() -> Self {
        Ends::Narrow(Vec::new())
    }
}

/// The relationships whose ids fall in one leaf.
#[derive(Clone, Debug, Default)]
pub struct RelLeaf {
    pub live: u64,
    pub ty: Vec<TypeId>,
    ends: Ends,
    /// The relationships' properties ([`RelPropColumn`]: a number per relationship, or a map each).
    props: RelPropColumn,
}

impl RelLeaf {
    #[inline]
    pub fn is_live(&self, slot: usize) -> bool {
        self.live & (1u64 << slot) != 0
    }

    pub fn ensure_slots(&mut self) {
        if self.ty.is_empty() {
            self.ty = vec![TypeId(0); LEAF_SIZE];
            self.ends = Ends::Narrow(vec![0; 2 * LEAF_SIZE]);
        }
    }

    #[inline]
    pub fn src(&self, slot: usize) -> u64 {
        match &self.ends {
            Ends::Narrow(v) => v[2 * slot] as u64,
            Ends::Wide(v) => v[2 * slot],
        }
    }

    #[inline]
    pub fn dst(&self, slot: usize) -> u64 {
        match &self.ends {
            Ends::Narrow(v) => v[2 * slot + 1] as u64,
            Ends::Wide(v) => v[2 * slot + 1],
        }
    }

    pub fn set_ends(&mut self, slot: usize, src: u64, dst: u64) {
        if let Ends::Narrow(v) = &self.ends {
            if src > u32::MAX as u64 || dst > u32::MAX as u64 {
                self.ends = Ends::Wide(v.iter().map(|&x| x as u64).collect());
            }
        }
        match &mut self.ends {
            Ends::Narrow(v) => {
                v[2 * slot] = src as u32;
                v[2 * slot + 1] = dst as u32;
            }
            Ends::Wide(v) => {
                v[2 * slot] = src;
                v[2 * slot + 1] = dst;
            }
        }
    }

    /// The relationships' properties ([`RelPropColumn`]: reads, and loaders filling a fresh leaf).
    #[inline]
    pub fn props(&self) -> &RelPropColumn {
        &self.props
    }

    pub fn props_mut(&mut self) -> &mut RelPropColumn {
        &mut self.props
    }
}

/// A set of node ids as a persistent bitmap, for label scans.
#[derive(Clone, Debug)]
pub struct BitLeaf(pub [u64; BITS_PER_LEAF / 64]);

pub const BITS_PER_LEAF: usize = 512;

impl Default for BitLeaf {
    fn default() -> Self {
        BitLeaf([0; BITS_PER_LEAF / 64])
    }
}

impl BitLeaf {
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prop_map_keeps_last_and_drops_nulls() {
        let m = PropMap::from_pairs(vec![
            (PropKeyId(2), Value::Int(1)),
            (PropKeyId(1), Value::Null),
            (PropKeyId(2), Value::Int(7)),
        ]);
        assert_eq!(m.len(), 1);
        assert_eq!(m.get(PropKeyId(2)), Some(&Value::Int(7)));
    }

    #[test]
    fn rel_ends_widen_when_an_id_needs_it() {
        let mut leaf = RelLeaf::default();
        leaf.ensure_slots();
        leaf.set_ends(3, 7, 9);
        leaf.set_ends(5, 1 << 40, 2);
        assert_eq!((leaf.src(3), leaf.dst(3)), (7, 9));
        assert_eq!((leaf.src(5), leaf.dst(5)), (1 << 40, 2));
    }

    #[test]
    fn props_set_removes_empty_maps() {
        let mut p: Props = None;
        props_set(&mut p, PropKeyId(0), Value::Int(1));
        assert!(p.is_some());
        assert_eq!(props_set(&mut p, PropKeyId(0), Value::Null), Some(Value::Int(1)));
        assert!(p.is_none());
    }
}
