//! What scripts see: `plexus shell` fed from a pipe, output into pipes that close early or devices that fill
//! up, and imports of files as other tools write them.

mod common;

use std::io::{BufRead, Read, Write};
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

/// A table of more rows than its sample is laid out by its first 1,000 rows and streamed: every row is there,
/// a later wider cell is written whole past its column, and the count is the whole one. A small table is laid
/// out by all of its rows.
#[test]
fn long_tables_stream_laid_out_by_their_first_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let query = "UNWIND range(1, 2500) AS x RETURN x, CASE x WHEN 2000 THEN 'a wider value' ELSE 'b' END AS s";
    let out = plexus(&["query", "--data", &db, query]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2500 + 4, "rules, header and every row");
    assert_eq!(lines[1], "| x    | s   |", "widths from the first rows");
    assert_eq!(lines[3 + 1999], "| 2000 | \"a wider value\" |");
    assert_eq!(lines[3 + 2499], "| 2500 | \"b\" |");
    assert!(text(&out.stderr).contains("2500 rows"), "{}", text(&out.stderr));
    let out = plexus(&["query", "--data", &db, "UNWIND [1, 22] AS x RETURN x"]);
    assert_eq!(text(&out.stdout), "+----+\n| x  |\n+----+\n| 1  |\n| 22 |\n+----+\n");
}

/// The shell streams a read's rows as `plexus query` does: a long table laid out by its first rows with the
/// whole count, a later row's error after the rows before it, and Ctrl-C stopping an endless read.
#[test]
fn the_shell_streams_long_reads_and_stops_them() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let script = "UNWIND range(1, 2500) AS x RETURN x, CASE x WHEN 2000 THEN 'a wider value' ELSE 'b' END AS s;\n\
                  UNWIND range(1, 5000) AS x RETURN 100 / (4000 - x) AS q;\n";
    let out = shell(&db, &[], script);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[1], "| x    | s   |", "widths from the first rows");
    assert_eq!(lines[3 + 1999], "| 2000 | \"a wider value\" |");
    assert_eq!(lines[3 + 2499], "| 2500 | \"b\" |");
    let second = lines.len() - (2500 + 4);
    assert!((1000..4000).contains(&second), "{second} lines of the failing statement");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("2500 rows"), "{stderr}");
    assert!(stderr.contains("/ by zero") || stderr.to_lowercase().contains("division"), "{stderr}");

    interrupt_shell_at(&db, "UNWIND range(1, 10000000000000) AS x RETURN x;\n", "5000");
}

/// Runs `script` in `plexus shell --format csv`, sends Ctrl-C once a line of its output reads `marker`, and
/// checks that the shell stopped on it (status 130, "Interrupted").
fn interrupt_shell_at(db: &str, script: &str, marker: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["shell", "--data", db, "--format", "csv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != marker {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the shell ended before printing {marker}");
    }
    // SAFETY: kill with a valid signal number to the child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "stopped, not killed by the signal: {:?}", out.status);
    assert!(text(&out.stderr).contains("Interrupted"), "{}", text(&out.stderr));
}

#[test]
fn ctrl_c_stops_the_running_statement_rolls_it_back_and_ends_a_script() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    // A write that would run for hours, after a statement whose result says the shell is running.
    let script = "RETURN 'ready' AS state;\n\
                  CREATE (:Started) WITH 1 AS one UNWIND range(1, 10000000000000) AS x WITH x WHERE x < 0 \
                  RETURN count(x);\nCREATE (:After);\n";
    interrupt_shell_at(&db, script, "ready");
    let out = plexus(&["query", "--data", &db, "--format", "csv", "MATCH (n) RETURN count(n) AS c"]);
    assert_eq!(text(&out.stdout), "c\n0\n", "the interrupted write is rolled back and the script went no further");
}

#[test]
fn comments_count_as_nothing_before_a_command() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let script = "// parameters for the report\n:param x => 1\nRETURN $x AS x; // a note\n:param y => 2\n\
                  /* block\n   comment */\n:params\nRETURN $y AS y;\n";
    let out = shell(&db, &["--format", "csv"], script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "x\n1\n$x: 1\n$y: 2\ny\n2\n");
    // A command after a trailing comment still ends the session.
    let out = shell(&db, &["--format", "csv"], "RETURN 1 AS a; // note\n:exit\nRETURN 2 AS b;\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "a\n1\n");
}

#[test]
fn a_script_stops_at_its_first_error_naming_the_line_of_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let script = "RETURN 1 AS a;\n\n// two\nMATCH (n)\nRETURN n;\nRETRUN 5;\nCREATE (:Never);\n";
    let out = shell(&db, &["--format", "csv"], script);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("(line 6, column 1)"), "{stderr}");
    assert_eq!(count(&db), "0", "nothing after the error ran");
    // Several statements on a line: the column in the file.
    let out = shell(&db, &[], "RETURN 1 AS a; RETURN x AS y;\n");
    assert!(text(&out.stderr).contains("(line 1, column 23)"), "{}", text(&out.stderr));
    // --fail-at-end runs the rest, and exits 1 at the end; unknown commands and bad parameters are errors too.
    let script = "RETURN 1 AS a;\n:foo\n:param 1x => 2\nRETURN 1 / 0;\nCREATE (:Ran);\n";
    let out = shell(&db, &["--fail-at-end"], script);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("line 2: unknown command :foo"), "{stderr}");
    assert!(stderr.contains("line 3: parameter name '1x'"), "{stderr}");
    assert!(stderr.contains("at line 4"), "{stderr}");
    assert_eq!(count(&db), "1");
    for script in [":foo\nCREATE (:No);\n", ":param x => [1,\nCREATE (:No);\n"] {
        let out = shell(&db, &[], script);
        assert_eq!(out.status.code(), Some(1), "{script:?}");
        assert_eq!(count(&db), "1", "{script:?}");
    }
}

#[test]
fn a_script_may_start_with_a_byte_order_mark_and_bad_utf8_is_named_by_line() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let out = shell(&db, &["--format", "csv"], "\u{feff}RETURN 1 AS a;\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "a\n1\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["shell", "--data", &db])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"RETURN 1 AS a;\nRETURN '\xff' AS b;\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("line 2 of the script is not valid UTF-8"), "{}", text(&out.stderr));
}

#[test]
fn parameters_take_the_same_forms_on_the_command_line_and_in_the_shell() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    for spec in ["x=1", "x => 1", "x: 1", "$x=1", "{x: 1, y: 2}", "`x` => 1"] {
        let out = plexus(&["query", "--data", &db, "--format", "csv", "-p", spec, "RETURN $x AS x"]);
        assert!(out.status.success(), "{spec}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "x\n1\n", "{spec}");
    }
    let out = plexus(&["query", "--data", &db, "--format", "csv", "-p", "`my-name` => 3", "RETURN $`my-name` AS v"]);
    assert_eq!(text(&out.stdout), "v\n3\n", "{}", text(&out.stderr));
    for (spec, says) in [("=5", "has no name"), ("my-name=1", "backticks"), ("x", "has no value"), ("{x: 1", "")] {
        let out = plexus(&["query", "--data", &db, "-p", spec, "RETURN 1"]);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        assert!(text(&out.stderr).contains(says), "{spec}: {}", text(&out.stderr));
    }
    // A decimal name is an openCypher parameter name (`$0`); a name given twice is refused, not overwritten.
    let out = plexus(&["query", "--data", &db, "--format", "csv", "-p", "0=7", "RETURN $0 AS v"]);
    assert_eq!(text(&out.stdout), "v\n7\n", "{}", text(&out.stderr));
    let out = plexus(&["query", "--data", &db, "-p", "x=1", "-p", "{x: 2}", "RETURN $x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`x` is given more than once"), "{}", text(&out.stderr));
    // The shell takes them on its command line too.
    let out = shell(&db, &["--format", "csv", "-p", "d=4", "--param", "{e: 'x'}"], "RETURN $d AS d, $e AS e;\n");
    assert_eq!(text(&out.stdout), "d,e\n4,x\n", "{}", text(&out.stderr));
    let out = shell(&db, &["-p", "my-name=1"], "RETURN 1;\n");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = shell(&db, &["--format", "csv"], ":param {d: 4, e: 'x'}\n:param f: 5\nRETURN $d + $f AS s, $e AS e;\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "s,e\n9,x\n");
}

#[test]
fn begin_commit_and_rollback_make_explicit_transactions() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    // The statements of a transaction see each other's changes; a rollback leaves nothing, a commit keeps them.
    let script = ":begin\nCREATE (:T {i: 1});\nMATCH (n:T) RETURN count(n) AS c;\n:rollback\n\
                  MATCH (n:T) RETURN count(n) AS c;\n:begin\nCREATE (:T {i: 2});\nCREATE (:T {i: 3});\n:commit\n";
    let out = shell(&db, &["--format", "csv"], script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "c\n1\nc\n0\n", "{}", text(&out.stderr));
    assert_eq!(count(&db), "2");

    // A script that ends with the transaction open leaves nothing behind, and says so.
    let out = shell(&db, &[], ":begin\nCREATE (:T);\nCREATE (:T);\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("rolled back"), "{}", text(&out.stderr));
    assert_eq!(count(&db), "2");

    // A failing statement ends its transaction: what came before it in the transaction is gone too, what follows
    // it is refused until the transaction is ended (it would commit statement by statement), and the :commit
    // after it has nothing to commit.
    let script = ":begin\nCREATE (:T);\nRETURN 1 / 0;\nCREATE (:T);\n:commit\nCREATE (:U);\n";
    let out = shell(&db, &["--fail-at-end"], script);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("transaction was rolled back") && stderr.contains("Not run"), "{stderr}");
    assert!(stderr.contains("nothing was committed"), "{stderr}");
    assert_eq!(count(&db), "3", "only the CREATE (:U) after the failed transaction");

    // One transaction at a time.
    let out = shell(&db, &[], ":begin\n:begin\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("already open"), "{}", text(&out.stderr));
    let out = shell(&db, &[], ":rollback\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no open transaction"), "{}", text(&out.stderr));
}

#[test]
fn source_runs_a_file_of_statements_and_commands_in_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let file = path(tmp.path(), "setup.cypher");
    std::fs::write(&file, ":param n => 2\nUNWIND range(1, $n) AS i\nCREATE (:S {i: i});\n").unwrap();
    // Inside a transaction the file's statements join it; its parameters stay set after it.
    let script = format!(":begin\n:source {file}\nMATCH (s:S) RETURN count(s) AS c, $n AS n;\n:rollback\n");
    let out = shell(&db, &["--format", "csv"], &script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "c,n\n2,2\n", "{}", text(&out.stderr));
    assert_eq!(count(&db), "0");
    // A failing statement in the file stops it, and the script that sourced it.
    std::fs::write(&file, "CREATE (:S);\nRETURN 1 / 0;\nCREATE (:S);\n").unwrap();
    let out = shell(&db, &[], &format!(":source {file}\nCREATE (:After);\n"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("/ by zero") || text(&out.stderr).contains("zero"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("In {file}:")), "the error names its file: {}", text(&out.stderr));
    assert_eq!(count(&db), "1", "only the file's first statement ran");
    let out = shell(&db, &[], &format!(":source {}\n", path(tmp.path(), "missing.cypher")));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot read"), "{}", text(&out.stderr));
    // A file that sources itself stops at a depth, without taking the shell down; a quoted name with a space.
    let looping = path(tmp.path(), "loop me.cypher");
    std::fs::write(&looping, format!("CREATE (:L);\n:source \"{looping}\"\n")).unwrap();
    let out = shell(&db, &[], &format!(":source '{looping}'\n"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("nested more than"), "{}", text(&out.stderr));
    let out = plexus(&["query", "--data", &db, "--format", "csv", "MATCH (n:L) RETURN count(n)"]);
    assert_eq!(text(&out.stdout), "count(n)\n32\n");
}

/// Output that reads back as what it shows: CSV tells an empty string from null, tables quote names that need
/// backticks, and a write's counts reach stderr whatever the format.
#[test]
fn output_tells_empty_strings_from_null_and_quotes_names_that_need_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let out = plexus(&["query", "--data", &db, "--format", "csv", "RETURN null AS a, '' AS b, 'x' AS c"]);
    assert_eq!(text(&out.stdout), "a,b,c\n,\"\",x\n", "{}", text(&out.stderr));
    let create = "CREATE (n:`my label`:Ok {`a b`: 1, ```x`: 2})-[r:`REL TYPE`]->(:M) RETURN n, r, {`k k`: 1} AS m";
    let out = plexus(&["query", "--data", &db, create]);
    let table = text(&out.stdout);
    for shown in ["(:`my label`:Ok {```x`: 2, `a b`: 1})", "[:`REL TYPE`]", "{`k k`: 1}"] {
        assert!(table.contains(shown), "{shown} in\n{table}");
    }
    let out = plexus(&["query", "--data", &db, "--format", "csv", "MATCH (n:Ok) DETACH DELETE n"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).contains("1 node deleted"), "{}", text(&out.stderr));
    let out = plexus(&["query", "--data", &db, ";"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("the statement is empty"), "{}", text(&out.stderr));
}

/// A `:command` after the statements on its line runs as a command; `:format` alone names the format; `:exit`
/// with an argument is refused; a file sourcing itself says it stopped once, not once per level.
#[test]
fn commands_after_statements_on_a_line_and_source_loops() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let out = shell(&db, &["--format", "csv"], "RETURN 5 AS g; :param x => 3\nRETURN $x AS x; :format\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "g\n5\nx\n3\ncsv\n");
    let out = shell(&db, &[], ":exit now\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(":exit takes no argument"), "{}", text(&out.stderr));
    let looped = path(tmp.path(), "loop.cypher");
    std::fs::write(&looped, format!(":source {looped}\n")).unwrap();
    let out = shell(&db, &[], &format!(":source {looped}\n"));
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(said.contains("nested more than 32 deep"), "{said}");
    assert_eq!(said.matches("stopped at the statement or command above").count(), 1, "{said}");
}
