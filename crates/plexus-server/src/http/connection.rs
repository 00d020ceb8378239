//! One HTTP connection: hyper serving the application, with the server's own time limits on top.
//!
//! A connection that has not shown valid credentials gets little time: its request's headers, and any idle time
//! between its requests, must each fit in the authentication timeout (30 s by default). Once one of its requests
//! authenticated, the connection may idle between requests for the (long) idle timeout, as a Bolt connection
//! does: a stalled or silent peer that never authenticates cannot hold a connection slot for hours.
//!
//! Closing after a refused request lingers: a client sending a body the server refused (too large, or sent
//! without credentials) is still writing it, and closing a socket with unread data resets the connection,
//! which can destroy the answer before the client reads it (over TLS nearly always). So the closing side sends
//! its end (TLS close_notify and FIN), then reads and drops what still arrives for a bounded time and size.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{watch, Notify};

use super::{HttpLimits, HttpState};

/// The longest a closing connection keeps reading what its client still sends.
const LINGER_TIME: Duration = Duration::from_secs(5);
/// The most a closing connection reads (and drops) of what its client still sends.
const LINGER_BYTES: usize = 256 << 20;

/// What the server knows of one connection's requests, shared by the connection's watchdog, the requests'
/// handlers (through the request's extensions) and its socket.
pub struct Activity {
    started: Instant,
    /// Requests received and not yet answered to the end of their body.
    in_flight: AtomicUsize,
    /// When the connection last became idle, in milliseconds since `started`.
    idle_since_ms: AtomicU64,
    /// One of the connection's requests carried valid credentials.
    trusted: AtomicBool,
    /// The server is stopping: close without lingering.
    stopping: AtomicBool,
    /// Signalled when a request ends, so the watchdog measures the idle time from then.
    changed: Notify,
    /// The credentials the connection's last request proved, so the next ones with the same header skip the
    /// password cache (see [`super::caller`]).
    proved: parking_lot::Mutex<Option<Proved>>,
}

/// An `Authorization` header that authenticated, whom it names, and the users' generation it was checked at.
pub struct Proved {
    pub header: axum::http::HeaderValue,
    pub caller: super::caller::Caller,
    pub generation: u64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            started: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(0),
            trusted: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            changed: Notify::new(),
            proved: parking_lot::Mutex::new(None),
        }
    }

    /// Whom `header` names, if it is the header this connection proved last and the users have not changed
    /// since (`generation`).
    pub fn proved_caller(&self, header: &axum::http::HeaderValue, generation: u64) -> Option<super::caller::Caller> {
        let proved = self.proved.lock();
        let proved = proved.as_ref()?;
        (proved.generation == generation && proved.header == header).then(|| proved.caller.clone())
    }

    /// Remembers that `header` authenticated as `caller` when the users were at `generation`.
    pub fn prove(&self, proof: Proved) {
        *self.proved.lock() = Some(proof);
    }

    /// Called when a request authenticated: the connection may idle for the idle timeout from now on.
    pub fn trust(&self) {
        self.trusted.store(true, Ordering::Relaxed);
    }

    pub fn is_trusted(&self) -> bool {
        self.trusted.load(Ordering::Relaxed)
    }

    fn begin(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        RequestGuard(self.clone())
    }

    /// How long the connection may still wait for its next request (`Some(ZERO)`: close it), or `None` while a
    /// request is being served.
    fn idle_left(&self, auth_timeout: Duration, idle_timeout: Duration) -> Option<Duration> {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let limit = if self.is_trusted() { idle_timeout } else { auth_timeout };
        let idle_since = self.started + Duration::from_millis(self.idle_since_ms.load(Ordering::SeqCst));
        Some(limit.saturating_sub(idle_since.elapsed()))
    }
}

/// A request being served: it ends when its response's body has been sent (or dropped).
struct RequestGuard(Arc<Activity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let activity = &self.0;
        let now = activity.started.elapsed().as_millis() as u64;
        activity.idle_since_ms.store(now, Ordering::SeqCst);
        activity.in_flight.fetch_sub(1, Ordering::SeqCst);
        activity.changed.notify_one();
    }
}

/// A response body that holds its request's [`RequestGuard`] until it is sent or dropped.
struct Tracked {
    body: Body,
    _guard: RequestGuard,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The socket of a connection, lingering when it closes (see the module's documentation).
struct Lingering<S> {
    inner: S,
    activity: Arc<Activity>,
    closing: Closing,
}

enum Closing {
    Open,
    /// Sending our end of the stream.
    Shutting,
    /// Reading and dropping what the client still sends.
    Draining {
        until: Pin<Box<tokio::time::Sleep>>,
        left: usize,
    },
    Done,
}

impl<S: AsyncRead + Unpin> AsyncRead for Lingering<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Lingering<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            match &mut this.closing {
                Closing::Open => {
                    if this.activity.stopping.load(Ordering::Relaxed) {
                        return Pin::new(&mut this.inner).poll_shutdown(cx);
                    }
                    this.closing = Closing::Shutting;
                }
                Closing::Shutting => {
                    let sent = ready!(Pin::new(&mut this.inner).poll_shutdown(cx));
                    this.closing = match sent {
                        Ok(()) => {
                            Closing::Draining { until: Box::pin(tokio::time::sleep(LINGER_TIME)), left: LINGER_BYTES }
                        }
                        Err(_) => Closing::Done,
                    };
                }
                Closing::Draining { until, left } => {
                    if until.as_mut().poll(cx).is_ready() {
                        this.closing = Closing::Done;
                        continue;
                    }
                    let mut scratch = [0u8; 16 * 1024];
                    let mut buf = ReadBuf::new(&mut scratch);
                    match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                            *left = left.saturating_sub(buf.filled().len());
                            if *left == 0 {
                                this.closing = Closing::Done;
                            }
                        }
                        // The end of the client's stream, or a failure: nothing more to wait for.
                        Poll::Ready(_) => this.closing = Closing::Done,
                    }
                }
                Closing::Done => return Poll::Ready(Ok(())),
            }
        }
    }
}

/// Serves one connection until it closes, the client stays silent past its time limit, or the server stops (then
/// the request in flight, if any, is finished first).
pub async fn serve<S>(
    stream: S,
    app: Router,
    state: &Arc<HttpState>,
    limits: &HttpLimits,
    mut shutdown: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let io = Lingering { inner: stream, activity: activity.clone(), closing: Closing::Open };
    let app = TowerToHyperService::new(app);
    let tracker = activity.clone();
    let state = state.clone();
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        state.service.metrics.http_requests_total.fetch_add(1, Ordering::Relaxed);
        let guard = tracker.begin();
        request.extensions_mut().insert(tracker.clone());
        let answer = hyper::service::Service::call(&app, request);
        async move {
            let response = answer.await?;
            Ok::<_, Infallible>(response.map(|body| Body::new(Tracked { body, _guard: guard })))
        }
    });
    // hyper's own limit on reading a request's head also runs while a connection idles between requests: set to
    // the idle timeout, it bounds trusted connections; the watchdog below holds the others to less.
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.idle_timeout)
        .serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    if *shutdown.borrow() {
        activity.stopping.store(true, Ordering::Relaxed);
        connection.as_mut().graceful_shutdown();
    }
    loop {
        let left = activity.idle_left(limits.auth_timeout, limits.idle_timeout);
        if left == Some(Duration::ZERO) {
            // Silent past its limit: closed without further ado (a request's head never completed, or nothing
            // was asked since the last answer).
            return;
        }
        // While a request is served, look again when it ends.
        let wait = left.unwrap_or(limits.idle_timeout);
        tokio::select! {
            _ = connection.as_mut() => return,
            _ = shutdown.changed() => break,
            _ = activity.changed.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
    // Finish the request in flight, if any, and close instead of waiting for the next one.
    activity.stopping.store(true, Ordering::Relaxed);
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_connections_get_the_short_limit() {
        let activity = Arc::new(Activity::new());
        let (short, long) = (Duration::from_secs(30), Duration::from_secs(7200));
        assert!(activity.idle_left(short, long).unwrap() <= short);
        let guard = activity.begin();
        assert_eq!(activity.idle_left(short, long), None, "no limit while a request is served");
        activity.trust();
        drop(guard);
        assert!(activity.idle_left(short, long).unwrap() > short);
    }
}
