//! The parser: tokens to an [`ast::Statement`](crate::ast::Statement), by recursive descent.
//!
//! [`Parser`] holds the token cursor and the helpers every part uses; clauses are parsed here, expressions in
//! [`expr`] (function calls in [`call`]), patterns in [`pattern`], schema commands in [`schema`]. Errors are syntax errors at compile time,
//! positioned at the offending token and saying what was expected.

mod call;
mod case;
mod clause;
mod expr;
mod pattern;
mod schema;
mod show;

use crate::ast::*;
use crate::error::{CypherError, Position, Result};
use crate::lexer::{tokenize, Span, Tok, Token};

/// Parses one statement (an optional trailing semicolon is allowed).
pub fn parse(text: &str) -> Result<Statement> {
    let tokens = tokenize(text)?;
    let mut p = Parser::new(text, tokens);
    let statement = p.statement()?;
    p.eat(&Tok::Semicolon);
    if !p.at(&Tok::Eof) {
        return Err(p.unexpected("the end of the query"));
    }
    Ok(statement)
}

/// Parses `text` as one constant expression, the value of a parameter given on a command line: literals, lists
/// and maps of them, operators and function calls over them (`date('2024-01-01')`, `-1`, `[1, 2]`). Anything
/// that reads a variable, a parameter or the graph, or any text after the expression, is a syntax error
/// positioned in `text` itself.
pub fn parse_constant(text: &str) -> Result<Expr> {
    let tokens = tokenize(text)?;
    let mut p = Parser::new(text, tokens);
    let expr = p.expr()?;
    if !p.at(&Tok::Eof) {
        return Err(p.unexpected("the end of the value"));
    }
    if let Some(span) = not_constant(&expr) {
        return Err(p.error_at(span, "UnexpectedSyntax", "expected a constant value (a literal, list or map)"));
    }
    Ok(expr)
}

/// The span of the first part of `e` that is not a constant, if any.
fn not_constant(e: &Expr) -> Option<Span> {
    match &e.kind {
        ExprKind::Literal(_) => None,
        ExprKind::List(items) => items.iter().find_map(not_constant),
        ExprKind::Map(entries) => entries.iter().find_map(|(_, v)| not_constant(v)),
        ExprKind::Unary(_, a) => not_constant(a),
        ExprKind::Binary(_, a, b) => not_constant(a).or_else(|| not_constant(b)),
        ExprKind::Index(a, b) => not_constant(a).or_else(|| not_constant(b)),
        ExprKind::Property(a, _) => not_constant(a),
        ExprKind::Function { args, .. } => args.iter().find_map(not_constant),
        _ => Some(e.span),
    }
}

pub(crate) struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    /// Levels of expression nesting open at the cursor (see [`expr::MAX_NESTING`]).
    depth: u32,
    /// Inside an expression that a `|` ends (a comprehension's list or filter, `reduce`, `FOREACH`): there a
    /// label expression takes `|` only between parentheses (`x:(A|B)`).
    pipe_ends_expr: u32,
    /// Parsing a MATCH pattern, where quantified path patterns may appear (not in CREATE, MERGE or expressions).
    quantified_paths: bool,
    /// Where `WHERE` may follow a node's or relationship's properties (`(n:A WHERE n.x > 1)`, as in Neo4j 5): the
    /// conditions met so far, which the pattern's own WHERE then includes. `None` elsewhere (CREATE, MERGE).
    inline_predicates: Option<Vec<Expr>>,
    /// Attempts to read a pattern predicate inside an expression that failed (see `try_relationship_pattern`).
    failed_patterns: u32,
    /// For each `(` token, the index of its `)` (`u32::MAX` when unclosed), worked out once when first asked:
    /// finding it by scanning made deeply parenthesised input take time cubic in its length.
    closing_parens: std::cell::OnceCell<Vec<u32>>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, tokens: Vec<Token>) -> Parser<'a> {
        Parser {
            text,
            tokens,
            pos: 0,
            depth: 0,
            pipe_ends_expr: 0,
            quantified_paths: false,
            inline_predicates: None,
            failed_patterns: 0,
            closing_parens: std::cell::OnceCell::new(),
        }
    }

    /// The index of the `)` closing the `(` at token `at`.
    fn closing_paren(&self, at: usize) -> Option<usize> {
        let closing = self.closing_parens.get_or_init(|| {
            let mut closing = vec![u32::MAX; self.tokens.len()];
            let mut open = Vec::new();
            for (i, t) in self.tokens.iter().enumerate() {
                match t.tok {
                    Tok::LParen => open.push(i),
                    Tok::RParen => {
                        if let Some(o) = open.pop() {
                            closing[o] = i as u32;
                        }
                    }
                    _ => {}
                }
            }
            closing
        });
        closing.get(at).filter(|&&c| c != u32::MAX).map(|&c| c as usize)
    }
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        let i = (self.pos + ahead).min(self.tokens.len() - 1);
        &self.tokens[i].tok
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    /// The span of the token just consumed.
    fn prev_span(&self) -> Span {
        self.tokens[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn at(&self, tok: &Tok) -> bool {
        self.peek() == tok
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.at(tok) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Result<Span> {
        if self.at(tok) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(what))
        }
    }

    /// True when the current token is the (unquoted) keyword `kw`.
    fn at_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident { name, quoted: false } if name.eq_ignore_ascii_case(kw))
    }

    fn at_kw_ahead(&self, ahead: usize, kw: &str) -> bool {
        matches!(self.peek_at(ahead), Tok::Ident { name, quoted: false } if name.eq_ignore_ascii_case(kw))
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str) -> Result<Span> {
        if self.at_kw(kw) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(kw))
        }
    }

    /// Any name (keywords included: `MATCH (match)` is legal).
    fn ident(&mut self, what: &str) -> Result<Ident> {
        match self.peek().clone() {
            Tok::Ident { name, .. } => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    /// The name of a label, relationship type or property key: an empty one (`` n.`` ``) names nothing.
    fn token_name(&mut self, what: &str) -> Result<Ident> {
        let name = self.ident(what)?;
        if name.name.is_empty() {
            return Err(self.error_at(name.span, "InvalidTokenName", "'' is not a valid token name"));
        }
        Ok(name)
    }

    /// A symbolic name that may appear as a variable; used where keywords that start clauses would be ambiguous.
    fn at_ident(&self) -> bool {
        matches!(self.peek(), Tok::Ident { .. })
    }

    fn error_at(&self, span: Span, detail: &'static str, message: impl Into<String>) -> CypherError {
        CypherError::syntax(detail, message).at(Position::locate(self.text, span.start))
    }

    fn unexpected(&self, expected: &str) -> CypherError {
        let found = match self.peek() {
            Tok::Eof => "the end of the query".to_string(),
            _ => {
                let s = self.span();
                format!("'{}'", &self.text[s.start..s.end])
            }
        };
        self.error_at(self.span(), "UnexpectedSyntax", format!("expected {expected}, found {found}"))
    }

    fn text_of(&self, span: Span) -> &'a str {
        &self.text[span.start..span.end]
    }

    /// `CYPHER 5`, `CYPHER runtime=slotted`, ...: the language version and planner options Neo4j takes at the
    /// head of a query. Plexus speaks Cypher 5 (and the Cypher 25 it has in common) with one planner and runtime,
    /// so the options are read and change nothing.
    fn query_options(&mut self) -> Result<()> {
        while self.at_kw("CYPHER") {
            self.bump();
            match self.peek().clone() {
                Tok::Int(5 | 25) => {
                    self.bump();
                }
                Tok::Int(_) | Tok::Float(_) => {
                    let found = self.text_of(self.span()).to_string();
                    return Err(self.error_at(
                        self.span(),
                        "UnsupportedCypherVersion",
                        format!("Cypher version {found} is not supported: Plexus speaks Cypher 5 (and 25)"),
                    ));
                }
                _ => {}
            }
            while matches!(self.peek(), Tok::Ident { quoted: false, .. }) && matches!(self.peek_at(1), Tok::Eq) {
                self.bump();
                self.bump();
                match self.peek() {
                    Tok::Ident { .. } | Tok::Int(_) | Tok::Str(_) => {
                        self.bump();
                    }
                    _ => return Err(self.unexpected("the option's value")),
                }
            }
        }
        Ok(())
    }

    fn statement(&mut self) -> Result<Statement> {
        self.query_options()?;
        let mode = if self.eat_kw("EXPLAIN") {
            RunMode::Explain
        } else if self.eat_kw("PROFILE") {
            RunMode::Profile
        } else {
            RunMode::Normal
        };
        if let Some(query) = self.show_command()? {
            return Ok(Statement { kind: StatementKind::Query(query), mode });
        }
        if let Some(command) = self.schema_command()? {
            return Ok(Statement { kind: StatementKind::Schema(command), mode });
        }
        let query = self.query()?;
        Ok(Statement { kind: StatementKind::Query(query), mode })
    }

    /// `USE neo4j` or `USE graph.byName('neo4j')` at the head of a query: the one graph there is, so it changes
    /// nothing; any other name is an error.
    fn use_clause(&mut self) -> Result<()> {
        if !(self.at_kw("USE") && matches!(self.peek_at(1), Tok::Ident { .. })) {
            return Ok(());
        }
        self.bump();
        let at = self.span();
        let mut name = self.ident("a graph name")?.name;
        while self.eat(&Tok::Dot) {
            name.push('.');
            name.push_str(&self.ident("a graph name")?.name);
        }
        if name.eq_ignore_ascii_case("graph.byName") {
            self.expect(&Tok::LParen, "'(' after graph.byName")?;
            name = match self.bump().tok {
                Tok::Str(s) => s,
                _ => {
                    return Err(self.error_at(
                        at,
                        "InvalidArgumentType",
                        "graph.byName takes the graph's name as a string",
                    ))
                }
            };
            self.expect(&Tok::RParen, "')' closing graph.byName")?;
        }
        if !name.eq_ignore_ascii_case("neo4j") {
            return Err(self.error_at(
                at,
                "GraphNotFound",
                format!("there is no graph `{name}`: Plexus has one, `neo4j`"),
            ));
        }
        Ok(())
    }

    /// `single (UNION [ALL] single)*`.
    fn query(&mut self) -> Result<Query> {
        // Subqueries (`CALL { ... }`, `EXISTS { ... }`) nest queries: they count as levels of nesting too.
        self.nested(Self::union)
    }

    fn union(&mut self) -> Result<Query> {
        let mut parts = vec![self.single_query()?];
        let mut union_all = Vec::new();
        while self.at_kw("UNION") {
            let at = self.bump().span;
            let all = self.eat_kw("ALL");
            if union_all.first().is_some_and(|first| *first != all) {
                return Err(self.error_at(at, "InvalidClauseComposition", "cannot mix UNION and UNION ALL"));
            }
            union_all.push(all);
            parts.push(self.single_query()?);
        }
        Ok(Query { parts, union_all })
    }

    fn single_query(&mut self) -> Result<SingleQuery> {
        self.use_clause()?;
        let mut clauses = Vec::new();
        let mut starts = Vec::new();
        let mut count = 0;
        loop {
            let start = self.span().start;
            let Some(clause) = self.clause()? else { break };
            self.count(&mut count, expr::MAX_CLAUSES, "clauses in one query")?;
            clauses.push(clause);
            starts.push(start);
        }
        if clauses.is_empty() {
            return Err(self.unexpected("a clause (MATCH, CREATE, RETURN, ...)"));
        }
        Ok(SingleQuery { clauses, starts })
    }
}

#[cfg(test)]
mod tests;
