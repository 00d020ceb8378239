//! What a Neo4j server offers beyond Cypher over its graph and that drivers and tools count on: the `system`
//! database's `SHOW DATABASES` family (drivers check credentials with `SHOW DEFAULT DATABASE` and find routing
//! tables for `system`), and the `dbms.components()` and `db.ping()` procedures health checks call.
//!
//! A `SHOW` command becomes a query over its rows as a parameter, so that its `YIELD`, `WHERE` and `RETURN` parts
//! are ordinary Cypher run by the engine rather than a second evaluator.

use std::sync::Arc;

use plexus::cypher::{Interrupt, Map, Value};
use plexus::Params;

use crate::service::{bookmark, Outcome, ServerError, Service, Target};

/// The columns of `SHOW DATABASES`, in Neo4j's order.
const DATABASES_COLUMNS: [&str; 13] = [
    "name",
    "type",
    "aliases",
    "access",
    "address",
    "role",
    "writer",
    "requestedStatus",
    "currentStatus",
    "statusMessage",
    "default",
    "home",
    "constituents",
];

/// The parameter that carries a command's rows into its query.
pub(crate) const ROWS_PARAM: &str = "__plexus_databases";

/// Which databases a `SHOW` command lists.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Listing {
    /// `SHOW DATABASES`, or `SHOW DATABASE name` with the name or the parameter holding it.
    All(Option<Name>),
    /// `SHOW DEFAULT DATABASE` and `SHOW HOME DATABASE`: the graph, without the `default` and `home` columns.
    Default,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Name {
    Literal(String),
    Param(String),
}

/// A parsed `SHOW ... DATABASE(S)` command: what it lists and its `YIELD`/`WHERE`/`RETURN` part as written.
#[derive(Debug, PartialEq, Eq)]
pub struct Command {
    listing: Listing,
    rest: String,
}

impl Command {
    /// A command listing given rows, with `rest` its `YIELD`/`WHERE`/`RETURN` part (for other `SHOW` commands).
    pub(crate) fn rows(rest: &str) -> Command {
        Command { listing: Listing::All(None), rest: rest.to_string() }
    }
}

/// The next word of `s` (up to whitespace, `;` or a backquoted name's end) and what follows it.
/// Whether `query` begins with one of `words` (any case): the parsers every statement passes let most go on this.
pub(crate) fn starts_with_word(query: &str, words: &[&str]) -> bool {
    next_word(query).is_some_and(|(first, _)| words.iter().any(|w| first.eq_ignore_ascii_case(w)))
}

pub(crate) fn next_word(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    if s.is_empty() {
        return None;
    }
    if let Some(quoted) = s.strip_prefix('`') {
        let end = quoted.find('`')? + 2;
        return Some((&s[..end], &s[end..]));
    }
    let end = s.find(|c: char| c.is_whitespace()).unwrap_or(s.len());
    Some((&s[..end], &s[end..]))
}

/// What follows `CALL name` in `query` (the name in any case; its arguments, if any, included), when `query` calls
/// that procedure.
pub(crate) fn after_call<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    let (call, rest) = next_word(query)?;
    if !call.eq_ignore_ascii_case("CALL") {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
    rest[..end].eq_ignore_ascii_case(name).then(|| &rest[end..])
}

/// The database a leading `USE name` names (backquotes taken off) and the statement after it, when the statement
/// has one.
pub fn leading_use(query: &str) -> Option<(&str, &str)> {
    let (first, rest) = next_word(query.trim_start())?;
    if !first.eq_ignore_ascii_case("USE") {
        return None;
    }
    let rest = rest.trim_start();
    let (name, after) = match rest.strip_prefix('`') {
        Some(quoted) => {
            let end = quoted.find('`')?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))).unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    // `USE graph.byName(...)` and the like are the query engine's to read.
    if name.is_empty() || after.starts_with('(') || !after.starts_with(char::is_whitespace) {
        return None;
    }
    Some((name, after.trim_start()))
}

/// Parses `query` if it is a `SHOW` command for databases.
pub fn parse(query: &str) -> Option<Command> {
    let query = query.trim().trim_end_matches(';').trim_end();
    let (show, rest) = next_word(query)?;
    if !show.eq_ignore_ascii_case("SHOW") {
        return None;
    }
    let (what, mut rest) = next_word(rest)?;
    let listing = if what.eq_ignore_ascii_case("DEFAULT") || what.eq_ignore_ascii_case("HOME") {
        let (database, after) = next_word(rest)?;
        if !database.eq_ignore_ascii_case("DATABASE") {
            return None;
        }
        rest = after;
        Listing::Default
    } else if what.eq_ignore_ascii_case("DATABASE") || what.eq_ignore_ascii_case("DATABASES") {
        let name = match next_word(rest) {
            Some((word, _)) if word.eq_ignore_ascii_case("YIELD") || word.eq_ignore_ascii_case("WHERE") => None,
            Some((word, after)) => {
                rest = after;
                Some(match word.strip_prefix('$') {
                    Some(param) => Name::Param(param.trim_matches('`').to_string()),
                    None => Name::Literal(word.trim_matches('`').to_string()),
                })
            }
            None => None,
        };
        Listing::All(name)
    } else {
        return None;
    };
    Some(Command { listing, rest: rest.trim().to_string() })
}

/// What the current user asked about, and the command's `YIELD`/`WHERE` part: `SHOW CURRENT USER` (Neo4j 5's
/// command) or `CALL dbms.showCurrentUser()` (the procedure tools such as Neo4j Browser call on connecting).
pub fn parse_current_user(query: &str) -> Option<(CurrentUser, String)> {
    let query = query.trim().trim_end_matches(';');
    let (first, rest) = next_word(query)?;
    if first.eq_ignore_ascii_case("SHOW") {
        let (current, rest) = next_word(rest)?;
        let (user, rest) = next_word(rest)?;
        return (current.eq_ignore_ascii_case("CURRENT") && user.eq_ignore_ascii_case("USER"))
            .then(|| (CurrentUser::Command, rest.trim().to_string()));
    }
    let rest = after_call(query, "dbms.showCurrentUser")?.trim_start();
    let rest = match rest.strip_prefix('(') {
        Some(args) => args.trim_start().strip_prefix(')')?,
        None => rest,
    };
    Some((CurrentUser::Procedure, rest.trim().to_string()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurrentUser {
    Command,
    Procedure,
}

/// Answers [`parse_current_user`]'s command for `user` with `role`, with Neo4j's columns.
pub fn show_current_user(
    service: &Service,
    (kind, rest): &(CurrentUser, String),
    user: &str,
    role: crate::auth::Role,
    params: &Params,
    interrupt: &Arc<Interrupt>,
) -> Result<Outcome, ServerError> {
    let roles = Value::List(Arc::new(vec![Value::string(role.name())]));
    let mut fields: Vec<(&str, Value)> = match kind {
        CurrentUser::Command => vec![
            ("user", Value::string(user)),
            ("roles", roles),
            ("passwordChangeRequired", Value::Bool(false)),
            ("suspended", Value::Bool(false)),
            ("home", Value::string(Target::Graph.name())),
        ],
        CurrentUser::Procedure => {
            vec![("username", Value::string(user)), ("roles", roles), ("flags", Value::List(Arc::new(Vec::new())))]
        }
    };
    let columns: Vec<&str> = fields.iter().map(|(c, _)| *c).collect();
    let query = translate(&Command::rows(rest), &columns)?;
    let row: Map = fields.drain(..).map(|(c, v)| (Arc::from(c), v)).collect();
    answer_listing(service, &query, vec![Value::Map(Arc::new(row))], params, interrupt)
}

/// Runs a listing's `query` (from [`translate`]) over its `rows`, given as the list parameter it unwinds;
/// returns the result and the version of the snapshot it read.
pub(crate) fn run_listing(
    service: &Service,
    query: &str,
    rows: Vec<Value>,
    params: &Params,
    interrupt: &Arc<Interrupt>,
) -> Result<(plexus::QueryResult, u64), ServerError> {
    let mut params = params.clone();
    params.insert(ROWS_PARAM.into(), Value::List(Arc::new(rows)));
    let snapshot = service.db.read();
    // What the engine finds is about the query written here, not the command the client sent: its warnings
    // (a map's keys are no property keys of the graph) would be noise, and an error's place would point past
    // the command's end. The message stays; the place goes.
    let mut result = service.db.engine().execute_read_with(&snapshot, query, &params, Some(interrupt)).map_err(
        |mut e: plexus::CypherError| {
            e.position = None;
            e
        },
    )?;
    result.notifications.clear();
    Ok((result, snapshot.version()))
}

/// Whether `query` calls one of the procedures the `system` database answers.
pub fn is_system_procedure(query: &str) -> bool {
    ["dbms.components", "db.ping"].iter().any(|name| after_call(query, name).is_some())
}

/// The administration command `query` starts with (its first words, upper-cased), when it is one the `system`
/// database runs in Neo4j but Plexus does not: users, roles, privileges and databases.
fn administration_command(query: &str) -> Option<String> {
    // Every query passes here: most are not commands, and are let go before any word is copied.
    if !starts_with_word(
        query,
        &["GRANT", "DENY", "REVOKE", "CREATE", "DROP", "RENAME", "START", "STOP", "ALTER", "SHOW"],
    ) {
        return None;
    }
    let words: Vec<String> = query.split_whitespace().take(3).map(|w| w.to_ascii_uppercase()).collect();
    let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    let object = |w: &str| {
        matches!(
            w.trim_end_matches(';'),
            "USER"
                | "USERS"
                | "ROLE"
                | "ROLES"
                | "DATABASE"
                | "DATABASES"
                | "ALIAS"
                | "ALIASES"
                | "PRIVILEGES"
                | "COMPOSITE"
        )
    };
    let named = match word(0) {
        "GRANT" | "DENY" | "REVOKE" => 1,
        "CREATE" | "DROP" | "RENAME" | "START" | "STOP" if object(word(1)) => 2,
        "CREATE" | "ALTER" | "SHOW" if word(1) == "OR" || word(1) == "CURRENT" => 3,
        "ALTER" if object(word(1)) => 2,
        "SHOW" if object(word(1)) || object(word(2)) => 3,
        _ => return None,
    };
    Some(words[..named.min(words.len())].join(" "))
}

/// The refusal of a statement `system` does not run, with Neo4j's code for it.
pub fn not_a_system_command(query: &str) -> ServerError {
    unsupported_administration(query).unwrap_or_else(|| not_a_system_command_plain(query))
}

/// The refusal of a user, role, privilege or database command, on either database, when `query` is one.
pub fn unsupported_administration(query: &str) -> Option<ServerError> {
    let command = administration_command(query)?;
    Some(ServerError::new(
        "Neo.ClientError.Statement.UnsupportedAdministrationCommand",
        format!(
            "Unsupported administration command: {command}. Plexus has one database, neo4j, and three fixed \
                 roles, reader, writer and admin. Users are managed with SHOW USERS, CREATE USER, ALTER USER, \
                 DROP USER and GRANT/REVOKE ROLE (one role per user), or from the command line: `plexus user \
                 add|passwd|remove|list --data DIR`."
        ),
    ))
}

fn not_a_system_command_plain(query: &str) -> ServerError {
    ServerError::new(
        "Neo.ClientError.Statement.NotSystemDatabaseError",
        format!(
            "Not a recognised system command or procedure. This Cypher command can only be executed in a user \
             database: {}. The 'system' database answers SHOW DATABASES, SHOW DATABASE name, SHOW DEFAULT \
             DATABASE, SHOW HOME DATABASE, SHOW CURRENT USER, SHOW TRANSACTIONS, the user commands, CALL \
             dbms.components(), CALL db.ping(), CALL dbms.showCurrentUser() and CALL dbms.clientConfig().",
            query.trim()
        ),
    )
}

/// One row of `SHOW DATABASES`.
fn row(target: Target, address: &str) -> Value {
    let text = |s: &str| Value::string(s);
    let empty = || Value::List(Arc::new(vec![]));
    let graph = target == Target::Graph;
    let values = [
        text(target.name()),
        text(if graph { "standard" } else { "system" }),
        empty(),
        text("read-write"),
        text(address),
        text("primary"),
        Value::Bool(true),
        text("online"),
        text("online"),
        text(""),
        Value::Bool(graph),
        Value::Bool(graph),
        empty(),
    ];
    let map: Map = DATABASES_COLUMNS.iter().map(|c| Arc::from(*c)).zip(values).collect();
    Value::Map(Arc::new(map))
}

/// Whether `word` occurs in `text` as a whole word, in any case.
fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w.eq_ignore_ascii_case(word))
}

/// The names a `YIELD` list binds, as written (`a`, `b AS c` → `a`, `c`), up to the clause that ends it.
fn yielded_names(items: &str) -> Vec<String> {
    let mut end = items.len();
    for keyword in ["ORDER", "SKIP", "OFFSET", "LIMIT", "WHERE"] {
        let upper = items.to_ascii_uppercase();
        let found = upper.match_indices(keyword).find(|(i, _)| {
            let before = upper[..*i].chars().next_back();
            let after = upper[i + keyword.len()..].chars().next();
            let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            boundary(before) && boundary(after)
        });
        if let Some((i, _)) = found {
            end = end.min(i);
        }
    }
    items[..end]
        .split(',')
        .map(|item| {
            let words: Vec<&str> = item.split_whitespace().collect();
            match words.as_slice() {
                [.., as_, alias] if as_.eq_ignore_ascii_case("AS") => alias.to_string(),
                _ => item.trim().to_string(),
            }
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// The Cypher query that answers `command` over its rows in `$__plexus_databases`.
pub(crate) fn translate(command: &Command, columns: &[&str]) -> Result<String, ServerError> {
    translate_shown(command, columns, columns.len())
}

/// [`translate`] for a listing whose first `shown` columns are those it returns without `YIELD` (`YIELD *` and
/// `YIELD` by name reach all).
pub(crate) fn translate_shown(command: &Command, columns: &[&str], shown: usize) -> Result<String, ServerError> {
    let bind: Vec<String> = columns.iter().map(|c| format!("db.{c} AS {c}")).collect();
    let all: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let default = all[..shown].join(", ");
    let mut query = format!("UNWIND ${ROWS_PARAM} AS db WITH {}", bind.join(", "));
    let rest = command.rest.as_str();
    match next_word(rest) {
        None => query += &format!(" RETURN {default}"),
        Some((w, _)) if w.eq_ignore_ascii_case("WHERE") => query += &format!(" {rest} RETURN {default}"),
        Some((w, items)) if w.eq_ignore_ascii_case("YIELD") => {
            query += &format!(" WITH {items}");
            if !has_word(items, "RETURN") {
                let names = if items.trim_start().starts_with('*') { all } else { yielded_names(items) };
                query += &format!(" RETURN {}", names.join(", "));
            }
        }
        Some((w, _)) => {
            return Err(ServerError::new(
                "Neo.ClientError.Statement.SyntaxError",
                format!("Invalid input '{w}': expected YIELD, WHERE or the end of the SHOW command"),
            ))
        }
    }
    Ok(query)
}

/// Answers a `SHOW ... DATABASE(S)` command; `address` is what the databases' `address` column says.
pub fn show(
    service: &Service,
    command: &Command,
    params: &Params,
    address: &str,
    interrupt: &Arc<Interrupt>,
) -> Result<Outcome, ServerError> {
    let (wanted, columns): (Vec<Target>, Vec<&str>) = match &command.listing {
        // Those of SHOW DATABASES but `default` and `home`.
        Listing::Default => {
            (vec![Target::Graph], DATABASES_COLUMNS.into_iter().filter(|c| !matches!(*c, "default" | "home")).collect())
        }
        Listing::All(name) => {
            let name = match name {
                None => None,
                Some(Name::Literal(n)) => Some(n.clone()),
                Some(Name::Param(p)) => match params.get(p) {
                    Some(Value::String(s)) => Some(s.to_string()),
                    Some(_) => {
                        return Err(ServerError::new(
                            "Neo.ClientError.Statement.TypeError",
                            format!("the database name in ${p} must be a string"),
                        ))
                    }
                    None => {
                        return Err(ServerError::new(
                            "Neo.ClientError.Statement.ParameterMissing",
                            format!("Expected parameter(s): {p}"),
                        ))
                    }
                },
            };
            let targets = [Target::Graph, Target::System];
            let wanted = targets.into_iter().filter(|t| name.as_ref().is_none_or(|n| n.eq_ignore_ascii_case(t.name())));
            (wanted.collect(), DATABASES_COLUMNS.to_vec())
        }
    };
    let query = translate(command, &columns)?;
    let rows = wanted.into_iter().map(|t| row(t, address)).collect();
    answer_listing(service, &query, rows, params, interrupt)
}

/// [`run_listing`] as a read's outcome, with the bookmark of the snapshot it read.
pub(crate) fn answer_listing(
    service: &Service,
    query: &str,
    rows: Vec<Value>,
    params: &Params,
    interrupt: &Arc<Interrupt>,
) -> Result<Outcome, ServerError> {
    let (result, version) = run_listing(service, query, rows, params, interrupt)?;
    Ok(Outcome { result, bookmark: Some(bookmark(version)), query_type: "r" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn administration_commands_point_to_the_command_line() {
        for q in [
            "CREATE USER ann SET PASSWORD 'x'",
            "ALTER CURRENT USER SET PASSWORD FROM 'a' TO 'b'",
            "alter user bob set password 'x'",
            "SHOW USERS",
            "SHOW POPULATED ROLES",
            "GRANT ROLE reader TO ann",
            "CREATE OR REPLACE ROLE r",
            "DROP DATABASE other",
            "CREATE DATABASE other;",
        ] {
            let e = not_a_system_command(q);
            assert_eq!(e.code, "Neo.ClientError.Statement.UnsupportedAdministrationCommand", "{q}");
            assert!(e.message.contains("plexus user"), "{q}: {}", e.message);
        }
        for q in ["MATCH (n) RETURN n", "CREATE (n:User)", "SHOW INDEXES", "DROP INDEX i"] {
            assert_eq!(not_a_system_command(q).code, "Neo.ClientError.Statement.NotSystemDatabaseError", "{q}");
        }
    }

    #[test]
    fn show_commands_are_recognised() {
        let c = parse("  show default   database ;").unwrap();
        assert_eq!(c.listing, Listing::Default);
        assert_eq!(parse("SHOW HOME DATABASE").unwrap().listing, Listing::Default);
        assert_eq!(parse("SHOW DATABASES").unwrap().listing, Listing::All(None));
        assert_eq!(leading_use("USE system SHOW DATABASES"), Some(("system", "SHOW DATABASES")));
        assert_eq!(leading_use("  use `neo4j`\nSHOW TRANSACTIONS"), Some(("neo4j", "SHOW TRANSACTIONS")));
        assert_eq!(leading_use("USE graph.byName('neo4j') MATCH (n) RETURN n"), None);
        assert_eq!(leading_use("USE neo4j"), None);
        assert_eq!(leading_use("MATCH (use) RETURN use"), None);
        let c = parse("SHOW DATABASE `Neo4j` YIELD name").unwrap();
        assert_eq!(c.listing, Listing::All(Some(Name::Literal("Neo4j".into()))));
        assert_eq!(c.rest, "YIELD name");
        let c = parse("SHOW DATABASES WHERE name = 'x'").unwrap();
        assert_eq!((c.listing, c.rest.as_str()), (Listing::All(None), "WHERE name = 'x'"));
        assert_eq!(parse("SHOW DATABASE $db").unwrap().listing, Listing::All(Some(Name::Param("db".into()))));
        assert!(parse("SHOW INDEXES").is_none());
        assert!(parse("MATCH (n) RETURN n").is_none());
    }

    #[test]
    fn yield_lists_name_their_columns() {
        assert_eq!(yielded_names(" name, currentStatus AS status ORDER BY name LIMIT 1"), ["name", "status"]);
        assert_eq!(yielded_names("name WHERE name = 'neo4j'"), ["name"]);
        assert!(is_system_procedure("call  dbms.components() YIELD name"));
        assert!(is_system_procedure("CALL db.ping"));
        assert!(!is_system_procedure("CALL db.labels()"));
    }
}
