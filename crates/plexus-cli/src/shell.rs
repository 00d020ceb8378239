//! `plexus shell`: an interactive Cypher shell in the manner of `cypher-shell` and `sqlite3`.
//!
//! Statements end with `;` and may span lines. Commands start with `:` (`:help`). With standard input not a
//! terminal, statements are read from it and run in order (`plexus shell < script.cypher`), stopping at the
//! first that fails unless `--fail-at-end` is given.
//!
//! Ctrl-C while a statement runs stops that statement (its changes are rolled back); at the prompt it clears the
//! line. Each statement entered is added to the history file at once, so a session that is killed keeps it.
//!
//! `:begin` opens an explicit transaction, as in `cypher-shell`: the statements after it see each other's changes
//! and nothing is durable until `:commit`; `:rollback` drops them. A statement that fails or is stopped ends the
//! transaction, rolled back (as Neo4j ends a transaction whose statement failed), and the statements after it are
//! refused until `:rollback` (as `psql` refuses them): run one by one, they would commit what was meant to commit
//! together. Leaving the shell with a transaction open rolls it back.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use plexus::cypher::{ErrorKind, Interrupt};
use plexus::{Database, Params};

use crate::format::{notifications, render, summary, summary_of, Format};
use crate::query::{parse_param, show_error_at};
use crate::streamed::{self, Ended};

#[derive(Args)]
pub struct ShellArgs {
    /// Database directory.
    #[arg(long, default_value = "plexus-data")]
    pub(crate) data: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Open the database read-only: nothing on disk changes, statements that write fail. (A database in a
    /// directory this user cannot write to is opened this way without asking.)
    #[arg(long)]
    read_only: bool,
    /// Reading a script: run every statement even after one fails (exit status 1 at the end if any failed).
    /// By default a script stops at the first failing statement or command, with exit status 1.
    #[arg(long)]
    fail_at_end: bool,
    /// A parameter for the session, as `:param` sets one: `name=VALUE`, `name => VALUE`, `name: VALUE` or a map
    /// `{a: 1, b: 2}` setting several, where VALUE is a Cypher literal.
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
}

impl ShellArgs {
    /// The shell on `data` with every option at its default (what `plexus` alone opens).
    pub fn on(data: PathBuf) -> ShellArgs {
        ShellArgs { data, format: Format::Table, read_only: false, fail_at_end: false, params: Vec::new() }
    }
}

pub(crate) const EXAMPLES: &str = "Examples:
  plexus shell --data g                       interactive (statements end with ;)
  plexus shell --data g < script.cypher       run a script, stopping at the first error
  plexus shell --data g --fail-at-end --format csv < script.cypher
  plexus shell --data g -p limit=10 < report.cypher   a script reading $limit";

/// How deep `:source` files may source others: a file that sources itself stops there.
const MAX_SOURCE_DEPTH: usize = 32;

const HELP: &str = "\
Statements end with ';' and may span several lines. Ctrl-C stops a running statement.
  :help                 this help
  :param NAME => VALUE  set a parameter ($NAME) to a Cypher literal (also NAME: VALUE, NAME=VALUE)
  :param {a: 1, b: 2}   set several parameters
  :params               list the parameters
  :clear                forget all parameters
  :format table|json|csv
  :source FILE          run the statements and commands of FILE, stopping at the first that fails
  :begin                open a transaction: what follows is durable only at :commit
  :commit               commit the open transaction
  :rollback             roll the open transaction back
  :exit, :quit          leave (Ctrl-D too; an open transaction is rolled back)";

/// Set by SIGINT (Ctrl-C); a running statement asks it now and then and stops when it is set.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Writes `text` to stdout in pieces, stopping at the first piece after a Ctrl-C: a result of millions of rows
/// takes minutes to scroll past on a terminal. False when stopped.
fn print_stoppable(text: &str) -> bool {
    const PIECE: usize = 64 << 10;
    let mut rest = text;
    while !rest.is_empty() {
        if interrupted() {
            return false;
        }
        let mut end = rest.len().min(PIECE);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        // `print!`, as elsewhere: an output error ends the process the way `exit_on_output_errors` says.
        print!("{}", &rest[..end]);
        rest = &rest[end..];
    }
    true
}

/// Ctrl-C sets [`INTERRUPTED`] instead of ending the process. (While rustyline reads a line, the terminal is in
/// raw mode and Ctrl-C is a key, which clears the line.)
fn catch_sigint() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe; the sigaction struct is fully
    // initialised (zeroed, then its handler and empty mask set).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// How a statement ended.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Done,
    Failed,
    /// Stopped by Ctrl-C, its changes rolled back.
    Interrupted,
}

/// Where the session stands with `:begin`.
enum Transaction {
    /// Statements commit one by one.
    None,
    Open(Box<plexus::WriteTxn>),
    /// A statement of the transaction failed, which rolled it back: until `:rollback` (or `:commit`) ends it,
    /// statements are refused, as `psql` refuses them, so that those meant to run inside it do not commit one by
    /// one.
    Failed,
}

/// What to do after a `:command`.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Exit,
}

struct Session {
    db: Database,
    params: Params,
    format: Format,
    /// On a terminal the plan and the row count follow the rows; from a script they go to stderr, so that
    /// stdout holds only results (JSON or CSV another program reads).
    interactive: bool,
    /// The transaction `:begin` opened, until `:commit` or `:rollback`.
    tx: Transaction,
    /// The `:source` files being read, one inside another, innermost last: errors name the file they are in.
    sourcing: Vec<String>,
    /// A `:source` inside the ones being read stopped and said so: those around it stop without saying it again
    /// (a file sourcing itself would otherwise print it once per level).
    stop_said: bool,
}

impl Session {
    /// Runs one statement that starts at `origin` (line, column) of the input, which its error names.
    fn statement(&mut self, text: &str, origin: (usize, usize)) -> Outcome {
        if interrupted() {
            eprintln!("Interrupted");
            return Outcome::Interrupted;
        }
        if matches!(self.tx, Transaction::Failed) {
            eprintln!(
                "Not run: the transaction failed and was rolled back; :rollback ends it, and statements run again"
            );
            return Outcome::Failed;
        }
        let start = Instant::now();
        let interrupt = Arc::new(Interrupt::new(None, None).with_probe(Duration::from_millis(20), interrupted));
        if !matches!(self.tx, Transaction::Open(_))
            && self.db.engine().access(text).ok() == Some(plexus::cypher::Access::Read)
        {
            if let Some(outcome) = self.stream(text, origin, &interrupt, start) {
                return outcome;
            }
        }
        let outcome = match &mut self.tx {
            Transaction::Open(tx) => self.db.engine().execute_in_with(tx, text, &self.params, Some(&interrupt)),
            _ => self.db.engine().execute_with(self.db.store(), text, &self.params, Some(&interrupt)),
        };
        if outcome.is_err() && matches!(self.tx, Transaction::Open(_)) {
            // Dropping the transaction rolls it back.
            self.tx = Transaction::Failed;
            let why = if interrupted() { "its statement was stopped" } else { "a statement in it failed" };
            eprintln!("The open transaction was rolled back: {why}. Statements are refused until :rollback.");
        }
        match outcome {
            Ok(result) => {
                if !print_stoppable(&render(&result, self.format)) {
                    println!();
                    eprintln!("Interrupted: the rest of the output was not shown");
                    return Outcome::Interrupted;
                }
                self.finished(&result, &summary(&result, start.elapsed()));
                Outcome::Done
            }
            Err(e) => self.failed(text, &e, origin),
        }
    }

    /// Runs a read-only statement outside a transaction, printing its rows as they are produced
    /// ([`crate::streamed`]), so that a large result needs no more memory than a batch; `None` when it cannot
    /// stream (EXPLAIN of a write), to be run as any statement.
    fn stream(
        &mut self,
        text: &str,
        origin: (usize, usize),
        interrupt: &Arc<Interrupt>,
        start: Instant,
    ) -> Option<Outcome> {
        let params = Arc::new(self.params.clone());
        let stream = match streamed::open(&self.db, text, params, Some(interrupt)) {
            Ok(stream) => stream?,
            Err(e) => return Some(self.failed(text, &e, origin)),
        };
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let ended = streamed::write(stream, self.format, &mut out, &interrupted);
        drop(out);
        let (first, rows) = match ended {
            Ok(Ended::Done { first, rows }) => (first, rows),
            Ok(Ended::Failed(e)) => return Some(self.failed(text, &e, origin)),
            Ok(Ended::Stopped) => {
                println!();
                eprintln!("Interrupted: the rest of the output was not shown");
                return Some(Outcome::Interrupted);
            }
            Err(e) => {
                // As `print!` does elsewhere, an output that fails ends the process (`exit_on_output_errors`).
                eprintln!("plexus: failed printing to stdout: {e}");
                std::process::exit(1);
            }
        };
        self.finished(&first, &summary_of(&first, rows, start.elapsed()));
        Some(Outcome::Done)
    }

    /// Prints what follows a statement's rows: its plan, notifications and summary.
    fn finished(&self, result: &plexus::cypher::QueryResult, summary: &str) {
        if self.interactive {
            if let Some(plan) = &result.plan {
                print!("{plan}");
            }
            print!("{}", notifications(result));
            println!("{summary}");
        } else {
            if let Some(plan) = &result.plan {
                eprint!("{plan}");
            }
            eprint!("{}", notifications(result));
            eprintln!("{summary}");
        }
    }

    /// Says why a statement failed (stopped by Ctrl-C, or an error shown where it is): the outcome.
    fn failed(&self, text: &str, e: &plexus::CypherError, origin: (usize, usize)) -> Outcome {
        if e.kind == ErrorKind::Terminated && interrupted() {
            eprintln!("Interrupted");
            return Outcome::Interrupted;
        }
        if let Some(file) = self.sourcing.last() {
            eprintln!("In {file}:");
        }
        eprintln!("{}", show_error_at(text, e, origin));
        Outcome::Failed
    }

    /// Runs a `:command`: whether to go on, or why it failed.
    fn command(&mut self, line: &str) -> Result<Flow, String> {
        let line = line.trim().trim_end_matches(';');
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match cmd {
            ":exit" | ":quit" | ":q" if rest.trim().is_empty() => return Ok(Flow::Exit),
            ":exit" | ":quit" | ":q" => return Err(format!("{cmd} takes no argument")),
            ":help" | ":h" => println!("{HELP}"),
            ":params" => {
                for (k, v) in &self.params {
                    println!("${k}: {}", plexus::cypher::format::literal(v));
                }
            }
            ":clear" => self.params.clear(),
            ":source" => {
                let file = rest.trim();
                let file = [('"', '"'), ('\'', '\'')]
                    .iter()
                    .find_map(|&(open, close)| file.strip_prefix(open)?.strip_suffix(close))
                    .unwrap_or(file);
                if file.is_empty() {
                    return Err("usage: :source FILE".into());
                }
                if self.sourcing.len() >= MAX_SOURCE_DEPTH {
                    return Err(format!(
                        ":source nested more than {MAX_SOURCE_DEPTH} deep (does {file} source itself?)"
                    ));
                }
                let opened = std::fs::File::open(file).map_err(|e| format!("cannot read {file}: {e}"))?;
                self.sourcing.push(file.to_string());
                let code = run_script(self, std::io::BufReader::new(opened), false);
                self.sourcing.pop();
                if code? != ExitCode::SUCCESS {
                    if std::mem::replace(&mut self.stop_said, true) {
                        return Err(String::new());
                    }
                    return Err(format!("{file} stopped at the statement or command above"));
                }
            }
            ":begin" => {
                if !matches!(self.tx, Transaction::None) {
                    return Err("a transaction is already open: :commit or :rollback it first".into());
                }
                self.tx = Transaction::Open(Box::new(self.db.write()));
            }
            ":commit" => {
                let tx = match std::mem::replace(&mut self.tx, Transaction::None) {
                    Transaction::Open(tx) => tx,
                    Transaction::Failed => {
                        return Err("the transaction failed and was rolled back: nothing was committed".into())
                    }
                    Transaction::None => return Err("no open transaction to commit (:begin opens one)".into()),
                };
                (*tx).commit().map_err(|e| format!("the transaction could not commit, and was rolled back: {e}"))?;
                if self.interactive {
                    println!("Committed.");
                }
            }
            ":rollback" => {
                if let Transaction::None = std::mem::replace(&mut self.tx, Transaction::None) {
                    return Err("no open transaction to roll back (:begin opens one)".into());
                }
                if self.interactive {
                    println!("Rolled back.");
                }
            }
            ":format" => match rest.trim() {
                "" => {
                    let name = clap::ValueEnum::to_possible_value(&self.format).expect("every format has a name");
                    println!("{}", name.get_name());
                }
                "table" => self.format = Format::Table,
                "json" => self.format = Format::Json,
                "csv" => self.format = Format::Csv,
                other => return Err(format!("unknown format '{other}': table, json or csv")),
            },
            ":param" => {
                if rest.trim().is_empty() {
                    return Err("usage: :param NAME => VALUE, or :param {NAME: VALUE, ...}".into());
                }
                for (name, value) in parse_param(&self.db, rest)? {
                    self.params.insert(name, value);
                }
            }
            other => return Err(format!("unknown command {other}; :help lists them")),
        }
        Ok(Flow::Continue)
    }

    /// A command typed at the prompt: its error is said (unless said already) and the session goes on.
    fn typed_command(&mut self, line: &str) -> Flow {
        match self.command(line) {
            Ok(flow) => flow,
            Err(e) => {
                if !e.is_empty() {
                    eprintln!("{e}");
                }
                self.stop_said = false;
                Flow::Continue
            }
        }
    }

    /// Leaving the shell: a transaction still open is rolled back, and said so.
    fn close(&mut self) {
        if let Transaction::Open(_) = std::mem::replace(&mut self.tx, Transaction::None) {
            eprintln!("The open transaction was rolled back: it was not committed before the end.");
        }
    }
}

/// A complete statement split off the input, and the byte offset in the buffer where its text starts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub text: String,
    pub offset: usize,
}

/// Splits complete statements (ending with `;` outside strings and comments) off the front of `buffer`.
pub(crate) fn take_statements(buffer: &mut String) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut start = 0;
    // Whether the statement since `start` holds anything but whitespace and comments.
    let mut has_code = false;
    let mut quote: Option<char> = None;
    let mut chars = buffer.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match quote {
            Some(q) => {
                // A backslash escapes inside strings; a backtick in a name is escaped by doubling it, which
                // closing and reopening the quote already covers.
                if c == '\\' && q != '`' {
                    chars.next();
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => {
                    quote = Some(c);
                    has_code = true;
                }
                '/' if chars.peek().map(|p| p.1) == Some('/') => {
                    for (_, c) in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '/' if chars.peek().map(|p| p.1) == Some('*') => {
                    chars.next();
                    // Until the comment closes; an unclosed one waits for more lines, and no ';' inside it
                    // ends a statement.
                    let mut previous = ' ';
                    for (_, c) in chars.by_ref() {
                        if previous == '*' && c == '/' {
                            break;
                        }
                        previous = c;
                    }
                }
                ';' => {
                    let s = &buffer[start..i];
                    if has_code {
                        let offset = start + (s.len() - s.trim_start().len());
                        out.push(Piece { text: s.trim().to_string(), offset });
                    }
                    start = i + 1;
                    has_code = false;
                }
                c if c.is_whitespace() => {}
                _ => has_code = true,
            },
        }
    }
    *buffer = buffer[start..].to_string();
    out
}

/// Whether `buffer` holds nothing but whitespace and complete comments: a `:command` may follow, and the prompt
/// is the first line's.
fn is_blank(buffer: &str) -> bool {
    let mut rest = format!("{buffer}\n;");
    take_statements(&mut rest).is_empty() && rest.trim().is_empty()
}

/// Where the input stands after `text`, which starts at `origin` (line, column; from 1).
fn advance(origin: (usize, usize), text: &str) -> (usize, usize) {
    match text.rfind('\n') {
        None => (origin.0, origin.1 + text.chars().count()),
        Some(last) => (origin.0 + text.matches('\n').count(), text[last + 1..].chars().count() + 1),
    }
}

/// A script read from standard input: statements run in order, each error naming its line in the input.
struct Script<'a> {
    session: &'a mut Session,
    /// Statement text not yet ended by `;`, and where it starts in the input.
    buffer: String,
    origin: (usize, usize),
    fail_at_end: bool,
    failed: bool,
}

/// Why a script stopped before its end.
enum Stop {
    Exit,
    Failed,
    Interrupted,
}

impl Script<'_> {
    /// Runs the statements that `buffer` completes.
    fn run_complete(&mut self) -> Result<(), Stop> {
        let before = self.buffer.clone();
        let pieces = take_statements(&mut self.buffer);
        let consumed = before.len() - self.buffer.len();
        let origin = self.origin;
        self.origin = advance(origin, &before[..consumed]);
        for piece in pieces {
            let at = advance(origin, &before[..piece.offset]);
            match self.session.statement(&piece.text, at) {
                Outcome::Done => {}
                Outcome::Failed => self.fail()?,
                Outcome::Interrupted => return Err(Stop::Interrupted),
            }
        }
        Ok(())
    }

    fn fail(&mut self) -> Result<(), Stop> {
        self.failed = true;
        if self.fail_at_end {
            Ok(())
        } else {
            Err(Stop::Failed)
        }
    }

    /// Line `number` of the input.
    fn line(&mut self, number: usize, line: &str) -> Result<(), Stop> {
        if interrupted() {
            eprintln!("Interrupted");
            return Err(Stop::Interrupted);
        }
        if is_blank(&self.buffer) && line.trim_start().starts_with(':') {
            self.buffer.clear();
            self.origin = (number + 1, 1);
            return match self.session.command(line) {
                Ok(Flow::Continue) => Ok(()),
                Ok(Flow::Exit) => Err(Stop::Exit),
                Err(e) => {
                    match self.session.sourcing.last() {
                        // Said already, by the `:source` inside this one.
                        _ if e.is_empty() => {}
                        Some(file) => eprintln!("{file}, line {number}: {e}"),
                        None => eprintln!("line {number}: {e}"),
                    }
                    if self.session.sourcing.is_empty() {
                        self.session.stop_said = false;
                    }
                    self.fail()
                }
            };
        }
        if self.buffer.trim().is_empty() {
            self.buffer.clear();
            self.origin = (number, 1);
        }
        self.buffer.push_str(line);
        self.buffer.push('\n');
        self.run_complete()?;
        match trailing_command(&mut self.buffer) {
            Some(command) => self.line(number, &command),
            None => Ok(()),
        }
    }

    /// The end of the input: a last statement may end without ';'. Whatever stays unsplit after that is inside
    /// an unclosed string or comment: it runs anyway, so the parser names the problem instead of it passing
    /// silently.
    fn end(&mut self) -> Result<(), Stop> {
        self.buffer.push(';');
        self.run_complete()?;
        let rest = self.buffer.trim().trim_end_matches(';').trim_end().to_string();
        if !rest.is_empty() {
            let at = advance(self.origin, &self.buffer[..self.buffer.len() - self.buffer.trim_start().len()]);
            match self.session.statement(&rest, at) {
                Outcome::Done => {}
                Outcome::Failed => self.fail()?,
                Outcome::Interrupted => return Err(Stop::Interrupted),
            }
        }
        Ok(())
    }
}

/// Runs the statements and commands of `input`, a script.
fn run_script(session: &mut Session, mut input: impl BufRead, fail_at_end: bool) -> Result<ExitCode, String> {
    let mut script = Script { session, buffer: String::new(), origin: (1, 1), fail_at_end, failed: false };
    let mut number = 0;
    let mut bytes = Vec::new();
    let stopped = loop {
        bytes.clear();
        let n = input.read_until(b'\n', &mut bytes).map_err(|e| format!("reading the script: {e}"))?;
        if n == 0 {
            break script.end().err();
        }
        number += 1;
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        let line = std::str::from_utf8(&bytes)
            .map_err(|e| format!("line {number} of the script is not valid UTF-8 (byte {})", e.valid_up_to() + 1))?;
        // A byte order mark, as some editors write, is no part of the first statement.
        let line = if number == 1 { line.strip_prefix('\u{feff}').unwrap_or(line) } else { line };
        if let Err(stop) = script.line(number, line) {
            break Some(stop);
        }
    };
    Ok(match stopped {
        Some(Stop::Interrupted) => ExitCode::from(130),
        Some(Stop::Failed) => ExitCode::from(1),
        Some(Stop::Exit) | None if script.failed => ExitCode::from(1),
        Some(Stop::Exit) | None => ExitCode::SUCCESS,
    })
}

pub fn run(args: ShellArgs) -> Result<ExitCode, String> {
    let db = crate::open(&args.data, args.read_only)?;
    let params = match crate::query::parse_params(&db, &args.params) {
        Ok(params) => params,
        Err(e) => {
            // The command line cannot work as written: status 2, as `plexus query -p` gives.
            eprintln!("plexus: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let interactive = std::io::stdin().is_terminal();
    let mut session = Session {
        db,
        params,
        format: args.format,
        interactive,
        tx: Transaction::None,
        sourcing: Vec::new(),
        stop_said: false,
    };
    catch_sigint();
    if !interactive {
        let code = run_script(&mut session, std::io::stdin().lock(), args.fail_at_end);
        session.close();
        return code;
    }
    println!(
        "Plexus {} shell on {}. Type :help for help, :exit to leave.",
        env!("CARGO_PKG_VERSION"),
        args.data.display()
    );
    let mut editor = rustyline::DefaultEditor::new().map_err(|e| e.to_string())?;
    let history = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".plexus_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    // Each entry goes to the history file as it is entered: a session killed or hung up keeps its history.
    let remember = |editor: &mut rustyline::DefaultEditor, entry: &str| {
        let _ = editor.add_history_entry(entry);
        if let Some(h) = &history {
            let _ = editor.append_history(h);
        }
    };
    let mut buffer = String::new();
    loop {
        // As `cypher-shell` marks an open transaction: `#` for `>`.
        let prompt = match (is_blank(&buffer), !matches!(session.tx, Transaction::None)) {
            (true, false) => "plexus> ",
            (true, true) => "plexus# ",
            (false, _) => "   ...> ",
        };
        match editor.readline(prompt) {
            Ok(line) => {
                if is_blank(&buffer) && line.trim_start().starts_with(':') {
                    buffer.clear();
                    remember(&mut editor, &line);
                    if session.typed_command(&line) == Flow::Exit {
                        break;
                    }
                    continue;
                }
                buffer.push_str(&line);
                buffer.push('\n');
                // A Ctrl-C before these statements (at the prompt) is not meant for them; one while they run
                // stops the statement running and those after it on the line.
                INTERRUPTED.store(false, Ordering::Relaxed);
                let mut interrupted = false;
                for piece in take_statements(&mut buffer) {
                    remember(&mut editor, &format!("{};", piece.text));
                    if session.statement(&piece.text, (1, 1)) == Outcome::Interrupted {
                        interrupted = true;
                        break;
                    }
                }
                if let Some(command) = trailing_command(&mut buffer).filter(|_| !interrupted) {
                    if session.typed_command(&command) == Flow::Exit {
                        break;
                    }
                }
                if is_blank(&buffer) {
                    buffer.clear();
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => buffer.clear(),
            // Bytes that are no UTF-8 (typed, or pasted from elsewhere): the line is dropped, not the session
            // with the statement under way and the parameters.
            Err(rustyline::error::ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                eprintln!("that line was not valid UTF-8 and was discarded");
            }
            Err(rustyline::error::ReadlineError::Eof) => {
                if !is_blank(&buffer) {
                    eprintln!("incomplete statement discarded (statements end with ';')");
                }
                break;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    session.close();
    Ok(ExitCode::SUCCESS)
}

/// A `:command` left on the line after its statements (`RETURN 1; :params`), taken out of `buffer`: no statement
/// starts with `:`, so the rest of such a line is a command, as it would be on a line of its own.
fn trailing_command(buffer: &mut String) -> Option<String> {
    let rest = buffer.trim();
    if !rest.starts_with(':') || rest.contains('\n') {
        return None;
    }
    let command = rest.to_string();
    buffer.clear();
    Some(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(b: &mut String) -> Vec<String> {
        take_statements(b).into_iter().map(|p| p.text).collect()
    }

    #[test]
    fn statements_split_on_semicolons_outside_strings() {
        let mut b = "RETURN ';' AS a; MATCH (n)\n// c;\nRETURN n; RETURN".to_string();
        assert_eq!(texts(&mut b), vec!["RETURN ';' AS a", "MATCH (n)\n// c;\nRETURN n"]);
        assert_eq!(b.trim(), "RETURN");
    }

    #[test]
    fn block_comments_hide_their_semicolons_even_across_lines() {
        let mut b = "/* off:\nMATCH (n) DETACH DELETE n;\n".to_string();
        assert!(texts(&mut b).is_empty(), "nothing ends inside an open comment");
        b.push_str("*/\nRETURN 1 /* ; */ AS a;\n/* only a comment */;\n");
        assert_eq!(texts(&mut b), vec!["/* off:\nMATCH (n) DETACH DELETE n;\n*/\nRETURN 1 /* ; */ AS a"]);
        assert_eq!(b.trim(), "");
        let mut b = "RETURN `a\\`; RETURN 'x\\';' AS y;".to_string();
        assert_eq!(texts(&mut b), vec!["RETURN `a\\`", "RETURN 'x\\';' AS y"]);
    }

    #[test]
    fn only_whitespace_and_complete_comments_are_blank() {
        for blank in ["", "  \n", "// note\n", "// note", "/* a */ \n// b\n"] {
            assert!(is_blank(blank), "{blank:?}");
        }
        for not in ["RETURN 1", "/* open\n", "'open", "// c\nMATCH"] {
            assert!(!is_blank(not), "{not:?}");
        }
    }

    #[test]
    fn positions_advance_over_lines_and_columns() {
        assert_eq!(advance((3, 1), ""), (3, 1));
        assert_eq!(advance((3, 5), "ab"), (3, 7));
        assert_eq!(advance((3, 5), "ab\n\ncd"), (5, 3));
        let mut b = "RETURN 1;\n  RETURN 2;".to_string();
        let pieces = take_statements(&mut b);
        assert_eq!(pieces[1].offset, 12);
    }
}
