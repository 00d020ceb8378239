//! Uniqueness constraints on several node properties (a unique composite index) and on a relationship property
//! (a unique relationship property index): declaring them over data that breaks them, every write that would
//! break them refused with nothing changed, numbers equal under `=` counted as one value, concurrent writers,
//! and the constraint kept through the log and checkpoints.

use std::sync::Arc;

use plexus_storage::*;

fn refused(e: StorageError, says: &[&str]) {
    let message = e.to_string();
    assert!(matches!(e, StorageError::ConstraintViolation(_)), "{message}");
    for part in says {
        assert!(message.contains(part), "{message:?} does not say {part:?}");
    }
}

#[test]
fn a_composite_constraint_refuses_every_write_that_would_share_its_values() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (person, first, last, other) = (tx.label("Person"), tx.prop_key("first"), tx.prop_key("last"), tx.label("X"));
    let ada = tx.create_node(&[person], vec![(first, Value::from("Ada")), (last, Value::from("Lovelace"))]).unwrap();
    let twin = tx.create_node(&[person], vec![(first, Value::from("Ada")), (last, Value::from("Lovelace"))]).unwrap();
    tx.commit().unwrap();

    // Refused while two nodes share both values; nothing is declared.
    let mut tx = store.write();
    refused(tx.create_composite_unique(person, &[first, last], Some("full_name")).unwrap_err(), &["share"]);
    assert!(tx.create_composite_unique(person, &[first], None).is_err(), "one key is not composite");
    tx.set_node_prop(twin, last, Value::from("Byron")).unwrap();
    tx.create_composite_unique(person, &[first, last], Some("full_name")).unwrap();
    tx.commit().unwrap();
    let s = store.read();
    assert!(s.composite_index_is_unique(person, &[first, last]));
    assert_eq!(s.composite_index_name(person, &[first, last]).as_deref(), Some("full_name"));

    let mut tx = store.write();
    // Creating, setting a property and adding a label each refuse a second holder of both values.
    let err = tx.create_node(&[person], vec![(first, Value::from("Ada")), (last, Value::from("Lovelace"))]);
    refused(err.unwrap_err(), &["Person", "first = 'Ada'", "last = 'Lovelace'", "unique"]);
    refused(tx.set_node_prop(twin, last, Value::from("Lovelace")).unwrap_err(), &["Person"]);
    let outsider =
        tx.create_node(&[other], vec![(first, Value::from("Ada")), (last, Value::from("Lovelace"))]).unwrap();
    refused(tx.add_label(outsider, person).unwrap_err(), &["Person"]);
    // The refused writes changed nothing.
    let s = tx.snapshot();
    assert_eq!(s.node_prop(twin, last), Some(&Value::from("Byron")));
    assert!(!s.node_has_label(outsider, person));
    assert_eq!(s.composite_seek(person, &[first, last], &[Value::from("Ada"), Value::from("Lovelace")]), vec![ada]);
    // A node lacking one of the properties is not constrained; a node may keep its own values.
    tx.create_node(&[person], vec![(first, Value::from("Ada"))]).unwrap();
    tx.create_node(&[person], vec![(first, Value::from("Ada"))]).unwrap();
    tx.set_node_prop(ada, last, Value::from("Lovelace")).unwrap();
    // Numbers equal under `=` are one value.
    tx.create_node(&[person], vec![(first, Value::Int(1)), (last, Value::Int(2))]).unwrap();
    refused(tx.create_node(&[person], vec![(first, Value::Float(1.0)), (last, Value::Int(2))]).unwrap_err(), &[]);
    // NaN is one value here, as for a unique key on one property (and as DISTINCT counts it).
    tx.create_node(&[person], vec![(first, Value::Float(f64::NAN)), (last, Value::Int(2))]).unwrap();
    refused(tx.create_node(&[person], vec![(first, Value::Float(f64::NAN)), (last, Value::Int(2))]).unwrap_err(), &[]);
    tx.commit().unwrap();

    // Freed values can be taken again.
    let mut tx = store.write();
    tx.delete_node(ada).unwrap();
    tx.create_node(&[person], vec![(first, Value::from("Ada")), (last, Value::from("Lovelace"))]).unwrap();
    tx.commit().unwrap();
    // Dropped, the constraint refuses nothing.
    let mut tx = store.write();
    tx.drop_composite_index(person, &[first, last]).unwrap();
    tx.create_node(&[person], vec![(first, Value::from("Ada")), (last, Value::from("Lovelace"))]).unwrap();
    tx.commit().unwrap();
    assert!(store.read().check().is_empty(), "{:?}", store.read().check());
}

#[test]
fn a_relationship_constraint_refuses_every_write_that_would_share_its_value() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (knows, likes, since) = (tx.rel_type("KNOWS"), tx.rel_type("LIKES"), tx.prop_key("since"));
    let a = tx.create_node(&[], vec![]).unwrap();
    let b = tx.create_node(&[], vec![]).unwrap();
    let first = tx.create_rel(a, knows, b, vec![(since, Value::Int(2001))]).unwrap();
    let second = tx.create_rel(b, knows, a, vec![(since, Value::Int(2001))]).unwrap();
    tx.commit().unwrap();

    let mut tx = store.write();
    refused(tx.create_rel_unique(knows, since, None).unwrap_err(), &["share"]);
    tx.set_rel_prop(second, since, Value::Int(2002)).unwrap();
    tx.create_rel_unique(knows, since, Some("knows_since")).unwrap();
    tx.commit().unwrap();
    assert!(store.read().rel_index_is_unique(knows, since));

    let mut tx = store.write();
    refused(
        tx.create_rel(a, knows, a, vec![(since, Value::Float(2001.0))]).unwrap_err(),
        &["KNOWS", "since = 2001", "unique"],
    );
    refused(tx.set_rel_prop(second, since, Value::Int(2001)).unwrap_err(), &["KNOWS"]);
    tx.create_rel(b, knows, b, vec![(since, Value::Float(f64::NAN))]).unwrap();
    refused(tx.create_rel(a, knows, a, vec![(since, Value::Float(f64::NAN))]).unwrap_err(), &["KNOWS"]);
    assert_eq!(tx.snapshot().rel_prop(second, since), Some(Value::Int(2002)));
    // Other types, other keys and a relationship's own value are free.
    tx.create_rel(a, likes, b, vec![(since, Value::Int(2001))]).unwrap();
    tx.create_rel(a, knows, b, vec![]).unwrap();
    tx.set_rel_prop(first, since, Value::Int(2001)).unwrap();
    tx.commit().unwrap();

    // A batch upsert refused half-way leaves nothing of the batch behind.
    let mut tx = store.write();
    let c = tx.create_node(&[], vec![]).unwrap();
    let before = (tx.rel_count(), tx.degree(c, Direction::Both, TypeFilter::All));
    let batch = vec![(c, knows, a, vec![(since, Value::Int(3000))]), (c, knows, b, vec![(since, Value::Int(2002))])];
    refused(tx.upsert_edges(&batch).unwrap_err(), &["KNOWS"]);
    assert_eq!((tx.rel_count(), tx.degree(c, Direction::Both, TypeFilter::All)), before);
    assert!(tx.rel_index_seek(knows, since, &Value::Int(3000)).is_empty());
    tx.commit().unwrap();

    let mut tx = store.write();
    tx.delete_rel(first).unwrap();
    tx.create_rel(a, knows, b, vec![(since, Value::Int(2001))]).unwrap();
    tx.commit().unwrap();
    assert!(store.read().check().is_empty(), "{:?}", store.read().check());
}

#[test]
fn constraints_survive_the_log_and_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options { checkpoint_after_bytes: 0, ..Options::default() };
    let (person, keys, knows, since) = {
        let (store, _) = Store::open_with(dir.path(), options.clone()).unwrap();
        let mut tx = store.write();
        let (person, first, last) = (tx.label("Person"), tx.prop_key("first"), tx.prop_key("last"));
        let (knows, since) = (tx.rel_type("KNOWS"), tx.prop_key("since"));
        let a = tx.create_node(&[person], vec![(first, Value::from("Ada")), (last, Value::from("Lovelace"))]).unwrap();
        tx.create_rel(a, knows, a, vec![(since, Value::Int(1))]).unwrap();
        tx.create_composite_unique(person, &[first, last], None).unwrap();
        tx.create_rel_unique(knows, since, Some("knows_since")).unwrap();
        // A plain index beside them stays plain.
        tx.create_composite_index(person, &[last, first], None).unwrap();
        tx.commit().unwrap();
        (person, vec![first, last], knows, since)
    };
    let expect = |store: &Store| {
        let s = store.read();
        assert!(s.composite_index_is_unique(person, &keys));
        assert!(!s.composite_index_is_unique(person, &[keys[1], keys[0]]));
        assert!(s.rel_index_is_unique(knows, since));
        assert_eq!(s.rel_index_name(knows, since).as_deref(), Some("knows_since"));
        let mut tx = store.write();
        let duplicate = vec![(keys[0], Value::from("Ada")), (keys[1], Value::from("Lovelace"))];
        refused(tx.create_node(&[person], duplicate).unwrap_err(), &["Person"]);
        refused(tx.create_rel(NodeId(0), knows, NodeId(0), vec![(since, Value::Int(1))]).unwrap_err(), &["KNOWS"]);
        assert!(s.check().is_empty(), "{:?}", s.check());
    };
    {
        let (store, report) = Store::open_with(dir.path(), options.clone()).unwrap();
        assert_eq!(report.checkpoint_version, None);
        expect(&store);
        store.checkpoint().unwrap();
    }
    let (store, report) = Store::open_with(dir.path(), options).unwrap();
    assert!(report.checkpoint_version.is_some());
    expect(&store);
}

#[test]
fn concurrent_writers_of_one_value_do_not_both_commit() {
    let store = Arc::new(Store::in_memory());
    let mut tx = store.write();
    let (person, first, last) = (tx.label("Person"), tx.prop_key("first"), tx.prop_key("last"));
    tx.create_composite_unique(person, &[first, last], None).unwrap();
    tx.commit().unwrap();
    let props = || vec![(first, Value::from("Ada")), (last, Value::from("Lovelace"))];
    let mut one = store.write();
    let mut two = store.write();
    one.create_node(&[person], props()).unwrap();
    two.create_node(&[person], props()).unwrap();
    one.commit().unwrap();
    let e = two.commit().unwrap_err();
    assert!(e.is_retryable(), "{e}");
    // Retried, the transaction meets the constraint.
    let mut retry = store.write();
    refused(retry.create_node(&[person], props()).unwrap_err(), &["Person"]);
    assert_eq!(
        store.read().composite_seek(person, &[first, last], &[Value::from("Ada"), Value::from("Lovelace")]).len(),
        1
    );
}
