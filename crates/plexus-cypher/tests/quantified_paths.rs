//! Quantified path patterns, `(a) ((x)-[r]->(y) WHERE ...){m,n} (b)` and of several relationships,
//! `(a) ((x)-[:R]->(y)<-[:S]-(z)){m,n} (b)`: each repetition meets the inner node patterns and WHERE, and the
//! inner variables are lists afterwards. Checked against the same question asked with variable-length patterns
//! and list predicates.

use plexus_cypher::{Engine, ErrorKind, Params, ResultValue};
use plexus_storage::Store;
use proptest::prelude::*;

struct Db {
    store: Store,
    engine: Engine,
}

impl Db {
    fn new(setup: &str) -> Db {
        let db = Db { store: Store::in_memory(), engine: Engine::new() };
        if !setup.is_empty() {
            db.engine.execute(&db.store, setup, &Params::new()).unwrap();
        }
        db
    }

    fn rows(&self, q: &str) -> Vec<Vec<ResultValue>> {
        self.engine.execute(&self.store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows
    }

    fn sorted(&self, q: &str) -> Vec<String> {
        let mut rows: Vec<String> = self.rows(q).iter().map(|r| format!("{r:?}")).collect();
        rows.sort();
        rows
    }

    fn err(&self, q: &str) -> plexus_cypher::CypherError {
        self.engine.execute(&self.store, q, &Params::new()).expect_err(q)
    }
}

fn s(x: &str) -> ResultValue {
    ResultValue::String(x.into())
}

fn list(items: &[&str]) -> ResultValue {
    ResultValue::List(items.iter().map(|x| s(x)).collect())
}

const LINE: &str =
    "CREATE (a:Stop {name: 'a'})-[:NEXT {d: 1}]->(b:Stop {name: 'b'})-[:NEXT {d: 5}]->(c:Stop {name: 'c'}) \
                    -[:NEXT {d: 2}]->(d:Stop:End {name: 'd'}), (c)-[:NEXT {d: 1}]->(e:Depot {name: 'e'})";

#[test]
fn group_variables_are_lists_per_repetition() {
    let db = Db::new(LINE);
    let rows = db.rows(
        "MATCH (s {name: 'a'}) ((x)-[r:NEXT]->(y)){2,3} (t) \
         RETURN t.name AS t, [n IN x | n.name] AS xs, [n IN y | n.name] AS ys, [q IN r | q.d] AS ds ORDER BY t",
    );
    let ints = |v: &[i64]| ResultValue::List(v.iter().map(|i| ResultValue::Int(*i)).collect());
    assert_eq!(
        rows,
        vec![
            vec![s("c"), list(&["a", "b"]), list(&["b", "c"]), ints(&[1, 5])],
            vec![s("d"), list(&["a", "b", "c"]), list(&["b", "c", "d"]), ints(&[1, 5, 2])],
            vec![s("e"), list(&["a", "b", "c"]), list(&["b", "c", "e"]), ints(&[1, 5, 1])],
        ]
    );
}

#[test]
fn inner_labels_properties_and_where_hold_for_every_repetition() {
    let db = Db::new(LINE);
    // Every node inside is a Stop: the depot is never reached.
    let q = "MATCH (:Stop {name: 'a'}) ((:Stop)-[:NEXT]->(:Stop))+ (t) RETURN t.name AS t ORDER BY t";
    assert_eq!(db.rows(q), vec![vec![s("b")], vec![s("c")], vec![s("d")]]);
    // The WHERE is per repetition: no hop longer than 3.
    let q = "MATCH (:Stop {name: 'a'}) ((x)-[r]->(y) WHERE r.d <= 3)* (t) RETURN t.name AS t ORDER BY t";
    assert_eq!(db.rows(q), vec![vec![s("a")], vec![s("b")]]);
    // Written right to left, and started from the right (the planner walks against the pattern).
    let q = "MATCH (t) ((x)-[r:NEXT]->(y) WHERE x.name < y.name){1,} (:End) RETURN t.name AS t ORDER BY t";
    assert_eq!(db.rows(q), vec![vec![s("a")], vec![s("b")], vec![s("c")]]);
    let q = "MATCH (:End) ((x)-[:NEXT]-(y:Stop)){2} (t) RETURN t.name AS t, [n IN y | n.name] AS ys";
    assert_eq!(db.rows(q), vec![vec![s("b"), list(&["c", "b"])]]);
    // At the start of a pattern, and followed by a node and a relationship.
    let q = "MATCH ((x:Stop)-[:NEXT]->(y:Stop)){3} ()-[:NEXT]->(z) RETURN z.name AS z";
    assert_eq!(db.rows(q), Vec::<Vec<ResultValue>>::new());
    let q = "MATCH ((x:Stop)-[:NEXT]->(y:Stop)){2} (m)-[:NEXT]->(z) RETURN x[0].name AS x, z.name AS z ORDER BY z";
    assert_eq!(db.rows(q), vec![vec![s("a"), s("d")], vec![s("a"), s("e")]]);
    // Zero repetitions: the two ends are one node, the lists empty.
    let q = "MATCH (a {name: 'c'}) ((x)-->(y))* (b) WHERE size(x) = 0 RETURN b.name AS b, size(x) AS n";
    assert_eq!(db.rows(q), vec![vec![s("c"), ResultValue::Int(0)]]);
}

#[test]
fn group_variables_after_the_match_and_in_its_where() {
    let db = Db::new(LINE);
    let q = "MATCH p = (a {name: 'a'}) ((x)-[r]->(y)){1,3} (b) WHERE size(r) = 2 OR all(n IN y WHERE n:Depot OR n.name = 'b') \
             RETURN b.name AS b, length(p) AS len ORDER BY b";
    assert_eq!(db.rows(q), vec![vec![s("b"), ResultValue::Int(1)], vec![s("c"), ResultValue::Int(2)]]);
    let q =
        "MATCH (a {name: 'a'}) ((x)-[r]->(y)){3} (b) WITH b, x UNWIND x AS n RETURN b.name, count(n) ORDER BY b.name";
    assert_eq!(db.rows(q), vec![vec![s("d"), ResultValue::Int(3)], vec![s("e"), ResultValue::Int(3)]]);
}

#[test]
fn inside_a_quantified_path_other_variables_of_the_match_are_checked_once_bound() {
    let db = Db::new(LINE);
    // Bound by an earlier MATCH: the same answers whichever end the walk starts from.
    let forward = "MATCH (s {name: 'b'}) MATCH (a {name: 'a'}) ((x)-[r]->(y) WHERE y.name >= s.name){1,3} (t) \
                   RETURN t.name AS t ORDER BY t";
    let backward = "MATCH (s {name: 'b'}) MATCH (a {name: 'a'}) ((x)-[r]->(y) WHERE y.name >= s.name){1,3} (t:End) \
                    RETURN t.name AS t ORDER BY t";
    assert_eq!(db.rows(forward), vec![vec![s("b")], vec![s("c")], vec![s("d")], vec![s("e")]]);
    assert_eq!(db.rows(backward), vec![vec![s("d")]]);
    // Bound by the same MATCH, in the WHERE: held by every repetition, checked once the MATCH is bound (as in
    // Neo4j), whichever end the walk starts from.
    let q = "MATCH (a {name: 'a'}) ((x)-[r]->(y) WHERE y.name > a.name AND r.d < t.d2){1,3} (t) \
             RETURN t.name AS t, size(r) AS n ORDER BY t";
    db.rows("MATCH (n) SET n.d2 = CASE n.name WHEN 'c' THEN 6 WHEN 'd' THEN 3 WHEN 'e' THEN 9 END");
    assert_eq!(db.rows(q), vec![vec![s("c"), ResultValue::Int(2)], vec![s("e"), ResultValue::Int(3)]]);
    let q = "MATCH (a) ((x)-[r]->(y) WHERE x.name = a.name AND y.name = t.name){1,3} (t:End) RETURN a.name AS a";
    assert_eq!(db.rows(q), vec![vec![s("c")]]);
    let q = "MATCH (a {name: 'a'}) ((x)-[r]->(y) WHERE t.name = 'b'){0,3} (t) RETURN t.name AS t ORDER BY t";
    assert_eq!(db.rows(q), vec![vec![s("a")], vec![s("b")]], "zero repetitions hold any condition");
    // A path of the MATCH, and the node maps, are still refused, rather than read while not bound yet.
    for q in [
        "MATCH p = (a) ((x)-[r]->(y) WHERE length(p) > 1){1,3} (t) RETURN t",
        "MATCH (a) ((x {name: t.name})-[r]->(y)){1,3} (t) RETURN t",
    ] {
        let e = db.err(q);
        assert_eq!((e.kind, e.detail), (ErrorKind::SyntaxError, "InvalidReference"), "{q}: {e}");
    }
    // The relationship's map may name the repetition's nodes.
    let q = "MATCH (a {name: 'a'}) ((x)-[r:NEXT {d: size(x.name)}]->(y)){1,3} (t) RETURN t.name AS t ORDER BY t";
    assert_eq!(db.rows(q), vec![vec![s("b")]]);
}

#[test]
fn bad_quantified_paths_are_refused_with_their_position() {
    let db = Db::new("");
    let e = db.err("MATCH (a) ((x)-->(y)-[*1..2]->(z)){1,2} (b) RETURN b");
    assert_eq!(e.kind, ErrorKind::SyntaxError);
    assert!(e.message.contains("no variable length"), "{e}");
    assert_eq!(e.position.map(|p| p.column), Some(21));
    let e = db.err("MATCH (a) ((x)-[r]->(y)-[r]->(z)){1,2} (b) RETURN b");
    assert_eq!((e.kind, e.detail), (ErrorKind::SyntaxError, "VariableAlreadyBound"), "{e}");
    let e = db.err("CREATE (a) ((x)-[:R]->(y)-[:S]->(z)){1} (b)");
    assert_eq!(e.detail, "InvalidQuantifiedPath", "{e}");
    assert!(e.message.contains("CREATE"), "{e}");
    let e = db.err("MATCH (a) ((x)-->(y)-[:$('R')]->(z)){1,2} (b) RETURN b");
    assert_eq!(e.kind, ErrorKind::SyntaxError, "{e}");
    let e = db.err("MATCH p = shortestPath((a) ((x)-->(y)-->(z))+ (b)) RETURN p");
    assert_eq!(e.detail, "UnsupportedQuantifiedPath", "{e}");
    // Compile-time semantic errors are SyntaxErrors in openCypher's classification.
    let e = db.err("MATCH (x) MATCH (a) ((x)-->(y)){1,2} (b) RETURN b");
    assert_eq!((e.kind, e.detail), (ErrorKind::SyntaxError, "VariableAlreadyBound"), "{e}");
    let e = db.err("MATCH (a) ((x)-[r]->(y)){1,2} (r) RETURN b");
    assert_eq!(e.kind, ErrorKind::SyntaxError, "{e}");
    let e = db.err("MATCH (a) ((x)-->(y) WHERE x.v > 1) (b) RETURN b");
    assert_eq!(e.kind, ErrorKind::SyntaxError, "{e}");
    let e = db.err("CREATE (a) ((x)-[:R]->(y)){1,2} (b)");
    assert_eq!(e.kind, ErrorKind::SyntaxError, "{e}");
    let e = db.err("MATCH p = shortestPath((a) ((x)-->(y)){1,2} (b)) RETURN p");
    assert_eq!(e.kind, ErrorKind::SyntaxError, "{e}");
    for q in [
        "MATCH (a) ((x)-->(y)){0} (b) RETURN b",
        "MATCH (a) ((x)-->(y)){3,1} (b) RETURN b",
        "MATCH (a)-->{2,1}(b) RETURN b",
        "MATCH (a) ((x)-->(y)){2}-->(b) RETURN b",
    ] {
        assert_eq!(db.err(q).kind, ErrorKind::SyntaxError, "{q}");
    }
    // Extra parentheses around a whole pattern still mean the pattern.
    assert_eq!(db.rows("MATCH ((a)-->(b)) RETURN count(*) AS c"), vec![vec![ResultValue::Int(0)]]);
}

/// A -R-> B -S-> A -R-> B -S-> A, numbered 1 to 5.
const CHAIN: &str = "CREATE (:A {i: 1})-[:R {w: 1}]->(:B {i: 2})-[:S {w: 2}]->(:A {i: 3})-[:R {w: 3}]->(:B {i: 4}) \
                     -[:S {w: 4}]->(:A {i: 5})";

#[test]
fn repetitions_of_several_relationships() {
    let db = Db::new(CHAIN);
    let ints = |v: &[i64]| ResultValue::List(v.iter().map(|i| ResultValue::Int(*i)).collect());
    let int = ResultValue::Int;
    let q = "MATCH (a:A {i: 1}) ((x:A)-[r:R]->(y:B)-[s:S]->(z:A)){1,2} (b) \
             RETURN b.i, [n IN x | n.i], [n IN y | n.i], [n IN z | n.i], [q IN r | q.w], [q IN s | q.w] ORDER BY b.i";
    assert_eq!(
        db.rows(q),
        vec![
            vec![int(3), ints(&[1]), ints(&[2]), ints(&[3]), ints(&[1]), ints(&[2])],
            vec![int(5), ints(&[1, 3]), ints(&[2, 4]), ints(&[3, 5]), ints(&[1, 3]), ints(&[2, 4])],
        ]
    );
    // Against the writing direction, from a bound right end (the walk goes right to left): lists stay in the
    // pattern's order.
    let q = "MATCH (b:A {i: 5}) MATCH (a:A) ((x)-[:R]->(y)-[:S]->(z) WHERE y.i >= 2)+ (b) \
             RETURN a.i, [n IN x | n.i], [n IN z | n.i] ORDER BY a.i";
    assert_eq!(db.rows(q), vec![vec![int(1), ints(&[1, 3]), ints(&[3, 5])], vec![int(3), ints(&[3]), ints(&[5])]]);
    // Mixed directions, a WHERE across the repetition's relationships, a path variable, zero repetitions.
    let q = "MATCH p = (a:A {i: 5}) ((x)<-[s:S]-(y)<-[r:R]-(z) WHERE s.w > r.w)* (b) \
             RETURN b.i, length(p), [n IN nodes(p) | n.i] ORDER BY b.i";
    assert_eq!(
        db.rows(q),
        vec![
            vec![int(1), int(4), ints(&[5, 4, 3, 2, 1])],
            vec![int(3), int(2), ints(&[5, 4, 3])],
            vec![int(5), int(0), ints(&[5])],
        ]
    );
    // Conditions are per repetition: the second one fails (4 is not below 3).
    let q = "MATCH (a:A {i: 1}) ((x)-[r]-(y)-[s]-(z) WHERE y.i < 3){2} (b) RETURN b.i";
    assert!(db.rows(q).is_empty());
    // Relationship types and inner property maps; two patterns side by side; a relationship after one.
    let q = "MATCH (a:A {i: 1}) ((x)-[:R]->(y {i: 2})-[:S]->(z)){1} ((p)-[:R]->(q)-[:S]->(t)){1} (b)-->(c) \
             RETURN b.i, size(x), size(p), c";
    assert!(db.rows(q).is_empty());
    let q = "MATCH (a:A {i: 1}) ((x)-[:R]->(y {i: 2})-[:S]->(z)){1} ((p)-[:R]->(q)-[:S]->(t)){1} (b) \
             RETURN b.i, size(x), size(p)";
    assert_eq!(db.rows(q), vec![vec![int(5), int(1), int(1)]]);
    let q = "MATCH (a:A {i: 1}) ((x)-[:R]->(y)-[:S]->(z)){1} (c)-[:R]->(d) RETURN c.i, d.i";
    assert_eq!(db.rows(q), vec![vec![int(3), int(4)]]);
    let q = "MATCH (a:A {i: 1}) ((x)-[:S]->(y)-[:R]->(z)){1,} (b) RETURN b";
    assert!(db.rows(q).is_empty());
    // In subqueries and under OPTIONAL MATCH.
    let q = "MATCH (a:A {i: 1}) RETURN COUNT { (a) ((x)-[:R]->(y)-[:S]->(z)){1,2} (b) } AS c";
    assert_eq!(db.rows(q), vec![vec![int(2)]]);
    let q = "MATCH (a:A {i: 3}) OPTIONAL MATCH (a) ((x)-[:R]->(y)-[:S]->(z)){2} (b) RETURN a.i, b";
    assert_eq!(db.rows(q), vec![vec![int(3), ResultValue::Null]]);
}

/// A node named twice inside a quantified path pattern is the same node in each repetition, as in Neo4j.
#[test]
fn a_node_named_twice_inside_is_one_node() {
    let db = Db::new(
        "CREATE (a:N {i: 1})-[:R]->(a), (a)-[:S]->(b:N {i: 2}), (b)-[:R]->(c:N {i: 3})-[:S]->(b), (c)-[:R]->(c)",
    );
    let int = ResultValue::Int;
    let q = "MATCH (a) ((x)-[:R]->(x)){1,2} (b) RETURN a.i, b.i, size(x) ORDER BY a.i";
    assert_eq!(db.rows(q), vec![vec![int(1), int(1), int(1)], vec![int(3), int(3), int(1)]]);
    let q = "MATCH (a) ((x)-[:R]->(x)-[:S]->(z)){1,2} (b) RETURN a.i, b.i ORDER BY a.i";
    assert_eq!(db.rows(q), vec![vec![int(1), int(2)], vec![int(3), int(2)]]);
    let q = "MATCH (a) ((x)-[:R]->(y)-[:S]->(x)){1} (b) RETURN a.i, [n IN y | n.i]";
    assert_eq!(db.rows(q), vec![vec![int(2), ResultValue::List(vec![int(3)])]]);
}

#[test]
fn shortest_paths_over_a_quantified_relationship() {
    let db = Db::new(CHAIN);
    let ints = |v: &[i64]| ResultValue::List(v.iter().map(|i| ResultValue::Int(*i)).collect());
    let q = "MATCH p = SHORTEST 1 (a:A {i: 1}) ((x)-[r]-(y) WHERE y.i > x.i)+ (b:A {i: 5}) \
             RETURN length(p), [n IN x | n.i], [n IN y | n.i], size(r)";
    assert_eq!(
        db.rows(q),
        vec![vec![ResultValue::Int(4), ints(&[1, 2, 3, 4]), ints(&[2, 3, 4, 5]), ResultValue::Int(4)]]
    );
    // The condition depends on the way each relationship is walked.
    let q = "MATCH p = SHORTEST 1 (a:A {i: 5}) ((x)-[r]-(y) WHERE y.i > x.i)+ (b:A {i: 1}) RETURN length(p)";
    assert!(db.rows(q).is_empty());
    let q = "MATCH p = ALL SHORTEST (a:A {i: 5}) (()-[:R|S]-()){1,4} (b:A {i: 1}) RETURN length(p)";
    assert_eq!(db.rows(q), vec![vec![ResultValue::Int(4)]]);
    // Repetitions of several relationships, taken whole: the shortest is two repetitions, their variables lists.
    let q = "MATCH p = SHORTEST 1 (a:A {i: 1}) ((x)-[r:R]->(y)-[s:S]->(z))+ (b:A {i: 5}) \
             RETURN length(p), [n IN x | n.i], [n IN z | n.i], size(r)";
    assert_eq!(db.rows(q), vec![vec![ResultValue::Int(4), ints(&[1, 3]), ints(&[3, 5]), ResultValue::Int(2)]]);
    // Against the steps' directions there is none; undirected ones, with a condition per repetition.
    let q = "MATCH p = SHORTEST 1 (a:A {i: 5}) ((x)-[:R]->(y)-[:S]->(z))+ (b:A {i: 1}) RETURN p";
    assert!(db.rows(q).is_empty());
    let q = "MATCH p = ALL SHORTEST (a:A {i: 5}) ((x)-[]-(y)-[]-(z) WHERE z.i < x.i){1,3} (b:A) \
             RETURN b.i, length(p) ORDER BY b.i";
    let int = ResultValue::Int;
    assert_eq!(db.rows(q), vec![vec![int(1), int(4)], vec![int(3), int(2)]]);
    let q = "MATCH p = SHORTEST 2 GROUPS (a:A {i: 1}) ((x)-[]-(y)-[]-(z)){0,} (b:A {i: 1}) RETURN length(p)";
    assert_eq!(db.rows(q), vec![vec![int(0)]], "no trail returns to its start here");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// On random graphs, a quantified path pattern of two relationships finds exactly the paths a
    /// variable-length pattern finds when its shape and conditions are written as list predicates over it.
    #[test]
    fn repetitions_of_two_relationships_match_variable_length_paths(
        edges in proptest::collection::vec((0u8..6, 0u8..6, any::<bool>(), 0i64..4), 0..16),
        marked in proptest::collection::vec(any::<bool>(), 6),
        min in 0u64..2,
        extra in 0u64..2,
    ) {
        let db = Db::new("UNWIND range(0, 5) AS i CREATE (:N {i: i})");
        for (i, m) in marked.iter().enumerate() {
            if *m {
                db.rows(&format!("MATCH (n:N {{i: {i}}}) SET n:M"));
            }
        }
        for (a, b, r, w) in &edges {
            let ty = if *r { "R" } else { "S" };
            db.rows(&format!("MATCH (a:N {{i: {a}}}), (b:N {{i: {b}}}) CREATE (a)-[:{ty} {{w: {w}}}]->(b)"));
        }
        let max = (min + extra).max(1);
        let qpp = format!(
            "MATCH (s:N {{i: 0}}) ((x)-[r:R]->(y:M)<-[q:S]-(z) WHERE r.w <= q.w){{{min},{max}}} (t) \
             RETURN t.i AS t, [n IN y | n.i] AS ys, [e IN r | e.w] AS rs, [e IN q | e.w] AS qs"
        );
        let var_length = format!(
            "MATCH p = (s:N {{i: 0}})-[e:R|S*{}..{}]-(t) \
             WHERE size(e) % 2 = 0 AND all(k IN range(0, size(e) / 2 - 1) WHERE \
               type(e[2 * k]) = 'R' AND startNode(e[2 * k]) = nodes(p)[2 * k] AND \
               type(e[2 * k + 1]) = 'S' AND endNode(e[2 * k + 1]) = nodes(p)[2 * k + 1] AND \
               nodes(p)[2 * k + 1]:M AND e[2 * k].w <= e[2 * k + 1].w) \
             RETURN t.i AS t, [k IN range(0, size(e) / 2 - 1) | nodes(p)[2 * k + 1].i] AS ys, \
               [k IN range(0, size(e) / 2 - 1) | e[2 * k].w] AS rs, [k IN range(0, size(e) / 2 - 1) | e[2 * k + 1].w] AS qs",
            2 * min, 2 * max
        );
        prop_assert_eq!(db.sorted(&qpp), db.sorted(&var_length));
        // Written right to left, started from `s` on the right.
        let mirrored = format!(
            "MATCH (t) ((z)-[q:S]->(y:M)<-[r:R]-(x) WHERE r.w <= q.w){{{min},{max}}} (s:N {{i: 0}}) \
             RETURN t.i AS t, reverse([n IN y | n.i]) AS ys, reverse([e IN r | e.w]) AS rs, reverse([e IN q | e.w]) AS qs"
        );
        prop_assert_eq!(db.sorted(&mirrored), db.sorted(&qpp));
    }

    /// On random graphs, a quantified path pattern with labels and a WHERE inside finds exactly the paths a
    /// variable-length pattern finds when the same conditions are written as list predicates over it.
    #[test]
    fn quantified_paths_match_variable_length_paths_with_predicates(
        edges in proptest::collection::vec((0u8..7, 0u8..7, 0i64..4), 0..16),
        marked in proptest::collection::vec(any::<bool>(), 7),
        min in 0u64..3,
        extra in 0u64..3,
    ) {
        let mut setup = String::from("UNWIND range(0, 6) AS i CREATE (:N {i: i})");
        let db = Db::new(&setup);
        for (i, m) in marked.iter().enumerate() {
            if *m {
                db.rows(&format!("MATCH (n:N {{i: {i}}}) SET n:M"));
            }
        }
        for (a, b, w) in &edges {
            db.rows(&format!("MATCH (a:N {{i: {a}}}), (b:N {{i: {b}}}) CREATE (a)-[:R {{w: {w}}}]->(b)"));
        }
        setup.clear();
        // A quantifier limited by 0 is refused (tested above).
        let max = (min + extra).max(1);
        let qpp = format!(
            "MATCH (s:N {{i: 0}}) ((x)-[r:R]->(y:M) WHERE r.w >= x.i % 3){{{min},{max}}} (t) \
             RETURN t.i AS t, [n IN x | n.i] AS xs, [n IN y | n.i] AS ys, [q IN r | q.w] AS ws"
        );
        let var_length = format!(
            "MATCH p = (s:N {{i: 0}})-[r:R*{min}..{max}]->(t) \
             WHERE all(k IN range(0, size(r) - 1) WHERE nodes(p)[k + 1]:M AND r[k].w >= nodes(p)[k].i % 3) \
             RETURN t.i AS t, nodes(p)[0..-1] AS xs0, nodes(p)[1..] AS ys0, [q IN r | q.w] AS ws"
        );
        let var_length = var_length.replace(
            "RETURN t.i AS t, nodes(p)[0..-1] AS xs0, nodes(p)[1..] AS ys0",
            "RETURN t.i AS t, [n IN nodes(p)[0..-1] | n.i] AS xs, [n IN nodes(p)[1..] | n.i] AS ys",
        );
        prop_assert_eq!(db.sorted(&qpp), db.sorted(&var_length));
        // The same paths written right to left: the planner starts from `s`, on the right, and walks each
        // repetition against the writing order.
        let mirrored = format!(
            "MATCH (t) ((y:M)<-[r:R]-(x) WHERE r.w >= x.i % 3){{{min},{max}}} (s:N {{i: 0}}) \
             RETURN t.i AS t, reverse([n IN x | n.i]) AS xs, reverse([n IN y | n.i]) AS ys, reverse([q IN r | q.w]) AS ws"
        );
        prop_assert_eq!(db.sorted(&mirrored), db.sorted(&qpp));
    }

    /// The shortest-path selectors over a quantified path pattern of two relationships find, for each pair of
    /// ends, exactly the shortest of the paths the same pattern matches without a selector.
    #[test]
    fn shortest_repetitions_are_the_shortest_of_the_matched_paths(
        edges in proptest::collection::vec((0u8..6, 0u8..6, any::<bool>(), 0i64..3), 0..14),
        k in 1u64..3,
    ) {
        let db = Db::new("UNWIND range(0, 5) AS i CREATE (:N {i: i})");
        for (a, b, r, w) in &edges {
            let ty = if *r { "R" } else { "S" };
            db.rows(&format!("MATCH (a:N {{i: {a}}}), (b:N {{i: {b}}}) CREATE (a)-[:{ty} {{w: {w}}}]->(b)"));
        }
        let inner = "((x)-[r:R]->(y)-[q]-(z) WHERE r.w <= q.w)";
        let every = db.rows(&format!(
            "MATCH p = (s:N) {inner}{{1,3}} (t:N) RETURN s.i, t.i, [e IN relationships(p) | id(e)]"
        ));
        let mut shortest: std::collections::BTreeMap<(String, String), Vec<String>> = Default::default();
        for row in &every {
            let key = (format!("{:?}", row[0]), format!("{:?}", row[1]));
            let path = format!("{:?}", row[2]);
            let len = |p: &String| p.matches("Int").count();
            let entry = shortest.entry(key).or_default();
            if entry.first().is_none_or(|p| len(&path) < len(p)) {
                *entry = vec![path];
            } else if entry.first().is_some_and(|p| len(&path) == len(p)) {
                entry.push(path);
            }
        }
        let mut expected: Vec<String> = shortest
            .iter()
            .flat_map(|((a, b), paths)| paths.iter().map(move |p| format!("{a} {b} {p}")))
            .collect();
        expected.sort();
        let all = db.rows(&format!(
            "MATCH p = ALL SHORTEST (s:N) {inner}{{1,3}} (t:N) RETURN s.i, t.i, [e IN relationships(p) | id(e)]"
        ));
        let mut found: Vec<String> = all.iter().map(|r| format!("{:?} {:?} {:?}", r[0], r[1], r[2])).collect();
        found.sort();
        prop_assert_eq!(&found, &expected);
        // SHORTEST k: k of them per pair of ends (as many as there are), each among the shortest.
        let some = db.rows(&format!(
            "MATCH p = SHORTEST {k} (s:N) {inner}{{1,3}} (t:N) RETURN s.i, t.i, [e IN relationships(p) | id(e)]"
        ));
        for ((a, b), paths) in &shortest {
            let mine: Vec<String> = some
                .iter()
                .filter(|r| format!("{:?}", r[0]) == *a && format!("{:?}", r[1]) == *b)
                .map(|r| format!("{:?}", r[2]))
                .collect();
            prop_assert!(mine.len() as u64 <= k);
            if (paths.len() as u64) >= k {
                prop_assert_eq!(mine.len() as u64, k);
                prop_assert!(mine.iter().all(|p| paths.contains(p)), "{:?} not among {:?}", mine, paths);
            }
        }
    }
}
