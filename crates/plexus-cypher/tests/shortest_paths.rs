//! `shortestPath` and `allShortestPaths` with a `WHERE` on the path: the answer is the shortest of the paths that
//! pass, not the shortest path if it happens to pass. Each case is checked against every path of the same
//! pattern enumerated by a variable-length MATCH with the same `WHERE`, keeping the shortest. The selectors
//! `SHORTEST k` and `SHORTEST k GROUPS` are checked against the same enumeration.

use plexus_cypher::{Engine, Params, ResultValue, Value};
use plexus_storage::Store;
use proptest::prelude::*;

/// `WHERE` conditions on a path `p` (`$t` is a small integer). The first five become conditions on each
/// relationship (on its ends, for those over nodes), checked during the search; the others are checked on whole
/// paths.
const PREDICATES: &[&str] = &[
    "all(r IN relationships(p) WHERE r.k < $t)",
    "none(x IN relationships(p) WHERE x.k = $t)",
    "all(n IN nodes(p) WHERE n.i <> $t)",
    "none(x IN nodes(p) WHERE x.i = $t + 2) AND all(r IN relationships(p) WHERE r.k IS NULL OR r.k < 2)",
    "none(x IN nodes(p) WHERE x.missing = $t)",
    "length(p) >= $t",
    "reduce(s = 0, r IN relationships(p) | s + coalesce(r.k, 1)) >= $t",
    "any(n IN nodes(p) WHERE n.i = $t) AND all(r IN relationships(p) WHERE type(r) = 'R' OR r.k > 0)",
    "true",
];

const PATTERNS: &[&str] = &["(a)-[*]->(b)", "(a)-[*]-(b)", "(a)<-[:R*]-(b)", "(a)-[*..3]->(b)", "(a)-[*{k: 1}]-(b)"];

#[derive(Debug, Clone)]
struct Graph {
    nodes: usize,
    /// (source, target, type S rather than R, property k)
    rels: Vec<(usize, usize, bool, Option<i64>)>,
}

fn graph() -> impl Strategy<Value = Graph> {
    (2usize..7).prop_flat_map(|n| {
        let rels = proptest::collection::vec((0..n, 0..n, any::<bool>(), proptest::option::of(0i64..3)), 0..11);
        rels.prop_map(move |rels| Graph { nodes: n, rels })
    })
}

fn load(g: &Graph) -> (Store, Engine) {
    let store = Store::in_memory();
    let engine = Engine::new();
    let mut text = String::from("CREATE ");
    for i in 0..g.nodes {
        text += &format!("{}(n{i}:N {{i: {i}}})", if i > 0 { ", " } else { "" });
    }
    for (s, t, is_s, k) in &g.rels {
        let k = k.map_or(String::new(), |k| format!(" {{k: {k}}}"));
        text += &format!(", (n{s})-[:{}{k}]->(n{t})", if *is_s { "S" } else { "R" });
    }
    engine.execute(&store, &text, &Params::new()).expect("load");
    (store, engine)
}

/// Each row's relationship ids, in path order.
fn paths(engine: &Engine, store: &Store, q: &str, x: i64, y: i64, t: i64) -> Vec<Vec<i64>> {
    let params: Params =
        [("x", x), ("y", y), ("t", t)].into_iter().map(|(k, v)| (k.to_string(), Value::Int(v))).collect();
    let rows = engine.execute(store, q, &params).unwrap_or_else(|e| panic!("{q}: {e}")).rows;
    rows.iter()
        .map(|row| match &row[0] {
            ResultValue::List(ids) => ids
                .iter()
                .map(|v| match v {
                    ResultValue::Int(i) => *i,
                    other => panic!("{other:?}"),
                })
                .collect(),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn check(g: &Graph, x: i64, y: i64, t: i64) -> Result<(), TestCaseError> {
    let (store, engine) = load(g);
    for pattern in PATTERNS {
        for predicate in PREDICATES {
            let ends = "MATCH (a:N {i: $x}), (b:N {i: $y})";
            let ids = "RETURN [r IN relationships(p) | id(r)] AS ids";
            let every = paths(&engine, &store, &format!("{ends} MATCH p = {pattern} WHERE {predicate} {ids}"), x, y, t);
            let shortest_len = every.iter().map(Vec::len).min();
            let mut expected: Vec<Vec<i64>> = every.iter().filter(|p| Some(p.len()) == shortest_len).cloned().collect();
            expected.sort();

            let q = format!("{ends} MATCH p = allShortestPaths({pattern}) WHERE {predicate} {ids}");
            let mut all = paths(&engine, &store, &q, x, y, t);
            all.sort();
            prop_assert_eq!(&all, &expected, "{}", q);

            let q = format!("{ends} MATCH p = shortestPath({pattern}) WHERE {predicate} {ids}");
            let one = paths(&engine, &store, &q, x, y, t);
            prop_assert!(one.len() == usize::from(!expected.is_empty()), "{}: {:?}", q, one);
            if let Some(p) = one.first() {
                prop_assert!(expected.contains(p), "{}: {:?} not among {:?}", q, p, expected);
            }
            if *predicate == "true" {
                check_selectors(&engine, &store, pattern, &every, (x, y, t))?;
            }
        }
    }
    Ok(())
}

/// `SHORTEST k` and `SHORTEST k GROUPS` against every path of the pattern (`every`): the first are `k` of the
/// shortest ones (as many as there are), the second every path of the `k` shortest lengths.
fn check_selectors(
    engine: &Engine,
    store: &Store,
    pattern: &str,
    every: &[Vec<i64>],
    (x, y, t): (i64, i64, i64),
) -> Result<(), TestCaseError> {
    let ends = "MATCH (a:N {i: $x}), (b:N {i: $y})";
    let ids = "RETURN [r IN relationships(p) | id(r)] AS ids";
    let mut lengths: Vec<usize> = every.iter().map(Vec::len).collect();
    lengths.sort_unstable();
    let mut distinct = lengths.clone();
    distinct.dedup();
    for k in 1..=3usize {
        let q = format!("{ends} MATCH p = SHORTEST {k} {pattern} {ids}");
        let found = paths(engine, store, &q, x, y, t);
        let mut found_lengths: Vec<usize> = found.iter().map(Vec::len).collect();
        found_lengths.sort_unstable();
        prop_assert_eq!(&found_lengths[..], &lengths[..k.min(lengths.len())], "{}", q);
        let mut unique = found.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), found.len(), "{}: a path twice", q);
        prop_assert!(found.iter().all(|p| every.contains(p)), "{}: {:?}", q, found);

        let q = format!("{ends} MATCH p = SHORTEST {k} GROUPS {pattern} {ids}");
        let mut groups = paths(engine, store, &q, x, y, t);
        groups.sort();
        let mut expected: Vec<Vec<i64>> =
            every.iter().filter(|p| distinct.iter().take(k).any(|&l| l == p.len())).cloned().collect();
        expected.sort();
        prop_assert_eq!(&groups, &expected, "{}", q);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn shortest_paths_passing_a_where_are_the_shortest_of_those_that_pass(
        g in graph(), x in 0i64..7, y in 0i64..7, t in 0i64..4,
    ) {
        prop_assume!(x != y && (x as usize) < g.nodes && (y as usize) < g.nodes);
        check(&g, x, y, t)?;
    }
}

/// The case that used to return nothing: the shortest path fails the `WHERE`, a longer one passes.
#[test]
fn a_longer_path_that_passes_is_found_when_the_shortest_fails() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows;
    run("CREATE (a:N {id: 1})-[:R {w: 1}]->(b:N {id: 2})-[:R {w: 1}]->(c:N {id: 3}), (a)-[:R {w: 5}]->(c)");
    let ends = "MATCH (a:N {id: 1}), (c:N {id: 3})";
    for (q, len) in [
        ("MATCH p = shortestPath((a)-[*]->(c)) RETURN length(p)", 1),
        ("MATCH p = shortestPath((a)-[*]->(c)) WHERE all(r IN relationships(p) WHERE r.w < 3) RETURN length(p)", 2),
        ("MATCH p = shortestPath((a)-[rs*]->(c)) WHERE none(r IN rs WHERE r.w > 3) RETURN length(p)", 2),
        ("MATCH p = shortestPath((a)-[*]->(c)) WHERE length(p) > 1 RETURN length(p)", 2),
        ("MATCH p = shortestPath((a)-[*{w: 1}]->(c)) RETURN length(p)", 2),
    ] {
        let q = format!("{ends} {q}");
        assert_eq!(run(&q), vec![vec![ResultValue::Int(len)]], "{q}");
    }
    let q = format!("{ends} MATCH p = shortestPath((a)-[*]->(c)) WHERE length(p) > 2 RETURN p");
    assert!(run(&q).is_empty(), "{q}");
    let plan = engine.explain(&format!("{ends} MATCH p = shortestPath((a)-[*]->(c)) WHERE length(p) > 1 RETURN p"));
    assert!(plan.expect("explain").contains("of the paths passing the WHERE"));
}

/// A condition on every node of the path steers the search: with the start node failing it there is no path,
/// found at once. Checked on whole paths, the search tried every path of each length first, which on this graph of
/// ten nodes and 25 relationships took minutes.
#[test]
fn a_condition_on_every_node_steers_the_search() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}"));
    run("UNWIND range(0, 9) AS i CREATE (:N {id: i})");
    run("MATCH (a:N), (b:N) WHERE a.id < b.id AND (a.id + b.id) % 2 = 1 CREATE (a)-[:R]->(b)");
    run("MATCH (n {id: 0}) SET n:A");
    let q = "MATCH (a {id: 0}), (b {id: 1}) MATCH p = shortestPath((a)-[*]-(b)) WHERE none(x IN nodes(p) WHERE x:A) \
             RETURN length(p)";
    let plan = run(&format!("EXPLAIN {q}")).plan.expect("a plan");
    assert!(!plan.contains("passing the WHERE"), "{plan}");
    assert!(run(q).rows.is_empty());
    let q =
        "MATCH (a {id: 1}), (b {id: 3}) MATCH p = shortestPath((a)-[*]-(b)) WHERE all(x IN nodes(p) WHERE NOT x:A) \
             RETURN length(p), nodes(p)[1].id <> 0";
    assert_eq!(run(q).rows, vec![vec![ResultValue::Int(2), ResultValue::Bool(true)]]);
}
