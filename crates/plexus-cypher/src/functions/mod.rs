//! The pure scalar functions: those computed from their arguments alone, without the graph, the clock or the
//! rows around them. Mathematical functions live in [`math`], string functions in [`string`], list, map and path
//! functions in [`list`], type conversions in [`convert`], points in [`spatial`].
//!
//! Names are looked up lower-cased. Graph functions (`labels`, `type`, `startNode`, `keys` and `properties` of an
//! entity...), aggregates, temporal functions and anything needing the clock are not here: [`call`] answers
//! `None` for them so the executor can handle them itself.
//!
//! Errors follow the TCK: an argument of the wrong type is a runtime `TypeError` (`InvalidArgumentType`; for the
//! conversion functions `InvalidArgumentValue`), an argument out of range an `ArgumentError`
//! (`NumberOutOfRange`), and calling with the wrong number of arguments a compile-time `SyntaxError`
//! (`InvalidNumberOfArguments`) that the planner raises after checking [`arity`].

pub mod catalogue;
pub mod convert;
pub mod list;
pub mod math;
pub mod spatial;
pub mod string;
mod value_type;

pub(crate) use value_type::is_of_type;

use crate::error::{CypherError, Result};
use crate::value::Value;

/// A pure function: its name and arity, and its implementation.
#[derive(Clone, Copy)]
pub struct Function {
    /// Lower-cased.
    pub name: &'static str,
    pub min_args: usize,
    /// `usize::MAX` for variadic functions (`coalesce`).
    pub max_args: usize,
    imp: fn(&[Value]) -> Result<Value>,
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function({})", self.name)
    }
}

impl Function {
    /// Applies the function. The caller has checked the number of arguments (see [`Function::check_arity`]).
    pub fn call(&self, args: &[Value]) -> Result<Value> {
        (self.imp)(args)
    }

    /// The compile-time error for calling it with `n` arguments, if `n` is wrong.
    pub fn check_arity(&self, n: usize) -> Result<()> {
        if (self.min_args..=self.max_args).contains(&n) {
            return Ok(());
        }
        let expected = if self.min_args == self.max_args {
            format!("{}", self.min_args)
        } else if self.max_args == usize::MAX {
            format!("at least {}", self.min_args)
        } else {
            format!("{} to {}", self.min_args, self.max_args)
        };
        Err(CypherError::syntax(
            "InvalidNumberOfArguments",
            format!("{}() takes {expected} argument{}, not {n}", self.name, if expected == "1" { "" } else { "s" }),
        ))
    }

    /// Whether the function returns something different on each call (`rand`), so must not be constant-folded.
    pub fn is_volatile(&self) -> bool {
        matches!(self.name, "rand" | "randomuuid")
    }
}

const VARIADIC: usize = usize::MAX;

macro_rules! functions {
    ($($name:literal $min:literal..$max:tt => $imp:path,)*) => {
        static FUNCTIONS: &[Function] = &[
            $(Function { name: $name, min_args: $min, max_args: functions!(@max $max), imp: $imp },)*
        ];
    };
    (@max VARIADIC) => { VARIADIC };
    (@max $max:literal) => { $max };
}

functions! {
    // Mathematical.
    "abs" 1..1 => math::abs,
    "ceil" 1..1 => math::ceil,
    "floor" 1..1 => math::floor,
    "round" 1..3 => math::round,
    "sign" 1..1 => math::sign,
    "rand" 0..0 => math::rand,
    "sqrt" 1..1 => math::sqrt,
    "exp" 1..1 => math::exp,
    "log" 1..1 => math::log,
    "log10" 1..1 => math::log10,
    "e" 0..0 => math::e,
    "pi" 0..0 => math::pi,
    "sin" 1..1 => math::sin,
    "cos" 1..1 => math::cos,
    "tan" 1..1 => math::tan,
    "cot" 1..1 => math::cot,
    "asin" 1..1 => math::asin,
    "acos" 1..1 => math::acos,
    "atan" 1..1 => math::atan,
    "atan2" 2..2 => math::atan2,
    "degrees" 1..1 => math::degrees,
    "radians" 1..1 => math::radians,
    "haversin" 1..1 => math::haversin,
    "isnan" 1..1 => math::is_nan,
    // Conversion.
    "tointeger" 1..1 => convert::to_integer,
    "tofloat" 1..1 => convert::to_float,
    "tostring" 1..1 => convert::to_string,
    "toboolean" 1..1 => convert::to_boolean,
    "tointegerornull" 1..1 => convert::to_integer_or_null,
    "tofloatornull" 1..1 => convert::to_float_or_null,
    "tostringornull" 1..1 => convert::to_string_or_null,
    "tobooleanornull" 1..1 => convert::to_boolean_or_null,
    "tointegerlist" 1..1 => convert::to_integer_list,
    "tofloatlist" 1..1 => convert::to_float_list,
    "tostringlist" 1..1 => convert::to_string_list,
    "tobooleanlist" 1..1 => convert::to_boolean_list,
    // Strings.
    "left" 2..2 => string::left,
    "right" 2..2 => string::right,
    "substring" 2..3 => string::substring,
    "toupper" 1..1 => string::to_upper,
    "upper" 1..1 => string::to_upper,
    "tolower" 1..1 => string::to_lower,
    "lower" 1..1 => string::to_lower,
    "trim" 1..1 => string::trim,
    "ltrim" 1..2 => string::ltrim,
    "rtrim" 1..2 => string::rtrim,
    "btrim" 1..2 => string::btrim,
    "trim both" 1..2 => string::trim_both_from,
    "trim leading" 1..2 => string::trim_leading_from,
    "trim trailing" 1..2 => string::trim_trailing_from,
    "replace" 3..3 => string::replace,
    "split" 2..2 => string::split,
    "char_length" 1..1 => string::char_length,
    "normalize" 1..2 => string::normalize,
    "is normalized" 2..2 => string::is_normalized,
    "character_length" 1..1 => string::char_length,
    // Lists, maps, paths and general.
    "size" 1..1 => list::size,
    "reverse" 1..1 => list::reverse,
    "head" 1..1 => list::head,
    "last" 1..1 => list::last,
    "tail" 1..1 => list::tail,
    "range" 2..3 => list::range,
    "coalesce" 1..VARIADIC => list::coalesce,
    "isempty" 1..1 => list::is_empty,
    "keys" 1..1 => list::keys,
    "properties" 1..1 => list::properties,
    "nullif" 2..2 => list::null_if,
    "length" 1..1 => list::length,
    "nodes" 1..1 => list::nodes,
    "relationships" 1..1 => list::relationships,
    "valuetype" 1..1 => value_type::value_type,
    // Spatial.
    "point" 1..1 => spatial::point,
    "point.distance" 2..2 => spatial::distance,
    "point.withinbbox" 3..3 => spatial::within_bbox,
    // Vectors.
    "vector.similarity.cosine" 2..2 => math::vector_cosine,
    "vector.similarity.euclidean" 2..2 => math::vector_euclidean,
}

/// The pure function called `name` (lower-cased).
pub fn lookup(name: &str) -> Option<Function> {
    FUNCTIONS.iter().find(|f| f.name == name).copied()
}

/// The (lower-cased) names of the pure functions.
pub fn names() -> impl Iterator<Item = &'static str> {
    FUNCTIONS.iter().map(|f| f.name)
}

/// Whether `name` (lower-cased) is a pure function of this module.
pub fn is_known(name: &str) -> bool {
    lookup(name).is_some()
}

/// The least and greatest number of arguments `name` (lower-cased) takes; `usize::MAX` for no limit.
pub fn arity(name: &str) -> Option<(usize, usize)> {
    lookup(name).map(|f| (f.min_args, f.max_args))
}

/// Calls the pure function `name` (lower-cased). `None` when `name` is not one, or when the arguments need the
/// graph (`keys(node)`, `properties(relationship)`): the executor handles those.
pub fn call(name: &str, args: &[Value]) -> Option<Result<Value>> {
    let f = lookup(name)?;
    if matches!(name, "keys" | "properties") && matches!(args.first(), Some(Value::Node(_) | Value::Rel(_))) {
        return None;
    }
    Some(f.check_arity(args.len()).and_then(|()| f.call(args)))
}

/// The runtime error for an argument of the wrong type.
pub(crate) fn invalid_type(function: &str, expected: &str, got: &Value) -> CypherError {
    CypherError::type_error("InvalidArgumentType", format!("{function}() expects {expected}, got {}", got.type_name()))
}

/// The runtime error for an argument out of range.
pub(crate) fn out_of_range(function: &str, message: impl std::fmt::Display) -> CypherError {
    CypherError::argument("NumberOutOfRange", format!("{function}(): {message}"))
}

/// The `i`th argument; the planner has checked the arity, but a direct caller may not have.
pub(crate) fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&Value::Null)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
