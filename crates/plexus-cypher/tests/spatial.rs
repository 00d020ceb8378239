//! Points through the whole engine: stored as properties, found through indexes and unique keys, ordered,
//! grouped and compared as Neo4j does it, and kept across a restart (WAL replay and checkpoint).

use plexus_cypher::{Engine, Params, ResultValue};
use plexus_storage::value::{Crs, Point};
use plexus_storage::Store;

fn rows(engine: &Engine, store: &Store, q: &str) -> Vec<Vec<ResultValue>> {
    engine.execute(store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows
}

fn one(engine: &Engine, store: &Store, q: &str) -> ResultValue {
    rows(engine, store, q).remove(0).remove(0)
}

fn pt(crs: Crs, coords: &[f64]) -> ResultValue {
    ResultValue::Point(Point::new(crs, coords).unwrap())
}

fn strings(v: Vec<Vec<ResultValue>>) -> Vec<String> {
    v.into_iter()
        .map(|r| match &r[0] {
            ResultValue::String(s) => s.to_string(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn points_order_group_and_compare_like_neo4j() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    // By system (SRID 4326 < 4979 < 7203 < 9157), then coordinate by coordinate; points before temporals.
    let q =
        "UNWIND [point({x: 2, y: 1}), date('2020-01-01'), point({x: 1, y: 5}), point({longitude: 0, latitude: 0}), \
             point({x: 1, y: 2, z: 3}), 'z'] AS v RETURN toString(v) AS s ORDER BY v";
    assert_eq!(
        strings(rows(&engine, &store, q)),
        [
            "point({x: 0.0, y: 0.0, crs: 'wgs-84'})",
            "point({x: 1.0, y: 5.0, crs: 'cartesian'})",
            "point({x: 2.0, y: 1.0, crs: 'cartesian'})",
            "point({x: 1.0, y: 2.0, z: 3.0, crs: 'cartesian-3d'})",
            "2020-01-01",
            "z"
        ]
    );
    let q = "UNWIND [point({x: 2, y: 1}), point({x: 1, y: 5}), point({x: 1.0, y: 2.0}), point({x: 1, y: 2})] AS p \
             RETURN min(p) AS lo, max(p) AS hi, count(DISTINCT p) AS n";
    assert_eq!(
        rows(&engine, &store, q),
        vec![vec![pt(Crs::Cartesian, &[1.0, 2.0]), pt(Crs::Cartesian, &[2.0, 1.0]), ResultValue::Int(3)]]
    );
    // Equal points: `<=` holds and `<` is null; unequal ones compare to null; other systems are unequal.
    let q = "WITH point({x: 1, y: 2}) AS a RETURN a <= point({x: 1, y: 2}) AS le, a < point({x: 1, y: 2}) AS lt, \
             a < point({x: 2, y: 3}) AS lt2, a = point({longitude: 1, latitude: 2}) AS eq, a = 1 AS eq1";
    use ResultValue::{Bool, Null};
    assert_eq!(rows(&engine, &store, q), vec![vec![Bool(true), Null, Null, Bool(false), Bool(false)]]);
    assert_eq!(
        one(&engine, &store, "RETURN valueType(point({x: 1, y: 2})) + ':' + toString(point({x: 1, y: 2}) IS :: POINT)"),
        ResultValue::String("POINT NOT NULL:true".into())
    );
}

/// Lists of points compare element by element, equal points moving on to the next element, as in Neo4j; an
/// index range over such lists agrees with a scan.
#[test]
fn lists_of_points_compare_past_equal_points() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    use ResultValue::{Bool, Null};
    let q = "WITH point({x: 1, y: 2}) AS p, point({x: 5, y: 5}) AS q, point({x: 0, y: 0}) AS r \
             RETURN [p, q] <= [p, r], [p, q] <= [p], [p] < [p], [p] < [p, q]";
    assert_eq!(rows(&engine, &store, q), vec![vec![Null, Bool(false), Bool(false), Bool(true)]]);
    rows(&engine, &store, "CREATE INDEX FOR (n:L) ON (n.v)");
    rows(&engine, &store, "CREATE (:L {v: [point({x: 1, y: 2}), point({x: 5, y: 5})]}), (:M {v: [point({x: 1, y: 2}), point({x: 5, y: 5})]})");
    for label in ["L", "M"] {
        let q = format!("MATCH (n:{label}) WHERE n.v <= [point({{x: 1, y: 2}})] RETURN count(n)");
        assert_eq!(rows(&engine, &store, &q), vec![vec![ResultValue::Int(0)]], "{q}");
        let q = format!("MATCH (n:{label}) WHERE n.v > [point({{x: 1, y: 2}})] RETURN count(n)");
        assert_eq!(rows(&engine, &store, &q), vec![vec![ResultValue::Int(1)]], "{q}");
    }
}

/// A unique key on points holds points that `=` tells apart (`-0.0` and `0.0`) apart, and MERGE agrees.
#[test]
fn unique_points_are_equal_as_cypher_compares_them() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    rows(&engine, &store, "CREATE CONSTRAINT FOR (u:U) REQUIRE u.p IS UNIQUE");
    rows(&engine, &store, "CREATE (:U {p: point({x: 0.0, y: 0.0})})");
    rows(&engine, &store, "CREATE (:U {p: point({x: -0.0, y: 0.0})})");
    let q = "MATCH (u:U) WHERE u.p = point({x: -0.0, y: 0}) RETURN count(u)";
    assert_eq!(rows(&engine, &store, q), vec![vec![ResultValue::Int(1)]]);
    rows(&engine, &store, "MERGE (:U {p: point({x: -0.0, y: 0.0})})");
    assert_eq!(rows(&engine, &store, "MATCH (u:U) RETURN count(u)"), vec![vec![ResultValue::Int(2)]]);
    let dup = engine.execute(&store, "CREATE (:U {p: point({x: 0.0, y: 0.0})})", &Params::new()).unwrap_err();
    assert!(dup.message.contains("point({x: 0.0, y: 0.0, crs: 'cartesian'})"), "{dup}");
    // From an entity's properties.
    rows(&engine, &store, "CREATE (:Place {longitude: 12.5, latitude: 56.0, name: 'x'})");
    let q = "MATCH (p:Place) RETURN point(p).srid, point(p).latitude";
    assert_eq!(rows(&engine, &store, q), vec![vec![ResultValue::Int(4326), ResultValue::Float(56.0)]]);
    // Neo4j's answers for these maps.
    let q = "RETURN point({longitude: 1, latitude: 2, z: 3, height: 4}).z, point({longitude: 540, latitude: 0}).x";
    assert_eq!(rows(&engine, &store, q), vec![vec![ResultValue::Float(3.0), ResultValue::Float(180.0)]]);
}

#[test]
fn points_are_found_through_indexes_and_unique_keys() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    rows(&engine, &store, "CREATE INDEX FOR (p:Place) ON (p.at)");
    rows(&engine, &store, "CREATE CONSTRAINT FOR (s:Site) REQUIRE s.at IS UNIQUE");
    rows(
        &engine,
        &store,
        "UNWIND range(0, 99) AS i CREATE (:Place {i: i, at: point({x: i % 10, y: i / 10})}), \
         (:Site {i: i, at: point({longitude: i, latitude: 0})})",
    );
    for label in ["Place", "Site"] {
        let at = if label == "Place" { "point({x: 3, y: 4})" } else { "point({longitude: 43, latitude: 0})" };
        let q = format!("MATCH (p:{label}) WHERE p.at = {at} RETURN p.i");
        assert_eq!(rows(&engine, &store, &q), vec![vec![ResultValue::Int(43)]], "{q}");
        // The plan seeks rather than scans, and `<=` finds the equal point only.
        let plan = engine.execute(&store, &format!("EXPLAIN {q}"), &Params::new()).unwrap();
        assert!(
            format!("{:?}", plan.plan).contains("Seek") || format!("{:?}", plan.plan).contains("Unique"),
            "{plan:?}"
        );
        let q = format!("MATCH (p:{label}) WHERE p.at <= {at} RETURN p.i");
        assert_eq!(rows(&engine, &store, &q), vec![vec![ResultValue::Int(43)]], "{q}");
        let q = format!("MATCH (p:{label}) WHERE p.at < {at} RETURN p.i");
        assert_eq!(rows(&engine, &store, &q), Vec::<Vec<ResultValue>>::new(), "{q}");
    }
    let dup = engine.execute(&store, "CREATE (:Site {at: point({longitude: 43, latitude: 0})})", &Params::new());
    let dup = dup.unwrap_err().to_string();
    assert!(dup.contains("ConstraintValidationFailed"), "{dup}");
    // A stored list holds points of one system.
    let mixed =
        engine.execute(&store, "CREATE (:X {l: [point({x: 1, y: 2}), point({x: 1, y: 2, z: 3})]})", &Params::new());
    assert!(mixed.is_err());
}

#[test]
fn points_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::new();
    {
        let (store, _) = Store::open(dir.path()).unwrap();
        rows(&engine, &store, "CREATE (:P {at: point({longitude: 12.78, latitude: 56.7, height: 100}), trail: [point({x: 1, y: 2}), point({x: -0.5, y: 1e300})]})");
    }
    let expect = vec![vec![
        pt(Crs::Wgs84_3d, &[12.78, 56.7, 100.0]),
        ResultValue::List(vec![pt(Crs::Cartesian, &[1.0, 2.0]), pt(Crs::Cartesian, &[-0.5, 1e300])]),
    ]];
    {
        // Replayed from the log, then checkpointed.
        let (store, _) = Store::open(dir.path()).unwrap();
        assert_eq!(rows(&engine, &store, "MATCH (p:P) RETURN p.at, p.trail"), expect);
        store.checkpoint().unwrap();
    }
    let (store, _) = Store::open(dir.path()).unwrap();
    assert_eq!(rows(&engine, &store, "MATCH (p:P) RETURN p.at, p.trail"), expect);
}
