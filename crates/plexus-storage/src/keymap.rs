//! The map behind a unique key: property value → node id, persistent like the rest of a snapshot.
//!
//! A persistent hash trie per key costs an allocation per few entries and dozens of bytes per entry, and
//! building one for millions of imported nodes took seconds. Here the bulk of the entries sits in an immutable
//! open-addressing table built in one pass (two cache misses per probe: the slot, then the entry), shared by
//! every snapshot; changes since it was built sit in a small persistent map on top (a value newly taken, or a
//! value of the table released). When the changes outgrow a fraction of the table, the next change folds them
//! into a new table, so the cost of a fold is amortised over the changes that made it necessary.
//!
//! Values come from users, so the table hashes with a randomly keyed SipHash (`RandomState`), as the
//! persistent map does, and a crafted set of keys cannot make probes degrade.

use std::borrow::Cow;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use crate::value::Value;

/// The form a value takes as a unique key: numbers equal in Cypher (`1 = 1.0`, `0 = -0.0`) are one key, so
/// a float with an integral value is keyed as that integer (in lists too). Only the map sees this form; the
/// property keeps the value it was given.
pub fn key_form(value: &Value) -> Cow<'_, Value> {
    match value {
        Value::Float(f) if f.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(f) => {
            Cow::Owned(Value::Int(*f as i64))
        }
        Value::List(items) if items.iter().any(|v| matches!(key_form(v), Cow::Owned(_))) => {
            Cow::Owned(Value::List(items.iter().map(|v| key_form(v).into_owned()).collect()))
        }
        _ => Cow::Borrowed(value),
    }
}

/// The value → node map of one unique key.
#[derive(Clone, Default)]
pub struct KeyMap {
    base: Arc<Table>,
    /// Changes since `base` was built: `Some(node)` takes a value, `None` releases one the table holds.
    delta: imbl::HashMap<Value, Option<u64>>,
}

/// An immutable open-addressing table with linear probing.
#[derive(Default)]
struct Table {
    hasher: RandomState,
    entries: Box<[(Value, u64)]>,
    /// Index + 1 into `entries`, 0 for an empty slot; a power of two long, at most half full.
    slots: Box<[u32]>,
}

impl Table {
    /// Builds a table; on a repeated value returns the two nodes that share it and the value.
    fn build(entries: Vec<(Value, u64)>) -> Result<Table, (u64, u64, Value)> {
        let hasher = RandomState::new();
        let len = (entries.len() * 2).next_power_of_two().max(16);
        let mut slots = vec![0u32; len].into_boxed_slice();
        let mask = len - 1;
        for (i, (value, node)) in entries.iter().enumerate() {
            let mut at = hasher.hash_one(value) as usize & mask;
            loop {
                match slots[at] {
                    0 => {
                        slots[at] = i as u32 + 1;
                        break;
                    }
                    taken => {
                        let (other_value, other) = &entries[taken as usize - 1];
                        if other_value == value {
                            return Err((*other, *node, value.clone()));
                        }
                    }
                }
                at = (at + 1) & mask;
            }
        }
        Ok(Table { hasher, entries: entries.into_boxed_slice(), slots })
    }

    #[inline]
    fn get(&self, value: &Value) -> Option<&u64> {
        self.position(value).map(|i| &self.entries[i].1)
    }

    /// Where `value`'s entry sits in `entries`.
    #[inline]
    fn position(&self, value: &Value) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = self.hasher.hash_one(value) as usize & mask;
        loop {
            match self.slots[at] {
                0 => return None,
                i => {
                    let i = i as usize - 1;
                    if self.entries[i].0 == *value {
                        return Some(i);
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }
}

impl KeyMap {
    /// Tables index entries with 32 bits; beyond that everything stays in the persistent map.
    const TABLE_LIMIT: usize = u32::MAX as usize - 1;

    pub fn new() -> KeyMap {
        KeyMap::default()
    }

    /// Builds a map from `(value, node)` pairs in one pass; on a repeated value returns the two nodes that share
    /// it and the value.
    pub fn build(mut entries: Vec<(Value, u64)>) -> Result<KeyMap, (u64, u64, Value)> {
        for (value, _) in &mut entries {
            if let Cow::Owned(key) = key_form(value) {
                *value = key;
            }
        }
        if entries.len() > Self::TABLE_LIMIT {
            let mut map = KeyMap::new();
            for (value, node) in entries {
                if let Some(&other) = map.get(&value) {
                    return Err((other, node, value));
                }
                map.delta.insert(value, Some(node));
            }
            return Ok(map);
        }
        Ok(KeyMap { base: Arc::new(Table::build(entries)?), delta: imbl::HashMap::new() })
    }

    /// The node holding `value`.
    #[inline]
    pub fn get(&self, value: &Value) -> Option<&u64> {
        let value = &*key_form(value);
        if !self.delta.is_empty() {
            if let Some(change) = self.delta.get(value) {
                return change.as_ref();
            }
        }
        self.base.get(value)
    }

    /// Maps `value` to `node`.
    pub fn insert(&mut self, value: Value, node: u64) {
        let value = match key_form(&value) {
            Cow::Owned(key) => key,
            Cow::Borrowed(_) => value,
        };
        if self.base.get(&value) == Some(&node) {
            self.delta.remove(&value);
        } else {
            self.delta.insert(value, Some(node));
        }
        self.fold_if_large();
    }

    /// Unmaps `value`.
    pub fn remove(&mut self, value: &Value) {
        let value = &*key_form(value);
        if self.base.get(value).is_some() {
            self.delta.insert(value.clone(), None);
        } else {
            self.delta.remove(value);
        }
        self.fold_if_large();
    }

    /// Number of values mapped.
    pub fn len(&self) -> usize {
        let mut n = self.base.entries.len();
        for (value, change) in self.delta.iter() {
            match (self.base.get(value).is_some(), change.is_some()) {
                (true, false) => n -= 1,
                (false, true) => n += 1,
                _ => {}
            }
        }
        n
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with every `(value, node)` mapped, in no particular order.
    pub fn for_each(&self, mut f: impl FnMut(&Value, u64)) {
        // The table entries a change overrides, found by one probe of the table per change: asking the trie
        // about every table entry instead made a fold cost a trie walk per entry, a quarter of a bulk MERGE.
        let mut overridden = vec![0u64; self.base.entries.len().div_ceil(64)];
        for (value, _) in self.delta.iter() {
            if let Some(i) = self.base.position(value) {
                overridden[i / 64] |= 1 << (i % 64);
            }
        }
        for (i, (value, node)) in self.base.entries.iter().enumerate() {
            if overridden[i / 64] & (1 << (i % 64)) == 0 {
                f(value, *node);
            }
        }
        for (value, change) in self.delta.iter() {
            if let Some(node) = change {
                f(value, *node);
            }
        }
    }

    /// Whether the changes are worth folding when a transaction commits: each lookup of a value the table holds
    /// first misses in the persistent map, whose cost grows with its depth and its cache misses, so a large
    /// batch of inserts (a bulk load through transactions) is folded as its transaction commits rather than left
    /// to slow every later lookup.
    pub fn wants_fold_at_commit(&self) -> bool {
        self.delta.len() > 4096 + self.base.entries.len() / 8
            && self.base.entries.len() + self.delta.len() <= Self::TABLE_LIMIT
    }

    /// Folds the changes into a new table (see [`KeyMap::wants_fold_at_commit`]).
    pub fn fold(&mut self) {
        let mut entries = Vec::with_capacity(self.base.entries.len() + self.delta.len());
        self.for_each(|value, node| entries.push((value.clone(), node)));
        if entries.len() > Self::TABLE_LIMIT {
            return;
        }
        *self = KeyMap::build(entries).expect("a map's entries are distinct values");
    }

    fn fold_if_large(&mut self) {
        if self.delta.len() > 1024 + self.base.entries.len() / 2 {
            self.fold();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn numbers_equal_in_cypher_are_one_key() {
        let list = |items: Vec<Value>| Value::List(items.into());
        let mut map = KeyMap::build(vec![(Value::Int(1), 10), (Value::Float(2.5), 11)]).unwrap();
        map.insert(list(vec![Value::Int(1), Value::Int(2)]), 12);
        map.insert(Value::Float(0.0), 13);
        assert_eq!(map.get(&Value::Float(1.0)), Some(&10));
        assert_eq!(map.get(&Value::Float(2.5)), Some(&11));
        assert_eq!(map.get(&Value::Int(2)), None);
        assert_eq!(map.get(&list(vec![Value::Float(1.0), Value::Float(2.0)])), Some(&12));
        assert_eq!(map.get(&Value::Int(0)), Some(&13));
        assert_eq!(map.get(&Value::Float(-0.0)), Some(&13));
        map.remove(&Value::Float(1.0));
        assert_eq!(map.get(&Value::Int(1)), None);
        assert!(KeyMap::build(vec![(Value::Int(3), 1), (Value::Float(3.0), 2)]).is_err());
        // Beyond the integers, a float stays a float.
        assert_eq!(*key_form(&Value::Float(1e300)), Value::Float(1e300));
    }

    proptest! {
        #[test]
        fn behaves_like_a_map_across_folds_and_clones(
            initial in proptest::collection::hash_map(0i64..5000, 0u64..100, 0..300),
            ops in proptest::collection::vec((0i64..5000, proptest::option::of(0u64..100)), 0..3000),
        ) {
            let mut map = KeyMap::build(initial.iter().map(|(&k, &v)| (Value::Int(k), v)).collect()).unwrap();
            let mut model: HashMap<i64, u64> = initial.clone();
            let mut snapshots = Vec::new();
            for (i, (key, node)) in ops.into_iter().enumerate() {
                match node {
                    Some(node) => {
                        map.insert(Value::Int(key), node);
                        model.insert(key, node);
                    }
                    None => {
                        map.remove(&Value::Int(key));
                        model.remove(&key);
                    }
                }
                if i % 500 == 0 {
                    snapshots.push((map.clone(), model.clone()));
                }
            }
            let mut sealed = map.clone();
            sealed.fold();
            snapshots.push((sealed, model.clone()));
            snapshots.push((map, model));
            for (map, model) in snapshots {
                prop_assert_eq!(map.len(), model.len());
                for key in 0..5000 {
                    prop_assert_eq!(map.get(&Value::Int(key)), model.get(&key));
                }
                let mut seen = HashMap::new();
                map.for_each(|v, n| {
                    let Value::Int(k) = v else { panic!("only integer keys") };
                    assert!(seen.insert(*k, n).is_none(), "{k} listed twice");
                });
                prop_assert_eq!(seen, model);
            }
        }
    }

    #[test]
    fn a_repeated_value_is_refused_with_both_nodes() {
        let entries = vec![(Value::from("a"), 1), (Value::from("b"), 2), (Value::from("a"), 3)];
        let (first, second, value) = KeyMap::build(entries).err().expect("a repeated value");
        assert_eq!((first, second, value), (1, 3, Value::from("a")));
    }
}
