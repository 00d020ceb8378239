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

/// A MERGE pattern's properties may read an element before them in the same pattern, whether MERGE matches or
/// creates it: `b`'s `v` is `a`'s (Neo4j 5.26 answers `[1, 1, 2]` and creates one path).
#[test]
fn merge_properties_read_earlier_elements_of_the_pattern() {
    let db = Db::new();
    let q = "MERGE (a:X {v: 1})-[r:T {w: a.v + 1}]->(b:Y {v: a.v}) RETURN a.v, b.v, r.w";
    let one_path = vec![vec![ResultValue::Int(1), ResultValue::Int(1), ResultValue::Int(2)]];
    assert_eq!(db.run(q), one_path);
    assert_eq!(db.run(q), one_path, "matched the second time");
    assert_eq!(db.run("MATCH p = (:X)-[:T]->(:Y) RETURN count(p)"), vec![vec![ResultValue::Int(1)]]);
    let path = db.run("MERGE p = (a:Z {v: 3})-[:T]->(b:Z {v: a.v * 2}) RETURN length(p), b.v");
    assert_eq!(path, vec![vec![ResultValue::Int(1), ResultValue::Int(6)]]);
}

/// A pattern's property map may name a variable bound later in the plan than the element it belongs to: it is
/// checked once that variable is bound (each of these counts 1 in Neo4j 5.26; they counted 0).
#[test]
fn property_maps_naming_variables_bound_later() {
    let db = Db::new();
    db.run("CREATE (:X {x: 1})-[:S {q: 1}]->(:X {x: 1})-[:T {p: 1, q: 1}]->(:X {x: 1})");
    let one = vec![vec![ResultValue::Int(1)]];
    for q in [
        "MATCH (a:X)-[:S]->(b {x: a.x}) RETURN count(*)",
        "MATCH (a:X {x: b.x})-[:S]->(b) RETURN count(*)",
        "MATCH (c)-[:S]->(a {x: c.x}) RETURN count(*)",
        "MATCH (a)-[r:T {p: 1, q: d.x}]->(b), (d)-[:S]->(a) RETURN count(*)",
        "MATCH (c)-[s:S]->(a)-[r:T {p: 1, q: s.q}]->(b) RETURN count(*)",
    ] {
        assert_eq!(db.run(q), one, "{q}");
    }
    db.run("CREATE INDEX FOR ()-[r:T]-() ON (r.p)");
    for q in [
        "MATCH (c)-[:S]->(a)-[r:T {p: 1, q: c.x}]->(b) RETURN count(*)",
        "MATCH (c)-[s:S]->(a)-[r:T {p: 1, q: s.q}]->(b) RETURN count(*)",
        "MATCH (a)-[r:T {p: 1}]->(b {x: a.x}) RETURN count(*)",
    ] {
        let plan = db.result(&format!("EXPLAIN {q}")).unwrap().plan.unwrap();
        assert!(plan.contains("RelationshipIndexSeek"), "{q}: {plan}");
        assert_eq!(db.run(q), one, "{q}");
    }
}

#[test]
fn counters_count_what_changed() {
    let db = Db::new();
    let stats = db.stats("CREATE (n:A:B:A)");
    assert_eq!((stats.nodes_created, stats.labels_added), (1, 2));
    assert_eq!(db.stats("MATCH (n:Person) SET n.missing = null").properties_set, 0);
    assert_eq!(db.stats("CREATE (n:S) SET n.a = null").properties_set, 0);
    assert_eq!(db.stats("MATCH (n:Person) SET n.name = null").properties_set, 1);
    // A null in a map for a key the entity lacks sets nothing.
    assert_eq!(db.stats("CREATE (n:C {a: 1}) SET n = {a: 2, b: null}").properties_set, 2);
    assert_eq!(db.stats("CREATE (n:C {a: 1}) SET n += {b: null}").properties_set, 1);
    assert_eq!(db.stats("CREATE (n:C {a: 1}) SET n += {a: null}").properties_set, 2);
    assert_eq!(db.stats("CREATE ()-[r:R {a: 1}]->() SET r = {b: null, c: 1}").properties_set, 3);
}

#[test]
fn inputs_neo4j_refuses_or_reads_differently() {
    let db = Db::new();
    for q in ["MATCH (n:Person) SET n.`` = 1", "MATCH (n:Person) SET n:``", "MATCH (n:``) RETURN n", "RETURN 017"] {
        assert_eq!(db.err(q).kind, ErrorKind::SyntaxError, "{q}");
    }
    // An empty property key is refused wherever it would be written, from a pattern or from a map.
    for q in [
        "CREATE (n {``: 1})",
        "MERGE (:M {``: 1})",
        "MATCH (n:Person) SET n = {``: 1}",
        "MATCH (n:Person) SET n += {``: 1}",
    ] {
        assert_eq!(db.err(q).kind, ErrorKind::SyntaxError, "{q}");
    }
    assert_eq!(db.count("MATCH (n) WHERE '' IN keys(n) RETURN count(n)"), 0);
    let params: Params = [("m".to_string(), plexus_cypher::Value::Null)].into_iter().collect();
    let e = db.engine.execute(&db.store, "CREATE (n:P $m)", &params).unwrap_err();
    assert_eq!(e.kind, ErrorKind::TypeError, "{e}");
    assert_eq!(db.err("WITH null AS m MERGE (n:P {k: 1}) ON CREATE SET n = m").kind, ErrorKind::TypeError);
    // Byte arrays count and index as Java's signed bytes; FOREACH over one value runs once.
    let bytes: Params = [("b".to_string(), plexus_cypher::Value::Bytes(vec![1u8, 200].into()))].into_iter().collect();
    let rows = db.engine.execute(&db.store, "RETURN size($b), $b[0], $b[-1], $b[2]", &bytes).unwrap().rows;
    assert_eq!(rows, vec![vec![ResultValue::Int(2), ResultValue::Int(1), ResultValue::Int(-56), ResultValue::Null]]);
    assert_eq!(db.stats("FOREACH (x IN 1 | CREATE (:Once {x: x}))").nodes_created, 1);
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
    // Neo4j 5's float literals, and times written with ISO 8601's designator.
    let rows = db.run("RETURN NaN <> NaN, Inf, -Infinity, toString(time('T12:00')), toString(localtime('t12:00:01'))");
    assert_eq!(
        rows,
        vec![vec![
            ResultValue::Bool(true),
            ResultValue::Float(f64::INFINITY),
            ResultValue::Float(f64::NEG_INFINITY),
            ResultValue::String("12:00:00Z".into()),
            ResultValue::String("12:00:01".into()),
        ]]
    );
}

/// A predicate that is a list by its form is refused before running, as Neo4j does; a list whose type shows
/// only at run time still passes when it is not empty, as in Neo4j.
#[test]
fn lists_as_predicates() {
    let db = Db::new();
    for q in [
        "UNWIND [1, 2] AS x WITH x WHERE [1] RETURN x",
        "MATCH (n) WHERE [x IN [1] | x] RETURN n",
        "MATCH (n) WHERE keys(n) RETURN n",
        "MATCH (n) WHERE labels(n) RETURN n",
        "RETURN CASE WHEN range(1, 2) THEN 1 ELSE 2 END",
        "MATCH (n) WHERE 'a' RETURN n",
        "MATCH (n) WHERE {a: 1} RETURN n",
        "UNWIND [1] AS x WITH x WHERE 1 RETURN x",
    ] {
        let e = db.err(q);
        assert_eq!(e.kind, ErrorKind::SyntaxError, "{q}: {e}");
    }
    assert!(db.err("MATCH (n) WHERE keys(n) RETURN n").to_string().contains("Coercion of list to boolean"));
    let rows = db.run("UNWIND [true, [1], []] AS x WITH x WHERE x RETURN count(*) AS c");
    assert_eq!(rows, vec![vec![ResultValue::Int(2)]]);
    let rows = db.run("RETURN CASE 1 WHEN 1 THEN 'one' END AS c, CASE WHEN null THEN 1 ELSE 2 END AS d");
    assert_eq!(rows, vec![vec![ResultValue::String("one".into()), ResultValue::Int(2)]]);
}

/// Labels go on nodes only: a variable known to hold something else is refused before anything is written.
#[test]
fn labels_on_what_is_not_a_node() {
    let db = Db::new();
    let before = db.count("MATCH (n) RETURN count(n)");
    for q in [
        "CREATE ()-[r:T]->() SET r:X RETURN r",
        "CREATE ()-[r:T]->() REMOVE r:X",
        "CREATE p = ()-[:T]->() SET p:X",
        "CREATE (a)-[r:T]->(b) WITH {a: 1} AS m SET m:X",
    ] {
        let e = db.err(q);
        assert_eq!(e.kind, ErrorKind::SyntaxError, "{q}: {e}");
        assert!(e.to_string().contains("expected Node"), "{q}: {e}");
    }
    assert_eq!(db.count("MATCH (n) RETURN count(n)"), before, "nothing was created");
    // A value whose kind shows only when the row arrives is refused then.
    assert_eq!(db.err("UNWIND [1] AS x SET x:Y").kind, ErrorKind::TypeError);
}

/// `shortestPath(...)` and `allShortestPaths(...)` as values, between bound nodes.
#[test]
fn shortest_paths_as_expressions() {
    let db = Db::new();
    db.run(
        "CREATE (a:SP {n: 1})-[:R]->(:SP {n: 2})-[:R]->(c:SP {n: 3}), (a)-[:R]->(:SP {n: 4})-[:R]->(c), (:SP {n: 5})",
    );
    let q = "MATCH (a:SP {n: 1}), (c:SP {n: 3}) RETURN length(shortestPath((a)-[*]-(c))) AS l, \
             size(allShortestPaths((a)-[*]-(c))) AS s";
    assert_eq!(db.run(q), vec![vec![ResultValue::Int(2), ResultValue::Int(2)]]);
    let q = "MATCH (a:SP {n: 1}), (e:SP {n: 5}) RETURN shortestPath((a)-[*]-(e)) AS p, allShortestPaths((a)-[*]-(e)) AS all";
    assert_eq!(db.run(q), vec![vec![ResultValue::Null, ResultValue::List(vec![])]]);
}

/// Inside `CALL (a) { }` and the subquery expressions, the outer variables stay visible past a `WITH` that does
/// not name them (as in Neo4j): a later pattern over `a` is the outer node, not a new variable matching the
/// whole graph.
#[test]
fn outer_variables_outlive_a_with_inside_a_subquery() {
    let db = Db { store: Store::in_memory(), engine: Engine::new() };
    db.run("UNWIND range(1, 6) AS i CREATE (:C {id: i})");
    db.run("MATCH (a:C), (b:C) WHERE b.id = a.id + 1 OR (a.id = 1 AND b.id = 4) CREATE (a)-[:T]->(b)");
    let ints = |v: &[i64]| v.iter().map(|&i| vec![ResultValue::Int(i)]).collect::<Vec<_>>();
    let q = "MATCH (a:C) CALL (a) { WITH 1 AS x MATCH (a)-->(b) RETURN count(b) AS c } RETURN c ORDER BY a.id";
    assert_eq!(db.run(q), ints(&[2, 1, 1, 1, 1, 0]));
    let q = "MATCH (a:C) WHERE EXISTS { WITH 1 AS x MATCH (a)-[:T]->(b) } RETURN a.id ORDER BY a.id";
    assert_eq!(db.run(q), ints(&[1, 2, 3, 4, 5]));
    let q = "MATCH (a:C) RETURN COUNT { MATCH (a)-->(b) WITH b MATCH (b)-->(c) RETURN c } AS m ORDER BY a.id";
    assert_eq!(db.run(q), ints(&[2, 1, 1, 1, 0, 0]));
    let q = "MATCH (a:C) RETURN COLLECT { MATCH (a)-->(b) WITH b ORDER BY b.id RETURN b.id + a.id }[0] AS l \
             ORDER BY a.id";
    let rows = db.run(q);
    assert_eq!(rows[..5], ints(&[3, 5, 7, 9, 11])[..]);
    assert_eq!(db.run("UNWIND [1, 2] AS i CALL (i) { WITH 1 AS z RETURN i AS j } RETURN j"), ints(&[1, 2]));
    // A count that the outer variable is not used after keeps its one row for a node with no relationship.
    let q = "MATCH (p:C) CALL (p) { MATCH (p)-[:T]->(f) WITH count(f) AS n RETURN n } RETURN n ORDER BY p.id";
    assert_eq!(db.run(q), ints(&[2, 1, 1, 1, 1, 0]));
    // ... and so does one it is used after: the count has no grouping key of its own, so each run of the
    // subquery has one row, with 0 for a node with no relationship (node 6 has one incoming, none outgoing).
    let q = "MATCH (p:C) CALL (p) { MATCH (p)-[:T]->(f) WITH count(f) AS n MATCH (p)<-[:T]-(g) RETURN n, g.id AS g } \
             RETURN p.id, n, g ORDER BY p.id, g";
    let rows: Vec<Vec<i64>> = db
        .run(q)
        .into_iter()
        .map(|r| r.into_iter().map(|v| if let ResultValue::Int(i) = v { i } else { panic!("{v:?}") }).collect())
        .collect();
    assert_eq!(rows, [[2, 1, 1], [3, 1, 2], [4, 1, 1], [4, 1, 3], [5, 1, 4], [6, 0, 5]]);
    let q = "MATCH (p:C {id: 6}) CALL (p) { OPTIONAL MATCH (p)-[:T]->(f) WITH collect(f) AS fs, count(*) AS n \
             RETURN size(fs) + n + p.id AS s } RETURN s";
    assert_eq!(db.run(q), ints(&[7]));
    let q = "MATCH (p:C {id: 6}) CALL (p) { MATCH (p)-[:T]->(f) WITH sum(f.id) AS total WHERE p.id = 6 \
             RETURN total, p.id AS id } RETURN total, id";
    assert_eq!(db.run(q), vec![vec![ResultValue::Int(0), ResultValue::Int(6)]]);
    let q = "MATCH (p:C) WHERE EXISTS { MATCH (p)-[:T]->(f) WITH count(f) AS n WHERE n = 0 MATCH (p)<-[:T]-(g) } \
             RETURN p.id, COUNT { MATCH (p)-[:T]->(f) WITH count(f) AS n MATCH (p)<-[:T]-(g) RETURN n } AS c";
    assert_eq!(db.run(q), vec![vec![ResultValue::Int(6), ResultValue::Int(1)]]);
    // The older importing WITH keeps its meaning: a later WITH drops what it does not name.
    let q = "MATCH (a:C {id: 1}) CALL { WITH a WITH 1 AS x MATCH (a)-->(b) RETURN count(b) AS c } RETURN c";
    assert_eq!(db.run(q), ints(&[6]));
    // A write through the outer variable touches only its relationships.
    let stats = db.stats("MATCH (a:C {id: 1}) CALL (a) { WITH 1 AS x MATCH (a)-[r:T]->() DELETE r } RETURN count(*)");
    assert_eq!(stats.relationships_deleted, 2);
    // A pattern inside an argument, where it stands for a boolean.
    let q =
        "MATCH (a:C {id: 2}) RETURN toString(CASE WHEN (a)-->() THEN 1 ELSE 0 END) AS s, coalesce(NOT (a)-->(), false)";
    assert_eq!(db.run(q), vec![vec![ResultValue::String("1".into()), ResultValue::Bool(false)]]);
}

#[test]
fn labels_and_keys_come_in_the_order_they_were_first_created() {
    let db = Db { store: Store::in_memory(), engine: Engine::new() };
    db.run("CREATE (:Zeta {z: 1, a: 2})");
    db.run("CREATE (n:Alpha:Zeta:Mid {m: 1, a: 2, z: 3})");
    let strings = |v: &[&str]| ResultValue::List(v.iter().map(|s| ResultValue::String((*s).into())).collect());
    let rows = db.run("MATCH (n:Alpha) RETURN labels(n), labels(n)[0], keys(n)");
    assert_eq!(
        rows,
        vec![vec![strings(&["Zeta", "Alpha", "Mid"]), ResultValue::String("Zeta".into()), strings(&["z", "a", "m"])]]
    );
    match &db.run("MATCH (n:Alpha) RETURN n")[0][0] {
        ResultValue::Node(n) => assert_eq!(n.labels.iter().map(|l| &**l).collect::<Vec<_>>(), ["Zeta", "Alpha", "Mid"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn temporal_fields_as_neo4j_reads_them() {
    let db = Db { store: Store::in_memory(), engine: Engine::new() };
    let text = |q: &str| match &db.run(q)[0][0] {
        ResultValue::Int(i) => i.to_string(),
        other => format!("{other:?}"),
    };
    let q = "RETURN toString(date({date: date('2020-05-05'), quarter: 4})) + ' ' + \
             toString(date({date: date('2020-05-31'), quarter: 1})) + ' ' + \
             toString(date({year: 2020, quarter: 1, dayOfQuarter: 92}))";
    assert_eq!(text(q), "String(\"2020-11-05 2020-02-29 2020-04-01\")");
    assert_eq!(text("RETURN datetime({epochMillis: -1500}).epochSeconds"), "-1");
    assert_eq!(text("RETURN datetime('1969-12-31T23:59:59.5Z').epochSeconds"), "0");
    assert_eq!(text("RETURN datetime('1969-12-31T23:59:59Z').epochSeconds"), "-1");
    let q = "RETURN toString(datetime({epochMillis: 1500000000123, nanosecond: 7}))";
    assert_eq!(text(q), "String(\"2017-07-14T02:40:00.000000007Z\")");
    assert_eq!(text("RETURN toInteger(1e19)"), i64::MAX.to_string());
    assert_eq!(text("RETURN toString(date({year: 2020, month: null}))"), "String(\"2020-01-01\")");
    // ISO designators in lower case read as Neo4j reads them; a zone name keeps its case.
    let q = "RETURN toString(duration('p1dt2h')) + ' ' + toString(datetime('2020-01-01t10:00z')) + ' ' + \
             toString(datetime('2020-01-01t10:00[Europe/Stockholm]'))";
    assert_eq!(text(q), "String(\"P1DT2H 2020-01-01T10:00:00Z 2020-01-01T10:00:00+01:00[Europe/Stockholm]\")");
}

/// A uniqueness violation names the value as Cypher writes it, lists included.
#[test]
fn uniqueness_violations_write_the_value_as_cypher_does() {
    let db = Db::new();
    db.run("CREATE CONSTRAINT d_k FOR (d:D) REQUIRE d.k IS UNIQUE");
    db.run("CREATE (:D {k: [1, 2]}), (:D {k: 'x'})");
    let list = db.err("CREATE (:D {k: [1, 2]})").message;
    assert!(list.contains("k = [1, 2], which must be unique"), "{list}");
    let text = db.err("CREATE (:D {k: 'x'})").message;
    assert!(text.contains("k = 'x', which must be unique"), "{text}");
}

/// An integer sum past i64 goes on as a float, as Neo4j 5.26 answers (`+` on the same integers fails), also
/// where the sum is fused with the expansion feeding it.
#[test]
fn integer_sums_past_i64_go_on_as_floats() {
    let db = Db::new();
    let float = |q: &str| match db.run(q).as_slice() {
        [row] => match row[0] {
            ResultValue::Float(f) => f,
            ref other => panic!("{q}: {other:?}"),
        },
        rows => panic!("{q}: {rows:?}"),
    };
    assert_eq!(float("UNWIND [9223372036854775807, 1] AS x RETURN sum(x)"), 9.223372036854776e18);
    assert_eq!(float("UNWIND [-9223372036854775807, -5] AS x RETURN sum(x)"), -9.223372036854776e18);
    assert_eq!(float("UNWIND [9223372036854775807, 1, -1] AS x RETURN sum(x)"), 9.223372036854776e18);
    assert_eq!(db.count("UNWIND [9223372036854775807, -1] AS x RETURN sum(x)"), i64::MAX - 1);
    assert_eq!(db.err("RETURN 9223372036854775807 + 1").kind, ErrorKind::ArithmeticError);
    // Ann lives in both cities and comes twice out of the first MATCH; a Bo lives in each: each city's fused
    // sum adds 2^62 three times.
    db.run("MATCH (c:City) CREATE (:Person {name: 'Bo'})-[:LIVES_IN]->(c)");
    let q = "MATCH (p:Person)-[:LIVES_IN]->(c) WITH p, 4611686018427387904 AS big \
             MATCH (p)-[:LIVES_IN]->(c) WITH c, sum(big) AS s RETURN min(s)";
    assert_eq!(float(q), 3.0 * 4611686018427387904.0);
    let plan = db.result(&format!("EXPLAIN {q}")).unwrap().plan.unwrap_or_default();
    assert!(plan.contains("ExpandAggregation"), "{plan}");
}

/// Operands whose written type an operator never takes are refused before anything runs, even where a null on
/// the other side would make the answer null; `+` takes every type with a list (and null) and is not checked.
#[test]
fn operands_of_a_type_the_operator_never_takes() {
    let db = Db::new();
    for q in [
        "RETURN true * null",
        "RETURN null * true",
        "RETURN 'a' - null",
        "RETURN [1] - null",
        "RETURN {a: 1} * null",
        "RETURN true / null",
        "RETURN true % null",
        "RETURN true ^ null",
        "RETURN -true",
        "RETURN true - 1",
        "RETURN 'a' / 2",
        "RETURN coalesce(true * null, 7) / -1",
        "RETURN 1 =~ 'a'",
        "WITH null AS x RETURN x =~ 1",
        "MATCH (n) WHERE n.name =~ 2 RETURN n",
    ] {
        let e = db.err(q);
        assert_eq!(e.kind, ErrorKind::SyntaxError, "{q}: {e}");
        assert!(e.to_string().contains("Type mismatch"), "{q}: {e}");
    }
    for (q, expected) in [
        ("RETURN true + null", ResultValue::Null),
        ("RETURN 'a' + null", ResultValue::Null),
        ("RETURN -null", ResultValue::Null),
        ("RETURN duration('P1D') * null", ResultValue::Null),
        ("RETURN [1] + true", ResultValue::List(vec![ResultValue::Int(1), ResultValue::Bool(true)])),
        ("RETURN 2 ^ 0.5 > 1.4", ResultValue::Bool(true)),
        ("RETURN 'Ann' =~ 'A.*'", ResultValue::Bool(true)),
    ] {
        assert_eq!(db.run(q), vec![vec![expected]], "{q}");
    }
    // Values whose type shows only at run time: null where the other side is null, as Neo4j answers rows of
    // mixed types.
    let rows = db.run("UNWIND [true, 'a'] AS b RETURN b * null AS x");
    assert_eq!(rows, vec![vec![ResultValue::Null], vec![ResultValue::Null]]);
}

/// A parameter's type is known before any row: one that is not boolean under AND / OR is an error even where the
/// other operand decides the answer, and one that is not a string under `=~` or not a number under arithmetic is
/// an error rather than a null.
#[test]
fn parameters_under_boolean_operators_are_checked_whatever_decides() {
    let db = Db::new();
    let params: Params =
        [("yes".to_string(), plexus_cypher::Value::Bool(true)), ("n".into(), plexus_cypher::Value::Int(0))]
            .into_iter()
            .collect();
    let no: Params =
        [("no".to_string(), plexus_cypher::Value::Bool(false)), ("n".into(), plexus_cypher::Value::Int(0))]
            .into_iter()
            .collect();
    for (q, p) in [
        ("RETURN $yes OR $n", &params),
        ("RETURN $n OR $yes", &params),
        ("RETURN $no AND $n", &no),
        ("RETURN $n =~ 'a'", &params),
        ("RETURN 'a' =~ $yes", &params),
        ("RETURN $yes * null", &params),
        ("RETURN null - $yes", &params),
    ] {
        let e = db.engine.execute(&db.store, q, p).err().unwrap_or_else(|| panic!("{q} should fail"));
        assert_eq!(e.kind, ErrorKind::TypeError, "{q}: {e}");
    }
    let rows = db.engine.execute(&db.store, "RETURN $yes OR $yes AS x", &params).unwrap().rows;
    assert_eq!(rows, vec![vec![ResultValue::Bool(true)]]);
    let rows = db.engine.execute(&db.store, "RETURN $n * null AS x, $yes + null AS y", &params).unwrap().rows;
    assert_eq!(rows, vec![vec![ResultValue::Null, ResultValue::Null]]);
}

#[test]
fn rows_that_skip_and_limit_drop_are_never_produced() {
    let db = Db::new();
    let one = vec![vec![ResultValue::Int(1)]];
    // A row past the limit, or skipped, would fail: as in Neo4j, its items never run.
    assert_eq!(db.run("UNWIND [1, 0] AS x RETURN 1 / x AS v LIMIT 1"), one);
    assert_eq!(db.run("UNWIND [0, 1] AS x RETURN 1 / x AS v SKIP 1"), one);
    assert_eq!(db.run("CALL { UNWIND [1, 0] AS x RETURN 1 / x AS v LIMIT 1 } RETURN v"), one);
    assert_eq!(db.run("UNWIND [1, 0] AS x WITH x, 1 / x AS y LIMIT 1 RETURN y"), one);
    assert_eq!(db.run("UNWIND ['2024-01-02', 'bad'] AS s RETURN date(s).day LIMIT 1"), vec![vec![ResultValue::Int(2)]]);
    // Past a LIMIT as deep as a batch of rows.
    let deep = "UNWIND range(1, 3000) AS i WITH i, CASE i WHEN 2000 THEN 0 ELSE 1 END AS d RETURN i / d LIMIT 1500";
    assert_eq!(db.run(deep).len(), 1500);
    // Under ORDER BY, what the sort reads runs for every row; the rest only for the rows kept.
    assert_eq!(
        db.run("UNWIND [3, 1, 2, 0] AS x RETURN x, 6 / x AS v ORDER BY x DESC SKIP 1 LIMIT 2"),
        vec![vec![ResultValue::Int(2), ResultValue::Int(3)], vec![ResultValue::Int(1), ResultValue::Int(6)]]
    );
    let sorted_by_failing = db.result("UNWIND [1, 0] AS x RETURN 1 / x AS v ORDER BY v LIMIT 1").unwrap_err();
    assert_eq!(sorted_by_failing.detail, "DivisionByZero");
    // A row a LIMIT 0 drops after a deletion is not read: the deletion happens and nothing fails.
    db.run("CREATE (:X {i: 1}), (:X {i: 2}), (:X {i: 3})");
    assert_eq!(db.stats("MATCH (x:X) DETACH DELETE x RETURN x.i LIMIT 0").nodes_deleted, 3);
    assert_eq!(db.run("MATCH (x:X) RETURN count(x)"), vec![vec![ResultValue::Int(0)]]);
    // Rows that are produced still fail.
    assert_eq!(db.result("UNWIND [0, 1] AS x RETURN 1 / x LIMIT 1").unwrap_err().detail, "DivisionByZero");
}

#[test]
fn a_small_limit_takes_rows_one_at_a_time() {
    let db = Db::new();
    let one = vec![vec![ResultValue::Int(1)]];
    // The filter below the limit never sees the row after the first that passes.
    assert_eq!(db.run("UNWIND [1, 0] AS x WITH x WHERE 1 / x > 0 RETURN x LIMIT 1"), one);
    // An aggregate under the limit reads every row, so the failing one fails the statement.
    let counted = db.result("UNWIND [1, 0, 1] AS x WITH x WHERE 1 / x > 0 RETURN count(*) AS n LIMIT 1");
    assert_eq!(counted.unwrap_err().detail, "DivisionByZero");
    db.run("UNWIND range(1, 5) AS i CREATE (:N {i: i, d: 5 - i})");
    assert_eq!(db.count("MATCH (n:N) WHERE n.i / n.d >= 0 WITH n LIMIT 3 RETURN count(n)"), 3);
    assert_eq!(db.result("MATCH (n:N) WHERE n.i / n.d >= 0 RETURN n.i").unwrap_err().detail, "DivisionByZero");
    // A limit past a batch still counts every row it keeps; LIMIT 0 still runs the updates below it.
    assert_eq!(db.count("UNWIND range(1, 5000) AS i WITH i LIMIT 3000 RETURN count(*)"), 3000);
    assert_eq!(db.count("UNWIND range(1, 5000) AS i WITH i LIMIT 1024 RETURN count(*)"), 1024);
    assert_eq!(db.stats("CREATE (:Y) WITH 1 AS one LIMIT 0 RETURN one").nodes_created, 1);
}

#[test]
fn a_variable_named_again_beside_the_star_is_one_column() {
    let db = Db::new();
    let result = db.result("MATCH (n:Person) RETURN *, n").unwrap();
    assert_eq!(result.columns.iter().map(|c| &**c).collect::<Vec<&str>>(), ["n"]);
    assert_eq!(result.rows.len(), 1);
    assert_eq!(db.count("MATCH (n:Person) WITH *, n AS n RETURN count(n)"), 1);
    // Another value under the name of a variable the star projects still clashes.
    assert_eq!(db.err("MATCH (n:Person) RETURN *, 1 AS n").detail, "ColumnNameConflict");
    assert_eq!(db.err("MATCH (n:Person) RETURN *, n, n").detail, "ColumnNameConflict");
}

#[test]
fn a_map_projection_is_named_by_its_variable() {
    let db = Db::new();
    let columns = |q: &str| db.result(q).unwrap().columns.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    assert_eq!(columns("MATCH (p:Person) RETURN p {.name}"), ["p"]);
    assert_eq!(columns("MATCH (p:Person) RETURN p {.name} AS m, p {.*}.name"), ["m", "p {.*}.name"]);
    assert_eq!(db.err("MATCH (p:Person) RETURN p {.name}, p {.*}").detail, "ColumnNameConflict");
}

/// A node this transaction created and deleted has no properties left; one that was there before says it was
/// deleted (the test above), as does any deleted relationship.
#[test]
fn a_node_created_and_deleted_in_one_transaction_reads_as_empty() {
    let db = Db::new();
    let rows = db.run("CREATE (n:Gone {x: 1}) DELETE n RETURN properties(n) AS p, keys(n) AS k");
    assert_eq!(rows, vec![vec![ResultValue::Map(Default::default()), ResultValue::List(vec![])]]);
    let e = db.err("CREATE ()-[r:GONE {x: 1}]->() DELETE r RETURN keys(r)");
    assert_eq!(e.kind, ErrorKind::EntityNotFound, "{e}");
    assert_eq!(db.count("MATCH (n:Gone) RETURN count(n)"), 0);
}

/// GQL's spellings that Neo4j 5.26 takes: `INSERT` for CREATE (labels joined with `&`), `NODETACH DELETE` for
/// DELETE.
#[test]
fn insert_and_nodetach_delete_are_create_and_delete() {
    let db = Db::new();
    let stats = db.stats("INSERT (a:Ins&Two {k: 1})-[:LINK]->(:Ins {k: 2})");
    assert_eq!((stats.nodes_created, stats.relationships_created, stats.labels_added), (2, 1, 3));
    let e = db.err("MATCH (a:Ins {k: 1}) NODETACH DELETE a");
    assert_eq!(e.kind, ErrorKind::ConstraintVerificationFailed, "{e}");
    assert_eq!(db.stats("MATCH (a:Ins)-[r:LINK]->() NODETACH DELETE r").relationships_deleted, 1);
    assert_eq!(db.stats("MATCH (a:Ins) NODETACH DELETE a").nodes_deleted, 2);
    assert_eq!(db.err("MATCH (a) NODETACH a").kind, ErrorKind::SyntaxError);
}

/// Neo4j 5.26's computed labels in a pattern to match: `$all(...)` (as `$(...)`) needs every label named,
/// `$any(...)` one of them; for a relationship, `$any(...)` one of the types. CREATE and MERGE refuse `$any`.
#[test]
fn computed_labels_and_types_match_all_or_any() {
    let db = Db::new();
    db.run("CREATE (:Foo:Bar), (:Foo), (:Baz), (:Qux)-[:T]->(:Qux)-[:U]->(:Qux)-[:V]->(:Qux)");
    for (q, n) in [
        ("MATCH (n:$all(['Foo', 'Bar'])) RETURN count(n)", 1),
        ("MATCH (n:$(['Foo'])) RETURN count(n)", 2),
        ("MATCH (n:$any(['Foo', 'Baz'])) RETURN count(n)", 3),
        ("MATCH (n:$any([])) RETURN count(n)", 0),
        ("MATCH (n:$ANY(['Foo']):$any(['Bar', 'Nope'])) RETURN count(n)", 1),
        ("MATCH (n:Foo&$any('Baz')) RETURN count(n)", 0),
        ("MATCH ()-[r:$any(['T', 'U'])]->() RETURN count(r)", 2),
        ("WITH ['V'] AS ts MATCH ()-[r:$all(ts)]->() RETURN count(r)", 1),
    ] {
        assert_eq!(db.count(q), n, "{q}");
    }
    for q in ["CREATE (n:$any(['X']))", "MERGE (n:$any(['X']))", "MATCH (a:Foo) MERGE (a)-[:$any(['X'])]->(:Y)"] {
        assert_eq!(db.err(q).kind, ErrorKind::SyntaxError, "{q}");
    }
    let params: Params = [("any".to_string(), plexus_cypher::Value::Int(7))].into_iter().collect();
    let rows = db.engine.execute(&db.store, "RETURN $any AS x", &params).unwrap().rows;
    assert_eq!(rows, vec![vec![ResultValue::Int(7)]], "a parameter named any is still a parameter");
}
