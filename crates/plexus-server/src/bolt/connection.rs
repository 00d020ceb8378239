//! One Bolt connection's I/O, on its own thread: the version handshake, de-chunking request messages with size
//! limits and idle timeouts, and serving each batch of complete messages with the [`Session`] right there. While a
//! query runs, its interrupt probes the socket now and then, so a client that went away (or sent RESET) stops it.
//! [`Standing`] is what the connection and its listener share, so that stopping the server finishes running work.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::session::{Control, Session, State, VERSIONS};
use super::websocket;
use crate::http::cors::Cors;
use crate::packstream;
use crate::service::{ServerError, Service};

const MAGIC: [u8; 4] = [0x60, 0x60, 0xB0, 0x17];

/// How long a stopping server waits for the PULL of an auto-commit result it has already committed. Drivers send
/// RUN and PULL together, so the PULL has usually arrived with the RUN and this wait is the exception.
const OWED_PULL_TIMEOUT: Duration = Duration::from_secs(2);

/// The most of an oversized message read (and dropped) so that its sender can be told why it is refused: drivers
/// write a whole request before they read, so a connection closed part-way looks to them like a network fault.
/// Past this the connection is closed without waiting for the rest.
const OVERSIZED_DISCARD_LIMIT: usize = 1 << 30;

/// How long a connection closing on a refused request keeps reading what the client still sends. Closing a
/// socket with unread data resets it, and a reset can destroy the refusal before the client reads it.
const LINGER: Duration = Duration::from_millis(500);

/// Per-connection limits.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// An authenticated connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// The handshake must complete within this.
    pub handshake_timeout: Duration,
    /// A connection must have authenticated (HELLO, and LOGON from Bolt 5.1) within this of connecting, or of
    /// logging off: a client that never does is closed instead of holding a connection slot for the idle timeout.
    pub auth_timeout: Duration,
    /// Largest request message accepted.
    pub max_message_bytes: usize,
    /// The origins whose web pages may open a WebSocket to the Bolt port (the HTTP API's `cors_origins`): a page
    /// from any other origin is refused, so one the user happens to visit cannot reach a server on their machine.
    pub web_origins: Cors,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            idle_timeout: Duration::from_secs(2 * 3600),
            handshake_timeout: Duration::from_secs(10),
            auth_timeout: Duration::from_secs(30),
            max_message_bytes: 64 << 20,
            web_origins: Cors::default(),
        }
    }
}

/// Picks the version to speak from the client's four proposals (`[0, range, minor, major]` each).
pub fn choose_version(proposals: &[u8; 16]) -> Option<(u8, u8)> {
    for p in proposals.chunks_exact(4) {
        let (range, minor, major) = (p[1], p[2], p[3]);
        for &(vmajor, vminor) in &VERSIONS {
            if vmajor == major && vminor <= minor && vminor >= minor.saturating_sub(range) {
                return Some((vmajor, vminor));
            }
        }
    }
    None
}

/// Takes one complete message off the front of `buf`, if there is one. Empty messages (keep-alive NOOPs) are
/// skipped. An oversized message is an error.
pub fn take_message(buf: &mut Vec<u8>, max: usize) -> Result<Option<Vec<u8>>, String> {
    MessageScan::default().take(buf, max)
}

/// How far the chunk headers of the message at the front of a buffer have been read, kept between reads of the
/// socket: a message of many small chunks (a driver sending 1,400-byte chunks, say) then costs one pass over its
/// headers, not one per read, which made refusing an oversized one take a minute of CPU.
#[derive(Default)]
pub struct MessageScan {
    /// Offset of the next chunk header not yet read.
    end: usize,
    /// Payload bytes in the chunks before it.
    len: usize,
}

impl MessageScan {
    /// [`take_message`], going on from where the last call on the same buffer stopped.
    pub fn take(&mut self, buf: &mut Vec<u8>, max: usize) -> Result<Option<Vec<u8>>, String> {
        loop {
            // Find the end marker first, refusing as soon as the declared sizes pass the limit.
            loop {
                if buf.len() < self.end + 2 {
                    return Ok(None);
                }
                let size = u16::from_be_bytes([buf[self.end], buf[self.end + 1]]) as usize;
                if size == 0 {
                    break;
                }
                if self.len + size > max {
                    return Err(format!("a request message is larger than the limit of {max} bytes"));
                }
                if buf.len() < self.end + 2 + size {
                    return Ok(None);
                }
                self.end += 2 + size;
                self.len += size;
            }
            let end = self.end + 2;
            let mut message = Vec::with_capacity(self.len);
            let mut pos = 0;
            while pos + 2 < end {
                let size = u16::from_be_bytes([buf[pos], buf[pos + 1]]) as usize;
                message.extend_from_slice(&buf[pos + 2..pos + 2 + size]);
                pos += 2 + size;
            }
            buf.drain(..end);
            *self = MessageScan::default();
            if !message.is_empty() {
                return Ok(Some(message));
            }
        }
    }
}

/// What a connection waiting for its client holds open, which decides what stopping the server does with it.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Holding {
    /// Nothing: it is closed at once.
    Nothing,
    /// An auto-commit result with rows still owed: its next PULL is awaited briefly.
    Rows,
    /// An explicit transaction: its COMMIT is awaited until the grace period ends.
    Transaction,
}

/// A connection's standing with its listener, so that stopping the server closes idle connections at once and
/// lets busy ones finish what they run.
///
/// Stopping used to shut the read side of every connection, which a running query's probe cannot tell from a
/// client that hung up: the query was cancelled instead of finished. Now the listener shuts only connections that
/// wait for a request, and a busy connection looks at `stopping` itself when its work is done.
pub struct Standing {
    stopping: Arc<AtomicBool>,
    /// The connection's thread waits (or is about to wait) for the client's next request.
    waiting: AtomicBool,
    /// ... inside an explicit transaction or with result rows still owed: its COMMIT or PULL may be on the way,
    /// so stopping leaves it open (until the grace period ends) instead of closing it under the client.
    holding: std::sync::atomic::AtomicU8,
    /// The listener shut the read side: an end of file then says nothing about the client.
    read_shut: AtomicBool,
}

impl Standing {
    /// A connection that waits for its handshake, of a listener that stops when `stopping` is set.
    pub fn new(stopping: Arc<AtomicBool>) -> Standing {
        Standing {
            stopping,
            waiting: AtomicBool::new(true),
            holding: std::sync::atomic::AtomicU8::new(Holding::Nothing as u8),
            read_shut: AtomicBool::new(false),
        }
    }

    /// Called before waiting for the next request: false when the server is stopping, in which case the
    /// connection stays marked busy and decides for itself whether anything is still owed to the client.
    fn may_wait(&self, holding: Holding) -> bool {
        // Each side stores its own flag before it loads the other's (both sequentially consistent), so either
        // this thread sees `stopping` or the listener sees `waiting` and shuts the read side, or both.
        self.holding.store(holding as u8, Ordering::SeqCst);
        self.waiting.store(true, Ordering::SeqCst);
        if self.stopping.load(Ordering::SeqCst) {
            self.waiting.store(false, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Called when a request arrived: the connection is busy until it waits again.
    fn serving(&self) {
        self.waiting.store(false, Ordering::SeqCst);
    }

    /// Called by the stopping listener (after it set `stopping`): shuts the read side of `socket` when the
    /// connection waits for a request, so that its thread wakes to an end of file and closes. A busy connection
    /// is left alone.
    pub fn close_if_waiting(&self, socket: &TcpStream) {
        if !self.waiting.load(Ordering::SeqCst) {
            return;
        }
        match self.holding.load(Ordering::SeqCst) {
            h if h == Holding::Nothing as u8 => {
                self.read_shut.store(true, Ordering::SeqCst);
                let _ = socket.shutdown(Shutdown::Read);
            }
            // Rows are owed: the client has a little while for its next PULL, as a connection that notices the
            // stop itself gives it.
            h if h == Holding::Rows as u8 => {
                let _ = socket.set_read_timeout(Some(OWED_PULL_TIMEOUT));
            }
            _ => {}
        }
    }

    /// What a probe of the socket means for a running query: a closed socket whose read side the listener shut
    /// (a request that arrived just as the server began to stop) is not a client that went away.
    pub fn judge(&self, seen: Liveness) -> Liveness {
        if seen == Liveness::Gone && self.read_shut.load(Ordering::SeqCst) {
            Liveness::Alive
        } else {
            seen
        }
    }
}

/// A byte stream a connection thread serves: plain TCP or TLS over it.
pub trait Transport: Read + Write + Send {}
impl<T: Read + Write + Send> Transport for T {}

/// Serves one connection until it closes, on the calling thread. `probe` tells whether the client is still
/// there (and whether it sent a RESET) while a query runs; the connection's query is cancelled when it is not.
/// When the server stops (`standing`), a request being served is finished and answered before the connection
/// closes.
#[allow(clippy::too_many_arguments)]
pub fn serve(
    stream: &mut dyn Transport,
    service: Arc<Service>,
    limits: &ConnectionLimits,
    local: String,
    client: &str,
    id: u64,
    set_timeout: &dyn Fn(Option<Duration>),
    probe: Arc<dyn Fn() -> Liveness + Send + Sync>,
    standing: &Standing,
) {
    // Authentication must be complete by this time; until then every read waits at most what is left of it.
    let auth_deadline = Instant::now() + limits.auth_timeout;
    let mut first = [0u8; 4];
    if !read_exact_by(stream, &mut first, Some(auth_deadline), limits.handshake_timeout, set_timeout) {
        return;
    }
    // A WebSocket carries the same conversation in its frames: from here on it is the stream.
    let mut framed;
    let (stream, probe): (&mut dyn Transport, Arc<dyn Fn() -> Liveness + Send + Sync>) =
        if first == websocket::UPGRADE_START {
            let deadline = auth_deadline.min(Instant::now() + limits.handshake_timeout);
            if !websocket::accept(stream, deadline, &limits.web_origins) {
                return;
            }
            framed = websocket::WebSocket::new(stream);
            if !read_exact_by(&mut framed, &mut first, Some(auth_deadline), limits.handshake_timeout, set_timeout) {
                return;
            }
            // The socket's raw bytes are masked frames, where no RESET can be read: the probe only tells whether
            // the client is still there.
            let probe = Arc::new(move || match probe() {
                Liveness::Reset => Liveness::Alive,
                seen => seen,
            });
            (&mut framed, probe)
        } else {
            (stream, probe)
        };
    if first != MAGIC {
        return;
    }
    let mut auth_deadline = Some(auth_deadline);
    let mut proposals = [0u8; 16];
    if !read_exact_by(stream, &mut proposals, auth_deadline, limits.handshake_timeout, set_timeout) {
        return;
    }
    let Some(version) = choose_version(&proposals) else {
        let _ = stream.write_all(&[0, 0, 0, 0]);
        return;
    };
    if stream.write_all(&[0, 0, version.1, version.0]).and_then(|_| stream.flush()).is_err() {
        return;
    }
    // The read timeout in force, so that it is set again only when it changes.
    let mut timeout: Option<Duration> = None;
    let mut session = Session::new(service, version, local, id);
    session.set_probe(probe);
    session.set_client_address(client);
    let mut inbuf: Vec<u8> = Vec::with_capacity(8192);
    let mut scan = MessageScan::default();
    let mut readbuf = vec![0u8; 64 * 1024];
    let mut out: Vec<u8> = Vec::with_capacity(8192);
    loop {
        // Serve every complete message already received, so pipelined requests cost one wake-up.
        out.clear();
        let mut served = false;
        loop {
            match scan.take(&mut inbuf, limits.max_message_bytes) {
                Ok(Some(bytes)) => {
                    served = true;
                    let message = match packstream::decode(&bytes) {
                        Ok(message) => message,
                        Err(e) => {
                            session.reject(
                                ServerError::request(format!("a request message cannot be decoded: {e}")),
                                &mut out,
                            );
                            close_after_refusal(stream, &out, set_timeout);
                            return;
                        }
                    };
                    if reset_queued(&inbuf) && session.ignore_before_reset(&message, &mut out) {
                        continue;
                    }
                    if session.handle(message, &mut out) == Control::Close {
                        let _ = stream.write_all(&out).and_then(|_| stream.flush());
                        return;
                    }
                    // A large PULL goes out in pieces, each written before the next is produced.
                    while session.pull_pending() {
                        if stream.write_all(&out).and_then(|_| stream.flush()).is_err() {
                            return;
                        }
                        out.clear();
                        session.resume(&mut out);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    skip_message(stream, &mut inbuf, &mut readbuf, OVERSIZED_DISCARD_LIMIT);
                    session.reject(ServerError::request(e), &mut out);
                    close_after_refusal(stream, &out, set_timeout);
                    return;
                }
            }
        }
        if served && stream.write_all(&out).and_then(|_| stream.flush()).is_err() {
            return;
        }
        // An authenticated connection may idle for the idle timeout; one that has not authenticated (yet, or
        // again after LOGOFF) only until its authentication deadline.
        let wanted = if session.is_authenticated() {
            auth_deadline = None;
            limits.idle_timeout
        } else {
            let deadline = *auth_deadline.get_or_insert_with(|| Instant::now() + limits.auth_timeout);
            match deadline.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left,
                _ => return,
            }
        };
        if timeout != Some(wanted) {
            set_timeout(Some(wanted));
            timeout = Some(wanted);
        }
        // An open transaction, or an auto-commit result with rows still owed, keeps the connection through a
        // stop: the client's COMMIT or next PULL may be on the way.
        let holding = match session.state() {
            State::TxReady | State::TxStreaming => Holding::Transaction,
            State::Streaming => Holding::Rows,
            _ => Holding::Nothing,
        };
        if !standing.may_wait(holding) {
            // The server is stopping and what was asked has been answered. The rows of a committed auto-commit
            // result are still owed to the client, so wait a little for its PULL. An open explicit transaction
            // goes on until it commits or rolls back (its COMMIT may already be on the way: closing under it
            // left the client unable to tell whether it committed), or until the listener's grace period ends
            // and it is rolled back. Anything else closes now.
            match session.state() {
                State::Streaming => {
                    set_timeout(Some(OWED_PULL_TIMEOUT));
                    timeout = Some(OWED_PULL_TIMEOUT);
                }
                State::TxReady | State::TxStreaming => {}
                _ => return,
            }
        }
        match stream.read(&mut readbuf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                standing.serving();
                inbuf.extend_from_slice(&readbuf[..n]);
            }
        }
    }
}

/// Fills `buf` from `stream`, each read waiting at most `per_read` and none past `deadline`; false when the
/// stream ends, fails or times out first.
fn read_exact_by(
    stream: &mut dyn Transport,
    buf: &mut [u8],
    deadline: Option<Instant>,
    per_read: Duration,
    set_timeout: &dyn Fn(Option<Duration>),
) -> bool {
    let mut filled = 0;
    while filled < buf.len() {
        let wait = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left.min(per_read),
                _ => return false,
            },
            None => per_read,
        };
        set_timeout(Some(wait));
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return false,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

/// Reads and drops the message at the front of `buf` up to its end marker, reading more from `stream` as needed;
/// stops early when the stream ends or fails, or more than `limit` bytes go by first.
fn skip_message(stream: &mut dyn Transport, buf: &mut Vec<u8>, scratch: &mut [u8], limit: usize) {
    // Bytes before `pos` are skipped; the buffer is emptied as it is used up, never shifted chunk by chunk (that
    // moved the rest of a large buffered message once per chunk).
    let mut pos = 0;
    let mut fill = |buf: &mut Vec<u8>, pos: &mut usize| {
        buf.drain(..*pos);
        *pos = 0;
        match stream.read(scratch) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                buf.extend_from_slice(&scratch[..n]);
                true
            }
        }
    };
    let mut skipped = 0usize;
    loop {
        while buf.len() < pos + 2 {
            if !fill(buf, &mut pos) {
                return;
            }
        }
        let size = u16::from_be_bytes([buf[pos], buf[pos + 1]]) as usize;
        if size == 0 {
            buf.drain(..pos + 2);
            return;
        }
        skipped += size;
        if skipped > limit {
            buf.drain(..pos);
            return;
        }
        let mut left = size + 2;
        loop {
            let n = left.min(buf.len() - pos);
            pos += n;
            left -= n;
            if left == 0 {
                break;
            }
            if !fill(buf, &mut pos) {
                return;
            }
        }
    }
}

/// Sends the answers in `out` (ending with a refusal), then reads and drops what the client still sends for a
/// moment before the connection closes, so the refusal reaches it rather than a reset.
fn close_after_refusal(stream: &mut dyn Transport, out: &[u8], set_timeout: &dyn Fn(Option<Duration>)) {
    if stream.write_all(out).and_then(|_| stream.flush()).is_err() {
        return;
    }
    set_timeout(Some(LINGER));
    let started = std::time::Instant::now();
    let mut scratch = [0u8; 16 * 1024];
    while started.elapsed() < LINGER {
        match stream.read(&mut scratch) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// What a probe of a connection found while its query runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// The client closed the connection.
    Gone,
    /// The client sent a RESET: stop the running query.
    Reset,
}

/// Probes a plain TCP socket without consuming anything: a peek that does not block.
#[cfg(unix)]
pub fn probe_socket(fd: std::os::fd::RawFd) -> Liveness {
    let mut buf = [0u8; 4096];
    // SAFETY: `buf` is valid for writes of its length; MSG_PEEK leaves the data for the connection's own reads.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    if n == 0 {
        Liveness::Gone
    } else if n < 0 {
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::WouldBlock || err.kind() == std::io::ErrorKind::Interrupted {
            Liveness::Alive
        } else {
            Liveness::Gone
        }
    } else if contains_reset(&buf[..n as usize]) {
        Liveness::Reset
    } else {
        Liveness::Alive
    }
}

/// Whether one of the complete messages at the front of `buf` (which starts at a message's first chunk) is a
/// RESET: walked message by message, so a RESET's bytes inside another message's data do not count.
fn reset_queued(buf: &[u8]) -> bool {
    let mut pos = 0;
    while pos + 2 <= buf.len() {
        if buf[pos..].starts_with(&RESET_MESSAGE) {
            return true;
        }
        // Skip this message's chunks up to its end marker.
        loop {
            let Some(header) = buf.get(pos..pos + 2) else { return false };
            let size = u16::from_be_bytes([header[0], header[1]]) as usize;
            pos += 2 + size;
            if size == 0 {
                break;
            }
        }
    }
    false
}

/// A RESET as clients frame it: one chunk of two bytes (`B0 0F`, a structure of no fields tagged 0x0F), then the
/// end marker.
const RESET_MESSAGE: [u8; 6] = [0x00, 0x02, 0xB0, 0x0F, 0x00, 0x00];

/// Whether the buffered bytes hold a complete RESET message anywhere (the socket's unread bytes need not start
/// at a message).
fn contains_reset(buf: &[u8]) -> bool {
    buf.windows(RESET_MESSAGE.len()).any(|w| w == RESET_MESSAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_negotiation_honours_ranges() {
        // A 6.x driver: manifest, 5.8..5.0, 4.4..4.2, 3.0.
        let p = [0, 0, 1, 0xFF, 0, 8, 8, 5, 0, 2, 4, 4, 0, 0, 0, 3];
        assert_eq!(choose_version(&p), Some((5, 4)));
        let p = [0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(choose_version(&p), Some((4, 4)));
        let p = [0, 0, 2, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(choose_version(&p), Some((5, 2)));
        let p = [0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(choose_version(&p), None);
    }

    #[test]
    fn a_queued_reset_is_found_only_at_a_message_start() {
        let reset = [0x00, 0x02, 0xB0, 0x0F, 0x00, 0x00];
        let pull = [0x00, 0x03, 0xB1, 0x3F, 0xA0, 0x00, 0x00];
        assert!(reset_queued(&reset));
        assert!(reset_queued(&[&pull[..], &reset[..]].concat()));
        assert!(!reset_queued(&pull));
        // A RUN whose query text holds a RESET's bytes, split over two chunks.
        let run = [0x00, 0x04, 0xB1, 0x10, 0x86, 0x00, 0x00, 0x05, 0x02, 0xB0, 0x0F, 0x00, 0x00, 0x00, 0x00];
        assert!(!reset_queued(&run));
        assert!(reset_queued(&[&run[..], &reset[..]].concat()));
        // An incomplete message ends the walk.
        assert!(!reset_queued(&[0x00, 0x09, 0xB1]));
    }

    #[test]
    fn messages_are_reassembled_from_chunks() {
        let mut buf = vec![0, 2, 0xB0, 0x0F, 0, 0, 0, 0, 0, 1, 0xB1];
        assert_eq!(take_message(&mut buf, 1000).unwrap(), Some(vec![0xB0, 0x0F]));
        // The keep-alive NOOP is skipped; the next message is incomplete.
        assert_eq!(take_message(&mut buf, 1000).unwrap(), None);
        buf.extend_from_slice(&[0, 1, 0x01, 0, 0]);
        assert_eq!(take_message(&mut buf, 1000).unwrap(), Some(vec![0xB1, 0x01]));
        assert!(buf.is_empty());
    }

    /// A message of many small chunks arriving a few bytes at a time is put together by one scan that goes on
    /// where the last read stopped; an oversized one is refused once its chunks pass the limit.
    #[test]
    fn a_scan_goes_on_across_reads() {
        let payload: Vec<u8> = (0..50_000u32).map(|i| i as u8).collect();
        let mut wire = Vec::new();
        for chunk in payload.chunks(7) {
            wire.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            wire.extend_from_slice(chunk);
        }
        wire.extend_from_slice(&[0, 0, 0, 2, 0xB0, 0x0F, 0, 0]);
        let (mut buf, mut scan) = (Vec::new(), MessageScan::default());
        let mut got = Vec::new();
        for piece in wire.chunks(13) {
            buf.extend_from_slice(piece);
            while let Some(m) = scan.take(&mut buf, 1 << 20).unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, vec![payload.clone(), vec![0xB0, 0x0F]]);
        assert!(buf.is_empty());
        let (mut buf, mut scan) = (Vec::new(), MessageScan::default());
        let mut refused = false;
        for piece in wire.chunks(1000) {
            buf.extend_from_slice(piece);
            if scan.take(&mut buf, 10_000).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused && buf.len() < 14_000, "refused after {} bytes", buf.len());
    }

    #[test]
    fn oversized_messages_are_refused() {
        let mut buf = vec![0xFF, 0xFF];
        buf.extend(std::iter::repeat_n(0u8, 65535));
        buf.extend_from_slice(&[0xFF, 0xFF]);
        assert!(take_message(&mut buf, 1000).is_err());
    }
}
