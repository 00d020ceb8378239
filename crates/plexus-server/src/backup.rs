//! `CALL dbms.backup('name')`: an online backup of the served database, for admins, into the directory the
//! operator named with `--backup-dir` (as `DIR/name`). The backup is a new database directory holding what a
//! reader starting now would see, written while clients go on reading and committing
//! ([`plexus::Database::backup`]); it opens by itself (`plexus serve --data DIR/name`, or any other command).
//!
//! The name is one path component of letters, digits, `.`, `_` and `-` (not starting with `.`), so a client
//! never chooses where on the server's disk the backup lands beyond the directory the operator allowed; an
//! existing backup of that name is never overwritten.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use plexus::cypher::{Interrupt, Map, Value};
use plexus::Params;

use crate::auth::Role;
use crate::service::{bookmark, Outcome, ServerError, Service};
use crate::system::{after_call, run_listing, translate, Command};
use crate::users::{resolve, Word};

const PROCEDURE: &str = "dbms.backup";
const FAILED: &str = "Neo.ClientError.Procedure.ProcedureCallFailed";
const COLUMNS: [&str; 7] = ["name", "path", "version", "nodes", "relationships", "bytes", "seconds"];

/// A parsed `CALL dbms.backup(name)` and its `YIELD`/`WHERE`/`RETURN` part as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupCall {
    pub name: Word,
    rest: String,
}

/// `Some` when `query` calls `dbms.backup` (an error when its argument is not one string or parameter).
pub fn parse(query: &str) -> Option<Result<BackupCall, ServerError>> {
    let rest = after_call(query.trim().trim_end_matches(';'), PROCEDURE)?;
    let usage = || {
        ServerError::new(
            "Neo.ClientError.Statement.SyntaxError",
            format!("{PROCEDURE} takes one argument, the backup's name: CALL {PROCEDURE}('nightly')"),
        )
    };
    let Some(args) = rest.trim_start().strip_prefix('(') else { return Some(Err(usage())) };
    let Some(close) = args.find(')') else { return Some(Err(usage())) };
    let (arg, after) = (args[..close].trim(), &args[close + 1..]);
    let name = if let Some(param) = arg.strip_prefix('$') {
        Word::Param(param.trim_matches('`').to_string())
    } else {
        match arg.chars().next() {
            Some(q @ ('\'' | '"')) if arg.len() >= 2 && arg.ends_with(q) => {
                Word::Text(arg[1..arg.len() - 1].to_string())
            }
            _ => return Some(Err(usage())),
        }
    };
    Some(Ok(BackupCall { name, rest: after.trim().to_string() }))
}

/// Whether `name` may name a backup: one path component that cannot climb out of the backup directory or hide.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Runs the backup for a caller with `role` and answers one row with [`COLUMNS`].
pub fn run(
    service: &Service,
    call: &BackupCall,
    role: Role,
    params: &Params,
    interrupt: &Arc<Interrupt>,
) -> Result<Outcome, ServerError> {
    if role < Role::Admin {
        return Err(ServerError::forbidden("Taking a backup", role));
    }
    let Some(dir) = &service.backup_dir else {
        return Err(ServerError::new(
            FAILED,
            "backups through the server are off: start it with --backup-dir DIR (or `backup_dir` in its \
             configuration file) to let admins write them into DIR",
        ));
    };
    let name = resolve(&call.name, "backup name", params)?;
    if !valid_name(&name) {
        return Err(ServerError::new(
            FAILED,
            format!(
                "'{name}' cannot name a backup: use letters, digits, '.', '_' and '-' (not starting with '.'), \
                 up to 128 of them"
            ),
        ));
    }
    let query = translate(&Command::rows(&call.rest), &COLUMNS)?;
    // What would fail at compile time (an unknown variable or function, a write in the YIELD part) fails before
    // anything is written: over no rows, the query reads nothing.
    run_listing(service, &query, Vec::new(), params, interrupt)?;
    let dest = dir.join(&name);
    let started = Instant::now();
    let backup = write(service, dir, &dest)?;
    let fields = [
        ("name", Value::string(name.as_str())),
        ("path", Value::string(dest.display().to_string())),
        ("version", Value::Int(backup.version as i64)),
        ("nodes", Value::Int(backup.nodes as i64)),
        ("relationships", Value::Int(backup.relationships as i64)),
        ("bytes", Value::Int(backup.bytes as i64)),
        ("seconds", Value::Float(started.elapsed().as_secs_f64())),
    ];
    let row: Map = fields.into_iter().map(|(c, v)| (Arc::from(c), v)).collect();
    // The backup is written: a time limit passed while writing it must not report it failed (a retry would then
    // find it there). Its one row is answered without the limit.
    let unlimited = Arc::new(Interrupt::new(None, None));
    let (result, _) = run_listing(service, &query, vec![Value::Map(Arc::new(row))], params, &unlimited)?;
    Ok(Outcome { result, bookmark: Some(bookmark(backup.version)), query_type: "r" })
}

/// Writes the backup, with the server's users (a server restored from it finds its accounts again).
fn write(service: &Service, dir: &Path, dest: &Path) -> Result<plexus::Backup, ServerError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| ServerError::new(FAILED, format!("cannot create the backup directory {}: {e}", dir.display())))?;
    let users = match service.db.path().map(crate::auth::users_file_contents).transpose() {
        Ok(users) => users.flatten(),
        Err(e) => return Err(ServerError::new(FAILED, format!("cannot read the users to back them up: {e}"))),
    };
    let files: Vec<(&str, &[u8])> = users.iter().map(|u| (crate::auth::USERS_FILE, u.as_slice())).collect();
    service.db.backup_with_files(dest, &files).map_err(|e| ServerError::new(FAILED, format!("the backup failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_parse_with_a_literal_or_a_parameter_and_keep_their_yield() {
        let call = parse("CALL dbms.backup('nightly') YIELD path RETURN path").unwrap().unwrap();
        assert_eq!(call.name, Word::Text("nightly".into()));
        assert_eq!(call.rest, "YIELD path RETURN path");
        let call = parse("call DBMS.BACKUP( $name );").unwrap().unwrap();
        assert_eq!(call.name, Word::Param("name".into()));
        assert_eq!(call.rest, "");
        assert!(parse("CALL dbms.backup()").unwrap().is_err());
        assert!(parse("CALL dbms.backup(nightly)").unwrap().is_err());
        assert!(parse("CALL dbms.backup").unwrap().is_err());
        assert!(parse("CALL db.labels()").is_none());
        assert!(parse("MATCH (n) RETURN n").is_none());
    }

    #[test]
    fn names_cannot_leave_the_backup_directory() {
        for good in ["nightly", "2026-12-01", "db_1.v2"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", ".", "..", "../etc", "a/b", ".hidden", "a b", "x\0", &"a".repeat(129)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }
}
