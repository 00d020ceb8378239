//! The properties of one relationship leaf, as a column.
//!
//! Most relationships of a large graph carry at most one number under one key: an edge list's weight, a
//! creation date. A leaf whose relationships all do keeps those numbers as eight bytes each behind one shared
//! pointer. Copying the leaf for a write then costs one reference count instead of one per relationship (each
//! on a cache line of its own, touched again when the old copy is freed), setting a weight allocates nothing,
//! and loading an edge list allocates nothing per edge. Any other property turns the column into one shared map
//! per relationship, as every property of a node is.

use std::borrow::Cow;
use std::sync::Arc;

use crate::ids::PropKeyId;
use crate::records::{props_set, PropMap, Props};
use crate::value::Value;
use crate::LEAF_SIZE;

/// Which numbers a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberKind {
    Int,
    Float,
}

impl NumberKind {
    /// The kind and bits of `value`, when it is a number.
    fn of(value: &Value) -> Option<(NumberKind, u64)> {
        match value {
            Value::Int(i) => Some((NumberKind::Int, *i as u64)),
            Value::Float(f) => Some((NumberKind::Float, f.to_bits())),
            _ => None,
        }
    }

    fn value(self, bits: u64) -> Value {
        match self {
            NumberKind::Int => Value::Int(bits as i64),
            NumberKind::Float => Value::Float(f64::from_bits(bits)),
        }
    }

    fn as_f64(self, bits: u64) -> f64 {
        match self {
            NumberKind::Int => bits as i64 as f64,
            NumberKind::Float => f64::from_bits(bits),
        }
    }
}

/// The properties of the relationships of one leaf, by slot.
#[derive(Clone, Debug, Default)]
pub enum RelPropColumn {
    /// No relationship of the leaf has properties.
    #[default]
    Empty,
    /// Every relationship with properties has exactly one, under `key`, a number of `kind`. A slot's bits mean
    /// something only while its `present` bit is set: clearing a slot leaves the shared array alone.
    Numbers { key: PropKeyId, kind: NumberKind, present: u64, bits: Arc<[u64; LEAF_SIZE]> },
    /// Any properties: a shared map per relationship.
    Maps(Vec<Props>),
}

impl RelPropColumn {
    /// The column of a leaf whose first `weights.len()` slots each have the float `weights[slot]` under `key`
    /// (what [`RelPropColumn::set`] gives slot by slot, built in one pass for a bulk load).
    pub fn floats(key: PropKeyId, weights: &[f64]) -> RelPropColumn {
        assert!(weights.len() <= LEAF_SIZE, "a leaf holds {LEAF_SIZE} relationships");
        if weights.is_empty() {
            return RelPropColumn::Empty;
        }
        let mut bits = [0u64; LEAF_SIZE];
        for (b, w) in bits.iter_mut().zip(weights) {
            *b = w.to_bits();
        }
        let present = if weights.len() == LEAF_SIZE { u64::MAX } else { (1u64 << weights.len()) - 1 };
        RelPropColumn::Numbers { key, kind: NumberKind::Float, present, bits: Arc::new(bits) }
    }

    /// Whether no relationship of the leaf has properties.
    pub fn is_empty(&self) -> bool {
        match self {
            RelPropColumn::Empty => true,
            RelPropColumn::Numbers { present, .. } => *present == 0,
            RelPropColumn::Maps(_) => false,
        }
    }

    /// Whether `slot` has properties.
    pub fn has(&self, slot: usize) -> bool {
        match self {
            RelPropColumn::Empty => false,
            RelPropColumn::Numbers { present, .. } => present & (1 << slot) != 0,
            RelPropColumn::Maps(maps) => maps[slot].is_some(),
        }
    }

    /// The properties of `slot`: borrowed from its map, or made from the column (one entry, kept inline, so
    /// nothing is allocated).
    pub fn get(&self, slot: usize) -> Option<Cow<'_, PropMap>> {
        match self {
            RelPropColumn::Empty => None,
            RelPropColumn::Numbers { key, kind, present, bits } => {
                (present & (1 << slot) != 0).then(|| Cow::Owned(PropMap::single(*key, kind.value(bits[slot]))))
            }
            RelPropColumn::Maps(maps) => maps[slot].as_deref().map(Cow::Borrowed),
        }
    }

    /// One property of `slot`.
    pub fn value(&self, slot: usize, wanted: PropKeyId) -> Option<Value> {
        match self {
            RelPropColumn::Empty => None,
            RelPropColumn::Numbers { key, kind, present, bits } => {
                (*key == wanted && present & (1 << slot) != 0).then(|| kind.value(bits[slot]))
            }
            RelPropColumn::Maps(maps) => maps[slot].as_deref().and_then(|m| m.get(wanted)).cloned(),
        }
    }

    /// One property of `slot` as a float, when it is a number.
    #[inline]
    pub fn number(&self, slot: usize, wanted: PropKeyId) -> Option<f64> {
        match self {
            RelPropColumn::Empty => None,
            RelPropColumn::Numbers { key, kind, present, bits } => {
                (*key == wanted && present & (1 << slot) != 0).then(|| kind.as_f64(bits[slot]))
            }
            RelPropColumn::Maps(maps) => maps[slot].as_deref().and_then(|m| m.get(wanted)).and_then(Value::as_f64),
        }
    }

    /// The key of the number column and the slots that have a number in it, when the leaf keeps one.
    pub fn number_key(&self) -> Option<(PropKeyId, u64)> {
        match self {
            RelPropColumn::Numbers { key, present, .. } => Some((*key, *present)),
            _ => None,
        }
    }

    /// Removes every property of `slot`.
    pub fn clear(&mut self, slot: usize) {
        match self {
            RelPropColumn::Empty => {}
            RelPropColumn::Numbers { present, .. } => *present &= !(1 << slot),
            RelPropColumn::Maps(maps) => maps[slot] = None,
        }
    }

    /// Sets one property of `slot` (null removes it); returns the previous value.
    pub fn set(&mut self, slot: usize, key: PropKeyId, value: Value) -> Option<Value> {
        if !matches!(self, RelPropColumn::Maps(_)) {
            let old = self.value(slot, key);
            if self.try_number(slot, key, &value, false) {
                return old;
            }
            if value.is_null() {
                if old.is_some() {
                    self.clear(slot);
                }
                return old;
            }
        }
        props_set(&mut self.maps()[slot], key, value)
    }

    /// Replaces every property of `slot` with `map` (nothing when it is empty).
    pub fn set_map(&mut self, slot: usize, map: PropMap) {
        if self.try_only_number(slot, &map) {
            return;
        }
        self.maps()[slot] = Some(Arc::new(map));
    }

    /// Replaces every property of `slot` with a shared map (bulk loading and checkpoints).
    pub fn set_shared(&mut self, slot: usize, props: Props) {
        let Some(map) = props else { return self.clear(slot) };
        if self.try_only_number(slot, &map) {
            return;
        }
        self.maps()[slot] = Some(map);
    }

    /// Makes `map` the properties of `slot` when the number column can hold it (or it is empty).
    fn try_only_number(&mut self, slot: usize, map: &PropMap) -> bool {
        let mut entries = map.iter();
        match (entries.next(), entries.next()) {
            (None, _) => {
                self.clear(slot);
                true
            }
            (Some((key, value)), None) => self.try_number(slot, key, value, true),
            _ => false,
        }
    }

    /// Stores `value` in the number column when the column can hold it: a number of the column's key and kind,
    /// or any number when no other slot has one (the column then takes its key and kind). `replace_slot`: the
    /// value becomes the slot's only property; otherwise it joins what the slot has, which must then be nothing
    /// or a value of the same key.
    fn try_number(&mut self, slot: usize, key: PropKeyId, value: &Value, replace_slot: bool) -> bool {
        let Some((kind, new_bits)) = NumberKind::of(value) else { return false };
        let bit = 1u64 << slot;
        match self {
            RelPropColumn::Numbers { key: k, kind: column_kind, present, bits } => {
                let others = *present & !bit;
                let fits = if others != 0 {
                    *k == key && *column_kind == kind
                } else {
                    replace_slot || *present & bit == 0 || *k == key
                };
                if !fits {
                    return false;
                }
                *k = key;
                *column_kind = kind;
                *present |= bit;
                Arc::make_mut(bits)[slot] = new_bits;
                true
            }
            RelPropColumn::Empty => {
                let mut bits = [0u64; LEAF_SIZE];
                bits[slot] = new_bits;
                *self = RelPropColumn::Numbers { key, kind, present: bit, bits: Arc::new(bits) };
                true
            }
            RelPropColumn::Maps(_) => false,
        }
    }

    /// The maps, converting the column to them first.
    fn maps(&mut self) -> &mut Vec<Props> {
        match self {
            RelPropColumn::Maps(_) => {}
            RelPropColumn::Empty => *self = RelPropColumn::Maps(vec![None; LEAF_SIZE]),
            RelPropColumn::Numbers { key, kind, present, bits } => {
                let maps = (0..LEAF_SIZE)
                    .map(|slot| {
                        (*present & (1 << slot) != 0).then(|| Arc::new(PropMap::single(*key, kind.value(bits[slot]))))
                    })
                    .collect();
                *self = RelPropColumn::Maps(maps);
            }
        }
        let RelPropColumn::Maps(maps) = self else { unreachable!("converted above") };
        maps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_leaf_of_floats_built_at_once_answers_as_one_set_slot_by_slot() {
        for len in [0, 1, 5, LEAF_SIZE - 1, LEAF_SIZE] {
            let weights: Vec<f64> = (0..len).map(|i| if i == 2 { f64::NAN } else { i as f64 * 0.25 - 3.0 }).collect();
            let built = RelPropColumn::floats(PropKeyId(4), &weights);
            let mut set = RelPropColumn::default();
            for (slot, &w) in weights.iter().enumerate() {
                set.set(slot, PropKeyId(4), Value::Float(w));
            }
            for slot in 0..LEAF_SIZE {
                assert_eq!(built.has(slot), set.has(slot), "len {len} slot {slot}");
                let (a, b) = (built.number(slot, PropKeyId(4)), set.number(slot, PropKeyId(4)));
                assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "len {len} slot {slot}");
                assert_eq!(built.value(slot, PropKeyId(5)), None);
            }
            assert_eq!(built.number_key(), set.number_key());
            assert_eq!(built.is_empty(), set.is_empty());
        }
    }

    #[test]
    fn weights_stay_in_the_column_and_copies_share_it() {
        let mut column = RelPropColumn::default();
        column.set(3, PropKeyId(1), Value::Float(0.5));
        column.set_map(4, PropMap::single(PropKeyId(1), Value::Float(2.0)));
        assert!(matches!(column, RelPropColumn::Numbers { .. }));
        let copy = column.clone();
        column.set(3, PropKeyId(1), Value::Float(9.0));
        assert_eq!(copy.value(3, PropKeyId(1)), Some(Value::Float(0.5)));
        assert_eq!(column.value(3, PropKeyId(1)), Some(Value::Float(9.0)));
        assert_eq!(column.number(4, PropKeyId(1)), Some(2.0));
        column.clear(3);
        assert!(!column.has(3));
        assert_eq!(copy.get(3).as_deref(), Some(&PropMap::single(PropKeyId(1), Value::Float(0.5))));
    }

    #[test]
    fn another_key_or_kind_turns_the_column_into_maps() {
        let mut column = RelPropColumn::default();
        column.set(0, PropKeyId(1), Value::Int(7));
        column.set(1, PropKeyId(1), Value::Float(1.5));
        assert!(matches!(column, RelPropColumn::Maps(_)));
        assert_eq!(column.value(0, PropKeyId(1)), Some(Value::Int(7)));
        assert_eq!(column.value(1, PropKeyId(1)), Some(Value::Float(1.5)));
    }

    #[derive(Clone, Debug)]
    enum Step {
        Set(usize, u32, Option<i8>, bool),
        Map(usize, Vec<(u32, i8)>),
        Clear(usize),
        Copy,
    }

    fn step() -> impl Strategy<Value = Step> {
        let slot = 0..LEAF_SIZE;
        prop_oneof![
            4 => (slot.clone(), 0..3u32, proptest::option::of(any::<i8>()), any::<bool>())
                .prop_map(|(s, k, v, f)| Step::Set(s, k, v, f)),
            2 => (slot.clone(), proptest::collection::vec((0..3u32, any::<i8>()), 0..3))
                .prop_map(|(s, m)| Step::Map(s, m)),
            1 => slot.prop_map(Step::Clear),
            1 => Just(Step::Copy),
        ]
    }

    fn number(v: i8, float: bool) -> Value {
        if float {
            Value::Float(f64::from(v) / 4.0)
        } else {
            Value::Int(i64::from(v))
        }
    }

    proptest! {
        /// The column answers as a map per slot would, whatever it holds, and copies never see later writes.
        #[test]
        fn the_column_behaves_as_maps(steps in proptest::collection::vec(step(), 1..80)) {
            let mut column = RelPropColumn::default();
            let mut model: Vec<BTreeMap<u32, Value>> = vec![BTreeMap::new(); LEAF_SIZE];
            let mut copies: Vec<(RelPropColumn, Vec<BTreeMap<u32, Value>>)> = Vec::new();
            for step in steps {
                match step {
                    Step::Set(slot, k, v, float) => {
                        let value = v.map_or(Value::Null, |v| number(v, float));
                        let old = column.set(slot, PropKeyId(k), value.clone());
                        let expected = match v {
                            Some(_) => model[slot].insert(k, value),
                            None => model[slot].remove(&k),
                        };
                        prop_assert_eq!(old, expected);
                    }
                    Step::Map(slot, entries) => {
                        let pairs: Vec<_> =
                            entries.iter().map(|&(k, v)| (PropKeyId(k), number(v, k == 1))).collect();
                        column.set_map(slot, PropMap::from_pairs(pairs.clone()));
                        model[slot] = pairs.into_iter().map(|(k, v)| (k.0, v)).collect();
                    }
                    Step::Clear(slot) => {
                        column.clear(slot);
                        model[slot].clear();
                    }
                    Step::Copy => copies.push((column.clone(), model.clone())),
                }
            }
            copies.push((column, model));
            for (column, model) in &copies {
                for (slot, want) in model.iter().enumerate() {
                    let got: BTreeMap<u32, Value> = column
                        .get(slot)
                        .map(|m| m.iter().map(|(k, v)| (k.0, v.clone())).collect())
                        .unwrap_or_default();
                    prop_assert_eq!(&got, want);
                    prop_assert_eq!(column.has(slot), !want.is_empty());
                    for k in 0..3 {
                        prop_assert_eq!(column.value(slot, PropKeyId(k)), want.get(&k).cloned());
                        prop_assert_eq!(column.number(slot, PropKeyId(k)), want.get(&k).and_then(Value::as_f64));
                    }
                }
            }
        }
    }
}
