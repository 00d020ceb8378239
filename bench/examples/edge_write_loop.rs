//! Runs W5's random edge writes (`bench/results/storage.md`) in a loop on the patent-shaped graph, for profiling:
//!
//! ```sh
//! cargo build --release -p plexus-bench --example edge_write_loop
//! perf record target/release/examples/edge_write_loop 0.2 upsert 1 10
//! ```
//!
//! Arguments: scale of the graph, `upsert` or `remove`, edges per transaction, seconds. `PLEXUS_COUNT=N` runs
//! exactly N transactions instead (for instruction counts per transaction under callgrind).

use plexus_bench::gen::{rmat_edges, SplitMix, PATENT_EDGES, PATENT_NODES};
use plexus_bench::patent::load;
use plexus_bench::writes::random_upsert;
use plexus_storage::{EdgeUpsert, NodeId};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scale: f64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(0.2);
    let remove = args.get(1).is_some_and(|a| a == "remove");
    let per_tx: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let secs: f64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(5.0);
    let count: Option<u64> = std::env::var("PLEXUS_COUNT").ok().and_then(|c| c.parse().ok());
    let nodes = ((PATENT_NODES as f64 * scale) as u64).max(1_000);
    let edge_count = ((PATENT_EDGES as f64 * scale) as u64).max(4_000);
    let edges = rmat_edges(nodes, edge_count, 42);
    let g = load(&edges, nodes, true, 42);
    let mut rng = SplitMix(7);
    let started = std::time::Instant::now();
    let mut done = 0u64;
    let mut next = 0usize;
    let mut transactions = 0u64;
    while count.map_or(started.elapsed().as_secs_f64() < secs, |n| transactions < n) {
        transactions += 1;
        let mut tx = g.store.write();
        if remove {
            let batch: Vec<_> = (0..per_tx)
                .map(|_| {
                    let (u, v) = edges[next % edges.len()];
                    next += 1;
                    (NodeId(u64::from(u)), g.cites, NodeId(u64::from(v)))
                })
                .collect();
            done += tx.remove_edges(&batch).expect("remove");
        } else {
            let batch: Vec<EdgeUpsert> = (0..per_tx).map(|_| random_upsert(&mut rng, &g, &edges)).collect();
            tx.upsert_edges(&batch).expect("upsert");
            done += per_tx as u64;
        }
        tx.commit().expect("commit");
    }
    println!(
        "{} {per_tx} per transaction at scale {scale}: {:.0} edges/s",
        if remove { "remove" } else { "upsert" },
        done as f64 / started.elapsed().as_secs_f64()
    );
}
