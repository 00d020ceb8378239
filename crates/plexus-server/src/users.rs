//! User administration in Cypher, as Neo4j 5 spells it: `SHOW USERS`, `CREATE USER`, `ALTER USER`, `DROP USER`,
//! `GRANT ROLE` / `REVOKE ROLE` (admins only) and `ALTER CURRENT USER SET PASSWORD` (any user, for their own
//! password). These change the users file through [`Auth`], as `plexus user` does; Neo4j runs them on the
//! `system` database, Plexus on either.
//!
//! Plexus gives each user one role (reader, writer or admin): `GRANT ROLE` replaces it, and `REVOKE ROLE` of the
//! user's role leaves them a reader. It does not force password changes, so `CHANGE REQUIRED` is refused rather
//! than ignored; a new user's password change is not required unless asked for, unlike Neo4j.

use std::sync::Arc;

use plexus::cypher::{Interrupt, Map, Value};
use plexus::Params;

use crate::auth::{AuthError, Role};
use crate::service::{Outcome, ServerError, Service};
use crate::system::{run_listing, translate, Command};

/// A user administration command.
#[derive(Debug, PartialEq)]
pub enum UserCommand {
    /// `SHOW USERS`, with the `YIELD`/`WHERE` part that follows.
    Show {
        rest: String,
    },
    Create {
        name: Word,
        password: Word,
        if_not_exists: bool,
        or_replace: bool,
    },
    SetPassword {
        name: Word,
        password: Word,
        if_exists: bool,
    },
    Drop {
        name: Word,
        if_exists: bool,
    },
    Grant {
        role: Word,
        name: Word,
    },
    Revoke {
        role: Word,
        name: Word,
    },
    ChangeOwnPassword {
        old: Word,
        new: Word,
    },
}

/// A name or password as written: literal text, or a parameter to look up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Word {
    Text(String),
    Param(String),
}

#[derive(Debug, PartialEq)]
enum Token {
    /// A bare word: a keyword or a name.
    Bare(String),
    /// A quoted string.
    Quoted(String),
    /// A backquoted name.
    Name(String),
    Param(String),
    /// Anything else (a comma, a number), as written.
    Other(String),
}

/// Splits `text` into tokens with Cypher's own lexer, so strings, escapes, backquoted names, parameters and
/// comments read as they do in any other statement.
fn tokens(text: &str) -> Result<Vec<Token>, String> {
    use plexus::cypher::lexer::{tokenize, Tok};
    let lexed = tokenize(text).map_err(|e| {
        if e.message.starts_with("unterminated") {
            format!("{}: a quote or backquote is not closed", e.message)
        } else {
            e.message
        }
    })?;
    Ok(lexed
        .into_iter()
        .filter_map(|t| {
            Some(match t.tok {
                Tok::Eof => return None,
                Tok::Ident { name, quoted: false } => Token::Bare(name),
                Tok::Ident { name, quoted: true } => Token::Name(name),
                Tok::Str(value) => Token::Quoted(value),
                Tok::Param(name) => Token::Param(name),
                _ => Token::Other(text[t.span.start..t.span.end].to_string()),
            })
        })
        .collect())
}

/// Reads tokens in order, matching keywords.
struct Reader {
    tokens: std::vec::IntoIter<Token>,
    peeked: Option<Token>,
}

impl Reader {
    fn peek(&mut self) -> Option<&Token> {
        if self.peeked.is_none() {
            self.peeked = self.tokens.next();
        }
        self.peeked.as_ref()
    }

    fn next(&mut self) -> Option<Token> {
        self.peek();
        self.peeked.take()
    }

    /// Takes the next token when it is the keyword `word`.
    fn keyword(&mut self, word: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Bare(w)) if w.eq_ignore_ascii_case(word));
        if found {
            self.next();
        }
        found
    }

    fn expect(&mut self, word: &str) -> Result<(), String> {
        if self.keyword(word) {
            Ok(())
        } else {
            Err(format!("expected {word}{}", self.found()))
        }
    }

    fn found(&mut self) -> String {
        match self.peek() {
            None => " at the end of the command".into(),
            Some(Token::Bare(w)) | Some(Token::Name(w)) | Some(Token::Other(w)) => format!(", found '{w}'"),
            Some(Token::Quoted(_)) => ", found a string".into(),
            Some(Token::Param(p)) => format!(", found ${p}"),
        }
    }

    /// A user or role name: a bare word, a backquoted name or a parameter.
    fn name(&mut self, what: &str) -> Result<Word, String> {
        match self.next() {
            Some(Token::Bare(w)) | Some(Token::Name(w)) => Ok(Word::Text(w)),
            Some(Token::Param(p)) => Ok(Word::Param(p)),
            other => {
                self.peeked = other;
                Err(format!("expected a {what} name{}", self.found()))
            }
        }
    }

    /// A password: a string or a parameter.
    fn password(&mut self) -> Result<Word, String> {
        match self.next() {
            Some(Token::Quoted(s)) => Ok(Word::Text(s)),
            Some(Token::Param(p)) => Ok(Word::Param(p)),
            other => {
                self.peeked = other;
                Err(format!("expected a password (a string or a parameter){}", self.found()))
            }
        }
    }

    /// `SET [PLAINTEXT] PASSWORD pw [CHANGE [NOT] REQUIRED]`.
    fn set_password(&mut self) -> Result<Word, String> {
        self.expect("SET")?;
        if self.keyword("ENCRYPTED") {
            return Err("encrypted passwords are not supported: give the password as plain text".into());
        }
        self.keyword("PLAINTEXT");
        self.expect("PASSWORD")?;
        let password = self.password()?;
        if self.keyword("CHANGE") {
            let not = self.keyword("NOT");
            self.expect("REQUIRED")?;
            if !not {
                return Err("Plexus does not force password changes: leave CHANGE REQUIRED out, or say CHANGE NOT \
                            REQUIRED"
                    .into());
            }
        }
        Ok(password)
    }

    fn end(&mut self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(format!("unexpected text after the command{}", self.found())),
        }
    }
}

/// Parses `query` when it is a user administration command: `None` when it is not one, `Some(Err)` when it is
/// one written wrongly (a syntax error naming what was expected).
pub fn parse(query: &str) -> Option<Result<UserCommand, ServerError>> {
    let text = query.trim().trim_end_matches(';').trim_end();
    // Every query passes here: most are not user commands, and are let go before any word is copied.
    if !crate::system::starts_with_word(text, &["SHOW", "CREATE", "ALTER", "DROP", "GRANT", "REVOKE"]) {
        return None;
    }
    let words: Vec<String> = text.split_whitespace().take(3).map(|w| w.to_ascii_uppercase()).collect();
    let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    let ours = match word(0) {
        "SHOW" => word(1) == "USERS",
        "CREATE" => word(1) == "USER" || (word(1) == "OR" && word(2) == "REPLACE"),
        "ALTER" => word(1) == "USER" || (word(1) == "CURRENT" && word(2) == "USER"),
        "DROP" => word(1) == "USER",
        "GRANT" | "REVOKE" => word(1) == "ROLE" || word(1) == "ROLES",
        _ => false,
    };
    if !ours {
        return None;
    }
    if word(0) == "CREATE"
        && word(1) == "OR"
        && !text.split_whitespace().nth(3).is_some_and(|w| w.eq_ignore_ascii_case("USER"))
    {
        return None;
    }
    let syntax = |message: String| ServerError::new("Neo.ClientError.Statement.SyntaxError", message);
    if word(0) == "SHOW" {
        let rest = text.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
        return Some(Ok(UserCommand::Show { rest }));
    }
    Some(tokens(text).and_then(|t| parse_tokens(Reader { tokens: t.into_iter(), peeked: None })).map_err(syntax))
}

fn parse_tokens(mut r: Reader) -> Result<UserCommand, String> {
    let command = if r.keyword("CREATE") {
        let or_replace = r.keyword("OR");
        if or_replace {
            r.expect("REPLACE")?;
        }
        r.expect("USER")?;
        let name = r.name("user")?;
        let if_not_exists = r.keyword("IF");
        if if_not_exists {
            r.expect("NOT")?;
            r.expect("EXISTS")?;
        }
        if or_replace && if_not_exists {
            return Err("CREATE OR REPLACE USER and IF NOT EXISTS cannot be used together".into());
        }
        let password = r.set_password()?;
        UserCommand::Create { name, password, if_not_exists, or_replace }
    } else if r.keyword("ALTER") {
        if r.keyword("CURRENT") {
            r.expect("USER")?;
            r.expect("SET")?;
            r.expect("PASSWORD")?;
            r.expect("FROM")?;
            let old = r.password()?;
            r.expect("TO")?;
            let new = r.password()?;
            UserCommand::ChangeOwnPassword { old, new }
        } else {
            r.expect("USER")?;
            let name = r.name("user")?;
            let if_exists = r.keyword("IF");
            if if_exists {
                r.expect("EXISTS")?;
            }
            let password = r.set_password()?;
            UserCommand::SetPassword { name, password, if_exists }
        }
    } else if r.keyword("DROP") {
        r.expect("USER")?;
        let name = r.name("user")?;
        let if_exists = r.keyword("IF");
        if if_exists {
            r.expect("EXISTS")?;
        }
        UserCommand::Drop { name, if_exists }
    } else {
        let grant = r.keyword("GRANT");
        if !grant {
            r.expect("REVOKE")?;
        }
        if !r.keyword("ROLE") {
            r.expect("ROLES")?;
        }
        let role = r.name("role")?;
        if matches!(r.peek(), Some(Token::Other(w)) if w == ",") {
            return Err("a Plexus user has one role: grant or revoke one at a time".into());
        }
        r.expect(if grant { "TO" } else { "FROM" })?;
        let name = r.name("user")?;
        if grant {
            UserCommand::Grant { role, name }
        } else {
            UserCommand::Revoke { role, name }
        }
    };
    r.end()?;
    Ok(command)
}

/// Runs a parsed command for the calling `user` with `role`.
pub fn run(
    service: &Service,
    command: &UserCommand,
    user: &str,
    role: Role,
    params: &Params,
    interrupt: &Arc<Interrupt>,
) -> Result<Outcome, ServerError> {
    let auth = &service.auth;
    if !auth.enabled() {
        return Err(ServerError::new(
            "Neo.ClientError.Statement.UnsupportedAdministrationCommand",
            "Authentication is off (--no-auth): this server has no users to manage. Users are kept in the data \
             directory and managed with `plexus user add|passwd|remove|list --data DIR` too.",
        ));
    }
    if !matches!(command, UserCommand::ChangeOwnPassword { .. }) && role < Role::Admin {
        return Err(ServerError::forbidden("Managing users", role));
    }
    let text = |w: &Word, what: &str| resolve(w, what, params);
    // What changed, counted as Neo4j counts changes to `system`.
    let mut updates = 0;
    match command {
        UserCommand::Show { rest } => return show(service, rest, params, interrupt),
        UserCommand::Create { name, password, if_not_exists, or_replace } => {
            let (name, password) = (text(name, "user name")?, text(password, "password")?);
            match auth.role_of(&name) {
                Some(_) if *if_not_exists => {}
                Some(existing) if *or_replace => {
                    auth.set_password(&name, &password).map_err(refusal)?;
                    if existing != Role::Reader {
                        auth.set_role(&name, Role::Reader).map_err(refusal)?;
                    }
                    updates = 1;
                }
                _ => {
                    auth.add_user(&name, &password, Role::Reader).map_err(refusal)?;
                    updates = 1;
                }
            }
        }
        UserCommand::SetPassword { name, password, if_exists } => {
            let (name, password) = (text(name, "user name")?, text(password, "password")?);
            match auth.set_password(&name, &password) {
                Err(AuthError::NoSuchUser(_)) if *if_exists => {}
                other => {
                    other.map_err(refusal)?;
                    updates = 1;
                }
            }
        }
        UserCommand::Drop { name, if_exists } => {
            let name = text(name, "user name")?;
            if name == user {
                return Err(invalid(format!(
                    "Failed to delete the specified user '{name}': Deleting yourself is not allowed."
                )));
            }
            match auth.remove_user(&name) {
                Err(AuthError::NoSuchUser(_)) if *if_exists => {}
                other => {
                    other.map_err(refusal)?;
                    updates = 1;
                }
            }
        }
        UserCommand::Grant { role: granted, name } => {
            let (granted, name) = (role_named(&text(granted, "role")?)?, text(name, "user name")?);
            auth.set_role(&name, granted).map_err(refusal)?;
            updates = 1;
        }
        UserCommand::Revoke { role: revoked, name } => {
            let (revoked, name) = (role_named(&text(revoked, "role")?)?, text(name, "user name")?);
            let current = auth.role_of(&name).ok_or_else(|| refusal(AuthError::NoSuchUser(name.clone())))?;
            // Revoking a role the user does not hold changes nothing, as in Neo4j.
            if current == revoked && revoked != Role::Reader {
                auth.set_role(&name, Role::Reader).map_err(refusal)?;
                updates = 1;
            }
        }
        UserCommand::ChangeOwnPassword { old, new } => {
            let (old, new) = (text(old, "password")?, text(new, "password")?);
            if auth.authenticate("basic", user, &old).is_err() {
                return Err(invalid(format!(
                    "User '{user}' failed to alter their own password: Invalid principal or credentials."
                )));
            }
            if old == new {
                return Err(invalid(format!(
                    "User '{user}' failed to alter their own password: Old password and new password cannot be the same."
                )));
            }
            auth.set_password(user, &new).map_err(refusal)?;
            updates = 1;
        }
    }
    let mut result = plexus::QueryResult::default();
    result.stats.system_updates = updates;
    Ok(Outcome { result, bookmark: None, query_type: "s" })
}

/// `SHOW USERS` with Neo4j's columns.
fn show(service: &Service, rest: &str, params: &Params, interrupt: &Arc<Interrupt>) -> Result<Outcome, ServerError> {
    const COLUMNS: [&str; 5] = ["user", "roles", "passwordChangeRequired", "suspended", "home"];
    let rows = service
        .auth
        .users()
        .into_iter()
        .map(|(name, role)| {
            let values = [
                Value::string(name.as_str()),
                Value::List(Arc::new(vec![Value::string(role.name())])),
                Value::Bool(false),
                Value::Bool(false),
                Value::Null,
            ];
            let map: Map = COLUMNS.iter().map(|c| Arc::from(*c)).zip(values).collect();
            Value::Map(Arc::new(map))
        })
        .collect();
    let query = translate(&Command::rows(rest), &COLUMNS)?;
    let (result, _) = run_listing(service, &query, rows, params, interrupt)?;
    Ok(Outcome { result, bookmark: None, query_type: "r" })
}

pub(crate) fn resolve(word: &Word, what: &str, params: &Params) -> Result<String, ServerError> {
    match word {
        Word::Text(t) => Ok(t.clone()),
        Word::Param(p) => match params.get(p) {
            Some(Value::String(s)) => Ok(s.to_string()),
            Some(other) => Err(ServerError::new(
                "Neo.ClientError.Statement.TypeError",
                format!("the {what} parameter ${p} must be a string, not {}", other.type_name()),
            )),
            None => Err(ServerError::new(
                "Neo.ClientError.Statement.ParameterMissing",
                format!("Expected parameter(s): {p}"),
            )),
        },
    }
}

fn role_named(name: &str) -> Result<Role, ServerError> {
    Role::parse(name).ok_or_else(|| {
        invalid(format!("Failed to grant or revoke role '{name}': Plexus has the roles reader, writer and admin."))
    })
}

fn invalid(message: String) -> ServerError {
    ServerError::new("Neo.ClientError.General.InvalidArguments", message)
}

fn refusal(e: AuthError) -> ServerError {
    match e {
        AuthError::Io { .. } => ServerError::new("Neo.DatabaseError.General.UnknownError", e.to_string()),
        _ => invalid(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(q: &str) -> UserCommand {
        parse(q).expect("a user command").expect("valid")
    }

    fn syntax_error(q: &str) -> String {
        parse(q).expect("a user command").expect_err("invalid").message
    }

    fn text(s: &str) -> Word {
        Word::Text(s.into())
    }

    #[test]
    fn parses_neo4j_forms() {
        assert_eq!(
            parsed("CREATE USER alice SET PASSWORD 'se cret' CHANGE NOT REQUIRED;"),
            UserCommand::Create {
                name: text("alice"),
                password: text("se cret"),
                if_not_exists: false,
                or_replace: false
            }
        );
        assert_eq!(
            parsed("create or replace user `bob smith` set plaintext password $pw"),
            UserCommand::Create {
                name: text("bob smith"),
                password: Word::Param("pw".into()),
                if_not_exists: false,
                or_replace: true
            }
        );
        assert_eq!(
            parsed("ALTER CURRENT USER SET PASSWORD FROM 'it\\'s' TO \"new\""),
            UserCommand::ChangeOwnPassword { old: text("it's"), new: text("new") }
        );
        assert_eq!(
            parsed("DROP USER $u IF EXISTS"),
            UserCommand::Drop { name: Word::Param("u".into()), if_exists: true }
        );
        assert_eq!(
            parsed("GRANT ROLE writer TO alice"),
            UserCommand::Grant { role: text("writer"), name: text("alice") }
        );
        assert_eq!(
            parsed("REVOKE ROLES admin FROM alice"),
            UserCommand::Revoke { role: text("admin"), name: text("alice") }
        );
        assert_eq!(
            parsed("SHOW USERS YIELD user WHERE user = 'x'"),
            UserCommand::Show { rest: "YIELD user WHERE user = 'x'".into() }
        );
        assert!(parse("CREATE INDEX FOR (n:User) ON (n.x)").is_none());
        assert!(parse("CREATE OR REPLACE ROLE x").is_none());
        assert!(parse("MATCH (u:USER) RETURN u").is_none());
    }

    #[test]
    fn names_what_is_wrong() {
        assert!(syntax_error("CREATE USER alice SET PASSWORD alice").contains("expected a password"));
        assert!(syntax_error("CREATE USER alice SET PASSWORD 'x' CHANGE REQUIRED").contains("does not force"));
        assert!(syntax_error("ALTER CURRENT USER SET PASSWORD FROM 'a'").contains("expected TO at the end"));
        assert!(syntax_error("DROP USER alice NOW").contains("unexpected text"));
        assert!(syntax_error("CREATE USER 'alice SET").contains("not closed"));
        assert!(syntax_error("GRANT ROLE reader, writer TO alice").contains("one role"));
    }
}
