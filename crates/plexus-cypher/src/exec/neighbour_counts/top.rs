//! The groups of a fused count that a sort under a LIMIT keeps ([`crate::plan::fuse::TopGroups`]): picked
//! from the cells by integer comparison, so that only those are lent to the sort above.
//!
//! When the sort is on the count and then the neighbour's id (`ORDER BY score DESC, id(rec) LIMIT 10`), the
//! counter of a batch that would fill an empty count is held instead of drained into cells ([`Held`]): if
//! nothing else is counted, the top groups are picked straight from the counter and only they become cells,
//! as the native traversal does. Anything else that reads or adds to the cells drains it first
//! ([`NeighbourCounts::settle`]).

use std::cmp::Ordering;

use super::counter::Counter;
use super::{Cells, NeighbourCounts};
use crate::exec::ctx::Ctx;
use crate::exec::nodemap::NodeMap;
use crate::plan::fuse::TopKey;

/// Up to this many top groups are kept by insertion into a sorted list as the cells are scanned; more by
/// selection over all of them.
const TOP_BY_INSERTION: usize = 64;

/// A batch's counter that is all of an empty count's cells, not drained yet: its entries that pass (not
/// dropped; in the count's one neighbour set, when `in_set`) are the cells, in the order reached.
pub(super) struct Held {
    pub counter: Counter,
    pub in_set: bool,
}

impl NeighbourCounts<'_> {
    /// Whether a batch that would fill an empty count may be held ([`Held`]): the sort above keys on nothing
    /// but the one aggregate and then the neighbour's id, which the counter answers.
    pub(super) fn may_hold(&self) -> bool {
        self.shape.top.as_ref().is_some_and(|top| {
            top.exact
                && matches!(
                    top.keys.as_slice(),
                    [(TopKey::Aggregate(0), _)] | [(TopKey::Aggregate(0), _), (TopKey::NeighbourId, _)]
                )
        })
    }

    /// Drains a held counter into the cells it stands for. Called before anything reads, counts into or
    /// forgets the sets of a count, except [`Self::top_cells`], which picks the top from the counter; it runs
    /// for every input row, so what it costs without a held counter is one test.
    #[inline]
    pub(super) fn settle(&mut self) {
        if self.held.is_some() {
            self.drain_held();
        }
    }

    #[inline(never)]
    fn drain_held(&mut self) {
        let Some(Held { mut counter, in_set }) = self.held.take() else { return };
        let Cells::Ints(ints) = &mut self.cells else { unreachable!("held only over integer cells") };
        counter.drain_passing(in_set_slots(&self.adjacent, in_set), &mut self.cell_keys, ints);
        self.unindexed = true;
        counter.give_back();
    }

    /// [`Self::top_cells`] of a held counter, keeping as cells only the groups picked; `None`, with the
    /// counter drained into cells, when the picking is left to the cells.
    fn top_of_held(&mut self, ctx: &Ctx) -> Option<Option<Vec<usize>>> {
        let Some(keep) = self.keep(ctx).filter(|&k| k <= TOP_BY_INSERTION) else {
            self.settle();
            return None;
        };
        let top = self.shape.top.as_ref().expect("held only under a top");
        let flip = -i64::from(top.keys[0].1);
        let second_flip = top.keys.get(1).map(|&(_, desc)| -i64::from(desc));
        let Held { mut counter, in_set } = self.held.take().expect("called when held");
        let mut picked = TopTwo::new(keep.max(1));
        counter.drain_top(in_set_slots(&self.adjacent, in_set), &mut picked, flip, second_flip);
        let best = if keep == 0 { &[][..] } else { &picked.best[..] };
        // The picked groups become the cells in sort order, ties in the order reached (the packed key and the
        // entry's index order them so), which is the order in which the stable sort above would leave them.
        let Cells::Ints(ints) = &mut self.cells else { unreachable!("held only over integer cells") };
        for &(key, c) in best {
            self.cell_keys.push((0, counter.touched[c]));
            ints.push((key >> 64) as i64 ^ flip);
        }
        self.unindexed = true;
        counter.give_back();
        Some(Some((0..best.len()).collect()))
    }

    /// `skip + limit` of the sort above, when valid.
    fn keep(&self, ctx: &Ctx) -> Option<usize> {
        let top = self.shape.top.as_ref()?;
        // The sort evaluates its bound before it reads a row, so an invalid one has failed already.
        let skip = match &top.skip {
            Some(s) => crate::exec::count_value(s, ctx, "SKIP").ok()?,
            None => 0,
        };
        Some(skip.saturating_add(crate::exec::count_value(&top.limit, ctx, "LIMIT").ok()?))
    }

    /// With [`CountShape::top`], the cells that sort into the first `skip + limit` under its keys (ties in
    /// cell order, as the stable sort above breaks them), in that order: the sort above then finds its input
    /// sorted. With more sort keys than it knows, every cell tied with the last of those, in cell order. `None`
    /// to lend every cell.
    pub(super) fn top_cells(&mut self, ctx: &Ctx) -> Option<Vec<usize>> {
        if self.held.is_some() {
            if let Some(cells) = self.top_of_held(ctx) {
                return cells;
            }
        }
        let top = self.shape.top.as_ref()?;
        let Cells::Ints(ints) = &self.cells else { return None };
        let keep = self.keep(ctx)?;
        let n = self.cell_keys.len();
        if keep >= n {
            return None;
        }
        let width = self.aggs.len();
        let key = |c: usize, k: TopKey| match k {
            TopKey::Aggregate(i) => ints[c * width + i],
            TopKey::NeighbourId => self.cell_keys[c].1 as i64,
        };
        let on_keys = |a: usize, b: usize| {
            for &(k, desc) in &top.keys {
                let o = key(a, k).cmp(&key(b, k));
                let o = if desc { o.reverse() } else { o };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        };
        if keep == 0 {
            return Some(Vec::new());
        }
        // The first `keep` cells in sort order, ties in cell order, and the last of them.
        let (best, last) = if keep > TOP_BY_INSERTION {
            let mut cells: Vec<usize> = (0..n).collect();
            let (_, &mut last, _) = cells.select_nth_unstable_by(keep - 1, |&a, &b| on_keys(a, b).then(a.cmp(&b)));
            cells.truncate(keep);
            cells.sort_unstable_by(|&a, &b| on_keys(a, b).then(a.cmp(&b)));
            (cells, last)
        } else if let [first, rest @ ..] = top.keys.as_slice() {
            if rest.len() <= 1 {
                // A descending key bitwise negated: that reverses the order of every i64.
                let column = |&(key, desc): &(TopKey, bool)| {
                    let flip = -i64::from(desc);
                    Column { key, flip, ints, width, cells: &self.cell_keys }
                };
                let (first, second) = (column(first), rest.first().map(column));
                let best = match (first.key, second.map(|s| s.key)) {
                    // The usual sort of a count (`ORDER BY n DESC, id(x)`): both keys read without a match per cell.
                    (TopKey::Aggregate(i), None | Some(TopKey::NeighbourId)) => {
                        let flip = second.map_or(0, |s| s.flip);
                        let neighbour = |c: usize| if second.is_some() { self.cell_keys[c].1 as i64 ^ flip } else { 0 };
                        top_two(n, keep, |c| ints[c * width + i] ^ first.flip, neighbour)
                    }
                    _ => top_two(n, keep, |c| first.get(c), |c| second.map_or(0, |s| s.get(c))),
                };
                let last = best[keep - 1];
                (best, last)
            } else {
                top_by_insertion(n, keep, *first, key, on_keys)
            }
        } else {
            unreachable!("a sort has at least one key")
        };
        let cells = if top.exact {
            best
        } else {
            // Every group that sorts before the keep-th on the keys known here, and every one tied with it.
            (0..n).filter(|&c| on_keys(c, last) != Ordering::Greater).collect()
        };
        Some(cells)
    }
}

impl NeighbourCounts<'_> {
    /// Puts `cells` in the order of the sort the plan recorded ([`CountShape::top`], all of whose keys the
    /// count knows), ties in cell order as a stable sort of the cells would leave them: the order lent when
    /// [`Self::top_cells`] picks nothing (every cell is kept, or the cells hold values other than integers).
    pub(super) fn sort_cells(&self, cells: &mut [usize]) {
        let Some(top) = self.shape.top.as_ref() else { return };
        let width = self.aggs.len();
        let on_key = |a: usize, b: usize, key: TopKey| match (key, &self.cells) {
            (TopKey::NeighbourId, _) => (self.cell_keys[a].1 as i64).cmp(&(self.cell_keys[b].1 as i64)),
            (TopKey::Aggregate(i), Cells::Ints(ints)) => ints[a * width + i].cmp(&ints[b * width + i]),
            (TopKey::Aggregate(i), Cells::Values(values)) => {
                crate::compare::order(&values[a * width + i], &values[b * width + i])
            }
        };
        cells.sort_by(|&a, &b| {
            top.keys
                .iter()
                .map(|&(key, desc)| if desc { on_key(a, b, key).reverse() } else { on_key(a, b, key) })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
    }
}

/// The first `keep` (at least one) of `n` cells in sort order, ties in cell order, found in one pass: once
/// there are `keep`, a cell enters only if it sorts before the worst of them, which most cells fail at the
/// first key. Returns them and the last of them.
fn top_by_insertion(
    n: usize,
    keep: usize,
    (first, first_desc): (TopKey, bool),
    key: impl Fn(usize, TopKey) -> i64,
    on_keys: impl Fn(usize, usize) -> Ordering,
) -> (Vec<usize>, usize) {
    let mut best: Vec<usize> = Vec::with_capacity(keep + 1);
    let mut floor = i64::MIN;
    for c in 0..n {
        if best.len() == keep {
            let v = key(c, first);
            let o = if first_desc { floor.cmp(&v) } else { v.cmp(&floor) };
            // A later cell tied on every key sorts after the kept one.
            if o == Ordering::Greater || (o == Ordering::Equal && on_keys(c, best[keep - 1]) != Ordering::Less) {
                continue;
            }
        }
        let at = best.partition_point(|&b| on_keys(b, c) != Ordering::Greater);
        best.insert(at, c);
        best.truncate(keep);
        if best.len() == keep {
            floor = key(best[keep - 1], first);
        }
    }
    let last = best[keep - 1];
    (best, last)
}

/// One sort key of the cells, as an integer that compares in sort order.
#[derive(Clone, Copy)]
struct Column<'a> {
    key: TopKey,
    /// -1 for a descending key (negating it bitwise), else 0.
    flip: i64,
    ints: &'a [i64],
    width: usize,
    cells: &'a [(u32, u64)],
}

impl Column<'_> {
    #[inline]
    fn get(&self, c: usize) -> i64 {
        let v = match self.key {
            TopKey::Aggregate(i) => self.ints[c * self.width + i],
            TopKey::NeighbourId => self.cells[c].1 as i64,
        };
        v ^ self.flip
    }
}

/// The dense slots of a count's one neighbour set, when `in_set` says its cells must be in it.
fn in_set_slots(sets: &[(Option<plexus_storage::NodeId>, NodeMap)], in_set: bool) -> Option<&[u32]> {
    match sets.first() {
        Some((_, NodeMap::Dense { slots, .. })) if in_set => Some(slots),
        _ => None,
    }
}

/// [`top_by_insertion`] for up to two keys that compare as integers (`second` gives 0 without a second key):
/// the first `keep` (at least one) of `n` cells, ties in cell order.
fn top_two(n: usize, keep: usize, first: impl Fn(usize) -> i64, second: impl Fn(usize) -> i64) -> Vec<usize> {
    let mut top = TopTwo::new(keep);
    for c in 0..n {
        top.offer(pack(first(c), second(c)), c);
    }
    top.best.into_iter().map(|(_, c)| c).collect()
}

/// The first `keep` (at least one) of the cells offered, by two integer keys packed into one `i128`
/// ([`pack`]), ties in the order offered. Once `keep` are kept a cell is compared once, with the worst kept key
/// (with small counts many cells tie on the first key: comparing that first left them on a branch that went
/// either way, 10 % of C2's time on its 2,000-item row), and a cell enters by moving the kept ones that
/// sort after it up one place, from the end: for the few kept (ten, usually) that is cheaper than a binary
/// search and a call to move memory (5 % more recommendations per second, C2's 2,000 items, 10 likes, 1,000
/// people), and cheaper than swapping it down (a swap per place writes twice).
pub(super) struct TopTwo {
    keep: usize,
    /// The kept cells in sort order, with their packed keys.
    best: Vec<(i128, usize)>,
    /// The worst kept key once `keep` are kept (`i128::MAX` before).
    floor: i128,
}

/// Two keys packed into one `i128` that compares as the pair does: the second key's sign bit flipped makes
/// its unsigned order its signed one, below the first key's bits.
#[inline]
pub(super) fn pack(first: i64, second: i64) -> i128 {
    (i128::from(first) << 64) | i128::from((second as u64) ^ (1 << 63))
}

impl TopTwo {
    pub(super) fn new(keep: usize) -> TopTwo {
        debug_assert!(keep > 0, "a top of nothing keeps nothing");
        TopTwo { keep, best: Vec::with_capacity(keep + 1), floor: i128::MAX }
    }

    /// The kept cells in sort order, with their packed keys.
    #[cfg(test)]
    pub(super) fn into_best(self) -> Vec<(i128, usize)> {
        self.best
    }

    /// Offers cell `c` by its packed key.
    #[inline]
    pub(super) fn offer(&mut self, key: i128, c: usize) {
        // A later cell tied with the worst kept sorts after it. (Any key may be `i128::MAX`: the top must be full
        // before the floor turns one away.)
        if self.best.len() == self.keep && key >= self.floor {
            return;
        }
        self.enter(key, c);
    }

    /// The packed key ([`pack`]) a cell must sort below to enter once `keep` are kept; `i128::MAX` before,
    /// which no key of a counter's entry reaches (its second half would be an id of 2^63 or more).
    pub(super) fn floor(&self) -> i128 {
        self.floor
    }

    /// [`Self::offer`] of a key the caller has found below [`Self::floor`], holding the floor in a register
    /// between offers. Returns the new floor.
    #[inline]
    pub(super) fn offer_below_floor(&mut self, key: i128, c: usize) -> i128 {
        debug_assert!(key < self.floor, "checked by the caller");
        self.enter(key, c);
        self.floor
    }

    /// Puts a cell that sorts before the worst kept one (or fills the top) in its place. Few cells get here,
    /// but kept in the caller's loop it saves the call's spills on each: 157-158 K -> 161-164 K
    /// recommendations/s (C2's 2,000 items, 10 likes, 1,000 people, alternated).
    #[inline]
    fn enter(&mut self, key: i128, c: usize) {
        if self.best.len() == self.keep {
            self.best.pop();
        }
        // After every kept cell that sorts before it or ties with it.
        self.best.push((key, c));
        let best = &mut self.best[..];
        let mut at = best.len() - 1;
        while at > 0 && best[at - 1].0 > key {
            best[at] = best[at - 1];
            at -= 1;
        }
        best[at] = (key, c);
        if self.best.len() == self.keep {
            self.floor = self.best[self.keep - 1].0;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// Small integers, so that keys tie often, and the two ends of the range.
    fn extreme(small: i64) -> impl Strategy<Value = i64> {
        prop_oneof![Just(i64::MIN), Just(i64::MAX), -small..small]
    }

    proptest! {
        /// The cells `top_two` keeps are the first `keep` of a stable sort on both keys.
        #[test]
        fn top_two_keeps_the_first_of_a_stable_sort(
            cells in prop::collection::vec((extreme(3), extreme(4)), 1..60),
            keep in 1usize..20,
        ) {
            let keep = keep.min(cells.len());
            let mut sorted: Vec<usize> = (0..cells.len()).collect();
            sorted.sort_by_key(|&c| cells[c]);
            sorted.truncate(keep);
            prop_assert_eq!(super::top_two(cells.len(), keep, |c| cells[c].0, |c| cells[c].1), sorted);
        }
    }
}
