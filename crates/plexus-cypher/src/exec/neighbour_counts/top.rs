//! The groups of a fused count that a sort under a LIMIT keeps ([`crate::plan::fuse::TopGroups`]): picked
//! from the cells by integer comparison, so that only those are lent to the sort above.

use std::cmp::Ordering;

use super::{Cells, NeighbourCounts};
use crate::exec::ctx::Ctx;
use crate::plan::fuse::TopKey;

/// Up to this many top groups are kept by insertion into a sorted list as the cells are scanned; more by
/// selection over all of them.
const TOP_BY_INSERTION: usize = 64;

impl NeighbourCounts<'_> {
    /// With [`CountShape::top`], the cells that sort into the first `skip + limit` under its keys (ties in
    /// cell order, as the stable sort above breaks them), in that order: the sort above then finds its input
    /// sorted. With more sort keys than it knows, every cell tied with the last of those, in cell order. `None`
    /// to lend every cell.
    pub(super) fn top_cells(&self, ctx: &Ctx) -> Option<Vec<usize>> {
        let top = self.shape.top.as_ref()?;
        let Cells::Ints(ints) = &self.cells else { return None };
        // The sort evaluates its bound before it reads a row, so an invalid one has failed already.
        let skip = match &top.skip {
            Some(s) => crate::exec::count_value(s, ctx, "SKIP").ok()?,
            None => 0,
        };
        let keep = skip.saturating_add(crate::exec::count_value(&top.limit, ctx, "LIMIT").ok()?);
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

/// [`top_by_insertion`] for up to two keys that compare as integers (`second` gives 0 without a second key):
/// the first `keep` (at least one) of `n` cells, ties in cell order. A cell is compared on its second key only
/// when its first ties the worst kept one, which few do. Both keys are packed into one `i128` that compares as
/// the pair does, and a cell enters by a binary search and one move of the kept ones after it: with small
/// counts many cells tie on the first key, and a swap per place they move down cost twice as much.
fn top_two(n: usize, keep: usize, first: impl Fn(usize) -> i64, second: impl Fn(usize) -> i64) -> Vec<usize> {
    // The second key's sign bit flipped makes its unsigned order its signed one, below the first key's bits.
    let pack = |a: i64, b: i64| (i128::from(a) << 64) | i128::from((b as u64) ^ (1 << 63));
    let mut best: Vec<(i128, usize)> = Vec::with_capacity(keep + 1);
    // The worst kept key and its first half, once `keep` are kept.
    let (mut floor, mut floor_first) = (i128::MAX, i64::MAX);
    for c in 0..n {
        let a = first(c);
        if a > floor_first {
            continue;
        }
        let key = pack(a, second(c));
        // A later cell tied with the worst kept sorts after it.
        if best.len() == keep {
            if key >= floor {
                continue;
            }
            best.pop();
        }
        // After every kept cell that sorts before it or ties with it.
        let at = best.partition_point(|&(k, _)| k <= key);
        best.insert(at, (key, c));
        if best.len() == keep {
            floor = best[keep - 1].0;
            floor_first = (floor >> 64) as i64;
        }
    }
    best.into_iter().map(|(_, c)| c).collect()
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
