//! A persistent (copy-on-write) radix vector of leaves.
//!
//! This is the spine of every snapshot: node and relationship records live in leaves addressed by
//! `id / LEAF_SIZE`. Cloning a `PVec` is one reference-count increment; changing a leaf copies only the path from
//! the root to it (at most a few 16-slot branches) and the leaf itself, and only when they are shared. So a
//! snapshot stays immutable for its readers while the committer builds the next one next to it.

// triomphe's Arc has no weak count, so checking that a node is unshared before writing it is a plain load
// instead of two atomic read-modify-writes; a commit does that check on every branch of every path it writes.
use triomphe::Arc;

/// The value behind `arc` for writing, copied first if shared. Unlike `Arc::make_mut`, the common unshared case
/// stays inline in the caller (one load and a compare), with the copy out of line.
#[inline(always)]
fn unique<T: Clone>(arc: &mut Arc<T>) -> &mut T {
    if !arc.is_unique() {
        copy_shared(arc);
    }
    Arc::get_mut(arc).expect("unshared after the copy")
}

#[cold]
#[inline(never)]
fn copy_shared<T: Clone>(arc: &mut Arc<T>) {
    *arc = Arc::new(T::clone(arc));
}

/// Branch width. Every commit copies the branches on the path to each leaf it changes, and copying a branch
/// touches the reference count of every child: 16 children keep that copy cheap, while the extra level a
/// narrower tree needs is among the few that stay in cache.
const FANOUT_BITS: u32 = 4;
const FANOUT: usize = 1 << FANOUT_BITS;

/// A branch's children: all branches or all leaves, by its level. One tag per branch rather than one per child
/// keeps a branch at 16 pointers, so that copying one (every commit copies those on its paths) and freeing the
/// copy it replaced visit 16 plain words, with no tag to test per child.
enum Children<L> {
    Branches([Option<Arc<Branch<L>>>; FANOUT]),
    Leaves([Option<Arc<L>>; FANOUT]),
}

struct Branch<L> {
    children: Children<L>,
}

impl<L> Clone for Branch<L> {
    fn clone(&self) -> Self {
        let children = match &self.children {
            Children::Branches(b) => Children::Branches(b.clone()),
            Children::Leaves(l) => Children::Leaves(l.clone()),
        };
        Branch { children }
    }
}

impl<L> Branch<L> {
    /// An empty branch at `level` (0: its children are leaves).
    fn empty(level: u32) -> Self {
        let children = if level == 0 {
            Children::Leaves(std::array::from_fn(|_| None))
        } else {
            Children::Branches(std::array::from_fn(|_| None))
        };
        Branch { children }
    }
}

/// A persistent vector of `L` leaves indexed by a dense `u64`.
pub struct PVec<L> {
    root: Option<Arc<Branch<L>>>,
    /// Number of branch levels under the root (0: the root's children are leaves).
    height: u32,
    leaves: usize,
    /// One more than the index of the last present leaf (0 when none is): kept so that [`PVec::last_leaf`],
    /// which every dense per-node array of a query sizes itself by, is a field read and not a walk.
    end: u64,
}

impl<L> Clone for PVec<L> {
    fn clone(&self) -> Self {
        PVec { root: self.root.clone(), height: self.height, leaves: self.leaves, end: self.end }
    }
}

impl<L> Default for PVec<L> {
    fn default() -> Self {
        PVec { root: None, height: 0, leaves: 0, end: 0 }
    }
}

impl<L: Clone + Default> PVec<L> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of leaves present.
    pub fn leaf_count(&self) -> usize {
        self.leaves
    }

    fn capacity(&self) -> u64 {
        1u64 << (FANOUT_BITS * (self.height + 1)).min(63)
    }

    #[inline]
    pub fn get(&self, index: u64) -> Option<&L> {
        if index >= self.capacity() {
            return None;
        }
        let mut branch = self.root.as_deref()?;
        let mut level = self.height;
        loop {
            let slot = ((index >> (FANOUT_BITS * level)) as usize) & (FANOUT - 1);
            match &branch.children {
                Children::Branches(b) => {
                    branch = b[slot].as_deref()?;
                    level -= 1;
                }
                Children::Leaves(l) => return l[slot].as_deref(),
            }
        }
    }

    /// Requests the first two cache lines of the leaf at `index` without waiting for them: the branches on the
    /// way are read (few, and usually cached), the leaf itself only asked for (`get` returns its address without
    /// reading it).
    #[inline]
    pub fn prefetch(&self, index: u64) {
        if let Some(leaf) = self.get(index) {
            let p: *const L = leaf;
            crate::prefetch::prefetch(p);
            crate::prefetch::prefetch(p.cast::<u8>().wrapping_add(64));
        }
    }

    /// The leaf at `index` for writing, created empty if absent; shared branches and the leaf are copied first.
    pub fn get_mut(&mut self, index: u64) -> &mut L {
        while index >= self.capacity() {
            let old = self.root.take();
            self.height += 1;
            let mut branch = Branch::empty(self.height);
            if let Some(old) = old {
                let Children::Branches(b) = &mut branch.children else { unreachable!("a new root is above level 0") };
                b[0] = Some(old);
            }
            self.root = Some(Arc::new(branch));
        }
        let height = self.height;
        let mut branch = unique(self.root.get_or_insert_with(|| Arc::new(Branch::empty(height))));
        let mut level = self.height;
        loop {
            let slot = ((index >> (FANOUT_BITS * level)) as usize) & (FANOUT - 1);
            match &mut branch.children {
                Children::Leaves(l) => {
                    let child = &mut l[slot];
                    if child.is_none() {
                        self.leaves += 1;
                        self.end = self.end.max(index + 1);
                    }
                    return unique(child.get_or_insert_with(|| Arc::new(L::default())));
                }
                Children::Branches(b) => {
                    level -= 1;
                    branch = unique(b[slot].get_or_insert_with(|| Arc::new(Branch::empty(level))));
                }
            }
        }
    }

    /// Index of the last present leaf.
    #[inline]
    pub fn last_leaf(&self) -> Option<u64> {
        self.end.checked_sub(1)
    }

    /// [`PVec::last_leaf`] found by walking down the right edge of the tree.
    fn find_last_leaf(&self) -> Option<u64> {
        fn walk<L>(b: &Branch<L>, level: u32, base: u64) -> Option<u64> {
            let index = |slot: usize| base | ((slot as u64) << (FANOUT_BITS * level));
            match &b.children {
                Children::Leaves(l) => l.iter().rposition(Option::is_some).map(index),
                Children::Branches(c) => {
                    c.iter().enumerate().rev().find_map(|(slot, child)| walk(child.as_deref()?, level - 1, index(slot)))
                }
            }
        }
        walk(self.root.as_ref()?, self.height, 0)
    }

    /// Drops the leaf at `index` (used when a leaf becomes empty).
    pub fn remove(&mut self, index: u64) {
        if self.get(index).is_none() {
            return;
        }
        let mut branch = unique(self.root.as_mut().expect("leaf exists"));
        let mut level = self.height;
        loop {
            let slot = ((index >> (FANOUT_BITS * level)) as usize) & (FANOUT - 1);
            match &mut branch.children {
                Children::Leaves(l) => {
                    l[slot] = None;
                    self.leaves -= 1;
                    if index + 1 == self.end {
                        self.end = self.find_last_leaf().map_or(0, |last| last + 1);
                    }
                    return;
                }
                Children::Branches(b) => {
                    branch = unique(b[slot].as_mut().expect("path checked by get"));
                    level -= 1;
                }
            }
        }
    }

    /// Visits every present leaf in index order.
    pub fn for_each<'a>(&'a self, mut f: impl FnMut(u64, &'a L)) {
        fn walk<'a, L>(b: &'a Branch<L>, level: u32, base: u64, f: &mut impl FnMut(u64, &'a L)) {
            let index = |slot: usize| base | ((slot as u64) << (FANOUT_BITS * level));
            match &b.children {
                Children::Leaves(l) => {
                    for (slot, leaf) in l.iter().enumerate() {
                        if let Some(leaf) = leaf {
                            f(index(slot), leaf);
                        }
                    }
                }
                Children::Branches(c) => {
                    for (slot, child) in c.iter().enumerate() {
                        if let Some(child) = child {
                            walk(child, level - 1, index(slot), f);
                        }
                    }
                }
            }
        }
        if let Some(root) = &self.root {
            walk(root, self.height, 0, &mut f);
        }
    }

    /// Calls `f` with every present leaf whose index is in `range`, in order (a part of a parallel scan).
    pub fn for_each_in<'a>(&'a self, range: std::ops::Range<u64>, mut f: impl FnMut(u64, &'a L)) {
        fn walk<'a, L>(
            b: &'a Branch<L>,
            level: u32,
            base: u64,
            range: &std::ops::Range<u64>,
            f: &mut impl FnMut(u64, &'a L),
        ) {
            let span_bits = FANOUT_BITS * level;
            let in_range = |slot: usize| {
                let index = base | ((slot as u64) << span_bits);
                (index < range.end && index + (1u64 << span_bits) > range.start).then_some(index)
            };
            match &b.children {
                Children::Leaves(l) => {
                    for (slot, leaf) in l.iter().enumerate() {
                        if let (Some(index), Some(leaf)) = (in_range(slot), leaf) {
                            f(index, leaf);
                        }
                    }
                }
                Children::Branches(c) => {
                    for (slot, child) in c.iter().enumerate() {
                        if let (Some(index), Some(child)) = (in_range(slot), child) {
                            walk(child, level - 1, index, range, f);
                        }
                    }
                }
            }
        }
        if let Some(root) = &self.root {
            walk(root, self.height, 0, &range, &mut f);
        }
    }

    /// Indexes of present leaves at or after `from`, in order (for resumable scans).
    pub fn next_leaf_at_or_after(&self, from: u64) -> Option<u64> {
        fn walk<L>(b: &Branch<L>, level: u32, base: u64, from: u64) -> Option<u64> {
            let span_bits = FANOUT_BITS * level;
            // Slots whose span ends after `from`.
            let first = (from.saturating_sub(base) >> span_bits) as usize;
            let index = |slot: usize| base | ((slot as u64) << span_bits);
            match &b.children {
                Children::Leaves(l) => (first..FANOUT).find(|&slot| l[slot].is_some()).map(index),
                Children::Branches(c) => {
                    (first..FANOUT).find_map(|slot| walk(c[slot].as_deref()?, level - 1, index(slot), from))
                }
            }
        }
        let root = self.root.as_ref()?;
        if from >= self.capacity() {
            return None;
        }
        walk(root, self.height, 0, from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #[test]
        fn behaves_like_a_map(ops in proptest::collection::vec((0u64..300_000, any::<u32>(), any::<bool>()), 1..200)) {
            let mut v: PVec<u32> = PVec::new();
            let mut model = BTreeMap::new();
            let mut snapshots = Vec::new();
            for (i, val, remove) in ops {
                if remove {
                    // Mostly a present leaf, often the last, so that removal moves the end.
                    let i = match model.keys().nth(i as usize % (model.len() + 1)) {
                        Some(&k) if i % 3 != 0 => k,
                        _ => model.keys().next_back().copied().unwrap_or(i),
                    };
                    v.remove(i);
                    model.remove(&i);
                } else {
                    *v.get_mut(i) = val;
                    model.insert(i, val);
                }
                snapshots.push((v.clone(), model.clone()));
            }
            for (snap, m) in snapshots {
                let mut seen = Vec::new();
                snap.for_each(|i, l| seen.push((i, *l)));
                let expected: Vec<_> = m.iter().map(|(k, v)| (*k, *v)).collect();
                prop_assert_eq!(&seen, &expected);
                prop_assert_eq!(snap.leaf_count(), m.len());
                for (k, val) in &m {
                    prop_assert_eq!(snap.get(*k), Some(val));
                    prop_assert_eq!(snap.next_leaf_at_or_after(*k), Some(*k));
                }
                prop_assert_eq!(snap.last_leaf(), m.keys().next_back().copied());
                prop_assert_eq!(snap.find_last_leaf(), snap.last_leaf());
            }
        }

        #[test]
        fn range_scans_see_exactly_the_leaves_in_range(
            keys in proptest::collection::btree_set(0u64..100_000, 0..100),
            start in 0u64..110_000,
            len in 0u64..50_000,
        ) {
            let mut v: PVec<u64> = PVec::new();
            for &k in &keys {
                *v.get_mut(k) = k;
            }
            let mut seen = Vec::new();
            v.for_each_in(start..start + len, |i, l| seen.push((i, *l)));
            let expected: Vec<_> = keys.range(start..start + len).map(|&k| (k, k)).collect();
            prop_assert_eq!(seen, expected);
        }
    }
}
