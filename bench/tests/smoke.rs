//! Runs every workload at a tiny scale in a few seconds, so the benchmark harness cannot rot unnoticed.

#[test]
fn every_workload_runs_and_reports() {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    std::fs::create_dir_all(&target).unwrap();
    // The durable workload needs a real disk: a directory in the target dir, never /tmp (often tmpfs).
    let dir = tempfile_in(&target);
    let cfg = plexus_bench::Config::smoke(dir.clone());
    let report = plexus_bench::run_all(&cfg);
    let ids: Vec<&str> = report.tables.iter().map(|t| t.id).collect();
    assert_eq!(ids, ["w1", "w2", "w3", "w4", "w5", "w6", "w7"]);
    for t in &report.tables {
        assert!(!t.rows.is_empty(), "{} has no rows", t.id);
        for r in &t.rows {
            assert!(r.value.is_finite() && r.value > 0.0, "{} / {}: {}", t.id, r.name, r.value);
        }
    }
    let md = report.render(None);
    assert!(md.contains("## W7: resident memory") && md.contains("| pass/miss |"));
    assert!(!dir.exists(), "the durable workload cleans up after itself");
    let import = plexus_bench::run_suite(&cfg, plexus_bench::Suite::Import);
    assert_eq!(import.tables.iter().map(|t| t.id).collect::<Vec<_>>(), ["i1", "i2"]);
    for t in &import.tables {
        for r in &t.rows {
            assert!(r.value.is_finite() && r.value >= 0.0, "{} / {}: {}", t.id, r.name, r.value);
        }
    }
    assert!(import.render(None).starts_with("# Plexus import benchmarks"));
    for work in ["import", "import-brain"] {
        assert!(!dir.with_extension(work).exists(), "the {work} workload cleans up after itself");
    }
    let cypher = plexus_bench::run_suite(&cfg, plexus_bench::Suite::Cypher);
    assert_eq!(cypher.tables.iter().map(|t| t.id).collect::<Vec<_>>(), ["c1", "c2", "c3"]);
    for t in &cypher.tables {
        for r in &t.rows {
            assert!(r.value.is_finite() && r.value > 0.0, "{} / {}: {}", t.id, r.name, r.value);
        }
    }
}

fn tempfile_in(parent: &std::path::Path) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    parent.join(format!("plexus-bench-smoke-{}-{nanos}", std::process::id()))
}
