//! A batch counted straight into the cells, one relationship at a time, for a count that has cells already
//! and whose last batch reached mostly new neighbours (a scan over a large graph): there a counter would
//! only add a pass over them (see [`super::batch`]). Only for the filters on the neighbour that cannot fail
//! (nodes it must differ from, one neighbour set), so the walk can do all it does in place: each addition is
//! checked for overflow in the order the row-by-row path makes it, and fails where that path fails.

use std::ops::ControlFlow;

use plexus_storage::{IdSlice, NodeId, TypeFilter};

use super::batch::Start;
use super::{add_int, Cells, NeighbourCounts};
use crate::error::{CypherError, Result};
use crate::exec::ctx::Ctx;
use crate::exec::nodemap::NodeMap;

impl NeighbourCounts<'_> {
    /// Counts `starts` into the cells of the first group; `Ok(false)`, with nothing done, when the count's
    /// state does not allow it.
    pub(super) fn walk_direct(&mut self, starts: &[Start], filter: TypeFilter, ctx: &Ctx) -> Result<bool> {
        if !self.mostly_new
            || self.cell_keys.is_empty()
            || !self.appends_first_cells()
            || !matches!(self.cells, Cells::Ints(_))
        {
            return Ok(false);
        }
        let Some((excluded, negated)) = self.quick_verdict() else { return Ok(false) };
        let dense_set = matches!(self.adjacent.first(), Some((_, NodeMap::Dense { .. })));
        if negated.is_some() && !dense_set {
            return Ok(false);
        }
        self.index_cells();
        let g = ctx.g();
        let bound = g.node_id_bound() as usize;
        let (NodeMap::Dense { slots, set: listed }, Cells::Ints(ints)) = (&mut self.first_cells, &mut self.cells)
        else {
            return Ok(false);
        };
        if slots.len() < bound {
            slots.resize(bound, 0);
        }
        let adjacency: Option<(&[u32], bool)> = match (negated, self.adjacent.first()) {
            (Some(negated), Some((_, NodeMap::Dense { slots, .. }))) => Some((slots, negated)),
            _ => None,
        };
        let mut cells = DirectCells { slots, listed, keys: &mut self.cell_keys, ints, excluded, adjacency };
        let mut failed: Option<CypherError> = None;
        let mut reach: i64 = 0;
        for (k, start) in starts.iter().enumerate() {
            if k % crate::exec::BATCH == crate::exec::BATCH - 1 {
                ctx.check_interrupt()?;
            }
            let a = start.addend;
            let mut add = |nbrs: IdSlice, rels: Option<IdSlice>| {
                reach = reach.saturating_add(a.saturating_mul(nbrs.len() as i64));
                let added = match (nbrs, rels) {
                    (IdSlice::Narrow(ids), None) => cells.add(ids, a),
                    (IdSlice::Wide(ids), None) => cells.add(ids, a),
                    (nbrs, Some(rels)) => cells.add_unless(nbrs, rels, start.bound, a),
                };
                match added {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        failed = Some(e);
                        ControlFlow::Break(())
                    }
                }
            };
            let node = NodeId(start.node);
            let _ = if start.bound[0] == u64::MAX {
                g.visit_neighbour_slices(node, self.hop.dir, filter, |nbrs| add(nbrs, None))
            } else {
                g.visit_rel_slices(node, self.hop.dir, filter, |nbrs, rels| add(nbrs, Some(rels)))
            };
            if let Some(e) = failed {
                return Err(e);
            }
        }
        self.reach = self.reach.saturating_add(reach);
        Ok(true)
    }
}

/// The cells of the first group and the batch's filters, borrowed apart for the walk.
struct DirectCells<'a> {
    slots: &'a mut Vec<u32>,
    listed: &'a mut Vec<u64>,
    keys: &'a mut Vec<(u32, u64)>,
    ints: &'a mut Vec<i64>,
    excluded: [u64; 2],
    adjacency: Option<(&'a [u32], bool)>,
}

impl DirectCells<'_> {
    #[inline]
    fn add<T: Copy + Into<u64>>(&mut self, ids: &[T], a: i64) -> Result<()> {
        for &id in ids {
            self.add_one(id.into(), a)?;
        }
        Ok(())
    }

    fn add_unless(&mut self, nbrs: IdSlice, rels: IdSlice, bound: [u64; 2], a: i64) -> Result<()> {
        for i in 0..nbrs.len() {
            let rel = rels.get(i);
            if rel != bound[0] && rel != bound[1] {
                self.add_one(nbrs.get(i), a)?;
            }
        }
        Ok(())
    }

    /// Adds `a` to neighbour `nbr`'s cell if it passes, creating the cell if it has none.
    #[inline]
    fn add_one(&mut self, nbr: u64, a: i64) -> Result<()> {
        if nbr == self.excluded[0] || nbr == self.excluded[1] {
            return Ok(());
        }
        let passes =
            self.adjacency.is_none_or(|(set, negated)| set.get(nbr as usize).is_some_and(|&v| v != 0) != negated);
        if nbr as usize >= self.slots.len() {
            self.slots.resize(nbr as usize + 1, 0);
        }
        let slot = &mut self.slots[nbr as usize];
        let cell = match *slot {
            0 if !passes => return Ok(()),
            0 => {
                let c = self.keys.len();
                *slot = c as u32 + 1;
                self.listed.push(nbr);
                self.keys.push((0, nbr));
                self.ints.push(0);
                c
            }
            c if passes => c as usize - 1,
            _ => return Ok(()),
        };
        add_int(&mut self.ints[cell], a)
    }
}
