//! Composite indexes on a [`GraphState`] ([`CompositeIndex`]): created over a label's nodes, kept current by
//! every node write that changes a property they cover or a label, and read by an equality on all their
//! properties.

use super::*;
use crate::index::IndexEntry;
use crate::pset::PSet;

impl GraphState {
    /// The composite indexes, as `(label, keys)`, in creation order.
    pub fn composite_indexes(&self) -> Vec<(LabelId, Vec<PropKeyId>)> {
        self.composites.iter().map(|i| (i.label, i.keys.clone())).collect()
    }

    /// The properties of each composite index on `label`'s nodes, in creation order.
    pub fn composite_keys(&self, label: LabelId) -> impl Iterator<Item = &[PropKeyId]> {
        self.composites.iter().filter(move |i| i.label == label).map(|i| i.keys.as_slice())
    }

    /// The composite index on exactly `keys` (in that order) of `label`'s nodes.
    pub fn composite_index(&self, label: LabelId, keys: &[PropKeyId]) -> Option<&CompositeIndex> {
        self.composites.iter().find(|i| i.label == label && i.keys == keys)
    }

    pub fn composite_index_name(&self, label: LabelId, keys: &[PropKeyId]) -> Option<Arc<str>> {
        self.composite_index(label, keys).and_then(|i| i.name.clone())
    }

    /// Whether the composite index on `keys` of `label` backs a uniqueness constraint.
    pub fn composite_index_is_unique(&self, label: LabelId, keys: &[PropKeyId]) -> bool {
        self.composite_index(label, keys).is_some_and(|i| i.unique)
    }

    /// The nodes of `label` whose properties `keys` equal `values` one for one under Cypher's `=`, by id; empty
    /// without such an index.
    pub fn composite_seek(&self, label: LabelId, keys: &[PropKeyId], values: &[Value]) -> Vec<NodeId> {
        super::read::gathered(|f| self.composite_index(label, keys).map(|i| i.visit_eq(values, f)))
    }

    /// The nodes of `label` whose properties `keys` but the last equal `prefix` one for one under Cypher's `=`
    /// and whose last lies between the bounds; empty without such an index.
    pub fn composite_range(
        &self,
        label: LabelId,
        keys: &[PropKeyId],
        prefix: &[Value],
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Vec<NodeId> {
        let index = self.composite_index(label, keys);
        super::read::gathered(|f| index.map(|i| i.visit_prefix_range(prefix, lower, upper, f)))
    }

    /// Creates the composite index; a `unique` one backs a uniqueness constraint, refused while two nodes share
    /// its values.
    pub(super) fn create_composite_index(
        &mut self,
        label: LabelId,
        keys: &[PropKeyId],
        name: Option<&str>,
        unique: bool,
    ) -> Result<()> {
        let distinct = keys.iter().collect::<std::collections::BTreeSet<_>>().len() == keys.len();
        if keys.len() < 2 || !distinct {
            return Err(StorageError::InvalidValue(format!(
                "a composite index covers two or more distinct properties, not {keys:?}"
            )));
        }
        if self.composite_index(label, keys).is_some() {
            return Err(StorageError::ConstraintViolation(format!(
                "an index on label {} and keys {keys:?} already exists",
                label.0
            )));
        }
        self.check_name_free(name)?;
        let mut entries = Vec::new();
        let _ = self.visit_label::<()>(label, |n| {
            if let Some(k) = CompositeIndex::key_of(keys.iter().map(|&k| self.node_prop(n, k))) {
                entries.push((k, n.0));
            }
            ControlFlow::Continue(())
        });
        let entries = crate::index::entry_tree(entries);
        if let Some((a, b)) = unique.then(|| self.composite_duplicate(keys, &entries)).flatten() {
            return Err(StorageError::ConstraintViolation(format!(
                "cannot create the uniqueness constraint: {} and {} share the values of its properties",
                NodeId(a),
                NodeId(b)
            )));
        }
        let index = CompositeIndex { label, keys: keys.to_vec(), entries, name: name.map(Arc::from), unique };
        Arc::make_mut(&mut self.composites).push(index);
        Ok(())
    }

    pub(super) fn drop_composite_index(&mut self, label: LabelId, keys: &[PropKeyId]) -> Result<()> {
        if self.composite_index(label, keys).is_none() {
            return Err(StorageError::ConstraintViolation(format!(
                "there is no index on label {} and keys {keys:?}",
                label.0
            )));
        }
        Arc::make_mut(&mut self.composites).retain(|i| !(i.label == label && i.keys == keys));
        Ok(())
    }

    /// The entries node `id` has (or would have, as it stands now) in the composite indexes of `labels` that
    /// cover `key` (any key when `None`), by index position. Empty at once when there are no composite indexes.
    pub(super) fn composite_entries(
        &self,
        id: NodeId,
        labels: &[LabelId],
        key: Option<PropKeyId>,
    ) -> Vec<(usize, IndexKey)> {
        self.composite_entries_with(labels, key, |k| self.node_prop(id, k))
    }

    /// [`Self::composite_entries`] of a node whose properties `prop` gives: how a write checks the entries a
    /// node will have before it changes anything.
    pub(super) fn composite_entries_with<'v>(
        &self,
        labels: &[LabelId],
        key: Option<PropKeyId>,
        prop: impl Fn(PropKeyId) -> Option<&'v Value>,
    ) -> Vec<(usize, IndexKey)> {
        if self.composites.is_empty() {
            return Vec::new();
        }
        let covers = |i: &CompositeIndex| labels.contains(&i.label) && key.is_none_or(|k| i.keys.contains(&k));
        self.composites
            .iter()
            .enumerate()
            .filter(|(_, i)| covers(i))
            .filter_map(|(at, i)| Some((at, CompositeIndex::key_of(i.keys.iter().map(|&k| prop(k)))?)))
            .collect()
    }

    /// Refuses entries `after` (from [`Self::composite_entries`] of a node whose properties `prop` gives) that a
    /// unique composite index already files under another node holding the same values.
    pub(super) fn check_composites_unique<'v>(
        &self,
        id: NodeId,
        after: &[(usize, IndexKey)],
        prop: impl Fn(PropKeyId) -> Option<&'v Value>,
    ) -> Result<()> {
        for (at, key) in after {
            let index = &self.composites[*at];
            if !index.unique {
                continue;
            }
            let holds = |holder: NodeId| same_values(&index.keys, |k| self.node_prop(holder, k), &prop);
            if let Some(holder) = index.holders_other_than(key, id).into_iter().find(|&h| holds(h)) {
                let values = index.keys.iter().map(|&k| self.node_prop(holder, k).cloned().unwrap_or(Value::Null));
                return Err(StorageError::CompositeKeyTaken {
                    holder,
                    label: index.label,
                    keys: index.keys.clone(),
                    values: values.collect(),
                });
            }
        }
        Ok(())
    }

    /// Replaces node `id`'s entries `before` by `after` (both from [`Self::composite_entries`]).
    pub(super) fn update_composites(
        &mut self,
        id: NodeId,
        before: Vec<(usize, IndexKey)>,
        after: Vec<(usize, IndexKey)>,
    ) {
        if before == after {
            return;
        }
        let composites = Arc::make_mut(&mut self.composites);
        for (at, key) in before {
            composites[at].entries.remove(&(key, id.0));
        }
        for (at, key) in after {
            composites[at].entries.insert((key, id.0));
        }
    }
}

/// Whether two holders whose properties `a` and `b` give hold the same values of every one of `keys`, as a
/// uniqueness constraint compares them.
fn same_values<'v, 'w>(
    keys: &[PropKeyId],
    a: impl Fn(PropKeyId) -> Option<&'v Value>,
    b: impl Fn(PropKeyId) -> Option<&'w Value>,
) -> bool {
    keys.iter().all(|&k| matches!((a(k), b(k)), (Some(x), Some(y)) if crate::index::same_unique_value(x, y)))
}

/// The first two ids of one of `runs` that `same` says hold the same values.
fn first_pair(runs: &[Vec<u64>], same: impl Fn(u64, u64) -> bool) -> Option<(u64, u64)> {
    runs.iter().find_map(|run| {
        run.iter().enumerate().find_map(|(i, &a)| run[i + 1..].iter().find(|&&b| same(a, b)).map(|&b| (a, b)))
    })
}

impl GraphState {
    /// Two nodes that `entries` (of a composite index on `keys`) file under one key and that hold the same values:
    /// what breaks a uniqueness constraint on them.
    pub(crate) fn composite_duplicate(&self, keys: &[PropKeyId], entries: &PSet<IndexEntry>) -> Option<(u64, u64)> {
        let same =
            |a: u64, b: u64| same_values(keys, |k| self.node_prop(NodeId(a), k), |k| self.node_prop(NodeId(b), k));
        first_pair(&crate::index::shared_keys(entries), same)
    }

    /// Two relationships that `entries` (of an index on `key`) file under one key and that hold the same value.
    pub(crate) fn rel_duplicate(&self, key: PropKeyId, entries: &PSet<IndexEntry>) -> Option<(u64, u64)> {
        let same = |a: u64, b: u64| match (self.rel_prop(RelId(a), key), self.rel_prop(RelId(b), key)) {
            (Some(x), Some(y)) => crate::index::same_unique_value(&x, &y),
            _ => false,
        };
        first_pair(&crate::index::shared_keys(entries), same)
    }
}
