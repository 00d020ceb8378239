//! `CALL dbms.clientConfig()`: the settings a Neo4j server hands to client tools. Neo4j Browser calls it on
//! connecting and takes from it whether it may reach the internet (guides, remote content), whether to keep
//! credentials and editor history, and whether to send usage data. Plexus answers with what it does: nothing
//! leaves the machine, so outgoing connections and telemetry are off.

use std::sync::Arc;

use plexus::cypher::{Interrupt, Map, Value};
use plexus::Params;

use crate::service::{Outcome, ServerError, Service};
use crate::system::{after_call, answer_listing, translate, Command};

/// The procedure's columns, in Neo4j's order.
const COLUMNS: [&str; 4] = ["name", "description", "value", "dynamic"];

/// The `YIELD`/`WHERE`/`RETURN` part after `CALL dbms.clientConfig()`, when `query` is that call.
pub fn parse(query: &str) -> Option<String> {
    let query = query.trim().trim_end_matches(';');
    let rest = after_call(query, "dbms.clientConfig")?.trim_start();
    let rest = match rest.strip_prefix('(') {
        Some(args) => args.trim_start().strip_prefix(')')?,
        None => rest,
    };
    Some(rest.trim().to_string())
}

/// `(name, description, value)` of each setting, for a server with authentication `auth_enabled`.
fn settings(auth_enabled: bool) -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "browser.allow_outgoing_connections",
            "Whether Neo4j Browser may fetch guides and other content from the internet (Plexus serves loopback \
             clients and reaches no other host).",
            "false".into(),
        ),
        (
            "browser.credential_timeout",
            "How long Neo4j Browser keeps a logged-in user through inactivity; 0s keeps them until they log out.",
            "0s".into(),
        ),
        (
            "browser.post_connect_cmd",
            "Commands Neo4j Browser runs after it connects, separated by semicolons.",
            String::new(),
        ),
        (
            "browser.remote_content_hostname_whitelist",
            "Hosts Neo4j Browser may fetch remote content from.",
            "localhost".into(),
        ),
        (
            "browser.retain_connection_credentials",
            "Whether Neo4j Browser stores the user's credentials between sessions.",
            "true".into(),
        ),
        ("browser.retain_editor_history", "Whether Neo4j Browser keeps the history of its editor.", "true".into()),
        ("client.allow_telemetry", "Whether client tools may send usage data (Plexus sends none).", "false".into()),
        ("dbms.default_database", "The database a client uses when it names none.", "neo4j".into()),
        ("dbms.security.auth_enabled", "Whether clients must authenticate.", auth_enabled.to_string()),
    ]
}

/// Answers the call, its `YIELD`/`WHERE`/`RETURN` part `rest` run over the settings' rows.
pub fn run(service: &Service, rest: &str, params: &Params, interrupt: &Arc<Interrupt>) -> Result<Outcome, ServerError> {
    let rows = settings(service.auth.enabled())
        .into_iter()
        .map(|(name, description, value)| {
            let values = [Value::string(name), Value::string(description), Value::string(value), Value::Bool(false)];
            let row: Map = COLUMNS.iter().map(|c| Arc::from(*c)).zip(values).collect();
            Value::Map(Arc::new(row))
        })
        .collect();
    let query = translate(&Command::rows(rest), &COLUMNS)?;
    answer_listing(service, &query, rows, params, interrupt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_call_with_or_without_parentheses_and_keeps_what_follows() {
        assert_eq!(parse("CALL dbms.clientConfig()"), Some(String::new()));
        assert_eq!(parse("call DBMS.CLIENTCONFIG;"), Some(String::new()));
        assert_eq!(parse("CALL dbms.clientConfig() YIELD name, value"), Some("YIELD name, value".into()));
        assert_eq!(parse("CALL dbms.clientConfig(1)"), None);
        assert_eq!(parse("CALL dbms.clientConfigs()"), None);
        assert_eq!(parse("RETURN 1"), None);
    }

    #[test]
    fn outgoing_connections_and_telemetry_are_off_and_auth_is_as_configured() {
        let value = |auth: bool, name: &str| settings(auth).into_iter().find(|s| s.0 == name).unwrap().2;
        assert_eq!(value(true, "browser.allow_outgoing_connections"), "false");
        assert_eq!(value(true, "client.allow_telemetry"), "false");
        assert_eq!(value(true, "dbms.security.auth_enabled"), "true");
        assert_eq!(value(false, "dbms.security.auth_enabled"), "false");
    }
}
