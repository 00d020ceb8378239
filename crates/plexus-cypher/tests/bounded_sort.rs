//! ORDER BY under SKIP/LIMIT keeps only the rows it needs (sorted as they come for a small bound, collected and
//! cut for a larger one); either way the rows are the first of a stable sort of all of them. Compared with the
//! full sort sliced, on random rows with many ties, nulls and mixed numbers, for bounds on both sides of the
//! switch between the two ways.

use plexus_cypher::{Engine, Params, ResultValue};
use plexus_storage::Store;
use proptest::prelude::*;

fn rows(engine: &Engine, store: &Store, q: &str) -> Vec<String> {
    let result = engine.execute(store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e:?}"));
    result.rows.iter().map(|row| format!("{:?}", row as &Vec<ResultValue>)).collect()
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..4).prop_map(|i| i.to_string()),
        (0i64..4).prop_map(|i| format!("{i}.0")),
        Just("null".to_string()),
        Just("-1.5".to_string()),
        (0i64..3).prop_map(|i| format!("'s{i}'")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_bounded_sort_keeps_the_first_rows_of_the_full_stable_sort(
        items in proptest::collection::vec((value(), 0i64..3), 0..160),
        skip in 0usize..5,
        limit in prop_oneof![1usize..12, 60usize..70, 120usize..140],
        desc in any::<bool>(),
    ) {
        let (store, engine) = (Store::in_memory(), Engine::new());
        let list = items.iter().enumerate().map(|(i, (a, b))| format!("{{i: {i}, a: {a}, b: {b}}}")).collect::<Vec<_>>();
        let unwind = format!("UNWIND [{}] AS r", list.join(", "));
        let order = format!("ORDER BY r.a {}, r.b", if desc { "DESC" } else { "" });
        let all = rows(&engine, &store, &format!("{unwind} RETURN r.i AS i {order}"));
        let bounded = rows(&engine, &store, &format!("{unwind} RETURN r.i AS i {order} SKIP {skip} LIMIT {limit}"));
        let expected: Vec<String> = all.into_iter().skip(skip).take(limit).collect();
        prop_assert_eq!(bounded, expected);
    }
}
