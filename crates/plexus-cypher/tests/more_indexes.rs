//! Indexes beyond one property of a label's nodes: on a relationship property (`CREATE INDEX FOR ()-[r:T]-() ON
//! (r.p)`) and on several node properties (`CREATE INDEX FOR (n:L) ON (n.a, n.b)`), as Neo4j writes them, listed
//! and dropped like node indexes, and the patterns that start at what they find, answering exactly what a scan
//! answers.

use plexus_cypher::{Engine, Params, ResultValue};
use plexus_storage::Store;

fn run(engine: &Engine, store: &Store, query: &str) -> Vec<Vec<ResultValue>> {
    engine.execute(store, query, &Params::new()).unwrap_or_else(|e| panic!("{query}: {e}")).rows
}

fn sorted(mut rows: Vec<Vec<ResultValue>>) -> Vec<String> {
    let mut out: Vec<String> = rows.drain(..).map(|r| format!("{r:?}")).collect();
    out.sort();
    out
}

fn plan(engine: &Engine, store: &Store, query: &str) -> String {
    engine.execute(store, &format!("EXPLAIN {query}"), &Params::new()).unwrap().plan.unwrap()
}

#[test]
fn created_listed_and_dropped_as_neo4j_does() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    let created = engine.execute(&store, "CREATE INDEX since FOR ()-[r:KNOWS]-() ON (r.since)", &Params::new());
    assert_eq!(created.unwrap().stats.indexes_added, 1);
    run(&engine, &store, "CREATE INDEX IF NOT EXISTS FOR ()-[r:KNOWS]->() ON (r.since)");
    run(&engine, &store, "CREATE RANGE INDEX FOR ()<-[r:LIKES]-() ON (r.weight)");
    run(&engine, &store, "CREATE INDEX FOR (n:KNOWS) ON (n.since)");
    let rows = run(
        &engine,
        &store,
        "SHOW INDEXES YIELD name, entityType, labelsOrTypes, properties, createStatement \
         RETURN name, entityType, labelsOrTypes, properties, createStatement ORDER BY name",
    );
    let text: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
    assert_eq!(rows.len(), 3, "{text:#?}");
    assert!(text[0].contains("index_KNOWS_since") && text[0].contains("\"NODE\""), "{text:#?}");
    assert!(text[1].contains("rel_index_LIKES_weight") && text[1].contains("RELATIONSHIP"), "{text:#?}");
    assert!(text[2].contains("\"since\"") && text[2].contains("FOR ()-[r:`KNOWS`]-() ON (r.`since`)"), "{text:#?}");

    let error = |q: &str| engine.execute(&store, q, &Params::new()).unwrap_err().detail;
    // Unnamed, it would be named otherwise than `since`: another index on the same schema, as Neo4j 5.26 says.
    assert_eq!(error("CREATE INDEX FOR ()-[r:KNOWS]-() ON (r.since)"), "IndexAlreadyExists");
    assert_eq!(error("CREATE INDEX since FOR ()-[r:OTHER]-() ON (r.x)"), "IndexWithNameAlreadyExists");
    assert_eq!(error("CREATE INDEX since FOR (n:Person) ON (n.x)"), "IndexWithNameAlreadyExists");
    let dropped = engine.execute(&store, "DROP INDEX since", &Params::new()).unwrap();
    assert_eq!(dropped.stats.indexes_removed, 1);
    run(&engine, &store, "DROP INDEX since IF EXISTS");
    assert_eq!(error("DROP INDEX since"), "IndexNotFound");
    run(&engine, &store, "DROP INDEX rel_index_LIKES_weight");
    assert_eq!(run(&engine, &store, "SHOW INDEXES").len(), 1);
}

#[test]
fn patterns_start_at_the_relationships_an_index_finds() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(&engine, &store, "UNWIND range(1, 200) AS i CREATE (:P {i: i})-[:KNOWS {since: i % 20}]->(:P {i: -i})");
    let query = "MATCH (a:P)-[r:KNOWS]->(b) WHERE r.since = 7 RETURN a.i, b.i";
    assert!(!plan(&engine, &store, query).contains("RelationshipIndex"));
    let before = sorted(run(&engine, &store, query));
    assert_eq!(before.len(), 10);
    run(&engine, &store, "CREATE INDEX FOR ()-[r:KNOWS]-() ON (r.since)");
    // The cached plan is made again now that the index exists, and again once it is gone.
    let indexed = plan(&engine, &store, query);
    assert!(indexed.contains("DirectedRelationshipIndexSeek"), "{indexed}");
    assert_eq!(sorted(run(&engine, &store, query)), before);
    let range = "MATCH (a)-[r:KNOWS]-(b) WHERE 3 < r.since <= 5 RETURN a.i, b.i";
    assert!(plan(&engine, &store, range).contains("UndirectedRelationshipIndexSeekByRange"));
    assert_eq!(run(&engine, &store, range).len(), 2 * 20);
    run(&engine, &store, "DROP INDEX rel_index_KNOWS_since");
    assert!(!plan(&engine, &store, query).contains("RelationshipIndex"));
    assert_eq!(sorted(run(&engine, &store, query)), before);
}

/// Every query, on a graph with self-loops, repeated pairs, mixed types and values of one instant in several
/// zones, answers the same with the index as without it; inside a transaction too, after its own writes.
#[test]
fn answers_with_the_index_equal_answers_without_it() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(
        &engine,
        &store,
        "UNWIND range(0, 39) AS i CREATE (:N {i: i}) WITH collect(i) AS is \
         MATCH (a:N), (b:N) WHERE (a.i * 7 + b.i * 3) % 11 = 0 \
         CREATE (a)-[:T {p: CASE a.i % 6 WHEN 0 THEN 1 WHEN 1 THEN 1.0 WHEN 2 THEN 'x' WHEN 3 THEN null \
                      WHEN 4 THEN 2.5 ELSE a.i + b.i END, q: b.i}]->(b) \
         CREATE (b)-[:U {p: 1}]->(a)",
    );
    run(
        &engine,
        &store,
        "MATCH (a:N) WHERE a.i < 4 CREATE (a)-[:T {p: a.i}]->(a), \
         (a)-[:T {p: datetime({epochSeconds: 0, timezone: CASE a.i % 2 WHEN 0 THEN '+01:00' ELSE 'Z' END})}]->(a)",
    );
    let queries = [
        "MATCH (a)-[r:T]->(b) WHERE r.p IN [1, 'x', 1.0, null] RETURN a.i, b.i",
        "MATCH (a)-[r:T]-(b) WHERE r.p = 2.5 OR r.p = 'x' RETURN a.i, b.i",
        "MATCH (a)-[r:T]->(b) WHERE r.p = 1 RETURN a.i, b.i, r.q",
        "MATCH (a)-[r:T {p: 1}]-(b) RETURN a.i, b.i",
        "MATCH (a)<-[r:T {p: 'x'}]-(b) RETURN a.i, b.i",
        "MATCH (a)-[r:T]->(a) WHERE r.p = 2 RETURN a.i",
        "MATCH (a)-[r:T]->(b) WHERE r.p >= 2 AND r.p < 9 RETURN a.i, b.i, r.p",
        "MATCH (a)-[r:T]-(b) WHERE r.p > 'a' RETURN a.i, b.i",
        "MATCH (a)-[r:T]->(b) WHERE r.p = $nothing RETURN a.i",
        "MATCH (a)-[r:T]->(b) WHERE r.p = 0.0 / 0.0 RETURN a.i",
        "MATCH (a)-[r:T]->(b) WHERE r.p = datetime({epochSeconds: 0, timezone: '+01:00'}) RETURN a.i",
        "MATCH (a)-[r:T]->(b) WHERE r.p < datetime({epochSeconds: 0, timezone: 'Z'}) RETURN a.i",
        "MATCH (x)-[:U]->(a)-[r:T {p: 1}]->(b)-[s:T]->(c) RETURN x.i, a.i, b.i, c.i, s.p",
        "MATCH (a)-[r:T {p: 1}]->(b)-[s:T {p: 1}]->(c) RETURN a.i, b.i, c.i",
        "MATCH (a:N) WHERE a.i < 5 OPTIONAL MATCH (b)-[r:T {p: 1.0}]->(c) WHERE c.i > a.i RETURN a.i, count(c)",
        "UNWIND [1, 'x', 2.5] AS v MATCH (a)-[r:T]->(b) WHERE r.p = v RETURN v, a.i, b.i",
    ];
    let mut params = Params::new();
    params.insert("nothing".into(), plexus_cypher::Value::Null);
    let answers = |engine: &Engine| -> Vec<Vec<String>> {
        queries
            .iter()
            .map(|q| sorted(engine.execute(&store, q, &params).unwrap_or_else(|e| panic!("{q}: {e}")).rows))
            .collect()
    };
    let not_a_list = "MATCH ()-[r:T]->() WHERE r.p IN 5 RETURN r";
    let error = |engine: &Engine| engine.execute(&store, not_a_list, &params).map(|_| ()).unwrap_err().kind;
    let error_without = error(&engine);
    let without = answers(&engine);
    assert!(without.iter().filter(|rows| !rows.is_empty()).count() >= 10, "{without:?}");
    run(&engine, &store, "CREATE INDEX FOR ()-[r:T]-() ON (r.p)");
    for q in &queries[..8] {
        assert!(plan(&engine, &store, q).contains("RelationshipIndexSeek"), "{q}");
    }
    assert_eq!(answers(&engine), without);
    assert_eq!(error(&engine), error_without, "IN over a non-list fails as without the index");

    // A transaction's own writes are in the index it reads.
    let mut tx = store.write();
    let q = "MATCH (a)-[r:T]->(b) WHERE r.p = 'fresh' RETURN count(*)";
    engine.execute_in(&mut tx, "MATCH (a:N {i: 1}), (b:N {i: 2}) CREATE (a)-[:T {p: 'fresh'}]->(b)", &params).unwrap();
    assert_eq!(engine.execute_in(&mut tx, q, &params).unwrap().rows, vec![vec![ResultValue::Int(1)]]);
    engine.execute_in(&mut tx, "MATCH ()-[r:T {p: 'fresh'}]->() SET r.p = 'stale'", &params).unwrap();
    assert_eq!(engine.execute_in(&mut tx, q, &params).unwrap().rows, vec![vec![ResultValue::Int(0)]]);
    tx.commit().unwrap();
    assert!(store.read().check().is_empty());
}

#[test]
fn composite_indexes_are_created_listed_and_dropped_as_neo4j_does() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    let created = engine.execute(&store, "CREATE INDEX full FOR (p:Person) ON (p.first, p.last)", &Params::new());
    assert_eq!(created.unwrap().stats.indexes_added, 1);
    run(&engine, &store, "CREATE INDEX IF NOT EXISTS FOR (p:Person) ON (p.first, p.last)");
    run(&engine, &store, "CREATE INDEX ON :Person(last, first)");
    let rows = run(
        &engine,
        &store,
        "SHOW INDEXES YIELD name, properties, createStatement RETURN name, properties, createStatement ORDER BY name",
    );
    let text: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
    assert_eq!(rows.len(), 2, "{text:#?}");
    assert!(text[0].contains("\"full\"") && text[0].contains("ON (n.`first`, n.`last`)"), "{text:#?}");
    assert!(text[1].contains("index_Person_last_first"), "{text:#?}");
    let error = |q: &str| engine.execute(&store, q, &Params::new()).unwrap_err().detail;
    assert_eq!(error("CREATE INDEX FOR (p:Person) ON (p.first, p.last)"), "IndexAlreadyExists");
    assert_eq!(error("CREATE INDEX full FOR (p:Person) ON (p.age)"), "IndexWithNameAlreadyExists");
    assert_eq!(error("CREATE INDEX FOR (p:Person) ON (p.a, p.a)"), "RepeatedPropertyInCompositeSchema");
    assert_eq!(error("CREATE INDEX FOR ()-[r:T]-() ON (r.a, r.b)"), "UnsupportedIndex");
    run(&engine, &store, "DROP INDEX ON :Person(last, first)");
    assert_eq!(error("DROP INDEX ON :Person(last, first)"), "IndexNotFound");
    run(&engine, &store, "DROP INDEX full");
    assert!(run(&engine, &store, "SHOW INDEXES").is_empty());
}

/// A node with an equality on every property of a composite index is found through it; the answers are those
/// of a scan, with or without the index, for mixed number types, nulls and parameters.
#[test]
fn nodes_are_found_through_composite_indexes() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(
        &engine,
        &store,
        "UNWIND range(0, 299) AS i CREATE (:P {a: i % 7, b: CASE i % 3 WHEN 0 THEN 'x' WHEN 1 THEN 1.0 ELSE null END,          i: i})-[:R]->(:Q {i: i})",
    );
    let queries = [
        "MATCH (n:P {a: 3, b: 'x'}) RETURN n.i",
        "MATCH (n:P) WHERE n.b = 1 AND n.a = 2 RETURN n.i",
        "MATCH (n:P {a: 1})-[:R]->(q) WHERE n.b = $b RETURN n.i, q.i",
        "MATCH (n:P {a: 1, b: null}) RETURN n.i",
        "UNWIND [[0, 'x'], [1, 1], [2, 2]] AS v MATCH (n:P {a: v[0], b: v[1]}) RETURN v, n.i",
    ];
    let mut params = Params::new();
    params.insert("b".into(), plexus_cypher::Value::Float(1.0));
    let answers = || -> Vec<Vec<String>> {
        queries
            .iter()
            .map(|q| sorted(engine.execute(&store, q, &params).unwrap_or_else(|e| panic!("{q}: {e}")).rows))
            .collect()
    };
    let without = answers();
    assert!(without.iter().filter(|rows| !rows.is_empty()).count() >= 4, "{without:?}");
    run(&engine, &store, "CREATE INDEX FOR (n:P) ON (n.b, n.a)");
    for q in &queries[..3] {
        assert!(plan(&engine, &store, q).contains("NodeIndexSeek(:P(b, a))"), "{q}");
    }
    assert_eq!(answers(), without);
    // A transaction's writes are in the index it reads.
    let mut tx = store.write();
    let q = "MATCH (n:P {a: 100, b: 'y'}) RETURN count(n)";
    engine.execute_in(&mut tx, "MATCH (n:P {i: 5}) SET n.a = 100, n.b = 'y'", &params).unwrap();
    assert_eq!(engine.execute_in(&mut tx, q, &params).unwrap().rows, vec![vec![ResultValue::Int(1)]]);
    engine.execute_in(&mut tx, "MATCH (n:P {i: 5}) REMOVE n:P", &params).unwrap();
    assert_eq!(engine.execute_in(&mut tx, q, &params).unwrap().rows, vec![vec![ResultValue::Int(0)]]);
    tx.commit().unwrap();
    assert!(store.read().check().is_empty());
}

#[test]
fn an_equality_and_a_range_seek_through_a_composite_index() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(
        &engine,
        &store,
        "UNWIND range(0, 399) AS i CREATE (:P {a: i % 5, b: CASE i % 4 WHEN 0 THEN i WHEN 1 THEN toFloat(i) / 3 \
         WHEN 2 THEN toString(i) ELSE null END, i: i, \
         t: datetime({epochSeconds: i % 7 * 3600, timezone: CASE i % 2 WHEN 0 THEN 'Z' ELSE '+01:00' END})})",
    );
    let queries = [
        "MATCH (n:P) WHERE n.a = 3 AND n.b > 100 RETURN n.i",
        "MATCH (n:P {a: 2}) WHERE n.b <= 50.5 RETURN n.i",
        "MATCH (n:P) WHERE n.a = 1 AND 40 < n.b < 300 RETURN n.i",
        "MATCH (n:P) WHERE n.a = 1 AND n.b >= 40 AND n.b < 41 RETURN n.i",
        "MATCH (n:P) WHERE n.a = 4 AND n.b > '2' RETURN n.i",
        "MATCH (n:P) WHERE n.a = 0 AND n.b < $x RETURN n.i",
        "MATCH (n:P) WHERE n.a = 0 AND n.b > $none RETURN n.i",
        "MATCH (n:P) WHERE n.a = 2.0 AND n.b > 10 AND n.b < 'z' RETURN n.i",
        "MATCH (n:P) WHERE n.a = 1 AND n.t > datetime({epochSeconds: 3600, timezone: '+01:00'}) RETURN n.i",
        "MATCH (n:P) WHERE n.a = 3 AND n.t >= datetime({epochSeconds: 7200, timezone: 'Z'}) RETURN n.i",
        "UNWIND [0, 1, 2] AS v MATCH (n:P {a: v}) WHERE n.b < v * 100 RETURN v, n.i",
        // Lists compare element by element, and one holding NaN or a duration compares with others still.
        "MATCH (n:P) WHERE n.a = 1 AND n.b > [] RETURN n.i",
        "MATCH (n:P) WHERE n.a = 1 AND n.b < [2] RETURN n.i",
    ];
    let mut params = Params::new();
    params.insert("x".into(), plexus_cypher::Value::Int(200));
    params.insert("none".into(), plexus_cypher::Value::Null);
    let answers = || -> Vec<Vec<String>> {
        queries
            .iter()
            .map(|q| sorted(engine.execute(&store, q, &params).unwrap_or_else(|e| panic!("{q}: {e}")).rows))
            .collect()
    };
    run(
        &engine,
        &store,
        "CREATE (:P {a: 1, b: [0.0 / 0.0], i: -1}), (:P {a: 1, b: [1.0, 0.0 / 0.0], i: -2}), \
         (:P {a: 1, b: [duration('P1D')], i: -3}), (:P {a: 1, b: ['x'], i: -4})",
    );
    let without = answers();
    assert!(without.iter().filter(|rows| !rows.is_empty()).count() >= 10, "{without:?}");
    run(&engine, &store, "CREATE INDEX FOR (n:P) ON (n.a, n.b)");
    run(&engine, &store, "CREATE INDEX FOR (n:P) ON (n.a, n.t)");
    for q in &queries {
        assert!(plan(&engine, &store, q).contains("NodeIndexSeekByRange(:P(a, "), "{q}\n{}", plan(&engine, &store, q));
    }
    assert_eq!(answers(), without);
    // Equalities on both still seek exactly.
    assert!(plan(&engine, &store, "MATCH (n:P {a: 1, b: 5}) RETURN n").contains("NodeIndexSeek(:P(a, b))"));
    // An equality on a property outside the index (a unique key's, say) is looked up instead.
    run(&engine, &store, "CREATE CONSTRAINT FOR (n:P) REQUIRE n.i IS UNIQUE");
    let keyed = plan(&engine, &store, "MATCH (n:P) WHERE n.i = 5 AND n.a = 1 AND n.b > 0 RETURN n");
    assert!(!keyed.contains("NodeIndexSeekByRange"), "{keyed}");
}
