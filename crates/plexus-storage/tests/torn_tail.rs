//! Recovery from torn and damaged files.
//!
//! A database is built with a known sequence of commits (once with the log alone, once with a checkpoint in the
//! middle), and the state after every commit is recorded. Then, on copies of the directory:
//! - the last log segment is cut at every byte offset (its records and its header): open must
//!   succeed, recover exactly the commits whose records lie wholly before the cut, report a dropped tail exactly
//!   when the cut fell inside a record, pass `check()`, and accept new commits that survive another reopen;
//! - every byte of the last segment, header included, is flipped: open must either recover a committed
//!   prefix that keeps every commit before the damaged record and report the damage, or refuse with an error
//!   naming the file; it must never panic;
//! - a damaged record in an earlier segment cuts the log there and sets the later segments aside, reported;
//! - every byte of a checkpoint is flipped and the checkpoint is truncated: open must refuse with
//!   `StorageError::Corrupt`, never open an empty or partial database;
//! - a log segment or checkpoint from another database is refused with `StorageError::ForeignFile`, a missing or
//!   damaged `plexus.meta` next to data files is refused, and a second open of an open directory gets
//!   `StorageError::Locked`.

use std::ops::ControlFlow;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

use plexus_storage::wal::{read_segment, SEGMENT_HEADER_LEN};
use plexus_storage::{Direction, ReadTxn, RecoveryReport, StorageError, Store, TokenKind, TypeFilter, Value, WriteTxn};
use tempfile::TempDir;

/// Every node and relationship with labels, type and properties by name: what a commit can change.
fn dump(r: &ReadTxn) -> Vec<String> {
    let cat = r.catalog();
    let name = |kind, id: u32| cat.name(kind, id).map_or_else(|| format!("?{id}"), |n| n.to_string());
    let props = |p: Option<&plexus_storage::PropMap>| -> String {
        let mut v: Vec<String> = p
            .map(|p| p.iter().map(|(k, v)| format!("{}={v:?}", name(TokenKind::PropKey, k.0))).collect())
            .unwrap_or_default();
        v.sort();
        v.join(",")
    };
    let mut out = Vec::new();
    let _ = r.visit_nodes::<()>(|n| {
        let mut labels: Vec<String> = r.node_labels(n).unwrap().iter().map(|l| name(TokenKind::Label, l.0)).collect();
        labels.sort();
        out.push(format!("node {} {labels:?} {{{}}}", n.0, props(r.node_props(n).flatten())));
        ControlFlow::Continue(())
    });
    let _ = r.visit_all_rels::<()>(|rel| {
        let props = props(r.rel_props(rel.id).flatten().as_deref());
        let ty = name(TokenKind::Type, rel.ty.0);
        out.push(format!("rel {} {}-[{ty}]->{} {{{props}}}", rel.id.0, rel.src.0, rel.dst.0));
        ControlFlow::Continue(())
    });
    out
}

/// A built database and the state after each of its commits (index 0: empty).
struct Built {
    dir: TempDir,
    /// (version, dump) after commit k.
    states: Vec<(u64, Vec<String>)>,
}

impl Built {
    fn commit(&mut self, store: &Store, f: impl FnOnce(&mut WriteTxn)) {
        let mut tx = store.write();
        f(&mut tx);
        let version = tx.commit().unwrap();
        self.states.push((version, dump(&store.read())));
    }
}

fn person(tx: &WriteTxn, name: &str) -> plexus_storage::NodeId {
    tx.node_by_key(tx.label("Person"), &Value::from(name)).unwrap_or_else(|| panic!("{name} exists"))
}

/// Fourteen commits over two sessions, touching every kind of operation and creating tokens along the way.
/// With `checkpoint`, a checkpoint follows commit 8.
fn build(checkpoint: bool) -> Built {
    let mut b = Built { dir: tempfile::tempdir().unwrap(), states: vec![(0, Vec::new())] };
    {
        let (store, _) = Store::open(b.dir.path()).unwrap();
        b.commit(&store, |tx| {
            let (person, name, knows) = (tx.label("Person"), tx.prop_key("name"), tx.rel_type("KNOWS"));
            tx.declare_unique_key(person, name).unwrap();
            let ann = tx
                .create_node(
                    &[person],
                    vec![
                        (name, "ann".into()),
                        (tx.prop_key("age"), Value::Int(42)),
                        (tx.prop_key("score"), 1.5.into()),
                    ],
                )
                .unwrap();
            let tags = Value::from(vec!["x".to_string(), "y".to_string()]);
            let bob = tx.create_node(&[person], vec![(name, "bob".into()), (tx.prop_key("tags"), tags)]).unwrap();
            tx.create_rel(ann, knows, bob, vec![(tx.prop_key("since"), Value::Int(2020))]).unwrap();
        });
        b.commit(&store, |tx| {
            let (label, name) = (tx.label("Person"), tx.prop_key("name"));
            let blob = Value::from(vec![0u8, 1, 2, 255]);
            let carol = tx.create_node(&[label], vec![(name, "carol".into()), (tx.prop_key("blob"), blob)]).unwrap();
            let (ann, bob) = (person(tx, "ann"), person(tx, "bob"));
            tx.create_rel(bob, tx.rel_type("KNOWS"), carol, vec![]).unwrap();
            tx.create_rel(carol, tx.rel_type("LIKES"), ann, vec![(tx.prop_key("w"), 0.5.into())]).unwrap();
        });
        b.commit(&store, |tx| {
            let (ann, bob) = (person(tx, "ann"), person(tx, "bob"));
            tx.set_node_prop(ann, tx.prop_key("age"), Value::Int(43)).unwrap();
            tx.set_node_prop(bob, tx.prop_key("city"), "Paris".into()).unwrap();
        });
        b.commit(&store, |tx| {
            let (city, road, name) = (tx.label("City"), tx.rel_type("ROAD"), tx.prop_key("name"));
            let mut prev = None;
            for i in 0..5 {
                let c = tx.create_node(&[city], vec![(name, format!("city-{i}").into())]).unwrap();
                if let Some(p) = prev {
                    tx.create_rel(p, road, c, vec![(tx.prop_key("km"), Value::Int(10 * i))]).unwrap();
                }
                prev = Some(c);
            }
        });
        b.commit(&store, |tx| {
            let (bob, carol) = (person(tx, "bob"), person(tx, "carol"));
            let rel = tx.rels_between(bob, carol, Direction::Out, TypeFilter::All)[0].rel;
            tx.delete_rel(rel).unwrap();
        });
    }
    {
        let (store, report) = Store::open(b.dir.path()).unwrap();
        assert_eq!(report.replayed, 5, "{report}");
        // One segment per session (an open otherwise goes on writing the last one): the tests below damage
        // one session's log and look at what happens to the other's.
        store.start_log_segment().unwrap();
        b.commit(&store, |tx| {
            let (ann, carol) = (person(tx, "ann"), person(tx, "carol"));
            tx.add_label(ann, tx.label("Admin")).unwrap();
            tx.set_node_prop(carol, tx.prop_key("nick"), "c".into()).unwrap();
        });
        b.commit(&store, |tx| {
            let city = tx.nodes_with_label(tx.label("City"))[2];
            tx.detach_delete_node(city).unwrap();
        });
        b.commit(&store, |tx| {
            let (ann, bob, carol, knows) =
                (person(tx, "ann"), person(tx, "bob"), person(tx, "carol"), tx.rel_type("KNOWS"));
            let since = tx.prop_key("since");
            tx.upsert_edges(&[(ann, knows, carol, vec![(since, Value::Int(2021))]), (carol, knows, bob, vec![])])
                .unwrap();
        });
        if checkpoint {
            store.checkpoint().unwrap();
        }
        b.commit(&store, |tx| {
            let tag = tx.create_node(&[tx.label("Tag")], vec![(tx.prop_key("title"), "t1".into())]).unwrap();
            tx.create_rel(person(tx, "bob"), tx.rel_type("TAGGED"), tag, vec![]).unwrap();
        });
        b.commit(&store, |tx| {
            let ann = person(tx, "ann");
            tx.remove_label(ann, tx.label("Admin")).unwrap();
            tx.set_node_prop(ann, tx.prop_key("score"), Value::Null).unwrap();
        });
        b.commit(&store, |tx| {
            let dave = tx.create_node(&[tx.label("Person")], vec![(tx.prop_key("name"), "dave".into())]).unwrap();
            tx.create_rel(dave, tx.rel_type("KNOWS"), person(tx, "ann"), vec![]).unwrap();
        });
        b.commit(&store, |tx| {
            tx.set_node_prop(person(tx, "dave"), tx.prop_key("age"), Value::Int(7)).unwrap();
        });
        b.commit(&store, |tx| {
            let (dave, ann) = (person(tx, "dave"), person(tx, "ann"));
            let rel = tx.rels_between(dave, ann, Direction::Out, TypeFilter::All)[0].rel;
            tx.delete_rel(rel).unwrap();
        });
        b.commit(&store, |tx| {
            tx.set_node_prop(person(tx, "bob"), tx.prop_key("city"), "Rome".into()).unwrap();
        });
    }
    b
}

fn files_named(dir: &Path, f: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&f))
        .collect();
    v.sort();
    v
}

fn last_segment(dir: &Path) -> PathBuf {
    files_named(dir, |n| n.starts_with("wal-") && n.ends_with(".log")).pop().expect("a log segment")
}

fn checkpoint_file(dir: &Path) -> PathBuf {
    files_named(dir, |n| n.starts_with("checkpoint-") && n.ends_with(".plx")).pop().expect("a checkpoint")
}

fn copy_dir(from: &Path) -> TempDir {
    let to = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.path().join(entry.file_name())).unwrap();
    }
    to
}

/// Opens `dir`, turning a panic into a test failure that names `what`.
fn open(dir: &Path, what: &str) -> Result<(Store, RecoveryReport), StorageError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| Store::open(dir))).unwrap_or_else(|_| panic!("open panicked: {what}"))
}

/// Opens `dir` accepting the loss of commits after damage in its log, after checking that a plain open refuses
/// it, naming the damaged file, and changes nothing on disk.
fn open_dropping(dir: &Path, what: &str) -> (Store, RecoveryReport) {
    let before = snapshot_files(dir);
    match open(dir, what) {
        Err(e @ StorageError::Corrupt { .. }) => {
            assert!(e.to_string().contains("plexus repair"), "{what}: the refusal says how to go on: {e}");
        }
        Err(e) => panic!("{what}: unexpected error {e:?}"),
        Ok((_, report)) => panic!("{what}: opened with commits lost to damage: {report}"),
    }
    assert!(snapshot_files(dir) == before, "{what}: a refused open changed the directory");
    let options = plexus_storage::Options { drop_damaged_log: true, ..plexus_storage::Options::default() };
    std::panic::catch_unwind(AssertUnwindSafe(|| Store::open_with(dir, options)))
        .unwrap_or_else(|_| panic!("open panicked: {what}"))
        .unwrap_or_else(|e| panic!("{what}: open dropping the damaged log failed: {e}"))
}

/// Start offsets of the records of a clean segment, and the offset after the last one.
fn record_bounds(bytes: &[u8]) -> Vec<usize> {
    let (records, end, _) = read_segment(bytes);
    let mut bounds = vec![SEGMENT_HEADER_LEN];
    for r in &records {
        bounds.push(bounds.last().unwrap() + 8 + r.len());
    }
    assert_eq!(*bounds.last().unwrap() as u64, end);
    assert_eq!(end as usize, bytes.len(), "the built segment is clean");
    bounds
}

fn assert_state(b: &Built, store: &Store, report: &RecoveryReport, k: usize, what: &str) {
    let r = store.read();
    assert_eq!(report.version, b.states[k].0, "{what}: recovered version; {report}");
    assert_eq!(dump(&r), b.states[k].1, "{what}: recovered state is not the state after commit {k}; {report}");
    let problems = r.check();
    assert!(problems.is_empty(), "{what}: check() found {problems:?}");
}

/// Commits once more after a recovery and checks that the commit and everything before it survive a reopen.
fn commit_and_reopen(dir: &Path, store: Store, what: &str) {
    let mut tx = store.write();
    let n = tx.create_node(&[tx.label("After")], vec![(tx.prop_key("what"), what.into())]).unwrap();
    tx.create_rel(n, tx.rel_type("SELF"), n, vec![]).unwrap();
    tx.commit().unwrap_or_else(|e| panic!("{what}: commit after recovery failed: {e}"));
    let expected = dump(&store.read());
    drop(store);
    let (store, report) = open(dir, what).unwrap_or_else(|e| panic!("{what}: reopen after new commit failed: {e}"));
    assert!(report.is_clean(), "{what}: second recovery dropped something: {report}");
    let r = store.read();
    assert_eq!(dump(&r), expected, "{what}: the commit after recovery did not survive a reopen");
    assert!(r.check().is_empty(), "{what}: {:?}", r.check());
}

fn torn_tails(checkpoint: bool) {
    let b = build(checkpoint);
    let variant = if checkpoint { "with checkpoint" } else { "log only" };
    let segment = last_segment(b.dir.path());
    let seg_name = segment.file_name().unwrap().to_owned();
    let bytes = std::fs::read(&segment).unwrap();
    let bounds = record_bounds(&bytes);
    let in_segment = bounds.len() - 1;
    let total = b.states.len() - 1;
    let base = total - in_segment;
    // Both variants end with a session of several commits in one segment: those records are the tail under test.
    assert_eq!(base, if checkpoint { 8 } else { 5 }, "{variant}: commits before the last segment");
    // The segment is small, so every offset of it is tried, not only those in its last few records.
    let cuts: Vec<usize> = (0..bytes.len()).collect();
    for (i, &cut) in cuts.iter().enumerate() {
        let what = format!("{variant}: cut at {cut} of {}", bytes.len());
        let copy = copy_dir(b.dir.path());
        let seg = copy.path().join(&seg_name);
        std::fs::OpenOptions::new().write(true).open(&seg).unwrap().set_len(cut as u64).unwrap();
        let (store, report) = open(copy.path(), &what).unwrap_or_else(|e| panic!("{what}: open failed: {e}"));
        let whole = bounds.iter().filter(|&&end| end <= cut).count().saturating_sub(1);
        assert_state(&b, &store, &report, base + whole, &what);
        // A cut whose partial record is all zeros looks like the zeroed space ahead of the records, which ends
        // a segment cleanly (no commit is in it either way).
        let zero_torn = cut > bounds[0] && bytes[bounds[whole]..cut].iter().all(|&b| b == 0);
        let mid_record = !bounds.contains(&cut) && !zero_torn;
        if mid_record {
            let d = report.dropped.first().unwrap_or_else(|| panic!("{what}: no dropped tail reported: {report}"));
            assert_eq!(d.file.file_name(), Some(seg_name.as_os_str()), "{what}: {report}");
            assert_eq!(report.lost_commits(), 0, "{what}: a torn last write holds no whole commit: {report}");
            if cut >= SEGMENT_HEADER_LEN {
                assert_eq!((d.offset, d.bytes), (bounds[whole] as u64, (cut - bounds[whole]) as u64), "{what}");
            }
        } else {
            assert!(report.is_clean(), "{what}: a cut between records is not damage: {report}");
        }
        if i % 3 == 0 {
            commit_and_reopen(copy.path(), store, &what);
        }
    }

    // A segment left by a process that did not close it ends in zeros (the log zeroes ahead of its records):
    // they end it cleanly, while a damaged byte among them is reported and keeps every commit.
    for (offset, value) in [(None, 0u8), (Some(0), 1), (Some(100), 0x80), (Some(4095), 7)] {
        let what = format!("{variant}: zeros after the records, byte {offset:?} set to {value}");
        let copy = copy_dir(b.dir.path());
        let mut padded = bytes.clone();
        padded.resize(bytes.len() + 4096, 0);
        if let Some(o) = offset {
            padded[bytes.len() + o] = value;
        }
        std::fs::write(copy.path().join(&seg_name), &padded).unwrap();
        let (store, report) = open(copy.path(), &what).unwrap_or_else(|e| panic!("{what}: open failed: {e}"));
        assert_state(&b, &store, &report, total, &what);
        assert_eq!(report.is_clean(), offset.is_none(), "{what}: {report}");
        commit_and_reopen(copy.path(), store, &what);
    }

    let header = (0..SEGMENT_HEADER_LEN).map(|o| (o, None));
    let records = (SEGMENT_HEADER_LEN..bytes.len()).map(|o| (o, bounds.iter().rposition(|&s| s <= o)));
    let (mut recovered, mut refused) = (0, 0);
    for (offset, record) in header.chain(records) {
        let what = format!("{variant}: byte {offset} of {} flipped", bytes.len());
        let copy = copy_dir(b.dir.path());
        let seg = copy.path().join(&seg_name);
        let mut damaged = bytes.clone();
        damaged[offset] ^= 1 << (offset % 8);
        std::fs::write(&seg, &damaged).unwrap();
        match open(copy.path(), &what) {
            Ok((store, report)) => {
                let got = dump(&store.read());
                let k = b.states.iter().rposition(|s| s.1 == got && s.0 == report.version);
                let k = k.unwrap_or_else(|| panic!("{what}: recovered a state that was never committed; {report}"));
                // Commits wholly before the damaged record must survive; for a damaged header, all of them.
                let kept = record.map_or(total, |r| base + r);
                assert!(k >= kept, "{what}: recovered only {k} of {kept} commits; {report}");
                if record.is_some() {
                    assert!(!report.is_clean(), "{what}: damage went unreported; {report}");
                }
                assert!(store.read().check().is_empty(), "{what}");
                recovered += 1;
            }
            Err(e @ (StorageError::Corrupt { .. } | StorageError::ForeignFile { .. })) => {
                assert!(e.to_string().contains(seg_name.to_str().unwrap()), "{what}: the error names no file: {e}");
                refused += 1;
            }
            Err(e) => panic!("{what}: unexpected error {e:?}"),
        }
    }
    println!(
        "{variant}: {} cuts, {recovered} flips recovered, {refused} refused; last segment {} bytes, records at {bounds:?}",
        cuts.len(),
        bytes.len()
    );
}

#[test]
fn torn_tail_log_only() {
    torn_tails(false);
}

#[test]
fn torn_tail_after_checkpoint() {
    torn_tails(true);
}

#[test]
fn damage_in_an_earlier_segment_sets_later_ones_aside() {
    let b = build(false);
    let segments = files_named(b.dir.path(), |n| n.starts_with("wal-") && n.ends_with(".log"));
    assert_eq!(segments.len(), 2, "one segment per session");
    let first = std::fs::read(&segments[0]).unwrap();
    let bounds = record_bounds(&first);
    for (index, &start) in bounds[..bounds.len() - 1].iter().enumerate() {
        // A byte inside the record's payload: its checksum no longer matches.
        let offset = start + 8;
        let what = format!("first segment byte {offset} (record {index}) flipped");
        let copy = copy_dir(b.dir.path());
        let mut damaged = first.clone();
        damaged[offset] ^= 0x04;
        std::fs::write(copy.path().join(segments[0].file_name().unwrap()), &damaged).unwrap();
        // A recovery cut short after setting the later segment aside, before cutting this one, must end where
        // a whole one does: the same damage is found again and the same state opens.
        let interrupted = copy_dir(copy.path());
        let later = segments[1].file_name().unwrap().to_str().unwrap();
        std::fs::rename(interrupted.path().join(later), interrupted.path().join(format!("{later}.dropped"))).unwrap();
        let (store, report) = open_dropping(copy.path(), &what);
        assert_state(&b, &store, &report, index, &what);
        assert_eq!(report.dropped.len(), 2, "{what}: the cut and the segment set aside: {report}");
        assert!(copy.path().join(format!("{later}.dropped")).exists(), "{what}: later segment not kept aside");
        // The commits after the damaged record were whole: reported as lost, and kept.
        let lost = (bounds.len() - 2 - index) + (b.states.len() - bounds.len());
        assert_eq!(report.lost_commits() as usize, lost, "{what}: {report}");
        let cut = &report.dropped[0];
        let kept = std::fs::read(cut.kept_in.as_ref().expect("kept")).unwrap();
        assert_eq!(kept, damaged[start..], "{what}: the dropped bytes are kept as they were");
        let options = plexus_storage::Options { drop_damaged_log: true, ..plexus_storage::Options::default() };
        let (again, again_report) = Store::open_with(interrupted.path(), options)
            .unwrap_or_else(|e| panic!("{what}: interrupted: open failed: {e}"));
        assert_state(&b, &again, &again_report, index, &format!("{what}, after an interrupted recovery"));
        commit_and_reopen(copy.path(), store, &what);
    }
}

#[test]
fn damaged_checkpoint_is_refused() {
    let b = build(true);
    let ckpt = checkpoint_file(b.dir.path());
    let name = ckpt.file_name().unwrap().to_owned();
    let bytes = std::fs::read(&ckpt).unwrap();
    let refused = |what: &str, copy: &TempDir| match open(copy.path(), what) {
        Err(StorageError::Corrupt { path, .. }) => assert_eq!(path.file_name(), Some(name.as_os_str()), "{what}"),
        Err(e) => panic!("{what}: expected Corrupt, got {e:?}"),
        Ok((store, report)) => {
            panic!("{what}: opened with {} nodes: {report}", store.read().node_count())
        }
    };
    for offset in 0..bytes.len() {
        let copy = copy_dir(b.dir.path());
        let mut damaged = bytes.clone();
        damaged[offset] ^= 1 << (offset % 8);
        std::fs::write(copy.path().join(&name), &damaged).unwrap();
        refused(&format!("checkpoint byte {offset} of {} flipped", bytes.len()), &copy);
    }
    for len in (0..bytes.len()).step_by(7) {
        let copy = copy_dir(b.dir.path());
        std::fs::write(copy.path().join(&name), &bytes[..len]).unwrap();
        refused(&format!("checkpoint truncated to {len} of {} bytes", bytes.len()), &copy);
    }
    let copy = copy_dir(b.dir.path());
    let mut longer = bytes.clone();
    longer.push(0);
    std::fs::write(copy.path().join(&name), &longer).unwrap();
    refused("checkpoint with a byte appended", &copy);
    // The undamaged original still opens to the full state.
    let (store, report) = open(b.dir.path(), "original").unwrap();
    assert_state(&b, &store, &report, b.states.len() - 1, "original");
}

#[test]
fn foreign_files_and_missing_metadata_are_refused() {
    let a = build(false);
    let other = build(true);
    let a_last = last_segment(a.dir.path());

    // Another database's segment placed after ours, or in place of our last one.
    let seq = |p: &Path| plexus_storage::wal::parse_segment_name(p.file_name().unwrap().to_str().unwrap()).unwrap();
    let foreign = last_segment(other.dir.path());
    for target in
        [plexus_storage::wal::segment_name(seq(&a_last) + 1), a_last.file_name().unwrap().to_str().unwrap().into()]
    {
        let copy = copy_dir(a.dir.path());
        std::fs::copy(&foreign, copy.path().join(&target)).unwrap();
        match open(copy.path(), &target) {
            Err(StorageError::ForeignFile { path, .. }) => assert!(path.ends_with(&target)),
            Err(e) => panic!("foreign segment as {target}: expected ForeignFile, got {e:?}"),
            Ok((_, report)) => panic!("foreign segment as {target} was accepted: {report}"),
        }
    }

    // Another database's checkpoint.
    let copy = copy_dir(a.dir.path());
    let ckpt = checkpoint_file(other.dir.path());
    std::fs::copy(&ckpt, copy.path().join(ckpt.file_name().unwrap())).unwrap();
    assert!(
        matches!(open(copy.path(), "foreign checkpoint"), Err(StorageError::ForeignFile { .. })),
        "a foreign checkpoint must be refused"
    );

    // Data files without their metadata, or with damaged metadata.
    let copy = copy_dir(a.dir.path());
    std::fs::remove_file(copy.path().join("plexus.meta")).unwrap();
    match open(copy.path(), "missing meta") {
        Err(e @ StorageError::Corrupt { .. }) => assert!(e.to_string().contains("plexus.meta"), "{e}"),
        Err(e) => panic!("missing plexus.meta: expected Corrupt, got {e:?}"),
        Ok(_) => panic!("opened data files without plexus.meta"),
    }
    assert!(!copy.path().join("plexus.meta").exists(), "a refused open must not create metadata");
    let meta = std::fs::read(a.dir.path().join("plexus.meta")).unwrap();
    for offset in 0..meta.len() {
        let copy = copy_dir(a.dir.path());
        let mut damaged = meta.clone();
        damaged[offset] ^= 0x10;
        std::fs::write(copy.path().join("plexus.meta"), &damaged).unwrap();
        let what = format!("plexus.meta byte {offset} flipped");
        assert!(matches!(open(copy.path(), &what), Err(StorageError::Corrupt { .. })), "{what}");
    }
}

#[test]
fn second_open_is_locked() {
    let b = build(false);
    let (store, _) = Store::open(b.dir.path()).unwrap();
    match Store::open(b.dir.path()) {
        Err(StorageError::Locked { path }) => assert_eq!(path, b.dir.path()),
        Err(e) => panic!("expected Locked, got {e:?}"),
        Ok(_) => panic!("a directory was opened twice"),
    }
    // The directory itself is locked: removing the lock file does not let a second process in.
    std::fs::remove_file(b.dir.path().join("LOCK")).unwrap();
    assert!(matches!(Store::open(b.dir.path()), Err(StorageError::Locked { .. })), "opened without its lock file");
    drop(store);
    let (store, report) = Store::open(b.dir.path()).unwrap();
    assert_state(&b, &store, &report, b.states.len() - 1, "reopen after the lock is released");
}

/// A creation killed before its metadata was written leaves a lock file and the metadata's temporary file:
/// they are cleared (no data is in them), but never while a process holds the directory, and never beside
/// anything else.
#[test]
fn what_an_unfinished_creation_left_is_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    std::fs::create_dir(&db).unwrap();
    assert!(!Store::clear_unfinished_creation(&db).unwrap(), "an empty directory has nothing to clear");
    std::fs::write(db.join("LOCK"), b"").unwrap();
    std::fs::write(db.join("plexus.meta.tmp"), b"PLX").unwrap();
    std::fs::write(db.join("notes.txt"), b"mine").unwrap();
    assert!(!Store::clear_unfinished_creation(&db).unwrap(), "someone's own file is never touched");
    std::fs::remove_file(db.join("notes.txt")).unwrap();
    let (store, _) = Store::open(&db).unwrap();
    drop(store);
    assert!(!Store::clear_unfinished_creation(&db).unwrap(), "a database is not an unfinished creation");

    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("LOCK"), b"").unwrap();
    std::fs::write(other.join("plexus.meta.tmp"), b"PLX").unwrap();
    let held = std::fs::File::open(&other).unwrap();
    held.lock().unwrap();
    assert!(matches!(Store::clear_unfinished_creation(&other), Err(StorageError::Locked { .. })));
    drop(held);
    assert!(Store::clear_unfinished_creation(&other).unwrap());
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 0);
    let (store, report) = Store::open(&other).unwrap();
    assert!(report.is_clean() && store.read().node_count() == 0);
}

/// The log a database reopens with counts towards its next automatic checkpoint: a process that opens, writes a
/// little and stops, again and again, must not grow the log without bound.
#[test]
fn log_kept_from_earlier_sessions_counts_towards_the_next_checkpoint() {
    use plexus_storage::{Durability, Options};
    let dir = tempfile::tempdir().unwrap();
    let write_some = |store: &Store, n: usize| {
        for i in 0..n {
            let mut tx = store.write();
            let (label, key) = (tx.label("N"), tx.prop_key("text"));
            tx.create_node(&[label], vec![(key, Value::from("x".repeat(200) + &i.to_string()))]).unwrap();
            tx.commit().unwrap();
        }
    };
    let never = Options { durability: Durability::Off, checkpoint_after_bytes: 0, ..Options::default() };
    for _ in 0..3 {
        let (store, _) = Store::open_with(dir.path(), never.clone()).unwrap();
        write_some(&store, 20);
    }
    let checkpoints = || files_named(dir.path(), |n| n.starts_with("checkpoint-") && n.ends_with(".plx")).len();
    assert_eq!(checkpoints(), 0);
    let soon = Options { durability: Durability::Off, checkpoint_after_bytes: 8 << 10, ..Options::default() };
    let (store, report) = Store::open_with(dir.path(), soon).unwrap();
    assert!(report.log_bytes > 8 << 10, "{report:?}");
    write_some(&store, 1);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while checkpoints() == 0 {
        assert!(std::time::Instant::now() < deadline, "no checkpoint after reopening with a long log");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Segments are created whole (renamed into place with their header): one cut inside its header lost the
/// commits it held, which recovery reports as lost and sets aside; a segment whose creation a crash cut short is
/// a temporary file, removed.
#[test]
fn a_segment_cut_inside_its_header_is_lost_data_and_a_temporary_one_is_removed() {
    let b = build(false);
    let segment = last_segment(b.dir.path());
    // Emptied too: segments are renamed into place whole, so not even a crash leaves one empty.
    for cut in [20, 0] {
        let what = format!("cut to {cut} bytes, inside the header");
        let copy = copy_dir(b.dir.path());
        let seg = copy.path().join(segment.file_name().unwrap());
        std::fs::OpenOptions::new().write(true).open(&seg).unwrap().set_len(cut).unwrap();
        std::fs::write(copy.path().join("wal-0000000000000099.log.tmp"), [1u8; 10]).unwrap();
        let (store, report) = open(copy.path(), &what).unwrap();
        assert!(report.lost_data() && report.lost_commits() == 0, "{what}: {report}");
        assert!(report.to_string().contains("how many is unknown"), "{what}: {report}");
        let aside = plexus_storage::recovery::set_aside_files(copy.path()).unwrap();
        assert_eq!(aside.len(), 1, "{what}: {aside:?}");
        assert_eq!(aside[0].1, None, "{what}: {aside:?}");
        assert!(!copy.path().join("wal-0000000000000099.log.tmp").exists());
        commit_and_reopen(copy.path(), store, &format!("after a segment {what}"));
    }
}

/// The records of the newest segment and checkpoint are checksummed and written whole: a damaged one is refused
/// by name, never taken for absent (which would let a later missing segment or checkpoint pass unnoticed).
#[test]
fn a_damaged_record_of_the_newest_segment_or_checkpoint_is_refused() {
    let b = build(true);
    for name in [plexus_storage::wal::HEAD_FILE, plexus_storage::checkpoint::HEAD_FILE] {
        let bytes = std::fs::read(b.dir.path().join(name)).unwrap();
        for at in 0..=bytes.len() {
            let what =
                if at == bytes.len() { format!("{name} cut short") } else { format!("{name} byte {at} flipped") };
            let copy = copy_dir(b.dir.path());
            let mut damaged = bytes.clone();
            if at == bytes.len() {
                damaged.pop();
            } else {
                damaged[at] ^= 0x41;
            }
            std::fs::write(copy.path().join(name), &damaged).unwrap();
            let before = snapshot_files(copy.path());
            match open(copy.path(), &what) {
                Err(StorageError::Corrupt { path, message }) => {
                    assert_eq!(path.file_name().and_then(|n| n.to_str()), Some(name), "{what}");
                    assert!(message.contains("damaged") && message.contains("remove it"), "{what}: {message}");
                }
                Ok((_, report)) => panic!("{what}: opened: {report}"),
                Err(e) => panic!("{what}: unexpected error {e:?}"),
            }
            assert!(snapshot_files(copy.path()) == before, "{what}: a refused open changed the directory");
        }
    }
}

/// The newest segment is recorded when it starts: if it goes missing (deleted, lost with a disk), opening is
/// refused with an error naming it, instead of opening at an older state as if its commits never happened.
#[test]
fn a_missing_newest_segment_is_refused() {
    let b = build(false);
    let copy = copy_dir(b.dir.path());
    std::fs::remove_file(copy.path().join(last_segment(b.dir.path()).file_name().unwrap())).unwrap();
    match open(copy.path(), "newest segment deleted") {
        Err(StorageError::Corrupt { path, message }) => {
            assert!(message.contains("missing"), "{message}");
            assert_eq!(path.file_name(), last_segment(b.dir.path()).file_name());
        }
        Ok((_, report)) => panic!("opened without its newest segment: {report}"),
        Err(e) => panic!("unexpected error {e:?}"),
    }
    // Opening without it is the operator's choice: remove the record.
    std::fs::remove_file(copy.path().join(plexus_storage::wal::HEAD_FILE)).unwrap();
    let (store, _) = open(copy.path(), "record removed").unwrap();
    assert!(store.read().check().is_empty());
    // Sessions that write nothing leave no segments of their own behind, and never trip the check.
    drop(store);
    for _ in 0..3 {
        open(copy.path(), "empty session").unwrap();
    }
    let segments = files_named(copy.path(), |n| n.starts_with("wal-") && n.ends_with(".log"));
    assert_eq!(segments.len(), 1, "{segments:?}");
}

/// A checkpoint is recorded when written: if it goes missing, opening is refused with an error naming it, even
/// when no log is left to show that anything came before (a database written by a bulk import, or whose log a
/// checkpoint retired).
#[test]
fn a_missing_checkpoint_is_refused() {
    let b = build(true);
    let copy = copy_dir(b.dir.path());
    let checkpoint = checkpoint_file(copy.path());
    // Without the log too: nothing else tells that the database held anything.
    for segment in files_named(copy.path(), |n| n.starts_with("wal")) {
        std::fs::remove_file(segment).unwrap();
    }
    let saved = std::fs::read(&checkpoint).unwrap();
    std::fs::remove_file(&checkpoint).unwrap();
    match open(copy.path(), "checkpoint deleted") {
        Err(StorageError::Corrupt { path, message }) => {
            assert!(message.contains("missing"), "{message}");
            assert_eq!(path.file_name(), checkpoint.file_name());
        }
        Ok((_, report)) => panic!("opened without its checkpoint: {report}"),
        Err(e) => panic!("unexpected error {e:?}"),
    }
    // Restored, it opens with what it held.
    std::fs::write(&checkpoint, saved).unwrap();
    let (store, report) = open(copy.path(), "checkpoint restored").unwrap();
    assert!(report.checkpoint_version.is_some(), "{report}");
    assert!(!dump(&store.read()).is_empty());
    drop(store);
    // Opening without it (and the log that session started) is the operator's choice: remove the record.
    std::fs::remove_file(&checkpoint).unwrap();
    for segment in files_named(copy.path(), |n| n.starts_with("wal")) {
        std::fs::remove_file(segment).unwrap();
    }
    std::fs::remove_file(copy.path().join(plexus_storage::checkpoint::HEAD_FILE)).unwrap();
    let (store, _) = open(copy.path(), "record removed").unwrap();
    assert!(dump(&store.read()).is_empty());
}

/// Every file of `dir` by name with its bytes.
fn snapshot_files(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn read_only_open_changes_nothing_and_refuses_writes() {
    let b = build(false);
    let segments = files_named(b.dir.path(), |n| n.starts_with("wal-") && n.ends_with(".log"));
    let first = std::fs::read(&segments[0]).unwrap();
    let bounds = record_bounds(&first);
    let index = 1;
    let mut damaged = first.clone();
    damaged[bounds[index] + 8] ^= 0x04;
    let copy = copy_dir(b.dir.path());
    std::fs::write(copy.path().join(segments[0].file_name().unwrap()), &damaged).unwrap();
    let before = snapshot_files(copy.path());

    let (store, report) = Store::open_read_only(copy.path()).unwrap();
    assert!(store.is_read_only() && !store.is_in_memory());
    assert_eq!(store.path(), Some(copy.path()));
    assert_state(&b, &store, &report, index, "read-only open of a damaged log");
    assert!(report.read_only && report.lost_data(), "{report}");
    assert!(report.dropped.iter().all(|d| d.kept_in.is_none()), "{report}");
    let lost = (bounds.len() - 2 - index) + (b.states.len() - bounds.len());
    assert_eq!(report.lost_commits() as usize, lost, "{report}");
    assert!(report.to_string().contains("opened read-only"), "{report}");

    // Several readers may share the directory; a writer is kept out while one is open.
    let (second, _) = Store::open_read_only(copy.path()).unwrap();
    assert!(matches!(Store::open(copy.path()), Err(StorageError::Locked { .. })));
    let mut tx = store.write();
    tx.create_node(&[tx.label("X")], vec![]).unwrap();
    assert!(matches!(tx.commit(), Err(StorageError::ReadOnlyDatabase { .. })));
    assert!(matches!(store.checkpoint(), Err(StorageError::ReadOnlyDatabase { .. })));
    assert!(matches!(store.refusing_writes(), Some(StorageError::ReadOnlyDatabase { .. })));
    assert_eq!(store.read().version(), b.states[index].0, "the refused commit left nothing behind");
    drop((store, second));
    assert_eq!(snapshot_files(copy.path()), before, "a read-only open changed the directory");

    // Opening for writing then repairs as it always did, to the same state.
    let (store, report) = open_dropping(copy.path(), "open after read-only");
    assert_state(&b, &store, &report, index, "open for writing after read-only");
    assert!(!report.read_only && report.dropped.iter().any(|d| d.kept_in.is_some()), "{report}");
    // And a reader waits for the writer to go.
    assert!(matches!(Store::open_read_only(copy.path()), Err(StorageError::Locked { .. })));
    drop(store);

    // A directory without a database is not created into.
    let empty = tempfile::tempdir().unwrap();
    assert!(Store::open_read_only(empty.path()).is_err());
    assert!(Store::open_read_only(empty.path().join("missing")).is_err());
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
}

#[test]
fn damage_to_the_last_record_before_a_later_segment_is_lost_data() {
    let b = build(false);
    let (store, _) = open(b.dir.path(), "a session without commits").unwrap();
    store.start_log_segment().unwrap();
    drop(store);
    let segments = files_named(b.dir.path(), |n| n.starts_with("wal-") && n.ends_with(".log"));
    assert_eq!(segments.len(), 3, "the last session's segment is empty");
    let with_commits = &segments[1];
    let mut bytes = std::fs::read(with_commits).unwrap();
    let bounds = record_bounds(&bytes);
    bytes[bounds[bounds.len() - 2] + 8] ^= 0x10;
    std::fs::write(with_commits, &bytes).unwrap();
    let what = "last record of a segment followed by an empty one";
    let (store, report) = Store::open_read_only(b.dir.path()).unwrap();
    assert!(report.lost_data(), "{what}: a whole commit was damaged, not torn: {report}");
    drop(store);
    // Nothing intact follows the damage, so there is nothing more to lose: the open goes on, and says so.
    let (store, report) = open(b.dir.path(), what).unwrap();
    assert!(report.lost_data(), "{what}: {report}");
    assert_state(&b, &store, &report, b.states.len() - 2, what);
    drop(store);
    // What recovery set aside still says so afterwards.
    let aside = plexus_storage::recovery::set_aside_files(b.dir.path()).unwrap();
    assert!(aside.iter().any(|(_, intact)| intact.is_none()), "{what}: {aside:?}");
}

/// A flipped byte in the last record of the newest segment, written to its end, was a whole commit: reported as
/// lost data, and an open for writing keeps its bytes aside instead of cutting them away. The same record with its
/// last sector zero is what a write cut short by a crash leaves in the zeroed space ahead of the records: dropped
/// without a file of its own.
#[test]
fn damage_to_the_newest_record_is_lost_data_and_kept() {
    let b = build(false);
    // One more commit, large enough to span sectors, at the end of the newest segment.
    let (store, _) = open(b.dir.path(), "a large commit").unwrap();
    let mut tx = store.write();
    tx.create_node(&[tx.label("Large")], vec![(tx.prop_key("text"), "x".repeat(3000).as_str().into())]).unwrap();
    tx.commit().unwrap();
    drop(store);
    let segment = last_segment(b.dir.path());
    let bytes = std::fs::read(&segment).unwrap();
    let bounds = record_bounds(&bytes);
    let last = bounds[bounds.len() - 2];
    assert!(bytes.len() - last > 1024, "the last record spans sectors");
    let before_it = b.states.len() - 1;

    let what = "last record of the newest segment flipped";
    let copy = copy_dir(b.dir.path());
    let mut flipped = bytes.clone();
    flipped[last + 9] ^= 0x10;
    std::fs::write(copy.path().join(segment.file_name().unwrap()), &flipped).unwrap();
    let (store, report) = Store::open_read_only(copy.path()).unwrap();
    assert!(report.lost_data(), "{what}: {report}");
    drop(store);
    let (store, report) = open(copy.path(), what).unwrap();
    assert!(report.lost_data(), "{what}: {report}");
    assert_state(&b, &store, &report, before_it, what);
    let kept = report.dropped[0].kept_in.clone().unwrap_or_else(|| panic!("{what}: nothing kept: {report}"));
    assert_eq!(std::fs::read(kept).unwrap(), &flipped[last..], "{what}: the dropped bytes are kept as they were");
    drop(store);

    let what = "last record of the newest segment cut short in zeroed space";
    let copy = copy_dir(b.dir.path());
    let mut torn = bytes.clone();
    let end = torn.len();
    torn[(end - 1) / 512 * 512..end].fill(0);
    std::fs::write(copy.path().join(segment.file_name().unwrap()), &torn).unwrap();
    let (store, report) = open(copy.path(), what).unwrap();
    assert!(!report.lost_data(), "{what}: a torn write is not lost data: {report}");
    assert!(report.dropped[0].kept_in.is_none(), "{what}: {report}");
    assert_state(&b, &store, &report, before_it, what);
}

/// A database opened for a few commits at a time (each `plexus query`, a short script) goes on writing its last
/// segment instead of leaving a file per session; a torn write at the end of such a session loses only itself,
/// and the next session appends after what survived.
#[test]
fn short_sessions_share_one_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected = Vec::new();
    for session in 0..6 {
        let (store, report) = open(dir.path(), "short session").unwrap();
        assert!(report.is_clean(), "session {session}: {report}");
        assert_eq!(dump(&store.read()), expected, "session {session}: the earlier sessions' commits");
        for i in 0..3 {
            let mut tx = store.write();
            tx.create_node(&[tx.label("S")], vec![(tx.prop_key("at"), Value::Int(session * 10 + i))]).unwrap();
            tx.commit().unwrap();
        }
        expected = dump(&store.read());
    }
    let segments = files_named(dir.path(), |n| n.starts_with("wal-") && n.ends_with(".log"));
    assert_eq!(segments.len(), 1, "{segments:?}");

    // Tear the last commit: it alone is lost, and the next session's commit lands after the survivors.
    let bytes = std::fs::read(&segments[0]).unwrap();
    let bounds = record_bounds(&bytes);
    let last_start = bounds[bounds.len() - 2];
    std::fs::OpenOptions::new().write(true).open(&segments[0]).unwrap().set_len(last_start as u64 + 5).unwrap();
    let (store, report) = open(dir.path(), "after a torn write").unwrap();
    assert_eq!(report.version, 17, "{report}");
    assert_eq!(store.read().node_count(), 17, "{report}");
    commit_and_reopen(dir.path(), store, "after a torn write");
}

/// A resumed segment is recorded as the newest one when the record says otherwise (a crash between a segment's
/// creation and its record, or the record removed by hand): losing it afterwards is refused, not silent.
#[test]
fn a_resumed_segment_is_recorded_as_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let head = dir.path().join(plexus_storage::wal::HEAD_FILE);
    {
        let (store, _) = open(dir.path(), "first").unwrap();
        let mut tx = store.write();
        tx.create_node(&[tx.label("A")], vec![]).unwrap();
        tx.commit().unwrap();
    }
    std::fs::remove_file(&head).unwrap();
    {
        let (store, _) = open(dir.path(), "without the record").unwrap();
        let mut tx = store.write();
        tx.create_node(&[tx.label("A")], vec![]).unwrap();
        tx.commit().unwrap();
    }
    assert!(head.exists(), "resuming did not record the segment");
    let segment = last_segment(dir.path());
    std::fs::remove_file(&segment).unwrap();
    match open(dir.path(), "segment lost") {
        Err(StorageError::Corrupt { message, .. }) => assert!(message.contains("missing"), "{message}"),
        Ok((_, report)) => panic!("opened without its newest segment: {report}"),
        Err(e) => panic!("unexpected error {e:?}"),
    }
}
