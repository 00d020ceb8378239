//! Two transactions that MERGE the same relationship between existing nodes, side by side: each finds none in its
//! snapshot, so without a conflict both would create one. The later commit must fail with a retryable conflict,
//! and retried, it finds the first one's relationship instead of creating another.

use plexus::{Database, Params};

fn count(db: &Database, query: &str) -> i64 {
    let result = db.execute(query, &Params::new()).expect("the count runs");
    match result.rows[0][0] {
        plexus::cypher::ResultValue::Int(n) => n,
        ref other => panic!("a count, got {other:?}"),
    }
}

fn merged_side_by_side(first: &str, second: &str) {
    let db = Database::in_memory();
    db.execute("CREATE (:A {k: 1}), (:B {k: 2})", &Params::new()).unwrap();
    let mut one = db.write();
    let mut two = db.write();
    db.execute_in(&mut one, first, &Params::new()).unwrap();
    db.execute_in(&mut two, second, &Params::new()).unwrap();
    one.commit().expect("the first merge commits");
    let err = two.commit().expect_err("the second merge conflicts with the first");
    assert!(err.is_retryable(), "{err}");
    let mut retry = db.write();
    db.execute_in(&mut retry, second, &Params::new()).unwrap();
    retry.commit().unwrap();
    assert_eq!(count(&db, "MATCH (:A)-[r:T]-(:B) RETURN count(r)"), 1, "{first} / {second}");
}

#[test]
fn concurrent_merges_of_one_relationship_conflict() {
    let directed = "MATCH (a:A), (b:B) MERGE (a)-[:T]->(b)";
    merged_side_by_side(directed, directed);
    merged_side_by_side(directed, "MATCH (a:A), (b:B) MERGE (b)-[:T]-(a)");
    merged_side_by_side("MATCH (a:A), (b:B) MERGE (a)-[:T]-(b)", "MATCH (a:A), (b:B) MERGE (b)<-[:T]-(a)");
}

#[test]
fn merges_of_different_relationships_do_not_conflict() {
    let db = Database::in_memory();
    db.execute("CREATE (:A {k: 1}), (:B {k: 2}), (:C {k: 3})", &Params::new()).unwrap();
    let mut one = db.write();
    let mut two = db.write();
    db.execute_in(&mut one, "MATCH (a:A), (b:B) MERGE (a)-[:T]->(b)", &Params::new()).unwrap();
    db.execute_in(&mut two, "MATCH (a:A), (c:C) MERGE (a)-[:T]->(c)", &Params::new()).unwrap();
    one.commit().unwrap();
    two.commit().expect("other endpoints: no conflict");
    assert_eq!(count(&db, "MATCH ()-[r:T]->() RETURN count(r)"), 2);
}
