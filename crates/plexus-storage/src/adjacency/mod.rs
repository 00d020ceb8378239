//! Adjacency of one direction for the nodes of one leaf: an immutable base plus a small delta for the leaf.
//!
//! The base is a compressed-sparse-row block: every node's relationships grouped by type, sorted by neighbour,
//! in flat arrays shared by every snapshot. Changes since the base was built sit in the leaf's delta: entries
//! added and base entries removed, each a flat array ordered by (slot, entry), with a mask of the slots that have
//! any. Reads merge the two; degree by type is computed from group lengths and delta counts without touching
//! entries. When the delta outgrows about twice the square root of the base, the committer folds it into a new
//! base, which bounds both the copy a commit makes of a delta and the amortised cost of rebuilding (the LSM idea
//! applied to adjacency lists, at the granularity of a leaf).

use std::ops::ControlFlow;
// Without a weak count, the uniqueness check before each delta write is a plain load (see `pvec`).
use triomphe::Arc;

use crate::ids::TypeId;
use crate::idvec::{IdSlice, IdVec, SharedArray, SharedIds};
use crate::LEAF_SIZE;

mod delta;
use delta::{LeafDelta, SlotDelta, SlotEntry};

/// One relationship as seen from one end: its type, the node at the other end, and its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AdjEntry {
    pub ty: TypeId,
    pub nbr: u64,
    pub rel: u64,
}

/// An [`AdjEntry`] whose ids fit 32 bits, as the bulk loader sorts them (same field order, so the same order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct NarrowEntry {
    pub ty: u32,
    pub nbr: u32,
    pub rel: u32,
}

/// Which relationship types a read wants: all of them, or the listed ones.
#[derive(Clone, Copy, Debug)]
pub enum TypeFilter<'a> {
    All,
    Only(&'a [TypeId]),
}

impl TypeFilter<'_> {
    #[inline]
    pub fn accepts(&self, ty: TypeId) -> bool {
        match self {
            TypeFilter::All => true,
            TypeFilter::Only(types) => types.contains(&ty),
        }
    }
}

/// One run of a node's relationships of a single type: its type and where its entries end.
#[derive(Clone, Copy, Debug)]
struct Group {
    ty: TypeId,
    end: u32,
}

/// Where a slot's groups and entries start in a base (a slot's end is the next slot's start). Both in one
/// word, so the number of a node's relationships over all types is read from the line that locates its groups.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct SlotStart {
    group: u32,
    entry: u32,
}

/// The immutable CSR block of one leaf and direction. `repr(C)` keeps the array pointers in the block's first
/// cache line, next to the start of the inline group index.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct AdjBase {
    /// Entries of group `g` are `groups[g - 1].end..groups[g].end` (from 0 for the first group).
    groups: Box<[Group]>,
    nbr: IdVec,
    rel: IdVec,
    /// The type of every group when they all have one ([`MIXED`] otherwise), as a bulk-loaded edge list's do:
    /// a read then finds a node's entries from its slot alone, without reading the groups.
    uniform: u32,
    /// Groups of slot `s` are `slots[s].group..slots[s + 1].group`, its entries `slots[s].entry..slots[s + 1].entry`.
    /// Inline, so finding a node's groups costs no pointer chase beyond the block itself, and its degree over all
    /// types none at all.
    slots: [SlotStart; LEAF_SIZE + 1],
}

impl Default for AdjBase {
    fn default() -> Self {
        AdjBase {
            groups: Box::new([]),
            nbr: IdVec::default(),
            rel: IdVec::default(),
            uniform: MIXED,
            slots: [SlotStart::default(); LEAF_SIZE + 1],
        }
    }
}

impl AdjBase {
    pub fn len(&self) -> usize {
        self.nbr.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nbr.is_empty()
    }

    /// Builds a base from each slot's entries, which must be sorted.
    pub fn build<S: AsRef<[AdjEntry]>>(mut entries_of: impl FnMut(usize) -> S) -> AdjBase {
        let mut builder = BaseBuilder::with_capacity(0);
        for slot in 0..LEAF_SIZE {
            entries_of(slot).as_ref().iter().for_each(|&e| builder.push(e));
            builder.end_slot(slot);
        }
        builder.finish()
    }

    /// Builds a base from each slot's entries with 32-bit ids, which must be sorted: the bulk loader's path. The
    /// ids are written to `nbr_out` and `rel_out` (exactly as long as the entries), a run of arrays that the
    /// base then refers to through [`AdjBase::share_ids`] once they are complete.
    pub(crate) fn build_narrow_into<'a>(
        mut entries_of: impl FnMut(usize) -> &'a [NarrowEntry],
        nbr_out: &mut [u32],
        rel_out: &mut [u32],
    ) -> AdjBase {
        let mut base = AdjBase::default();
        let mut groups: Vec<Group> = Vec::new();
        let mut len = 0usize;
        for slot in 0..LEAF_SIZE {
            let first_group = groups.len();
            for e in entries_of(slot) {
                if groups.len() == first_group || groups.last().expect("group exists").ty.0 != e.ty {
                    groups.push(Group { ty: TypeId(e.ty), end: len as u32 });
                }
                nbr_out[len] = e.nbr;
                rel_out[len] = e.rel;
                len += 1;
                groups.last_mut().expect("group exists").end += 1;
            }
            base.slots[slot + 1] = SlotStart { group: groups.len() as u32, entry: len as u32 };
        }
        assert_eq!(len, nbr_out.len(), "the run holds the entries exactly");
        base.set_groups(groups);
        base
    }

    /// Points a base made by [`AdjBase::build_narrow_into`] at its run `start..` of the completed arrays.
    pub(crate) fn share_ids(&mut self, nbr: &SharedArray, rel: &SharedArray, start: usize) {
        let end = start + self.slots[LEAF_SIZE].entry as usize;
        self.nbr = IdVec::Shared(SharedIds::new(nbr.clone(), start..end));
        self.rel = IdVec::Shared(SharedIds::new(rel.clone(), start..end));
    }

    /// Replaces the relationship ids with the run `start..` of `rel` (the bulk loader renumbering them).
    pub(crate) fn share_rel_ids(&mut self, rel: &SharedArray, start: usize) {
        let end = start + self.slots[LEAF_SIZE].entry as usize;
        self.rel = IdVec::Shared(SharedIds::new(rel.clone(), start..end));
    }

    /// The shared arrays this base's ids are a run of, and where the run starts.
    pub(crate) fn shared_ids(&self) -> Option<(&SharedArray, &SharedArray, usize)> {
        match (&self.nbr, &self.rel) {
            (IdVec::Shared(n), IdVec::Shared(r)) if n.start() == r.start() => Some((n.array(), r.array(), n.start())),
            _ => None,
        }
    }

    fn set_groups(&mut self, groups: Vec<Group>) {
        self.uniform = match groups.first() {
            Some(first) if groups.iter().all(|g| g.ty == first.ty) && first.ty.0 != MIXED => first.ty.0,
            _ => MIXED,
        };
        self.groups = groups.into_boxed_slice();
    }

    /// The one type of every entry, when they share one.
    pub(crate) fn uniform_type(&self) -> Option<TypeId> {
        (self.uniform != MIXED).then_some(TypeId(self.uniform))
    }

    /// Where `slot`'s entries start (`slot == LEAF_SIZE`: the end of the last).
    #[inline]
    pub(crate) fn entry_start(&self, slot: usize) -> usize {
        self.slots[slot].entry as usize
    }

    /// The neighbour and relationship arrays (a block taking its ids back from shared arrays).
    pub(crate) fn ids_mut(&mut self) -> (&mut IdVec, &mut IdVec) {
        (&mut self.nbr, &mut self.rel)
    }

    /// Calls `f(slot, neighbour, relationship id)` for every entry, in entry order.
    pub(crate) fn for_each_entry(&self, mut f: impl FnMut(usize, u64, u64)) {
        for slot in 0..LEAF_SIZE {
            for (_, range) in self.groups(slot) {
                for i in range {
                    f(slot, self.nbr.get(i), self.rel.get(i));
                }
            }
        }
    }

    /// The groups of `slot`: each one's type and range of entries.
    #[inline]
    fn groups(&self, slot: usize) -> Groups<'_> {
        let (from, to) = (self.slots[slot], self.slots[slot + 1]);
        Groups { base: self, next: from.group as usize, end: to.group as usize, start: from.entry, slot_end: to.entry }
    }

    fn count(&self, slot: usize, filter: TypeFilter) -> u64 {
        if let TypeFilter::All = filter {
            return u64::from(self.slots[slot + 1].entry - self.slots[slot].entry);
        }
        let mut n = 0;
        for (ty, range) in self.groups(slot) {
            if filter.accepts(ty) {
                n += range.len() as u64;
            }
        }
        n
    }

    fn entries(&self, slot: usize) -> impl Iterator<Item = AdjEntry> + '_ {
        self.groups(slot).flat_map(move |(ty, range)| {
            range.map(move |i| AdjEntry { ty, nbr: self.nbr.get(i), rel: self.rel.get(i) })
        })
    }
}

/// A base being written slot by slot, each slot's entries in order.
struct BaseBuilder {
    base: AdjBase,
    groups: Vec<Group>,
    nbr: Vec<u64>,
    rel: Vec<u64>,
    /// Where the current slot's groups start: a group never spans two slots.
    slot_groups: usize,
}

impl BaseBuilder {
    fn with_capacity(entries: usize) -> Self {
        BaseBuilder {
            base: AdjBase::default(),
            groups: Vec::new(),
            nbr: Vec::with_capacity(entries),
            rel: Vec::with_capacity(entries),
            slot_groups: 0,
        }
    }

    #[inline]
    fn push(&mut self, e: AdjEntry) {
        if self.groups.len() == self.slot_groups || self.groups.last().expect("group exists").ty != e.ty {
            self.groups.push(Group { ty: e.ty, end: self.nbr.len() as u32 });
        }
        self.nbr.push(e.nbr);
        self.rel.push(e.rel);
        self.groups.last_mut().expect("group exists").end += 1;
    }

    /// Appends a whole group of another base (a slot's groups arrive in type order, so it starts a group).
    fn push_group(&mut self, ty: TypeId, nbr: IdSlice<'_>, rel: IdSlice<'_>) {
        extend_ids(&mut self.nbr, nbr);
        extend_ids(&mut self.rel, rel);
        self.groups.push(Group { ty, end: self.nbr.len() as u32 });
    }

    fn end_slot(&mut self, slot: usize) {
        self.base.slots[slot + 1] = SlotStart { group: self.groups.len() as u32, entry: self.nbr.len() as u32 };
        self.slot_groups = self.groups.len();
    }

    fn finish(mut self) -> AdjBase {
        self.base.set_groups(self.groups);
        self.base.nbr = IdVec::from_vec(self.nbr);
        self.base.rel = IdVec::from_vec(self.rel);
        self.base
    }
}

fn extend_ids(out: &mut Vec<u64>, ids: IdSlice<'_>) {
    match ids {
        IdSlice::Narrow(ids) => out.extend(ids.iter().map(|&id| u64::from(id))),
        IdSlice::Wide(ids) => out.extend_from_slice(ids),
    }
}

/// [`AdjBase::uniform`] when the groups' types differ.
const MIXED: u32 = u32::MAX;

/// Iterator over one slot's groups, from [`AdjBase::groups`].
struct Groups<'a> {
    base: &'a AdjBase,
    next: usize,
    end: usize,
    /// Where the next group's entries start: the previous group's end, or the slot's first entry.
    start: u32,
    slot_end: u32,
}

impl Iterator for Groups<'_> {
    type Item = (TypeId, std::ops::Range<usize>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next == self.end {
            return None;
        }
        let (ty, stop) = if self.base.uniform != MIXED {
            // One type throughout: a slot has one group at most, holding all its entries.
            (TypeId(self.base.uniform), self.slot_end)
        } else {
            let g = &self.base.groups[self.next];
            (g.ty, g.end)
        };
        let range = self.start as usize..stop as usize;
        self.next += 1;
        self.start = stop;
        Some((ty, range))
    }
}

static EMPTY_BASE: std::sync::OnceLock<Arc<AdjBase>> = std::sync::OnceLock::new();

fn empty_base() -> Arc<AdjBase> {
    EMPTY_BASE.get_or_init(|| Arc::new(AdjBase::default())).clone()
}

/// Adjacency of one direction for the `LEAF_SIZE` nodes of a leaf.
#[derive(Clone, Debug)]
pub struct AdjLeaf {
    base: Arc<AdjBase>,
    /// Bit `s` is set when slot `s` has entries in the delta: reads of a node without changes never leave the
    /// leaf header.
    delta_mask: u64,
    delta: Option<Arc<LeafDelta>>,
}

impl Default for AdjLeaf {
    fn default() -> Self {
        AdjLeaf { base: empty_base(), delta_mask: 0, delta: None }
    }
}

impl AdjLeaf {
    pub fn from_base(base: AdjBase) -> Self {
        AdjLeaf { base: Arc::new(base), delta_mask: 0, delta: None }
    }

    /// The base, read-only.
    pub(crate) fn base(&self) -> &AdjBase {
        &self.base
    }

    /// Whether the base's ids are a run of a shared array (the flat adjacency's).
    pub(crate) fn has_shared_base(&self) -> bool {
        self.base.nbr.is_shared() || self.base.rel.is_shared()
    }

    /// Number of entries whose ids the base shares with other blocks.
    pub(crate) fn shared_len(&self) -> usize {
        if self.has_shared_base() {
            self.base.len()
        } else {
            0
        }
    }

    /// Gives the base ids of its own instead of a run of a shared array, so the array can be freed.
    pub(crate) fn own_base(&mut self) {
        if !self.has_shared_base() {
            return;
        }
        let base = Arc::make_mut(&mut self.base);
        let (nbr, rel) = base.ids_mut();
        *nbr = IdVec::Narrow(nbr.take_narrow().expect("shared runs are narrow"));
        *rel = IdVec::Narrow(rel.take_narrow().expect("shared runs are narrow"));
    }

    #[inline]
    fn delta(&self, slot: usize) -> Option<SlotDelta<'_>> {
        if self.delta_mask & (1u64 << slot) == 0 {
            return None;
        }
        let d = self.delta.as_deref()?;
        Some(SlotDelta { added: d.added.of_slot(slot), removed: d.removed.of_slot(slot) })
    }

    fn delta_mut(&mut self) -> &mut LeafDelta {
        Arc::make_mut(self.delta.get_or_insert_with(Default::default))
    }

    /// Clears the mask bit of `slot` when its last delta entry went away.
    fn refresh_mask(&mut self, slot: usize) {
        let d = self.delta.as_deref().expect("a slot with a mask bit has a delta");
        if d.added.of_slot(slot).is_empty() && d.removed.of_slot(slot).is_empty() {
            self.delta_mask &= !(1u64 << slot);
        }
    }

    /// The delta size past which the leaf folds it into a new base. Per change, a commit that makes `k` changes
    /// to the leaf pays a copy of the delta (`T` entries) divided by `k`, and rebuilding pays the base (`B`)
    /// divided by the `T` changes between rebuilds: the sum is least near `T = sqrt(k B)`, times the ratio of
    /// the two costs per entry. So about twice the square root of the base for one change a commit, and more
    /// for a batch that changes the leaf many times (a batch of upserts on a graph of high-degree nodes
    /// rebuilt its large leaves over and over with the threshold of single changes).
    fn fold_threshold(&self) -> usize {
        let changes = self.delta.as_deref().map_or(1, |d| d.changes.max(1));
        32 + 2 * (self.base.len() as f64 * f64::from(changes)).sqrt() as usize
    }

    /// Whether `slot` has changes not yet folded into the base (reads then merge two sources).
    pub fn has_delta(&self, slot: usize) -> bool {
        self.delta(slot).is_some()
    }

    /// Requests the line of the base that locates `slot`'s relationships (and holds its degree), without
    /// waiting for it.
    #[inline]
    pub fn prefetch(&self, slot: usize) {
        crate::prefetch::prefetch(&self.base.slots[slot]);
    }

    /// Once the line of [`AdjLeaf::prefetch`] has arrived: requests `slot`'s first group and first neighbours.
    #[inline]
    pub fn prefetch_entries(&self, slot: usize) {
        let base = &*self.base;
        let start = base.slots[slot];
        if base.uniform == MIXED {
            if let Some(group) = base.groups.get(start.group as usize) {
                crate::prefetch::prefetch(group);
            }
        }
        base.nbr.prefetch(start.entry as usize);
    }

    /// Number of relationships of `slot` whose type passes `filter`.
    pub fn degree(&self, slot: usize, filter: TypeFilter) -> u64 {
        let mut n = self.base.count(slot, filter);
        if let Some(d) = self.delta(slot) {
            n += d.added.count(filter) as u64;
            n -= d.removed.count(filter) as u64;
        }
        n
    }

    /// Calls `f` for every relationship of `slot` passing `filter`, until it breaks.
    #[inline]
    pub fn visit<B>(
        &self,
        slot: usize,
        filter: TypeFilter,
        mut f: impl FnMut(AdjEntry) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let delta = self.delta(slot);
        let base = &*self.base;
        for (ty, range) in base.groups(slot) {
            if !filter.accepts(ty) {
                continue;
            }
            let (nbrs, rels) = (base.nbr.slice(range.clone()), base.rel.slice(range));
            for (nbr, rel) in nbrs.iter().zip(rels.iter()) {
                let e = AdjEntry { ty, nbr, rel };
                if let Some(d) = delta {
                    if d.is_removed(&e) {
                        continue;
                    }
                }
                f(e)?;
            }
        }
        if let Some(d) = delta {
            for e in d.added.iter() {
                if filter.accepts(e.ty) {
                    f(e.entry())?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Calls `f` with the neighbour ids of `slot` passing `filter`, in contiguous runs: a base group whose entries
    /// are all live is handed over as one slice straight from the CSR, so a traversal can loop over plain memory.
    #[inline]
    pub fn visit_nbr_slices<B>(
        &self,
        slot: usize,
        filter: TypeFilter,
        mut f: impl FnMut(IdSlice) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        self.visit_rel_slices(slot, filter, |nbrs, _| f(nbrs))
    }

    /// Calls `f` with the neighbour and relationship ids of `slot` passing `filter`, as parallel runs of equal length:
    /// a live base group is handed over as two slices straight from the CSR (what `visit_nbr_slices` does for
    /// neighbours alone), so a reader that needs both, such as weights by relationship, loops over plain memory.
    #[inline]
    pub fn visit_rel_slices<B>(
        &self,
        slot: usize,
        filter: TypeFilter,
        mut f: impl FnMut(IdSlice, IdSlice) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let delta = self.delta(slot);
        let removals = delta.filter(|d| !d.removed.is_empty());
        let base = &*self.base;
        for (ty, range) in base.groups(slot) {
            if !filter.accepts(ty) {
                continue;
            }
            match removals {
                None => f(base.nbr.slice(range.clone()), base.rel.slice(range))?,
                Some(d) => {
                    for i in range {
                        let e = AdjEntry { ty, nbr: base.nbr.get(i), rel: base.rel.get(i) };
                        if !d.is_removed(&e) {
                            f(IdSlice::one(&e.nbr), IdSlice::one(&e.rel))?;
                        }
                    }
                }
            }
        }
        if let Some(d) = delta {
            for e in d.added.iter() {
                if filter.accepts(e.ty) {
                    f(IdSlice::one(&e.nbr), IdSlice::one(&e.rel))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Calls `f` for every relationship of `slot` to neighbour `nbr` passing `filter`.
    pub fn visit_to<B>(
        &self,
        slot: usize,
        nbr: u64,
        filter: TypeFilter,
        mut f: impl FnMut(AdjEntry) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let delta = self.delta(slot);
        let base = &*self.base;
        for (ty, range) in base.groups(slot) {
            if !filter.accepts(ty) {
                continue;
            }
            let nbrs = base.nbr.slice(range.clone());
            let first = nbrs.lower_bound(nbr);
            for i in first..nbrs.len() {
                if nbrs.get(i) != nbr {
                    break;
                }
                let e = AdjEntry { ty, nbr, rel: base.rel.get(range.start + i) };
                if let Some(d) = delta {
                    if d.is_removed(&e) {
                        continue;
                    }
                }
                f(e)?;
            }
        }
        if let Some(d) = delta {
            d.added.visit_to(nbr, filter, |e| f(e.entry()))?;
        }
        ControlFlow::Continue(())
    }

    pub fn add(&mut self, slot: usize, e: AdjEntry) {
        let entry = SlotEntry::new(slot, e);
        let d = self.delta_mut();
        d.added.insert(entry);
        d.changes = d.changes.saturating_add(1);
        self.delta_mask |= 1u64 << slot;
    }

    /// Removes an entry; returns false when it was not present.
    pub fn remove(&mut self, slot: usize, e: AdjEntry) -> bool {
        let entry = SlotEntry::new(slot, e);
        if let Some(d) = self.delta.as_deref() {
            if let Some(pos) = d.added.position(&entry) {
                let d = self.delta_mut();
                d.added.remove_at(pos);
                d.changes = d.changes.saturating_add(1);
                // A sorted neighbour of the same slot keeps the slot's mask bit: no search needed.
                if !d.added.sorted_neighbour_of(pos, slot) {
                    self.refresh_mask(slot);
                }
                return true;
            }
        }
        let in_base = {
            let base = &*self.base;
            base.groups(slot).any(|(ty, range)| {
                if ty != e.ty {
                    return false;
                }
                let nbrs = base.nbr.slice(range.clone());
                let first = nbrs.lower_bound(e.nbr);
                (first..nbrs.len())
                    .take_while(|&i| nbrs.get(i) == e.nbr)
                    .any(|i| base.rel.get(range.start + i) == e.rel)
            })
        };
        if !in_base {
            return false;
        }
        let d = self.delta_mut();
        if d.removed.position(&entry).is_some() {
            return false;
        }
        d.removed.insert(entry);
        d.changes = d.changes.saturating_add(1);
        self.delta_mask |= 1u64 << slot;
        true
    }

    /// Folds the delta into a new base when it has grown past the threshold (called when a commit is sealed).
    pub fn seal(&mut self) {
        if self.delta_len() > self.fold_threshold() {
            self.rebuild();
        } else {
            self.merge_tails();
        }
    }

    /// Merges the unsorted tails of the delta into its sorted parts, copying a shared delta only if there are any.
    fn merge_tails(&mut self) {
        if self.delta.as_deref().is_some_and(|d| d.added.has_tail() || d.removed.has_tail()) {
            let d = self.delta_mut();
            d.added.normalize();
            d.removed.normalize();
        }
    }

    /// Folds every delta into a new base.
    pub fn rebuild(&mut self) {
        if self.delta.is_none() {
            return;
        }
        // Each slot's runs are then sorted, with no tail to scan.
        self.merge_tails();
        let base = self.merged_base();
        *self = if base.is_empty() { AdjLeaf::default() } else { AdjLeaf::from_base(base) };
    }

    /// The base with the delta folded in, in one pass over both (sorted): a node without changes has its groups
    /// copied as runs of ids, a changed one is merged entry by entry. (Collecting and sorting every node's
    /// entries took three quarters of a batch of upserts on a graph of high-degree nodes, where every leaf is
    /// large and many are rebuilt.)
    fn merged_base(&self) -> AdjBase {
        let delta = self.delta.as_deref().expect("a leaf being rebuilt has a delta");
        let old = &*self.base;
        let capacity = (old.len() + delta.added.len()).saturating_sub(delta.removed.len());
        let mut builder = BaseBuilder::with_capacity(capacity);
        for slot in 0..LEAF_SIZE {
            if self.delta_mask & (1u64 << slot) == 0 {
                for (ty, range) in old.groups(slot) {
                    builder.push_group(ty, old.nbr.slice(range.clone()), old.rel.slice(range));
                }
            } else {
                let mut added = delta.added.of_slot(slot).sorted.iter().map(SlotEntry::entry).peekable();
                let mut removed = delta.removed.of_slot(slot).sorted.iter().map(SlotEntry::entry).peekable();
                for e in old.entries(slot) {
                    while removed.next_if(|r| *r < e).is_some() {}
                    if removed.next_if_eq(&e).is_some() {
                        continue;
                    }
                    while let Some(a) = added.next_if(|a| *a < e) {
                        builder.push(a);
                    }
                    builder.push(e);
                }
                added.for_each(|a| builder.push(a));
            }
            builder.end_slot(slot);
        }
        builder.finish()
    }

    /// All live entries of `slot`, sorted.
    pub fn merged_sorted(&self, slot: usize) -> Vec<AdjEntry> {
        let Some(d) = self.delta(slot) else {
            return self.base.entries(slot).collect();
        };
        let mut v: Vec<AdjEntry> = self.base.entries(slot).filter(|e| !d.is_removed(e)).collect();
        v.extend(d.added.iter().map(SlotEntry::entry));
        v.sort_unstable();
        v
    }

    /// Heap bytes held by this leaf's base (shared bases are counted by every holder).
    pub fn base_bytes(&self) -> usize {
        let b = &*self.base;
        b.nbr.heap_bytes()
            + b.rel.heap_bytes()
            + b.groups.len() * std::mem::size_of::<Group>()
            + std::mem::size_of::<AdjBase>()
    }

    /// Entries in the delta, added and removed.
    pub fn delta_len(&self) -> usize {
        self.delta.as_deref().map_or(0, |d| d.added.len() + d.removed.len())
    }

    pub fn is_empty(&self) -> bool {
        self.base.is_empty() && self.delta_len() == 0
    }

    /// Whether slot has any live entry (used to refuse deleting a connected node).
    pub fn has_any(&self, slot: usize) -> bool {
        self.degree(slot, TypeFilter::All) > 0
    }

    /// Whether the mask names exactly the slots with delta entries, and both arrays are sorted.
    #[cfg(test)]
    fn check_delta_counts(&self) -> bool {
        let Some(d) = self.delta.as_deref() else { return self.delta_mask == 0 };
        let mut mask = 0u64;
        for e in d.added.entries.iter().chain(&d.removed.entries) {
            mask |= 1u64 << e.slot;
        }
        let sorted = |r: &delta::Run| r.entries[..r.sorted].is_sorted();
        mask == self.delta_mask && sorted(&d.added) && sorted(&d.removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn e(ty: u32, nbr: u64, rel: u64) -> AdjEntry {
        AdjEntry { ty: TypeId(ty), nbr, rel }
    }

    proptest! {
        #[test]
        fn matches_a_set_model(
            // How many types the entries use, and the first: bases of one type read without their groups.
            types in 1u32..4,
            first_type in 0u32..2,
            ops in proptest::collection::vec((0usize..4, 0u32..3, 0u64..6, 0u64..200, any::<bool>(), 0u8..60), 1..800),
        ) {
            let mut leaf = AdjLeaf::default();
            let mut model: Vec<BTreeSet<AdjEntry>> = vec![BTreeSet::new(); LEAF_SIZE];
            for (slot, ty, nbr, rel, add, action) in ops {
                let entry = e(first_type + ty % types, nbr, rel);
                if action == 0 {
                    leaf.seal();
                } else if action == 1 {
                    leaf.rebuild();
                } else if add {
                    if model[slot].iter().all(|x| x.rel != rel) {
                        leaf.add(slot, entry);
                        model[slot].insert(entry);
                    }
                } else {
                    let was = model[slot].remove(&entry);
                    prop_assert_eq!(leaf.remove(slot, entry), was);
                }
                prop_assert!(leaf.check_delta_counts());
            }
            for (slot, model_slot) in model.iter().enumerate().take(4) {
                let expected: Vec<_> = model_slot.iter().copied().collect();
                prop_assert_eq!(leaf.merged_sorted(slot), expected.clone());
                prop_assert_eq!(leaf.degree(slot, TypeFilter::All), expected.len() as u64);
                let only1 = [TypeId(1)];
                prop_assert_eq!(
                    leaf.degree(slot, TypeFilter::Only(&only1)),
                    expected.iter().filter(|x| x.ty == TypeId(1)).count() as u64
                );
                let mut pairs = Vec::new();
                let _ = leaf.visit_rel_slices::<()>(slot, TypeFilter::Only(&only1), |ns, rs| {
                    assert_eq!(ns.len(), rs.len());
                    pairs.extend(ns.iter().zip(rs.iter()));
                    ControlFlow::Continue(())
                });
                pairs.sort();
                let mut want: Vec<_> = expected.iter().filter(|x| x.ty == TypeId(1)).map(|x| (x.nbr, x.rel)).collect();
                want.sort();
                prop_assert_eq!(pairs, want);
                for nbr in 0..6 {
                    let mut got = Vec::new();
                    let _ = leaf.visit_to::<()>(slot, nbr, TypeFilter::All, |x| { got.push(x); ControlFlow::Continue(()) });
                    got.sort();
                    let want: Vec<_> = expected.iter().filter(|x| x.nbr == nbr).copied().collect();
                    prop_assert_eq!(got, want);
                }
            }
        }
    }
}
