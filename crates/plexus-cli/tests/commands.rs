//! The command line itself: `plexus` with no command, argument checks before any write, help pages.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{path, plexus, text};

#[test]
fn demo_refuses_empty_sizes_before_writing_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    for flag in ["--people", "--items"] {
        let out = plexus(&["demo", "--data", &db, flag, "0"]);
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(&format!("{flag} must be at least 1")), "{}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("panicked"));
        assert!(!tmp.path().join("db").exists(), "{flag}: nothing written");
    }
    let out = plexus(&["demo", "--data", &db, "--items", "5", "--likes", "6"]);
    assert!(text(&out.stderr).contains("--likes (6) cannot exceed --items (5)"), "{}", text(&out.stderr));
    assert!(!tmp.path().join("db").exists(), "nothing written");
    // A database with people but not the demo's graph is told so, not left to panic or to do nothing quietly.
    assert!(plexus(&["query", "--data", &db, "CREATE (:Person {id: 5})"]).status.success());
    let out = plexus(&["demo", "--data", &db]);
    assert!(!out.status.success() && !text(&out.stderr).contains("panicked"));
    assert!(text(&out.stderr).contains("not the demo's (:Person)-[:LIKES]->(:Item) graph"), "{}", text(&out.stderr));
    // A database of other data is not mixed with the demo's.
    let other = path(tmp.path(), "other");
    assert!(plexus(&["query", "--data", &other, "CREATE (:A {id: 1})"]).status.success());
    let out = plexus(&["demo", "--data", &other]);
    assert!(!out.status.success() && text(&out.stderr).contains("no :Person"), "{}", text(&out.stderr));
    let count = plexus(&["query", "--data", &other, "--format", "csv", "MATCH (n) RETURN count(n) AS n"]);
    assert_eq!(text(&count.stdout), "n\n1\n");
    // Each person likes exactly --likes items, each once.
    let exact = path(tmp.path(), "exact");
    assert!(plexus(&["demo", "--data", &exact, "--items", "10", "--people", "10", "--likes", "10"]).status.success());
    let q = "MATCH (p:Person)-[l:LIKES]->(i:Item) RETURN count(l) AS n, count(DISTINCT [id(p), id(i)]) AS pairs";
    let count = plexus(&["query", "--data", &exact, "--format", "csv", q]);
    assert_eq!(text(&count.stdout), "n,pairs\n100,100\n");
    // A second run on the demo's own graph says it creates nothing, and why.
    let demo = path(tmp.path(), "demo");
    assert!(plexus(&["demo", "--data", &demo, "--items", "50", "--people", "20"]).status.success());
    let out = plexus(&["demo", "--data", &demo, "--people", "5"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("already holds 20 :Person nodes, so nothing is created"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn no_command_runs_the_shell_on_the_default_database() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_plexus")).args(["--help"]).current_dir(tmp.path()).output().unwrap();
    assert!(child.status.success());
    assert!(text(&child.stdout).contains("Examples:"));
    let mut shell = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    shell.stdin.take().unwrap().write_all(b"CREATE (:Here);\nMATCH (n:Here) RETURN count(n) AS c;\n").unwrap();
    child = shell.wait_with_output().unwrap();
    assert!(child.status.success(), "{}", text(&child.stderr));
    assert!(text(&child.stdout).contains("| 1 "), "{}", text(&child.stdout));
    assert!(tmp.path().join("plexus-data").is_dir());
}

#[test]
fn every_command_has_examples_in_its_help() {
    for command in [
        "demo",
        "import",
        "info",
        "check",
        "repair",
        "checkpoint",
        "query",
        "shell",
        "generate",
        "serve",
        "loadgen",
        "user",
    ] {
        let out = plexus(&[command, "--help"]);
        assert!(out.status.success(), "{command}");
        let help = text(&out.stdout);
        assert!(help.contains("Examples:\n  "), "{command}: {help}");
        assert!(help.contains(&format!("plexus {command}")), "{command}: {help}");
    }
}

#[test]
fn query_reads_its_statement_from_a_file_or_stdin_and_runs_only_one() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let file = path(tmp.path(), "q.cypher");
    std::fs::write(&file, "// the report\nRETURN 1 AS one;\n").unwrap();
    let out = plexus(&["query", "--data", &db, "--format", "csv", "-f", &file]);
    assert_eq!(text(&out.stdout), "one\n1\n", "{}", text(&out.stderr));
    // `-` and `-f -` read the statement from standard input.
    for stdin_args in [&["-"][..], &["-f", "-"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
            .args(["query", "--data", &db, "--format", "csv"])
            .args(stdin_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(b"RETURN 2 AS two").unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(text(&out.stdout), "two\n2\n", "{stdin_args:?}: {}", text(&out.stderr));
    }
    let out = plexus(&["query", "--data", &db, "RETURN 1; RETURN 2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("plexus shell"), "{}", text(&out.stderr));
    let out = plexus(&["query", "--data", &db, "--format", "csv", "RETURN 3 AS x;"]);
    assert_eq!(text(&out.stdout), "x\n3\n", "{}", text(&out.stderr));
}

/// A first `serve` that cannot start (its port is taken) leaves no users behind: the password it generated was
/// never shown, so the next start must make and show one.
#[test]
fn a_first_serve_that_cannot_start_leaves_no_users_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().to_string();
    let out = plexus(&["serve", "--data", &db, "--bolt", &port, "--http", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot listen for Bolt"), "{}", text(&out.stderr));
    assert!(!tmp.path().join("db").join("users.json").exists(), "a users file whose password nobody saw");
}

/// A config file `serve` cannot use is the command line's fault, whether it does not parse, names a key that
/// does not exist or holds a value that cannot work: status 2 for each, before anything starts.
#[test]
fn unusable_serve_configs_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    for (toml, says) in [
        ("bolt = ", "plexus.toml"),
        ("no_such_key = 1\n", "no_such_key"),
        ("max_connections = \"many\"\n", "max_connections"),
        ("durability = \"fast\"\n", "durability"),
    ] {
        let config = tmp.path().join("plexus.toml");
        std::fs::write(&config, toml).unwrap();
        let out = plexus(&["serve", "--data", &db, "--config", config.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{toml}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{toml}: {}", text(&out.stderr));
    }
    assert!(!tmp.path().join("db").exists(), "nothing was created");
}

#[test]
fn backup_writes_a_copy_that_opens_and_never_overwrites() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, copy) = (path(tmp.path(), "db"), path(tmp.path(), "copy"));
    let created = plexus(&["query", "--data", &db, "UNWIND range(1, 300) AS i CREATE (:P {id: i})-[:R {w: i}]->(:Q)"]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    // A server's users go along.
    plexus_server::auth::Auth::open(std::path::Path::new(&db), Some("pw")).unwrap();
    let out = plexus(&["backup", "--data", &db, "--to", &copy]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("600 nodes, 300 relationships"), "{}", text(&out.stdout));
    assert_eq!(
        std::fs::read(tmp.path().join("copy/users.json")).unwrap(),
        std::fs::read(tmp.path().join("db/users.json")).unwrap()
    );
    let inside = plexus(&["backup", "--data", &db, "--to", &path(tmp.path(), "db/inner")]);
    assert_eq!(inside.status.code(), Some(1));
    assert!(text(&inside.stderr).contains("inside the database's own directory"), "{}", text(&inside.stderr));
    let sum = plexus(&["query", "--data", &copy, "--format", "csv", "MATCH (:P)-[r:R]->(:Q) RETURN sum(r.w)"]);
    assert_eq!(text(&sum.stdout).lines().nth(1), Some("45150"), "{}", text(&sum.stderr));
    // A second backup to the same place is refused and leaves the first as it was.
    assert!(plexus(&["query", "--data", &db, "CREATE (:P {id: 301})"]).status.success());
    let again = plexus(&["backup", "--data", &db, "--to", &copy]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("not empty"), "{}", text(&again.stderr));
    let count = plexus(&["query", "--data", &copy, "--format", "csv", "MATCH (p:P) RETURN count(p)"]);
    assert_eq!(text(&count.stdout).lines().nth(1), Some("300"));
    // A database another process holds names the way through its server.
    let holder = plexus::Database::open(std::path::Path::new(&db)).unwrap();
    let held = plexus(&["backup", "--data", &db, "--to", &path(tmp.path(), "other")]);
    assert_eq!(held.status.code(), Some(1));
    assert!(text(&held.stderr).contains("CALL dbms.backup"), "{}", text(&held.stderr));
    drop(holder);
    let missing = plexus(&["backup", "--data", &path(tmp.path(), "nothing"), "--to", &path(tmp.path(), "x")]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(!tmp.path().join("x").exists() && !tmp.path().join("nothing").exists());
    assert_eq!(plexus(&["backup", "--data", &db]).status.code(), Some(2), "--to is required");
}
