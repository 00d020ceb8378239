//! Traversals written against the public API, shared by the command line, tests and benchmarks.

use std::cell::RefCell;
use std::ops::ControlFlow;

use crate::{Direction, NodeId, ReadTxn, TypeFilter, TypeId};

/// Counts per node id in a dense array, reset by walking only the touched entries, so a traversal that visits
/// k relationships costs O(k) and no hashing. Kept per thread and reused between calls.
///
/// Most ids are touched once per traversal, so recording a touch is on the hot path: `touched` is as long as
/// `counts` and filled up to `len`, an indexed store instead of a push that checks for growth. An id is
/// recorded when its count leaves zero, and counts only grow, so `len` never passes the number of ids.
#[derive(Default)]
struct DenseCounter {
    counts: Vec<u32>,
    touched: Vec<u64>,
    len: usize,
}

impl DenseCounter {
    fn reserve(&mut self, bound: u64) {
        if self.counts.len() < bound as usize {
            self.counts.resize(bound as usize, 0);
            // One spare slot: `add` writes the next slot before it knows whether the id is new.
            self.touched.resize(bound as usize + 1, 0);
        }
    }

    /// Adds `n` (at least 1) to the count of `id`. Branch-free: whether an id is new is as likely as not, so a
    /// branch on it would be mispredicted half the time; the id is written to the next slot either way and the
    /// slot kept only when the count was zero.
    #[inline]
    fn add(&mut self, id: u64, n: u32) {
        debug_assert!(n > 0, "a zero count would be recorded twice");
        let count = &mut self.counts[id as usize];
        self.touched[self.len] = id;
        self.len += usize::from(*count == 0);
        *count += n;
    }

    /// [`DenseCounter::add`] with a branch on whether the id is new: cheaper when nearly every id repeats (the
    /// branch is then predicted right), as when many people like a few items.
    #[inline]
    fn add_mostly_seen(&mut self, id: u64, n: u32) {
        let count = &mut self.counts[id as usize];
        if *count == 0 {
            self.touched[self.len] = id;
            self.len += 1;
        }
        *count += n;
    }

    fn drain(&mut self, mut f: impl FnMut(u64, u32)) {
        for &id in &self.touched[..self.len] {
            let count = &mut self.counts[id as usize];
            f(id, *count);
            *count = 0;
        }
        self.len = 0;
    }
}

/// The `k` best `(count, id)` pairs seen, best first: highest count, then lowest id.
struct TopK {
    k: usize,
    best: Vec<(u32, u64)>,
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK { k, best: Vec::with_capacity(k + 1) }
    }

    #[inline]
    fn better(a: (u32, u64), b: (u32, u64)) -> bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
    }

    #[inline]
    fn offer(&mut self, count: u32, id: u64) {
        if self.k == 0 {
            return;
        }
        let candidate = (count, id);
        if self.best.len() == self.k && !Self::better(candidate, *self.best.last().expect("k > 0")) {
            return;
        }
        let pos = self.best.iter().position(|&b| Self::better(candidate, b)).unwrap_or(self.best.len());
        self.best.insert(pos, candidate);
        self.best.truncate(self.k);
    }

    /// The worst pair kept once `k` are kept: only a better pair can still enter.
    #[inline]
    fn floor(&self) -> Option<(u32, u64)> {
        (self.best.len() == self.k).then(|| self.best.last().copied()).flatten()
    }

    fn into_sorted(self) -> Vec<(NodeId, u64)> {
        self.best.into_iter().map(|(count, id)| (NodeId(id), count as u64)).collect()
    }
}

thread_local! {
    /// (co-likers, items) counters.
    static COUNTERS: RefCell<(DenseCounter, DenseCounter)> = RefCell::new(Default::default());
}

/// GuancialeDB's recommendation: the items liked by people who like what `person` likes, excluding what
/// `person` already likes, ranked by how many such likes point at them (ties by id); the top `limit`.
pub fn recommend(snapshot: &ReadTxn, person: NodeId, likes: TypeId, limit: usize) -> Vec<(NodeId, u64)> {
    let only = [likes];
    let filter = TypeFilter::Only(&only);
    let mine = snapshot.neighbours(person, Direction::Out, filter);
    let mut ranked: Vec<(NodeId, u64)> = Vec::new();
    COUNTERS.with(|counters| {
        let (co_likers, counter) = &mut *counters.borrow_mut();
        let bound = snapshot.node_id_bound();
        co_likers.reserve(bound);
        counter.reserve(bound);
        // First how many of my items each co-liker likes, then each co-liker's likes once, weighted by that:
        // the same counts as walking every path, with one walk per co-liker instead of one per shared item.
        for &item in &mine {
            let _ = snapshot.visit_neighbour_slices::<()>(item, Direction::In, filter, |likers| {
                likers.for_each(|liker| co_likers.add(liker, 1));
                ControlFlow::Continue(())
            });
        }
        // Whether an item is new to the counter: unpredictable while few have been seen, nearly always "no" once
        // the adds far outnumber the distinct items (few items, many likes). Each co-liker's run picks the add
        // that suits what the counts so far show.
        let mut adds = 0usize;
        co_likers.drain(|liker, shared| {
            if liker != person.0 {
                let _ = snapshot.visit_neighbour_slices::<()>(NodeId(liker), Direction::Out, filter, |items| {
                    if counter.len * 8 < adds {
                        items.for_each(|other| counter.add_mostly_seen(other, shared));
                    } else {
                        items.for_each(|other| counter.add(other, shared));
                    }
                    adds += items.len();
                    ControlFlow::Continue(())
                });
            }
        });
        // What the person already likes is excluded by zeroing its counts; drain skips zero counts.
        for item in &mine {
            if let Some(count) = counter.counts.get_mut(item.0 as usize) {
                *count = 0;
            }
        }
        let mut top = TopK::new(limit);
        // Once the top is full, only a pair better than its worst can enter it: most items are skipped with a
        // compare or two (ties are common, so the id takes part).
        let mut floor = (1, u64::MAX);
        counter.drain(|id, n| {
            if n > floor.0 || (n == floor.0 && id < floor.1) {
                top.offer(n, id);
                if let Some(worst) = top.floor() {
                    floor = worst;
                }
            }
        });
        ranked = top.into_sorted();
    });
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Database;

    #[test]
    fn recommends_what_similar_people_like() {
        let db = Database::in_memory();
        let mut tx = db.write();
        let (item, person, likes) = (tx.label("Item"), tx.label("Person"), tx.rel_type("LIKES"));
        let items: Vec<NodeId> = (0..5).map(|_| tx.create_node(&[item], vec![]).unwrap()).collect();
        let people: Vec<NodeId> = (0..3).map(|_| tx.create_node(&[person], vec![]).unwrap()).collect();
        // me likes 0; p1 likes 0,1,2; p2 likes 0,2,3.
        for (p, is) in [(0, vec![0]), (1, vec![0, 1, 2]), (2, vec![0, 2, 3])] {
            for i in is {
                tx.create_rel(people[p], likes, items[i], vec![]).unwrap();
            }
        }
        tx.commit().unwrap();
        let r = db.read();
        let recs = recommend(&r, people[0], likes, 10);
        assert_eq!(recs, vec![(items[2], 2), (items[1], 1), (items[3], 1)]);
        assert_eq!(recommend(&r, people[0], likes, 1), vec![(items[2], 2)]);
    }

    /// Against counting every path person → item ← co-liker → item, on a random graph with many tied counts.
    #[test]
    fn matches_counting_every_path() {
        let db = Database::in_memory();
        let mut tx = db.write();
        let likes = tx.rel_type("LIKES");
        let items: Vec<NodeId> = (0..40).map(|_| tx.create_node(&[], vec![]).unwrap()).collect();
        let people: Vec<NodeId> = (0..60).map(|_| tx.create_node(&[], vec![]).unwrap()).collect();
        let mut liked: Vec<Vec<usize>> = Vec::new();
        let mut state = 7u64;
        for &p in &people {
            let mut mine = Vec::new();
            for (i, &item) in items.iter().enumerate() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if (state >> 33).is_multiple_of(7) {
                    tx.create_rel(p, likes, item, vec![]).unwrap();
                    mine.push(i);
                }
            }
            liked.push(mine);
        }
        tx.commit().unwrap();
        let r = db.read();
        for (me, mine) in liked.iter().enumerate() {
            let mut counts = std::collections::BTreeMap::<usize, u64>::new();
            for theirs in liked.iter().enumerate().filter(|(o, _)| *o != me).map(|(_, t)| t) {
                let shared = mine.iter().filter(|i| theirs.contains(i)).count() as u64;
                for &i in theirs.iter().filter(|i| !mine.contains(i)) {
                    if shared > 0 {
                        *counts.entry(i).or_default() += shared;
                    }
                }
            }
            let mut expected: Vec<(NodeId, u64)> = counts.into_iter().map(|(i, n)| (items[i], n)).collect();
            expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            for limit in [0, 1, 3, 10, 100] {
                let want: Vec<(NodeId, u64)> = expected.iter().copied().take(limit).collect();
                assert_eq!(recommend(&r, people[me], likes, limit), want, "person {me}, limit {limit}");
            }
        }
    }
}
