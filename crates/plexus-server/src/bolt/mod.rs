//! The Bolt protocol (versions 4.4 and 5.0–5.4), so the official Neo4j drivers and tools connect unchanged:
//! [`connection`] does the handshake and framing, [`session`] the state machine, [`values`] the value mapping.

pub mod connection;
pub mod session;
pub mod values;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use crate::metrics::Protocol;
use crate::service::Service;
use crate::tls::Acceptor;
pub use connection::ConnectionLimits;

/// Accepts Bolt connections until `shutdown` turns true; at most `max_connections` are served at once (more are
/// closed at once and counted).
pub async fn listen(
    listener: TcpListener,
    service: Arc<Service>,
    limits: ConnectionLimits,
    max_connections: usize,
    tls: Option<Acceptor>,
    mut shutdown: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(max_connections));
    let ids = AtomicU64::new(1);
    let local = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => break,
        };
        let Ok((socket, _peer)) = accepted else { continue };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            service.metrics.connections_refused.fetch_add(1, Ordering::Relaxed);
            drop(socket);
            continue;
        };
        let _ = socket.set_nodelay(true);
        let service = service.clone();
        let limits = limits.clone();
        let local = local.clone();
        let id = ids.fetch_add(1, Ordering::Relaxed);
        let shutdown = shutdown.clone();
        let tls = tls.clone();
        connections.spawn(async move {
            service.metrics.connection_opened(Protocol::Bolt);
            match tls {
                Some(acceptor) => {
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(limits.handshake_timeout, acceptor.accept(socket)).await
                    {
                        connection::serve(stream, service.clone(), limits, local, id, shutdown).await;
                    }
                }
                None => connection::serve(socket, service.clone(), limits, local, id, shutdown).await,
            }
            service.metrics.connection_closed(Protocol::Bolt);
            drop(permit);
        });
        // Reap finished connection tasks so the set does not grow without bound.
        while connections.try_join_next().is_some() {}
    }
    // Connections see the same shutdown signal and close once their current work is done.
    while connections.join_next().await.is_some() {}
}
