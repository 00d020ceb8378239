//! The common case of a fused count's row-by-row path as a plain loop over a run of neighbour ids: integer
//! counts or sums into the first group's dense cells, with the row's checks compiled in.

use plexus_storage::IdSlice;

use super::{fits, Cells, NeighbourCounts};
use crate::error::Result;
use crate::exec::nodemap::NodeMap;

impl NeighbourCounts<'_> {
    /// Whether the current row can go through [`Self::run_dense`].
    pub(super) fn dense_ready(&self) -> bool {
        self.row.ready
            && self.row.group == 0
            && self.row.all_ints
            && self.row.excluded.is_some()
            && self.row.bound_rels.is_some()
            && self.shape.rel_filters.is_empty()
            && self.row.adjacent_ready
            && match self.adjacent.as_slice() {
                [] => true,
                [(_, set)] => matches!(set, NodeMap::Dense { .. }),
                _ => false,
            }
            && matches!(self.cells, Cells::Ints(_))
            && matches!(self.first_cells, NodeMap::Dense { .. })
            && (self.shape.memo_filters.is_empty() || matches!(self.memo, NodeMap::Dense { .. }))
    }

    /// The common case as a plain loop from `from`: returns the index of the first relationship it cannot
    /// decide (a neighbour not judged yet, or beyond the arrays), or the run's length. The loop is compiled
    /// once per combination of the checks a row needs, so a row pays only for its own.
    #[inline(never)]
    pub(super) fn run_dense<T: Copy + Into<u64>>(&mut self, nbrs: &[T], rels: IdSlice, from: usize) -> Result<usize> {
        let (Cells::Ints(ints), NodeMap::Dense { slots: cell_slots, set: cell_set }) =
            (&mut self.cells, &mut self.first_cells)
        else {
            unreachable!("checked by dense_ready")
        };
        // At most one neighbour set (checked by `dense_ready`), complete: absent means not adjacent.
        let adjacency: Option<(&[u32], bool)> = match (self.adjacent.first(), self.shape.adjacent.first()) {
            (Some((_, NodeMap::Dense { slots, .. })), Some(spec)) => Some((slots, spec.negated)),
            _ => None,
        };
        let memo: Option<&[u32]> = match &self.memo {
            NodeMap::Dense { slots, .. } if !self.shape.memo_filters.is_empty() => Some(slots),
            _ => None,
        };
        let (Some(bound_rels), Some(excluded)) = (self.row.bound_rels, self.row.excluded) else {
            unreachable!("checked by dense_ready")
        };
        DenseRun {
            nbrs,
            rels,
            bound_rels,
            excluded,
            adjacency,
            memo,
            addends: &self.row.int_addends,
            by_neighbour: self.shape.neighbour_key.is_some(),
            cell_slots,
            cell_set,
            cell_keys: &mut self.cell_keys,
            ints,
        }
        .fold_from(from)
    }
}

/// What the loop over a run of neighbour ids reads and writes, borrowed apart so that it can be specialised:
/// for [`NeighbourCounts::run_dense`] (one input row) and for a batch walked straight into the cells
/// (`direct`).
pub(super) struct DenseRun<'a, T> {
    pub nbrs: &'a [T],
    pub rels: IdSlice<'a>,
    /// Relationship ids the relationship must differ from (padded with `u64::MAX`).
    pub bound_rels: [u64; 2],
    /// Node ids the neighbour must differ from.
    pub excluded: [u64; 2],
    /// The one neighbour set a filter asks about, if any (complete: absent means not adjacent), and whether
    /// the filter wants the neighbour absent from it.
    pub adjacency: Option<(&'a [u32], bool)>,
    /// Remembered verdicts per neighbour, plus one (0: not judged yet).
    pub memo: Option<&'a [u32]>,
    pub addends: &'a [i64],
    pub by_neighbour: bool,
    pub cell_slots: &'a mut Vec<u32>,
    pub cell_set: &'a mut Vec<u64>,
    pub cell_keys: &'a mut Vec<(u32, u64)>,
    pub ints: &'a mut Vec<i64>,
}

impl<T: Copy + Into<u64>> DenseRun<'_, T> {
    /// Folds the run from `from`: returns the index of the first relationship it cannot decide (a neighbour
    /// not judged yet, or beyond the arrays), or the run's length. Dispatches to the loop compiled for the
    /// checks this run needs.
    pub fn fold_from(&mut self, from: usize) -> Result<usize> {
        let distinct = self.bound_rels[0] != u64::MAX;
        let one = self.addends.len() == 1;
        match (distinct, self.adjacency.is_some(), one) {
            (false, false, true) => self.fold::<false, false, true>(from),
            (false, true, true) => self.fold::<false, true, true>(from),
            (true, false, true) => self.fold::<true, false, true>(from),
            (true, true, true) => self.fold::<true, true, true>(from),
            (false, false, false) => self.fold::<false, false, false>(from),
            (false, true, false) => self.fold::<false, true, false>(from),
            (true, false, false) => self.fold::<true, false, false>(from),
            (true, true, false) => self.fold::<true, true, false>(from),
        }
    }

    /// The loop of [`Self::fold_from`]; `DISTINCT`: relationships are checked against `bound_rels`,
    /// `ADJACENT`: the neighbour set is consulted, `ONE`: a single aggregate.
    #[inline(always)]
    fn fold<const DISTINCT: bool, const ADJACENT: bool, const ONE: bool>(&mut self, from: usize) -> Result<usize> {
        let width = self.addends.len();
        let (set, negated) = self.adjacency.unwrap_or((&[], false));
        for i in from..self.nbrs.len() {
            let nbr: u64 = self.nbrs[i].into();
            if DISTINCT {
                let rel = self.rels.get(i);
                if rel == self.bound_rels[0] || rel == self.bound_rels[1] {
                    continue;
                }
            }
            if nbr == self.excluded[0] || nbr == self.excluded[1] {
                continue;
            }
            // Whether the neighbour passes the adjacency filter; a failing neighbour that already has a cell
            // adds zero to it rather than branching on a verdict that is often a coin toss.
            let passes = !ADJACENT || (set.get(nbr as usize).is_some_and(|&v| v != 0) != negated);
            if let Some(memo) = self.memo {
                // Stored verdict plus one: 2 passes, 1 fails, 0 not judged yet.
                match memo.get(nbr as usize) {
                    Some(2) => {}
                    Some(1) => continue,
                    _ => return Ok(i),
                }
            }
            let key = if self.by_neighbour { nbr } else { 0 };
            let Some(&slot) = self.cell_slots.get(key as usize) else { return Ok(i) };
            if ONE {
                // Whether the neighbour has a cell is as unpredictable as whether it passes (a neighbour that
                // fails never gets one), so neither is branched on: only creating a cell is, which is rare. A
                // neighbour without a cell that fails adds zero to cell 0 instead.
                let slot = if (slot == 0) & passes { self.create(key, width) } else { slot };
                if self.ints.is_empty() {
                    continue;
                }
                let cell = (slot as usize).saturating_sub(1);
                let a = self.addends[0] & (passes as i64).wrapping_neg();
                // A sum past the integers is left to the row-by-row path, which goes on in floats.
                let Some(sum) = self.ints[cell].checked_add(a) else { return Ok(i) };
                self.ints[cell] = sum;
                continue;
            }
            let cell = match slot {
                0 if !passes => continue,
                0 => self.create(key, width),
                c => c,
            } as usize
                - 1;
            if passes {
                let cells = &mut self.ints[cell * width..cell * width + width];
                if !fits(cells, self.addends) {
                    return Ok(i);
                }
                for (acc, &a) in cells.iter_mut().zip(self.addends) {
                    *acc += a;
                }
            }
        }
        Ok(self.nbrs.len())
    }

    /// A new cell of the first group for `key`; returns its slot value (index plus one).
    #[cold]
    fn create(&mut self, key: u64, width: usize) -> u32 {
        let c = self.cell_keys.len() as u32;
        self.cell_slots[key as usize] = c + 1;
        self.cell_set.push(key);
        self.cell_keys.push((0, key));
        if width == 1 {
            self.ints.push(0);
        } else {
            self.ints.resize(self.ints.len() + width, 0);
        }
        c + 1
    }
}
