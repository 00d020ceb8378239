//! `CASE` expressions, generic and simple, with Neo4j's extended simple form.

use super::expr::{balanced, binary};
use super::Parser;
use crate::ast::*;
use crate::error::Result;
use crate::lexer::Tok;

impl Parser<'_> {
    pub(super) fn case_expr(&mut self) -> Result<Expr> {
        let start = self.expect_kw("CASE")?;
        let operand = if self.at_kw("WHEN") { None } else { Some(Box::new(self.expr()?)) };
        let mut whens = Vec::new();
        // Neo4j's extended simple CASE (`WHEN 1, 2`, `WHEN > 3`, `WHEN IS NULL`) becomes a generic CASE that
        // tests the operand in each alternative.
        let mut extended = false;
        while self.eat_kw("WHEN") {
            let cond = match &operand {
                None => self.expr()?,
                Some(operand) => {
                    let mut alternatives = vec![self.case_alternative(operand, &mut extended)?];
                    while self.eat(&Tok::Comma) {
                        extended = true;
                        alternatives.push(self.case_alternative(operand, &mut extended)?);
                    }
                    balanced(BinaryOp::Or, alternatives)
                }
            };
            self.expect_kw("THEN")?;
            let value = self.expr()?;
            whens.push((cond, value));
        }
        if whens.is_empty() {
            return Err(self.unexpected("WHEN"));
        }
        let otherwise = if self.eat_kw("ELSE") { Some(Box::new(self.expr()?)) } else { None };
        let end = self.expect_kw("END")?;
        let case = if extended || operand.is_none() {
            ExprKind::Case { operand: None, whens, otherwise }
        } else {
            // Plain values: keep the simple form, which evaluates the operand once.
            let whens = whens
                .into_iter()
                .map(|(cond, value)| match cond.kind {
                    ExprKind::Binary(BinaryOp::Eq, _, v) => (*v, value),
                    _ => unreachable!("a plain alternative is an equality"),
                })
                .collect();
            ExprKind::Case { operand, whens, otherwise }
        };
        Ok(Expr::new(case, start.to(end)))
    }

    /// One alternative of a simple CASE as a test of `operand`: `operand = value` for a plain value, or the
    /// operand completed by a comparison or predicate (`> 3`, `IS NOT NULL`, `STARTS WITH 'a'`, `:: INTEGER`),
    /// which sets `extended`.
    fn case_alternative(&mut self, operand: &Expr, extended: &mut bool) -> Result<Expr> {
        let at_kw_pair = |p: &Self, a: &str, b: &[&str]| p.at_kw(a) && b.iter().any(|k| p.at_kw_ahead(1, k));
        let partial = matches!(
            self.peek(),
            Tok::Eq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge | Tok::LeftArrow | Tok::RegexMatch
        ) || (self.at(&Tok::Colon) && self.peek_at(1) == &Tok::Colon)
            || at_kw_pair(self, "IS", &["NOT", "NULL", "TYPED"])
            || (self.at_kw("IS") && self.peek_at(1) == &Tok::Colon)
            || at_kw_pair(self, "STARTS", &["WITH"])
            || at_kw_pair(self, "ENDS", &["WITH"]);
        if partial {
            *extended = true;
            let test = self.predicate_from(operand.clone())?;
            return self.comparison_from(test);
        }
        let value = self.expr()?;
        Ok(binary(BinaryOp::Eq, operand.clone(), value))
    }
}
