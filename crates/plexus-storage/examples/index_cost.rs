//! What a property index costs: builds an index over N nodes with a random integer property and prints the build
//! time, heap bytes per entry, and the rates of equality seeks, range scans and index maintenance.
//!
//! ```sh
//! cargo run --release -p plexus-storage --example index_cost [-- NODES]
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use plexus_storage::bulk::{build_state, NodeInput};
use plexus_storage::ops::Op;
use plexus_storage::records::Labels;
use plexus_storage::{GraphState, LabelId, NodeId, PropKeyId, PropMap, Value};

/// Counts live heap bytes.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn main() {
    let n: u64 = std::env::args().nth(1).map_or(1_000_000, |a| a.parse().expect("a node count"));
    let (label, key) = (LabelId(0), PropKeyId(0));
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let nodes = (0..n)
        .map(|id| NodeInput {
            id: NodeId(id),
            labels: Labels::from_slice(&[label]),
            props: Some(Arc::new(PropMap::from_pairs(vec![(key, Value::Int((rng.next() % n) as i64))]))),
        })
        .collect();
    let mut state: GraphState = build_state(1, nodes, Vec::new(), &[]).expect("a valid graph");

    let before = LIVE.load(Ordering::Relaxed);
    let t = Instant::now();
    state.apply(&Op::CreateIndex { label, key, name: None }).expect("index");
    let build = t.elapsed();
    let bytes = LIVE.load(Ordering::Relaxed) - before;
    let entries = state.index_len(label, key).expect("index") as f64;
    println!(
        "build: {n} entries in {:.0} ms ({:.2} M entries/s), {:.1} bytes per entry",
        build.as_secs_f64() * 1e3,
        entries / build.as_secs_f64() / 1e6,
        bytes as f64 / entries
    );

    let seeks = 1_000_000;
    let mut found = 0usize;
    let index = state.property_index(label, key).expect("index");
    let t = Instant::now();
    for _ in 0..seeks {
        let v = Value::Int((rng.next() % n) as i64);
        let _ = index.visit_eq::<()>(&v, |_| {
            found += 1;
            ControlFlow::Continue(())
        });
    }
    let e = t.elapsed().as_secs_f64();
    println!(
        "seek (visitor): {:.2} M seeks/s, {:.0} ns each ({found} hits)",
        seeks as f64 / e / 1e6,
        e / seeks as f64 * 1e9
    );
    let mut hits = 0;
    let t = Instant::now();
    for _ in 0..seeks {
        hits += state.index_seek(label, key, &Value::Int((rng.next() % n) as i64)).len();
    }
    let e = t.elapsed().as_secs_f64();
    println!(
        "seek (Vec): {:.2} M seeks/s, {:.0} ns each ({hits} hits)",
        seeks as f64 / e / 1e6,
        e / seeks as f64 * 1e9
    );

    let ranges = 100_000;
    let width = 100;
    let mut visited = 0u64;
    let t = Instant::now();
    for _ in 0..ranges {
        let lo = Value::Int((rng.next() % n) as i64);
        let hi = Value::Float(lo.as_int().expect("int") as f64 + width as f64 - 0.5);
        let _ = index.visit_range::<()>(Bound::Included(&lo), Bound::Excluded(&hi), |_| {
            visited += 1;
            ControlFlow::Continue(())
        });
    }
    let e = t.elapsed().as_secs_f64();
    println!(
        "range ({width} values wide): {:.0} k ranges/s, {:.1} M entries/s ({:.0} entries per range)",
        ranges as f64 / e / 1e3,
        visited as f64 / e / 1e6,
        visited as f64 / ranges as f64
    );
    let t = Instant::now();
    let all = state.index_range(label, key, Bound::Included(&Value::Int(i64::MIN)), Bound::Unbounded).len();
    let e = t.elapsed().as_secs_f64();
    println!("full range: {all} entries in {:.0} ms ({:.1} M entries/s)", e * 1e3, all as f64 / e / 1e6);

    // Maintenance on a private copy (the same work a transaction's write does).
    let updates = 200_000;
    let mut with_index = state.clone();
    let mut without = state.clone();
    without.apply(&Op::DropIndex { label, key }).expect("drop");
    for (name, s) in [("without index", &mut without), ("with index", &mut with_index)] {
        let mut r = Rng(7);
        let t = Instant::now();
        for _ in 0..updates {
            let id = NodeId(r.next() % n);
            s.apply(&Op::SetNodeProp { id, key, value: Value::Int((r.next() % n) as i64) }).expect("set");
        }
        let e = t.elapsed().as_secs_f64();
        println!("set property, {name}: {:.0} ns per update", e / updates as f64 * 1e9);
    }
    // A snapshot copy plus one write: what a small commit pays (copy-on-write paths of leaves and the B-tree).
    let rounds = 20_000;
    for (name, mut s) in [("without index", without), ("with index", with_index)] {
        let t = Instant::now();
        for i in 0..rounds {
            let mut next = s.clone();
            let id = NodeId(rng.next() % n);
            next.apply(&Op::SetNodeProp { id, key, value: Value::Int(i) }).expect("set");
            s = next;
        }
        let e = t.elapsed().as_secs_f64();
        println!("snapshot copy + one update, {name}: {:.1} us each", e / rounds as f64 * 1e6);
        assert!(s.check().is_empty());
    }
}
