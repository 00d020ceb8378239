//! Bolt over WebSocket, as browsers speak it (Neo4j Browser, the JavaScript driver inside a web page): an HTTP
//! upgrade request on the Bolt port, then binary frames that carry the same byte stream a plain socket does.
//! Like Neo4j, one port serves both: a connection that opens with `GET ` is a WebSocket, one that opens with
//! Bolt's magic number is plain Bolt.

use std::io::{self, Read, Write};
use std::time::Instant;

use base64::Engine;

use super::connection::Transport;
use crate::http::cors::Cors;

/// How a WebSocket connection begins (the request line of its HTTP upgrade).
pub const UPGRADE_START: [u8; 4] = *b"GET ";

/// Longest upgrade request read: browsers send well under 2 KiB.
const MAX_REQUEST: usize = 16 * 1024;

/// Appended to the client's key before hashing (RFC 6455, section 1.3).
const ACCEPT_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Reads the rest of an upgrade request whose first four bytes (`GET `) were read already and answers it.
/// Returns whether the connection is now a WebSocket; anything else (a plain web page request on the Bolt port,
/// a malformed request, a page from an origin `origins` does not name) was answered with an HTTP error and the
/// connection should close. A request without `Origin` comes from a program, not a page, and is let in.
pub fn accept(stream: &mut dyn Transport, deadline: Instant, origins: &Cors) -> bool {
    let mut request = UPGRADE_START.to_vec();
    let mut byte = [0u8; 1];
    while !request.ends_with(b"\r\n\r\n") {
        if Instant::now() > deadline {
            return false;
        }
        if request.len() >= MAX_REQUEST {
            refuse(stream, "431 Request Header Fields Too Large", "the upgrade request is too long");
            return false;
        }
        // A byte at a time: what follows the request is the client's first frame, which must stay unread.
        match stream.read(&mut byte) {
            Ok(1) => request.push(byte[0]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            _ => return false,
        }
    }
    let text = String::from_utf8_lossy(&request);
    let header = |name: &str| {
        text.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_string())
        })
    };
    let upgrade = header("Upgrade").is_some_and(|v| v.to_ascii_lowercase().contains("websocket"));
    let key = header("Sec-WebSocket-Key");
    let (true, Some(key)) = (upgrade, key) else {
        refuse(
            stream,
            "400 Bad Request",
            "this is the Bolt port: connect with a Neo4j driver (bolt:// or neo4j://), or over a WebSocket; the HTTP \
             API listens on its own port",
        );
        return false;
    };
    if let Some(origin) = header("Origin").filter(|o| !origins.allows(o)) {
        let why = format!(
            "web pages from {origin} may not connect to this server: start it with --cors-origin {origin} (or \
             cors_origins in its configuration) to let them"
        );
        refuse(stream, "403 Forbidden", &why);
        return false;
    }
    let mut hash = sha1_smol::Sha1::new();
    hash.update(key.as_bytes());
    hash.update(ACCEPT_GUID.as_bytes());
    let accept = base64::engine::general_purpose::STANDARD.encode(hash.digest().bytes());
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \
         {accept}\r\n\r\n"
    );
    stream.write_all(response.as_bytes()).and_then(|()| stream.flush()).is_ok()
}

fn refuse(stream: &mut dyn Transport, status: &str, why: &str) {
    let body = format!("{why}\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: \
         close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).and_then(|()| stream.flush());
}

/// Frame opcodes (RFC 6455, section 5.2).
const CONTINUATION: u8 = 0x0;
const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

/// A WebSocket connection as the byte stream its binary frames carry. Reads unmask the client's frames and answer
/// pings; a close frame reads as the end of the stream. Each write goes out as one binary frame.
///
/// A read that fails part-way (the read timeouts the connection uses to check its deadlines) keeps what it had
/// of a frame header, so the next read goes on from there.
pub struct WebSocket<'a> {
    inner: &'a mut dyn Transport,
    /// Bytes of the frame header read so far (at most 14).
    header: Vec<u8>,
    /// Payload bytes of the current frame not yet read, and where the frame's mask stands.
    left: u64,
    mask: [u8; 4],
    mask_at: usize,
    /// The current frame is a control frame (ping, pong, close): its payload is collected here, not handed out.
    control: Option<(u8, Vec<u8>)>,
    closed: bool,
}

impl<'a> WebSocket<'a> {
    pub fn new(inner: &'a mut dyn Transport) -> WebSocket<'a> {
        WebSocket {
            inner,
            header: Vec::with_capacity(14),
            left: 0,
            mask: [0; 4],
            mask_at: 0,
            control: None,
            closed: false,
        }
    }

    /// The header's length once its first bytes are known: 2, plus 2 or 8 for a longer length, plus 4 for the mask.
    fn header_len(&self) -> usize {
        match self.header.get(1).map(|b| b & 0x7F) {
            None => 2,
            Some(126) => 8,
            Some(127) => 14,
            Some(_) => 6,
        }
    }

    /// Reads the next frame header; `Ok(false)` at the end of the stream.
    fn read_header(&mut self) -> io::Result<bool> {
        loop {
            if self.header.len() >= 2 && self.header[1] & 0x80 == 0 {
                return Err(invalid("a client's WebSocket frame must be masked"));
            }
            let need = self.header_len();
            if self.header.len() == need {
                break;
            }
            let mut bytes = [0u8; 14];
            let n = self.inner.read(&mut bytes[..need - self.header.len()])?;
            if n == 0 {
                return Ok(false);
            }
            self.header.extend_from_slice(&bytes[..n]);
        }
        let (first, second) = (self.header[0], self.header[1]);
        let len = match second & 0x7F {
            126 => u64::from(u16::from_be_bytes([self.header[2], self.header[3]])),
            127 => u64::from_be_bytes(self.header[2..10].try_into().expect("eight bytes")),
            n => u64::from(n),
        };
        self.mask.copy_from_slice(&self.header[self.header.len() - 4..]);
        self.header.clear();
        self.mask_at = 0;
        self.left = len;
        let opcode = first & 0x0F;
        self.control = match opcode {
            CONTINUATION | TEXT | BINARY => None,
            CLOSE | PING | PONG if len <= 125 && first & 0x80 != 0 => Some((opcode, Vec::with_capacity(len as usize))),
            _ => return Err(invalid("unknown or malformed WebSocket frame")),
        };
        Ok(true)
    }

    /// Reads payload into `buf`, unmasked.
    fn read_payload(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        for b in &mut buf[..n] {
            *b ^= self.mask[self.mask_at];
            self.mask_at = (self.mask_at + 1) & 3;
        }
        self.left -= n as u64;
        Ok(n)
    }

    fn send(&mut self, opcode: u8, payload: &[u8]) -> io::Result<()> {
        let mut frame = Vec::with_capacity(payload.len() + 10);
        frame.push(0x80 | opcode);
        match payload.len() {
            n if n <= 125 => frame.push(n as u8),
            n if n <= 0xFFFF => {
                frame.push(126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(payload);
        self.inner.write_all(&frame)
    }
}

impl Read for WebSocket<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.closed {
                return Ok(0);
            }
            if self.left == 0 && self.control.is_none() && !self.read_header()? {
                return Ok(0);
            }
            if self.control.is_none() {
                if self.left == 0 {
                    continue;
                }
                return self.read_payload(buf);
            }
            let mut chunk = [0u8; 125];
            if self.left > 0 {
                let n = self.read_payload(&mut chunk)?;
                if n == 0 {
                    return Ok(0);
                }
                self.control.as_mut().expect("a control frame").1.extend_from_slice(&chunk[..n]);
                continue;
            }
            let (opcode, payload) = self.control.take().expect("a control frame");
            match opcode {
                PING => self.send(PONG, &payload).and_then(|()| self.inner.flush())?,
                CLOSE => {
                    // Echo the close, as the protocol asks, then report the end of the stream.
                    let _ = self.send(CLOSE, &payload[..payload.len().min(2)]).and_then(|()| self.inner.flush());
                    self.closed = true;
                }
                _ => {}
            }
        }
    }
}

impl Write for WebSocket<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !buf.is_empty() {
            self.send(BINARY, buf)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn far() -> Instant {
        Instant::now() + std::time::Duration::from_secs(60)
    }

    /// A client's frame: masked, as every client frame must be.
    fn client_frame(opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
        let mut f = vec![0x80 | opcode];
        match payload.len() {
            n if n <= 125 => f.push(0x80 | n as u8),
            n => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
        }
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        f
    }

    /// Input from a byte string, output collected; reads hand out at most `step` bytes at a time.
    struct Pipe {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
        step: usize,
    }

    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step);
            self.input.read(&mut buf[..n])
        }
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_upgrade_is_answered_with_the_key_hashed_as_the_rfc_shows() {
        // The example of RFC 6455, section 1.3.
        let request = "/ HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                       Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\nrest";
        let mut pipe = Pipe { input: Cursor::new(request.as_bytes().to_vec()), output: Vec::new(), step: 7 };
        assert!(accept(&mut pipe, far(), &Cors::new(&[])));
        let answer = String::from_utf8(pipe.output).unwrap();
        assert!(answer.starts_with("HTTP/1.1 101 "), "{answer}");
        assert!(answer.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{answer}");
        let mut rest = String::new();
        pipe.input.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "rest", "what follows the request is left unread");
    }

    #[test]
    fn a_page_is_let_in_only_from_an_origin_named_for_it() {
        let request = |origin: &str| {
            format!(
                "/ HTTP/1.1\r\nUpgrade: websocket\r\nOrigin: {origin}\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            )
        };
        let named = Cors::new(&["http://localhost:8080".into()]);
        for (origin, origins, let_in) in [
            ("http://localhost:8080", &named, true),
            ("https://evil.example", &named, false),
            ("http://localhost:8080", &Cors::new(&[]), false),
        ] {
            let mut pipe = Pipe { input: Cursor::new(request(origin).into_bytes()), output: Vec::new(), step: 100 };
            assert_eq!(accept(&mut pipe, far(), origins), let_in, "{origin}");
            let answer = String::from_utf8(pipe.output).unwrap();
            let status = if let_in { "HTTP/1.1 101 " } else { "HTTP/1.1 403 " };
            assert!(answer.starts_with(status), "{origin}: {answer}");
            assert!(let_in || answer.contains("--cors-origin"), "{answer}");
        }
    }

    #[test]
    fn a_plain_web_request_on_the_bolt_port_is_told_what_the_port_is() {
        let mut pipe =
            Pipe { input: Cursor::new(b"/ HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()), output: Vec::new(), step: 100 };
        assert!(!accept(&mut pipe, far(), &Cors::new(&[])));
        let answer = String::from_utf8(pipe.output).unwrap();
        assert!(answer.starts_with("HTTP/1.1 400 ") && answer.contains("Bolt port"), "{answer}");
    }

    #[test]
    fn frames_unmask_into_one_stream_with_pings_answered_and_close_ending_it() {
        let mut input = client_frame(BINARY, &[0x60, 0x60, 0xB0, 0x17, 1], [1, 2, 3, 4]);
        input.extend(client_frame(PING, b"hi", [9, 9, 9, 9]));
        input.extend(client_frame(CONTINUATION, &[], [5, 5, 5, 5]));
        let long: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        input.extend(client_frame(BINARY, &long, [0xAA, 0xBB, 0xCC, 0xDD]));
        input.extend(client_frame(CLOSE, &[0x03, 0xE8], [7, 7, 7, 7]));
        input.extend(client_frame(BINARY, b"after close", [1, 1, 1, 1]));
        for step in [1, 3, 1000] {
            let mut pipe = Pipe { input: Cursor::new(input.clone()), output: Vec::new(), step };
            let mut ws = WebSocket::new(&mut pipe);
            let mut got = Vec::new();
            ws.read_to_end(&mut got).unwrap();
            let mut want = vec![0x60, 0x60, 0xB0, 0x17, 1];
            want.extend(&long);
            assert_eq!(got, want, "read {step} bytes at a time");
            ws.write_all(b"ok").unwrap();
            // The pong, the echoed close, then the binary frame written.
            assert_eq!(
                pipe.output,
                [vec![0x8A, 2, b'h', b'i'], vec![0x88, 2, 0x03, 0xE8], vec![0x82, 2, b'o', b'k']].concat()
            );
        }
    }

    #[test]
    fn unmasked_or_unknown_frames_are_refused() {
        let mut pipe = Pipe { input: Cursor::new(vec![0x82, 0x01, 0x00]), output: Vec::new(), step: 100 };
        assert_eq!(WebSocket::new(&mut pipe).read(&mut [0u8; 8]).unwrap_err().kind(), io::ErrorKind::InvalidData);
        let mut pipe =
            Pipe { input: Cursor::new(client_frame(0x3, b"x", [1, 2, 3, 4])), output: Vec::new(), step: 100 };
        assert_eq!(WebSocket::new(&mut pipe).read(&mut [0u8; 8]).unwrap_err().kind(), io::ErrorKind::InvalidData);
    }
}
