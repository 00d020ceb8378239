//! Answers checked against Neo4j 5.26 statement by statement: deletions settled at the end of the statement, keys
//! written twice, counters, and the inputs Neo4j refuses.

use plexus_cypher::{Engine, ErrorKind, Params, QueryStats, ResultValue};
use plexus_storage::Store;

struct Db {
    store: Store,
    engine: Engine,
}

impl Db {
    fn new() -> Db {
        let db = Db { store: Store::in_memory(), engine: Engine::new() };
        db.run(
            "CREATE (:City {name: 'Berlin'})<-[:LIVES_IN]-(:Person {name: 'Ann'})-[:LIVES_IN]->(:City {name: 'Oslo'})",
        );
        db
    }

    fn result(&self, q: &str) -> Result<plexus_cypher::QueryResult, plexus_cypher::CypherError> {
        self.engine.execute(&self.store, q, &Params::new())
    }

    fn run(&self, q: &str) -> Vec<Vec<ResultValue>> {
        self.result(q).unwrap_or_else(|e| panic!("{q}: {e}")).rows
    }

    fn stats(&self, q: &str) -> QueryStats {
        self.result(q).unwrap_or_else(|e| panic!("{q}: {e}")).stats
    }

    fn err(&self, q: &str) -> plexus_cypher::CypherError {
        self.result(q).err().unwrap_or_else(|| panic!("{q} should fail"))
    }

    fn count(&self, q: &str) -> i64 {
        match self.run(q).as_slice() {
            [row] => match row[0] {
                ResultValue::Int(n) => n,
                ref other => panic!("{q}: {other:?}"),
            },
            rows => panic!("{q}: {rows:?}"),
        }
    }
}

/// A node deleted while it still has relationships may lose them later in the same statement: what counts is
/// that none is left when the statement ends.
#[test]
fn a_node_may_be_deleted_before_its_relationships_in_the_same_statement() {
    for q in [
        "MATCH (c:City {name: 'Berlin'})<-[r]-() DELETE c DELETE r",
        "MATCH (c:City {name: 'Berlin'})<-[r]-() DELETE c WITH r DELETE r",
        "MATCH (c:City {name: 'Berlin'})<-[r]-() FOREACH (x IN [1] | DELETE c) DELETE r",
        "MATCH (c:City {name: 'Berlin'})<-[r]-() DELETE c DETACH DELETE c",
    ] {
        let db = Db::new();
        let stats = db.stats(q);
        assert_eq!(stats.nodes_deleted, 1, "{q}");
        assert_eq!(stats.relationships_deleted, 1, "{q}");
        assert_eq!(db.count("MATCH (c:City) RETURN count(c)"), 1, "{q}");
        assert_eq!(db.count("MATCH ()-[r]->() RETURN count(r)"), 1, "{q}");
        assert_eq!(db.count("MATCH (n) RETURN count(n)"), 2, "{q}");
    }
    // Still connected when the statement ends: refused, and nothing it did is left.
    let db = Db::new();
    for q in [
        "MATCH (c:City {name: 'Berlin'}) DELETE c",
        "MATCH (c:City {name: 'Berlin'})<-[r]-(p) DELETE c WITH p MATCH (p)-[r2]->() RETURN count(r2)",
        "MATCH (p:Person) DELETE p WITH p MATCH (:City {name: 'Oslo'})<-[r]-() DELETE r",
    ] {
        let e = db.err(q);
        assert_eq!((e.kind, e.detail), (ErrorKind::ConstraintVerificationFailed, "DeleteConnectedNode"), "{q}");
        assert_eq!(db.count("MATCH (n) RETURN count(n)"), 3, "{q}");
        assert_eq!(db.count("MATCH ()-[r]->() RETURN count(r)"), 2, "{q}");
    }
}

#[test]
fn a_key_written_twice_in_a_pattern() {
    let db = Db::new();
    // CREATE and MERGE take the last value, as a map literal does.
    assert_eq!(db.run("CREATE (n:D {a: 1, a: 2}) RETURN n.a"), vec![vec![ResultValue::Int(2)]]);
    assert_eq!(db.run("MERGE (n:E {a: 1, a: 3}) RETURN n.a"), vec![vec![ResultValue::Int(3)]]);
    // MATCH needs every value.
    assert!(db.run("MATCH (n:D {a: 1, a: 2}) RETURN n").is_empty());
    assert_eq!(db.run("MATCH (n:D {a: 2, a: 2}) RETURN n.a"), vec![vec![ResultValue::Int(2)]]);
    assert!(db.run("MATCH (n:Person {name: 'Ann', name: 'Bob'}) RETURN n").is_empty());
}

#[test]
fn counters_count_what_changed() {
    let db = Db::new();
    let stats = db.stats("CREATE (n:A:B:A)");
    assert_eq!((stats.nodes_created, stats.labels_added), (1, 2));
    assert_eq!(db.stats("MATCH (n:Person) SET n.missing = null").properties_set, 0);
    assert_eq!(db.stats("CREATE (n:S) SET n.a = null").properties_set, 0);
    assert_eq!(db.stats("MATCH (n:Person) SET n.name = null").properties_set, 1);
}

#[test]
fn inputs_neo4j_refuses_or_reads_differently() {
    let db = Db::new();
    for q in ["MATCH (n:Person) SET n.`` = 1", "MATCH (n:Person) SET n:``", "MATCH (n:``) RETURN n", "RETURN 017"] {
        assert_eq!(db.err(q).kind, ErrorKind::SyntaxError, "{q}");
    }
    assert_eq!(db.err("RETURN round(7, -1)").kind, ErrorKind::ArgumentError);
    let e = db.err("MERGE (n:T {k: 0.0 / 0.0})");
    assert_eq!(e.kind, ErrorKind::SemanticError, "{e}");
    assert_eq!(db.count("MATCH (n:T) RETURN count(n)"), 0);
    assert!(db.run("DELETE null").is_empty());
    let e = db.err("MATCH (n:Person) DETACH DELETE n RETURN keys(n)");
    assert_eq!(e.kind, ErrorKind::EntityNotFound, "{e}");
    let rows = db.run("WITH date('2020-03-01') AS d RETURN d['year'], d['month']");
    assert_eq!(rows, vec![vec![ResultValue::Int(2020), ResultValue::Int(3)]]);
    let rows = db.run("UNWIND [] AS x RETURN stDev(x), stDevP(x)");
    assert_eq!(rows, vec![vec![ResultValue::Null, ResultValue::Null]]);
}
