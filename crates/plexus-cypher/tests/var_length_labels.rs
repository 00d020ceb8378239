//! A label filter on the end node of a variable-length pattern is checked inside the walk
//! (`VarLengthExpand(... #n:Label)` in plans), before a path becomes a row, and one on the new node of a single
//! hop inside the hop (`ExpandAll(... #n:Label)`). Each query is compared with the same query whose label test
//! waits behind a projection (where it stays a filter), on random graphs, in a snapshot and inside a write
//! transaction holding its own changes.

use plexus_cypher::{Engine, Params, ResultValue};
use plexus_storage::{Store, WriteTxn};
use proptest::prelude::*;

/// (label checked in the walk, label checked after a projection).
const PAIRS: &[(&str, &str)] = &[
    (
        "MATCH (a) WITH a MATCH (a)-[:R*0..3]->(b:A) RETURN id(a), id(b)",
        "MATCH (a) WITH a MATCH (a)-[:R*0..3]->(b) WITH a, b, 0 AS z WHERE b:A RETURN id(a), id(b)",
    ),
    (
        "MATCH (a:B) WITH a MATCH (a)-[*1..3]->(b:A:B) RETURN id(a), id(b)",
        "MATCH (a:B) WITH a MATCH (a)-[*1..3]->(b) WITH a, b, 0 AS z WHERE b:A:B RETURN id(a), id(b)",
    ),
    (
        "MATCH (a) WITH a MATCH p = (a)<-[:S*2..3]-(b:B) RETURN [n IN nodes(p) | id(n)]",
        "MATCH (a) WITH a MATCH p = (a)<-[:S*2..3]-(b) WITH p, b, 0 AS z WHERE b:B RETURN [n IN nodes(p) | id(n)]",
    ),
    (
        "MATCH (a) WITH a MATCH (a)-[rs:R|S*..2]-(b:A) RETURN id(a), [r IN rs | id(r)], id(b)",
        "MATCH (a) WITH a MATCH (a)-[rs:R|S*..2]-(b) WITH a, rs, b, 0 AS z WHERE b:A \
         RETURN id(a), [r IN rs | id(r)], id(b)",
    ),
    (
        "MATCH (a) WITH a MATCH (a)-[:R*0..2]->(b:Missing) RETURN count(*)",
        "MATCH (a) WITH a MATCH (a)-[:R*0..2]->(b) WITH b, 0 AS z WHERE b:Missing RETURN count(*)",
    ),
];

/// (label checked in the hop, label checked after a projection).
const HOP_PAIRS: &[(&str, &str)] = &[
    (
        "MATCH (a) WITH a MATCH (a)-[:R]->(b:A) RETURN id(a), id(b)",
        "MATCH (a) WITH a MATCH (a)-[:R]->(b) WITH a, b, 0 AS z WHERE b:A RETURN id(a), id(b)",
    ),
    (
        "MATCH (a:B) WITH a MATCH (a)<-[r]-(b:A:B) RETURN id(a), id(r), id(b)",
        "MATCH (a:B) WITH a MATCH (a)<-[r]-(b) WITH a, r, b, 0 AS z WHERE b:A:B RETURN id(a), id(r), id(b)",
    ),
    (
        "MATCH (a) WITH a MATCH (a)-[:R|S]-(b:B) RETURN id(a), id(b)",
        "MATCH (a) WITH a MATCH (a)-[:R|S]-(b) WITH a, b, 0 AS z WHERE b:B RETURN id(a), id(b)",
    ),
    (
        "MATCH (a) WITH a MATCH (a)-[:R]->(b:Missing) RETURN id(a), id(b)",
        "MATCH (a) WITH a MATCH (a)-[:R]->(b) WITH a, b, 0 AS z WHERE b:Missing RETURN id(a), id(b)",
    ),
    // The middle node of a two-hop pattern (the recommendation's `(:Item)`), the second hop lent each match.
    (
        "MATCH (a) WITH a MATCH (a)-[:R]->(:A)<-[:R]-(c) WHERE a <> c RETURN id(a), id(c)",
        "MATCH (a) WITH a MATCH (a)-[:R]->(m) WITH a, m, 0 AS z WHERE m:A MATCH (m)<-[:R]-(c) WHERE a <> c \
         RETURN id(a), id(c)",
    ),
    (
        "MATCH (a:A) WITH a MATCH (a)-[:R]->(m:B) WITH a, m ORDER BY id(m) DESC, id(a) LIMIT 3 \
         RETURN id(a), id(m)",
        "MATCH (a:A) WITH a MATCH (a)-[:R]->(m) WITH a, m, 0 AS z WHERE m:B \
         WITH a, m ORDER BY id(m) DESC, id(a) LIMIT 3 RETURN id(a), id(m)",
    ),
];

#[derive(Debug, Clone)]
struct Graph {
    /// Per node: no label, A, B or both.
    nodes: Vec<u8>,
    /// (source, target, type S rather than R)
    rels: Vec<(usize, usize, bool)>,
}

fn graph() -> impl Strategy<Value = Graph> {
    proptest::collection::vec(0u8..4, 1..10).prop_flat_map(|nodes| {
        let n = nodes.len();
        let rels = proptest::collection::vec((0..n, 0..n, any::<bool>()), 0..20);
        (Just(nodes), rels).prop_map(|(nodes, rels)| Graph { nodes, rels })
    })
}

fn load(g: &Graph) -> (Store, Engine) {
    let (store, engine) = (Store::in_memory(), Engine::new());
    let mut text = String::from("CREATE ");
    for (i, label) in g.nodes.iter().enumerate() {
        let label = ["", ":A", ":B", ":A:B"][*label as usize];
        text += &format!("{}(n{i}{label})", if i > 0 { ", " } else { "" });
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

fn all_agree(run: &mut dyn FnMut(&str) -> Vec<String>) -> Result<(), TestCaseError> {
    for (walked, filtered) in PAIRS.iter().chain(HOP_PAIRS) {
        prop_assert_eq!(run(walked), run(filtered), "{} vs {}", walked, filtered);
    }
    // In an OPTIONAL MATCH the WHERE belongs to the pattern: a node without such a path keeps one null row.
    for (walked, filtered) in [
        (
            "MATCH (a:A) OPTIONAL MATCH (a)-[:R*1..3]->(b:B) RETURN id(a), id(b)",
            "MATCH (a:A) OPTIONAL MATCH (a)-[:R*1..3]->(b) WHERE b:B RETURN id(a), id(b)",
        ),
        (
            "MATCH (a:A) OPTIONAL MATCH (a)-[:R]->(b:B) RETURN id(a), id(b)",
            "MATCH (a:A) OPTIONAL MATCH (a)-[:R]->(b) WHERE b:B RETURN id(a), id(b)",
        ),
    ] {
        prop_assert_eq!(run(walked), run(filtered), "{} vs {}", walked, filtered);
    }
    Ok(())
}

fn in_tx(engine: &Engine, tx: &mut WriteTxn, q: &str) -> Vec<String> {
    rows(engine.execute_in(tx, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e:?}")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn end_labels_checked_in_the_walk_keep_the_same_rows(g in graph()) {
        let (store, engine) = load(&g);
        all_agree(&mut |q| rows(engine.execute(&store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e:?}"))))?;
        let mut tx = store.write();
        in_tx(&engine, &mut tx, "MATCH (n:A) WITH n LIMIT 1 SET n:B REMOVE n:A CREATE (n)-[:R]->(:A)");
        all_agree(&mut |q| in_tx(&engine, &mut tx, q))?;
    }
}

#[test]
fn plans_check_end_labels_in_the_walk_only_where_the_filter_sits_on_it() {
    let engine = Engine::new();
    for (walked, filtered) in PAIRS {
        let plan = engine.explain(walked).expect("explain");
        let pushed = plan.lines().any(|l| {
            l.contains("VarLengthExpand") && (l.contains(":A)") || l.contains(":B)") || l.contains(":Missing)"))
        });
        assert!(pushed, "{walked}\n{plan}");
        let plan = engine.explain(filtered).expect("explain");
        assert!(!plan.lines().any(|l| l.contains("VarLengthExpand") && l.contains(':')), "{filtered}\n{plan}");
    }
}

#[test]
fn plans_check_a_hop_s_new_node_labels_in_the_hop_only_where_the_filter_sits_on_it() {
    let engine = Engine::new();
    for (in_hop, filtered) in HOP_PAIRS {
        let plan = engine.explain(in_hop).expect("explain");
        let pushed = plan
            .lines()
            .any(|l| l.contains("ExpandAll") && (l.contains(":A)") || l.contains(":B)") || l.contains(":Missing)")));
        assert!(pushed, "{in_hop}\n{plan}");
        let plan = engine.explain(filtered).expect("explain");
        assert!(!plan.lines().any(|l| l.contains("ExpandAll") && l.contains(':')), "{filtered}\n{plan}");
    }
}
