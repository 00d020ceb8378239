//! Where patterns start: the rarest label of the graph a statement runs on (its counts recorded in the cached
//! plan, which is made again when they change a lot), and the node whose properties are given when there are no
//! labels.

use plexus_cypher::{Engine, Params, ResultValue};
use plexus_storage::Store;

/// A pattern starts at its rarest label, and a node of several labels is scanned by its rarest one; a cached
/// plan follows the graph when the counts it was made on change a lot.
#[test]
fn patterns_start_at_the_rarest_label_of_the_graph_they_run_on() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let params = Params::new();
    let scanned = |query: &str| {
        let plan = engine.execute(&store, &format!("EXPLAIN {query}"), &params).unwrap().plan.unwrap();
        let scan = plan.lines().rev().find(|l| l.contains("NodeByLabelScan")).expect("a label scan").to_string();
        scan.split("(:").nth(1).unwrap().split(')').next().unwrap().to_string()
    };
    let count = |query: &str| match engine.execute(&store, query, &params).unwrap().rows.as_slice() {
        [row] => row[0].clone(),
        rows => panic!("{rows:?}"),
    };
    let pair = "MATCH (a:Many)-[:R]->(b:Few) RETURN count(*) AS n";
    let both = "MATCH (n:Many:Few) RETURN count(*) AS n";
    // Planned on an empty graph: no label is rarer, the first is taken.
    assert_eq!(scanned(pair), "Many");
    assert_eq!(count(pair), ResultValue::Int(0));
    engine.execute(&store, "UNWIND range(1, 500) AS i CREATE (:Many)", &params).unwrap();
    engine.execute(&store, "UNWIND range(1, 3) AS i CREATE (:Many)-[:R]->(:Few:Many)", &params).unwrap();
    assert_eq!(scanned(pair), "Few");
    assert_eq!(count(pair), ResultValue::Int(3));
    assert_eq!(scanned(both), "Few");
    assert_eq!(count(both), ResultValue::Int(3));
    // Explicit transactions and snapshots plan on what they see too.
    let snapshot = store.read();
    let read = engine.execute_read(&snapshot, pair, &params).unwrap();
    assert_eq!(read.rows, vec![vec![ResultValue::Int(3)]]);
    engine.execute(&store, "UNWIND range(1, 2000) AS i CREATE (:Few)", &params).unwrap();
    assert_eq!(scanned(pair), "Many");
    assert_eq!(count(pair), ResultValue::Int(3));
}

/// Without labels, the node whose properties are given is where the pattern starts: the scan is filtered
/// before any expansion, instead of expanding every path from every node.
#[test]
fn unlabelled_patterns_start_at_the_node_with_properties() {
    let engine = Engine::new();
    for query in [
        "MATCH (a)-[*]-(b)-[:R]->(c {id: 3}) RETURN count(*)",
        "MATCH (a)-[*]-(b)-[:R]->(c) WHERE c.id = 3 RETURN count(*)",
    ] {
        let plan = engine.explain(query).unwrap();
        let lines: Vec<&str> = plan.lines().collect();
        let scan = lines.iter().position(|l| l.starts_with("+AllNodesScan")).expect("a scan");
        assert_eq!(lines[scan - 1], "+Filter", "{query}:\n{plan}");
    }
}
