//! A persistent (copy-on-write) radix vector of leaves.
//!
//! This is the spine of every snapshot: node and relationship records live in leaves addressed by
//! `id / LEAF_SIZE`. Cloning a `PVec` is one reference-count increment; changing a leaf copies only the path from
//! the root to it (at most a few 64-slot branches) and the leaf itself, and only when they are shared. So a
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

enum Child<L> {
    Branch(Arc<Branch<L>>),
    Leaf(Arc<L>),
}

impl<L> Clone for Child<L> {
    fn clone(&self) -> Self {
        match self {
            Child::Branch(b) => Child::Branch(b.clone()),
            Child::Leaf(l) => Child::Leaf(l.clone()),
        }
    }
}

struct Branch<L> {
    children: [Option<Child<L>>; FANOUT],
}

impl<L> Clone for Branch<L> {
    fn clone(&self) -> Self {
        Branch { children: self.children.clone() }
    }
}

impl<L> Branch<L> {
    fn empty() -> Self {
        Branch { children: std::array::from_fn(|_| None) }
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
            match branch.children[slot].as_ref()? {
                Child::Branch(b) => {
                    branch = b;
                    level -= 1;
                }
                Child::Leaf(l) => return Some(l),
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
            let mut branch = Branch::empty();
            if let Some(old) = old {
                branch.children[0] = Some(Child::Branch(old));
            }
            self.root = Some(Arc::new(branch));
            self.height += 1;
        }
        if self.root.is_none() {
            self.root = Some(Arc::new(Branch::empty()));
        }
        let mut branch = unique(self.root.as_mut().expect("root exists"));
        let mut level = self.height;
        loop {
            let slot = ((index >> (FANOUT_BITS * level)) as usize) & (FANOUT - 1);
            if level == 0 {
                let child = &mut branch.children[slot];
                if child.is_none() {
                    *child = Some(Child::Leaf(Arc::new(L::default())));
                    self.leaves += 1;
                    self.end = self.end.max(index + 1);
                }
                match child {
                    Some(Child::Leaf(l)) => return unique(l),
                    _ => unreachable!("level 0 holds leaves"),
                }
            }
            let child = &mut branch.children[slot];
            if child.is_none() {
                *child = Some(Child::Branch(Arc::new(Branch::empty())));
            }
            branch = match child {
                Some(Child::Branch(b)) => unique(b),
                _ => unreachable!("upper levels hold branches"),
            };
            level -= 1;
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
            for (slot, child) in b.children.iter().enumerate().rev() {
                let index = base | ((slot as u64) << (FANOUT_BITS * level));
                match child {
                    None => {}
                    Some(Child::Leaf(_)) => return Some(index),
                    Some(Child::Branch(c)) => {
                        if let Some(found) = walk(c, level - 1, index) {
                            return Some(found);
                        }
                    }
                }
            }
            None
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
            if level == 0 {
                branch.children[slot] = None;
                self.leaves -= 1;
                if index + 1 == self.end {
                    self.end = self.find_last_leaf().map_or(0, |last| last + 1);
                }
                return;
            }
            branch = match &mut branch.children[slot] {
                Some(Child::Branch(b)) => unique(b),
                _ => unreachable!("path checked by get"),
            };
            level -= 1;
        }
    }

    /// Visits every present leaf in index order.
    pub fn for_each<'a>(&'a self, mut f: impl FnMut(u64, &'a L)) {
        fn walk<'a, L>(b: &'a Branch<L>, level: u32, base: u64, f: &mut impl FnMut(u64, &'a L)) {
            for (slot, child) in b.children.iter().enumerate() {
                let index = base | ((slot as u64) << (FANOUT_BITS * level));
                match child {
                    None => {}
                    Some(Child::Leaf(l)) => f(index, l),
                    Some(Child::Branch(c)) => walk(c, level - 1, index, f),
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
            for (slot, child) in b.children.iter().enumerate() {
                let index = base | ((slot as u64) << span_bits);
                if index >= range.end || index + (1u64 << span_bits) <= range.start {
                    continue;
                }
                match child {
                    None => {}
                    Some(Child::Leaf(l)) => f(index, l),
                    Some(Child::Branch(c)) => walk(c, level - 1, index, range, f),
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
            for (slot, child) in b.children.iter().enumerate() {
                let index = base | ((slot as u64) << span_bits);
                let end = index + (1u64 << span_bits);
                if end <= from {
                    continue;
                }
                match child {
                    None => {}
                    Some(Child::Leaf(_)) => return Some(index),
                    Some(Child::Branch(c)) => {
                        if let Some(found) = walk(c, level - 1, index, from) {
                            return Some(found);
                        }
                    }
                }
            }
            None
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
