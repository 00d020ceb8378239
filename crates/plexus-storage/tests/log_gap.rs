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
