//! `plexus query`: run one statement against a database and print its result.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use plexus::{CypherError, Database, Params, ResultValue};

use crate::format::{self, render, summary, Format};

#[derive(Args)]
pub struct QueryArgs {
    /// Database directory.
    #[arg(long, default_value = "plexus-data")]
    data: PathBuf,
    /// The openCypher statement.
    query: String,
    /// A parameter, `name=VALUE` where VALUE is a Cypher literal: `--param id=42 --param name="'Ann'"`.
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Open the database read-only: nothing on disk changes, statements that write fail. (A database in a
    /// directory this user cannot write to is opened this way without asking.)
    #[arg(long)]
    read_only: bool,
}

/// Parses `name=literal` parameters by evaluating each literal as a Cypher expression.
pub fn parse_params(db: &Database, specs: &[String]) -> Result<Params, String> {
    let mut params = Params::new();
    for spec in specs {
        let (name, literal) = spec.split_once('=').ok_or_else(|| format!("parameter '{spec}' is not NAME=VALUE"))?;
        let name = name.trim().trim_start_matches('$');
        let value = literal_value(db, literal.trim()).map_err(|e| format!("parameter {name}: {e}"))?;
        params.insert(name.to_string(), value);
    }
    Ok(params)
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
    let mut s = format!("{e}");
    if let Some(p) = e.position {
        if let Some(line) = query.lines().nth(p.line.saturating_sub(1)) {
            s.push_str(&format!("\n  {line}\n  {}^", " ".repeat(p.column.saturating_sub(1))));
        }
    }
    s
}

pub fn run(args: QueryArgs) -> Result<ExitCode, String> {
    let db = crate::open(&args.data, args.read_only)?;
    let params = Arc::new(parse_params(&db, &args.params)?);
    let start = Instant::now();
    if args.format != Format::Table && db.engine().access(&args.query).ok() == Some(plexus::cypher::Access::Read) {
        if let Some(code) = stream(&db, &args, &params)? {
            return Ok(code);
        }
    }
    match db.execute(&args.query, &params) {
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
            if args.format == Format::Table {
                eprintln!("{}", summary(&result, start.elapsed()));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{}", show_error(&args.query, &e));
            Ok(ExitCode::from(1))
        }
    }
}

/// Prints a read-only statement's JSON or CSV result as its rows are produced, a batch at a time, so an export
/// of any size needs the memory of one batch. A later row's error ends the output where it is (exit 1). `None`
/// for EXPLAIN of a write, which has no rows to stream: the caller explains it as any statement.
fn stream(db: &Database, args: &QueryArgs, params: &Arc<Params>) -> Result<Option<ExitCode>, String> {
    use std::io::Write;
    let stream = match db.engine().execute_read_streaming(db.read(), &args.query, params.clone(), None, 1) {
        Ok(stream) => stream,
        Err(e) if e.detail == "WriteInReadOnlyTransaction" => return Ok(None),
        Err(e) => {
            eprintln!("{}", show_error(&args.query, &e));
            return Ok(Some(ExitCode::from(1)));
        }
    };
    let first = stream.first;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut text = String::new();
    let write_error = |e: std::io::Error| format!("writing the result: {e}");
    format::begin(&first.columns, args.format, &mut text);
    format::rows(&first.rows, args.format, 0, &mut text);
    let mut written = first.rows.len();
    out.write_all(text.as_bytes()).map_err(write_error)?;
    if let Some(mut cursor) = stream.rest {
        loop {
            match cursor.next_batch() {
                Ok(Some(batch)) => {
                    text.clear();
                    format::rows(&batch, args.format, written, &mut text);
                    written += batch.len();
                    out.write_all(text.as_bytes()).map_err(write_error)?;
                }
                Ok(None) => break,
                Err(e) => {
                    out.flush().map_err(write_error)?;
                    eprintln!("{}", show_error(&args.query, &e));
                    return Ok(Some(ExitCode::from(1)));
                }
            }
        }
    }
    text.clear();
    format::end(args.format, &mut text);
    out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(write_error)?;
    if let Some(plan) = &first.plan {
        // The output stays parseable: the plan goes beside it.
        eprint!("{plan}");
    }
    Ok(Some(ExitCode::SUCCESS))
}
