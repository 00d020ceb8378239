//! Tests of the pure functions, with the TCK's examples and Neo4j's documented ones.

use std::sync::Arc;

use plexus_storage::{NodeId, RelId};

use super::*;
use crate::error::{ErrorKind, Phase};
use crate::format::literal;
use crate::value::Path;

fn i(v: i64) -> Value {
    Value::Int(v)
}
fn f(v: f64) -> Value {
    Value::Float(v)
}
fn s(v: &str) -> Value {
    Value::from(v)
}
fn l(items: Vec<Value>) -> Value {
    Value::list(items)
}
const N: Value = Value::Null;

/// The result in literal notation, or the error as `Kind/Detail`.
fn q(name: &str, args: &[Value]) -> String {
    match call(name, args).unwrap_or_else(|| panic!("{name} is not a pure function")) {
        Ok(v) => literal(&v),
        Err(e) => {
            assert_eq!(e.phase, if e.kind == ErrorKind::SyntaxError { Phase::CompileTime } else { Phase::Runtime });
            format!("{}/{}", e.kind.name(), e.detail)
        }
    }
}

fn path() -> Value {
    Value::Path(Arc::new(Path { nodes: vec![NodeId(1), NodeId(2), NodeId(1)], rels: vec![RelId(5), RelId(6)] }))
}

fn check(cases: &[(&str, Vec<Value>, &str)]) {
    for (name, args, want) in cases {
        assert_eq!(q(name, args), *want, "{name}({})", args.iter().map(literal).collect::<Vec<_>>().join(", "));
    }
}

#[test]
fn registry() {
    assert_eq!(arity("substring"), Some((2, 3)));
    assert_eq!(arity("coalesce"), Some((1, usize::MAX)));
    assert_eq!(arity("pi"), Some((0, 0)));
    assert!(is_known("toupper") && is_known("upper") && is_known("tointegerornull"));
    for not_here in ["count", "collect", "labels", "type", "startnode", "date", "timestamp", "nosuch"] {
        assert!(!is_known(not_here), "{not_here}");
        assert!(call(not_here, &[]).is_none());
    }
    assert!(call("keys", &[Value::Node(NodeId(1))]).is_none());
    assert!(call("properties", &[Value::Rel(RelId(1))]).is_none());
    assert_eq!(q("abs", &[]), "SyntaxError/InvalidNumberOfArguments");
    assert_eq!(q("abs", &[i(1), i(2)]), "SyntaxError/InvalidNumberOfArguments");
    assert_eq!(q("coalesce", &[]), "SyntaxError/InvalidNumberOfArguments");
    assert!(lookup("rand").unwrap().is_volatile());
    assert!(!lookup("abs").unwrap().is_volatile());
    let names: std::collections::HashSet<_> = FUNCTIONS.iter().map(|f| f.name).collect();
    assert_eq!(names.len(), FUNCTIONS.len(), "a name is registered twice");
}

#[test]
fn null_in_null_out() {
    for function in FUNCTIONS {
        // valueType names the type of null: 'NULL'.
        if function.name == "range" || function.name == "valuetype" || function.min_args == 0 {
            continue;
        }
        for n in [function.min_args, function.max_args.min(3)] {
            assert_eq!(q(function.name, &vec![N; n]), "null", "{}() with {n} nulls", function.name);
        }
    }
}

#[test]
fn signed_numbers_and_rounding() {
    check(&[
        // Mathematical11, Mathematical13
        ("abs", vec![i(-1)], "1"),
        ("abs", vec![f(-1.5)], "1.5"),
        ("abs", vec![i(i64::MIN)], "ArithmeticError/IntegerOverflow"),
        ("abs", vec![s("1")], "TypeError/InvalidArgumentType"),
        ("sqrt", vec![f(12.96)], "3.6"),
        ("sqrt", vec![i(-1)], "NaN"),
        ("sign", vec![i(-17)], "-1"),
        ("sign", vec![f(0.1)], "1"),
        ("sign", vec![i(0)], "0"),
        ("sign", vec![f(-0.0)], "0"),
        ("ceil", vec![f(0.1)], "1.0"),
        ("ceil", vec![i(1)], "1.0"),
        ("floor", vec![f(0.9)], "0.0"),
        ("floor", vec![f(-0.1)], "-1.0"),
        ("round", vec![f(3.2)], "3.0"),
        ("round", vec![f(2.5)], "3.0"),
        ("round", vec![f(-1.5)], "-1.0"),
        ("round", vec![f(-2.5)], "-2.0"),
        ("round", vec![f(-0.4)], "0.0"),
        ("round", vec![i(7)], "7.0"),
        ("round", vec![f(-1.5), i(0)], "-1.0"),
        ("round", vec![f(3.456_789), i(3)], "3.457"),
        ("round", vec![f(3.456_789), f(2.9)], "3.46"),
        ("round", vec![f(-1.25), i(1)], "-1.3"),
        ("round", vec![f(2.675), i(2)], "2.68"),
        // As Neo4j 5: a negative precision is refused.
        ("round", vec![f(1234.5), i(-2)], "ArgumentError/NumberOutOfRange"),
        ("round", vec![i(12), i(1)], "12.0"),
        ("round", vec![f(0.04), i(1)], "0.0"),
        ("round", vec![f(1e300), i(2)], "1.0E300"),
        ("round", vec![f(f64::INFINITY), i(2)], "Infinity"),
        ("round", vec![f(1.249), i(1), s("UP")], "1.3"),
        ("round", vec![f(-1.251), i(1), s("UP")], "-1.3"),
        ("round", vec![f(1.249), i(1), s("DOWN")], "1.2"),
        ("round", vec![f(-1.251), i(1), s("DOWN")], "-1.2"),
        ("round", vec![f(1.249), i(1), s("CEILING")], "1.3"),
        ("round", vec![f(-1.251), i(1), s("CEILING")], "-1.2"),
        ("round", vec![f(1.249), i(1), s("FLOOR")], "1.2"),
        ("round", vec![f(-1.251), i(1), s("FLOOR")], "-1.3"),
        ("round", vec![f(1.25), i(1), s("HALF_UP")], "1.3"),
        ("round", vec![f(-1.25), i(1), s("HALF_UP")], "-1.3"),
        ("round", vec![f(1.25), i(1), s("HALF_DOWN")], "1.2"),
        ("round", vec![f(-1.35), i(1), s("HALF_DOWN")], "-1.3"),
        ("round", vec![f(1.25), i(1), s("HALF_EVEN")], "1.2"),
        ("round", vec![f(1.35), i(1), s("HALF_EVEN")], "1.4"),
        ("round", vec![f(-1.5), i(0), s("HALF_UP")], "-2.0"),
        ("round", vec![f(0.5), i(0), s("UP")], "1.0"),
        ("round", vec![f(0.001), i(0), s("UP")], "1.0"),
        ("round", vec![f(0.001), i(0), s("HALF_UP")], "0.0"),
        ("round", vec![f(1.2), i(1), s("UNNECESSARY")], "1.2"),
        ("round", vec![f(1.25), i(1), s("UNNECESSARY")], "ArithmeticError/"),
        ("round", vec![f(1.25), i(1), s("SIDEWAYS")], "ArgumentError/InvalidArgumentValue"),
        ("round", vec![f(1.25), f(1.0)], "1.3"),
        ("round", vec![f(1.25), N], "null"),
    ]);
}

#[test]
fn logarithms_trigonometry_and_constants() {
    let pi = std::f64::consts::PI;
    check(&[
        ("e", vec![], &literal(&f(std::f64::consts::E))),
        ("pi", vec![], "3.141592653589793"),
        ("exp", vec![i(0)], "1.0"),
        ("log", vec![f(std::f64::consts::E)], "1.0"),
        ("log", vec![i(0)], "-Infinity"),
        ("log10", vec![i(100)], "2.0"),
        ("sin", vec![i(0)], "0.0"),
        ("cos", vec![i(0)], "1.0"),
        ("tan", vec![i(0)], "0.0"),
        ("asin", vec![i(2)], "NaN"),
        ("acos", vec![i(1)], "0.0"),
        ("atan", vec![i(0)], "0.0"),
        ("atan2", vec![i(0), i(1)], "0.0"),
        ("atan2", vec![N, i(1)], "null"),
        ("degrees", vec![f(pi)], "180.0"),
        ("radians", vec![i(180)], "3.141592653589793"),
        ("haversin", vec![i(0)], "0.0"),
        ("haversin", vec![f(pi)], "1.0"),
        ("isnan", vec![f(f64::NAN)], "true"),
        ("isnan", vec![i(1)], "false"),
        ("sin", vec![s("0")], "TypeError/InvalidArgumentType"),
    ]);
    let cot = call("cot", &[f(pi / 4.0)]).unwrap().unwrap();
    assert!(matches!(cot, Value::Float(x) if (x - 1.0).abs() < 1e-12));
    let (a, b) = (call("rand", &[]).unwrap().unwrap(), call("rand", &[]).unwrap().unwrap());
    for r in [&a, &b] {
        assert!(matches!(r, Value::Float(x) if (0.0..1.0).contains(x)), "{r:?}");
    }
    assert_ne!(format!("{a:?}"), format!("{b:?}"));
}

#[test]
fn conversions() {
    let map = Value::map(Default::default());
    let node = Value::Node(NodeId(1));
    let rel = Value::Rel(RelId(1));
    let mut cases = vec![
        // TypeConversion1
        ("toboolean", vec![Value::Bool(true)], "true"),
        ("toboolean", vec![s("true")], "true"),
        ("toboolean", vec![s("false")], "false"),
        ("toboolean", vec![s("TRUE")], "true"),
        ("toboolean", vec![s("")], "null"),
        ("toboolean", vec![s(" tru ")], "null"),
        ("toboolean", vec![s("f alse")], "null"),
        ("toboolean", vec![i(0)], "false"),
        ("toboolean", vec![i(2)], "true"),
        // TypeConversion2
        ("tointeger", vec![f(82.9)], "82"),
        ("tointeger", vec![f(-2.9)], "-2"),
        ("tointeger", vec![s("foo")], "null"),
        ("tointeger", vec![s("")], "null"),
        ("tointeger", vec![i(2)], "2"),
        ("tointeger", vec![s("1.7")], "1"),
        ("tointeger", vec![s("0.9999999999999999999")], "0"),
        ("tointeger", vec![s("-2.9999999999999999")], "-2"),
        ("tointeger", vec![s("9223372036854775807.9")], "9223372036854775807"),
        ("tointeger", vec![s("-.5")], "0"),
        ("tointeger", vec![s("7.")], "7"),
        ("tointeger", vec![s("1.5e1")], "15"),
        ("tointeger", vec![s(".")], "null"),
        ("tointeger", vec![s("1.2.3")], "null"),
        ("tointeger", vec![s("2")], "2"),
        ("tointeger", vec![s("42")], "42"),
        ("tointeger", vec![s("-9223372036854775808")], "-9223372036854775808"),
        ("tointeger", vec![s("1e3")], "1000"),
        ("tointeger", vec![s(" 12 ")], "null"),
        ("tointeger", vec![s("1.5d")], "null"),
        ("tofloat", vec![s(" 1.5 ")], "1.5"),
        ("tointeger", vec![Value::Bool(true)], "1"),
        // Floats beyond the integer range saturate and NaN is 0, as Java's cast in Neo4j.
        ("tointeger", vec![f(1e19)], "9223372036854775807"),
        ("tointeger", vec![f(-1e19)], "-9223372036854775808"),
        ("tointeger", vec![f(f64::NAN)], "0"),
        ("tointeger", vec![f(f64::INFINITY)], "9223372036854775807"),
        ("tointegerornull", vec![f(9.3e18)], "9223372036854775807"),
        // TypeConversion3
        ("tofloat", vec![f(3.4)], "3.4"),
        ("tofloat", vec![i(3)], "3.0"),
        ("tofloat", vec![s("5")], "5.0"),
        ("tofloat", vec![s(" 1.5e2 ")], "150.0"),
        ("tofloat", vec![s("foo")], "null"),
        ("tofloat", vec![s("")], "null"),
        ("tofloat", vec![s("inf")], "null"),
        ("tofloat", vec![s("NaN")], "NaN"),
        ("tofloat", vec![Value::Bool(true)], "TypeError/InvalidArgumentValue"),
        // TypeConversion4
        ("tostring", vec![i(42)], "'42'"),
        ("tostring", vec![Value::Bool(false)], "'false'"),
        ("tostring", vec![f(2.3)], "'2.3'"),
        ("tostring", vec![f(1e20)], "'1.0E20'"),
        ("tostring", vec![s("apa")], "'apa'"),
        // The forgiving forms.
        ("tointegerornull", vec![l(vec![])], "null"),
        ("tointegerornull", vec![s("7")], "7"),
        ("tofloatornull", vec![Value::Bool(true)], "null"),
        ("tostringornull", vec![map.clone()], "null"),
        ("tostringornull", vec![f(1.0)], "'1.0'"),
        ("tobooleanornull", vec![f(1.0)], "null"),
        ("tobooleanornull", vec![s("false")], "false"),
        // The list forms.
        (
            "tointegerlist",
            vec![l(vec![i(1), s("2"), s("x"), f(2.5), l(vec![]), N, Value::Bool(true)])],
            "[1, 2, null, 2, null, null, 1]",
        ),
        ("tofloatlist", vec![l(vec![i(1), s("2.5"), Value::Bool(true)])], "[1.0, 2.5, null]"),
        ("tostringlist", vec![l(vec![i(1), f(1.5), Value::Bool(true), l(vec![i(1)])])], "['1', '1.5', 'true', null]"),
        ("tobooleanlist", vec![l(vec![s("true"), i(0), f(1.0)])], "[true, false, null]"),
        ("tofloatlist", vec![i(1)], "TypeError/InvalidArgumentValue"),
    ];
    // TypeConversion1 [5], 2 [8], 3 [6], 4 [10]: lists, maps and graph entities do not convert.
    for name in ["toboolean", "tointeger", "tofloat", "tostring"] {
        for bad in [l(vec![]), map.clone(), node.clone(), rel.clone(), path()] {
            cases.push((name, vec![bad], "TypeError/InvalidArgumentValue"));
        }
    }
    cases.push(("toboolean", vec![f(1.0)], "TypeError/InvalidArgumentValue"));
    check(&cases);
}

#[test]
fn strings() {
    check(&[
        // String1, String3, String4
        ("substring", vec![s("0123456789"), i(1)], "'123456789'"),
        ("substring", vec![s("hello"), i(1), i(3)], "'ell'"),
        ("substring", vec![s("hello"), i(1), i(30)], "'ello'"),
        ("substring", vec![s("hello"), i(10)], "''"),
        ("substring", vec![s("héllo"), i(1), i(2)], "'él'"),
        ("substring", vec![s("hello"), i(-1)], "ArgumentError/NumberOutOfRange"),
        ("substring", vec![s("hello"), i(1), i(-1)], "ArgumentError/NumberOutOfRange"),
        ("substring", vec![s("hello"), N], "null"),
        ("substring", vec![s("hello"), i(1), N], "null"),
        ("substring", vec![s("hello"), s("1")], "TypeError/InvalidArgumentType"),
        ("substring", vec![i(1), i(0)], "TypeError/InvalidArgumentType"),
        ("reverse", vec![s("raksO")], "'Oskar'"),
        ("reverse", vec![s("añb")], "'bña'"),
        ("split", vec![s("one1two"), s("1")], "['one', 'two']"),
        ("split", vec![s("a,b,"), s(",")], "['a', 'b', '']"),
        ("split", vec![s(""), s(",")], "['']"),
        ("split", vec![s("abc"), s("")], "['a', 'b', 'c']"),
        ("split", vec![s("a-b_c"), l(vec![s("-"), s("_")])], "['a', 'b', 'c']"),
        ("split", vec![s("a::b"), s("::")], "['a', 'b']"),
        ("split", vec![s("a"), i(1)], "TypeError/InvalidArgumentType"),
        ("left", vec![s("hello"), i(3)], "'hel'"),
        ("left", vec![s("hello"), i(10)], "'hello'"),
        ("left", vec![s("héllo"), i(2)], "'hé'"),
        ("left", vec![N, i(3)], "null"),
        ("left", vec![s("hello"), N], "null"),
        ("left", vec![s("hello"), f(1.0)], "TypeError/InvalidArgumentType"),
        ("right", vec![s("hello"), N], "null"),
        ("left", vec![s("hello"), i(-1)], "ArgumentError/NumberOutOfRange"),
        ("right", vec![s("hello"), i(3)], "'llo'"),
        ("right", vec![s("hello"), i(10)], "'hello'"),
        ("right", vec![s("hellö"), i(1)], "'ö'"),
        ("toupper", vec![s("hello")], "'HELLO'"),
        ("upper", vec![s("straße")], "'STRASSE'"),
        ("tolower", vec![s("HELLO")], "'hello'"),
        ("lower", vec![s("ÀB")], "'àb'"),
        ("vector.similarity.cosine", vec![l(vec![f(1.0), f(0.0)]), l(vec![f(1.0), f(1.0)])], "0.8535534143447876"),
        ("vector.similarity.cosine", vec![l(vec![i(1), i(2)]), l(vec![i(-1), i(-2)])], "0.0"),
        ("vector.similarity.cosine", vec![l(vec![i(0), i(0)]), l(vec![i(1), i(1)])], "ArgumentError/InvalidArgument"),
        ("vector.similarity.cosine", vec![l(vec![f(1e30), f(1e30)]), l(vec![f(1e30), f(1e30)])], "1.0"),
        ("vector.similarity.cosine", vec![l(vec![f(1e-45)]), l(vec![f(1e-45)])], "1.0"),
        ("vector.similarity.cosine", vec![l(vec![i(1), N]), l(vec![i(1), i(1)])], "ArgumentError/InvalidArgument"),
        ("vector.similarity.cosine", vec![l(vec![]), l(vec![])], "ArgumentError/InvalidArgument"),
        ("vector.similarity.euclidean", vec![l(vec![f(1e20)]), l(vec![f(-1e20)])], "0.0"),
        ("vector.similarity.euclidean", vec![l(vec![f(1e39)]), l(vec![i(1)])], "ArgumentError/InvalidArgument"),
        ("vector.similarity.cosine", vec![l(vec![i(1)]), l(vec![i(1), i(2)])], "ArgumentError/InvalidArgument"),
        ("vector.similarity.cosine", vec![l(vec![s("a")]), l(vec![i(1)])], "TypeError/InvalidArgumentType"),
        (
            "vector.similarity.euclidean",
            vec![l(vec![i(2), i(8), i(3)]), l(vec![f(4.0), f(5.0), f(6.0)])],
            "0.043478261679410934",
        ),
        ("vector.similarity.euclidean", vec![l(vec![i(1)]), N], "null"),
        ("normalize", vec![s("A\u{30a}")], "'\u{c5}'"),
        ("normalize", vec![s("\u{c5}"), s("NFD")], "'A\u{30a}'"),
        ("normalize", vec![s("\u{fb01}"), s("NFKC")], "'fi'"),
        ("normalize", vec![N], "null"),
        ("normalize", vec![i(1)], "TypeError/InvalidArgumentType"),
        ("normalize", vec![s("a"), s("NFX")], "ArgumentError/NumberOutOfRange"),
        ("is normalized", vec![s("A\u{30a}"), s("NFC")], "false"),
        ("is normalized", vec![s("A\u{30a}"), s("NFD")], "true"),
        ("is normalized", vec![i(1), s("NFC")], "null"),
        ("toupper", vec![i(1)], "TypeError/InvalidArgumentType"),
        ("trim", vec![s("  hello \n")], "'hello'"),
        ("ltrim", vec![s("  hello  ")], "'hello  '"),
        ("rtrim", vec![s("  hello  ")], "'  hello'"),
        ("btrim", vec![s("  hello  ")], "'hello'"),
        ("btrim", vec![s("xyhixx"), s("xy")], "'hi'"),
        ("ltrim", vec![s("xxhixx"), s("x")], "'hixx'"),
        ("rtrim", vec![s("xxhixx"), s("x")], "'xxhi'"),
        ("btrim", vec![s("xxhixx"), N], "null"),
        ("replace", vec![s("hello"), s("l"), s("w")], "'hewwo'"),
        ("replace", vec![s("abc"), s(""), s("-")], "'-a-b-c-'"),
        ("replace", vec![s("hello"), N, s("w")], "null"),
        ("char_length", vec![s("héllo")], "5"),
        ("character_length", vec![s("")], "0"),
        ("size", vec![s("héllo")], "5"),
    ]);
}

#[test]
fn lists_maps_and_paths() {
    let map = Value::map([(Arc::from("b"), i(1)), (Arc::from("a"), N)].into_iter().collect());
    check(&[
        // List6, List9
        ("size", vec![l(vec![i(1), i(2), i(3)])], "3"),
        ("size", vec![l(vec![l(vec![]), l(vec![]), l(vec![])])], "3"),
        ("size", vec![path()], "TypeError/InvalidArgumentType"),
        ("size", vec![i(1)], "TypeError/InvalidArgumentType"),
        ("tail", vec![l(vec![i(3), i(4), i(5)])], "[4, 5]"),
        ("tail", vec![l(vec![])], "[]"),
        ("head", vec![l(vec![i(1), i(2), i(3)])], "1"),
        ("head", vec![l(vec![])], "null"),
        ("head", vec![l(vec![N, i(2)])], "null"),
        ("last", vec![l(vec![i(1), i(2), i(3)])], "3"),
        ("last", vec![l(vec![])], "null"),
        ("head", vec![s("abc")], "TypeError/InvalidArgumentType"),
        ("reverse", vec![l(vec![i(1), N, s("a")])], "['a', null, 1]"),
        ("coalesce", vec![N, i(1), i(2)], "1"),
        ("coalesce", vec![N, N], "null"),
        ("isempty", vec![l(vec![])], "true"),
        ("isempty", vec![s("")], "true"),
        ("isempty", vec![map.clone()], "false"),
        ("isempty", vec![i(1)], "TypeError/InvalidArgumentType"),
        ("keys", vec![map.clone()], "['a', 'b']"),
        ("keys", vec![i(1)], "TypeError/InvalidArgumentType"),
        ("properties", vec![map.clone()], "{a: null, b: 1}"),
        ("nullif", vec![i(1), f(1.0)], "null"),
        ("nullif", vec![i(1), i(2)], "1"),
        ("nullif", vec![i(1), N], "1"),
        ("length", vec![path()], "2"),
        ("length", vec![s("abc")], "TypeError/InvalidArgumentType"),
        ("nodes", vec![path()], "[Node(1), Node(2), Node(1)]"),
        ("relationships", vec![path()], "[Relationship(5), Relationship(6)]"),
    ]);
}

#[test]
fn ranges() {
    // List11 [1], [2]
    let cases: &[(i64, i64, Option<i64>, &str)] = &[
        (-1236, -1234, None, "[-1236, -1235, -1234]"),
        (-1234, -1234, None, "[-1234]"),
        (0, -123, None, "[]"),
        (-1, 1, None, "[-1, 0, 1]"),
        (0, 10, None, "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"),
        (1381, -3412, Some(-1298), "[1381, 83, -1215, -2513]"),
        (0, -2000, Some(-1298), "[0, -1298]"),
        (10, -10, Some(-3), "[10, 7, 4, 1, -2, -5, -8]"),
        (0, -1, Some(-1), "[0, -1]"),
        (0, 1, Some(-123), "[]"),
        (0, -1, Some(1), "[]"),
        (0, 0, Some(-1), "[0]"),
        (0, 1, Some(2), "[0]"),
        (-10, 10, Some(3), "[-10, -7, -4, -1, 2, 5, 8]"),
        (-3412, 1381, Some(1298), "[-3412, -2114, -816, 482]"),
        (i64::MAX - 1, i64::MAX, None, "[9223372036854775806, 9223372036854775807]"),
        (i64::MIN, i64::MAX, Some(i64::MAX), "[-9223372036854775808, -1, 9223372036854775806]"),
    ];
    for (start, end, step, want) in cases {
        let mut args = vec![i(*start), i(*end)];
        args.extend(step.map(i));
        assert_eq!(q("range", &args), *want, "range({start}, {end}, {step:?})");
    }
    // List11 [3]: empty exactly when the direction and the step's sign disagree.
    for stop in [1, 2, 500, 1000, 1500] {
        for step in [-1000, -3, -2, -1, 1, 2, 3, 1000] {
            let n = list::range_len(0, stop, step).unwrap();
            assert_eq!(n == 0, stop.signum() != step.signum());
        }
    }
    // List11 [4], [5]
    for (start, end) in [(0, 0), (2, 8), (-2, 8), (2, -8)] {
        assert_eq!(q("range", &[i(start), i(end), i(0)]), "ArgumentError/NumberOutOfRange");
    }
    let bad =
        [Value::Bool(true), f(-1.1), f(-0.0), f(0.0), f(1.1), s("xyz"), l(vec![i(0)]), Value::map(Default::default())];
    for b in bad {
        for position in 0..3 {
            let mut args = vec![i(0), i(1), i(1)];
            args[position] = b.clone();
            assert_eq!(q("range", &args), "ArgumentError/InvalidArgumentType", "{args:?}");
        }
    }
    assert_eq!(q("range", &[i(0), i(i64::MAX)]), "ArgumentError/NumberOutOfRange");
    assert_eq!(list::range_iter(0, i64::MAX, 1).unwrap().nth(5), Some(5));
}

#[test]
fn value_types_are_named_as_neo4j_names_them() {
    // Each expected name is what Neo4j 5.26 answered for the same value.
    check(&[
        ("valuetype", vec![i(1)], "'INTEGER NOT NULL'"),
        ("valuetype", vec![f(f64::NAN)], "'FLOAT NOT NULL'"),
        ("valuetype", vec![N], "'NULL'"),
        ("valuetype", vec![l(vec![])], "'LIST<NOTHING> NOT NULL'"),
        ("valuetype", vec![l(vec![N])], "'LIST<NULL> NOT NULL'"),
        ("valuetype", vec![l(vec![i(1), N])], "'LIST<INTEGER> NOT NULL'"),
        ("valuetype", vec![l(vec![i(1), s("a")])], "'LIST<STRING NOT NULL | INTEGER NOT NULL> NOT NULL'"),
        (
            "valuetype",
            vec![l(vec![i(1), s("a"), f(1.5), Value::Bool(true), N])],
            "'LIST<BOOLEAN | STRING | INTEGER | FLOAT> NOT NULL'",
        ),
        (
            "valuetype",
            vec![l(vec![l(vec![i(1)]), l(vec![f(1.5)]), l(vec![l(vec![i(1)])]), l(vec![N]), l(vec![i(2)])])],
            "'LIST<LIST<NULL> NOT NULL | LIST<INTEGER NOT NULL> NOT NULL | LIST<FLOAT NOT NULL> NOT NULL \
             | LIST<LIST<INTEGER NOT NULL> NOT NULL> NOT NULL> NOT NULL'",
        ),
        (
            "valuetype",
            vec![l(vec![path(), Value::Node(NodeId(1)), l(vec![i(1)]), Value::Rel(RelId(5))])],
            "'LIST<NODE NOT NULL | RELATIONSHIP NOT NULL | LIST<INTEGER NOT NULL> NOT NULL | PATH NOT NULL> NOT NULL'",
        ),
    ]);
}
