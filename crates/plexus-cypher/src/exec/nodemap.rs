//! A map from node id to a small number, for operators that touch many neighbours of a few nodes: a dense
//! array indexed by id when the graph is small enough, reset by walking only the entries set, so a lookup is
//! one load and no hashing; a hash map otherwise. The arrays are kept per thread and reused, since clearing a
//! graph-sized array for every query would cost more than the query.

use std::cell::RefCell;

use plexus_storage::fxhash::FxHashMap;

/// Node id bounds above this use the hash map (the dense array would take 4 bytes per node id per thread).
const DENSE_LIMIT: u64 = 1 << 24;

thread_local! {
    /// Zeroed arrays, with empty lists of set ids, ready for reuse.
    static POOL: RefCell<Vec<(Vec<u32>, Vec<u64>)>> = const { RefCell::new(Vec::new()) };
}

pub(crate) enum NodeMap {
    /// `slots[id]` holds the value plus one (zero: absent); `set` lists the ids with a value.
    Dense {
        slots: Vec<u32>,
        set: Vec<u64>,
    },
    Hash(FxHashMap<u64, u32>),
}

impl NodeMap {
    /// A map for node ids below `bound` (larger ids still work, through growing or hashing).
    pub fn new(bound: u64) -> NodeMap {
        if bound > DENSE_LIMIT {
            return NodeMap::Hash(FxHashMap::default());
        }
        let (mut slots, set) = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        if slots.len() < bound as usize {
            slots.resize(bound as usize, 0);
        }
        NodeMap::Dense { slots, set }
    }

    #[inline]
    pub fn get(&self, id: u64) -> Option<u32> {
        match self {
            NodeMap::Dense { slots, .. } => match slots.get(id as usize) {
                Some(&v) if v != 0 => Some(v - 1),
                _ => None,
            },
            NodeMap::Hash(map) => map.get(&id).copied(),
        }
    }

    /// Sets the value of `id` (`value` below `u32::MAX`).
    pub fn insert(&mut self, id: u64, value: u32) {
        match self {
            NodeMap::Dense { slots, set } => {
                if id >= slots.len() as u64 {
                    if id >= DENSE_LIMIT {
                        let mut map: FxHashMap<u64, u32> = set.iter().map(|&i| (i, slots[i as usize] - 1)).collect();
                        map.insert(id, value);
                        // Dropping the dense form clears its array and returns it to the pool.
                        *self = NodeMap::Hash(map);
                        return;
                    }
                    slots.resize(id as usize + 1, 0);
                }
                let slot = &mut slots[id as usize];
                if *slot == 0 {
                    set.push(id);
                }
                *slot = value + 1;
            }
            NodeMap::Hash(map) => {
                map.insert(id, value);
            }
        }
    }

    pub fn clear(&mut self) {
        match self {
            NodeMap::Dense { slots, set } => {
                for &id in set.iter() {
                    slots[id as usize] = 0;
                }
                set.clear();
            }
            NodeMap::Hash(map) => map.clear(),
        }
    }
}

impl Drop for NodeMap {
    fn drop(&mut self) {
        self.clear();
        if let NodeMap::Dense { slots, set } = self {
            let slots = std::mem::take(slots);
            if !slots.is_empty() {
                let set = std::mem::take(set);
                POOL.with(|p| p.borrow_mut().push((slots, set)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn behaves_like_a_hash_map(
            bound in 0u64..300,
            ops in proptest::collection::vec((0u64..400, 0u32..1000, any::<bool>()), 0..200),
        ) {
            let mut map = NodeMap::new(bound);
            let mut model: FxHashMap<u64, u32> = FxHashMap::default();
            for (id, value, clear) in ops {
                if clear && value % 17 == 0 {
                    map.clear();
                    model.clear();
                } else {
                    map.insert(id, value);
                    model.insert(id, value);
                }
                for probe in [id, id + 1, 0] {
                    prop_assert_eq!(map.get(probe), model.get(&probe).copied());
                }
            }
            drop(map);
            // A reused array comes back zeroed.
            let again = NodeMap::new(bound);
            for id in 0..bound {
                prop_assert_eq!(again.get(id), None);
            }
        }
    }

    #[test]
    fn ids_beyond_the_dense_limit_switch_to_hashing() {
        let mut map = NodeMap::new(10);
        map.insert(3, 7);
        map.insert(DENSE_LIMIT + 5, 9);
        assert!(matches!(map, NodeMap::Hash(_)));
        assert_eq!(map.get(3), Some(7));
        assert_eq!(map.get(DENSE_LIMIT + 5), Some(9));
        assert_eq!(map.get(4), None);
    }
}
