//! The Bolt protocol (versions 4.4 and 5.0–5.4), so the official Neo4j drivers and tools connect unchanged:
//! [`connection`] does the handshake and framing, [`session`] the state machine, [`values`] the value mapping.
//!
//! Each connection is served by its own thread with blocking I/O, the classic database-server design: a request
//! costs one wake-up of the thread that then parses, runs and answers it, with no hand-off between an event loop
//! and a worker pool (which the profile of the first, event-loop version showed dominating point reads). An idle
//! connection costs a parked thread with a small stack.

pub mod connection;
pub mod notifications;
pub mod session;
pub mod values;
pub mod websocket;

use std::collections::HashMap;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::metrics::Protocol;
use crate::service::Service;
use crate::tls::Acceptor;
pub use connection::ConnectionLimits;
use connection::Standing;

/// Stack of a connection thread. Queries recurse (parser, planner, expression evaluation, and encoding and
/// dropping nested values): the parser bounds the nesting of a query's text, but a value built at run time
/// (`reduce` wrapping a list in a list) can nest thousands deep, and a thread that overflows its stack takes
/// the whole server down. The memory is reserved, not committed: only pages a query touches are used.
pub(crate) const QUERY_STACK: usize = 64 << 20;

/// Open connections, so shutdown can wake the idle ones and wait for the busy ones.
#[derive(Default)]
struct Connections {
    open: Mutex<HashMap<u64, OpenConnection>>,
    closed: Condvar,
}

struct OpenConnection {
    socket: TcpStream,
    standing: Arc<Standing>,
}

/// A running Bolt listener.
pub struct BoltListener {
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    connections: Arc<Connections>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

impl BoltListener {
    /// Starts accepting on `listener`; at most `max_connections` are served at once (more are closed at once and
    /// counted).
    pub fn start(
        listener: TcpListener,
        service: Arc<Service>,
        limits: ConnectionLimits,
        max_connections: usize,
        tls: Option<Acceptor>,
    ) -> std::io::Result<BoltListener> {
        let addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(Connections::default());
        let (stop, conns) = (stopping.clone(), connections.clone());
        let acceptor = std::thread::Builder::new()
            .name("bolt-accept".into())
            .spawn(move || accept_loop(listener, service, limits, max_connections, tls, stop, conns))?;
        Ok(BoltListener { addr, stopping, connections, acceptor: Some(acceptor) })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, closes idle connections, and waits up to `grace` for busy ones to finish their request
    /// (a running query, its commit and its answer) and close.
    pub fn stop(mut self, grace: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wake the blocking accept with a connection of our own.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        let deadline = Instant::now() + grace;
        let mut open = self.connections.open.lock();
        // Idle connections wake to an end of file and close at once. Busy ones are not touched (a query's probe
        // would take a shut read side for a client that hung up, and cancel it): they see `stopping` themselves
        // once they have answered.
        for c in open.values() {
            c.standing.close_if_waiting(&c.socket);
        }
        while !open.is_empty() {
            if self.connections.closed.wait_until(&mut open, deadline).timed_out() {
                for c in open.values() {
                    let _ = c.socket.shutdown(Shutdown::Both);
                }
                break;
            }
        }
    }
}

fn accept_loop(
    listener: TcpListener,
    service: Arc<Service>,
    limits: ConnectionLimits,
    max_connections: usize,
    tls: Option<Acceptor>,
    stopping: Arc<AtomicBool>,
    connections: Arc<Connections>,
) {
    let ids = AtomicU64::new(1);
    let local = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    for socket in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(socket) = socket else {
            // Out of file descriptors and the like: back off instead of spinning.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let id = ids.fetch_add(1, Ordering::Relaxed);
        let standing = Arc::new(Standing::new(stopping.clone()));
        {
            let mut open = connections.open.lock();
            if open.len() >= max_connections {
                service.metrics.connections_refused.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            match socket.try_clone() {
                Ok(handle) => open.insert(id, OpenConnection { socket: handle, standing: standing.clone() }),
                Err(_) => continue,
            };
        }
        let _ = socket.set_nodelay(true);
        let (service, limits, local, conns) = (service.clone(), limits.clone(), local.clone(), connections.clone());
        let tls = tls.clone();
        let spawned = std::thread::Builder::new().name(format!("bolt-{id}")).stack_size(QUERY_STACK).spawn(move || {
            service.metrics.connection_opened(Protocol::Bolt);
            serve_socket(socket, &service, &limits, local, id, tls, standing);
            service.metrics.connection_closed(Protocol::Bolt);
            conns.open.lock().remove(&id);
            conns.closed.notify_all();
        });
        if spawned.is_err() {
            connections.open.lock().remove(&id);
        }
    }
}

fn serve_socket(
    socket: TcpStream,
    service: &Arc<Service>,
    limits: &ConnectionLimits,
    local: String,
    id: u64,
    tls: Option<Acceptor>,
    standing: Arc<Standing>,
) {
    let Ok(probe_handle) = socket.try_clone() else { return };
    let client = socket.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let timeouts = socket.try_clone().ok();
    let set_timeout = move |t: Option<Duration>| {
        if let Some(s) = &timeouts {
            let _ = s.set_read_timeout(t);
        }
    };
    #[cfg(unix)]
    let probe: Arc<dyn Fn() -> connection::Liveness + Send + Sync> = {
        use std::os::fd::AsRawFd;
        let encrypted = tls.is_some();
        let standing = standing.clone();
        Arc::new(move || {
            let seen = standing.judge(connection::probe_socket(probe_handle.as_raw_fd()));
            // Under TLS the bytes are records, not messages: only a closed socket tells anything.
            if encrypted && seen == connection::Liveness::Reset {
                connection::Liveness::Alive
            } else {
                seen
            }
        })
    };
    #[cfg(not(unix))]
    let probe: Arc<dyn Fn() -> connection::Liveness + Send + Sync> = {
        drop(probe_handle);
        Arc::new(|| connection::Liveness::Alive)
    };
    match tls {
        Some(acceptor) => {
            set_timeout(Some(limits.handshake_timeout));
            if speaks_plain_bolt(&socket) {
                // Closed without a word, as Neo4j does: the drivers then say to check the encryption settings.
                // A TLS alert would be read as the server's choice of protocol version ("0.3").
                return;
            }
            let Ok(conn) = rustls::ServerConnection::new(acceptor.config().clone()) else { return };
            let mut stream = rustls::StreamOwned::new(conn, socket);
            connection::serve(&mut stream, service.clone(), limits, local, &client, id, &set_timeout, probe, &standing);
        }
        None => {
            let mut socket = socket;
            connection::serve(&mut socket, service.clone(), limits, local, &client, id, &set_timeout, probe, &standing);
        }
    }
}

/// Whether a client reached the TLS port with a plaintext Bolt handshake (its magic where a TLS record should
/// begin). Peeks, so a TLS client's bytes are left for the handshake.
fn speaks_plain_bolt(socket: &TcpStream) -> bool {
    let mut first = [0u8; 4];
    matches!(socket.peek(&mut first), Ok(4)) && first == [0x60, 0x60, 0xB0, 0x17]
}
