//! What the official drivers and tools count on from a Neo4j server beyond running queries, over real sockets: the
//! `system` database, query types, database names, error codes, refusals they can read, and a shutdown they retry.

mod support;

use std::io::Write;
use std::time::Duration;

use plexus_server::auth::Auth;
use plexus_server::packstream::{map, Ps};
use support::{assert_healthy, bolt_only_with_message_limit, Client, TestServer};

const SUCCESS: u8 = 0x70;
const FAILURE: u8 = 0x7F;

/// RUN with `params` and `extra`; the RUN's answer.
fn run(c: &mut Client, query: &str, params: Ps, extra: Ps) -> Ps {
    c.request(0x10, vec![Ps::String(query.into()), params, extra]).remove(0)
}

/// PULL of everything: the records and the summary.
fn pull(c: &mut Client) -> (Vec<Vec<Ps>>, Ps) {
    let mut answers = c.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
    let summary = answers.pop().unwrap();
    let records = answers
        .into_iter()
        .map(|r| match r {
            Ps::Struct(0x71, mut f) => match f.remove(0) {
                Ps::List(values) => values,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect();
    (records, summary)
}

/// The metadata of a SUCCESS, failing the test on anything else.
fn success(message: &Ps) -> &Ps {
    match message {
        Ps::Struct(SUCCESS, f) => &f[0],
        other => panic!("expected SUCCESS, got {other:?}"),
    }
}

/// The code of a FAILURE, failing the test on anything else.
fn failure_code(message: &Ps) -> String {
    match message {
        Ps::Struct(FAILURE, f) => f[0].get("code").and_then(Ps::as_str).unwrap().to_string(),
        other => panic!("expected FAILURE, got {other:?}"),
    }
}

fn strings(names: &[&str]) -> Ps {
    Ps::List(names.iter().map(|n| Ps::String(n.to_string())).collect())
}

fn system() -> Ps {
    map([("db", Ps::String("system".into())), ("mode", Ps::String("r".into()))])
}

const DATABASES_COLUMNS: [&str; 13] = [
    "name",
    "type",
    "aliases",
    "access",
    "address",
    "role",
    "writer",
    "requestedStatus",
    "currentStatus",
    "statusMessage",
    "default",
    "home",
    "constituents",
];

#[test]
fn the_system_database_routes_and_answers_show_commands() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    // Java's verifyConnectivity over neo4j:// asks for the routing table of `system`.
    let route = c.request(0x66, vec![map([]), Ps::List(vec![]), map([("db", Ps::String("system".into()))])]);
    let rt = success(&route[0]).get("rt").unwrap();
    assert_eq!(rt.get("db"), Some(&Ps::String("system".into())));
    assert!(matches!(rt.get("servers"), Some(Ps::List(s)) if s.len() == 3));

    // Java's and Go's verifyAuthentication.
    let fields = success(&run(&mut c, "SHOW DEFAULT DATABASE", map([]), system())).get("fields").unwrap().clone();
    let default_columns: Vec<&str> =
        DATABASES_COLUMNS.iter().copied().filter(|c| !["default", "home"].contains(c)).collect();
    assert_eq!(fields, strings(&default_columns));
    let (records, summary) = pull(&mut c);
    assert_eq!(records.len(), 1);
    let address = Ps::String(s.addr.to_string());
    assert_eq!(
        records[0][..7],
        [
            Ps::String("neo4j".into()),
            Ps::String("standard".into()),
            Ps::List(vec![]),
            Ps::String("read-write".into()),
            address,
            Ps::String("primary".into()),
            Ps::Bool(true),
        ]
    );
    assert_eq!(
        records[0][7..],
        [Ps::String("online".into()), Ps::String("online".into()), Ps::String("".into()), Ps::List(vec![]),]
    );
    let summary = success(&summary);
    assert_eq!(summary.get("db"), Some(&Ps::String("system".into())));
    assert_eq!(summary.get("type"), Some(&Ps::String("r".into())));

    let fields = success(&run(&mut c, "SHOW DATABASES", map([]), system())).get("fields").unwrap().clone();
    assert_eq!(fields, strings(&DATABASES_COLUMNS));
    let (records, _) = pull(&mut c);
    let names: Vec<&Ps> = records.iter().map(|r| &r[0]).collect();
    assert_eq!(names, [&Ps::String("neo4j".into()), &Ps::String("system".into())]);
    // `default` and `home` say which database a session without a name gets.
    assert_eq!((&records[0][10], &records[0][11]), (&Ps::Bool(true), &Ps::Bool(true)));
    assert_eq!((&records[1][10], &records[1][11]), (&Ps::Bool(false), &Ps::Bool(false)));

    let params = map([("db", Ps::String("NEO4J".into()))]);
    success(&run(&mut c, "SHOW DATABASE $db YIELD name, currentStatus AS status", params, system()));
    assert_eq!(pull(&mut c).0, vec![vec![Ps::String("neo4j".into()), Ps::String("online".into())]]);
    let run_answer = run(&mut c, "SHOW DATABASES WHERE name = 'system'", map([]), map([]));
    assert_eq!(success(&run_answer).get("fields"), Some(&strings(&DATABASES_COLUMNS)));
    assert_eq!(pull(&mut c).0.len(), 1, "SHOW commands also answer on the graph's database");
    // A leading USE picks the database, as the session's would.
    let run_answer = run(&mut c, "USE system SHOW DATABASES YIELD name WHERE name = 'neo4j'", map([]), map([]));
    assert_eq!(success(&run_answer).get("fields"), Some(&strings(&["name"])));
    assert_eq!(pull(&mut c).0, vec![vec![Ps::String("neo4j".into())]]);
    let refused = run(&mut c, "USE nowhere SHOW DATABASES", map([]), map([]));
    assert_eq!(failure_code(&refused), "Neo.ClientError.Database.DatabaseNotFound");
    c.request(0x0F, vec![]);
    let refused = run(&mut c, "USE system MATCH (n) RETURN n", map([]), map([]));
    assert_eq!(failure_code(&refused), "Neo.ClientError.Statement.NotSystemDatabaseError");
    c.request(0x0F, vec![]);
    success(&run(&mut c, "USE neo4j MATCH (n) RETURN count(n)", map([]), system()));
    assert_eq!(pull(&mut c).0, vec![vec![Ps::Int(0)]]);

    // Health checks call these on any database.
    for extra in [system(), map([])] {
        success(&run(&mut c, "CALL dbms.components() YIELD name, versions, edition", map([]), extra.clone()));
        let (records, _) = pull(&mut c);
        assert_eq!(
            records,
            vec![vec![
                Ps::String("Neo4j Kernel".into()),
                Ps::List(vec![Ps::String("5.26.0".into())]),
                Ps::String("community".into()),
            ]]
        );
        success(&run(&mut c, "CALL db.ping()", map([]), extra));
        assert_eq!(pull(&mut c).0, vec![vec![Ps::Bool(true)]]);
    }

    // In an explicit transaction as well.
    success(&c.request(0x11, vec![system()])[0]);
    success(&run(&mut c, "SHOW HOME DATABASE YIELD name", map([]), map([])));
    assert_eq!(pull(&mut c).0, vec![vec![Ps::String("neo4j".into())]]);
    success(&c.request(0x12, vec![])[0]);

    // Anything else is refused in Neo4j's words, and the graph is untouched.
    let refused = run(&mut c, "CREATE (n:InSystem) RETURN n", map([]), map([("db", Ps::String("system".into()))]));
    assert_eq!(failure_code(&refused), "Neo.ClientError.Statement.NotSystemDatabaseError");
    c.request(0x0F, vec![]);
    assert_eq!(c.query("MATCH (n:InSystem) RETURN count(n)").0, vec![Ps::Int(0)]);
}

/// As in Neo4j, a statement that compiles is answered at RUN and a row that fails is reported at PULL, after the
/// records before it; the connection then goes on after a RESET.
#[test]
fn a_failing_row_is_reported_at_pull() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let answer = run(&mut c, "UNWIND [1, 0] AS x RETURN 10 / x AS y", map([]), map([]));
    assert_eq!(success(&answer).get("fields"), Some(&strings(&["y"])));
    let mut answers = c.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
    assert_eq!(failure_code(&answers.pop().unwrap()), "Neo.ClientError.Statement.ArithmeticError");
    let metrics = &s.server.as_ref().unwrap().service.metrics;
    let count = |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!((count(&metrics.queries_succeeded), count(&metrics.queries_failed)), (0, 1), "counted as failed");
    c.request(0x0F, vec![]);
    // A statement that does not compile still fails at RUN.
    assert_eq!(failure_code(&run(&mut c, "RETURN 1 +", map([]), map([]))), "Neo.ClientError.Statement.SyntaxError");
    c.request(0x0F, vec![]);
    assert_eq!(c.query("RETURN 1 AS one").0, vec![Ps::Int(1)]);
}

/// A profiled plan goes out as `profile` (rows and times), an explained one as `plan`, whatever comments or
/// `CYPHER` options come first.
#[test]
fn profile_is_told_from_the_plan_not_from_the_first_word() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    for (query, key) in [
        ("PROFILE RETURN 1 AS x", "profile"),
        ("// first\nPROFILE RETURN 1 AS x", "profile"),
        ("/* c */ CYPHER 5 PROFILE RETURN 1 AS x", "profile"),
        ("CYPHER runtime=slotted PROFILE RETURN 1 AS x", "profile"),
        ("// PROFILE\nEXPLAIN RETURN 1 AS x", "plan"),
    ] {
        success(&run(&mut c, query, map([]), map([])));
        let (_, summary) = pull(&mut c);
        let meta = success(&summary);
        let other = if key == "plan" { "profile" } else { "plan" };
        assert!(meta.get(key).is_some() && meta.get(other).is_none(), "{query}: {meta:?}");
    }
}

#[test]
fn the_query_type_follows_the_plan_not_what_the_statement_did() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let type_of = |c: &mut Client, q: &str| -> Ps {
        success(&run(c, q, map([]), map([])));
        let (_, summary) = pull(c);
        success(&summary).get("type").unwrap().clone()
    };
    let cases = [
        ("CREATE (n:QT {id: 1}) RETURN n", "rw"),
        // Changes nothing (the node exists), but its plan writes and it returns nothing.
        ("MERGE (n:QT {id: 1})", "w"),
        ("MATCH (n:NoSuchLabel) SET n.x = 1", "w"),
        ("MATCH (n:QT) SET n.x = 2 RETURN n.x", "rw"),
        ("MATCH (n:QT) RETURN n.x", "r"),
        ("CREATE INDEX qt_id FOR (n:QT) ON (n.id)", "s"),
    ];
    for (query, expected) in cases {
        assert_eq!(type_of(&mut c, query), Ps::String(expected.into()), "{query}");
    }
    success(&c.request(0x11, vec![map([])])[0]);
    assert_eq!(type_of(&mut c, "CREATE (n:QT) RETURN n"), Ps::String("rw".into()));
    assert_eq!(type_of(&mut c, "MATCH (n:Nothing) DELETE n"), Ps::String("w".into()));
    success(&c.request(0x13, vec![])[0]);
}

#[test]
fn database_names_are_case_insensitive() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    for name in ["Neo4j", "NEO4J"] {
        let extra = map([("db", Ps::String(name.into()))]);
        success(&run(&mut c, "RETURN 1 AS one", map([]), extra.clone()));
        let (records, summary) = pull(&mut c);
        assert_eq!(records, vec![vec![Ps::Int(1)]]);
        assert_eq!(success(&summary).get("db"), Some(&Ps::String("neo4j".into())));
        success(&c.request(0x11, vec![extra.clone()])[0]);
        success(&c.request(0x13, vec![])[0]);
        // The routing table comes back under the name as asked: the official drivers file it under the name
        // answered and look it up under the one they asked for.
        let route = c.request(0x66, vec![map([]), Ps::List(vec![]), extra]);
        assert_eq!(success(&route[0]).get("rt").unwrap().get("db"), Some(&Ps::String(name.into())));
    }
    let other = run(&mut c, "RETURN 1", map([]), map([("db", Ps::String("neo5j".into()))]));
    assert_eq!(failure_code(&other), "Neo.ClientError.Database.DatabaseNotFound");
}

#[test]
fn an_unknown_procedure_is_not_found() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let answer = run(&mut c, "CALL no.such.procedure()", map([]), map([]));
    assert_eq!(failure_code(&answer), "Neo.ClientError.Procedure.ProcedureNotFound");
}

#[test]
fn impersonation_is_refused() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let as_other = || map([("imp_user", Ps::String("someone".into()))]);
    assert_eq!(failure_code(&run(&mut c, "CREATE (:Imp)", map([]), as_other())), "Neo.ClientError.Security.Forbidden");
    c.request(0x0F, vec![]);
    assert_eq!(failure_code(&c.request(0x11, vec![as_other()])[0]), "Neo.ClientError.Security.Forbidden");
    c.request(0x0F, vec![]);
    let route = c.request(0x66, vec![map([]), Ps::List(vec![]), as_other()]);
    assert_eq!(failure_code(&route[0]), "Neo.ClientError.Security.Forbidden");
    c.request(0x0F, vec![]);
    assert_eq!(c.query("MATCH (n:Imp) RETURN count(n)").0, vec![Ps::Int(0)]);
}

/// Reads a FAILURE and then the end of the connection.
fn refused_then_closed(c: &mut Client) -> String {
    let answer = c.receive().expect("a FAILURE before the connection closes");
    let code = failure_code(&answer);
    assert!(c.is_closed());
    code
}

#[test]
fn requests_that_cannot_be_taken_are_answered_before_the_connection_closes() {
    let s = TestServer::start(bolt_only_with_message_limit(1 << 20), Auth::disabled());
    // Over the limit, sent whole with the PULL after it, as a driver does: the client reads why.
    let mut c = Client::ready(s.addr);
    let params = map([("big", Ps::String("x".repeat(3 << 20)))]);
    c.send(0x10, vec![Ps::String("RETURN size($big)".into()), params, map([])]);
    c.send(0x3F, vec![map([("n", Ps::Int(-1))])]);
    assert_eq!(refused_then_closed(&mut c), "Neo.ClientError.Request.Invalid");
    // Not PackStream.
    let mut c = Client::ready(s.addr);
    c.stream.write_all(&[0, 3, 0xC7, 0xC7, 0xC7, 0, 0]).unwrap();
    assert_eq!(refused_then_closed(&mut c), "Neo.ClientError.Request.Invalid");
    assert_healthy(s.addr);
}

#[test]
fn a_query_stopped_by_the_shutdown_fails_with_a_transient_error() {
    let mut s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let endless = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b WITH a WHERE a < 0 RETURN count(*)";
    c.send(0x10, vec![Ps::String(endless.into()), map([]), map([])]);
    c.send(0x3F, vec![map([("n", Ps::Int(-1))])]);
    std::thread::sleep(Duration::from_millis(200));
    let answer = std::thread::spawn(move || c.receive().unwrap());
    let server = s.server.take().unwrap();
    s.runtime.block_on(server.shutdown(Duration::from_millis(300))).unwrap();
    // Drivers retry a transient error, and the server that comes back runs the query again.
    assert_eq!(failure_code(&answer.join().unwrap()), "Neo.TransientError.General.DatabaseUnavailable");
}
