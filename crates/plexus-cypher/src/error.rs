//! Query errors: what went wrong, where in the query text, and the openCypher error type and phase that clients
//! (and the TCK) match on.

use std::fmt;

/// The openCypher error types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    SyntaxError,
    SemanticError,
    ParameterMissing,
    TypeError,
    ArgumentError,
    ArithmeticError,
    EntityNotFound,
    PropertyNotFound,
    ConstraintVerificationFailed,
    ConstraintValidationFailed,
    ProcedureError,
    /// A write-write conflict with a concurrent transaction: retry the transaction.
    Conflict,
    /// The storage engine failed (I/O, corruption): not the query's fault.
    Storage,
    /// The query ran past its time limit.
    Timeout,
    /// The query was cancelled (its client went away, or the server is shutting down).
    Terminated,
    /// The query's result grew past its memory limit.
    MemoryLimit,
    /// The statement writes, but the database was opened read-only.
    ReadOnlyDatabase,
    /// A file `LOAD CSV` names cannot be read (missing, not allowed, not CSV text).
    ExternalResource,
    /// A statement that commits in parts (`CALL { } IN TRANSACTIONS`) failed after some parts committed: not
    /// to be retried whole, since running it again repeats them.
    ExecutionFailed,
}

impl ErrorKind {
    /// An error of the values a row holds (a type, an argument, arithmetic, a missing entity, a procedure's
    /// answer), rather than of the statement as a whole (a file it cannot read, its time or memory limit).
    pub fn is_about_a_row(self) -> bool {
        matches!(
            self,
            ErrorKind::TypeError
                | ErrorKind::ArgumentError
                | ErrorKind::ArithmeticError
                | ErrorKind::EntityNotFound
                | ErrorKind::PropertyNotFound
                | ErrorKind::ProcedureError
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::SyntaxError => "SyntaxError",
            ErrorKind::SemanticError => "SemanticError",
            ErrorKind::ParameterMissing => "ParameterMissing",
            ErrorKind::TypeError => "TypeError",
            ErrorKind::ArgumentError => "ArgumentError",
            ErrorKind::ArithmeticError => "ArithmeticError",
            ErrorKind::EntityNotFound => "EntityNotFound",
            ErrorKind::PropertyNotFound => "PropertyNotFound",
            ErrorKind::ConstraintVerificationFailed => "ConstraintVerificationFailed",
            ErrorKind::ConstraintValidationFailed => "ConstraintValidationFailed",
            ErrorKind::ProcedureError => "ProcedureError",
            ErrorKind::ExternalResource => "ExternalResourceFailed",
            ErrorKind::ExecutionFailed => "ExecutionFailed",
            ErrorKind::Conflict => "TransientError",
            ErrorKind::Storage => "DatabaseError",
            ErrorKind::Timeout => "TransactionTimedOut",
            ErrorKind::Terminated => "Terminated",
            ErrorKind::MemoryLimit => "MemoryLimitExceeded",
            ErrorKind::ReadOnlyDatabase => "ForbiddenOnReadOnlyDatabase",
        }
    }
}

/// When the error was found: before any data was touched, or while running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    CompileTime,
    Runtime,
}

/// A position in the query text. Lines and columns count from 1; `offset` is a byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Position {
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `text`.
    pub fn locate(text: &str, offset: usize) -> Position {
        // An offset inside a character (a span computed in characters where bytes were meant, say) points at the
        // character's start rather than panicking.
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let column = text[line_start..offset].chars().count() + 1;
        Position { offset, line, column }
    }
}

/// An error from parsing, planning or running a query.
#[derive(Clone, Debug, PartialEq)]
pub struct CypherError {
    pub kind: ErrorKind,
    pub phase: Phase,
    /// The openCypher detail code, e.g. `UndefinedVariable`, `InvalidArgumentType`, `DeleteConnectedNode`.
    pub detail: &'static str,
    pub message: String,
    /// Where in the query the error was found, when it is tied to a place.
    pub position: Option<Position>,
    /// The query's text around [`CypherError::position`], once it is located in the text
    /// ([`CypherError::locate_in`]): for a client that shows the error without the query at hand.
    pub excerpt: Option<Box<Excerpt>>,
}

/// The line of a query an error points at, cut to about [`EXCERPT_CHARS`] characters around the place.
#[derive(Clone, Debug, PartialEq)]
pub struct Excerpt {
    pub text: String,
    /// Characters of `text` before the place.
    pub caret: usize,
    /// Characters of the whole query before the place (Neo4j's `offset`).
    pub offset: usize,
}

/// Characters of the offending line shown around an error's place: a long line is cut to a window with `...`
/// at the cuts, so a line of megabytes does not fill a terminal or an error message.
pub const EXCERPT_CHARS: usize = 100;

/// About [`EXCERPT_CHARS`] characters of `line` around character `at`, and where `at` is in them. Tabs and
/// other control characters show as spaces, so a caret printed under them stays under its place.
pub fn excerpt_window(line: &str, at: usize) -> (String, usize) {
    let chars: Vec<char> = line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let at = at.min(chars.len());
    if chars.len() <= EXCERPT_CHARS {
        return (chars.into_iter().collect(), at);
    }
    let start = at.saturating_sub(EXCERPT_CHARS / 2).min(chars.len() - EXCERPT_CHARS);
    let end = (start + EXCERPT_CHARS).min(chars.len());
    let mut s = String::new();
    let mut caret = at - start;
    if start > 0 {
        s.push_str("...");
        caret += 3;
    }
    s.extend(&chars[start..end]);
    if end < chars.len() {
        s.push_str("...");
    }
    (s, caret)
}

impl CypherError {
    pub fn new(kind: ErrorKind, phase: Phase, detail: &'static str, message: impl Into<String>) -> Self {
        CypherError { kind, phase, detail, message: message.into(), position: None, excerpt: None }
    }

    pub fn syntax(detail: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::SyntaxError, Phase::CompileTime, detail, message)
    }

    /// A semantic error found while compiling (undefined or rebound variables, misuse of aggregates, ...).
    /// openCypher reports these as syntax errors, and so do we.
    pub fn semantic(detail: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::SyntaxError, Phase::CompileTime, detail, message)
    }

    pub fn type_error(detail: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::TypeError, Phase::Runtime, detail, message)
    }

    pub fn argument(detail: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ArgumentError, Phase::Runtime, detail, message)
    }

    pub fn arithmetic(detail: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ArithmeticError, Phase::Runtime, detail, message)
    }

    /// `CALL { } IN TRANSACTIONS` asked of a statement without a transaction of its own to commit in parts.
    pub(crate) fn implicit_transaction_required(phase: Phase) -> Self {
        Self::new(
            ErrorKind::SemanticError,
            phase,
            "ImplicitTransactionRequired",
            "A query with 'CALL { ... } IN TRANSACTIONS' can only be executed in an implicit transaction, but tried \
             to execute in an explicit transaction (it commits as it goes, so it runs only as an auto-commit query)",
        )
    }

    pub fn at(mut self, position: Position) -> Self {
        self.position.get_or_insert(position);
        self
    }

    /// Fixes the line and column of an error raised with only a byte offset known.
    pub fn locate_in(mut self, text: &str) -> Self {
        if let Some(p) = self.position {
            let p = Position::locate(text, p.offset);
            self.position = Some(p);
            let line = text.lines().nth(p.line - 1).unwrap_or("");
            let (excerpt, caret) = excerpt_window(line, p.column - 1);
            let offset = text[..p.offset].chars().count();
            self.excerpt = Some(Box::new(Excerpt { text: excerpt, caret, offset }));
        }
        self
    }

    /// The kind, detail and message, without the position.
    pub fn headline(&self) -> String {
        let mut s = self.kind.name().to_string();
        if !self.detail.is_empty() {
            s.push_str(&format!(" ({})", self.detail));
        }
        s.push_str(&format!(": {}", self.message));
        s
    }

    /// The error as Neo4j words a located one for its clients: the position with the query's `offset` in
    /// characters, then the line quoted and a caret under the place.
    pub fn with_excerpt(&self) -> String {
        let (Some(p), Some(x)) = (self.position, &self.excerpt) else { return self.to_string() };
        format!(
            "{} (line {}, column {} (offset: {}))\n\"{}\"\n{}^",
            self.headline(),
            p.line,
            p.column,
            x.offset,
            x.text,
            " ".repeat(x.caret + 1)
        )
    }

    pub fn in_phase(mut self, phase: Phase) -> Self {
        self.phase = phase;
        self
    }

    /// Whether running the same transaction again may succeed.
    pub fn is_retryable(&self) -> bool {
        self.kind == ErrorKind::Conflict
    }
}

impl fmt::Display for CypherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.headline())?;
        if let Some(p) = self.position {
            write!(f, " (line {}, column {})", p.line, p.column)?;
        }
        Ok(())
    }
}

impl std::error::Error for CypherError {}

impl From<plexus_storage::StorageError> for CypherError {
    fn from(e: plexus_storage::StorageError) -> Self {
        use plexus_storage::StorageError as S;
        let message = e.to_string();
        if e.is_retryable() {
            return CypherError::new(ErrorKind::Conflict, Phase::Runtime, "", message);
        }
        match e {
            S::ConstraintViolation(_)
            | S::UniqueKeyTaken { .. }
            | S::CompositeKeyTaken { .. }
            | S::RelKeyTaken { .. } => {
                CypherError::new(ErrorKind::ConstraintValidationFailed, Phase::Runtime, "", message)
            }
            S::NodeHasRelationships(..) => CypherError::new(
                ErrorKind::ConstraintVerificationFailed,
                Phase::Runtime,
                "DeleteConnectedNode",
                message,
            ),
            S::NodeNotFound(_) | S::RelNotFound(_) => {
                CypherError::new(ErrorKind::EntityNotFound, Phase::Runtime, "DeletedEntityAccess", message)
            }
            S::InvalidValue(_) => {
                CypherError::new(ErrorKind::TypeError, Phase::Runtime, "InvalidPropertyType", message)
            }
            S::ReadOnlyDatabase { .. } => CypherError::new(ErrorKind::ReadOnlyDatabase, Phase::Runtime, "", message),
            // The log refused a commit's record (a full disk, a failed device): the commit did not happen, and the
            // database takes no more until it is reopened.
            S::Poisoned(_) => CypherError::new(ErrorKind::Storage, Phase::Runtime, "TransactionCommitFailed", message),
            _ => CypherError::new(ErrorKind::Storage, Phase::Runtime, "", message),
        }
    }
}

pub type Result<T, E = CypherError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_error() {
        assert_eq!(excerpt_window("RETURN\tx", 7), ("RETURN x".to_string(), 7));
        let line = format!("RETURN {}x", " ".repeat(100_000));
        let (shown, caret) = excerpt_window(&line, 100_007);
        assert!(shown.chars().count() <= EXCERPT_CHARS + 6, "{}", shown.len());
        assert!(shown.starts_with("...") && shown.ends_with('x'));
        assert_eq!(shown.chars().nth(caret), Some('x'));
        let (shown, caret) = excerpt_window(&format!("x{}", " ".repeat(1000)), 0);
        assert!(shown.starts_with('x') && shown.ends_with("..."));
        assert_eq!(caret, 0);
    }

    #[test]
    fn a_located_error_carries_its_line_for_clients_in_neo4j_words() {
        let e = CypherError::syntax("UnexpectedSyntax", "expected ')'").at(Position { offset: 9, line: 0, column: 0 });
        let e = e.locate_in("MATCH (n RETURN n");
        assert_eq!(
            e.with_excerpt(),
            "SyntaxError (UnexpectedSyntax): expected ')' (line 1, column 10 (offset: 9))\n\"MATCH (n RETURN n\"\n          ^"
        );
        // The offset counts characters, and the line shown is the one the place is on.
        let e = CypherError::syntax("", "x")
            .at(Position { offset: 14, line: 0, column: 0 })
            .locate_in("RETURN 'é'\nRETURN x");
        assert_eq!(e.with_excerpt(), "SyntaxError: x (line 2, column 3 (offset: 13))\n\"RETURN x\"\n   ^");
        // Without a place, the plain message.
        assert_eq!(CypherError::syntax("", "x").with_excerpt(), "SyntaxError: x");
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "MATCH (n)\nRETURN é, m";
        let p = Position::locate(text, text.find('m').unwrap());
        assert_eq!((p.line, p.column), (2, 11));
        assert_eq!(Position::locate(text, 0), Position { offset: 0, line: 1, column: 1 });
    }
}
