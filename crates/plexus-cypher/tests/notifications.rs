//! The notifications a statement earns, in Neo4j's words: names the database does not have, disconnected
//! patterns, the deprecated `id()`.

use plexus_cypher::notices::Severity;
use plexus_cypher::{Engine, Params};
use plexus_storage::Store;

fn codes(store: &Store, engine: &Engine, q: &str) -> Vec<(String, usize, usize)> {
    let result = engine.execute(store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}"));
    result
        .notifications
        .iter()
        .map(|n| (n.code.rsplit('.').next().unwrap().to_string(), n.position.line, n.position.column))
        .collect()
}

#[test]
fn names_the_database_lacks_are_told_until_they_exist() {
    let (store, engine) = (Store::in_memory(), Engine::new());
    engine.execute(&store, "CREATE (:Person {name: 'a'})-[:KNOWS]->(:Person)", &Params::new()).unwrap();
    assert!(codes(&store, &engine, "MATCH (p:Person)-[:KNOWS]->(q) RETURN p.name").is_empty());
    let q = "MATCH (p:Persn)-[:KNOWZ]->(q)\nWHERE q.nme = 1 RETURN p";
    assert_eq!(
        codes(&store, &engine, q),
        vec![
            ("UnknownLabelWarning".to_string(), 1, 10),
            ("UnknownRelationshipTypeWarning".to_string(), 1, 19),
            ("UnknownPropertyKeyWarning".to_string(), 2, 9),
        ]
    );
    let result = engine.execute(&store, q, &Params::new()).unwrap();
    let label = &result.notifications[0];
    assert_eq!(label.severity, Severity::Warning);
    assert_eq!(label.category, "UNRECOGNIZED");
    assert!(label.description.ends_with("(the missing label name is: Persn)"), "{}", label.description);
    assert_eq!(label.position.offset, 9);
    // Writes make names: the same (cached) statement is told no more.
    engine.execute(&store, "CREATE (:Persn {nme: 1})-[:KNOWZ]->()", &Params::new()).unwrap();
    assert!(codes(&store, &engine, q).is_empty());
    // Names a write creates are not warned about, nor are EXPLAIN's different.
    assert!(codes(&store, &engine, "CREATE (:Brand {new: 1})").is_empty());
    assert_eq!(codes(&store, &engine, "EXPLAIN MATCH (n:Nope) RETURN n"), vec![("UnknownLabelWarning".into(), 1, 18)]);
}

#[test]
fn disconnected_patterns_and_deprecated_functions() {
    let (store, engine) = (Store::in_memory(), Engine::new());
    engine.execute(&store, "CREATE (:X {i: 1})-[:R]->(:X {i: 2})", &Params::new()).unwrap();
    assert_eq!(codes(&store, &engine, "MATCH (a:X), (b:X) RETURN count(*)"), vec![("CartesianProduct".into(), 1, 1)]);
    let result = engine.execute(&store, "MATCH (a:X), (b:X) RETURN count(*)", &Params::new()).unwrap();
    assert_eq!(result.notifications[0].severity, Severity::Information);
    assert!(result.notifications[0].description.ends_with("(identifier is: (b))"));
    for connected in [
        "MATCH (a:X)-[:R]->(b), (b)<-[:R]-(c) RETURN count(*)",
        "MATCH (a:X) MATCH (b:X) RETURN count(*)",
        "MATCH (a:X) WITH a MATCH (a)-[:R]->(b), (a)-[:R]->(c) RETURN count(*)",
    ] {
        assert!(codes(&store, &engine, connected).is_empty(), "{connected}");
    }
    let found = codes(&store, &engine, "MATCH (a:X) WITH a MATCH (a)-[:R]->(b), (c:X) RETURN count(*)");
    assert_eq!(found, vec![("CartesianProduct".into(), 1, 20)]);
    let found = codes(&store, &engine, "MATCH (a:X) RETURN id(a) LIMIT 1");
    assert_eq!(found, vec![("FeatureDeprecationWarning".into(), 1, 20)]);
}

/// `CREATE TEXT INDEX` and `CREATE POINT INDEX` make range indexes, and say so.
#[test]
fn text_and_point_indexes_say_they_are_range_indexes() {
    let (store, engine) = (Store::in_memory(), Engine::new());
    for q in ["CREATE TEXT INDEX t FOR (n:P) ON (n.email)", "CREATE POINT INDEX IF NOT EXISTS FOR (n:P) ON (n.at)"] {
        assert_eq!(codes(&store, &engine, q), vec![("RangeIndexInstead".to_string(), 1, 1)], "{q}");
    }
    assert!(codes(&store, &engine, "CREATE RANGE INDEX FOR (n:P) ON (n.name)").is_empty());
    let listed = engine.execute(&store, "SHOW INDEXES YIELD name, type WHERE name = 't'", &Params::new()).unwrap();
    assert_eq!(format!("{:?}", listed.rows), r#"[[String("t"), String("RANGE")]]"#);
}
