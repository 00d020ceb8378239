//! Clauses: MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN, CREATE, MERGE, SET, REMOVE, DELETE, FOREACH, CALL.

use super::Parser;
use crate::ast::*;
use crate::error::Result;
use crate::lexer::Tok;

impl Parser<'_> {
    /// The next clause, or `None` at the end of a single query (end of input, `UNION`, `}` or `;`).
    pub(super) fn clause(&mut self) -> Result<Option<Clause>> {
        let start = self.span();
        let clause = if self.at_kw("MATCH") || (self.at_kw("OPTIONAL") && self.at_kw_ahead(1, "MATCH")) {
            let optional = self.eat_kw("OPTIONAL");
            self.expect_kw("MATCH")?;
            let (patterns, predicate) = self.match_patterns_where()?;
            Clause::Match { optional, patterns, predicate, span: start.to(self.prev_span()) }
        } else if self.at_kw("LOAD") && self.at_kw_ahead(1, "CSV") {
            self.bump();
            self.bump();
            let headers = self.eat_kw("WITH");
            if headers {
                self.expect_kw("HEADERS")?;
            }
            self.expect_kw("FROM")?;
            let url = self.expr()?;
            self.expect_kw("AS")?;
            let variable = self.ident("a variable name")?;
            let separator = if self.eat_kw("FIELDTERMINATOR") {
                let at = self.span();
                match self.bump().tok {
                    Tok::Str(s) if s.len() == 1 && !matches!(s.as_bytes()[0], b'"' | b'\n' | b'\r') => s.as_bytes()[0],
                    _ => {
                        return Err(self.error_at(
                            at,
                            "InvalidFieldTerminator",
                            "FIELDTERMINATOR takes a string of one character (one byte), such as ';' or '\\t'",
                        ))
                    }
                }
            } else {
                b','
            };
            Clause::LoadCsv { headers, url, variable, separator, span: start.to(self.prev_span()) }
        } else if self.eat_kw("UNWIND") {
            let list = self.expr()?;
            self.expect_kw("AS")?;
            let variable = self.ident("a variable name")?;
            Clause::Unwind { list, variable }
        } else if self.eat_kw("WITH") {
            Clause::With(self.projection(true)?)
        } else if self.eat_kw("RETURN") {
            Clause::Return(self.projection(false)?)
        } else if (self.at_kw("ORDER") && self.at_kw_ahead(1, "BY"))
            || ["SKIP", "OFFSET", "LIMIT"].iter().any(|k| self.at_kw(k))
        {
            // ORDER BY, SKIP and LIMIT as clauses of their own (GQL, Neo4j 5) are `WITH *` with them.
            let (order_by, skip, limit) = self.order_skip_limit()?;
            let span = start.to(self.prev_span());
            let (distinct, star, items, predicate) = (false, true, Vec::new(), None);
            Clause::With(Projection { distinct, star, items, order_by, skip, limit, predicate, span })
        } else if self.at_kw("FINISH") {
            // `FINISH`: the query ends and returns nothing, whatever its last clause (Neo4j 5).
            let span = self.bump().span;
            Clause::Return(Projection {
                distinct: false,
                star: false,
                items: Vec::new(),
                order_by: Vec::new(),
                skip: None,
                limit: None,
                predicate: None,
                span,
            })
        } else if self.at_kw("CREATE") || self.at_kw("INSERT") {
            // `INSERT` is GQL's name for CREATE (Neo4j 5.26 takes both).
            let keyword = if self.eat_kw("CREATE") {
                "CREATE"
            } else {
                self.bump();
                "INSERT"
            };
            let patterns = self.pattern_list()?;
            self.refuse_quantified_path(keyword)?;
            Clause::Create { patterns, span: start.to(self.prev_span()) }
        } else if self.eat_kw("MERGE") {
            let pattern = self.pattern_part()?;
            self.refuse_quantified_path("MERGE")?;
            let (mut on_create, mut on_match) = (Vec::new(), Vec::new());
            while self.at_kw("ON") {
                self.bump();
                if self.eat_kw("CREATE") {
                    self.expect_kw("SET")?;
                    on_create.extend(self.set_items()?);
                } else if self.eat_kw("MATCH") {
                    self.expect_kw("SET")?;
                    on_match.extend(self.set_items()?);
                } else {
                    return Err(self.unexpected("CREATE or MATCH after ON"));
                }
            }
            Clause::Merge { pattern, on_create, on_match, span: start.to(self.prev_span()) }
        } else if self.eat_kw("SET") {
            Clause::Set { items: self.set_items()? }
        } else if self.eat_kw("REMOVE") {
            let mut items = Vec::new();
            loop {
                items.push(self.remove_item()?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            Clause::Remove { items }
        } else if self.at_kw("DELETE")
            || ((self.at_kw("DETACH") || self.at_kw("NODETACH")) && self.at_kw_ahead(1, "DELETE"))
        {
            // `NODETACH DELETE` spells out plain DELETE's refusal to delete a node with relationships (GQL).
            let detach = self.eat_kw("DETACH");
            if !detach {
                self.eat_kw("NODETACH");
            }
            self.expect_kw("DELETE")?;
            let mut targets = vec![self.expr()?];
            while self.eat(&Tok::Comma) {
                targets.push(self.expr()?);
            }
            Clause::Delete { detach, targets }
        } else if self.eat_kw("FOREACH") {
            self.expect(&Tok::LParen, "'(' after FOREACH")?;
            let variable = self.ident("a variable name")?;
            self.expect_kw("IN")?;
            let list = self.expr_before_pipe()?;
            self.expect(&Tok::Pipe, "'|' in FOREACH")?;
            let body = self.nested(|p| {
                let mut body = Vec::new();
                while let Some(clause) = p.clause()? {
                    body.push(clause);
                }
                Ok(body)
            })?;
            if body.is_empty() {
                return Err(
                    self.unexpected("an updating clause (CREATE, MERGE, SET, REMOVE, DELETE or FOREACH) in FOREACH")
                );
            }
            self.expect(&Tok::RParen, "')' closing FOREACH")?;
            Clause::Foreach { variable, list, body }
        } else if self.at_kw("CALL") || (self.at_kw("OPTIONAL") && self.at_kw_ahead(1, "CALL")) {
            let optional = self.eat_kw("OPTIONAL");
            self.bump();
            // `CALL (a, b) { ... }`, `CALL (*) { ... }`, `CALL () { ... }`: the variables the subquery imports,
            // as the importing `WITH` its body would otherwise start with.
            let imports = if self.at(&Tok::LParen) { Some(self.subquery_scope()?) } else { None };
            if self.eat(&Tok::LBrace) {
                let mut query = self.query()?;
                self.expect(&Tok::RBrace, "'}' closing the subquery")?;
                let scoped = imports.is_some();
                if let Some(imports) = imports {
                    for part in &mut query.parts {
                        part.clauses.insert(0, Clause::With(imports.clone()));
                    }
                }
                let (mut on_error, mut report_status) = (OnError::Fail, None);
                // `IN [n] CONCURRENT TRANSACTIONS` runs the batches one after another: the same rows and effects,
                // in an order Neo4j leaves open for concurrent ones.
                let concurrent = self.at_kw("IN")
                    && (self.at_kw_ahead(1, "CONCURRENT")
                        || (matches!(self.peek_at(1), Tok::Int(_) | Tok::Param(_))
                            && self.at_kw_ahead(2, "CONCURRENT")));
                let in_transactions = if concurrent || (self.at_kw("IN") && self.at_kw_ahead(1, "TRANSACTIONS")) {
                    self.bump();
                    if concurrent {
                        if !self.at_kw("CONCURRENT") {
                            let at = self.span();
                            let threads = self.expr()?;
                            if matches!(threads.kind, ExprKind::Literal(crate::value::Value::Int(n)) if n < 1) {
                                return Err(self.error_at(
                                    at,
                                    "InvalidArgument",
                                    "the number of concurrent transactions must be at least 1",
                                ));
                            }
                        }
                        self.expect_kw("CONCURRENT")?;
                    }
                    self.expect_kw("TRANSACTIONS")?;
                    let rows = if self.eat_kw("OF") {
                        let at = self.span();
                        let rows = self.expr()?;
                        // A number written in the statement is checked now, as Neo4j does; a parameter when it runs.
                        let written = match &rows.kind {
                            ExprKind::Literal(crate::value::Value::Int(n)) => Some(*n),
                            ExprKind::Unary(UnaryOp::Neg, e) => match e.kind {
                                ExprKind::Literal(crate::value::Value::Int(n)) => n.checked_neg(),
                                _ => None,
                            },
                            _ => None,
                        };
                        if let Some(n) = written.filter(|&n| n < 1) {
                            return Err(self.error_at(
                                at,
                                "InvalidArgument",
                                format!("IN TRANSACTIONS OF n ROWS takes a positive integer, not {n}"),
                            ));
                        }
                        if !(self.eat_kw("ROWS") || self.eat_kw("ROW")) {
                            return Err(self.unexpected("ROWS after the number of rows per transaction"));
                        }
                        Some(rows)
                    } else {
                        None
                    };
                    if self.at_kw("ON") && self.at_kw_ahead(1, "ERROR") {
                        self.bump();
                        self.bump();
                        on_error = if self.eat_kw("CONTINUE") {
                            OnError::Continue
                        } else if self.eat_kw("BREAK") {
                            OnError::Break
                        } else if self.eat_kw("FAIL") {
                            OnError::Fail
                        } else {
                            return Err(self.unexpected("CONTINUE, BREAK or FAIL"));
                        };
                    }
                    if self.at_kw("REPORT") {
                        let at = self.span();
                        self.bump();
                        self.expect_kw("STATUS")?;
                        self.expect_kw("AS")?;
                        report_status = Some(self.ident("a variable for the status")?);
                        if on_error == OnError::Fail {
                            return Err(self.error_at(
                                at,
                                "InvalidClauseComposition",
                                "REPORT STATUS can only be used with ON ERROR CONTINUE or ON ERROR BREAK",
                            ));
                        }
                    }
                    Some(rows)
                } else {
                    None
                };
                Clause::Subquery {
                    query: Box::new(query),
                    scoped,
                    optional,
                    in_transactions,
                    on_error,
                    report_status,
                    span: start.to(self.prev_span()),
                }
            } else if imports.is_some() {
                return Err(self.unexpected("'{' starting the subquery"));
            } else {
                Clause::Call(ProcedureCall { optional, ..self.procedure_call(start)? })
            }
        } else {
            return Ok(None);
        };
        Ok(Some(clause))
    }

    /// `(a, b)`, `(*)` or `()` after `CALL`, as the projection of an importing `WITH`.
    fn subquery_scope(&mut self) -> Result<Projection> {
        let start = self.expect(&Tok::LParen, "'('")?;
        let mut star = false;
        let mut items = Vec::new();
        if self.eat(&Tok::Star) {
            star = true;
        } else if !self.at(&Tok::RParen) {
            loop {
                let v = self.ident("a variable to import")?;
                let expr = Expr::new(ExprKind::Variable(v.name.clone()), v.span);
                items.push(ProjectionItem { expr, alias: None, text: v.name.clone() });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let end = self.expect(&Tok::RParen, "')' closing the imported variables")?;
        Ok(Projection {
            distinct: false,
            star,
            items,
            order_by: Vec::new(),
            skip: None,
            limit: None,
            predicate: None,
            span: start.to(end),
        })
    }

    fn procedure_call(&mut self, start: crate::lexer::Span) -> Result<ProcedureCall> {
        let mut name = self.ident("a procedure name")?.name;
        while self.eat(&Tok::Dot) {
            name.push('.');
            name.push_str(&self.ident("a procedure name")?.name);
        }
        let args = if self.eat(&Tok::LParen) {
            let mut args = Vec::new();
            if !self.at(&Tok::RParen) {
                args.push(self.expr()?);
                while self.eat(&Tok::Comma) {
                    args.push(self.expr()?);
                }
            }
            self.expect(&Tok::RParen, "')' closing the arguments")?;
            Some(args)
        } else {
            None
        };
        let (mut yields, mut yield_star, mut predicate) = (None, false, None);
        if self.eat_kw("YIELD") {
            if self.eat(&Tok::Star) {
                yield_star = true;
            } else {
                let mut items = Vec::new();
                loop {
                    let field = self.ident("a field name")?;
                    let alias = if self.eat_kw("AS") { Some(self.ident("an alias")?) } else { None };
                    items.push((field, alias));
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                yields = Some(items);
            }
            if self.eat_kw("WHERE") {
                predicate = Some(self.expr()?);
            }
        }
        Ok(ProcedureCall {
            name,
            args,
            yields,
            yield_star,
            predicate,
            optional: false,
            span: start.to(self.prev_span()),
        })
    }

    /// The body of WITH/RETURN: `[DISTINCT] (* | items) [ORDER BY] [SKIP] [LIMIT]`, plus `WHERE` for WITH.
    pub(super) fn projection(&mut self, is_with: bool) -> Result<Projection> {
        let start = self.prev_span();
        let distinct = self.eat_kw("DISTINCT");
        let mut star = false;
        let mut items = Vec::new();
        if self.eat(&Tok::Star) {
            star = true;
            if self.eat(&Tok::Comma) {
                items = self.projection_items()?;
            }
        } else {
            items = self.projection_items()?;
        }
        let (order_by, skip, limit) = self.order_skip_limit()?;
        let predicate = if is_with && self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
        Ok(Projection { distinct, star, items, order_by, skip, limit, predicate, span: start.to(self.prev_span()) })
    }

    /// `[ORDER BY ...] [SKIP | OFFSET n] [LIMIT n]`, after WITH or RETURN items or as a clause of its own.
    fn order_skip_limit(&mut self) -> Result<(Vec<SortItem>, Option<Expr>, Option<Expr>)> {
        let mut order_by = Vec::new();
        if self.at_kw("ORDER") {
            self.bump();
            self.expect_kw("BY")?;
            loop {
                let expr = self.expr()?;
                let descending = if self.eat_kw("DESC") || self.eat_kw("DESCENDING") {
                    true
                } else {
                    let _ = self.eat_kw("ASC") || self.eat_kw("ASCENDING");
                    false
                };
                order_by.push(SortItem { expr, descending });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let skip = if self.eat_kw("SKIP") || self.eat_kw("OFFSET") { Some(self.expr()?) } else { None };
        let limit = if self.eat_kw("LIMIT") { Some(self.expr()?) } else { None };
        Ok((order_by, skip, limit))
    }

    fn projection_items(&mut self) -> Result<Vec<ProjectionItem>> {
        let mut items = Vec::new();
        loop {
            let expr = self.expr()?;
            // A lone variable is named by its name, without the backticks it may be written with (as in Neo4j),
            // and so is a map projection of one (`RETURN n {.name}` is the column `n` in Neo4j); any other
            // expression by its text as written.
            let named_by = match &expr.kind {
                ExprKind::MapProjection { base, .. } => &base.kind,
                other => other,
            };
            let text = match named_by {
                ExprKind::Variable(name) => name.clone(),
                _ => self.text_of(expr.span).to_string(),
            };
            let alias = if self.eat_kw("AS") { Some(self.ident("an alias after AS")?) } else { None };
            items.push(ProjectionItem { expr, alias, text });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(items)
    }

    fn set_items(&mut self) -> Result<Vec<SetItem>> {
        let mut items = Vec::new();
        loop {
            items.push(self.set_item()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(items)
    }

    fn set_item(&mut self) -> Result<SetItem> {
        if self.at_ident() && matches!(self.peek_at(1), Tok::Colon) {
            let variable = self.ident("a variable")?;
            let (labels, dynamic) = self.label_list()?;
            return Ok(SetItem::Labels { variable, labels, dynamic });
        }
        if self.at_ident() && matches!(self.peek_at(1), Tok::Eq | Tok::PlusEq) {
            let variable = self.ident("a variable")?;
            let merge = self.bump().tok == Tok::PlusEq;
            let value = self.expr()?;
            return Ok(SetItem::Properties { variable, value, merge });
        }
        let (target, key) = self.property_target()?;
        self.expect(&Tok::Eq, "'=' in SET")?;
        let value = self.expr()?;
        Ok(SetItem::Property { target, key, value })
    }

    fn remove_item(&mut self) -> Result<RemoveItem> {
        if self.at_ident() && matches!(self.peek_at(1), Tok::Colon) {
            let variable = self.ident("a variable")?;
            let (labels, dynamic) = self.label_list()?;
            return Ok(RemoveItem::Labels { variable, labels, dynamic });
        }
        let (target, key) = self.property_target()?;
        Ok(RemoveItem::Property { target, key })
    }

    /// `expr.key` where the last lookup is split off: the left side of `SET a.b.c = 1` is `(a.b, c)`; or
    /// `expr[key]`.
    fn property_target(&mut self) -> Result<(Expr, PropertyKey)> {
        let expr = self.postfix_expr()?;
        match expr.kind {
            ExprKind::Property(target, key) => Ok((*target, PropertyKey::Name(key))),
            ExprKind::Index(target, key) => Ok((*target, PropertyKey::Dynamic(*key))),
            _ => Err(self.error_at(expr.span, "UnexpectedSyntax", "expected a property such as n.name")),
        }
    }

    /// `:A:B` (also `:A&B`-free; label expressions beyond conjunction are not supported).
    /// `:A:B` after a variable in SET or REMOVE, where a label may also be computed, `:$(expr)` (Neo4j 5).
    pub(super) fn label_list(&mut self) -> Result<(Vec<Ident>, Vec<Expr>)> {
        let (mut labels, mut dynamic) = (Vec::new(), Vec::new());
        while self.eat(&Tok::Colon) {
            if self.eat(&Tok::Dollar) {
                self.expect(&Tok::LParen, "'(' after '$'")?;
                dynamic.push(self.expr()?);
                self.expect(&Tok::RParen, "')' closing the label expression")?;
            } else {
                labels.push(self.token_name("a label name")?);
            }
        }
        Ok((labels, dynamic))
    }
}

impl Parser<'_> {
    /// After the patterns of a CREATE or MERGE: a parenthesised path there is a quantified path pattern, which
    /// only MATCH takes; say so rather than that the query should have ended.
    fn refuse_quantified_path(&mut self, clause: &str) -> Result<()> {
        if self.at(&Tok::LParen) && self.peek_at(1) == &Tok::LParen {
            return Err(self.error_at(
                self.span(),
                "InvalidQuantifiedPath",
                format!("quantified path patterns cannot be used in a {clause} clause"),
            ));
        }
        Ok(())
    }
}
