//! Which expressions next to an aggregate group the rows, and which are refused as ambiguous.

use plexus_cypher::{Engine, Params, ResultValue};
use plexus_storage::Store;

fn run(store: &Store, engine: &Engine, q: &str) -> Result<Vec<Vec<ResultValue>>, plexus_cypher::CypherError> {
    engine.execute(store, q, &Params::new()).map(|r| r.rows)
}

fn graph() -> (Store, Engine) {
    let (store, engine) = (Store::in_memory(), Engine::new());
    run(&store, &engine, "CREATE (:P {age: 1, tags: [1, 2]}), (:P {age: 1, tags: [3]}), (:P {age: 2, tags: []})")
        .unwrap();
    (store, engine)
}

#[test]
fn a_map_projection_of_an_unprojected_variable_beside_an_aggregate_is_ambiguous() {
    let (store, engine) = graph();
    for q in [
        "MATCH (o:P) RETURN o {.age, c: count(*)} AS m",
        "MATCH (o:P) RETURN o.tags[0..1] + collect(o.age) AS m",
        "MATCH (o:P) RETURN [t IN o.tags | t] + collect(o.age) AS m",
        "MATCH (o:P) RETURN reduce(s = 0, t IN o.tags | s + t) + count(*) AS m",
        "MATCH (o:P) RETURN any(t IN o.tags WHERE t > 1) AND count(*) > 1 AS m",
    ] {
        let e = run(&store, &engine, q).expect_err(q);
        assert_eq!(e.detail, "AmbiguousAggregationExpression", "{q}: {e}");
    }
}

#[test]
fn a_map_projection_of_a_projected_variable_groups_by_it() {
    let (store, engine) = graph();
    let e = run(&store, &engine, "MATCH (o:P) RETURN o.age AS a, o {c: count(*)} AS m").unwrap_err();
    assert_eq!(e.detail, "AmbiguousAggregationExpression", "`o` itself is not projected");
    let rows = run(&store, &engine, "MATCH (o:P) RETURN o, o {.age, c: count(*)} AS m").unwrap();
    assert_eq!(rows.len(), 3, "one group per node");
    for row in rows {
        let ResultValue::Map(m) = &row[1] else { panic!("{row:?}") };
        assert_eq!(m.get("c"), Some(&ResultValue::Int(1)), "{row:?}");
    }
    let rows = run(&store, &engine, "MATCH (o:P) RETURN [t IN o.tags | t * 2] AS d, count(*) AS c").unwrap();
    assert_eq!(rows.len(), 3);
}
