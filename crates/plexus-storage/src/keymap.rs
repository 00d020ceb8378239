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
    /// Builds a table; on a repeated value returns the two nodes that share it and the value (the first value
    /// repeated, in entry order, with the entry it repeats).
    ///
    /// Why not insert entry by entry: each insertion probes a random slot of a table far larger than the cache,
    /// and each collision reads another random entry, so millions of entries took two cache misses each (half a
    /// second for the 3.3 million vertices of the patents list). Instead the hashes are computed in one pass,
    /// sorted by home slot (scattered into cache-sized buckets by their top bits, each bucket then sorted), and
    /// the slots filled in that order: every entry goes to the first free slot at or after its home, which is
    /// right after the previous one or at its home, so the slots are written front to back. Entries that run
    /// past the end wrap to the first free slots at the start, as a probe does. A repeated value has a repeated
    /// hash, so repeats are next to each other in the sorted order.
    fn build(entries: Vec<(Value, u64)>) -> Result<Table, (u64, u64, Value)> {
        let hasher = RandomState::new();
        let len = (entries.len() * 2).next_power_of_two().max(16);
        let bits = len.trailing_zeros();
        // Home slot in the top bits, the rest of the hash below it, the entry's index beside it.
        let sort_key = |hash: u64| hash.rotate_right(bits);
        let keyed: Vec<(u64, u32)> =
            entries.iter().enumerate().map(|(i, (value, _))| (sort_key(hasher.hash_one(value)), i as u32)).collect();
        let sorted = sort_by_key_in_buckets(keyed);
        if let Some((first, second)) = first_repeat(&entries, &sorted) {
            let (value, node) = &entries[second];
            return Err((entries[first].1, *node, value.clone()));
        }
        let homes = sorted.iter().map(|&(key, i)| ((key.rotate_left(bits) as usize) & (len - 1), i));
        Ok(Table { hasher, entries: entries.into_boxed_slice(), slots: fill_slots(len, homes) })
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

/// A linear-probing slot table of `len` slots (index + 1, 0 for empty) for entries given as (home slot, index)
/// in ascending order of home: each goes to the first free slot at or after its home, wrapping to the start.
fn fill_slots(len: usize, homes: impl Iterator<Item = (usize, u32)>) -> Box<[u32]> {
    let mut slots = vec![0u32; len].into_boxed_slice();
    let mut next_free = 0usize;
    let mut wrapped = Vec::new();
    for (home, i) in homes {
        let at = home.max(next_free);
        if at >= len {
            wrapped.push(i);
            continue;
        }
        slots[at] = i + 1;
        next_free = at + 1;
    }
    // Every slot from a wrapped entry's home to the end is taken, so its probe continues at slot 0.
    let mut at = 0;
    for i in wrapped {
        while slots[at] != 0 {
            at += 1;
        }
        slots[at] = i + 1;
    }
    slots
}

/// `keyed` sorted by key, then index: scattered into buckets by the key's top bits (each a few thousand entries,
/// sorted in the cache), which costs two passes over memory instead of a sort's many.
fn sort_by_key_in_buckets(mut keyed: Vec<(u64, u32)>) -> Vec<(u64, u32)> {
    const BUCKET_BITS: u32 = 12;
    if keyed.len() < 1 << 16 {
        keyed.sort_unstable();
        return keyed;
    }
    let bucket = |key: u64| (key >> (64 - BUCKET_BITS)) as usize;
    let mut starts = vec![0usize; (1 << BUCKET_BITS) + 1];
    for &(key, _) in &keyed {
        starts[bucket(key) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut sorted = vec![(0u64, 0u32); keyed.len()];
    let mut fill = starts.clone();
    for entry in keyed {
        let b = bucket(entry.0);
        sorted[fill[b]] = entry;
        fill[b] += 1;
    }
    for b in 0..1 << BUCKET_BITS {
        sorted[starts[b]..starts[b + 1]].sort_unstable();
    }
    sorted
}

/// The first value of `entries` (by index) that repeats an earlier one, as (earlier index, index): repeats have
/// equal keys in `sorted`, so only neighbours with equal keys are compared.
fn first_repeat(entries: &[(Value, u64)], sorted: &[(u64, u32)]) -> Option<(usize, usize)> {
    let mut first: Option<(usize, usize)> = None;
    for run in sorted.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
        // A run is in index order: the earliest entry a later one repeats is the one to report for it.
        for (k, &(_, later)) in run.iter().enumerate().skip(1) {
            let later = later as usize;
            if first.is_some_and(|(_, f)| f < later) {
                break;
            }
            if let Some(&(_, earlier)) = run[..k].iter().find(|(_, e)| entries[*e as usize].0 == entries[later].0) {
                first = Some((earlier as usize, later));
                break;
            }
        }
    }
    first
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

    /// Every entry is reachable from its home by a probe that passes no empty slot.
    fn assert_probes_reach(slots: &[u32], homes: &[usize]) {
        for (i, &home) in homes.iter().enumerate() {
            let mut at = home;
            loop {
                assert_ne!(slots[at], 0, "entry {i} (home {home}) is not reachable");
                if slots[at] == i as u32 + 1 {
                    break;
                }
                at = (at + 1) % slots.len();
            }
        }
    }

    #[test]
    fn slots_filled_in_home_order_wrap_past_the_end_as_probes_do() {
        // A cluster at the end spills into the start, where other entries sit at their homes.
        let homes = [0, 1, 1, 5, 13, 14, 14, 15, 15, 15];
        let slots = fill_slots(16, homes.iter().enumerate().map(|(i, &h)| (h, i as u32)));
        assert_probes_reach(&slots, &homes);
        assert_eq!(slots.iter().filter(|&&s| s != 0).count(), homes.len());
        // A table filled to the last slot.
        let homes: Vec<usize> = (0..16).map(|i| if i < 8 { 8 } else { 15 }).collect();
        let slots = fill_slots(16, homes.iter().enumerate().map(|(i, &h)| (h, i as u32)));
        assert_probes_reach(&slots, &homes);
    }

    #[test]
    fn a_large_table_finds_every_entry_and_reports_the_first_repeat() {
        // Large enough to be sorted in buckets.
        let n = 200_000u64;
        let value = |i: u64| {
            if i.is_multiple_of(7) {
                Value::from(format!("v{i}"))
            } else {
                Value::Int((i * 7919) as i64 - 1_000_000)
            }
        };
        let map = KeyMap::build((0..n).map(|i| (value(i), i + 10)).collect()).unwrap();
        assert_eq!(map.len(), n as usize);
        for i in 0..n {
            assert_eq!(map.get(&value(i)), Some(&(i + 10)), "{i}");
        }
        assert_eq!(map.get(&value(n)), None);
        // Entry 150,000 repeats entry 70,000, and later entries repeat others: the first repeat in entry order
        // wins, whichever the table meets first.
        let mut entries: Vec<(Value, u64)> = (0..n).map(|i| (value(i), i + 10)).collect();
        entries[150_000].0 = value(70_000);
        for (later, earlier) in [(180_000, 10), (160_000, 5), (199_999, 149_999), (170_000, 169_999), (155_000, 3)] {
            entries[later].0 = value(earlier);
        }
        let (first, second, repeated) = KeyMap::build(entries).err().expect("a repeated value");
        assert_eq!((first, second, repeated), (70_010, 150_010, value(70_000)));
    }

    #[test]
    fn a_repeated_value_is_refused_with_both_nodes() {
        let entries = vec![(Value::from("a"), 1), (Value::from("b"), 2), (Value::from("a"), 3)];
        let (first, second, value) = KeyMap::build(entries).err().expect("a repeated value");
        assert_eq!((first, second, value), (1, 3, Value::from("a")));
    }
}
