//! `plexus generate`: writes a synthetic graph as an edge-list file (or an LDBC SNB data set as a directory of CSV
//! files), with progress and a summary on stderr.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use plexus_import::generate::{self, Graph, Initiator, Options, Preset, Progress};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Graph500 R-MAT: 2^rmat-scale vertices, edge-factor x vertices edges, initiator --abcd.
    Rmat,
    /// R-MAT with per-level initiator noise (noisy stochastic Kronecker graph; --noise, default 0.1).
    Kronecker,
    /// Shaped like the US patent citation graph (3.8M vertices, 16.5M edges) times --scale.
    Patents,
    /// Shaped like a mouse gene co-expression network (43K vertices, 14.5M edges) times --scale.
    MouseGenes,
    /// Shaped like a human connectome (940K vertices, 87.3M edges) times --scale.
    HumanBrain,
    /// GuancialeDB's graph: people 0..P each like --likes distinct items, ids P..P+I.
    Likes,
    /// A social network in the LDBC SNB schema and CSV layout at scale factor --scale, into the directory --out.
    Snb,
}

pub(crate) const EXAMPLES: &str = "Examples:
  plexus generate rmat --rmat-scale 16 --out rmat.csv      65,536 vertices, 1M edges
  plexus generate likes --people 100 --items 50 --out likes.csv.zst
  plexus generate snb --scale 0.01 --out snb && plexus import --data snbdb --ldbc snb";

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// What to generate.
    #[arg(value_enum)]
    kind: Kind,
    /// Output edge list (`source,target[,weight]` lines); `.gz` or `.zst` compresses. For snb: a directory.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Presets: multiply the data set's node and edge counts. snb: the LDBC scale factor (required).
    #[arg(long)]
    scale: Option<f64>,
    /// rmat/kronecker: log2 of the vertex count [default: 20].
    #[arg(long)]
    rmat_scale: Option<u32>,
    /// rmat/kronecker: edges per vertex [default: 16].
    #[arg(long)]
    edge_factor: Option<u64>,
    /// rmat/kronecker: initiator probabilities, summing to 1 [default: 0.57,0.19,0.19,0.05].
    #[arg(long, value_name = "A,B,C,D")]
    abcd: Option<String>,
    /// rmat/kronecker: per-level initiator noise [default: 0 for rmat, 0.1 for kronecker].
    #[arg(long)]
    noise: Option<f64>,
    /// rmat/kronecker: redraw self-loops (Graph500 keeps them).
    #[arg(long)]
    no_self_loops: bool,
    /// Append a uniform weight in [0, 1) to each edge.
    #[arg(long)]
    weights: bool,
    /// Start with a `source,target[,weight]` header line.
    #[arg(long)]
    header: bool,
    /// likes: number of items [default: 2000].
    #[arg(long)]
    items: Option<u64>,
    /// likes: number of people [default: 1000].
    #[arg(long)]
    people: Option<u64>,
    /// likes: distinct items liked per person [default: 10].
    #[arg(long)]
    likes: Option<u64>,
    /// Worker threads [default: one per core]; the output is the same for any number.
    #[arg(long)]
    threads: Option<usize>,
}

fn parse_abcd(s: &str) -> Result<Initiator, String> {
    let ps: Vec<f64> = s
        .split(',')
        .map(|p| p.trim().parse::<f64>().map_err(|_| format!("--abcd: {p:?} is not a number")))
        .collect::<Result<_, _>>()?;
    match ps[..] {
        [a, b, c, d] => Ok(Initiator { a, b, c, d }),
        _ => Err(format!("--abcd needs four comma-separated probabilities, got {}", ps.len())),
    }
}

/// Refuses options that do not apply to `kind`, so a typo'd command does not silently ignore them.
fn only_for(kind: Kind, allowed: &[Kind], flag: &str, given: bool) -> Result<(), String> {
    if given && !allowed.contains(&kind) {
        let kind = kind.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default();
        return Err(format!("{flag} does not apply to {kind}"));
    }
    Ok(())
}

/// Refuses options that do not apply to the chosen kind.
fn check_flags(args: &GenerateArgs) -> Result<(), String> {
    use Kind::*;
    let k = args.kind;
    let rmat_kinds = [Rmat, Kronecker];
    let edge_lists = [Rmat, Kronecker, Patents, MouseGenes, HumanBrain, Likes];
    only_for(k, &[Patents, MouseGenes, HumanBrain, Snb], "--scale", args.scale.is_some())?;
    only_for(k, &edge_lists, "--weights", args.weights)?;
    only_for(k, &edge_lists, "--header", args.header)?;
    only_for(k, &rmat_kinds, "--rmat-scale", args.rmat_scale.is_some())?;
    only_for(k, &rmat_kinds, "--edge-factor", args.edge_factor.is_some())?;
    only_for(k, &rmat_kinds, "--abcd", args.abcd.is_some())?;
    only_for(k, &rmat_kinds, "--noise", args.noise.is_some())?;
    only_for(k, &rmat_kinds, "--no-self-loops", args.no_self_loops)?;
    for (flag, given) in [("--items", args.items), ("--people", args.people), ("--likes", args.likes)] {
        only_for(k, &[Likes], flag, given.is_some())?;
    }
    Ok(())
}

fn graph(args: &GenerateArgs) -> Result<Graph, String> {
    use Kind::*;
    let k = args.kind;
    check_flags(args)?;
    let preset = |preset| Graph::Preset { preset, scale: args.scale.unwrap_or(1.0) };
    let graph = match k {
        Rmat | Kronecker => {
            let mut rmat = generate::Rmat::graph500(args.rmat_scale.unwrap_or(20), args.edge_factor.unwrap_or(16))
                .map_err(|e| e.to_string())?;
            if let Some(abcd) = &args.abcd {
                rmat.initiator = parse_abcd(abcd)?;
            }
            rmat.noise = args.noise.unwrap_or(if k == Kronecker { 0.1 } else { 0.0 });
            rmat.no_self_loops = args.no_self_loops;
            Graph::Rmat(rmat)
        }
        Patents => preset(Preset::Patents),
        MouseGenes => preset(Preset::MouseGenes),
        HumanBrain => preset(Preset::HumanBrain),
        Snb => unreachable!("snb is not an edge list"),
        Likes => {
            let d = generate::Likes::default();
            Graph::Likes(generate::Likes {
                items: args.items.unwrap_or(d.items),
                people: args.people.unwrap_or(d.people),
                likes: args.likes.unwrap_or(d.likes),
            })
        }
    };
    generate::validate(&graph).map_err(|e| e.to_string())?;
    Ok(graph)
}

/// Progress on stderr: a bar on a terminal, otherwise a plain line every few seconds (for logs).
fn reporter() -> impl FnMut(Progress) {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {percent:>3}% {human_pos}/{human_len} edges, {per_sec}, eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let start = Instant::now();
    let mut next_line = Duration::from_secs(5);
    move |p: Progress| match &bar {
        Some(bar) => {
            bar.set_length(p.edges_total);
            bar.set_position(p.edges_done);
            if p.edges_done == p.edges_total {
                bar.finish_and_clear();
            }
        }
        None => {
            let elapsed = start.elapsed();
            if elapsed >= next_line && p.edges_done < p.edges_total {
                eprintln!(
                    "plexus generate: {} of {} edges ({:.0}%) in {:.1} s",
                    p.edges_done,
                    p.edges_total,
                    100.0 * p.edges_done as f64 / p.edges_total as f64,
                    elapsed.as_secs_f64()
                );
                next_line = elapsed + Duration::from_secs(5);
            }
        }
    }
}

pub fn run(args: GenerateArgs) -> Result<ExitCode, String> {
    if args.threads == Some(0) {
        return Err("--threads must be at least 1".into());
    }
    if args.kind == Kind::Snb {
        return snb(&args);
    }
    let graph = graph(&args)?;
    let options =
        Options { seed: args.seed, weights: args.weights, header: args.header, threads: args.threads.unwrap_or(0) };
    let summary = generate::generate_file(&graph, &options, &args.out, &mut reporter()).map_err(|e| e.to_string())?;
    eprintln!(
        "plexus generate: {} edges, {} nodes, {} bytes ({} of text) to {} in {:.2} s: {:.2}M edges/s",
        summary.edges,
        summary.nodes,
        summary.bytes,
        summary.text_bytes,
        args.out.display(),
        summary.seconds,
        summary.edges as f64 / summary.seconds.max(1e-9) / 1e6
    );
    Ok(ExitCode::SUCCESS)
}

/// `plexus generate snb`: the LDBC-shaped social network into a directory.
fn snb(args: &GenerateArgs) -> Result<ExitCode, String> {
    check_flags(args)?;
    let scale = args.scale.ok_or("snb needs --scale (the LDBC scale factor, e.g. 0.1 or 1)")?;
    let snb = generate::Snb { scale };
    let persons = snb.validate().map_err(|e| e.to_string())?;
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(persons);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {percent:>3}% {human_pos}/{human_len} persons, eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut progress = |p: generate::SnbProgress| {
        if let Some(bar) = &bar {
            bar.set_position(p.persons_done);
        }
    };
    let summary =
        snb.generate(args.seed, args.threads.unwrap_or(0), &args.out, &mut progress).map_err(|e| e.to_string())?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let rows = summary.total_rows();
    let count = |name: &str| generate::snb::FILES.iter().position(|f| f.name == name).map_or(0, |k| summary.rows[k]);
    eprintln!(
        "plexus generate: snb scale {scale}: {} persons, {} knows, {} forums, {} posts, {} comments; {rows} rows in {} \
         files, {} bytes to {} in {:.2} s: {:.2}M rows/s",
        summary.persons,
        count("person_knows_person_0_0.csv"),
        count("forum_0_0.csv"),
        count("post_0_0.csv"),
        count("comment_0_0.csv"),
        summary.rows.len(),
        summary.total_bytes(),
        args.out.display(),
        summary.seconds,
        rows as f64 / summary.seconds.max(1e-9) / 1e6
    );
    Ok(ExitCode::SUCCESS)
}
