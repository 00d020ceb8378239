//! The groups of a fused count that a sort under a LIMIT keeps ([`crate::plan::fuse::TopGroups`]): picked
//! from the cells by integer comparison, so that only those are lent to the sort above.

use std::cmp::Ordering;

use super::{Cells, NeighbourCounts, POOLED_CELLS_MAX};
use crate::exec::ctx::Ctx;
use crate::plan::fuse::TopKey;

/// Up to this many top groups are kept by insertion into a sorted list as the cells are scanned; more by
/// selection over all of them.
const TOP_BY_INSERTION: usize = 64;

thread_local! {
/// A reused column of packed sort keys for [`top_pairs`].
    static PAIRS: std::cell::Cell<Vec<(i64, i64)>> = const { std::cell::Cell::new(Vec::new()) };
}

impl NeighbourCounts<'_> {
    /// With [`CountShape::top`], the cells that sort into the first `skip + limit` under its keys (ties in
    /// cell order, as the stable sort above breaks them; with more sort keys than it knows, every cell tied
    /// with the last of those), in cell order; `None` to lend every cell.
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
        let (mut best, last) = if keep > TOP_BY_INSERTION {
            let mut cells: Vec<usize> = (0..n).collect();
            let (_, &mut last, _) = cells.select_nth_unstable_by(keep - 1, |&a, &b| on_keys(a, b).then(a.cmp(&b)));
            cells.truncate(keep);
            (cells, last)
        } else if let Some(best) = self.top_by_aggregate(ints, &top.keys, keep) {
            let last = best[keep - 1];
            (best, last)
        } else if let [first, rest @ ..] = top.keys.as_slice() {
            if rest.len() <= 1 {
                // Up to two keys packed as a pair of integers that compares in sort order (a descending key
                // bitwise negated, which reverses the order of every i64): one compare per cell.
                // Each key is gathered into a column in one pass over the cells, then compared.
                let best = PAIRS.with(|pairs| {
                    let mut pairs = pairs.take();
                    pairs.clear();
                    pairs.resize(n, (0, 0));
                    for (column, key) in [Some(first), rest.first()].into_iter().enumerate() {
                        let Some(&(k, desc)) = key else { continue };
                        let flip = if desc { -1 } else { 0 };
                        let mut put = |c: usize, v: i64| {
                            // `!v` (bitwise) when descending: it reverses the order of every i64.
                            let v = v ^ flip;
                            if column == 0 {
                                pairs[c].0 = v
                            } else {
                                pairs[c].1 = v
                            }
                        };
                        match k {
                            TopKey::Aggregate(i) => (0..n).for_each(|c| put(c, ints[c * width + i])),
                            TopKey::NeighbourId => (0..n).for_each(|c| put(c, self.cell_keys[c].1 as i64)),
                        }
                    }
                    let best = top_pairs(&pairs, keep);
                    if pairs.capacity() <= POOLED_CELLS_MAX {
                        PAIRS.set(pairs);
                    }
                    best
                });
                let last = best[keep - 1];
                (best, last)
            } else {
                top_by_insertion(n, keep, *first, key, on_keys)
            }
        } else {
            unreachable!("a sort has at least one key")
        };
        let cells = if top.exact {
            best.sort_unstable();
            best
        } else {
            // Every group that sorts before the keep-th on the keys known here, and every one tied with it.
            (0..n).filter(|&c| on_keys(c, last) != Ordering::Greater).collect()
        };
        Some(cells)
    }

    /// [`top_pairs`] for the common sort on an aggregate, then perhaps the neighbour's id (`ORDER BY count
    /// DESC, id(n)`), reading both keys straight from the cells; `None` for other sorts.
    fn top_by_aggregate(&self, ints: &[i64], keys: &[(TopKey, bool)], keep: usize) -> Option<Vec<usize>> {
        let (i, first_desc, second) = match keys {
            [(TopKey::Aggregate(i), desc)] => (*i, *desc, None),
            [(TopKey::Aggregate(i), desc), (TopKey::NeighbourId, second)] => (*i, *desc, Some(*second)),
            _ => return None,
        };
        // A descending key bitwise negated reverses the order of every i64.
        let (flip0, flip1) = (-i64::from(first_desc), -i64::from(second == Some(true)));
        let width = self.aggs.len();
        let mut best: Vec<((i64, i64), usize)> = Vec::with_capacity(keep + 1);
        let mut floor = (i64::MAX, i64::MAX);
        for (c, &(_, nbr)) in self.cell_keys.iter().enumerate() {
            let a = ints[c * width + i] ^ flip0;
            // Most cells fail against the worst kept one at the first key.
            if a > floor.0 {
                continue;
            }
            let key = (a, if second.is_some() { nbr as i64 ^ flip1 } else { 0 });
            // A later cell tied with the worst kept sorts after it.
            if best.len() == keep {
                if key >= floor {
                    continue;
                }
                best.pop();
            }
            // Inserted after every kept cell that sorts before it or ties with it.
            best.push((key, c));
            let mut j = best.len() - 1;
            while j > 0 && best[j - 1].0 > key {
                best.swap(j - 1, j);
                j -= 1;
            }
            if best.len() == keep {
                floor = best[keep - 1].0;
            }
        }
        Some(best.into_iter().map(|(_, c)| c).collect())
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

/// [`top_by_insertion`] for keys packed into pairs that compare in sort order, one per cell: the first `keep`
/// (at least one) cells, ties in cell order.
fn top_pairs(pairs: &[(i64, i64)], keep: usize) -> Vec<usize> {
    let mut best: Vec<((i64, i64), usize)> = Vec::with_capacity(keep + 1);
    let mut floor = (i64::MAX, i64::MAX);
    for (c, &k) in pairs.iter().enumerate() {
        // A later cell tied with the worst kept sorts after it.
        if best.len() == keep && k >= floor {
            continue;
        }
        let at = best.partition_point(|&(b, _)| b <= k);
        best.insert(at, (k, c));
        best.truncate(keep);
        if best.len() == keep {
            floor = best[keep - 1].0;
        }
    }
    best.into_iter().map(|(_, c)| c).collect()
}
