//! `plexus-tck`: runs the openCypher TCK against the Plexus query engine and prints
//! `TCK: N passed, M failed, K skipped of T`.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use plexus_tck::report::{self, Counts};
use plexus_tck::runner::{self, Status};
use plexus_tck::{fetch, scenario};

#[derive(Parser)]
#[command(about = "Runs the openCypher TCK against the Plexus query engine")]
struct Args {
    /// Directory of `.feature` files (default: the TCK release, downloaded and cached on first use).
    #[arg(long)]
    features: Option<PathBuf>,
    /// Directory of the named graphs (default: `graphs` beside the features directory).
    #[arg(long)]
    graphs: Option<PathBuf>,
    /// Where the downloaded TCK is cached (default: $PLEXUS_TCK_DIR, else target/tck).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Run only scenarios whose name contains this text (repeat to widen).
    #[arg(long)]
    filter: Vec<String>,
    /// Write the names of the passing scenarios here, sorted.
    #[arg(long)]
    list_passing: Option<PathBuf>,
    /// Fail if any scenario named in this file does not pass.
    #[arg(long)]
    check: Option<PathBuf>,
    /// Write a markdown report with the pass rate per area here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Show each failure with expected and actual values.
    #[arg(long, short)]
    verbose: bool,
    /// Scenarios run at the same time.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Seconds after which a scenario counts as failed.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("plexus-tck: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<ExitCode, String> {
    let (features, graphs) = match &args.features {
        Some(dir) => {
            let graphs = args.graphs.clone().unwrap_or_else(|| dir.parent().unwrap_or(dir).join("graphs"));
            (dir.clone(), graphs)
        }
        None => {
            let cache = args.cache.clone().unwrap_or_else(fetch::default_cache_root);
            let tck = fetch::ensure(&cache).map_err(|e| e.to_string())?;
            (tck.features(), args.graphs.clone().unwrap_or_else(|| tck.graphs()))
        }
    };
    let all = Arc::new(scenario::load_dir(&features)?);
    let selected: Vec<usize> = (0..all.len())
        .filter(|&i| args.filter.is_empty() || args.filter.iter().any(|f| all[i].name.contains(f.as_str())))
        .collect();
    eprintln!("{} scenarios loaded from {}, {} selected", all.len(), features.display(), selected.len());

    let started = Instant::now();
    let total = selected.len();
    let terminal = std::io::stderr().is_terminal();
    let progress = |done: usize| {
        if terminal && (done.is_multiple_of(100) || done == total) {
            eprint!("\r{done}/{total}");
            let _ = std::io::stderr().flush();
        }
    };
    let timeout = Duration::from_secs_f64(args.timeout);
    let outcomes = runner::run_all(&all, &selected, &graphs, args.threads, timeout, &progress);
    eprintln!("{}ran in {:.1} s", if terminal { " " } else { "" }, started.elapsed().as_secs_f64());
    let ran: Vec<&scenario::Scenario> = selected.iter().map(|&i| &all[i]).collect();

    if args.verbose {
        for (s, o) in ran.iter().zip(&outcomes) {
            if o.status == Status::Failed {
                println!("FAILED {} (line {})\n  {}\n", s.name, s.line, o.message.replace('\n', "\n  "));
            }
            for note in &o.notes {
                println!("NOTE {}: {note}", s.name);
            }
        }
    }
    if let Some(path) = &args.list_passing {
        write(path, &report::passing_list(&ran, &outcomes))?;
    }
    if let Some(path) = &args.report {
        let command = format!("cargo run -p plexus-tck -- {}", std::env::args().skip(1).collect::<Vec<_>>().join(" "));
        write(path, &report::markdown(&command, fetch::VERSION, &ran, &outcomes))?;
    }
    let counts = Counts::of(&outcomes);
    let mut code = ExitCode::SUCCESS;
    if let Some(path) = &args.check {
        let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let problems = report::check_list(&report::read_list(&text), &all, &ran, &outcomes);
        for (name, why) in &problems {
            println!("REGRESSION {name}\n  {}", why.replace('\n', "\n  "));
        }
        if !problems.is_empty() {
            println!("{} scenarios listed in {} no longer pass", problems.len(), path.display());
            code = ExitCode::FAILURE;
        }
    }
    println!("{}", counts.summary_line());
    Ok(code)
}

fn write(path: &PathBuf, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}
