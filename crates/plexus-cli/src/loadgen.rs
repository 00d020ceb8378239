//! `plexus loadgen`: constant-rate (open-loop) load against a running `plexus serve`, with latency percentiles
//! per second and overall, and a step mode that finds the highest rate meeting a p99 bound.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use plexus_server::loadgen::{self, LoadConfig, PhaseReport, Scenario, StepConfig, Target};

use crate::{usage, Failure};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ScenarioArg {
    /// 10 nodes with 2 properties per request, parameterised, returning a count.
    Insert,
    /// LDBC SNB IS1 point read on an imported or generated SNB graph.
    Is1,
    /// The recommendation traversal on the likes graph (`plexus demo`).
    Recommend,
}

#[derive(Args, Debug)]
pub struct LoadgenArgs {
    /// Bolt address HOST:PORT (default when neither is given: 127.0.0.1:7687).
    #[arg(long, conflicts_with = "http")]
    bolt: Option<String>,
    /// HTTP address HOST:PORT (Query API).
    #[arg(long)]
    http: Option<String>,
    #[arg(long, value_enum, default_value = "insert")]
    scenario: ScenarioArg,
    /// Requests per second (the starting rate in step mode).
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// Seconds per phase.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seconds of load before each phase's measurement starts (not counted).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Concurrent connections.
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// Threads sending requests and reading answers, each with its share of the connections. One keeps up with
    /// tens of thousands of requests a second and leaves the other cores to the server on a shared machine.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    #[arg(long, default_value = "neo4j")]
    user: String,
    #[arg(long, env = "PLEXUS_PASSWORD", hide_env_values = true, default_value = "")]
    password: String,
    /// Step mode: after each phase multiply the rate by this while p99 stays under --p99-bound-ms.
    #[arg(long)]
    step_factor: Option<f64>,
    /// The p99 bound for step mode, in milliseconds.
    #[arg(long, default_value_t = 10.0)]
    p99_bound_ms: f64,
    /// Step mode: run a phase that misses the bound once more at the same rate before stopping.
    #[arg(long)]
    step_retry: bool,
    /// Highest rate step mode tries.
    #[arg(long, default_value_t = 1e7)]
    max_rate: f64,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Write the full report (every phase and second) as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Print every second's numbers, not only each phase's summary.
    #[arg(long)]
    per_second: bool,
}

/// The largest rate, phase length and requests per phase `loadgen` takes.
const MAX_RATE: f64 = 1e7;
const MAX_SECONDS: f64 = 86_400.0;
const MAX_REQUESTS: f64 = 1e8;

pub fn run(args: LoadgenArgs) -> Result<(), Failure> {
    let target = match (&args.bolt, &args.http) {
        (_, Some(h)) => Target::Http(h.trim_start_matches("http://").to_string()),
        (Some(b), None) => Target::Bolt(b.trim_start_matches("bolt://").to_string()),
        (None, None) => Target::Bolt("127.0.0.1:7687".into()),
    };
    if !(args.rate.is_finite() && args.rate > 0.0 && args.duration.is_finite() && args.duration > 0.0) {
        return Err(usage("--rate and --duration must be positive"));
    }
    // Latencies are kept for every request of a phase (16 bytes each), so a phase is bounded.
    if args.rate > MAX_RATE || args.duration > MAX_SECONDS || args.rate * args.duration > MAX_REQUESTS {
        return Err(usage(format!(
            "--rate is at most {MAX_RATE:.0} a second, --duration at most {MAX_SECONDS:.0} s, and a phase at most \
             {MAX_REQUESTS:.0} requests"
        )));
    }
    if !(args.warmup.is_finite() && (0.0..=MAX_SECONDS).contains(&args.warmup)) {
        return Err(usage(format!("--warmup must be between 0 and {MAX_SECONDS:.0} seconds")));
    }
    if !(args.p99_bound_ms.is_finite() && args.p99_bound_ms > 0.0)
        || args.step_factor.is_some_and(|f| !f.is_finite())
        || !(args.max_rate.is_finite() && args.max_rate > 0.0)
    {
        return Err(usage("--p99-bound-ms, --step-factor and --max-rate must be positive numbers"));
    }
    if args.connections == 0 || args.threads == 0 {
        return Err(usage("--connections and --threads must be at least 1"));
    }
    if args.threads > args.connections {
        // A thread drives its share of the connections: one without any would only idle.
        return Err(usage(format!(
            "--threads ({}) must not exceed --connections ({}): each thread drives its share of the connections",
            args.threads, args.connections
        )));
    }
    if args.step_factor.is_some_and(|f| f <= 1.0) {
        return Err(usage("--step-factor must be above 1: each step offers more than the one before"));
    }
    // The report is written at the end: a path that cannot take it is said before the run, not after.
    if let Some(path) = &args.json {
        let existed = path.exists();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        if !existed {
            // Made only to try: a run that fails leaves no empty report behind.
            let _ = std::fs::remove_file(path);
        }
    }
    let config = LoadConfig {
        target: target.clone(),
        user: args.user,
        password: args.password,
        scenario: match args.scenario {
            ScenarioArg::Insert => Scenario::Insert,
            ScenarioArg::Is1 => Scenario::Is1,
            ScenarioArg::Recommend => Scenario::Recommend,
        },
        rate: args.rate,
        duration: Duration::from_secs_f64(args.duration),
        warmup: Duration::from_secs_f64(args.warmup.max(0.0)),
        connections: args.connections.max(1),
        step: args.step_factor.map(|factor| StepConfig {
            factor: factor.max(1.01),
            max_rate: args.max_rate,
            p99_bound: Duration::from_secs_f64(args.p99_bound_ms / 1e3),
            retry: args.step_retry,
        }),
        seed: args.seed,
        threads: args.threads.max(1),
    };
    println!(
        "{:?} over {} at {} requests/s for {} s per phase, {} connections",
        args.scenario,
        match &target {
            Target::Bolt(a) => format!("bolt://{a}"),
            Target::Http(a) => format!("http://{a}"),
        },
        args.rate,
        args.duration,
        config.connections
    );
    println!(
        "{:>10} {:>10} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10}",
        "target/s", "achieved/s", "done", "errors", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "gen µs/req"
    );
    let per_second = args.per_second;
    let reports = loadgen::run(&config, |r: &PhaseReport| {
        if per_second {
            for s in &r.seconds {
                println!(
                    "  second {:>4}: {:>8} done {:>6} errors  p50 {:.2}  p99 {:.2}  max {:.2} ms",
                    s.second, s.completed, s.errors, s.latency_ms.p50, s.latency_ms.p99, s.latency_ms.max
                );
            }
        }
        let l = &r.latency_ms;
        println!(
            "{:>10} {:>10} {:>9} {:>7} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>10.0}{}",
            shown_rate(r.target_rate),
            shown_rate(r.achieved_rate),
            r.completed,
            r.errors,
            l.p50,
            l.p90,
            l.p99,
            l.p999,
            l.max,
            r.generator_cpu_us,
            r.nodes_per_second.map_or(String::new(), |n| format!("  ({n:.0} nodes/s)"))
        );
        if let Some(e) = &r.first_error {
            println!("           first error: {e}");
        }
    })?;
    if let Some(path) = args.json {
        let text = serde_json::to_string_pretty(&reports).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(step) = &config.step {
        let best = reports
            .iter()
            .filter(|r| {
                r.latency_ms.p99 <= step.p99_bound.as_secs_f64() * 1e3 && r.achieved_rate >= 0.95 * r.target_rate
            })
            // The rate offered in the best phase that kept up: what a capacity plan can count on.
            .map(|r| r.target_rate)
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
        match best {
            Some(b) => println!("highest rate with p99 <= {} ms: {} requests/s", args.p99_bound_ms, shown_rate(b)),
            None => println!("no phase met p99 <= {} ms", args.p99_bound_ms),
        }
    }
    // A run in which nothing succeeded measured nothing: a script must not take it for a result.
    if reports.iter().all(|r| r.completed == 0) {
        let first = reports.iter().find_map(|r| r.first_error.clone()).unwrap_or_else(|| "no answer".into());
        return Err(format!("every request failed: {first}").into());
    }
    Ok(())
}

/// A rate in requests per second: whole above 10, with two decimals below (a target of 0.5 is not 0).
fn shown_rate(rate: f64) -> String {
    if rate < 10.0 {
        format!("{rate:.2}")
    } else {
        format!("{rate:.0}")
    }
}
