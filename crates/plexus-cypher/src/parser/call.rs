//! Function calls, including the forms that are not a plain argument list: Neo4j's SQL-style
//! `trim([BOTH | LEADING | TRAILING] [characters] FROM source)`.

use super::Parser;
use crate::ast::*;
use crate::error::Result;
use crate::lexer::{Span, Tok};

/// The functions `trim(... FROM ...)` becomes, by side. They are not names a query can spell unquoted, and unlike
/// `btrim`/`ltrim`/`rtrim` they take exactly one character to strip, as Neo4j requires of this form.
pub(crate) const TRIM_BOTH: &str = "trim both";
pub(crate) const TRIM_LEADING: &str = "trim leading";
pub(crate) const TRIM_TRAILING: &str = "trim trailing";

impl Parser<'_> {
    /// A function call at the cursor (a dotted name followed by '('), or `None` with the cursor unmoved.
    pub(super) fn function_call(&mut self, start: Span) -> Result<Option<Expr>> {
        let mut ahead = 1;
        while self.peek_at(ahead) == &Tok::Dot && matches!(self.peek_at(ahead + 1), Tok::Ident { .. }) {
            ahead += 2;
        }
        if self.peek_at(ahead) != &Tok::LParen {
            return Ok(None);
        }
        let mut full = String::new();
        for i in (0..ahead).step_by(2) {
            if let Tok::Ident { name, .. } = self.peek_at(i) {
                if !full.is_empty() {
                    full.push('.');
                }
                full.push_str(name);
            }
        }
        let trim = ahead == 1 && self.at_kw("TRIM");
        for _ in 0..=ahead {
            self.bump();
        }
        let distinct = self.eat_kw("DISTINCT");
        let name = full.to_ascii_lowercase();
        let mut args = Vec::new();
        if trim && !distinct {
            match self.trim_from()? {
                TrimForm::From(side, trim_args) => {
                    let end = self.expect(&Tok::RParen, "')' closing the arguments")?;
                    let call = ExprKind::Function { name: side.to_string(), distinct, args: trim_args };
                    return Ok(Some(Expr::new(call, start.to(end))));
                }
                TrimForm::Plain(first) => args.push(first),
                TrimForm::Unread => {}
            }
        }
        if args.is_empty() && !self.at(&Tok::RParen) {
            args.push(self.expr()?);
        }
        if !args.is_empty() {
            while self.eat(&Tok::Comma) {
                // `normalize(s, NFKC)`: the form is a keyword, not an expression (as in Neo4j).
                if name == "normalize" && args.len() == 1 {
                    match self.normal_form_keyword() {
                        Some(form) if self.at(&Tok::RParen) => {
                            args.push(form);
                            continue;
                        }
                        _ => return Err(self.unexpected("a normal form: NFC, NFD, NFKC or NFKD")),
                    }
                }
                args.push(self.expr()?);
            }
        }
        let end = self.expect(&Tok::RParen, "')' closing the arguments")?;
        Ok(Some(Expr::new(ExprKind::Function { name, distinct, args }, start.to(end))))
    }

    /// After `trim(`: which form of call this is.
    fn trim_from(&mut self) -> Result<TrimForm> {
        let saved = self.pos;
        let side = [("BOTH", TRIM_BOTH), ("LEADING", TRIM_LEADING), ("TRAILING", TRIM_TRAILING)]
            .into_iter()
            .find_map(|(keyword, function)| self.at_kw(keyword).then_some(function));
        if let Some(side) = side {
            self.bump();
            if self.eat_kw("FROM") {
                return Ok(TrimForm::From(side, vec![self.expr()?]));
            }
            return Ok(match self.expr() {
                Ok(characters) if self.eat_kw("FROM") => TrimForm::From(side, vec![self.expr()?, characters]),
                // `trim(both)` may name a variable `both`: then this is the plain form, parsed again.
                _ => {
                    self.pos = saved;
                    TrimForm::Unread
                }
            });
        }
        if self.at(&Tok::RParen) {
            return Ok(TrimForm::Unread);
        }
        if self.eat_kw("FROM") {
            match self.expr() {
                Ok(source) if self.at(&Tok::RParen) => return Ok(TrimForm::From(TRIM_BOTH, vec![source])),
                // A variable `from`.
                _ => self.pos = saved,
            }
        }
        let first = self.expr()?;
        if self.eat_kw("FROM") {
            return Ok(TrimForm::From(TRIM_BOTH, vec![self.expr()?, first]));
        }
        Ok(TrimForm::Plain(first))
    }
}

enum TrimForm {
    /// `[side] [characters] FROM source`: the function for the side, and the source then any characters.
    From(&'static str, Vec<Expr>),
    /// A plain call whose first argument has been parsed.
    Plain(Expr),
    /// A plain call, the cursor just after `(`.
    Unread,
}

impl Parser<'_> {
    /// `NFC`, `NFD`, `NFKC` or `NFKD` at the cursor, read as the string literal of that form.
    pub(super) fn normal_form_keyword(&mut self) -> Option<Expr> {
        let form = ["NFC", "NFD", "NFKC", "NFKD"].into_iter().find(|f| self.at_kw(f))?;
        let span = self.span();
        self.bump();
        Some(Expr::new(ExprKind::Literal(crate::value::Value::from(form)), span))
    }
}
