//! Arithmetic operators with openCypher semantics (interim: numbers, strings, lists).

use crate::error::{CypherError, Result};
use crate::temporal::{self, ArithOp};
use crate::value::Value;

fn overflow() -> CypherError {
    CypherError::arithmetic("IntegerOverflow", "integer overflow")
}

fn type_error(op: &str, a: &Value, b: &Value) -> CypherError {
    CypherError::type_error(
        "InvalidArgumentType",
        format!("cannot apply {op} to {} and {}", a.type_name(), b.type_name()),
    )
}

pub fn add(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x.checked_add(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 + y),
        (Float(x), Int(y)) => Float(x + *y as f64),
        (Float(x), Float(y)) => Float(x + y),
        (String(x), String(y)) => Value::string(format!("{x}{y}")),
        (List(x), List(y)) => Value::list(x.iter().chain(y.iter()).cloned().collect()),
        (List(x), y) => Value::list(x.iter().cloned().chain(std::iter::once(y.clone())).collect()),
        (x, List(y)) => Value::list(std::iter::once(x.clone()).chain(y.iter().cloned()).collect()),
        _ => return temporal::arithmetic(ArithOp::Add, a, b).unwrap_or_else(|| Err(type_error("+", a, b))),
    })
}

pub fn sub(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x.checked_sub(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 - y),
        (Float(x), Int(y)) => Float(x - *y as f64),
        (Float(x), Float(y)) => Float(x - y),
        _ => return temporal::arithmetic(ArithOp::Sub, a, b).unwrap_or_else(|| Err(type_error("-", a, b))),
    })
}

pub fn mul(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x.checked_mul(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 * y),
        (Float(x), Int(y)) => Float(x * *y as f64),
        (Float(x), Float(y)) => Float(x * y),
        _ => return temporal::arithmetic(ArithOp::Mul, a, b).unwrap_or_else(|| Err(type_error("*", a, b))),
    })
}

pub fn div(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(_), Int(0)) => return Err(CypherError::arithmetic("DivisionByZero", "/ by zero")),
        (Int(x), Int(y)) => Int(x.checked_div(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 / y),
        (Float(x), Int(y)) => Float(x / *y as f64),
        (Float(x), Float(y)) => Float(x / y),
        _ => return temporal::arithmetic(ArithOp::Div, a, b).unwrap_or_else(|| Err(type_error("/", a, b))),
    })
}

pub fn rem(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(_), Int(0)) => return Err(CypherError::arithmetic("DivisionByZero", "/ by zero")),
        (Int(x), Int(y)) => Int(x.checked_rem(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 % y),
        (Float(x), Int(y)) => Float(x % *y as f64),
        (Float(x), Float(y)) => Float(x % y),
        _ => return Err(type_error("%", a, b)),
    })
}

pub fn pow(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    let f = |v: &Value| match v {
        Int(i) => Some(*i as f64),
        Float(f) => Some(*f),
        _ => None,
    };
    if a.is_null() || b.is_null() {
        return Ok(Null);
    }
    match (f(a), f(b)) {
        (Some(x), Some(y)) => Ok(Float(x.powf(y))),
        _ => Err(type_error("^", a, b)),
    }
}

pub fn neg(a: &Value) -> Result<Value> {
    use Value::*;
    Ok(match a {
        Null => Null,
        Int(i) => Int(i.checked_neg().ok_or_else(overflow)?),
        Float(f) => Float(-f),
        _ => {
            return temporal::arithmetic(ArithOp::Mul, a, &Int(-1)).unwrap_or_else(|| {
                Err(CypherError::type_error("InvalidArgumentType", format!("cannot negate {}", a.type_name())))
            })
        }
    })
}
