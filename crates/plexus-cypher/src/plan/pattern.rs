//! Planning MATCH patterns: choosing which pattern part starts and from which end (the lookups themselves are
//! planned in [`super::node_start`] and [`super::index_start`]), expanding along its relationships, and placing
//! each WHERE conjunct right after the step that binds its last variable (or, when it may raise an error, after
//! the whole pattern).

use std::collections::HashSet;

use plexus_storage::Direction;

use super::compile::walk;
use super::planner::{AggMode, Planner, Scope, VarKind};
use super::PlanNode;
use crate::ast::*;
use crate::error::{CypherError, Result};
use crate::expr::CExpr;
use crate::token::Token;

/// Splits `a AND b AND c` into its conjuncts.
pub(super) fn conjuncts(e: &Expr, out: &mut Vec<Expr>) {
    if let ExprKind::Binary(BinaryOp::And, a, b) = &e.kind {
        conjuncts(a, out);
        conjuncts(b, out);
    } else {
        out.push(e.clone());
    }
}

/// The variable names an expression mentions; `None` when it contains a subquery or pattern, whose
/// variables are not visible to [`walk`] (such a conjunct waits until the whole pattern is bound).
pub(super) fn mentioned(e: &Expr) -> Option<HashSet<String>> {
    let mut names = HashSet::new();
    let mut opaque = false;
    walk(e, &mut |x| match &x.kind {
        ExprKind::Variable(n) => {
            names.insert(n.clone());
        }
        ExprKind::MapProjection { items, .. } => {
            for i in items {
                if let MapProjectionItem::Variable(v) = i {
                    names.insert(v.name.clone());
                }
            }
        }
        ExprKind::PatternPredicate(_)
        | ExprKind::PatternComprehension { .. }
        | ExprKind::Exists(_)
        | ExprKind::CountSubquery(_)
        | ExprKind::CollectSubquery(_) => opaque = true,
        _ => {}
    });
    (!opaque).then_some(names)
}

/// Whether `e` can be evaluated once the variables in `bound` are: every pattern variable it mentions is bound.
pub(super) fn computable(e: &Expr, bound: &HashSet<String>, declared: &HashSet<String>) -> bool {
    mentioned(e).is_some_and(|ns| all_bound(&ns, bound, declared))
}

/// The key of `var.key`, when `e` is a property of the variable `var`.
pub(super) fn property_of<'e>(e: &'e Expr, var: &str) -> Option<&'e str> {
    match &e.kind {
        ExprKind::Property(base, key) if matches!(&base.kind, ExprKind::Variable(n) if n == var) => {
            Some(key.name.as_str())
        }
        _ => None,
    }
}

/// The first pending conjunct `side = other` (either way round) where `matches(side)` says yes and `other` is
/// computable: its position, what `matches` found, and `other`.
pub(super) fn find_equality<'p, T>(
    pending: &'p [Pending],
    bound: &HashSet<String>,
    declared: &HashSet<String>,
    matches: impl Fn(&Expr) -> Option<T>,
) -> Option<(usize, T, &'p Expr)> {
    pending.iter().enumerate().find_map(|(i, p)| {
        let ExprKind::Binary(BinaryOp::Eq, a, b) = &p.expr.kind else { return None };
        [(a, b), (b, a)].into_iter().find_map(|(side, other)| {
            let hit = matches(side)?;
            computable(other, bound, declared).then_some((i, hit, &**other))
        })
    })
}

/// Whether every name of `names` that the pattern declares is in `bound`.
fn all_bound(names: &HashSet<String>, bound: &HashSet<String>, declared: &HashSet<String>) -> bool {
    names.iter().all(|n| bound.contains(n) || !declared.contains(n))
}

pub(super) struct Pending {
    pub expr: Expr,
    pub names: Option<HashSet<String>>,
}

impl Pending {
    /// Whether the conjunct can be evaluated once the variables in `bound` are (see [`computable`]).
    pub(super) fn ready(&self, bound: &HashSet<String>, declared: &HashSet<String>) -> bool {
        self.names.as_ref().is_some_and(|names| all_bound(names, bound, declared))
    }
}

/// Whether evaluating `e` may raise an error rather than give a value: arithmetic (overflow, division by
/// zero, types), function calls, regular expressions, indexing and the like. WHERE filters the rows the whole
/// pattern matches, so such a conjunct must not run early on a row the rest of the pattern would drop: it could
/// fail a query whose every match passes it (`MATCH (n)-[:T]->(n) WHERE range(0, n.x) IS NOT NULL`, on a node
/// without the loop and without `x`). Comparisons, boolean logic, null and label tests, and property reads of
/// variables give a value (null at worst) and stay where they filter soonest.
pub(super) fn may_raise(e: &Expr) -> bool {
    use crate::ast::BinaryOp as B;
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Parameter(_) | ExprKind::Variable(_) | ExprKind::PatternPredicate(_) => false,
        ExprKind::Property(base, _) => !matches!(base.kind, ExprKind::Variable(_)) && may_raise(base),
        ExprKind::IsNull { expr, .. } | ExprKind::HasLabels(expr, _) | ExprKind::LabelTest(expr, _) => may_raise(expr),
        ExprKind::Unary(crate::ast::UnaryOp::Not, a) => may_raise(a),
        ExprKind::List(items) => items.iter().any(may_raise),
        ExprKind::Binary(op, a, b) => match op {
            B::Or | B::Xor | B::And | B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge => may_raise(a) || may_raise(b),
            B::StartsWith | B::EndsWith | B::Contains => may_raise(a) || may_raise(b),
            // Into a list, a parameter or a literal list: a value; into anything else, maybe a type error.
            B::In => may_raise(a) || !matches!(b.kind, ExprKind::List(_) | ExprKind::Parameter(_)) || may_raise(b),
            _ => true,
        },
        ExprKind::Function { name, args, .. } => {
            !matches!(name.as_str(), "id" | "elementid" | "coalesce" | "labels" | "type" | "exists")
                || args.iter().any(may_raise)
        }
        _ => true,
    }
}

pub(super) fn to_dir(d: RelDirection, reversed: bool) -> Direction {
    match (d, reversed) {
        (RelDirection::Both, _) => Direction::Both,
        (RelDirection::Out, false) | (RelDirection::In, true) => Direction::Out,
        (RelDirection::In, false) | (RelDirection::Out, true) => Direction::In,
    }
}

impl Planner<'_> {
    /// Plans `MATCH patterns WHERE predicate` on top of `input`, adding the pattern's variables to `scope`.
    pub(crate) fn match_patterns(
        &mut self,
        input: PlanNode,
        patterns: &[PatternPart],
        predicate: Option<&Expr>,
        scope: &mut Scope,
        _top: bool,
    ) -> Result<PlanNode> {
        let outer: HashSet<String> = scope.visible().into_iter().map(|v| v.name).collect();
        // A subquery in this MATCH's WHERE plans patterns of its own: their deferred conditions stay apart.
        let outer_repetition_filters = std::mem::take(&mut self.repetition_filters);
        let outer_unbound = std::mem::take(&mut self.unbound);
        let outer_deferred = std::mem::take(&mut self.deferred_props);
        for part in patterns {
            let mut props: Vec<&Option<Expr>> = vec![&part.element.start.properties];
            for (r, n) in &part.element.chain {
                props.push(&r.properties);
                props.push(&n.properties);
            }
            for p in props.into_iter().flatten() {
                if let ExprKind::Parameter(_) = p.kind {
                    return Err(self.error(
                        p.span,
                        CypherError::syntax(
                            "InvalidParameterUse",
                            "a parameter cannot stand for a pattern's whole property map here; write {key: $value}",
                        ),
                    ));
                }
            }
        }
        // Declare every new variable of the pattern up front, checking that each is used consistently.
        let mut declared: HashSet<String> = HashSet::new();
        for part in patterns {
            if let Some(p) = &part.variable {
                self.check_new(scope, p)?;
                let slot = self.slot();
                scope.add(&p.name, slot, VarKind::Path);
                declared.insert(p.name.clone());
            }
            let mut nodes = vec![&part.element.start];
            nodes.extend(part.element.chain.iter().map(|(_, n)| n));
            for n in nodes {
                if let Some(v) = &n.variable {
                    self.declare(scope, &mut declared, v, VarKind::Node)?;
                }
            }
            for (r, _) in &part.element.chain {
                if let Some(hop) = &r.hop {
                    self.declare_group_variables(scope, &mut declared, r, hop)?;
                }
                if let Some(v) = &r.variable {
                    let kind = if r.length.is_some() { VarKind::RelList } else { VarKind::Rel };
                    if declared.contains(&v.name) {
                        return Err(self.error(
                            v.span,
                            CypherError::semantic(
                                "VariableAlreadyBound",
                                format!("relationship variable `{}` is used more than once", v.name),
                            ),
                        ));
                    }
                    self.declare(scope, &mut declared, v, kind)?;
                }
            }
        }
        if let Some(predicate) = predicate {
            self.check_predicate(predicate)?;
        }
        if let Some(Expr { kind: ExprKind::Variable(name), span }) = predicate {
            if let Some(v) = scope.get(name) {
                if matches!(v.kind, VarKind::Node | VarKind::Rel | VarKind::Path | VarKind::RelList) {
                    return Err(self.error(
                        *span,
                        CypherError::syntax("InvalidArgumentType", "WHERE expects a boolean, not a graph element"),
                    ));
                }
            }
        }
        for part in patterns {
            let (Some(path), Some(predicate)) = (&part.variable, &part.predicate) else { continue };
            if mentioned(predicate).is_some_and(|names| names.contains(&path.name)) {
                return Err(self.error(
                    predicate.span,
                    CypherError::semantic(
                        "InvalidReference",
                        format!("`{}` is the whole path: the WHERE inside its parentheses cannot name it", path.name),
                    ),
                ));
            }
        }
        let mut pending: Vec<Pending> = Vec::new();
        // A parenthesised path's WHERE is one more condition of the MATCH, unless a selector's search takes it.
        let own = patterns.iter().filter(|p| p.kind == PathKind::Normal).filter_map(|p| p.predicate.as_ref());
        for p in predicate.into_iter().chain(own) {
            let mut cs = Vec::new();
            conjuncts(p, &mut cs);
            pending.extend(cs.into_iter().map(|expr| Pending { names: mentioned(&expr), expr }));
        }
        let mut bound: HashSet<String> = outer.clone();
        let mut plan = input;
        let total = patterns.iter().filter(|p| p.kind == PathKind::Normal).map(|p| p.element.chain.len()).sum();
        let mut rels_here = MatchRels { slots: Vec::new(), total };
        plan = self.flush(plan, &mut pending, &bound, &declared, scope)?;
        for part in patterns {
            plan = self.pattern_part(plan, part, scope, &mut bound, &declared, &mut pending, &mut rels_here)?;
        }
        // Property maps still waiting (every variable is bound by now), then whatever is left (subqueries, or
        // predicates on names outside the pattern).
        self.unbound = outer_unbound;
        for (_, predicate) in std::mem::replace(&mut self.deferred_props, outer_deferred) {
            plan = PlanNode::Filter { input: Box::new(plan), predicate };
        }
        for p in pending.drain(..) {
            let c = self.expr(&p.expr, scope, &mut AggMode::Forbidden)?;
            plan = PlanNode::Filter { input: Box::new(plan), predicate: c };
        }
        // Conditions of quantified path patterns' repetitions on variables bound elsewhere in the MATCH.
        for predicate in std::mem::replace(&mut self.repetition_filters, outer_repetition_filters) {
            plan = PlanNode::Filter { input: Box::new(plan), predicate };
        }
        Ok(plan)
    }

    fn declare(&mut self, scope: &mut Scope, declared: &mut HashSet<String>, v: &Ident, kind: VarKind) -> Result<()> {
        if let Some(existing) = scope.get(&v.name) {
            let ok = existing.kind == kind || existing.kind == VarKind::Unknown;
            if !ok && kind == VarKind::RelList && existing.kind == VarKind::Scalar {
                // A list of relationships bound earlier and matched again as a variable-length pattern.
                return Ok(());
            }
            if !ok {
                return Err(self.error(
                    v.span,
                    CypherError::semantic(
                        "VariableTypeConflict",
                        format!("variable `{}` is already bound to a different kind of value", v.name),
                    ),
                ));
            }
            return Ok(());
        }
        let slot = self.slot();
        scope.add(&v.name, slot, kind);
        declared.insert(v.name.clone());
        Ok(())
    }

    /// Adds a filter for each pending conjunct whose variables are now all bound, unless it may raise an error
    /// ([`may_raise`]): that one waits for the end of the pattern, where the leftovers are applied. Property maps
    /// deferred for a variable not bound when they were planned go in once none they name is unbound.
    pub(super) fn flush(
        &mut self,
        mut plan: PlanNode,
        pending: &mut Vec<Pending>,
        bound: &HashSet<String>,
        declared: &HashSet<String>,
        scope: &Scope,
    ) -> Result<PlanNode> {
        self.unbound = declared.difference(bound).cloned().collect();
        let mut i = 0;
        while i < self.deferred_props.len() {
            if self.deferred_props[i].0.is_disjoint(&self.unbound) {
                let (_, predicate) = self.deferred_props.remove(i);
                plan = PlanNode::Filter { input: Box::new(plan), predicate };
            } else {
                i += 1;
            }
        }
        let mut i = 0;
        while i < pending.len() {
            if pending[i].ready(bound, declared) && !may_raise(&pending[i].expr) {
                let p = pending.remove(i);
                let c = self.expr(&p.expr, scope, &mut AggMode::Forbidden)?;
                plan = PlanNode::Filter { input: Box::new(plan), predicate: c };
            } else {
                i += 1;
            }
        }
        Ok(plan)
    }

    /// The slot of a pattern element: its variable's, or a fresh hidden one.
    fn element_slot(&mut self, v: &Option<Ident>, scope: &Scope) -> usize {
        match v {
            Some(v) => scope.get(&v.name).expect("declared").slot,
            None => self.slot(),
        }
    }

    /// Filters for a node pattern's labels and properties (all but those `skip` already checked).
    pub(super) fn node_filters(
        &mut self,
        mut plan: PlanNode,
        np: &NodePattern,
        slot: usize,
        skip_label: bool,
        skip_prop: Option<&str>,
        scope: &Scope,
    ) -> Result<PlanNode> {
        let labels: Vec<Token> =
            np.labels.iter().skip(usize::from(skip_label)).map(|l| Token::new(l.name.as_str())).collect();
        if !labels.is_empty() {
            plan = PlanNode::Filter {
                input: Box::new(plan),
                predicate: CExpr::HasLabels(Box::new(CExpr::Slot(slot)), labels),
            };
        }
        if let Some(test) = &np.label_expr {
            plan = PlanNode::Filter {
                input: Box::new(plan),
                predicate: CExpr::LabelTest(Box::new(CExpr::Slot(slot)), crate::expr::label_test(test)),
            };
        }
        let (any, all): (Vec<_>, Vec<_>) = np.dynamic_labels.iter().partition(|d| d.any);
        if !all.is_empty() {
            let mut args = vec![CExpr::Slot(slot)];
            for d in all {
                args.push(self.expr(&d.expr, scope, &mut AggMode::Forbidden)?);
            }
            plan = PlanNode::Filter {
                input: Box::new(plan),
                predicate: CExpr::Graph(crate::expr::GraphFn::HasComputedLabels, args),
            };
        }
        // Each `$any(...)` is a test of its own: one of its labels, and one of the next one's.
        for d in any {
            let args = vec![CExpr::Slot(slot), self.expr(&d.expr, scope, &mut AggMode::Forbidden)?];
            plan = PlanNode::Filter {
                input: Box::new(plan),
                predicate: CExpr::Graph(crate::expr::GraphFn::HasAnyComputedLabel, args),
            };
        }
        if let Some(props) = &np.properties {
            plan = self.property_filter(plan, props, slot, skip_prop, scope)?;
        }
        Ok(plan)
    }

    pub(super) fn property_filter(
        &mut self,
        plan: PlanNode,
        props: &Expr,
        slot: usize,
        skip: Option<&str>,
        scope: &Scope,
    ) -> Result<PlanNode> {
        let map = match &props.kind {
            ExprKind::Map(entries) => {
                // The key a lookup already matched is not tested again, once (a key written twice in a pattern,
                // `{name: 'a', name: 'b'}`, must match both values, as in Neo4j).
                let mut skip = skip;
                let mut entries: Vec<(Ident, Expr)> = entries
                    .iter()
                    .filter(|(k, _)| {
                        let skipped = Some(k.name.as_str()) == skip;
                        if skipped {
                            skip = None;
                        }
                        !skipped
                    })
                    .cloned()
                    .collect();
                if entries.is_empty() {
                    return Ok(plan);
                }
                // A key written again is tested by a filter of its own.
                let repeated =
                    (1..entries.len()).find(|&i| entries[..i].iter().any(|(k, _)| k.name == entries[i].0.name));
                if let Some(i) = repeated {
                    let rest = entries.split_off(i);
                    let first = Expr::new(ExprKind::Map(entries), props.span);
                    let plan = self.property_filter(plan, &first, slot, None, scope)?;
                    let rest = Expr::new(ExprKind::Map(rest), props.span);
                    return self.property_filter(plan, &rest, slot, None, scope);
                }
                let mut out = Vec::new();
                for (k, v) in &entries {
                    out.push((Token::new(k.name.as_str()), self.expr(v, scope, &mut AggMode::Forbidden)?));
                }
                CExpr::Map(out)
            }
            _ => self.expr(props, scope, &mut AggMode::Forbidden)?,
        };
        let predicate = CExpr::PropsMatch(Box::new(CExpr::Slot(slot)), Box::new(map));
        // A map naming a variable of the MATCH that is not bound yet would read it as null: it waits for it.
        if let Some(names) = mentioned(props).filter(|names| !names.is_disjoint(&self.unbound)) {
            self.deferred_props.push((names, predicate));
            return Ok(plan);
        }
        Ok(PlanNode::Filter { input: Box::new(plan), predicate })
    }

    #[allow(clippy::too_many_arguments)]
    fn pattern_part(
        &mut self,
        mut plan: PlanNode,
        part: &PatternPart,
        scope: &mut Scope,
        bound: &mut HashSet<String>,
        declared: &HashSet<String>,
        pending: &mut Vec<Pending>,
        rels_here: &mut MatchRels,
    ) -> Result<PlanNode> {
        let el = &part.element;
        let mut nodes: Vec<&NodePattern> = vec![&el.start];
        nodes.extend(el.chain.iter().map(|(_, n)| n));
        let is_bound =
            |n: &NodePattern, bound: &HashSet<String>| n.variable.as_ref().is_some_and(|v| bound.contains(&v.name));
        let node_slots: Vec<usize> = nodes.iter().map(|n| self.element_slot(&n.variable, scope)).collect();
        let rel_slots: Vec<usize> = el.chain.iter().map(|(r, _)| self.element_slot(&r.variable, scope)).collect();

        if part.kind != PathKind::Normal {
            return self.shortest_path(plan, part, scope, bound, declared, pending, &node_slots, &rel_slots);
        }

        // Where to start: a bound node, else a node by id, else a node with a key lookup, else a labelled node,
        // else the first.
        let by_id = |p: &Pending, v: &str| {
            matches!(&p.expr.kind, ExprKind::Binary(BinaryOp::Eq, a, b)
                if [a, b].iter().any(|x| matches!(&x.kind, ExprKind::Function { name, args, .. }
                    if name == "id" && args.len() == 1 && matches!(&args[0].kind, ExprKind::Variable(n) if n == v))))
        };
        let property_equality = |n: &NodePattern| {
            n.variable.as_ref().is_some_and(|v| {
                pending.iter().any(|p| {
                    matches!(&p.expr.kind, ExprKind::Binary(BinaryOp::Eq, a, b)
                        if [a, b].iter().any(|x| property_of(x, &v.name).is_some()))
                })
            })
        };
        let lookup_start = (0..nodes.len())
            .find(|&i| is_bound(nodes[i], bound))
            .or_else(|| {
                (0..nodes.len())
                    .find(|&i| nodes[i].variable.as_ref().is_some_and(|v| pending.iter().any(|p| by_id(p, &v.name))))
            })
            .or_else(|| self.rarest(&nodes, |n| !n.labels.is_empty() && n.properties.is_some()))
            .or_else(|| self.rarest(&nodes, |n| !n.labels.is_empty() && property_equality(n)));
        // Without a node to look up, a relationship a property index finds is better than any scan.
        let rel_start = match lookup_start {
            Some(_) => None,
            None => self.rel_index_start(el, pending, bound, declared, scope)?,
        };
        let start = lookup_start
            .or_else(|| self.rarest(&nodes, |n| !n.labels.is_empty()))
            // Without labels, a node whose properties are given narrows the scan before any expansion (the far
            // end of `(a)-[*]-(b {id: 3})` rather than every path from every node).
            .or_else(|| (0..nodes.len()).find(|&i| nodes[i].properties.is_some() || property_equality(nodes[i])))
            .unwrap_or(0);

        // The first node bound (the relationship's left one when the pattern starts at a relationship), and
        // the chain positions already walked on each side of it.
        let (first, walked) = match rel_start {
            Some(rel_start) => {
                let at = rel_start.at;
                plan = self.start_relationship(plan, el, rel_start, &node_slots, &rel_slots, scope, bound)?;
                rels_here.slots.push(rel_slots[at]);
                (at, 1)
            }
            None => {
                let start_np = nodes[start];
                let s = node_slots[start];
                plan = if is_bound(start_np, bound) {
                    self.node_filters(plan, start_np, s, false, None, scope)?
                } else {
                    self.start_node(plan, start_np, s, pending, bound, declared, scope)?
                };
                (start, 0)
            }
        };
        plan = self.flush(plan, pending, bound, declared, scope)?;

        // Rightwards from the start, then leftwards.
        let steps: Vec<(usize, usize, usize, bool)> = (first + walked..el.chain.len())
            .map(|i| (i, i, i + 1, false))
            .chain((0..first).rev().map(|i| (i, i + 1, i, true)))
            .collect();
        for (ri, from, to, reversed) in steps {
            let rp = &el.chain[ri].0;
            let to_np = nodes[to];
            let to_bound = is_bound(to_np, bound);
            let rel_bound = rp.variable.as_ref().is_some_and(|v| bound.contains(&v.name));
            let types: Vec<Token> = rp.types.iter().map(|t| Token::new(t.name.as_str())).collect();
            let dir = to_dir(rp.direction, reversed);
            let distinct_from = rels_here.slots.clone();
            match rp.length {
                None => {
                    plan = PlanNode::Expand {
                        input: Box::new(plan),
                        from: node_slots[from],
                        rel: rel_slots[ri],
                        to: node_slots[to],
                        dir,
                        types,
                        to_bound,
                        rel_bound,
                        distinct_from,
                        to_labels: Vec::new(),
                    };
                    if let Some(test) = &rp.type_expr {
                        plan = PlanNode::Filter { input: Box::new(plan), predicate: type_test(rel_slots[ri], test) };
                    }
                    if let Some(d) = &rp.dynamic_type {
                        let args =
                            vec![CExpr::Slot(rel_slots[ri]), self.expr(&d.expr, scope, &mut AggMode::Forbidden)?];
                        let test = if d.any {
                            crate::expr::GraphFn::HasAnyComputedType
                        } else {
                            crate::expr::GraphFn::HasComputedType
                        };
                        let predicate = CExpr::Graph(test, args);
                        plan = PlanNode::Filter { input: Box::new(plan), predicate };
                    }
                    if let Some(props) = &rp.properties {
                        plan = self.property_filter(plan, props, rel_slots[ri], None, scope)?;
                    }
                }
                Some(_) if rp.dynamic_type.is_some() => {
                    return Err(self.error(
                        rp.span,
                        CypherError::syntax(
                            "UnsupportedFeature",
                            "a computed relationship type is supported on a single relationship, not a path",
                        ),
                    ))
                }
                Some((min, max)) => {
                    let rel_scratch = self.slot();
                    // A quantified path pattern's relationship map may name the repetition's nodes: it is checked
                    // with the rest of the repetition's condition.
                    let props = match &rp.properties {
                        None => None,
                        Some(_) if rp.hop.is_some() => None,
                        Some(props) => {
                            let map = self.expr(props, scope, &mut AggMode::Forbidden)?;
                            Some(CExpr::PropsMatch(Box::new(CExpr::Slot(rel_scratch)), Box::new(map)))
                        }
                    };
                    // A type expression holds for every relationship of the path, like the property map.
                    let mut rel_filter = match (props, rp.type_expr.as_ref().map(|t| type_test(rel_scratch, t))) {
                        (Some(a), Some(b)) => Some(CExpr::And(Box::new(b), Box::new(a))),
                        (a, b) => a.or(b),
                    };
                    // A quantified path pattern: each repetition's nodes go into scratch slots of their own.
                    let (now, later) = match &rp.hop {
                        Some(hop) => self.split_repetition_predicate(hop, rp, scope, declared),
                        None => (None, Vec::new()),
                    };
                    let cycle = match &rp.hop {
                        Some(hop) if !hop.steps.is_empty() => {
                            Some(Box::new(self.hop_cycle(hop, now.as_ref(), scope, declared)?))
                        }
                        _ => None,
                    };
                    let hop_nodes = match &rp.hop {
                        Some(hop) if hop.steps.is_empty() => {
                            let (from_scratch, to_scratch) = (self.slot(), self.slot());
                            let slots = (from_scratch, rel_scratch, to_scratch);
                            if let Some(condition) =
                                self.hop_condition(hop, rp, now.as_ref(), slots, scope, declared)?
                            {
                                rel_filter = Some(match rel_filter {
                                    Some(f) => CExpr::And(Box::new(f), Box::new(condition)),
                                    None => condition,
                                });
                            }
                            Some((from_scratch, to_scratch))
                        }
                        _ => None,
                    };
                    plan = PlanNode::VarExpand {
                        input: Box::new(plan),
                        from: node_slots[from],
                        rel: rel_slots[ri],
                        to: node_slots[to],
                        dir,
                        types,
                        min: min.unwrap_or(1),
                        max,
                        to_bound,
                        rel_scratch,
                        rel_filter,
                        distinct_from,
                        reverse: reversed,
                        rel_bound,
                        list_unread: rp.variable.is_none()
                            && part.variable.is_none()
                            && rp.hop.is_none()
                            && rels_here.slots.len() + 1 == rels_here.total,
                        hop_nodes,
                        cycle,
                        to_labels: Vec::new(),
                    };
                    if let Some(hop) = &rp.hop {
                        self.defer_repetition_conditions(&later, hop, rp, rel_slots[ri], scope)?;
                        plan = self.bind_group_nodes(plan, hop, node_slots[ri], rel_slots[ri], scope, bound);
                    }
                }
            }
            rels_here.slots.push(rel_slots[ri]);
            if let Some(v) = &rp.variable {
                bound.insert(v.name.clone());
            }
            if !to_bound {
                plan = self.node_filters(plan, to_np, node_slots[to], false, None, scope)?;
                if let Some(v) = &to_np.variable {
                    bound.insert(v.name.clone());
                }
            } else {
                plan = self.node_filters(plan, to_np, node_slots[to], false, None, scope)?;
            }
            plan = self.flush(plan, pending, bound, declared, scope)?;
        }
        if let Some(p) = &part.variable {
            let slot = scope.get(&p.name).expect("declared").slot;
            plan = PlanNode::Project {
                input: Box::new(plan),
                items: vec![(CExpr::PathOf { nodes: node_slots, rels: rel_slots }, slot)],
            };
            bound.insert(p.name.clone());
            plan = self.flush(plan, pending, bound, declared, scope)?;
        }
        Ok(plan)
    }
}

/// The relationships of one MATCH: the slots of those planned so far, which each later one must differ from, and
/// how many there are in all.
struct MatchRels {
    slots: Vec<usize>,
    total: usize,
}

/// The test of a relationship type expression (`[:!R]`, `[:%]`) on the relationship in `slot`.
pub(super) fn type_test(slot: usize, test: &crate::ast::LabelExpr) -> CExpr {
    CExpr::LabelTest(Box::new(CExpr::Slot(slot)), crate::expr::label_test(test))
}
