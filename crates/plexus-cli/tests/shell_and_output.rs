//! What scripts see: `plexus shell` fed from a pipe, output into pipes that close early or devices that fill
//! up, and imports of files as other tools write them.

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use common::{path, plexus, text};

/// Runs `plexus shell --data db ARGS` with `script` on stdin.
fn shell(db: &str, args: &[&str], script: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["shell", "--data", db])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn count(db: &str) -> String {
    let out = plexus(&["query", "--data", db, "--format", "csv", "MATCH (n) RETURN count(n)"]);
    text(&out.stdout).lines().nth(1).unwrap_or_default().to_string()
}

#[test]
fn statements_inside_block_comments_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    assert!(plexus(&["query", "--data", &db, "CREATE (:K), (:K)"]).status.success());
    let script = "/* disabled for now:\nMATCH (n:K) SET n.seen = true;\nMATCH (n) DETACH DELETE n;\n*/\n\
                  MATCH (n:K) RETURN count(n) AS c;\n/* a comment alone */\n";
    let out = shell(&db, &["--format", "csv"], script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "c\n2\n", "only results on stdout; stderr: {}", text(&out.stderr));
    assert_eq!(count(&db), "2");
    // An unclosed comment at the end runs nothing and is reported.
    let out = shell(&db, &[], "/* MATCH (n) DETACH DELETE n;\n");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(count(&db), "2");
}

#[test]
fn shell_results_from_a_script_are_machine_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let out = shell(&db, &["--format", "json"], "RETURN 1 AS a;\n:param x => [1, 'a']\n:params\nRETURN $x AS b;\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], r#"{"columns":["a"],"rows":[[1]]}"#, "{stdout}");
    assert_eq!(lines[1], "$x: [1, 'a']", "{stdout}");
    assert_eq!(lines[2], r#"{"columns":["b"],"rows":[[[1,"a"]]]}"#, "{stdout}");
    assert!(text(&out.stderr).contains("1 row"), "the row count goes to stderr: {}", text(&out.stderr));
}

#[test]
fn a_reader_that_goes_away_or_a_full_device_ends_the_command_without_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    assert!(plexus(&["query", "--data", &db, "CREATE (:N)"]).status.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["query", "--data", &db, "--format", "csv", "UNWIND range(1, 1000000) AS i RETURN i"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 2];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_plexus"))
            .args(["query", "--data", &db, "RETURN 1"])
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("No space left"), "{}", text(&out.stderr));
    }
}

#[test]
fn quoted_edge_lists_import_without_their_quotes() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = path(tmp.path(), "e.csv");
    std::fs::write(&csv, "\"from\",\"to\"\n\"alice\",\"bob\"\n\"New York, NY\",Boston\n").unwrap();
    let db = path(tmp.path(), "db");
    let out = plexus(&["import", "--data", &db, "--edges", &csv]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = plexus(&["query", "--data", &db, "--format", "csv", "MATCH (a)-->(b) RETURN a.id, b.id ORDER BY a.id"]);
    assert_eq!(text(&out.stdout), "a.id,b.id\n\"New York, NY\",Boston\nalice,bob\n");
}

#[test]
fn edge_list_options_are_refused_for_node_and_relationship_files() {
    let tmp = tempfile::tempdir().unwrap();
    let nodes = path(tmp.path(), "n.csv");
    let rels = path(tmp.path(), "r.csv");
    std::fs::write(&nodes, "id:ID\n1\n2\n").unwrap();
    std::fs::write(&rels, ":START_ID,:END_ID\n1,2\n").unwrap();
    let db = path(tmp.path(), "db");
    let typed_rels = format!("R={rels}");
    for flag in [&["--undirected"][..], &["--label", "X"], &["--type", "Y"], &["--header"]] {
        let mut args = vec!["import", "--data", &db, "--nodes", &nodes, "--relationships", &typed_rels];
        args.extend_from_slice(flag);
        let out = plexus(&args);
        assert_eq!(out.status.code(), Some(2), "{flag:?}");
        assert!(text(&out.stderr).contains("applies to edge lists"), "{flag:?}: {}", text(&out.stderr));
        assert!(!tmp.path().join("db").exists());
    }
    let out = plexus(&["import", "--data", &db, "--nodes", &nodes, "--delimiter", ";", "--array-delimiter", ";"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("both ';'"), "{}", text(&out.stderr));
}

#[test]
fn query_exports_stream_and_stop_at_a_failing_row() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    assert!(plexus(&["query", "--data", &db, "UNWIND range(1, 3000) AS i CREATE (:P {i: i, name: 'p, ' + i})"])
        .status
        .success());
    let out =
        plexus(&["query", "--data", &db, "--format", "csv", "MATCH (n:P) RETURN n.i AS i, n.name AS name ORDER BY i"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3001);
    assert_eq!(lines[0], "i,name");
    assert_eq!(lines[3000], "3000,\"p, 3000\"");
    // Many batches, one JSON document.
    let out = plexus(&["query", "--data", &db, "--format", "json", "UNWIND range(1, 250000) AS i RETURN i"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let expected = format!(
        "{{\"columns\":[\"i\"],\"rows\":[{}]}}\n",
        (1..=250000).map(|i| format!("[{i}]")).collect::<Vec<_>>().join(",")
    );
    assert!(stdout == expected, "a JSON document of 250,000 rows ({} bytes)", stdout.len());
    // A later row's error: the rows before it are printed, the error goes to stderr, the exit code is 1.
    let out =
        plexus(&["query", "--data", &db, "--format", "csv", "UNWIND range(1, 5000) AS x RETURN 100 / (4000 - x) AS q"]);
    assert_eq!(out.status.code(), Some(1));
    let printed = text(&out.stdout).lines().count();
    assert!((1000..4000).contains(&printed), "{printed} lines before the failing row");
    assert!(
        text(&out.stderr).contains("/ by zero") || text(&out.stderr).to_lowercase().contains("division"),
        "{}",
        text(&out.stderr)
    );
    // EXPLAIN of a write runs nothing: its plan goes to stderr beside a parseable empty result.
    let out = plexus(&["query", "--data", &db, "--format", "json", "EXPLAIN CREATE (:X)"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\"columns\":[],\"rows\":[]}\n");
    assert!(text(&out.stderr).contains("Create"), "{}", text(&out.stderr));
}
