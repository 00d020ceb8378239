//! `LOAD CSV`: files read as rows (lists, or maps with headers), Neo4j's handling of empty and quoted fields,
//! compressed files, large files a batch at a time, and the file access an embedding program chooses.

use std::io::Write;

use plexus_cypher::{Engine, ErrorKind, FileAccess, Params, ResultValue};
use plexus_storage::Store;

fn s(x: &str) -> ResultValue {
    ResultValue::String(x.into())
}

fn int(i: i64) -> ResultValue {
    ResultValue::Int(i)
}

struct Db {
    store: Store,
    engine: Engine,
    dir: tempfile::TempDir,
}

impl Db {
    fn new() -> Db {
        Db { store: Store::in_memory(), engine: Engine::new(), dir: tempfile::tempdir().unwrap() }
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        format!("file://{}", path.display())
    }

    fn rows(&self, q: &str) -> Vec<Vec<ResultValue>> {
        self.engine.execute(&self.store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows
    }

    fn err(&self, q: &str) -> plexus_cypher::CypherError {
        self.engine.execute(&self.store, q, &Params::new()).expect_err(q)
    }
}

#[test]
fn rows_as_lists_and_as_maps() {
    let db = Db::new();
    let url = db.file("people.csv", "id,name,age\n1,Ann,30\n2,\"Bob, Jr.\",\n3,\"Cy \"\"the\"\" man\",41\n");
    let rows = db.rows(&format!("LOAD CSV FROM '{url}' AS row RETURN row"));
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[2], vec![ResultValue::List(vec![s("2"), s("Bob, Jr."), ResultValue::Null])]);
    let q = format!(
        "LOAD CSV WITH HEADERS FROM '{url}' AS row \
         CREATE (p:Person {{id: toInteger(row.id), name: row.name, age: toInteger(row.age)}})"
    );
    db.rows(&q);
    let rows = db.rows("MATCH (p:Person) RETURN p.id, p.name, p.age ORDER BY p.id");
    assert_eq!(
        rows,
        vec![
            vec![int(1), s("Ann"), int(30)],
            vec![int(2), s("Bob, Jr."), ResultValue::Null],
            vec![int(3), s("Cy \"the\" man"), int(41)],
        ]
    );
}

#[test]
fn separators_short_and_long_records_and_compressed_files() {
    let db = Db::new();
    let url = db.file("semi.csv", "a;b;c\n1;;\"x\"\n;\"\";\n\"multi\nline\";2\n\n4;5;6;7\n");
    let q = format!("LOAD CSV WITH HEADERS FROM '{url}' AS row FIELDTERMINATOR ';' RETURN row.a, row.b, row.c");
    let null = ResultValue::Null;
    assert_eq!(
        db.rows(&q),
        vec![
            vec![s("1"), null.clone(), s("x")],
            vec![null.clone(), s(""), null.clone()],
            vec![s("multi\nline"), s("2"), null.clone()],
            vec![s("4"), s("5"), s("6")],
        ]
    );
    let tabs = db.file("t.tsv", "x\ty\n1\t2\n");
    assert_eq!(db.rows(&format!("LOAD CSV FROM '{tabs}' AS r FIELDTERMINATOR '\\t' RETURN r[1]")).len(), 2);
    let gz = db.dir.path().join("n.csv.gz");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    for i in 0..5000 {
        writeln!(enc, "{i},{}", i * 2).unwrap();
    }
    enc.finish().unwrap();
    let q = format!("LOAD CSV FROM 'file://{}' AS r RETURN count(*) AS n, sum(toInteger(r[1])) AS s", gz.display());
    assert_eq!(db.rows(&q), vec![vec![int(5000), int(4999 * 5000)]]);
    // Many batches, each row from the file once, stopping early under a LIMIT.
    let q = format!("LOAD CSV FROM 'file://{}' AS r RETURN r[0] AS i LIMIT 3", gz.display());
    assert_eq!(db.rows(&q), vec![vec![s("0")], vec![s("1")], vec![s("2")]]);
    // A URL per input row.
    let plain = db.file("plain.csv", "a\nb\nc\n");
    let q = format!(
        "UNWIND ['{plain}', '{tabs}'] AS f LOAD CSV FROM f AS r RETURN f = '{tabs}' AS tabs, count(r) AS n ORDER BY tabs"
    );
    assert_eq!(db.rows(&q), vec![vec![ResultValue::Bool(false), int(3)], vec![ResultValue::Bool(true), int(2)]]);
}

#[test]
fn quotes_inside_fields_spaces_in_urls_and_files_that_are_not_regular() {
    let db = Db::new();
    let url = db.file("inches.csv", "1,5'11\",a\n2,6'0\",b\n");
    assert_eq!(
        db.rows(&format!("LOAD CSV FROM '{url}' AS r RETURN r[1] AS h")),
        vec![vec![s("5'11\"")], vec![s("6'0\"")]]
    );
    let spaced = db.file("a b.csv", "x\n");
    assert_eq!(db.rows(&format!("LOAD CSV FROM '{}' AS r RETURN r", spaced.replace(' ', "%20"))).len(), 1);
    #[cfg(unix)]
    {
        let e = db.err("LOAD CSV FROM 'file:///dev/zero' AS r RETURN r LIMIT 1");
        assert_eq!(e.kind, ErrorKind::ExternalResource, "{e}");
    }
}

#[test]
fn bad_files_and_urls_are_clear_errors() {
    let db = Db::new();
    let missing = format!("file://{}/none.csv", db.dir.path().display());
    let e = db.err(&format!("LOAD CSV FROM '{missing}' AS r RETURN r"));
    assert_eq!(e.kind, ErrorKind::ExternalResource);
    assert!(e.message.contains("none.csv"), "{e}");
    assert_eq!(db.err("LOAD CSV FROM 'https://example.com/a.csv' AS r RETURN r").kind, ErrorKind::ExternalResource);
    assert_eq!(db.err("LOAD CSV FROM 42 AS r RETURN r").kind, ErrorKind::TypeError);
    let bad = db.file("bad.csv", "ok,1\n\"open,2\n");
    let e = db.err(&format!("LOAD CSV FROM '{bad}' AS r RETURN r"));
    assert!(e.message.contains("line 2"), "{e}");
    let after = db.file("after.csv", "\"a\"b,1\n");
    assert_eq!(db.err(&format!("LOAD CSV FROM '{after}' AS r RETURN r")).kind, ErrorKind::ExternalResource);
    let e = db.err("LOAD CSV FROM 'file:///x.csv' AS r FIELDTERMINATOR ';;' RETURN r");
    assert_eq!(e.kind, ErrorKind::SyntaxError);
    // A failing load leaves nothing behind.
    let half = db.file("half.csv", "1\n2\n\"3\n");
    assert!(db.engine.execute(&db.store, &format!("LOAD CSV FROM '{half}' AS r CREATE (:H)"), &Params::new()).is_err());
    assert_eq!(db.rows("MATCH (h:H) RETURN count(h)"), vec![vec![int(0)]]);
}

#[test]
fn an_import_directory_confines_what_is_read() {
    let db = Db::new();
    std::fs::create_dir(db.dir.path().join("import")).unwrap();
    std::fs::write(db.dir.path().join("import/a.csv"), "1\n2\n").unwrap();
    std::fs::write(db.dir.path().join("secret.csv"), "s\n").unwrap();
    let q = "LOAD CSV FROM 'file:///a.csv' AS r RETURN count(r)";
    // Planned before the change: the plan cache must not keep the old access.
    assert!(db.engine.execute(&db.store, q, &Params::new()).is_err(), "no a.csv in the working directory");
    db.engine.set_file_access(FileAccess::Under(db.dir.path().join("import")));
    assert_eq!(db.rows(q), vec![vec![int(2)]]);
    for url in ["file:///../secret.csv", "../secret.csv", "file:///nested/../../secret.csv"] {
        let e = db.err(&format!("LOAD CSV FROM '{url}' AS r RETURN r"));
        assert_eq!(e.kind, ErrorKind::ExternalResource, "{url}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(db.dir.path().join("secret.csv"), db.dir.path().join("import/link.csv")).unwrap();
        let e = db.err("LOAD CSV FROM 'file:///link.csv' AS r RETURN r");
        assert_eq!(e.kind, ErrorKind::ExternalResource, "a link leading out");
    }
    db.engine.set_file_access(FileAccess::Nowhere);
    assert_eq!(db.err(q).kind, ErrorKind::ExternalResource);
}

#[test]
fn linenumber_and_file_name_the_record_being_read() {
    let db = Db::new();
    let url = db.file("lines.csv", "id,name\n1,a\n\n2,\"b\nc\"\n3,d\n");
    let path = db.dir.path().join("lines.csv").display().to_string();
    let rows = db.rows(&format!(
        "LOAD CSV WITH HEADERS FROM '{url}' AS r WITH r, linenumber() AS line WHERE line > 2 RETURN r.id, line, file()"
    ));
    // Lines count from 1 and include the header, blank lines and those inside quoted fields.
    assert_eq!(rows, vec![vec![s("2"), int(4), s(&path)], vec![s("3"), int(6), s(&path)]]);
    assert_eq!(db.rows("RETURN linenumber(), file()"), vec![vec![ResultValue::Null, ResultValue::Null]]);
    // They are no variables of the query's.
    assert_eq!(
        db.rows(&format!("LOAD CSV FROM '{url}' AS r WITH * RETURN * LIMIT 1")),
        vec![vec![ResultValue::List(vec![s("id"), s("name")])]]
    );
    assert_eq!(db.err("RETURN linenumber(1)").kind, ErrorKind::SyntaxError);
}

#[test]
fn call_in_transactions_commits_every_n_rows() {
    let db = Db::new();
    let mut text = String::from("id,name\n");
    for i in 0..5000 {
        text.push_str(&format!("{i},n{i}\n"));
    }
    let url = db.file("big.csv", &text);
    let before = db.store.read().version();
    let q = format!(
        "LOAD CSV WITH HEADERS FROM '{url}' AS row \
         CALL {{ WITH row CREATE (:Item {{id: toInteger(row.id), name: row.name}}) }} IN TRANSACTIONS OF 1000 ROWS"
    );
    let stats = db.engine.execute(&db.store, &q, &Params::new()).unwrap().stats;
    assert_eq!(stats.nodes_created, 5000);
    assert_eq!(db.store.read().version() - before, 5, "one commit per 1,000 rows");
    assert_eq!(db.rows("MATCH (i:Item) RETURN count(i), sum(i.id)"), vec![vec![int(5000), int(4999 * 5000 / 2)]]);
    // The default part is 1,000 rows; a failing row keeps the parts committed before it.
    let before = db.store.read().version();
    let e = db.err("UNWIND range(1, 2500) AS i CALL { WITH i CREATE (:Part {v: 1 / (i - 2100)}) } IN TRANSACTIONS");
    assert_eq!(e.kind, ErrorKind::ArithmeticError);
    assert_eq!(db.rows("MATCH (p:Part) RETURN count(p)"), vec![vec![int(2000)]]);
    assert_eq!(db.store.read().version() - before, 2);
    // Deleting in parts, with rows read before the first part committed.
    db.rows("MATCH (i:Item) CALL { WITH i DETACH DELETE i } IN TRANSACTIONS OF 777 ROWS");
    assert_eq!(db.rows("MATCH (i:Item) RETURN count(i)"), vec![vec![int(0)]]);
}

/// A LIMIT after `CALL { } IN TRANSACTIONS` limits the rows returned, never the rows written (as for any write
/// before a LIMIT), even when the statement's rows come in several batches.
#[test]
fn a_limit_after_call_in_transactions_still_writes_every_row() {
    let db = Db::new();
    let q =
        "UNWIND range(1, 5000) AS i CALL { WITH i CREATE (:X {i: i}) } IN TRANSACTIONS OF 100 ROWS RETURN i LIMIT 1";
    assert_eq!(db.rows(q), vec![vec![int(1)]]);
    assert_eq!(db.rows("MATCH (x:X) RETURN count(x)"), vec![vec![int(5000)]]);
    let q = "UNWIND range(1, 3000) AS i CALL { WITH i CREATE (y:Y {i: i}) RETURN y } IN TRANSACTIONS \
             WITH i, y LIMIT 3 RETURN count(*)";
    assert_eq!(db.rows(q), vec![vec![int(3)]]);
    assert_eq!(db.rows("MATCH (y:Y) RETURN count(y)"), vec![vec![int(3000)]]);
    let q = "UNWIND range(1, 3000) AS i CALL { WITH i CREATE (:Z {i: i}) } IN TRANSACTIONS RETURN i LIMIT 0";
    assert!(db.rows(q).is_empty());
    assert_eq!(db.rows("MATCH (z:Z) RETURN count(z)"), vec![vec![int(3000)]]);
}

/// What follows `CALL { } IN TRANSACTIONS` sees each part's rows only once the part committed, as in Neo4j: its
/// failure rolls back none of them, the last part's included (which was committed with the statement's end, so
/// a failing RETURN lost it).
#[test]
fn a_failure_after_call_in_transactions_keeps_every_committed_part() {
    let db = Db::new();
    for (per_part, q) in [
        (
            "OF 2 ROWS",
            "UNWIND [1, 2, 3] AS x CALL (x) { CREATE (:T {x: x}) } IN TRANSACTIONS OF 2 ROWS RETURN 10 / (x - 3)",
        ),
        ("one part", "UNWIND [1, 2, 3] AS x CALL (x) { CREATE (:U {x: x}) } IN TRANSACTIONS RETURN 10 / (x - 3)"),
    ] {
        assert_eq!(db.err(q).kind, ErrorKind::ArithmeticError, "{per_part}");
    }
    assert_eq!(db.rows("MATCH (t:T) RETURN count(t)"), vec![vec![int(3)]]);
    assert_eq!(db.rows("MATCH (u:U) RETURN count(u)"), vec![vec![int(3)]]);
}

/// `ON ERROR CONTINUE | BREAK` roll a failed transaction back and go on (or stop); `REPORT STATUS AS s` says
/// what became of each input row's transaction; the subquery's results are null for a failed one.
#[test]
fn call_in_transactions_can_go_on_after_a_failure() {
    let db = Db::new();
    let q = "UNWIND range(1, 10) AS i CALL { WITH i CREATE (:C {i: i, v: 1 / (i % 4)}) RETURN i * 10 AS t }              IN TRANSACTIONS OF 3 ROWS ON ERROR CONTINUE REPORT STATUS AS s              RETURN i, t, s.committed AS ok, s.errorMessage IS NOT NULL AS failed, s.transactionId AS tx";
    let result = db.engine.execute(&db.store, q, &Params::new()).unwrap();
    // Parts: 1-3 commit, 4-6 fail at 4, 7-9 fail at 8, 10 commits.
    let ok: Vec<bool> = result.rows.iter().map(|r| r[2] == ResultValue::Bool(true)).collect();
    assert_eq!(ok, [true, true, true, false, false, false, false, false, false, true]);
    assert_eq!(result.rows[0][1], int(10));
    assert_eq!(result.rows[3][1], ResultValue::Null, "a failed part's results are null");
    assert_eq!(result.rows[4][3], ResultValue::Bool(true));
    assert_eq!(result.rows[9][4], s("part-4"));
    assert_eq!(result.stats.nodes_created, 4, "only the committed parts' nodes count");
    assert_eq!(
        db.rows("MATCH (c:C) RETURN collect(c.i)"),
        vec![vec![ResultValue::List(vec![int(1), int(2), int(3), int(10)])]]
    );

    // BREAK: nothing after the failed part is tried.
    let q = "UNWIND range(1, 6) AS i CALL { WITH i CREATE (:D {v: 1 / (i - 3)}) } IN TRANSACTIONS OF 2 ROWS              ON ERROR BREAK REPORT STATUS AS s RETURN i, s.started AS started, s.committed AS committed";
    let rows = db.rows(q);
    let started: Vec<ResultValue> = rows.iter().map(|r| r[1].clone()).collect();
    assert_eq!(started, [true, true, true, true, false, false].map(ResultValue::Bool));
    assert_eq!(db.rows("MATCH (d:D) RETURN count(d)"), vec![vec![int(2)]]);
    // Without REPORT STATUS, CONTINUE still goes on.
    db.rows("UNWIND [1, 0, 2] AS i CALL { WITH i CREATE (:E {v: 1 / i}) } IN TRANSACTIONS OF 1 ROW ON ERROR CONTINUE");
    assert_eq!(db.rows("MATCH (e:E) RETURN count(e)"), vec![vec![int(2)]]);
}

/// `IN [n] CONCURRENT TRANSACTIONS` is accepted and runs its parts one after another: the same effects and
/// statuses, with the parts in order.
#[test]
fn concurrent_transactions_run_their_parts_in_turn() {
    let db = Db::new();
    let q = "UNWIND [1, 0, 2, 3] AS i CALL (i) { CREATE (:F {v: 1 / i}) } IN 4 CONCURRENT TRANSACTIONS OF 1 ROW \
             ON ERROR CONTINUE REPORT STATUS AS s RETURN i, s.committed AS ok";
    let ok: Vec<ResultValue> = db.rows(q).iter().map(|r| r[1].clone()).collect();
    assert_eq!(ok, [true, false, true, true].map(ResultValue::Bool));
    db.rows("UNWIND range(1, 5) AS i CALL (i) { CREATE (:G {i: i}) } IN CONCURRENT TRANSACTIONS");
    let mut params = Params::new();
    params.insert("n".into(), plexus_cypher::Value::Int(2));
    let q = "UNWIND range(1, 5) AS i CALL (i) { CREATE (:G {i: i}) } IN $n CONCURRENT TRANSACTIONS OF 2 ROWS";
    db.engine.execute(&db.store, q, &params).unwrap();
    assert_eq!(db.rows("MATCH (g:G) RETURN count(g)"), vec![vec![int(10)]]);
    let e = db.err("UNWIND [1] AS i CALL (i) { CREATE (:G) } IN 0 CONCURRENT TRANSACTIONS");
    assert_eq!(e.detail, "InvalidArgument");
}

#[test]
fn call_in_transactions_needs_a_transaction_of_its_own() {
    let db = Db::new();
    let q = "UNWIND range(1, 3) AS i CALL { WITH i CREATE (:A) } IN TRANSACTIONS OF 2 ROWS";
    let mut tx = db.store.write();
    let e = db.engine.execute_in(&mut tx, q, &Params::new()).unwrap_err();
    assert_eq!(e.detail, "ImplicitTransactionRequired");
    drop(tx);
    // An auto-commit statement run in a transaction the caller commits (a server's auto-commit).
    let mut tx = db.store.write();
    db.engine.execute_implicit_with(&mut tx, q, &Params::new(), None).unwrap();
    tx.commit().unwrap();
    assert_eq!(db.rows("MATCH (a:A) RETURN count(a)"), vec![vec![int(3)]]);
    for bad in [
        "CALL { CALL { CREATE (:B) } IN TRANSACTIONS } RETURN 1",
        "UNWIND [1] AS i CALL { WITH i CREATE (:B) } IN TRANSACTIONS OF 2 ROWS ON ERROR RETRY",
        "UNWIND [1] AS i CALL { WITH i CREATE (:B) } IN TRANSACTIONS REPORT STATUS AS s",
        "UNWIND [1] AS i CALL { WITH i CREATE (:B) } IN TRANSACTIONS ON ERROR FAIL REPORT STATUS AS s",
        "CREATE (:B) WITH 1 AS one UNWIND [1, 2] AS i CALL { WITH i CREATE (:B) } IN TRANSACTIONS OF 1 ROW",
        "CALL { CREATE (:B) RETURN 1 AS x } IN TRANSACTIONS RETURN x UNION ALL RETURN 2 AS x",
    ] {
        assert_eq!(db.err(bad).kind, ErrorKind::SyntaxError, "{bad}");
    }
    let plan = db.rows("EXPLAIN UNWIND [1] AS i CALL { WITH i CREATE (:B) } IN TRANSACTIONS");
    assert!(plan.is_empty());
    let explained = db.engine.explain("UNWIND [1] AS i CALL { WITH i CREATE (:B) } IN TRANSACTIONS").unwrap();
    assert!(explained.contains("Apply(in transactions)"), "{explained}");
    // A batch size written as a number is checked when compiling (Neo4j's SyntaxError), a parameter when running.
    for (rows, kind) in
        [("0", ErrorKind::SyntaxError), ("-1", ErrorKind::SyntaxError), ("$n", ErrorKind::ArgumentError)]
    {
        let q = format!("UNWIND [1] AS i CALL {{ WITH i CREATE (:B) }} IN TRANSACTIONS OF {rows} ROWS");
        let mut params = Params::new();
        params.insert("n".into(), plexus_cypher::Value::Int(0));
        let e = db.engine.execute(&db.store, &q, &params).unwrap_err();
        assert_eq!(e.kind, kind, "{q}");
    }
    assert_eq!(db.rows("MATCH (b:B) RETURN count(b)"), vec![vec![int(0)]]);
}
