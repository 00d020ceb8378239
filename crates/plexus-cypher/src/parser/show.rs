//! `SHOW INDEXES | CONSTRAINTS | PROCEDURES | FUNCTIONS [YIELD ... [WHERE ...] [RETURN ...] | WHERE ...]`.
//!
//! Such a command is parsed into a query: a call of the listing procedure (`crate::builtin`) yielding every
//! column, then the command's own `YIELD` as a `WITH` (it takes the same `ORDER BY`, `SKIP`, `LIMIT` and
//! `WHERE`), then its `RETURN`, or the yielded columns (without `YIELD`, the command's default ones). Errors
//! in the `YIELD`, `WHERE` and `RETURN` parts point into the text as written.

use super::Parser;
use crate::ast::*;
use crate::builtin;
use crate::error::Result;
use crate::lexer::{Span, Tok};

/// Words that may qualify what is shown (`SHOW ALL INDEXES`, `SHOW NODE UNIQUE CONSTRAINTS`, `SHOW BUILT IN
/// FUNCTIONS`): every index and constraint here is of those kinds, and every function built in.
const QUALIFIERS: &[&str] = &["ALL", "RANGE", "UNIQUE", "UNIQUENESS", "PROPERTY", "BUILT", "IN"];
/// Words that name kinds there are none of here (`SHOW TEXT INDEXES`, `SHOW KEY CONSTRAINTS`): the listing is
/// empty, as Neo4j's is for a kind it has none of.
const NONE_OF: &[&str] =
    &["TEXT", "LOOKUP", "POINT", "FULLTEXT", "VECTOR", "EXIST", "EXISTS", "EXISTENCE", "KEY", "TYPE"];
/// Words that keep what is shown to one kind of entity (`SHOW REL UNIQUE CONSTRAINTS`), with the `entityType`
/// they keep.
const ENTITIES: &[(&str, &str)] = &[("NODE", "NODE"), ("REL", "RELATIONSHIP"), ("RELATIONSHIP", "RELATIONSHIP")];

impl Parser<'_> {
    pub(super) fn show_command(&mut self) -> Result<Option<Query>> {
        if !self.at_kw("SHOW") {
            return Ok(None);
        }
        let start = self.bump().span;
        let mut user_defined = false;
        let mut none = false;
        let mut entity: Option<&str> = None;
        loop {
            if QUALIFIERS.iter().any(|q| self.at_kw(q)) {
                self.bump();
            } else if let Some((_, kind)) = ENTITIES.iter().find(|(q, _)| self.at_kw(q)) {
                self.bump();
                // `NODE` and `RELATIONSHIP` together keep nothing.
                none |= entity.is_some_and(|e| e != *kind);
                entity = Some(kind);
            } else if NONE_OF.iter().any(|q| self.at_kw(q)) {
                self.bump();
                none = true;
            } else if self.at_kw("USER") && self.at_kw_ahead(1, "DEFINED") {
                self.bump();
                self.bump();
                user_defined = true;
            } else {
                break;
            }
        }
        let (procedure, columns, default) = if self.eat_kw("INDEXES") || self.eat_kw("INDEX") {
            (builtin::SHOW_INDEXES, builtin::INDEX_COLUMNS, builtin::INDEX_DEFAULT)
        } else if self.eat_kw("CONSTRAINTS") || self.eat_kw("CONSTRAINT") {
            (builtin::SHOW_CONSTRAINTS, builtin::CONSTRAINT_COLUMNS, builtin::CONSTRAINT_DEFAULT)
        } else if self.eat_kw("PROCEDURES") || self.eat_kw("PROCEDURE") {
            (builtin::SHOW_PROCEDURES, builtin::PROCEDURE_COLUMNS, builtin::PROCEDURE_DEFAULT)
        } else if self.eat_kw("FUNCTIONS") || self.eat_kw("FUNCTION") {
            (builtin::SHOW_FUNCTIONS, builtin::FUNCTION_COLUMNS, builtin::FUNCTION_DEFAULT)
        } else {
            return Err(self.unexpected("INDEXES, CONSTRAINTS, PROCEDURES or FUNCTIONS"));
        };
        let span = start.to(self.prev_span());
        let ident = |name: &str| Ident { name: name.to_string(), span };
        let item = |name: &str| ProjectionItem {
            expr: Expr { kind: ExprKind::Variable(name.to_string()), span },
            alias: None,
            text: name.to_string(),
        };
        let items = |names: &[&str]| names.iter().map(|n| item(n)).collect::<Vec<_>>();
        let projection = |items: Vec<ProjectionItem>, predicate: Option<Expr>| Projection {
            distinct: false,
            star: false,
            items,
            order_by: Vec::new(),
            skip: None,
            limit: None,
            predicate,
            span,
        };
        let mut clauses = vec![Clause::Call(ProcedureCall {
            name: procedure.to_string(),
            args: Some(Vec::new()),
            yields: Some(columns.iter().map(|c| (ident(c), None)).collect()),
            yield_star: false,
            predicate: None,
            optional: false,
            span,
        })];
        if none || (user_defined && procedure == builtin::SHOW_FUNCTIONS) {
            // No function is user-defined here, nor any index or constraint of the kinds named.
            clauses.push(Clause::With(projection(items(columns), Some(false_literal(span)))));
        } else if let Some(kind) = entity.filter(|_| columns.contains(&"entityType")) {
            let column = Box::new(Expr { kind: ExprKind::Variable("entityType".into()), span });
            let kind = Box::new(Expr { kind: ExprKind::Literal(crate::value::Value::string(kind)), span });
            let keep = Expr { kind: ExprKind::Binary(BinaryOp::Eq, column, kind), span };
            clauses.push(Clause::With(projection(items(columns), Some(keep))));
        }
        let yielded_any = self.at_kw("YIELD");
        if self.eat_kw("YIELD") {
            let mut yielded = self.projection(true)?;
            if yielded.star {
                // Every column, in the command's order.
                yielded.star = false;
                yielded.items = items(columns);
            }
            let names: Vec<String> =
                yielded.items.iter().map(|i| i.alias.as_ref().map_or(i.text.clone(), |a| a.name.clone())).collect();
            clauses.push(Clause::With(yielded));
            if self.at_kw("RETURN") {
                let first = clauses.len();
                while let Some(clause) = self.clause()? {
                    clauses.push(clause);
                }
                // `RETURN *` right after the YIELD keeps the YIELD's order, as Neo4j's SHOW commands do, instead
                // of sorting the columns by name as `RETURN *` does elsewhere.
                if let Some(Clause::Return(p)) = clauses.get_mut(first) {
                    if p.star {
                        p.star = false;
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        let mut listed = items(&names);
                        listed.append(&mut p.items);
                        p.items = listed;
                    }
                }
            } else {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                clauses.push(Clause::Return(projection(items(&names), None)));
            }
        } else {
            if self.eat_kw("WHERE") {
                let predicate = self.expr()?;
                clauses.push(Clause::With(projection(items(columns), Some(predicate))));
            }
            clauses.push(Clause::Return(projection(items(&columns[..default]), None)));
        }
        if !matches!(self.peek(), Tok::Eof | Tok::Semicolon) {
            let expected = if yielded_any {
                "RETURN or the end of the SHOW command"
            } else {
                "YIELD, WHERE or the end of the SHOW command"
            };
            return Err(self.unexpected(expected));
        }
        Ok(Some(Query { parts: vec![SingleQuery { clauses, starts: Vec::new() }], union_all: Vec::new() }))
    }
}

fn false_literal(span: Span) -> Expr {
    Expr { kind: ExprKind::Literal(crate::value::Value::Bool(false)), span }
}
