//! The planner: AST clauses to a [`PlanNode`] tree, with the semantic checks of openCypher (undefined and
//! rebound variables, aggregation rules, clause order, column names). The update clauses are planned in [`update`],
//! procedure calls in [`procedure`].

use std::collections::HashSet;
use std::sync::Arc;

use super::compile::contains_aggregate;
use super::{AggSpec, CreateNode, CreateRel, Plan, PlanNode, Procedure, SetOp};
use crate::ast::*;
use crate::error::{CypherError, Position, Result};
use crate::expr::CExpr;
use crate::lexer::Span;
use crate::token::Token;

/// Planner-made variables (two leading spaces: no Cypher name, and left out of `RETURN *`) for `linenumber()`
/// and `file()`: the record `LOAD CSV` read.
pub(crate) const CSV_LINE: &str = "  linenumber";
pub(crate) const CSV_FILE: &str = "  file";

mod procedure;
mod projection;
mod update;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VarKind {
    Node,
    Rel,
    /// The relationships of a variable-length pattern.
    RelList,
    Path,
    /// A map (literal, or a map-valued expression).
    Map,
    /// Known to be neither a graph entity nor a map: numbers, strings, booleans, lists, temporals.
    Scalar,
    /// Anything (a parameter, a list element, a function result).
    Unknown,
}

#[derive(Clone, Debug)]
pub(crate) struct Var {
    pub name: String,
    pub slot: usize,
    pub kind: VarKind,
    /// Planner-made variables (anonymous pattern elements) are not user-visible.
    pub hidden: bool,
}

/// The variables visible at a point of the query.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    vars: Vec<Var>,
}

impl Scope {
    pub fn get(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name && !v.hidden)
    }

    pub fn add(&mut self, name: &str, slot: usize, kind: VarKind) {
        self.vars.retain(|v| v.name != name);
        self.vars.push(Var { name: name.to_string(), slot, kind, hidden: false });
    }

    pub fn with(&self, name: &str, slot: usize, kind: VarKind) -> Scope {
        let mut s = self.clone();
        s.add(name, slot, kind);
        s
    }

    /// User-visible variables, sorted by name (the column order of `RETURN *`).
    pub fn visible(&self) -> Vec<Var> {
        let mut vs: Vec<Var> = self.vars.iter().filter(|v| !v.hidden && !v.name.starts_with("  ")).cloned().collect();
        vs.sort_by(|a, b| a.name.cmp(&b.name));
        vs
    }
}

/// Whether aggregate functions may appear in the expression being compiled.
pub(crate) enum AggMode {
    Forbidden,
    /// Inside an aggregate's argument.
    Nested,
    Collect(Vec<AggSpec>),
}

pub(crate) struct Planner<'t> {
    pub text: &'t str,
    procedures: &'t crate::procedures::ProcedureRegistry,
    /// The files `LOAD CSV` may read, recorded in its operator.
    files: std::sync::Arc<crate::files::FileAccess>,
    width: usize,
    pub writes: bool,
    /// Parameters the statement uses: all must be given before it runs.
    /// The parameters used, with the offset of one use in the text (none for a procedure's implicit inputs).
    pub params: std::collections::BTreeMap<String, Option<usize>>,
    /// The parameters that are operands of operators taking some types only.
    pub typed_params: Vec<super::operand_types::TypedParameter>,
    /// Hidden names given to anonymous MERGE elements, numbered across the statement.
    anonymous: usize,
    /// While compiling an ORDER BY after aggregation: expression texts that stand for a projected column.
    pub substitutions: Vec<(String, usize)>,
    /// While planning a MATCH: conditions of its quantified path patterns' repetitions that name variables
    /// bound elsewhere in it, applied once it is bound (see `quantified.rs`).
    pub repetition_filters: Vec<CExpr>,
    /// While planning a MATCH: its variables not bound yet (as of the last binding step), and the pattern
    /// property maps that name one of them (`(a)-->(b {x: a.x})` planned from `b`), each with the variables it
    /// names, applied once they are bound (`pattern.rs`, `property_filter`).
    pub unbound: HashSet<String>,
    pub deferred_props: Vec<(HashSet<String>, CExpr)>,
    /// Inside a subquery expression (`EXISTS`, `COUNT`, `COLLECT { }`) or a `CALL (a) { }`: the outer variables
    /// its body sees throughout, which each `WITH` of the body carries on without naming them (as in Neo4j), each
    /// with its slot in the subquery's argument row.
    persistent: Vec<(String, usize)>,
    /// Whether the statement calls a procedure registered by the embedding program, whose effects outside the
    /// graph a rerun would repeat.
    pub calls_user_procedures: bool,
    /// The graph's node counts per label, when the statement is planned for a graph.
    pub counts: Option<super::statistics::LabelCounts<'t>>,
    /// The counts the choices made so far rested on.
    pub planned_on: super::statistics::PlannedOn,
}

/// The outer variables a part of a `CALL { }` subquery sees: those its leading importing `WITH` names (`WITH a,
/// b` or `WITH *`, plain variables with nothing after them). Without one the subquery is uncorrelated and sees
/// none: an outer name used inside is a new variable there, or an undefined one.
fn imported_scope(part: &SingleQuery, outer: &Scope) -> Scope {
    let Some(Clause::With(p)) = part.clauses.first() else { return Scope::default() };
    let plain = |item: &ProjectionItem| matches!(&item.expr.kind, ExprKind::Variable(v) if item.alias.as_ref().is_none_or(|a| a.name == *v));
    let importing = !p.distinct
        && p.order_by.is_empty()
        && p.skip.is_none()
        && p.limit.is_none()
        && p.predicate.is_none()
        && p.items.iter().all(plain);
    if !importing {
        return Scope::default();
    }
    if p.star {
        return outer.clone();
    }
    let mut scope = Scope::default();
    for item in &p.items {
        if let ExprKind::Variable(v) = &item.expr.kind {
            if let Some(var) = outer.get(v) {
                scope.vars.push(var.clone());
            }
        }
    }
    scope
}

/// Whether clauses may use variable `name`, given their debug text `clauses` (`format!("{clauses:?}")`): it
/// appears as a variable or a name anywhere in them (nested subqueries included). It may also be a name of
/// something else (a property key, an alias): erring that way only carries a variable that was not needed.
fn mentions(clauses: &str, name: &str) -> bool {
    clauses.contains(&format!("Variable({name:?})")) || clauses.contains(&format!("name: {name:?}"))
}

/// Plans a query statement.
pub(crate) fn plan_query(
    text: &str,
    query: &Query,
    procedures: &crate::procedures::ProcedureRegistry,
    files: std::sync::Arc<crate::files::FileAccess>,
    counts: Option<super::statistics::LabelCounts<'_>>,
) -> Result<Plan> {
    let mut p = Planner {
        text,
        procedures,
        files,
        width: 0,
        writes: false,
        params: Default::default(),
        typed_params: Vec::new(),
        anonymous: 0,
        substitutions: Vec::new(),
        repetition_filters: Vec::new(),
        unbound: HashSet::new(),
        deferred_props: Vec::new(),
        persistent: Vec::new(),
        calls_user_procedures: false,
        counts,
        planned_on: Default::default(),
    };
    let (mut root, columns) = p.query(query, PlanNode::Start, &Scope::default(), true)?;
    super::fuse::fuse(&mut root);
    super::fuse::push_hop_labels(&mut root);
    stream_creates(&mut root);
    let writes_per_row = root.writes_per_row();
    let commits_in_parts = root.commits_in_parts();
    Ok(Plan {
        root,
        columns: columns.into(),
        width: p.width,
        writes: p.writes || commits_in_parts,
        writes_per_row,
        params: p.params.into_iter().map(|(name, at)| (name, at.map(|at| Position::locate(text, at)))).collect(),
        typed_params: p.typed_params,
        commits_in_parts,
        reruns_on_conflict: p.writes && !commits_in_parts && !p.calls_user_procedures,
        parts_rerun_on_conflict: commits_in_parts && !p.calls_user_procedures,
        notices: crate::notices::Notices::collect(text, query),
        planned_on: p.planned_on,
    })
}

/// Lets the CREATEs that make up a whole statement (`UNWIND $rows AS r CREATE ...`, the bulk write) change their
/// rows batch by batch as the rows arrive, instead of reading all of them first as updates do (see
/// [`crate::exec`]), when nothing could tell the difference: no row of their input depends on the graph after
/// the first (the starting row, an UNWIND straight over it, whose list is evaluated once before any change, and
/// CREATEs whose values read nothing of the graph), and nothing reads their rows (the statement returns
/// nothing). A million-row write then holds one batch of rows at a time rather than a million. A CREATE after
/// another that reads the graph (`CREATE (:M {c: COUNT { (:L) }})`) must see every row of the one before done,
/// so such a chain is not streamed.
pub(crate) fn stream_creates(root: &mut PlanNode) {
    fn blind_to_changes(node: &PlanNode) -> bool {
        match node {
            PlanNode::Start => true,
            PlanNode::Unwind { input, .. } => matches!(**input, PlanNode::Start),
            PlanNode::Create { input, nodes, rels, .. } => {
                let mut exprs = nodes
                    .iter()
                    .flat_map(|n| n.properties.iter().chain(&n.dynamic_labels))
                    .chain(rels.iter().flat_map(|r| r.properties.iter().chain(&r.dynamic_type)));
                let first = !matches!(**input, PlanNode::Create { .. });
                (first || !exprs.any(crate::plan::fuse::reads_beyond_row)) && blind_to_changes(input)
            }
            _ => false,
        }
    }
    if !matches!(root, PlanNode::Create { .. }) || !blind_to_changes(root) {
        return;
    }
    let mut node = root;
    while let PlanNode::Create { input, streams, .. } = node {
        *streams = true;
        node = input;
    }
}

fn is_update(c: &Clause) -> bool {
    matches!(
        c,
        Clause::Create { .. }
            | Clause::Merge { .. }
            | Clause::Set { .. }
            | Clause::Remove { .. }
            | Clause::Delete { .. }
            | Clause::Foreach { .. }
    )
}

fn clause_name(c: &Clause) -> &'static str {
    match c {
        Clause::Match { optional: true, .. } => "OPTIONAL MATCH",
        Clause::Match { .. } => "MATCH",
        Clause::Unwind { .. } => "UNWIND",
        Clause::LoadCsv { .. } => "LOAD CSV",
        Clause::With(_) => "WITH",
        Clause::Return(_) => "RETURN",
        Clause::Create { .. } => "CREATE",
        Clause::Merge { .. } => "MERGE",
        Clause::Set { .. } => "SET",
        Clause::Remove { .. } => "REMOVE",
        Clause::Delete { .. } => "DELETE",
        Clause::Foreach { .. } => "FOREACH",
        Clause::Call(_) => "CALL",
        Clause::Subquery { .. } => "CALL { }",
    }
}

impl Planner<'_> {
    pub(crate) fn slot(&mut self) -> usize {
        self.width += 1;
        self.width - 1
    }

    /// Plans a (possibly UNION-ed) query on top of `start`; returns the plan and its column names. `top` is
    /// false for subqueries, which may end without RETURN.
    pub(crate) fn query(
        &mut self,
        q: &Query,
        start: PlanNode,
        scope: &Scope,
        top: bool,
    ) -> Result<(PlanNode, Vec<String>)> {
        self.union_of(q, start, vec![scope.clone(); q.parts.len()], top)
    }

    /// Plans the parts of `q`, each over its own scope, and their union.
    fn union_of(
        &mut self,
        q: &Query,
        start: PlanNode,
        scopes: Vec<Scope>,
        top: bool,
    ) -> Result<(PlanNode, Vec<String>)> {
        if q.parts.len() == 1 {
            return self.single_query(&q.parts[0], start, &scopes[0], top);
        }
        let in_transactions = |c: &Clause| matches!(c, Clause::Subquery { in_transactions: Some(_), .. });
        if q.parts.iter().any(|p| p.clauses.iter().any(in_transactions)) {
            return Err(CypherError::syntax(
                "InvalidClauseComposition",
                "CALL { } IN TRANSACTIONS cannot be part of a UNION",
            ));
        }
        // The parser refuses UNION mixed with UNION ALL, where it can point at the keyword.
        let all = q.union_all[0];
        let mut parts = Vec::new();
        let mut columns: Option<Vec<String>> = None;
        // Parts run one after another, each on a row of its own that ends in a `Produce` of just the columns,
        // so they share slot numbers above those of the rows they start from: numbered across the whole union,
        // every row of every part was as wide as all parts together (a union of 8,000 parts spent 2.5 s
        // allocating and dropping rows of 30,000 slots).
        let base = self.width;
        let mut widest = base;
        for (part, scope) in q.parts.iter().zip(&scopes) {
            self.width = base;
            let planned = self.single_query(part, start.clone(), scope, top);
            widest = widest.max(self.width);
            let (mut plan, mut cols) = planned?;
            if let Some(c) = &columns {
                let same_names = c.len() == cols.len() && c.iter().all(|n| cols.contains(n));
                match &mut plan {
                    _ if *c == cols => {}
                    // The same names in another order (as Neo4j allows): this part's columns go out in the first
                    // part's order.
                    PlanNode::Produce { columns: slots, .. } if same_names => {
                        *slots =
                            c.iter().map(|n| slots[cols.iter().position(|m| m == n).expect("same names")]).collect();
                        cols = c.clone();
                    }
                    _ => {
                        let differs = CypherError::semantic(
                            "DifferentColumnsInUnion",
                            "all sub queries in a UNION must have the same return column names",
                        );
                        return Err(match returned_at(part) {
                            Some(span) => self.error(span, differs),
                            None => differs,
                        });
                    }
                }
            }
            columns = Some(cols);
            parts.push(plan);
        }
        self.width = widest;
        Ok((PlanNode::Union { parts, all }, columns.unwrap_or_default()))
    }

    pub(crate) fn subquery(&mut self, q: &Query, scope: &Scope) -> Result<(PlanNode, Vec<String>)> {
        let names = scope.vars.iter().filter(|v| !v.hidden).map(|v| (v.name.clone(), v.slot)).collect();
        let outer = std::mem::replace(&mut self.persistent, names);
        let planned = self.query(q, PlanNode::Start, scope, false);
        self.persistent = outer;
        planned
    }

    /// `p` with the persistent outer variables it does not name added as plain items, when there are any to add:
    /// those the clauses after it (`later`) mention. They become grouping keys of an aggregating `WITH`, which
    /// changes nothing since they hold one value per run of the subquery; when they are its only keys, the
    /// aggregation still makes its one row over no input (`PlanNode::Aggregate::per_run`).
    /// Returns the projection with them added, and for each added variable its slot in the subquery's argument
    /// row and its slot in `scope`.
    fn carrying_persistent(
        &self,
        p: &Projection,
        scope: &Scope,
        later: &[Clause],
    ) -> Option<(Projection, Vec<(usize, usize)>)> {
        if p.star || self.persistent.is_empty() {
            return None;
        }
        let later = format!("{later:?}");
        let missing: Vec<(&String, usize, usize)> = self
            .persistent
            .iter()
            .filter(|(name, _)| !p.items.iter().any(|i| i.name() == name.as_str()))
            .filter_map(|(name, arg_slot)| Some((name, *arg_slot, scope.get(name)?.slot)))
            .filter(|(name, _, _)| mentions(&later, name))
            .collect();
        if missing.is_empty() {
            return None;
        }
        let mut carried = p.clone();
        let mut slots = Vec::with_capacity(missing.len());
        for (name, arg_slot, slot) in missing {
            carried.items.push(ProjectionItem {
                expr: Expr::new(ExprKind::Variable(name.clone()), p.span),
                alias: None,
                text: name.clone(),
            });
            slots.push((arg_slot, slot));
        }
        Some((carried, slots))
    }

    /// `e` located at the start of clause `i` of `q`, when the parser recorded where it is.
    fn at_clause(&self, q: &SingleQuery, i: usize, e: CypherError) -> CypherError {
        match q.starts.get(i) {
            Some(&start) => self.error(crate::lexer::Span { start, end: start }, e),
            None => e,
        }
    }

    fn single_query(
        &mut self,
        q: &SingleQuery,
        start: PlanNode,
        outer: &Scope,
        top: bool,
    ) -> Result<(PlanNode, Vec<String>)> {
        let mut plan = start;
        let mut scope = outer.clone();
        let n = q.clauses.len();
        let mut columns = Vec::new();
        let mut saw_update = false;
        for (i, clause) in q.clauses.iter().enumerate() {
            let last = i + 1 == n;
            if let Clause::Return(_) = clause {
                if !last {
                    return Err(self.at_clause(
                        q,
                        i,
                        CypherError::syntax(
                            "InvalidClauseComposition",
                            "RETURN can only be used at the end of the query",
                        ),
                    ));
                }
            }
            if saw_update && matches!(clause, Clause::Match { .. }) && !matches!(q.clauses[i - 1], Clause::With(_)) {
                return Err(self.at_clause(
                    q,
                    i,
                    CypherError::syntax(
                        "InvalidClauseComposition",
                        "WITH is required between an update clause and MATCH",
                    ),
                ));
            }
            if is_update(clause) {
                saw_update = true;
                self.writes = true;
            }
            if let Clause::With(_) = clause {
                saw_update = false;
            }
            plan = match clause {
                Clause::Match { optional, patterns, predicate, .. } => {
                    if *optional {
                        let mut inner_scope = scope.clone();
                        let inner =
                            self.match_patterns(PlanNode::Start, patterns, predicate.as_ref(), &mut inner_scope, true)?;
                        scope = inner_scope;
                        PlanNode::Optional { input: Box::new(plan), inner: Arc::new(inner) }
                    } else {
                        self.match_patterns(plan, patterns, predicate.as_ref(), &mut scope, true)?
                    }
                }
                Clause::Unwind { list, variable } => {
                    let list = self.expr(list, &scope, &mut AggMode::Forbidden)?;
                    self.check_new(&scope, variable)?;
                    let slot = self.slot();
                    scope.add(&variable.name, slot, VarKind::Unknown);
                    PlanNode::Unwind { input: Box::new(plan), list, slot }
                }
                Clause::LoadCsv { headers, url, variable, separator, .. } => {
                    let url = self.expr(url, &scope, &mut AggMode::Forbidden)?;
                    self.check_new(&scope, variable)?;
                    let slot = self.slot();
                    scope.add(&variable.name, slot, if *headers { VarKind::Map } else { VarKind::Scalar });
                    let (line, file) = (self.slot(), self.slot());
                    scope.add(CSV_LINE, line, VarKind::Scalar);
                    scope.add(CSV_FILE, file, VarKind::Scalar);
                    PlanNode::LoadCsv {
                        input: Box::new(plan),
                        url,
                        slot,
                        position: (line, file),
                        headers: *headers,
                        separator: *separator,
                        access: self.files.clone(),
                    }
                }
                Clause::With(p) => {
                    let carried = self.carrying_persistent(p, &scope, &q.clauses[i + 1..]);
                    let (p, carried) = match &carried {
                        Some((with_carried, slots)) => (with_carried, slots.as_slice()),
                        None => (p, &[][..]),
                    };
                    let (plan, new_scope, _) = self.projection(plan, p, &scope, true, carried)?;
                    scope = new_scope;
                    plan
                }
                Clause::Return(p) => {
                    let (plan, _, cols) = self.projection(plan, p, &scope, false, &[])?;
                    columns = cols;
                    plan
                }
                Clause::Create { patterns, .. } => self.create(plan, patterns, &mut scope)?,
                Clause::Merge { pattern, on_create, on_match, .. } => {
                    self.merge(plan, pattern, on_create, on_match, &mut scope)?
                }
                Clause::Set { items } => {
                    let items = items.iter().map(|i| self.set_item(i, &scope)).collect::<Result<Vec<_>>>()?;
                    PlanNode::Set { input: Box::new(plan), items }
                }
                Clause::Remove { items } => {
                    let items = items.iter().map(|i| self.remove_item(i, &scope)).collect::<Result<Vec<_>>>()?;
                    PlanNode::Set { input: Box::new(plan), items }
                }
                Clause::Delete { detach, targets } => {
                    for t in targets {
                        match &t.kind {
                            ExprKind::HasLabels(..) | ExprKind::LabelTest(..) => {
                                return Err(self.error(
                                    t.span,
                                    CypherError::syntax(
                                        "InvalidDelete",
                                        "DELETE removes nodes and relationships; use REMOVE for labels",
                                    ),
                                ))
                            }
                            // `DELETE null` deletes nothing, as a null from OPTIONAL MATCH does.
                            ExprKind::Literal(v) if v.is_null() => {}
                            ExprKind::Literal(_) | ExprKind::Binary(..) | ExprKind::Map(_) => {
                                return Err(self.error(
                                    t.span,
                                    CypherError::syntax(
                                        "InvalidArgumentType",
                                        "DELETE expects a node, relationship or path",
                                    ),
                                ))
                            }
                            _ => {}
                        }
                    }
                    let targets = targets
                        .iter()
                        .map(|t| self.expr(t, &scope, &mut AggMode::Forbidden))
                        .collect::<Result<Vec<_>>>()?;
                    PlanNode::Delete { input: Box::new(plan), targets, detach: *detach }
                }
                Clause::Foreach { variable, list, body } => {
                    let list = self.expr(list, &scope, &mut AggMode::Forbidden)?;
                    let slot = self.slot();
                    let inner_scope = scope.with(&variable.name, slot, VarKind::Unknown);
                    for c in body {
                        if !is_update(c) {
                            return Err(self.at_clause(
                                q,
                                i,
                                CypherError::syntax(
                                    "InvalidClauseComposition",
                                    format!("{} is not allowed inside FOREACH", clause_name(c)),
                                ),
                            ));
                        }
                    }
                    let q = Query {
                        parts: vec![SingleQuery { clauses: body.clone(), starts: Vec::new() }],
                        union_all: vec![],
                    };
                    let (body, _) = self.query(&q, PlanNode::Start, &inner_scope, false)?;
                    PlanNode::Foreach { input: Box::new(plan), slot, list, body: Arc::new(body) }
                }
                Clause::Call(call) => {
                    let (p, cols) = self.procedure(plan, call, &mut scope, last && i == 0)?;
                    if !cols.is_empty() {
                        columns = cols;
                    }
                    p
                }
                Clause::Subquery { query, scoped, optional, in_transactions, on_error, report_status, .. } => {
                    if in_transactions.is_some() && !top {
                        return Err(CypherError::syntax(
                            "InvalidClauseComposition",
                            "CALL { } IN TRANSACTIONS can only be used in the outermost query, not inside a subquery",
                        ));
                    }
                    // Its first part's commit would take earlier writes with it, whatever happens after.
                    if in_transactions.is_some() && self.writes {
                        return Err(CypherError::syntax(
                            "InvalidClauseComposition",
                            "CALL { } IN TRANSACTIONS cannot come after a clause that writes",
                        ));
                    }
                    let rows_per_transaction = match in_transactions {
                        None => None,
                        Some(None) => Some(CExpr::Const(crate::value::Value::Int(1000))),
                        Some(Some(rows)) => Some(self.expr(rows, &scope, &mut AggMode::Forbidden)?),
                    };
                    // Its columns become variables of the outer query, so each needs a name (as in Neo4j).
                    for part in &query.parts {
                        let Some(Clause::Return(r)) = part.clauses.last() else { continue };
                        let unnamed =
                            r.items.iter().find(|i| i.alias.is_none() && !matches!(i.expr.kind, ExprKind::Variable(_)));
                        if let Some(item) = unnamed {
                            return Err(self.error(
                                item.expr.span,
                                CypherError::syntax(
                                    "NoExpressionAlias",
                                    "expression in CALL { RETURN ... } must be aliased (use AS)",
                                ),
                            ));
                        }
                    }
                    let scopes: Vec<Scope> = query.parts.iter().map(|part| imported_scope(part, &scope)).collect();
                    let imported = match scopes.first() {
                        Some(first) if *scoped => first.vars.iter().map(|v| (v.name.clone(), v.slot)).collect(),
                        _ => Vec::new(),
                    };
                    let outer_persistent = std::mem::replace(&mut self.persistent, imported);
                    let planned = self.union_of(query, PlanNode::Start, scopes, false);
                    self.persistent = outer_persistent;
                    let (inner, cols) = planned?;
                    let mut returns = Vec::new();
                    for c in &cols {
                        if scope.get(c).is_some() {
                            let bound = CypherError::semantic(
                                "VariableAlreadyBound",
                                format!("variable `{c}` already declared in outer scope"),
                            );
                            return Err(match query.parts.first().and_then(returned_at) {
                                Some(span) => self.error(span, bound),
                                None => bound,
                            });
                        }
                        let slot = self.slot();
                        scope.add(c, slot, VarKind::Unknown);
                        returns.push(slot);
                    }
                    let status = match report_status {
                        Some(v) => {
                            if scope.get(&v.name).is_some() || cols.contains(&v.name) {
                                return Err(CypherError::semantic(
                                    "VariableAlreadyBound",
                                    format!("variable `{}` already declared", v.name),
                                ));
                            }
                            let slot = self.slot();
                            scope.add(&v.name, slot, VarKind::Unknown);
                            Some(slot)
                        }
                        None => None,
                    };
                    if query.parts.iter().any(|p| p.clauses.iter().any(is_update)) {
                        self.writes = true;
                    }
                    PlanNode::Apply {
                        input: Box::new(plan),
                        inner: Arc::new(inner),
                        returns,
                        optional: *optional,
                        rows_per_transaction,
                        on_error: *on_error,
                        status,
                    }
                }
            };
        }
        let last = q.clauses.last().expect("a query has clauses");
        let ends_well = matches!(last, Clause::Return(_))
            || is_update(last)
            || matches!(last, Clause::Call(_))
            // A unit subquery (no RETURN) may end a query; one that returns rows may not, as in Neo4j.
            || matches!(last, Clause::Subquery { query, .. }
                if columns.is_empty() && !query.parts.iter().any(|p| matches!(p.clauses.last(), Some(Clause::Return(_)))));
        if top && !ends_well {
            return Err(self.at_clause(
                q,
                n - 1,
                CypherError::syntax(
                    "InvalidClauseComposition",
                    format!("query cannot conclude with {} (must be RETURN or an update clause)", clause_name(last)),
                ),
            ));
        }
        if !top
            && !ends_well
            && !matches!(last, Clause::Match { .. } | Clause::With(_) | Clause::Unwind { .. } | Clause::LoadCsv { .. })
        {
            return Err(self.at_clause(
                q,
                n - 1,
                CypherError::syntax("InvalidClauseComposition", "a subquery must end with RETURN"),
            ));
        }
        Ok((plan, columns))
    }

    pub(crate) fn check_new(&self, scope: &Scope, v: &Ident) -> Result<()> {
        if scope.get(&v.name).is_some() {
            return Err(self.error(
                v.span,
                CypherError::semantic("VariableAlreadyBound", format!("variable `{}` already declared", v.name)),
            ));
        }
        Ok(())
    }

    /// SKIP and LIMIT take a constant expression: literals and parameters, no variables.
    fn count_expr(&mut self, e: &Expr, what: &str) -> Result<CExpr> {
        let mut uses_var = false;
        super::compile::walk(e, &mut |x| {
            if matches!(x.kind, ExprKind::Variable(_)) {
                uses_var = true;
            }
        });
        if uses_var {
            return Err(self.error(
                e.span,
                CypherError::syntax("NonConstantExpression", format!("{what} cannot depend on variables")),
            ));
        }
        let negative_literal = match &e.kind {
            ExprKind::Literal(crate::value::Value::Int(i)) => *i < 0,
            ExprKind::Unary(UnaryOp::Neg, inner) => {
                matches!(inner.kind, ExprKind::Literal(crate::value::Value::Int(_) | crate::value::Value::Float(_)))
            }
            _ => false,
        };
        {
            if negative_literal {
                return Err(self.error(
                    e.span,
                    CypherError::syntax("NegativeIntegerArgument", format!("{what} must be a non-negative integer")),
                ));
            }
        }
        if let ExprKind::Literal(crate::value::Value::Float(_)) = &e.kind {
            return Err(
                self.error(e.span, CypherError::syntax("InvalidArgumentType", format!("{what} must be an integer")))
            );
        }
        self.expr(e, &Scope::default(), &mut AggMode::Forbidden)
    }
}

/// A copy of `pattern` where every anonymous node and relationship has a hidden name.
fn name_anonymous(pattern: &PatternPart, counter: &mut usize) -> PatternPart {
    let mut p = pattern.clone();
    let mut name = |v: &mut Option<Ident>, span: Span| {
        if v.is_none() {
            *counter += 1;
            *v = Some(Ident { name: format!("  merge{counter}"), span });
        }
    };
    name(&mut p.element.start.variable, p.element.start.span);
    for (r, node) in p.element.chain.iter_mut() {
        name(&mut r.variable, r.span);
        name(&mut node.variable, node.span);
    }
    p
}

/// What an expression evaluates to, as far as can be told before running it.
pub(crate) fn infer_kind(e: &Expr, scope: &Scope) -> VarKind {
    use crate::value::Value as V;
    match &e.kind {
        ExprKind::Variable(name) => scope.get(name).map_or(VarKind::Unknown, |v| v.kind),
        ExprKind::Literal(V::Null) => VarKind::Unknown,
        ExprKind::Literal(_) | ExprKind::List(_) | ExprKind::ListComprehension { .. } => VarKind::Scalar,
        ExprKind::PatternComprehension { .. }
        | ExprKind::CountStar
        | ExprKind::IsNull { .. }
        | ExprKind::TypeTest { .. } => VarKind::Scalar,
        ExprKind::HasLabels(..)
        | ExprKind::LabelTest(..)
        | ExprKind::Quantified { .. }
        | ExprKind::CountSubquery(_) => VarKind::Scalar,
        ExprKind::Exists(_) | ExprKind::CollectSubquery(_) | ExprKind::PatternPredicate(_) => VarKind::Scalar,
        ExprKind::Map(_) | ExprKind::MapProjection { .. } => VarKind::Map,
        ExprKind::Unary(UnaryOp::Not, _) => VarKind::Scalar,
        ExprKind::Binary(op, a, b) => match op {
            BinaryOp::Add
            | BinaryOp::Concat
            | BinaryOp::Sub
            | BinaryOp::Mul
            | BinaryOp::Div
            | BinaryOp::Mod
            | BinaryOp::Pow => {
                // Arithmetic on graph entities fails at run time anyway; on numbers, strings and lists it gives one.
                let (ka, kb) = (infer_kind(a, scope), infer_kind(b, scope));
                if ka == VarKind::Scalar || kb == VarKind::Scalar {
                    VarKind::Scalar
                } else {
                    VarKind::Unknown
                }
            }
            _ => VarKind::Scalar,
        },
        ExprKind::Function { name, .. } => match name.as_str() {
            "count" | "sum" | "avg" | "size" | "length" | "id" | "tostring" | "tointeger" | "tofloat" | "type"
            | "labels" | "keys" | "range" | "nodes" | "relationships" => VarKind::Scalar,
            "properties" => VarKind::Map,
            "startnode" | "endnode" => VarKind::Node,
            _ => VarKind::Unknown,
        },
        _ => VarKind::Unknown,
    }
}

/// Where a query part's RETURN is, to point an error about its columns at.
fn returned_at(part: &SingleQuery) -> Option<Span> {
    part.clauses.iter().rev().find_map(|c| match c {
        Clause::Return(p) => Some(p.span),
        _ => None,
    })
}
