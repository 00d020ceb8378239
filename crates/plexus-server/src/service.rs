//! The query service both protocols share: running statements in auto-commit or explicit transactions with access
//! control, time limits and cancellation, Neo4j status codes for errors, bookmarks, and the registry of running
//! queries that shutdown cancels. Everything here is blocking; the protocol layers call it from blocking threads.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use plexus::cypher::ReadCursor;
use plexus::cypher::{Access, ErrorKind, Interrupt};
use plexus::{CypherError, Database, Params, QueryResult, ReadTxn, WriteTxn};

use crate::auth::{Auth, Role};
use crate::metrics::Metrics;
use crate::registry::{Registry, RunningGuard, TransactionTicket};

/// The name clients use for the one database a server holds (Neo4j's default, so drivers' defaults work).
pub use plexus::DATABASE_NAME;
/// The name of Neo4j's administrative database, which drivers use for discovery and to check credentials.
pub const SYSTEM_DATABASE_NAME: &str = "system";
/// The Neo4j version the server presents itself as, in its agent string and `dbms.components()`. Drivers pick
/// features by it, so it names the Neo4j release whose protocol and behaviour the server follows.
pub const NEO4J_VERSION: &str = plexus::cypher::builtin::NEO4J_COMPATIBLE_VERSION;

/// Which of the server's databases a request names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The graph, `neo4j`.
    Graph,
    /// `system`: it answers the administrative reads drivers and tools send, and nothing else.
    System,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Graph => DATABASE_NAME,
            Target::System => SYSTEM_DATABASE_NAME,
        }
    }
}

/// The time a client gave its transaction or statement (Bolt's `tx_timeout`). As in Neo4j 5.3 and later, a
/// client's own timeout replaces the server's time limit, longer or shorter, and 0 asks for none: a batch job
/// that says how long it needs is not stopped at the limit meant for interactive queries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientDeadline {
    /// None given: the server's time limit applies, from the start of each statement.
    #[default]
    ServerLimit,
    /// The client's deadline.
    At(Instant),
    /// No time limit (a timeout of 0).
    Unlimited,
}

/// Resource limits applied to every query.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Longest a query may run unless the client asks for less.
    pub query_timeout: Option<Duration>,
    /// Largest result (estimated in-memory bytes) a query may build.
    pub max_result_bytes: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { query_timeout: Some(Duration::from_secs(60)), max_result_bytes: Some(1 << 30) }
    }
}

/// An error as clients see it: a Neo4j status code and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerError {
    pub code: &'static str,
    pub message: String,
}

impl ServerError {
    pub fn new(code: &'static str, message: impl Into<String>) -> ServerError {
        ServerError { code, message: message.into() }
    }

    pub fn unauthorized() -> ServerError {
        ServerError::new(
            "Neo.ClientError.Security.Unauthorized",
            "The client is unauthorized due to authentication failure.",
        )
    }

    pub fn forbidden(what: &str, role: Role) -> ServerError {
        ServerError::new("Neo.ClientError.Security.Forbidden", format!("{what} is not allowed for the {role:?} role"))
    }

    pub fn request(message: impl Into<String>) -> ServerError {
        ServerError::new("Neo.ClientError.Request.Invalid", message)
    }

    /// Whether a driver should retry the transaction.
    pub fn is_transient(&self) -> bool {
        self.code.starts_with("Neo.TransientError.")
    }
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// Whether a transaction or auto-commit statement may write, as the client declared it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AccessMode {
    Read,
    #[default]
    Write,
}

/// An open explicit transaction: a snapshot for read transactions, a write transaction otherwise.
pub enum TxKind {
    Read(ReadTxn),
    Write(Box<WriteTxn>),
}

/// An open explicit transaction, listed by `SHOW TRANSACTIONS` until it is dropped.
pub struct Transaction {
    kind: TxKind,
    ticket: TransactionTicket,
}

impl Transaction {
    /// The access mode the transaction was opened in.
    pub fn mode(&self) -> AccessMode {
        match self.kind {
            TxKind::Read(_) => AccessMode::Read,
            TxKind::Write(_) => AccessMode::Write,
        }
    }

    /// The transaction's id, as `SHOW TRANSACTIONS` lists it.
    pub fn id(&self) -> u64 {
        self.ticket.id
    }

    /// Refuses a terminated transaction's statements, the rows of its open results, and its commit.
    pub(crate) fn check_terminated(&self) -> Result<(), ServerError> {
        if self.ticket.terminated() {
            return Err(ServerError::new(
                TERMINATED,
                "The transaction has been terminated (TERMINATE TRANSACTIONS): roll it back and retry the work in a \
                 new transaction",
            ));
        }
        Ok(())
    }
}

/// A finished statement, plus the bookmark of the state it saw or made (auto-commit only).
pub struct Outcome {
    pub result: QueryResult,
    pub bookmark: Option<String>,
    /// "r", "w", "rw" or "s" (schema), as Bolt reports the query type.
    pub query_type: &'static str,
}

/// Everything a protocol handler needs to serve queries.
pub struct Service {
    pub db: Database,
    pub auth: Auth,
    pub metrics: Metrics,
    pub limits: Limits,
    /// Sent to clients as the server agent. Drivers check that it starts with `Neo4j/`.
    pub agent: String,
    /// The statements running and the explicit transactions open.
    pub registry: Arc<Registry>,
    /// Where `CALL dbms.backup('name')` writes (see [`crate::backup`]); `None` refuses it.
    pub backup_dir: Option<std::path::PathBuf>,
}

impl Service {
    /// A service over `db`. Its statements may read no files (`LOAD CSV`) until the caller names an import
    /// directory (`db.engine().set_file_access`), as `Server::start` does.
    pub fn new(db: Database, auth: Auth, limits: Limits) -> Service {
        db.engine().set_file_access(plexus::cypher::FileAccess::Nowhere);
        Service {
            db,
            auth,
            metrics: Metrics::new(),
            limits,
            agent: format!("Neo4j/{NEO4J_VERSION} (Plexus {})", env!("CARGO_PKG_VERSION")),
            registry: Arc::default(),
            backup_dir: None,
        }
    }

    /// A fresh interrupt for one query: the server's limits, its time limit replaced by the client's deadline if
    /// it gave one. Registered so [`Service::cancel_all`] reaches it.
    pub fn interrupt(&self, client: ClientDeadline) -> Arc<Interrupt> {
        Arc::new(self.limits_interrupt(client))
    }

    /// [`Service::interrupt`] that also asks `client_gone` every 50 ms whether the client went away.
    pub fn interrupt_probing(
        &self,
        client: ClientDeadline,
        client_gone: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Arc<Interrupt> {
        Arc::new(self.limits_interrupt(client).with_probe(Duration::from_millis(50), client_gone))
    }

    fn limits_interrupt(&self, client: ClientDeadline) -> Interrupt {
        let deadline = match client {
            ClientDeadline::ServerLimit => self.limits.query_timeout.map(|d| Instant::now() + d),
            ClientDeadline::At(at) => Some(at),
            ClientDeadline::Unlimited => None,
        };
        let mut interrupt = Interrupt::new(deadline, self.limits.max_result_bytes);
        interrupt.deadline_from_client = matches!(client, ClientDeadline::At(_));
        interrupt
    }

    /// Cancels every running query, and any started later (shutdown). They fail with a transient error, so
    /// drivers retry them once the server is back.
    pub fn cancel_all(&self) {
        self.registry.cancel_all();
    }

    /// Counts a statement as running while the guard lives: stopping the server (or cancelling every query)
    /// interrupts it. A streamed result is registered again for each batch its client pulls.
    pub fn register(&self, interrupt: &Arc<Interrupt>, query: &str) -> RunningGuard<'_> {
        self.registry.register(interrupt, query, None)
    }

    /// Checks that `role` may run `query` in a transaction of `mode`; returns what the query does.
    fn authorize(&self, query: &str, role: Role, mode: AccessMode) -> Result<Access, ServerError> {
        let access = self.db.engine().access(query)?;
        let refusal = match access {
            Access::Read => None,
            Access::Schema if role < Role::Admin => Some(ServerError::forbidden("Changing the schema", role)),
            Access::Write | Access::Schema => write_refusal(role, mode),
        };
        refusal.map_or(Ok(access), Err)
    }

    /// Counts a finished statement, and gives a query the shutdown stopped the error that says so.
    fn record(&self, elapsed: Duration, outcome: Result<Outcome, ServerError>) -> Result<Outcome, ServerError> {
        self.metrics.record_query(elapsed, outcome.is_ok());
        outcome.map_err(|e| self.as_client_sees(e))
    }

    /// A query's error as the client should see it: a query stopped by the server's shutdown is transient.
    fn as_client_sees(&self, e: ServerError) -> ServerError {
        if e.code != TERMINATED {
            return e;
        }
        self.metrics.queries_cancelled.fetch_add(1, Ordering::Relaxed);
        // The client did nothing wrong: a transient code makes drivers retry the transaction, against this
        // server once it is back or another one. Nothing of the stopped transaction was committed.
        if self.registry.stopping() {
            return ServerError::new(
                "Neo.TransientError.General.DatabaseUnavailable",
                "the server is shutting down: the query was stopped and its transaction rolled back",
            );
        }
        e
    }

    /// Runs one statement in its own transaction, committed before this returns.
    pub fn run_auto_commit(
        &self,
        role: Role,
        mode: AccessMode,
        query: &str,
        params: &Params,
        interrupt: &Arc<Interrupt>,
    ) -> Result<Outcome, ServerError> {
        let started = Instant::now();
        let outcome = self.auto_commit(role, mode, query, params, interrupt);
        self.record(started.elapsed(), outcome)
    }

    /// [`Service::run_auto_commit`] that produces a read-only statement's first `first_rows` rows and leaves the
    /// rest in a cursor, to be produced as the client asks for them (Bolt's PULL). Statements that write run
    /// whole, as in [`Service::run_auto_commit`].
    pub fn run_auto_commit_streaming(
        &self,
        role: Role,
        mode: AccessMode,
        query: &str,
        params: Arc<Params>,
        interrupt: &Arc<Interrupt>,
        first_rows: usize,
    ) -> Result<(Outcome, Option<ReadCursor>), ServerError> {
        let started = Instant::now();
        let outcome = (|| {
            let access = self.authorize(query, role, mode)?;
            if access != Access::Read {
                return Ok((self.auto_commit_as(access, role, mode, query, &params, interrupt)?, None));
            }
            let _guard = self.register(interrupt, query);
            let snapshot = self.db.read();
            let bookmark = Some(bookmark(snapshot.version()));
            match self.stream_read(snapshot, query, &params, interrupt, first_rows, bookmark) {
                // Only EXPLAIN of a write gets here; the whole path handles it.
                Err(e) if e.detail == WRITE_IN_READ_ONLY => {
                    Ok((self.auto_commit_as(access, role, mode, query, &params, interrupt)?, None))
                }
                other => Ok(other?),
            }
        })();
        self.record_streamed(started, outcome)
    }

    /// [`Service::run_in_transaction`] that, in a read transaction, leaves the rows after the first `first_rows`
    /// in a cursor over the transaction's snapshot. In a write transaction the statement runs whole.
    pub fn run_in_transaction_streaming(
        &self,
        tx: &mut Transaction,
        role: Role,
        query: &str,
        params: Arc<Params>,
        interrupt: &Arc<Interrupt>,
        first_rows: usize,
    ) -> Result<(Outcome, Option<ReadCursor>), ServerError> {
        let snapshot = match &tx.kind {
            TxKind::Read(snapshot) => snapshot.clone(),
            // A read in a write transaction streams too, from the transaction's state as the statement starts:
            // built whole, a large result held the server's memory until the limit stopped it (drivers'
            // `execute_query` opens write transactions by default).
            TxKind::Write(write) if self.db.engine().reads_only(query) => write.snapshot(),
            TxKind::Write(_) => return Ok((self.run_in_transaction(tx, role, query, &params, interrupt)?, None)),
        };
        let started = Instant::now();
        let outcome = (|| {
            tx.check_terminated()?;
            self.authorize(query, role, AccessMode::Read)?;
            let _guard = self.registry.register(interrupt, query, Some(tx.ticket.id));
            match self.stream_read(snapshot, query, &params, interrupt, first_rows, None) {
                // EXPLAIN of a write, counted as a read by `authorize`: refused as the write itself would be.
                Err(e) if e.detail == WRITE_IN_READ_ONLY => {
                    Err(write_refusal(role, AccessMode::Read).unwrap_or_else(|| e.into()))
                }
                other => Ok(other?),
            }
        })();
        self.record_streamed(started, outcome)
    }

    /// A read-only statement's first `first_rows` rows on `snapshot`, and the cursor for the rest.
    fn stream_read(
        &self,
        snapshot: ReadTxn,
        query: &str,
        params: &Arc<Params>,
        interrupt: &Arc<Interrupt>,
        first_rows: usize,
        bookmark: Option<String>,
    ) -> Result<(Outcome, Option<ReadCursor>), CypherError> {
        let stream =
            self.db.engine().execute_read_streaming(snapshot, query, params.clone(), Some(interrupt), first_rows)?;
        Ok((Outcome { result: stream.first, bookmark, query_type: "r" }, stream.rest))
    }

    /// [`Service::record`] for a statement whose rows may go on in a cursor (counted as it was at its start).
    fn record_streamed(
        &self,
        started: Instant,
        outcome: Result<(Outcome, Option<ReadCursor>), ServerError>,
    ) -> Result<(Outcome, Option<ReadCursor>), ServerError> {
        let (outcome, rest) = match outcome {
            Ok((outcome, rest)) => (Ok(outcome), rest),
            Err(e) => (Err(e), None),
        };
        Ok((self.record(started.elapsed(), outcome)?, rest))
    }

    /// An error from a cursor's later rows, as the client should see it.
    pub fn stream_error(&self, e: CypherError) -> ServerError {
        self.metrics.query_failed_later();
        self.as_client_sees(e.into())
    }

    /// [`Service::run_auto_commit`] for a statement that reads only, given at most `budget`. `None` when the
    /// statement does not read only or ran past the budget: it was stopped there with nothing committed (a
    /// statement that writes is not even started, and a commit only ever follows the last time check), so the
    /// caller may run it again in full. The thread is held for about the budget at most (time is checked once per
    /// batch of rows), however heavy the parameters make the statement.
    pub fn try_auto_commit_within(
        &self,
        role: Role,
        mode: AccessMode,
        query: &str,
        params: &Params,
        budget: Duration,
    ) -> Option<Result<Outcome, ServerError>> {
        let started = Instant::now();
        // A read is never refused, so this decides both what the statement does and whether it may.
        let Ok(Access::Read) = self.authorize(query, role, mode) else { return None };
        // Under a server time limit shorter than the budget, a timeout is the statement's real answer.
        let limit = self.limits.query_timeout.filter(|t| *t <= budget).unwrap_or(budget);
        let interrupt = Arc::new(Interrupt::new(Some(started + limit), self.limits.max_result_bytes));
        let outcome = self.auto_commit_as(Access::Read, role, mode, query, params, &interrupt);
        if limit == budget && matches!(&outcome, Err(e) if e.code == TIMED_OUT) {
            return None;
        }
        Some(self.record(started.elapsed(), outcome))
    }

    fn auto_commit(
        &self,
        role: Role,
        mode: AccessMode,
        query: &str,
        params: &Params,
        interrupt: &Arc<Interrupt>,
    ) -> Result<Outcome, ServerError> {
        let access = self.authorize(query, role, mode)?;
        self.auto_commit_as(access, role, mode, query, params, interrupt)
    }

    /// [`Service::auto_commit`] of a statement already authorised as `access`.
    fn auto_commit_as(
        &self,
        access: Access,
        role: Role,
        mode: AccessMode,
        query: &str,
        params: &Params,
        interrupt: &Arc<Interrupt>,
    ) -> Result<Outcome, ServerError> {
        let _guard = self.register(interrupt, query);
        let engine = self.db.engine();
        if access == Access::Read {
            let snapshot = self.db.read();
            let result = match engine.execute_read_with(&snapshot, query, params, Some(interrupt)) {
                Err(e) if e.detail == WRITE_IN_READ_ONLY => {
                    // Only EXPLAIN of a write gets here: it runs nothing, so `access` counts it as a read.
                    if let Some(refusal) = write_refusal(role, mode) {
                        return Err(refusal);
                    }
                    let mut tx = self.db.write();
                    let result = engine.execute_in_with(&mut tx, query, params, Some(interrupt))?;
                    let query_type = write_query_type(&result);
                    return Ok(Outcome { result, bookmark: None, query_type });
                }
                other => other?,
            };
            let bookmark = Some(bookmark(snapshot.version()));
            return Ok(Outcome { result, bookmark, query_type: "r" });
        }
        let parts = |e: ServerError| {
            if !engine.commits_in_parts(query) {
                return e;
            }
            // Not a transient error to retry: the parts committed before the failure stay, and a retry repeats
            // them. A client error keeps its own code (an ArithmeticError is one here as in Neo4j).
            let code = if e.is_transient() { "Neo.ClientError.Statement.ExecutionFailed" } else { e.code };
            ServerError::new(code, format!("{} ({}; {})", e.message, e.code, plexus::cypher::PARTS_STAY))
        };
        // The whole result is held before the commit, so a statement whose commit meets a write conflict can run
        // again without anyone having seen its rows (`plexus::cypher::ConflictReruns`).
        let run = || -> Result<_, ServerError> {
            let mut tx = self.db.write();
            let result =
                engine.execute_implicit_with(&mut tx, query, params, Some(interrupt)).map_err(|e| parts(e.into()))?;
            interrupt.check().map_err(|e| parts(e.into()))?;
            let version = tx.commit().map_err(|e| parts(e.into()))?;
            Ok((result, version))
        };
        let reruns = engine.reruns_on_conflict(query);
        let interrupted = || interrupt.check().is_err();
        let (result, version) =
            engine.rerun_on_conflict(reruns, interrupted, |e: &ServerError| e.code == OUTDATED, run)?;
        self.metrics.transactions_committed.fetch_add(1, Ordering::Relaxed);
        let query_type = if access == Access::Schema { "s" } else { write_query_type(&result) };
        Ok(Outcome { result, bookmark: Some(bookmark(version)), query_type })
    }

    /// Opens an explicit transaction.
    pub fn begin(&self, mode: AccessMode) -> Transaction {
        let kind = match mode {
            AccessMode::Read => TxKind::Read(self.db.read()),
            AccessMode::Write => TxKind::Write(Box::new(self.db.write())),
        };
        Transaction { kind, ticket: self.registry.open_transaction() }
    }

    /// Runs one statement inside an explicit transaction. A failing statement leaves the transaction's earlier
    /// work in place (the protocol layer decides whether the transaction survives).
    pub fn run_in_transaction(
        &self,
        tx: &mut Transaction,
        role: Role,
        query: &str,
        params: &Params,
        interrupt: &Arc<Interrupt>,
    ) -> Result<Outcome, ServerError> {
        let started = Instant::now();
        let _guard = self.registry.register(interrupt, query, Some(tx.ticket.id));
        let outcome = (|| {
            tx.check_terminated()?;
            let mode = match tx.kind {
                TxKind::Read(_) => AccessMode::Read,
                TxKind::Write(_) => AccessMode::Write,
            };
            let access = self.authorize(query, role, mode)?;
            let engine = self.db.engine();
            let result = match &mut tx.kind {
                TxKind::Read(snapshot) => match engine.execute_read_with(snapshot, query, params, Some(interrupt)) {
                    // EXPLAIN of a write, counted as a read by `access`: refused as the write itself would be.
                    Err(e) if e.detail == WRITE_IN_READ_ONLY => {
                        return Err(write_refusal(role, mode).unwrap_or_else(|| e.into()));
                    }
                    other => other?,
                },
                TxKind::Write(tx) => engine.execute_in_with(tx, query, params, Some(interrupt))?,
            };
            let query_type = match access {
                Access::Schema => "s",
                Access::Read => "r",
                Access::Write => write_query_type(&result),
            };
            Ok(Outcome { result, bookmark: None, query_type })
        })();
        self.record(started.elapsed(), outcome)
    }

    /// Commits an explicit transaction for a user who now has `role`; returns its bookmark. A user whose role no
    /// longer allows what the transaction did (changed while it was open: writing, or changing the schema) cannot
    /// commit it.
    /// A commit that fails (a conflict, a terminated transaction) leaves nothing: counted as rolled back.
    pub fn commit(&self, role: Role, tx: Transaction) -> Result<String, ServerError> {
        let rolled_back = |e: ServerError| {
            self.metrics.transactions_rolled_back.fetch_add(1, Ordering::Relaxed);
            e
        };
        if role < Role::Writer && matches!(&tx.kind, TxKind::Write(w) if w.has_changes()) {
            return Err(rolled_back(ServerError::forbidden("Committing changes", role)));
        }
        if role < Role::Admin && matches!(&tx.kind, TxKind::Write(w) if w.changes_schema()) {
            return Err(rolled_back(ServerError::forbidden("Committing schema changes", role)));
        }
        if !tx.ticket.start_commit() {
            tx.check_terminated().map_err(rolled_back)?;
        }
        let version = match tx.kind {
            TxKind::Read(snapshot) => snapshot.version(),
            TxKind::Write(tx) => {
                let version = tx.commit().map_err(|e| rolled_back(e.into()))?;
                self.metrics.transactions_committed.fetch_add(1, Ordering::Relaxed);
                version
            }
        };
        Ok(bookmark(version))
    }

    /// Rolls back an explicit transaction.
    pub fn rollback(&self, tx: Transaction) {
        drop(tx);
        self.metrics.transactions_rolled_back.fetch_add(1, Ordering::Relaxed);
    }

    /// Checks that `role` may do something that needs `needed`, for requests that run no Cypher (the REST
    /// resources), so they follow the same roles as queries.
    pub fn require_role(&self, role: Role, needed: Role, what: &str) -> Result<(), ServerError> {
        if role < needed {
            Err(ServerError::forbidden(what, role))
        } else {
            Ok(())
        }
    }

    /// The database a name a client sent selects; none selects the graph. Names are case-insensitive, as in
    /// Neo4j.
    pub fn select_database(&self, name: Option<&str>) -> Result<Target, ServerError> {
        match name {
            None | Some("") => Ok(Target::Graph),
            Some(n) if n.eq_ignore_ascii_case(DATABASE_NAME) => Ok(Target::Graph),
            Some(n) if n.eq_ignore_ascii_case(SYSTEM_DATABASE_NAME) => Ok(Target::System),
            Some(other) => Err(ServerError::new(
                "Neo.ClientError.Database.DatabaseNotFound",
                format!("Database does not exist. Database name: '{other}'. This server holds one database, '{DATABASE_NAME}'."),
            )),
        }
    }

    /// Checks that a database name a client sent is the graph's, for the HTTP requests that reach only the graph
    /// (REST resources and Query API transactions).
    pub fn check_database(&self, name: Option<&str>) -> Result<(), ServerError> {
        match self.select_database(name)? {
            Target::Graph => Ok(()),
            Target::System => Err(ServerError::new(
                "Neo.ClientError.Database.DatabaseNotFound",
                format!("The '{SYSTEM_DATABASE_NAME}' database answers over Bolt and auto-commit Query API requests only. This resource serves '{DATABASE_NAME}'."),
            )),
        }
    }

    /// Runs `query` when it is not for the query engine: a `SHOW DATABASES`-style command on either database, or
    /// anything sent to `system`, which answers `dbms.components()` and `db.ping()` and refuses the rest. `None`
    /// for an ordinary statement on the graph. `address` is the Bolt address the client reached; `transaction` the
    /// explicit transaction the statement runs in, if any (`SHOW TRANSACTIONS` lists the statement as part of it).
    #[allow(clippy::too_many_arguments)]
    pub fn run_administrative(
        &self,
        target: Target,
        role: Role,
        mode: AccessMode,
        query: &str,
        params: &Params,
        address: &str,
        interrupt: &Arc<Interrupt>,
        transaction: Option<u64>,
    ) -> Option<Result<Outcome, ServerError>> {
        // `USE system SHOW DATABASES`: a leading USE picks the database an administrative command runs on, as the
        // session's database would. An ordinary statement keeps its USE, which the query engine checks.
        let (target, query) = match crate::system::leading_use(query) {
            Some((name, rest)) => match self.select_database(Some(name)) {
                Ok(named) => (named, rest),
                Err(e) => return Some(Err(e)),
            },
            None => (target, query),
        };
        let register = |interrupt, query| self.registry.register(interrupt, query, transaction);
        if let Some(command) = crate::transactions::parse(query) {
            let started = Instant::now();
            let _guard = register(interrupt, query);
            let outcome = match command {
                Err(e) => Err(e),
                Ok(_) if role < Role::Admin => Err(ServerError::forbidden("Listing and stopping transactions", role)),
                Ok(command) => crate::transactions::run(self, &command, params, interrupt),
            };
            return Some(self.record(started.elapsed(), outcome));
        }
        if let Some(command) = crate::users::parse(query) {
            let started = Instant::now();
            let _guard = register(interrupt, query);
            let caller = crate::registry::current_caller();
            let outcome = command.and_then(|c| {
                // Changing users writes, which a read transaction may not, as Neo4j refuses writes to `system` there.
                if mode == AccessMode::Read && !matches!(c, crate::users::UserCommand::Show { .. }) {
                    return Err(read_mode_refusal());
                }
                crate::users::run(self, &c, &caller.user, role, params, interrupt)
            });
            return Some(self.record(started.elapsed(), outcome));
        }
        if let Some(argument) = crate::tx_metadata::parse(query) {
            let started = Instant::now();
            let _guard = register(interrupt, query);
            let outcome = crate::tx_metadata::run(self, argument, params, transaction, interrupt);
            return Some(self.record(started.elapsed(), outcome));
        }
        if let Some(call) = crate::backup::parse(query) {
            let started = Instant::now();
            let _guard = register(interrupt, query);
            let outcome = call.and_then(|c| crate::backup::run(self, &c, role, params, interrupt));
            return Some(self.record(started.elapsed(), outcome));
        }
        if let Some(rest) = crate::client_config::parse(query) {
            let started = Instant::now();
            let _guard = register(interrupt, query);
            let outcome = crate::client_config::run(self, &rest, params, interrupt);
            return Some(self.record(started.elapsed(), outcome));
        }
        if let Some(command) = crate::system::parse_current_user(query) {
            let started = Instant::now();
            let _guard = register(interrupt, query);
            let caller = crate::registry::current_caller();
            // Without authentication every client is the initial user, with every right.
            let user = if caller.user.is_empty() { crate::auth::INITIAL_USER } else { &caller.user };
            let outcome = crate::system::show_current_user(self, &command, user, role, params, interrupt);
            return Some(self.record(started.elapsed(), outcome));
        }
        if let Some(command) = crate::system::parse(query) {
            let started = Instant::now();
            let _guard = register(interrupt, query);
            let outcome = crate::system::show(self, &command, params, address, interrupt);
            return Some(self.record(started.elapsed(), outcome));
        }
        match target {
            // Neo4j runs these on `system` only; Plexus on neither, and says where users are managed.
            Target::Graph => crate::system::unsupported_administration(query).map(Err),
            // Read-only whatever the client asked: `system` holds nothing to write.
            Target::System if crate::system::is_system_procedure(query) => {
                Some(self.run_auto_commit(role, AccessMode::Read, query, params, interrupt))
            }
            Target::System => Some(Err(crate::system::not_a_system_command(query))),
        }
    }
}

/// The engine's detail for a statement that writes run in a read-only transaction.
const WRITE_IN_READ_ONLY: &str = "WriteInReadOnlyTransaction";
/// The codes of a query stopped by the server's time limit, by the client's transaction timeout, and by its
/// cancel switch.
const TIMED_OUT: &str = "Neo.ClientError.Transaction.TransactionTimedOut";
const TIMED_OUT_CLIENT: &str = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration";
const TERMINATED: &str = "Neo.ClientError.Transaction.Terminated";
/// A write conflict: a concurrent commit wrote the same data first (retryable).
const OUTDATED: &str = "Neo.TransientError.Transaction.Outdated";

/// Why `role` may not write in a transaction of `mode`, if it may not.
fn write_refusal(role: Role, mode: AccessMode) -> Option<ServerError> {
    if role < Role::Writer {
        Some(ServerError::forbidden("Writing", role))
    } else if mode == AccessMode::Read {
        Some(read_mode_refusal())
    } else {
        None
    }
}

/// The refusal of a write in a transaction the client opened for reading.
fn read_mode_refusal() -> ServerError {
    ServerError::new("Neo.ClientError.Statement.AccessMode", "Writing in read access mode is not allowed")
}

pub(crate) fn bookmark(version: u64) -> String {
    format!("plexus:{version}")
}

/// Checks the bookmarks a client sends to begin a transaction: each must be one this server issued
/// (`plexus:VERSION`), and none may be ahead of the database. A commit's bookmark is handed out only once its
/// state is published, so on one server a bookmark ahead of the database never becomes reachable by waiting: it
/// came from another database or from before a restore of an older copy, and read-your-writes would silently not
/// hold.
pub(crate) fn check_bookmarks(service: &Service, bookmarks: &[&str]) -> Result<(), ServerError> {
    if bookmarks.is_empty() {
        return Ok(());
    }
    let current_version = service.db.read().version();
    for &b in bookmarks {
        let version = b.strip_prefix("plexus:").and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| {
            ServerError::new(
                "Neo.ClientError.Transaction.InvalidBookmark",
                format!("'{b}' is not a bookmark this server issued (they look like plexus:42)"),
            )
        })?;
        if version > current_version {
            return Err(ServerError::new(
                "Neo.ClientError.Transaction.InvalidBookmark",
                format!(
                    "bookmark {b} is ahead of the database (at version {current_version}): it comes from another \
                     database, or this one was restored from an older copy"
                ),
            ));
        }
    }
    Ok(())
}

/// The query type of a statement whose plan writes, as Neo4j gives it: from the plan, not from what it did. "w"
/// when it returns nothing, "rw" when it returns columns.
fn write_query_type(result: &QueryResult) -> &'static str {
    if result.columns.is_empty() {
        "w"
    } else {
        "rw"
    }
}

mod status;
#[cfg(test)]
mod tests;
