//! Where a node pattern starts: a bound variable, a lookup by id, by unique key or index (one value, any of
//! several, a range), through a composite index, or else a label scan; the WHERE conjuncts a lookup answers are
//! taken from the pending ones so that no filter repeats them.

use std::collections::HashSet;
use std::sync::Arc;

use super::index_start::CompositeStart;
use super::pattern::{computable, find_equality, property_of, Pending};
use super::planner::{AggMode, Planner, Scope};
use super::PlanNode;
use crate::ast::*;
use crate::error::Result;
use crate::expr::CExpr;
use crate::token::Token;

/// A lookup by label and property value for a start node.
pub(super) struct KeyLookupSpec {
    label: Arc<str>,
    key: Arc<str>,
    value: CExpr,
    /// `value` is a list of values to look up (`n.key IN list`).
    any_of: bool,
    /// The value is the first entry of the node pattern's property map, which then needs no filter.
    inline: bool,
}

/// The values a pending conjunct lets a lookup try for one key, any of which a node may equal.
pub(super) enum AnyOf<'e> {
    /// `n.key IN list`.
    List(&'e Expr),
    /// `n.key = a OR n.key = b ...`: the same as `n.key IN [a, b, ...]`, true, false and null alike.
    Values(Vec<&'e Expr>),
}

impl<'e> AnyOf<'e> {
    /// `e` as a test of one key against several values (`key_of` names the key of a side), if it is one.
    pub(super) fn of(e: &'e Expr, key_of: &impl Fn(&Expr) -> Option<Arc<str>>) -> Option<(Arc<str>, AnyOf<'e>)> {
        /// Collects the equalities of an OR tree, all on one key.
        fn equalities<'e>(
            e: &'e Expr,
            key_of: &impl Fn(&Expr) -> Option<Arc<str>>,
            key: &mut Option<Arc<str>>,
            values: &mut Vec<&'e Expr>,
        ) -> Option<()> {
            match &e.kind {
                ExprKind::Binary(BinaryOp::Or, a, b) => {
                    equalities(a, key_of, key, values)?;
                    equalities(b, key_of, key, values)
                }
                ExprKind::Binary(BinaryOp::Eq, a, b) => {
                    let (k, value) = key_of(a).map(|k| (k, &**b)).or_else(|| key_of(b).map(|k| (k, &**a)))?;
                    if key.as_ref().is_some_and(|known| *known != k) {
                        return None;
                    }
                    *key = Some(k);
                    values.push(value);
                    Some(())
                }
                _ => None,
            }
        }
        match &e.kind {
            ExprKind::Binary(BinaryOp::In, item, list) => Some((key_of(item)?, AnyOf::List(list))),
            ExprKind::Binary(BinaryOp::Or, ..) => {
                let (mut key, mut values) = (None, Vec::new());
                equalities(e, key_of, &mut key, &mut values)?;
                Some((key?, AnyOf::Values(values)))
            }
            _ => None,
        }
    }

    pub(super) fn exprs(&self) -> &[&'e Expr] {
        match self {
            AnyOf::List(list) => std::slice::from_ref(list),
            AnyOf::Values(values) => values,
        }
    }
}

impl Planner<'_> {
    /// Starts at a node pattern that is not bound yet: by id (`id(n) = x`), by a unique key, by a property index
    /// range, or by scanning its first label (or all nodes), with its other filters after; binds its variable.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_node(
        &mut self,
        mut plan: PlanNode,
        start_np: &NodePattern,
        s: usize,
        pending: &mut Vec<Pending>,
        bound: &mut HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
    ) -> Result<PlanNode> {
        let id_seek = match &start_np.variable {
            Some(v) => self.id_lookup(&v.name, pending, bound, declared, scope)?,
            None => None,
        };
        let composite = match id_seek {
            Some(_) => None,
            None => self.composite_lookup(start_np, pending, bound, declared, scope)?,
        };
        // A composite index finds a subset of what an equality on its first property would: it goes first.
        let key = match (&id_seek, &composite) {
            (None, None) => self.key_lookup(start_np, pending, bound, declared, scope)?,
            _ => None,
        };
        if let Some(id) = id_seek {
            plan = PlanNode::NodeById { input: Box::new(plan), slot: s, id };
            plan = self.node_filters(plan, start_np, s, false, None, scope)?;
        } else if let Some(CompositeStart { label, keys, values, range }) = composite {
            let (label, keys) = (Token::new(label), keys.into_iter().map(Token::new).collect());
            plan = PlanNode::CompositeSeek { input: Box::new(plan), slot: s, label, keys, values, range };
            plan = self.node_filters(plan, start_np, s, false, None, scope)?;
        } else {
            match key {
                Some(KeyLookupSpec { label, key, value, any_of, inline }) => {
                    let skip_prop = inline.then(|| key.clone());
                    let (label, key) = (Token::new(label), Token::new(key));
                    plan = PlanNode::KeyLookup { input: Box::new(plan), slot: s, label, key, value, any_of };
                    plan = self.node_filters(plan, start_np, s, true, skip_prop.as_deref(), scope)?;
                }
                None => {
                    let range = match (&start_np.variable, start_np.labels.first()) {
                        (Some(v), Some(_)) => self.range_lookup(&v.name, None, pending, bound, declared, scope)?,
                        _ => None,
                    };
                    // A scan goes through the rarest of the node's labels and checks the others.
                    let rarest_first;
                    let start_np = match self.rarest_label(start_np) {
                        Some(i) if range.is_none() && i > 0 => {
                            let mut reordered = start_np.clone();
                            reordered.labels.swap(0, i);
                            rarest_first = reordered;
                            &rarest_first
                        }
                        _ => start_np,
                    };
                    let label = start_np.labels.first().map(|l| Token::new(l.name.as_str()));
                    plan = match (range, label) {
                        (Some((key, lower, upper)), Some(label)) => {
                            let key = Token::new(key);
                            PlanNode::IndexRange { input: Box::new(plan), slot: s, label, key, lower, upper }
                        }
                        (_, label) => PlanNode::ScanNodes { input: Box::new(plan), slot: s, label },
                    };
                    plan = self.node_filters(plan, start_np, s, true, None, scope)?;
                }
            }
        }
        if let Some(v) = &start_np.variable {
            bound.insert(v.name.clone());
        }
        Ok(plan)
    }

    /// A unique-key lookup for a new node: its first label with an inline property, or a WHERE conjunct
    /// `n.p = expr` whose other side is already computable. Returns (label, key, value) and consumes the
    /// conjunct.
    pub(super) fn key_lookup(
        &mut self,
        np: &NodePattern,
        pending: &mut Vec<Pending>,
        bound: &HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
    ) -> Result<Option<KeyLookupSpec>> {
        let Some(label) = np.labels.first() else { return Ok(None) };
        let label: Arc<str> = Arc::from(label.name.as_str());
        if let Some(Expr { kind: ExprKind::Map(entries), .. }) = &np.properties {
            if let Some((k, v)) = entries.first() {
                let ready = computable(v, bound, declared);
                if ready {
                    let value = self.expr(v, scope, &mut AggMode::Forbidden)?;
                    let key = Arc::from(k.name.as_str());
                    return Ok(Some(KeyLookupSpec { label, key, value, any_of: false, inline: true }));
                }
            }
        }
        let Some(var) = &np.variable else { return Ok(None) };
        let key_of = |side: &Expr| property_of(side, &var.name).map(Arc::<str>::from);
        if let Some((key, value)) = self.take_equality(pending, bound, declared, scope, key_of)? {
            return Ok(Some(KeyLookupSpec { label, key, value, any_of: false, inline: false }));
        }
        // `n.key IN list` or an OR of equalities on one key: one lookup per value instead of a scan of the
        // label with the test as a filter.
        let found = pending.iter().enumerate().find_map(|(i, p)| {
            let (key, any_of) = AnyOf::of(&p.expr, &key_of)?;
            any_of.exprs().iter().all(|v| computable(v, bound, declared)).then_some((i, key, any_of))
        });
        let Some((i, key, any_of)) = found else { return Ok(None) };
        let value = self.any_of_list(any_of, scope)?;
        pending.remove(i);
        Ok(Some(KeyLookupSpec { label, key, value, any_of: true, inline: false }))
    }

    /// The list of values `any_of` tries, compiled.
    pub(super) fn any_of_list(&mut self, any_of: AnyOf, scope: &Scope) -> Result<CExpr> {
        Ok(match any_of {
            AnyOf::List(list) => self.expr(list, scope, &mut AggMode::Forbidden)?,
            AnyOf::Values(values) => CExpr::List(
                values.into_iter().map(|v| self.expr(v, scope, &mut AggMode::Forbidden)).collect::<Result<_>>()?,
            ),
        })
    }

    /// Finds a pending conjunct `side = other` (either way round) where `matches(side)` says yes and `other` is
    /// computable; compiles `other`, removes the conjunct and returns what `matches` found with the value.
    pub(super) fn take_equality<T>(
        &mut self,
        pending: &mut Vec<Pending>,
        bound: &HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
        matches: impl Fn(&Expr) -> Option<T>,
    ) -> Result<Option<(T, CExpr)>> {
        let Some((i, hit, other)) = find_equality(pending, bound, declared, matches) else { return Ok(None) };
        let other = other.clone();
        let value = self.expr(&other, scope, &mut AggMode::Forbidden)?;
        pending.remove(i);
        Ok(Some((hit, value)))
    }

    /// Range bounds on one property of `var` from WHERE conjuncts (`n.p > expr`, `expr <= n.p`, ...) whose other
    /// side is computable. The conjuncts stay pending: they are still applied as filters.
    #[allow(clippy::type_complexity)]
    pub(super) fn range_lookup(
        &mut self,
        var: &str,
        only: Option<&str>,
        pending: &[Pending],
        bound: &HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
    ) -> Result<Option<(Arc<str>, Option<(CExpr, bool)>, Option<(CExpr, bool)>)>> {
        let mut key: Option<String> = None;
        let (mut lower, mut upper) = (None, None);
        for p in pending {
            let ExprKind::Binary(op, a, b) = &p.expr.kind else { continue };
            if !matches!(op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge) {
                continue;
            }
            for (prop, other, flipped) in [(a, b, false), (b, a, true)] {
                let Some(k) = property_of(prop, var) else { continue };
                if key.as_ref().is_some_and(|existing| existing != k) || only.is_some_and(|only| only != k) {
                    continue;
                }
                let ready = computable(other, bound, declared);
                if !ready {
                    continue;
                }
                // Normalise to `n.p OP other`.
                let op = if flipped {
                    match op {
                        BinaryOp::Lt => BinaryOp::Gt,
                        BinaryOp::Le => BinaryOp::Ge,
                        BinaryOp::Gt => BinaryOp::Lt,
                        _ => BinaryOp::Le,
                    }
                } else {
                    *op
                };
                let value = self.expr(other, scope, &mut AggMode::Forbidden)?;
                match op {
                    BinaryOp::Gt if lower.is_none() => lower = Some((value, false)),
                    BinaryOp::Ge if lower.is_none() => lower = Some((value, true)),
                    BinaryOp::Lt if upper.is_none() => upper = Some((value, false)),
                    BinaryOp::Le if upper.is_none() => upper = Some((value, true)),
                    _ => continue,
                }
                key = Some(k.to_string());
                break;
            }
        }
        Ok(key.map(|k| (Arc::from(k.as_str()), lower, upper)))
    }

    /// A WHERE conjunct `id(n) = expr` for the node variable `var` whose other side is computable; consumed.
    pub(super) fn id_lookup(
        &mut self,
        var: &str,
        pending: &mut Vec<Pending>,
        bound: &HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
    ) -> Result<Option<CExpr>> {
        let is_id_call = |side: &Expr| match &side.kind {
            ExprKind::Function { name, args, .. }
                if name == "id" && args.len() == 1 && matches!(&args[0].kind, ExprKind::Variable(n) if n == var) =>
            {
                Some(())
            }
            _ => None,
        };
        Ok(self.take_equality(pending, bound, declared, scope, is_id_call)?.map(|((), value)| value))
    }
}
