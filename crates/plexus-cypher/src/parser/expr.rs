//! Expressions, by precedence from loosest to tightest: OR, XOR, AND, NOT, comparison (chained), string/list/null
//! predicates, + - ||, * / %, ^, unary + -, postfix (property, index, slice, labels), atoms.

use std::sync::Arc;

use super::Parser;
use crate::ast::*;
use crate::error::Result;
use crate::lexer::{Span, Tok};
use crate::value::Value;

/// How deeply expressions may nest (parentheses, lists, maps, arguments, prefix operators): parsing,
/// planning and evaluating recurse once per level, and a query must fail with an error long before it could
/// exhaust a thread's stack (2 MiB by default).
pub(super) const MAX_NESTING: u32 = 200;

/// How many operands one chain of a left-associative operator (`a + b + ...`) may have: each is a level of
/// the tree that evaluation recurses through. (`AND`, `OR` and `XOR` chains are built balanced instead, so
/// that a generated `a = 1 OR a = 2 OR ...` of any length stays shallow.)
const MAX_CHAIN: usize = 500;

/// How many clauses one query may have: each is a level of the plan that planning and execution recurse
/// through, but a generated script of hundreds of `CREATE` clauses is ordinary (the TCK has one of 760).
pub(super) const MAX_CLAUSES: usize = 1000;

pub(super) fn binary(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    let span = l.span.to(r.span);
    Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), span)
}

/// `terms` joined by an associative operator as a balanced tree, operands in their order.
pub(super) fn balanced(op: BinaryOp, mut terms: Vec<Expr>) -> Expr {
    while terms.len() > 1 {
        let mut joined = Vec::with_capacity(terms.len().div_ceil(2));
        let mut pairs = terms.into_iter();
        while let Some(a) = pairs.next() {
            joined.push(match pairs.next() {
                Some(b) => binary(op, a, b),
                None => a,
            });
        }
        terms = joined;
    }
    terms.pop().expect("at least one term")
}

impl Parser<'_> {
    pub(super) fn expr(&mut self) -> Result<Expr> {
        self.nested(Self::or_expr)
    }

    /// Runs `parse` one level of nesting deeper, or fails when there are too many levels.
    /// An expression that a `|` follows (see `pipe_ends_expr`).
    pub(super) fn expr_before_pipe(&mut self) -> Result<Expr> {
        self.pipe_ends_expr += 1;
        let expr = self.expr();
        self.pipe_ends_expr -= 1;
        expr
    }

    pub(super) fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_NESTING {
            return Err(self.error_at(
                self.span(),
                "UnexpectedSyntax",
                format!("the expression is nested too deeply (more than {MAX_NESTING} levels)"),
            ));
        }
        self.depth += 1;
        let result = parse(self);
        self.depth -= 1;
        result
    }

    /// Counts one more operand of a left-associative chain (or hop of a pattern).
    pub(super) fn chain(&self, operands: &mut usize) -> Result<()> {
        self.count(operands, MAX_CHAIN, "operands of one operator or hops of one pattern")
    }

    /// Counts one more of something there may be at most `limit` of.
    pub(super) fn count(&self, n: &mut usize, limit: usize, what: &str) -> Result<()> {
        *n += 1;
        if *n > limit {
            return Err(self.error_at(self.span(), "UnexpectedSyntax", format!("too long: more than {limit} {what}")));
        }
        Ok(())
    }

    fn or_expr(&mut self) -> Result<Expr> {
        let mut terms = vec![self.xor_expr()?];
        while self.eat_kw("OR") {
            terms.push(self.xor_expr()?);
        }
        Ok(balanced(BinaryOp::Or, terms))
    }

    fn xor_expr(&mut self) -> Result<Expr> {
        let mut terms = vec![self.and_expr()?];
        while self.eat_kw("XOR") {
            terms.push(self.and_expr()?);
        }
        Ok(balanced(BinaryOp::Xor, terms))
    }

    fn and_expr(&mut self) -> Result<Expr> {
        let mut terms = vec![self.not_expr()?];
        while self.eat_kw("AND") {
            terms.push(self.not_expr()?);
        }
        Ok(balanced(BinaryOp::And, terms))
    }

    fn not_expr(&mut self) -> Result<Expr> {
        if self.at_kw("NOT") {
            let start = self.bump().span;
            let inner = self.nested(Self::not_expr)?;
            let span = start.to(inner.span);
            return Ok(Expr::new(ExprKind::Unary(UnaryOp::Not, Box::new(inner)), span));
        }
        self.comparison()
    }

    /// `a < b <= c` means `a < b AND b <= c`.
    fn comparison(&mut self) -> Result<Expr> {
        let first = self.predicate_expr()?;
        self.comparison_from(first)
    }

    /// The comparisons after `first`, already parsed.
    pub(super) fn comparison_from(&mut self, first: Expr) -> Result<Expr> {
        let mut result: Option<Expr> = None;
        let mut left = first.clone();
        let mut operands = 1;
        loop {
            let op = match self.peek() {
                Tok::Eq => BinaryOp::Eq,
                Tok::Ne => BinaryOp::Ne,
                Tok::Lt => BinaryOp::Lt,
                Tok::Le => BinaryOp::Le,
                Tok::Gt => BinaryOp::Gt,
                Tok::Ge => BinaryOp::Ge,
                Tok::LeftArrow => {
                    // `a<-1` lexes as an arrow; it is `a < -1`.
                    let span = self.bump().span;
                    self.chain(&mut operands)?;
                    let operand = self.predicate_expr()?;
                    let neg = Expr::new(ExprKind::Unary(UnaryOp::Neg, Box::new(operand)), span.to(self.prev_span()));
                    let cmp = binary(BinaryOp::Lt, left.clone(), neg.clone());
                    result = Some(match result {
                        None => cmp,
                        Some(r) => binary(BinaryOp::And, r, cmp),
                    });
                    left = neg;
                    continue;
                }
                _ => break,
            };
            self.bump();
            self.chain(&mut operands)?;
            let right = self.predicate_expr()?;
            let cmp = binary(op, left.clone(), right.clone());
            result = Some(match result {
                None => cmp,
                Some(r) => binary(BinaryOp::And, r, cmp),
            });
            left = right;
        }
        Ok(result.unwrap_or(first))
    }

    /// `STARTS WITH`, `ENDS WITH`, `CONTAINS`, `IN`, `=~`, `IS [NOT] NULL`.
    fn predicate_expr(&mut self) -> Result<Expr> {
        let left = self.additive()?;
        self.predicate_from(left)
    }

    /// The predicates after `left`, already parsed.
    pub(super) fn predicate_from(&mut self, mut left: Expr) -> Result<Expr> {
        let mut operands = 1;
        loop {
            self.chain(&mut operands)?;
            if self.at_kw("STARTS") && self.at_kw_ahead(1, "WITH") {
                self.bump();
                self.bump();
                let right = self.additive()?;
                left = binary(BinaryOp::StartsWith, left, right);
            } else if self.at_kw("ENDS") && self.at_kw_ahead(1, "WITH") {
                self.bump();
                self.bump();
                let right = self.additive()?;
                left = binary(BinaryOp::EndsWith, left, right);
            } else if self.eat_kw("CONTAINS") {
                let right = self.additive()?;
                left = binary(BinaryOp::Contains, left, right);
            } else if self.eat_kw("IN") {
                let right = self.additive()?;
                left = binary(BinaryOp::In, left, right);
            } else if self.eat(&Tok::RegexMatch) {
                let right = self.additive()?;
                left = binary(BinaryOp::RegexMatch, left, right);
            } else if self.at_kw("IS") {
                self.bump();
                let negated = self.eat_kw("NOT");
                if self.at(&Tok::Colon) || self.at_kw("TYPED") {
                    if !self.eat_kw("TYPED") {
                        self.expect(&Tok::Colon, "'::'")?;
                        self.expect(&Tok::Colon, "'::'")?;
                    }
                    let ty = self.cypher_type()?;
                    let span = left.span.to(self.prev_span());
                    left = Expr::new(ExprKind::TypeTest { expr: Box::new(left), ty, negated }, span);
                    continue;
                }
                // `IS [NOT] [NFC | NFD | NFKC | NFKD] NORMALIZED`
                let form = self.normal_form_keyword();
                if form.is_some() || self.at_kw("NORMALIZED") {
                    self.expect_kw("NORMALIZED")?;
                    let span = left.span.to(self.prev_span());
                    let form =
                        form.unwrap_or_else(|| Expr::new(ExprKind::Literal(crate::value::Value::from("NFC")), span));
                    let args = vec![left, form];
                    let test =
                        Expr::new(ExprKind::Function { name: "is normalized".into(), distinct: false, args }, span);
                    left = if negated { Expr::new(ExprKind::Unary(UnaryOp::Not, Box::new(test)), span) } else { test };
                    continue;
                }
                self.expect_kw("NULL")?;
                let span = left.span.to(self.prev_span());
                left = Expr::new(ExprKind::IsNull { expr: Box::new(left), negated }, span);
            } else if self.at(&Tok::Colon) && self.peek_at(1) == &Tok::Colon {
                self.bump();
                self.bump();
                let ty = self.cypher_type()?;
                let span = left.span.to(self.prev_span());
                left = Expr::new(ExprKind::TypeTest { expr: Box::new(left), ty, negated: false }, span);
            } else {
                return Ok(left);
            }
        }
    }

    /// A type after `::`: members joined by `|` (not where a `|` ends the expression, see `pipe_ends_expr`),
    /// each optionally `NOT NULL`, with the synonyms Neo4j accepts.
    fn cypher_type(&mut self) -> Result<CypherType> {
        let mut members = vec![self.type_member()?];
        while self.pipe_ends_expr == 0 && self.eat(&Tok::Pipe) {
            members.push(self.type_member()?);
        }
        Ok(CypherType { members })
    }

    fn type_member(&mut self) -> Result<(TypeMember, bool)> {
        let word = |p: &mut Self, w: &str| p.eat_kw(w);
        let member = if word(self, "LIST") || word(self, "ARRAY") {
            self.expect(&Tok::Lt, "'<' after LIST")?;
            let inner = self.cypher_type()?;
            self.expect(&Tok::Gt, "'>' closing LIST<...>")?;
            TypeMember::List(Box::new(inner))
        } else if word(self, "ANY") {
            if word(self, "NODE") || word(self, "VERTEX") {
                TypeMember::Plain(BaseType::Node)
            } else if word(self, "RELATIONSHIP") || word(self, "EDGE") {
                TypeMember::Plain(BaseType::Relationship)
            } else if word(self, "MAP") {
                TypeMember::Plain(BaseType::Map)
            } else if word(self, "PROPERTY") {
                self.expect_kw("VALUE")?;
                TypeMember::PropertyValue
            } else {
                word(self, "VALUE");
                TypeMember::Any
            }
        } else if word(self, "NOTHING") {
            TypeMember::Nothing
        } else if word(self, "NULL") {
            TypeMember::Null
        } else if word(self, "PROPERTY") {
            self.expect_kw("VALUE")?;
            TypeMember::PropertyValue
        } else if word(self, "BOOL") || word(self, "BOOLEAN") {
            TypeMember::Plain(BaseType::Boolean)
        } else if word(self, "STRING") || word(self, "VARCHAR") {
            TypeMember::Plain(BaseType::String)
        } else if word(self, "INT") || word(self, "INTEGER") {
            TypeMember::Plain(BaseType::Integer)
        } else if word(self, "SIGNED") {
            self.expect_kw("INTEGER")?;
            TypeMember::Plain(BaseType::Integer)
        } else if word(self, "FLOAT") {
            TypeMember::Plain(BaseType::Float)
        } else if word(self, "DATE") {
            TypeMember::Plain(BaseType::Date)
        } else if word(self, "LOCAL") {
            if word(self, "TIME") {
                TypeMember::Plain(BaseType::LocalTime)
            } else {
                self.expect_kw("DATETIME")?;
                TypeMember::Plain(BaseType::LocalDateTime)
            }
        } else if word(self, "ZONED") {
            if word(self, "TIME") {
                TypeMember::Plain(BaseType::ZonedTime)
            } else {
                self.expect_kw("DATETIME")?;
                TypeMember::Plain(BaseType::ZonedDateTime)
            }
        } else if self.at_kw("TIME") || self.at_kw("TIMESTAMP") {
            let timestamp = self.at_kw("TIMESTAMP");
            self.bump();
            let with = if word(self, "WITH") {
                true
            } else {
                self.expect_kw("WITHOUT")?;
                false
            };
            if !word(self, "TIMEZONE") {
                self.expect_kw("TIME")?;
                self.expect_kw("ZONE")?;
            }
            TypeMember::Plain(match (timestamp, with) {
                (false, false) => BaseType::LocalTime,
                (false, true) => BaseType::ZonedTime,
                (true, false) => BaseType::LocalDateTime,
                (true, true) => BaseType::ZonedDateTime,
            })
        } else if word(self, "DURATION") {
            TypeMember::Plain(BaseType::Duration)
        } else if word(self, "POINT") {
            TypeMember::Plain(BaseType::Point)
        } else if word(self, "NODE") || word(self, "VERTEX") {
            TypeMember::Plain(BaseType::Node)
        } else if word(self, "RELATIONSHIP") || word(self, "EDGE") {
            TypeMember::Plain(BaseType::Relationship)
        } else if word(self, "MAP") {
            TypeMember::Plain(BaseType::Map)
        } else if word(self, "PATH") {
            TypeMember::Plain(BaseType::Path)
        } else {
            return Err(self.unexpected("a type (INTEGER, STRING, LIST<...>, ...)"));
        };
        let not_null = if self.at_kw("NOT") && self.at_kw_ahead(1, "NULL") {
            self.bump();
            self.bump();
            true
        } else {
            self.eat(&Tok::Bang)
        };
        Ok((member, not_null))
    }

    fn additive(&mut self) -> Result<Expr> {
        let mut left = self.multiplicative()?;
        let mut operands = 1;
        loop {
            let op = match self.peek() {
                Tok::Plus => BinaryOp::Add,
                Tok::Minus => BinaryOp::Sub,
                Tok::Pipe if self.at_double_pipe() => BinaryOp::Concat,
                _ => return Ok(left),
            };
            self.chain(&mut operands)?;
            if op == BinaryOp::Concat {
                self.bump();
            }
            self.bump();
            let right = self.multiplicative()?;
            left = binary(op, left, right);
        }
    }

    /// `||`: two `|` with nothing between them (`| |` is not the operator).
    fn at_double_pipe(&self) -> bool {
        let (first, second) = (&self.tokens[self.pos], self.peek_at(1));
        second == &Tok::Pipe && self.tokens.get(self.pos + 1).is_some_and(|t| t.span.start == first.span.end)
    }

    fn multiplicative(&mut self) -> Result<Expr> {
        let mut left = self.power()?;
        let mut operands = 1;
        loop {
            let op = match self.peek() {
                Tok::Star => BinaryOp::Mul,
                Tok::Slash => BinaryOp::Div,
                Tok::Percent => BinaryOp::Mod,
                _ => return Ok(left),
            };
            self.chain(&mut operands)?;
            self.bump();
            let right = self.power()?;
            left = binary(op, left, right);
        }
    }

    fn power(&mut self) -> Result<Expr> {
        let mut left = self.unary()?;
        let mut operands = 1;
        while self.eat(&Tok::Caret) {
            self.chain(&mut operands)?;
            let right = self.unary()?;
            left = binary(BinaryOp::Pow, left, right);
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr> {
        match self.peek() {
            Tok::Minus => {
                let start = self.bump().span;
                // A negative literal is folded so that -9223372036854775808 is representable.
                if let Tok::BigInt(text) = self.peek().clone() {
                    let magnitude = if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                        u64::from_str_radix(h, 16).ok()
                    } else if let Some(o) = text.strip_prefix("0o").or_else(|| text.strip_prefix("0O")) {
                        u64::from_str_radix(o, 8).ok()
                    } else {
                        text.parse::<u64>().ok()
                    };
                    if magnitude == Some(1u64 << 63) {
                        let end = self.bump().span;
                        return self.postfix(Expr::new(ExprKind::Literal(Value::Int(i64::MIN)), start.to(end)));
                    }
                }
                let inner = self.nested(Self::unary)?;
                let span = start.to(inner.span);
                Ok(Expr::new(ExprKind::Unary(UnaryOp::Neg, Box::new(inner)), span))
            }
            Tok::Plus => {
                let start = self.bump().span;
                let inner = self.nested(Self::unary)?;
                let span = start.to(inner.span);
                Ok(Expr::new(ExprKind::Unary(UnaryOp::Plus, Box::new(inner)), span))
            }
            _ => self.postfix_expr(),
        }
    }

    pub(super) fn postfix_expr(&mut self) -> Result<Expr> {
        let atom = self.atom()?;
        self.postfix(atom)
    }

    fn postfix(&mut self, mut expr: Expr) -> Result<Expr> {
        let mut operands = 1;
        loop {
            if matches!(self.peek(), Tok::Dot | Tok::LBracket | Tok::Colon) {
                self.chain(&mut operands)?;
            }
            match self.peek() {
                Tok::Dot => {
                    self.bump();
                    let key = self.token_name("a property name after '.'")?;
                    let span = expr.span.to(key.span);
                    expr = Expr::new(ExprKind::Property(Box::new(expr), key), span);
                }
                Tok::LBracket => {
                    self.bump();
                    if self.eat(&Tok::DotDot) {
                        let to = if self.at(&Tok::RBracket) { None } else { Some(Box::new(self.expr()?)) };
                        let end = self.expect(&Tok::RBracket, "']'")?;
                        let span = expr.span.to(end);
                        expr = Expr::new(ExprKind::Slice(Box::new(expr), None, to), span);
                        continue;
                    }
                    let index = self.expr()?;
                    if self.eat(&Tok::DotDot) {
                        let to = if self.at(&Tok::RBracket) { None } else { Some(Box::new(self.expr()?)) };
                        let end = self.expect(&Tok::RBracket, "']'")?;
                        let span = expr.span.to(end);
                        expr = Expr::new(ExprKind::Slice(Box::new(expr), Some(Box::new(index)), to), span);
                    } else {
                        let end = self.expect(&Tok::RBracket, "']'")?;
                        let span = expr.span.to(end);
                        expr = Expr::new(ExprKind::Index(Box::new(expr), Box::new(index)), span);
                    }
                }
                // `x::TYPE` is a type predicate, left to the comparison level.
                Tok::Colon if self.peek_at(1) != &Tok::Colon => {
                    self.bump();
                    let test = self.label_expression(self.pipe_ends_expr == 0)?;
                    let span = expr.span.to(self.prev_span());
                    let kind = match test.conjunction() {
                        Some(labels) => ExprKind::HasLabels(Box::new(expr), labels),
                        None => ExprKind::LabelTest(Box::new(expr), test),
                    };
                    expr = Expr::new(kind, span);
                }
                _ => return Ok(expr),
            }
        }
    }

    fn atom(&mut self) -> Result<Expr> {
        let start = self.span();
        let lit = |v: Value| ExprKind::Literal(v);
        match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                Ok(Expr::new(lit(Value::Int(v)), start))
            }
            Tok::BigInt(text) => Err(self.error_at(start, "IntegerOverflow", format!("integer is too large: {text}"))),
            Tok::Float(v) => {
                self.bump();
                Ok(Expr::new(lit(Value::Float(v)), start))
            }
            Tok::Str(s) => {
                self.bump();
                Ok(Expr::new(lit(Value::String(Arc::from(s))), start))
            }
            Tok::Param(name) => {
                self.bump();
                Ok(Expr::new(ExprKind::Parameter(name), start))
            }
            Tok::LBrace => self.map_literal(),
            Tok::LBracket => self.bracket_expr(),
            Tok::LParen => {
                if let Some((pattern, inline)) = self.try_relationship_pattern() {
                    if let Some(inline) = inline {
                        return Err(self.error_at(
                            inline.span,
                            "UnexpectedSyntax",
                            "WHERE inside a pattern predicate is not allowed; use EXISTS { } instead",
                        ));
                    }
                    return Ok(Expr::new(ExprKind::PatternPredicate(Box::new(pattern)), start.to(self.prev_span())));
                }
                self.bump();
                let inner = self.expr()?;
                let end = self.expect(&Tok::RParen, "')'")?;
                Ok(Expr::new(inner.kind, start.to(end)))
            }
            Tok::Ident { name, quoted } => self.ident_atom(name, quoted, start),
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn ident_atom(&mut self, name: String, quoted: bool, start: Span) -> Result<Expr> {
        let upper = if quoted { String::new() } else { name.to_ascii_uppercase() };
        let next_is = |p: &Self, t: &Tok| p.peek_at(1) == t;
        match upper.as_str() {
            "TRUE" => {
                self.bump();
                return Ok(Expr::new(ExprKind::Literal(Value::Bool(true)), start));
            }
            "FALSE" => {
                self.bump();
                return Ok(Expr::new(ExprKind::Literal(Value::Bool(false)), start));
            }
            "NULL" => {
                self.bump();
                return Ok(Expr::new(ExprKind::Literal(Value::Null), start));
            }
            // Neo4j 5's float literals (like `true`, they win over a variable of the same name; `` `nan` `` is one).
            "NAN" | "INF" | "INFINITY" if !next_is(self, &Tok::LParen) => {
                self.bump();
                let v = if upper == "NAN" { f64::NAN } else { f64::INFINITY };
                return Ok(Expr::new(ExprKind::Literal(Value::Float(v)), start));
            }
            "CASE" => return self.case_expr(),
            "COUNT" if next_is(self, &Tok::LParen) && self.peek_at(2) == &Tok::Star => {
                self.bump();
                self.bump();
                self.bump();
                let end = self.expect(&Tok::RParen, "')' after count(*")?;
                return Ok(Expr::new(ExprKind::CountStar, start.to(end)));
            }
            "COUNT" | "EXISTS" | "COLLECT" if next_is(self, &Tok::LBrace) => {
                self.bump();
                self.bump();
                let query = self.subquery_body()?;
                let end = self.expect(&Tok::RBrace, "'}' closing the subquery")?;
                let q = Box::new(query);
                let kind = match upper.as_str() {
                    "COUNT" => ExprKind::CountSubquery(q),
                    "EXISTS" => ExprKind::Exists(q),
                    _ => ExprKind::CollectSubquery(q),
                };
                return Ok(Expr::new(kind, start.to(end)));
            }
            "ALL" | "ANY" | "NONE" | "SINGLE"
                if next_is(self, &Tok::LParen)
                    && matches!(self.peek_at(2), Tok::Ident { .. })
                    && self.at_kw_ahead(3, "IN") =>
            {
                self.bump();
                self.bump();
                let variable = self.ident("a variable")?;
                self.expect_kw("IN")?;
                let list = self.expr()?;
                let predicate = if self.eat_kw("WHERE") {
                    self.expr()?
                } else {
                    return Err(self.unexpected("WHERE in a quantifier"));
                };
                let end = self.expect(&Tok::RParen, "')'")?;
                let quantifier = match upper.as_str() {
                    "ALL" => Quantifier::All,
                    "ANY" => Quantifier::Any,
                    "NONE" => Quantifier::None,
                    _ => Quantifier::Single,
                };
                return Ok(Expr::new(
                    ExprKind::Quantified { quantifier, variable, list: Box::new(list), predicate: Box::new(predicate) },
                    start.to(end),
                ));
            }
            "REDUCE" if next_is(self, &Tok::LParen) => {
                self.bump();
                self.bump();
                let accumulator = self.ident("an accumulator variable")?;
                self.expect(&Tok::Eq, "'='")?;
                let init = self.expr()?;
                self.expect(&Tok::Comma, "','")?;
                let variable = self.ident("a variable")?;
                self.expect_kw("IN")?;
                let list = self.expr_before_pipe()?;
                self.expect(&Tok::Pipe, "'|'")?;
                let expr = self.expr()?;
                let end = self.expect(&Tok::RParen, "')'")?;
                return Ok(Expr::new(
                    ExprKind::Reduce {
                        accumulator,
                        init: Box::new(init),
                        variable,
                        list: Box::new(list),
                        expr: Box::new(expr),
                    },
                    start.to(end),
                ));
            }
            _ => {}
        }
        if let Some(call) = self.function_call(start)? {
            return Ok(call);
        }
        self.bump();
        let var = Expr::new(ExprKind::Variable(name), start);
        if self.at(&Tok::LBrace) {
            return self.map_projection(var);
        }
        Ok(var)
    }

    /// The inside of `EXISTS { }`, `COUNT { }`, `COLLECT { }`: a full query, or a pattern with optional WHERE.
    fn subquery_body(&mut self) -> Result<Query> {
        let starts_clause =
            ["MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL", "UNION"].iter().any(|k| self.at_kw(k));
        if starts_clause {
            return self.query();
        }
        let start = self.span();
        let (patterns, predicate) = self.match_patterns_where()?;
        let span = start.to(self.prev_span());
        Ok(Query {
            parts: vec![SingleQuery {
                clauses: vec![Clause::Match { optional: false, patterns, predicate, span }],
                starts: vec![span.start],
            }],
            union_all: vec![],
        })
    }

    pub(super) fn map_literal(&mut self) -> Result<Expr> {
        let start = self.expect(&Tok::LBrace, "'{'")?;
        let mut entries = Vec::new();
        if !self.at(&Tok::RBrace) {
            loop {
                let key = self.ident("a map key")?;
                self.expect(&Tok::Colon, "':' after the map key")?;
                let value = self.expr()?;
                entries.push((key, value));
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let end = self.expect(&Tok::RBrace, "'}' closing the map")?;
        Ok(Expr::new(ExprKind::Map(entries), start.to(end)))
    }

    fn map_projection(&mut self, base: Expr) -> Result<Expr> {
        self.expect(&Tok::LBrace, "'{'")?;
        let mut items = Vec::new();
        if !self.at(&Tok::RBrace) {
            loop {
                if self.eat(&Tok::Dot) {
                    if self.eat(&Tok::Star) {
                        items.push(MapProjectionItem::AllProperties);
                    } else {
                        items.push(MapProjectionItem::Property(self.token_name("a property name")?));
                    }
                } else {
                    let key = self.ident("a key, .property or .*")?;
                    if self.eat(&Tok::Colon) {
                        items.push(MapProjectionItem::Entry(key, self.expr()?));
                    } else {
                        items.push(MapProjectionItem::Variable(key));
                    }
                }
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let end = self.expect(&Tok::RBrace, "'}' closing the map projection")?;
        let span = base.span.to(end);
        Ok(Expr::new(ExprKind::MapProjection { base: Box::new(base), items }, span))
    }

    /// `[...]`: a list literal, a list comprehension or a pattern comprehension.
    fn bracket_expr(&mut self) -> Result<Expr> {
        let start = self.expect(&Tok::LBracket, "'['")?;
        // List comprehension: [x IN list WHERE p | expr]
        if self.at_ident() && self.at_kw_ahead(1, "IN") {
            let saved = self.pos;
            let variable = self.ident("a variable")?;
            self.bump();
            let list = self.expr_before_pipe()?;
            if matches!(self.peek(), Tok::RBracket | Tok::Pipe) || self.at_kw("WHERE") {
                let filter = if self.eat_kw("WHERE") { Some(Box::new(self.expr_before_pipe()?)) } else { None };
                let map = if self.eat(&Tok::Pipe) { Some(Box::new(self.expr()?)) } else { None };
                let end = self.expect(&Tok::RBracket, "']' closing the list comprehension")?;
                return Ok(Expr::new(
                    ExprKind::ListComprehension { variable, list: Box::new(list), filter, map },
                    start.to(end),
                ));
            }
            self.pos = saved;
        }
        // Pattern comprehension: [p = (a)-->(b) WHERE ... | expr]
        let saved = self.pos;
        let path = if self.at_ident() && self.peek_at(1) == &Tok::Eq && self.peek_at(2) == &Tok::LParen {
            let p = self.ident("a path variable")?;
            self.bump();
            Some(p)
        } else {
            None
        };
        if self.at(&Tok::LParen) {
            if let Some((pattern, inline)) = self.try_relationship_pattern() {
                let filter = if self.eat_kw("WHERE") { Some(self.expr_before_pipe()?) } else { None };
                let filter = super::pattern::conjunction(inline, filter).map(Box::new);
                if self.eat(&Tok::Pipe) {
                    let map = Box::new(self.expr()?);
                    let end = self.expect(&Tok::RBracket, "']' closing the pattern comprehension")?;
                    return Ok(Expr::new(
                        ExprKind::PatternComprehension { path, pattern: Box::new(pattern), filter, map },
                        start.to(end),
                    ));
                }
            }
        }
        self.pos = saved;
        let mut items = Vec::new();
        if !self.at(&Tok::RBracket) {
            items.push(self.expr()?);
            while self.eat(&Tok::Comma) {
                items.push(self.expr()?);
            }
        }
        let end = self.expect(&Tok::RBracket, "']' closing the list")?;
        Ok(Expr::new(ExprKind::List(items), start.to(end)))
    }
}
