//! One Bolt connection's I/O: the version handshake, de-chunking request messages with size limits and idle
//! timeouts, and handing each batch of complete messages to the [`Session`] on a blocking thread. While a batch
//! runs, the connection keeps reading so it notices a client that went away (and cancels its query) or a RESET
//! that asks to interrupt it.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::session::{Control, Session, VERSIONS};
use crate::packstream::{self, Ps};
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

/// Serves one connection until it closes.
pub async fn serve<S>(
    mut stream: S,
    service: Arc<Service>,
    limits: ConnectionLimits,
    local: String,
    id: u64,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut hello = [0u8; 20];
    tokio::select! {
        read = tokio::time::timeout(limits.handshake_timeout, stream.read_exact(&mut hello)) => match read {
            Ok(Ok(_)) => {}
            _ => return,
        },
        _ = shutdown.changed() => return,
    }
    if hello[..4] != MAGIC {
        return;
    }
    let proposals: [u8; 16] = hello[4..].try_into().expect("16 bytes");
    let Some(version) = choose_version(&proposals) else {
        let _ = stream.write_all(&[0, 0, 0, 0]).await;
        return;
    };
    if stream.write_all(&[0, 0, version.1, version.0]).await.is_err() {
        return;
    }
    let mut session = Some(Session::new(service, version, local, id));
    let mut inbuf: Vec<u8> = Vec::with_capacity(8192);
    let mut readbuf = vec![0u8; 64 * 1024];
    let mut out: Vec<u8> = Vec::with_capacity(8192);
    loop {
        // Collect every complete message already received, so pipelined requests are served in one go.
        let mut batch: Vec<Ps> = Vec::new();
        let mut protocol_error = None;
        loop {
            match take_message(&mut inbuf, limits.max_message_bytes) {
                Ok(Some(bytes)) => match packstream::decode(&bytes) {
                    Ok(v) => batch.push(v),
                    Err(e) => {
                        protocol_error = Some(format!("malformed message: {e}"));
                        break;
                    }
                },
                Ok(None) => break,
                Err(e) => {
                    protocol_error = Some(e);
                    break;
                }
            }
        }
        if batch.is_empty() {
            if protocol_error.is_some() {
                return;
            }
            // Between requests: wait for more bytes, the idle limit, or shutdown (which closes idle connections).
            if *shutdown.borrow() {
                return;
            }
            tokio::select! {
                read = tokio::time::timeout(limits.idle_timeout, stream.read(&mut readbuf)) => match read {
                    Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return,
                    Ok(Ok(n)) => inbuf.extend_from_slice(&readbuf[..n]),
                },
                _ = shutdown.changed() => return,
            }
            continue;
        }
        let mut s = session.take().expect("the session is back between batches");
        let running = s.running();
        let mut task = tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            let mut control = Control::Continue;
            for m in batch {
                control = s.handle(m, &mut out);
                if control == Control::Close {
                    break;
                }
            }
            (s, out, control)
        });
        // Keep reading while the batch runs: a closed socket cancels the running query, a RESET interrupts it.
        let mut client_gone = false;
        let joined = loop {
            tokio::select! {
                joined = &mut task => break joined,
                read = stream.read(&mut readbuf), if !client_gone && inbuf.len() < limits.max_message_bytes => {
                    match read {
                        Ok(0) | Err(_) => {
                            client_gone = true;
                            if let Some(i) = running.lock().as_ref() { i.cancel(); }
                        }
                        Ok(n) => {
                            inbuf.extend_from_slice(&readbuf[..n]);
                            if contains_reset(&inbuf) {
                                if let Some(i) = running.lock().as_ref() { i.cancel(); }
                            }
                        }
                    }
                }
            }
        };
        let Ok((s, response, control)) = joined else { return };
        session = Some(s);
        out.clear();
        out.extend_from_slice(&response);
        if client_gone || stream.write_all(&out).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        if control == Control::Close || protocol_error.is_some() {
            return;
        }
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
