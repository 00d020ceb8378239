//! The dense per-thread counter a batch is walked into ([`super::batch`]): sums per node id, with the ids in
//! the order they were first reached, emptied by walking only those.

use std::cell::RefCell;

use plexus_storage::IdSlice;

use super::top::TopTwo;

/// Counters for up to this many node ids go back to the thread's pool; larger ones are freed after use.
const POOLED_COUNTER_MAX: usize = 1 << 22;

thread_local! {
    static COUNTERS: RefCell<Vec<Counter>> = const { RefCell::new(Vec::new()) };
}

/// Sums per node id in a dense array, with the ids in the order they were first reached.
#[derive(Default)]
pub(super) struct Counter {
    pub(super) acc: Vec<i64>,
    /// One more slot than `acc`: `add` writes the next slot before it knows whether the id is new.
    pub(super) touched: Vec<u64>,
    pub(super) len: usize,
    /// Relationships added since the counter was last empty.
    pub(super) added: usize,
    /// Scratch for [`Counter::drain_passing`].
    sums: Vec<i64>,
    pub(super) verdicts: Vec<bool>,
}

/// Whether an entry is left for the cells: counted and not dropped (a dropped entry is zero; a counted one is
/// positive), and in the neighbour set `adjacent`, if given.
#[inline(always)]
fn left(sum: i64, nbr: u64, adjacent: Option<&[u32]>) -> bool {
    sum != 0 && adjacent.is_none_or(|set| set.get(nbr as usize).is_some_and(|&v| v != 0))
}

impl Counter {
    /// A counter from the thread's pool (a query walking a batch inside another's filter gets its own).
    pub(super) fn take() -> Counter {
        COUNTERS.with(|p| p.borrow_mut().pop()).unwrap_or_default()
    }

    pub(super) fn reserve(&mut self, bound: usize) {
        if self.acc.len() < bound {
            self.acc.resize(bound, 0);
            self.touched.resize(bound + 1, 0);
        }
    }

    /// Adds `a` (positive) to the entry of every id; false when an id is beyond the arrays. Branch-free on
    /// whether an id is new, which is as likely as not: the id is written to the next slot either way and kept
    /// only when its entry was zero.
    ///
    /// This loop and the two after it are written out on purpose: one loop taking their differences as const
    /// parameters compiled to code 7.7 % slower on the whole recommendation (callgrind, 200 items, 100 likes),
    /// and `add` and `add_unless_in` sharing their step as an inlined function 3.8 % slower, as did one loop
    /// over an iterator that skips the bound relationships (0.9 % on 200 items, 10 likes).
    #[inline]
    pub(super) fn add<T: Copy + Into<u64>>(&mut self, ids: &[T], a: i64) -> bool {
        let (acc, touched) = (&mut self.acc[..], &mut self.touched[..]);
        let mut len = self.len;
        for &id in ids {
            let id: u64 = id.into();
            let Some(entry) = acc.get_mut(id as usize) else {
                self.len = len;
                return false;
            };
            touched[len] = id;
            len += usize::from(*entry == 0);
            *entry += a;
        }
        self.len = len;
        true
    }

    /// [`Counter::add`] branching on whether an id is new, for when nearly none is.
    #[inline]
    pub(super) fn add_mostly_seen<T: Copy + Into<u64>>(&mut self, ids: &[T], a: i64) -> bool {
        let (acc, touched) = (&mut self.acc[..], &mut self.touched[..]);
        let mut len = self.len;
        for &id in ids {
            let id: u64 = id.into();
            let Some(entry) = acc.get_mut(id as usize) else {
                self.len = len;
                return false;
            };
            if *entry == 0 {
                touched[len] = id;
                len += 1;
            }
            *entry += a;
        }
        self.len = len;
        true
    }

    /// [`Counter::add`] for the neighbours whose relationship is not one of `bound`. Kept out of line: inlined
    /// into the walk, its loops cost 1.4 % more instructions on the whole recommendation (callgrind, 200 items,
    /// 10 likes, 10,000 people).
    #[inline(never)]
    pub(super) fn add_unless(&mut self, nbrs: IdSlice, rels: IdSlice, bound: [u64; 2], a: i64) -> bool {
        match (nbrs, rels) {
            (IdSlice::Narrow(n), IdSlice::Narrow(r)) => self.add_unless_in(n, r, bound, a),
            (IdSlice::Narrow(n), IdSlice::Wide(r)) => self.add_unless_in(n, r, bound, a),
            (IdSlice::Wide(n), IdSlice::Narrow(r)) => self.add_unless_in(n, r, bound, a),
            (IdSlice::Wide(n), IdSlice::Wide(r)) => self.add_unless_in(n, r, bound, a),
        }
    }

    #[inline]
    fn add_unless_in<N: Copy + Into<u64>, R: Copy + Into<u64>>(
        &mut self,
        nbrs: &[N],
        rels: &[R],
        bound: [u64; 2],
        a: i64,
    ) -> bool {
        let (acc, touched) = (&mut self.acc[..], &mut self.touched[..]);
        let mut len = self.len;
        for (&id, &rel) in nbrs.iter().zip(rels) {
            let (id, rel): (u64, u64) = (id.into(), rel.into());
            if rel == bound[0] || rel == bound[1] {
                continue;
            }
            let Some(entry) = acc.get_mut(id as usize) else {
                self.len = len;
                return false;
            };
            touched[len] = id;
            len += usize::from(*entry == 0);
            *entry += a;
        }
        self.len = len;
        true
    }

    /// Sets the entries of `ids` to zero, which [`Counter::drain_passing`] then skips (a counted entry is
    /// positive).
    pub(super) fn drop_entries(&mut self, ids: impl Iterator<Item = u64>) {
        for id in ids {
            if let Some(entry) = self.acc.get_mut(id as usize) {
                *entry = 0;
            }
        }
    }

    /// Appends the entries left (not dropped; in the neighbour set `adjacent`, if given) as new cells of the
    /// first group, in the order their ids were first reached, and empties the counter.
    pub(super) fn drain_passing(&mut self, adjacent: Option<&[u32]>, keys: &mut Vec<(u32, u64)>, ints: &mut Vec<i64>) {
        // The passing ids are moved to the front of `touched` and their sums to `sums`, then appended whole.
        if self.sums.len() < self.len {
            self.sums.resize(self.len, 0);
        }
        let (acc, touched, sums) = (&mut self.acc[..], &mut self.touched[..], &mut self.sums[..]);
        let mut kept = 0;
        for i in 0..self.len {
            let nbr = touched[i];
            let sum = std::mem::take(&mut acc[nbr as usize]);
            let passes = left(sum, nbr, adjacent);
            touched[kept] = nbr;
            sums[kept] = sum;
            kept += usize::from(passes);
        }
        keys.extend(touched[..kept].iter().map(|&nbr| (0, nbr)));
        ints.extend_from_slice(&sums[..kept]);
        self.len = 0;
        self.added = 0;
    }

    /// Empties the counter as [`Counter::drain_passing`] does, offering each passing entry to `top` instead
    /// of appending it: its first key is the entry's sum bitwise negated by `flip` (-1 for a descending sort,
    /// else 0), its second the id negated by `second_flip`, if given; `c` is the entry's index in `touched`,
    /// which keeps its id until the counter is next used. Returns how many entries passed.
    pub(super) fn drain_top(
        &mut self,
        adjacent: Option<&[u32]>,
        top: &mut TopTwo,
        flip: i64,
        second_flip: Option<i64>,
    ) -> usize {
        let (acc, touched) = (&mut self.acc[..], &self.touched[..]);
        let mut passing = 0;
        // The second key without a branch per entry: the id negated by its flip, or nothing.
        let (id_flip, id_mask) = second_flip.map_or((0, 0), |f| (f, -1));
        // The worst kept key held here, in a register: once the top is full nearly every entry falls below it,
        // and the loop then costs a load, a store and one comparison an entry.
        let mut floor = top.floor();
        for (c, &nbr) in touched[..self.len].iter().enumerate() {
            let sum = std::mem::take(&mut acc[nbr as usize]);
            if !left(sum, nbr, adjacent) {
                continue;
            }
            passing += 1;
            let key = super::top::pack(sum ^ flip, (nbr as i64 ^ id_flip) & id_mask);
            if key >= floor {
                continue;
            }
            floor = top.offer_below_floor(key, c);
        }
        self.len = 0;
        self.added = 0;
        passing
    }

    fn clear(&mut self) {
        for &id in &self.touched[..self.len] {
            self.acc[id as usize] = 0;
        }
        self.len = 0;
        self.added = 0;
    }

    /// Returns the counter, emptied, to the thread's pool (a walk stopped part-way leaves entries behind). One
    /// that never grew is dropped: a held counter leaves one of those in its place (see [`super::top::Held`]).
    pub(super) fn give_back(mut self) {
        self.clear();
        if (1..=POOLED_COUNTER_MAX).contains(&self.acc.len()) {
            COUNTERS.with(|p| p.borrow_mut().push(self));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Sums around the window's edges and beyond it, so that the top falls inside and outside it.
    fn sum() -> impl Strategy<Value = i64> {
        prop_oneof![-3i64..4, 60i64..68, Just(i64::MAX), Just(i64::MIN + 1), any::<i64>()]
    }

    proptest! {
        /// `drain_top` keeps the first `keep` passing entries of a full sort on (key, second key, index), and
        /// empties the counter.
        #[test]
        fn drain_top_keeps_the_first_of_a_full_sort(
            entries in prop::collection::btree_map(0u64..200, sum(), 0..120),
            order in any::<u64>(),
            keep in 0usize..70,
            descending in any::<bool>(),
            second in prop_oneof![Just(None), Just(Some(0i64)), Just(Some(-1i64))],
            in_set in prop::option::of(prop::collection::vec(0u32..2, 200)),
        ) {
            let mut counter = Counter::default();
            counter.reserve(200);
            let mut ids: Vec<u64> = entries.keys().copied().collect();
            // A reach order other than the id order.
            ids.sort_by_key(|&id| (id.wrapping_mul(order | 1)) % 211);
            for (i, &id) in ids.iter().enumerate() {
                counter.acc[id as usize] = entries[&id];
                counter.touched[i] = id;
            }
            counter.len = ids.len();
            let flip = -i64::from(descending);
            let adjacent = in_set.as_deref();
            let mut expected: Vec<(i128, usize)> = ids
                .iter()
                .enumerate()
                .filter(|&(_, &id)| left(entries[&id], id, adjacent))
                .map(|(c, &id)| {
                    let second = second.map_or(0, |f| id as i64 ^ f);
                    (((i128::from(entries[&id] ^ flip)) << 64) | i128::from((second as u64) ^ (1 << 63)), c)
                })
                .collect();
            let passing = expected.len();
            expected.sort();
            expected.truncate(keep);
            let mut top = TopTwo::new(keep.max(1));
            let counted = counter.drain_top(adjacent, &mut top, flip, second);
            let mut kept = top.into_best();
            kept.truncate(keep);
            prop_assert_eq!(kept, expected);
            prop_assert_eq!(counted, passing);
            prop_assert_eq!(counter.len, 0);
            prop_assert!(counter.acc.iter().all(|&a| a == 0));
        }
    }
}
