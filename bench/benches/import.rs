//! `cargo bench -p plexus-bench --bench import`: runs the import workloads, prints the tables and writes the
//! markdown report to `bench/results/` (`import.md` for a full run, a scale-named file otherwise).
//!
//! Environment: `PLEXUS_BENCH_SCALE` (data sizes, default 1).

fn main() {
    plexus_bench::bench_main(plexus_bench::Suite::Import);
}
