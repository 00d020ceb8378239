//! `LOAD CSV` through the server reads its import directory only, and says so with Neo4j's status code.

mod support;

use std::time::Duration;

use plexus_server::packstream::{map, Ps};
use plexus_server::{Server, ServerConfig};
use support::Client;

fn failure_code(r: &[Ps]) -> Option<&str> {
    match &r[0] {
        Ps::Struct(0x7F, f) => f[0].get("code").and_then(Ps::as_str),
        _ => None,
    }
}

#[test]
fn load_csv_reads_the_import_directory_only_and_loads_in_parts() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (runtime, server) = support::start_on_disk(data.clone());
    let mut c = Client::ready(server.bolt_addr.unwrap());
    // No import directory yet: a clear refusal.
    let r = c.request(0x10, vec![Ps::String("LOAD CSV FROM 'file:///a.csv' AS r RETURN r".into()), map([]), map([])]);
    assert_eq!(failure_code(&r), Some("Neo.ClientError.Statement.ExternalResourceFailed"), "{r:?}");
    c.request(0x0F, vec![]);
    std::fs::create_dir(data.join("import")).unwrap();
    std::fs::write(data.join("import/a.csv"), "name,n\nx,1\ny,2\n").unwrap();
    std::fs::write(dir.path().join("outside.csv"), "secret\n").unwrap();
    let (records, _) =
        c.query("LOAD CSV WITH HEADERS FROM 'file:///a.csv' AS r CREATE (t:T {name: r.name}) RETURN t.name AS name");
    assert_eq!(records, vec![Ps::String("x".into()), Ps::String("y".into())]);
    for url in ["file:///../outside.csv", format!("file://{}", dir.path().join("outside.csv").display()).as_str()] {
        let q = format!("LOAD CSV FROM '{url}' AS r RETURN r");
        let r = c.request(0x10, vec![Ps::String(q), map([]), map([])]);
        // `..` leads outside; an absolute path is taken inside the import directory, where it names no file.
        assert_eq!(failure_code(&r), Some("Neo.ClientError.Statement.ExternalResourceFailed"), "{url}: {r:?}");
        c.request(0x0F, vec![]);
    }
    // Loading in parts, each a durable commit of its own; refused inside an explicit transaction.
    let mut lines = String::from("i\n");
    for i in 0..2500 {
        lines.push_str(&format!("{i}\n"));
    }
    std::fs::write(data.join("import/many.csv"), lines).unwrap();
    let (_, summary) = c.query(
        "LOAD CSV WITH HEADERS FROM 'file:///many.csv' AS r CALL { WITH r CREATE (:M {i: toInteger(r.i)}) } \
         IN TRANSACTIONS OF 1000 ROWS",
    );
    match summary {
        Ps::Struct(0x70, f) => assert!(f[0].get("bookmark").is_some(), "{f:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.query("MATCH (m:M) RETURN count(m) AS c").0, vec![Ps::Int(2500)]);
    assert!(matches!(&c.request(0x11, vec![map([])])[0], Ps::Struct(0x70, _)));
    let r = c.request(
        0x10,
        vec![Ps::String("UNWIND [1] AS i CALL { WITH i CREATE (:N) } IN TRANSACTIONS".into()), map([]), map([])],
    );
    assert_eq!(failure_code(&r), Some("Neo.DatabaseError.Transaction.TransactionStartFailed"), "{r:?}");
    c.request(0x0F, vec![]);
    // A part that fails keeps its own error's code (not a transient one a driver would retry); the parts before
    // it stay.
    let q = "UNWIND range(1, 3) AS i CALL { WITH i CREATE (:Z {v: 1 / (i - 2)}) } IN TRANSACTIONS OF 1 ROW";
    let r = c.request(0x10, vec![Ps::String(q.into()), map([]), map([])]);
    assert_eq!(failure_code(&r), Some("Neo.ClientError.Statement.ArithmeticError"), "{r:?}");
    c.request(0x0F, vec![]);
    assert_eq!(c.query("MATCH (z:Z) RETURN count(z) AS c").0, vec![Ps::Int(1)]);
    drop(c);
    runtime.block_on(server.shutdown(Duration::from_secs(5))).unwrap();
    // Every part survived: reopened from its files.
    let db = plexus::Database::open(&data).unwrap();
    let count = db.execute("MATCH (m:M) RETURN count(m)", &plexus::Params::new()).unwrap();
    assert_eq!(count.rows, vec![vec![plexus::ResultValue::Int(2500)]]);
}

#[test]
fn an_import_directory_holding_the_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        data: dir.path().join("data"),
        import_dir: Some(dir.path().to_path_buf()),
        bolt: "127.0.0.1:0".into(),
        http: String::new(),
        auth: false,
        ..Default::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let refused = runtime.block_on(Server::start(&config)).err().expect("refused");
    assert!(refused.contains("import directory"), "{refused}");
}
