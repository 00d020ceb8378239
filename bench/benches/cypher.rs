//! `cargo bench -p plexus-bench --bench cypher`: runs the Cypher workloads, prints the tables and writes the
//! markdown report to `bench/results/` (`cypher.md` for a full run, a scale-named file otherwise).
//!
//! Environment: `PLEXUS_BENCH_SCALE` (data sizes, default 1), `PLEXUS_BENCH_SECS` (time per case),
//! `PLEXUS_BENCH_ONLY` (e.g. `c1,c3`).

fn main() {
    plexus_bench::bench_main(plexus_bench::Suite::Cypher);
}
