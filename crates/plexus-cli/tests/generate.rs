//! `plexus generate` through the built binary: output files, the summary, and bad input giving exit status 2
//! with a message rather than a panic.

use std::path::Path;
use std::process::{Command, Output};

fn plexus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plexus")).args(args).output().expect("run plexus")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn out_arg(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

#[test]
fn writes_the_requested_graph_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = out_arg(dir.path(), "likes.csv");
    let out =
        plexus(&["generate", "likes", "--out", &path, "--items", "50", "--people", "20", "--likes", "5", "--header"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().next(), Some("source,target"));
    assert_eq!(text.lines().count(), 1 + 20 * 5);
    let summary = stderr(&out);
    assert!(summary.contains("100 edges") && summary.contains("70 nodes") && summary.contains("edges/s"), "{summary}");
    assert!(!summary.contains('\r'), "no progress bar when stderr is not a terminal");

    // Same seed, same file; the thread count does not matter.
    let again = out_arg(dir.path(), "rmat-a.csv");
    let other = out_arg(dir.path(), "rmat-b.csv");
    let common = ["--rmat-scale", "10", "--edge-factor", "8", "--weights", "--seed", "3"];
    assert!(plexus(&[&["generate", "kronecker", "--out", &again, "--threads", "1"][..], &common].concat())
        .status
        .success());
    assert!(plexus(&[&["generate", "kronecker", "--out", &other, "--threads", "2"][..], &common].concat())
        .status
        .success());
    let a = std::fs::read(&again).unwrap();
    assert_eq!(a, std::fs::read(&other).unwrap());
    assert_eq!(a.iter().filter(|&&b| b == b'\n').count(), 8 << 10);
}

#[test]
fn compressed_preset_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = out_arg(dir.path(), "patents.csv.zst");
    let out = plexus(&["generate", "patents", "--scale", "0.001", "--out", &path]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = zstd::decode_all(&std::fs::read(&path).unwrap()[..]).unwrap();
    assert_eq!(text.iter().filter(|&&b| b == b'\n').count(), 16_519);
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let ok = out_arg(dir.path(), "edges.csv");
    let unwritable = out_arg(dir.path(), "no/such/dir/edges.csv");
    let bz2 = out_arg(dir.path(), "edges.csv.bz2");
    let cases: [(&[&str], &str); 10] = [
        (&["generate", "rmat", "--out", &bz2], "cannot write .bz2 files"),
        (&["generate", "rmat", "--out", &ok, "--abcd", "0.5,0.2,0.2,0.2"], "sum to 1"),
        (&["generate", "rmat", "--out", &ok, "--abcd", "0.5,0.5"], "four"),
        (&["generate", "rmat", "--out", &ok, "--rmat-scale", "0"], "scale"),
        (&["generate", "kronecker", "--out", &ok, "--noise", "0.5"], "noise"),
        (&["generate", "patents", "--out", &ok, "--scale", "0"], "--scale"),
        (&["generate", "patents", "--out", &ok, "--scale=-1"], "--scale"),
        (&["generate", "likes", "--out", &ok, "--items", "3", "--likes", "4"], "likes per person"),
        (&["generate", "likes", "--out", &ok, "--rmat-scale", "4"], "does not apply"),
        (&["generate", "nonsense", "--out", &ok], "invalid value"),
    ];
    for (args, message) in cases {
        let out = plexus(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: expected {message:?} in {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!Path::new(&ok).exists(), "bad parameters must not leave a file behind");
    // A command line that could work, failing on the way: status 1, as for other runtime errors.
    let out = plexus(&["generate", "patents", "--out", &unwritable, "--scale", "0.001"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
}

#[test]
fn snb_writes_the_ldbc_layout() {
    let dir = tempfile::tempdir().unwrap();
    let a = out_arg(dir.path(), "a");
    let b = out_arg(dir.path(), "b");
    let out = plexus(&["generate", "snb", "--out", &a, "--scale", "0.003", "--seed", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stderr(&out);
    assert!(summary.contains("222 persons") && summary.contains("31 files") && summary.contains("rows/s"), "{summary}");
    let person = std::fs::read_to_string(Path::new(&a).join("dynamic/person_0_0.csv")).unwrap();
    assert_eq!(
        person.lines().next(),
        Some("id|firstName|lastName|gender|birthday|creationDate|locationIP|browserUsed|language|email")
    );
    assert_eq!(person.lines().count(), 1 + 222);
    let tags = std::fs::read_to_string(Path::new(&a).join("static/tag_0_0.csv")).unwrap();
    assert_eq!(tags.lines().count(), 1 + 16_080);

    assert!(plexus(&["generate", "snb", "--out", &b, "--scale", "0.003", "--seed", "5", "--threads", "1"])
        .status
        .success());
    let knows = "dynamic/person_knows_person_0_0.csv";
    assert_eq!(std::fs::read(Path::new(&a).join(knows)).unwrap(), std::fs::read(Path::new(&b).join(knows)).unwrap());

    // Generating again into the same directory replaces the data set; a file of the user's own beside it is
    // not deleted with it unless --force says so.
    let again = ["generate", "snb", "--out", &b, "--scale", "0.003", "--seed", "6"];
    assert!(plexus(&again).status.success());
    let mine = Path::new(&b).join("static/important.csv");
    std::fs::write(&mine, "keep").unwrap();
    let out = plexus(&again);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("important.csv") && stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "keep");
    assert!(plexus(&[&again[..], &["--force"]].concat()).status.success());
    assert!(!mine.exists());

    for (args, message) in [
        (&["generate", "snb", "--out", &a][..], "needs --scale"),
        (&["generate", "snb", "--out", &a, "--scale", "0"], "--scale"),
        (&["generate", "snb", "--out", &a, "--scale", "0.003", "--header"], "does not apply"),
    ] {
        let out = plexus(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn outputs_larger_than_the_free_space_are_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let edges = out_arg(tmp.path(), "x.csv");
    let out = plexus(&["generate", "rmat", "--rmat-scale", "40", "--out", &edges]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("would take about") && stderr(&out).contains("TB"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    let snb = out_arg(tmp.path(), "snb");
    let out = plexus(&["generate", "snb", "--scale", "1000", "--out", &snb]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("would take about"), "{}", stderr(&out));
    let out = plexus(&["generate", "likes", "--out", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
}

#[test]
fn outputs_are_written_under_a_temporary_name_and_renamed_at_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let edges = out_arg(tmp.path(), "likes.csv.zst");
    assert!(plexus(&["generate", "likes", "--out", &edges]).status.success());
    let snb = out_arg(tmp.path(), "snb");
    assert!(plexus(&["generate", "snb", "--scale", "0.003", "--out", &snb]).status.success());
    assert_eq!(names(tmp.path()), ["likes.csv.zst", "snb"]);
    // Into an existing directory: its static/ and dynamic/ are replaced, other files stay.
    std::fs::write(tmp.path().join("snb/README"), "mine").unwrap();
    assert!(plexus(&["generate", "snb", "--scale", "0.003", "--out", &snb]).status.success());
    assert_eq!(names(&tmp.path().join("snb")), ["README", "dynamic", "static"]);
    assert_eq!(names(tmp.path()), ["likes.csv.zst", "snb"]);
    // A failure leaves nothing: the directory to write into does not exist.
    let nowhere = out_arg(tmp.path(), "missing/x.csv");
    assert_eq!(plexus(&["generate", "likes", "--out", &nowhere]).status.code(), Some(1));
    assert_eq!(names(tmp.path()), ["likes.csv.zst", "snb"]);
}

/// A run killed outright (SIGKILL, which no handler sees) leaves its temporary; the next run for the same output
/// removes it, and leaves alone those of other outputs and of live processes.
#[test]
fn temporaries_of_killed_runs_are_removed_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dead = tmp.path().join(format!(".plexus-partial-{}-out.csv", u32::MAX - 1));
    let other_output = tmp.path().join(format!(".plexus-partial-{}-other.csv", u32::MAX - 1));
    let live = tmp.path().join(format!(".plexus-partial-{}-out.csv", std::process::id()));
    for f in [&dead, &other_output, &live] {
        std::fs::write(f, "1,2\n").unwrap();
    }
    let out = tmp.path().join("out.csv");
    let done = plexus(&["generate", "rmat", "--rmat-scale", "4", "--out", out.to_str().unwrap()]);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(out.exists() && !dead.exists());
    assert!(other_output.exists() && live.exists());
}

/// SIGTERM ends a run with status 128 + 15, as for every command a signal stops, and nothing written.
#[test]
fn a_terminated_run_exits_143_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("big.csv");
    let child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        // --force: the run is stopped long before it writes much, whatever the free space of the machine.
        .args(["generate", "rmat", "--rmat-scale", "24", "--force", "--out", out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let done = child.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(143), "{}", String::from_utf8_lossy(&done.stderr));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "the output or its temporary was left");
}
