//! `CALL dbms.backup('name')` over Bolt: an admin's backup lands in the configured directory and opens as the
//! served database was; it is refused without a backup directory, for a non-admin, for a name that would leave
//! the directory, and for a name already taken.

mod support;

use std::sync::Arc;

use plexus_server::auth::{Auth, Role};
use plexus_server::packstream::{map, Ps};
use plexus_server::service::Service;
use plexus_server::{Server, ServerConfig};
use support::{Client, TestServer};

/// A Bolt-only server over an in-memory database with `backup_dir`, authentication on (initial user `neo4j`
/// with password `pw`, and a reader `ann`).
fn server(backup_dir: Option<std::path::PathBuf>, users: &tempfile::TempDir) -> TestServer {
    let (auth, _) = Auth::open(users.path(), Some("pw")).unwrap();
    auth.add_user("ann", "apw", Role::Reader).unwrap();
    let config = ServerConfig { bolt: "127.0.0.1:0".into(), http: String::new(), ..Default::default() };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut service = Service::new(plexus::Database::in_memory(), auth, config.limits());
    service.backup_dir = backup_dir;
    let server = runtime.block_on(Server::start_with(Arc::new(service), &config, None)).unwrap();
    TestServer { addr: server.bolt_addr.unwrap(), runtime, server: Some(server) }
}

fn failure_message(c: &mut Client, q: &str) -> (String, String) {
    match c.request(0x10, vec![Ps::String(q.into()), map([]), map([])]).remove(0) {
        Ps::Struct(0x7F, f) => {
            let field = |k: &str| f[0].get(k).and_then(Ps::as_str).unwrap_or_default().to_string();
            c.request(0x0F, vec![]); // RESET after the failure
            (field("code"), field("message"))
        }
        other => panic!("{q}: {other:?}"),
    }
}

#[test]
fn an_admin_backup_opens_as_the_served_database_was() {
    let (users, backups) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dir = backups.path().join("nested");
    let s = server(Some(dir.clone()), &users);
    let mut admin = Client::logged_on(s.addr, "neo4j", "pw");
    admin.query("UNWIND range(1, 500) AS i CREATE (:P {id: i})-[:R {w: i}]->(:Q)");
    let (rows, _) =
        admin.query("CALL dbms.backup('monday') YIELD name, nodes, relationships RETURN [name, nodes, relationships]");
    assert_eq!(rows, vec![Ps::List(vec![Ps::String("monday".into()), Ps::Int(1000), Ps::Int(500)])]);
    admin.query("CREATE (:P {id: 501})");

    let (code, message) = failure_message(&mut admin, "CALL dbms.backup('monday')");
    assert_eq!(code, "Neo.ClientError.Procedure.ProcedureCallFailed");
    assert!(message.contains("not empty"), "{message}");
    for bad in ["../escape", ".hidden", "a/b", ""] {
        let (code, message) = failure_message(&mut admin, &format!("CALL dbms.backup('{bad}')"));
        assert_eq!(code, "Neo.ClientError.Procedure.ProcedureCallFailed", "{bad}: {message}");
    }
    assert!(!backups.path().join("escape").exists());
    let run = admin.request(
        0x10,
        vec![
            Ps::String("CALL dbms.backup($n) YIELD path RETURN path".into()),
            map([("n", Ps::String("tuesday".into()))]),
            map([]),
        ],
    );
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    let (paths, _) = admin.pull(-1, None);
    assert_eq!(paths, vec![Ps::String(dir.join("tuesday").display().to_string())]);

    let monday = plexus::Database::open(dir.join("monday")).unwrap();
    let r = monday.execute("MATCH (p:P)-[r:R]->(:Q) RETURN count(*) AS n, sum(r.w) AS w", &Default::default()).unwrap();
    assert_eq!(
        format!("{:?}", r.rows),
        format!("{:?}", vec![vec![plexus::cypher::Value::Int(500), plexus::cypher::Value::Int(125250)]])
    );
    let tuesday = plexus::Database::open(dir.join("tuesday")).unwrap();
    assert_eq!(tuesday.read().node_count(), 1001, "the later backup has the later commit");
}

#[test]
fn backups_are_refused_without_a_directory_and_to_non_admins() {
    let users = tempfile::tempdir().unwrap();
    let s = server(None, &users);
    let mut admin = Client::logged_on(s.addr, "neo4j", "pw");
    let (code, message) = failure_message(&mut admin, "CALL dbms.backup('x')");
    assert_eq!(code, "Neo.ClientError.Procedure.ProcedureCallFailed");
    assert!(message.contains("--backup-dir"), "{message}");

    let (users, backups) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = server(Some(backups.path().to_path_buf()), &users);
    let mut reader = Client::logged_on(s.addr, "ann", "apw");
    let (code, _) = failure_message(&mut reader, "CALL dbms.backup('x')");
    assert_eq!(code, "Neo.ClientError.Security.Forbidden");
    assert!(!backups.path().join("x").exists());
    let (code, _) = failure_message(&mut reader, "CALL dbms.backup(x)");
    assert_eq!(code, "Neo.ClientError.Statement.SyntaxError");
}

#[test]
fn a_failing_yield_writes_nothing_and_a_backup_dir_inside_the_data_is_refused() {
    let (users, backups) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = server(Some(backups.path().to_path_buf()), &users);
    let mut admin = Client::logged_on(s.addr, "neo4j", "pw");
    for q in [
        "CALL dbms.backup('y1') YIELD nope RETURN nope",
        "CALL dbms.backup('y2') YIELD name CREATE (:M) RETURN name",
        "CALL dbms.backup('y3') YIELD name RETURN nosuchfn(name)",
    ] {
        let (code, message) = failure_message(&mut admin, q);
        assert!(!code.is_empty(), "{q}: {message}");
    }
    assert_eq!(std::fs::read_dir(backups.path()).unwrap().count(), 0, "no backup was written");

    let data = tempfile::tempdir().unwrap();
    let inside = ServerConfig {
        data: data.path().to_path_buf(),
        backup_dir: Some(data.path().join("backups")),
        ..Default::default()
    };
    assert!(inside.validate().unwrap_err().contains("inside the data directory"));
    let outside = ServerConfig { backup_dir: Some(backups.path().to_path_buf()), ..inside };
    assert!(outside.validate().is_ok());
}
