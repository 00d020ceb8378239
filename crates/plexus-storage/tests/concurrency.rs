//! Concurrency: snapshot isolation, first-committer-wins conflicts, readers that see a conserved total and
//! symmetric adjacency while writers run, and group commit sharing fsyncs among concurrent committers.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use plexus_storage::*;

fn setup_accounts(store: &Store, n: usize, each: i64) -> (Vec<NodeId>, PropKeyId) {
    let mut tx = store.write();
    let account = tx.label("Account");
    let balance = tx.prop_key("balance");
    let ids = (0..n).map(|_| tx.create_node(&[account], vec![(balance, Value::Int(each))]).unwrap()).collect();
    tx.commit().unwrap();
    (ids, balance)
}

fn total(g: &GraphState, ids: &[NodeId], balance: PropKeyId) -> i64 {
    ids.iter().map(|&n| g.node_prop(n, balance).and_then(Value::as_int).unwrap()).sum()
}

#[test]
fn readers_see_a_conserved_total_and_symmetric_adjacency_while_writers_run() {
    let store = Store::in_memory();
    let (ids, balance) = setup_accounts(&store, 16, 100);
    let expected = 16 * 100;
    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let conflicts = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for w in 0..3u64 {
        let (store, ids, stop, commits, conflicts) =
            (store.clone(), ids.clone(), stop.clone(), commits.clone(), conflicts.clone());
        writers.push(thread::spawn(move || {
            let mut seed = w + 1;
            let mut next = || {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (seed >> 33) as usize
            };
            let transfers = store.write().rel_type("TRANSFER");
            while !stop.load(Ordering::Relaxed) {
                let (a, b) = (ids[next() % ids.len()], ids[next() % ids.len()]);
                if a == b {
                    continue;
                }
                let amount = (next() % 10) as i64;
                let mut tx = store.write();
                let ba = tx.node_prop(a, balance).and_then(Value::as_int).unwrap();
                let bb = tx.node_prop(b, balance).and_then(Value::as_int).unwrap();
                tx.set_node_prop(a, balance, Value::Int(ba - amount)).unwrap();
                tx.set_node_prop(b, balance, Value::Int(bb + amount)).unwrap();
                tx.create_rel(a, transfers, b, vec![]).unwrap();
                match tx.commit() {
                    Ok(_) => commits.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        assert!(e.is_retryable(), "unexpected error {e}");
                        conflicts.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_millis(1500);
    let mut snapshots = 0;
    while Instant::now() < deadline {
        let snapshot = store.read();
        assert_eq!(total(&snapshot, &ids, balance), expected, "a reader saw a partial transfer");
        if snapshots % 50 == 0 {
            let problems = snapshot.check();
            assert!(problems.is_empty(), "{problems:?}");
        }
        // The same snapshot must not change under the reader while writers commit.
        let rels = snapshot.rel_count();
        thread::yield_now();
        assert_eq!(snapshot.rel_count(), rels);
        snapshots += 1;
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let end = store.read();
    assert_eq!(total(&end, &ids, balance), expected);
    assert_eq!(end.rel_count(), commits.load(Ordering::Relaxed));
    assert!(end.check().is_empty());
    assert!(commits.load(Ordering::Relaxed) > 100, "writers made too little progress");
}

#[test]
fn disjoint_writers_both_commit() {
    let store = Store::in_memory();
    let (ids, balance) = setup_accounts(&store, 2, 0);
    let mut t1 = store.write();
    let mut t2 = store.write();
    t1.set_node_prop(ids[0], balance, Value::Int(1)).unwrap();
    t2.set_node_prop(ids[1], balance, Value::Int(2)).unwrap();
    let knows = t2.rel_type("KNOWS");
    // Linking to a node another transaction updates is not a conflict: adjacency changes commute.
    t2.create_rel(ids[1], knows, ids[0], vec![]).unwrap();
    t1.commit().unwrap();
    t2.commit().unwrap();
    let r = store.read();
    assert_eq!(r.node_prop(ids[0], balance), Some(&Value::Int(1)));
    assert_eq!(r.node_prop(ids[1], balance), Some(&Value::Int(2)));
    assert_eq!(r.degree(ids[0], Direction::In, TypeFilter::All), 1);
    assert!(r.check().is_empty());
}

#[test]
fn write_write_conflict_is_retryable_and_first_committer_wins() {
    let store = Store::in_memory();
    let (ids, balance) = setup_accounts(&store, 1, 0);
    let mut t1 = store.write();
    let mut t2 = store.write();
    t1.set_node_prop(ids[0], balance, Value::Int(1)).unwrap();
    t2.set_node_prop(ids[0], balance, Value::Int(2)).unwrap();
    t1.commit().unwrap();
    let err = t2.commit().unwrap_err();
    assert!(err.is_retryable(), "{err}");
    assert!(err.to_string().contains("retry"), "{err}");
    assert_eq!(store.read().node_prop(ids[0], balance), Some(&Value::Int(1)));
}

#[test]
fn deleting_a_node_conflicts_with_linking_to_it() {
    let store = Store::in_memory();
    let (ids, _) = setup_accounts(&store, 2, 0);
    let mut deleter = store.write();
    let mut linker = store.write();
    deleter.delete_node(ids[0]).unwrap();
    let t = linker.rel_type("T");
    linker.create_rel(ids[1], t, ids[0], vec![]).unwrap();
    linker.commit().unwrap();
    assert!(deleter.commit().unwrap_err().is_retryable());
    let r = store.read();
    assert!(r.node_exists(ids[0]));
    assert!(r.check().is_empty());

    // And the other order: the delete commits first, the link must not leave a dangling relationship.
    let mut deleter = store.write();
    let mut linker = store.write();
    let rels = deleter.rels_of(ids[1], Direction::Both, TypeFilter::All);
    deleter.detach_delete_node(ids[1]).unwrap();
    linker.create_rel(ids[0], t, ids[1], vec![]).unwrap();
    deleter.commit().unwrap();
    assert!(linker.commit().unwrap_err().is_retryable());
    let r = store.read();
    assert!(!r.node_exists(ids[1]));
    assert_eq!(rels.len(), 1);
    assert!(r.check().is_empty());
}

#[test]
fn concurrent_inserts_of_the_same_unique_key_conflict() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (person, id) = (tx.label("Person"), tx.prop_key("id"));
    tx.declare_unique_key(person, id).unwrap();
    tx.commit().unwrap();
    let mut t1 = store.write();
    let mut t2 = store.write();
    t1.create_node(&[person], vec![(id, Value::Int(7))]).unwrap();
    t2.create_node(&[person], vec![(id, Value::Int(7))]).unwrap();
    t1.commit().unwrap();
    assert!(t2.commit().unwrap_err().is_retryable());
    assert_eq!(store.read().label_count(person), 1);
}

#[test]
fn concurrent_upserts_of_the_same_edge_do_not_duplicate_it() {
    let store = Store::in_memory();
    let (ids, _) = setup_accounts(&store, 2, 0);
    let mut t1 = store.write();
    let mut t2 = store.write();
    let ty = t1.rel_type("E");
    t1.upsert_edges(&[(ids[0], ty, ids[1], vec![])]).unwrap();
    t2.upsert_edges(&[(ids[0], ty, ids[1], vec![])]).unwrap();
    t1.commit().unwrap();
    assert!(t2.commit().unwrap_err().is_retryable());
    assert_eq!(store.read().rels_between(ids[0], ids[1], Direction::Out, TypeFilter::All).len(), 1);
}

#[test]
fn group_commit_shares_fsyncs_among_concurrent_committers() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(dir.path()).unwrap();
    let label = store.write().label("N");
    let before = store.wal_fsyncs();
    let threads = 8;
    let per_thread = 40;
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let store = store.clone();
            thread::spawn(move || {
                for _ in 0..per_thread {
                    let mut tx = store.write();
                    tx.create_node(&[label], vec![]).unwrap();
                    tx.commit().unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let fsyncs = store.wal_fsyncs() - before;
    let commits = (threads * per_thread) as u64;
    assert_eq!(store.read().label_count(label), commits);
    assert!(fsyncs <= commits, "{fsyncs} fsyncs for {commits} commits");
    drop(store);
    let (store, report) = Store::open(dir.path()).unwrap();
    assert_eq!(report.replayed, commits, "{report}");
    assert_eq!(store.read().label_count(label), commits);
}

/// Durable commits from many threads go through a combiner that applies whole groups (see `store::group`):
/// each acknowledged commit is visible to its committer's next read, read-modify-writes of one counter lose
/// no update (the losers of a conflict retry), versions are distinct, checkpoints run alongside, and a reopen
/// recovers exactly what was acknowledged.
#[test]
fn grouped_durable_commits_keep_every_acknowledged_write_and_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(dir.path()).unwrap();
    let (item, counter_label, n, who) = {
        let tx = store.write();
        (tx.label("Item"), tx.label("Counter"), tx.prop_key("n"), tx.prop_key("who"))
    };
    let counter = {
        let mut tx = store.write();
        let c = tx.create_node(&[counter_label], vec![(n, Value::Int(0))]).unwrap();
        tx.commit().unwrap();
        c
    };
    let threads = 24;
    let per_thread = 60;
    let stop = Arc::new(AtomicBool::new(false));
    let checkpointer = {
        let (store, stop) = (store.clone(), stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                store.checkpoint().unwrap();
                thread::sleep(Duration::from_millis(3));
            }
        })
    };
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let store = store.clone();
            thread::spawn(move || {
                let mut versions = Vec::new();
                let mut retries = 0u64;
                for i in 0..per_thread {
                    // Every third commit also increments the shared counter: conflicts on purpose.
                    let bump = i % 3 == 0;
                    let (node, version) = loop {
                        let mut tx = store.write();
                        let node = tx.create_node(&[item], vec![(who, Value::Int(t * 1000 + i))]).unwrap();
                        if bump {
                            let old = tx.node_prop(counter, n).and_then(Value::as_int).unwrap();
                            tx.set_node_prop(counter, n, Value::Int(old + 1)).unwrap();
                        }
                        match tx.commit() {
                            Ok(v) => break (node, v),
                            Err(e) => {
                                assert!(e.is_retryable(), "unexpected error {e}");
                                retries += 1;
                            }
                        }
                    };
                    let r = store.read();
                    assert!(r.version() >= version, "an acknowledged commit is not yet visible");
                    assert_eq!(r.node_prop(node, who), Some(&Value::Int(t * 1000 + i)));
                    versions.push(version);
                }
                (versions, retries)
            })
        })
        .collect();
    let mut versions = Vec::new();
    for h in handles {
        versions.extend(h.join().unwrap().0);
    }
    stop.store(true, Ordering::Relaxed);
    checkpointer.join().unwrap();
    let commits = (threads * per_thread) as u64;
    versions.sort_unstable();
    versions.dedup();
    assert_eq!(versions.len() as u64, commits, "every commit has a version of its own");
    let bumps = threads * (0..per_thread).filter(|i| i % 3 == 0).count() as i64;
    let check = |store: &Store, what: &str| {
        let r = store.read();
        assert_eq!(r.label_count(item), commits, "{what}");
        assert_eq!(r.node_prop(counter, n), Some(&Value::Int(bumps)), "{what}: a lost update");
        assert!(r.check().is_empty(), "{what}: {:?}", r.check());
    };
    check(&store, "before reopening");
    drop(store);
    let (store, _) = Store::open(dir.path()).unwrap();
    check(&store, "after reopening");
}
