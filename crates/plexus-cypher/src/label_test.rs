//! Label expressions compiled for evaluation: `n:A|B`, `n:(A|B)&!C`, `r:!R`, `n:%`, on a node's labels or a
//! relationship's type.

use crate::token::Token;

/// A compiled label expression ([`crate::ast::LabelExpr`]).
#[derive(Clone, Debug)]
pub(crate) enum LabelTest {
    Name(Token),
    Wildcard,
    Not(Box<LabelTest>),
    All(Vec<LabelTest>),
    AnyOf(Vec<LabelTest>),
}

impl LabelTest {
    pub(crate) fn new(e: &crate::ast::LabelExpr) -> LabelTest {
        use crate::ast::LabelExpr as L;
        match e {
            L::Name(n) => LabelTest::Name(Token::new(n.name.as_str())),
            L::Wildcard => LabelTest::Wildcard,
            L::Not(inner) => LabelTest::Not(Box::new(LabelTest::new(inner))),
            L::All(items) => LabelTest::All(items.iter().map(LabelTest::new).collect()),
            L::AnyOf(items) => LabelTest::AnyOf(items.iter().map(LabelTest::new).collect()),
        }
    }

    /// Whether an entity passes, given whether it has each named label (or type) and whether it has any.
    pub(crate) fn matches(&self, has: &dyn Fn(&Token) -> bool, any: bool) -> bool {
        match self {
            LabelTest::Name(t) => has(t),
            LabelTest::Wildcard => any,
            LabelTest::Not(inner) => !inner.matches(has, any),
            LabelTest::All(items) => items.iter().all(|i| i.matches(has, any)),
            LabelTest::AnyOf(items) => items.iter().any(|i| i.matches(has, any)),
        }
    }
}
