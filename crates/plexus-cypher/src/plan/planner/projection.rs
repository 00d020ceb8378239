//! The planner's WITH and RETURN: projections, grouping and aggregation, DISTINCT, ORDER BY, SKIP and
//! LIMIT, with the checks on what an aggregating projection may name.

use super::*;

impl Planner<'_> {
    /// WITH and RETURN. The last `carried.len()` items of `p` are outer variables a subquery carries past a `WITH`
    /// (`Planner::carrying_persistent`), with their slots in the subquery's argument row and in `scope`.
    pub(super) fn projection(
        &mut self,
        input: PlanNode,
        p: &Projection,
        scope: &Scope,
        is_with: bool,
        carried: &[(usize, usize)],
    ) -> Result<(PlanNode, Scope, Vec<String>)> {
        // The projected items: (column name, expression AST or an existing variable).
        let mut items: Vec<(String, Option<&Expr>, Option<crate::plan::planner::Var>, Span)> = Vec::new();
        if p.star {
            let vars = scope.visible();
            if vars.is_empty() && p.items.is_empty() && !is_with {
                return Err(self.error(
                    p.span,
                    CypherError::syntax(
                        "NoVariablesInScope",
                        format!(
                            "{} * is not allowed when there are no variables in scope",
                            if is_with { "WITH" } else { "RETURN" }
                        ),
                    ),
                ));
            }
            for v in vars {
                items.push((v.name.clone(), None, Some(v), p.span));
            }
        }
        let mut restated = HashSet::new();
        for item in &p.items {
            if matches!(item.expr.kind, ExprKind::PatternPredicate(_)) {
                return Err(self.error(
                    item.expr.span,
                    CypherError::syntax(
                        "UnexpectedSyntax",
                        "a pattern cannot be projected; use a pattern comprehension or EXISTS",
                    ),
                ));
            }
            if is_with && item.alias.is_none() && !matches!(item.expr.kind, ExprKind::Variable(_)) {
                return Err(self.error(
                    item.expr.span,
                    CypherError::syntax("NoExpressionAlias", "expression in WITH must be aliased (use AS)"),
                ));
            }
            // `RETURN *, n` names `n` twice, once through the star: one column, as in Neo4j (once only).
            let restates_star = p.star
                && matches!(&item.expr.kind, ExprKind::Variable(v) if v == item.name())
                && items.iter().any(|(name, e, _, _)| e.is_none() && name == item.name())
                && restated.insert(item.name());
            if !restates_star {
                items.push((item.name().to_string(), Some(&item.expr), None, item.expr.span));
            }
        }
        let mut seen = HashSet::new();
        for (name, _, _, span) in &items {
            if !seen.insert(name.clone()) {
                return Err(self.error(
                    *span,
                    CypherError::syntax(
                        "ColumnNameConflict",
                        format!("multiple result columns with the same name `{name}`"),
                    ),
                ));
            }
        }
        let aggregating = items.iter().any(|(_, e, _, _)| e.is_some_and(contains_aggregate));
        if aggregating {
            self.check_aggregation_keys(&items.iter().map(|(_, e, _, s)| (*e, *s)).collect::<Vec<_>>(), scope)?;
        }
        let mut new_scope = Scope::default();
        let mut out_slots = Vec::with_capacity(items.len());
        let mut plan = input;
        let mut deferred = None;
        if aggregating {
            let mut keys = Vec::new();
            let mut post = Vec::new();
            let mut specs = Vec::new();
            for (name, e, var, _) in &items {
                let slot = self.slot();
                match (e, var) {
                    (Some(e), _) if contains_aggregate(e) => {
                        let mut mode = AggMode::Collect(std::mem::take(&mut specs));
                        let c = self.expr(e, scope, &mut mode)?;
                        if let AggMode::Collect(s) = mode {
                            specs = s;
                        }
                        post.push((c, slot));
                    }
                    (Some(e), _) => keys.push((self.expr(e, scope, &mut AggMode::Forbidden)?, slot)),
                    (None, Some(v)) => keys.push((CExpr::Slot(v.slot), slot)),
                    _ => unreachable!(),
                }
                new_scope.add(name, slot, self.kind_of(e, var.as_ref(), scope));
                out_slots.push(slot);
            }
            // Keys that are all carried hold one value per run of the subquery: no key of the projection's own.
            let per_run = if keys.len() == carried.len() { carried.to_vec() } else { Vec::new() };
            plan = PlanNode::Aggregate { input: Box::new(plan), keys, aggs: specs, per_run };
            if !post.is_empty() {
                plan = PlanNode::Project { input: Box::new(plan), items: post };
            }
        } else {
            let mut proj = Vec::new();
            for (name, e, var, _) in &items {
                let slot = self.slot();
                let c = match (e, var) {
                    (Some(e), _) => self.expr(e, scope, &mut AggMode::Forbidden)?,
                    (None, Some(v)) => CExpr::Slot(v.slot),
                    _ => unreachable!(),
                };
                proj.push((c, slot));
                new_scope.add(name, slot, self.kind_of(e, var.as_ref(), scope));
                out_slots.push(slot);
            }
            // Under SKIP or LIMIT, the items a sort does not read wait until SKIP and LIMIT have kept their rows
            // (see `defer_projection`): a row they drop is never produced, so its items never run (as in Neo4j,
            // `UNWIND [1, 0] AS x RETURN 1 / x LIMIT 1` is 1, not a division by zero), and a sort under a LIMIT
            // computes for the rows it keeps only what it does not sort by.
            if p.distinct || (p.skip.is_none() && p.limit.is_none()) {
                plan = PlanNode::Project { input: Box::new(plan), items: proj };
            } else {
                deferred = Some(proj);
            }
            if !p.distinct {
                // The record LOAD CSV read stays the rows' own through a projection that keeps the rows.
                for hidden in [CSV_LINE, CSV_FILE] {
                    if let Some(v) = scope.get(hidden) {
                        new_scope.add(hidden, v.slot, v.kind);
                    }
                }
            }
        }
        if p.distinct {
            plan = PlanNode::Distinct { input: Box::new(plan), slots: out_slots.clone() };
        }
        if !p.order_by.is_empty() {
            // ORDER BY sees the projected names and, unless the projection aggregated or was DISTINCT, the
            // variables from before it too. An expression written exactly like a projected one is that column.
            let mut order_scope = if aggregating || p.distinct { Scope::default() } else { scope.clone() };
            for v in &new_scope.vars {
                order_scope.add(&v.name, v.slot, v.kind);
            }
            // New names shadow old ones here: an item's expression stands for its column only while every
            // variable it names still means what it did before the projection (in `RETURN -x AS x, x AS y ORDER
            // BY x`, the key is the new `x`, not the item `x AS y`).
            let renamed: HashSet<&str> = items
                .iter()
                .filter(|(name, e, var, _)| {
                    let passes_through = match e {
                        Some(e) => matches!(&e.kind, ExprKind::Variable(v) if v == name),
                        None => var.as_ref().is_some_and(|v| &v.name == name),
                    };
                    !passes_through
                })
                .map(|(name, _, _, _)| name.as_str())
                .collect();
            let unshadowed = |e: &Expr| {
                crate::plan::pattern::mentioned(e)
                    .is_some_and(|names| names.iter().all(|n| !renamed.contains(n.as_str())))
            };
            let mut keys = Vec::new();
            for s in &p.order_by {
                let text = &self.text[s.expr.span.start..s.expr.span.end];
                let same = items.iter().position(|(_, e, _, _)| {
                    e.is_some_and(|e| &self.text[e.span.start..e.span.end] == text && unshadowed(e))
                });
                let c = match same {
                    Some(i) => CExpr::Slot(out_slots[i]),
                    None => {
                        // After aggregation, parts written like a projected item (an aggregate, a grouping
                        // key) stand for that item's column.
                        if aggregating || p.distinct {
                            self.substitutions = items
                                .iter()
                                .zip(&out_slots)
                                .filter_map(|((_, e, _, _), slot)| {
                                    let e = (*e)?;
                                    let simple = matches!(e.kind, ExprKind::Variable(_) | ExprKind::Property(..))
                                        || is_aggregate_call(e);
                                    (simple && unshadowed(e))
                                        .then(|| (self.text[e.span.start..e.span.end].to_string(), *slot))
                                })
                                .collect();
                        }
                        let compiled = self.expr(&s.expr, &order_scope, &mut AggMode::Forbidden);
                        self.substitutions.clear();
                        compiled.map_err(|e| {
                            if e.detail == "InvalidAggregation" {
                                CypherError { kind: crate::error::ErrorKind::SyntaxError, ..e }
                            } else {
                                e
                            }
                        })?
                    }
                };
                keys.push((c, s.descending));
            }
            let late = deferred.take().map(|items| {
                let (early, late) = defer_projection(items, &keys);
                if !early.is_empty() {
                    plan = PlanNode::Project {
                        input: Box::new(std::mem::replace(&mut plan, PlanNode::Start)),
                        items: early,
                    };
                }
                late
            });
            plan = PlanNode::Sort { input: Box::new(plan), keys };
            deferred = late;
        }
        if let Some(skip) = &p.skip {
            let count = self.count_expr(skip, "SKIP")?;
            plan = PlanNode::Skip { input: Box::new(plan), count };
        }
        if let Some(limit) = &p.limit {
            let count = self.count_expr(limit, "LIMIT")?;
            plan = PlanNode::Limit { input: Box::new(plan), count };
        }
        if let Some(late) = deferred.filter(|items| !items.is_empty()) {
            plan = PlanNode::Project { input: Box::new(plan), items: late };
        }
        if let Some(pred) = &p.predicate {
            // Like ORDER BY, the WHERE of a WITH that neither aggregates nor de-duplicates also sees the
            // variables from before it.
            let mut where_scope = if aggregating { Scope::default() } else { scope.clone() };
            for v in &new_scope.vars {
                where_scope.add(&v.name, v.slot, v.kind);
            }
            self.check_predicate(pred)?;
            let c = self.expr(pred, &where_scope, &mut AggMode::Forbidden)?;
            plan = PlanNode::Filter { input: Box::new(plan), predicate: c };
        }
        let columns: Vec<String> = items.iter().map(|(n, _, _, _)| n.clone()).collect();
        if !is_with {
            plan = PlanNode::Produce { input: Box::new(plan), columns: out_slots };
        }
        Ok((plan, new_scope, columns))
    }

    /// In a projection that aggregates, an item mixing aggregates with other expressions may only use, outside
    /// the aggregates, variables that are themselves projected as grouping keys. A variable not defined at all
    /// is reported as such, as Neo4j does, rather than as a missing grouping key.
    fn check_aggregation_keys(&self, items: &[(Option<&Expr>, Span)], scope: &Scope) -> Result<()> {
        let text = |e: &Expr| &self.text[e.span.start..e.span.end];
        // Grouping keys a mixed item may use: projected variables and projected property reads.
        let keys: HashSet<&str> = items
            .iter()
            .filter_map(|(e, _)| *e)
            .filter(|e| !contains_aggregate(e) && matches!(e.kind, ExprKind::Variable(_) | ExprKind::Property(..)))
            .map(text)
            .collect();
        for (e, _) in items {
            let Some(e) = e else { continue };
            if !contains_aggregate(e) || is_aggregate_call(e) {
                continue;
            }
            let mut outside = Vec::new();
            free_outside_aggregates(e, &keys, self.text, &mut outside);
            if let Some(undefined) = outside.iter().find(|(name, _)| scope.get(name).is_none()) {
                return Err(self.undefined(&undefined.0, undefined.1));
            }
            if let Some(bad) = outside.first() {
                return Err(self.error(
                    bad.1,
                    CypherError::syntax(
                        "AmbiguousAggregationExpression",
                        format!("`{}` is used next to an aggregate but is not a projected grouping key", bad.0),
                    ),
                ));
            }
        }
        Ok(())
    }

    fn kind_of(&self, e: &Option<&Expr>, var: Option<&Var>, scope: &Scope) -> VarKind {
        if let Some(v) = var {
            return v.kind;
        }
        match e {
            Some(e) => infer_kind(e, scope),
            None => VarKind::Unknown,
        }
    }
}

/// A projected expression and the slot it is written to.
type ProjectItem = (CExpr, usize);

/// Splits the items of a projection under `ORDER BY ... LIMIT` into those the sort keys read, evaluated before
/// the sort, and the rest, evaluated only for the rows the LIMIT keeps: `RETURN a.name, b.name, r.weight ORDER
/// BY r.weight DESC LIMIT 5` reads two properties for five rows instead of for every row. (Rows the sort drops
/// then never evaluate those items, so an error one of them would raise there is not raised, as in Neo4j.) When
/// what a key reads cannot be known, every item stays before the sort.
fn defer_projection(items: Vec<ProjectItem>, keys: &[(CExpr, bool)]) -> (Vec<ProjectItem>, Vec<ProjectItem>) {
    let mut read = Vec::new();
    for (key, _) in keys {
        match crate::plan::fuse::slot_deps(key) {
            Some(deps) => read.extend(deps),
            None => return (items, Vec::new()),
        }
    }
    items.into_iter().partition(|(_, slot)| read.contains(slot))
}

fn is_aggregate_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::CountStar => true,
        ExprKind::Function { name, .. } => crate::plan::AggFn::from_name(name).is_some(),
        _ => false,
    }
}

/// Variables (with their spans) an expression uses outside of aggregate calls and outside of the grouping keys
/// it may repeat.
fn free_outside_aggregates(e: &Expr, keys: &HashSet<&str>, text: &str, out: &mut Vec<(String, Span)>) {
    if is_aggregate_call(e) || keys.contains(&text[e.span.start..e.span.end]) {
        return;
    }
    let mut go = |x: &Expr| free_outside_aggregates(x, keys, text, out);
    match &e.kind {
        ExprKind::Variable(n) => out.push((n.clone(), e.span)),
        ExprKind::Property(b, _) => go(b),
        ExprKind::List(items) => items.iter().for_each(go),
        ExprKind::Map(entries) => entries.iter().for_each(|(_, v)| go(v)),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            go(a);
            go(b);
        }
        ExprKind::Unary(_, a)
        | ExprKind::IsNull { expr: a, .. }
        | ExprKind::TypeTest { expr: a, .. }
        | ExprKind::HasLabels(a, _)
        | ExprKind::LabelTest(a, _) => go(a),
        ExprKind::Function { args, .. } => args.iter().for_each(go),
        ExprKind::Slice(a, from, to) => {
            go(a);
            from.iter().chain(to).for_each(|x| go(x));
        }
        // `o {.age, c: count(*)}` reads `o` outside its aggregate as much as `o.age + count(*)` does.
        ExprKind::MapProjection { base, items } => {
            go(base);
            for item in items {
                if let MapProjectionItem::Entry(_, v) = item {
                    go(v);
                }
            }
        }
        ExprKind::ListComprehension { variable, list, filter, map } => {
            go(list);
            let body: Vec<&Expr> = filter.iter().chain(map).map(|x| &**x).collect();
            free_outside_binding(&body, &[&variable.name], keys, text, out);
        }
        ExprKind::Quantified { variable, list, predicate, .. } => {
            go(list);
            free_outside_binding(&[predicate], &[&variable.name], keys, text, out);
        }
        ExprKind::Reduce { accumulator, init, variable, list, expr } => {
            go(init);
            go(list);
            free_outside_binding(&[expr], &[&variable.name, &accumulator.name], keys, text, out);
        }
        ExprKind::Case { operand, whens, otherwise } => {
            if let Some(o) = operand {
                go(o);
            }
            for (w, t) in whens {
                go(w);
                go(t);
            }
            if let Some(o) = otherwise {
                go(o);
            }
        }
        _ => {}
    }
}

/// [`free_outside_aggregates`] of `body`, an expression's part that binds `bound` (a comprehension's variable,
/// `reduce`'s accumulator): those names are its own, not the query's.
fn free_outside_binding(
    body: &[&Expr],
    bound: &[&str],
    keys: &HashSet<&str>,
    text: &str,
    out: &mut Vec<(String, Span)>,
) {
    let mut inner = Vec::new();
    for x in body {
        free_outside_aggregates(x, keys, text, &mut inner);
    }
    out.extend(inner.into_iter().filter(|(n, _)| !bound.contains(&n.as_str())));
}
