//! `plexus generate`: writes a synthetic graph as an edge-list file (or an LDBC SNB data set as a directory of CSV
//! files), with progress and a summary on stderr.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use plexus_import::generate::{self, Graph, Initiator, Options, Preset, Progress};

use crate::{usage, Failure};

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
    /// Write even when the estimated output is larger than the free space where it goes, or when an SNB
    /// directory's `static` or `dynamic` holds files of other origin (they are replaced whole).
    #[arg(long)]
    force: bool,
}

/// Average decimal digits of the ids `0..n`, drawn uniformly.
fn mean_digits(n: u64) -> f64 {
    let (mut total, mut low, mut digits) = (0u128, 0u64, 1u32);
    while low < n {
        let high = 10u64.saturating_pow(digits).min(n);
        total += (high - low) as u128 * digits as u128;
        low = high;
        digits += 1;
    }
    total as f64 / n.max(1) as f64
}

/// About how many bytes an edge list of `edges` edges over `nodes` ids takes: two ids, a comma and a newline per
/// edge (R-MAT's skew to low ids makes the real file a little smaller), a weight of 9 bytes (`,0.123456`). A
/// compressed file is counted at half its text: lists sorted by source compress about fourfold, but randomly
/// ordered ones (`human-brain`) only about 2.2-fold, and the estimate guards the disk.
fn edge_list_bytes(nodes: u64, edges: u64, weights: bool, out: &Path) -> f64 {
    let per_edge = 2.0 * mean_digits(nodes) + 2.0 + if weights { 9.0 } else { 0.0 };
    let compressed = out.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz") || e.eq_ignore_ascii_case("zst"));
    edges as f64 * per_edge / if compressed { 2.0 } else { 1.0 }
}

/// About how many bytes `generate snb` writes at `scale`: measured with this generator (50 MB at 0.1, 194 MB
/// at 0.3, 970 MB at 1, 3.8 GB at 3); comments per person grow with the scale, so the size grows faster than it.
fn snb_bytes(scale: f64) -> f64 {
    0.97e9 * scale.powf(if scale < 1.0 { 1.3 } else { 1.25 })
}

/// Bytes free to this user on the file system holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct it is given and reads a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// The directory `out` goes into.
fn parent(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuses an output whose estimated size is over the free space where it goes, unless `force`.
fn check_space(out: &Path, estimate: f64, force: bool) -> Result<(), String> {
    let Some(free) = free_bytes(&parent(out)) else { return Ok(()) };
    if estimate > free as f64 && !force {
        return Err(format!(
            "the output would take about {} and {} has {} free: make the graph smaller, or give --force to \
             write anyway",
            human(estimate),
            parent(out).display(),
            human(free as f64)
        ));
    }
    Ok(())
}

fn human(bytes: f64) -> String {
    let units = ["bytes", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} bytes")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

/// An output being written under a temporary name beside its final one, so that a failed or interrupted run
/// leaves nothing under the final name: renamed into place by [`Partial::finish`], removed otherwise (on an
/// error, and on Ctrl-C, SIGTERM or SIGHUP, which end the process with the temporary gone).
struct Partial {
    temporary: PathBuf,
    done: bool,
}

impl Partial {
    fn new(out: &Path) -> Result<Partial, String> {
        let name = out.file_name().ok_or_else(|| format!("--out {}: not a file name", out.display()))?;
        let mut temporary_name = std::ffi::OsString::from(format!(".plexus-partial-{}-", std::process::id()));
        // The final name last: its extension still chooses the compression.
        temporary_name.push(name);
        let temporary = parent(out).join(temporary_name);
        remove_left_by_killed_runs(&parent(out), name);
        remove_on_signal(temporary.clone());
        Ok(Partial { temporary, done: false })
    }

    /// Moves a finished file into place.
    fn finish_file(mut self, out: &Path) -> Result<(), String> {
        std::fs::rename(&self.temporary, out).map_err(|e| format!("cannot rename to {}: {e}", out.display()))?;
        self.done = true;
        Ok(())
    }

    /// Moves a finished SNB directory into place: its `static` and `dynamic` replace those in `out` when `out`
    /// is a directory already, if they hold only files a generation writes (unless `force`): a file of the
    /// user's own there would be deleted with them.
    fn finish_dir(mut self, out: &Path, force: bool) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("cannot move the data set into {}: {e}", out.display());
        if std::fs::rename(&self.temporary, out).is_err() {
            for sub in ["static", "dynamic"] {
                let made: Vec<std::ffi::OsString> = std::fs::read_dir(self.temporary.join(sub))
                    .map_err(fail)?
                    .flatten()
                    .map(|e| e.file_name())
                    .collect();
                let theirs: Vec<String> = std::fs::read_dir(out.join(sub))
                    .map(|entries| {
                        entries
                            .flatten()
                            .filter(|e| !made.contains(&e.file_name()))
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                if !theirs.is_empty() && !force {
                    return Err(format!(
                        "{} holds files a generated data set does not ({}), which replacing it would delete: choose \
                         another --out, move them, or give --force",
                        out.join(sub).display(),
                        theirs.join(", ")
                    ));
                }
            }
            for sub in ["static", "dynamic"] {
                let target = out.join(sub);
                if target.exists() {
                    std::fs::remove_dir_all(&target).map_err(fail)?;
                }
                std::fs::rename(self.temporary.join(sub), &target).map_err(fail)?;
            }
            std::fs::remove_dir_all(&self.temporary).map_err(fail)?;
        }
        self.done = true;
        Ok(())
    }
}

/// Removes what runs for the same output killed by SIGKILL (which no handler sees) left in `dir`: temporaries
/// named for `name` by a process that no longer exists.
fn remove_left_by_killed_runs(dir: &Path, name: &std::ffi::OsStr) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|f| f.strip_prefix(".plexus-partial-")) else { continue };
        let Some((pid, output)) = rest.split_once('-') else { continue };
        let dead = pid
            .parse::<u32>()
            .is_ok_and(|pid| pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists());
        if dead && std::ffi::OsStr::new(output) == name {
            let path = entry.path();
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.temporary);
            let _ = std::fs::remove_dir_all(&self.temporary);
        }
    }
}

/// Ctrl-C, SIGTERM and SIGHUP remove `temporary` and end the process (status 128 + the signal's number, as the
/// help says of every command a signal stops: 130, 143, 129). The signals are blocked in
/// this thread before the generator's threads start, which inherit that, and one thread waits for them.
fn remove_on_signal(temporary: PathBuf) {
    // SAFETY: sigset operations on a set owned here; pthread_sigmask and sigwait with valid pointers.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let set = set;
        std::thread::spawn(move || {
            let mut signal = 0;
            if libc::sigwait(&set, &mut signal) == 0 {
                let _ = std::fs::remove_file(&temporary);
                let _ = std::fs::remove_dir_all(&temporary);
                eprintln!("plexus generate: interrupted; nothing written");
                std::process::exit(128 + signal);
            }
        });
    }
}

/// `e` naming the paths under their final name, not the temporary one they were written as.
fn final_names(e: generate::Error, temporary: &Path, out: &Path) -> String {
    match e {
        generate::Error::Io { path, source } => {
            let path = match path.strip_prefix(temporary) {
                Ok(rest) if rest.as_os_str().is_empty() => out.to_path_buf(),
                Ok(rest) => out.join(rest),
                Err(_) => path,
            };
            generate::Error::Io { path, source }.to_string()
        }
        e => e.to_string(),
    }
}

/// Nodes and edges of an edge-list graph.
fn size(graph: &Graph) -> Result<(u64, u64), String> {
    Ok(match graph {
        Graph::Rmat(r) => (r.nodes, r.edges),
        Graph::Preset { preset, scale } => {
            let r = preset.rmat(*scale).map_err(|e| e.to_string())?;
            (r.nodes, r.edges)
        }
        Graph::Likes(l) => (l.people + l.items, l.people.saturating_mul(l.likes)),
    })
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

/// What is wrong with the command line comes back as a usage error (status 2), found before anything is written;
/// what goes wrong while writing, as a failure (status 1).
pub fn run(args: GenerateArgs) -> Result<ExitCode, Failure> {
    if args.threads == Some(0) {
        return Err(usage("--threads must be at least 1"));
    }
    if args.out.as_os_str() == "-" {
        return Err(usage(
            "--out -: generate writes files (compressed by their name, .gz or .zst); give a path, or /dev/stdout \
             for the text on standard output",
        ));
    }
    if args.kind == Kind::Snb {
        return snb(&args);
    }
    if let Some(why) = plexus_import::generate::unwritable_compression(&args.out) {
        return Err(usage(format!("--out {}: {why}", args.out.display())));
    }
    let graph = graph(&args).map_err(usage)?;
    let options =
        Options { seed: args.seed, weights: args.weights, header: args.header, threads: args.threads.unwrap_or(0) };
    // A device or pipe (/dev/stdout) is written as it is; a file goes under a temporary name first.
    let special = std::fs::metadata(&args.out).is_ok_and(|m| !m.is_file() && !m.is_dir());
    let partial = if special {
        None
    } else {
        let (nodes, edges) = size(&graph).map_err(usage)?;
        check_space(&args.out, edge_list_bytes(nodes, edges, args.weights, &args.out), args.force).map_err(usage)?;
        Some(Partial::new(&args.out).map_err(usage)?)
    };
    let target = partial.as_ref().map_or(args.out.as_path(), |p| p.temporary.as_path());
    let summary = generate::generate_file(&graph, &options, target, &mut reporter())
        .map_err(|e| final_names(e, target, &args.out))?;
    if let Some(partial) = partial {
        partial.finish_file(&args.out)?;
    }
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

/// One plain progress line of `generate snb`.
fn snb_line(done: u64, persons: u64, elapsed: Duration) -> String {
    format!(
        "plexus generate: snb: {done} of {persons} persons ({:.0}%) in {:.1} s",
        100.0 * done as f64 / persons.max(1) as f64,
        elapsed.as_secs_f64()
    )
}

/// `plexus generate snb`: the LDBC-shaped social network into a directory.
fn snb(args: &GenerateArgs) -> Result<ExitCode, Failure> {
    check_flags(args).map_err(usage)?;
    let scale = args.scale.ok_or_else(|| usage("snb needs --scale (the LDBC scale factor, e.g. 0.1 or 1)"))?;
    let snb = generate::Snb { scale };
    let persons = snb.validate().map_err(|e| usage(e.to_string()))?;
    check_space(&args.out, snb_bytes(scale), args.force).map_err(usage)?;
    let partial = Partial::new(&args.out).map_err(usage)?;
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
    // Without a terminal, a plain line every few seconds, as the edge lists have.
    let start = Instant::now();
    let mut next_line = Duration::from_secs(5);
    let mut progress = |p: generate::SnbProgress| match &bar {
        Some(bar) => bar.set_position(p.persons_done),
        None => {
            let elapsed = start.elapsed();
            if elapsed >= next_line && p.persons_done < persons {
                eprintln!("{}", snb_line(p.persons_done, persons, elapsed));
                next_line = elapsed + Duration::from_secs(5);
            }
        }
    };
    let summary = snb
        .generate(args.seed, args.threads.unwrap_or(0), &partial.temporary, &mut progress)
        .map_err(|e| final_names(e, &partial.temporary, &args.out))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    // Not a usage error: the data set could not take its place (a file in the way, a failed move).
    partial.finish_dir(&args.out, args.force)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates() {
        assert_eq!(mean_digits(10), 1.0);
        assert_eq!(mean_digits(100), 1.9);
        // 2^16 ids, about 4.85 digits: 11.7 bytes per edge (the file is 11.66).
        let bytes = edge_list_bytes(1 << 16, 1 << 20, false, Path::new("r.csv"));
        assert!((11.5e6..12.5e6).contains(&bytes), "{bytes}");
        assert!(edge_list_bytes(1 << 40, 1 << 44, false, Path::new("r.csv")) > 1e14);
        assert!((0.9e9..1.1e9).contains(&snb_bytes(1.0)));
        assert_eq!(human(1.5e12), "1.5 TB");
        assert_eq!(human(12.0), "12 bytes");
        assert_eq!(snb_line(5, 10, Duration::from_secs(6)), "plexus generate: snb: 5 of 10 persons (50%) in 6.0 s");
    }
}
