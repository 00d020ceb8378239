//! `plexus query`: run one statement against a database and print its result.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use plexus::{CypherError, Database, Params, ResultValue};

use crate::format::{self, notifications, render, summary, Format};
use crate::streamed::{self, Ended};
use crate::{usage, Failure};

pub(crate) const EXAMPLES: &str = "Examples:
  plexus query --data g \"MATCH (n) RETURN count(n) AS nodes\"
  plexus query --data g -p id=42 -p 'name => \"Ann\"' 'CREATE (:P {id: $id, name: $name})'
  plexus query --data g --format csv -f report.cypher > report.csv
  echo 'RETURN 1 AS one' | plexus query --data g -";

#[derive(Args)]
pub struct QueryArgs {
    /// Database directory.
    #[arg(long, default_value = "plexus-data")]
    data: PathBuf,
    /// The openCypher statement; `-` reads it from standard input.
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    query: Option<String>,
    /// Read the statement from FILE.
    #[arg(long, short = 'f', value_name = "FILE")]
    file: Option<PathBuf>,
    /// A parameter: `name=VALUE`, `name => VALUE`, `name: VALUE` or a map `{a: 1, b: 2}` setting several, where
    /// VALUE is a Cypher literal: `--param id=42 --param name="'Ann'"`.
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Open the database read-only: nothing on disk changes, statements that write fail. (A database in a
    /// directory this user cannot write to is opened this way without asking.)
    #[arg(long)]
    read_only: bool,
}

/// Parses `--param` values (each in any form [`parse_param`] takes) by evaluating each literal as a Cypher
/// expression.
pub fn parse_params(db: &Database, specs: &[String]) -> Result<Params, String> {
    let mut params = Params::new();
    for spec in specs {
        for (name, value) in parse_param(db, spec)? {
            // A second value would silently win: more likely a slip in a long command line than meant.
            if params.insert(name.clone(), value).is_some() {
                return Err(format!("parameter `{name}` is given more than once"));
            }
        }
    }
    Ok(params)
}

/// One parameter setting as `--param` and the shell's `:param` take it (the forms `cypher-shell` takes):
/// `name=VALUE`, `name => VALUE`, `name: VALUE`, or a map `{a: 1, b: 'x'}` setting several at once. VALUE is a
/// Cypher literal. A name is letters, digits and `_` (a leading `$` is allowed); any other name is written in
/// backticks, as in Cypher: `` `my-name` => 1 ``.
pub fn parse_param(db: &Database, spec: &str) -> Result<Vec<(String, plexus::cypher::Value)>, String> {
    let trimmed = spec.trim();
    if trimmed.starts_with('{') {
        let value = literal_value(db, trimmed).map_err(|e| format!("parameters {trimmed}: {e}"))?;
        let plexus::cypher::Value::Map(map) = value else {
            return Err(format!("parameters {trimmed}: not a map"));
        };
        return Ok(map.iter().map(|(k, v)| (k.to_string(), v.clone())).collect());
    }
    let (name, literal) = split_param(trimmed)?;
    let value = literal_value(db, literal).map_err(|e| format!("parameter {name}: {e}"))?;
    Ok(vec![(name, value)])
}

const PARAM_FORMS: &str = "NAME=VALUE, NAME => VALUE, NAME: VALUE or {NAME: VALUE, ...}";

/// Splits `name => literal` (or `name: literal`, `name=literal`) into the name and the literal.
fn split_param(spec: &str) -> Result<(String, &str), String> {
    let body = spec.strip_prefix('$').unwrap_or(spec);
    let (name, rest) = if let Some(quoted) = body.strip_prefix('`') {
        // A backticked name; a backtick inside it is doubled.
        let mut name = String::new();
        let mut chars = quoted.char_indices().peekable();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                if chars.peek().map(|p| p.1) == Some('`') {
                    chars.next();
                    name.push('`');
                } else {
                    end = Some(i + 1);
                    break;
                }
            } else {
                name.push(c);
            }
        }
        let end = end.ok_or_else(|| format!("parameter '{spec}': the name's backtick is not closed"))?;
        (name, &quoted[end..])
    } else {
        let end = body.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(body.len());
        (body[..end].to_string(), &body[end..])
    };
    if name.is_empty() {
        return Err(format!("parameter '{spec}' has no name: write {PARAM_FORMS}"));
    }
    // openCypher's parameter names are symbolic names or decimal integers (`$0`).
    let number = name.bytes().all(|b| b.is_ascii_digit());
    if name.starts_with(|c: char| c.is_ascii_digit()) && !number && !body.starts_with('`') {
        return Err(format!("parameter name '{name}' starts with a digit: write it in backticks, `{name}`"));
    }
    let rest = rest.trim_start();
    let literal = rest
        .strip_prefix("=>")
        .or_else(|| rest.strip_prefix(':'))
        .or_else(|| rest.strip_prefix('='))
        .ok_or_else(|| {
            if rest.is_empty() {
                format!("parameter '{spec}' has no value: write {PARAM_FORMS}")
            } else {
                let whole = body[..body.find(['=', ':']).unwrap_or(body.len())].trim_end();
                format!(
                    "parameter '{spec}': a name is letters, digits and _; write others in backticks (`{whole}` => \
                     VALUE), and the forms are {PARAM_FORMS}"
                )
            }
        })?
        .trim();
    if literal.is_empty() {
        return Err(format!("parameter '{spec}' has no value: write {PARAM_FORMS}"));
    }
    Ok((name, literal))
}

/// Evaluates a literal (`42`, `'text'`, `[1, 2]`, `{a: 1}`, `date('2020-01-01')`) to a parameter value.
/// It must parse as one constant expression on its own, so nothing but a value is ever run, and a syntax
/// error points into the literal as written.
pub fn literal_value(db: &Database, literal: &str) -> Result<plexus::cypher::Value, String> {
    plexus::cypher::parser::parse_constant(literal).map_err(|e| show_error(literal, &e))?;
    let result = db.execute(&format!("RETURN {literal} AS v"), &Params::new()).map_err(|e| e.to_string())?;
    let v: ResultValue = result.rows.into_iter().next().and_then(|r| r.into_iter().next()).unwrap_or_default();
    Ok(v.into_value())
}

/// An error with the offending line of the query and a caret under the position.
pub fn show_error(query: &str, e: &CypherError) -> String {
    show_error_at(query, e, (1, 1))
}

/// [`show_error`] for a statement that starts at `origin` (line and column, from 1) of a longer text, a script:
/// the position the error names is the one in that text.
pub fn show_error_at(query: &str, e: &CypherError, origin: (usize, usize)) -> String {
    let Some(p) = e.position else {
        return if origin.0 > 1 { format!("{e} (in the statement at line {})", origin.0) } else { format!("{e}") };
    };
    let mut shifted = e.clone();
    if let Some(q) = &mut shifted.position {
        if q.line <= 1 {
            q.column += origin.1 - 1;
        }
        q.line = origin.0 + q.line.max(1) - 1;
    }
    let mut s = format!("{shifted}");
    if let Some(line) = query.lines().nth(p.line.saturating_sub(1)) {
        let (snippet, caret) = plexus::cypher::error::excerpt_window(line, p.column.saturating_sub(1));
        s.push_str(&format!("\n  {snippet}\n  {}^", " ".repeat(caret)));
    }
    s
}

impl QueryArgs {
    fn text(&self) -> &str {
        self.query.as_deref().unwrap_or_default()
    }
}

/// The statement to run: the argument, standard input (`-`) or a file (`--file`).
fn statement_text(args: &QueryArgs) -> Result<String, Failure> {
    let read = |what: &str, r: std::io::Result<Vec<u8>>| -> Result<String, Failure> {
        let bytes = r.map_err(|e| format!("reading {what}: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|e| format!("{what} is not valid UTF-8: {e}"))?;
        Ok(text.strip_prefix('\u{feff}').unwrap_or(&text).to_string())
    };
    let stdin = || {
        let mut bytes = Vec::new();
        let r = std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map(|_| bytes);
        read("standard input", r)
    };
    match (&args.query, &args.file) {
        // `--file -` reads standard input, as `cypher-shell -f -` does.
        (_, Some(file)) if file.as_os_str() == "-" => stdin(),
        (_, Some(file)) => read(&file.display().to_string(), std::fs::read(file)),
        (Some(q), None) if q == "-" => stdin(),
        (Some(q), None) => Ok(q.clone()),
        (None, None) => Err(usage("give a statement, - to read it from standard input, or --file FILE")),
    }
}

/// Whether `query` holds more than one statement (`RETURN 1; RETURN 2`): `query` runs one.
fn several_statements(query: &str) -> bool {
    let mut buffer = format!("{query}\n;");
    crate::shell::take_statements(&mut buffer).len() > 1
}

pub fn run(mut args: QueryArgs) -> Result<ExitCode, Failure> {
    let text = statement_text(&args)?;
    let text = text.trim_end();
    let text = text.strip_suffix(';').unwrap_or(text).to_string();
    if text.trim().is_empty() {
        return Err(usage("the statement is empty: give `plexus query` one openCypher statement"));
    }
    if several_statements(&text) {
        return Err(usage(
            "`plexus query` runs one statement and this holds several: run them one at a time, or as a script \
             with `plexus shell --data DIR < script.cypher`",
        ));
    }
    args.query = Some(text);
    // Compiled here only for a path that does not exist or is an empty directory, whose database would be
    // created by opening it.
    let empty_dir = || std::fs::read_dir(&args.data).is_ok_and(|mut entries| entries.next().is_none());
    let missing = (!args.read_only && (!args.data.exists() || empty_dir()))
        .then(|| plexus::cypher::Engine::new().access(args.text()));
    let db = if let Some(access) = missing.filter(|a| !matches!(a, Ok(a) if *a != plexus::cypher::Access::Read)) {
        // Like sqlite3, a database comes into being with its first write: a statement that only reads a path
        // that does not exist (a mistyped one, most often) or an empty directory answers from an empty graph and
        // leaves nothing behind, and so does one that does not compile (its error is what it answers).
        if access.is_ok() {
            eprintln!(
                "plexus: no database at {}: the statement only reads, so it ran on an empty graph and nothing was \
                 created",
                args.data.display()
            );
        }
        Database::in_memory()
    } else {
        crate::open(&args.data, args.read_only)?
    };
    let params = Arc::new(parse_params(&db, &args.params).map_err(usage)?);
    let start = Instant::now();
    if db.engine().access(args.text()).ok() == Some(plexus::cypher::Access::Read) {
        if let Some(code) = stream(&db, &args, &params, start)? {
            return Ok(code);
        }
    }
    match db.execute(args.text(), &params) {
        Ok(result) => {
            print!("{}", render(&result, args.format));
            if let Some(plan) = &result.plan {
                // JSON and CSV on stdout stay parseable: the plan goes beside them.
                if args.format == Format::Table {
                    print!("{plan}");
                } else {
                    eprint!("{plan}");
                }
            }
            // JSON and CSV keep stdout to the rows; what a write changed still goes to stderr.
            if args.format == Format::Table || result.stats.contains_updates() {
                eprint!("{}", notifications(&result));
                eprintln!("{}", summary(&result, start.elapsed()));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(failed(&args, &e)),
    }
}

/// Says `e` on stderr, with where in the statement it is: exit status 1.
fn failed(args: &QueryArgs, e: &CypherError) -> ExitCode {
    eprintln!("{}", show_error(args.text(), e));
    ExitCode::from(1)
}

/// Prints a read-only statement's result as its rows are produced ([`crate::streamed`]). A later row's error ends
/// the output where it is (exit 1). `None` for EXPLAIN of a write, which has no rows to stream: the caller
/// explains it as any statement.
fn stream(db: &Database, args: &QueryArgs, params: &Arc<Params>, start: Instant) -> Result<Option<ExitCode>, String> {
    let stream = match streamed::open(db, args.text(), params.clone(), None) {
        Ok(Some(stream)) => stream,
        Ok(None) => return Ok(None),
        Err(e) => return Ok(Some(failed(args, &e))),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let write_error = |e: std::io::Error| format!("writing the result: {e}");
    let (first, rows) = match streamed::write(stream, args.format, &mut out, &|| false).map_err(write_error)? {
        Ended::Done { first, rows } => (first, rows),
        Ended::Failed(e) => return Ok(Some(failed(args, &e))),
        Ended::Stopped => unreachable!("nothing stops it"),
    };
    if args.format == Format::Table {
        if let Some(plan) = &first.plan {
            std::io::Write::write_all(&mut out, plan.as_bytes())
                .and_then(|_| std::io::Write::flush(&mut out))
                .map_err(write_error)?;
        }
        eprint!("{}", notifications(&first));
        eprintln!("{}", format::summary_of(&first, rows, start.elapsed()));
    } else if let Some(plan) = &first.plan {
        // The output stays parseable: the plan goes beside it.
        eprint!("{plan}");
    }
    Ok(Some(ExitCode::SUCCESS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_names_are_identifiers_or_backticked() {
        assert_eq!(split_param("x=1").unwrap(), ("x".to_string(), "1"));
        assert_eq!(split_param("$x => 'a=b'").unwrap(), ("x".to_string(), "'a=b'"));
        assert_eq!(split_param("x: {a: 1}").unwrap(), ("x".to_string(), "{a: 1}"));
        assert_eq!(split_param("`a``b-c` = 2").unwrap(), ("a`b-c".to_string(), "2"));
        assert!(split_param("=5").unwrap_err().contains("no name"));
        assert!(split_param("my-name=1").unwrap_err().contains("`my-name`"));
        assert!(split_param("first name: \"x\"").unwrap_err().contains("(`first name` => VALUE)"));
        assert!(split_param("x =>").unwrap_err().contains("no value"));
        assert!(split_param("`open = 1").unwrap_err().contains("not closed"));
    }
}
