//! `plexus`: the command line of the Plexus graph database.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use plexus::{Database, Direction, NodeId, TokenKind, TypeFilter};
use plexus_import::import::plural;

mod format;
mod generate;
mod import;
mod likes;
mod loadgen;
mod progress;
mod query;
mod serve;
mod shell;
mod streamed;
mod user;

#[derive(Parser)]
#[command(name = "plexus", version, about = "Plexus: a fast, durable property-graph database")]
#[command(after_help = "\
With no command, plexus opens the shell on ./plexus-data (or, with standard input not a terminal, runs the
statements read from it there).

Exit status: 0 done; 1 something failed while it ran (a query's error, a database that is missing, locked or
damaged, a file that cannot be read or written); 2 the command line cannot work as written (nothing was done);
128 + the signal's number when Ctrl-C or SIGTERM stopped an import, a script or a generator (a server they
stop shuts down cleanly and exits 0).

Examples:
  plexus demo                      build a sample graph in ./plexus-data and query it
  plexus                           the interactive shell on ./plexus-data
  plexus generate patents --out patents.csv  write a patents-shaped edge list (16.5M edges)
  plexus generate snb --scale 0.1 --out snb  an LDBC SNB social network (CSV directory)
  plexus import --data g --edges edges.csv   import an edge list into a new database
  plexus import --data g --nodes Person=people.csv --relationships KNOWS=knows.csv
  plexus import --data snb --ldbc ldbc-snb/vanilla  import the LDBC SNB CSV layout
  plexus info --data ./plexus-data   counts, degrees and memory of a database
  plexus check --data ./plexus-data  verify checksums and adjacency (exit 1 on damage)
  plexus repair --data ./plexus-data open a database whose log is damaged, dropping what follows the damage
  plexus checkpoint --data ./plexus-data
  plexus backup --data ./plexus-data --to copy  a consistent copy that opens by itself
  plexus query --data g \"MATCH (n) RETURN count(n)\"  run one query
  plexus query --data g -p id=42 'MATCH (n {id: $id}) RETURN n' --format json
  plexus shell --data g             interactive shell (statements end with ;)
  plexus shell --data g < script.cypher      run a script (stops at the first error)
  plexus serve --data g --password secret     Bolt on 127.0.0.1:7687, HTTP on 127.0.0.1:7474
  plexus user add ann --role writer --data g  one more server user, once g has served (password from
                                              PLEXUS_USER_PASSWORD)
  plexus loadgen --bolt 127.0.0.1:7687 --password secret --rate 5000 --duration 10")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Build GuancialeDB's items/people/likes graph in a database and run its recommendation traversal.
    #[command(
        after_help = "Examples:\n  plexus demo                       2,000 items, 1,000 people in ./plexus-data\n  plexus demo --data likes --items 50000 --people 20000 --likes 20"
    )]
    Demo {
        /// Database directory.
        #[arg(long, default_value = "plexus-data")]
        data: PathBuf,
        #[arg(long, default_value_t = 2000)]
        items: usize,
        #[arg(long, default_value_t = 1000)]
        people: usize,
        /// Likes per person.
        #[arg(long, default_value_t = 10)]
        likes: usize,
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
    /// Import edge lists, Neo4j-style node and relationship files or an LDBC SNB directory.
    #[command(after_help = IMPORT_EXAMPLES)]
    Import(import::ImportArgs),
    /// Print counts per label and type, degree statistics and memory use (opens read-only).
    #[command(after_help = "Examples:\n  plexus info --data ./plexus-data")]
    Info {
        #[arg(long, default_value = "plexus-data")]
        data: PathBuf,
    },
    /// Verify the database as it is on disk, repairing nothing (opens read-only): checksums, that in- and
    /// out-adjacency agree, and commits lost to damage in the log; exit status 1 on damage.
    #[command(
        after_help = "Examples:\n  plexus check --data ./plexus-data    exit status 1 on damage\n  plexus check --data g || echo damaged"
    )]
    Check {
        #[arg(long, default_value = "plexus-data")]
        data: PathBuf,
    },
    /// Open a database whose log is damaged with intact commits after the damage, which a normal open refuses:
    /// the commits after the damage are dropped (kept aside in wal-*.log.dropped* files) and a checkpoint is
    /// written. Restore the damaged file from a backup instead if you have one.
    #[command(after_help = "Examples:\n  plexus check --data g && echo fine || plexus repair --data g")]
    Repair {
        #[arg(long, default_value = "plexus-data")]
        data: PathBuf,
    },
    /// Write a checkpoint and retire the log it covers.
    #[command(after_help = "Examples:\n  plexus checkpoint --data ./plexus-data")]
    Checkpoint {
        #[arg(long, default_value = "plexus-data")]
        data: PathBuf,
    },
    /// Write a consistent copy of the database as a new database directory, which opens by itself (restoring is
    /// opening it, or moving it where the original was). Opens the database read-only; for one a server has open,
    /// an admin runs `CALL dbms.backup('name')` through the server instead.
    #[command(
        after_help = "Examples:\n  plexus backup --data ./plexus-data --to backups/monday\n  plexus query --data backups/monday \"MATCH (n) RETURN count(n)\""
    )]
    Backup {
        #[arg(long, default_value = "plexus-data")]
        data: PathBuf,
        /// The new database directory: absent, or an empty directory; it appears complete or not at all.
        #[arg(long)]
        to: PathBuf,
    },
    /// Run one openCypher statement and print the result.
    #[command(after_help = query::EXAMPLES)]
    Query(query::QueryArgs),
    /// An interactive openCypher shell (statements end with ';'; :help for commands).
    #[command(after_help = shell::EXAMPLES)]
    Shell(shell::ShellArgs),
    /// Write a synthetic graph (R-MAT, data-set presets, likes) as an edge-list file, or an LDBC SNB data set.
    #[command(after_help = generate::EXAMPLES)]
    Generate(generate::GenerateArgs),
    /// Serve the database over Bolt (Neo4j drivers and tools) and HTTP/JSON until SIGTERM or Ctrl-C.
    #[command(after_help = SERVE_EXAMPLES)]
    Serve(serve::ServeArgs),
    /// Open-loop load at a constant rate against a running server (Bolt or HTTP), with latency percentiles.
    #[command(after_help = LOADGEN_EXAMPLES)]
    Loadgen(loadgen::LoadgenArgs),
    /// Manage the server's users and roles (reader, writer, admin).
    #[command(after_help = USER_EXAMPLES)]
    User(user::UserArgs),
}

// Examples for the commands whose sources are kept by others; each is one that works as written.
const IMPORT_EXAMPLES: &str = "Examples:
  plexus import --data g --edges edges.csv                  source,target lines; nodes :Node {id}
  plexus import --data g --nodes Person=people.csv --relationships KNOWS=knows.csv
  plexus import --data snb --ldbc snb                       a directory from `plexus generate snb`";
const SERVE_EXAMPLES: &str = "Examples:
  plexus serve --data g --password secret         Bolt on 127.0.0.1:7687, HTTP on 127.0.0.1:7474
  plexus serve --data g --no-auth --bolt 127.0.0.1:0 --http 127.0.0.1:0   port 0 picks a free port";
const LOADGEN_EXAMPLES: &str = "Examples:
  plexus loadgen --bolt 127.0.0.1:7687 --password secret --rate 5000 --duration 10
  plexus loadgen --http 127.0.0.1:7474 --password secret --scenario recommend --rate 1000 --step-factor 2";
const USER_EXAMPLES: &str = "Users live in the data directory from the first `plexus serve`, which creates the admin.
Examples:
  PLEXUS_USER_PASSWORD=s3cret plexus user add ann --role writer --data g
  plexus user list --data g
  plexus user remove ann --data g";

/// Opens the database in `data`, creating it if there is none (as `sqlite3` does), and says so when it does:
/// a mistyped directory should not pass unnoticed. With `read_only`, or when the directory holds a database
/// this process may not write to, it is opened read-only instead (statements that write then fail).
pub(crate) fn open(data: &PathBuf, read_only: bool) -> Result<Database, String> {
    if read_only {
        let db = open_read_only(data)?;
        // What an open for writing refuses, a query must not answer from either: every answer would leave out
        // the commits after the damage. (`info` and `check` still open such a database, to describe it.)
        if let Some(damaged) = db.recovery_report().damage_before_commits() {
            return Err(format!(
                "cannot query {}: {} is damaged at offset {}, and what follows it is missing from the database as \
                 read; `plexus check` describes the damage, `plexus repair` drops it (keeping what it drops)",
                data.display(),
                damaged.file.display(),
                damaged.offset
            ));
        }
        return Ok(db);
    }
    let created = !Database::exists(data);
    if Database::holds_foreign_files(data).map_err(|e| e.to_string())? {
        if let Some(hint) = interrupted_import(data) {
            return Err(format!("{} holds no Plexus database: {hint}", data.display()));
        }
        // Most likely a mistyped path: scattering database files among someone's own would be a poor answer.
        return Err(format!(
            "{} holds files but no Plexus database; give a new or empty directory to create one",
            data.display()
        ));
    }
    let opened = opening(data, || Database::open(data));
    match opened {
        Err(plexus::Error::Io { path, source }) if !created && not_writable(&source) => {
            let db = open_read_only(data)?;
            // The file named, not only the directory: its permissions may differ from the directory's.
            eprintln!(
                "plexus: {} is not writable here ({source}): opened {} read-only",
                path.display(),
                data.display()
            );
            Ok(db)
        }
        opened => {
            let db = report_recovery(data, opened)?;
            if created {
                eprintln!("plexus: created a new, empty database in {}", data.display());
            }
            Ok(db)
        }
    }
}

fn not_writable(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem)
}

/// Opens an existing database for reading, changing nothing on disk: what `info` and `check` inspect must be
/// the files as they are, and a database on read-only media or owned by another user still opens.
fn open_read_only(data: &PathBuf) -> Result<Database, String> {
    require_database(data)?;
    let opened = opening(data, || Database::open_read_only(data));
    report_recovery(data, opened)
}

/// Checkpoints above which opening a database is announced: loading one builds the whole graph in memory,
/// some seconds per hundred megabytes.
const LARGE_CHECKPOINT_BYTES: u64 = 64 << 20;

/// Runs `open` (opening the database in `data`) under a spinner (on a terminal; else one line) when its
/// checkpoint is large, since that would otherwise look like a hang.
fn opening<T>(data: &Path, open: impl FnOnce() -> T) -> T {
    let bytes = std::fs::read_dir(data)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("checkpoint-"))
                .filter_map(|e| e.metadata().ok().map(|m| m.len()))
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0);
    let _spinner = (bytes >= LARGE_CHECKPOINT_BYTES).then(|| {
        let message = format!("plexus: opening {} (a checkpoint of {} MB to load)", data.display(), bytes >> 20);
        progress::busy(message, true).map(progress::Spinner)
    });
    open()
}

/// Commands that inspect or maintain a database must not create one where there was none and report it as fine.
fn require_database(data: &Path) -> Result<(), String> {
    if Database::exists(data) {
        return Ok(());
    }
    let what = if data.exists() { "holds no Plexus database" } else { "does not exist" };
    let hint = interrupted_import(data).map(|h| format!(": {h}")).unwrap_or_default();
    Err(format!("{} {what}{hint}", data.display()))
}

/// What to say of `data` when an import into it was stopped before it finished (its working directory is
/// still there): the directory is otherwise as it was, and the next import clears that away.
fn interrupted_import(data: &Path) -> Option<String> {
    let prefix = plexus_import::publish::INSIDE_PREFIX;
    let left = std::fs::read_dir(data).ok()?.flatten().find(|e| e.file_name().to_string_lossy().starts_with(prefix))?;
    Some(format!(
        "an import into it was interrupted ({} is what it left); run the import again, which clears it away",
        left.file_name().to_string_lossy()
    ))
}

fn report_recovery(data: &Path, opened: plexus::Result<Database>) -> Result<Database, String> {
    let db = opened.map_err(|e| format!("cannot open {}: {e}", data.display()))?;
    if !db.recovery_report().is_clean() {
        eprintln!("plexus: recovery: {}", db.recovery_report());
    }
    if let Some(report) = plexus_import::incremental::interrupted_report(data) {
        eprintln!(
            "plexus: {}\n(this note is shown until an incremental import into {} finishes, or {} is deleted)",
            report.trim_end(),
            data.display(),
            data.join(plexus_import::incremental::JOURNAL).display()
        );
    }
    Ok(db)
}

/// Printing to a full disk or a closed descriptor is the environment's failure, not a bug: one line and status 1
/// instead of a panic report.
fn exit_on_output_errors() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message =
            payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied());
        if let Some(message) = message.filter(|m| m.starts_with("failed printing to std")) {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("plexus: {message}\n").as_bytes());
            std::process::exit(1);
        }
        default_hook(info)
    }));
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    let Some(command) = cli.command else {
        // As `sqlite3` does: no command is the shell, here on the default database.
        let data = PathBuf::from("plexus-data");
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            println!("No command given: the shell on ./{} (plexus --help lists the commands).", data.display());
        }
        return Ok(shell::run(shell::ShellArgs::on(data))?);
    };
    match command {
        Command::Demo { data, items, people, likes, seed } => {
            // Refused before anything is written: the traversal needs a person and items to like.
            if items == 0 || people == 0 {
                return Err(usage(format!("--{} must be at least 1", if items == 0 { "items" } else { "people" })));
            }
            if likes > items {
                return Err(usage(format!(
                    "--likes ({likes}) cannot exceed --items ({items}): a person likes an item once"
                )));
            }
            let db = open(&data, false)?;
            likes::demo(&db, items, people, likes, seed)?;
            Ok(ExitCode::SUCCESS)
        }
        // Every error `import::run` returns is found before any work starts; failures later are its exit status.
        Command::Import(args) => import::run(args).map_err(usage),
        Command::Info { data } => {
            let db = open_read_only(&data)?;
            info(&db);
            // Counts that leave out intact commits after damage describe a database that a write open refuses:
            // status 1, as `check` gives, so a script does not take them as the database's.
            if let Some(damaged) = db.recovery_report().damage_before_commits() {
                eprintln!(
                    "plexus: {} is damaged at offset {}: the {} intact commits after it are not in these counts; \
                     `plexus check` describes the damage, `plexus repair` drops it (keeping what it drops)",
                    damaged.file.display(),
                    damaged.offset,
                    damaged.intact_commits
                );
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { data } => {
            let start = Instant::now();
            require_database(&data)?;
            // Read-only: a check reports what is on disk and repairs nothing (opening for writing does that).
            let opened = opening(&data, || Database::open_read_only(&data));
            let db = match opened {
                Ok(db) => db,
                // Damage that keeps the database from opening is what `check` is for: status 1, like the rest.
                Err(e @ (plexus::Error::Corrupt { .. } | plexus::Error::ForeignFile { .. })) => {
                    println!("damage: {e}");
                    println!("checked {}: DAMAGED (it does not open)", data.display());
                    return Ok(ExitCode::from(1));
                }
                Err(e) => return Err(format!("cannot open {}: {e}", data.display()).into()),
            };
            let report = db.recovery_report();
            if !report.is_clean() {
                eprintln!("plexus: recovery: {report}");
            }
            let snapshot = db.read();
            let busy = progress::busy(
                format!(
                    "plexus check: checking {} and {}",
                    plural(snapshot.node_count(), "node"),
                    plural(snapshot.rel_count(), "relationship")
                ),
                snapshot.rel_count() >= progress::LARGE,
            );
            let mut problems = snapshot.check();
            if let Some(spinner) = busy {
                spinner.finish_and_clear();
            }
            // Commits lost to damage in the log are damage: those after damage still in the log (an open for
            // writing refuses until the file is restored or `plexus repair` sets them aside), and those an earlier
            // recovery set aside. The torn last write of a crash, with no whole commit in it, is not.
            for dropped in &report.dropped {
                if dropped.intact_commits > 0 {
                    problems.push(format!(
                        "{} holds {} intact commits after damage at offset {} ({}): they cannot be replayed; \
                         restore the file from a backup, or run `plexus repair` to go on without them",
                        dropped.file.display(),
                        dropped.intact_commits,
                        dropped.offset,
                        dropped.reason
                    ));
                } else if dropped.unknown_loss && dropped.offset == 0 {
                    problems.push(format!(
                        "{} is a log segment cut inside its header ({}): its commits are lost",
                        dropped.file.display(),
                        dropped.reason
                    ));
                } else if dropped.unknown_loss {
                    problems.push(format!(
                        "{} is damaged at offset {} ({}): the commit there is lost",
                        dropped.file.display(),
                        dropped.offset,
                        dropped.reason
                    ));
                }
            }
            for (file, intact) in Database::set_aside_log(&data).map_err(|e| e.to_string())? {
                match intact {
                    Some(0) => {}
                    Some(n) => problems.push(format!(
                        "{} holds {n} intact commits that a recovery set aside after damage in the log (remove the \
                         file once their loss is accepted)",
                        file.display()
                    )),
                    None if file.to_string_lossy().contains(".log.dropped-at-") => problems.push(format!(
                        "{} holds a damaged commit that a recovery set aside from the end of the log: the commit is \
                         lost (remove the file once that is accepted)",
                        file.display()
                    )),
                    None => problems.push(format!(
                        "{} is a log segment cut inside its header, set aside by a recovery: its commits are lost",
                        file.display()
                    )),
                }
            }
            for p in &problems {
                println!("damage: {p}");
            }
            println!(
                "checked {} and {} in {:.2?}: {}",
                plural(snapshot.node_count(), "node"),
                plural(snapshot.rel_count(), "relationship"),
                start.elapsed(),
                if problems.is_empty() { "consistent" } else { "DAMAGED" }
            );
            Ok(if problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Repair { data } => {
            require_database(&data)?;
            let options = plexus::Options { drop_damaged_log: true, ..plexus::Options::default() };
            let db = Database::open_with(&data, options).map_err(|e| format!("cannot open {}: {e}", data.display()))?;
            let report = db.recovery_report();
            if report.is_clean() {
                println!("{}: no damage found, nothing dropped", data.display());
            } else {
                println!("{}: {report}", data.display());
            }
            let bytes = db.checkpoint().map_err(|e| e.to_string())?;
            println!("checkpoint written: {bytes} bytes; the database opens normally from now on");
            let kept: Vec<_> = Database::set_aside_log(&data)
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|(_, intact)| *intact != Some(0))
                .map(|(file, _)| file.display().to_string())
                .collect();
            if !kept.is_empty() {
                println!(
                    "what was dropped is kept in {}: `plexus check` reports the loss until it is deleted",
                    kept.join(", ")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Checkpoint { data } => {
            require_database(&data)?;
            let db = open(&data, false)?;
            let start = Instant::now();
            let rels = db.read().rel_count();
            let busy =
                progress::busy(format!("plexus checkpoint: writing {rels} relationships"), rels >= progress::LARGE);
            let written = db.checkpoint();
            if let Some(spinner) = busy {
                spinner.finish_and_clear();
            }
            let bytes = written.map_err(|e| e.to_string())?;
            println!("checkpoint written: {bytes} bytes in {:.2?}", start.elapsed());
            Ok(ExitCode::SUCCESS)
        }
        Command::Backup { data, to } => {
            require_database(&data)?;
            let db = match Database::open_read_only(&data) {
                Err(plexus::Error::Locked { .. }) => {
                    return Err(format!(
                        "{} is open in another process: if a server has it, an admin backs it up through the server \
                         with CALL dbms.backup('name') (the server needs --backup-dir)",
                        data.display()
                    )
                    .into())
                }
                opened => report_recovery(&data, opened)?,
            };
            if db.recovery_report().lost_data() {
                return Err(format!(
                    "{} has commits in its log that damage makes unreadable, which a backup would leave out: \
                     `plexus check` describes the damage; restore the damaged file, or `plexus repair` drops it",
                    data.display()
                )
                .into());
            }
            // A server's users go along, so that a server restored from the backup finds its accounts.
            let users = plexus_server::auth::users_file_contents(&data)
                .map_err(|e| format!("cannot read the users of {} to back them up: {e}", data.display()))?;
            let files: Vec<(&str, &[u8])> =
                users.iter().map(|u| (plexus_server::auth::USERS_FILE, u.as_slice())).collect();
            let start = Instant::now();
            let rels = db.read().rel_count();
            let busy = progress::busy(format!("plexus backup: writing {rels} relationships"), rels >= progress::LARGE);
            let written = db.backup_with_files(&to, &files);
            if let Some(spinner) = busy {
                spinner.finish_and_clear();
            }
            let backup = written.map_err(|e| format!("backup to {} failed: {e}", to.display()))?;
            println!(
                "backup written to {}: version {}, {} nodes, {} relationships, {} bytes in {:.2?}",
                to.display(),
                backup.version,
                backup.nodes,
                backup.relationships,
                backup.bytes,
                start.elapsed()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Generate(args) => generate::run(args),
        Command::Query(args) => query::run(args),
        Command::Shell(args) => Ok(shell::run(args)?),
        Command::Serve(args) => {
            without_transparent_huge_pages();
            serve::run(args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Loadgen(args) => loadgen::run(args).map(|_| ExitCode::SUCCESS),
        Command::User(args) => user::run(args).map(|_| ExitCode::SUCCESS),
    }
}

/// A node as a user knows it: its first label and unique key when it has one (`:Node {id: 100}`), with the
/// internal id after.
fn describe_node(r: &plexus::ReadTxn, n: NodeId) -> String {
    let catalog = r.catalog();
    let keyed = r.node_labels(n).into_iter().flatten().find_map(|label| {
        let key = r.unique_key(*label)?;
        let value = r.node_prop(n, key)?;
        let label = catalog.name(TokenKind::Label, label.0)?;
        let key = catalog.name(TokenKind::PropKey, key.0)?;
        let value = plexus::cypher::format::literal(&plexus::cypher::Value::from_stored(value));
        Some(format!(":{label} {{{key}: {value}}}, "))
    });
    format!("{}{n}", keyed.unwrap_or_default())
}

fn info(db: &Database) {
    let r = db.read();
    println!("version {}: {}, {}", r.version(), plural(r.node_count(), "node"), plural(r.rel_count(), "relationship"));
    let catalog = r.catalog();
    for (i, name) in catalog.names(TokenKind::Label).iter().enumerate() {
        let n = r.label_count(plexus::LabelId(i as u32));
        if n > 0 {
            println!("  :{name}  {}", plural(n, "node"));
        }
    }
    let mut per_type = vec![0u64; catalog.names(TokenKind::Type).len()];
    let mut max_out = (0u64, NodeId(0));
    let mut max_in = (0u64, NodeId(0));
    let _ = r.visit_nodes::<()>(|n| {
        let out = r.degree(n, Direction::Out, TypeFilter::All);
        let inc = r.degree(n, Direction::In, TypeFilter::All);
        max_out = max_out.max((out, n));
        max_in = max_in.max((inc, n));
        std::ops::ControlFlow::Continue(())
    });
    let _ = r.visit_all_rels::<()>(|rel| {
        per_type[rel.ty.0 as usize] += 1;
        std::ops::ControlFlow::Continue(())
    });
    for (i, name) in catalog.names(TokenKind::Type).iter().enumerate() {
        if per_type[i] > 0 {
            println!("  [:{name}]  {}", plural(per_type[i], "relationship"));
        }
    }
    if r.rel_count() > 0 {
        println!(
            "  degree: mean {:.2}, max out {} ({}), max in {} ({})",
            r.rel_count() as f64 / r.node_count() as f64,
            max_out.0,
            describe_node(&r, max_out.1),
            max_in.0,
            describe_node(&r, max_in.1)
        );
    }
    if r.rel_count() > 0 {
        println!(
            "  adjacency: {:.1} bytes per relationship in memory (both directions)",
            r.adjacency_bytes() as f64 / r.rel_count() as f64
        );
        if let Some(dir) = db.path() {
            // Checkpoint and log together: what the graph costs on disk right now.
            let on_disk: u64 = std::fs::read_dir(dir)
                .map(|entries| entries.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
                .unwrap_or(0);
            println!(
                "  on disk: {on_disk} bytes, {:.1} bytes per relationship (checkpoint and log)",
                on_disk as f64 / r.rel_count() as f64
            );
        }
    }
}

/// Turns transparent huge pages off for the server process. Under durable inserts the first touch of each 2 MiB
/// page mimalloc had mapped zeroed it inside whichever request touched it: 8 % of the server's samples, and p99
/// of 27-37 ms at 20,000 requests/s on 64 connections against 9-14 ms without (`bench/results/server.md`).
/// mimalloc is now built without its huge-page advice (see the allocator below), which removes that cause; the
/// server still opts out entirely, which also costs the engine's large arrays their huge pages there.
fn without_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and changes only this process's page policy.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0)
    };
}

// The engine allocates many small, short-lived objects (rows, values, persistent-tree nodes); mimalloc serves
// them from thread-local pages, which the server profile showed the system allocator did not. It is built with
// `no_thp`: otherwise it advises the kernel to back all its memory with 2 MiB pages, and memory freed and reused
// in other sizes faults whole huge pages in again. `plexus import` of the patents preset spent 3-5 s of system
// time zeroing and compacting them (against 1.3-1.9 s without) and took 4.3-6.3 s instead of 3.5-3.8 s; opening
// the result (`plexus info`) 5.8-6.6 s instead of 3.2-3.8 s. The arrays reads gain from huge pages ask for them
// themselves (`plexus_storage::prefetch`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Why a command failed, and the exit status that says so, as other Unix tools do: 2 for a command line that asks
/// for something that cannot be done (refused before anything is touched), 1 for what went wrong while doing it (a
/// database that is locked, damaged or missing, a file that cannot be read or written). A plain message is the
/// second kind; [`usage`] makes the first.
#[derive(Debug)]
pub(crate) struct Failure {
    message: String,
    status: u8,
}

/// A command line that cannot be carried out as given: exit status 2.
pub(crate) fn usage(message: impl Into<String>) -> Failure {
    Failure { message: message.into(), status: 2 }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { message, status: 1 }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::from(message.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Some(Command::Serve(_) | Command::Loadgen(_))) {
        // As other Unix tools do, a command whose reader goes away (`plexus query ... | head`) ends quietly.
        // Not the server: a client closing its socket must never end it.
        // SAFETY: called before any other thread exists; SIG_DFL is a valid disposition for SIGPIPE.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    exit_on_output_errors();
    match run(cli) {
        Ok(code) => code,
        Err(Failure { message, status }) => {
            eprintln!("plexus: {message}");
            ExitCode::from(status)
        }
    }
}
