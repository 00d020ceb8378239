//! A leaf's delta: the adjacency entries added and the base entries removed since the leaf's base was built,
//! for all the leaf's nodes in two flat arrays ordered by (slot, entry), each with a short unsorted tail that a
//! transaction appends to.

use super::AdjEntry;
use crate::ids::TypeId;

/// An [`AdjEntry`] of a leaf delta, tagged with its node's slot; ordered by slot, then as the entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct SlotEntry {
    pub(super) slot: u32,
    pub(super) ty: TypeId,
    pub(super) nbr: u64,
    pub(super) rel: u64,
}

impl SlotEntry {
    #[inline]
    pub(super) fn new(slot: usize, e: AdjEntry) -> Self {
        SlotEntry { slot: slot as u32, ty: e.ty, nbr: e.nbr, rel: e.rel }
    }

    #[inline]
    pub(super) fn entry(&self) -> AdjEntry {
        AdjEntry { ty: self.ty, nbr: self.nbr, rel: self.rel }
    }
}

/// Changes to a leaf's adjacency since its base was built, for all its nodes in two flat arrays: copying it (the
/// first change a transaction makes to a shared leaf does) is two allocations and two `memcpy`s, with no reference
/// count or pointer per node to chase.
#[derive(Debug, Default)]
pub(super) struct LeafDelta {
    /// Entries not in the base.
    pub(super) added: Run,
    /// Base entries that no longer exist.
    pub(super) removed: Run,
    /// Changes made to this copy: a commit copies a shared delta before its first change, so at the seal this
    /// counts the commit's changes to the leaf (see [`AdjLeaf::fold_threshold`]).
    pub(super) changes: u32,
}

impl Clone for LeafDelta {
    fn clone(&self) -> Self {
        LeafDelta { added: self.added.clone(), removed: self.removed.clone(), changes: 0 }
    }
}

/// Entries ordered by slot and entry, except a short unsorted tail that a transaction appends to: inserting in
/// order would move half the array each time, and a large transaction adds thousands of entries to one leaf. The
/// tail is merged in when it outgrows a few times the square root of the sorted part (so both the merging work per
/// insert and the scan of the tail per read stay near the square root) and whenever a commit is sealed.
#[derive(Clone, Debug, Default)]
pub(super) struct Run {
    pub(super) entries: Vec<SlotEntry>,
    pub(super) sorted: usize,
}

impl Run {
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(super) fn has_tail(&self) -> bool {
        self.sorted < self.entries.len()
    }

    #[inline]
    pub(super) fn of_slot(&self, slot: usize) -> RunSlice<'_> {
        let (sorted, tail) = self.entries.split_at(self.sorted);
        RunSlice { sorted: slot_range(sorted, slot), tail, slot: slot as u32 }
    }

    pub(super) fn insert(&mut self, e: SlotEntry) {
        self.entries.push(e);
        if self.entries.len() - self.sorted > 64 + 4 * (self.sorted as f64).sqrt() as usize {
            self.normalize();
        }
    }

    pub(super) fn position(&self, e: &SlotEntry) -> Option<usize> {
        match self.entries[..self.sorted].binary_search(e) {
            Ok(i) => Some(i),
            Err(_) => self.entries[self.sorted..].iter().position(|x| x == e).map(|i| self.sorted + i),
        }
    }

    /// Whether the sorted entries around `i` (where one was just removed) include one of `slot`.
    pub(super) fn sorted_neighbour_of(&self, i: usize, slot: usize) -> bool {
        let sorted = &self.entries[..self.sorted];
        i < sorted.len() && sorted[i.saturating_sub(1)..=i].iter().any(|x| x.slot == slot as u32)
    }

    pub(super) fn remove_at(&mut self, i: usize) {
        if i < self.sorted {
            self.entries.remove(i);
            self.sorted -= 1;
        } else {
            self.entries.swap_remove(i);
        }
    }

    /// Sorts the tail and merges it into the rest from the back, moving only the entries after the tail's
    /// smallest (none at all when the transaction appended in order).
    pub(super) fn normalize(&mut self) {
        let n = self.sorted;
        if n == self.entries.len() {
            return;
        }
        self.entries[n..].sort_unstable();
        self.sorted = self.entries.len();
        if n == 0 || self.entries[n - 1] <= self.entries[n] {
            return;
        }
        let tail: Vec<SlotEntry> = self.entries[n..].to_vec();
        let (mut i, mut j, mut w) = (n, tail.len(), self.entries.len());
        while j > 0 {
            w -= 1;
            if i > 0 && self.entries[i - 1] > tail[j - 1] {
                self.entries[w] = self.entries[i - 1];
                i -= 1;
            } else {
                self.entries[w] = tail[j - 1];
                j -= 1;
            }
        }
    }
}

/// The range of `v` holding the entries of `slot`.
#[inline]
pub(super) fn slot_range(v: &[SlotEntry], slot: usize) -> &[SlotEntry] {
    let slot = slot as u32;
    let lo = v.partition_point(|e| e.slot < slot);
    let len = v[lo..].partition_point(|e| e.slot == slot);
    &v[lo..lo + len]
}

/// One node's entries in a [`Run`]: a sorted range and the tail's entries of that node.
#[derive(Clone, Copy)]
pub(super) struct RunSlice<'a> {
    pub(super) sorted: &'a [SlotEntry],
    pub(super) tail: &'a [SlotEntry],
    pub(super) slot: u32,
}

impl<'a> RunSlice<'a> {
    #[inline]
    pub(super) fn iter(self) -> impl Iterator<Item = &'a SlotEntry> {
        let slot = self.slot;
        self.sorted.iter().chain(self.tail.iter().filter(move |e| e.slot == slot))
    }

    #[inline]
    pub(super) fn is_empty(self) -> bool {
        self.sorted.is_empty() && !self.tail.iter().any(|e| e.slot == self.slot)
    }

    #[inline]
    pub(super) fn contains(self, e: &AdjEntry) -> bool {
        (!self.sorted.is_empty() && self.sorted.binary_search_by(|x| x.entry().cmp(e)).is_ok())
            || self.tail.iter().any(|x| x.slot == self.slot && x.entry() == *e)
    }
}

/// One node's view of its leaf's delta.
#[derive(Clone, Copy)]
pub(super) struct SlotDelta<'a> {
    pub(super) added: RunSlice<'a>,
    pub(super) removed: RunSlice<'a>,
}

impl SlotDelta<'_> {
    #[inline]
    pub(super) fn is_removed(&self, e: &AdjEntry) -> bool {
        self.removed.contains(e)
    }
}
