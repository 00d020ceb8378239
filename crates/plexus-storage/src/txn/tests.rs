use super::IdRanges;
use crate::adjacency::TypeFilter;
use crate::error::StorageError;
use crate::ids::{Direction, NodeId};
use crate::store::Store;
use crate::value::Value;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// Creations wait in the transaction (see the module documentation); every read sees them all the same.
#[test]
fn a_transaction_reads_its_pending_creations() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let ty = tx.rel_type("T");
    let a = tx.create_node(&[], vec![]).unwrap();
    let b = tx.create_node(&[], vec![]).unwrap();
    let r = tx.create_rel(a, ty, b, vec![]).unwrap();
    assert!(tx.settled < tx.ops.len(), "the creations are pending");
    assert!(tx.node_exists(a) && tx.node_exists(b));
    assert_eq!(tx.rel(r).map(|rec| (rec.src, rec.dst)), Some((a, b)));
    assert_eq!(tx.degree(a, Direction::Out, TypeFilter::All), 1);
    // A write after a read continues from what the read built, and from then on writes are applied at once
    // (a read between every two writes would otherwise copy the touched leaves each time); reads see all.
    let c = tx.create_node(&[], vec![]).unwrap();
    let r2 = tx.create_rel(b, ty, c, vec![]).unwrap();
    assert!(tx.eager && tx.settled == tx.ops.len());
    assert_eq!(tx.rels_of(b, Direction::Both, TypeFilter::All).len(), 2);
    tx.delete_rel(r).unwrap();
    assert_eq!(tx.rels_of(b, Direction::Both, TypeFilter::All).len(), 1);
    tx.commit().unwrap();
    let snap = store.read();
    assert_eq!((snap.node_count(), snap.rel_count()), (3, 1));
    assert!(snap.rel(r).is_none() && snap.rel(r2).is_some());
}

#[test]
fn a_pending_relationship_is_checked_when_it_is_created() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let ty = tx.rel_type("T");
    let a = tx.create_node(&[], vec![]).unwrap();
    let missing = NodeId(1_000_000);
    assert!(matches!(tx.create_rel(a, ty, missing, vec![]), Err(StorageError::NodeNotFound(n)) if n == missing));
    assert!(matches!(tx.create_rel(missing, ty, a, vec![]), Err(StorageError::NodeNotFound(n)) if n == missing));
    let bad = vec![(tx.prop_key("w"), Value::Float(f64::NAN))];
    let eager = {
        let mut other = store.write();
        let x = other.create_node(&[], vec![]).unwrap();
        other.settle();
        other.create_rel(x, ty, x, bad).is_ok()
    };
    // Whatever the eager path decides about a value, the pending path decides the same.
    assert_eq!(tx.create_rel(a, ty, a, vec![(tx.prop_key("w"), Value::Float(f64::NAN))]).is_ok(), eager);
    let b = tx.create_node(&[], vec![]).unwrap();
    tx.create_rel(a, ty, b, vec![]).unwrap();
    tx.commit().unwrap();
    assert_eq!(store.read().degree(a, Direction::Out, TypeFilter::All), 1 + u64::from(eager));
}

#[test]
fn rolling_back_to_a_savepoint_drops_pending_creations() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let ty = tx.rel_type("T");
    let a = tx.create_node(&[], vec![]).unwrap();
    let mark = tx.savepoint();
    let b = tx.create_node(&[], vec![]).unwrap();
    tx.create_rel(a, ty, b, vec![]).unwrap();
    tx.rollback_to(mark);
    assert!(tx.node_exists(a) && !tx.node_exists(b));
    assert_eq!(tx.degree(a, Direction::Both, TypeFilter::All), 0);
    let c = tx.create_node(&[], vec![]).unwrap();
    tx.create_rel(c, ty, a, vec![]).unwrap();
    tx.commit().unwrap();
    let snap = store.read();
    assert_eq!((snap.node_count(), snap.rel_count()), (2, 1));
    assert!(!snap.node_exists(b) && snap.node_exists(c));
}

/// Durable commits adopt a transaction's own state when nothing committed since it began (its pending
/// creations applied first) and replay its operations otherwise; both survive a reopen.
#[test]
fn pending_creations_commit_durably_alone_and_in_groups() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(dir.path()).unwrap();
    let ty = store.write().rel_type("T");
    let hub = {
        let mut tx = store.write();
        let hub = tx.create_node(&[], vec![]).unwrap();
        tx.commit().unwrap();
        hub
    };
    let mut tx = store.write();
    let n = tx.create_node(&[], vec![]).unwrap();
    tx.create_rel(n, ty, hub, vec![]).unwrap();
    tx.commit().unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..50 {
                    let mut tx = store.write();
                    let n = tx.create_node(&[], vec![]).unwrap();
                    tx.create_rel(n, ty, hub, vec![]).unwrap();
                    tx.commit().unwrap();
                }
            });
        }
    });
    assert_eq!(store.read().degree(hub, Direction::In, TypeFilter::All), 401);
    drop(store);
    let (store, _) = Store::open(dir.path()).unwrap();
    let snap = store.read();
    assert_eq!((snap.node_count(), snap.rel_count()), (402, 401));
    assert_eq!(snap.degree(hub, Direction::In, TypeFilter::All), 401);
}

proptest! {
    #[test]
    fn id_ranges_behave_like_a_set(ids in proptest::collection::vec(0u64..200, 0..100), probes in proptest::collection::vec(0u64..210, 20)) {
        let mut ranges = IdRanges::default();
        let mut model = BTreeSet::new();
        for id in ids {
            ranges.insert(id);
            model.insert(id);
        }
        for p in probes.into_iter().chain(model.iter().copied()) {
            prop_assert_eq!(ranges.contains(p), model.contains(&p), "probe {}", p);
        }
        prop_assert!(ranges.ranges.windows(2).all(|w| w[0].1 < w[1].0), "{:?}", ranges.ranges);
    }
}
