//! Read results produced a batch at a time (`Engine::execute_read_streaming`), and `UNWIND range(...)` counted
//! out lazily: the rows match what the whole run returns, and the cursor keeps its snapshot.

use std::sync::Arc;

use plexus_cypher::{Engine, ErrorKind, Interrupt, Params, ResultValue, Value};
use plexus_storage::Store;
use proptest::prelude::*;

fn params(pairs: &[(&str, Value)]) -> Arc<Params> {
    Arc::new(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
}

fn streamed(engine: &Engine, store: &Store, q: &str, p: Arc<Params>, first: usize) -> Vec<Vec<ResultValue>> {
    engine.execute_read_streaming(store.read(), q, p, None, first).and_then(|s| s.collect()).unwrap().rows
}

#[test]
fn a_cursor_returns_the_rows_of_a_whole_run_and_keeps_its_snapshot() {
    let store = Store::in_memory();
    let engine = Engine::new();
    engine.execute(&store, "UNWIND range(1, 5000) AS i CREATE (:N {i: i})", &Params::new()).unwrap();
    let q = "MATCH (n:N) WHERE n.i % 3 = 0 RETURN n.i AS i, n";
    let whole = engine.execute(&store, q, &Params::new()).unwrap().rows;
    assert_eq!(streamed(&engine, &store, q, params(&[]), 10), whole);

    let stream = engine.execute_read_streaming(store.read(), q, params(&[]), None, 100).unwrap();
    assert!(stream.first.rows.len() >= 100 && stream.first.rows.len() < whole.len());
    let mut cursor = stream.rest.expect("more rows follow");
    engine.execute(&store, "MATCH (n:N) DETACH DELETE n", &Params::new()).unwrap();
    let mut rows = stream.first.rows;
    while let Some(batch) = cursor.next_batch().unwrap() {
        assert!(!batch.is_empty());
        rows.extend(batch);
    }
    assert!(cursor.is_done());
    assert_eq!(rows, whole, "deleted after the stream began, still read from its snapshot");
}

#[test]
fn small_results_and_statements_that_cannot_stream_come_whole() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let one = engine.execute_read_streaming(store.read(), "RETURN 1 AS x", params(&[]), None, 1000).unwrap();
    assert!(one.rest.is_none());
    assert_eq!(one.first.rows, vec![vec![ResultValue::Int(1)]]);
    let explain =
        engine.execute_read_streaming(store.read(), "EXPLAIN UNWIND range(1, 10) AS x RETURN x", params(&[]), None, 1);
    let explain = explain.unwrap();
    assert!(explain.rest.is_none() && explain.first.plan.is_some());
    let profile = engine.execute_read_streaming(
        store.read(),
        "PROFILE UNWIND range(1, 5000) AS x RETURN x",
        params(&[]),
        None,
        1,
    );
    let profile = profile.unwrap();
    assert!(profile.rest.is_none() && profile.first.rows.len() == 5000 && profile.first.plan.is_some());
    let missing = engine.execute_read_streaming(store.read(), "RETURN $p AS p", params(&[]), None, 1);
    assert_eq!(missing.err().unwrap().kind, ErrorKind::ParameterMissing);
}

#[test]
fn a_cursor_stops_when_interrupted() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let interrupt = Arc::new(Interrupt::new(None, None));
    let stream = engine
        .execute_read_streaming(
            store.read(),
            "UNWIND range(1, 1000000000) AS i RETURN i",
            params(&[]),
            Some(&interrupt),
            1,
        )
        .unwrap();
    let mut cursor = stream.rest.unwrap();
    assert!(cursor.next_batch().unwrap().is_some());
    interrupt.cancel();
    assert!(cursor.next_batch().is_err());
    assert!(cursor.is_done());
    assert_eq!(cursor.next_batch().unwrap(), None);
}

#[test]
fn unwinding_a_huge_range_holds_one_batch() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let q = "UNWIND range(9223372036854775000, 9223372036854775807, 1) AS i WITH i WHERE i % 100 = 7 RETURN i";
    let rows = streamed(&engine, &store, q, params(&[]), 1);
    let expected: Vec<_> = (0..9).map(|k| vec![ResultValue::Int(9223372036854775007 + 100 * k)]).collect();
    assert_eq!(rows, expected, "up to i64::MAX without overflow");
    // Far beyond what `range()` may build as a list, counted lazily under a LIMIT.
    let rows = streamed(&engine, &store, "UNWIND range(0, 4000000000000) AS i RETURN i LIMIT 3", params(&[]), 1);
    assert_eq!(rows.len(), 3);
    let listed = engine.execute(&store, "RETURN size(range(0, 4000000000000)) AS n", &Params::new());
    assert!(listed.is_err(), "a range as a value is still bounded");
    // All 2^64 integers: one more than a u64 counts.
    let q = "UNWIND range(-9223372036854775808, 9223372036854775807) AS x RETURN x LIMIT 2";
    assert_eq!(streamed(&engine, &store, q, params(&[]), 1).len(), 2);
    let q = "UNWIND range(9223372036854775807, -9223372036854775808, -1) AS x RETURN x LIMIT 2";
    assert_eq!(
        streamed(&engine, &store, q, params(&[]), 1),
        vec![vec![ResultValue::Int(i64::MAX)], vec![ResultValue::Int(i64::MAX - 1)]]
    );
    let whole = engine.execute(&store, "RETURN size(range(-9223372036854775808, 9223372036854775807))", &Params::new());
    assert!(whole.is_err(), "too long to build as a list");
    // EXPLAIN of a write is refused on a snapshot, as by `execute_read`: access control decides on it.
    let explain = engine.execute_read_streaming(store.read(), "EXPLAIN CREATE (:X)", params(&[]), None, 1);
    assert_eq!(explain.err().unwrap().detail, "WriteInReadOnlyTransaction");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// `UNWIND range(a, b, s)` gives the rows `UNWIND` of the same range built as a list gives, errors included.
    #[test]
    fn unwinding_a_range_matches_unwinding_its_list(
        start in -40i64..40,
        end in -40i64..40,
        step in prop_oneof![Just(0i64), -7i64..8, Just(i64::MIN), Just(i64::MAX)],
        with_step in any::<bool>(),
        null_arg in 0usize..6,
    ) {
        let store = Store::in_memory();
        let engine = Engine::new();
        let mut args = [Value::Int(start), Value::Int(end), Value::Int(step)];
        if null_arg < 3 {
            args[null_arg] = Value::Null;
        }
        let p = params(&[("a", args[0].clone()), ("b", args[1].clone()), ("s", args[2].clone())]);
        let call = if with_step { "range($a, $b, $s)" } else { "range($a, $b)" };
        let lazy = engine.execute(&store, &format!("UNWIND {call} AS i RETURN i"), &p);
        // The list, made opaque to the executor so that it is built and then unwound.
        let listed = engine.execute(&store, &format!("WITH {call} AS l UNWIND l AS i RETURN i"), &p);
        match (lazy, listed) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a.rows, b.rows),
            (Err(a), Err(b)) => prop_assert_eq!((a.kind, a.detail), (b.kind, b.detail)),
            (a, b) => prop_assert!(false, "lazy {:?} against listed {:?}", a.map(|r| r.rows), b.map(|r| r.rows)),
        }
    }
}

fn count(engine: &Engine, store: &Store, q: &str) -> Vec<ResultValue> {
    engine.execute(store, q, &Params::new()).unwrap().rows.remove(0)
}

#[test]
fn a_bulk_create_changes_its_rows_as_they_arrive_and_creates_every_one() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let q = "UNWIND $rows AS r CREATE (:P {id: r}) CREATE (:Q {id: r})";
    let rows = Value::list((0..3000).map(Value::Int).collect());
    let p: Params = [("rows".to_string(), rows)].into_iter().collect();
    let plan = engine.execute(&store, &format!("EXPLAIN {q}"), &p).unwrap().plan.unwrap();
    assert_eq!(plan.matches("rows as they arrive").count(), 2, "{plan}");
    let r = engine.execute(&store, q, &p).unwrap();
    assert_eq!(r.stats.nodes_created, 6000);
    let q = "MATCH (p:P) WITH count(p) AS p, sum(p.id) AS s MATCH (q:Q) RETURN p, s, count(q)";
    assert_eq!(count(&engine, &store, q), [3000, 2999 * 3000 / 2, 3000].map(ResultValue::Int));
}

#[test]
fn creates_whose_rows_or_input_read_the_graph_read_all_their_input_first() {
    let store = Store::in_memory();
    let engine = Engine::new();
    // Every row counts the nodes after all were created, not the ones created by the batches before it.
    let q = "UNWIND range(1, 3000) AS i CREATE (:X) WITH i, COUNT { (:X) } AS seen RETURN min(seen), max(seen)";
    assert_eq!(count(&engine, &store, q), [3000, 3000].map(ResultValue::Int));
    let plan = engine.execute(&store, &format!("EXPLAIN {q}"), &Params::new()).unwrap().plan.unwrap();
    assert!(!plan.contains("rows as they arrive"), "{plan}");
    // A CREATE whose values read the graph, after another CREATE: it sees every row of that one done.
    let chain = Store::in_memory();
    let q = "UNWIND range(1, 3000) AS i CREATE (:L) CREATE (:M {c: COUNT { (x:L) }, e: EXISTS { (:L)-->() }})";
    engine.execute(&chain, q, &Params::new()).unwrap();
    let q = "MATCH (m:M) RETURN min(m.c), max(m.c), count(*)";
    assert_eq!(count(&engine, &chain, q), [3000, 3000, 3000].map(ResultValue::Int));
    let plan = engine
        .execute(&chain, "EXPLAIN UNWIND range(1, 3) AS i CREATE (:L) CREATE (:M {c: COUNT { (x:L) }})", &Params::new())
        .unwrap()
        .plan
        .unwrap();
    assert!(!plan.contains("rows as they arrive"), "{plan}");
    // A MATCH feeding the CREATE sees the graph as it was before the statement: one new node per old one.
    engine.execute(&store, "MATCH (x:X) CREATE (:X)", &Params::new()).unwrap();
    assert_eq!(count(&engine, &store, "MATCH (x:X) RETURN count(x)"), [ResultValue::Int(6000)]);
}

#[test]
fn a_bulk_create_that_fails_part_way_leaves_nothing() {
    let store = Store::in_memory();
    let engine = Engine::new();
    // Fails at the 2000th row, after the first batches were created in the statement's transaction.
    let err = engine.execute(&store, "UNWIND range(1, 3000) AS i CREATE (:E {v: 10 / (2000 - i)})", &Params::new());
    assert!(err.is_err());
    assert_eq!(count(&engine, &store, "MATCH (e:E) RETURN count(e)"), [ResultValue::Int(0)]);
}

/// A subquery that writes finishes every row, whatever the batches, before a LIMIT stops its input or a later
/// clause reads the graph, as an updating clause does.
#[test]
fn a_writing_subquery_finishes_every_row_before_what_follows() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap();
    run("UNWIND range(1, 3000) AS i CREATE (:Z)");
    run("MATCH (n:Z) CALL (n) { SET n.x = 1 } RETURN n.x LIMIT 1");
    assert_eq!(count(&engine, &store, "MATCH (n:Z) WHERE n.x = 1 RETURN count(*)"), [ResultValue::Int(3000)]);
    run("UNWIND range(1, 5000) AS i CALL (i) { CREATE (:Q {i: i}) } RETURN i LIMIT 0");
    assert_eq!(count(&engine, &store, "MATCH (n:Q) RETURN count(*)"), [ResultValue::Int(5000)]);
    let q = "UNWIND range(1, 2000) AS i CALL (i) { CREATE (:R {i: i}) } WITH i MATCH (x:R) WHERE x.i > 1500 \
             RETURN count(*)";
    assert_eq!(count(&engine, &store, q), [ResultValue::Int(2000 * 500)]);
    let q = "UNWIND range(1, 2000) AS i CALL (i) { MATCH (q:R {i: i}) DETACH DELETE q } WITH i MATCH (m:R) \
             RETURN count(*)";
    assert_eq!(count(&engine, &store, q), [ResultValue::Int(0)]);
}

/// A row that fails is reported after the batches before it, even when none came first: the stream has begun.
/// What stops the statement itself (a missing parameter, a time limit) is an error at once.
#[test]
fn a_failing_row_is_reported_after_the_rows_before_it() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let q = "UNWIND range(1, 3000) AS x RETURN 10 / (x - 2500) AS y";
    let stream = engine.execute_read_streaming(store.read(), q, params(&[]), None, 3000).unwrap();
    assert_eq!(stream.first.columns.to_vec(), vec!["y".to_string()]);
    assert!(stream.first.rows.len() >= 1024 && stream.first.rows.len() < 2500, "{}", stream.first.rows.len());
    let mut cursor = stream.rest.expect("the failure follows the rows");
    assert!(!cursor.is_done());
    assert_eq!(cursor.next_batch().unwrap_err().kind, ErrorKind::ArithmeticError);
    assert!(cursor.is_done() && cursor.next_batch().unwrap().is_none());

    let first_row = "UNWIND [0] AS x RETURN 10 / x AS y";
    let stream = engine.execute_read_streaming(store.read(), first_row, params(&[]), None, 1000).unwrap();
    assert!(stream.first.rows.is_empty());
    let failed = engine.execute_read_streaming(store.read(), first_row, params(&[]), None, 1000).unwrap();
    assert_eq!(failed.failed_before_any_row().err().map(|e| e.kind), Some(ErrorKind::ArithmeticError));
    assert_eq!(stream.collect().unwrap_err().kind, ErrorKind::ArithmeticError);

    let stopped = Arc::new(Interrupt::new(None, None));
    stopped.cancel();
    let cancelled = engine.execute_read_streaming(store.read(), q, params(&[]), Some(&stopped), 1000);
    assert_eq!(cancelled.err().map(|e| e.kind), Some(ErrorKind::Terminated));
}
