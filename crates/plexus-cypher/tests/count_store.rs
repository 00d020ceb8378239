//! Bare counts of nodes (all, or of a label) and of relationships (all, or of types) are read from the counts the
//! graph keeps (`NodeCountFromCountStore`, `RelationshipCountFromCountStore` in plans). Each is compared with the
//! same count taken row by row (a projection in between keeps the rewrite away), on random graphs, in a snapshot
//! and inside a write transaction holding its own creations and deletions.

use plexus_cypher::{Engine, Params, ResultValue};
use plexus_storage::{Store, WriteTxn};
use proptest::prelude::*;

/// (read from the counts, counted row by row).
const COUNTS: &[(&str, &str)] = &[
    ("MATCH (n) RETURN count(n) AS c", "MATCH (n) WITH n, 0 AS z RETURN count(n) AS c"),
    ("MATCH (n) RETURN count(*) AS c", "MATCH (n) WITH n, 0 AS z RETURN count(*) AS c"),
    ("MATCH (n:A) RETURN count(n) AS c", "MATCH (n:A) WITH n, 0 AS z RETURN count(n) AS c"),
    ("MATCH (n:Missing) RETURN count(*) AS c", "MATCH (n:Missing) WITH n, 0 AS z RETURN count(*) AS c"),
    ("MATCH ()-[r]->() RETURN count(r) AS c", "MATCH (a)-[r]->(b) WITH r, 0 AS z RETURN count(r) AS c"),
    ("MATCH (a)<-[r]-(b) RETURN count(*) AS c", "MATCH (a)<-[r]-(b) WITH r, 0 AS z RETURN count(*) AS c"),
    ("MATCH (a)-[r]->(b) RETURN count(b) AS c", "MATCH (a)-[r]->(b) WITH b, 0 AS z RETURN count(b) AS c"),
    ("MATCH ()-[r:R]->() RETURN count(r) AS c", "MATCH (a)-[r:R]->(b) WITH r, 0 AS z RETURN count(r) AS c"),
    ("MATCH ()<-[r:S]-() RETURN count(*) AS c", "MATCH (a)<-[r:S]-(b) WITH r, 0 AS z RETURN count(*) AS c"),
    ("MATCH ()-[r:R|S|R]->() RETURN count(r) AS c", "MATCH (a)-[r:R|S]->(b) WITH r, 0 AS z RETURN count(r) AS c"),
    ("MATCH ()-[r:R|Nope]->() RETURN count(r) AS c", "MATCH (a)-[r:R|Nope]->(b) WITH r, 0 AS z RETURN count(r) AS c"),
    ("MATCH ()-[r:Nope]->() RETURN count(r) AS c", "MATCH (a)-[r:Nope]->(b) WITH r, 0 AS z RETURN count(r) AS c"),
    (
        "MATCH (n:B) WITH count(n) AS c RETURN c * 2 AS d",
        "MATCH (n:B) WITH n, 0 AS z WITH count(n) AS c RETURN c * 2 AS d",
    ),
    (
        "UNWIND [1, 2] AS x CALL { MATCH (n:A) RETURN count(n) AS c } RETURN x, c",
        "UNWIND [1, 2] AS x CALL { MATCH (n:A) WITH n, 0 AS z RETURN count(n) AS c } RETURN x, c",
    ),
];

/// Counts that look alike but are not what the graph keeps: they must be counted, and still agree.
const NOT_FROM_COUNTS: &[&str] = &[
    "MATCH (n:A:B) RETURN count(n) AS c",
    "MATCH ()-[r:R]-() RETURN count(r) AS c",
    "MATCH ()-[r]-() RETURN count(r) AS c",
    "MATCH (a)-[r]->(a) RETURN count(r) AS c",
    "MATCH (a)-[r]->(b:A) RETURN count(r) AS c",
    "MATCH (a:A)-[r]->(b) RETURN count(r) AS c",
    "MATCH (n) RETURN count(DISTINCT n) AS c",
    "MATCH (n) RETURN count(n.w) AS c",
    "MATCH (n) RETURN n.w AS w, count(n) AS c",
    "MATCH (a)-[r]->(b) RETURN count(DISTINCT a) AS c",
];

#[derive(Debug, Clone)]
struct Graph {
    /// Per node: no label, A, B or both.
    nodes: Vec<u8>,
    /// (source, target, type S rather than R)
    rels: Vec<(usize, usize, bool)>,
}

fn graph() -> impl Strategy<Value = Graph> {
    proptest::collection::vec(0u8..4, 0..12).prop_flat_map(|nodes| {
        let n = nodes.len().max(1);
        let rels = proptest::collection::vec((0..n, 0..n, any::<bool>()), 0..30);
        (Just(nodes), rels)
            .prop_map(|(nodes, rels)| Graph { rels: if nodes.is_empty() { Vec::new() } else { rels }, nodes })
    })
}

fn load(g: &Graph) -> (Store, Engine) {
    let (store, engine) = (Store::in_memory(), Engine::new());
    if g.nodes.is_empty() {
        return (store, engine);
    }
    let mut text = String::from("CREATE ");
    for (i, label) in g.nodes.iter().enumerate() {
        let label = ["", ":A", ":B", ":A:B"][*label as usize];
        text += &format!("{}(n{i}{label} {{w: {i}}})", if i > 0 { ", " } else { "" });
    }
    for (s, t, is_s) in &g.rels {
        text += &format!(", (n{s})-[:{}]->(n{t})", if *is_s { "S" } else { "R" });
    }
    engine.execute(&store, &text, &Params::new()).expect("load");
    (store, engine)
}

fn rows(result: plexus_cypher::QueryResult) -> Vec<String> {
    let mut rows: Vec<String> = result.rows.iter().map(|row| format!("{:?}", row as &Vec<ResultValue>)).collect();
    rows.sort();
    rows
}

fn in_snapshot(engine: &Engine, store: &Store, q: &str) -> Vec<String> {
    rows(engine.execute(store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e:?}")))
}

fn in_tx(engine: &Engine, tx: &mut WriteTxn, q: &str) -> Vec<String> {
    rows(engine.execute_in(tx, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e:?}")))
}

/// Every pair agrees, and the other counts agree with themselves counted row by row.
fn all_agree(run: &mut dyn FnMut(&str) -> Vec<String>) -> Result<(), TestCaseError> {
    for (stored, counted) in COUNTS {
        prop_assert_eq!(run(stored), run(counted), "{} vs {}", stored, counted);
    }
    for q in NOT_FROM_COUNTS {
        let counted = q.replacen(" RETURN", " WITH *, 0 AS z RETURN", 1);
        prop_assert_eq!(run(q), run(&counted), "{} vs {}", q, counted);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn counts_read_from_the_graph_match_counting(g in graph()) {
        let (store, engine) = load(&g);
        all_agree(&mut |q| in_snapshot(&engine, &store, q))?;
        // A transaction's own changes count in it, and only in it.
        let mut tx = store.write();
        in_tx(&engine, &mut tx, "CREATE (:A)-[:R]->(:B), (:A:B)-[:S]->(:A)");
        all_agree(&mut |q| in_tx(&engine, &mut tx, q))?;
        in_tx(&engine, &mut tx, "MATCH (n:B) DETACH DELETE n");
        all_agree(&mut |q| in_tx(&engine, &mut tx, q))?;
        in_tx(&engine, &mut tx, "MATCH ()-[r:S]->() DELETE r");
        all_agree(&mut |q| in_tx(&engine, &mut tx, q))?;
        drop(tx);
        all_agree(&mut |q| in_snapshot(&engine, &store, q))?;
    }
}

#[test]
fn plans_read_the_counts_only_where_they_answer() {
    let engine = Engine::new();
    for (stored, counted) in COUNTS {
        let plan = engine.explain(stored).expect("explain");
        assert!(plan.contains("CountFromCountStore"), "{stored}\n{plan}");
        let plan = engine.explain(counted).expect("explain");
        assert!(!plan.contains("CountFromCountStore"), "{counted}\n{plan}");
    }
    for q in NOT_FROM_COUNTS {
        let plan = engine.explain(q).expect("explain");
        assert!(!plan.contains("CountFromCountStore"), "{q}\n{plan}");
    }
    let plan = engine.explain("MATCH (n:Person) RETURN count(*) AS c").expect("explain");
    assert!(plan.contains("NodeCountFromCountStore(:Person)"), "{plan}");
    let plan = engine.explain("MATCH ()-[r]->() RETURN count(r)").expect("explain");
    assert!(plan.contains("RelationshipCountFromCountStore"), "{plan}");
    let plan = engine.explain("MATCH ()-[r:KNOWS|LIKES|KNOWS]->() RETURN count(r)").expect("explain");
    assert!(plan.contains("RelationshipCountFromCountStore([:KNOWS|LIKES])"), "{plan}");
}
