//! `cargo bench -p plexus-bench`: runs every storage workload, prints the tables and writes the markdown report
//! to `bench/results/` (`storage.md` for a full run, a scale-named file otherwise).
//!
//! Environment: `PLEXUS_BENCH_SCALE` (data sizes, default 1), `PLEXUS_BENCH_SECS` (measuring time per case,
//! default 1), `PLEXUS_BENCH_DURABLE_SECS` (per committer count, default 3), `PLEXUS_BENCH_ONLY` (e.g. `w4,w7`).

fn main() {
    plexus_bench::bench_main(plexus_bench::Suite::Storage);
}
