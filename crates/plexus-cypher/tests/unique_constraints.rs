//! Uniqueness constraints beyond one node property, as Neo4j 5 writes them: on several node properties together
//! (`REQUIRE (n.a, n.b) IS UNIQUE`) and on a relationship property (`FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE`):
//! created over data that keeps them or refused, listed by SHOW CONSTRAINTS and SHOW INDEXES, enforced on every
//! write with the statement undone, dropped by name or by the older syntax, and used by the planner as indexes.

use plexus_cypher::{Engine, ErrorKind, Params, ResultValue};
use plexus_storage::Store;

fn run(engine: &Engine, store: &Store, query: &str) -> Vec<Vec<ResultValue>> {
    engine.execute(store, query, &Params::new()).unwrap_or_else(|e| panic!("{query}: {e}")).rows
}

fn refused(engine: &Engine, store: &Store, query: &str, kind: ErrorKind, detail: &str) -> String {
    let e = engine.execute(store, query, &Params::new()).expect_err(query);
    assert_eq!((e.kind, e.detail), (kind, detail), "{query}: {e}");
    e.to_string()
}

fn count(engine: &Engine, store: &Store, query: &str) -> i64 {
    match run(engine, store, query)[0][0] {
        ResultValue::Int(n) => n,
        ref other => panic!("{query}: {other:?}"),
    }
}

#[test]
fn a_constraint_on_several_node_properties() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(
        &engine,
        &store,
        "CREATE (:Person {first: 'Ada', last: 'Lovelace'}), (:Person {first: 'Ada', last: 'Lovelace'})",
    );
    let failed = "CREATE CONSTRAINT full_name FOR (p:Person) REQUIRE (p.first, p.last) IS UNIQUE";
    refused(&engine, &store, failed, ErrorKind::ConstraintVerificationFailed, "ConstraintCreationFailed");
    assert_eq!(count(&engine, &store, "SHOW CONSTRAINTS YIELD name RETURN count(*)"), 0);
    run(&engine, &store, "MATCH (p:Person) WITH p LIMIT 1 SET p.last = 'Byron'");
    let created = engine.execute(&store, failed, &Params::new()).unwrap();
    assert_eq!(created.stats.constraints_added, 1);
    run(&engine, &store, "CREATE CONSTRAINT IF NOT EXISTS FOR (p:Person) REQUIRE (p.first, p.last) IS UNIQUE");
    // Unnamed, it would be named otherwise: another constraint on the same schema, as Neo4j tells it.
    let again = "CREATE CONSTRAINT FOR (p:Person) REQUIRE (p.first, p.last) IS UNIQUE";
    refused(&engine, &store, again, ErrorKind::SemanticError, "ConstraintAlreadyExists");
    let as_index = "CREATE INDEX FOR (p:Person) ON (p.first, p.last)";
    refused(&engine, &store, as_index, ErrorKind::SemanticError, "ConstraintAlreadyExists");
    let name_taken = "CREATE INDEX full_name FOR (p:Person) ON (p.last)";
    refused(&engine, &store, name_taken, ErrorKind::SemanticError, "ConstraintWithNameAlreadyExists");

    // Every way of making a second holder is refused, and the statement leaves nothing behind.
    let message = refused(
        &engine,
        &store,
        "CREATE (:Person {first: 'Grace', last: 'Hopper'}), (:Person {first: 'Ada', last: 'Lovelace'})",
        ErrorKind::ConstraintValidationFailed,
        "",
    );
    assert!(message.contains("first = 'Ada'") && message.contains("last = 'Lovelace'"), "{message}");
    assert_eq!(count(&engine, &store, "MATCH (p:Person {first: 'Grace'}) RETURN count(*)"), 0);
    let set = "MATCH (p:Person {last: 'Byron'}) SET p.last = 'Lovelace'";
    refused(&engine, &store, set, ErrorKind::ConstraintValidationFailed, "");
    run(&engine, &store, "CREATE (:Author {first: 'Ada', last: 'Lovelace'})");
    let label = "MATCH (a:Author) SET a:Person";
    refused(&engine, &store, label, ErrorKind::ConstraintValidationFailed, "");
    let merged = "MERGE (p:Person {first: 'Ada', last: 'Lovelace'}) ON MATCH SET p.seen = true RETURN p.seen";
    assert_eq!(run(&engine, &store, merged), vec![vec![ResultValue::Bool(true)]]);
    // Nodes lacking one of the properties are not constrained; numbers equal under `=` are one value.
    run(&engine, &store, "CREATE (:Person {first: 'Ada'}), (:Person {first: 'Ada'}), (:Person {first: 1, last: 2})");
    refused(&engine, &store, "CREATE (:Person {first: 1.0, last: 2})", ErrorKind::ConstraintValidationFailed, "");

    // The planner seeks through it.
    let plan =
        engine.execute(&store, "EXPLAIN MATCH (p:Person {first: 'Ada', last: 'Byron'}) RETURN p", &Params::new());
    assert!(plan.unwrap().plan.unwrap().contains("NodeIndexSeek"));
    assert_eq!(count(&engine, &store, "MATCH (p:Person {first: 'Ada', last: 'Byron'}) RETURN count(*)"), 1);

    let rows = run(
        &engine,
        &store,
        "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties, ownedIndex, createStatement",
    );
    assert_eq!(rows.len(), 1);
    let row = format!("{:?}", rows[0]);
    for part in ["full_name", "UNIQUENESS", "NODE", "Person", "first", "last", "REQUIRE (n.`first`, n.`last`)"] {
        assert!(row.contains(part), "{row} lacks {part}");
    }
    let rows = run(&engine, &store, "SHOW INDEXES YIELD name, owningConstraint RETURN name, owningConstraint");
    let owned = vec![ResultValue::String("full_name".into()), ResultValue::String("full_name".into())];
    assert_eq!(rows, vec![owned]);
    refused(&engine, &store, "DROP INDEX full_name", ErrorKind::SemanticError, "IndexNotFound");

    // Dropped by the older syntax, it refuses nothing more.
    let dropped =
        engine.execute(&store, "DROP CONSTRAINT ON (p:Person) ASSERT (p.first, p.last) IS UNIQUE", &Params::new());
    assert_eq!(dropped.unwrap().stats.constraints_removed, 1);
    run(&engine, &store, "CREATE (:Person {first: 'Ada', last: 'Lovelace'})");
    refused(&engine, &store, "DROP CONSTRAINT full_name", ErrorKind::SemanticError, "ConstraintNotFound");
    run(&engine, &store, "DROP CONSTRAINT full_name IF EXISTS");
}

#[test]
fn a_constraint_on_a_relationship_property() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(&engine, &store, "CREATE (a:P), (b:P), (a)-[:PAID {ref: 1}]->(b), (b)-[:PAID {ref: 1}]->(a)");
    let create = "CREATE CONSTRAINT paid_ref FOR ()-[r:PAID]-() REQUIRE r.ref IS UNIQUE";
    refused(&engine, &store, create, ErrorKind::ConstraintVerificationFailed, "ConstraintCreationFailed");
    run(&engine, &store, "MATCH ()-[r:PAID]->(:P) WITH r LIMIT 1 SET r.ref = 2");
    assert_eq!(engine.execute(&store, create, &Params::new()).unwrap().stats.constraints_added, 1);

    let message = refused(
        &engine,
        &store,
        "MATCH (a:P), (b:P) WHERE a <> b CREATE (a)-[:PAID {ref: 1.0}]->(b)",
        ErrorKind::ConstraintValidationFailed,
        "",
    );
    assert!(message.contains("PAID") && message.contains("ref = 1"), "{message}");
    assert_eq!(count(&engine, &store, "MATCH ()-[r:PAID]->() RETURN count(r)"), 2);
    refused(&engine, &store, "MATCH ()-[r:PAID {ref: 2}]->() SET r.ref = 1", ErrorKind::ConstraintValidationFailed, "");
    // Another type, another property, or none, is free.
    run(
        &engine,
        &store,
        "MATCH (a:P), (b:P) WHERE a <> b CREATE (a)-[:OWES {ref: 1}]->(b), (a)-[:PAID {note: 1}]->(b)",
    );
    let plan = engine.execute(&store, "EXPLAIN MATCH (a)-[r:PAID {ref: 2}]->(b) RETURN a, b", &Params::new());
    assert!(plan.unwrap().plan.unwrap().contains("RelationshipIndexSeek"));
    assert_eq!(count(&engine, &store, "MATCH ()-[r:PAID {ref: 2}]->() RETURN count(*)"), 1);

    let rows = run(&engine, &store, "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties");
    let row = format!("{:?}", rows);
    for part in ["paid_ref", "RELATIONSHIP_UNIQUENESS", "\"RELATIONSHIP\"", "PAID", "ref"] {
        assert!(row.contains(part), "{row} lacks {part}");
    }
    let shown = run(&engine, &store, "SHOW CONSTRAINTS YIELD createStatement RETURN createStatement");
    assert_eq!(
        shown,
        vec![vec![ResultValue::String(
            "CREATE CONSTRAINT `paid_ref` FOR ()-[r:`PAID`]-() REQUIRE (r.`ref`) IS UNIQUE".into()
        )]]
    );
    // Its own statement makes it again once dropped.
    run(&engine, &store, "DROP CONSTRAINT paid_ref");
    let ResultValue::String(statement) = &shown[0][0] else { unreachable!() };
    run(&engine, &store, statement);
    // Without a name, it gets one apart from an index's on the same property.
    run(&engine, &store, "DROP CONSTRAINT paid_ref");
    run(&engine, &store, "CREATE CONSTRAINT FOR ()-[r:PAID]-() REQUIRE r.ref IS UNIQUE");
    let names = run(&engine, &store, "SHOW CONSTRAINTS YIELD name RETURN name");
    assert_eq!(names, vec![vec![ResultValue::String("rel_constraint_PAID_ref".into())]]);
    let as_index = "CREATE INDEX FOR ()-[r:PAID]-() ON (r.ref)";
    refused(&engine, &store, as_index, ErrorKind::SemanticError, "ConstraintAlreadyExists");
}

#[test]
fn a_plain_index_on_the_same_schema_must_go_first() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(&engine, &store, "CREATE INDEX FOR (n:L) ON (n.a, n.b)");
    run(&engine, &store, "CREATE INDEX FOR ()-[r:T]-() ON (r.p)");
    for query in [
        "CREATE CONSTRAINT FOR (n:L) REQUIRE (n.a, n.b) IS UNIQUE",
        "CREATE CONSTRAINT IF NOT EXISTS FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE",
    ] {
        refused(&engine, &store, query, ErrorKind::SemanticError, "IndexAlreadyExists");
    }
}

#[test]
fn constraints_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::new();
    {
        let store = Store::open(dir.path()).unwrap().0;
        run(&engine, &store, "CREATE CONSTRAINT FOR (n:L) REQUIRE (n.a, n.b) IS UNIQUE");
        run(&engine, &store, "CREATE CONSTRAINT t_p FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE");
        run(&engine, &store, "CREATE (x:L {a: 1, b: 2})-[:T {p: 1}]->(x)");
    }
    for checkpoint in [true, false] {
        let store = Store::open(dir.path()).unwrap().0;
        refused(&engine, &store, "CREATE (:L {a: 1, b: 2})", ErrorKind::ConstraintValidationFailed, "");
        refused(&engine, &store, "MATCH (x:L) CREATE (x)-[:T {p: 1}]->(x)", ErrorKind::ConstraintValidationFailed, "");
        assert_eq!(count(&engine, &store, "SHOW CONSTRAINTS YIELD name RETURN count(*)"), 2);
        if checkpoint {
            store.checkpoint().unwrap();
        }
    }
}

#[test]
fn names_kinds_and_listings_follow_neo4j() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(&engine, &store, "CREATE CONSTRAINT FOR (n:L) REQUIRE (n.a, n.b) IS UNIQUE");
    // Other schemas deriving the same name get the first free number after it.
    run(&engine, &store, "CREATE CONSTRAINT FOR (n:L_a) REQUIRE n.b IS UNIQUE");
    run(&engine, &store, "CREATE CONSTRAINT FOR (n:L) REQUIRE n.a_b IS UNIQUE");
    let names = run(&engine, &store, "SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name");
    let names: Vec<String> = names.into_iter().map(|r| format!("{:?}", r[0])).collect();
    assert_eq!(
        names,
        ["String(\"constraint_L_a_b\")", "String(\"constraint_L_a_b_2\")", "String(\"constraint_L_a_b_3\")"]
    );
    run(&engine, &store, "CREATE INDEX constraint_M_p FOR (n:M) ON (n.q)");
    run(&engine, &store, "CREATE CONSTRAINT FOR (n:M) REQUIRE n.p IS UNIQUE");
    refused(&engine, &store, "CREATE (:M {p: 1}), (:M {p: 1})", ErrorKind::ConstraintValidationFailed, "");

    // A name an index holds is refused to a constraint, IF NOT EXISTS or not; an equivalent constraint under
    // another name is another code than under its own.
    let taken = "CREATE CONSTRAINT constraint_M_p IF NOT EXISTS FOR (n:N) REQUIRE n.p IS UNIQUE";
    refused(&engine, &store, taken, ErrorKind::SemanticError, "IndexWithNameAlreadyExists");
    run(&engine, &store, "CREATE CONSTRAINT c1 FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE");
    let again = "CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE";
    refused(&engine, &store, again, ErrorKind::SemanticError, "ConstraintAlreadyExists");
    let again = "CREATE CONSTRAINT c1 FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE";
    refused(&engine, &store, again, ErrorKind::SemanticError, "EquivalentSchemaRuleAlreadyExists");
    // A constraint's index is not dropped as an index, IF EXISTS or not.
    refused(&engine, &store, "DROP INDEX c1 IF EXISTS", ErrorKind::SemanticError, "IndexNotFound");
    run(&engine, &store, "DROP INDEX nothing_of_that_name IF EXISTS");

    // SHOW keeps the kind of entity asked for.
    let count = |q: &str| run(&engine, &store, &format!("{q} YIELD name RETURN count(*)"))[0][0].clone();
    assert_eq!(count("SHOW NODE UNIQUE CONSTRAINTS"), ResultValue::Int(4));
    assert_eq!(count("SHOW REL UNIQUE CONSTRAINTS"), ResultValue::Int(1));
    assert_eq!(count("SHOW RELATIONSHIP UNIQUENESS CONSTRAINTS"), ResultValue::Int(1));
    assert_eq!(count("SHOW UNIQUE CONSTRAINTS"), ResultValue::Int(5));
    assert_eq!(count("SHOW NODE KEY CONSTRAINTS"), ResultValue::Int(0));
    for (query, detail) in [
        ("CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE r.q IS NODE UNIQUE", "UnexpectedSyntax"),
        ("CREATE CONSTRAINT FOR (n:L) REQUIRE n.q IS RELATIONSHIP UNIQUE", "UnexpectedSyntax"),
        ("CREATE CONSTRAINT FOR (n:L) REQUIRE (n.q, n.q) IS UNIQUE", "RepeatedPropertyInCompositeSchema"),
    ] {
        refused(&engine, &store, query, ErrorKind::SyntaxError, detail);
    }
}

#[test]
fn zoned_values_of_one_instant_are_distinct_values() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    run(&engine, &store, "CREATE (:Z {a: 1, t: datetime('2020-01-01T00:00Z')})-[:AT {t: time('11:00Z')}]->(:Y)");
    run(
        &engine,
        &store,
        "CREATE (:Z {a: 1, t: datetime('2020-01-01T01:00+01:00')})-[:AT {t: time('12:00+01:00')}]->(:Y)",
    );
    // Equal instants in other zones are other values, as for `=` and a constraint on one property.
    run(&engine, &store, "CREATE CONSTRAINT FOR (n:Z) REQUIRE (n.a, n.t) IS UNIQUE");
    run(&engine, &store, "CREATE CONSTRAINT FOR ()-[r:AT]-() REQUIRE r.t IS UNIQUE");
    run(
        &engine,
        &store,
        "CREATE (:Z {a: 1, t: datetime('2020-01-01T02:00+02:00')})-[:AT {t: time('13:00+02:00')}]->(:Y)",
    );
    let again = "CREATE (:Z {a: 1, t: datetime('2020-01-01T01:00+01:00')})";
    refused(&engine, &store, again, ErrorKind::ConstraintValidationFailed, "");
    let again = "MATCH (y:Y) WITH y LIMIT 1 CREATE (y)-[:AT {t: time('11:00Z')}]->(y)";
    refused(&engine, &store, again, ErrorKind::ConstraintValidationFailed, "");
    assert_eq!(count(&engine, &store, "MATCH (z:Z) RETURN count(z)"), 3);
    assert!(store.read().check().is_empty(), "{:?}", store.read().check());
}
