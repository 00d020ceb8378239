//! One Bolt connection's I/O, on its own thread: the version handshake, de-chunking request messages with size
//! limits and idle timeouts, and serving each batch of complete messages with the [`Session`] right there. While a
//! query runs, its interrupt probes the socket now and then, so a client that went away (or sent RESET) stops it.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use super::session::{Control, Session, VERSIONS};
use crate::packstream;
use crate::service::Service;

const MAGIC: [u8; 4] = [0x60, 0x60, 0xB0, 0x17];

/// Per-connection limits.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// A connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// The handshake must complete within this.
    pub handshake_timeout: Duration,
    /// Largest request message accepted.
    pub max_message_bytes: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            idle_timeout: Duration::from_secs(30 * 60),
            handshake_timeout: Duration::from_secs(10),
            max_message_bytes: 64 << 20,
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
    loop {
        // Find the end marker first, refusing as soon as the declared sizes pass the limit.
        let mut end = 0;
        let mut len = 0;
        loop {
            if buf.len() < end + 2 {
                return Ok(None);
            }
            let size = u16::from_be_bytes([buf[end], buf[end + 1]]) as usize;
            end += 2;
            if size == 0 {
                break;
            }
            len += size;
            if len > max {
                return Err(format!("a request message is larger than the limit of {max} bytes"));
            }
            if buf.len() < end + size {
                return Ok(None);
            }
            end += size;
        }
        let mut message = Vec::with_capacity(len);
        let mut pos = 0;
        while pos + 2 < end {
            let size = u16::from_be_bytes([buf[pos], buf[pos + 1]]) as usize;
            message.extend_from_slice(&buf[pos + 2..pos + 2 + size]);
            pos += 2 + size;
        }
        buf.drain(..end);
        if !message.is_empty() {
            return Ok(Some(message));
        }
    }
}

/// A byte stream a connection thread serves: plain TCP or TLS over it.
pub trait Transport: Read + Write + Send {}
impl<T: Read + Write + Send> Transport for T {}

/// Serves one connection until it closes, on the calling thread. `probe` tells whether the client is still
/// there (and whether it sent a RESET) while a query runs; the connection's query is cancelled when it is not.
pub fn serve(
    stream: &mut dyn Transport,
    service: Arc<Service>,
    limits: &ConnectionLimits,
    local: String,
    id: u64,
    set_timeout: &dyn Fn(Option<Duration>),
    probe: Arc<dyn Fn() -> Liveness + Send + Sync>,
) {
    set_timeout(Some(limits.handshake_timeout));
    let mut hello = [0u8; 20];
    if stream.read_exact(&mut hello).is_err() || hello[..4] != MAGIC {
        return;
    }
    let proposals: [u8; 16] = hello[4..].try_into().expect("16 bytes");
    let Some(version) = choose_version(&proposals) else {
        let _ = stream.write_all(&[0, 0, 0, 0]);
        return;
    };
    if stream.write_all(&[0, 0, version.1, version.0]).and_then(|_| stream.flush()).is_err() {
        return;
    }
    set_timeout(Some(limits.idle_timeout));
    let mut session = Session::new(service, version, local, id);
    session.set_probe(probe);
    let mut inbuf: Vec<u8> = Vec::with_capacity(8192);
    let mut readbuf = vec![0u8; 64 * 1024];
    let mut out: Vec<u8> = Vec::with_capacity(8192);
    loop {
        // Serve every complete message already received, so pipelined requests cost one wake-up.
        out.clear();
        let mut served = false;
        loop {
            match take_message(&mut inbuf, limits.max_message_bytes) {
                Ok(Some(bytes)) => {
                    served = true;
                    let Ok(message) = packstream::decode(&bytes) else {
                        let _ = stream.write_all(&out);
                        return;
                    };
                    if session.handle(message, &mut out) == Control::Close {
                        let _ = stream.write_all(&out).and_then(|_| stream.flush());
                        return;
                    }
                }
                Ok(None) => break,
                Err(_) => {
                    let _ = stream.write_all(&out);
                    return;
                }
            }
        }
        if served && stream.write_all(&out).and_then(|_| stream.flush()).is_err() {
            return;
        }
        match stream.read(&mut readbuf) {
            Ok(0) | Err(_) => return,
            Ok(n) => inbuf.extend_from_slice(&readbuf[..n]),
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

/// Whether the buffered bytes hold a complete RESET message (a one-chunk message `B0 0F`).
fn contains_reset(buf: &[u8]) -> bool {
    buf.windows(6).any(|w| w == [0x00, 0x02, 0xB0, 0x0F, 0x00, 0x00])
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
    fn messages_are_reassembled_from_chunks() {
        let mut buf = vec![0, 2, 0xB0, 0x0F, 0, 0, 0, 0, 0, 1, 0xB1];
        assert_eq!(take_message(&mut buf, 1000).unwrap(), Some(vec![0xB0, 0x0F]));
        // The keep-alive NOOP is skipped; the next message is incomplete.
        assert_eq!(take_message(&mut buf, 1000).unwrap(), None);
        buf.extend_from_slice(&[0, 1, 0x01, 0, 0]);
        assert_eq!(take_message(&mut buf, 1000).unwrap(), Some(vec![0xB1, 0x01]));
        assert!(buf.is_empty());
    }

    #[test]
    fn oversized_messages_are_refused() {
        let mut buf = vec![0xFF, 0xFF];
        buf.extend(std::iter::repeat_n(0u8, 65535));
        buf.extend_from_slice(&[0xFF, 0xFF]);
        assert!(take_message(&mut buf, 1000).is_err());
    }
}
