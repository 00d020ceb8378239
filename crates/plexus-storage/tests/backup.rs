//! Online backups (`Store::backup`): the backup opens as the database it copied (nodes, labels, properties,
//! relationships, unique keys, indexes), holds one consistent snapshot while writers commit, appears complete or
//! not at all, and refuses a target that holds anything.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use plexus_storage::*;

/// Every node and relationship with its labels, type and properties by name, in id order.
fn dump(store: &Store) -> Vec<String> {
    let g = store.read();
    let c = store.catalog();
    let name = |kind, id: u32| c.name(kind, id).map(|n| n.to_string()).unwrap_or_default();
    let props = |m: Option<&PropMap>| {
        let mut v: Vec<String> = m.map_or(Vec::new(), |m| {
            m.iter().map(|(k, v)| format!("{}={v:?}", name(TokenKind::PropKey, k.0))).collect()
        });
        v.sort();
        v.join(",")
    };
    let mut out = Vec::new();
    let _ = g.visit_nodes::<()>(|n| {
        let mut labels: Vec<String> = g.node_labels(n).unwrap().iter().map(|l| name(TokenKind::Label, l.0)).collect();
        labels.sort();
        out.push(format!("node {} :{} {{{}}}", n.0, labels.join(":"), props(g.node_props(n).unwrap())));
        ControlFlow::Continue(())
    });
    let _ = g.visit_all_rels::<()>(|r| {
        let p = g.rel_props(r.id).unwrap();
        out.push(format!(
            "rel {} ({})-[:{}]->({}) {{{}}}",
            r.id.0,
            r.src.0,
            name(TokenKind::Type, r.ty.0),
            r.dst.0,
            props(p.as_deref())
        ));
        ControlFlow::Continue(())
    });
    out
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("plexus-backup-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A graph with every kind of thing a backup must carry: labels, a unique key, an index, typed properties,
/// relationships with and without properties, and deletions (holes in the ids).
fn populate(store: &Store) {
    let mut tx = store.write();
    let (person, city) = (tx.label("Person"), tx.label("City"));
    let (id, name, born, score) = (tx.prop_key("id"), tx.prop_key("name"), tx.prop_key("born"), tx.prop_key("score"));
    let (knows, lives) = (tx.rel_type("KNOWS"), tx.rel_type("LIVES_IN"));
    let weight = tx.prop_key("weight");
    tx.declare_unique_key(person, id).unwrap();
    tx.create_index(person, name).unwrap();
    let berlin = tx.create_node(&[city], vec![(name, Value::String("Berlin".into()))]).unwrap();
    let people: Vec<NodeId> = (0..200)
        .map(|i| {
            let props = vec![
                (id, Value::Int(i)),
                (name, Value::String(format!("p{i}").into())),
                (score, Value::Float(i as f64 / 3.0)),
                (born, Value::List(vec![Value::Int(1990 + i % 20), Value::Int(i % 12 + 1)].into())),
            ];
            tx.create_node(&[person], props).unwrap()
        })
        .collect();
    for (i, &p) in people.iter().enumerate() {
        tx.create_rel(p, lives, berlin, vec![]).unwrap();
        tx.create_rel(p, knows, people[(i * 7 + 3) % people.len()], vec![(weight, Value::Float(i as f64))]).unwrap();
    }
    tx.commit().unwrap();
    let mut tx = store.write();
    for &p in people.iter().step_by(9) {
        tx.detach_delete_node(p).unwrap();
    }
    tx.commit().unwrap();
}

#[test]
fn a_backup_opens_as_the_database_it_copied_and_later_commits_stay_out_of_it() {
    let (dir, dest) = (temp_dir("orig"), temp_dir("copy"));
    let (store, _) = Store::open(&dir).unwrap();
    populate(&store);
    let before = dump(&store);
    let backup = store.backup(&dest).unwrap();
    assert_eq!(backup.version, store.read().version());
    assert_eq!((backup.nodes, backup.relationships), (store.read().node_count(), store.read().rel_count()));
    assert!(backup.bytes > 0);

    // A commit after the backup is not in it.
    let mut tx = store.write();
    let city = tx.label("City");
    tx.create_node(&[city], vec![]).unwrap();
    tx.commit().unwrap();

    let (copy, report) = Store::open(&dest).unwrap();
    assert_eq!(report.replayed, 0, "a backup is one checkpoint, with no log to replay");
    assert_eq!(dump(&copy), before);
    let g = copy.read();
    assert!(g.check().is_empty(), "{:?}", g.check());
    let c = copy.catalog();
    let (person, id, name) = (c.label("Person"), c.prop_key("id"), c.prop_key("name"));
    assert_eq!(g.unique_key(person), Some(id), "the unique key is declared in the backup");
    assert!(g.node_by_key(person, &Value::Int(10)).is_some());
    assert!(g.node_by_key(person, &Value::Int(9)).is_none(), "node 9 was deleted before the backup");
    assert!(g.has_index(person, name), "the index is declared in the backup");
    assert_eq!(g.index_seek(person, name, &Value::String("p11".into())).len(), 1);
    assert_ne!(copy.identity(), store.identity(), "a backup is a database of its own");
    drop(g);

    // The backup takes writes of its own, and enforces the unique key it carried.
    let mut tx = copy.write();
    let taken = tx.create_node(&[person], vec![(id, Value::Int(10))]);
    assert!(taken.is_err(), "the unique key holds in the backup");
    drop(tx);
    let mut tx = copy.write();
    tx.create_node(&[person], vec![(id, Value::Int(1000))]).unwrap();
    tx.commit().unwrap();
    drop(copy);
    let (copy, _) = Store::open(&dest).unwrap();
    assert!(copy.read().node_by_key(person, &Value::Int(1000)).is_some());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dest);
}

#[test]
fn a_backup_inside_the_database_directory_is_refused_and_files_go_along_privately() {
    let dir = temp_dir("inside");
    let (store, _) = Store::open(&dir).unwrap();
    populate(&store);
    let version = store.read().version();
    for inside in [dir.join("inner"), dir.join(format!("checkpoint-{version:020}.plx")), dir.join("a/b/c"), dir.clone()]
    {
        let err = store.backup(&inside).unwrap_err();
        assert!(err.to_string().contains("inside the database's own directory"), "{}: {err}", inside.display());
        assert!(!inside.exists() || inside == dir, "{} was created", inside.display());
    }
    drop(store);
    let (store, _) = Store::open(&dir).unwrap();
    let dest = temp_dir("inside-files");
    store.backup_with_files(&dest, &[("users.json", b"{}")]).unwrap();
    assert_eq!(std::fs::read(dest.join("users.json")).unwrap(), b"{}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dest.join("users.json")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "what goes along is readable by its owner alone");
    }
    assert!(Store::open(&dest).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dest);
}

#[test]
fn an_in_memory_database_and_an_empty_one_back_up_to_disk() {
    let dest = temp_dir("mem");
    let store = Store::in_memory();
    populate(&store);
    store.backup(&dest).unwrap();
    let (copy, _) = Store::open(&dest).unwrap();
    assert_eq!(dump(&copy), dump(&store));

    let empty_dest = temp_dir("empty");
    let backup = Store::in_memory().backup(&empty_dest).unwrap();
    assert_eq!((backup.nodes, backup.relationships), (0, 0));
    let (copy, _) = Store::open(&empty_dest).unwrap();
    assert_eq!(copy.read().node_count(), 0);
    let _ = std::fs::remove_dir_all(&dest);
    let _ = std::fs::remove_dir_all(&empty_dest);
}

#[test]
fn a_backup_refuses_a_target_that_holds_anything_and_leaves_it_alone() {
    let dest = temp_dir("occupied");
    std::fs::create_dir_all(&dest).unwrap();
    std::fs::write(dest.join("notes.txt"), "mine").unwrap();
    let store = Store::in_memory();
    populate(&store);
    let err = store.backup(&dest).unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    assert_eq!(std::fs::read_to_string(dest.join("notes.txt")).unwrap(), "mine");
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 1, "nothing was written into the target");
    let siblings: Vec<_> = std::fs::read_dir(dest.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(&format!("plexus-backup-occupied-{}", std::process::id())))
        .collect();
    assert_eq!(siblings.len(), 1, "no temporary directory is left beside the target");

    // An existing empty directory is filled.
    std::fs::remove_file(dest.join("notes.txt")).unwrap();
    store.backup(&dest).unwrap();
    assert!(Store::open(&dest).is_ok());
    let _ = std::fs::remove_dir_all(&dest);
}

/// Transfers between accounts conserve their total: every backup taken while they commit must hold a total of
/// exactly that, and symmetric adjacency.
#[test]
fn backups_taken_while_writers_commit_each_hold_one_consistent_snapshot() {
    let dir = temp_dir("busy");
    let (store, _) = Store::open(&dir).unwrap();
    let mut tx = store.write();
    let (account, balance) = (tx.label("Account"), tx.prop_key("balance"));
    let ids: Vec<NodeId> =
        (0..32).map(|_| tx.create_node(&[account], vec![(balance, Value::Int(100))]).unwrap()).collect();
    tx.commit().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let (store, ids, stop) = (store.clone(), ids.clone(), stop.clone());
            thread::spawn(move || {
                let mut seed = w + 11;
                let mut next = || {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (seed >> 33) as usize
                };
                let pays = store.write().rel_type("PAYS");
                while !stop.load(Ordering::Relaxed) {
                    let (a, b) = (ids[next() % ids.len()], ids[next() % ids.len()]);
                    if a == b {
                        continue;
                    }
                    let mut tx = store.write();
                    let ba = tx.node_prop(a, balance).and_then(Value::as_int).unwrap();
                    let bb = tx.node_prop(b, balance).and_then(Value::as_int).unwrap();
                    tx.set_node_prop(a, balance, Value::Int(ba - 1)).unwrap();
                    tx.set_node_prop(b, balance, Value::Int(bb + 1)).unwrap();
                    tx.create_rel(a, pays, b, vec![]).unwrap();
                    if let Err(e) = tx.commit() {
                        assert!(e.is_retryable(), "{e}");
                    }
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_millis(1200);
    let mut backups = 0;
    while Instant::now() < deadline || backups < 3 {
        let dest = temp_dir(&format!("busy-{backups}"));
        let taken = store.backup(&dest).unwrap();
        let (copy, _) = Store::open(&dest).unwrap();
        let g = copy.read();
        let b = copy.catalog().prop_key("balance");
        let total: i64 = ids.iter().map(|&n| g.node_prop(n, b).and_then(Value::as_int).unwrap()).sum();
        assert_eq!(total, 32 * 100, "backup {backups} holds part of a transfer");
        assert_eq!(g.rel_count(), taken.relationships);
        assert!(g.check().is_empty(), "{:?}", g.check());
        drop(g);
        drop(copy);
        let _ = std::fs::remove_dir_all(&dest);
        backups += 1;
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
