//! ORDER BY, SKIP and LIMIT.

use super::*;
use smallvec::SmallVec;

/// ORDER BY: a stable sort of every row, or under a LIMIT a bounded one that keeps only the first `skip + limit`.
pub(super) struct Sort<'p> {
    pub(super) input: Op<'p>,
    pub(super) keys: &'p [(crate::expr::CExpr, bool)],
    pub(super) skip: Option<&'p crate::expr::CExpr>,
    pub(super) limit: Option<&'p crate::expr::CExpr>,
    pub(super) output: Option<std::vec::IntoIter<Row>>,
}

impl<'p> Sort<'p> {
    pub(super) fn new(
        input: Op<'p>,
        keys: &'p [(crate::expr::CExpr, bool)],
        skip: Option<&'p crate::expr::CExpr>,
        limit: Option<&'p crate::expr::CExpr>,
    ) -> Self {
        Sort { input, keys, skip, limit, output: None }
    }

    /// Every input row in order, or only the first `keep`. With a bound, rows accumulate to twice the bound and
    /// are then sorted and cut back to it, and a row that does not sort before the last row kept is dropped
    /// without being stored (or taken from its lender); the sort is stable, so ties keep their input order
    /// exactly as a full sort would.
    fn sorted(&mut self, ctx: &mut Ctx, keep: Option<usize>) -> Result<Vec<Row>> {
        let keys = self.keys;
        let order = |a: &[Value], b: &[Value]| {
            for (i, (_, desc)) in keys.iter().enumerate() {
                let o = compare::order(&a[i], &b[i]);
                let o = if *desc { o.reverse() } else { o };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        };
        if let Some(k) = keep.filter(|k| (1..=KEPT_BY_INSERTION).contains(k)) {
            return self.sorted_by_insertion(ctx, k, order);
        }
        // Up to two sort keys, as nearly always, are kept beside the row without an allocation of their own.
        // Under a bound, sized for the rows it keeps (growing from empty reallocated three times for a LIMIT 10);
        // a longer input grows it as usual up to the next cut.
        let mut keyed: Vec<(SmallVec<[Value; 2]>, Row)> =
            Vec::with_capacity(keep.map_or(0, |k| k.saturating_add(1).min(BATCH)));
        let mut full = false; // `keyed` holds `keep` rows, sorted, from the last cut
        let mut key: SmallVec<[Value; 2]> = SmallVec::new();
        // Bytes held by an unbounded sort under a memory limit (a bounded one holds at most twice its bound).
        let counted = keep.is_none() && ctx.memory_limited();
        let mut held = 0usize;
        self.input.for_each_row(ctx, &mut |row, ctx| {
            read_key(keys, row, ctx, &mut key)?;
            if let Some(k) = keep {
                if k == 0 || (full && order(&key, &keyed[k - 1].0) != std::cmp::Ordering::Less) {
                    return Ok(ControlFlow::Continue(()));
                }
            }
            if counted {
                held += row_bytes(row) + row_bytes(&key);
                if keyed.len().is_multiple_of(BATCH) {
                    check_held(ctx, held, "sort")?;
                }
            }
            keyed.push((std::mem::take(&mut key), std::mem::take(row)));
            if let Some(k) = keep {
                if keyed.len() >= k.max(16).saturating_mul(2) {
                    keyed.sort_by(|(a, _), (b, _)| order(a, b));
                    keyed.truncate(k);
                    full = true;
                }
            }
            Ok(ControlFlow::Continue(()))
        })?;
        keyed.sort_by(|(a, _), (b, _)| order(a, b));
        if let Some(k) = keep {
            keyed.truncate(k);
        }
        Ok(keyed.into_iter().map(|(_, r)| r).collect())
    }
}

/// The sort keys of `row` into `key`, kept beside it without an allocation of their own for up to two.
fn read_key(keys: &[(crate::expr::CExpr, bool)], row: &Row, ctx: &Ctx, key: &mut SmallVec<[Value; 2]>) -> Result<()> {
    clear_key(key);
    for (e, _) in keys {
        key.push(e.eval(row, ctx)?);
    }
    Ok(())
}

/// Empties a sort key as [`clear_row`] empties a row: without a drop call for a value that frees nothing.
fn clear_key(key: &mut SmallVec<[Value; 2]>) {
    for value in key.iter_mut() {
        if value.frees_on_drop() {
            drop(std::mem::take(value));
        }
    }
    // SAFETY: every value left behind frees nothing on drop (`Value::frees_on_drop`): forgetting it leaks nothing.
    unsafe { key.set_len(0) };
}

/// Up to this many rows kept (`skip + limit`), a bounded sort keeps them sorted as they come, each entering by a
/// binary search; more, and it collects twice as many and sorts them each time (see [`Sort::sorted`]).
const KEPT_BY_INSERTION: usize = 64;

impl Sort<'_> {
    /// [`Sort::sorted`] for a small bound `k`: the rows kept so far stay in order, a row that does not sort before
    /// the last of them is dropped after its keys are read, and one that does enters after every kept row it
    /// does not sort before (ties keep their input order) and pushes the last one out. On input that arrives in
    /// ascending order of a descending key (the newest messages of a person, by creation), every row enters:
    /// a handful of comparisons each, where collecting and sorting twice the bound again and again cost several
    /// times as many.
    fn sorted_by_insertion(
        &mut self,
        ctx: &mut Ctx,
        k: usize,
        order: impl Fn(&[Value], &[Value]) -> std::cmp::Ordering,
    ) -> Result<Vec<Row>> {
        let keys = self.keys;
        // The kept rows stay where they entered; only their places in sort order move, one small index each, so
        // a row that enters first (the newest message under a descending date, one after another) moves no rows.
        // The row that leaves gives its place to the one entering.
        let mut kept: Vec<(SmallVec<[Value; 2]>, Row)> = Vec::with_capacity(k);
        let mut places: Vec<usize> = Vec::with_capacity(k + 1);
        let mut key: SmallVec<[Value; 2]> = SmallVec::new();
        self.input.for_each_row(ctx, &mut |row, ctx| {
            read_key(keys, row, ctx, &mut key)?;
            if places.len() == k && order(&key, &kept[places[k - 1]].0) != std::cmp::Ordering::Less {
                return Ok(ControlFlow::Continue(()));
            }
            // After every kept row it does not sort before (ties keep their input order). Input already in order
            // (a fused count lending its top groups) appends with one comparison a row; input in reverse order
            // enters first with two.
            let at = match places.last() {
                Some(&last) if order(&kept[last].0, &key) == std::cmp::Ordering::Greater => {
                    if order(&kept[places[0]].0, &key) == std::cmp::Ordering::Greater {
                        0
                    } else {
                        places.partition_point(|&p| order(&kept[p].0, &key) != std::cmp::Ordering::Greater)
                    }
                }
                _ => places.len(),
            };
            let place = if places.len() == k {
                // Copied into the leaving row's memory rather than taken: a lender that makes its rows from one
                // input row (an expansion) would copy that again for its next row, and free the leaving one.
                let place = places.pop().expect("k rows kept");
                let (old_key, old_row) = &mut kept[place];
                clear_key(old_key);
                std::mem::swap(old_key, &mut key);
                copy_row_into(old_row, row);
                place
            } else {
                kept.push((std::mem::take(&mut key), std::mem::take(row)));
                kept.len() - 1
            };
            places.insert(at, place);
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(places.iter().map(|&p| std::mem::take(&mut kept[p].1)).collect())
    }
}

impl Operator for Sort<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        if self.output.is_none() {
            let keep = match self.limit {
                Some(limit) => {
                    let skip = match self.skip {
                        Some(s) => count_value(s, ctx, "SKIP")?,
                        None => 0,
                    };
                    Some(skip.saturating_add(count_value(limit, ctx, "LIMIT")?))
                }
                None => None,
            };
            let rows = self.sorted(ctx, keep)?;
            if rows.len() <= BATCH {
                // One batch, as a bounded sort nearly always returns: handed over whole.
                self.output = Some(Vec::new().into_iter());
                return Ok(if rows.is_empty() { None } else { Some(rows) });
            }
            self.output = Some(rows.into_iter());
        }
        let out: Batch = self.output.as_mut().unwrap().take(BATCH).collect();
        Ok(if out.is_empty() { None } else { Some(out) })
    }
}

/// Evaluates a SKIP/LIMIT count: a non-negative integer that may not depend on the row.
pub(crate) fn count_value(e: &crate::expr::CExpr, ctx: &Ctx, what: &str) -> Result<usize> {
    // A literal or a parameter, as nearly always, needs no row to be evaluated against.
    let value = match e {
        crate::expr::CExpr::Const(v) => v.clone(),
        crate::expr::CExpr::Param(_) => e.eval(&[], ctx)?,
        _ => e.eval(&null_row(ctx.width), ctx)?,
    };
    let invalid = |detail: &'static str, got: String| {
        Err(CypherError::syntax(detail, format!("{what} must be a non-negative integer, got {got}"))
            .in_phase(crate::error::Phase::Runtime))
    };
    match value {
        Value::Int(i) if i >= 0 => Ok(i as usize),
        Value::Int(i) => invalid("NegativeIntegerArgument", i.to_string()),
        Value::Float(_) => invalid("InvalidArgumentType", format!("the float {}", crate::format::literal(&value))),
        other => invalid("InvalidArgumentType", other.type_name().to_string()),
    }
}

pub(super) struct Skip<'p> {
    pub(super) input: Op<'p>,
    pub(super) count: &'p crate::expr::CExpr,
    pub(super) remaining: Option<usize>,
}

impl Operator for Skip<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        if self.remaining.is_none() {
            self.remaining = Some(count_value(self.count, ctx, "SKIP")?);
        }
        while let Some(mut batch) = self.input.next(ctx)? {
            let skip = self.remaining.unwrap();
            if skip == 0 {
                return Ok(Some(batch));
            }
            let n = skip.min(batch.len());
            batch.drain(..n);
            self.remaining = Some(skip - n);
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
        }
        Ok(None)
    }
}

pub(super) struct Limit<'p> {
    pub(super) input: Op<'p>,
    pub(super) count: &'p crate::expr::CExpr,
    pub(super) remaining: Option<usize>,
    pub(super) pulled: bool,
    /// Whether the input is read to its end once the limit is reached, for the side effects of reading it.
    pub(super) drain: bool,
}

impl Limit<'_> {
    /// The rows still to pass, the count evaluated at the first call.
    fn left(&mut self, ctx: &Ctx) -> Result<usize> {
        if self.remaining.is_none() {
            self.remaining = Some(count_value(self.count, ctx, "LIMIT")?);
        }
        Ok(self.remaining.unwrap())
    }

    /// Lends the input's first `left` rows to `sink` as they come, so the rows below past the limit are never
    /// made: a filter or projection under it does not run for them (nor fail on them, as in Neo4j).
    fn lend_first(&mut self, ctx: &mut Ctx, left: usize, sink: &mut RowSink<'_>) -> Result<()> {
        self.pulled = true;
        let mut lent = 0;
        self.input.for_each_row(ctx, &mut |row, ctx| {
            lent += 1;
            let flow = sink(row, ctx)?;
            Ok(if lent == left { ControlFlow::Break(()) } else { flow })
        })?;
        self.remaining = Some(0);
        Ok(())
    }
}

impl Operator for Limit<'_> {
    /// Lends the input's first rows as they come ([`Limit::lend_first`]): nothing is collected.
    fn for_each_row(&mut self, ctx: &mut Ctx, sink: &mut RowSink<'_>) -> Result<()> {
        let left = self.left(ctx)?;
        if self.pulled || self.drain || left == 0 {
            return lend_batches(self, ctx, sink);
        }
        self.lend_first(ctx, left, sink)
    }

    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        let left = self.left(ctx)?;
        if left == 0 {
            if self.drain {
                self.drain = false;
                while self.input.next(ctx)?.is_some() {}
                return Ok(None);
            }
            if !self.pulled {
                // Updates below run when first pulled: LIMIT 0 limits the rows, never the side effects.
                self.pulled = true;
                self.input.next(ctx)?;
            }
            return Ok(None);
        }
        if !self.pulled && left <= BATCH && !self.drain {
            // A limit within one batch takes its rows one at a time.
            let mut kept = Vec::with_capacity(left);
            self.lend_first(ctx, left, &mut |row, _| {
                kept.push(std::mem::take(row));
                Ok(ControlFlow::Continue(()))
            })?;
            return Ok((!kept.is_empty()).then_some(kept));
        }
        self.pulled = true;
        match self.input.next(ctx)? {
            None => Ok(None),
            Some(mut batch) => {
                batch.truncate(left);
                self.remaining = Some(left - batch.len());
                Ok(Some(batch))
            }
        }
    }
}
