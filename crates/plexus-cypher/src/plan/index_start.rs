//! Starts through indexes that decide a pattern's order, so chosen when planning rather than when running: the
//! plan records what it found ([`super::statistics::PlannedOn`]) and is made again when that changes.
//!
//! * A relationship: `MATCH (a)-[r:T]->(b) WHERE r.p = $x` (or `[r:T {p: $x}]`, or a range on `r.p`) begins with
//!   the relationships a property index on `T`'s `p` finds (also for `r.p IN list`), binding both nodes, and
//!   expands outwards from them.
//!   Chosen only when no node of the pattern offers a lookup of its own (bound, by id, or a labelled node with a
//!   property to look up).
//! * A node with equalities on every property of a composite index of one of its labels
//!   (`(p:Person {first: $f, last: $l})`), or on all but the last and a range on that one (`WHERE p.first = $f
//!   AND p.born > $y` for an index on `(first, born)`), is found through that index.

use std::collections::HashSet;
use std::sync::Arc;

use super::node_start::AnyOf;
use super::pattern::{computable, find_equality, property_of, to_dir, Pending};
use super::planner::{AggMode, Planner, Scope};
use super::{PlanNode, RelLookup};
use crate::ast::*;
use crate::error::Result;
use crate::expr::CExpr;
use crate::token::Token;

/// A node start through a composite index: the label, the index's properties, and the values they equal in
/// their order; with a range, the values of all but the last property and the bounds of the last.
pub(super) struct CompositeStart {
    pub label: Arc<str>,
    pub keys: Vec<Arc<str>>,
    pub values: Vec<CExpr>,
    pub range: Option<Box<super::Bounds>>,
}

/// Where a pattern starts when a relationship index finds its relationship.
pub(super) struct RelStart {
    /// The relationship's position in the pattern's chain.
    pub at: usize,
    pub key: Arc<str>,
    pub lookup: RelLookup,
}

impl Planner<'_> {
    /// The first relationship of `el` that an existing property index can find, with the lookup to ask it; none
    /// when no relationship qualifies. Consumes nothing: the predicates stay to filter the candidates.
    pub(super) fn rel_index_start(
        &mut self,
        el: &PatternElement,
        pending: &[Pending],
        bound: &HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
    ) -> Result<Option<RelStart>> {
        for (at, (rp, _)) in el.chain.iter().enumerate() {
            let plain = rp.length.is_none() && rp.hop.is_none() && rp.type_expr.is_none() && rp.dynamic_type.is_none();
            let [ty] = rp.types.as_slice() else { continue };
            if !plain || rp.variable.as_ref().is_some_and(|v| bound.contains(&v.name)) {
                continue;
            }
            let Some((key, lookup)) = self.rel_lookup(rp, pending, bound, declared, scope)? else { continue };
            if self.planned_on.rel_index(self.counts.as_ref(), &ty.name, &key) {
                return Ok(Some(RelStart { at, key, lookup }));
            }
        }
        Ok(None)
    }

    /// A composite index of one of `np`'s labels whose every property `np` gives an equality for (in its map,
    /// or `n.p = x` in WHERE, the value computable before the pattern), or every one but the last, which a
    /// range in WHERE bounds. Consumes nothing: the predicates stay to filter the candidates.
    pub(super) fn composite_lookup(
        &mut self,
        np: &NodePattern,
        pending: &[Pending],
        bound: &HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
    ) -> Result<Option<CompositeStart>> {
        let mut given: Vec<(&str, &Expr)> = Vec::new();
        if let Some(Expr { kind: ExprKind::Map(entries), .. }) = &np.properties {
            given.extend(entries.iter().map(|(k, v)| (k.name.as_str(), v)));
        }
        if let Some(var) = &np.variable {
            for p in pending {
                let ExprKind::Binary(BinaryOp::Eq, a, b) = &p.expr.kind else { continue };
                for (side, other) in [(a, b), (b, a)] {
                    if let Some(key) = property_of(side, &var.name) {
                        given.push((key, other));
                    }
                }
            }
        }
        given.retain(|(_, v)| computable(v, bound, declared));
        if given.is_empty() {
            return Ok(None);
        }
        let equal = |key: &str| given.iter().find(|(g, _)| *g == key).map(|(_, v)| *v);
        for label in &np.labels {
            let composites = self.planned_on.composites(self.counts.as_ref(), &label.name);
            // Equalities on every property first: the narrowest seek.
            for keys in &composites {
                if let Some(found) = keys.iter().map(|k| equal(k)).collect::<Option<Vec<&Expr>>>() {
                    let values = found
                        .into_iter()
                        .map(|v| self.expr(v, scope, &mut AggMode::Forbidden))
                        .collect::<Result<_>>()?;
                    let label = Arc::from(label.name.as_str());
                    return Ok(Some(CompositeStart { label, keys: keys.clone(), values, range: None }));
                }
            }
            let Some(var) = &np.variable else { continue };
            for keys in composites {
                // An equality on a property outside the index may find fewer nodes (a unique key's one): the
                // range seek is for equalities on its first properties alone.
                if given.iter().any(|(g, _)| !keys.iter().any(|k| **k == **g)) {
                    continue;
                }
                let (last, first) = keys.split_last().expect("a composite index has two or more properties");
                let Some(found) = first.iter().map(|k| equal(k)).collect::<Option<Vec<&Expr>>>() else { continue };
                let Some((_, lower, upper)) =
                    self.range_lookup(&var.name, Some(last), pending, bound, declared, scope)?
                else {
                    continue;
                };
                let values =
                    found.into_iter().map(|v| self.expr(v, scope, &mut AggMode::Forbidden)).collect::<Result<_>>()?;
                let range = Some(Box::new((lower, upper)));
                return Ok(Some(CompositeStart { label: Arc::from(label.name.as_str()), keys, values, range }));
            }
        }
        Ok(None)
    }

    /// Starts the pattern `el` at the relationship `start` finds, with the filters of it and its two nodes;
    /// binds the three.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_relationship(
        &mut self,
        input: PlanNode,
        el: &PatternElement,
        start: RelStart,
        node_slots: &[usize],
        rel_slots: &[usize],
        scope: &Scope,
        bound: &mut HashSet<String>,
    ) -> Result<PlanNode> {
        let at = start.at;
        let rp = &el.chain[at].0;
        let mut plan = PlanNode::RelIndexSeek {
            input: Box::new(input),
            rel: rel_slots[at],
            left: node_slots[at],
            right: node_slots[at + 1],
            dir: to_dir(rp.direction, false),
            ty: Token::new(rp.types[0].name.as_str()),
            key: Token::new(start.key),
            lookup: start.lookup,
        };
        if let Some(props) = &rp.properties {
            plan = self.property_filter(plan, props, rel_slots[at], None, scope)?;
        }
        let left = if at == 0 { &el.start } else { &el.chain[at - 1].1 };
        for (np, slot) in [(left, node_slots[at]), (&el.chain[at].1, node_slots[at + 1])] {
            plan = self.node_filters(plan, np, slot, false, None, scope)?;
        }
        let names = [&rp.variable, &left.variable, &el.chain[at].1.variable];
        bound.extend(names.into_iter().flatten().map(|v| v.name.clone()));
        Ok(plan)
    }

    /// The property and lookup a relationship pattern offers: the first entry of its map, an equality in WHERE,
    /// or WHERE bounds on one property, whose other side is computable before the pattern.
    fn rel_lookup(
        &mut self,
        rp: &RelPattern,
        pending: &[Pending],
        bound: &HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
    ) -> Result<Option<(Arc<str>, RelLookup)>> {
        if let Some(Expr { kind: ExprKind::Map(entries), .. }) = &rp.properties {
            if let Some((k, v)) = entries.first().filter(|(_, v)| computable(v, bound, declared)) {
                let value = self.expr(v, scope, &mut AggMode::Forbidden)?;
                return Ok(Some((Arc::from(k.name.as_str()), RelLookup::Equal(value))));
            }
        }
        let Some(var) = &rp.variable else { return Ok(None) };
        let key_of = |e: &Expr| property_of(e, &var.name).map(Arc::<str>::from);
        if let Some((_, key, other)) = find_equality(pending, bound, declared, key_of) {
            return Ok(Some((key, RelLookup::Equal(self.expr(other, scope, &mut AggMode::Forbidden)?))));
        }
        // `r.p IN list`, or equalities on one property joined by OR.
        let any_of = pending.iter().find_map(|p| {
            AnyOf::of(&p.expr, &key_of).filter(|(_, a)| a.exprs().iter().all(|v| computable(v, bound, declared)))
        });
        if let Some((key, any_of)) = any_of {
            return Ok(Some((key, RelLookup::AnyOf(self.any_of_list(any_of, scope)?))));
        }
        Ok(self
            .range_lookup(&var.name, None, pending, bound, declared, scope)?
            .map(|(key, lower, upper)| (key, RelLookup::Range(lower, upper))))
    }
}
