//! A segment missing from the middle of the log: the open names the missing file (not the intact one after it)
//! and refuses, and a repair sets the segments after the gap aside and opens at the last commit before it.

use plexus_storage::*;

fn commit_nodes(store: &Store, n: usize) {
    for _ in 0..n {
        let mut tx = store.write();
        let label = tx.label("N");
        tx.create_node(&[label], Vec::new()).unwrap();
        tx.commit().unwrap();
    }
}

#[test]
fn a_missing_middle_segment_is_named_and_repair_opens_before_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (store, _) = Store::open(dir.path()).unwrap();
        commit_nodes(&store, 3);
        store.start_log_segment().unwrap();
        commit_nodes(&store, 3);
        store.start_log_segment().unwrap();
        commit_nodes(&store, 3);
    }
    let middle = dir.path().join(wal::segment_name(1));
    std::fs::remove_file(&middle).unwrap();
    let refused = Store::open(dir.path()).err().expect("refused").to_string();
    assert!(refused.contains(&format!("{} before it is missing", middle.display())), "{refused}");
    assert!(refused.contains("3 intact commits from here on"), "{refused}");

    let options = Options { drop_damaged_log: true, ..Options::default() };
    let (store, report) = Store::open_with(dir.path(), options).unwrap();
    assert_eq!(store.read().node_count(), 3);
    assert_eq!(report.dropped.iter().map(|d| d.intact_commits).sum::<u64>(), 3, "{report}");
    assert!(report.dropped.iter().all(|d| d.kept_in.is_some()), "{report}");
    commit_nodes(&store, 1);
    drop(store);
    let (store, _) = Store::open(dir.path()).unwrap();
    assert_eq!(store.read().node_count(), 4);
}

#[test]
fn a_segment_with_a_damaged_header_is_refused_and_repair_sets_it_aside() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (store, _) = Store::open(dir.path()).unwrap();
        commit_nodes(&store, 2);
        store.start_log_segment().unwrap();
        commit_nodes(&store, 2);
    }
    let last = dir.path().join(wal::segment_name(1));
    let mut bytes = std::fs::read(&last).unwrap();
    bytes[10] ^= 0x40;
    std::fs::write(&last, bytes).unwrap();
    let refused = Store::open(dir.path()).err().expect("refused").to_string();
    assert!(refused.contains("2 intact commits from here on"), "{refused}");
    let options = Options { drop_damaged_log: true, ..Options::default() };
    let (store, report) = Store::open_with(dir.path(), options).unwrap();
    assert_eq!(store.read().node_count(), 2, "{report}");
    drop(store);
    let (store, _) = Store::open(dir.path()).unwrap();
    assert_eq!(store.read().node_count(), 2);
}

/// The records of the only segment, as (start offset, frame) pairs.
fn frames(bytes: &[u8]) -> Vec<(usize, Vec<u8>)> {
    let (records, _, _) = wal::read_segment(bytes);
    records
        .iter()
        .map(|r| {
            let start = wal::record_offset(bytes, r) as usize;
            let end = r.as_ptr() as usize - bytes.as_ptr() as usize + r.len();
            (start, bytes[start..end].to_vec())
        })
        .collect()
}

/// Records whose checksums hold but which cannot be replayed in order, two commits swapped or a payload that
/// is no commit, are damage at their start: a plain open refuses while intact commits follow, naming the
/// way on, and a repair opens at the commit before them, keeping the rest aside. Both used to refuse every
/// open, the repair's included.
#[test]
fn records_with_valid_checksums_that_cannot_be_replayed_are_damage_a_repair_drops() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (store, _) = Store::open(dir.path()).unwrap();
        commit_nodes(&store, 5);
    }
    let segment = dir.path().join(wal::segment_name(0));
    let clean = std::fs::read(&segment).unwrap();
    let records = frames(&clean);
    assert_eq!(records.len(), 5, "one record a commit");

    // The last two commits swapped: version 5 comes right after version 3.
    let (a, b) = (&records[3], &records[4]);
    let mut swapped = clean[..a.0].to_vec();
    swapped.extend_from_slice(&b.1);
    swapped.extend_from_slice(&a.1);
    // A payload of garbage under a valid checksum, appended after the last commit.
    let mut garbage = clean.clone();
    wal::frame(&mut garbage, &[0xFF; 40]);

    for (what, bytes, nodes, refused) in [("swapped", swapped, 3, true), ("garbage", garbage, 5, false)] {
        let copy = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), copy.path().join(entry.file_name())).unwrap();
        }
        std::fs::write(copy.path().join(wal::segment_name(0)), &bytes).unwrap();
        if refused {
            let e = Store::open(copy.path()).err().unwrap_or_else(|| panic!("{what}: opened")).to_string();
            assert!(e.contains("1 intact commits follow it") && e.contains("plexus repair"), "{what}: {e}");
        }
        let options = Options { drop_damaged_log: true, ..Options::default() };
        let (store, report) = Store::open_with(copy.path(), options).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(store.read().node_count(), nodes, "{what}: {report}");
        assert_eq!(report.dropped.len(), 1, "{what}: {report}");
        commit_nodes(&store, 1);
        drop(store);
        let (store, report) = Store::open(copy.path()).unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
        assert!(report.is_clean(), "{what}: {report}");
        assert_eq!(store.read().node_count(), nodes + 1, "{what}");
    }
}
