//! Mathematical functions: `abs`, `sign`, rounding (`ceil`, `floor`, `round` with precision and rounding mode),
//! `rand`, logarithms and exponentials, trigonometry, and the constants `e()` and `pi()`.
//!
//! Every function returns `null` for a `null` argument and raises a `TypeError` for a non-number. All but `abs`
//! and `sign` (which keep integers integers) return floats.

use super::{arg, invalid_type, out_of_range};
use crate::error::{CypherError, Result};
use crate::value::Value;

/// The argument as a float; `None` for `null`.
fn number(function: &str, v: &Value) -> Result<Option<f64>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i as f64)),
        Value::Float(f) => Ok(Some(*f)),
        other => Err(invalid_type(function, "a number", other)),
    }
}

/// A float function of one number.
fn unary(function: &str, args: &[Value], f: impl Fn(f64) -> f64) -> Result<Value> {
    Ok(number(function, arg(args, 0))?.map_or(Value::Null, |x| Value::Float(f(x))))
}

pub fn abs(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Int(i) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| CypherError::arithmetic("IntegerOverflow", "abs(): integer overflow")),
        v => unary("abs", std::slice::from_ref(v), f64::abs),
    }
}

pub fn sign(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Int(i) => Ok(Value::Int(i.signum())),
        v => Ok(number("sign", v)?.map_or(Value::Null, |x| {
            Value::Int(if x > 0.0 {
                1
            } else if x < 0.0 {
                -1
            } else {
                0
            })
        })),
    }
}

pub fn ceil(args: &[Value]) -> Result<Value> {
    unary("ceil", args, f64::ceil)
}

pub fn floor(args: &[Value]) -> Result<Value> {
    unary("floor", args, f64::floor)
}

/// How `round` breaks ties and which way it goes, as Java's `RoundingMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Up,
    Down,
    Ceiling,
    Floor,
    HalfUp,
    HalfDown,
    HalfEven,
    Unnecessary,
}

/// `round(x)` rounds half-way values up (towards positive infinity); `round(x, precision[, mode])` rounds the
/// decimal digits of `x` (as it prints) to `precision` places, by default half-way values away from zero.
pub fn round(args: &[Value]) -> Result<Value> {
    let x = number("round", arg(args, 0))?;
    let precision = match args.get(1) {
        None => None,
        Some(Value::Null) => return Ok(Value::Null),
        Some(Value::Int(p)) => Some(*p),
        // Neo4j takes a float precision too, as its whole part.
        Some(Value::Float(p)) if p.is_finite() => Some(p.trunc() as i64),
        Some(other) => return Err(invalid_type("round", "an integer precision", other)),
    };
    let mode = match args.get(2) {
        None => None,
        Some(Value::Null) => return Ok(Value::Null),
        Some(Value::String(s)) => Some(match s.to_ascii_uppercase().as_str() {
            "UP" => Mode::Up,
            "DOWN" => Mode::Down,
            "CEILING" => Mode::Ceiling,
            "FLOOR" => Mode::Floor,
            "HALF_UP" => Mode::HalfUp,
            "HALF_DOWN" => Mode::HalfDown,
            "HALF_EVEN" => Mode::HalfEven,
            "UNNECESSARY" => Mode::Unnecessary,
            _ => {
                return Err(CypherError::argument(
                    "InvalidArgumentValue",
                    format!(
                        "round(): unknown rounding mode '{s}'; the modes are CEILING, FLOOR, UP, DOWN, HALF_EVEN, \
                         HALF_UP, HALF_DOWN and UNNECESSARY"
                    ),
                ))
            }
        }),
        Some(other) => return Err(invalid_type("round", "a rounding mode string", other)),
    };
    let Some(x) = x else { return Ok(Value::Null) };
    if !x.is_finite() {
        return Ok(Value::Float(x));
    }
    match (precision, mode) {
        (None | Some(0), None) => {
            let fl = x.floor();
            // `x - floor(x)` is exact; the sum normalises -0.0.
            Ok(Value::Float(if x - fl >= 0.5 { fl + 1.0 } else { fl } + 0.0))
        }
        (p, mode) => {
            let p = p.unwrap_or(0);
            if p < 0 {
                return Err(CypherError::argument(
                    "NumberOutOfRange",
                    "Precision argument to 'round()' cannot be negative",
                ));
            }
            if p > 400 {
                return Err(out_of_range("round", format!("precision {p} is out of range")));
            }
            round_decimal(x, p as i32, mode.unwrap_or(Mode::HalfUp)).map(Value::Float)
        }
    }
}

/// Rounds the shortest decimal form of `x` to `precision` fractional digits, like Java's
/// `BigDecimal.valueOf(x).setScale(precision, mode).doubleValue()`.
fn round_decimal(x: f64, precision: i32, mode: Mode) -> Result<f64> {
    if x == 0.0 {
        return Ok(0.0);
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("exponent notation");
    let exp: i32 = exp.parse().expect("exponent");
    let digits: Vec<u8> = mantissa.bytes().filter(|b| b.is_ascii_digit()).map(|b| b - b'0').collect();
    // Digits kept: those before the decimal point plus `precision` after it.
    let keep = exp + 1 + precision;
    if keep >= digits.len() as i32 {
        return Ok(x);
    }
    let (kept, dropped): (&[u8], &[u8]) =
        if keep <= 0 { (&[], &digits) } else { (&digits[..keep as usize], &digits[keep as usize..]) };
    // How the dropped digits compare with half a unit in the last kept place.
    let half = if keep < 0 {
        std::cmp::Ordering::Less
    } else {
        dropped[0].cmp(&5).then(if dropped[1..].iter().any(|d| *d != 0) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        })
    };
    let inexact = dropped.iter().any(|d| *d != 0);
    let negative = x < 0.0;
    let last_odd = kept.last().is_some_and(|d| d % 2 == 1);
    let up = match mode {
        Mode::Up => inexact,
        Mode::Down => false,
        Mode::Ceiling => inexact && !negative,
        Mode::Floor => inexact && negative,
        Mode::HalfUp => half.is_ge(),
        Mode::HalfDown => half.is_gt(),
        Mode::HalfEven => half.is_gt() || (half.is_eq() && last_odd),
        Mode::Unnecessary => {
            if inexact {
                return Err(CypherError::arithmetic("", "round(): rounding necessary with mode UNNECESSARY"));
            }
            false
        }
    };
    let mut magnitude: u128 = kept.iter().fold(0, |n, d| n * 10 + *d as u128);
    if up {
        magnitude += 1;
    }
    let text = format!("{}{magnitude}e{}", if negative { "-" } else { "" }, -precision);
    let rounded: f64 = text.parse().expect("a float");
    Ok(rounded + 0.0)
}

/// A float in `[0, 1)`, from the standard library's randomly keyed hasher (fresh keys on every call).
pub fn rand(_args: &[Value]) -> Result<Value> {
    Ok(Value::Float((random_u64() >> 11) as f64 / (1u64 << 53) as f64))
}

pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0x9e37_79b9_7f4a_7c15);
    hasher.finish()
}

pub fn sqrt(args: &[Value]) -> Result<Value> {
    unary("sqrt", args, f64::sqrt)
}

pub fn exp(args: &[Value]) -> Result<Value> {
    unary("exp", args, f64::exp)
}

pub fn log(args: &[Value]) -> Result<Value> {
    unary("log", args, f64::ln)
}

pub fn log10(args: &[Value]) -> Result<Value> {
    unary("log10", args, f64::log10)
}

pub fn e(_args: &[Value]) -> Result<Value> {
    Ok(Value::Float(std::f64::consts::E))
}

pub fn pi(_args: &[Value]) -> Result<Value> {
    Ok(Value::Float(std::f64::consts::PI))
}

pub fn sin(args: &[Value]) -> Result<Value> {
    unary("sin", args, f64::sin)
}

pub fn cos(args: &[Value]) -> Result<Value> {
    unary("cos", args, f64::cos)
}

pub fn tan(args: &[Value]) -> Result<Value> {
    unary("tan", args, f64::tan)
}

pub fn cot(args: &[Value]) -> Result<Value> {
    unary("cot", args, |x| 1.0 / x.tan())
}

pub fn asin(args: &[Value]) -> Result<Value> {
    unary("asin", args, f64::asin)
}

pub fn acos(args: &[Value]) -> Result<Value> {
    unary("acos", args, f64::acos)
}

pub fn atan(args: &[Value]) -> Result<Value> {
    unary("atan", args, f64::atan)
}

/// `atan2(y, x)`.
pub fn atan2(args: &[Value]) -> Result<Value> {
    let y = number("atan2", arg(args, 0))?;
    let x = number("atan2", arg(args, 1))?;
    Ok(match (y, x) {
        (Some(y), Some(x)) => Value::Float(y.atan2(x)),
        _ => Value::Null,
    })
}

pub fn degrees(args: &[Value]) -> Result<Value> {
    unary("degrees", args, f64::to_degrees)
}

pub fn radians(args: &[Value]) -> Result<Value> {
    unary("radians", args, f64::to_radians)
}

/// Half the versine: `(1 - cos x) / 2`.
pub fn haversin(args: &[Value]) -> Result<Value> {
    unary("haversin", args, |x| (1.0 - x.cos()) / 2.0)
}

/// `isNaN(x)`: whether a number is `NaN` (never for integers).
pub fn is_nan(args: &[Value]) -> Result<Value> {
    Ok(number("isNaN", arg(args, 0))?.map_or(Value::Null, |x| Value::Bool(x.is_nan())))
}

/// The error for a vector argument no similarity is defined for.
fn invalid_vector(function: &str, which: &str) -> CypherError {
    CypherError::argument(
        "InvalidArgument",
        format!("{function}(): argument {which} is not a valid vector (non-empty, finite numbers, not null)"),
    )
}

/// A vector argument of `vector.similarity.*`: a non-empty list of finite numbers; `None` for null.
fn vector(function: &str, which: &str, v: &Value) -> Result<Option<Vec<f64>>> {
    let Value::List(items) = v else {
        return if v.is_null() { Ok(None) } else { Err(invalid_type(function, "a list of numbers", v)) };
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items.iter() {
        let x = match item {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            Value::Null => return Err(invalid_vector(function, which)),
            other => return Err(invalid_type(function, "a list of numbers", other)),
        };
        if !x.is_finite() {
            return Err(invalid_vector(function, which));
        }
        out.push(x);
    }
    if out.is_empty() {
        return Err(invalid_vector(function, which));
    }
    Ok(Some(out))
}

/// The two vectors of a `vector.similarity.*` call, checked to be of one dimension; `None` when the result is
/// null.
fn vector_pair(function: &str, args: &[Value]) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
    let (a, b) = (vector(function, "a", arg(args, 0))?, vector(function, "b", arg(args, 1))?);
    let (Some(a), Some(b)) = (a, b) else { return Ok(None) };
    if a.len() != b.len() {
        return Err(CypherError::argument(
            "InvalidArgument",
            format!("{function}(): the vectors have different dimensions ({} and {})", a.len(), b.len()),
        ));
    }
    Ok(Some((a, b)))
}

/// `vector.similarity.cosine(a, b)`: the cosine of the angle between two vectors mapped to [0, 1],
/// `(1 + cos) / 2`, as Neo4j's vector indexes score it: each vector scaled to unit length (which a vector of
/// length zero has none of: an error), then compared in 32-bit floats.
pub fn vector_cosine(args: &[Value]) -> Result<Value> {
    const NAME: &str = "vector.similarity.cosine";
    let Some((a, b)) = vector_pair(NAME, args)? else { return Ok(Value::Null) };
    let unit = |v: &[f64], which: &str| -> Result<Vec<f32>> {
        // Scaled by the largest magnitude first, so that neither huge nor tiny numbers overflow the norm.
        let scale = v.iter().fold(0f64, |m, x| m.max(x.abs()));
        let norm = scale * v.iter().map(|x| (x / scale) * (x / scale)).sum::<f64>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return Err(invalid_vector(NAME, which));
        }
        Ok(v.iter().map(|x| (x / norm) as f32).collect())
    };
    let (a, b) = (unit(&a, "a")?, unit(&b, "b")?);
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(&b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let cosine = (dot / (na * nb).sqrt()).clamp(-1.0, 1.0);
    Ok(Value::Float(f64::from((1.0 + cosine) / 2.0)))
}

/// `vector.similarity.euclidean(a, b)`: `1 / (1 + d²)` for the squared Euclidean distance `d²` in 32-bit floats,
/// as Neo4j's vector indexes score it (a number beyond their range is an invalid vector).
pub fn vector_euclidean(args: &[Value]) -> Result<Value> {
    const NAME: &str = "vector.similarity.euclidean";
    let Some((a, b)) = vector_pair(NAME, args)? else { return Ok(Value::Null) };
    let single = |v: &[f64], which: &str| -> Result<Vec<f32>> {
        let out: Vec<f32> = v.iter().map(|x| *x as f32).collect();
        if out.iter().any(|x| !x.is_finite()) {
            return Err(invalid_vector(NAME, which));
        }
        Ok(out)
    };
    let (a, b) = (single(&a, "a")?, single(&b, "b")?);
    let squared: f32 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
    Ok(Value::Float(f64::from(1.0 / (1.0 + squared))))
}
