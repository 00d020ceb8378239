//! A persistent sorted set: a B+tree whose nodes are shared through `Arc`, so cloning the set is O(1) and a write
//! copies only the nodes on its path that are still shared (the copy-on-write discipline of every snapshot).
//!
//! Leaves hold up to [`LEAF_CAP`] values in a sorted `Vec`; inner nodes hold up to [`INNER_CAP`] children, each
//! with the largest value below it. A set built from sorted values ([`PSet::from_sorted`]) fills its leaves
//! completely, which is what property indexes built over existing data get: about one value's size per entry.
//! Removal merges a small node into a neighbour when both fit in one, so nodes stay reasonably full.

use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

pub const LEAF_CAP: usize = 64;
/// Narrow, like the radix vector's branches: copying an inner node touches every child's reference count.
pub const INNER_CAP: usize = 16;

#[derive(Clone)]
struct Child<T> {
    /// The largest value in `node`.
    max: T,
    node: Arc<Node<T>>,
}

#[derive(Clone)]
enum Node<T> {
    Leaf(Vec<T>),
    Inner(Vec<Child<T>>),
}

impl<T: Ord + Clone> Node<T> {
    fn len(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(c) => c.len(),
        }
    }

    fn cap(&self) -> usize {
        match self {
            Node::Leaf(_) => LEAF_CAP,
            Node::Inner(_) => INNER_CAP,
        }
    }

    fn max(&self) -> &T {
        match self {
            Node::Leaf(v) => v.last().expect("nodes are never empty"),
            Node::Inner(c) => &c.last().expect("nodes are never empty").max,
        }
    }

    /// Splits off the upper half.
    fn split(&mut self) -> Node<T> {
        match self {
            Node::Leaf(v) => Node::Leaf(v.split_off(v.len() / 2)),
            Node::Inner(c) => Node::Inner(c.split_off(c.len() / 2)),
        }
    }

    /// Moves every value of `other` (all larger) to the end of `self`.
    fn append(&mut self, other: Node<T>) {
        match (self, other) {
            (Node::Leaf(a), Node::Leaf(b)) => a.extend(b),
            (Node::Inner(a), Node::Inner(b)) => a.extend(b),
            _ => unreachable!("siblings have the same height"),
        }
    }

    /// Inserts `value`; returns whether it was absent and the upper half if the node overflowed.
    fn insert(&mut self, value: T) -> (bool, Option<Node<T>>) {
        let added = match self {
            Node::Leaf(v) => match v.binary_search(&value) {
                Ok(_) => return (false, None),
                Err(pos) => {
                    v.insert(pos, value);
                    true
                }
            },
            Node::Inner(children) => {
                let i = children.partition_point(|c| c.max < value).min(children.len() - 1);
                let Child { max, node } = &mut children[i];
                let child = Arc::make_mut(node);
                let (added, split) = child.insert(value);
                if !added {
                    return (false, None);
                }
                *max = child.max().clone();
                if let Some(right) = split {
                    let right = Child { max: right.max().clone(), node: Arc::new(right) };
                    children.insert(i + 1, right);
                }
                true
            }
        };
        let split = (self.len() > self.cap()).then(|| self.split());
        (added, split)
    }

    /// Removes `value`; returns whether it was present.
    fn remove(&mut self, value: &T) -> bool {
        match self {
            Node::Leaf(v) => match v.binary_search(value) {
                Ok(pos) => {
                    v.remove(pos);
                    true
                }
                Err(_) => false,
            },
            Node::Inner(children) => {
                let i = children.partition_point(|c| c.max < *value);
                if i == children.len() {
                    return false;
                }
                let Child { max, node } = &mut children[i];
                let child = Arc::make_mut(node);
                if !child.remove(value) {
                    return false;
                }
                let (len, cap) = (child.len(), child.cap());
                if len == 0 {
                    children.remove(i);
                    return true;
                }
                *max = child.max().clone();
                if len < cap / 4 {
                    // Merge with a neighbour when both fit in one node.
                    let j = if i + 1 < children.len() { i } else { i.saturating_sub(1) };
                    if j + 1 < children.len() && children[j].node.len() + children[j + 1].node.len() <= cap {
                        let right = children.remove(j + 1);
                        let right = Arc::try_unwrap(right.node).unwrap_or_else(|shared| (*shared).clone());
                        let left = Arc::make_mut(&mut children[j].node);
                        left.append(right);
                        children[j].max = left.max().clone();
                    }
                }
                true
            }
        }
    }

    fn contains(&self, value: &T) -> bool {
        match self {
            Node::Leaf(v) => v.binary_search(value).is_ok(),
            Node::Inner(children) => {
                let i = children.partition_point(|c| c.max < *value);
                i < children.len() && children[i].node.contains(value)
            }
        }
    }

    /// Visits the values not below `start` (all of them when `start` is unbounded), in order.
    fn visit<B>(&self, start: Bound<&T>, f: &mut impl FnMut(&T) -> ControlFlow<B>) -> ControlFlow<B> {
        match self {
            Node::Leaf(v) => {
                let from = match start {
                    Bound::Included(s) => v.partition_point(|x| x < s),
                    Bound::Excluded(s) => v.partition_point(|x| x <= s),
                    Bound::Unbounded => 0,
                };
                v[from..].iter().try_for_each(f)
            }
            Node::Inner(children) => {
                let from = match start {
                    Bound::Included(s) => children.partition_point(|c| c.max < *s),
                    Bound::Excluded(s) => children.partition_point(|c| c.max <= *s),
                    Bound::Unbounded => 0,
                };
                let mut first = true;
                for c in &children[from..] {
                    c.node.visit(if first { start } else { Bound::Unbounded }, f)?;
                    first = false;
                }
                ControlFlow::Continue(())
            }
        }
    }
}

/// A persistent sorted set (see the module documentation).
#[derive(Clone)]
pub struct PSet<T> {
    root: Option<Arc<Node<T>>>,
    len: usize,
}

impl<T> Default for PSet<T> {
    fn default() -> Self {
        PSet { root: None, len: 0 }
    }
}

impl<T: Ord + Clone> PSet<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A set of `values`, which must be sorted and distinct; leaves and inner nodes are filled completely.
    pub fn from_sorted(values: Vec<T>) -> Self {
        debug_assert!(values.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
        let len = values.len();
        if len == 0 {
            return Self::default();
        }
        let mut level: Vec<Child<T>> = Vec::with_capacity(len.div_ceil(LEAF_CAP));
        let mut values = values.into_iter().peekable();
        while values.peek().is_some() {
            let leaf: Vec<T> = values.by_ref().take(LEAF_CAP).collect();
            level.push(Child { max: leaf.last().expect("nonempty").clone(), node: Arc::new(Node::Leaf(leaf)) });
        }
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(INNER_CAP));
            let mut children = level.into_iter().peekable();
            while children.peek().is_some() {
                let group: Vec<Child<T>> = children.by_ref().take(INNER_CAP).collect();
                next.push(Child {
                    max: group.last().expect("nonempty").max.clone(),
                    node: Arc::new(Node::Inner(group)),
                });
            }
            level = next;
        }
        PSet { root: level.pop().map(|c| c.node), len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inserts `value`; returns whether it was absent.
    pub fn insert(&mut self, value: T) -> bool {
        let Some(root) = &mut self.root else {
            self.root = Some(Arc::new(Node::Leaf(vec![value])));
            self.len = 1;
            return true;
        };
        let node = Arc::make_mut(root);
        let (added, split) = node.insert(value);
        if let Some(right) = split {
            let left = self.root.take().expect("root");
            let children = vec![
                Child { max: left.max().clone(), node: left },
                Child { max: right.max().clone(), node: Arc::new(right) },
            ];
            self.root = Some(Arc::new(Node::Inner(children)));
        }
        self.len += added as usize;
        added
    }

    /// Removes `value`; returns whether it was present.
    pub fn remove(&mut self, value: &T) -> bool {
        let Some(root) = &mut self.root else { return false };
        // Look before copying: a miss must not copy the path.
        if !root.contains(value) {
            return false;
        }
        let node = Arc::make_mut(root);
        node.remove(value);
        self.len -= 1;
        loop {
            match self.root.as_deref() {
                Some(Node::Leaf(v)) if v.is_empty() => self.root = None,
                Some(Node::Inner(c)) if c.len() == 1 => {
                    let only = c[0].node.clone();
                    self.root = Some(only);
                }
                _ => break,
            }
        }
        true
    }

    pub fn contains(&self, value: &T) -> bool {
        self.root.as_ref().is_some_and(|r| r.contains(value))
    }

    /// Calls `f` with the values from `start` on, in order, until it breaks.
    pub fn visit_from<B>(&self, start: Bound<&T>, mut f: impl FnMut(&T) -> ControlFlow<B>) -> ControlFlow<B> {
        match &self.root {
            Some(r) => r.visit(start, &mut f),
            None => ControlFlow::Continue(()),
        }
    }

    /// Calls `f` with every value, in order, until it breaks.
    pub fn visit<B>(&self, f: impl FnMut(&T) -> ControlFlow<B>) -> ControlFlow<B> {
        self.visit_from(Bound::Unbounded, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn collect(s: &PSet<u32>, start: Bound<&u32>) -> Vec<u32> {
        let mut out = Vec::new();
        let _ = s.visit_from::<()>(start, |v| {
            out.push(*v);
            ControlFlow::Continue(())
        });
        out
    }

    /// Height is uniform, every node but the root is nonempty and within capacity, and parents know the maxima.
    fn check_node(n: &Node<u32>, root: bool) -> usize {
        assert!(root || n.len() > 0);
        assert!(n.len() <= n.cap());
        match n {
            Node::Leaf(v) => {
                assert!(v.windows(2).all(|w| w[0] < w[1]));
                1
            }
            Node::Inner(c) => {
                let heights: Vec<usize> = c.iter().map(|c| check_node(&c.node, false)).collect();
                assert!(heights.windows(2).all(|w| w[0] == w[1]));
                for child in c {
                    assert_eq!(&child.max, child.node.max());
                }
                assert!(c.windows(2).all(|w| w[0].max < w[1].max));
                heights[0] + 1
            }
        }
    }

    #[test]
    fn deep_trees_grow_and_shrink() {
        let mut set = PSet::new();
        let mut model = BTreeSet::new();
        let mut x = 1u32;
        for round in 0..3 {
            for _ in 0..60_000 {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let v = x % 200_000;
                if round == 1 {
                    assert_eq!(set.remove(&v), model.remove(&v));
                } else {
                    assert_eq!(set.insert(v), model.insert(v));
                }
            }
            check_node(set.root.as_ref().unwrap(), true);
            assert_eq!(collect(&set, Bound::Unbounded), model.iter().copied().collect::<Vec<_>>());
        }
        for v in model.iter().copied().collect::<Vec<_>>() {
            assert!(set.remove(&v));
        }
        assert!(set.is_empty() && set.root.is_none());
        let built = PSet::from_sorted((0..100_000u32).collect());
        check_node(built.root.as_ref().unwrap(), true);
        assert_eq!(collect(&built, Bound::Excluded(&99_998)), vec![99_999]);
    }

    proptest! {
        #[test]
        fn behaves_like_a_btreeset(
            initial in proptest::collection::btree_set(0u32..3000, 0..600),
            ops in proptest::collection::vec((any::<bool>(), 0u32..3000), 0..1500),
            probes in proptest::collection::vec(0u32..3100, 8),
        ) {
            let mut model: BTreeSet<u32> = initial.clone();
            let mut set = PSet::from_sorted(initial.into_iter().collect());
            let snapshot = set.clone();
            let frozen = model.clone();
            for (insert, v) in ops {
                if insert {
                    prop_assert_eq!(set.insert(v), model.insert(v));
                } else {
                    prop_assert_eq!(set.remove(&v), model.remove(&v));
                }
                prop_assert_eq!(set.len(), model.len());
            }
            if let Some(r) = &set.root {
                check_node(r, true);
            }
            prop_assert_eq!(collect(&set, Bound::Unbounded), model.iter().copied().collect::<Vec<_>>());
            for p in probes {
                prop_assert_eq!(set.contains(&p), model.contains(&p));
                prop_assert_eq!(collect(&set, Bound::Included(&p)), model.range(p..).copied().collect::<Vec<_>>());
                let after: Vec<u32> = model.range((Bound::Excluded(p), Bound::Unbounded)).copied().collect();
                prop_assert_eq!(collect(&set, Bound::Excluded(&p)), after);
            }
            // The clone taken before the writes is untouched.
            prop_assert_eq!(collect(&snapshot, Bound::Unbounded), frozen.into_iter().collect::<Vec<_>>());
        }
    }
}
