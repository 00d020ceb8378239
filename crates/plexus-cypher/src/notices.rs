//! The notifications a statement earns, as Neo4j 5 gives them with its results (drivers log them, tools show
//! them): names the database has never seen, which are usually misspelt (a label, relationship type or property
//! key that a read looks for), patterns of one MATCH that share no variable (a cartesian product), and the
//! deprecated `id()` function.
//!
//! What the statement's text says is found once, when it is planned ([`Notices::collect`]); whether a name
//! exists is asked each time it runs ([`Notices::for_run`]), since a name unknown today may be created
//! tomorrow. A name once found is never looked up again: names are never removed from the catalog.

use std::collections::HashSet;

use plexus_storage::catalog::Catalog;
use plexus_storage::TokenKind;

use crate::ast::{
    Clause, Expr, ExprKind, LabelExpr, MapProjectionItem, NodePattern, PatternElement, PatternPart, Query, RelPattern,
    SetItem,
};
use crate::lexer::Span;
use crate::token::Token;

/// One notification, in the shape Bolt and the HTTP API send.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// Neo4j's code, e.g. `Neo.ClientNotification.Statement.UnknownLabelWarning`.
    pub code: &'static str,
    pub title: &'static str,
    /// Shared: a statement's fixed notifications are handed out on every run.
    pub description: std::sync::Arc<str>,
    pub severity: Severity,
    /// Neo4j's category: `UNRECOGNIZED`, `PERFORMANCE`, `DEPRECATION`.
    pub category: &'static str,
    pub position: NotificationPosition,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Information,
    Warning,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Information => "INFORMATION",
            Severity::Warning => "WARNING",
        }
    }
}

/// Where in the statement's text: `offset` counts characters from 0, `line` and `column` from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotificationPosition {
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl NotificationPosition {
    fn of(text: &str, byte: usize) -> NotificationPosition {
        let p = crate::error::Position::locate(text, byte);
        NotificationPosition { offset: text[..p.offset].chars().count(), line: p.line, column: p.column }
    }
}

/// A name a read of the statement looks for, and where.
#[derive(Debug)]
struct ReadName {
    kind: TokenKind,
    token: Token,
    position: NotificationPosition,
}

/// What a compiled statement may be told about: notifications that hold whatever the data (`fixed`) and names
/// whose existence is asked at each run. Boxed, and absent when a statement reads no name at all.
#[derive(Debug, Default)]
pub(crate) struct Notices(Option<Box<Found>>);

#[derive(Debug, Default)]
struct Found {
    fixed: Vec<Notification>,
    reads: Vec<ReadName>,
}

impl Notices {
    pub(crate) fn collect(text: &str, query: &Query) -> Notices {
        let mut c = Collector { text, notices: Found::default(), seen: HashSet::new() };
        c.query(query, &HashSet::new());
        let found = c.notices;
        Notices((!found.fixed.is_empty() || !found.reads.is_empty()).then(|| Box::new(found)))
    }

    /// The notifications of one run against `catalog`.
    pub(crate) fn for_run(&self, catalog: &Catalog) -> Vec<Notification> {
        let Some(found) = &self.0 else { return Vec::new() };
        let mut out = found.fixed.clone();
        for r in &found.reads {
            if r.token.resolve(catalog, r.kind).is_none() {
                out.push(unknown_name(r.kind, r.token.name(), r.position));
            }
        }
        out.sort_by_key(|n| n.position.offset);
        out
    }
}

fn unknown_name(kind: TokenKind, name: &str, position: NotificationPosition) -> Notification {
    let (code, title, what, noun) = match kind {
        TokenKind::Label => (
            "Neo.ClientNotification.Statement.UnknownLabelWarning",
            "The provided label is not in the database.",
            "labels",
            "label name",
        ),
        TokenKind::Type => (
            "Neo.ClientNotification.Statement.UnknownRelationshipTypeWarning",
            "The provided relationship type is not in the database.",
            "relationship types",
            "relationship type",
        ),
        TokenKind::PropKey => (
            "Neo.ClientNotification.Statement.UnknownPropertyKeyWarning",
            "The provided property key is not in the database",
            "property names",
            "property name",
        ),
    };
    Notification {
        code,
        title,
        description: std::sync::Arc::from(format!(
            "One of the {what} in your query is not available in the database, make sure you didn't misspell it or \
             that the label is available when you run this statement in your application (the missing {noun} is: \
             {name})"
        )),
        severity: Severity::Warning,
        category: "UNRECOGNIZED",
        position,
    }
}

/// Told when `CREATE TEXT INDEX` or `CREATE POINT INDEX` makes a range index, which answers the same
/// predicates here (equality, ranges, prefixes) and is what `SHOW INDEXES` then lists.
pub(crate) fn range_index_instead(kind: &str) -> Notification {
    Notification {
        code: "Plexus.ClientNotification.Schema.RangeIndexInstead",
        title: "The index is a range index.",
        description: std::sync::Arc::from(format!(
            "{kind} indexes are made range indexes here: a range index answers the same predicates (equality, \
             ranges and STARTS WITH) and SHOW INDEXES lists it as RANGE"
        )),
        severity: Severity::Information,
        category: "GENERIC",
        position: NotificationPosition { offset: 0, line: 1, column: 1 },
    }
}

struct Collector<'t> {
    text: &'t str,
    notices: Found,
    /// Names already listed (each is told once, at its first read).
    seen: HashSet<(u8, String)>,
}

impl Collector<'_> {
    fn read(&mut self, kind: TokenKind, name: &str, span: Span) {
        if name.is_empty() || !self.seen.insert((kind as u8, name.to_string())) {
            return;
        }
        let position = NotificationPosition::of(self.text, span.start);
        self.notices.reads.push(ReadName { kind, token: Token::new(name), position });
    }

    /// `outer`: variables bound before the query (a subquery's importing scope, loosely: any name of the
    /// enclosing query).
    fn query(&mut self, q: &Query, outer: &HashSet<String>) {
        for part in &q.parts {
            let mut bound = outer.clone();
            for clause in &part.clauses {
                self.clause(clause, &mut bound);
            }
        }
    }

    fn clause(&mut self, clause: &Clause, bound: &mut HashSet<String>) {
        match clause {
            Clause::Match { patterns, predicate, span, .. } => {
                self.disconnected(patterns, bound, *span);
                for p in patterns {
                    self.pattern_part(p, true, bound);
                }
                self.opt(predicate, bound);
            }
            Clause::Unwind { list, variable } => {
                self.expr(list, bound);
                bound.insert(variable.name.clone());
            }
            Clause::LoadCsv { url, variable, .. } => {
                self.expr(url, bound);
                bound.insert(variable.name.clone());
            }
            Clause::With(p) | Clause::Return(p) => {
                for item in &p.items {
                    self.expr(&item.expr, bound);
                }
                for s in &p.order_by {
                    self.expr(&s.expr, bound);
                }
                self.opt(&p.skip, bound);
                self.opt(&p.limit, bound);
                self.opt(&p.predicate, bound);
                for item in &p.items {
                    bound.insert(item.name().to_string());
                }
            }
            Clause::Create { patterns, .. } => {
                for p in patterns {
                    self.pattern_part(p, false, bound);
                }
            }
            Clause::Merge { pattern, on_create, on_match, .. } => {
                self.pattern_part(pattern, false, bound);
                for item in on_create.iter().chain(on_match) {
                    self.set_item(item, bound);
                }
            }
            Clause::Set { items } => items.iter().for_each(|i| self.set_item(i, bound)),
            Clause::Remove { .. } => {}
            Clause::Delete { targets, .. } => targets.iter().for_each(|t| self.expr(t, bound)),
            Clause::Foreach { variable, list, body } => {
                self.expr(list, bound);
                let mut inner = bound.clone();
                inner.insert(variable.name.clone());
                for c in body {
                    self.clause(c, &mut inner);
                }
            }
            Clause::Call(call) => {
                call.args.iter().flatten().for_each(|a| self.expr(a, bound));
                for (field, alias) in call.yields.iter().flatten() {
                    bound.insert(alias.as_ref().unwrap_or(field).name.clone());
                }
                self.opt(&call.predicate, bound);
            }
            Clause::Subquery { query, .. } => {
                self.query(query, bound);
                for part in &query.parts {
                    if let Some(Clause::Return(r)) = part.clauses.last() {
                        bound.extend(r.items.iter().map(|i| i.name().to_string()));
                    }
                }
            }
        }
    }

    fn set_item(&mut self, item: &SetItem, bound: &HashSet<String>) {
        match item {
            SetItem::Property { value, .. } | SetItem::Properties { value, .. } => self.expr(value, bound),
            SetItem::Labels { dynamic, .. } => dynamic.iter().for_each(|d| self.expr(d, bound)),
        }
    }

    fn opt(&mut self, e: &Option<Expr>, bound: &HashSet<String>) {
        if let Some(e) = e {
            self.expr(e, bound);
        }
    }

    /// A pattern's names: looked for when it is matched (`reads`), made when it is created; its variables
    /// become bound.
    fn pattern_part(&mut self, p: &PatternPart, reads: bool, bound: &mut HashSet<String>) {
        self.element(&p.element, reads, bound);
        self.opt(&p.predicate, bound);
        if let Some(v) = &p.variable {
            bound.insert(v.name.clone());
        }
    }

    fn element(&mut self, e: &PatternElement, reads: bool, bound: &mut HashSet<String>) {
        self.node(&e.start, reads, bound);
        for (rel, node) in &e.chain {
            self.rel(rel, reads, bound);
            self.node(node, reads, bound);
        }
    }

    fn node(&mut self, n: &NodePattern, reads: bool, bound: &mut HashSet<String>) {
        if reads {
            for l in &n.labels {
                self.read(TokenKind::Label, &l.name, l.span);
            }
            if let Some(e) = &n.label_expr {
                self.label_expr(e, TokenKind::Label);
            }
        }
        self.properties(&n.properties, reads, bound);
        n.dynamic_labels.iter().for_each(|d| self.expr(&d.expr, bound));
        if let Some(v) = &n.variable {
            bound.insert(v.name.clone());
        }
    }

    fn rel(&mut self, r: &RelPattern, reads: bool, bound: &mut HashSet<String>) {
        if reads {
            for t in &r.types {
                self.read(TokenKind::Type, &t.name, t.span);
            }
            if let Some(e) = &r.type_expr {
                self.label_expr(e, TokenKind::Type);
            }
        }
        self.properties(&r.properties, reads, bound);
        if let Some(d) = &r.dynamic_type {
            self.expr(&d.expr, bound);
        }
        if let Some(hop) = &r.hop {
            self.node(&hop.from, reads, bound);
            self.node(&hop.to, reads, bound);
            for (rel, node) in &hop.steps {
                self.rel(rel, reads, bound);
                self.node(node, reads, bound);
            }
            self.opt(&hop.predicate, bound);
        }
        if let Some(v) = &r.variable {
            bound.insert(v.name.clone());
        }
    }

    /// A pattern's property map: its keys are read when the pattern is matched.
    fn properties(&mut self, props: &Option<Expr>, reads: bool, bound: &HashSet<String>) {
        match props {
            Some(Expr { kind: ExprKind::Map(entries), .. }) => {
                for (k, v) in entries {
                    if reads {
                        self.read(TokenKind::PropKey, &k.name, k.span);
                    }
                    self.expr(v, bound);
                }
            }
            Some(other) => self.expr(other, bound),
            None => {}
        }
    }

    fn label_expr(&mut self, e: &LabelExpr, kind: TokenKind) {
        match e {
            LabelExpr::Name(n) => self.read(kind, &n.name, n.span),
            LabelExpr::Wildcard => {}
            LabelExpr::Not(inner) => self.label_expr(inner, kind),
            LabelExpr::All(items) | LabelExpr::AnyOf(items) => items.iter().for_each(|i| self.label_expr(i, kind)),
        }
    }

    fn expr(&mut self, e: &Expr, bound: &HashSet<String>) {
        let mut go = |x: &Expr| self.expr(x, bound);
        match &e.kind {
            ExprKind::Literal(_) | ExprKind::Parameter(_) | ExprKind::Variable(_) | ExprKind::CountStar => {}
            ExprKind::Property(base, key) => {
                self.expr(base, bound);
                self.read(TokenKind::PropKey, &key.name, key.span);
            }
            ExprKind::List(items) => items.iter().for_each(go),
            ExprKind::Map(entries) => entries.iter().for_each(|(_, v)| go(v)),
            ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
                go(a);
                go(b);
            }
            ExprKind::Slice(a, from, to) => {
                go(a);
                from.iter().chain(to).for_each(|x| go(x));
            }
            ExprKind::Unary(_, a) | ExprKind::IsNull { expr: a, .. } | ExprKind::TypeTest { expr: a, .. } => go(a),
            ExprKind::HasLabels(a, labels) => {
                self.expr(a, bound);
                for l in labels {
                    self.read(TokenKind::Label, &l.name, l.span);
                }
            }
            ExprKind::LabelTest(a, labels) => {
                self.expr(a, bound);
                self.label_expr(labels, TokenKind::Label);
            }
            ExprKind::Function { name, args, .. } => {
                if name == "id" {
                    self.deprecated_id(e.span);
                }
                args.iter().for_each(|a| self.expr(a, bound));
            }
            ExprKind::Case { operand, whens, otherwise } => {
                operand.iter().for_each(|o| go(o));
                for (w, t) in whens {
                    go(w);
                    go(t);
                }
                otherwise.iter().for_each(|o| go(o));
            }
            ExprKind::ListComprehension { list, filter, map, .. } => {
                go(list);
                filter.iter().chain(map).for_each(|x| go(x));
            }
            ExprKind::Quantified { list, predicate, .. } => {
                go(list);
                go(predicate);
            }
            ExprKind::Reduce { init, list, expr, .. } => {
                go(init);
                go(list);
                go(expr);
            }
            ExprKind::PatternComprehension { pattern, filter, map, .. } => {
                let mut inner = bound.clone();
                self.element(pattern, true, &mut inner);
                if let Some(f) = filter {
                    self.expr(f, &inner);
                }
                self.expr(map, &inner);
            }
            ExprKind::PatternPredicate(pattern) => {
                let mut inner = bound.clone();
                self.element(pattern, true, &mut inner);
            }
            ExprKind::Exists(q) | ExprKind::CountSubquery(q) | ExprKind::CollectSubquery(q) => self.query(q, bound),
            ExprKind::MapProjection { base, items } => {
                self.expr(base, bound);
                for item in items {
                    match item {
                        MapProjectionItem::Property(k) => self.read(TokenKind::PropKey, &k.name, k.span),
                        MapProjectionItem::Entry(_, v) => self.expr(v, bound),
                        MapProjectionItem::AllProperties | MapProjectionItem::Variable(_) => {}
                    }
                }
            }
        }
    }

    fn deprecated_id(&mut self, span: Span) {
        self.notices.fixed.push(Notification {
            code: "Neo.ClientNotification.Statement.FeatureDeprecationWarning",
            title: "This feature is deprecated and will be removed in future versions.",
            description: std::sync::Arc::from("The query used a deprecated function: `id`."),
            severity: Severity::Warning,
            category: "DEPRECATION",
            position: NotificationPosition::of(self.text, span.start),
        });
    }

    /// Patterns of one MATCH that share no variable with each other (nor with what was bound before): every
    /// row of one meets every row of the other.
    fn disconnected(&mut self, patterns: &[PatternPart], bound: &HashSet<String>, span: Span) {
        if patterns.len() < 2 {
            return;
        }
        // Components of the parts, joined by shared variables; everything bound before is one more member.
        let names: Vec<HashSet<String>> = patterns.iter().map(pattern_variables).collect();
        let mut component: Vec<usize> = (0..patterns.len()).collect();
        let find = |c: &Vec<usize>, mut i: usize| {
            while c[i] != i {
                i = c[i];
            }
            i
        };
        for i in 0..patterns.len() {
            for j in 0..i {
                if !names[i].is_disjoint(&names[j]) {
                    let (a, b) = (find(&component, i), find(&component, j));
                    component[a] = b;
                }
            }
        }
        let outside: Vec<usize> = (0..patterns.len()).filter(|&i| !names[i].is_disjoint(bound)).collect();
        for w in outside.windows(2) {
            let (a, b) = (find(&component, w[0]), find(&component, w[1]));
            component[a] = b;
        }
        let first = outside.first().map_or_else(|| find(&component, 0), |&i| find(&component, i));
        let mut loose: Vec<&PatternPart> = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            if find(&component, i) != first {
                loose.push(p);
            }
        }
        if loose.is_empty() {
            return;
        }
        let mut names: Vec<&str> = Vec::new();
        for p in &loose {
            let element = &p.element;
            let vars = std::iter::once(&element.start.variable)
                .chain(element.chain.iter().flat_map(|(r, n)| [&r.variable, &n.variable]));
            for v in vars.flatten() {
                if !names.contains(&v.name.as_str()) {
                    names.push(&v.name);
                }
            }
        }
        let identifiers = match names.len() {
            0 => format!("identifier is: {}", &self.text[loose[0].span.start..loose[0].span.end]),
            1 => format!("identifier is: ({})", names[0]),
            _ => format!("identifiers are: ({})", names.join(", ")),
        };
        self.notices.fixed.push(Notification {
            code: "Neo.ClientNotification.Statement.CartesianProduct",
            title: "This query builds a cartesian product between disconnected patterns.",
            description: std::sync::Arc::from(format!(
                "If a part of a query contains multiple disconnected patterns, this will build a cartesian product \
                 between all those parts. This may produce a large amount of data and slow down query processing. \
                 While occasionally intended, it may often be possible to reformulate the query that avoids the use \
                 of this cross product, perhaps by adding a relationship between the different parts or by using \
                 OPTIONAL MATCH ({identifiers})"
            )),
            severity: Severity::Information,
            category: "PERFORMANCE",
            position: NotificationPosition::of(self.text, span.start),
        });
    }
}

/// The variables a pattern part names (nodes, relationships, the path).
fn pattern_variables(p: &PatternPart) -> HashSet<String> {
    let mut names = HashSet::new();
    let node = |n: &NodePattern, names: &mut HashSet<String>| {
        if let Some(v) = &n.variable {
            names.insert(v.name.clone());
        }
    };
    node(&p.element.start, &mut names);
    for (rel, n) in &p.element.chain {
        if let Some(v) = &rel.variable {
            names.insert(v.name.clone());
        }
        node(n, &mut names);
    }
    if let Some(v) = &p.variable {
        names.insert(v.name.clone());
    }
    names
}
