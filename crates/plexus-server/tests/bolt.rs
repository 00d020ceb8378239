//! Bolt over real sockets with a minimal client written here: the conversation drivers have, and everything a
//! hostile or broken client can send (garbage, truncated frames, huge declared sizes, idle and slow
//! connections). After each abuse the server must still serve a well-behaved client.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use plexus_server::auth::Auth;
use plexus_server::bolt::session::chunk;
use plexus_server::packstream::{map, Encoder, Ps};
use plexus_server::service::Service;
use plexus_server::ServerConfig;
use support::{assert_healthy, basic_credentials, bolt_only_with_message_limit, Client, TestServer};

#[test]
fn pull_in_batches_and_pipelining() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    c.send(0x10, vec![Ps::String("UNWIND range(1, 10) AS x RETURN x".into()), map([]), map([])]);
    c.send(0x3F, vec![map([("n", Ps::Int(4))])]);
    c.send(0x3F, vec![map([("n", Ps::Int(4))])]);
    c.send(0x3F, vec![map([("n", Ps::Int(4))])]);
    let run = c.responses();
    assert!(matches!(&run[0], Ps::Struct(0x70, _)));
    let first = c.responses();
    assert_eq!(first.len(), 5);
    assert_eq!(first[4], Ps::Struct(0x70, vec![map([("has_more", Ps::Bool(true))])]));
    assert_eq!(c.responses().len(), 5);
    let last = c.responses();
    assert_eq!(last.len(), 3, "two records and the summary");
    match &last[2] {
        Ps::Struct(0x70, f) => assert!(f[0].get("bookmark").is_some()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn failures_ignore_until_reset() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let r = c.request(0x10, vec![Ps::String("RETURN (".into()), map([]), map([])]);
    match &r[0] {
        Ps::Struct(0x7F, f) => {
            assert_eq!(f[0].get("code").and_then(Ps::as_str), Some("Neo.ClientError.Statement.SyntaxError"));
            // Located as Neo4j words it: the offset, then the line quoted with a caret under the place.
            let message = f[0].get("message").and_then(Ps::as_str).unwrap_or_default();
            assert!(message.ends_with("(line 1, column 9 (offset: 8))\n\"RETURN (\"\n         ^"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.request(0x3F, vec![map([("n", Ps::Int(-1))])]), vec![Ps::Struct(0x7E, vec![])]);
    assert!(matches!(&c.request(0x0F, vec![])[0], Ps::Struct(0x70, _)));
    assert_eq!(c.query("RETURN 1 AS one").0, vec![Ps::Int(1)]);
}

/// A session closed in the middle of a result: the JavaScript driver sends RESET and, when the PULL's reply
/// crosses it, then the DISCARD it chose for the result. That DISCARD finds nothing to do and the connection
/// stays usable; a DISCARD with no result and no such RESET before it is still a protocol breach.
#[test]
fn a_discard_crossing_the_reset_of_its_result_keeps_the_connection() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    c.request(0x10, vec![Ps::String("UNWIND range(1, 100) AS x RETURN x".into()), map([]), map([])]);
    let (rows, summary) = c.pull(10, None);
    assert_eq!(rows.len(), 10);
    assert_eq!(summary, Ps::Struct(0x70, vec![map([("has_more", Ps::Bool(true))])]));
    assert_eq!(c.request(0x0F, vec![]), vec![Ps::Struct(0x70, vec![map([])])]);
    assert_eq!(c.request(0x2F, vec![map([("n", Ps::Int(-1))])]), vec![Ps::Struct(0x70, vec![map([])])]);
    assert_eq!(c.query("RETURN 1 AS one").0, vec![Ps::Int(1)]);

    // Only right after the RESET: a second DISCARD, or one after a RESET that closed nothing, is refused.
    assert!(matches!(&c.request(0x0F, vec![])[0], Ps::Struct(0x70, _)));
    match &c.request(0x2F, vec![map([("n", Ps::Int(-1))])])[0] {
        Ps::Struct(0x7F, f) => {
            let message = f[0].get("message").and_then(Ps::as_str).unwrap_or_default();
            assert!(message.contains("cannot be handled by a session in the READY state"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn authentication_is_required_and_checked() {
    let (_users, s) = TestServer::with_password("pw");
    let (mut c, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    c.request(0x01, vec![map([("user_agent", Ps::String("t".into()))])]);
    // Nothing runs before LOGON.
    let r = c.request(0x10, vec![Ps::String("RETURN 1".into()), map([]), map([])]);
    assert!(matches!(&r[0], Ps::Struct(0x7F, _)));
    assert!(c.is_closed());

    let (mut c, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    c.request(0x01, vec![map([("user_agent", Ps::String("t".into()))])]);
    let creds = |p: &str| basic_credentials("neo4j", p);
    let r = c.request(0x6A, vec![creds("wrong")]);
    match &r[0] {
        Ps::Struct(0x7F, f) => {
            assert_eq!(f[0].get("code").and_then(Ps::as_str), Some("Neo.ClientError.Security.Unauthorized"))
        }
        other => panic!("{other:?}"),
    }
    assert!(c.is_closed());

    let (mut c, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    c.request(0x01, vec![map([("user_agent", Ps::String("t".into()))])]);
    assert!(matches!(&c.request(0x6A, vec![creds("pw")])[0], Ps::Struct(0x70, _)));
    assert_eq!(c.query("RETURN 1 AS one").0, vec![Ps::Int(1)]);
}

/// Connections logged on as the admin `neo4j` (password `pw`) and as a writer `w` it creates.
fn admin_and_writer(s: &TestServer) -> (Client, Client) {
    let mut admin = Client::logged_on(s.addr, "neo4j", "pw");
    admin.query("CREATE USER w SET PASSWORD 'w-password' CHANGE NOT REQUIRED");
    admin.query("GRANT ROLE writer TO w");
    (admin, Client::logged_on(s.addr, "w", "w-password"))
}

/// A user's rights follow changes made while it is logged on: a revoked role applies to its next statement on a
/// connection it already has, and a dropped user can run nothing more there.
#[test]
fn revoking_or_dropping_a_user_applies_to_its_open_connections() {
    let (_users, s) = TestServer::with_password("pw");
    let (mut admin, mut w) = admin_and_writer(&s);
    assert_eq!(w.query("CREATE (n:T) RETURN count(n)").0, vec![Ps::Int(1)]);
    admin.query("REVOKE ROLE writer FROM w");
    assert_eq!(w.run_failure("CREATE (:T)", map([])), "Neo.ClientError.Security.Forbidden");
    assert!(matches!(&w.request(0x0F, vec![])[0], Ps::Struct(0x70, _)), "RESET");
    assert_eq!(w.query("MATCH (n:T) RETURN count(n)").0, vec![Ps::Int(1)], "a reader still reads");
    admin.query("DROP USER w");
    assert_eq!(w.run_failure("MATCH (n) RETURN count(n)", map([])), "Neo.ClientError.Security.Unauthorized");
    assert!(w.is_closed());
}

/// The rest of an open result and the commit of an open transaction are messages like any other: a user demoted
/// or dropped since cannot commit its writes nor read on.
#[test]
fn a_demoted_or_dropped_user_cannot_commit_or_read_on() {
    let (_users, s) = TestServer::with_password("pw");
    let (mut admin, mut w) = admin_and_writer(&s);
    let ok = |reply: &[Ps]| matches!(&reply[0], Ps::Struct(0x70, _));
    assert!(ok(&w.request(0x11, vec![map([])])), "BEGIN");
    assert!(ok(&w.request(0x10, vec![Ps::String("CREATE (:Kept)".into()), map([]), map([])])));
    assert!(ok(&w.request(0x3F, vec![map([("n", Ps::Int(-1))])])), "PULL");
    admin.query("REVOKE ROLE writer FROM w");
    let commit = w.request(0x12, vec![]);
    let forbidden = |reply: &[Ps]| {
        matches!(&reply[0], Ps::Struct(0x7F, f)
            if f[0].get("code") == Some(&Ps::String("Neo.ClientError.Security.Forbidden".into())))
    };
    assert!(forbidden(&commit), "{commit:?}");
    assert_eq!(admin.query("MATCH (n:Kept) RETURN count(n)").0, vec![Ps::Int(0)], "nothing committed");
    // An admin demoted to writer commits no index made while it was admin.
    admin.query("CREATE USER a2 SET PASSWORD 'a2-password' CHANGE NOT REQUIRED");
    admin.query("GRANT ROLE admin TO a2");
    let mut a2 = Client::logged_on(s.addr, "a2", "a2-password");
    assert!(ok(&a2.request(0x11, vec![map([])])), "BEGIN");
    assert!(ok(&a2.request(0x10, vec![Ps::String("CREATE INDEX FOR (n:K) ON (n.k)".into()), map([]), map([])])));
    assert!(ok(&a2.request(0x3F, vec![map([("n", Ps::Int(-1))])])), "PULL");
    admin.query("GRANT ROLE writer TO a2");
    let commit = a2.request(0x12, vec![]);
    assert!(forbidden(&commit), "{commit:?}");
    assert_eq!(admin.query("SHOW INDEXES YIELD name RETURN count(*)").0, vec![Ps::Int(0)], "no index");
    // A result opened before the user is dropped is not read on after.
    assert!(ok(&w.request(0x0F, vec![])), "RESET");
    assert!(ok(&w.request(0x10, vec![Ps::String("UNWIND range(1, 10) AS i RETURN i".into()), map([]), map([])])));
    let first = w.request(0x3F, vec![map([("n", Ps::Int(2))])]);
    assert!(first.iter().any(|m| matches!(m, Ps::Struct(0x71, _))), "{first:?}");
    admin.query("DROP USER w");
    let rest = w.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
    assert!(!rest.iter().any(|m| matches!(m, Ps::Struct(0x71, _))), "records after the drop: {rest:?}");
    assert!(w.is_closed());
}

/// Messages a client sends together (in one packet, behind a statement that may run a while) each look the user
/// up when their turn comes; only the PULL right after a RUN takes the RUN's answer. Driven on a session directly,
/// so that the user is dropped between two messages the connection would serve from one read.
#[test]
fn each_message_of_a_pipeline_looks_the_user_up() {
    use plexus_server::bolt::session::Session;
    let dir = tempfile::tempdir().unwrap();
    let (auth, _) = Auth::open(dir.path(), Some("pw")).unwrap();
    let (cli, _) = Auth::open(dir.path(), None).unwrap();
    cli.add_user("w", "w-password", plexus_server::auth::Role::Writer).unwrap();
    let limits = ServerConfig::default().limits();
    let service = std::sync::Arc::new(Service::new(plexus::Database::in_memory(), auth, limits));
    let mut session = Session::new(service.clone(), (5, 4), "127.0.0.1:7687".into(), 1);
    let mut send = |tag: u8, fields: Vec<Ps>| {
        let mut out = Vec::new();
        session.handle(Ps::Struct(tag, fields), &mut out);
        // The last message written is the summary: SUCCESS 0x70, FAILURE 0x7F, IGNORED 0x7E.
        let mut summary = 0;
        let mut at = 0;
        while at + 2 <= out.len() {
            let size = u16::from_be_bytes([out[at], out[at + 1]]) as usize;
            if size > 0 && out.get(at + 3).is_some() {
                summary = out[at + 3];
            }
            at += 2 + size;
        }
        summary
    };
    assert_eq!(send(0x01, vec![map([("user_agent", Ps::String("test/1".into()))])]), 0x70, "HELLO");
    assert_eq!(send(0x6A, vec![basic_credentials("w", "w-password")]), 0x70, "LOGON");
    assert_eq!(send(0x11, vec![map([])]), 0x70, "BEGIN");
    assert_eq!(send(0x10, vec![Ps::String("RETURN 1".into()), map([]), map([])]), 0x70, "RUN");
    assert_eq!(send(0x3F, vec![map([("n", Ps::Int(-1))])]), 0x70, "PULL");
    cli.remove_user("w").unwrap();
    assert_eq!(send(0x10, vec![Ps::String("CREATE (:Late)".into()), map([]), map([])]), 0x7F, "RUN after the drop");
    assert_ne!(send(0x12, vec![]), 0x70, "COMMIT after the drop");
    let late = service.db.execute("MATCH (n:Late) RETURN count(n)", &Default::default()).unwrap();
    assert_eq!(format!("{:?}", late.rows[0][0]), "Int(0)");
}

/// A RUN or BEGIN whose timeout, mode or database is of the wrong kind is refused, not run with the field ignored.
#[test]
fn malformed_run_and_begin_fields_are_refused() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    for extra in [
        map([("tx_timeout", Ps::String("abc".into()))]),
        map([("tx_timeout", Ps::Int(-5))]),
        map([("mode", Ps::String("x".into()))]),
        map([("db", Ps::Int(5))]),
    ] {
        assert_eq!(c.run_failure("RETURN 1", extra.clone()), "Neo.ClientError.Request.Invalid", "{extra:?}");
        c.request(0x0F, vec![]);
        let r = c.request(0x11, vec![extra.clone()]);
        assert!(matches!(&r[0], Ps::Struct(0x7F, _)), "BEGIN {extra:?}: {r:?}");
        c.request(0x0F, vec![]);
    }
    let r = c.request(
        0x10,
        vec![
            Ps::String("RETURN 1".into()),
            map([]),
            map([("tx_timeout", Ps::Int(0)), ("mode", Ps::String("r".into()))]),
        ],
    );
    assert!(matches!(&r[0], Ps::Struct(0x70, _)), "{r:?}");
}

/// The most deeply nested value a query returns can be sent back as a parameter; one level deeper is refused
/// with an error the client can read (before the connection closes, as for any message that cannot be decoded).
#[test]
fn a_returned_value_can_be_sent_back_however_deeply_nested() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let deepest = plexus::cypher::MAX_VALUE_NESTING;
    let (records, _) = c.query(&format!("RETURN reduce(v = 1, i IN range(1, {deepest}) | [v]) AS v"));
    let value = records.into_iter().next().expect("one record");
    let run = c.request(0x10, vec![Ps::String("RETURN $v = $v AS same".into()), map([("v", value.clone())]), map([])]);
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    assert_eq!(c.pull(-1, None).0, vec![Ps::Bool(true)]);
    let deeper = Ps::List(vec![value]);
    let refused = c.request(0x10, vec![Ps::String("RETURN $v".into()), map([("v", deeper)]), map([])]);
    match &refused[0] {
        Ps::Struct(0x7F, f) => {
            let code = f[0].get("code").and_then(Ps::as_str).unwrap_or_default();
            assert!(code.starts_with("Neo.ClientError."), "{code}");
        }
        other => panic!("{other:?}"),
    }
    assert_healthy(s.addr);
}
#[test]
fn unsupported_versions_and_bad_magic_are_refused() {
    let s = TestServer::open();
    let (mut c, chosen) = Client::connect(s.addr, [0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    assert_eq!(chosen, [0, 0, 0, 0]);
    assert!(c.is_closed());
    let mut raw = TcpStream::connect(s.addr).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // Not Bolt's magic number, nor a WebSocket's `GET ` (bolt_websocket.rs): closed without a word.
    raw.write_all(b"HELO plexus\r\n\r\n").unwrap();
    let mut buf = [0u8; 16];
    assert!(matches!(raw.read(&mut buf), Ok(0) | Err(_)));
    assert_healthy(s.addr);
}

/// A plaintext client on a TLS-only port gets the connection closed, as from Neo4j, not a TLS alert that drivers
/// would read as the protocol version the server chose ("0.3").
#[test]
fn a_plaintext_handshake_on_the_tls_port_is_closed_without_an_answer() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let config = plexus_server::ServerConfig {
        bolt: "127.0.0.1:0".into(),
        http: String::new(),
        auth: false,
        tls: Some(plexus_server::config::TlsConfig {
            cert: data.join("test-cert.pem"),
            key: data.join("test-key.pem"),
        }),
        ..Default::default()
    };
    let s = TestServer::start(config, Auth::disabled());
    let mut raw = TcpStream::connect(s.addr).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    raw.write_all(&[0x60, 0x60, 0xB0, 0x17, 0, 0, 4, 5, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    let mut answer = Vec::new();
    let _ = raw.read_to_end(&mut answer);
    assert!(answer.is_empty(), "the server answered {answer:02x?}");
}

#[test]
fn garbage_truncated_and_oversized_messages_do_not_hurt_the_server() {
    let s = TestServer::start(bolt_only_with_message_limit(1 << 20), Auth::disabled());
    // Each is refused with a FAILURE the client can read, then the connection closes.
    let refused = |c: &mut Client| {
        assert!(matches!(c.receive(), Ok(Ps::Struct(0x7F, _))));
        assert!(c.is_closed());
    };
    // Garbage after the handshake: not PackStream.
    let mut c = Client::ready(s.addr);
    c.stream.write_all(&[0, 3, 0xC7, 0xC7, 0xC7, 0, 0]).unwrap();
    refused(&mut c);
    // A message with a string marker declaring 4 GB.
    let mut c = Client::ready(s.addr);
    c.stream.write_all(&[0, 5, 0xD2, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0]).unwrap();
    refused(&mut c);
    // Chunks declaring more than the limit in total: refused without keeping the bytes.
    let mut c = Client::ready(s.addr);
    for _ in 0..20 {
        let _ = c.stream.write_all(&[0xFF, 0xFF]);
        let _ = c.stream.write_all(&[0u8; 65535]);
    }
    let _ = c.stream.write_all(&[0, 0]);
    refused(&mut c);
    // A truncated frame followed by a hang-up.
    let mut c = Client::ready(s.addr);
    c.stream.write_all(&[0, 100, 0xB1, 0x10]).unwrap();
    drop(c);
    // Unknown message tags fail but leave the connection usable after RESET.
    let mut c = Client::ready(s.addr);
    let r = c.request(0x55, vec![]);
    assert!(matches!(&r[0], Ps::Struct(0x7F, _)));
    c.request(0x0F, vec![]);
    assert_eq!(c.query("RETURN 2 AS two").0, vec![Ps::Int(2)]);
    // Random bytes from the start.
    for seed in 0..20u64 {
        let mut raw = TcpStream::connect(s.addr).unwrap();
        let bytes: Vec<u8> = (0..200).map(|i| ((seed * 7919 + i * 104729) % 251) as u8).collect();
        let _ = raw.write_all(&bytes);
    }
    assert_healthy(s.addr);
}

#[test]
fn a_thousand_idle_connections_and_slow_clients_leave_room_for_others() {
    let s = TestServer::open();
    let idle: Vec<TcpStream> = (0..1000).map(|_| TcpStream::connect(s.addr).unwrap()).collect();
    // A slow client dribbling a request one byte at a time.
    let mut slow = Client::ready(s.addr);
    let mut e = Encoder::new();
    e.value(&Ps::Struct(0x10, vec![Ps::String("RETURN 'slow' AS s".into()), map([]), map([])]));
    let mut framed = Vec::new();
    chunk(&e.buf, &mut framed);
    let started = Instant::now();
    for b in &framed {
        slow.stream.write_all(&[*b]).unwrap();
        // Others are served meanwhile.
        if started.elapsed() < Duration::from_millis(200) {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    assert!(matches!(&slow.responses()[0], Ps::Struct(0x70, _)));
    assert_healthy(s.addr);
    drop(idle);
    assert_healthy(s.addr);
}

#[test]
fn idle_connections_time_out() {
    let config = ServerConfig {
        bolt: "127.0.0.1:0".into(),
        http: String::new(),
        auth: false,
        idle_timeout_secs: 1,
        ..Default::default()
    };
    let s = TestServer::start(config, Auth::disabled());
    let mut c = Client::ready(s.addr);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(c.is_closed());
}

#[test]
fn connection_limit_refuses_extra_clients() {
    let config = ServerConfig {
        bolt: "127.0.0.1:0".into(),
        http: String::new(),
        auth: false,
        max_connections: 2,
        ..Default::default()
    };
    let s = TestServer::start(config, Auth::disabled());
    let a = Client::ready(s.addr);
    let b = Client::ready(s.addr);
    assert!(Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    drop((a, b));
    std::thread::sleep(Duration::from_millis(200));
    assert_healthy(s.addr);
}

#[test]
fn a_client_that_hangs_up_cancels_its_query() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    c.send(
        0x10,
        vec![
            Ps::String(
                "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b WITH a WHERE a < 0 RETURN count(*)".into(),
            ),
            map([]),
            map([]),
        ],
    );
    std::thread::sleep(Duration::from_millis(200));
    drop(c);
    // The cancelled query stops and frees its thread; the server keeps serving.
    let started = Instant::now();
    let service = s.server.as_ref().unwrap().service.clone();
    while service.metrics.queries_failed.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        assert!(started.elapsed() < Duration::from_secs(20), "the query was not cancelled");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_healthy(s.addr);
}

#[test]
fn explicit_transactions_and_routing_over_the_wire() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    assert!(matches!(&c.request(0x11, vec![map([])])[0], Ps::Struct(0x70, _)));
    let run = c.request(0x10, vec![Ps::String("CREATE (n:W) RETURN n".into()), map([]), map([])]);
    match &run[0] {
        Ps::Struct(0x70, f) => assert_eq!(f[0].get("qid"), Some(&Ps::Int(1))),
        other => panic!("{other:?}"),
    }
    c.request(0x3F, vec![map([("n", Ps::Int(-1)), ("qid", Ps::Int(1))])]);
    let commit = c.request(0x12, vec![]);
    match &commit[0] {
        Ps::Struct(0x70, f) => assert!(f[0].get("bookmark").is_some()),
        other => panic!("{other:?}"),
    }
    let (records, _) = c.query("MATCH (n:W) RETURN count(n) AS c");
    assert_eq!(records, vec![Ps::Int(1)]);
    let route =
        c.request(0x66, vec![map([("address", Ps::String("db.example:7687".into()))]), Ps::List(vec![]), map([])]);
    match &route[0] {
        Ps::Struct(0x70, f) => {
            let rt = f[0].get("rt").unwrap();
            assert_eq!(rt.get("ttl"), Some(&Ps::Int(300)));
            assert!(matches!(rt.get("servers"), Some(Ps::List(s)) if s.len() == 3));
        }
        other => panic!("{other:?}"),
    }
    // Malformed fields are refused, not answered.
    let garbage = c.request(0x66, vec![Ps::Int(5), Ps::Int(5), Ps::Int(5)]);
    assert!(matches!(&garbage[0], Ps::Struct(0x7F, _)), "{garbage:?}");
    c.request(0x0F, vec![]);
    // A bookmark must come in a list, and metadata as a map: ignoring them would hide the client's mistake.
    for extra in [map([("bookmarks", Ps::String("y".into()))]), map([("tx_metadata", Ps::Int(1))])] {
        let run = c.request(0x10, vec![Ps::String("RETURN 1".into()), map([]), extra.clone()]);
        assert!(matches!(&run[0], Ps::Struct(0x7F, _)), "{extra:?}: {run:?}");
        c.request(0x0F, vec![]);
        let begin = c.request(0x11, vec![extra.clone()]);
        assert!(matches!(&begin[0], Ps::Struct(0x7F, _)), "{extra:?}: {begin:?}");
        c.request(0x0F, vec![]);
    }
}

#[test]
fn bolt_4_4_speaks_without_element_ids() {
    let s = TestServer::open();
    let (mut c, v) = Client::connect(s.addr, [0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    assert_eq!(v, [0, 0, 4, 4]);
    let hello =
        c.request(0x01, vec![map([("user_agent", Ps::String("t".into())), ("scheme", Ps::String("none".into()))])]);
    assert!(matches!(&hello[0], Ps::Struct(0x70, _)));
    let (records, _) = c.query("CREATE (n:Old {v: 1}) RETURN n");
    match &records[0] {
        Ps::Struct(0x4E, f) => assert_eq!(f.len(), 3),
        other => panic!("{other:?}"),
    }
}

/// RUN and PULL of `query` in one write, as drivers send them.
fn run_and_pull(c: &mut Client, query: &str) {
    let mut both = Vec::new();
    for message in [
        Ps::Struct(0x10, vec![Ps::String(query.into()), map([]), map([])]),
        Ps::Struct(0x3F, vec![map([("n", Ps::Int(-1))])]),
    ] {
        let mut e = Encoder::new();
        e.value(&message);
        chunk(&e.buf, &mut both);
    }
    c.stream.write_all(&both).unwrap();
}

/// Reads a PULL's answer and returns how many nodes its summary says were created.
fn nodes_created(c: &mut Client) -> Ps {
    match c.responses().pop() {
        Some(Ps::Struct(0x70, f)) => {
            f[0].get("stats").and_then(|s| s.get("nodes-created")).cloned().unwrap_or(Ps::Null)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn stopping_the_server_finishes_running_writes_and_closes_idle_connections() {
    let dir = tempfile::tempdir().unwrap();
    let (runtime, server) = support::start_on_disk(dir.path().to_path_buf());
    let addr = server.bolt_addr.unwrap();
    let service = server.service.clone();
    let mut idle = Client::ready(addr);
    // Long enough to be running when the server stops, in a debug build as in a release one (about a second).
    const NODES: i64 = 1_000_000;
    // One client sends RUN and PULL together: the server reads both at once, so the running query's probe finds
    // nothing left in the socket, which it took for a client that hung up when stopping shut the read side.
    let mut pipelined = Client::ready(addr);
    run_and_pull(&mut pipelined, &format!("UNWIND range(1, {NODES}) AS i CREATE (:A {{i: i}})"));
    // The other sends its PULL only once the RUN has been answered, after the server began to stop.
    let mut stepwise = Client::ready(addr);
    let write = format!("UNWIND range(1, {NODES}) AS i CREATE (:B {{i: i}})");
    stepwise.send(0x10, vec![Ps::String(write), map([]), map([])]);
    std::thread::sleep(Duration::from_millis(100));
    let answered = |s: &Service| {
        s.metrics.queries_succeeded.load(std::sync::atomic::Ordering::Relaxed)
            + s.metrics.queries_failed.load(std::sync::atomic::Ordering::Relaxed)
    };
    assert_eq!(answered(&service), 0, "the writes should still be running when the server stops");
    drop(service);
    let stopping = std::thread::spawn(move || runtime.block_on(server.shutdown(Duration::from_secs(10))));
    // The idle connection is closed at once: an end of file, not the client's read timeout.
    let mut byte = [0u8; 1];
    assert!(matches!(idle.stream.read(&mut byte), Ok(0)), "the idle connection was not closed");
    // The running writes are finished, committed and answered, summary and all; then their connections close.
    let run = pipelined.responses();
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    assert_eq!(nodes_created(&mut pipelined), Ps::Int(NODES));
    assert!(pipelined.is_closed());
    let run = stepwise.responses();
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    stepwise.send(0x3F, vec![map([("n", Ps::Int(-1))])]);
    assert_eq!(nodes_created(&mut stepwise), Ps::Int(NODES));
    assert!(stepwise.is_closed());
    stopping.join().unwrap().unwrap();
    let db = plexus::Database::open(dir.path()).unwrap();
    for label in ["A", "B"] {
        let count = db.execute(&format!("MATCH (n:{label}) RETURN count(n)"), &plexus::Params::new()).unwrap();
        assert_eq!(count.rows, vec![vec![plexus::ResultValue::Int(NODES)]], "{label}");
    }
}

#[test]
fn bookmarks_are_checked_when_a_transaction_begins() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    c.query("CREATE (:B)");
    let code = |r: &[Ps]| match &r[0] {
        Ps::Struct(0x7F, f) => f[0].get("code").and_then(Ps::as_str).map(str::to_string),
        Ps::Struct(0x70, _) => None,
        other => panic!("{other:?}"),
    };
    let bookmarks = |b: &[&str]| map([("bookmarks", Ps::List(b.iter().map(|s| Ps::String(s.to_string())).collect()))]);
    let invalid = Some("Neo.ClientError.Transaction.InvalidBookmark".to_string());
    // One it issued, and none at all: fine.
    assert_eq!(code(&c.request(0x11, vec![bookmarks(&["plexus:1"])])), None);
    c.request(0x13, vec![]);
    assert_eq!(code(&c.request(0x10, vec![Ps::String("RETURN 1".into()), map([]), bookmarks(&[])])), None);
    c.request(0x2F, vec![map([("n", Ps::Int(-1))])]);
    for bad in ["garbage", "plexus:99999999"] {
        assert_eq!(code(&c.request(0x11, vec![bookmarks(&[bad])])), invalid, "{bad}");
        c.request(0x0F, vec![]);
        let run = c.request(0x10, vec![Ps::String("RETURN 1".into()), map([]), bookmarks(&["plexus:1", bad])]);
        assert_eq!(code(&run), invalid, "{bad}");
        c.request(0x0F, vec![]);
    }
    assert_eq!(c.query("RETURN 1 AS one").0, vec![Ps::Int(1)]);
}

#[test]
fn stopping_the_server_lets_an_open_transaction_commit_then_closes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (runtime, server) = support::start_on_disk(dir.path().to_path_buf());
    let addr = server.bolt_addr.unwrap();
    let mut idle = Client::ready(addr);
    let mut in_tx = Client::ready(addr);
    assert!(matches!(&in_tx.request(0x11, vec![map([])])[0], Ps::Struct(0x70, _)));
    in_tx.request(0x10, vec![Ps::String("CREATE (:T {v: 1})".into()), map([]), map([])]);
    in_tx.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
    let stopping = std::thread::spawn(move || runtime.block_on(server.shutdown(Duration::from_secs(10))));
    let mut byte = [0u8; 1];
    assert!(matches!(idle.stream.read(&mut byte), Ok(0)), "the idle connection was not closed");
    // The transaction's COMMIT, sent after the server began to stop, is served; then the connection closes.
    let commit = in_tx.request(0x12, vec![]);
    assert!(matches!(&commit[0], Ps::Struct(0x70, f) if f[0].get("bookmark").is_some()), "{commit:?}");
    assert!(in_tx.is_closed());
    stopping.join().unwrap().unwrap();
    let db = plexus::Database::open(dir.path()).unwrap();
    let count = db.execute("MATCH (n:T) RETURN count(n)", &plexus::Params::new()).unwrap();
    assert_eq!(count.rows, vec![vec![plexus::ResultValue::Int(1)]]);
}

/// Whether the server closes the connection (rather than leaving it open until the test's generous wait ends).
fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => return !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
        }
    }
}

#[test]
fn connections_that_do_not_log_on_are_closed_after_the_auth_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (auth, _) = Auth::open(dir.path(), Some("pw")).unwrap();
    let config =
        ServerConfig { bolt: "127.0.0.1:0".into(), http: String::new(), auth_timeout_secs: 1, ..Default::default() };
    let s = TestServer::start(config, auth);
    // Only part of the handshake.
    let mut partial = TcpStream::connect(s.addr).unwrap();
    partial.write_all(&[0x60, 0x60, 0xB0, 0x17]).unwrap();
    // The handshake, then nothing.
    let (mut silent, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    // HELLO without LOGON.
    let (mut hello, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    hello.request(0x01, vec![map([("user_agent", Ps::String("t".into()))])]);
    // Logged on: the idle timeout applies.
    let (mut ready, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    ready.request(0x01, vec![map([("user_agent", Ps::String("t".into()))])]);
    let creds = map([
        ("scheme", Ps::String("basic".into())),
        ("principal", Ps::String("neo4j".into())),
        ("credentials", Ps::String("pw".into())),
    ]);
    assert!(matches!(&ready.request(0x6A, vec![creds])[0], Ps::Struct(0x70, _)));

    assert!(closed_by_server(&mut partial), "part of a handshake");
    assert!(closed_by_server(&mut silent.stream), "no HELLO");
    assert!(closed_by_server(&mut hello.stream), "no LOGON");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(ready.query("RETURN 1 AS one").0, vec![Ps::Int(1)]);
    // Logging off starts the authentication timeout again.
    assert!(matches!(&ready.request(0x6B, vec![])[0], Ps::Struct(0x70, _)));
    assert!(closed_by_server(&mut ready.stream), "logged off");
}

#[test]
fn repeated_wrong_passwords_lock_the_user_briefly() {
    let dir = tempfile::tempdir().unwrap();
    let (auth, _) = Auth::open(dir.path(), Some("pw")).unwrap();
    let auth =
        auth.with_lockout(plexus_server::auth::Lockout { max_failed_attempts: 3, lock_time: Duration::from_secs(60) });
    let config = ServerConfig { bolt: "127.0.0.1:0".into(), http: String::new(), ..Default::default() };
    let s = TestServer::start(config, auth);
    let log_on = |password: &str| {
        let (mut c, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        c.request(0x01, vec![map([("user_agent", Ps::String("t".into()))])]);
        let creds = map([
            ("scheme", Ps::String("basic".into())),
            ("principal", Ps::String("neo4j".into())),
            ("credentials", Ps::String(password.into())),
        ]);
        match c.request(0x6A, vec![creds]).remove(0) {
            Ps::Struct(0x70, _) => "ok".to_string(),
            Ps::Struct(0x7F, f) => f[0].get("code").and_then(Ps::as_str).unwrap().to_string(),
            other => panic!("{other:?}"),
        }
    };
    for _ in 0..3 {
        assert_eq!(log_on("wrong"), "Neo.ClientError.Security.Unauthorized");
    }
    for password in ["wrong", "pw"] {
        assert_eq!(log_on(password), "Neo.ClientError.Security.AuthenticationRateLimit");
    }
}

/// A message the connection's state does not take (DISCARD with no result open, COMMIT with no transaction, RUN
/// while a result is open) is a protocol breach: a FAILURE naming the message, then the connection closes, as
/// Neo4j's does, so a driver that lost track of the state cannot get the connection back into its pool.
#[test]
fn a_message_out_of_state_fails_and_closes_the_connection() {
    let s = TestServer::start(bolt_only_with_message_limit(1 << 20), Auth::disabled());
    let failure_message = |r: &[Ps]| match &r[0] {
        Ps::Struct(0x7F, fields) => fields[0].get("message").and_then(Ps::as_str).unwrap_or_default().to_string(),
        other => panic!("expected a FAILURE, got {other:?}"),
    };
    for (tag, name) in [(0x2F, "DISCARD"), (0x3F, "PULL"), (0x12, "COMMIT"), (0x13, "ROLLBACK")] {
        let mut c = Client::ready(s.addr);
        let r = c.request(tag, vec![map([("n", Ps::Int(-1))])]);
        let message = failure_message(&r);
        assert!(message.contains(&format!("'{name}'")) && message.contains("READY"), "{message}");
        assert!(c.is_closed(), "{name}");
    }
    // RUN while an auto-commit result is still open.
    let mut c = Client::ready(s.addr);
    let r = c.request(0x10, vec![Ps::String("UNWIND range(1, 5) AS i RETURN i".into()), map([]), map([])]);
    assert!(matches!(&r[0], Ps::Struct(0x70, _)));
    let r = c.request(0x10, vec![Ps::String("RETURN 1".into()), map([]), map([])]);
    assert!(failure_message(&r).contains("STREAMING"));
    assert!(c.is_closed());
    assert_healthy(s.addr);
}

/// Neo4j Browser's `:schema`: the made-up nodes and relationships of `db.schema.visualization()` go out as
/// Bolt nodes and relationships with negative ids, the relationships' ends naming the nodes.
#[test]
fn the_schema_visualization_goes_out_as_nodes_and_relationships() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    c.query("CREATE (:Person)-[:LIVES_IN]->(:City)");
    let (records, _) = c.query("CALL db.schema.visualization()");
    let Ps::List(nodes) = &records[0] else { panic!("{records:?}") };
    let ids: Vec<i64> = nodes
        .iter()
        .map(|n| match n {
            Ps::Struct(0x4E, f) => f[0].as_int().unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.iter().all(|&id| id < 0), "{ids:?}");
    c.send(
        0x10,
        vec![
            Ps::String("CALL db.schema.visualization() YIELD relationships RETURN relationships".into()),
            map([]),
            map([]),
        ],
    );
    c.responses();
    let (records, _) = c.pull(-1, None);
    let Ps::List(rels) = &records[0] else { panic!("{records:?}") };
    match &rels[..] {
        [Ps::Struct(0x52, f)] => {
            assert!(ids.contains(&f[1].as_int().unwrap()) && ids.contains(&f[2].as_int().unwrap()), "{f:?}");
            assert_eq!(f[3], Ps::String("LIVES_IN".into()));
        }
        other => panic!("{other:?}"),
    }
}
