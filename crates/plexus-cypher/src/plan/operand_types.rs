//! The types an operator takes, by the names Neo4j's messages use, and the two checks that follow from them: an
//! operand written as a value of another type (`true * null`, `'a' - 1`, `1 =~ 'a'`, `NOT 0`) is refused when the
//! statement is planned, and a parameter operand (`$flag * null`, `$yes OR $count`) when a run starts, since its
//! type is then known whatever the rows, as Neo4j, which plans with parameter types, reports both. Checking
//! parameters once per run keeps the evaluation of expressions free of them; a value whose type shows only in the
//! rows keeps the operators' own answers (`b * null` is null whatever `b` holds).

use crate::ast::{BinaryOp, Expr, ExprKind};
use crate::error::{CypherError, Result};
use crate::value::Value;

use super::planner::Planner;

/// An operator and the types of operand it takes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Takes {
    symbol: &'static str,
    types: &'static [&'static str],
}

const NUMBERS: &[&str] = &["Float", "Integer"];
const BOOLEAN: &[&str] = &["Boolean"];

/// `NOT`.
pub(crate) const NOT: Takes = Takes { symbol: "NOT", types: BOOLEAN };
/// Unary minus, checked on literals only: a parameter may also hold a duration, which it negates.
pub(crate) const NEGATION: Takes = Takes { symbol: "-", types: NUMBERS };

/// What binary operator `op` takes; `None` for those that take anything (`+`, comparisons, `IN`, ...).
pub(crate) fn binary(op: BinaryOp) -> Option<Takes> {
    const DIVIDES: &[&str] = &["Float", "Integer", "Duration"];
    const SUBTRACTS: &[&str] =
        &["Float", "Integer", "Duration", "Date", "Time", "LocalTime", "LocalDateTime", "DateTime"];
    let (symbol, types): (&str, &[&str]) = match op {
        BinaryOp::Sub => ("-", SUBTRACTS),
        BinaryOp::Mul => ("*", DIVIDES),
        BinaryOp::Div => ("/", DIVIDES),
        BinaryOp::Mod => ("%", NUMBERS),
        BinaryOp::Pow => ("^", NUMBERS),
        BinaryOp::RegexMatch => ("=~", &["String"]),
        BinaryOp::And => ("AND", BOOLEAN),
        BinaryOp::Or => ("OR", BOOLEAN),
        BinaryOp::Xor => ("XOR", BOOLEAN),
        _ => return None,
    };
    Some(Takes { symbol, types })
}

/// A value's type by the names of [`Takes`].
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "Null",
        Value::Bool(_) => "Boolean",
        Value::Int(_) => "Integer",
        Value::Float(_) => "Float",
        Value::String(_) => "String",
        Value::Bytes(_) => "ByteArray",
        Value::List(_) => "List",
        Value::Map(_) => "Map",
        Value::Node(_) => "Node",
        Value::Rel(_) => "Relationship",
        Value::Path(_) => "Path",
        Value::Date(_) => "Date",
        Value::LocalTime(_) => "LocalTime",
        Value::Time(_) => "Time",
        Value::LocalDateTime(_) => "LocalDateTime",
        Value::DateTime(_) => "DateTime",
        Value::Duration(_) => "Duration",
        Value::Point(_) => "Point",
    }
}

impl Takes {
    /// Why `found` is not an operand of this operator, if it is not (null always is).
    fn mismatch(&self, found: &str) -> Option<String> {
        if found == "Null" || self.types.contains(&found) {
            return None;
        }
        let expected = match self.types {
            [one] => one.to_string(),
            [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
            [] => unreachable!("an operator takes some type"),
        };
        Some(format!("Type mismatch: {} expected {expected} but was {found}", self.symbol))
    }
}

/// A parameter that is the operand of an operator, checked when a run starts ([`crate::engine::check_params`]).
#[derive(Clone, Debug)]
pub(crate) struct TypedParameter {
    pub name: String,
    takes: Takes,
}

impl TypedParameter {
    pub fn check(&self, value: &Value) -> Result<()> {
        match self.takes.mismatch(type_of(value)) {
            None => Ok(()),
            Some(message) => {
                Err(CypherError::type_error("InvalidArgumentType", format!("{message} (parameter ${})", self.name)))
            }
        }
    }
}

impl Planner<'_> {
    /// Checks `operand` of an operator taking `takes`: a literal (or a list or map written out) of another type is
    /// an error now, and a parameter is recorded for the start of each run when `parameters` says so.
    pub(crate) fn check_operand(&mut self, takes: Takes, operand: &Expr, parameters: bool) -> Result<()> {
        let found = match &operand.kind {
            ExprKind::Literal(v) => type_of(v),
            ExprKind::List(_) | ExprKind::ListComprehension { .. } | ExprKind::PatternComprehension { .. } => "List",
            ExprKind::Map(_) => "Map",
            ExprKind::Parameter(name) if parameters => {
                self.typed_params.push(TypedParameter { name: name.clone(), takes });
                return Ok(());
            }
            _ => return Ok(()),
        };
        match takes.mismatch(found) {
            None => Ok(()),
            Some(message) => Err(self.error(operand.span, CypherError::syntax("InvalidArgumentType", message))),
        }
    }
}
