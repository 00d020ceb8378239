//! Large read results over Bolt are produced as the client pulls them: a result larger than the server's
//! result-size limit still streams, a DISCARD stops the work, a later row's error ends the stream after the
//! rows before it, and a stream in a read transaction keeps reading the snapshot it started on.

mod support;

use plexus_server::auth::Auth;
use plexus_server::packstream::{map, Ps};
use plexus_server::ServerConfig;
use support::{Client, TestServer};

/// A server whose results may hold at most `bytes` at once.
fn with_result_limit(bytes: usize) -> TestServer {
    let config = ServerConfig {
        bolt: "127.0.0.1:0".into(),
        http: String::new(),
        auth: false,
        max_result_bytes: bytes,
        ..Default::default()
    };
    TestServer::start(config, Auth::disabled())
}

fn has_more(summary: &Ps) -> bool {
    match summary {
        Ps::Struct(0x70, f) => f[0].get("has_more") == Some(&Ps::Bool(true)),
        other => panic!("expected SUCCESS, got {other:?}"),
    }
}

fn run(c: &mut Client, query: &str) -> Ps {
    c.request(0x10, vec![Ps::String(query.into()), map([]), map([])]).remove(0)
}

#[test]
fn a_result_larger_than_the_result_limit_streams_in_pulls() {
    // 200,000 strings of 100 bytes: 20 MB, against a limit of 4 MB held at once.
    let s = with_result_limit(4 << 20);
    let mut c = Client::ready(s.addr);
    let query = "UNWIND range(1, 200000) AS i RETURN i AS i, 'x' + substring(reduce(s = '', k IN range(1, 10) | s + '0123456789'), 1) AS pad";
    let r = run(&mut c, query);
    assert!(matches!(r, Ps::Struct(0x70, _)), "{r:?}");
    let mut expected = 1i64;
    loop {
        let (records, summary) = c.pull(5000, None);
        for r in records {
            assert_eq!(r, Ps::Int(expected));
            expected += 1;
        }
        if !has_more(&summary) {
            match &summary {
                Ps::Struct(0x70, f) => assert!(f[0].get("bookmark").is_some(), "{summary:?}"),
                other => panic!("{other:?}"),
            }
            break;
        }
    }
    assert_eq!(expected, 200_001);
}

#[test]
fn discard_stops_a_result_that_would_never_fit() {
    let s = with_result_limit(1 << 20);
    let mut c = Client::ready(s.addr);
    assert!(matches!(run(&mut c, "UNWIND range(1, 1000000000) AS i RETURN i"), Ps::Struct(0x70, _)));
    let (records, summary) = c.pull(3, None);
    assert_eq!(records, vec![Ps::Int(1), Ps::Int(2), Ps::Int(3)]);
    assert!(has_more(&summary));
    let discarded = c.request(0x2F, vec![map([("n", Ps::Int(-1))])]);
    assert_eq!(discarded.len(), 1);
    assert!(matches!(&discarded[0], Ps::Struct(0x70, f) if f[0].get("has_more").is_none()), "{discarded:?}");
    assert_eq!(c.query("RETURN 7 AS x").0, vec![Ps::Int(7)]);
}

#[test]
fn an_error_in_a_later_row_ends_the_stream_after_the_rows_before_it() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    assert!(matches!(run(&mut c, "UNWIND range(1, 3000) AS x RETURN 100 / (2500 - x) AS q"), Ps::Struct(0x70, _)));
    let mut responses = c.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
    let failure = responses.pop().unwrap();
    // Rows go out a batch at a time, and the failing row's batch fails whole: more than the 1,000 produced
    // before RUN was answered, fewer than the 2,499 before the failing row.
    assert!((1000..2499).contains(&responses.len()), "{} rows before the failure", responses.len());
    for (i, r) in responses.iter().enumerate() {
        let x = i as i64 + 1;
        assert_eq!(r, &Ps::Struct(0x71, vec![Ps::List(vec![Ps::Int(100 / (2500 - x))])]));
    }
    match failure {
        Ps::Struct(0x7F, f) => {
            assert_eq!(f[0].get("code").and_then(Ps::as_str), Some("Neo.ClientError.Statement.ArithmeticError"))
        }
        other => panic!("{other:?}"),
    }
    // Failed until RESET, then serving again.
    assert_eq!(c.request(0x3F, vec![map([("n", Ps::Int(-1))])]), vec![Ps::Struct(0x7E, vec![])]);
    assert!(matches!(&c.request(0x0F, vec![])[0], Ps::Struct(0x70, _)));
    assert_eq!(c.query("RETURN 1 AS one").0, vec![Ps::Int(1)]);
}

#[test]
fn a_stream_in_a_read_transaction_reads_its_snapshot() {
    let s = TestServer::open();
    let mut writer = Client::ready(s.addr);
    writer.query("UNWIND range(1, 5000) AS i CREATE (:Item {i: i})");
    let mut reader = Client::ready(s.addr);
    assert!(matches!(&reader.request(0x11, vec![map([("mode", Ps::String("r".into()))])])[0], Ps::Struct(0x70, _)));
    assert!(matches!(run(&mut reader, "MATCH (n:Item) RETURN n.i AS i"), Ps::Struct(0x70, _)));
    assert!(matches!(run(&mut reader, "MATCH (n:Item) RETURN count(*) AS c"), Ps::Struct(0x70, _)));
    let (first, summary) = reader.pull(1500, Some(1));
    assert_eq!(first.len(), 1500);
    assert!(has_more(&summary));
    // Written and committed while the reader is part-way through its stream.
    writer.query("UNWIND range(5001, 8000) AS i CREATE (:Item {i: i})");
    writer.query("MATCH (n:Item) WHERE n.i <= 100 DETACH DELETE n");
    let (rest, summary) = reader.pull(-1, Some(1));
    assert!(!has_more(&summary));
    let mut seen: Vec<i64> = first.iter().chain(&rest).map(|v| v.as_int().unwrap()).collect();
    seen.sort_unstable();
    assert_eq!(seen, (1..=5000).collect::<Vec<_>>());
    let (count, _) = reader.pull(-1, Some(2));
    assert_eq!(count, vec![Ps::Int(5000)]);
    assert!(matches!(&reader.request(0x12, vec![])[0], Ps::Struct(0x70, _)));
    assert_eq!(reader.query("MATCH (n:Item) RETURN count(*) AS c").0, vec![Ps::Int(7900)]);
}

#[test]
fn pulling_everything_at_once_goes_out_in_pieces() {
    // 20 MB of records for one PULL of n = -1: written out as they are made, under a 4 MB result limit.
    let s = with_result_limit(4 << 20);
    let mut c = Client::ready(s.addr);
    let query = "UNWIND range(1, 200000) AS i RETURN i AS i, 'x' + substring(reduce(s = '', k IN range(1, 10) | s + '0123456789'), 1) AS pad";
    assert!(matches!(run(&mut c, query), Ps::Struct(0x70, _)));
    c.send(0x3F, vec![map([("n", Ps::Int(-1))])]);
    // Pipelined behind the PULL: answered once it is done.
    c.send(0x10, vec![Ps::String("RETURN 5 AS five".into()), map([]), map([])]);
    c.send(0x3F, vec![map([("n", Ps::Int(-1))])]);
    let mut expected = 1i64;
    loop {
        match c.receive().unwrap() {
            Ps::Struct(0x71, f) => {
                assert_eq!(
                    f[0],
                    Ps::List(vec![Ps::Int(expected), Ps::String(format!("x{}", &"0123456789".repeat(10)[1..]))])
                );
                expected += 1;
            }
            Ps::Struct(0x70, f) => {
                assert!(f[0].get("has_more").is_none(), "{f:?}");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(expected, 200_001);
    assert!(matches!(&c.responses()[0], Ps::Struct(0x70, _)));
    let last = c.responses();
    assert_eq!(last[0], Ps::Struct(0x71, vec![Ps::List(vec![Ps::Int(5)])]));
}

#[test]
fn stopping_the_server_stops_a_stream_being_pulled() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    assert!(matches!(run(&mut c, "UNWIND range(1, 1000000000000) AS i RETURN i"), Ps::Struct(0x70, _)));
    // Everything: far more than could be made before the server stops.
    c.send(0x3F, vec![map([("n", Ps::Int(-1))])]);
    let mut records = 0u64;
    while records < 50_000 {
        assert!(matches!(c.receive().unwrap(), Ps::Struct(0x71, _)));
        records += 1;
    }
    let mut s = s;
    let server = s.server.take().unwrap();
    let runtime = &s.runtime;
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        // Running work gets 2 s to finish, then is stopped.
        let stopping = scope.spawn(move || runtime.block_on(server.shutdown(std::time::Duration::from_secs(2))));
        let failure = loop {
            match c.receive() {
                Ok(Ps::Struct(0x71, _)) => records += 1,
                Ok(other) => break Some(other),
                Err(_) => break None,
            }
        };
        match failure {
            Some(Ps::Struct(0x7F, f)) => assert_eq!(
                f[0].get("code").and_then(Ps::as_str),
                Some("Neo.TransientError.General.DatabaseUnavailable"),
                "after {records} records"
            ),
            other => panic!("the stream should end in a transient failure, got {other:?} after {records} records"),
        }
        stopping.join().unwrap().unwrap();
    });
    assert!(started.elapsed() < std::time::Duration::from_secs(12), "stopping took {:?}", started.elapsed());
}

#[test]
fn a_partial_discard_skips_only_what_it_names() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    assert!(matches!(run(&mut c, "UNWIND range(1, 5000) AS i RETURN i"), Ps::Struct(0x70, _)));
    let discarded = c.request(0x2F, vec![map([("n", Ps::Int(10))])]);
    assert!(has_more(&discarded[0]), "{discarded:?}");
    let (rest, summary) = c.pull(-1, None);
    assert!(!has_more(&summary));
    assert_eq!(rest.len(), 4990);
    assert_eq!(rest[0], Ps::Int(11));
}

/// A Bolt server without auth whose time limit is `ms` milliseconds.
fn with_time_limit(ms: u64) -> TestServer {
    let config = ServerConfig {
        bolt: "127.0.0.1:0".into(),
        http: String::new(),
        auth: false,
        query_timeout_ms: ms,
        ..Default::default()
    };
    TestServer::start(config, Auth::disabled())
}

#[test]
fn the_time_limit_counts_producing_rows_not_the_client_reading_them() {
    let s = with_time_limit(1000);
    let mut c = Client::ready(s.addr);
    assert!(matches!(run(&mut c, "UNWIND range(1, 5000) AS i RETURN i"), Ps::Struct(0x70, _)));
    let (first, _) = c.pull(1000, None);
    assert_eq!(first.len(), 1000);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let (rest, summary) = c.pull(-1, None);
    assert!(!has_more(&summary), "{summary:?}");
    assert_eq!(rest.len(), 4000);
}

/// A driver's transaction timeout replaces the server's time limit, longer or shorter, and 0 means none, as in
/// Neo4j 5.3 and later: a batch job that says how long it needs is not stopped at the interactive limit.
#[test]
fn a_drivers_timeout_replaces_the_servers_time_limit() {
    let s = with_time_limit(1);
    let mut c = Client::ready(s.addr);
    let slow = "UNWIND range(1, 3000000) AS x WITH x WHERE x < 0 RETURN count(*) AS n";
    let code = |r: &Ps| match r {
        Ps::Struct(0x7F, f) => f[0].get("code").and_then(Ps::as_str).unwrap_or_default().to_string(),
        other => format!("{other:?}"),
    };
    let with_timeout = |c: &mut Client, ms: Option<i64>| {
        let extra = ms.map_or(map([]), |ms| map([("tx_timeout", Ps::Int(ms))]));
        let r = c.request(0x10, vec![Ps::String(slow.into()), map([]), extra]).remove(0);
        let answer = if matches!(r, Ps::Struct(0x70, _)) {
            let mut pulled = c.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
            let summary = pulled.pop().unwrap();
            if matches!(summary, Ps::Struct(0x70, _)) {
                "done".to_string()
            } else {
                code(&summary)
            }
        } else {
            code(&r)
        };
        c.request(0x0F, vec![]);
        answer
    };
    assert_eq!(with_timeout(&mut c, None), "Neo.ClientError.Transaction.TransactionTimedOut");
    assert_eq!(with_timeout(&mut c, Some(0)), "done", "0 is no limit");
    assert_eq!(with_timeout(&mut c, Some(600_000)), "done", "longer than the server's limit");
    assert_eq!(with_timeout(&mut c, Some(2)), "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration");
    // In an explicit transaction, the timeout BEGIN gave.
    let begin = c.request(0x11, vec![map([("tx_timeout", Ps::Int(0))])]);
    assert!(matches!(&begin[0], Ps::Struct(0x70, _)), "{begin:?}");
    assert_eq!(with_timeout(&mut c, None), "done");
}

#[test]
fn explain_of_a_write_in_read_mode_is_refused_as_the_write_would_be() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let read = map([("mode", Ps::String("r".into()))]);
    let r = c.request(0x10, vec![Ps::String("EXPLAIN CREATE (:X)".into()), map([]), read.clone()]);
    match &r[0] {
        Ps::Struct(0x7F, f) => {
            assert_eq!(f[0].get("code").and_then(Ps::as_str), Some("Neo.ClientError.Statement.AccessMode"))
        }
        other => panic!("{other:?}"),
    }
    c.request(0x0F, vec![]);
    // In write mode it is explained and runs nothing.
    assert!(matches!(run(&mut c, "EXPLAIN CREATE (:X)"), Ps::Struct(0x70, _)));
    c.pull(-1, None);
    assert!(matches!(&c.request(0x11, vec![read])[0], Ps::Struct(0x70, _)));
    let r = c.request(0x10, vec![Ps::String("EXPLAIN CREATE (:X)".into()), map([]), map([])]);
    assert!(matches!(&r[0], Ps::Struct(0x7F, _)), "{r:?}");
    c.request(0x0F, vec![]);
    assert_eq!(c.query("MATCH (x:X) RETURN count(x) AS c").0, vec![Ps::Int(0)]);
}

/// A client pulling an auto-commit result batch by batch keeps getting rows while the server stops, and after
/// the grace period its next PULL fails with a retryable error instead of finding the connection closed.
#[test]
fn an_auto_commit_result_pulled_in_batches_goes_on_through_a_stop() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    assert!(matches!(run(&mut c, "UNWIND range(1, 1000000000000) AS i RETURN i"), Ps::Struct(0x70, _)));
    let (first, _) = c.pull(1000, None);
    assert_eq!(first.len(), 1000);
    let mut s = s;
    let server = s.server.take().unwrap();
    let runtime = &s.runtime;
    std::thread::scope(|scope| {
        let stopping = scope.spawn(move || runtime.block_on(server.shutdown(std::time::Duration::from_secs(2))));
        std::thread::sleep(std::time::Duration::from_millis(300));
        let (mut pulled, mut failure) = (0usize, None);
        for _ in 0..100_000 {
            c.send(0x3F, vec![map([("n", Ps::Int(1000))])]);
            let mut summary = None;
            while summary.is_none() {
                match c.receive() {
                    Ok(Ps::Struct(0x71, _)) => pulled += 1,
                    Ok(other) => summary = Some(other),
                    Err(e) => panic!("the connection closed under the stream after {pulled} rows: {e}"),
                }
            }
            if let Some(Ps::Struct(0x7F, f)) = summary {
                failure = f[0].get("code").and_then(Ps::as_str).map(str::to_string);
                break;
            }
        }
        assert!(pulled >= 1000, "no rows were served once the server began to stop");
        assert_eq!(failure.as_deref(), Some("Neo.TransientError.General.DatabaseUnavailable"), "after {pulled} rows");
        stopping.join().unwrap().unwrap();
    });
}

/// A read in a write transaction streams too, past the result limit, and sees the transaction's own writes made
/// before it (not those made after it started); the transaction then commits as usual.
#[test]
fn a_read_in_a_write_transaction_streams_its_own_writes() {
    let s = with_result_limit(4 << 20);
    let mut c = Client::ready(s.addr);
    assert!(matches!(&c.request(0x11, vec![map([])])[0], Ps::Struct(0x70, _)));
    assert!(matches!(run(&mut c, "UNWIND range(1, 3000) AS i CREATE (:Mine {i: i})"), Ps::Struct(0x70, _)));
    c.pull(-1, None);
    // 300,000 rows of 100 bytes: built whole, over the 4 MB limit.
    let big = "MATCH (m:Mine) UNWIND range(1, 100) AS k RETURN m.i AS i, k AS k, 'x' + substring(reduce(s = '', j IN range(1, 10) | s + '0123456789'), 1) AS pad";
    assert!(matches!(run(&mut c, big), Ps::Struct(0x70, _)));
    let (first, summary) = c.pull(1000, None);
    assert_eq!(first.len(), 1000);
    assert!(has_more(&summary));
    let mut total = first.len();
    loop {
        let (rows, summary) = c.pull(20000, None);
        total += rows.len();
        if !has_more(&summary) {
            break;
        }
    }
    assert_eq!(total, 300_000);
    assert!(matches!(run(&mut c, "MATCH (m:Mine) RETURN count(*) AS c"), Ps::Struct(0x70, _)));
    assert_eq!(c.pull(-1, None).0, vec![Ps::Int(3000)]);
    assert!(matches!(&c.request(0x12, vec![])[0], Ps::Struct(0x70, _)));
    assert_eq!(c.query("MATCH (m:Mine) RETURN count(*) AS c").0, vec![Ps::Int(3000)]);
}
