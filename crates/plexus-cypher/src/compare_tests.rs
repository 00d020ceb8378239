//! Tests of equality, comparability, orderability and equivalence, many taken from the openCypher TCK.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::sync::Arc;

use plexus_storage::value::{Date, Duration, LocalTime, Time};
use plexus_storage::{NodeId, RelId};
use proptest::prelude::*;

use super::*;
use crate::value::{Map, Path};

fn l(items: Vec<Value>) -> Value {
    Value::list(items)
}
fn m(entries: &[(&str, Value)]) -> Value {
    Value::map(entries.iter().map(|(k, v)| (Arc::from(*k), v.clone())).collect())
}
fn i(v: i64) -> Value {
    Value::Int(v)
}
fn f(v: f64) -> Value {
    Value::Float(v)
}
fn s(v: &str) -> Value {
    Value::from(v)
}
const N: Value = Value::Null;
fn nan() -> Value {
    Value::Float(f64::NAN)
}

#[test]
fn equality_of_numbers_and_strings() {
    // Comparison1 [9]
    assert_eq!(equals(&f(1.0), &f(1.0)), Some(true));
    assert_eq!(equals(&i(1), &f(1.0)), Some(true));
    assert_eq!(equals(&s("1.0"), &f(1.0)), Some(false));
    assert_eq!(equals(&s("1"), &i(1)), Some(false));
    // Comparison1 [1], [2]
    assert_eq!(equals(&i(0), &f(0.0)), Some(true));
    assert_eq!(equals(&i(0), &f(0.5)), Some(false));
    assert_eq!(equals(&f(0.0), &f(-0.0)), Some(true));
    // Comparison1 [12]: large integers compare exactly.
    assert_eq!(equals(&i(4611686018427387905), &i(4611686018427387900)), Some(false));
    assert_eq!(equals(&i(9007199254740993), &f(9007199254740992.0)), Some(false));
    assert_eq!(equals(&i(i64::MAX), &f(9223372036854775807.0)), Some(false));
    assert_eq!(equals(&i(i64::MIN), &f(-9223372036854775808.0)), Some(true));
}

#[test]
fn equality_with_null_and_nan() {
    // Comparison1 [15], [8]
    assert_eq!(equals(&N, &N), None);
    assert_eq!(equals(&N, &i(1)), None);
    for other in [i(1), f(1.0), nan(), s("a")] {
        assert_eq!(equals(&nan(), &other), Some(false));
    }
    assert_eq!(equals(&l(vec![nan()]), &l(vec![nan()])), Some(false));
}

#[test]
fn equality_of_lists() {
    // Comparison1 [6], List3
    let cases = [
        (l(vec![i(1), i(2)]), l(vec![i(1)]), Some(false)),
        (l(vec![N]), l(vec![i(1)]), None),
        (l(vec![s("a")]), l(vec![i(1)]), Some(false)),
        (l(vec![l(vec![i(1)])]), l(vec![l(vec![i(1)]), l(vec![N])]), Some(false)),
        (l(vec![l(vec![i(1)]), l(vec![i(2)])]), l(vec![l(vec![i(1)]), l(vec![N])]), None),
        (l(vec![l(vec![i(1)]), l(vec![i(2), i(3)])]), l(vec![l(vec![i(1)]), l(vec![N])]), Some(false)),
        (l(vec![i(1), i(2)]), s("foo"), Some(false)),
        (l(vec![i(1)]), l(vec![i(1), N]), Some(false)),
        (l(vec![i(1), i(2)]), l(vec![N, s("foo")]), Some(false)),
        (l(vec![i(1), i(2)]), l(vec![N, i(2)]), None),
        (
            l(vec![l(vec![i(1), i(2)]), l(vec![s("foo"), s("bar")])]),
            l(vec![l(vec![i(1), i(2)]), l(vec![N, s("bar")])]),
            None,
        ),
        (l(vec![i(1), f(2.0)]), l(vec![f(1.0), i(2)]), Some(true)),
    ];
    for (a, b, want) in cases {
        assert_eq!(equals(&a, &b), want, "{a:?} = {b:?}");
        assert_eq!(equals(&b, &a), want, "{b:?} = {a:?}");
    }
}

#[test]
fn equality_of_maps() {
    // Comparison1 [7]
    let t = Value::Bool(true);
    let cases = [
        (m(&[]), m(&[]), Some(true)),
        (m(&[("k", t.clone())]), m(&[("k", t)]), Some(true)),
        (m(&[("k", i(1))]), m(&[("k", i(1))]), Some(true)),
        (m(&[("k", f(1.0))]), m(&[("k", f(1.0))]), Some(true)),
        (m(&[("k", s("abc"))]), m(&[("k", s("abc"))]), Some(true)),
        (m(&[("k", s("a")), ("l", i(2))]), m(&[("k", s("a")), ("l", i(2))]), Some(true)),
        (m(&[]), m(&[("k", N)]), Some(false)),
        (m(&[("k", N)]), m(&[]), Some(false)),
        (m(&[("k", i(1))]), m(&[("k", i(1)), ("l", N)]), Some(false)),
        (m(&[("k", N), ("l", i(1))]), m(&[("l", i(1))]), Some(false)),
        (m(&[("k", N)]), m(&[("k", N), ("l", N)]), Some(false)),
        (m(&[("k", N)]), m(&[("k", N)]), None),
        (m(&[("k", i(1))]), m(&[("k", N)]), None),
        (m(&[("k", i(1)), ("l", N)]), m(&[("k", N), ("l", N)]), None),
        (m(&[("k", i(1)), ("l", N)]), m(&[("k", N), ("l", i(1))]), None),
        (m(&[("k", i(1)), ("l", N)]), m(&[("k", i(1)), ("l", i(1))]), None),
    ];
    for (a, b, want) in cases {
        assert_eq!(equals(&a, &b), want, "{a:?} = {b:?}");
    }
}

#[test]
fn equality_of_entities_and_temporals() {
    assert_eq!(equals(&Value::Node(NodeId(1)), &Value::Node(NodeId(1))), Some(true));
    assert_eq!(equals(&Value::Node(NodeId(1)), &Value::Node(NodeId(2))), Some(false));
    assert_eq!(equals(&Value::Node(NodeId(1)), &Value::Rel(RelId(1))), Some(false));
    let d = |days| Value::Date(Date { days });
    assert_eq!(equals(&d(3), &d(3)), Some(true));
    assert_eq!(equals(&d(3), &d(4)), Some(false));
    assert_eq!(equals(&d(3), &Value::LocalTime(LocalTime { nanos: 3 })), Some(false));
    let dur = |days| Value::duration(Duration { months: 0, days, seconds: 0, nanos: 0 });
    assert_eq!(equals(&dur(1), &dur(1)), Some(true));
    assert_eq!(
        equals(&dur(1), &Value::duration(Duration { months: 0, days: 0, seconds: 86400, nanos: 0 })),
        Some(false)
    );
}

#[test]
fn in_lists() {
    // List5, Null3 [4]
    let cases = [
        (i(1), vec![s("1"), i(2)], Some(false)),
        (l(vec![i(1), i(2)]), vec![i(1), l(vec![i(1), s("2")])], Some(false)),
        (l(vec![i(1)]), vec![i(1), i(2), l(vec![i(1)])], Some(true)),
        (N, vec![N], None),
        (l(vec![N]), vec![l(vec![N])], None),
        (l(vec![i(1)]), vec![l(vec![i(1), N])], Some(false)),
        (i(3), vec![i(1), N, i(3)], Some(true)),
        (i(4), vec![i(1), N, i(3)], None),
        (l(vec![i(1), i(2)]), vec![l(vec![N, s("foo")]), l(vec![i(1), i(2)])], Some(true)),
        (l(vec![i(1), i(2)]), vec![l(vec![N, i(2)])], None),
        (l(vec![]), vec![l(vec![])], Some(true)),
        (l(vec![]), vec![], Some(false)),
        (l(vec![]), vec![i(1), i(2), N], None),
        (N, vec![], Some(false)),
        (N, vec![i(1), i(2), i(3)], None),
        (i(1), vec![N, i(1)], Some(true)),
    ];
    for (v, list, want) in cases {
        assert_eq!(in_list(&v, &list), want, "{v:?} IN {list:?}");
    }
}

#[test]
fn string_predicates() {
    // String8, String9, String10
    assert_eq!(string_op(StringOp::StartsWith, &s("ABCDEF"), &s("ABC")), Some(true));
    assert_eq!(string_op(StringOp::StartsWith, &s("AB"), &s("ABC")), Some(false));
    assert_eq!(string_op(StringOp::EndsWith, &s("ABCDEF"), &s("DEF")), Some(true));
    assert_eq!(string_op(StringOp::Contains, &s("ABCDEF"), &s("CD")), Some(true));
    assert_eq!(string_op(StringOp::Contains, &s(""), &s("")), Some(true));
    assert_eq!(string_op(StringOp::Contains, &s("Foo\nFoo"), &s("\n")), Some(true));
    let operands = [i(1), f(2.5), Value::Bool(true), l(vec![]), m(&[]), N];
    for op in [StringOp::StartsWith, StringOp::EndsWith, StringOp::Contains] {
        for a in &operands {
            for b in &operands {
                assert_eq!(string_op(op, a, b), None);
            }
            assert_eq!(string_op(op, &s("a"), a), None);
            assert_eq!(string_op(op, a, &s("a")), None);
        }
    }
}

#[test]
fn comparing_across_types_is_null_except_numbers() {
    // Comparison2 [3]
    let p = Value::Path(Arc::new(Path { nodes: vec![NodeId(1), NodeId(2)], rels: vec![RelId(1)] }));
    let types =
        [Value::Node(NodeId(1)), Value::Rel(RelId(1)), p, s(""), i(1), f(2.5), Value::Bool(true), N, l(vec![]), m(&[])];
    for (x, a) in types.iter().enumerate() {
        for (y, b) in types.iter().enumerate() {
            if x == y {
                continue;
            }
            let lt = compare_op(CompareOp::Lt, a, b);
            if (x, y) == (4, 5) {
                assert_eq!(lt, Some(true));
            } else if (x, y) == (5, 4) {
                assert_eq!(lt, Some(false));
            } else {
                assert_eq!(lt, None, "{a:?} < {b:?}");
            }
        }
    }
    assert_eq!(compare(&Value::Node(NodeId(1)), &Value::Node(NodeId(1))), None);
    assert_eq!(compare(&m(&[]), &m(&[])), Some(Ordering::Equal), "maps compare (see comparability_of_maps)");
}

#[test]
fn comparing_lists() {
    // Comparison2 [4]
    let cases = [
        (l(vec![i(1), i(0)]), l(vec![i(1)]), Some(true)),
        (l(vec![i(1), N]), l(vec![i(1)]), Some(true)),
        (l(vec![i(1), i(2)]), l(vec![i(1), N]), None),
        (l(vec![i(1), s("a")]), l(vec![i(1), N]), None),
        (l(vec![i(1), i(2)]), l(vec![i(3), N]), Some(false)),
    ];
    for (a, b, want) in cases {
        assert_eq!(compare_op(CompareOp::Ge, &a, &b), want, "{a:?} >= {b:?}");
    }
    assert_eq!(compare_op(CompareOp::Lt, &l(vec![s("a")]), &l(vec![i(1)])), None);
}

#[test]
fn comparing_nan_and_mixed_numbers() {
    // Comparison2 [5], [6]
    for op in [CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge] {
        assert_eq!(compare_op(op, &nan(), &i(1)), Some(false));
        assert_eq!(compare_op(op, &nan(), &f(1.0)), Some(false));
        assert_eq!(compare_op(op, &nan(), &nan()), Some(false));
        assert_eq!(compare_op(op, &nan(), &s("a")), None);
        assert_eq!(compare_op(op, &N, &N), None);
    }
    assert_eq!(compare_op(CompareOp::Lt, &f(1.0), &f(1.0)), Some(false));
    assert_eq!(compare_op(CompareOp::Lt, &i(1), &f(1.0)), Some(false));
    assert_eq!(compare_op(CompareOp::Le, &i(1), &f(1.0)), Some(true));
    assert_eq!(compare_op(CompareOp::Lt, &s("1.0"), &f(1.0)), None);
    assert_eq!(compare_op(CompareOp::Lt, &s("1"), &i(1)), None);
    assert_eq!(compare(&i(9007199254740993), &f(9007199254740992.0)), Some(Ordering::Greater));
    assert_eq!(compare(&i(i64::MAX), &f(9223372036854775807.0)), Some(Ordering::Less));
    assert_eq!(compare(&f(-0.5), &i(0)), Some(Ordering::Less));
    assert_eq!(compare(&f(-0.5), &i(-1)), Some(Ordering::Greater));
    assert_eq!(compare(&s("a"), &s("b")), Some(Ordering::Less));
    assert_eq!(compare(&Value::Bool(false), &Value::Bool(true)), Some(Ordering::Less));
}

#[test]
fn comparing_temporals() {
    let d = |days| Value::Date(Date { days });
    assert_eq!(compare(&d(1), &d(2)), Some(Ordering::Less));
    assert_eq!(compare(&d(1), &Value::LocalTime(LocalTime { nanos: 0 })), None);
    let t = |nanos, offset_seconds| Value::Time(Time { nanos, offset_seconds });
    // 12:00+01:00 is 11:00Z, before 11:30Z.
    assert_eq!(compare(&t(12 * 3600 * NANOS_PER_SECOND, 3600), &t(41400 * NANOS_PER_SECOND, 0)), Some(Ordering::Less));
    let dur = Value::duration(Duration { months: 0, days: 1, seconds: 0, nanos: 0 });
    assert_eq!(compare(&dur, &dur), None);
    assert_eq!(compare_op(CompareOp::Le, &dur, &dur), None);
}

#[test]
fn global_sort_order() {
    // ReturnOrderBy1 [11]
    let p = Value::Path(Arc::new(Path { nodes: vec![NodeId(1), NodeId(2)], rels: vec![RelId(1)] }));
    let sorted = vec![
        m(&[("a", s("map"))]),
        Value::Node(NodeId(1)),
        Value::Rel(RelId(1)),
        l(vec![s("list")]),
        p,
        Value::Date(Date { days: 0 }),
        Value::LocalTime(LocalTime { nanos: 0 }),
        Value::duration(Duration { months: 0, days: 0, seconds: 0, nanos: 0 }),
        s("text"),
        Value::Bool(false),
        Value::Bool(true),
        i(-3),
        f(1.5),
        i(2),
        f(f64::INFINITY),
        nan(),
        N,
    ];
    let mut shuffled = sorted.clone();
    shuffled.reverse();
    shuffled.swap(2, 9);
    shuffled.sort_by(order);
    assert_eq!(format!("{shuffled:?}"), format!("{sorted:?}"));
}

#[test]
fn maps_sort_by_size_then_keys_then_values() {
    let sorted = vec![
        m(&[]),
        m(&[("a", i(1))]),
        m(&[("a", i(2))]),
        m(&[("b", i(0))]),
        m(&[("a", i(9)), ("b", i(1))]),
        m(&[("a", i(9)), ("c", i(0))]),
    ];
    let mut shuffled = sorted.clone();
    shuffled.reverse();
    shuffled.sort_by(order);
    assert_eq!(shuffled, sorted);
}

#[test]
fn equivalence_groups_null_nan_and_mixed_numbers() {
    let keys = [N, N, nan(), nan(), i(1), f(1.0), f(0.0), f(-0.0), i(0), l(vec![i(1), N]), l(vec![f(1.0), N])];
    let set: HashSet<Equivalent> = keys.iter().cloned().map(Equivalent).collect();
    assert_eq!(set.len(), 5);
    assert!(equivalent(&m(&[("a", N)]), &m(&[("a", N)])));
    assert!(!equivalent(&m(&[("a", N)]), &m(&[])));
    assert!(!equivalent(&i(1), &s("1")));
}

fn hash_of(v: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    Equivalent(v.clone()).hash(&mut h);
    h.finish()
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..3).prop_map(Value::Int),
        prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(9007199254740993)].prop_map(Value::Int),
        prop_oneof![
            (-6i32..6).prop_map(|v| v as f64 / 2.0),
            Just(f64::NAN),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(9007199254740992.0),
            Just(-9223372036854775808.0),
            Just(9223372036854775808.0),
        ]
        .prop_map(Value::Float),
        "[ab]{0,2}".prop_map(Value::from),
        (0u64..3).prop_map(|n| Value::Node(NodeId(n))),
        (0u64..3).prop_map(|n| Value::Rel(RelId(n))),
        (0i64..3).prop_map(|days| Value::Date(Date { days })),
        (0i64..2, -1i32..2)
            .prop_map(|(h, o)| Value::Time(Time { nanos: h * 3600 * NANOS_PER_SECOND, offset_seconds: o * 3600 })),
        (0i64..2, 0i64..2).prop_map(|(months, days)| Value::duration(Duration { months, days, seconds: 0, nanos: 0 })),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::list),
            prop::collection::btree_map("[ab]", inner, 0..3)
                .prop_map(|m| Value::map(m.into_iter().map(|(k, v)| (Arc::from(k.as_str()), v)).collect::<Map>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn order_is_a_total_order(a in arb_value(), b in arb_value(), c in arb_value()) {
        prop_assert_eq!(order(&a, &a), Ordering::Equal);
        prop_assert_eq!(order(&a, &b), order(&b, &a).reverse());
        if order(&a, &b) != Ordering::Greater && order(&b, &c) != Ordering::Greater {
            prop_assert_ne!(order(&a, &c), Ordering::Greater, "{:?} <= {:?} <= {:?}", a, b, c);
        }
        if order(&a, &b) == Ordering::Equal {
            prop_assert_eq!(order(&a, &c), order(&b, &c));
        }
    }

    #[test]
    fn equivalent_values_hash_alike(a in arb_value(), b in arb_value()) {
        if equivalent(&a, &b) {
            prop_assert_eq!(hash_of(&a), hash_of(&b));
        }
        prop_assert_eq!(Equivalent(a.clone()) == Equivalent(b.clone()), equivalent(&a, &b));
        prop_assert!(Equivalent(a.clone()) == Equivalent(a.clone()));
    }

    #[test]
    fn equality_is_symmetric_and_implies_equivalence(a in arb_value(), b in arb_value()) {
        prop_assert_eq!(equals(&a, &b), equals(&b, &a));
        if equals(&a, &b) == Some(true) {
            prop_assert!(equivalent(&a, &b), "{:?} = {:?} but not equivalent", a, b);
        }
        // Comparisons agree with equality where both are defined, and are antisymmetric.
        if let Some(o) = compare(&a, &b) {
            prop_assert_eq!(compare(&b, &a), Some(o.reverse()));
            if equals(&a, &b).is_some() {
                prop_assert_eq!(o == Ordering::Equal, equals(&a, &b) == Some(true));
            }
        }
    }

    #[test]
    fn equal_ints_and_floats_hash_alike(n in -1_000_000i64..1_000_000) {
        prop_assert_eq!(hash_of(&Value::Int(n)), hash_of(&Value::Float(n as f64)));
    }
}

/// Maps compare as in Neo4j: size, then sorted keys, then values key by key; a value pair that does not compare
/// (null, NaN, different types) makes the comparison null. Expected answers are Neo4j 5.26's.
#[test]
fn comparability_of_maps() {
    let lt = |a: &Value, b: &Value| compare_op(CompareOp::Lt, a, b);
    let le = |a: &Value, b: &Value| compare_op(CompareOp::Le, a, b);
    let null = Value::Null;
    assert_eq!(lt(&m(&[("a", i(1))]), &m(&[("a", i(2))])), Some(true));
    assert_eq!(le(&m(&[("a", i(1))]), &m(&[("a", f(1.0))])), Some(true));
    assert_eq!(lt(&m(&[("a", f(1.0))]), &m(&[("a", i(1))])), Some(false));
    assert_eq!(le(&m(&[]), &m(&[])), Some(true));
    assert_eq!(lt(&m(&[("a", i(1))]), &m(&[("b", i(1))])), Some(true));
    assert_eq!(lt(&m(&[("z", i(1))]), &m(&[("a", i(1)), ("b", i(1))])), Some(true), "the smaller map first");
    assert_eq!(lt(&m(&[("b", i(1)), ("a", i(2))]), &m(&[("a", i(1)), ("b", i(2))])), Some(false));
    assert_eq!(lt(&m(&[("a", i(1)), ("b", null.clone())]), &m(&[("a", i(2)), ("b", i(1))])), Some(true));
    assert_eq!(lt(&m(&[("a", i(1)), ("b", i(1))]), &m(&[("a", i(1)), ("b", null.clone())])), None);
    assert_eq!(le(&m(&[("a", null.clone())]), &m(&[("a", null)])), None);
    assert_eq!(lt(&m(&[("a", i(1))]), &m(&[("a", s("x"))])), None);
    assert_eq!(lt(&m(&[("a", nan())]), &m(&[("a", i(1))])), None);
    assert_eq!(lt(&m(&[("a", l(vec![i(1)]))]), &m(&[("a", l(vec![i(2)]))])), Some(true));
    assert_eq!(lt(&m(&[("a", m(&[("x", i(1))]))]), &m(&[("a", m(&[("x", i(2))]))])), Some(true));
    assert_eq!(lt(&m(&[("a", i(1))]), &i(1)), None);
}

#[test]
fn durations_sort_by_their_average_length() {
    let dur = |months, days, seconds| Value::duration(Duration { months, days, seconds, nanos: 0 });
    // A month is on average 30 days 10.5 hours: longer than 30 days, shorter than 31.
    assert_eq!(order(&dur(0, 30, 0), &dur(1, 0, 0)), Ordering::Less);
    assert_eq!(order(&dur(1, 0, 0), &dur(0, 31, 0)), Ordering::Less);
    assert_eq!(order(&dur(0, 2, 0), &dur(0, 1, 86_401)), Ordering::Less);
    assert_eq!(order(&dur(-1, 0, 0), &dur(0, -30, 0)), Ordering::Less);
    // Of one average length: fewer months first, then fewer days.
    assert_eq!(order(&dur(0, 30, 37_800), &dur(1, 0, 0)), Ordering::Less);
    assert_eq!(order(&dur(0, 1, 0), &dur(0, 0, 86_400)), Ordering::Greater);
    assert_eq!(order(&dur(1, 0, 0), &dur(1, 0, 0)), Ordering::Equal);
}
