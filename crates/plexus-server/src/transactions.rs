//! `SHOW TRANSACTIONS` and `TERMINATE TRANSACTIONS`, as in Neo4j: the explicit transactions open (Bolt and HTTP,
//! idle or running a statement) and the auto-commit statements running (a streamed result while a batch of it is
//! produced), and stopping them by id. Both
//! are for admins. Like `SHOW DATABASES`, the rows become a query over a parameter, so `YIELD`, `WHERE` and
//! `RETURN` are ordinary Cypher.

use std::sync::Arc;

use plexus::cypher::{Interrupt, Map, Value};
use plexus::Params;

use crate::service::{Outcome, ServerError, Service};
use crate::system::{next_word, translate, Command, ROWS_PARAM};

/// The columns of `SHOW TRANSACTIONS`, in Neo4j's order (its default ones).
const COLUMNS: [&str; 10] = [
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
];

/// The columns of `TERMINATE TRANSACTIONS`.
const TERMINATE_COLUMNS: [&str; 3] = ["transactionId", "username", "message"];

const PREFIX: &str = "neo4j-transaction-";

/// A parsed `SHOW TRANSACTIONS` or `TERMINATE TRANSACTIONS` command.
#[derive(Debug, PartialEq, Eq)]
pub enum TxCommand {
    /// The ids asked for (all when empty), and the `YIELD`/`WHERE` part.
    Show(Vec<String>, String),
    Terminate(Vec<String>, String),
}

/// Parses `query` if it is one of the two commands. Ids are string literals (`'neo4j-transaction-3'`).
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
    loop {
        let trimmed = rest.trim_start();
        let Some(quote) = trimmed.chars().next().filter(|c| *c == '\'' || *c == '"') else { break };
        let Some(end) = trimmed[1..].find(quote) else {
            return Some(Err(syntax("an unclosed string in the transaction ids")));
        };
        ids.push(trimmed[1..1 + end].to_string());
        rest = trimmed[end + 2..].trim_start();
        match rest.strip_prefix(',') {
            Some(after) => rest = after,
            None => break,
        }
    }
    if !show && ids.is_empty() {
        return Some(Err(syntax("TERMINATE TRANSACTIONS needs the ids of the transactions to stop")));
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
    let (columns, rows, rest): (&[&str], Vec<Value>, &str) = match command {
        TxCommand::Show(ids, rest) => {
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
                            text("Running"),
                            Value::duration(elapsed),
                        ],
                    )
                })
                .collect();
            (&COLUMNS, rows, rest)
        }
        TxCommand::Terminate(ids, rest) => {
            // The rest of the command is checked before anything is stopped.
            translate(&Command::rows(rest), &TERMINATE_COLUMNS)?;
            let rows = ids
                .iter()
                .map(|wanted| {
                    let id = wanted.strip_prefix(PREFIX).and_then(|n| n.parse::<u64>().ok());
                    let message = match id {
                        Some(id) if service.registry.terminate(id) => "Transaction terminated.",
                        _ => "Transaction not found.",
                    };
                    row(&TERMINATE_COLUMNS, vec![text(wanted), text(""), text(message)])
                })
                .collect();
            (&TERMINATE_COLUMNS, rows, rest)
        }
    };
    let query = translate(&Command::rows(rest), columns)?;
    let mut params = params.clone();
    params.insert(ROWS_PARAM.into(), Value::List(Arc::new(rows)));
    let snapshot = service.db.read();
    let result = service.db.engine().execute_read_with(&snapshot, &query, &params, Some(interrupt))?;
    Ok(Outcome { result, bookmark: None, query_type: "r" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised() {
        let c = parse("show transactions").unwrap().unwrap();
        assert_eq!(c, TxCommand::Show(vec![], String::new()));
        let c = parse("SHOW TRANSACTION 'neo4j-transaction-3', \"neo4j-transaction-4\" YIELD currentQuery").unwrap();
        assert_eq!(
            c.unwrap(),
            TxCommand::Show(
                vec!["neo4j-transaction-3".into(), "neo4j-transaction-4".into()],
                "YIELD currentQuery".into()
            )
        );
        let c = parse("TERMINATE TRANSACTIONS 'neo4j-transaction-9';").unwrap().unwrap();
        assert_eq!(c, TxCommand::Terminate(vec!["neo4j-transaction-9".into()], String::new()));
        assert!(parse("TERMINATE TRANSACTIONS").unwrap().is_err());
        assert!(parse("SHOW DATABASES").is_none());
        assert!(parse("MATCH (n) RETURN n").is_none());
    }
}
