//! The command line against input a user gets wrong: parameters that are not values, directories that hold no
//! database, edge lists whose first line or columns are ambiguous, imports that fail half-way. Each must give a
//! clear error (or a note) and leave the data as it was.

mod common;

use std::path::Path;

use common::{path, plexus, text};

/// The one value of a one-row, one-column query, as CSV.
fn scalar(db: &str, query: &str) -> String {
    let out = plexus(&["query", "--data", db, "--format", "csv", query]);
    assert!(out.status.success(), "{query}: {}", text(&out.stderr));
    text(&out.stdout).lines().nth(1).unwrap_or_default().to_string()
}

#[test]
fn a_parameter_is_a_value_never_a_query() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    assert!(plexus(&["query", "--data", &db, "CREATE (:N {a: 1}), (:N {a: 2})"]).status.success());
    let out = plexus(&["query", "--data", &db, "-p", "x=1 AS v UNION MATCH (n) DETACH DELETE n RETURN 1", "RETURN $x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("column 3"), "{}", text(&out.stderr));
    let out = plexus(&["query", "--data", &db, "-p", "x=COUNT { MATCH (n) RETURN n }", "RETURN $x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(scalar(&db, "MATCH (n) RETURN count(n)"), "2");
    let out = plexus(&["query", "--data", &db, "--format", "csv", "-p", "x=[1, {b: date('2024-01-02')}]", "RETURN $x"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_plan_does_not_break_json_output() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let out = plexus(&["query", "--data", &db, "--format", "json", "EXPLAIN MATCH (n) RETURN n"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).trim().starts_with('{') && text(&out.stdout).trim().ends_with('}'),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stderr).contains("NodeScan") || text(&out.stderr).contains("Scan"), "{}", text(&out.stderr));
}

#[test]
fn inspecting_a_directory_without_a_database_is_an_error_that_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    for command in ["info", "check", "checkpoint"] {
        let missing = path(tmp.path(), "typo");
        let out = plexus(&[command, "--data", &missing]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(text(&out.stderr).contains("does not exist"), "{command}: {}", text(&out.stderr));
        assert!(!tmp.path().join("typo").exists(), "{command}");
    }
    // A database that does not open is damage: `check` says so with status 1.
    let db = path(tmp.path(), "db");
    assert!(plexus(&["query", "--data", &db, "CREATE (:N)"]).status.success());
    std::fs::write(tmp.path().join("db").join("plexus.meta"), b"not the metadata").unwrap();
    let out = plexus(&["check", "--data", &db]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("DAMAGED"));
}

#[test]
fn a_failed_import_keeps_an_empty_target_and_a_good_one_fills_it() {
    let tmp = tempfile::tempdir().unwrap();
    let target = path(tmp.path(), "db");
    std::fs::create_dir(&target).unwrap();
    let out = plexus(&["import", "--data", &target, "--edges", &path(tmp.path(), "missing.csv")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(Path::new(&target).is_dir(), "the user's directory stays");
    // What a killed import left beside the target goes with the next import.
    let leftover = tmp.path().join(".db.importing-4000000");
    std::fs::create_dir(&leftover).unwrap();
    std::fs::write(tmp.path().join("e.csv"), "1,2\n2,3\n").unwrap();
    let out = plexus(&["import", "--data", &target, "--edges", &path(tmp.path(), "e.csv")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(scalar(&target, "MATCH ()-[r]->() RETURN count(r)"), "2");
    assert!(!leftover.exists());
}

#[test]
fn edge_lists_keep_their_first_edge_unless_it_reads_as_a_header() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str, bool); 5] = [
        ("bom.csv", b"\xef\xbb\xbf1,2\n2,3\n", "2", false),
        ("float.csv", b"1.5,2\n3,4\n", "2", false),
        ("names.csv", b"start,idle\nidle,end\n", "2", false),
        ("header.csv", b"source,target\n1,2\n", "1", true),
        ("tabs.tsv", b"from\tto\tweight\na\tb\t1\n", "1", true),
    ];
    for (name, bytes, edges, noted) in cases {
        std::fs::write(tmp.path().join(name), bytes).unwrap();
        let db = path(tmp.path(), &format!("db-{name}"));
        let out = plexus(&["import", "--data", &db, "--edges", &path(tmp.path(), name)]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        assert_eq!(scalar(&db, "MATCH ()-[r]->() RETURN count(r)"), edges, "{name}");
        assert_eq!(text(&out.stderr).contains("read as a header"), noted, "{name}: {}", text(&out.stderr));
    }
    let db = path(tmp.path(), "db-bom.csv");
    assert_eq!(scalar(&db, "MATCH (n {id: 1}) RETURN count(n)"), "1", "the mark is not part of the id");
}

#[test]
fn edge_lists_must_agree_on_columns_and_be_text() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("weighted.csv"), "1,2,0.5\n").unwrap();
    std::fs::write(tmp.path().join("plain.csv"), "3,4\n").unwrap();
    let db = path(tmp.path(), "db");
    let out = plexus(&[
        "import",
        "--data",
        &db,
        "--edges",
        &path(tmp.path(), "weighted.csv"),
        "--edges",
        &path(tmp.path(), "plain.csv"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("weighted.csv has a weight column and") && err.contains("plain.csv does not"), "{err}");
    assert!(!tmp.path().join("db").exists());
    let out = plexus(&["import", "--data", &db, "--edges", &path(tmp.path(), "plain.csv"), "--label", ""]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("must not be empty"), "{}", text(&out.stderr));
    for (name, bytes, message) in [
        ("latin1.csv", &b"M\xfcller,Bob\n"[..], "line 1, column 1: 'M\u{fffd}ller' is not valid UTF-8"),
        ("mac.csv", &b"1,2\r2,3\r"[..], "carriage return alone"),
    ] {
        std::fs::write(tmp.path().join(name), bytes).unwrap();
        let out = plexus(&["import", "--data", &db, "--edges", &path(tmp.path(), name)]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(text(&out.stderr).contains(message), "{name}: {}", text(&out.stderr));
    }
}

#[test]
fn an_incremental_import_with_bad_input_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    std::fs::write(tmp.path().join("a.csv"), "id:ID\n1\n").unwrap();
    std::fs::write(tmp.path().join("b.csv"), "id:ID\n2\n").unwrap();
    std::fs::write(tmp.path().join("r.csv"), ":START_ID,:END_ID\n2,99\n").unwrap();
    let out = plexus(&["import", "--data", &db, "--nodes", &format!("N={}", path(tmp.path(), "a.csv"))]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = plexus(&[
        "import",
        "--data",
        &db,
        "--mode",
        "incremental",
        "--nodes",
        &format!("N={}", path(tmp.path(), "b.csv")),
        "--relationships",
        &format!("R={}", path(tmp.path(), "r.csv")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown end id '99'"), "{}", text(&out.stderr));
    assert_eq!(scalar(&db, "MATCH (n) RETURN count(n)"), "1");
}

#[test]
fn typed_values_out_of_range_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("n.csv"), "id:ID,v:long,d:date\n1,-9223372036854775808,2024-02-29\n").unwrap();
    let db = path(tmp.path(), "db");
    let out = plexus(&["import", "--data", &db, "--nodes", &path(tmp.path(), "n.csv")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(scalar(&db, "MATCH (n) RETURN n.v"), "-9223372036854775808");
    std::fs::write(tmp.path().join("bad.csv"), "id:ID,d:date\n1,99999999999999999999-01-01\n").unwrap();
    let out = plexus(&["import", "--data", &path(tmp.path(), "db2"), "--nodes", &path(tmp.path(), "bad.csv")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("line 2, column 3"), "{}", text(&out.stderr));
}

/// Every file of `dir` by name with its bytes.
fn files(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn inspecting_and_read_only_queries_change_nothing_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    assert!(plexus(&["query", "--data", &db, "CREATE (:N {v: 1})-[:R]->(:N {v: 2})"]).status.success());
    let before = files(&tmp.path().join("db"));
    for args in [
        vec!["info", "--data", &db],
        vec!["check", "--data", &db],
        vec!["query", "--read-only", "--data", &db, "MATCH (n) RETURN count(n)"],
    ] {
        let out = plexus(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert_eq!(files(&tmp.path().join("db")), before, "{args:?} changed the database directory");
    }
    let out = plexus(&["query", "--read-only", "--data", &db, "CREATE (:N)"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("read-only"), "{}", text(&out.stderr));
    assert_eq!(files(&tmp.path().join("db")), before);
    assert_eq!(scalar(&db, "MATCH (n) RETURN count(n)"), "2");
}

/// A statement that only reads a path that does not exist (a mistyped `--data`) or an empty directory answers
/// from an empty graph and creates nothing, so a later import into the right path is not refused; a write creates the database.
#[test]
fn a_reading_query_of_a_missing_path_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("typo");
    let dir = missing.to_str().unwrap();
    let out = plexus(&["query", "--data", dir, "--format", "csv", "MATCH (n:Person) RETURN count(n)"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("nothing was created"), "{}", text(&out.stderr));
    assert!(!missing.exists());
    assert!(plexus(&["query", "--data", dir, "CREATE (:Person)"]).status.success());
    assert_eq!(scalar(dir, "MATCH (n:Person) RETURN count(n)"), "1");
    // An empty directory (made ready for a database) is read as a missing path: a later import is not refused.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let dir = empty.to_str().unwrap();
    let out = plexus(&["query", "--data", dir, "--format", "csv", "MATCH (n) RETURN count(n)"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0, "nothing was added");
    assert!(plexus(&["query", "--data", dir, "CREATE (:Person)"]).status.success());
    assert_eq!(scalar(dir, "MATCH (n:Person) RETURN count(n)"), "1");
}

#[test]
fn a_query_does_not_create_a_database_among_other_files() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let dir = tmp.path().to_str().unwrap();
    let out = plexus(&["query", "--data", dir, "RETURN 1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("holds files but no Plexus database"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "nothing was added");
    // What an interrupted import leaves is named as such, by the commands that open and those that inspect.
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir(other.path().join(".plexus-importing-4242")).unwrap();
    let dir = other.path().to_str().unwrap();
    for args in [&["query", "--data", dir, "RETURN 1"][..], &["info", "--data", dir]] {
        let out = plexus(args);
        assert!(text(&out.stderr).contains("an import into it was interrupted"), "{args:?}: {}", text(&out.stderr));
    }
}

/// A creation killed before it wrote its metadata leaves a lock file and a temporary file: the next command
/// creates the database there instead of taking the directory for someone's own files (so does an import).
#[test]
fn what_a_killed_creation_left_does_not_block_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    for command in ["query", "import"] {
        let db = tmp.path().join(command);
        std::fs::create_dir(&db).unwrap();
        std::fs::write(db.join("LOCK"), "").unwrap();
        std::fs::write(db.join("plexus.meta.tmp"), "PLX").unwrap();
        let dir = db.to_str().unwrap();
        let out = if command == "query" {
            plexus(&["query", "--data", dir, "CREATE (:N) RETURN 1"])
        } else {
            let edges = tmp.path().join("edges.csv");
            std::fs::write(&edges, "1,2\n").unwrap();
            plexus(&["import", "--data", dir, "--edges", edges.to_str().unwrap()])
        };
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
        assert_eq!(scalar(dir, "MATCH (n) RETURN count(n)"), if command == "query" { "1" } else { "2" }, "{command}");
    }
}

/// A flipped byte in the middle of the log, with intact commits after it, is damage a writable open refuses
/// (changing nothing), until `plexus repair` drops those commits (keeping them aside); a torn tail never needs it.
#[test]
fn damage_in_the_middle_of_the_log_is_refused_until_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let script: String = (1..=40).map(|i| format!("CREATE (:N {{i: {i}}});\n")).collect();
    let mut shell = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["shell", "--data", &db])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(shell.stdin.as_mut().unwrap(), script.as_bytes()).unwrap();
    drop(shell.stdin.take());
    assert!(shell.wait().unwrap().success());
    let segment = std::fs::read_dir(tmp.path().join("db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .expect("a log segment");
    let mut bytes = std::fs::read(&segment).unwrap();
    let middle = bytes.len() / 3;
    bytes[middle] ^= 1;
    std::fs::write(&segment, &bytes).unwrap();
    let before = files(&tmp.path().join("db"));
    let out = plexus(&["query", "--data", &db, "MATCH (n) RETURN count(n)"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("intact commits follow it"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("plexus repair"), "{}", text(&out.stderr));
    assert_eq!(files(&tmp.path().join("db")), before, "a refused open changed the directory");
    // Read-only, the same: an answer would leave out the commits after the damage.
    for command in ["query", "shell"] {
        let mut args = vec![command, "--data", &db, "--read-only"];
        if command == "query" {
            args.push("MATCH (n) RETURN count(n)");
        }
        let out = plexus(&args);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", text(&out.stdout));
        assert!(text(&out.stderr).contains("plexus repair"), "{}", text(&out.stderr));
    }
    let out = plexus(&["check", "--data", &db]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    // `info` describes the database as read, and says with its status that the counts leave commits out.
    let out = plexus(&["info", "--data", &db]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("not in these counts"), "{}", text(&out.stderr));
    let out = plexus(&["repair", "--data", &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("LOST"), "{}", text(&out.stdout));
    let kept: i64 = scalar(&db, "MATCH (n) RETURN count(n)").parse().unwrap();
    assert!((1..40).contains(&kept), "kept {kept} of 40 commits");
    assert_eq!(scalar(&db, "MATCH (n) RETURN max(n.i)"), kept.to_string(), "the commits before the damage");
}

#[test]
fn import_arguments_that_cannot_work_are_refused_and_file_names_may_hold_equals_signs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = path(dir, "db");
    let out = plexus(&["import", "--data", &db, "--edges", "-", "--edges", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("standard input (-) can be given only once"), "{}", text(&out.stderr));
    std::fs::create_dir(dir.join("dt=2024")).unwrap();
    std::fs::write(dir.join("dt=2024").join("people.csv"), "id:ID,name\na,Ann\n").unwrap();
    let nodes = path(dir, "dt=2024/people.csv");
    let out = plexus(&["import", "--data", &db, "--nodes", &nodes, "--mode", "incremental", "--batch-size", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--batch-size must be at least 1"), "{}", text(&out.stderr));
    // `dt=2024/people.csv` is a file, not label `dt` of file `2024/people.csv`.
    let out = plexus(&["import", "--data", &db, "--nodes", &nodes]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(scalar(&db, "MATCH (n) RETURN n.name"), "Ann");
    let out = plexus(&["import", "--data", &path(dir, "l"), "--ldbc", &path(dir, "missing.tgz")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("No such file or directory"), "{}", text(&out.stderr));
    assert!(!Path::new(&path(dir, "l")).exists());
}

/// Exit statuses as other Unix tools give them: 2 for a command line that cannot work as written, 1 for one that
/// could but failed (here, a database another process holds).
#[test]
fn a_database_in_use_is_a_runtime_error_and_a_wrong_command_line_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    assert!(plexus(&["query", "--data", &db, "CREATE (:N)"]).status.success());
    let holder = plexus::Database::open(Path::new(&db)).unwrap();
    for args in [&["query", "--data", &db, "CREATE (:N)"][..], &["checkpoint", "--data", &db], &["demo", "--data", &db]]
    {
        let out = plexus(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("locked"), "{args:?}: {}", text(&out.stderr));
    }
    drop(holder);
    let missing = path(tmp.path(), "missing.cypher");
    let out = plexus(&["query", "--data", &db, "--file", &missing]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("reading"), "{}", text(&out.stderr));
    for (args, message) in [
        (&["query", "--data", &db, "RETURN 1; RETURN 2"][..], "holds several"),
        (&["query", "--data", &db, "RETURN $x", "--param", "x"], "has no value"),
        (&["demo", "--data", &db, "--items", "2", "--likes", "3"], "cannot exceed"),
        (&["loadgen", "--rate", "0"], "must be positive"),
        (&["loadgen", "--connections", "0"], "at least 1"),
        (&["loadgen", "--connections", "1", "--threads", "2"], "must not exceed --connections"),
        (&["loadgen", "--step-factor", "0.5"], "above 1"),
    ] {
        let out = plexus(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(message), "{args:?}: {}", text(&out.stderr));
    }
    assert_eq!(scalar(&db, "MATCH (n) RETURN count(n)"), "1", "nothing ran");
    // Found before the load starts (and before any connection), not after the run, when the report is written.
    let out = plexus(&["loadgen", "--json", &path(tmp.path(), "no/such/dir/report.json")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot write"), "{}", text(&out.stderr));
}

/// `plexus user`: a name or password that can never work is a usage error; a user that does not exist is not.
#[test]
fn user_commands_tell_a_wrong_command_line_from_a_wrong_user() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    std::fs::create_dir(&db).unwrap();
    plexus_server::auth::Auth::open(Path::new(&db), Some("pw")).unwrap();
    for (args, status) in [
        (&["user", "add", "bob", "--role", "writer", "--password", "", "--data", &db][..], 2),
        (&["user", "add", "b b", "--role", "writer", "--password", "x", "--data", &db], 2),
        (&["user", "add", "bob", "--role", "boss", "--password", "x", "--data", &db], 2),
        (&["user", "remove", "nobody", "--data", &db], 1),
        (&["user", "add", "neo4j", "--role", "writer", "--password", "x", "--data", &db], 1),
    ] {
        let out = plexus(args);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {}", text(&out.stderr));
    }
}
