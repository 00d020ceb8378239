//! Plexus storage benchmarks: the workloads, their targets, and the report.
//!
//! Modules:
//! - [`gen`]: deterministic generators (random numbers, the R-MAT patent-shaped edge list).
//! - [`txns`]: transaction throughput on small data: empty nodes (W1), GuancialeDB creation (W2), small durable
//!   transactions with group commit (W6).
//! - [`likes`]: the GuancialeDB recommendation traversal on its eight parameter rows (W3).
//! - [`patent`]: the patent-shaped graph: bulk load and resident memory (W7), random reads (W4).
//! - [`writes`]: random edge upserts and removals with durability off (W5).
//! - [`import`]: bulk import of an edge list against parsing the same file (I1, its own report).
//! - [`report`]: tables, targets, the machine description and the markdown file.
//!
//! `benches/storage.rs` is the entry point (`cargo bench -p plexus-bench`); `tests/smoke.rs` runs everything at
//! a tiny scale so the harness keeps working.

pub mod cypher;
pub mod gen;
pub mod import;
pub mod likes;
pub mod patent;
pub mod report;
pub mod txns;
pub mod writes;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use report::{Report, Table};

/// What to run and how big.
#[derive(Clone, Debug)]
pub struct Config {
    /// Multiplies every data size (1.0: the sizes the targets are defined for).
    pub scale: f64,
    /// Time spent measuring each case that is run for a duration.
    pub budget: Duration,
    /// Time spent at each committer count of the durable workload.
    pub durable: Duration,
    /// Where the durable workload puts its database (must be a real disk, not tmpfs).
    pub durable_dir: PathBuf,
    /// Workload ids to run (`w1`..`w7`); empty runs all.
    pub only: Vec<String>,
    /// The command line to record in the report.
    pub command: String,
    pub seed: u64,
}

impl Config {
    /// Reads the `PLEXUS_BENCH_*` environment variables; defaults are the full sizes.
    pub fn from_env(target_dir: PathBuf) -> Config {
        let num = |name: &str, default: f64| {
            std::env::var(name).ok().and_then(|v| v.parse::<f64>().ok()).filter(|v| *v > 0.0).unwrap_or(default)
        };
        let only: Vec<String> = std::env::var("PLEXUS_BENCH_ONLY")
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty())
            .collect();
        let mut command = String::new();
        for var in ["PLEXUS_BENCH_SCALE", "PLEXUS_BENCH_SECS", "PLEXUS_BENCH_DURABLE_SECS", "PLEXUS_BENCH_ONLY"] {
            if let Ok(v) = std::env::var(var) {
                command.push_str(&format!("{var}={v} "));
            }
        }
        command.push_str("cargo bench -p plexus-bench");
        Config {
            scale: num("PLEXUS_BENCH_SCALE", 1.0),
            budget: Duration::from_secs_f64(num("PLEXUS_BENCH_SECS", 1.0)),
            durable: Duration::from_secs_f64(num("PLEXUS_BENCH_DURABLE_SECS", 3.0)),
            durable_dir: target_dir.join("plexus-bench-durable"),
            only,
            command,
            seed: 0x5EED,
        }
    }

    /// A seconds-long run of every workload at a tiny scale, to keep the harness from rotting.
    pub fn smoke(durable_dir: PathBuf) -> Config {
        Config {
            scale: 0.001,
            budget: Duration::from_millis(20),
            durable: Duration::from_millis(50),
            durable_dir,
            only: Vec::new(),
            command: "cargo test -p plexus-bench".into(),
            seed: 1,
        }
    }

    pub fn wants(&self, id: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o == id)
    }

    /// `n` scaled, at least `min`.
    pub fn scaled(&self, n: u64, min: u64) -> u64 {
        ((n as f64 * self.scale).round() as u64).max(min)
    }

    /// The file name the report goes to in `bench/results/`: only a full, complete run writes `storage.md`.
    pub fn report_name(&self, suite: Suite) -> String {
        let stem = suite.stem();
        if self.scale == 1.0 && self.only.is_empty() {
            format!("{stem}.md")
        } else if self.only.is_empty() {
            format!("{stem}-scale-{}.md", self.scale)
        } else {
            format!("{stem}-scale-{}-{}.md", self.scale, self.only.join("-"))
        }
    }
}

/// A measured throughput.
#[derive(Clone, Copy, Debug)]
pub struct Rate {
    /// Operations per second of wall-clock time: the result that is checked against targets.
    pub per_sec: f64,
    /// Operations per second of this thread's CPU time. On a shared machine other processes take the CPU away;
    /// this shows what the code achieves when it runs, so a miss caused by the machine can be told apart.
    pub per_cpu_sec: f64,
}

impl Rate {
    pub fn new(ops: u64, wall_secs: f64, cpu_secs: f64) -> Rate {
        Rate { per_sec: ops as f64 / wall_secs, per_cpu_sec: ops as f64 / cpu_secs.max(1e-9) }
    }
}

/// CPU time used by the calling thread, in seconds.
pub fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes only into the timespec it is given.
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// CPU time used by the whole process (user + system), in seconds.
pub fn process_cpu_secs() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes only into the timespec it is given.
    unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Runs `step` (which returns how many operations it did) until at least `budget` has passed and `min_ops`
/// operations were done, or until a step does nothing (its input ran out).
pub fn rate(budget: Duration, min_ops: u64, mut step: impl FnMut() -> u64) -> Rate {
    let (start, cpu_start) = (Instant::now(), thread_cpu_secs());
    let mut ops = 0;
    loop {
        let done = step();
        ops += done;
        let elapsed = start.elapsed();
        if done == 0 || (elapsed >= budget && ops >= min_ops) {
            return Rate::new(ops, elapsed.as_secs_f64(), thread_cpu_secs() - cpu_start);
        }
    }
}

/// Which report a run produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// W1–W7, `storage.md`.
    Storage,
    /// I1, `import.md`.
    Import,
    /// C1–C3, `cypher.md`.
    Cypher,
}

impl Suite {
    pub fn title(self) -> &'static str {
        match self {
            Suite::Storage => "Plexus storage benchmarks",
            Suite::Import => "Plexus import benchmarks",
            Suite::Cypher => "Plexus Cypher benchmarks",
        }
    }

    pub fn stem(self) -> &'static str {
        match self {
            Suite::Storage => "storage",
            Suite::Import => "import",
            Suite::Cypher => "cypher",
        }
    }
}

/// The entry point of a `cargo bench` target: runs `suite` with the configuration from the environment and
/// writes its markdown report to `bench/results/`.
pub fn bench_main(suite: Suite) {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.parent().expect("bench/ sits in the repository").join("target"));
    let cfg = Config::from_env(target_dir);
    let report = run_suite(&cfg, suite);
    let results = manifest.join("results");
    let markdown = report.render(Some(&results.join("notes")));
    let name = cfg.report_name(suite);
    std::fs::create_dir_all(&results).expect("create bench/results");
    std::fs::write(results.join(&name), markdown).expect("write the report");
    println!("report written to bench/results/{name} ({:.0} s)", report.elapsed.as_secs_f64());
}

/// Runs the selected storage workloads, printing each table as it completes.
pub fn run_all(cfg: &Config) -> Report {
    run_suite(cfg, Suite::Storage)
}

/// Runs the selected workloads of `suite`.
pub fn run_suite(cfg: &Config, suite: Suite) -> Report {
    let start = Instant::now();
    let (cpu_start, own_start) = (report::cpu_times(), process_cpu_secs());
    let machine = report::machine();
    for (k, v) in &machine {
        println!("{k}: {v}");
    }
    println!("scale {}, {:.2} s per case\n", cfg.scale, cfg.budget.as_secs_f64());
    let mut tables: Vec<Table> = Vec::new();
    let emit = |t: Table, tables: &mut Vec<Table>| {
        let mut s = String::new();
        t.render(&mut s);
        println!("{s}");
        tables.push(t);
    };
    if suite == Suite::Cypher {
        if cfg.wants("c1") {
            emit(cypher::point_query(cfg), &mut tables);
        }
        if cfg.wants("c2") {
            emit(cypher::recommendation(cfg), &mut tables);
        }
        if cfg.wants("c3") {
            emit(cypher::bulk_create(cfg), &mut tables);
        }
    }
    if suite == Suite::Import {
        if cfg.wants("i1") {
            emit(import::patents(cfg), &mut tables);
        }
        if cfg.wants("i2") {
            emit(import::human_brain(cfg), &mut tables);
        }
    } else if suite == Suite::Storage && cfg.wants("w1") {
        emit(txns::create_empty_nodes(cfg), &mut tables);
    }
    if suite == Suite::Storage {
        if cfg.wants("w2") {
            emit(txns::guanciale_create(cfg), &mut tables);
        }
        if cfg.wants("w3") {
            emit(likes::recommendation(cfg), &mut tables);
        }
        if cfg.wants("w4") || cfg.wants("w5") || cfg.wants("w7") {
            for t in patent::run(cfg) {
                emit(t, &mut tables);
            }
        }
        if cfg.wants("w6") {
            emit(txns::durable_small(cfg), &mut tables);
        }
    }
    tables.sort_by_key(|t| t.id);
    let mut machine = machine;
    // Other work on a shared machine skews results: the load at both ends shows whether it was quiet.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    machine.push(("load average at end (1, 5, 15 min)".into(), load.join(", ")));
    let (cpu_end, own) = (report::cpu_times(), process_cpu_secs() - own_start);
    let wall = start.elapsed().as_secs_f64();
    machine.push((
        "CPU used by other processes during the run".into(),
        format!("{:.2} cores on average", ((cpu_end.busy - cpu_start.busy) - own).max(0.0) / wall),
    ));
    machine.push((
        "CPU stolen by the hypervisor during the run".into(),
        format!("{:.2} cores on average", (cpu_end.steal - cpu_start.steal) / wall),
    ));
    Report {
        title: suite.title(),
        command: cfg.command.replace("plexus-bench", &format!("plexus-bench --bench {}", suite.stem())),
        scale: cfg.scale,
        revision: revision(),
        machine,
        tables,
        elapsed: start.elapsed(),
    }
}

/// The checked-out commit, marked when the tree has changes.
fn revision() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(rev) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{rev} (with uncommitted changes)")
            } else {
                rev
            }
        }
        None => "unknown".into(),
    }
}
