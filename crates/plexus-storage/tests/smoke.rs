use plexus_storage::*;

#[test]
fn create_read_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b);
    {
        let (store, report) = Store::open(dir.path()).unwrap();
        assert!(report.is_clean());
        let mut tx = store.write();
        let person = tx.label("Person");
        let knows = tx.rel_type("KNOWS");
        let name = tx.prop_key("name");
        tx.declare_unique_key(person, name).unwrap();
        a = tx.create_node(&[person], vec![(name, Value::from("ann"))]).unwrap();
        b = tx.create_node(&[person], vec![(name, Value::from("bob"))]).unwrap();
        tx.create_rel(a, knows, b, vec![]).unwrap();
        assert!(tx.create_node(&[person], vec![(name, Value::from("bob"))]).is_err());
        tx.commit().unwrap();
        let r = store.read();
        assert_eq!(r.degree(a, Direction::Out, TypeFilter::All), 1);
        assert_eq!(r.degree(b, Direction::In, TypeFilter::All), 1);
        assert_eq!(r.node_by_key(person, &Value::from("bob")), Some(b));
    }
    let (store, report) = Store::open(dir.path()).unwrap();
    assert_eq!(report.replayed, 1, "{report}");
    let r = store.read();
    let person = r.label_id("Person").unwrap();
    assert_eq!(r.node_count(), 2);
    assert_eq!(r.node_by_key(person, &Value::from("bob")), Some(b));
    assert!(r.has_edge(a, b, Direction::Out, TypeFilter::All));
    assert!(r.has_edge(b, a, Direction::In, TypeFilter::All));
    store.checkpoint().unwrap();
    drop(r);
    drop(store);
    let (store, report) = Store::open(dir.path()).unwrap();
    assert_eq!(report.replayed, 0, "{report}");
    assert!(report.checkpoint_version.is_some());
    let r = store.read();
    assert_eq!(r.node_by_key(person, &Value::from("ann")), Some(a));
    assert!(r.has_edge(a, b, Direction::Out, TypeFilter::All));
    assert!(r.check().is_empty(), "{:?}", r.check());
    assert!(Store::open(dir.path()).is_err());
}

/// A label may declare several unique keys: each is enforced and looked up on its own, the first stays the
/// label's key, and all of them (with their names) come back from the log and from a checkpoint.
#[test]
fn a_label_declares_several_unique_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (person, id, email, ann);
    {
        let (store, _) = Store::open(dir.path()).unwrap();
        let mut tx = store.write();
        (person, id, email) = (tx.label("Person"), tx.prop_key("id"), tx.prop_key("email"));
        tx.declare_unique_key(person, id).unwrap();
        tx.declare_named_unique_key(person, email, Some("person_email")).unwrap();
        ann = tx.create_node(&[person], vec![(id, Value::Int(1)), (email, Value::from("ann@x"))]).unwrap();
        tx.create_node(&[person], vec![(id, Value::Int(2)), (email, Value::from("bob@x"))]).unwrap();
        let same_email = tx.create_node(&[person], vec![(id, Value::Int(3)), (email, Value::from("ann@x"))]);
        assert!(same_email.unwrap_err().to_string().contains("email = 'ann@x'"));
        let same_id = tx.create_node(&[person], vec![(id, Value::Int(1)), (email, Value::from("cy@x"))]);
        assert!(same_id.unwrap_err().to_string().contains("id = 1"));
        tx.commit().unwrap();
    }
    let check = |store: &Store| {
        let r = store.read();
        assert_eq!(r.unique_keys(), vec![(person, id), (person, email)]);
        assert_eq!(r.unique_key(person), Some(id), "the first declared stays the label's key");
        assert_eq!(r.node_by_key(person, &Value::Int(1)), Some(ann));
        assert_eq!(r.node_by_unique(person, email, &Value::from("ann@x")), Some(ann));
        assert_eq!(r.node_by_unique(person, id, &Value::from("ann@x")), None);
        assert_eq!(r.unique_key_name(person, email).as_deref(), Some("person_email"));
        assert_eq!(r.unique_key_name(person, id), None);
        assert!(r.check().is_empty(), "{:?}", r.check());
    };
    let (store, report) = Store::open(dir.path()).unwrap();
    assert_eq!(report.replayed, 1, "{report}");
    check(&store);
    // Dropping one leaves the other enforced.
    let mut tx = store.write();
    tx.drop_unique_key(person, id).unwrap();
    tx.create_node(&[person], vec![(id, Value::Int(1)), (email, Value::from("dee@x"))]).unwrap();
    assert!(tx.create_node(&[person], vec![(email, Value::from("bob@x"))]).is_err());
    tx.rollback();
    store.checkpoint().unwrap();
    drop(store);
    let (store, report) = Store::open(dir.path()).unwrap();
    assert_eq!(report.replayed, 0, "{report}");
    check(&store);
}

#[test]
fn every_durability_mode_survives_a_clean_close() {
    for durability in [Durability::Sync, Durability::Batch, Durability::Off] {
        let dir = tempfile::tempdir().unwrap();
        let options = Options { durability, ..Options::default() };
        {
            let (store, _) = Store::open_with(dir.path(), options.clone()).unwrap();
            for i in 0..50 {
                let mut tx = store.write();
                let l = tx.label("N");
                let k = tx.prop_key("i");
                tx.create_node(&[l], vec![(k, Value::Int(i))]).unwrap();
                tx.commit().unwrap();
            }
            // Batch mode acknowledges before fsync; its flusher must still cover everything within 10 ms.
            if durability == Durability::Batch {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        let (store, report) = Store::open_with(dir.path(), options).unwrap();
        assert!(report.is_clean(), "{durability:?}: {report}");
        let r = store.read();
        assert_eq!(r.label_count(r.label_id("N").unwrap()), 50, "{durability:?}");
    }
}

#[test]
fn errors_leave_the_transaction_usable_and_unchanged() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let l = tx.label("N");
    let t = tx.rel_type("T");
    let a = tx.create_node(&[l], vec![]).unwrap();
    let b = tx.create_node(&[l], vec![]).unwrap();
    tx.create_rel(a, t, b, vec![]).unwrap();
    assert!(matches!(tx.delete_node(a), Err(StorageError::NodeHasRelationships(_, 1))));
    assert!(matches!(tx.create_rel(a, t, NodeId(999_999), vec![]), Err(StorageError::NodeNotFound(_))));
    let bad_list = Value::List(std::sync::Arc::from(vec![Value::Int(1), Value::from("x")]));
    let k = tx.prop_key("k");
    assert!(matches!(tx.set_node_prop(a, k, bad_list), Err(StorageError::InvalidValue(_))));
    // A failed batch leaves nothing behind.
    let before = tx.rel_count();
    let batch = vec![(a, t, b, vec![]), (a, t, NodeId(123_456), vec![])];
    assert!(tx.upsert_edges(&batch).is_err());
    assert_eq!(tx.rel_count(), before);
    assert_eq!(tx.detach_delete_node(a).unwrap(), 1);
    tx.commit().unwrap();
    let r = store.read();
    assert_eq!((r.node_count(), r.rel_count()), (1, 0));
    assert!(r.check().is_empty());
}

#[test]
fn from_state_wraps_a_bulk_built_graph() {
    use plexus_storage::bulk::{build_state, NodeInput, RelInput};
    let catalog = Catalog::new();
    let cites = catalog.rel_type("CITES");
    let nodes: Vec<NodeInput> =
        (0..100).map(|i| NodeInput { id: NodeId(i), labels: Default::default(), props: None }).collect();
    let rels: Vec<RelInput> = (0..99)
        .map(|i| RelInput {
            rec: RelRecord { id: RelId(i), ty: cites, src: NodeId(i), dst: NodeId(i + 1) },
            props: None,
        })
        .collect();
    let state = build_state(0, nodes, rels, &[]).unwrap();
    let store = Store::from_state(state, catalog);
    let r = store.read();
    assert_eq!((r.node_count(), r.rel_count()), (100, 99));
    assert!(r.has_edge(NodeId(3), NodeId(4), Direction::Out, TypeFilter::All));
    let mut tx = store.write();
    let n = tx.create_node(&[], vec![]).unwrap();
    let rel = tx.create_rel(n, cites, NodeId(0), vec![]).unwrap();
    assert!(n.0 >= 100 && rel.0 >= 99, "new ids must not collide with loaded ones");
    tx.commit().unwrap();
    assert_eq!(store.read().degree(NodeId(0), Direction::In, TypeFilter::All), 1);
}

#[test]
fn unknown_tokens_are_refused_not_allocated_for() {
    let store = Store::in_memory();
    let mut tx = store.write();
    assert!(matches!(tx.create_node(&[LabelId(u32::MAX)], vec![]), Err(StorageError::InvalidValue(_))));
    let n = tx.create_node(&[], vec![]).unwrap();
    assert!(tx.add_label(n, LabelId(7)).is_err());
    assert!(tx.set_node_prop(n, PropKeyId(99), Value::Int(1)).is_err());
    assert!(tx.create_rel(n, TypeId(3), n, vec![]).is_err());
    tx.commit().unwrap();
    assert_eq!(store.read().node_count(), 1);
}

#[test]
fn automatic_checkpoints_run_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options { durability: Durability::Off, checkpoint_after_bytes: 2048, ..Options::default() };
    let checkpoints = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("checkpoint-"))
            .count()
    };
    {
        let (store, _) = Store::open_with(dir.path(), options.clone()).unwrap();
        let mut found = false;
        for i in 0..2000 {
            let mut tx = store.write();
            let l = tx.label("N");
            let k = tx.prop_key("payload");
            tx.create_node(&[l], vec![(k, Value::from(format!("node {i} with some text to fill the log")))]).unwrap();
            tx.commit().unwrap();
            if i % 100 == 99 && checkpoints() > 0 {
                found = true;
                break;
            }
        }
        // The checkpointer may still be writing: give it a moment before concluding.
        for _ in 0..100 {
            if found || checkpoints() > 0 {
                found = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(found, "no automatic checkpoint was written");
        // Counted where it is written, so metrics see the automatic ones too (the file appears just before).
        for _ in 0..100 {
            if store.checkpoints() > 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(store.checkpoints() > 0, "the automatic checkpoint was not counted");
    }
    let (store, report) = Store::open_with(dir.path(), options).unwrap();
    assert!(report.checkpoint_version.is_some(), "{report}");
    let r = store.read();
    assert!(r.node_count() >= 100);
    assert!(r.check().is_empty());
}

/// Bare nodes are logged as runs of ids: a savepoint must shorten a run that grew after it, a commit that follows
/// another must replay runs onto the newer state, and recovery must replay them from the log.
#[test]
fn runs_of_bare_nodes_roll_back_replay_and_recover() {
    let dir = tempfile::tempdir().unwrap();
    let (kept, dropped, other);
    {
        let (store, _) = Store::open(dir.path()).unwrap();
        let mut tx = store.write();
        let mut ids: Vec<NodeId> = (0..10).map(|_| tx.create_node(&[], vec![]).unwrap()).collect();
        assert_eq!(tx.op_count(), 10);
        let mark = tx.savepoint();
        let label = tx.label("Tagged");
        dropped = (0..5).map(|_| tx.create_node(&[], vec![]).unwrap()).collect::<Vec<_>>();
        tx.create_node(&[label], vec![]).unwrap();
        tx.rollback_to(mark);
        assert_eq!(tx.op_count(), 10);
        ids.extend((0..3).map(|_| tx.create_node(&[], vec![]).unwrap()));
        for &d in &dropped {
            assert!(!tx.node_exists(d), "{d} was rolled back");
        }
        // A second writer from the same snapshot commits first: this one's runs are replayed onto its state.
        let concurrent = std::thread::scope(|s| {
            s.spawn(|| {
                let mut tx = store.write();
                let ids: Vec<NodeId> = (0..150).map(|_| tx.create_node(&[], vec![]).unwrap()).collect();
                tx.commit().unwrap();
                ids
            })
            .join()
            .unwrap()
        });
        tx.commit().unwrap();
        kept = ids;
        other = concurrent;
        assert_eq!(store.read().node_count(), 163);
    }
    let (store, report) = Store::open(dir.path()).unwrap();
    assert_eq!(report.replayed, 2, "{report}");
    let r = store.read();
    assert_eq!(r.node_count(), 163);
    for id in kept.iter().chain(&other) {
        assert!(r.node_exists(*id), "{id} survives recovery");
        assert!(r.node_labels(*id).unwrap().is_empty());
    }
    for &d in &dropped {
        assert!(!r.node_exists(d), "{d} stays rolled back");
    }
    assert!(r.check().is_empty(), "{:?}", r.check());
    // Ids handed out after recovery lie past every recovered run.
    let mut tx = store.write();
    let fresh = tx.create_node(&[], vec![]).unwrap();
    assert!(kept.iter().chain(&other).all(|id| id.0 < fresh.0), "{fresh} reuses a recovered id");
    tx.commit().unwrap();
    assert_eq!(store.read().node_count(), 164);
}
