//! `plexus shell`: an interactive Cypher shell in the manner of `cypher-shell` and `sqlite3`.
//!
//! Statements end with `;` and may span lines. Commands start with `:` (`:help`). With standard input not a
//! terminal, statements are read from it and run in order (`plexus shell < script.cypher`).

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use plexus::{Database, Params};

use crate::format::{render, summary, Format};
use crate::query::{literal_value, show_error};

#[derive(Args)]
pub struct ShellArgs {
    /// Database directory.
    #[arg(long, default_value = "plexus-data")]
    data: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Open the database read-only: nothing on disk changes, statements that write fail. (A database in a
    /// directory this user cannot write to is opened this way without asking.)
    #[arg(long)]
    read_only: bool,
}

const HELP: &str = "\
Statements end with ';' and may span several lines.
  :help                 this help
  :param NAME => VALUE  set a parameter ($NAME) to a Cypher literal
  :params               list the parameters
  :clear                forget all parameters
  :format table|json|csv
  :exit, :quit          leave (Ctrl-D too)";

struct Session {
    db: Database,
    params: Params,
    format: Format,
    failed: bool,
    /// On a terminal the plan and the row count follow the rows; from a script they go to stderr, so that
    /// stdout holds only results (JSON or CSV another program reads).
    interactive: bool,
}

impl Session {
    fn statement(&mut self, text: &str) {
        let start = Instant::now();
        match self.db.execute(text, &self.params) {
            Ok(result) => {
                print!("{}", render(&result, self.format));
                let summary = summary(&result, start.elapsed());
                if self.interactive {
                    if let Some(plan) = &result.plan {
                        print!("{plan}");
                    }
                    println!("{summary}");
                } else {
                    if let Some(plan) = &result.plan {
                        eprint!("{plan}");
                    }
                    eprintln!("{summary}");
                }
            }
            Err(e) => {
                self.failed = true;
                eprintln!("{}", show_error(text, &e));
            }
        }
    }

    /// Runs a `:command`; returns false to leave.
    fn command(&mut self, line: &str) -> bool {
        let line = line.trim().trim_end_matches(';');
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match cmd {
            ":exit" | ":quit" | ":q" => return false,
            ":help" | ":h" => println!("{HELP}"),
            ":params" => {
                for (k, v) in &self.params {
                    println!("${k}: {}", plexus::cypher::format::literal(v));
                }
            }
            ":clear" => self.params.clear(),
            ":format" => match rest.trim() {
                "table" => self.format = Format::Table,
                "json" => self.format = Format::Json,
                "csv" => self.format = Format::Csv,
                other => eprintln!("unknown format '{other}': table, json or csv"),
            },
            ":param" => {
                let parsed = rest.split_once("=>").or_else(|| rest.split_once(':')).or_else(|| rest.split_once('='));
                match parsed {
                    Some((name, value)) => {
                        let name = name.trim().trim_start_matches('$').to_string();
                        match literal_value(&self.db, value.trim()) {
                            Ok(v) => {
                                self.params.insert(name, v);
                            }
                            Err(e) => eprintln!("{e}"),
                        }
                    }
                    None => eprintln!("usage: :param NAME => VALUE"),
                }
            }
            other => eprintln!("unknown command {other}; :help lists them"),
        }
        true
    }
}

/// Splits complete statements (ending with `;` outside strings and comments) off the front of `buffer`.
fn take_statements(buffer: &mut String) -> Vec<String> {
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
                    let s = buffer[start..i].trim();
                    if has_code {
                        out.push(s.to_string());
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

pub fn run(args: ShellArgs) -> Result<ExitCode, String> {
    let db = crate::open(&args.data, args.read_only)?;
    let interactive = std::io::stdin().is_terminal();
    let mut session = Session { db, params: Params::new(), format: args.format, failed: false, interactive };
    if !interactive {
        let mut buffer = String::new();
        for line in std::io::stdin().lock().lines() {
            let line = line.map_err(|e| e.to_string())?;
            if buffer.trim().is_empty() && line.trim_start().starts_with(':') {
                if !session.command(&line) {
                    break;
                }
                continue;
            }
            buffer.push_str(&line);
            buffer.push('\n');
            for s in take_statements(&mut buffer) {
                session.statement(&s);
            }
        }
        // A last statement may end without ';'. Whatever stays unsplit after that is inside an unclosed
        // string or comment: run it anyway, so the parser names the problem instead of it passing silently.
        buffer.push(';');
        for s in take_statements(&mut buffer) {
            session.statement(&s);
        }
        let rest = buffer.trim().trim_end_matches(';').trim_end();
        if !rest.is_empty() {
            session.statement(rest);
        }
        return Ok(if session.failed { ExitCode::from(1) } else { ExitCode::SUCCESS });
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
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.trim().is_empty() { "plexus> " } else { "   ...> " };
        match editor.readline(prompt) {
            Ok(line) => {
                if buffer.trim().is_empty() && line.trim_start().starts_with(':') {
                    let _ = editor.add_history_entry(line.as_str());
                    if !session.command(&line) {
                        break;
                    }
                    continue;
                }
                buffer.push_str(&line);
                buffer.push('\n');
                let statements = take_statements(&mut buffer);
                for s in statements {
                    let _ = editor.add_history_entry(format!("{s};"));
                    session.statement(&s);
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => buffer.clear(),
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(e.to_string()),
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::take_statements;

    #[test]
    fn statements_split_on_semicolons_outside_strings() {
        let mut b = "RETURN ';' AS a; MATCH (n)\n// c;\nRETURN n; RETURN".to_string();
        assert_eq!(take_statements(&mut b), vec!["RETURN ';' AS a", "MATCH (n)\n// c;\nRETURN n"]);
        assert_eq!(b.trim(), "RETURN");
    }

    #[test]
    fn block_comments_hide_their_semicolons_even_across_lines() {
        let mut b = "/* off:\nMATCH (n) DETACH DELETE n;\n".to_string();
        assert!(take_statements(&mut b).is_empty(), "nothing ends inside an open comment");
        b.push_str("*/\nRETURN 1 /* ; */ AS a;\n/* only a comment */;\n");
        assert_eq!(take_statements(&mut b), vec!["/* off:\nMATCH (n) DETACH DELETE n;\n*/\nRETURN 1 /* ; */ AS a"]);
        assert_eq!(b.trim(), "");
        let mut b = "RETURN `a\\`; RETURN 'x\\';' AS y;".to_string();
        assert_eq!(take_statements(&mut b), vec!["RETURN `a\\`", "RETURN 'x\\';' AS y"]);
    }
}
