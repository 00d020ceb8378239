//! A batch counted straight into the cells, one relationship at a time, for a count that has cells already
//! and whose last batch reached mostly new neighbours (a scan over a large graph): there a counter would
//! only add a pass over them (see [`super::batch`]). Only for the filters on the neighbour that cannot fail
//! (nodes it must differ from, one neighbour set), so the walk can do all it does in place; and only when no
//! cell can pass the integers, where the row-by-row path goes on in floats (a sum half added could not).

use std::ops::ControlFlow;

use plexus_storage::{IdSlice, NodeId, TypeFilter};

use super::batch::Start;
use super::dense::DenseRun;
use super::{Cells, NeighbourCounts};
use crate::error::{CypherError, Result};
use crate::exec::ctx::Ctx;
use crate::exec::nodemap::NodeMap;

impl NeighbourCounts<'_> {
    /// Counts `starts` into the cells of the first group through the row-by-row path's loop (`dense`), with
    /// each start's addend and bound relationships; `Ok(false)`, with nothing done, when the count's state does
    /// not allow it.
    pub(super) fn walk_direct(&mut self, starts: &[Start], filter: TypeFilter, ctx: &Ctx) -> Result<bool> {
        if !self.mostly_new
            || self.cell_keys.is_empty()
            || !self.appends_first_cells()
            || !matches!(self.cells, Cells::Ints(_))
        {
            return Ok(false);
        }
        let g = ctx.g();
        // At most every relationship (each seen from both ends) for every start, times the largest addend.
        let largest = starts.iter().map(|s| s.addend.unsigned_abs()).max().unwrap_or(0) as u128;
        let bound = largest * starts.len() as u128 * 2 * u128::from(g.rel_count());
        if bound + self.reach.unsigned_abs() as u128 >= i64::MAX as u128 {
            return Ok(false);
        }
        let Some((excluded, negated)) = self.quick_verdict() else { return Ok(false) };
        self.index_cells();
        let adjacency: Option<(&[u32], bool)> = match (negated, self.adjacent.first()) {
            (None, _) => None,
            (Some(negated), Some((_, NodeMap::Dense { slots, .. }))) => Some((slots, negated)),
            (Some(_), _) => return Ok(false),
        };
        let (NodeMap::Dense { slots: cell_slots, set: cell_set }, Cells::Ints(ints)) =
            (&mut self.first_cells, &mut self.cells)
        else {
            return Ok(false);
        };
        // Every neighbour has a slot, so the loop decides every relationship.
        let bound = g.node_id_bound() as usize;
        if cell_slots.len() < bound {
            cell_slots.resize(bound, 0);
        }
        let cell_keys = &mut self.cell_keys;
        let mut failed: Option<CypherError> = None;
        let mut reach: i64 = 0;
        for (k, start) in starts.iter().enumerate() {
            if k % crate::exec::BATCH == crate::exec::BATCH - 1 {
                ctx.check_interrupt()?;
            }
            let addends = std::slice::from_ref(&start.addend);
            let _ = g.visit_rel_slices(NodeId(start.node), self.hop.dir, filter, |nbrs, rels| {
                reach = reach.saturating_add(start.addend.saturating_mul(nbrs.len() as i64));
                macro_rules! fold {
                    ($ids:expr) => {{
                        let mut run = DenseRun {
                            nbrs: $ids,
                            rels,
                            bound_rels: start.bound,
                            excluded,
                            adjacency,
                            memo: None,
                            addends,
                            by_neighbour: true,
                            cell_slots: &mut *cell_slots,
                            cell_set: &mut *cell_set,
                            cell_keys: &mut *cell_keys,
                            ints: &mut *ints,
                        };
                        run.fold_from(0)
                    }};
                }
                let folded = match nbrs {
                    IdSlice::Narrow(ids) => fold!(ids),
                    IdSlice::Wide(ids) => fold!(ids),
                };
                match folded {
                    Ok(done) => {
                        debug_assert_eq!(done, nbrs.len(), "every neighbour has a slot");
                        ControlFlow::Continue(())
                    }
                    Err(e) => {
                        failed = Some(e);
                        ControlFlow::Break(())
                    }
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
        }
        self.reach = self.reach.saturating_add(reach);
        Ok(true)
    }
}
