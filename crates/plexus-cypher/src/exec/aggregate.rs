//! Grouping and aggregate functions: count, sum, avg, min, max, collect, stDev(P), percentileCont/Disc.

use std::collections::HashSet;

use plexus_storage::fxhash::FxHashMap;

use super::ctx::Ctx;
use super::{Batch, Op, Operator, Row, BATCH};
use crate::arith;
use crate::compare::{self, Equivalent};
use crate::error::{CypherError, Result};
use crate::expr::CExpr;
use crate::plan::{AggFn, AggSpec};
use crate::value::Value;

/// The running mean of `n` values followed by `x`. An infinity among finite values is the mean (the update
/// would subtract it from itself and make NaN); both infinities, or a NaN, make NaN.
fn next_mean(mean: f64, x: f64, n: i64) -> f64 {
    if mean.is_finite() && x.is_finite() {
        mean + (x - mean) / (n + 1) as f64
    } else {
        mean + x
    }
}

enum State {
    Count(i64),
    Sum(Value),
    /// Numbers are averaged as a running mean, which cannot overflow where their sum would (`avg([1e308,
    /// 1e308])` is 1e308); durations as a sum divided at the end.
    Avg {
        mean: f64,
        durations: Value,
        n: i64,
    },
    MinMax(Option<Value>),
    Collect(Vec<Value>),
    /// The numbers as given (`percentileDisc` answers one of them, unchanged).
    Numbers(Vec<Value>),
    /// The numbers as floats (`percentileCont` interpolates between them).
    Floats(Vec<f64>),
    /// Welford's running mean and sum of squared deviations (`stDev`, `stDevP`): nothing kept per value, and
    /// equal values give exactly 0.
    Deviation {
        n: u64,
        mean: f64,
        squares: f64,
    },
}

struct Acc {
    state: State,
    seen: Option<HashSet<Equivalent>>,
}

impl Acc {
    fn new(spec: &AggSpec) -> Acc {
        let state = match spec.func {
            AggFn::Count => State::Count(0),
            AggFn::Sum => State::Sum(Value::Int(0)),
            AggFn::Avg => State::Avg { mean: 0.0, durations: Value::Int(0), n: 0 },
            AggFn::Min | AggFn::Max => State::MinMax(None),
            AggFn::Collect => State::Collect(Vec::new()),
            AggFn::StDev | AggFn::StDevP => State::Deviation { n: 0, mean: 0.0, squares: 0.0 },
            AggFn::PercentileCont => State::Floats(Vec::new()),
            AggFn::PercentileDisc => State::Numbers(Vec::new()),
        };
        Acc { state, seen: spec.distinct.then(HashSet::new) }
    }

    fn add(&mut self, spec: &AggSpec, value: Option<Value>) -> Result<()> {
        let Some(value) = value else {
            // count(*)
            if let State::Count(n) = &mut self.state {
                *n += 1;
            }
            return Ok(());
        };
        if value.is_null() {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen {
            if !seen.insert(Equivalent(value.clone())) {
                return Ok(());
            }
        }
        match &mut self.state {
            State::Count(n) => *n += 1,
            State::Sum(s) => {
                check_number(&value, "sum")?;
                *s = add_to_sum(s, &value)?
            }
            State::Avg { mean, durations, n } => {
                check_number(&value, "avg")?;
                match value {
                    Value::Int(_) | Value::Float(_) if !matches!(durations, Value::Duration(_)) => {
                        let x = if let Value::Int(i) = value { i as f64 } else { as_f64(&value) };
                        *mean = next_mean(*mean, x, *n);
                    }
                    // A duration, or a number among durations (which the sum refuses).
                    _ if *n > 0 && !matches!(durations, Value::Duration(_)) => {
                        return Err(CypherError::type_error(
                            "InvalidArgumentType",
                            "avg() cannot mix numbers and durations",
                        ))
                    }
                    _ => *durations = add_to_sum(durations, &value)?,
                }
                *n += 1;
            }
            State::MinMax(current) => {
                let replace = match current {
                    None => true,
                    Some(c) => {
                        let o = compare::order(&value, c);
                        if spec.func == AggFn::Min {
                            o == std::cmp::Ordering::Less
                        } else {
                            o == std::cmp::Ordering::Greater
                        }
                    }
                };
                if replace {
                    *current = Some(value);
                }
            }
            State::Collect(items) => items.push(value),
            State::Numbers(xs) => xs.push(number(value)?),
            State::Floats(xs) => xs.push(as_f64(&number(value)?)),
            State::Deviation { n, mean, squares } => {
                let x = as_f64(&number(value)?);
                *n += 1;
                let delta = x - *mean;
                *mean += delta / *n as f64;
                *squares += delta * (x - *mean);
            }
        }
        Ok(())
    }

    fn finish(self, spec: &AggSpec, percentile: Option<f64>) -> Result<Value> {
        Ok(match self.state {
            State::Count(n) => Value::Int(n),
            State::Sum(s) => s,
            State::Avg { mean, durations, n } => match durations {
                _ if n == 0 => Value::Null,
                Value::Duration(_) => arith::div(&durations, &Value::Int(n))?,
                _ => Value::Float(mean),
            },
            State::MinMax(v) => v.unwrap_or(Value::Null),
            State::Collect(items) => Value::list(items),
            // No value has no deviation (null, as Neo4j 5 answers, like avg); one value deviates by 0.0.
            State::Deviation { n: 0, .. } => Value::Null,
            State::Deviation { n: 1, .. } => Value::Float(0.0),
            State::Deviation { n, squares, .. } => {
                let n = n as f64;
                Value::Float((squares / if spec.func == AggFn::StDev { n - 1.0 } else { n }).sqrt())
            }
            State::Floats(xs) if xs.is_empty() => Value::Null,
            State::Floats(mut xs) => {
                // Sorted as plain floats (NaN last, as Cypher orders it): a million values sort in
                // milliseconds, where comparing them as values took most of the aggregation's time.
                xs.sort_unstable_by(|a, b| {
                    a.is_nan().cmp(&b.is_nan()).then(a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal))
                });
                let pos = percentile.unwrap_or(0.5) * (xs.len() - 1) as f64;
                let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
                // At a value itself, that value: interpolating would turn an infinity into NaN.
                // Equal ends need no interpolation, which would make NaN of two equal infinities.
                Value::Float(if lo == hi || xs[lo] == xs[hi] {
                    xs[lo]
                } else {
                    xs[lo] + (xs[hi] - xs[lo]) * (pos - lo as f64)
                })
            }
            State::Numbers(values) if values.is_empty() => Value::Null,
            State::Numbers(mut values) => {
                let p = percentile.unwrap_or(0.5);
                values.sort_by(compare::order);
                let idx = ((p * values.len() as f64).ceil() as usize).saturating_sub(1).min(values.len() - 1);
                // One of the values, unchanged (an integer beyond 2^53 is not rounded through a float).
                values.swap_remove(if p == 0.0 { 0 } else { idx })
            }
        })
    }
}

/// `value` if it is a number, else the error the numeric aggregates give.
fn number(value: Value) -> Result<Value> {
    match value {
        Value::Int(_) | Value::Float(_) => Ok(value),
        other => {
            Err(CypherError::type_error("InvalidArgumentType", format!("expected a number, got {}", other.type_name())))
        }
    }
}

/// A number as a float.
fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// `sum + value` for `sum()` and `avg()`, whose sum starts as the integer 0: the first duration replaces that
/// 0 (sums of durations are durations), since `0 + duration` is a type error.
pub(super) fn add_to_sum(sum: &Value, value: &Value) -> Result<Value> {
    match (sum, value) {
        (Value::Int(0), Value::Duration(_)) => Ok(value.clone()),
        // An integer sum past i64 goes on as a float, as Neo4j's does, where `+` fails.
        (Value::Int(a), Value::Int(b)) => {
            Ok(a.checked_add(*b).map_or_else(|| Value::Float(*a as f64 + *b as f64), Value::Int))
        }
        _ => arith::add(sum, value),
    }
}

pub(super) fn check_number(v: &Value, what: &str) -> Result<()> {
    match v {
        Value::Int(_) | Value::Float(_) | Value::Duration(_) => Ok(()),
        other => Err(CypherError::type_error(
            "InvalidArgumentType",
            format!("{what}() expects numbers, got {}", other.type_name()),
        )),
    }
}

/// Groups rows by key and folds each group's aggregates: the work of [`Aggregate`], fed one row at a time so
/// that operators producing rows they never materialise (see [`super::expand_aggregate`]) can share it.
pub(crate) struct Grouper<'p> {
    keys: &'p [(CExpr, usize)],
    aggs: &'p [AggSpec],
    /// Group key → index in `groups`. The key of each row is built in one reused buffer and looked up as a
    /// slice, so only a new group allocates.
    index: FxHashMap<Vec<Equivalent>, usize>,
    /// First row of each group (its key slots set) and its accumulators, in first-seen order.
    groups: Vec<(Row, Vec<Acc>)>,
    percentiles: Vec<Option<f64>>,
    key: Vec<Equivalent>,
    /// Whether a memory limit applies (the context's, read at each row); then the bytes the groups and the values they keep
    /// take, roughly, and rows added since that was last checked.
    counted: bool,
    held: usize,
    unchecked: usize,
}

impl<'p> Grouper<'p> {
    pub fn new(keys: &'p [(CExpr, usize)], aggs: &'p [AggSpec]) -> Self {
        Grouper {
            keys,
            aggs,
            index: FxHashMap::default(),
            groups: Vec::new(),
            percentiles: vec![None; aggs.len()],
            key: Vec::with_capacity(keys.len()),
            counted: false,
            held: 0,
            unchecked: 0,
        }
    }

    pub fn add(&mut self, row: &[Value], ctx: &Ctx) -> Result<()> {
        self.counted = ctx.memory_limited();
        let g = self.group_of(row, ctx)?;
        for (i, spec) in self.aggs.iter().enumerate() {
            let v = spec.arg.as_ref().map(|e| e.eval(row, ctx)).transpose()?;
            if let Some(extra) = &spec.extra {
                if self.percentiles[i].is_none() {
                    self.percentiles[i] = Some(percentile_arg(&extra.eval(row, ctx)?)?);
                }
            }
            if let (Some(v), true) = (&v, self.counted) {
                // What the aggregate keeps of each value: collected, or remembered for DISTINCT.
                let kept = usize::from(spec.distinct)
                    + usize::from(matches!(spec.func, AggFn::Collect | AggFn::PercentileCont | AggFn::PercentileDisc));
                if kept > 0 {
                    self.held += kept * super::approx_bytes(v);
                }
            }
            self.groups[g].1[i].add(spec, v)?;
        }
        self.unchecked += 1;
        if self.counted && self.unchecked == super::BATCH {
            self.unchecked = 0;
            super::check_held(ctx, self.held, "aggregation")?;
        }
        Ok(())
    }

    /// Adds `n` to every aggregate of `row`'s group, all of which are plain counts of values that are never
    /// null (see `ExpandAggregate`'s degree counts): `n` rows at once, without their values.
    pub fn add_count(&mut self, row: &[Value], ctx: &Ctx, n: u64) -> Result<()> {
        self.counted = ctx.memory_limited();
        let g = self.group_of(row, ctx)?;
        for acc in &mut self.groups[g].1 {
            if let State::Count(c) = &mut acc.state {
                *c += n as i64;
            }
        }
        Ok(())
    }

    /// The index of `row`'s group, created if it is new.
    fn group_of(&mut self, row: &[Value], ctx: &Ctx) -> Result<usize> {
        Ok(if self.keys.is_empty() {
            // One group for the whole input: nothing to hash.
            if self.groups.is_empty() {
                self.groups.push((row.to_vec(), self.aggs.iter().map(Acc::new).collect()));
            }
            0
        } else {
            self.key.clear();
            for (e, _) in self.keys {
                self.key.push(Equivalent(e.eval(row, ctx)?));
            }
            match self.index.get(self.key.as_slice()) {
                Some(&g) => g,
                None => {
                    let mut first = row.to_vec();
                    for ((_, slot), v) in self.keys.iter().zip(&self.key) {
                        first[*slot] = v.0.clone();
                    }
                    if self.counted {
                        self.held += 2 * super::row_bytes(&first) + 64 * self.aggs.len();
                    }
                    self.groups.push((first, self.aggs.iter().map(Acc::new).collect()));
                    self.index.insert(self.key.clone(), self.groups.len() - 1);
                    self.groups.len() - 1
                }
            }
        })
    }

    /// One row per group; with no keys and no input, the one row of empty aggregates.
    pub fn finish(mut self, width: usize) -> Result<Vec<Row>> {
        if self.groups.is_empty() && self.keys.is_empty() {
            // No row evaluated a percentile: a literal one is still checked, as in Neo4j.
            for spec in self.aggs {
                if let Some(CExpr::Const(p)) = &spec.extra {
                    percentile_arg(p)?;
                }
            }
            self.groups.push((super::null_row(width), self.aggs.iter().map(Acc::new).collect()));
        }
        let mut out = Vec::with_capacity(self.groups.len());
        for (mut row, accs) in self.groups {
            for ((spec, acc), p) in self.aggs.iter().zip(accs).zip(&self.percentiles) {
                row[spec.slot] = acc.finish(spec, *p)?;
            }
            out.push(row);
        }
        Ok(out)
    }
}

pub(crate) struct Aggregate<'p> {
    input: Op<'p>,
    keys: &'p [(CExpr, usize)],
    aggs: &'p [AggSpec],
    /// When the keys are only variables a subquery carries (`PlanNode::Aggregate::per_run`): their slots here and
    /// their values in this run.
    run_keys: Option<Vec<(usize, Value)>>,
    output: Option<std::vec::IntoIter<Row>>,
}

impl<'p> Aggregate<'p> {
    pub fn new(
        input: Op<'p>,
        keys: &'p [(CExpr, usize)],
        aggs: &'p [AggSpec],
        run_keys: Option<Vec<(usize, Value)>>,
    ) -> Self {
        Aggregate { input, keys, aggs, run_keys, output: None }
    }

    fn compute(&mut self, ctx: &mut Ctx) -> Result<Vec<Row>> {
        let mut grouper = Grouper::new(self.keys, self.aggs);
        // Lent one at a time: an input that builds its rows (another aggregation) then reuses one instead of
        // allocating each.
        self.input.for_each_row(ctx, &mut |row, ctx| {
            grouper.add(row, ctx)?;
            Ok(std::ops::ControlFlow::Continue(()))
        })?;
        if let Some(run_keys) = self.run_keys.take() {
            if grouper.groups.is_empty() {
                let mut row = super::null_row(ctx.width);
                for (slot, value) in run_keys {
                    row[slot] = value;
                }
                grouper.group_of(&row, ctx)?;
            }
        }
        grouper.finish(ctx.width)
    }
}

fn percentile_arg(v: &Value) -> Result<f64> {
    let p = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        other => {
            return Err(CypherError::argument(
                "InvalidArgumentType",
                format!("the percentile must be a number, got {}", other.type_name()),
            ))
        }
    };
    if !(0.0..=1.0).contains(&p) {
        return Err(CypherError::argument("NumberOutOfRange", format!("the percentile must be in [0, 1], got {p}")));
    }
    Ok(p)
}

impl Operator for Aggregate<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        if self.output.is_none() {
            self.output = Some(self.compute(ctx)?.into_iter());
        }
        Ok(next_batch(self.output.as_mut()))
    }
}

/// The next batch of an aggregation's finished rows (`None` once they are all out).
pub(super) fn next_batch(rows: Option<&mut std::vec::IntoIter<Row>>) -> Option<Batch> {
    let out: Batch = rows?.take(BATCH).collect();
    (!out.is_empty()).then_some(out)
}
