//! `cargo bench -p plexus-bench --bench import`: runs the import workloads, prints the tables and writes the
//! markdown report to `bench/results/` (`import.md` for a full run, a scale-named file otherwise).
//!
//! Environment: `PLEXUS_BENCH_SCALE` (data sizes, default 1).

use std::path::{Path, PathBuf};

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.parent().expect("bench/ sits in the repository").join("target"));
    let cfg = plexus_bench::Config::from_env(target_dir);
    let report = plexus_bench::run_suite(&cfg, plexus_bench::Suite::Import);
    let results = manifest.join("results");
    let markdown = report.render(Some(&results.join("notes")));
    let path = results.join(cfg.report_name(plexus_bench::Suite::Import));
    std::fs::create_dir_all(&results).expect("create bench/results");
    std::fs::write(&path, markdown).expect("write the report");
    println!(
        "report written to bench/results/{} ({:.0} s)",
        cfg.report_name(plexus_bench::Suite::Import),
        report.elapsed.as_secs_f64()
    );
}
