//! Lookups by label and property value without an index (`MATCH (n:P {id: r.a})`, `MERGE (:P {id: r.a})`):
//! after a few scans a statement answers them from a table of its own, kept up to date with its writes. Every
//! statement here runs twice, on a graph with property indexes on the looked-up keys and on one without, and the
//! two graphs must end the same.

use plexus_cypher::{Engine, Params, ResultValue, Value};
use plexus_storage::Store;
use proptest::prelude::*;

/// Statements over `$rows` of `{a, b}` maps; every one looks nodes up by `id`, and most change what a later row
/// finds: keys set to other values or types, labels moved, nodes deleted or created.
const STATEMENTS: &[&str] = &[
    "UNWIND $rows AS r MERGE (n:P {id: r.a}) ON CREATE SET n.created = r.b ON MATCH SET n.hits = coalesce(n.hits, 0) + 1",
    "UNWIND $rows AS r MATCH (n:P {id: r.a}) SET n.id = r.b",
    "UNWIND $rows AS r MATCH (n:P {id: r.a}) REMOVE n:P SET n:Q",
    "UNWIND $rows AS r MATCH (n:Q {id: r.a}) SET n:P",
    "UNWIND $rows AS r MATCH (n:P {id: r.a}) DETACH DELETE n",
    "UNWIND $rows AS r CREATE (:P {id: r.a, created: r.b})",
    "UNWIND $rows AS r MERGE (n:P {id: toFloat(r.a)}) ON CREATE SET n.float = true",
    "UNWIND $rows AS r MATCH (n:P {id: r.a}) SET n.id = toString(r.b)",
    "UNWIND $rows AS r MERGE (n:P {id: toString(r.a)}) ON CREATE SET n.text = true",
    "UNWIND $rows AS r MATCH (n:P {id: r.a}) REMOVE n.id",
    "UNWIND $rows AS r MERGE (n:P {id: r.a}) ON CREATE SET n.id = r.b",
    "UNWIND $rows AS r MERGE (n:P {id: r.a}) ON MATCH SET n.id = r.b",
    "UNWIND $rows AS r MERGE (n:P {id: r.a}) ON MATCH SET n:Q REMOVE n:P",
    "UNWIND $rows AS r MERGE (n:Q {id: r.a}) ON MATCH SET n:P ON CREATE SET n.q = true",
    "UNWIND $rows AS r MERGE (n:P {id: r.a}) ON MATCH SET n.id = toFloat(r.b) + 0.5",
    "UNWIND $rows AS r MERGE (n:P {id: r.a}) ON MATCH SET n.id = null",
    "UNWIND $rows AS r MERGE (n:P {id: r.a}) WITH n, r WHERE r.b < 0 DETACH DELETE n",
    // Row by row: a node gains or loses the label between two lookups of one clause.
    "UNWIND $rows AS r FOREACH (x IN [1] | MERGE (q:Q {id: r.b}) ON MATCH SET q:P MERGE (p:P {id: r.a}))",
    "UNWIND $rows AS r FOREACH (x IN [1] | MERGE (q:P {id: r.b}) ON MATCH SET q:Q REMOVE q:P MERGE (p:Q {id: r.a}))",
    "UNWIND $rows AS r FOREACH (x IN [1] | MERGE (q:P {id: r.b}) ON MATCH SET q.id = r.a + 1 MERGE (p:P {id: r.a}))",
    "UNWIND $rows AS r MATCH (n:P) WHERE n.id IN [r.a, r.b, toFloat(r.a), null] SET n.hits = coalesce(n.hits, 0) + 1",
    "UNWIND $rows AS r MATCH (n:P) WHERE n.id IN [r.a, r.b] SET n.id = r.a + r.b",
    "UNWIND $rows AS r MATCH (n:P) WHERE n.id = r.a OR r.b = n.id OR n.id = toString(r.a) SET n.hits = 0",
    "UNWIND $rows AS r FOREACH (x IN [1] | CREATE (:P {id: r.a * 2})) WITH r MATCH (n:Q) WHERE n.id IN [r.a, r.b] SET n:P",
    "UNWIND $rows AS r MERGE (n:P {id: r.a}) MERGE (m:P {id: r.b}) MERGE (n)-[:T]->(m)",
    "UNWIND $rows AS r MATCH (n:P {id: r.a}) SET n.id = [r.b, r.a]",
    "UNWIND $rows AS r MERGE (n:P {id: [r.a, r.b]})",
    "UNWIND $rows AS r MATCH (n:P {id: r.a}) SET n.id = date({year: 2000, month: 1, day: 1 + abs(r.b) % 28})",
    "UNWIND $rows AS r MERGE (n:P {id: date({year: 2000, month: 1, day: 1 + abs(r.a) % 28})}) ON CREATE SET n.day = true",
];

fn rows(pairs: &[(i64, i64)]) -> Params {
    let list = pairs
        .iter()
        .map(|&(a, b)| {
            let mut m = plexus_cypher::Map::new();
            m.insert("a".into(), Value::Int(a));
            m.insert("b".into(), Value::Int(b));
            Value::map(m)
        })
        .collect();
    [("rows".to_string(), Value::list(list))].into_iter().collect()
}

/// Every node with its labels and properties, and every relationship by its ends' `created` and `id`, sorted.
fn dump(engine: &Engine, store: &Store) -> Vec<String> {
    // Labels in a fixed order: `labels()` lists them in the order they were first created, which the indexes
    // change.
    let q = "MATCH (n) OPTIONAL MATCH (n)-[t]->(m) \
             RETURN [l IN ['P', 'Q'] WHERE l IN labels(n)] AS l, properties(n) AS p, properties(m) AS mp, type(t) AS t";
    let mut out: Vec<String> =
        engine.execute(store, q, &Params::new()).unwrap().rows.into_iter().map(|row| format!("{row:?}")).collect();
    out.sort();
    out
}

/// An empty database, with property indexes on `:P(id)` and `:Q(id)` when `indexed`.
fn database(indexed: bool) -> (Store, Engine) {
    let store = Store::in_memory();
    let engine = Engine::new();
    if indexed {
        engine.execute(&store, "CREATE INDEX FOR (n:P) ON (n.id)", &Params::new()).unwrap();
        engine.execute(&store, "CREATE INDEX FOR (n:Q) ON (n.id)", &Params::new()).unwrap();
    }
    (store, engine)
}

fn run(indexed: bool, script: &[(usize, Vec<(i64, i64)>)]) -> (Vec<String>, Vec<String>) {
    let (store, engine) = database(indexed);
    let mut outcomes = Vec::new();
    for (statement, pairs) in script {
        let outcome = engine.execute(&store, STATEMENTS[*statement], &rows(pairs));
        outcomes.push(match outcome {
            Ok(r) => format!("{:?}", r.stats),
            Err(e) => e.message,
        });
    }
    (dump(&engine, &store), outcomes)
}

fn script() -> impl Strategy<Value = Vec<(usize, Vec<(i64, i64)>)>> {
    let pairs = proptest::collection::vec((-12i64..12, -12i64..12), 0..40);
    proptest::collection::vec((0..STATEMENTS.len(), pairs), 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn lookups_without_an_index_change_the_graph_as_lookups_through_one(script in script()) {
        let (indexed, indexed_outcomes) = run(true, &script);
        let (scanned, scanned_outcomes) = run(false, &script);
        prop_assert_eq!(indexed_outcomes, scanned_outcomes);
        prop_assert_eq!(indexed, scanned);
    }
}

#[test]
fn many_merges_without_an_index_find_earlier_rows_nodes() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let pairs: Vec<(i64, i64)> = (0..20_000).map(|i| (i % 5_000, i)).collect();
    let result = engine.execute(&store, STATEMENTS[0], &rows(&pairs)).unwrap();
    assert_eq!(result.stats.nodes_created, 5_000);
    let count = engine.execute(&store, "MATCH (n:P) WHERE n.hits = 3 RETURN count(n) AS c", &Params::new()).unwrap();
    assert_eq!(count.rows, vec![vec![ResultValue::Int(5_000)]]);
    // 1.0 is the node keyed 1, as `=` says.
    let float = engine.execute(&store, STATEMENTS[6], &rows(&[(1, 0), (2, 0), (3, 0), (4, 0), (9_999, 0)])).unwrap();
    assert_eq!(float.stats.nodes_created, 1);
}

#[test]
fn a_batch_rolled_back_part_way_leaves_no_trace_in_later_lookups() {
    let q = "UNWIND range(1, 60) AS i CALL { WITH i MERGE (n:P {id: i % 7}) ON CREATE SET n.x = 1 / (i - 20) \
             ON MATCH SET n.hits = coalesce(n.hits, 0) + 1 } IN TRANSACTIONS OF 3 ROWS ON ERROR CONTINUE";
    let mut dumps = Vec::new();
    for indexed in [true, false] {
        let (store, engine) = database(indexed);
        engine.execute(&store, "CREATE (:P {id: 6, early: true})", &Params::new()).unwrap();
        engine.execute(&store, q, &Params::new()).unwrap();
        dumps.push(dump(&engine, &store));
    }
    assert_eq!(dumps[0], dumps[1]);
    assert_eq!(dumps[1].len(), 7, "one node per key: {:?}", dumps[1]);
}

#[test]
fn a_read_only_statement_looks_up_many_values_from_its_snapshot() {
    let q = "UNWIND range(-5, 3000) AS i OPTIONAL MATCH (n:P {id: i % 1000}) RETURN count(n) AS c, sum(n.v) AS s";
    let mut answers = Vec::new();
    for indexed in [true, false] {
        let (store, engine) = database(indexed);
        engine.execute(&store, "UNWIND range(0, 1999) AS i CREATE (:P {id: i % 900, v: i})", &Params::new()).unwrap();
        engine.execute(&store, "CREATE (:P {id: 5.0, v: 100000}), (:P {id: '5', v: 1})", &Params::new()).unwrap();
        let reader = engine.execute_read(&store.read(), q, &Params::new()).unwrap();
        answers.push(reader.rows);
    }
    assert_eq!(answers[0], answers[1]);
    assert!(matches!(answers[1][0][0], ResultValue::Int(c) if c > 3000), "{:?}", answers[1]);
}

fn values() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        (-4i64..4).prop_map(Value::Int),
        prop_oneof![Just(-0.0), Just(1.0), Just(2.5), Just(f64::NAN)].prop_map(Value::Float),
        prop_oneof![Just("a"), Just("1")].prop_map(Value::string),
    ];
    leaf.prop_recursive(1, 8, 2, |inner| proptest::collection::vec(inner, 0..3).prop_map(Value::list))
}

/// Nodes `(:N {i, v})` numbered from 0, one per value (none for null).
fn create_numbered(engine: &Engine, store: &Store, values: Vec<Value>) {
    let params: Params = [("vs".to_string(), Value::list(values))].into_iter().collect();
    engine.execute(store, "UNWIND range(0, size($vs) - 1) AS i CREATE (:N {i: i, v: $vs[i]})", &params).unwrap();
}

fn list_param(list: Vec<Value>) -> Params {
    [("list".to_string(), Value::list(list))].into_iter().collect()
}

/// Values a property can hold (no nulls in lists, lists of one type), or null for none.
fn storable() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        (-4i64..4).prop_map(Value::Int),
        prop_oneof![Just(-0.0), Just(1.0), Just(2.5), Just(f64::NAN)].prop_map(Value::Float),
        prop_oneof![Just("a"), Just("1")].prop_map(Value::string),
        proptest::collection::vec((-2i64..2).prop_map(Value::Int), 0..3).prop_map(Value::list),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// `IN` a parameter list (evaluated once per statement, hashed when long) answers as `IN` a list the
    /// statement reads per row, on every row and for each execution of the cached plan.
    #[test]
    fn in_a_parameter_list_answers_as_in_a_per_row_list(
        stored in proptest::collection::vec(storable(), 1..30),
        lists in proptest::collection::vec(proptest::collection::vec(values(), 0..40), 2),
    ) {
        let store = Store::in_memory();
        let engine = Engine::new();
        create_numbered(&engine, &store, stored);
        for list in lists {
            let p = list_param(list);
            let constant = "MATCH (n:N) RETURN n.i AS i, n.v IN $list AS found ORDER BY i";
            // A new list on every row: compared element by element.
            let per_row = "MATCH (n:N) RETURN n.i AS i, n.v IN [x IN coalesce(n.none, $list) | x] AS found ORDER BY i";
            // One list handed to every row: hashed from its second row on.
            let carried = "WITH $list AS l MATCH (n:N) RETURN n.i AS i, n.v IN l AS found ORDER BY i";
            let filtered = "MATCH (n:N) WHERE n.v IN [x IN $list | x] RETURN count(n) AS c";
            let filtered_per_row = "MATCH (n:N) WHERE n.v IN [x IN $list | coalesce(n.none, x)] RETURN count(n) AS c";
            let expected = engine.execute(&store, per_row, &p).unwrap().rows;
            prop_assert_eq!(&engine.execute(&store, constant, &p).unwrap().rows, &expected);
            prop_assert_eq!(&engine.execute(&store, carried, &p).unwrap().rows, &expected);
            prop_assert_eq!(engine.execute(&store, filtered, &p).unwrap().rows, engine.execute(&store, filtered_per_row, &p).unwrap().rows);
        }
    }

    /// `WHERE n.v IN $list` starts from lookups per element (a unique key, an index, the statement's table or
    /// one scan): the same nodes as the test applied as a filter to every node of the label.
    #[test]
    fn lookups_of_a_list_find_what_the_filter_finds(
        stored in proptest::collection::vec(storable(), 1..30),
        lists in proptest::collection::vec(proptest::collection::vec(values(), 0..40), 3),
        schema in 0usize..3,
    ) {
        let store = Store::in_memory();
        let engine = Engine::new();
        let mut stored = stored;
        if schema == 2 {
            let mut seen = Vec::new();
            for v in stored.iter_mut() {
                // A unique key holds one NaN (the map keys floats by their bits), though NaN = NaN is false.
                let nan = matches!(v, Value::Float(f) if f.is_nan());
                if nan || seen.iter().any(|s: &Value| plexus_cypher::compare::equals(s, v) == Some(true)) {
                    *v = Value::Null;
                } else if !v.is_null() {
                    seen.push(v.clone());
                }
            }
        }
        match schema {
            1 => engine.execute(&store, "CREATE INDEX FOR (n:N) ON (n.v)", &Params::new()).unwrap(),
            2 => engine.execute(&store, "CREATE CONSTRAINT FOR (n:N) REQUIRE n.v IS UNIQUE", &Params::new()).unwrap(),
            _ => engine.execute(&store, "RETURN 1", &Params::new()).unwrap(),
        };
        create_numbered(&engine, &store, stored);
        for list in lists {
            let p = list_param(list);
            let seek = "MATCH (n:N) WHERE n.v IN $list RETURN n.i AS i ORDER BY i";
            let filter = "MATCH (n:N) WHERE (n.v IN $list) = true RETURN n.i AS i ORDER BY i";
            let per_row = "UNWIND range(1, 5) AS k MATCH (n:N) WHERE n.v IN $list RETURN k, n.i AS i ORDER BY k, i";
            let per_row_filter =
                "UNWIND range(1, 5) AS k MATCH (n:N) WHERE (n.v IN $list) = true RETURN k, n.i AS i ORDER BY k, i";
            prop_assert_eq!(engine.execute(&store, seek, &p).unwrap().rows, engine.execute(&store, filter, &p).unwrap().rows);
            let ors = "MATCH (n:N) WHERE n.v = $list[0] OR $list[1] = n.v OR n.v = $list[2] RETURN n.i AS i ORDER BY i";
            let ors_filter =
                "MATCH (n:N) WHERE (n.v = $list[0] OR $list[1] = n.v OR n.v = $list[2]) = true RETURN n.i AS i ORDER BY i";
            prop_assert_eq!(engine.execute(&store, ors, &p).unwrap().rows, engine.execute(&store, ors_filter, &p).unwrap().rows);
            prop_assert_eq!(
                engine.execute(&store, per_row, &p).unwrap().rows,
                engine.execute(&store, per_row_filter, &p).unwrap().rows
            );
        }
    }
}

/// A parameter may hold a node: a list reading its properties changes as the statement writes them, so it is
/// not evaluated once for the statement.
#[test]
fn an_in_list_reading_a_node_parameter_sees_the_statements_writes() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let created = engine.execute(&store, "CREATE (a:A {v: 0}) RETURN id(a) AS id", &Params::new()).unwrap();
    let ResultValue::Int(id) = created.rows[0][0] else { panic!("an id") };
    let p: Params = [("n".to_string(), Value::Node(plexus_storage::NodeId(id as u64)))].into_iter().collect();
    let q = "UNWIND [0, 1, 2] AS i MATCH (a:A) SET a.v = CASE WHEN i IN [$n.v] THEN i + 1 ELSE a.v END \
             RETURN a.v AS v";
    let rows = engine.execute(&store, q, &p).unwrap().rows;
    assert_eq!(rows.last(), Some(&vec![ResultValue::Int(3)]));
}

/// NaN equals nothing, itself included: a unique key (which files NaN under one key) finds no node for it, as a
/// label scan does not.
#[test]
fn a_unique_key_finds_nothing_for_nan() {
    for constrained in [false, true] {
        let store = Store::in_memory();
        let engine = Engine::new();
        let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap().rows;
        if constrained {
            run("CREATE CONSTRAINT FOR (n:L) REQUIRE n.k IS UNIQUE");
        }
        run("CREATE (:L {k: 0.0/0.0, u: 1}), (:L {k: [1.0, 0.0/0.0], u: 2}), (:L {k: 3, u: 3})");
        for q in [
            "MATCH (n:L) WHERE n.k = 0.0/0.0 RETURN n.u",
            "MATCH (n:L {k: [1, 0.0/0.0]}) RETURN n.u",
            "MATCH (n:L) WHERE n.k IN [0.0/0.0, 4] RETURN n.u",
        ] {
            assert!(run(q).is_empty(), "{q} (constrained: {constrained})");
        }
        assert_eq!(run("MATCH (n:L) WHERE n.k IN [0.0/0.0, 3] RETURN n.u"), [[ResultValue::Int(3)]]);
    }
}

/// A property index keys zoned times by instant; Cypher tells values of one instant apart by zone. Seeks and
/// range seeks must answer as a label scan does.
#[test]
fn an_index_tells_zoned_times_of_one_instant_apart() {
    let queries = [
        "MATCH (n:L) WHERE n.k = datetime('2020-01-01T12:00Z') RETURN n.u ORDER BY n.u",
        "MATCH (n:L) WHERE n.k > datetime('2020-01-01T12:00Z') RETURN n.u ORDER BY n.u",
        "MATCH (n:L) WHERE n.k >= datetime('2020-01-01T12:00Z') AND n.k < datetime('2020-01-01T13:00+01:00') \
         RETURN n.u ORDER BY n.u",
        "MATCH (n:L) WHERE n.k = time('12:00Z') RETURN n.u ORDER BY n.u",
        "MATCH (n:L) WHERE n.k <= time('13:00+01:00') RETURN n.u ORDER BY n.u",
        "MATCH (n:L) WHERE n.k IN [datetime('2020-01-01T13:00+01:00'), 7] RETURN n.u ORDER BY n.u",
        "MATCH (n:L {k: datetime('2020-01-01T12:00:00+01:00[Europe/Paris]')}) RETURN n.u ORDER BY n.u",
    ];
    let answers = |indexed: bool| {
        let store = Store::in_memory();
        let engine = Engine::new();
        let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap();
        if indexed {
            run("CREATE INDEX FOR (n:L) ON (n.k)");
        }
        run("CREATE (:L {k: datetime('2020-01-01T12:00Z'), u: 1}), (:L {k: datetime('2020-01-01T13:00+01:00'), u: 2}), \
             (:L {k: datetime('2020-01-01T12:00:00+01:00[Europe/Paris]'), u: 5}), \
             (:L {k: datetime('2020-01-01T11:00Z'), u: 6}), \
             (:L {k: time('12:00Z'), u: 3}), (:L {k: time('13:00+01:00'), u: 4})");
        let plans: Vec<String> = queries.iter().map(|q| run(&format!("EXPLAIN {q}")).plan.unwrap()).collect();
        (queries.iter().map(|q| run(q).rows).collect::<Vec<_>>(), plans)
    };
    let (indexed, plans) = answers(true);
    assert!(plans.iter().all(|p| p.contains("NodeIndex")), "{plans:?}");
    let (scanned, _) = answers(false);
    for ((q, a), b) in queries.iter().zip(&indexed).zip(&scanned) {
        assert_eq!(a, b, "{q}");
    }
    assert_eq!(indexed[0], [[ResultValue::Int(1)]]);
}

/// A label with two uniqueness constraints: each is enforced, each property is seeked by its own key map, and
/// MERGE on the second one finds what it holds.
#[test]
fn a_label_with_two_unique_keys_seeks_and_enforces_both() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let run = |q: &str| engine.execute(&store, q, &Params::new());
    run("CREATE CONSTRAINT person_id FOR (p:Person) REQUIRE p.id IS UNIQUE").unwrap();
    run("CREATE CONSTRAINT person_email FOR (p:Person) REQUIRE p.email IS UNIQUE").unwrap();
    run("CREATE (:Person {id: 1, email: 'ann@x'}), (:Person {id: 2, email: 'bob@x'})").unwrap();
    let taken = run("CREATE (:Person {id: 3, email: 'ann@x'})").unwrap_err();
    assert!(taken.to_string().contains("email"), "{taken}");
    assert!(run("CREATE (:Person {id: 2, email: 'cy@x'})").is_err());
    let plan = run("EXPLAIN MATCH (p:Person {email: 'bob@x'}) RETURN p.id").unwrap().plan.unwrap();
    assert!(plan.contains("NodeUniqueIndexSeek(:Person.email"), "{plan}");
    let found = run("MATCH (p:Person {email: 'bob@x'}) RETURN p.id").unwrap().rows;
    assert_eq!(found, [[ResultValue::Int(2)]]);
    run("MERGE (p:Person {email: 'ann@x'}) ON MATCH SET p.seen = true").unwrap();
    let counted = run("MATCH (p:Person) RETURN count(*), count(p.seen)").unwrap().rows;
    assert_eq!(counted, [[ResultValue::Int(2), ResultValue::Int(1)]]);
    let again = run("CREATE CONSTRAINT FOR (p:Person) REQUIRE p.email IS UNIQUE").unwrap_err();
    assert!(again.to_string().contains("already exists"), "{again}");
    run("DROP CONSTRAINT person_id").unwrap();
    run("CREATE (:Person {id: 1, email: 'dee@x'})").unwrap();
    assert!(run("CREATE (:Person {id: 9, email: 'dee@x'})").is_err());
}
