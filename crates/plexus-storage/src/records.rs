//! Leaf records: the nodes and relationships of one `LEAF_SIZE`-wide id range, and property maps.

use smallvec::SmallVec;
use std::sync::Arc;

use crate::adjacency::AdjLeaf;
use crate::ids::{LabelId, PropKeyId, TypeId};
use crate::value::Value;
use crate::LEAF_SIZE;

/// A node's labels, sorted.
pub type Labels = SmallVec<[LabelId; 2]>;

/// A property map, sorted by key. Shared between snapshots; replaced, never mutated in place once published.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PropMap {
    entries: Vec<(PropKeyId, Value)>,
}

impl PropMap {
    pub fn from_pairs(mut pairs: Vec<(PropKeyId, Value)>) -> PropMap {
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

/// The nodes whose ids fall in one leaf.
#[derive(Clone, Debug, Default)]
pub struct NodeLeaf {
    pub live: u64,
    /// Per slot; empty until the leaf holds a node.
    pub labels: Vec<Labels>,
    pub props: Vec<Props>,
    pub out: AdjLeaf,
    pub inc: AdjLeaf,
}

impl NodeLeaf {
    #[inline]
    pub fn is_live(&self, slot: usize) -> bool {
        self.live & (1u64 << slot) != 0
    }

    pub fn ensure_slots(&mut self) {
        if self.labels.is_empty() {
            self.labels = vec![Labels::new(); LEAF_SIZE];
            self.props = vec![None; LEAF_SIZE];
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

/// The relationships whose ids fall in one leaf.
#[derive(Clone, Debug, Default)]
pub struct RelLeaf {
    pub live: u64,
    pub ty: Vec<TypeId>,
    pub src: Vec<u64>,
    pub dst: Vec<u64>,
    /// Empty until some relationship of the leaf has properties.
    pub props: Vec<Props>,
}

impl RelLeaf {
    #[inline]
    pub fn is_live(&self, slot: usize) -> bool {
        self.live & (1u64 << slot) != 0
    }

    pub fn ensure_slots(&mut self) {
        if self.ty.is_empty() {
            self.ty = vec![TypeId(0); LEAF_SIZE];
            self.src = vec![0; LEAF_SIZE];
            self.dst = vec![0; LEAF_SIZE];
        }
    }

    pub fn props_mut(&mut self, slot: usize) -> &mut Props {
        if self.props.is_empty() {
            self.props = vec![None; LEAF_SIZE];
        }
        &mut self.props[slot]
    }

    #[inline]
    pub fn props(&self, slot: usize) -> &Props {
        static NONE: Props = None;
        self.props.get(slot).unwrap_or(&NONE)
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
    fn props_set_removes_empty_maps() {
        let mut p: Props = None;
        props_set(&mut p, PropKeyId(0), Value::Int(1));
        assert!(p.is_some());
        assert_eq!(props_set(&mut p, PropKeyId(0), Value::Null), Some(Value::Int(1)));
        assert!(p.is_none());
    }
}
