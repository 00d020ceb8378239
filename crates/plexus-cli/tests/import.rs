//! `plexus import` through the built binary: node and relationship files, the LDBC layout, incremental mode, and
//! errors giving exit status 2 with file, line and column.

mod common;

use std::path::Path;

use common::{path, plexus, text};

#[test]
fn nodes_and_relationships_then_incremental() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("people.tsv"), "id:ID\tname\tage:int\nann\tAnn\t42\nbob\tBob\t\n").unwrap();
    std::fs::write(dir.join("knows.tsv"), ":START_ID\t:END_ID\nann\tbob\n").unwrap();
    let db = path(dir, "db");
    let nodes = format!("Person:Employee={}", path(dir, "people.tsv"));
    let rels = format!("KNOWS={}", path(dir, "knows.tsv"));
    let out = plexus(&["import", "--data", &db, "--nodes", &nodes, "--relationships", &rels, "--delimiter", "tab"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("imported 2 nodes and 1 relationship into"), "{stdout}");
    assert!(text(&out.stderr).contains("unique keys: Person(id), Employee(id)"), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains('\r'), "no progress bar when stderr is not a terminal");

    let info = text(&plexus(&["info", "--data", &db]).stdout);
    assert!(info.contains(":Employee  2 nodes") && info.contains("[:KNOWS]  1 relationship\n"), "{info}");

    std::fs::write(dir.join("more.tsv"), "id:ID\tname\nbob\tRobert\ncleo\tCleo\n").unwrap();
    std::fs::write(dir.join("more-knows.tsv"), ":START_ID\t:END_ID\tsince:int\ncleo\tann\t2020\n").unwrap();
    let nodes = format!("Person={}", path(dir, "more.tsv"));
    let rels = format!("KNOWS={}", path(dir, "more-knows.tsv"));
    let args = ["import", "--data", &db, "--mode", "incremental", "--quiet", "--delimiter", "\t"];
    let out = plexus(&[&args[..], &["--nodes", &nodes, "--relationships", &rels]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("added 1 node (1 already there) and 1 relationship to"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(text(&out.stderr), "", "--quiet");
    let check = plexus(&["check", "--data", &db]);
    assert!(check.status.success() && text(&check.stdout).contains("3 nodes and 2 relationships"), "{check:?}");
}

#[test]
fn an_incremental_import_of_relationships_alone_finds_nodes_of_the_global_id_space() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("people.csv"), "id:ID,name\n1,Ann\n2,Bob\n").unwrap();
    std::fs::write(dir.join("items.csv"), "id:ID,name\n3,Pen\n").unwrap();
    let db = path(dir, "db");
    let people = format!("Person={}", path(dir, "people.csv"));
    let items = format!("Item={}", path(dir, "items.csv"));
    let out = plexus(&["import", "--data", &db, "--nodes", &people, "--nodes", &items]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(dir.join("rels.csv"), ":START_ID,:END_ID,:TYPE\n1,2,KNOWS\n2,3,OWNS\n").unwrap();
    let rels = path(dir, "rels.csv");
    let out = plexus(&["import", "--data", &db, "--mode", "incremental", "--quiet", "--relationships", &rels]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let q = "MATCH (a)-[r]->(b) RETURN a.name + ' ' + type(r) + ' ' + b.name AS t ORDER BY t";
    let out = plexus(&["query", "--data", &db, "--format", "csv", q]);
    assert_eq!(text(&out.stdout), "t\nAnn KNOWS Bob\nBob OWNS Pen\n", "{}", text(&out.stderr));
    // An id that is in no label's key is still an error.
    std::fs::write(dir.join("bad.csv"), ":START_ID,:END_ID,:TYPE\n1,9,KNOWS\n").unwrap();
    let out = plexus(&["import", "--data", &db, "--mode", "incremental", "--relationships", &path(dir, "bad.csv")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown end id '9'"), "{}", text(&out.stderr));
}

#[test]
fn errors_name_file_line_and_column_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("n.csv"), "id:ID(P),name\n1,a\n2,b\n").unwrap();
    std::fs::write(dir.join("r.csv"), ":START_ID(P),:END_ID(P),:TYPE\n1,2,R\n2,3,R\n").unwrap();
    let db = path(dir, "db");
    let (nodes, rels) = (path(dir, "n.csv"), path(dir, "r.csv"));
    let out = plexus(&["import", "--data", &db, "--nodes", &nodes, "--relationships", &rels]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("r.csv: line 3, column 3: unknown end id '3' in id space P"), "{err}");
    assert!(!dir.join("db").exists());
    let out = plexus(&["import", "--data", &db, "--nodes", &nodes, "--relationships", &rels, "--skip-bad-lines", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("skipped"), "{}", text(&out.stderr));
    let out = plexus(&["import", "--data", &db]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nothing to import"));
}

#[test]
fn ldbc_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let snb = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plexus-import/tests/fixtures/ldbc");
    let out = plexus(&["import", "--data", &db, "--ldbc", snb.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("imported 20 nodes and 40 relationships"), "{}", text(&out.stdout));
    let info = text(&plexus(&["info", "--data", &db]).stdout);
    assert!(info.contains(":City  2 nodes") && info.contains("[:KNOWS]  2 relationships"), "{info}");
}

#[test]
fn duplicate_node_ids_are_skipped_with_skip_duplicate_nodes_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("n.csv"), "id:ID,name\n1,a\n2,b\n1,c\n").unwrap();
    let (db, nodes) = (path(dir, "db"), path(dir, "n.csv"));
    let out = plexus(&["import", "--quiet", "--data", &db, "--nodes", &nodes, "--skip-bad-lines", "5"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("duplicate node id '1'") && err.contains("--skip-duplicate-nodes"), "{err}");
    let out = plexus(&["import", "--quiet", "--data", &db, "--nodes", &nodes, "--skip-duplicate-nodes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("skipped") && err.contains("n.csv: line 4, column 1: duplicate node id '1'"), "{err}");
    assert!(text(&out.stdout).contains("imported 2 nodes"), "{}", text(&out.stdout));
}

/// A later file's first line that repeats the header is skipped: data left out, so said even with --quiet.
#[test]
fn a_skipped_repeated_header_is_told_even_with_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("a.csv"), "id:ID,name\n1,a\n").unwrap();
    std::fs::write(dir.join("b.csv"), "id:ID,name\n2,b\n").unwrap();
    let nodes = format!("N={},{}", path(dir, "a.csv"), path(dir, "b.csv"));
    let out = plexus(&["import", "--quiet", "--data", &path(dir, "db"), "--nodes", &nodes]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("skipped the first line of") && err.contains("b.csv: it repeats the header"), "{err}");
}
/// The options of Neo4j's importer that change how fields read: a command line written for it runs here too.
#[test]
fn neo4j_importer_field_options() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("n.csv"), "id:ID,name,tags:string[]\n1, Ann ,a ; b\n2,'Bo, B',,extra\n3,'',x\n").unwrap();
    std::fs::write(dir.join("r.csv"), ":START_ID,:END_ID,:TYPE\n1,2,KNOWS\n1,9,KNOWS\n 2 ,1,KNOWS\n7,8,KNOWS\n")
        .unwrap();
    let (nodes, rels) = (format!("Person={}", path(dir, "n.csv")), path(dir, "r.csv"));
    let import = |db: &str, extra: &[&str]| {
        let args = ["import", "--quiet", "--data", db, "--nodes", &nodes, "--relationships", &rels, "--quote='"];
        plexus(&[&args[..], extra].concat())
    };
    let query = |db: &str, q: &str| text(&plexus(&["query", "--data", db, "--format", "csv", q]).stdout);

    // Without them the extra field and the unknown ids are bad lines.
    let out = import(&path(dir, "plain"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("line 3, column 12: 4 fields, but the header has 3"), "{}", text(&out.stderr));
    assert!(!dir.join("plain").exists(), "a failed import leaves no database");

    let db = path(dir, "db");
    let flags = [
        "--trim-strings",
        "--ignore-extra-columns",
        "--skip-bad-relationships",
        "--ignore-empty-strings=true",
        "--multiline-fields=true",
        "--normalize-types",
    ];
    let out = import(&db, &flags);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("skipped") && err.contains("line 3, column 3: unknown end id '9'"), "{err}");
    assert!(err.contains("line 5, column 1: unknown start id '7'"), "{err}");
    assert!(err.contains("dropped 1 field past the header's last column of"), "{err}");
    assert_eq!(
        query(&db, "MATCH (n:Person) RETURN n.id AS id, n.name AS name, n.tags AS tags ORDER BY id"),
        "id,name,tags\n1,Ann,\"[\"\"a\"\", \"\"b\"\"]\"\n2,\"Bo, B\",\n3,,\"[\"\"x\"\"]\"\n"
    );
    assert_eq!(query(&db, "MATCH (n {id: '3'}) RETURN n.name IS NULL AS absent"), "absent\ntrue\n");
    assert_eq!(query(&db, "MATCH (a)-->(b) RETURN a.id AS a, b.id AS b ORDER BY a"), "a,b\n1,2\n2,1\n");

    // The bad tolerance bounds what the skipping options skip.
    let tolerant = ["--trim-strings", "--ignore-extra-columns", "--skip-bad-relationships", "--bad-tolerance", "1"];
    let out = import(&path(dir, "tolerant"), &tolerant);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("unknown start id '7'") && err.contains("bad tolerance of 1"), "{err}");
    assert!(!dir.join("tolerant").exists());

    // Trimming leaves a quoted value as it is, skips blanks around one, and trims array elements, labels, types,
    // integer ids always; a relationship without an end is skipped with the others.
    std::fs::write(
        dir.join("t.csv"),
        "id:ID,name,x,tags:string[],d:date,:LABEL\n1, \"a,b\" ,z, a ; b , 2020-01-02 , A ; B \n2,\" q \",,,,C\n",
    )
    .unwrap();
    std::fs::write(dir.join("tr.csv"), ":START_ID,:END_ID,:TYPE\n1,2, T \n,2,T\n1,\" 2 \",T\n").unwrap();
    let db = path(dir, "trimmed");
    let (nodes, rels) = (path(dir, "t.csv"), path(dir, "tr.csv"));
    let args = ["import", "--quiet", "--data", &db, "--nodes", &nodes, "--relationships", &rels];
    let out = plexus(
        &[&args[..], &["--trim-strings", "true", "--skip-bad-relationships=TRUE", "--bad-tolerance", "-1"]].concat(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("empty start id") && text(&out.stderr).contains("unknown end id ' 2 '"));
    assert_eq!(
        query(
            &db,
            "MATCH (n) RETURN n.name AS name, n.x AS x, size(n.tags) AS tags, n.d AS d, labels(n) AS l ORDER BY n.id"
        ),
        "name,x,tags,d,l\n\"a,b\",z,2,2020-01-02,\"[\"\"A\"\", \"\"B\"\"]\"\n q ,,,,\"[\"\"C\"\"]\"\n"
    );
    assert_eq!(query(&db, "MATCH (a)-[r]->(b) RETURN a.id AS a, type(r) AS t, b.id AS b"), "a,t,b\n1,T,2\n");

    let out = plexus(&["import", "--data", &path(dir, "e"), "--edges", &rels, "--trim-strings"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--trim-strings applies to node and relationship files"));
}

/// Input from standard input (`-`) and from a pipe reads like a file, compressed or not.
#[test]
fn edges_from_standard_input_and_pipes() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let tmp = tempfile::tempdir().unwrap();
    let db = path(tmp.path(), "db");
    let compressed = zstd::encode_all(&b"1,2\n2,3\n3,1\n"[..], 1).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["import", "--data", &db, "--edges", "-", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&compressed).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let counted = plexus(&["query", "--data", &db, "--format", "csv", "MATCH ()-[r]->() RETURN count(r) AS n"]);
    assert_eq!(text(&counted.stdout).trim(), "n\n3");

    // A named pipe, as `<(zcat edges.gz)` hands one over: nothing may seek in it.
    let fifo = tmp.path().join("edges.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let writer = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::write(fifo, "10,20\n20,30\n").unwrap()
    });
    let piped = path(tmp.path(), "piped");
    let out = plexus(&["import", "--data", &piped, "--edges", fifo.to_str().unwrap(), "--quiet"]);
    writer.join().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn an_incremental_import_of_relationships_alone_finds_nodes_of_a_named_id_space() {
    // The id space is named for the files (`ID(P)`), not like the label: the nodes are found by their key.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("people.csv"), "pid:ID(P),name\na,Ann\nb,Bob\n").unwrap();
    std::fs::write(dir.join("knows.csv"), ":START_ID(P),:END_ID(P)\na,b\n").unwrap();
    let db = path(dir, "db");
    let out = plexus(&["import", "--data", &db, "--nodes", &format!("Person={}", path(dir, "people.csv"))]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rels = format!("KNOWS={}", path(dir, "knows.csv"));
    let out = plexus(&["import", "--data", &db, "--mode", "incremental", "--quiet", "--relationships", &rels]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = plexus(&["query", "--data", &db, "--format", "csv", "MATCH (a)-[:KNOWS]->(b) RETURN a.name, b.name"]);
    assert_eq!(text(&out.stdout), "a.name,b.name\nAnn,Bob\n", "{}", text(&out.stderr));
}

/// A failed write part-way (here the file size limit, as a full disk) reports what the batches before it
/// committed, file by file, as an interrupt does.
#[cfg(target_os = "linux")]
#[test]
fn an_incremental_import_that_fails_to_write_part_way_says_what_was_committed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("seed.csv"), "id:ID,name\nseed,S\n").unwrap();
    let rows: String = (0..20_000).map(|i| format!("n{i},N{i},{}\n", "x".repeat(80))).collect();
    std::fs::write(dir.join("fill.csv"), format!("id:ID,name,pad\n{rows}")).unwrap();
    let db = path(dir, "db");
    let out = plexus(&["import", "--data", &db, "--nodes", &format!("Q={}", path(dir, "seed.csv"))]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Writes past 1.2 MB fail with EFBIG (SIGXFSZ ignored, as the shell passes it on).
    let binary = env!("CARGO_BIN_EXE_plexus");
    let fill = format!("Q={}", path(dir, "fill.csv"));
    let script = format!(
        "trap '' XFSZ; ulimit -f 1200; exec '{binary}' import --data '{db}' --mode incremental --batch-size 3000 \
         --nodes '{fill}'"
    );
    let out = std::process::Command::new("bash").args(["-c", &script]).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let count = plexus(&["query", "--data", &db, "--format", "csv", "MATCH (n:Q) RETURN count(n) AS n"]);
    let committed: u64 = text(&count.stdout).lines().nth(1).unwrap().parse().unwrap();
    assert!(committed > 1 && committed < 20_001 && (committed - 1).is_multiple_of(3000), "{committed}");
    let expected = format!("fill.csv: rows up to line {committed} committed ({} nodes added", committed - 1);
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stderr.contains("what was committed before it stays in the database"), "{stderr}");
}

/// An incremental import killed outright (no chance to report) leaves a journal of what it committed, which the
/// next command opening the database shows, and which the next import notes and then removes.
#[cfg(unix)]
#[test]
fn an_incremental_import_killed_outright_is_reported_by_the_next_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("seed.csv"), "id:ID,name\nseed,S\n").unwrap();
    let rows: String = (0..200_000).map(|i| format!("n{i},N{i}\n")).collect();
    std::fs::write(dir.join("many.csv"), format!("id:ID,name\n{rows}")).unwrap();
    let db = path(dir, "db");
    let out = plexus(&["import", "--data", &db, "--nodes", &format!("Q={}", path(dir, "seed.csv"))]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let many = format!("Q={}", path(dir, "many.csv"));
    let args = ["import", "--data", &db, "--mode", "incremental", "--quiet", "--batch-size", "500", "--nodes", &many];
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_plexus")).args(args).spawn().unwrap();
    let journal = dir.join("db").join(plexus_import::incremental::JOURNAL);
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("rows up to line")) {
        assert!(started.elapsed().as_secs() < 60, "no batch was committed");
        assert!(child.try_wait().unwrap().is_none(), "the import ended before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let out = plexus(&["info", "--data", &db]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("an incremental import into this database was killed before it finished"), "{stderr}");
    assert!(stderr.contains("many.csv: rows up to line"), "{stderr}");
    // Running it again matches the nodes committed (they have a key), finishes, and clears the journal.
    let out = plexus(&args[..args.len()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!journal.exists());
    let count = plexus(&["query", "--data", &db, "--format", "csv", "MATCH (n:Q) RETURN count(n) AS n"]);
    assert_eq!(text(&count.stdout), "n\n200001\n");
    assert!(!text(&plexus(&["info", "--data", &db]).stderr).contains("killed before it finished"));
}
