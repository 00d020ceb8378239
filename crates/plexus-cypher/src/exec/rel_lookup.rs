//! The relationships a relationship property index finds (`MATCH (a)-[r:T]->(b) WHERE r.p = $x`, or a range on
//! `r.p`), bound with their two nodes. The planner starts a pattern here only when the index existed as it
//! planned (and plans again when that changes); should the index be gone when the operator runs (dropped
//! earlier in the same transaction), it scans the type's relationships instead. Either way it yields
//! candidates: the pattern's predicate on `r.p` stays as a filter above, which also settles what the index
//! cannot tell apart (zoned times of one instant, bounds it widens).

use std::ops::{Bound, ControlFlow};

use plexus_storage::{Direction, GraphState, NodeId, PropKeyId, RelId, TypeId, Value as StoredValue};

use super::ctx::Ctx;
use super::{clone_row, Batch, Row, RowExpander};
use crate::error::Result;
use crate::expr::CExpr;
use crate::plan::RelLookup;
use crate::token::Token;
use crate::value::Value;

pub(crate) struct RelIndexSeek<'p> {
    pub rel: usize,
    /// The slots of the pattern's node before and after the relationship, as written.
    pub left: usize,
    pub right: usize,
    /// The relationship's direction as written, from `left` to `right`.
    pub dir: Direction,
    pub ty: &'p Token,
    pub key: &'p Token,
    pub lookup: &'p RelLookup,
}

/// A bound's value in storage form, inclusive: the index is asked for a superset, the filter above decides.
fn widened(b: Option<&(CExpr, bool)>, row: &Row, ctx: &Ctx) -> Result<Option<Option<StoredValue>>> {
    let Some((e, _)) = b else { return Ok(Some(None)) };
    // A bound that is null or cannot be stored makes the comparison never true.
    Ok(e.eval(row, ctx)?.to_lookup().ok().map(Some))
}

impl RelIndexSeek<'_> {
    /// The candidate relationships for `row`.
    fn candidates(&self, row: &Row, ctx: &Ctx) -> Result<Vec<RelId>> {
        let (Some(t), Some(k)) = (ctx.type_token(self.ty), ctx.prop_token(self.key)) else { return Ok(Vec::new()) };
        let g = ctx.g();
        match self.lookup {
            RelLookup::Equal(e) => {
                let Ok(wanted) = e.eval(row, ctx)?.to_lookup() else { return Ok(Vec::new()) };
                if g.has_rel_index(t, k) {
                    return Ok(g.rel_index_seek(t, k, &wanted));
                }
                Ok(scan(g, t, k))
            }
            RelLookup::AnyOf(list) => match list.eval(row, ctx)? {
                Value::Null => Ok(Vec::new()),
                Value::List(items) if g.has_rel_index(t, k) => {
                    let mut found = Vec::new();
                    for item in items.iter() {
                        if let Ok(wanted) = item.to_lookup() {
                            found.extend(g.rel_index_seek(t, k, &wanted));
                        }
                    }
                    // Two elements may find one relationship (`1` and `1.0`): it is matched once.
                    found.sort_unstable();
                    found.dedup();
                    Ok(found)
                }
                // Not a list: the filter above raises the error it raises without the index.
                _ => Ok(scan(g, t, k)),
            },
            RelLookup::Range(lower, upper) => {
                let (Some(lo), Some(hi)) = (widened(lower.as_ref(), row, ctx)?, widened(upper.as_ref(), row, ctx)?)
                else {
                    return Ok(Vec::new());
                };
                if g.has_rel_index(t, k) {
                    return Ok(g.rel_index_range(t, k, included(&lo), included(&hi)));
                }
                Ok(scan(g, t, k))
            }
        }
    }
}

fn included(b: &Option<StoredValue>) -> Bound<&StoredValue> {
    b.as_ref().map_or(Bound::Unbounded, Bound::Included)
}

/// Every relationship of type `t` holding `k`: what the index would have held.
fn scan(g: &GraphState, t: TypeId, k: PropKeyId) -> Vec<RelId> {
    let mut found = Vec::new();
    if g.type_count(t) > 0 {
        let _ = g.visit_all_rels::<()>(|r| {
            if r.ty == t && g.rel_prop(r.id, k).is_some() {
                found.push(r.id);
            }
            ControlFlow::Continue(())
        });
    }
    found
}

impl RowExpander for RelIndexSeek<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        let rels = self.candidates(row, ctx)?;
        let g = ctx.g();
        for r in rels {
            let Some(rec) = g.rel(r) else { continue };
            // `(a)-[r:T]->(a)`: one variable at both ends wants a self-loop.
            if self.left == self.right && rec.src != rec.dst {
                continue;
            }
            let mut bind = |left: NodeId, right: NodeId| {
                let mut found = clone_row(row);
                found[self.rel] = Value::Rel(r);
                found[self.left] = Value::Node(left);
                found[self.right] = Value::Node(right);
                out.push(found);
            };
            // An undirected pattern matches a relationship each way round, a self-loop once.
            match self.dir {
                Direction::Out => bind(rec.src, rec.dst),
                Direction::In => bind(rec.dst, rec.src),
                Direction::Both => {
                    bind(rec.src, rec.dst);
                    if rec.src != rec.dst {
                        bind(rec.dst, rec.src);
                    }
                }
            }
        }
        Ok(false)
    }
}
