//! Compiling AST expressions into [`CExpr`]: resolving variables to slots, checking function names and arities,
//! extracting aggregates, and planning the subqueries expressions contain.

use std::sync::Arc;

use super::operand_types;
use super::planner::{AggMode, Planner, Scope, VarKind};
use super::{AggFn, AggSpec, PlanNode};
use crate::ast::*;
use crate::error::{CypherError, Position, Result};
use crate::expr::{CExpr, GraphFn, MapProjItem, SubqueryKind};
use crate::functions;
use crate::lexer::Span;
use crate::token::Token;

const TEMPORAL_FUNCTIONS: [&str; 6] = ["date", "localtime", "time", "localdatetime", "datetime", "duration"];

fn graph_fn(name: &str) -> Option<GraphFn> {
    Some(match name {
        "labels" => GraphFn::Labels,
        "type" => GraphFn::Type,
        "id" => GraphFn::Id,
        "elementid" => GraphFn::ElementId,
        "keys" => GraphFn::Keys,
        "properties" => GraphFn::Properties,
        "startnode" => GraphFn::StartNode,
        "endnode" => GraphFn::EndNode,
        "length" => GraphFn::Length,
        "exists" => GraphFn::Exists,
        "timestamp" => GraphFn::Timestamp,
        "randomuuid" => GraphFn::RandomUuid,
        _ => return None,
    })
}

/// Whether a function's first argument is, as far as can be told before running, of a kind it never accepts.
fn argument_kind_is_wrong(name: &str, kind: VarKind) -> bool {
    use VarKind::*;
    match name {
        "labels" => matches!(kind, Rel | RelList | Path | Map | Scalar),
        "type" => matches!(kind, Node | RelList | Path | Map | Scalar),
        "length" => matches!(kind, Node | Rel | Map),
        "size" => matches!(kind, Path | Node | Rel),
        "properties" | "keys" => matches!(kind, Scalar | Path | RelList),
        "nodes" | "relationships" => matches!(kind, Node | Rel | Map),
        "startnode" | "endnode" => matches!(kind, Node | Path | Map | Scalar),
        _ => false,
    }
}

/// Whether an expression contains an aggregate call (outside nested subqueries).
pub(crate) fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let ExprKind::Function { name, .. } = &x.kind {
            if AggFn::from_name(name).is_some() {
                found = true;
            }
        }
        if matches!(x.kind, ExprKind::CountStar) {
            found = true;
        }
    });
    found
}

/// Visits `e` and its sub-expressions (not entering subqueries or pattern comprehensions).
pub(crate) fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    let mut go = |x: &Expr| walk(x, f);
    match &e.kind {
        ExprKind::Property(b, _) => go(b),
        ExprKind::List(items) => items.iter().for_each(go),
        ExprKind::Map(entries) => entries.iter().for_each(|(_, v)| go(v)),
        ExprKind::Index(a, b) => {
            go(a);
            go(b)
        }
        ExprKind::Slice(a, b, c) => {
            go(a);
            if let Some(b) = b {
                go(b)
            }
            if let Some(c) = c {
                go(c)
            }
        }
        ExprKind::Unary(_, a)
        | ExprKind::IsNull { expr: a, .. }
        | ExprKind::TypeTest { expr: a, .. }
        | ExprKind::HasLabels(a, _)
        | ExprKind::LabelTest(a, _) => go(a),
        ExprKind::Binary(_, a, b) => {
            go(a);
            go(b)
        }
        ExprKind::Function { args, .. } => args.iter().for_each(go),
        ExprKind::Case { operand, whens, otherwise } => {
            if let Some(o) = operand {
                go(o)
            }
            for (w, t) in whens {
                go(w);
                go(t)
            }
            if let Some(o) = otherwise {
                go(o)
            }
        }
        ExprKind::ListComprehension { list, filter, map, .. } => {
            go(list);
            if let Some(x) = filter {
                go(x)
            }
            if let Some(x) = map {
                go(x)
            }
        }
        ExprKind::Quantified { list, predicate, .. } => {
            go(list);
            go(predicate)
        }
        ExprKind::Reduce { init, list, expr, .. } => {
            go(init);
            go(list);
            go(expr)
        }
        ExprKind::MapProjection { base, items } => {
            go(base);
            for i in items {
                if let MapProjectionItem::Entry(_, v) = i {
                    go(v)
                }
            }
        }
        _ => {}
    }
}

impl Planner<'_> {
    pub(super) fn error(&self, span: Span, e: CypherError) -> CypherError {
        e.at(Position::locate(self.text, span.start))
    }

    pub(super) fn undefined(&self, name: &str, span: Span) -> CypherError {
        self.error(span, CypherError::semantic("UndefinedVariable", format!("variable `{name}` not defined")))
    }

    pub(crate) fn expr(&mut self, e: &Expr, scope: &Scope, agg: &mut AggMode) -> Result<CExpr> {
        if !self.substitutions.is_empty() {
            let text = &self.text[e.span.start..e.span.end];
            if let Some((_, slot)) = self.substitutions.iter().find(|(t, _)| t == text) {
                return Ok(CExpr::Slot(*slot));
            }
        }
        Ok(match &e.kind {
            ExprKind::Literal(v) => CExpr::Const(v.clone()),
            ExprKind::Parameter(name) => {
                self.params.entry(name.clone()).or_insert(Some(e.span.start));
                CExpr::Param(Arc::from(name.as_str()))
            }
            ExprKind::Variable(name) => match scope.get(name) {
                Some(v) => CExpr::Slot(v.slot),
                None => return Err(self.undefined(name, e.span)),
            },
            ExprKind::Property(base, key) => {
                let kind = super::planner::infer_kind(base, scope);
                let message = format!("cannot read property `{}` of this value", key.name);
                if matches!(kind, VarKind::Path | VarKind::RelList) {
                    return Err(self.error(e.span, CypherError::syntax("InvalidArgumentType", message)));
                }
                if kind == VarKind::Scalar {
                    return Err(self.error(
                        e.span,
                        CypherError::type_error("InvalidArgumentType", message)
                            .in_phase(crate::error::Phase::CompileTime),
                    ));
                }
                let b = self.expr(base, scope, agg)?;
                CExpr::Property(Box::new(b), Token::new(key.name.as_str()))
            }
            ExprKind::List(items) => {
                CExpr::List(items.iter().map(|i| self.expr(i, scope, agg)).collect::<Result<_>>()?)
            }
            ExprKind::Map(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    out.push((Token::new(k.name.as_str()), self.expr(v, scope, agg)?));
                }
                CExpr::Map(out)
            }
            ExprKind::Index(a, b) => {
                CExpr::Index(Box::new(self.expr(a, scope, agg)?), Box::new(self.expr(b, scope, agg)?))
            }
            ExprKind::Slice(a, b, c) => {
                let a = self.expr(a, scope, agg)?;
                let b = b.as_ref().map(|x| self.expr(x, scope, agg).map(Box::new)).transpose()?;
                let c = c.as_ref().map(|x| self.expr(x, scope, agg).map(Box::new)).transpose()?;
                CExpr::Slice(Box::new(a), b, c)
            }
            ExprKind::Unary(op, a) => {
                match op {
                    UnaryOp::Not => self.check_operand(operand_types::NOT, a, true)?,
                    UnaryOp::Neg => self.check_operand(operand_types::NEGATION, a, false)?,
                    UnaryOp::Plus => {}
                }
                let a = Box::new(self.expr(a, scope, agg)?);
                match op {
                    UnaryOp::Not => CExpr::Not(a),
                    UnaryOp::Neg => match *a {
                        CExpr::Const(crate::value::Value::Int(i)) if i != i64::MIN => {
                            CExpr::Const(crate::value::Value::Int(-i))
                        }
                        CExpr::Const(crate::value::Value::Float(f)) => CExpr::Const(crate::value::Value::Float(-f)),
                        a => CExpr::Neg(Box::new(a)),
                    },
                    UnaryOp::Plus => CExpr::Plus(a),
                }
            }
            ExprKind::Binary(op, a, b) => {
                if *op == BinaryOp::In {
                    let bad = match &b.kind {
                        ExprKind::Literal(v) => !v.is_null(),
                        ExprKind::Map(_) => true,
                        _ => false,
                    };
                    if bad {
                        return Err(self.error(
                            b.span,
                            CypherError::syntax("InvalidArgumentType", "IN expects a list on its right"),
                        ));
                    }
                }
                if let Some(takes) = operand_types::binary(*op) {
                    self.check_operand(takes, a, true)?;
                    self.check_operand(takes, b, true)?;
                }
                let (a, b) = (Box::new(self.expr(a, scope, agg)?), Box::new(self.expr(b, scope, agg)?));
                match op {
                    BinaryOp::And => CExpr::And(a, b),
                    BinaryOp::Or => CExpr::Or(a, b),
                    BinaryOp::Xor => CExpr::Xor(a, b),
                    BinaryOp::In if crate::expr::constant_in::is_statement_constant(&b) => CExpr::InConstant(a, b),
                    op => CExpr::Binary(*op, a, b),
                }
            }
            ExprKind::IsNull { expr, .. } if matches!(expr.kind, ExprKind::PatternPredicate(_)) => {
                // A pattern here is a predicate (true or false, never null), as in Neo4j 5, which refuses it.
                return Err(self.error(
                    expr.span,
                    CypherError::syntax(
                        "UnexpectedSyntax",
                        "a pattern is a predicate, never null: test it with EXISTS { ... } or as a WHERE condition",
                    ),
                ));
            }
            ExprKind::IsNull { expr, negated } => CExpr::IsNull(Box::new(self.expr(expr, scope, agg)?), *negated),
            ExprKind::TypeTest { expr, ty, negated } => {
                CExpr::TypeTest(Box::new(self.expr(expr, scope, agg)?), Arc::new(ty.clone()), *negated)
            }
            ExprKind::HasLabels(a, labels) => CExpr::HasLabels(
                Box::new(self.expr(a, scope, agg)?),
                labels.iter().map(|l| Token::new(l.name.as_str())).collect(),
            ),
            ExprKind::LabelTest(a, test) => {
                CExpr::LabelTest(Box::new(self.expr(a, scope, agg)?), crate::expr::label_test(test))
            }
            ExprKind::CountStar => match agg {
                AggMode::Collect(specs) => {
                    let slot = self.slot();
                    specs.push(AggSpec { func: AggFn::Count, distinct: false, arg: None, extra: None, slot });
                    CExpr::Slot(slot)
                }
                AggMode::Forbidden => {
                    return Err(self
                        .error(e.span, CypherError::semantic("InvalidAggregation", "aggregation is not allowed here")))
                }
                AggMode::Nested => {
                    return Err(
                        self.error(e.span, CypherError::semantic("NestedAggregation", "aggregations cannot be nested"))
                    )
                }
            },
            ExprKind::Function { name, distinct, args } => return self.function(e, name, *distinct, args, scope, agg),
            ExprKind::Case { operand, whens, otherwise } => {
                let operand = operand.as_ref().map(|o| self.expr(o, scope, agg).map(Box::new)).transpose()?;
                let mut ws = Vec::with_capacity(whens.len());
                for (w, t) in whens {
                    if operand.is_none() {
                        self.check_predicate(w)?;
                    }
                    ws.push((self.expr(w, scope, agg)?, self.expr(t, scope, agg)?));
                }
                let otherwise = otherwise.as_ref().map(|o| self.expr(o, scope, agg).map(Box::new)).transpose()?;
                CExpr::Case { operand, whens: ws, otherwise }
            }
            ExprKind::ListComprehension { variable, list, filter, map } => {
                let list = Box::new(self.expr(list, scope, agg)?);
                let slot = self.slot();
                let inner = scope.with(&variable.name, slot, VarKind::Unknown);
                let filter =
                    filter.as_ref().map(|f| self.expr(f, &inner, &mut AggMode::Forbidden).map(Box::new)).transpose()?;
                let map =
                    map.as_ref().map(|m| self.expr(m, &inner, &mut AggMode::Forbidden).map(Box::new)).transpose()?;
                CExpr::ListComprehension { slot, list, filter, map }
            }
            ExprKind::Quantified { quantifier, variable, list, predicate } => {
                self.check_element_arithmetic(list, &variable.name, predicate)?;
                let list = Box::new(self.expr(list, scope, agg)?);
                let slot = self.slot();
                let inner = scope.with(&variable.name, slot, VarKind::Unknown);
                let predicate = Box::new(self.expr(predicate, &inner, &mut AggMode::Forbidden)?);
                CExpr::Quantified { quantifier: *quantifier, slot, list, predicate }
            }
            ExprKind::Reduce { accumulator, init, variable, list, expr } => {
                let init = Box::new(self.expr(init, scope, agg)?);
                let list = Box::new(self.expr(list, scope, agg)?);
                let (acc, slot) = (self.slot(), self.slot());
                let inner =
                    scope.with(&accumulator.name, acc, VarKind::Unknown).with(&variable.name, slot, VarKind::Unknown);
                let expr = Box::new(self.expr(expr, &inner, &mut AggMode::Forbidden)?);
                CExpr::Reduce { acc, init, slot, list, expr }
            }
            ExprKind::PatternPredicate(pattern) => {
                let mut names: Vec<&Ident> = pattern.start.variable.iter().collect();
                for (r, n) in &pattern.chain {
                    names.extend(r.variable.iter());
                    names.extend(n.variable.iter());
                }
                if let Some(v) = names.into_iter().find(|v| scope.get(&v.name).is_none()) {
                    return Err(self.undefined(&v.name, v.span));
                }
                if let Some(fast) = self.single_edge_predicate(pattern, scope) {
                    return Ok(fast);
                }
                let part = PatternPart {
                    variable: None,
                    kind: PathKind::Normal,
                    element: (**pattern).clone(),
                    predicate: None,
                    span: e.span,
                };
                let mut inner = scope.clone();
                let plan =
                    self.match_patterns(PlanNode::Start, std::slice::from_ref(&part), None, &mut inner, false)?;
                CExpr::Subquery { kind: SubqueryKind::Exists, plan: Arc::new(plan) }
            }
            ExprKind::PatternComprehension { path, pattern, filter, map } => {
                let part = PatternPart {
                    variable: path.clone(),
                    kind: PathKind::Normal,
                    element: (**pattern).clone(),
                    predicate: None,
                    span: e.span,
                };
                let mut inner = scope.clone();
                let plan = self.match_patterns(
                    PlanNode::Start,
                    std::slice::from_ref(&part),
                    filter.as_deref(),
                    &mut inner,
                    false,
                )?;
                let value = self.expr(map, &inner, &mut AggMode::Forbidden)?;
                let slot = self.slot();
                let plan = PlanNode::Produce {
                    input: Box::new(PlanNode::Project { input: Box::new(plan), items: vec![(value, slot)] }),
                    columns: vec![slot],
                };
                CExpr::Subquery { kind: SubqueryKind::Collect, plan: Arc::new(plan) }
            }
            ExprKind::Exists(q) | ExprKind::CountSubquery(q) | ExprKind::CollectSubquery(q) => {
                let kind = match &e.kind {
                    ExprKind::Exists(_) => SubqueryKind::Exists,
                    ExprKind::CountSubquery(_) => SubqueryKind::Count,
                    _ => SubqueryKind::Collect,
                };
                let updates = q.parts.iter().flat_map(|p| &p.clauses).any(|c| {
                    matches!(
                        c,
                        Clause::Create { .. }
                            | Clause::Merge { .. }
                            | Clause::Set { .. }
                            | Clause::Remove { .. }
                            | Clause::Delete { .. }
                            | Clause::Foreach { .. }
                    )
                });
                if updates {
                    return Err(self.error(
                        e.span,
                        CypherError::syntax(
                            "InvalidClauseComposition",
                            "a subquery expression cannot update the graph",
                        ),
                    ));
                }
                // `EXISTS { (a)-[:T]->(b) }` over bound nodes is the pattern predicate `(a)-[:T]->(b)`: answered
                // from the adjacency instead of running a subquery per row.
                if kind == SubqueryKind::Exists {
                    if let [SingleQuery { clauses, .. }] = q.parts.as_slice() {
                        if let [Clause::Match { optional: false, patterns, predicate: None, .. }] = clauses.as_slice() {
                            if let [PatternPart { variable: None, kind: PathKind::Normal, element, .. }] =
                                patterns.as_slice()
                            {
                                if let Some(CExpr::HasEdge { from, to, dir, types, .. }) =
                                    self.single_edge_predicate(element, scope)
                                {
                                    return Ok(CExpr::HasEdge { from, to, dir, types, exists: true });
                                }
                            }
                        }
                    }
                }
                let (plan, columns) = self.subquery(q, scope)?;
                if kind == SubqueryKind::Collect && columns.len() != 1 {
                    return Err(self.error(
                        e.span,
                        CypherError::semantic("InvalidSubquery", "a COLLECT subquery must return exactly one column"),
                    ));
                }
                CExpr::Subquery { kind, plan: Arc::new(plan) }
            }
            ExprKind::MapProjection { base, items } => {
                let b = Box::new(self.expr(base, scope, agg)?);
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(match item {
                        MapProjectionItem::Property(k) => MapProjItem::Property(Arc::from(k.name.as_str())),
                        MapProjectionItem::AllProperties => MapProjItem::AllProperties,
                        MapProjectionItem::Entry(k, v) => {
                            MapProjItem::Entry(Arc::from(k.name.as_str()), self.expr(v, scope, agg)?)
                        }
                        MapProjectionItem::Variable(v) => {
                            let Some(var) = scope.get(&v.name) else { return Err(self.undefined(&v.name, v.span)) };
                            MapProjItem::Entry(Arc::from(v.name.as_str()), CExpr::Slot(var.slot))
                        }
                    });
                }
                CExpr::MapProjection { base: b, items: out }
            }
        })
    }

    /// `(a)-[:T]->(b)` and `(a)-[:T]->()` between plain bound nodes, answered from the adjacency directly.
    fn single_edge_predicate(&self, pattern: &PatternElement, scope: &Scope) -> Option<CExpr> {
        let [(rel, end)] = pattern.chain.as_slice() else { return None };
        let plain = |n: &NodePattern| {
            n.labels.is_empty() && n.label_expr.is_none() && n.dynamic_labels.is_empty() && n.properties.is_none()
        };
        if !plain(&pattern.start)
            || !plain(end)
            || rel.variable.is_some()
            || rel.length.is_some()
            || rel.properties.is_some()
            || rel.type_expr.is_some()
            || rel.dynamic_type.is_some()
            // Evaluation resolves at most 8 type names without allocating.
            || rel.types.len() > 8
        {
            return None;
        }
        let node_slot = |n: &NodePattern| -> Option<Option<usize>> {
            match &n.variable {
                None => Some(None),
                Some(v) => scope
                    .get(&v.name)
                    .filter(|v| matches!(v.kind, VarKind::Node | VarKind::Unknown))
                    .map(|v| Some(v.slot)),
            }
        };
        let from = node_slot(&pattern.start)??;
        let to = node_slot(end)?;
        let dir = match rel.direction {
            RelDirection::Out => plexus_storage::Direction::Out,
            RelDirection::In => plexus_storage::Direction::In,
            RelDirection::Both => plexus_storage::Direction::Both,
        };
        let types = rel.types.iter().map(|t| Token::new(t.name.as_str())).collect();
        Some(CExpr::HasEdge { from, to, dir, types, exists: false })
    }

    /// Arithmetic on the elements of a literal list of strings or booleans is a type error found at compile
    /// time (`all(x IN ['a'] WHERE x % 2 = 0)`).
    fn check_element_arithmetic(&self, list: &Expr, var: &str, predicate: &Expr) -> Result<()> {
        use crate::value::Value as V;
        let ExprKind::List(items) = &list.kind else { return Ok(()) };
        let all = |f: &dyn Fn(&V) -> bool| {
            !items.is_empty() && items.iter().all(|i| matches!(&i.kind, ExprKind::Literal(v) if f(v)))
        };
        let strings = all(&|v| matches!(v, V::String(_)));
        let booleans = all(&|v| matches!(v, V::Bool(_)));
        if !strings && !booleans {
            return Ok(());
        }
        let mut bad = None;
        walk(predicate, &mut |x| {
            if let ExprKind::Binary(op, a, b) = &x.kind {
                let arithmetic = match op {
                    BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod | BinaryOp::Pow => true,
                    BinaryOp::Add => booleans,
                    _ => false,
                };
                let on_var = [a, b].iter().any(|e| matches!(&e.kind, ExprKind::Variable(n) if n == var));
                if arithmetic && on_var && bad.is_none() {
                    bad = Some(x.span);
                }
            }
        });
        match bad {
            Some(span) => Err(self.error(
                span,
                CypherError::syntax("InvalidArgumentType", "arithmetic on the elements of this list is a type error"),
            )),
            None => Ok(()),
        }
    }

    /// A predicate (WHERE, a CASE's WHEN) that is a list or a value that is never boolean by its form is an error
    /// at compile time, as in Neo4j: a list would otherwise pass when it is not empty (the coercion Neo4j keeps
    /// only for values whose type it cannot see), and a number or string fail only once a row arrives.
    pub(crate) fn check_predicate(&self, e: &Expr) -> Result<()> {
        const LISTS: &[&str] = &["range", "keys", "labels", "nodes", "relationships", "split", "tail"];
        let is_list = match &e.kind {
            ExprKind::List(_) | ExprKind::ListComprehension { .. } | ExprKind::PatternComprehension { .. } => true,
            ExprKind::Literal(crate::value::Value::List(_)) => true,
            ExprKind::Function { name, .. } => LISTS.iter().any(|f| name.eq_ignore_ascii_case(f)),
            _ => false,
        };
        if is_list {
            let message = "Coercion of list to boolean is not allowed. Please use `NOT isEmpty(...)` instead.";
            return Err(self.error(e.span, CypherError::syntax("InvalidArgumentType", message)));
        }
        let never = match &e.kind {
            ExprKind::Literal(v) if !matches!(v, crate::value::Value::Bool(_) | crate::value::Value::Null) => {
                Some(v.type_name())
            }
            ExprKind::Map(_) => Some("MAP"),
            _ => None,
        };
        if let Some(kind) = never {
            let message = format!("a predicate must be a boolean, not {kind}");
            return Err(self.error(e.span, CypherError::syntax("InvalidArgumentType", message)));
        }
        Ok(())
    }

    fn function(
        &mut self,
        e: &Expr,
        name: &str,
        distinct: bool,
        args: &[Expr],
        scope: &Scope,
        agg: &mut AggMode,
    ) -> Result<CExpr> {
        let arity_error = |p: &Self, min: usize, max: usize| {
            // As the query spells it (`randomUUID`), where it can be read back; the name here is lower-cased.
            let written = p.text.get(e.span.start..e.span.end).and_then(|t| t.split('(').next()).map(str::trim);
            let shown = written.filter(|w| w.to_lowercase().replace(char::is_whitespace, "") == name).unwrap_or(name);
            p.error(
                e.span,
                CypherError::syntax(
                    "InvalidNumberOfArguments",
                    format!(
                        "function {shown}() takes {} argument(s), got {}",
                        match (min, max) {
                            (min, max) if min == max => min.to_string(),
                            (min, usize::MAX) => format!("at least {min}"),
                            (min, max) => format!("{min} to {max}"),
                        },
                        args.len()
                    ),
                ),
            )
        };
        if let ([arg], "shortestpath" | "allshortestpaths") = (args, name) {
            if let ExprKind::PatternPredicate(pattern) = &arg.kind {
                return self.expr(&shortest_path_subquery(e, pattern, name == "shortestpath"), scope, agg);
            }
        }
        if let Some(func) = AggFn::from_name(name) {
            let (min, max) = match func {
                AggFn::PercentileCont | AggFn::PercentileDisc => (2, 2),
                _ => (1, 1),
            };
            if args.len() < min || args.len() > max {
                return Err(arity_error(self, min, max));
            }
            let specs = match agg {
                AggMode::Collect(specs) => std::mem::take(specs),
                AggMode::Forbidden => {
                    return Err(self.error(
                        e.span,
                        CypherError::semantic("InvalidAggregation", format!("{name}() is not allowed here")),
                    ))
                }
                AggMode::Nested => {
                    return Err(
                        self.error(e.span, CypherError::semantic("NestedAggregation", "aggregations cannot be nested"))
                    )
                }
            };
            let mut random = None;
            walk(&args[0], &mut |x| {
                if matches!(&x.kind, ExprKind::Function { name, .. } if name == "rand") {
                    random = Some(x.span);
                }
            });
            if let Some(span) = random {
                return Err(self.error(
                    span,
                    CypherError::syntax("NonConstantExpression", "an aggregate cannot take a random value"),
                ));
            }
            let mut nested = AggMode::Nested;
            let arg = self.expr(&args[0], scope, &mut nested);
            let extra = args.get(1).map(|x| self.expr(x, scope, &mut AggMode::Nested)).transpose();
            let mut specs = specs;
            let (arg, extra) = (arg?, extra?);
            let slot = self.slot();
            specs.push(AggSpec { func, distinct, arg: Some(arg), extra, slot });
            *agg = AggMode::Collect(specs);
            return Ok(CExpr::Slot(slot));
        }
        if name != "exists" {
            // A pattern stands for a boolean only where a boolean is asked for (`CASE WHEN (a)-->() ...`, `NOT
            // (a)-->()` inside an argument are fine); as an argument itself (`size((a)-->())`) it would be the
            // list of paths of older Cypher, which Neo4j 5 refuses too.
            if let Some(a) = args.iter().find(|a| matches!(a.kind, ExprKind::PatternPredicate(_))) {
                return Err(self.error(
                    a.span,
                    CypherError::syntax("UnexpectedSyntax", "a pattern can only be used as a predicate here"),
                ));
            }
        }
        if name == "exists" && args.len() == 1 && matches!(args[0].kind, ExprKind::PatternPredicate(_)) {
            // exists((a)-[:T]->(b)): the older spelling of a pattern predicate.
            return self.expr(&args[0], scope, agg);
        }
        if let Some(a) = args.first() {
            if argument_kind_is_wrong(name, super::planner::infer_kind(a, scope)) {
                return Err(self.error(
                    a.span,
                    CypherError::syntax("InvalidArgumentType", format!("{name}() cannot take this kind of value")),
                ));
            }
        }
        if matches!(name, "linenumber" | "file") {
            // The record LOAD CSV is reading: hidden variables its clause declares (null outside one).
            if !args.is_empty() {
                return Err(arity_error(self, 0, 0));
            }
            let hidden = if name == "linenumber" { super::planner::CSV_LINE } else { super::planner::CSV_FILE };
            return Ok(scope.get(hidden).map_or(CExpr::Const(crate::value::Value::Null), |v| CExpr::Slot(v.slot)));
        }
        if let Some(f) = graph_fn(name) {
            let (min, max) = match f {
                GraphFn::Timestamp | GraphFn::RandomUuid => (0, 0),
                _ => (1, 1),
            };
            if args.len() < min || args.len() > max {
                return Err(arity_error(self, min, max));
            }
            if f == GraphFn::Exists && !matches!(args[0].kind, ExprKind::Property(..)) {
                return Err(self.error(
                    e.span,
                    CypherError::syntax("InvalidArgumentType", "exists() takes a property, such as exists(n.name)"),
                ));
            }
            let args = args.iter().map(|a| self.expr(a, scope, agg)).collect::<Result<Vec<_>>>()?;
            return Ok(CExpr::Graph(f, args));
        }
        let first = name.split('.').next().unwrap_or(name);
        let temporal = TEMPORAL_FUNCTIONS.contains(&first);
        let arity = if temporal { crate::temporal::function_arity(name) } else { functions::arity(name) };
        match arity {
            None => {
                return Err(
                    self.error(e.span, CypherError::syntax("UnknownFunction", format!("unknown function '{name}'")))
                )
            }
            Some((min, max)) if args.len() < min || args.len() > max => return Err(arity_error(self, min, max)),
            _ => {}
        }
        let args = args.iter().map(|a| self.expr(a, scope, agg)).collect::<Result<Vec<_>>>()?;
        Ok(CExpr::Scalar(Arc::from(name), args))
    }
}

/// `shortestPath((a)-[*]-(b))` used as a value (as Neo4j allows): the path a `MATCH p = shortestPath(...)` over
/// the same pattern finds, or null when there is none; `allShortestPaths(...)` the list of them all.
fn shortest_path_subquery(call: &Expr, pattern: &crate::ast::PatternElement, one: bool) -> Expr {
    use crate::ast::{Clause, Ident, PathKind, PatternPart, Projection, ProjectionItem, Query, SingleQuery};
    let span = call.span;
    // A name no query can write, so it cannot clash with the outer query's variables.
    let path = "  shortest path";
    let part = PatternPart {
        variable: Some(Ident { name: path.into(), span }),
        kind: if one { PathKind::Shortest } else { PathKind::AllShortest },
        element: pattern.clone(),
        predicate: None,
        span,
    };
    let ret = Projection {
        distinct: false,
        star: false,
        items: vec![ProjectionItem {
            expr: Expr::new(ExprKind::Variable(path.into()), span),
            alias: None,
            text: path.into(),
        }],
        order_by: Vec::new(),
        skip: None,
        limit: None,
        predicate: None,
        span,
    };
    let clauses =
        vec![Clause::Match { optional: false, patterns: vec![part], predicate: None, span }, Clause::Return(ret)];
    let paths = Expr::new(
        ExprKind::CollectSubquery(Box::new(Query {
            parts: vec![SingleQuery { clauses, starts: Vec::new() }],
            union_all: Vec::new(),
        })),
        span,
    );
    if !one {
        return paths;
    }
    let first = Expr::new(ExprKind::Literal(crate::value::Value::Int(0)), span);
    Expr::new(ExprKind::Index(Box::new(paths), Box::new(first)), span)
}
