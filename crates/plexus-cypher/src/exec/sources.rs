//! Operators that make rows without an index or an expand: node scans, counts the store keeps, OPTIONAL MATCH's
//! inner plan, UNWIND (a range without building its list) and UNION.

use std::collections::HashSet;

use plexus_storage::NodeId;

use super::ctx::Ctx;
use super::{clone_row, open, run_plan, Batch, Op, Operator, Row, RowExpander, BATCH};
use crate::compare::Equivalent;
use crate::error::Result;
use crate::plan::PlanNode;
use crate::value::Value;

/// Each row with a count the graph keeps (see [`PlanNode::CountFromStore`]).
pub(super) struct CountFromStore<'p> {
    pub(super) slot: usize,
    pub(super) counted: &'p crate::plan::StoreCount,
}

impl RowExpander for CountFromStore<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        use crate::plan::StoreCount;
        let g = ctx.g();
        let count = match self.counted {
            StoreCount::Nodes(None) => g.node_count(),
            StoreCount::Nodes(Some(label)) => ctx.label_token(label).map_or(0, |l| ctx.g().label_count(l)),
            StoreCount::Rels(types) if types.is_empty() => g.rel_count(),
            StoreCount::Rels(types) => types.iter().filter_map(|t| ctx.type_token(t)).map(|t| g.type_count(t)).sum(),
        };
        let mut r = std::mem::take(row);
        r[self.slot] = Value::Int(count as i64);
        out.push(r);
        Ok(false)
    }
}

/// Node scan (all nodes or one label). The candidates are read once: they do not depend on the row.
pub(crate) struct Scan {
    pub slot: usize,
    pub label: Option<crate::token::Token>,
    pub candidates: Option<(Vec<NodeId>, usize)>,
}

impl RowExpander for Scan {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        let (candidates, pos) = self.candidates.get_or_insert_with(|| {
            let g = ctx.g();
            let ids = match &self.label {
                None => {
                    let mut ids = Vec::with_capacity(g.node_count() as usize);
                    let _ = g.visit_nodes::<()>(|n| {
                        ids.push(n);
                        std::ops::ControlFlow::Continue(())
                    });
                    ids
                }
                Some(l) => ctx.label_token(l).map(|l| g.nodes_with_label(l)).unwrap_or_default(),
            };
            (ids, 0)
        });
        while *pos < candidates.len() {
            let mut r = clone_row(row);
            r[self.slot] = Value::Node(candidates[*pos]);
            *pos += 1;
            out.push(r);
            if out.len() >= BATCH {
                if *pos == candidates.len() {
                    *pos = 0;
                    return Ok(false);
                }
                return Ok(true);
            }
        }
        *pos = 0;
        Ok(false)
    }
}

pub(super) struct Optional<'p> {
    pub(super) inner: &'p PlanNode,
}

impl RowExpander for Optional<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        let rows = run_plan(self.inner, Some(row.clone()), ctx, None)?;
        if rows.is_empty() {
            out.push(row.clone());
        } else {
            out.extend(rows);
        }
        Ok(false)
    }
}

pub(super) struct Unwind<'p> {
    pub(super) list: &'p crate::expr::CExpr,
    pub(super) slot: usize,
    /// The list being unwound for the current row and how far it got: a long list leaves in batches.
    pub(super) pending: Option<Unwinding>,
}

/// What an [`Unwind`] has left of the current row's list.
pub(super) enum Unwinding {
    List(std::sync::Arc<Vec<Value>>, usize),
    /// `UNWIND range(...)`: the integers are made as they are needed, so unwinding a range of any length
    /// holds one batch of them at a time (`range()` as a value is a list, bounded by the memory limit).
    Range {
        start: i64,
        step: i64,
        count: u64,
        done: u64,
    },
}

impl Unwind<'_> {
    /// The current row's list, as a range to count through when it is a call of `range()`.
    fn start(&self, row: &Row, ctx: &mut Ctx) -> Result<Option<Unwinding>> {
        if let crate::expr::CExpr::Scalar(name, args) = self.list {
            if &**name == "range" && (2..=3).contains(&args.len()) {
                let args = args.iter().map(|e| e.eval(row, ctx)).collect::<Result<Vec<_>>>()?;
                let (start, end, step) = crate::functions::list::range_args(&args)?;
                let count = crate::functions::list::range_len(start, end, step)?;
                return Ok(Some(Unwinding::Range { start, step, count, done: 0 }));
            }
        }
        Ok(match self.list.eval(row, ctx)? {
            Value::Null => None,
            Value::List(items) => Some(Unwinding::List(items, 0)),
            other => Some(Unwinding::List(std::sync::Arc::new(vec![other]), 0)),
        })
    }
}

impl RowExpander for Unwind<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        let pending = match self.pending.take() {
            Some(p) => p,
            None => match self.start(row, ctx)? {
                Some(p) => p,
                None => return Ok(false),
            },
        };
        let room = BATCH.saturating_sub(out.len()).max(1);
        match pending {
            Unwinding::List(items, start) => {
                let end = items.len().min(start + room);
                for item in &items[start..end] {
                    let mut r = clone_row(row);
                    r[self.slot] = item.clone();
                    out.push(r);
                }
                if end < items.len() {
                    self.pending = Some(Unwinding::List(items, end));
                    return Ok(true);
                }
            }
            Unwinding::Range { start, step, count, done } => {
                let end = count.min(done.saturating_add(room as u64));
                for k in done..end {
                    let mut r = clone_row(row);
                    // In range: every value lies between start and end, both i64.
                    r[self.slot] = Value::Int((start as i128 + k as i128 * step as i128) as i64);
                    out.push(r);
                }
                if end < count {
                    self.pending = Some(Unwinding::Range { start, step, count, done: end });
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

pub(super) struct Union<'p> {
    pub(super) parts: &'p [PlanNode],
    pub(super) arg: Option<Row>,
    pub(super) current: Option<Op<'p>>,
    pub(super) index: usize,
    pub(super) seen: Option<HashSet<Vec<Equivalent>>>,
}

impl Operator for Union<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        loop {
            if self.current.is_none() {
                if self.index == self.parts.len() {
                    return Ok(None);
                }
                self.current = Some(open(&self.parts[self.index], self.arg.clone()));
                self.index += 1;
            }
            match self.current.as_mut().unwrap().next(ctx)? {
                None => self.current = None,
                Some(batch) => {
                    let batch = match &mut self.seen {
                        None => batch,
                        Some(seen) => batch
                            .into_iter()
                            .filter(|r| seen.insert(r.iter().map(|v| Equivalent(v.clone())).collect()))
                            .collect(),
                    };
                    if !batch.is_empty() {
                        return Ok(Some(batch));
                    }
                }
            }
        }
    }
}
