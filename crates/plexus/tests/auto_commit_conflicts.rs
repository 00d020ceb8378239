//! Auto-commit statements (`Database::execute`) that write the same data from many threads: each one that
//! meets a write conflict at commit runs again on a newer snapshot, so none fails and no update is lost, as
//! with a database that makes writers wait for a lock. The parts of `CALL { } IN TRANSACTIONS` run again the
//! same way, each on its own. A statement calling a procedure of the embedding program is not run again, nor
//! are its parts (the procedure's effects outside the graph would repeat): its conflict is reported.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use plexus::cypher::{ParamType, ProcedureSignature, ResultValue, Value};
use plexus::{Database, Params};

const THREADS: usize = 8;
const INCREMENTS: usize = 200;

#[test]
fn contended_auto_commit_increments_all_land() {
    let db = Arc::new(Database::in_memory());
    db.execute("CREATE (:Counter {n: 0})", &Params::new()).unwrap();
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            let db = db.clone();
            scope.spawn(move || {
                for _ in 0..INCREMENTS {
                    db.execute("MATCH (c:Counter) SET c.n = c.n + 1", &Params::new()).expect("no conflict escapes");
                }
            });
        }
    });
    assert_eq!(counter_of(&db, "Counter"), (THREADS * INCREMENTS) as i64);
}

#[test]
fn a_statement_calling_a_program_procedure_reports_its_conflict() {
    let db = Arc::new(Database::in_memory());
    db.execute("CREATE (:Counter {n: 0})", &Params::new()).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let signature = ProcedureSignature {
        name: "test.tick".into(),
        outputs: vec![("x".into(), ParamType::Integer)],
        ..Default::default()
    };
    db.register_procedure(signature, move |_| {
        seen.fetch_add(1, Ordering::Relaxed);
        Ok(vec![vec![Value::Int(1)]])
    });
    let (failed, succeeded) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            let db = db.clone();
            let (failed, succeeded) = (&failed, &succeeded);
            scope.spawn(move || {
                for _ in 0..INCREMENTS {
                    let query = "CALL test.tick() YIELD x MATCH (c:Counter) SET c.n = c.n + x";
                    match db.execute(query, &Params::new()) {
                        Ok(_) => succeeded.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            assert!(e.is_retryable(), "{e}");
                            failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            });
        }
    });
    let (failed, succeeded) = (failed.into_inner(), succeeded.into_inner());
    assert_eq!(calls.load(Ordering::Relaxed), THREADS * INCREMENTS, "each statement called it once");
    assert_eq!(counter_of(&db, "Counter"), succeeded as i64);
    assert_eq!(failed + succeeded, THREADS * INCREMENTS);
}

/// Statements that take milliseconds, from more threads than cores, all writing one node: their reruns take
/// turns, so they complete at the rate one statement runs instead of each losing its rerun to the next.
#[test]
fn slow_contended_statements_take_turns_and_all_land() {
    let db = Arc::new(Database::in_memory());
    db.execute("CREATE (:Counter {n: 0})", &Params::new()).unwrap();
    let query = "MATCH (c:Counter) WITH c, reduce(s = 0, x IN range(1, $work) | s + x) AS z SET c.n = c.n + 1";
    // About 5 ms a statement on this machine and build.
    let mut work = 10_000i64;
    loop {
        let params = Params::from([("work".to_string(), Value::Int(work))]);
        let started = std::time::Instant::now();
        db.execute(query, &params).unwrap();
        if started.elapsed() >= std::time::Duration::from_millis(5) || work > 10_000_000 {
            break;
        }
        work *= 2;
    }
    let before = counter_of(&db, "Counter");
    const CLIENTS: usize = 64;
    std::thread::scope(|scope| {
        for _ in 0..CLIENTS {
            let db = db.clone();
            scope.spawn(move || {
                let params = Params::from([("work".to_string(), Value::Int(work))]);
                for _ in 0..3 {
                    db.execute(query, &params).expect("every statement lands");
                }
            });
        }
    });
    assert_eq!(counter_of(&db, "Counter"), before + (CLIENTS * 3) as i64);
}

/// Statements committing in parts of a few rows, from several threads, all incrementing one node: a part whose
/// commit meets a conflict runs again (its input rows are fixed), so every statement lands whole, with or
/// without ON ERROR, and no part is reported failed.
#[test]
fn contended_parts_of_call_in_transactions_all_land() {
    let db = Arc::new(Database::in_memory());
    db.execute("CREATE (:Counter {n: 0})", &Params::new()).unwrap();
    const ROWS: i64 = 40;
    let statements = [
        "UNWIND range(1, $rows) AS i CALL (i) { MATCH (c:Counter) WITH c, reduce(s = 0, x IN range(1, 20000) | s + x) \
         AS z SET c.n = c.n + 1 } IN TRANSACTIONS OF 4 ROWS",
        "UNWIND range(1, $rows) AS i CALL (i) { MATCH (c:Counter) WITH c, reduce(s = 0, x IN range(1, 20000) | s + x) \
         AS z SET c.n = c.n + 1 } IN TRANSACTIONS OF 4 ROWS ON ERROR CONTINUE REPORT STATUS AS s \
         WITH s WHERE NOT s.committed RETURN count(*) AS failed",
    ];
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let db = db.clone();
            let query = statements[t % 2];
            scope.spawn(move || {
                let params = Params::from([("rows".to_string(), Value::Int(ROWS))]);
                for _ in 0..5 {
                    let result = db.execute(query, &params).expect("every statement lands");
                    if let Some(row) = result.rows.first() {
                        assert_eq!(row[0], ResultValue::Int(0), "no part failed");
                    }
                }
            });
        }
    });
    assert_eq!(counter_of(&db, "Counter"), THREADS as i64 * 5 * ROWS);
}

/// A part of `CALL { } IN TRANSACTIONS ... ON ERROR CONTINUE` whose commit meets a write conflict, and which does
/// not run again (it calls a procedure of the program), fails as a part whose row failed: reported with
/// `committed: false`, and the statement goes on in a new transaction. (The procedure commits a write to the
/// same node from another transaction while each part runs.)
#[test]
fn a_conflicting_part_under_on_error_continue_is_reported_and_skipped() {
    let db = Arc::new(Database::in_memory());
    db.execute("CREATE (:X {n: 0})", &Params::new()).unwrap();
    register_interfering(&db, "test.interfere", |_| true);
    let query = "UNWIND [1, 2, 3] AS i \
                 CALL (i) { CALL test.interfere(i) YIELD ok MATCH (x:X) SET x.n = x.n + 1 } \
                 IN TRANSACTIONS OF 1 ROW ON ERROR CONTINUE REPORT STATUS AS s \
                 RETURN i, s.committed AS committed, s.errorMessage IS NOT NULL AS failed";
    let result = db.execute(query, &Params::new()).expect("the statement goes on past the conflicts");
    for row in &result.rows {
        assert_eq!(row[1..], [ResultValue::Bool(false), ResultValue::Bool(true)], "{row:?}");
    }
    assert_eq!(result.rows.len(), 3);
    assert_eq!(counter_of(&db, "X"), 300, "only the interfering writes landed");
}

/// Registers procedure `name(i)`, which for the `i` that `when` picks commits a write to the `:X` node from a
/// transaction of its own (so that the statement calling it then conflicts) and yields `ok`.
fn register_interfering(db: &Arc<Database>, name: &str, when: impl Fn(i64) -> bool + Send + Sync + 'static) {
    let other = Arc::downgrade(db);
    let signature = ProcedureSignature {
        name: name.into(),
        inputs: vec![("i".into(), ParamType::Integer)],
        outputs: vec![("ok".into(), ParamType::Integer)],
        ..Default::default()
    };
    db.register_procedure(signature, move |args| {
        if matches!(args[0], Value::Int(i) if when(i)) {
            let db = other.upgrade().expect("the database is open");
            db.execute("MATCH (x:X) SET x.n = x.n + 100", &Params::new()).expect("the interfering write commits");
        }
        Ok(vec![vec![Value::Int(1)]])
    });
}

fn counter_of(db: &Database, label: &str) -> i64 {
    match db.execute(&format!("MATCH (c:{label}) RETURN c.n"), &Params::new()).unwrap().rows[0][0] {
        ResultValue::Int(n) => n,
        ref other => panic!("an integer, got {other:?}"),
    }
}

/// Without ON ERROR CONTINUE, such a conflict stops the statement, and since its earlier parts stay committed
/// the error is not a retryable conflict (retrying the statement would repeat them).
#[test]
fn a_conflict_stopping_a_statement_that_committed_parts_is_not_retryable() {
    let db = Arc::new(Database::in_memory());
    db.execute("CREATE (:X {n: 0})", &Params::new()).unwrap();
    register_interfering(&db, "test.interfere_late", |i| i == 2);
    let query = "UNWIND [1, 2, 3] AS i \
                 CALL (i) { CALL test.interfere_late(i) YIELD ok MATCH (x:X) SET x.n = x.n + 1 } \
                 IN TRANSACTIONS OF 1 ROW";
    let e = db.execute(query, &Params::new()).expect_err("the second part conflicts");
    assert!(!e.is_retryable(), "{e}");
    assert_eq!(e.kind, plexus::cypher::ErrorKind::ExecutionFailed, "{e}");
    assert_eq!(counter_of(&db, "X"), 101, "the first part and the interfering write stay");
}
