//! The HTTP/JSON listener: the Neo4j Query API (so the Neo4j drivers' `http://` mode works), REST resources for
//! nodes, relationships and edge batches, and the operational endpoints (`/health`, `/ready`, `/metrics`,
//! `/openapi.json`).
//!
//! This module owns the listener (accepting connections, optional TLS, serving each with hyper, connection limits
//! and graceful shutdown), the shared state, the route table and the operational endpoints. [`query`] serves the
//! Query API with [`transactions`] holding its open transactions and [`quick`] choosing which statements run on the
//! event loop, [`rest`] and [`relationships`] the REST resources, [`json`] converts
//! values and parses bodies, [`caller`] authenticates, [`cors`] lets named web origins in, [`error`] shapes failures. Every route is listed once in
//! [`route_table`] and described in `openapi.json`; a test keeps the two in step.

pub mod caller;
pub mod connection;
pub mod cors;
pub mod error;
pub mod json;
pub mod loops;
pub mod query;
pub mod quick;
pub mod relationships;
pub mod rest;
pub mod stream;
pub mod transactions;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, patch, post, MethodRouter};
use axum::Router;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use self::error::ApiError;
use self::json::Format;
use self::transactions::Transactions;
use crate::metrics::Protocol;
use crate::service::Service;
use crate::tls::Acceptor;

/// The OpenAPI description of every route, served as is by `GET /openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");

/// Settings of the HTTP listener.
#[derive(Clone, Debug)]
pub struct HttpLimits {
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// A connection with no request for this long is closed, once one of its requests authenticated.
    pub idle_timeout: Duration,
    /// A connection none of whose requests authenticated is closed when it sends no complete request head for
    /// this long (see [`connection`]).
    pub auth_timeout: Duration,
    /// The TLS handshake must complete within this.
    pub handshake_timeout: Duration,
    /// An explicit transaction with no request for this long is rolled back.
    pub transaction_timeout: Duration,
    pub max_connections: usize,
    /// Origins whose web pages may call the API (`*`: any); none by default ([`cors`]).
    pub cors_origins: Vec<String>,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_body_bytes: 64 << 20,
            idle_timeout: Duration::from_secs(2 * 3600),
            auth_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(10),
            transaction_timeout: Duration::from_secs(30),
            max_connections: 4096,
            cors_origins: Vec::new(),
        }
    }
}

/// What every handler shares.
pub struct HttpState {
    pub service: Arc<Service>,
    pub transactions: Transactions,
    pub quick: quick::QuickStatements,
    pub cors: cors::Cors,
    /// Set when shutdown begins, so `/ready` turns away new work.
    pub stopping: AtomicBool,
}

impl HttpState {
    pub fn new(service: Arc<Service>, limits: &HttpLimits) -> Arc<HttpState> {
        Arc::new(HttpState {
            service,
            transactions: Transactions::new(limits.transaction_timeout),
            quick: quick::QuickStatements::default(),
            cors: cors::Cors::new(&limits.cors_origins),
            stopping: AtomicBool::new(false),
        })
    }
}

type Handler = MethodRouter<Arc<HttpState>>;

/// Every route: method, path (in OpenAPI's `{param}` notation, which is also axum's) and handler.
pub fn route_table() -> Vec<(Method, &'static str, Handler)> {
    vec![
        (Method::GET, "/", get(discovery)),
        (Method::GET, "/health", get(health)),
        (Method::GET, "/ready", get(ready)),
        (Method::GET, "/metrics", get(metrics)),
        (Method::GET, "/openapi.json", get(openapi)),
        (Method::POST, "/db/{name}/query/v2", post(query::auto_commit)),
        (Method::POST, "/db/{name}/query/v2/tx", post(query::open)),
        (Method::POST, "/db/{name}/query/v2/tx/{id}", post(query::run)),
        (Method::DELETE, "/db/{name}/query/v2/tx/{id}", delete(query::rollback)),
        (Method::POST, "/db/{name}/query/v2/tx/{id}/commit", post(query::commit)),
        (Method::POST, "/db/{name}/nodes", post(rest::create_node)),
        (Method::GET, "/db/{name}/nodes/{id}", get(rest::get_node)),
        (Method::PATCH, "/db/{name}/nodes/{id}", patch(rest::update_node)),
        (Method::DELETE, "/db/{name}/nodes/{id}", delete(rest::delete_node)),
        (Method::GET, "/db/{name}/nodes/{id}/relationships", get(relationships::node_relationships)),
        (Method::GET, "/db/{name}/nodes/{id}/neighbours", get(relationships::node_neighbours)),
        (Method::GET, "/db/{name}/nodes/{id}/degree", get(relationships::node_degree)),
        (Method::GET, "/db/{name}/labels/{label}/nodes/{key}", get(rest::get_node_by_key)),
        (Method::PATCH, "/db/{name}/labels/{label}/nodes/{key}", patch(rest::update_node_by_key)),
        (Method::DELETE, "/db/{name}/labels/{label}/nodes/{key}", delete(rest::delete_node_by_key)),
        (Method::POST, "/db/{name}/relationships", post(relationships::create_relationship)),
        (Method::GET, "/db/{name}/relationships/{id}", get(relationships::get_relationship)),
        (Method::PATCH, "/db/{name}/relationships/{id}", patch(relationships::update_relationship)),
        (Method::DELETE, "/db/{name}/relationships/{id}", delete(relationships::delete_relationship)),
        (Method::POST, "/db/{name}/edges/upsert", post(relationships::upsert_edges)),
        (Method::POST, "/db/{name}/edges/remove", post(relationships::remove_edges)),
    ]
}

/// The application: every route, JSON errors for unknown routes and methods, the body limit, and CORS when
/// origins are named. (Requests are counted by the connection, [`connection::serve`]: each middleware layer
/// boxes and clones the service behind it on every request, which showed in a point read's CPU.)
pub fn router(state: Arc<HttpState>, max_body_bytes: usize) -> Router {
    let mut router: Router<Arc<HttpState>> = Router::new();
    for (_, path, handler) in route_table() {
        router = router.route(path, handler);
    }
    let router = router
        .fallback(error::no_such_route)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body_bytes));
    let router = if state.cors.enabled() {
        router.layer(middleware::from_fn_with_state(state.clone(), cors::apply))
    } else {
        router
    };
    router.with_state(state)
}

/// The answer to a connection over the limit, before it is closed.
fn too_many_connections() -> Vec<u8> {
    let body = r#"{"errors":[{"code":"Neo.TransientError.Request.ResourceExhaustion","message":"too many connections: try again later"}]}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Accepts HTTP connections until `shutdown` turns true, then lets each connection finish its request in flight
/// and rolls back the explicit transactions still open.
pub async fn listen(
    listener: TcpListener,
    state: Arc<HttpState>,
    limits: HttpLimits,
    tls: Option<Acceptor>,
    mut shutdown: watch::Receiver<bool>,
    loops: Arc<loops::EventLoops>,
) {
    let app = router(state.clone(), limits.max_body_bytes);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut connections = tokio::task::JoinSet::new();
    let reaper = tokio::spawn(expire_transactions(state.clone(), shutdown.clone()));
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => break,
        };
        let Ok((socket, _peer)) = accepted else {
            // Out of file descriptors (or memory), accept fails at once for as long as that lasts: retrying
            // without a pause spun a core. The Bolt listener waits the same.
            tokio::select! {
                _ = tokio::time::sleep(std::time::Duration::from_millis(10)) => continue,
                _ = shutdown.changed() => break,
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            state.service.metrics.connections_refused.fetch_add(1, Ordering::Relaxed);
            // Told why, in the one write a fresh socket takes without waiting (a reset alone tells nothing; TLS
            // clients get the reset).
            if tls.is_none() {
                let _ = socket.try_write(&too_many_connections());
            }
            drop(socket);
            continue;
        };
        let _ = socket.set_nodelay(true);
        // The connection moves to one of the event loops (`loops`), registered with that loop's reactor.
        let Ok(socket) = socket.into_std() else { continue };
        let (app, state, limits, tls, shutdown) =
            (app.clone(), state.clone(), limits.clone(), tls.clone(), shutdown.clone());
        connections.spawn_on(
            async move {
                let Ok(socket) = tokio::net::TcpStream::from_std(socket) else { return };
                state.service.metrics.connection_opened(Protocol::Http);
                match tls {
                    Some(acceptor) => {
                        if let Ok(Ok(stream)) =
                            tokio::time::timeout(limits.handshake_timeout, acceptor.accept(socket)).await
                        {
                            connection::serve(stream, app, &state, &limits, shutdown).await;
                        }
                    }
                    None => connection::serve(socket, app, &state, &limits, shutdown).await,
                }
                state.service.metrics.connection_closed(Protocol::Http);
                drop(permit);
            },
            loops.next(),
        );
        while connections.try_join_next().is_some() {}
    }
    state.stopping.store(true, Ordering::Relaxed);
    // Closed now, so that a new connection is refused at once: left bound while the others drain, the kernel
    // accepted connections nobody would serve, and probes waited out the drain instead of failing fast.
    drop(listener);
    while connections.join_next().await.is_some() {}
    let _ = reaper.await;
    let service = state.service.clone();
    let closing = state.clone();
    let _ = tokio::task::spawn_blocking(move || closing.transactions.close_all(&service)).await;
    let _ = tokio::task::spawn_blocking(move || loops.stop()).await;
}

/// Rolls back idle explicit transactions a few times per timeout.
async fn expire_transactions(state: Arc<HttpState>, mut shutdown: watch::Receiver<bool>) {
    let period = (state.transactions.timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = shutdown.changed() => return,
        }
        if state.transactions.is_empty() {
            continue;
        }
        let state = state.clone();
        let _ = tokio::task::spawn_blocking(move || {
            state.transactions.expire(&state.service, std::time::Instant::now());
        })
        .await;
    }
}

/// The formats of a request's body (from `Content-Type`) and of its answer (from `Accept`).
pub fn formats(headers: &HeaderMap) -> (Format, Format) {
    let header = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    (Format::from_header(header(header::CONTENT_TYPE)), Format::from_header(header(header::ACCEPT)))
}

/// [`formats`] for a request whose body is read: a body declared as something other than JSON is refused (415)
/// rather than parsed as JSON anyway. A body without a `Content-Type`, or with the form type `curl -d` sends
/// unless told otherwise, is taken as JSON, so that quick `curl -d '{...}'` calls keep working.
pub fn body_formats(headers: &HeaderMap) -> Result<(Format, Format), ApiError> {
    const ACCEPTED: [&str; 3] = ["application/json", json::TYPED_MEDIA_TYPE, "application/x-www-form-urlencoded"];
    if let Some(value) = headers.get(header::CONTENT_TYPE) {
        let text = value.to_str().unwrap_or_default();
        let essence = text.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        // The typed type may name its version (`application/vnd.neo4j.query.v1.1`), as Neo4j's documentation writes it.
        let typed_version = essence.strip_prefix(json::TYPED_MEDIA_TYPE).is_some_and(|v| v.starts_with(".v1"));
        if !ACCEPTED.contains(&essence.as_str()) && !typed_version {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Neo.ClientError.Request.InvalidFormat",
                format!("unsupported Content-Type '{text}': send application/json or {}", json::TYPED_MEDIA_TYPE),
            ));
        }
    }
    Ok(formats(headers))
}

/// A request's [`body_formats`], taken from its headers alone: extracting the whole `HeaderMap` copies every
/// header on every request. A refused content type is handed to the handler, which answers it where it answered
/// it before (after checking the database and reading the body).
pub struct BodyFormats(pub Result<(Format, Format), ApiError>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for BodyFormats {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(BodyFormats(body_formats(&parts.headers)))
    }
}

/// A JSON answer in the given format.
pub fn json_response(status: StatusCode, format: Format, body: &serde_json::Value) -> Response {
    bytes_response(status, format, body.to_string().into_bytes())
}

/// A response of JSON text already written.
pub fn bytes_response(status: StatusCode, format: Format, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(format.media_type()));
    response
}

/// Runs blocking work (queries, storage) off the event loop.
pub async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "Neo.DatabaseError.General.UnknownError", e.to_string())
    })
}

/// `GET /`: the discovery document the Neo4j drivers read before their first query.
async fn discovery(State(state): State<Arc<HttpState>>) -> Response {
    let version = state.service.agent.trim_start_matches("Neo4j/").split(' ').next().unwrap_or("5").to_string();
    json_response(
        StatusCode::OK,
        Format::Plain,
        &json!({
            "neo4j_version": version,
            "neo4j_edition": "community",
            "server": state.service.agent,
            "query": "/db/{databaseName}/query/v2",
            "transaction": "/db/{databaseName}/query/v2/tx",
            "openapi": "/openapi.json",
        }),
    )
}

/// `GET /health`: the process is up and serving HTTP.
async fn health() -> Response {
    json_response(StatusCode::OK, Format::Plain, &json!({"status": "up"}))
}

/// `GET /ready`: the database is open and takes writes, and the server is not shutting down. A database whose
/// storage refuses every commit until it is reopened (a write to its log failed, on a full disk say) is not
/// ready, though the process is alive (`/health`) and reads still work: a load balancer should send work elsewhere
/// and an operator restart it.
async fn ready(State(state): State<Arc<HttpState>>) -> Response {
    if state.stopping.load(Ordering::Relaxed) {
        return json_response(StatusCode::SERVICE_UNAVAILABLE, Format::Plain, &json!({"status": "stopping"}));
    }
    if let Some(refusal) = state.service.db.refusing_writes() {
        let body = json!({"status": "refusing_writes", "reason": refusal.to_string()});
        return json_response(StatusCode::SERVICE_UNAVAILABLE, Format::Plain, &body);
    }
    // Answered on the event loop (a snapshot is one atomic load): on the query threads it waited behind running
    // queries, when a probe most needs an answer.
    let version = state.service.db.read().version();
    json_response(StatusCode::OK, Format::Plain, &json!({"status": "ready", "version": version}))
}

/// `GET /metrics`: Prometheus text, made on the event loop from counters (not behind running queries).
async fn metrics(State(state): State<Arc<HttpState>>) -> Response {
    let text = state.service.metrics.render(&state.service.db);
    let mut response = (StatusCode::OK, text).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    response
}

/// `GET /openapi.json`.
async fn openapi() -> Response {
    let mut response = (StatusCode::OK, OPENAPI).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error statuses a route's handler can answer with, by what the route does: every database route
    /// authenticates (401, and 429 for a locked user), checks the role (403), names a database and often an
    /// entity (404), validates its input (400) and may fail inside (500) or find the database unavailable (503);
    /// a route with a body may find it too large (413) or of another type (415); a route that writes may clash
    /// with a uniqueness constraint or a concurrent write (409).
    fn statuses_produced(method: &str, path: &str) -> Vec<u16> {
        let mut statuses = Vec::new();
        if path == "/ready" {
            statuses.push(503);
        }
        if path.starts_with("/db/") {
            statuses.extend([400, 401, 403, 404, 429, 500, 503]);
            if method == "post" || method == "patch" {
                statuses.extend([413, 415]);
            }
            let rollback = method == "delete" && path.ends_with("/tx/{id}");
            if method != "get" && !rollback {
                statuses.push(409);
            }
        }
        statuses
    }

    #[test]
    fn every_route_is_documented_and_every_documented_route_exists() {
        let doc: serde_json::Value = serde_json::from_str(OPENAPI).expect("openapi.json is JSON");
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        let paths = doc["paths"].as_object().expect("paths");
        let table = route_table();
        for (method, path, _) in &table {
            let operation = &paths.get(*path).unwrap_or_else(|| panic!("{path} is not in openapi.json"))
                [method.as_str().to_ascii_lowercase()];
            assert!(operation.is_object(), "{method} {path} is not in openapi.json");
        }
        for (path, item) in paths {
            for method in item.as_object().unwrap().keys().filter(|k| *k != "parameters") {
                let documented = item[method]["responses"].as_object().expect("responses");
                for status in statuses_produced(method, path) {
                    assert!(
                        documented.contains_key(&status.to_string()),
                        "{method} {path} can answer {status}, which openapi.json does not document"
                    );
                }
                assert!(
                    table.iter().any(|(m, p, _)| p == path && m.as_str().eq_ignore_ascii_case(method)),
                    "openapi.json documents {method} {path}, which the server does not serve"
                );
            }
        }
    }
}
