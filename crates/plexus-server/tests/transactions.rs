//! `SHOW TRANSACTIONS` lists what runs now; `TERMINATE TRANSACTIONS` stops it, and its client gets Neo4j's
//! `Terminated` code.

mod support;

use plexus_server::auth::Auth;
use plexus_server::packstream::{map, Ps};
use plexus_server::ServerConfig;
use support::{Client, TestServer};

#[test]
fn a_running_query_is_listed_and_terminated() {
    let s = TestServer::open();
    let mut busy = Client::ready(s.addr);
    let long = "UNWIND range(1, 10000000000) AS x WITH x WHERE x < 0 RETURN count(*) AS n";
    busy.send(0x10, vec![Ps::String(long.into()), map([]), map([])]);
    busy.send(0x3F, vec![map([("n", Ps::Int(-1))])]);
    let mut admin = Client::ready(s.addr);
    let show = "SHOW TRANSACTIONS YIELD transactionId, currentQuery, status, elapsedTime \
                WHERE currentQuery STARTS WITH 'UNWIND' RETURN transactionId, status, elapsedTime";
    let mut listed = None;
    for _ in 0..100 {
        let r = admin.request(0x10, vec![Ps::String(show.into()), map([]), map([])]);
        assert!(matches!(&r[0], Ps::Struct(0x70, _)), "{r:?}");
        let rows = admin.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
        if let Some(Ps::Struct(0x71, f)) = rows.first() {
            listed = Some(f[0].clone());
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let Some(Ps::List(row)) = listed else { panic!("the running query was not listed") };
    let Ps::String(id) = &row[0] else { panic!("{row:?}") };
    assert!(id.starts_with("neo4j-transaction-"), "{id}");
    assert_eq!(row[1], Ps::String("Running".into()));
    // The SHOW itself runs too, and lists itself.
    let (all, _) = admin.query("SHOW TRANSACTIONS YIELD currentQuery RETURN count(*) AS n");
    assert_eq!(all, vec![Ps::Int(2)]);
    // A command that does not parse stops nothing.
    let bad = admin.request(0x10, vec![Ps::String(format!("TERMINATE TRANSACTIONS '{id}' garbage")), map([]), map([])]);
    assert!(matches!(&bad[0], Ps::Struct(0x7F, _)), "{bad:?}");
    admin.request(0x0F, vec![]);
    let (still, _) = admin.query(&format!("SHOW TRANSACTIONS '{id}' YIELD status RETURN status"));
    assert_eq!(still, vec![Ps::String("Running".into())]);
    let (messages, _) = admin.query(&format!("TERMINATE TRANSACTIONS '{id}', 'neo4j-transaction-999999'"));
    assert_eq!(messages, vec![Ps::String(id.clone()), Ps::String("neo4j-transaction-999999".into())]);
    let run = busy.responses();
    let failure = match &run[0] {
        Ps::Struct(0x7F, f) => f[0].clone(),
        Ps::Struct(0x70, _) => busy.responses()[0].clone(),
        other => panic!("{other:?}"),
    };
    let code = match &failure {
        Ps::Struct(0x7F, f) => f[0].get("code").and_then(Ps::as_str).map(str::to_string),
        Ps::Map(_) => failure.get("code").and_then(Ps::as_str).map(str::to_string),
        _ => None,
    };
    assert_eq!(code.as_deref(), Some("Neo.ClientError.Transaction.Terminated"), "{failure:?}");
    let (messages, _) = admin.query(&format!("TERMINATE TRANSACTION '{id}' YIELD message RETURN message"));
    assert_eq!(messages, vec![Ps::String("Transaction not found.".into())], "it has stopped");
    let (first, _) = admin.query("TERMINATE TRANSACTIONS 'neo4j-transaction-1' YIELD message RETURN message");
    assert_eq!(first, vec![Ps::String("Transaction not found.".into())]);
}

#[test]
fn only_admins_list_and_stop_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let (auth, _) = Auth::open(dir.path(), Some("pw")).unwrap();
    auth.add_user("reader", "rpw", plexus_server::auth::Role::Reader).unwrap();
    let config = ServerConfig { bolt: "127.0.0.1:0".into(), http: String::new(), ..Default::default() };
    let s = TestServer::start(config, auth);
    let (mut c, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    c.request(0x01, vec![map([("user_agent", Ps::String("t".into()))])]);
    let logon = c.request(
        0x6A,
        vec![map([
            ("scheme", Ps::String("basic".into())),
            ("principal", Ps::String("reader".into())),
            ("credentials", Ps::String("rpw".into())),
        ])],
    );
    assert!(matches!(&logon[0], Ps::Struct(0x70, _)), "{logon:?}");
    let r = c.request(0x10, vec![Ps::String("SHOW TRANSACTIONS".into()), map([]), map([])]);
    match &r[0] {
        Ps::Struct(0x7F, f) => {
            assert_eq!(f[0].get("code").and_then(Ps::as_str), Some("Neo.ClientError.Security.Forbidden"))
        }
        other => panic!("{other:?}"),
    }
}

/// An explicit transaction is listed while it is open, idle or running a statement, under one id; terminating it
/// while idle makes its next statement and its commit fail, and nothing of it is committed.
#[test]
fn an_idle_explicit_transaction_is_listed_and_terminated() {
    let s = TestServer::open();
    let mut client = Client::ready(s.addr);
    let begin = client.request(0x11, vec![map([])]);
    assert!(matches!(&begin[0], Ps::Struct(0x70, _)), "{begin:?}");
    client.query("CREATE (:Doomed)");
    let mut admin = Client::ready(s.addr);
    let show = "SHOW TRANSACTIONS YIELD transactionId, currentQuery, status \
                WHERE currentQuery = '' RETURN transactionId, status";
    let (rows, _) = admin.query(show);
    let [Ps::String(id)] = &rows[..] else { panic!("the idle transaction was not listed: {rows:?}") };
    let (all, _) = admin.query("SHOW TRANSACTIONS YIELD transactionId RETURN count(*) AS n");
    assert_eq!(all, vec![Ps::Int(2)], "the idle transaction and the SHOW itself");
    let (connection, _) =
        admin.query(&format!("SHOW TRANSACTIONS '{id}' YIELD connectionId RETURN connectionId STARTS WITH 'bolt-'"));
    assert_eq!(connection, vec![Ps::Bool(true)], "the transaction names its connection");
    // Its statements run under its id.
    let (again, _) = client.query("MATCH (n:Doomed) RETURN count(n) AS n");
    assert_eq!(again, vec![Ps::Int(1)]);
    let (listed, _) = admin.query(&format!("SHOW TRANSACTIONS '{id}' YIELD status RETURN status"));
    assert_eq!(listed, vec![Ps::String("Running".into())]);

    // A SHOW run inside the transaction is listed as the transaction's statement, not as a second transaction.
    let (inside, _) = client.query("SHOW TRANSACTIONS YIELD transactionId RETURN collect(transactionId) AS ids");
    assert_eq!(inside, vec![Ps::List(vec![Ps::String(id.clone())])], "{inside:?}");

    let (messages, _) = admin.query(&format!("TERMINATE TRANSACTIONS '{id}' YIELD message RETURN message"));
    assert_eq!(messages, vec![Ps::String("Transaction terminated.".into())]);
    // Until its client touches it, it is listed as terminated, in Neo4j's words.
    let (status, _) = admin.query(&format!("SHOW TRANSACTIONS '{id}' YIELD status RETURN status"));
    assert_eq!(status, vec![Ps::String("Terminated with reason: Status.Transaction.Terminated".into())]);
    let run = client.request(0x10, vec![Ps::String("RETURN 1".into()), map([]), map([])]);
    match &run[0] {
        Ps::Struct(0x7F, f) => {
            assert_eq!(f[0].get("code").and_then(Ps::as_str), Some("Neo.ClientError.Transaction.Terminated"))
        }
        other => panic!("a terminated transaction ran a statement: {other:?}"),
    }
    client.request(0x0F, vec![]);
    let (count, _) = admin.query("MATCH (n:Doomed) RETURN count(n) AS n");
    assert_eq!(count, vec![Ps::Int(0)], "nothing of the terminated transaction was committed");
    let (after, _) = admin.query(&format!("SHOW TRANSACTIONS '{id}' YIELD status RETURN status"));
    assert!(after.is_empty(), "a transaction ended by RESET is still listed: {after:?}");

    // A commit of a terminated transaction fails too.
    client.request(0x11, vec![map([])]);
    client.query("CREATE (:Doomed)");
    let (rows, _) = admin.query(show);
    let [Ps::String(id)] = &rows[..] else { panic!("{rows:?}") };
    admin.query(&format!("TERMINATE TRANSACTIONS '{id}'"));
    let commit = client.request(0x12, vec![]);
    assert!(matches!(&commit[0], Ps::Struct(0x7F, _)), "a terminated transaction committed: {commit:?}");
    client.request(0x0F, vec![]);
    let (count, _) = admin.query("MATCH (n:Doomed) RETURN count(n) AS n");
    assert_eq!(count, vec![Ps::Int(0)]);
}

/// Connects with Bolt 5.4 and logs on as `user`.
fn log_on(s: &TestServer, user: &str, password: &str) -> Client {
    let (mut c, _) = Client::connect(s.addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    c.request(0x01, vec![map([("user_agent", Ps::String("t".into()))])]);
    let logon = c.request(
        0x6A,
        vec![map([
            ("scheme", Ps::String("basic".into())),
            ("principal", Ps::String(user.into())),
            ("credentials", Ps::String(password.into())),
        ])],
    );
    assert!(matches!(&logon[0], Ps::Struct(0x70, _)), "{logon:?}");
    c
}

#[test]
fn ids_may_be_parameters_and_the_owner_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (auth, _) = Auth::open(dir.path(), Some("pw")).unwrap();
    auth.add_user("bob", "bpw", plexus_server::auth::Role::Writer).unwrap();
    let config = ServerConfig { bolt: "127.0.0.1:0".into(), http: String::new(), ..Default::default() };
    let s = TestServer::start(config, auth);
    let mut bob = log_on(&s, "bob", "bpw");
    let mut admin = log_on(&s, "neo4j", "pw");
    let open_transaction = |bob: &mut Client, admin: &mut Client| {
        assert!(matches!(&bob.request(0x11, vec![map([])])[0], Ps::Struct(0x70, _)));
        let (ids, _) =
            admin.query("SHOW TRANSACTIONS YIELD transactionId, username WHERE username = 'bob' RETURN transactionId");
        let [Ps::String(id)] = &ids[..] else { panic!("{ids:?}") };
        id.clone()
    };
    let id = open_transaction(&mut bob, &mut admin);
    let terminate = "TERMINATE TRANSACTIONS $ids YIELD transactionId, username, message RETURN username, message";
    let run = |c: &mut Client, query: &str, ids: Ps| {
        let r = c.request(0x10, vec![Ps::String(query.into()), map([("ids", ids)]), map([])]);
        assert!(matches!(&r[0], Ps::Struct(0x70, _)), "{r:?}");
        let mut pulled = c.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
        pulled.pop();
        pulled
            .into_iter()
            .map(|r| match r {
                Ps::Struct(0x71, mut f) => f.remove(0),
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    // A string parameter.
    let rows = run(&mut admin, terminate, Ps::String(id.clone()));
    let terminated = Ps::List(vec![Ps::String("bob".into()), Ps::String("Transaction terminated.".into())]);
    assert_eq!(rows, vec![terminated.clone()]);
    assert!(matches!(&bob.request(0x13, vec![])[0], Ps::Struct(0x70, _)), "the rollback succeeds");
    // A list parameter.
    let id = open_transaction(&mut bob, &mut admin);
    let rows =
        run(&mut admin, terminate, Ps::List(vec![Ps::String(id), Ps::String("neo4j-transaction-999999".into())]));
    let missing = Ps::List(vec![Ps::String("".into()), Ps::String("Transaction not found.".into())]);
    assert_eq!(rows, vec![terminated, missing]);
    // Anything else is refused.
    let r = admin.request(0x10, vec![Ps::String(terminate.into()), map([("ids", Ps::Int(1))]), map([])]);
    assert!(matches!(&r[0], Ps::Struct(0x7F, _)), "{r:?}");
}

/// SHOW and TERMINATE answer from a query the server writes around the command: what the engine finds in that
/// query (warnings, an error's place) is not the client's to see.
#[test]
fn listings_give_no_warnings_and_no_places_beyond_the_command() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    for q in
        ["SHOW TRANSACTIONS", "SHOW CURRENT USER", "SHOW DATABASES", "TERMINATE TRANSACTIONS 'neo4j-transaction-9'"]
    {
        let run = c.request(0x10, vec![Ps::String(q.into()), map([]), map([])]);
        assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{q}: {run:?}");
        let (_, summary) = c.pull(-1, None);
        let Ps::Struct(0x70, f) = &summary else { panic!("{q}: {summary:?}") };
        assert!(f[0].get("notifications").is_none() && f[0].get("statuses").is_none(), "{q}: {summary:?}");
    }
    let q = "SHOW DATABASES YIELD name WHERE nosuch = 1";
    let failure = c.request(0x10, vec![Ps::String(q.into()), map([]), map([])]);
    let Ps::Struct(0x7F, f) = &failure[0] else { panic!("{failure:?}") };
    let message = f[0].get("message").and_then(Ps::as_str).unwrap_or_default().to_string();
    assert!(message.contains("nosuch") && !message.contains("column"), "{message}");
}

/// A transaction terminated while its result is open (between PULLs) sends no more of it: the next PULL fails
/// with `Terminated`, as its next statement would.
#[test]
fn terminating_a_transaction_ends_its_open_result() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let begun = c.request(0x11, vec![map([])]);
    assert!(matches!(&begun[0], Ps::Struct(0x70, _)), "{begun:?}");
    let run = c.request(0x10, vec![Ps::String("UNWIND range(1, 300000) AS x RETURN x".into()), map([]), map([])]);
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    let (first, _) = c.pull(10, None);
    assert_eq!(first.len(), 10);
    let mut admin = Client::ready(s.addr);
    let (ids, _) =
        admin.query("SHOW TRANSACTIONS YIELD transactionId, currentQuery WHERE currentQuery = '' RETURN transactionId");
    let [Ps::String(id)] = ids.as_slice() else { panic!("{ids:?}") };
    let (messages, _) = admin.query(&format!("TERMINATE TRANSACTION '{id}' YIELD message RETURN message"));
    assert_eq!(messages, vec![Ps::String("Transaction terminated.".into())]);
    let rest = c.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
    let Some(Ps::Struct(0x7F, f)) = rest.first() else { panic!("rows after the termination: {}", rest.len()) };
    assert_eq!(f[0].get("code").and_then(Ps::as_str), Some("Neo.ClientError.Transaction.Terminated"));
}

/// `clientAddress` is the address the client connects from, as Neo4j lists it.
#[test]
fn transactions_list_their_client_s_address() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let mine = c.stream.local_addr().unwrap().to_string();
    let (addresses, _) = c.query("SHOW TRANSACTIONS YIELD clientAddress RETURN clientAddress");
    assert_eq!(addresses, vec![Ps::String(mine)]);
}

/// An auto-commit result left open between PULLs is listed with its query, and TERMINATE TRANSACTIONS ends it
/// at its next PULL.
#[test]
fn an_open_auto_commit_result_is_listed_and_terminated() {
    let s = TestServer::open();
    let mut c = Client::ready(s.addr);
    let query = "UNWIND range(1, 300000) AS x RETURN x";
    let run = c.request(0x10, vec![Ps::String(query.into()), map([]), map([])]);
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    let (first, _) = c.pull(10, None);
    assert_eq!(first.len(), 10);
    let mut admin = Client::ready(s.addr);
    let show = format!(
        "SHOW TRANSACTIONS YIELD transactionId, currentQuery WHERE currentQuery = '{query}' RETURN transactionId"
    );
    let (ids, _) = admin.query(&show);
    let [Ps::String(id)] = ids.as_slice() else { panic!("the open result is not listed: {ids:?}") };
    let (messages, _) = admin.query(&format!("TERMINATE TRANSACTION '{id}' YIELD message RETURN message"));
    assert_eq!(messages, vec![Ps::String("Transaction terminated.".into())]);
    let rest = c.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
    let Some(Ps::Struct(0x7F, f)) = rest.first() else { panic!("rows after the termination: {}", rest.len()) };
    assert_eq!(f[0].get("code").and_then(Ps::as_str), Some("Neo.ClientError.Transaction.Terminated"));
    c.request(0x0F, vec![]);
    assert_eq!(admin.query(&show).0, Vec::<Ps>::new(), "listed after it ended");
    // A result read to its end is no longer listed either.
    let run = c.request(0x10, vec![Ps::String(query.into()), map([]), map([])]);
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    assert_eq!(c.pull(-1, None).0.len(), 300000);
    assert_eq!(admin.query(&show).0, Vec::<Ps>::new());
}

/// The `tx_metadata` a driver sends with BEGIN, or with an auto-commit RUN, is listed as `metaData` when asked
/// for by name (as in Neo4j, it is not among the columns listed without YIELD).
#[test]
fn transaction_metadata_is_listed() {
    let s = TestServer::open();
    let mut client = Client::ready(s.addr);
    let metadata = map([("app", Ps::String("billing".into())), ("n", Ps::Int(7))]);
    let begin = client.request(0x11, vec![map([("tx_metadata", metadata.clone())])]);
    assert!(matches!(&begin[0], Ps::Struct(0x70, _)), "{begin:?}");
    let mut admin = Client::ready(s.addr);
    let show = "SHOW TRANSACTIONS YIELD metaData, currentQuery WHERE currentQuery = '' RETURN metaData";
    assert_eq!(admin.query(show).0, vec![metadata]);
    let (own, _) = admin.query(
        "SHOW TRANSACTIONS YIELD metaData, currentQuery WHERE currentQuery STARTS WITH 'SHOW' \
                                RETURN metaData",
    );
    assert_eq!(own, vec![map([])], "none given");
    let run = admin.request(
        0x10,
        vec![
            Ps::String(
                "SHOW TRANSACTIONS YIELD metaData, currentQuery WHERE currentQuery STARTS WITH 'SHOW' RETURN metaData"
                    .into(),
            ),
            map([]),
            map([("tx_metadata", map([("who", Ps::String("admin".into()))]))]),
        ],
    );
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    assert_eq!(admin.pull(-1, None).0, vec![map([("who", Ps::String("admin".into()))])]);
    let r = admin.request(0x10, vec![Ps::String("SHOW TRANSACTIONS".into()), map([]), map([])]);
    let Ps::Struct(0x70, f) = &r[0] else { panic!("{r:?}") };
    let Some(Ps::List(fields)) = f[0].get("fields") else { panic!("{r:?}") };
    assert_eq!(fields.len(), 10, "the default columns");
    admin.pull(-1, None);

    // `CALL tx.setMetaData` inside the transaction replaces what BEGIN gave; null clears it.
    let set = |c: &mut Client, argument: &str, params: Ps| {
        let query = format!("CALL tx.setMetaData({argument})");
        let run = c.request(0x10, vec![Ps::String(query), params, map([])]);
        let pulled = c.request(0x3F, vec![map([("n", Ps::Int(-1))])]);
        (run, pulled)
    };
    let (run, _) = set(&mut client, "$m", map([("m", map([("app", Ps::String("reports".into()))]))]));
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    assert_eq!(admin.query(show).0, vec![map([("app", Ps::String("reports".into()))])]);
    set(&mut client, "null", map([]));
    assert_eq!(admin.query(show).0, vec![map([])]);
    // Not a map: refused, in the transaction's words (which fails it, as any failed statement does).
    let (run, _) = set(&mut client, "[1, 2]", map([]));
    assert!(matches!(&run[0], Ps::Struct(0x7F, _)), "{run:?}");
    // An argument that would write is evaluated read-only.
    let (run, _) = set(&mut admin, "1) AS x CREATE (:Sneaky) RETURN (1", map([]));
    assert!(matches!(&run[0], Ps::Struct(0x7F, _)), "{run:?}");
    admin.request(0x0F, vec![]);
    assert_eq!(admin.query("MATCH (n:Sneaky) RETURN count(n)").0, vec![Ps::Int(0)]);
}

/// Auto-commit statements from many connections that write the same node: a statement whose commit meets a
/// write conflict runs again inside the server (its result was held until then), so every client's RUN succeeds
/// and no increment is lost, as with Neo4j's locks.
#[test]
fn contended_auto_commit_writes_all_succeed() {
    let s = TestServer::open();
    Client::ready(s.addr).query("CREATE (:Counter {n: 0})");
    const CLIENTS: usize = 6;
    const INCREMENTS: usize = 60;
    std::thread::scope(|scope| {
        for _ in 0..CLIENTS {
            scope.spawn(|| {
                let mut client = Client::ready(s.addr);
                for _ in 0..INCREMENTS {
                    let (_, summary) = client.query("MATCH (c:Counter) SET c.n = c.n + 1");
                    assert!(matches!(&summary, Ps::Struct(0x70, _)), "{summary:?}");
                }
            });
        }
    });
    let (rows, _) = Client::ready(s.addr).query("MATCH (c:Counter) RETURN c.n");
    assert_eq!(rows, [Ps::Int((CLIENTS * INCREMENTS) as i64)]);
}
