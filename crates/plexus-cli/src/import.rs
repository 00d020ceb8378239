//! `plexus import`: edge lists, node and relationship files in Neo4j's import format, or an LDBC SNB directory,
//! into a new database (`--mode create`) or an existing one (`--mode incremental`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Instant;

use clap::builder::BoolishValueParser;
use clap::{Args, ValueEnum};
use plexus_import::edgelist::{Delimiter, Format, IdType};
use plexus_import::import::{import_edge_lists, plural, EdgeImport, ImportSummary};
use plexus_import::load::{import_graph, GraphImport, Mode};
use plexus_import::nodes_rels::{CsvOptions, NodeFiles, RelFiles};
use plexus_import::progress::Progress;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    /// Build a new database (the directory must not exist, or be empty).
    Create,
    /// Add to an existing database through write transactions committed in batches.
    Incremental,
}

#[derive(Args)]
pub struct ImportArgs {
    /// Database directory.
    #[arg(long, default_value = "plexus-data")]
    data: PathBuf,
    /// Edge-list file: `source,target[,weight]` per line; repeatable; `.gz` and `.zst` are decompressed; `-` reads
    /// standard input (a pipe works as a file does).
    #[arg(long = "edges")]
    edges: Vec<PathBuf>,
    /// Node file(s) in Neo4j's import format, header in the first line of the first file; repeatable.
    #[arg(long = "nodes", value_name = "[LABEL[:LABEL2]=]FILE[,FILE...]")]
    nodes: Vec<String>,
    /// Relationship file(s) in Neo4j's import format; TYPE is used when the file has no :TYPE column.
    #[arg(long = "relationships", value_name = "[TYPE=]FILE[,FILE...]")]
    relationships: Vec<String>,
    /// An LDBC SNB CsvComposite directory (static/ and dynamic/), mapped as the LDBC reference Cypher
    /// implementation does.
    #[arg(long, value_name = "SNB_DIR", conflicts_with_all = ["delimiter", "array_delimiter", "id_type"])]
    ldbc: Option<PathBuf>,
    /// Field separator: comma, tab or space for edge lists [default: detected]; any one character (or comma,
    /// tab) for node and relationship files [default: comma].
    #[arg(long)]
    delimiter: Option<String>,
    /// Separator of array values and labels inside a field of node and relationship files [default: ;].
    #[arg(long)]
    array_delimiter: Option<String>,
    /// Edge lists: the first line is a header.
    #[arg(long, conflicts_with = "no_header")]
    header: bool,
    /// Edge lists: the first line is data.
    #[arg(long)]
    no_header: bool,
    /// Ids are integers or strings [node and relationship files: string; edge lists: detected].
    #[arg(long, value_parser = ["integer", "string"])]
    id_type: Option<String>,
    /// Edge lists: relationship type of the edges [default: EDGE].
    #[arg(long = "type")]
    rel_type: Option<String>,
    /// Edge lists: label of the created nodes, whose id is stored as the unique key property `id` [default: Node].
    #[arg(long)]
    label: Option<String>,
    /// Edge lists: store every edge in both directions.
    #[arg(long)]
    undirected: bool,
    /// Skip up to N bad lines (reported), across all files, instead of failing on the first.
    #[arg(long, default_value_t = 0)]
    skip_bad_lines: usize,
    /// Node files: keep the first node with an id in its id space and skip (and report) the others, instead of
    /// failing; not counted against --skip-bad-lines.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value = "false", value_parser = BoolishValueParser::new())]
    skip_duplicate_nodes: bool,
    /// Relationship files: skip (and report) relationships whose start or end id names no node, instead of
    /// failing; not counted against --skip-bad-lines.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value = "false", value_parser = BoolishValueParser::new())]
    skip_bad_relationships: bool,
    /// Fail once more than N nodes and relationships have been skipped by --skip-duplicate-nodes and
    /// --skip-bad-relationships together; -1 for no limit [default: no limit].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    bad_tolerance: Option<i64>,
    /// Node and relationship files: the character that quotes a field.
    #[arg(long, default_value = "\"")]
    quote: String,
    /// Node and relationship files: drop fields past the header's last column instead of reporting the line as bad.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value = "false", value_parser = BoolishValueParser::new())]
    ignore_extra_columns: bool,
    /// Node and relationship files: remove whitespace around unquoted values and ids, every array element and
    /// label, and an unquoted type; blanks around a quoted field are skipped (a quoted value keeps its own).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value = "false", value_parser = BoolishValueParser::new())]
    trim_strings: bool,
    /// Node and relationship files: a quoted empty field ("") is no property, as an unquoted empty one is,
    /// instead of the empty string.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value = "false", value_parser = BoolishValueParser::new())]
    ignore_empty_strings: bool,
    /// Accepted for command lines written for Neo4j's importer: quoted fields may always span lines here.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "true|false", value_parser = BoolishValueParser::new())]
    multiline_fields: Option<bool>,
    /// Accepted for command lines written for Neo4j's importer: integers are always stored as 64-bit integers
    /// and floats as 64-bit floats here (int, short and byte columns read as long, float as double).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "true|false", value_parser = BoolishValueParser::new())]
    normalize_types: Option<bool>,
    /// create: a new database, written once; incremental: add to the existing database in transactions.
    #[arg(long, value_enum, default_value = "create")]
    mode: ModeArg,
    /// Incremental mode: operations per committed transaction.
    #[arg(long, default_value_t = 20_000)]
    batch_size: usize,
    /// No progress output (the summary line and skipped lines are still printed).
    #[arg(long)]
    quiet: bool,
}

/// Skipped lines listed one by one; past this many, only their number (a file with a million relationships to
/// unknown nodes under --skip-bad-relationships would otherwise print a million lines).
const SKIPPED_SHOWN: usize = 1000;

fn quote_byte(s: &str) -> Result<u8, String> {
    match s.as_bytes() {
        [b] if b.is_ascii() && !matches!(b, b'\n' | b'\r') => Ok(*b),
        _ => Err(format!("--quote must be one ASCII character other than a line end, got '{s}'")),
    }
}

fn csv_byte(s: &str, what: &str) -> Result<u8, String> {
    // Names in any case (`TAB`, as Neo4j's importer spells it, or `tab`).
    match s.to_ascii_lowercase().as_str() {
        "comma" => return Ok(b','),
        "tab" | "\\t" => return Ok(b'\t'),
        "space" => return Ok(b' '),
        "pipe" => return Ok(b'|'),
        "semicolon" => return Ok(b';'),
        _ => {}
    }
    match s {
        "\"" | "\n" | "\r" => Err(format!("{what} cannot be a quote or a line end: those delimit fields and records")),
        _ if s.len() == 1 && s.is_ascii() => Ok(s.as_bytes()[0]),
        _ => Err(format!("{what} must be one ASCII character (or comma, tab, space, pipe, semicolon), got '{s}'")),
    }
}

/// `[PREFIX=]FILE[,FILE...]`: the prefix, when the text before the first `=` is not a path, unless only the
/// whole argument names existing files (`dt=2024/part-1.csv`).
fn split_prefixed(arg: &str) -> (Option<&str>, Vec<PathBuf>) {
    let first_is_file = |files: &str| std::path::Path::new(files.split(',').next().unwrap_or("")).is_file();
    let (prefix, files) = match arg.split_once('=') {
        Some((_, rest)) if !first_is_file(rest) && first_is_file(arg) => (None, arg),
        Some((p, rest)) if !p.is_empty() && !p.contains('/') && !p.contains('\\') => (Some(p), rest),
        _ => (None, arg),
    };
    (prefix, files.split(',').filter(|f| !f.is_empty()).map(PathBuf::from).collect())
}

fn edge_options(args: &ImportArgs) -> Result<EdgeImport, String> {
    let header = match (args.header, args.no_header) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let id_type = args.id_type.as_deref().map(|t| if t == "integer" { IdType::Integer } else { IdType::String });
    let delimiter = args.delimiter.as_deref().map(Delimiter::parse).transpose()?;
    let label = args.label.clone().unwrap_or_else(|| "Node".into());
    let rel_type = args.rel_type.clone().unwrap_or_else(|| "EDGE".into());
    // Cypher cannot name an empty label or type, so nothing imported under one could be queried.
    if label.trim().is_empty() || rel_type.trim().is_empty() {
        return Err("--label and --type must not be empty".into());
    }
    Ok(EdgeImport {
        label,
        key: "id".into(),
        rel_type,
        undirected: args.undirected,
        format: Format { delimiter, header, id_type },
        skip_bad_lines: args.skip_bad_lines,
    })
}

fn graph_import(args: &ImportArgs) -> Result<(GraphImport, Vec<String>), String> {
    let mut notes = Vec::new();
    let mut csv = match &args.ldbc {
        Some(_) => plexus_import::ldbc::csv_options(),
        None => CsvOptions {
            delimiter: args.delimiter.as_deref().map(|d| csv_byte(d, "--delimiter")).transpose()?.unwrap_or(b','),
            array_delimiter: csv_byte(args.array_delimiter.as_deref().unwrap_or(";"), "--array-delimiter")?,
            id_type: match args.id_type.as_deref() {
                Some("integer") => IdType::Integer,
                _ => IdType::String,
            },
            ..CsvOptions::default()
        },
    };
    if args.ldbc.is_none() && csv.delimiter == csv.array_delimiter {
        return Err(format!(
            "--delimiter and --array-delimiter are both '{}': arrays inside a field need a separator of their own",
            csv.delimiter as char
        ));
    }
    csv.skip_bad_lines = args.skip_bad_lines;
    csv.skip_duplicate_nodes = args.skip_duplicate_nodes;
    csv.skip_bad_relationships = args.skip_bad_relationships;
    csv.bad_tolerance = match args.bad_tolerance {
        Some(n) if n < -1 => return Err(format!("--bad-tolerance must be a count, or -1 for no limit, got {n}")),
        Some(n) => usize::try_from(n).ok(),
        None => None,
    };
    if args.ldbc.is_none() {
        csv.quote = quote_byte(&args.quote)?;
        if csv.quote == csv.delimiter || csv.quote == csv.array_delimiter {
            return Err(format!("--quote '{}' is also a delimiter: fields could not be told apart", args.quote));
        }
    }
    csv.ignore_extra_columns = args.ignore_extra_columns;
    csv.trim_strings = args.trim_strings;
    csv.ignore_empty_strings = args.ignore_empty_strings;
    if args.multiline_fields == Some(false) {
        notes.push("--multiline-fields=false: quoted fields are read across lines all the same".into());
    }
    if args.normalize_types == Some(false) {
        notes.push("--normalize-types=false: integers and floats are stored as 64-bit values all the same".into());
    }
    let mut spec = GraphImport {
        edges: args.edges.clone(),
        edge_options: if args.edges.is_empty() { EdgeImport::default() } else { edge_options(args)? },
        csv,
        mode: if args.mode == ModeArg::Incremental { Mode::Incremental } else { Mode::Create },
        batch_size: args.batch_size,
        ..GraphImport::default()
    };
    if let Some(dir) = &args.ldbc {
        let layout = plexus_import::ldbc::layout(dir)?;
        spec.nodes = layout.nodes;
        spec.relationships = layout.relationships;
        notes.extend(layout.notes);
    }
    for arg in &args.nodes {
        let (labels, files) = split_prefixed(arg);
        let labels = labels.map(|l| l.split(':').filter(|l| !l.is_empty()).map(String::from).collect());
        spec.nodes.push(NodeFiles { files, labels: labels.unwrap_or_default(), ..NodeFiles::default() });
    }
    for arg in &args.relationships {
        let (rel_type, files) = split_prefixed(arg);
        spec.relationships.push(RelFiles { files, rel_type: rel_type.map(String::from), rewrite: None });
    }
    Ok((spec, notes))
}

/// Makes Ctrl-C and SIGTERM remove the partly written database before the process exits: the target only
/// ever appears complete, or as it was. Called before any other thread starts, so that every thread inherits the
/// blocked signals and only the waiting thread receives them. The removal and the final step that puts the
/// database in place take the same lock ([`plexus_import::publish::cancel`]): a signal that comes while the
/// database is being put in place waits for it, and then the import is complete and ends as usual.
fn clean_up_when_interrupted(target: &std::path::Path) {
    let target = target.to_path_buf();
    on_interrupt(move |signal, _| match plexus_import::publish::cancel(&target) {
        plexus_import::publish::Cancelled::Removed => {
            eprintln!(
                "plexus import: interrupted; nothing was written to {} (the partly built database was removed)",
                target.display()
            );
            std::process::exit(128 + signal);
        }
        plexus_import::publish::Cancelled::Complete => {
            eprintln!(
                "plexus import: interrupted after the database was complete: {} holds it in full",
                target.display()
            );
        }
    });
}

/// The signal that stopped an incremental import.
static STOPPED_BY: AtomicI32 = AtomicI32::new(libc::SIGINT);

/// Makes Ctrl-C and SIGTERM stop an incremental import at a batch boundary: the open batch is rolled back and
/// the import reports what its committed batches hold and how to finish (exit status 128 + the signal: 130 for
/// Ctrl-C, 143 for SIGTERM). Before anything is
/// written, the process ends at once, the database unchanged. A second signal ends the process at once: what
/// was committed is durable. Called before any other thread starts, as [`clean_up_when_interrupted`] is.
fn stop_when_interrupted(progress: std::sync::Arc<Progress>, target: &std::path::Path) {
    let target = target.to_path_buf();
    on_interrupt(move |signal, next_signal| {
        STOPPED_BY.store(signal, Ordering::Release);
        match progress.request_stop() {
            plexus_import::progress::StopAt::Now => {
                eprintln!("plexus import: interrupted before anything was written: {} is unchanged", target.display());
                std::process::exit(128 + signal);
            }
            plexus_import::progress::StopAt::NextBatch => eprintln!(
                "plexus import: interrupted; stopping at the last committed batch (interrupt again to stop at once)"
            ),
        }
        if let Some(signal) = next_signal() {
            eprintln!(
                "plexus import: interrupted again: stopped at once; the batches committed before stay in {} (run the \
                 import again as its first interruption would have said, after checking what is there)",
                target.display()
            );
            std::process::exit(128 + signal);
        }
    });
}

/// Blocks SIGINT and SIGTERM in this thread and the threads it starts later, and hands them to `handle` on a
/// thread of their own: the signal, and a way to wait for the next one. Call before any other thread starts, so
/// that every thread inherits the blocked signals and only the waiting thread receives them.
fn on_interrupt(handle: impl FnOnce(libc::c_int, &dyn Fn() -> Option<libc::c_int>) + Send + 'static) {
    // SAFETY: plain libc calls on a signal set owned here and moved into the waiting thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        std::thread::spawn(move || {
            let next = || {
                let mut signal: libc::c_int = 0;
                (libc::sigwait(&set, &mut signal) == 0).then_some(signal)
            };
            if let Some(signal) = next() {
                handle(signal, &next);
            }
        });
    }
}

pub fn run(args: ImportArgs) -> Result<ExitCode, String> {
    if args.edges.is_empty() && args.nodes.is_empty() && args.relationships.is_empty() && args.ldbc.is_none() {
        return Err("nothing to import: give --edges, --nodes and --relationships, or --ldbc".into());
    }
    if args.edges.is_empty() {
        // Options that shape edge lists would otherwise pass unnoticed on node and relationship files.
        let given = [
            (args.undirected, "--undirected"),
            (args.header, "--header"),
            (args.no_header, "--no-header"),
            (args.label.is_some(), "--label"),
            (args.rel_type.is_some(), "--type"),
        ];
        if let Some((_, flag)) = given.iter().find(|(set, _)| *set) {
            return Err(format!(
                "{flag} applies to edge lists (--edges) only; node and relationship files carry labels and types \
                 in their headers (:LABEL, :TYPE) or as LABEL=FILE / TYPE=FILE"
            ));
        }
    }
    if args.batch_size == 0 {
        return Err("--batch-size must be at least 1".into());
    }
    if !args.edges.is_empty() && args.mode == ModeArg::Incremental {
        return Err("--edges cannot be combined with --mode incremental".into());
    }
    let flagged =
        args.nodes.iter().map(|a| ("--nodes", a)).chain(args.relationships.iter().map(|a| ("--relationships", a)));
    for (flag, arg) in flagged {
        if split_prefixed(arg).1.is_empty() {
            return Err(format!("{flag} {arg} names no file"));
        }
    }
    // Standard input can be read once: a second `-` would silently find it empty.
    let edges = args.edges.iter().filter(|file| file.as_os_str() == "-").count();
    let others = args.nodes.iter().chain(&args.relationships).flat_map(|arg| split_prefixed(arg).1);
    let stdin_uses = edges + others.filter(|file| file.as_os_str() == "-").count();
    if stdin_uses > 1 {
        return Err("standard input (-) can be given only once: it can be read only once".into());
    }
    if args.skip_duplicate_nodes && args.nodes.is_empty() && args.ldbc.is_none() {
        return Err("--skip-duplicate-nodes applies to node files (--nodes, --ldbc) only".into());
    }
    let files_only = [
        ("--skip-bad-relationships", args.skip_bad_relationships),
        ("--ignore-extra-columns", args.ignore_extra_columns),
        ("--trim-strings", args.trim_strings),
        ("--ignore-empty-strings", args.ignore_empty_strings),
        ("--quote", args.quote != "\""),
    ];
    if let Some((flag, _)) = files_only.iter().find(|(_, given)| *given) {
        if args.nodes.is_empty() && args.relationships.is_empty() && args.ldbc.is_none() {
            return Err(format!("{flag} applies to node and relationship files (--nodes, --relationships) only"));
        }
    }
    let say = |line: &str| {
        if !args.quiet {
            eprintln!("plexus import: {line}");
        }
    };
    // Usage errors (exit status 2) are found before any work starts; what goes wrong after is a runtime or data
    // error (exit status 1).
    let edges_only = args.nodes.is_empty() && args.relationships.is_empty() && args.ldbc.is_none();
    let edge_import = if edges_only && args.mode == ModeArg::Create { Some(edge_options(&args)?) } else { None };
    let graph = if edge_import.is_none() { Some(graph_import(&args)?) } else { None };
    let progress = std::sync::Arc::new(Progress::new());
    if args.mode == ModeArg::Create {
        clean_up_when_interrupted(&args.data);
    } else {
        stop_when_interrupted(progress.clone(), &args.data);
    }
    let failed = |message: String| {
        if args.mode == ModeArg::Create {
            plexus_import::publish::settle();
        }
        eprintln!("plexus: {message}");
        Ok(ExitCode::from(1))
    };
    let start = Instant::now();
    let summary: ImportSummary = if let Some(options) = &edge_import {
        match import_edge_lists(&args.data, &args.edges, options, say) {
            Ok(summary) => summary,
            Err(e) => return failed(e.to_string()),
        }
    } else {
        let (spec, notes) = graph.expect("a graph import when not an edge-list import");
        for n in &notes {
            say(n);
        }
        let progress = &*progress;
        let done = AtomicBool::new(false);
        let result = std::thread::scope(|scope| {
            if !args.quiet {
                scope.spawn(|| crate::progress::report(progress, &done));
            }
            let result = import_graph(&args.data, &spec, progress);
            done.store(true, Ordering::Release);
            result
        });
        match result {
            Ok(summary) => summary,
            Err(e) if progress.stop_requested() => {
                eprintln!("plexus import: {e}");
                return Ok(ExitCode::from(128 + STOPPED_BY.load(Ordering::Acquire) as u8));
            }
            Err(e) => return failed(e.to_string()),
        }
    };
    let skipped: Vec<_> =
        summary.bad_lines.iter().chain(&summary.duplicates).chain(&summary.skipped_relationships).collect();
    for (path, bad) in skipped.iter().take(SKIPPED_SHOWN) {
        eprintln!("plexus import: skipped {}: {bad}", path.display());
    }
    if skipped.len() > SKIPPED_SHOWN {
        eprintln!("plexus import: skipped {} more lines, not listed", skipped.len() - SKIPPED_SHOWN);
    }
    // Data left out, so told even with --quiet, as skipped lines are.
    for path in &summary.repeated_headers {
        eprintln!("plexus import: skipped the first line of {}: it repeats the header", path.display());
    }
    for (path, n) in &summary.dropped_fields {
        let fields = if *n == 1 { "field" } else { "fields" };
        eprintln!("plexus import: dropped {n} {fields} past the header's last column of {}", path.display());
    }
    for (path, short) in &summary.short_rows {
        let rows = if short.count == 1 { "row has" } else { "rows have" };
        eprintln!(
            "plexus import: {} {rows} fewer fields than the header of {} (the first at line {}): their last \
             columns were read as absent, as Neo4j's importer does; if the file uses another delimiter, pass \
             --delimiter",
            short.count,
            path.display(),
            short.first_line
        );
    }
    if !summary.unique_keys.is_empty() {
        say(&format!("unique keys: {}", summary.unique_keys.join(", ")));
    }
    for note in &summary.notes {
        say(note);
    }
    say(&format!(
        "read {:.2} s, parse {:.2} s, build {:.2} s, write {:.2} s",
        summary.read.as_secs_f64(),
        summary.parse.as_secs_f64(),
        summary.build.as_secs_f64(),
        summary.write.as_secs_f64()
    ));
    let secs = start.elapsed().as_secs_f64();
    let rate = summary.relationships as f64 / secs.max(1e-9) / 1e6;
    let (nodes, relationships) = (plural(summary.nodes, "node"), plural(summary.relationships, "relationship"));
    if args.mode == ModeArg::Incremental {
        println!(
            "added {nodes} ({} already there) and {relationships} to {} in {:.2} s ({:.2} M relationships/s)",
            summary.matched,
            args.data.display(),
            secs,
            rate
        );
    } else {
        let per_relationship = match summary.relationships {
            0 => String::new(),
            n => format!(", {:.2} bytes per relationship", summary.bytes_on_disk as f64 / n as f64),
        };
        println!(
            "imported {nodes} and {relationships} into {} in {:.2} s ({:.2} M edges/s; {} on disk{per_relationship})",
            args.data.display(),
            secs,
            rate,
            plural(summary.bytes_on_disk, "byte"),
        );
    }
    Ok(ExitCode::SUCCESS)
}
