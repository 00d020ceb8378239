//! The operators on values alone that [`super::CExpr`] evaluates: binary operators (arithmetic, comparison, string
//! and list predicates) and list slices.

use super::{bool_or_null, not_a_list};
use crate::ast::BinaryOp;
use crate::error::{CypherError, Result};
use crate::value::Value;
use crate::{arith, compare};

pub(super) fn slice(base: &Value, from: Option<Value>, to: Option<Value>) -> Result<Value> {
    let items = match base {
        Value::Null => return Ok(Value::Null),
        Value::List(items) => items,
        other => return Err(not_a_list(other)),
    };
    let len = items.len() as i64;
    let bound = |v: Option<Value>, default: i64| -> Result<Option<i64>> {
        match v {
            None => Ok(Some(default)),
            Some(Value::Null) => Ok(None),
            Some(Value::Int(i)) => Ok(Some(if i < 0 { (len + i).max(0) } else { i.min(len) })),
            Some(other) => Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("a slice bound must be an integer, got {}", other.type_name()),
            )),
        }
    };
    let (Some(from), Some(to)) = (bound(from, 0)?, bound(to, len)?) else { return Ok(Value::Null) };
    if from >= to {
        return Ok(Value::list(vec![]));
    }
    Ok(Value::list(items[from as usize..to as usize].to_vec()))
}

pub(super) fn binary(op: BinaryOp, a: &Value, b: &Value) -> Result<Value> {
    Ok(match op {
        BinaryOp::Add => arith::add(a, b)?,
        BinaryOp::Concat => arith::concat(a, b)?,
        BinaryOp::Sub => arith::sub(a, b)?,
        BinaryOp::Mul => arith::mul(a, b)?,
        BinaryOp::Div => arith::div(a, b)?,
        BinaryOp::Mod => arith::rem(a, b)?,
        BinaryOp::Pow => arith::pow(a, b)?,
        BinaryOp::Eq => bool_or_null(compare::equals(a, b)),
        BinaryOp::Ne => bool_or_null(compare::equals(a, b).map(|e| !e)),
        BinaryOp::Lt => bool_or_null(compare::compare_op(compare::CompareOp::Lt, a, b)),
        BinaryOp::Le => bool_or_null(compare::compare_op(compare::CompareOp::Le, a, b)),
        BinaryOp::Gt => bool_or_null(compare::compare_op(compare::CompareOp::Gt, a, b)),
        BinaryOp::Ge => bool_or_null(compare::compare_op(compare::CompareOp::Ge, a, b)),
        BinaryOp::In => match in_operand(b)? {
            None => Value::Null,
            Some(items) => bool_or_null(compare::in_list(a, items)),
        },
        BinaryOp::StartsWith => bool_or_null(compare::string_op(compare::StringOp::StartsWith, a, b)),
        BinaryOp::EndsWith => bool_or_null(compare::string_op(compare::StringOp::EndsWith, a, b)),
        BinaryOp::Contains => bool_or_null(compare::string_op(compare::StringOp::Contains, a, b)),
        // As in Neo4j: a string matched against a pattern that is not a string is an error; anything else that
        // is not a string on both sides matches nothing (null).
        BinaryOp::RegexMatch => match (a, b) {
            (Value::String(x), Value::String(pattern)) => Value::Bool(crate::regex::full_match(pattern, x)?),
            (Value::String(_), pattern) if !matches!(pattern, Value::Null) => {
                return Err(CypherError::type_error(
                    "InvalidArgumentType",
                    format!("=~ expects a string pattern, got {}", pattern.type_name()),
                ))
            }
            _ => Value::Null,
        },
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => unreachable!("logical operators are compiled separately"),
    })
}

/// The list on the right of `IN`: `None` for null (the test is then null), an error for anything but a list.
pub(crate) fn in_operand(list: &Value) -> Result<Option<&std::sync::Arc<Vec<Value>>>> {
    match list {
        Value::Null => Ok(None),
        Value::List(items) => Ok(Some(items)),
        other => {
            Err(CypherError::type_error("InvalidArgumentType", format!("IN expects a list, got {}", other.type_name())))
        }
    }
}
