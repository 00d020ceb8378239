//! Memory is returned for a bulk-loaded graph too, whose leaves share the flat adjacency's arrays
//! ([`plexus_storage::flat`]): after most of it is deleted and a checkpoint runs, resident memory falls.
//! A test file of its own, so no other test shares the process whose memory it measures.

use plexus_storage::bulk::{build_edge_list, EdgeListGraph};
use plexus_storage::*;

mod support;

/// Resident memory once the allocator has returned what it holds free: the builder's threads leave freed memory
/// in their own arenas, and this test is about what the engine frees, not about when the allocator returns it.
use support::trimmed_resident_bytes as resident_bytes;

#[test]
#[cfg(target_os = "linux")]
fn deleting_most_of_a_bulk_loaded_graph_and_checkpointing_returns_memory() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options { durability: Durability::Off, checkpoint_after_bytes: 0, ..Options::default() };
    let (store, _) = Store::open_with(dir.path(), options).unwrap();
    let baseline = resident_bytes();
    let nodes = 400_000u32;
    let (label, key, ty) = {
        let tx = store.write();
        (tx.label("N"), tx.prop_key("id"), tx.rel_type("E"))
    };
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for i in 0..nodes {
        for k in 1..=8u32 {
            src.push(i);
            dst.push(i.wrapping_mul(7).wrapping_add(k * 13) % nodes);
        }
    }
    let graph =
        EdgeListGraph { label, key, keys: (0..nodes as i64).map(Value::Int).collect(), ty, src, dst, weight: None };
    store.load_bulk(build_edge_list(0, &graph).unwrap()).unwrap();
    assert!(store.read().flat().is_some(), "the bulk-loaded graph reads through flat arrays");
    let full = resident_bytes();
    for chunk in (0..nodes as u64 * 9 / 10).collect::<Vec<_>>().chunks(40_000) {
        let mut tx = store.write();
        for &id in chunk {
            tx.detach_delete_node(NodeId(id)).unwrap();
        }
        tx.commit().unwrap();
    }
    store.checkpoint().unwrap();
    let after = resident_bytes();
    let r = store.read();
    assert!(r.flat().is_none(), "most leaves changed: the flat arrays are dropped");
    assert_eq!(r.node_count(), nodes as u64 / 10);
    assert!(r.check().is_empty());
    let grown = full.saturating_sub(baseline);
    let kept = after.saturating_sub(baseline);
    println!("baseline {baseline}, full {full}, after delete+checkpoint {after}");
    assert!(grown > 25 << 20, "the graph should take real memory, grew only {grown} bytes");
    // Resident memory also counts what the allocator keeps in pages it cannot return (free blocks beside live
    // ones), which varies from run to run; what the engine still holds is measured apart, where glibc says.
    assert!(kept < grown * 3 / 4, "resident memory did not fall enough: grew {grown}, kept {kept}");
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 only reads the allocator's statistics.
        let in_use = unsafe { libc::mallinfo2() }.uordblks as u64;
        assert!(in_use < grown / 4, "the engine still holds {in_use} bytes of the {grown} the graph took");
    }
}
