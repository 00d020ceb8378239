//! The arithmetic operators `+ - * / % ^` and unary `-`/`+`, with openCypher semantics:
//!
//! * `null` on either side gives `null`.
//! * Integers stay integers; overflow is an `ArithmeticError` (`IntegerOverflow`), never a wrap. Integer division
//!   truncates towards zero and by zero is an `ArithmeticError` (`DivisionByZero`, "/ by zero"), as is `% 0`.
//! * An integer mixed with a float becomes a float; float division by zero gives infinity or `NaN`; `%` keeps the
//!   sign of the dividend; `^` always gives a float.
//! * `+` also concatenates: lists (`[1] + [2]`, `[1] + 2`, `0 + [1]`), strings, and a string with a number,
//!   boolean or temporal value (`'a' + 1` is `'a1'`, as in Neo4j).
//! * `||` concatenates only two strings or two lists.
//! * Temporal operands go to [`temporal::arithmetic`].
//! * Anything else is a runtime `TypeError` (`InvalidArgumentType`).
//! * A string or list that concatenation would make longer than [`MAX_STRING_BYTES`] or [`MAX_LIST_LEN`] is a
//!   `MemoryLimitExceeded` error: a value doubled in a `reduce` would otherwise grow until an allocation fails,
//!   which aborts the process instead of failing the statement.

use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::format::to_cypher_string;
use crate::temporal::{self, ArithOp};
use crate::value::Value;

/// A binary arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Pow => "^",
        }
    }
}

/// `a op b`.
pub fn binary(op: BinaryOp, a: &Value, b: &Value) -> Result<Value> {
    match op {
        BinaryOp::Add => add(a, b),
        BinaryOp::Sub => sub(a, b),
        BinaryOp::Mul => mul(a, b),
        BinaryOp::Div => div(a, b),
        BinaryOp::Mod => rem(a, b),
        BinaryOp::Pow => pow(a, b),
    }
}

/// The longest string a statement may build, in bytes (a stored string may be longer).
pub const MAX_STRING_BYTES: usize = 1 << 28;
/// The longest list a statement may build by concatenation: the longest `range()` builds.
pub const MAX_LIST_LEN: usize = crate::functions::list::MAX_RANGE_LEN as usize;

/// An error when a built string of `len` bytes would be longer than [`MAX_STRING_BYTES`].
pub(crate) fn check_string_len(len: usize, built_by: &str) -> Result<()> {
    if len > MAX_STRING_BYTES {
        return Err(too_large(format!(
            "`{built_by}` would build a string of {len} bytes, more than {MAX_STRING_BYTES}"
        )));
    }
    Ok(())
}

fn check_list_len(len: usize) -> Result<()> {
    if len > MAX_LIST_LEN {
        return Err(too_large(format!("concatenation would build a list of {len} elements, more than {MAX_LIST_LEN}")));
    }
    Ok(())
}

fn too_large(message: String) -> CypherError {
    CypherError::new(ErrorKind::MemoryLimit, Phase::Runtime, "MemoryLimitExceeded", message)
}

/// `a + b` of two lists or a list and an element, within [`MAX_LIST_LEN`].
fn add_lists(a: &Value, b: &Value) -> Result<Value> {
    let (a, b) = (list_items(a), list_items(b));
    check_list_len(a.len() + b.len())?;
    Ok(Value::list([a, b].concat()))
}

/// A list's items, or a single value as a list of one.
fn list_items(v: &Value) -> &[Value] {
    match v {
        Value::List(items) => items,
        single => std::slice::from_ref(single),
    }
}

fn overflow() -> CypherError {
    CypherError::arithmetic("IntegerOverflow", "integer overflow")
}

fn division_by_zero() -> CypherError {
    CypherError::arithmetic("DivisionByZero", "/ by zero")
}

fn type_error(verb: &str, a: &Value, b: &Value) -> CypherError {
    CypherError::type_error("InvalidArgumentType", format!("cannot {verb} {} and {}", a.type_name(), b.type_name()))
}

fn is_temporal(v: &Value) -> bool {
    matches!(
        v,
        Value::Date(_)
            | Value::LocalTime(_)
            | Value::Time(_)
            | Value::LocalDateTime(_)
            | Value::DateTime(_)
            | Value::Duration(_)
    )
}

/// Values that `+` concatenates to a string as text (not booleans: `'a' + true` is a type error, as in Neo4j).
fn concatenates_to_string(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Int(_) | Value::Float(_)) || is_temporal(v)
}

/// Both operands as floats, when both are numbers and at least one is a float.
fn floats(a: &Value, b: &Value) -> Option<(f64, f64)> {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => Some((*x, *y)),
        (Value::Int(x), Value::Float(y)) => Some((*x as f64, *y)),
        (Value::Float(x), Value::Int(y)) => Some((*x, *y as f64)),
        _ => None,
    }
}

fn temporal_op(op: ArithOp, verb: &str, a: &Value, b: &Value) -> Result<Value> {
    if is_temporal(a) || is_temporal(b) {
        if let Some(result) = temporal::arithmetic(op, a, b) {
            return result;
        }
    }
    Err(type_error(verb, a, b))
}

/// `a + b`.
pub fn add(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::Int(x), Value::Int(y)) => x.checked_add(*y).map(Value::Int).ok_or_else(overflow),
        (Value::List(_), _) | (_, Value::List(_)) => add_lists(a, b),
        (Value::String(_), _) | (_, Value::String(_)) if concatenates_to_string(a) && concatenates_to_string(b) => {
            // Checked before anything is copied; a number or temporal value adds a few dozen bytes at most.
            let len = |v: &Value| if let Value::String(s) = v { s.len() } else { 0 };
            check_string_len(len(a) + len(b), "+")?;
            Ok(Value::from(to_cypher_string(a) + &to_cypher_string(b)))
        }
        _ => match floats(a, b) {
            Some((x, y)) => Ok(Value::Float(x + y)),
            None => temporal_op(ArithOp::Add, "add", a, b),
        },
    }
}

/// `a || b`: strings with strings and lists with lists only; unlike `+` it never converts or appends an element.
pub fn concat(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::String(x), Value::String(y)) => {
            check_string_len(x.len() + y.len(), "||")?;
            Ok(Value::from(format!("{x}{y}")))
        }
        (Value::List(_), Value::List(_)) => add_lists(a, b),
        _ => Err(type_error("concatenate", a, b)),
    }
}

/// `a - b`.
pub fn sub(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::Int(x), Value::Int(y)) => x.checked_sub(*y).map(Value::Int).ok_or_else(overflow),
        _ => match floats(a, b) {
            Some((x, y)) => Ok(Value::Float(x - y)),
            None => temporal_op(ArithOp::Sub, "subtract", a, b),
        },
    }
}

/// `a * b`.
pub fn mul(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::Int(x), Value::Int(y)) => x.checked_mul(*y).map(Value::Int).ok_or_else(overflow),
        _ => match floats(a, b) {
            Some((x, y)) => Ok(Value::Float(x * y)),
            None => temporal_op(ArithOp::Mul, "multiply", a, b),
        },
    }
}

/// `a / b`.
pub fn div(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::Int(_), Value::Int(0)) => Err(division_by_zero()),
        (Value::Int(x), Value::Int(y)) => x.checked_div(*y).map(Value::Int).ok_or_else(overflow),
        _ => match floats(a, b) {
            Some((x, y)) => Ok(Value::Float(x / y)),
            None => temporal_op(ArithOp::Div, "divide", a, b),
        },
    }
}

/// `a % b`: the remainder of truncating division, with the sign of `a`.
pub fn rem(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::Int(_), Value::Int(0)) => Err(division_by_zero()),
        // `i64::MIN % -1` is 0, not an overflow.
        (Value::Int(x), Value::Int(y)) => Ok(Value::Int(x.wrapping_rem(*y))),
        _ => match floats(a, b) {
            Some((x, y)) => Ok(Value::Float(x % y)),
            None => Err(type_error("take the remainder of", a, b)),
        },
    }
}

/// `a ^ b`, always a float.
pub fn pow(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::Int(x), Value::Int(y)) => Ok(Value::Float((*x as f64).powf(*y as f64))),
        _ => match floats(a, b) {
            Some((x, y)) => Ok(Value::Float(x.powf(y))),
            None => Err(type_error("raise", a, b)),
        },
    }
}

/// Unary `-v`.
pub fn neg(v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Int(i) => i.checked_neg().map(Value::Int).ok_or_else(overflow),
        Value::Float(f) => Ok(Value::Float(-f)),
        Value::Duration(_) => match temporal::arithmetic(ArithOp::Mul, v, &Value::Int(-1)) {
            Some(result) => result,
            None => Err(unary_type_error("negate", v)),
        },
        _ => Err(unary_type_error("negate", v)),
    }
}

/// Unary `+v`: the value itself, for numbers and durations.
pub fn plus(v: &Value) -> Result<Value> {
    match v {
        Value::Null | Value::Int(_) | Value::Float(_) | Value::Duration(_) => Ok(v.clone()),
        _ => Err(unary_type_error("apply unary plus to", v)),
    }
}

fn unary_type_error(verb: &str, v: &Value) -> CypherError {
    CypherError::type_error("InvalidArgumentType", format!("cannot {verb} {}", v.type_name()))
}

#[cfg(test)]
mod tests {
    use plexus_storage::value::Date;
    use plexus_storage::NodeId;

    use super::*;
    use crate::error::{ErrorKind, Phase};
    use crate::format::literal;

    fn i(v: i64) -> Value {
        Value::Int(v)
    }
    fn f(v: f64) -> Value {
        Value::Float(v)
    }
    fn l(items: Vec<Value>) -> Value {
        Value::list(items)
    }
    fn ok(r: Result<Value>) -> String {
        literal(&r.expect("no error"))
    }
    fn err(r: Result<Value>) -> (ErrorKind, Phase, &'static str) {
        let e = r.expect_err("an error");
        (e.kind, e.phase, e.detail)
    }

    #[test]
    fn integer_arithmetic_and_precedence_examples() {
        // Mathematical8: 12 / 4 * 3 - 2 * 4 = 1 and 12 / 4 * (3 - 2 * 4) = -15
        let lhs = mul(&div(&i(12), &i(4)).unwrap(), &i(3)).unwrap();
        assert_eq!(ok(sub(&lhs, &mul(&i(2), &i(4)).unwrap())), "1");
        let rhs = sub(&i(3), &mul(&i(2), &i(4)).unwrap()).unwrap();
        assert_eq!(ok(mul(&div(&i(12), &i(4)).unwrap(), &rhs)), "-15");
        // Mathematical2
        assert_eq!(ok(add(&i(99), &i(5))), "104");
        assert_eq!(ok(div(&i(7), &i(2))), "3");
        assert_eq!(ok(div(&i(-7), &i(2))), "-3");
        assert_eq!(ok(rem(&i(7), &i(3))), "1");
        assert_eq!(ok(rem(&i(-7), &i(3))), "-1");
        assert_eq!(ok(rem(&i(i64::MIN), &i(-1))), "0");
    }

    #[test]
    fn exponentiation_examples() {
        // Precedence2 [2]: 4 ^ 3 op 2 ^ 3, and 4 ^ (3 op 2) ^ 3 (left-associative).
        let (p43, p23) = (pow(&i(4), &i(3)).unwrap(), pow(&i(2), &i(3)).unwrap());
        assert_eq!(ok(mul(&p43, &p23)), "512.0");
        assert_eq!(ok(div(&p43, &p23)), "8.0");
        assert_eq!(ok(rem(&p43, &p23)), "0.0");
        for (inner, want) in
            [(mul(&i(3), &i(2)), "6.8719476736E10"), (div(&i(3), &i(2)), "64.0"), (rem(&i(3), &i(2)), "64.0")]
        {
            assert_eq!(ok(pow(&pow(&i(4), &inner.unwrap()).unwrap(), &i(3))), want);
        }
        // Precedence2 [4]: -3 ^ 2 = (-3) ^ 2 = 9.0, -(3 ^ 2) = -9.0
        assert_eq!(ok(pow(&neg(&i(3)).unwrap(), &i(2))), "9.0");
        assert_eq!(ok(neg(&pow(&i(3), &i(2)).unwrap())), "-9.0");
        // Precedence1: 1 + (2 - (3 * (4 / (5 ^ (6 % null))))) is null
        let mut v = rem(&i(6), &Value::Null).unwrap();
        for (op, lhs) in
            [(BinaryOp::Pow, 5), (BinaryOp::Div, 4), (BinaryOp::Mul, 3), (BinaryOp::Sub, 2), (BinaryOp::Add, 1)]
        {
            v = binary(op, &i(lhs), &v).unwrap();
        }
        assert!(v.is_null());
    }

    proptest::proptest! {
        #[test]
        fn integer_results_are_exact_or_overflow(a in proptest::num::i64::ANY, b in proptest::num::i64::ANY) {
            let (x, y) = (a as i128, b as i128);
            for (op, exact) in [(BinaryOp::Add, Some(x + y)), (BinaryOp::Sub, Some(x - y)), (BinaryOp::Mul, Some(x * y)),
                (BinaryOp::Div, (y != 0).then(|| x / y)), (BinaryOp::Mod, (y != 0).then(|| x % y))] {
                match (binary(op, &i(a), &i(b)), exact) {
                    (Ok(Value::Int(r)), Some(e)) => proptest::prop_assert_eq!(r as i128, e),
                    (Err(err), Some(e)) => {
                        proptest::prop_assert!(i64::try_from(e).is_err());
                        proptest::prop_assert_eq!(err.detail, "IntegerOverflow");
                    }
                    (Err(err), None) => proptest::prop_assert_eq!(err.detail, "DivisionByZero"),
                    (r, e) => proptest::prop_assert!(false, "{:?} {} {:?}: {:?}, expected {:?}", a, op.symbol(), b, r, e),
                }
            }
        }
    }

    #[test]
    fn mixing_integers_and_floats() {
        assert_eq!(ok(add(&i(1), &f(0.5))), "1.5");
        assert_eq!(ok(sub(&f(0.5), &i(1))), "-0.5");
        assert_eq!(ok(mul(&i(2), &f(1.5))), "3.0");
        assert_eq!(ok(div(&i(1), &f(4.0))), "0.25");
        assert_eq!(ok(rem(&f(5.5), &i(2))), "1.5");
        assert_eq!(ok(rem(&f(-5.5), &i(2))), "-1.5");
        assert_eq!(ok(pow(&i(2), &i(3))), "8.0");
        assert_eq!(ok(pow(&i(4), &f(0.5))), "2.0");
        assert_eq!(ok(pow(&i(2), &i(-1))), "0.5");
    }

    #[test]
    fn overflow_and_division_by_zero() {
        let overflow = (ErrorKind::ArithmeticError, Phase::Runtime, "IntegerOverflow");
        assert_eq!(err(add(&i(i64::MAX), &i(1))), overflow);
        assert_eq!(err(sub(&i(i64::MIN), &i(1))), overflow);
        assert_eq!(err(mul(&i(i64::MAX), &i(2))), overflow);
        assert_eq!(err(div(&i(i64::MIN), &i(-1))), overflow);
        assert_eq!(err(neg(&i(i64::MIN))), overflow);
        let by_zero = (ErrorKind::ArithmeticError, Phase::Runtime, "DivisionByZero");
        assert_eq!(err(div(&i(1), &i(0))), by_zero);
        assert_eq!(err(rem(&i(1), &i(0))), by_zero);
        assert_eq!(ok(div(&f(1.0), &i(0))), "Infinity");
        assert_eq!(ok(div(&i(-1), &f(0.0))), "-Infinity");
        assert_eq!(ok(div(&f(0.0), &f(0.0))), "NaN");
        assert_eq!(ok(rem(&f(1.0), &i(0))), "NaN");
    }

    #[test]
    fn null_propagates() {
        for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod, BinaryOp::Pow] {
            for (a, b) in
                [(Value::Null, i(1)), (f(1.0), Value::Null), (Value::Null, Value::Null), (l(vec![]), Value::Null)]
            {
                assert!(binary(op, &a, &b).unwrap().is_null(), "{a:?} {} {b:?}", op.symbol());
            }
        }
        assert!(neg(&Value::Null).unwrap().is_null());
        assert!(div(&Value::Null, &i(0)).unwrap().is_null());
    }

    #[test]
    fn concatenation() {
        // List4
        assert_eq!(ok(add(&l(vec![i(1), i(10), i(100)]), &l(vec![i(4), i(5)]))), "[1, 10, 100, 4, 5]");
        assert_eq!(
            ok(add(&l(vec![Value::Bool(false), Value::Bool(true)]), &Value::Bool(false))),
            "[false, true, false]"
        );
        assert_eq!(ok(add(&i(0), &l(vec![i(1)]))), "[0, 1]");
        // List6 [3]: size([[], []] + [[]]) = 3
        assert_eq!(ok(add(&l(vec![l(vec![]), l(vec![])]), &l(vec![l(vec![])]))), "[[], [], []]");
        assert_eq!(ok(add(&Value::from("ab"), &Value::from("cd"))), "'abcd'");
        assert_eq!(ok(add(&Value::from("a"), &i(1))), "'a1'");
        assert_eq!(ok(add(&f(1.5), &Value::from("a"))), "'1.5a'");
        assert_eq!(err(add(&Value::from("a"), &Value::Bool(true))).0, ErrorKind::TypeError);
    }

    #[test]
    fn concatenation_past_the_size_caps_is_a_memory_limit_error_not_an_allocation() {
        let too_large = (ErrorKind::MemoryLimit, Phase::Runtime, "MemoryLimitExceeded");
        let half = Value::from("x".repeat(MAX_STRING_BYTES / 2 + 1));
        assert_eq!(err(add(&half, &half)), too_large);
        assert_eq!(err(concat(&half, &half)), too_large);
        let just_fits = Value::from("x".repeat(MAX_STRING_BYTES / 2));
        assert!(add(&just_fits, &just_fits).is_ok());
        let long = l(vec![Value::Null; MAX_LIST_LEN]);
        assert_eq!(err(add(&long, &i(1))), too_large);
        assert_eq!(err(add(&i(1), &long)), too_large);
        assert_eq!(err(concat(&long, &l(vec![i(1)]))), too_large);
        assert!(add(&long, &l(vec![])).is_ok());
    }

    #[test]
    fn wrong_types_are_runtime_type_errors() {
        let type_error = (ErrorKind::TypeError, Phase::Runtime, "InvalidArgumentType");
        let map = Value::map(Default::default());
        assert_eq!(err(add(&Value::from("a"), &map)), type_error);
        assert_eq!(err(add(&Value::Bool(true), &i(1))), type_error);
        assert_eq!(err(sub(&Value::from("a"), &i(1))), type_error);
        assert_eq!(err(mul(&Value::from("a"), &i(2))), type_error);
        assert_eq!(err(div(&Value::Node(NodeId(1)), &i(2))), type_error);
        assert_eq!(err(rem(&Value::Bool(true), &i(2))), type_error);
        assert_eq!(err(pow(&i(2), &Value::from("2"))), type_error);
        assert_eq!(err(neg(&Value::from("a"))), type_error);
        assert_eq!(err(plus(&Value::from("a"))), type_error);
        assert_eq!(ok(plus(&i(-2))), "-2");
        assert_eq!(ok(neg(&f(2.5))), "-2.5");
        assert!(add(&Value::Date(Date { days: 1 }), &i(1)).is_err());
    }
}
