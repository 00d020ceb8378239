//! Writes to a [`GraphState`]: every operation is checked completely before anything changes, and touched
//! leaves are sealed at commit.

use super::*;

impl GraphState {
    /// Checks `op` against this state and applies it; on error nothing has changed.
    pub fn apply(&mut self, op: &Op) -> Result<()> {
        match op {
            Op::Token { .. } => Ok(()),
            Op::CreateNode { id, labels, props } => self.create_node(*id, labels, props),
            Op::CreateEmptyNodes { first, count } => self.create_empty_nodes(*first, *count),
            Op::SetNodeProp { id, key, value } => self.set_node_prop(*id, *key, value.clone()),
            Op::AddLabel { id, label } => self.add_label(*id, *label),
            Op::RemoveLabel { id, label } => self.remove_label(*id, *label),
            Op::DeleteNode { id } => self.delete_node(*id),
            Op::CreateRel { id, ty, src, dst, props } => self.create_rel(*id, *ty, *src, *dst, props),
            Op::SetRelProp { id, key, value } => self.set_rel_prop(*id, *key, value.clone()),
            Op::DeleteRel { id } => self.delete_rel(*id),
            Op::DeclareUniqueKey { label, key, name } => self.declare_unique_key(*label, *key, name.as_deref()),
            Op::DropUniqueKey { label, key } => {
                let mut unique = (*self.unique).clone();
                unique.retain(|u| !(u.label == *label && u.key == *key));
                self.unique = Arc::new(unique);
                Ok(())
            }
            Op::CreateIndex { label, key, name } => self.create_index(*label, *key, name.as_deref()),
            Op::DropIndex { label, key } => {
                if !self.has_index(*label, *key) {
                    return Err(StorageError::ConstraintViolation(format!(
                        "there is no index on label {} and key {}",
                        label.0, key.0
                    )));
                }
                Arc::make_mut(&mut self.indexes).retain(|i| !(i.label == *label && i.key == *key));
                Ok(())
            }
            Op::CreateRelIndex { ty, key, name, unique } => self.create_rel_index(*ty, *key, name.as_deref(), *unique),
            Op::CreateCompositeIndex { label, keys, name, unique } => {
                self.create_composite_index(*label, keys, name.as_deref(), *unique)
            }
            Op::DropCompositeIndex { label, keys } => self.drop_composite_index(*label, keys),
            Op::DropRelIndex { ty, key } => {
                if !self.has_rel_index(*ty, *key) {
                    return Err(StorageError::ConstraintViolation(format!(
                        "there is no index on relationship type {} and key {}",
                        ty.0, key.0
                    )));
                }
                Arc::make_mut(&mut self.rel_indexes).retain(|i| !(i.ty == *ty && i.key == *key));
                Ok(())
            }
        }
    }

    /// Refuses a name some index or unique key already has: names identify them to whoever drops them.
    pub(super) fn check_name_free(&self, name: Option<&str>) -> Result<()> {
        let Some(name) = name else { return Ok(()) };
        let taken = self
            .indexes
            .iter()
            .filter_map(|i| i.name.as_deref())
            .chain(self.rel_indexes.iter().filter_map(|i| i.name.as_deref()))
            .chain(self.composites.iter().filter_map(|i| i.name.as_deref()))
            .chain(self.unique.iter().filter_map(|u| u.name.as_deref()));
        if taken.into_iter().any(|n| n == name) {
            return Err(StorageError::ConstraintViolation(format!(
                "an index or constraint named '{name}' already exists"
            )));
        }
        Ok(())
    }

    fn create_index(&mut self, label: LabelId, key: PropKeyId, name: Option<&str>) -> Result<()> {
        if self.has_index(label, key) {
            return Err(StorageError::ConstraintViolation(format!(
                "an index on label {} and key {} already exists",
                label.0, key.0
            )));
        }
        self.check_name_free(name)?;
        let mut entries = Vec::new();
        let _ = self.visit_label::<()>(label, |n| {
            if let Some(k) = self.node_prop(n, key).and_then(crate::index::IndexKey::from_value) {
                entries.push((k, n.0));
            }
            ControlFlow::Continue(())
        });
        let mut index = PropertyIndex::build(label, key, entries);
        index.name = name.map(Arc::from);
        Arc::make_mut(&mut self.indexes).push(index);
        Ok(())
    }

    /// Creates the relationship property index; a `unique` one backs a uniqueness constraint, refused while two
    /// relationships share a value.
    fn create_rel_index(&mut self, ty: TypeId, key: PropKeyId, name: Option<&str>, unique: bool) -> Result<()> {
        if self.has_rel_index(ty, key) {
            return Err(StorageError::ConstraintViolation(format!(
                "an index on relationship type {} and key {} already exists",
                ty.0, key.0
            )));
        }
        self.check_name_free(name)?;
        let mut entries = Vec::new();
        if self.type_count(ty) > 0 {
            let _ = self.visit_all_rels::<()>(|r| {
                if r.ty == ty {
                    if let Some(k) = self.rel_prop(r.id, key).as_ref().and_then(crate::index::IndexKey::from_value) {
                        entries.push((k, r.id.0));
                    }
                }
                ControlFlow::Continue(())
            });
        }
        let mut index = RelPropertyIndex::build(ty, key, entries);
        if let Some((a, b)) = unique.then(|| self.rel_duplicate(key, &index.entries)).flatten() {
            return Err(StorageError::ConstraintViolation(format!(
                "cannot create the uniqueness constraint: {} and {} share the value of its property",
                RelId(a),
                RelId(b)
            )));
        }
        index.name = name.map(Arc::from);
        index.unique = unique;
        Arc::make_mut(&mut self.rel_indexes).push(index);
        Ok(())
    }

    /// Refuses `value` for `key` on relationship `id` of type `ty` when a uniqueness constraint files it under
    /// another relationship.
    fn check_rel_unique(&self, id: RelId, ty: TypeId, key: PropKeyId, value: &Value) -> Result<()> {
        let constrained = self.rel_indexes.iter().filter(|i| i.unique && i.ty == ty && i.key == key);
        for index in constrained {
            let holds = |h: &RelId| self.rel_prop(*h, key).is_some_and(|v| crate::index::same_unique_value(&v, value));
            if let Some(holder) = index.holders_other_than(value, id).into_iter().find(holds) {
                return Err(StorageError::RelKeyTaken { holder, ty, key, value: value.clone() });
            }
        }
        Ok(())
    }

    /// Adds (`present`) or removes the entry of relationship `id` of type `ty` with `value` for `key` in the
    /// relationship property indexes.
    fn update_rel_indexes(&mut self, id: RelId, ty: TypeId, key: PropKeyId, value: &Value, present: bool) {
        if !self.rel_indexes.iter().any(|i| i.key == key && i.ty == ty) {
            return;
        }
        for index in Arc::make_mut(&mut self.rel_indexes).iter_mut().filter(|i| i.key == key && i.ty == ty) {
            if present {
                index.insert(value, id);
            } else {
                index.remove(value, id);
            }
        }
    }

    /// Adds (`present`) or removes the entry of node `id` with `value` for `key` in the property indexes of
    /// `labels`.
    fn update_indexes(&mut self, id: NodeId, labels: &[LabelId], key: PropKeyId, value: &Value, present: bool) {
        if !self.indexes.iter().any(|i| i.key == key && labels.contains(&i.label)) {
            return;
        }
        for index in Arc::make_mut(&mut self.indexes).iter_mut() {
            if index.key == key && labels.contains(&index.label) {
                if present {
                    index.insert(value, id);
                } else {
                    index.remove(value, id);
                }
            }
        }
    }

    fn mark_dirty(&mut self, leaf: u64) {
        if let Some(flat) = &self.flat {
            flat.mark_changed(leaf, self.version);
        }
        if self.dirty.last() != Some(&leaf) {
            self.dirty.push(leaf);
        }
    }

    /// Folds unique-key maps that a transaction grew a lot (see [`crate::keymap::KeyMap::wants_fold_at_commit`]).
    /// Called by the committing transaction before it takes the commit lock, so other committers never wait
    /// for a fold.
    pub(crate) fn fold_large_key_maps(&mut self) {
        if self.unique.iter().any(|u| u.map.wants_fold_at_commit()) {
            for u in Arc::make_mut(&mut self.unique).iter_mut().filter(|u| u.map.wants_fold_at_commit()) {
                u.map.fold();
            }
        }
    }

    /// Sorts the adjacency deltas touched since the last seal and folds oversized ones into their bases.
    pub fn seal(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        let mut released = 0;
        for leaf_index in dirty {
            if self.nodes.get(leaf_index).is_some() {
                released += self.settle_leaf(leaf_index, false);
            }
        }
        self.release_flat(released);
    }

    /// Seals node leaf `index`'s adjacency (with `rebuild`, folds every delta into a new base), and removes the
    /// leaf once it holds nothing. Returns how many entries of the flat arrays its blocks stopped sharing.
    pub(crate) fn settle_leaf(&mut self, index: u64, rebuild: bool) -> usize {
        let leaf = self.nodes.get_mut(index);
        let shared = leaf.out.shared_len() + leaf.inc.shared_len();
        if rebuild {
            leaf.out.rebuild();
            leaf.inc.rebuild();
        } else {
            leaf.out.seal();
            leaf.inc.seal();
        }
        if leaf.live == 0 && leaf.out.is_empty() && leaf.inc.is_empty() {
            self.nodes.remove(index);
            shared
        } else {
            shared - (leaf.out.shared_len() + leaf.inc.shared_len())
        }
    }

    /// Counts `released` entries of the flat arrays as no longer shared, and drops the arrays once most are.
    pub(crate) fn release_flat(&mut self, released: usize) {
        if released > 0 && self.flat.as_ref().is_some_and(|f| f.release(released)) {
            self.drop_flat();
        }
    }

    /// Detaches the flat adjacency, giving every leaf block that shares its arrays ids of its own, so that the
    /// arrays are freed once the snapshots that still use them are gone (deleting most of a bulk-loaded graph
    /// must return its memory). Costs a copy of the unchanged leaves' ids, once.
    pub(crate) fn drop_flat(&mut self) {
        if self.flat.take().is_none() {
            return;
        }
        let mut shared = Vec::new();
        self.nodes.for_each(|index, leaf| {
            if leaf.out.has_shared_base() || leaf.inc.has_shared_base() {
                shared.push(index);
            }
        });
        for index in shared {
            let leaf = self.nodes.get_mut(index);
            leaf.out.own_base();
            leaf.inc.own_base();
        }
    }

    fn check_unique(&self, id: NodeId, labels: &[LabelId], key: PropKeyId, value: &Value) -> Result<()> {
        for u in self.unique.iter() {
            if u.key == key && labels.contains(&u.label) {
                if let Some(&holder) = u.map.get(value) {
                    if holder != id.0 {
                        return Err(StorageError::UniqueKeyTaken {
                            holder: NodeId(holder),
                            label: u.label,
                            key: u.key,
                            value: value.clone(),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn index_key(&mut self, id: NodeId, labels: &[LabelId], key: PropKeyId, value: Option<&Value>, present: bool) {
        if value.is_none() || !self.unique.iter().any(|u| u.key == key && labels.contains(&u.label)) {
            return;
        }
        let value = value.expect("checked");
        for u in Arc::make_mut(&mut self.unique).iter_mut() {
            if u.key == key && labels.contains(&u.label) {
                if present {
                    u.map.insert(value.clone(), id.0);
                } else if u.map.get(value) == Some(&id.0) {
                    u.map.remove(value);
                }
            }
        }
    }

    fn set_label_bit(&mut self, label: LabelId, id: NodeId, on: bool) {
        let labels = Arc::make_mut(&mut self.labels);
        if labels.len() <= label.0 as usize {
            labels.resize_with(label.0 as usize + 1, LabelIndex::default);
        }
        let index = &mut labels[label.0 as usize];
        let leaf_index = id.0 / BITS_PER_LEAF as u64;
        let bit = (id.0 % BITS_PER_LEAF as u64) as usize;
        let leaf = index.bits.get_mut(leaf_index);
        let mask = 1u64 << (bit % 64);
        let was = leaf.0[bit / 64] & mask != 0;
        if on && !was {
            leaf.0[bit / 64] |= mask;
            index.count += 1;
        } else if !on && was {
            leaf.0[bit / 64] &= !mask;
            index.count -= 1;
            if leaf.is_empty() {
                index.bits.remove(leaf_index);
            }
        }
    }

    pub(crate) fn validate_props(props: &[(PropKeyId, Value)]) -> Result<()> {
        for (_, v) in props {
            v.validate().map_err(StorageError::InvalidValue)?;
        }
        Ok(())
    }

    fn create_node(&mut self, id: NodeId, labels: &[LabelId], props: &crate::records::Props) -> Result<()> {
        if self.node_exists(id) {
            return Err(StorageError::ConstraintViolation(format!("{id} already exists")));
        }
        let mut label_set: Labels = labels.iter().copied().collect();
        if label_set.len() > 1 {
            label_set.sort_unstable();
            label_set.dedup();
        }
        let map = crate::records::props_entries(props);
        Self::validate_props(map)?;
        for &(k, ref v) in map {
            self.check_unique(id, &label_set, k, v)?;
        }
        let composite_entries = self.composite_entries_with(&label_set, None, |k| props_get(props, k));
        self.check_composites_unique(id, &composite_entries, |k| props_get(props, k))?;
        for &(k, ref v) in map {
            self.index_key(id, &label_set, k, Some(v), true);
            self.update_indexes(id, &label_set, k, v, true);
        }
        for &l in &label_set {
            self.set_label_bit(l, id, true);
        }
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        leaf.live |= 1 << slot;
        leaf.clear_slot(slot);
        if !label_set.is_empty() {
            *leaf.labels_mut(slot) = label_set;
        }
        if props.is_some() {
            *leaf.props_mut(slot) = props.clone();
        }
        self.node_count += 1;
        self.update_composites(id, Vec::new(), composite_entries);
        Ok(())
    }

    /// Creates the nodes `first .. first + count` without labels or properties, a leaf at a time; all or none.
    pub(crate) fn create_empty_nodes(&mut self, first: NodeId, count: u64) -> Result<()> {
        let end = first.0.checked_add(count).ok_or_else(|| {
            StorageError::InvalidValue(format!("{count} node ids from {} run past the largest id", first.0))
        })?;
        // (leaf index, first id in the leaf, the run's slots there), one per leaf the run touches.
        let chunks = || {
            let mut id = first.0;
            std::iter::from_fn(move || {
                (id < end).then(|| {
                    let (leaf_index, slot) = split(id);
                    let n = (LEAF_SIZE as u64 - slot as u64).min(end - id);
                    let chunk = (leaf_index, id, slot_mask(slot, n));
                    id += n;
                    chunk
                })
            })
        };
        let taken = |leaf: &NodeLeaf, id: u64, mask: u64| {
            let slot = (id as usize) & (LEAF_SIZE - 1);
            let bit = (leaf.live & mask).trailing_zeros() as u64;
            StorageError::ConstraintViolation(format!("{} already exists", NodeId(id - slot as u64 + bit)))
        };
        // A run over several leaves is checked before any changes, so a refused one leaves the state as it was;
        // a run in one leaf (a single node, usually) is checked below, in the one walk down the spine.
        if chunks().nth(1).is_some() {
            for (leaf_index, id, mask) in chunks() {
                if let Some(leaf) = self.nodes.get(leaf_index).filter(|l| l.live & mask != 0) {
                    return Err(taken(leaf, id, mask));
                }
            }
        }
        for (leaf_index, id, mask) in chunks() {
            let leaf = self.nodes.get_mut(leaf_index);
            if leaf.live & mask != 0 {
                return Err(taken(leaf, id, mask));
            }
            leaf.live |= mask;
            leaf.clear_slots(mask);
        }
        self.node_count += count;
        Ok(())
    }

    fn set_node_prop(&mut self, id: NodeId, key: PropKeyId, value: Value) -> Result<()> {
        value.validate().map_err(StorageError::InvalidValue)?;
        let labels: Labels = self.node_labels(id).ok_or(StorageError::NodeNotFound(id))?.iter().copied().collect();
        if !value.is_null() {
            self.check_unique(id, &labels, key, &value)?;
        }
        let old = self.node_prop(id, key).cloned();
        let before = self.composite_entries(id, &labels, Some(key));
        let new_value = Some(&value).filter(|v| !v.is_null());
        let prop = |k| if k == key { new_value } else { self.node_prop(id, k) };
        let after = self.composite_entries_with(&labels, Some(key), prop);
        self.check_composites_unique(id, &after, prop)?;
        self.index_key(id, &labels, key, old.as_ref(), false);
        self.index_key(id, &labels, key, new_value, true);
        if let Some(old) = &old {
            self.update_indexes(id, &labels, key, old, false);
        }
        self.update_indexes(id, &labels, key, &value, true);
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        props_set(leaf.props_mut(slot), key, value);
        self.update_composites(id, before, after);
        Ok(())
    }

    fn add_label(&mut self, id: NodeId, label: LabelId) -> Result<()> {
        let labels = self.node_labels(id).ok_or(StorageError::NodeNotFound(id))?;
        if labels.contains(&label) {
            return Ok(());
        }
        let props: Vec<(PropKeyId, Value)> =
            self.node_props(id).flatten().map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
        for (k, v) in &props {
            self.check_unique(id, &[label], *k, v)?;
        }
        let after = self.composite_entries(id, &[label], None);
        self.check_composites_unique(id, &after, |k| self.node_prop(id, k))?;
        for (k, v) in &props {
            self.index_key(id, &[label], *k, Some(v), true);
            self.update_indexes(id, &[label], *k, v, true);
        }
        self.set_label_bit(label, id, true);
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        let set = leaf.labels_mut(slot);
        let pos = set.binary_search(&label).unwrap_or_else(|p| p);
        set.insert(pos, label);
        self.update_composites(id, Vec::new(), after);
        Ok(())
    }

    fn remove_label(&mut self, id: NodeId, label: LabelId) -> Result<()> {
        let labels = self.node_labels(id).ok_or(StorageError::NodeNotFound(id))?;
        if !labels.contains(&label) {
            return Ok(());
        }
        let props: Vec<(PropKeyId, Value)> =
            self.node_props(id).flatten().map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
        for (k, v) in &props {
            self.index_key(id, &[label], *k, Some(v), false);
            self.update_indexes(id, &[label], *k, v, false);
        }
        let before = self.composite_entries(id, &[label], None);
        self.update_composites(id, before, Vec::new());
        self.set_label_bit(label, id, false);
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        leaf.labels_mut(slot).retain(|l| *l != label);
        Ok(())
    }

    fn delete_node(&mut self, id: NodeId) -> Result<()> {
        let (leaf, slot) = self.node_leaf(id).ok_or(StorageError::NodeNotFound(id))?;
        let degree = leaf.out.degree(slot, TypeFilter::All) + leaf.inc.degree(slot, TypeFilter::All);
        if degree > 0 {
            return Err(StorageError::NodeHasRelationships(id, self.degree(id, Direction::Both, TypeFilter::All)));
        }
        let labels: Labels = leaf.labels(slot).iter().copied().collect();
        let props: Vec<(PropKeyId, Value)> =
            leaf.props(slot).as_deref().map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
        for (k, v) in &props {
            self.index_key(id, &labels, *k, Some(v), false);
            self.update_indexes(id, &labels, *k, v, false);
        }
        let before = self.composite_entries(id, &labels, None);
        self.update_composites(id, before, Vec::new());
        for &l in &labels {
            self.set_label_bit(l, id, false);
        }
        let (leaf_index, slot) = split(id.0);
        let leaf = self.nodes.get_mut(leaf_index);
        leaf.live &= !(1 << slot);
        leaf.clear_slot(slot);
        let empty = leaf.live == 0 && leaf.out.is_empty() && leaf.inc.is_empty();
        if empty {
            self.nodes.remove(leaf_index);
        }
        self.node_count -= 1;
        Ok(())
    }

    fn create_rel(
        &mut self,
        id: RelId,
        ty: TypeId,
        src: NodeId,
        dst: NodeId,
        props: &[(PropKeyId, Value)],
    ) -> Result<()> {
        if self.rel_exists(id) {
            return Err(StorageError::ConstraintViolation(format!("{id} already exists")));
        }
        if !self.node_exists(src) {
            return Err(StorageError::NodeNotFound(src));
        }
        if !self.node_exists(dst) {
            return Err(StorageError::NodeNotFound(dst));
        }
        Self::validate_props(props)?;
        let map = PropMap::from_slice(props);
        if self.rel_indexes.iter().any(|i| i.ty == ty) {
            for (k, v) in map.iter() {
                self.check_rel_unique(id, ty, k, v)?;
            }
            for (k, v) in map.iter() {
                self.update_rel_indexes(id, ty, k, v, true);
            }
        }
        let (leaf_index, slot) = split(id.0);
        let leaf = self.rels.get_mut(leaf_index);
        leaf.ensure_slots();
        leaf.live |= 1 << slot;
        leaf.ty[slot] = ty;
        leaf.set_ends(slot, src.0, dst.0);
        leaf.props_mut().set_map(slot, map);
        let (src_leaf, src_slot) = split(src.0);
        let leaf = self.nodes.get_mut(src_leaf);
        leaf.out.add(src_slot, AdjEntry { ty, nbr: dst.0, rel: id.0 });
        if src == dst {
            leaf.loops |= 1 << src_slot;
        }
        self.mark_dirty(src_leaf);
        let (dst_leaf, dst_slot) = split(dst.0);
        self.nodes.get_mut(dst_leaf).inc.add(dst_slot, AdjEntry { ty, nbr: src.0, rel: id.0 });
        self.mark_dirty(dst_leaf);
        self.rel_count += 1;
        self.count_type(ty, 1);
        Ok(())
    }

    fn set_rel_prop(&mut self, id: RelId, key: PropKeyId, value: Value) -> Result<()> {
        value.validate().map_err(StorageError::InvalidValue)?;
        if !self.rel_exists(id) {
            return Err(StorageError::RelNotFound(id));
        }
        if let Some(flat) = &self.flat {
            // The flat arrays may hold this relationship's properties for both its ends.
            let rec = self.rel(id).expect("checked above");
            flat.mark_changed(split(rec.src.0).0, self.version);
            flat.mark_changed(split(rec.dst.0).0, self.version);
        }
        let (leaf_index, slot) = split(id.0);
        if value.is_null() && self.rels.get(leaf_index).is_none_or(|l| !l.props().has(slot)) {
            return Ok(());
        }
        if !self.rel_indexes.is_empty() {
            let ty = self.rel(id).expect("checked above").ty;
            self.check_rel_unique(id, ty, key, &value)?;
            if let Some(old) = self.rel_prop(id, key) {
                self.update_rel_indexes(id, ty, key, &old, false);
            }
            self.update_rel_indexes(id, ty, key, &value, true);
        }
        self.rels.get_mut(leaf_index).props_mut().set(slot, key, value);
        Ok(())
    }

    fn delete_rel(&mut self, id: RelId) -> Result<()> {
        let rec = self.rel(id).ok_or(StorageError::RelNotFound(id))?;
        if self.rel_indexes.iter().any(|i| i.ty == rec.ty) {
            let props: Vec<(PropKeyId, Value)> = self
                .rel_props(id)
                .flatten()
                .map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect())
                .unwrap_or_default();
            for (k, v) in &props {
                self.update_rel_indexes(id, rec.ty, *k, v, false);
            }
        }
        let (leaf_index, slot) = split(id.0);
        let leaf = self.rels.get_mut(leaf_index);
        leaf.live &= !(1 << slot);
        leaf.props_mut().clear(slot);
        if leaf.live == 0 {
            self.rels.remove(leaf_index);
        }
        let (src_leaf, src_slot) = split(rec.src.0);
        let removed_out =
            self.nodes.get_mut(src_leaf).out.remove(src_slot, AdjEntry { ty: rec.ty, nbr: rec.dst.0, rel: id.0 });
        self.mark_dirty(src_leaf);
        let (dst_leaf, dst_slot) = split(rec.dst.0);
        let removed_in =
            self.nodes.get_mut(dst_leaf).inc.remove(dst_slot, AdjEntry { ty: rec.ty, nbr: rec.src.0, rel: id.0 });
        self.mark_dirty(dst_leaf);
        debug_assert!(removed_out && removed_in, "adjacency out of step with {id}");
        if rec.src == rec.dst {
            let leaf = self.nodes.get_mut(src_leaf);
            let mut more = false;
            let _ = leaf.out.visit_to::<()>(src_slot, rec.src.0, TypeFilter::All, |_| {
                more = true;
                ControlFlow::Break(())
            });
            if !more {
                leaf.loops &= !(1 << src_slot);
            }
        }
        self.rel_count -= 1;
        self.count_type(rec.ty, -1);
        Ok(())
    }

    /// Declares a unique key; declaring it again is nothing (it keeps the name it had). A label may declare
    /// several; the first is its key ([`GraphState::unique_key`]).
    fn declare_unique_key(&mut self, label: LabelId, key: PropKeyId, name: Option<&str>) -> Result<()> {
        if self.has_unique_key(label, key) {
            return Ok(());
        }
        self.check_name_free(name)?;
        let mut entries = Vec::new();
        let _ = self.visit_label::<()>(label, |n| {
            if let Some(v) = self.node_prop(n, key) {
                entries.push((v.clone(), n.0));
            }
            ControlFlow::Continue(())
        });
        let map = crate::keymap::KeyMap::build(entries).map_err(|(a, b, v)| {
            StorageError::ConstraintViolation(format!(
                "cannot declare the unique key: nodes {a} and {b} share the value {}",
                crate::value::shown(&v)
            ))
        })?;
        Arc::make_mut(&mut self.unique).push(UniqueIndex { label, key, map, name: name.map(Arc::from) });
        Ok(())
    }

    /// Approximate heap bytes of adjacency bases and deltas (for `info` and the memory benchmark).
    pub fn adjacency_bytes(&self) -> usize {
        let mut total = 0;
        self.nodes.for_each(|_, leaf| total += leaf.out.base_bytes() + leaf.inc.base_bytes());
        total
    }
}
