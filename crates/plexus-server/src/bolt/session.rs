//! The Bolt server state machine for one connection: it takes decoded request messages and writes response
//! messages, running queries through the [`Service`]. It does no I/O of its own, so it is tested and fuzzed
//! without sockets; [`super::connection`] feeds it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use plexus::cypher::{Interrupt, PlanTree, ReadCursor, ResultValue};
use plexus::{Params, QueryStats};

use super::connection::Liveness;
use super::values::{self, Shape};
use crate::auth::Role;
use crate::packstream::{map, Encoder, Ps};
use crate::service::{AccessMode, ClientDeadline, Outcome, ServerError, Service, Target, Transaction};

mod pulling;

/// Rows a read-only statement produces before RUN is answered; the rest wait in a cursor for the client's PULLs.
/// Drivers pull 1,000 at a time by default, so most results are whole by then and need no cursor.
const FIRST_ROWS: usize = 1000;

/// The metadata map a client left out.
static NULL: Ps = Ps::Null;

/// Protocol versions we speak, best first.
pub const VERSIONS: [(u8, u8); 6] = [(5, 4), (5, 3), (5, 2), (5, 1), (5, 0), (4, 4)];

mod msg {
    pub const HELLO: u8 = 0x01;
    pub const GOODBYE: u8 = 0x02;
    pub const RESET: u8 = 0x0F;
    pub const RUN: u8 = 0x10;
    pub const BEGIN: u8 = 0x11;
    pub const COMMIT: u8 = 0x12;
    pub const ROLLBACK: u8 = 0x13;
    pub const DISCARD: u8 = 0x2F;
    pub const PULL: u8 = 0x3F;
    pub const TELEMETRY: u8 = 0x54;
    pub const ROUTE: u8 = 0x66;
    pub const LOGON: u8 = 0x6A;
    pub const LOGOFF: u8 = 0x6B;
    pub const SUCCESS: u8 = 0x70;
    pub const RECORD: u8 = 0x71;
    pub const IGNORED: u8 = 0x7E;
    pub const FAILURE: u8 = 0x7F;
}

/// The protocol states of the Bolt specification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Handshake done, waiting for HELLO.
    Connected,
    /// HELLO done (5.1+), waiting for LOGON.
    Authentication,
    Ready,
    /// An auto-commit result is open.
    Streaming,
    TxReady,
    /// A result inside an explicit transaction is open.
    TxStreaming,
    /// A request failed: everything but RESET and GOODBYE is ignored.
    Failed,
    /// The connection must close.
    Defunct,
}

/// What the connection should do after a batch of messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Close,
}

/// A PULL (or DISCARD) part-way through: the open result it reads and how many records it still owes (`None`:
/// all of them).
#[derive(Clone, Copy)]
struct Pull {
    index: usize,
    left: Option<u64>,
    discard: bool,
}

/// Records a PULL puts into one write: a PULL of a large result goes out in pieces of about this size rather
/// than being built whole in memory first.
pub const PULL_OUTPUT_BYTES: usize = 1 << 20;

/// An open result: rows not yet pulled and the summary sent after the last one.
struct Stream {
    qid: i64,
    columns: Vec<String>,
    rows: std::vec::IntoIter<Vec<ResultValue>>,
    /// The rows not produced yet, for a read-only statement whose result is larger than its first batch.
    rest: Option<ReadCursor>,
    /// For an auto-commit result: the client's own deadline (from its `tx_timeout`), if any. Without one, each
    /// PULL gets the server's time limit afresh, so a client reading slowly is not timed out for the time it
    /// spends between PULLs. In an explicit transaction the transaction's deadline stays.
    auto_commit_deadline: Option<ClientDeadline>,
    /// The statement's text, while rows are left to produce (what `SHOW TRANSACTIONS` shows during a PULL).
    query: Option<Arc<str>>,
    /// An auto-commit result with rows left to produce: listed by `SHOW TRANSACTIONS` between PULLs too, and
    /// stopped by `TERMINATE TRANSACTIONS` at its next PULL.
    listed: Option<crate::registry::ListedStatement>,
    stats: QueryStats,
    plan: Option<String>,
    plan_tree: Option<PlanTree>,
    profile: bool,
    bookmark: Option<String>,
    query_type: &'static str,
    started: Instant,
    /// The database the statement ran against, for the summary.
    db: &'static str,
    notifications: Vec<plexus::cypher::notices::Notification>,
    /// Which of them the client wants.
    notification_filter: super::notifications::Filter,
}

struct OpenTransaction {
    tx: Transaction,
    deadline: ClientDeadline,
    target: Target,
    /// The access mode the client asked for (a transaction on `system` reads the graph whatever it asked).
    declared: AccessMode,
    /// The notifications its statements' summaries carry.
    notification_filter: super::notifications::Filter,
}

/// One Bolt connection's protocol state.
pub struct Session {
    service: Arc<Service>,
    version: (u8, u8),
    shape: Shape,
    state: State,
    role: Option<Role>,
    /// The role a RUN found, which the PULL or DISCARD right after it takes instead of looking the user up again
    /// (the two are one request to the client). Any other message clears it: a message after a statement that
    /// ran for a while, even in the same packet, looks the user up (see [`Session::authenticated`]).
    run_role: std::cell::Cell<Option<Role>>,
    tx: Option<OpenTransaction>,
    streams: Vec<Stream>,
    /// A PULL waiting for its records so far to be written out (see [`Session::pull_pending`]).
    pending_pull: Option<Pull>,
    next_qid: i64,
    /// The address the client used to reach us (from HELLO's routing context), for routing tables.
    routing_address: Option<String>,
    local_address: String,
    connection_id: String,
    /// Who this connection runs as, for `SHOW TRANSACTIONS`.
    caller: crate::registry::Caller,
    /// Asked while a query runs whether the client is still there.
    probe: Option<Arc<dyn Fn() -> Liveness + Send + Sync>>,
    scratch: Encoder,
    /// Set by a message the state does not allow: the connection then closes after its FAILURE, as Neo4j's does,
    /// so a driver that lost track of the state never gets the connection back into its pool.
    breached: bool,
    /// The last message was a RESET that closed an open result (see the DISCARD arm of `handle_message`).
    reset_closed_a_result: bool,
    /// The notifications the client asked for at HELLO.
    notification_filter: super::notifications::Filter,
}

impl Session {
    pub fn new(service: Arc<Service>, version: (u8, u8), local_address: String, connection_id: u64) -> Session {
        let bolt5 = version.0 >= 5;
        Session {
            service,
            version,
            shape: Shape { element_ids: bolt5, utc_datetimes: bolt5 },
            state: State::Connected,
            role: None,
            run_role: Default::default(),
            tx: None,
            streams: Vec::new(),
            pending_pull: None,
            next_qid: 0,
            routing_address: None,
            local_address,
            connection_id: format!("bolt-{connection_id}"),
            breached: false,
            reset_closed_a_result: false,
            notification_filter: super::notifications::Filter::all(),
            caller: crate::registry::Caller {
                connection: format!("bolt-{connection_id}").into(),
                ..Default::default()
            },
            probe: None,
            scratch: Encoder::new(),
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// Whether the client has logged on (and not logged off since).
    pub fn is_authenticated(&self) -> bool {
        self.role.is_some()
    }

    /// Lets running queries notice a client that went away or sent RESET.
    pub fn set_probe(&mut self, probe: Arc<dyn Fn() -> Liveness + Send + Sync>) {
        self.probe = Some(probe);
    }

    /// The client's address, as `SHOW TRANSACTIONS` lists it (`clientAddress`).
    pub fn set_client_address(&mut self, address: &str) {
        self.caller.client = address.into();
    }

    fn interrupt(&self, deadline: ClientDeadline) -> Arc<Interrupt> {
        match &self.probe {
            Some(p) => {
                let p = p.clone();
                self.service.interrupt_probing(deadline, move || p() != Liveness::Alive)
            }
            None => self.service.interrupt(deadline),
        }
    }

    /// Answers a request the connection could not take (too large, or not PackStream) with a FAILURE; the
    /// connection must close after it.
    /// Answers IGNORED to `message` when the client has already sent a RESET after it (the connection saw it
    /// queued), as Neo4j interrupts on a RESET's arrival: a driver closing a session sends PULL then RESET, and
    /// must not be handed more rows it will only DISCARD into a state that no longer has them. True if ignored.
    pub fn ignore_before_reset(&mut self, message: &Ps, out: &mut Vec<u8>) -> bool {
        let Ps::Struct(tag, _) = message else { return false };
        let interruptible =
            matches!(self.state, State::Ready | State::Streaming | State::TxReady | State::TxStreaming | State::Failed);
        if !interruptible || *tag == msg::RESET || *tag == msg::GOODBYE {
            return false;
        }
        self.respond(out, msg::IGNORED, None);
        true
    }

    pub fn reject(&mut self, error: ServerError, out: &mut Vec<u8>) {
        self.fail(out, error);
        self.state = State::Defunct;
    }

    /// The address clients reach this server at: the one the client used, else the socket's.
    fn address(&self) -> String {
        self.routing_address.clone().unwrap_or_else(|| self.local_address.clone())
    }

    /// Handles one request message, appending chunked responses to `out`.
    pub fn handle(&mut self, message: Ps, out: &mut Vec<u8>) -> Control {
        let mut caller = self.caller.clone();
        caller.metadata = self.tx_metadata(&message);
        crate::registry::as_caller(caller, || self.handle_message(message, out))
    }

    /// The `tx_metadata` of a BEGIN or RUN, which `SHOW TRANSACTIONS` lists for the transaction it begins or the
    /// auto-commit statement it runs (a RUN in an open transaction is listed with its transaction's).
    fn tx_metadata(&self, message: &Ps) -> Option<Arc<plexus::cypher::Map>> {
        let extra = match message {
            Ps::Struct(msg::RUN, fields) => fields.get(2)?,
            Ps::Struct(msg::BEGIN, fields) => fields.first()?,
            _ => return None,
        };
        match values::decode_param(extra.get("tx_metadata")?, self.shape) {
            Ok(plexus::cypher::Value::Map(map)) if !map.is_empty() => Some(map),
            _ => None,
        }
    }

    fn handle_message(&mut self, message: Ps, out: &mut Vec<u8>) -> Control {
        let (tag, fields) = match message {
            Ps::Struct(tag, fields) => (tag, fields),
            _ => {
                self.fail(out, ServerError::request("a Bolt message must be a structure"));
                self.state = State::Defunct;
                return Control::Close;
            }
        };
        if tag == msg::GOODBYE {
            return Control::Close;
        }
        if self.state == State::Failed && tag != msg::RESET {
            self.respond(out, msg::IGNORED, None);
            return Control::Continue;
        }
        if !matches!(tag, msg::PULL | msg::DISCARD) {
            self.run_role.set(None);
        }
        let after_reset_of_a_result = std::mem::take(&mut self.reset_closed_a_result);
        let result = match tag {
            msg::HELLO => self.hello(&fields, out),
            msg::LOGON => self.logon(&fields, out),
            msg::LOGOFF => self.logoff(out),
            msg::RESET => {
                self.reset_closed_a_result = !self.streams.is_empty();
                self.reset();
                self.state = if self.role.is_some() { State::Ready } else { self.unauthenticated_state() };
                self.success(out, map([]));
                Ok(())
            }
            // A RUN that fails leaves the session failed: its PULL is ignored, and the RESET after clears the role.
            msg::RUN => self.run(&fields, out),
            msg::PULL => self.pull(&fields, out, false),
            // A driver that resets a connection while a result streams (a session closed mid-result) can send the
            // DISCARD it decided on for that result after the RESET, when the PULL's reply crossed the RESET on
            // the wire (seen with the JavaScript driver): the result is gone already, so the DISCARD is done,
            // instead of a protocol breach that closes the connection under the next query.
            msg::DISCARD if after_reset_of_a_result && self.state == State::Ready => {
                self.success(out, map([]));
                Ok(())
            }
            msg::DISCARD => self.pull(&fields, out, true),
            msg::BEGIN => self.begin(&fields, out),
            msg::COMMIT => self.commit(out),
            msg::ROLLBACK => self.rollback(out),
            msg::ROUTE => self.route(&fields, out),
            msg::TELEMETRY if self.version >= (5, 4) => self.authenticated().map(|_| self.success(out, map([]))),
            other => Err(ServerError::request(format!("unknown Bolt message 0x{other:02X}"))),
        };
        if let Err(e) = result {
            let defunct = e.code == "Neo.ClientError.Security.Unauthorized" || std::mem::take(&mut self.breached);
            self.fail(out, e);
            if defunct || matches!(self.state, State::Connected | State::Authentication | State::Defunct) {
                self.state = State::Defunct;
            } else {
                self.state = State::Failed;
            }
        }
        if self.state == State::Defunct {
            Control::Close
        } else {
            Control::Continue
        }
    }

    /// The error for `message` sent in a state that does not take it, in Neo4j's words; the connection closes
    /// after it.
    fn out_of_state(&mut self, message: &str) -> ServerError {
        self.breached = true;
        let state = match self.state {
            State::Connected => "CONNECTED",
            State::Authentication => "AUTHENTICATION",
            State::Ready => "READY",
            State::Streaming => "STREAMING",
            State::TxReady => "TX_READY",
            State::TxStreaming => "TX_STREAMING",
            State::Failed => "FAILED",
            State::Defunct => "DEFUNCT",
        };
        ServerError::request(format!("Message '{message}' cannot be handled by a session in the {state} state."))
    }

    fn unauthenticated_state(&self) -> State {
        if self.version >= (5, 1) {
            State::Authentication
        } else {
            State::Connected
        }
    }

    /// The role the logged-on user has now: a user given another role, or dropped, since logging on gets the new
    /// rights (or none) from the next message, as HTTP requests do, rather than for as long as a driver keeps the
    /// connection pooled.
    fn authenticated(&self) -> Result<Role, ServerError> {
        match (self.role, self.state) {
            (Some(role), State::Ready | State::Streaming | State::TxReady | State::TxStreaming) => {
                let auth = &self.service.auth;
                if !auth.enabled() || self.caller.user.is_empty() {
                    return Ok(role);
                }
                if let Some(role) = self.run_role.take() {
                    return Ok(role);
                }
                let role = auth.role_of(&self.caller.user).ok_or_else(|| {
                    ServerError::new(
                        "Neo.ClientError.Security.Unauthorized",
                        format!("The user '{}' no longer exists: log on again as another user.", self.caller.user),
                    )
                })?;
                Ok(role)
            }
            _ => Err(ServerError::request(format!("the message is not allowed in state {:?}", self.state))),
        }
    }

    fn hello(&mut self, fields: &[Ps], out: &mut Vec<u8>) -> Result<(), ServerError> {
        if self.state != State::Connected {
            return Err(self.out_of_state("HELLO"));
        }
        let extra = fields.first().ok_or_else(|| ServerError::request("HELLO needs a metadata map"))?;
        if let Some(routing) = extra.get("routing") {
            self.routing_address = routing.get("address").and_then(Ps::as_str).map(str::to_owned);
        }
        self.notification_filter = super::notifications::Filter::from_extra(&self.notification_filter, extra);
        let mut metadata = vec![
            ("server".to_string(), Ps::String(self.service.agent.clone())),
            ("connection_id".to_string(), Ps::String(self.connection_id.clone())),
            ("hints".to_string(), map([])),
        ];
        if self.version < (5, 0) {
            let patches = extra.get("patch_bolt");
            if let Some(Ps::List(p)) = patches {
                if p.iter().any(|x| x.as_str() == Some("utc")) {
                    self.shape.utc_datetimes = true;
                    metadata.push(("patch_bolt".into(), Ps::List(vec![Ps::String("utc".into())])));
                }
            }
        }
        if self.version >= (5, 1) {
            self.state = State::Authentication;
        } else {
            self.role = Some(self.authenticate(extra)?);
            self.caller.user = extra.get("principal").and_then(Ps::as_str).unwrap_or("").into();
            self.state = State::Ready;
        }
        self.success(out, Ps::Map(metadata));
        Ok(())
    }

    fn logon(&mut self, fields: &[Ps], out: &mut Vec<u8>) -> Result<(), ServerError> {
        if self.version < (5, 1) || self.state != State::Authentication {
            return Err(self.out_of_state("LOGON"));
        }
        let auth = fields.first().ok_or_else(|| ServerError::request("LOGON needs an auth map"))?;
        self.role = Some(self.authenticate(auth)?);
        self.caller.user = auth.get("principal").and_then(Ps::as_str).unwrap_or("").into();
        self.state = State::Ready;
        self.success(out, map([]));
        Ok(())
    }

    fn logoff(&mut self, out: &mut Vec<u8>) -> Result<(), ServerError> {
        if self.version < (5, 1) || self.state != State::Ready {
            return Err(self.out_of_state("LOGOFF"));
        }
        self.role = None;
        self.state = State::Authentication;
        self.success(out, map([]));
        Ok(())
    }

    fn authenticate(&self, auth: &Ps) -> Result<Role, ServerError> {
        let scheme = auth.get("scheme").and_then(Ps::as_str).unwrap_or("none");
        let principal = auth.get("principal").and_then(Ps::as_str).unwrap_or("");
        let credentials = auth.get("credentials").and_then(Ps::as_str).unwrap_or("");
        self.service.auth.authenticate(scheme, principal, credentials).map_err(|e| {
            self.service.metrics.auth_failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            match e {
                crate::auth::AuthError::UnsupportedScheme(_) => {
                    ServerError::new("Neo.ClientError.Security.Unauthorized", e.to_string())
                }
                crate::auth::AuthError::TooManyAttempts { .. } => {
                    ServerError::new("Neo.ClientError.Security.AuthenticationRateLimit", e.to_string())
                }
                _ => ServerError::unauthorized(),
            }
        })
    }

    fn run(&mut self, fields: &[Ps], out: &mut Vec<u8>) -> Result<(), ServerError> {
        let role = self.authenticated()?;
        self.run_role.set(Some(role));
        let query =
            fields.first().and_then(Ps::as_str).ok_or_else(|| ServerError::request("RUN needs a query string"))?;
        let params = self.params(fields.get(1))?;
        let extra = fields.get(2).unwrap_or(&NULL);
        refuse_impersonation(extra)?;
        let started = Instant::now();
        let address = self.address();
        let (target, outcome, rest) = match self.state {
            State::Ready => {
                check_extra(extra)?;
                let target = self.service.select_database(extra.get("db").and_then(Ps::as_str))?;
                check_bolt_bookmarks(extra, &self.service)?;
                let mode = access_mode(extra);
                let interrupt = self.interrupt(client_deadline(extra, started));
                let service = &self.service;
                match service.run_administrative(target, role, mode, query, &params, &address, &interrupt, None) {
                    Some(outcome) => (target, outcome?, None),
                    None => {
                        let (outcome, rest) = service.run_auto_commit_streaming(
                            role,
                            mode,
                            query,
                            Arc::new(params),
                            &interrupt,
                            FIRST_ROWS,
                        )?;
                        (target, outcome, rest)
                    }
                }
            }
            State::TxReady | State::TxStreaming => {
                let deadline = self.tx.as_ref().map(|t| t.deadline).unwrap_or_default();
                let interrupt = self.interrupt(deadline);
                let open = self.tx.as_mut().expect("a transaction is open in this state");
                let service = &self.service;
                let in_transaction = Some(open.tx.id());
                match service.run_administrative(
                    open.target,
                    role,
                    open.declared,
                    query,
                    &params,
                    &address,
                    &interrupt,
                    in_transaction,
                ) {
                    // Only a commit makes a bookmark in a transaction.
                    Some(outcome) => (open.target, Outcome { bookmark: None, ..outcome? }, None),
                    None => {
                        let (outcome, rest) = service.run_in_transaction_streaming(
                            &mut open.tx,
                            role,
                            query,
                            Arc::new(params),
                            &interrupt,
                            FIRST_ROWS,
                        )?;
                        (open.target, outcome, rest)
                    }
                }
            }
            State::Streaming => return Err(self.out_of_state("RUN")),
            _ => unreachable!("authenticated() admits only the states above"),
        };
        let in_tx = self.state != State::Ready;
        let qid = if in_tx {
            self.next_qid += 1;
            self.next_qid
        } else {
            -1
        };
        let Outcome { result, bookmark, query_type } = outcome;
        let streaming_query: Option<Arc<str>> = rest.is_some().then(|| Arc::from(query));
        let t_first = started.elapsed().as_millis() as i64;
        let mut metadata = vec![
            ("fields".to_string(), Ps::List(result.columns.iter().map(|c| Ps::String(c.clone())).collect())),
            ("t_first".to_string(), Ps::Int(t_first)),
        ];
        if in_tx {
            metadata.push(("qid".to_string(), Ps::Int(qid)));
        }
        // Only a profiled plan has figures (whatever comments or `CYPHER` options come before the PROFILE).
        let profile = result.plan_tree.as_ref().is_some_and(|tree| tree.rows.is_some());
        let notification_filter = match &self.tx {
            Some(open) if in_tx => open.notification_filter.clone(),
            _ => super::notifications::Filter::from_extra(&self.notification_filter, extra),
        };
        self.streams.push(Stream {
            qid,
            columns: result.columns.to_vec(),
            rows: result.rows.into_iter(),
            rest,
            auto_commit_deadline: (!in_tx).then(|| client_deadline(extra, started)),
            listed: streaming_query.as_ref().filter(|_| !in_tx).map(|q| self.service.registry.register_open(q)),
            query: streaming_query,
            stats: result.stats,
            plan: result.plan,
            plan_tree: result.plan_tree,
            profile,
            bookmark,
            query_type,
            started,
            db: target.name(),
            notifications: result.notifications,
            notification_filter,
        });
        self.state = if in_tx { State::TxStreaming } else { State::Streaming };
        self.success(out, Ps::Map(metadata));
        Ok(())
    }

    fn params(&self, p: Option<&Ps>) -> Result<Params, ServerError> {
        let mut params = Params::new();
        match p {
            None | Some(Ps::Null) => {}
            Some(Ps::Map(entries)) => {
                for (k, v) in entries {
                    let value = values::decode_param(v, self.shape).map_err(|e| {
                        ServerError::new("Neo.ClientError.Request.Invalid", format!("parameter ${k}: {e}"))
                    })?;
                    params.insert(k.clone(), value);
                }
            }
            Some(_) => return Err(ServerError::request("RUN parameters must be a map")),
        }
        Ok(params)
    }

    fn begin(&mut self, fields: &[Ps], out: &mut Vec<u8>) -> Result<(), ServerError> {
        self.authenticated()?;
        if self.state != State::Ready {
            return Err(self.out_of_state("BEGIN"));
        }
        let extra = fields.first().unwrap_or(&NULL);
        refuse_impersonation(extra)?;
        check_extra(extra)?;
        let target = self.service.select_database(extra.get("db").and_then(Ps::as_str))?;
        check_bolt_bookmarks(extra, &self.service)?;
        let deadline = client_deadline(extra, Instant::now());
        let declared = access_mode(extra);
        // `system` holds nothing to write: a read transaction spares the graph's writer for others.
        let mode = if target == Target::System { AccessMode::Read } else { declared };
        let notification_filter = super::notifications::Filter::from_extra(&self.notification_filter, extra);
        self.tx =
            Some(OpenTransaction { tx: self.service.begin(mode), deadline, target, declared, notification_filter });
        self.next_qid = 0;
        self.state = State::TxReady;
        self.success(out, map([]));
        Ok(())
    }

    fn commit(&mut self, out: &mut Vec<u8>) -> Result<(), ServerError> {
        if !matches!(self.state, State::TxReady | State::TxStreaming) {
            return Err(self.out_of_state("COMMIT"));
        }
        // A removed user fails here, and the transaction is rolled back with the connection.
        let role = self.authenticated()?;
        self.streams.clear();
        let open = self.tx.take().expect("a transaction is open in this state");
        if matches!(open.deadline, ClientDeadline::At(d) if Instant::now() > d) {
            self.service.rollback(open.tx);
            self.state = State::Ready;
            return Err(ServerError::new(
                "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
                "the transaction ran past its time limit and was rolled back",
            ));
        }
        self.state = State::Ready;
        let bookmark = self.service.commit(role, open.tx)?;
        self.success(out, map([("bookmark", Ps::String(bookmark))]));
        Ok(())
    }

    fn rollback(&mut self, out: &mut Vec<u8>) -> Result<(), ServerError> {
        if !matches!(self.state, State::TxReady | State::TxStreaming) {
            return Err(self.out_of_state("ROLLBACK"));
        }
        self.reset();
        self.state = State::Ready;
        self.success(out, map([]));
        Ok(())
    }

    /// A routing table naming this server for every role, so `neo4j://` URIs work against a single server.
    fn route(&mut self, fields: &[Ps], out: &mut Vec<u8>) -> Result<(), ServerError> {
        self.authenticated()?;
        if self.state != State::Ready {
            return Err(self.out_of_state("ROUTE"));
        }
        if !matches!(fields.first(), Some(Ps::Map(_))) || !matches!(fields.get(1), Some(Ps::List(_) | Ps::Null)) {
            return Err(ServerError::request("ROUTE takes a routing context map, a list of bookmarks and a database"));
        }
        let db = match fields.get(2) {
            Some(Ps::String(s)) => Some(s.as_str()),
            Some(extra @ Ps::Map(_)) => {
                refuse_impersonation(extra)?;
                extra.get("db").and_then(Ps::as_str)
            }
            None | Some(Ps::Null) => None,
            Some(_) => return Err(ServerError::request("ROUTE's database must be a name or a map")),
        };
        let target = self.service.select_database(db)?;
        let address = self.address();
        let servers: Vec<Ps> = ["WRITE", "READ", "ROUTE"]
            .into_iter()
            .map(|role| {
                map([("addresses", Ps::List(vec![Ps::String(address.clone())])), ("role", Ps::String(role.into()))])
            })
            .collect();
        // The name as the client asked for it: drivers file the table under the name the answer gives and look
        // it up under the one they asked for, so `NEO4J` answered as `neo4j` is never found.
        let name = db.map_or_else(|| target.name().to_string(), str::to_string);
        let rt = map([("ttl", Ps::Int(300)), ("db", Ps::String(name)), ("servers", Ps::List(servers))]);
        self.success(out, map([("rt", rt)]));
        Ok(())
    }

    /// Drops the open transaction and results.
    fn reset(&mut self) {
        self.streams.clear();
        if let Some(open) = self.tx.take() {
            self.service.rollback(open.tx);
        }
    }

    fn success(&mut self, out: &mut Vec<u8>, metadata: Ps) {
        self.respond(out, msg::SUCCESS, Some(metadata));
    }

    fn fail(&mut self, out: &mut Vec<u8>, e: ServerError) {
        self.respond(
            out,
            msg::FAILURE,
            Some(map([("code", Ps::String(e.code.to_string())), ("message", Ps::String(e.message))])),
        );
    }

    fn respond(&mut self, out: &mut Vec<u8>, tag: u8, field: Option<Ps>) {
        self.scratch.buf.clear();
        self.scratch.struct_header(field.is_some() as usize, tag);
        if let Some(f) = &field {
            self.scratch.value(f);
        }
        chunk(&self.scratch.buf, out);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.reset();
    }
}

/// Frames one message as chunks of at most 65,535 bytes followed by the zero-size end marker.
pub fn chunk(message: &[u8], out: &mut Vec<u8>) {
    for piece in message.chunks(u16::MAX as usize) {
        out.extend_from_slice(&(piece.len() as u16).to_be_bytes());
        out.extend_from_slice(piece);
    }
    out.extend_from_slice(&[0, 0]);
}

/// Refuses a request that asks to run as another user (`imp_user`), as Neo4j Community does: ignoring it would run
/// the work as the logged-on user while the client believes otherwise. Refused even when it names the logged-on
/// user, so that a client learns at once that the feature is missing rather than when the name changes.
fn refuse_impersonation(extra: &Ps) -> Result<(), ServerError> {
    match extra.get("imp_user") {
        None | Some(Ps::Null) => Ok(()),
        Some(_) => Err(ServerError::new(
            "Neo.ClientError.Security.Forbidden",
            "impersonation is not supported: transactions run as the user who logged on",
        )),
    }
}

/// Refuses the fields of a RUN's or BEGIN's extra map that a client got wrong, as Neo4j does: a timeout it meant
/// to set would otherwise be ignored without a word.
fn check_extra(extra: &Ps) -> Result<(), ServerError> {
    let wrong = |field: &str, want: &str, got: &Ps| {
        ServerError::request(format!("the '{field}' field must be {want}, got {got:?}"))
    };
    match extra.get("tx_timeout") {
        None | Some(Ps::Null) => {}
        Some(Ps::Int(ms)) if *ms >= 0 => {}
        Some(other) => return Err(wrong("tx_timeout", "a number of milliseconds (0 or more)", other)),
    }
    match extra.get("mode") {
        None | Some(Ps::Null) => {}
        Some(Ps::String(m)) if m == "r" || m == "w" => {}
        Some(other) => return Err(wrong("mode", "\"r\" or \"w\"", other)),
    }
    match extra.get("db") {
        None | Some(Ps::Null) | Some(Ps::String(_)) => Ok(()),
        Some(other) => Err(wrong("db", "a database name", other)),
    }
}

fn access_mode(extra: &Ps) -> AccessMode {
    match extra.get("mode").and_then(Ps::as_str) {
        Some("r") => AccessMode::Read,
        _ => AccessMode::Write,
    }
}

/// The deadline a RUN's or BEGIN's `tx_timeout` sets, counted from `from`.
fn client_deadline(extra: &Ps, from: Instant) -> ClientDeadline {
    match extra.get("tx_timeout").and_then(Ps::as_int) {
        None => ClientDeadline::ServerLimit,
        Some(0) => ClientDeadline::Unlimited,
        Some(ms) => ClientDeadline::At(from + Duration::from_millis(ms.max(0) as u64)),
    }
}

/// The `bookmarks` of a BEGIN or an auto-commit RUN, checked (see [`crate::service::check_bookmarks`]), and
/// its `tx_metadata` a map.
fn check_bolt_bookmarks(extra: &Ps, service: &Service) -> Result<(), ServerError> {
    if !matches!(extra.get("tx_metadata"), None | Some(Ps::Null | Ps::Map(_))) {
        return Err(ServerError::request("tx_metadata must be a map"));
    }
    let items = match extra.get("bookmarks") {
        None | Some(Ps::Null) => return Ok(()),
        Some(Ps::List(items)) => items,
        // A bookmark given as a single string (or anything else) was ignored: a client relying on it to read its
        // own writes would not be told.
        Some(_) => {
            return Err(ServerError::new(
                "Neo.ClientError.Transaction.InvalidBookmark",
                "bookmarks must be a list of strings",
            ))
        }
    };
    let bookmarks = items
        .iter()
        .map(|item| {
            item.as_str().ok_or_else(|| {
                ServerError::new("Neo.ClientError.Transaction.InvalidBookmark", "a bookmark must be a string")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    crate::service::check_bookmarks(service, &bookmarks)
}
