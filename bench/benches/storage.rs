//! `cargo bench -p plexus-bench`: runs every storage workload, prints the tables and writes the markdown report
//! to `bench/results/` (`storage.md` for a full run, a scale-named file otherwise).
//!
//! Environment: `PLEXUS_BENCH_SCALE` (data sizes, default 1), `PLEXUS_BENCH_SECS` (measuring time per case,
//! default 1), `PLEXUS_BENCH_DURABLE_SECS` (per committer count, default 3), `PLEXUS_BENCH_ONLY` (e.g. `w4,w7`).

use std::path::{Path, PathBuf};

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.parent().expect("bench/ sits in the repository").join("target"));
    let cfg = plexus_bench::Config::from_env(target_dir);
    let report = plexus_bench::run_all(&cfg);
    let results = manifest.join("results");
    let markdown = report.render(Some(&results.join("notes")));
    let path = results.join(cfg.report_name(plexus_bench::Suite::Storage));
    std::fs::create_dir_all(&results).expect("create bench/results");
    std::fs::write(&path, markdown).expect("write the report");
    println!(
        "report written to bench/results/{} ({:.0} s)",
        cfg.report_name(plexus_bench::Suite::Storage),
        report.elapsed.as_secs_f64()
    );
}
