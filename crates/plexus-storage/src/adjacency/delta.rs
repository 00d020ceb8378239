//! A leaf's delta: the adjacency entries added and the base entries removed since the leaf's base was built,
//! for all the leaf's nodes in two flat arrays ordered by (slot, entry), each with a short unsorted tail that a
//! transaction appends to.

use std::ops::ControlFlow;

use super::{AdjEntry, TypeFilter};
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
#[derive(Debug, Default)]
pub(super) struct Run {
    pub(super) entries: Vec<SlotEntry>,
    pub(super) sorted: usize,
}

/// Room a copy leaves for the entries the copying transaction is about to add: a copy is made for a change, and
/// one of exactly the original's length would be copied again by the first insert's growth.
const ROOM_IN_A_COPY: usize = 4;

impl Clone for Run {
    fn clone(&self) -> Self {
        if self.entries.is_empty() {
            return Run::default();
        }
        let mut entries = Vec::with_capacity(self.entries.len() + ROOM_IN_A_COPY);
        entries.extend_from_slice(&self.entries);
        Run { entries, sorted: self.sorted }
    }
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
        if self.entries.len() == n + 1 {
            // A single entry (a small transaction's change to a leaf): moved into place, with no copy of a tail.
            let at = self.entries[..n].partition_point(|e| *e <= self.entries[n]);
            self.entries[at..].rotate_right(1);
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

    /// Calls `f` with the entries to `nbr` whose type passes `filter`, in order: in the sorted part, a binary
    /// search in each type's run (a node that gained thousands of relationships in one transaction, a hub
    /// merged to row after row, is not scanned whole for each pair), then the tail.
    #[inline]
    pub(super) fn visit_to<B>(
        self,
        nbr: u64,
        filter: TypeFilter,
        mut f: impl FnMut(&SlotEntry) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        for run in self.type_runs().filter(|run| filter.accepts(run[0].ty)) {
            let from = run.partition_point(|e| e.nbr < nbr);
            for e in run[from..].iter().take_while(|e| e.nbr == nbr) {
                f(e)?;
            }
        }
        for e in self.tail {
            if e.slot == self.slot && e.nbr == nbr && filter.accepts(e.ty) {
                f(e)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The sorted part's runs of one type each, in order, found by binary search rather than entry by entry.
    fn type_runs(self) -> impl Iterator<Item = &'a [SlotEntry]> {
        let mut rest = self.sorted;
        std::iter::from_fn(move || {
            let ty = rest.first()?.ty;
            let (run, after) = rest.split_at(rest.partition_point(|e| e.ty == ty));
            rest = after;
            Some(run)
        })
    }

    /// Number of entries whose type passes `filter`: the sorted part counted by type runs, not entry by entry.
    #[inline]
    pub(super) fn count(self, filter: TypeFilter) -> usize {
        let sorted = match filter {
            TypeFilter::All => self.sorted.len(),
            TypeFilter::Only(_) => self.type_runs().filter(|run| filter.accepts(run[0].ty)).map(<[_]>::len).sum(),
        };
        sorted + self.tail.iter().filter(|e| e.slot == self.slot && filter.accepts(e.ty)).count()
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Merging a tail of any length into a sorted part leaves every entry, in order; a copy keeps them too.
        /// `after_each` merges after every entry, so that every tail is a single entry (a small commit's).
        #[test]
        fn normalize_sorts_a_sorted_part_and_any_tail(
            entries in proptest::collection::vec((0u32..4, 0u32..3, 0u64..6, 0u64..50), 0..60),
            splits in proptest::collection::vec(0usize..60, 0..4),
            after_each in any::<bool>(),
        ) {
            let mut run = Run::default();
            for (i, (s, ty, n, rel)) in entries.iter().enumerate() {
                run.entries.push(SlotEntry { slot: *s, ty: TypeId(*ty), nbr: *n, rel: *rel });
                if after_each || splits.contains(&i) {
                    run.normalize();
                }
            }
            let copy = run.clone();
            run.normalize();
            let mut expected: Vec<SlotEntry> = copy.entries.clone();
            expected.sort_unstable();
            prop_assert_eq!(&run.entries, &expected);
            prop_assert_eq!(run.sorted, run.entries.len());
            prop_assert_eq!(copy.entries.len(), entries.len());
        }

        #[test]
        fn lookups_by_neighbour_and_counts_agree_with_a_scan(
            entries in proptest::collection::vec((0u32..4, 0u32..3, 0u64..6, 0u64..1000), 0..300),
            sorted_share in 0usize..300,
            slot in 0usize..4,
            nbr in 0u64..6,
            only in proptest::option::of(proptest::collection::vec(0u32..3, 0..3)),
        ) {
            let mut run = Run::default();
            for (i, (s, ty, n, rel)) in entries.iter().enumerate() {
                run.entries.push(SlotEntry { slot: *s, ty: TypeId(*ty), nbr: *n, rel: *rel });
                if i + 1 == sorted_share.min(entries.len()) {
                    run.normalize();
                }
            }
            let types: Vec<TypeId> = only.unwrap_or_default().into_iter().map(TypeId).collect();
            let filter = if types.is_empty() { TypeFilter::All } else { TypeFilter::Only(&types) };
            let slice = run.of_slot(slot);
            let mut found = Vec::new();
            let _ = slice.visit_to::<()>(nbr, filter, |e| {
                found.push(*e);
                ControlFlow::Continue(())
            });
            let expected: Vec<SlotEntry> =
                slice.iter().filter(|e| e.nbr == nbr && filter.accepts(e.ty)).copied().collect();
            prop_assert_eq!(found, expected);
            prop_assert_eq!(slice.count(filter), slice.iter().filter(|e| filter.accepts(e.ty)).count());
        }
    }
}
