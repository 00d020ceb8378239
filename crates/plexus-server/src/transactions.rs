//! `SHOW TRANSACTIONS` and `TERMINATE TRANSACTIONS`, as in Neo4j: the explicit transactions open (Bolt and HTTP,
//! idle or running a statement) and the auto-commit statements running (a streamed result while a batch of it is
//! produced), and stopping them by id. Both
//! are for admins. Like `SHOW DATABASES`, the rows become a query over a parameter, so `YIELD`, `WHERE` and
//! `RETURN` are ordinary Cypher.

use std::sync::Arc;

use plexus::cypher::{Interrupt, Map, Value};
use plexus::Params;

use crate::service::{Outcome, ServerError, Service};
use crate::system::{next_word, run_listing, translate, translate_shown, Command};

/// The columns of `SHOW TRANSACTIONS`, in Neo4j's order: its default ones, then those only `YIELD` shows.
const COLUMNS: [&str; 11] = [
    "database",
    "transactionId",
    "currentQueryId",
    "connectionId",
    "clientAddress",
    "username",
    "currentQuery",
    "startTime",
    "status",
    "elapsedTime",
    "metaData",
];

/// How many of [`COLUMNS`] a command without `YIELD` returns.
const DEFAULT_COLUMNS: usize = 10;

/// The columns of `TERMINATE TRANSACTIONS`.
const TERMINATE_COLUMNS: [&str; 3] = ["transactionId", "username", "message"];

const PREFIX: &str = "neo4j-transaction-";

/// A parsed `SHOW TRANSACTIONS` or `TERMINATE TRANSACTIONS` command.
#[derive(Debug, PartialEq, Eq)]
pub enum TxCommand {
    /// The ids asked for (all when empty), and the `YIELD`/`WHERE` part.
    Show(Vec<Id>, String),
    Terminate(Vec<Id>, String),
}

/// Transaction ids as the command gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Id {
    /// A string literal.
    Literal(String),
    /// A parameter (`$ids`), holding a string or a list of strings.
    Param(String),
}

/// The ids of a command, with its parameters' values put in.
fn resolve(ids: &[Id], params: &Params) -> Result<Vec<String>, ServerError> {
    let mut out = Vec::new();
    let wrong = |name: &str| {
        ServerError::new(
            "Neo.ClientError.Statement.ArgumentError",
            format!("the transaction ids must be a string or a list of strings, but ${name} is not"),
        )
    };
    for id in ids {
        match id {
            Id::Literal(s) => out.push(s.clone()),
            Id::Param(name) => match params.get(name.as_str()) {
                None => {
                    return Err(ServerError::new(
                        "Neo.ClientError.Statement.ParameterMissing",
                        format!("Expected parameter(s): {name}"),
                    ))
                }
                Some(Value::String(s)) => out.push(s.to_string()),
                Some(Value::List(items)) => {
                    for item in items.iter() {
                        match item {
                            Value::String(s) => out.push(s.to_string()),
                            _ => return Err(wrong(name)),
                        }
                    }
                }
                Some(_) => return Err(wrong(name)),
            },
        }
    }
    Ok(out)
}

/// Parses `query` if it is one of the two commands. Ids are string literals (`'neo4j-transaction-3'`), separated
/// by commas or in a list literal, or a parameter holding a string or a list of strings (`$ids`), as in Neo4j.
pub fn parse(query: &str) -> Option<Result<TxCommand, ServerError>> {
    let query = query.trim().trim_end_matches(';').trim_end();
    let (verb, rest) = next_word(query)?;
    let show = verb.eq_ignore_ascii_case("SHOW");
    if !show && !verb.eq_ignore_ascii_case("TERMINATE") {
        return None;
    }
    let (what, mut rest) = next_word(rest)?;
    if !(what.eq_ignore_ascii_case("TRANSACTION") || what.eq_ignore_ascii_case("TRANSACTIONS")) {
        return None;
    }
    let mut ids = Vec::new();
    // A list literal: `['neo4j-transaction-3', 'neo4j-transaction-4']`.
    let bracketed = match rest.trim_start().strip_prefix('[') {
        Some(after) => {
            rest = after;
            true
        }
        None => false,
    };
    loop {
        let trimmed = rest.trim_start();
        if let Some(param) = trimmed.strip_prefix('$') {
            let end = param.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(param.len());
            if end == 0 {
                return Some(Err(syntax("a parameter name must follow '$' in the transaction ids")));
            }
            ids.push(Id::Param(param[..end].to_string()));
            rest = param[end..].trim_start();
        } else {
            let Some(quote) = trimmed.chars().next().filter(|c| *c == '\'' || *c == '"') else { break };
            let Some(end) = trimmed[1..].find(quote) else {
                return Some(Err(syntax("an unclosed string in the transaction ids")));
            };
            ids.push(Id::Literal(trimmed[1..1 + end].to_string()));
            rest = trimmed[end + 2..].trim_start();
        }
        match rest.strip_prefix(',') {
            Some(after) => rest = after,
            None => break,
        }
    }
    if bracketed {
        match rest.trim_start().strip_prefix(']') {
            Some(after) => rest = after,
            None => return Some(Err(syntax("a list of transaction ids must end with ']'"))),
        }
    }
    if !show && ids.is_empty() {
        return Some(Err(syntax(
            "TERMINATE TRANSACTIONS needs the ids of the transactions to stop: string literals, a list of them, or \
             a parameter holding a string or a list of strings",
        )));
    }
    let rest = rest.trim().to_string();
    Some(Ok(if show { TxCommand::Show(ids, rest) } else { TxCommand::Terminate(ids, rest) }))
}

fn syntax(message: &str) -> ServerError {
    ServerError::new("Neo.ClientError.Statement.SyntaxError", message)
}

fn text(s: &str) -> Value {
    Value::string(s)
}

fn row(columns: &[&str], values: Vec<Value>) -> Value {
    let map: Map = columns.iter().map(|c| Arc::from(*c)).zip(values).collect();
    Value::Map(Arc::new(map))
}

/// Answers the command.
pub fn run(
    service: &Service,
    command: &TxCommand,
    params: &Params,
    interrupt: &Arc<Interrupt>,
) -> Result<Outcome, ServerError> {
    let (columns, shown, rows, rest): (&[&str], usize, Vec<Value>, &str) = match command {
        TxCommand::Show(ids, rest) => {
            let ids = resolve(ids, params)?;
            let rows = service
                .registry
                .listed()
                .into_iter()
                .filter(|r| ids.is_empty() || ids.iter().any(|wanted| *wanted == format!("{PREFIX}{}", r.id)))
                .map(|r| {
                    let since_epoch = r.started.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                    let started = plexus::value::DateTime {
                        seconds: since_epoch.as_secs() as i64,
                        nanos: since_epoch.subsec_nanos(),
                        offset_seconds: 0,
                        zone: None,
                    };
                    let elapsed = r.since.elapsed();
                    let elapsed = plexus::value::Duration {
                        months: 0,
                        days: 0,
                        seconds: elapsed.as_secs() as i64,
                        nanos: elapsed.subsec_nanos() as i32,
                    };
                    row(
                        &COLUMNS,
                        vec![
                            text("neo4j"),
                            text(&format!("{PREFIX}{}", r.id)),
                            text(&r.statement.as_ref().map_or(String::new(), |(id, _)| format!("query-{id}"))),
                            text(&r.caller.connection),
                            text(&r.caller.client),
                            text(&r.caller.user),
                            text(r.statement.as_ref().map_or("", |(_, query)| query)),
                            Value::DateTime(Box::new(started)),
                            // Neo4j's wording, which tools match on.
                            text(if r.terminated {
                                "Terminated with reason: Status.Transaction.Terminated"
                            } else {
                                "Running"
                            }),
                            Value::duration(elapsed),
                            Value::Map(r.caller.metadata.clone().unwrap_or_default()),
                        ],
                    )
                })
                .collect();
            (&COLUMNS, DEFAULT_COLUMNS, rows, rest)
        }
        TxCommand::Terminate(ids, rest) => {
            // The rest of the command is checked before anything is stopped.
            translate(&Command::rows(rest), &TERMINATE_COLUMNS)?;
            let ids = resolve(ids, params)?;
            let rows = ids
                .iter()
                .map(|wanted| {
                    let id = wanted.strip_prefix(PREFIX).and_then(|n| n.parse::<u64>().ok());
                    // The owner of the transaction stopped, as SHOW TRANSACTIONS lists it.
                    let (owner, message) = match id.and_then(|id| service.registry.terminate_owned(id)) {
                        Some(owner) => (owner, "Transaction terminated."),
                        None => (Arc::from(""), "Transaction not found."),
                    };
                    row(&TERMINATE_COLUMNS, vec![text(wanted), text(&owner), text(message)])
                })
                .collect();
            (&TERMINATE_COLUMNS, TERMINATE_COLUMNS.len(), rows, rest)
        }
    };
    let query = translate_shown(&Command::rows(rest), columns, shown)?;
    let (result, _) = run_listing(service, &query, rows, params, interrupt)?;
    Ok(Outcome { result, bookmark: None, query_type: "r" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised() {
        let literal = |s: &str| Id::Literal(s.into());
        let c = parse("show transactions").unwrap().unwrap();
        assert_eq!(c, TxCommand::Show(vec![], String::new()));
        let c = parse("SHOW TRANSACTION 'neo4j-transaction-3', \"neo4j-transaction-4\" YIELD currentQuery").unwrap();
        assert_eq!(
            c.unwrap(),
            TxCommand::Show(
                vec![literal("neo4j-transaction-3"), literal("neo4j-transaction-4")],
                "YIELD currentQuery".into()
            )
        );
        let c = parse("TERMINATE TRANSACTIONS 'neo4j-transaction-9';").unwrap().unwrap();
        assert_eq!(c, TxCommand::Terminate(vec![literal("neo4j-transaction-9")], String::new()));
        let c = parse("TERMINATE TRANSACTIONS $id").unwrap().unwrap();
        assert_eq!(c, TxCommand::Terminate(vec![Id::Param("id".into())], String::new()));
        let c = parse("TERMINATE TRANSACTION ['neo4j-transaction-1', $more] YIELD message").unwrap().unwrap();
        assert_eq!(
            c,
            TxCommand::Terminate(
                vec![literal("neo4j-transaction-1"), Id::Param("more".into())],
                "YIELD message".into()
            )
        );
        assert!(parse("TERMINATE TRANSACTIONS").unwrap().is_err());
        assert!(parse("TERMINATE TRANSACTIONS $").unwrap().is_err());
        assert!(parse("TERMINATE TRANSACTIONS ['a'").unwrap().is_err());
        assert!(parse("SHOW DATABASES").is_none());
        assert!(parse("MATCH (n) RETURN n").is_none());
    }
}

#[cfg(test)]
mod resolve_tests {
    use super::*;

    #[test]
    fn parameters_give_one_id_or_a_list() {
        let mut params = Params::new();
        params.insert("one".into(), Value::string("neo4j-transaction-1"));
        let list = vec![Value::string("neo4j-transaction-2"), Value::string("neo4j-transaction-3")];
        params.insert("many".into(), Value::List(Arc::new(list)));
        params.insert("number".into(), Value::Int(4));
        let ids = [Id::Param("one".into()), Id::Literal("x".into()), Id::Param("many".into())];
        assert_eq!(
            resolve(&ids, &params).unwrap(),
            vec!["neo4j-transaction-1", "x", "neo4j-transaction-2", "neo4j-transaction-3"]
        );
        assert_eq!(
            resolve(&[Id::Param("number".into())], &params).unwrap_err().code,
            "Neo.ClientError.Statement.ArgumentError"
        );
        assert_eq!(
            resolve(&[Id::Param("absent".into())], &params).unwrap_err().code,
            "Neo.ClientError.Statement.ParameterMissing"
        );
    }
}
