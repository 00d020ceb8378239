//! The Plexus server: the database behind Bolt (so the official Neo4j drivers connect unchanged) and HTTP/JSON
//! listeners, with authentication, limits, metrics and graceful shutdown.
//!
//! Layers: [`config`] (settings) → [`Server`] (listeners and lifecycle) → protocol front ends ([`bolt`], [`http`]) →
//! [`service`] (queries, transactions, access control, error codes) → the embedded [`plexus::Database`].
//! [`packstream`] is Bolt's value encoding; [`auth`] holds users; [`metrics`] counts everything.

/// Prints a status line, ignoring a closed or failing stdout: a supervisor that closed the server's pipes before
/// its SIGTERM (Java's `Process.destroy` does) must still get a clean shutdown and its checkpoint, where
/// `println!` would panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, $($arg)*).and_then(|_| out.flush());
    }};
}

/// [`say`] for stderr.
macro_rules! say_err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub mod auth;
pub mod backup;
pub mod bolt;
pub mod client_config;
pub mod config;
mod file_watch;
pub mod http;
pub mod loadgen;
pub mod metrics;
pub mod packstream;
mod password_cache;
pub mod registry;
pub mod service;
pub mod system;
pub mod tls;
pub mod transactions;
pub mod tx_metadata;
pub mod users;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use config::ServerConfig;
pub use service::Service;

/// A running server.
pub struct Server {
    pub bolt_addr: Option<SocketAddr>,
    pub http_addr: Option<SocketAddr>,
    /// The password generated for user `neo4j` on first start, to print once.
    pub generated_password: Option<String>,
    pub service: Arc<Service>,
    shutdown: watch::Sender<bool>,
    listeners: Vec<JoinHandle<()>>,
    bolt: Option<bolt::BoltListener>,
    checkpoint_on_shutdown: bool,
}

impl Server {
    /// Opens the database and starts the listeners (port 0 picks a free port; see `bolt_addr`/`http_addr`).
    pub async fn start(config: &ServerConfig) -> Result<Server, String> {
        config.validate()?;
        let options = plexus::Options {
            durability: config.durability()?,
            checkpoint_after_bytes: config.checkpoint_after_bytes,
            ..plexus::Options::default()
        };
        let data = config.data.clone();
        let db = tokio::task::spawn_blocking(move || plexus::Database::open_with(&data, options))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("cannot open the database in {}: {e}", config.data.display()))?;
        // What recovery dropped goes to the operator's log, loudly when whole commits were among it.
        let report = db.recovery_report();
        if report.lost_data() {
            say_err!("plexus: WARNING: recovery dropped committed data after damage to the log: {report}");
        } else if !report.is_clean() {
            say_err!("plexus: recovery: {report}");
        }
        let (auth, generated_password) = if config.auth {
            let (a, g) = auth::Auth::open(&config.data, config.password.as_deref()).map_err(|e| e.to_string())?;
            (a.with_lockout(config.lockout()), g)
        } else {
            (auth::Auth::disabled(), None)
        };
        let mut service = Service::new(db, auth, config.limits());
        service.backup_dir = config.backup_dir.clone();
        let service = Arc::new(service);
        service.db.engine().set_file_access(plexus::cypher::FileAccess::Under(config.import_dir()));
        let created_users = generated_password.is_some();
        match Self::start_with(service, config, generated_password).await {
            // The generated password is printed once the server is up: if it never comes up (a port taken, a
            // bad TLS key), the users file it went into is removed, so that the next start makes and shows one
            // instead of locking everyone out.
            Err(e) if created_users => {
                let users = config.data.join(auth::USERS_FILE);
                match std::fs::remove_file(&users) {
                    Ok(()) => Err(e),
                    Err(r) => Err(format!(
                        "{e} (and the users file made for it, {}, could not be removed: {r})",
                        users.display()
                    )),
                }
            }
            started => started,
        }
    }

    /// Starts the listeners in front of an existing service (tests, embedding).
    pub async fn start_with(
        service: Arc<Service>,
        config: &ServerConfig,
        generated_password: Option<String>,
    ) -> Result<Server, String> {
        let (bolt, http) = config.addresses()?;
        let tls = match &config.tls {
            Some(t) => Some(tls::acceptor(&t.cert, &t.key)?),
            None => None,
        };
        let (shutdown, shutdown_rx) = watch::channel(false);
        // Listeners on the async runtime (HTTP) register here; Bolt runs on threads of its own.
        let mut listeners: Vec<JoinHandle<()>> = Vec::new();
        let mut bolt_listener = None;
        if let Some(addr) = bolt {
            let listener =
                std::net::TcpListener::bind(addr).map_err(|e| format!("cannot listen for Bolt on {addr}: {e}"))?;
            let started = bolt::BoltListener::start(
                listener,
                service.clone(),
                config.connection_limits(),
                config.max_connections,
                tls.clone(),
            )
            .map_err(|e| format!("cannot start the Bolt listener: {e}"))?;
            bolt_listener = Some(started);
        }
        let bolt_addr = bolt_listener.as_ref().map(|b| b.local_addr());
        let mut http_addr = None;
        if let Some(addr) = http {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen for HTTP on {addr}: {e}"))?;
            http_addr = listener.local_addr().ok();
            let limits = config.http_limits();
            let state = http::HttpState::new(service.clone(), &limits);
            let count =
                config.worker_threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
            let loops =
                http::loops::EventLoops::start(count, config.query_threads.div_ceil(count.max(1)), bolt::QUERY_STACK)
                    .map_err(|e| format!("cannot start the HTTP event loops: {e}"))?;
            let serve = http::listen(listener, state, limits, tls.clone(), shutdown_rx.clone(), Arc::new(loops));
            listeners.push(tokio::spawn(serve));
        }
        Ok(Server {
            bolt_addr,
            http_addr,
            generated_password,
            service,
            shutdown,
            listeners,
            bolt: bolt_listener,
            checkpoint_on_shutdown: config.checkpoint_on_shutdown,
        })
    }

    /// Stops accepting, lets in-flight requests finish for up to `grace` (then cancels them), closes the
    /// connections, and checkpoints the database.
    pub async fn shutdown(self, grace: Duration) -> Result<(), String> {
        let _ = self.shutdown.send(true);
        // Weak: an aborted task is dropped later, on a worker thread, and must not keep the database open past
        // the return of `shutdown`.
        let service = Arc::downgrade(&self.service);
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            if let Some(service) = service.upgrade() {
                service.cancel_all();
            }
        });
        for l in self.listeners {
            let _ = l.await;
        }
        if let Some(b) = self.bolt {
            let _ = tokio::task::spawn_blocking(move || b.stop(grace + Duration::from_secs(1))).await;
        }
        canceller.abort();
        if self.checkpoint_on_shutdown && self.service.db.path().is_some() {
            let service = self.service.clone();
            tokio::task::spawn_blocking(move || service.db.checkpoint())
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("checkpoint at shutdown failed: {e}"))?;
        }
        Ok(())
    }
}

/// Runs a server until SIGTERM or Ctrl-C, printing where it listens. The entry point of `plexus serve`.
pub fn run(config: ServerConfig) -> Result<(), String> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // HTTP queries run on the blocking threads: the stack of a Bolt connection's thread, for the same reason.
    builder.enable_all().max_blocking_threads(config.query_threads.max(1)).thread_stack_size(bolt::QUERY_STACK);
    if let Some(n) = config.worker_threads {
        builder.worker_threads(n.max(1));
    }
    let runtime = builder.build().map_err(|e| format!("cannot start the runtime: {e}"))?;
    // Whether a password given now can take effect: only a new data directory's first user takes it.
    let password_ignored = config.auth && config.password.is_some() && config.data.join(auth::USERS_FILE).exists();
    runtime.block_on(async {
        let server = Server::start(&config).await?;
        if password_ignored {
            say!(
                "Note: the password given applies only to a new data directory; {} has users already, and theirs \
                 stay as they are (change one with `plexus user passwd --data {}`).",
                config.data.display(),
                config.data.display()
            );
        }
        let secure = if config.tls.is_some() { "s" } else { "" };
        if let Some(a) = server.bolt_addr {
            say!("Bolt listening on bolt{}://{a}", if secure.is_empty() { "" } else { "+s" });
        }
        if let Some(a) = server.http_addr {
            say!("HTTP listening on http{secure}://{a}");
        }
        if let Some(p) = &server.generated_password {
            say!("Generated the initial password for user '{}': {p}", auth::INITIAL_USER);
            say!("It is shown only this once; it is stored hashed in {}.", config.data.display());
        }
        say!("Data in {}. Stop with Ctrl-C or SIGTERM.", config.data.display());
        let watcher = tokio::spawn(report_checkpoint_failures(server.service.clone()));
        wait_for_signal().await;
        watcher.abort();
        say!("Shutting down: finishing in-flight requests, then a checkpoint.");
        server.shutdown(Duration::from_secs(10)).await?;
        say!("Stopped.");
        Ok(())
    })
}

/// Says when an automatic checkpoint fails, when the log cannot start its next segment, and when the database
/// starts refusing writes: each happens in the background or to some client, and nothing else would tell the
/// operator.
async fn report_checkpoint_failures(service: Arc<service::Service>) {
    let mut seen = service.db.checkpoint_failures().0;
    let (mut rollover, mut refusing) = (None, false);
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if let Some(refusal) = service.db.store().refusing_writes() {
            if !refusing {
                say!("Error: {refusal}. Reads go on; restart the server once the cause is fixed.");
                refusing = true;
            }
            continue;
        }
        let (failures, error) = service.db.checkpoint_failures();
        if failures > seen {
            say!(
                "Warning: a checkpoint failed: {}. No commit is lost (the log keeps them); the next checkpoint \
                 tries again.",
                error.unwrap_or_default()
            );
            seen = failures;
        }
        let now = service.db.log_rollover_failure();
        if now.is_some() && now != rollover {
            say!(
                "Warning: the log cannot start its next segment: {}. Commits go on in the current one; the next \
                 commit tries again.",
                now.as_deref().unwrap_or_default()
            );
        }
        rollover = now;
    }
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
