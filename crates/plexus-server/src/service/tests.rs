use super::*;

fn service() -> Service {
    Service::new(Database::in_memory(), Auth::disabled(), Limits::default())
}

#[test]
fn roles_and_access_modes_are_enforced() {
    let s = service();
    let params = Params::new();
    let i = s.interrupt(ClientDeadline::ServerLimit);
    let err = s.run_auto_commit(Role::Reader, AccessMode::Write, "CREATE ()", &params, &i).err().unwrap();
    assert_eq!(err.code, "Neo.ClientError.Security.Forbidden");
    let err = s.run_auto_commit(Role::Writer, AccessMode::Read, "CREATE ()", &params, &i).err().unwrap();
    assert_eq!(err.code, "Neo.ClientError.Statement.AccessMode");
    let err = s
        .run_auto_commit(Role::Writer, AccessMode::Write, "CREATE INDEX FOR (n:L) ON (n.p)", &params, &i)
        .err()
        .unwrap();
    assert_eq!(err.code, "Neo.ClientError.Security.Forbidden");
    let ok = s.run_auto_commit(Role::Writer, AccessMode::Write, "CREATE (:A)", &params, &i).unwrap();
    assert_eq!(ok.query_type, "w");
    assert!(ok.bookmark.is_some());
    let ok = s.run_auto_commit(Role::Reader, AccessMode::Read, "MATCH (n) RETURN count(n)", &params, &i).unwrap();
    assert_eq!(ok.result.rows.len(), 1);
}

#[test]
fn a_run_past_its_budget_is_given_up_uncounted_and_writes_are_not_tried() {
    let s = service();
    let p = Params::new();
    let heavy = "UNWIND range(1, 5000) AS a UNWIND range(1, 5000) AS b RETURN count(*)";
    let tiny = Duration::from_millis(1);
    assert!(s.try_auto_commit_within(Role::Admin, AccessMode::Write, heavy, &p, tiny).is_none());
    let ample = Duration::from_secs(10);
    assert!(s.try_auto_commit_within(Role::Admin, AccessMode::Write, "CREATE ()", &p, ample).is_none());
    assert_eq!(s.db.read().node_count(), 0);
    let quick = s.try_auto_commit_within(Role::Admin, AccessMode::Write, "RETURN 1", &p, ample);
    assert_eq!(quick.unwrap().unwrap().result.rows.len(), 1);
    assert_eq!(s.metrics.queries_succeeded.load(Ordering::Relaxed), 1);
    assert_eq!(s.metrics.queries_failed.load(Ordering::Relaxed), 0);
}

#[test]
fn explicit_transactions_commit_and_roll_back() {
    let s = service();
    let params = Params::new();
    let i = s.interrupt(ClientDeadline::ServerLimit);
    let mut tx = s.begin(AccessMode::Write);
    s.run_in_transaction(&mut tx, Role::Admin, "CREATE (:T)", &params, &i).unwrap();
    s.rollback(tx);
    let mut tx = s.begin(AccessMode::Write);
    s.run_in_transaction(&mut tx, Role::Admin, "CREATE (:T)", &params, &i).unwrap();
    s.commit(Role::Admin, tx).unwrap();
    assert_eq!(s.db.read().node_count(), 1);
}

#[test]
fn errors_carry_neo4j_codes() {
    let s = service();
    let i = s.interrupt(ClientDeadline::ServerLimit);
    let err = s.run_auto_commit(Role::Admin, AccessMode::Write, "MATCH (n RETURN n", &Params::new(), &i);
    assert_eq!(err.err().unwrap().code, "Neo.ClientError.Statement.SyntaxError");
    let err = s.run_auto_commit(Role::Admin, AccessMode::Write, "RETURN $x", &Params::new(), &i);
    assert_eq!(err.err().unwrap().code, "Neo.ClientError.Statement.ParameterMissing");
}

#[test]
fn time_limits_stop_long_queries() {
    let s = Service::new(
        Database::in_memory(),
        Auth::disabled(),
        Limits { query_timeout: Some(Duration::from_millis(50)), max_result_bytes: None },
    );
    let i = s.interrupt(ClientDeadline::ServerLimit);
    let started = Instant::now();
    let err = s
        .run_auto_commit(
            Role::Admin,
            AccessMode::Read,
            "UNWIND range(1, 5000) AS a UNWIND range(1, 5000) AS b WITH a WHERE a < 0 RETURN count(*)",
            &Params::new(),
            &i,
        )
        .err()
        .unwrap();
    assert_eq!(err.code, "Neo.ClientError.Transaction.TransactionTimedOut", "the server's own limit");
    assert!(started.elapsed() < Duration::from_secs(5));
    // A shorter timeout the client set is reported as the client's.
    let i = s.interrupt(ClientDeadline::At(Instant::now() + Duration::from_millis(20)));
    let query = "UNWIND range(1, 5000) AS a UNWIND range(1, 5000) AS b WITH a WHERE a < 0 RETURN count(*)";
    let err = s.run_auto_commit(Role::Admin, AccessMode::Read, query, &Params::new(), &i).err().unwrap();
    assert_eq!(err.code, "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration");
}

#[test]
fn result_size_limits_are_enforced() {
    let s = Service::new(
        Database::in_memory(),
        Auth::disabled(),
        Limits { query_timeout: None, max_result_bytes: Some(10_000) },
    );
    let i = s.interrupt(ClientDeadline::ServerLimit);
    let err = s
        .run_auto_commit(Role::Admin, AccessMode::Read, "UNWIND range(1, 10000) AS x RETURN x", &Params::new(), &i)
        .err()
        .unwrap();
    assert_eq!(err.code, "Neo.ClientError.General.TransactionOutOfMemoryError");
}
