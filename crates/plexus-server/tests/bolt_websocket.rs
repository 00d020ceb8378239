//! Bolt over WebSocket on the Bolt port, as a browser's driver speaks it: the HTTP upgrade, then the Bolt
//! conversation in masked binary frames split wherever the client likes. Plain Bolt keeps working on the same
//! port, and a plain web request there is told what the port is.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use plexus_server::bolt::session::chunk;
use plexus_server::packstream::{decode, map, Encoder, Ps};
use support::{assert_healthy, TestServer};

struct WsClient {
    stream: TcpStream,
    /// Bolt bytes received and not yet taken as messages.
    bolt: Vec<u8>,
}

impl WsClient {
    fn connect(addr: std::net::SocketAddr) -> WsClient {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let request = format!(
            "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).unwrap();
        assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
        assert!(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "{head}");
        WsClient { stream, bolt: Vec::new() }
    }

    /// Sends `bytes` in masked binary frames of at most `piece` bytes each.
    fn send(&mut self, bytes: &[u8], piece: usize) {
        for (n, part) in bytes.chunks(piece).enumerate() {
            let mask = [n as u8, 0x5A, 0xC3, 0x11];
            let mut frame = vec![0x82, 0x80 | part.len() as u8];
            frame.extend_from_slice(&mask);
            frame.extend(part.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
            self.stream.write_all(&frame).unwrap();
        }
    }

    /// Reads one server frame: (opcode, payload). Server frames are never masked.
    fn frame(&mut self) -> (u8, Vec<u8>) {
        let mut head = [0u8; 2];
        self.stream.read_exact(&mut head).unwrap();
        assert_eq!(head[1] & 0x80, 0, "a server frame is not masked");
        let len = match head[1] & 0x7F {
            126 => {
                let mut l = [0u8; 2];
                self.stream.read_exact(&mut l).unwrap();
                u16::from_be_bytes(l) as usize
            }
            127 => {
                let mut l = [0u8; 8];
                self.stream.read_exact(&mut l).unwrap();
                u64::from_be_bytes(l) as usize
            }
            n => n as usize,
        };
        let mut payload = vec![0u8; len];
        self.stream.read_exact(&mut payload).unwrap();
        (head[0] & 0x0F, payload)
    }

    fn bolt_bytes(&mut self, n: usize) -> Vec<u8> {
        while self.bolt.len() < n {
            let (opcode, payload) = self.frame();
            assert_eq!(opcode, 0x2, "Bolt comes in binary frames");
            self.bolt.extend(payload);
        }
        self.bolt.drain(..n).collect()
    }

    fn message(&mut self) -> Ps {
        let mut body = Vec::new();
        loop {
            let size = self.bolt_bytes(2);
            let size = u16::from_be_bytes([size[0], size[1]]) as usize;
            if size == 0 {
                return decode(&body).unwrap();
            }
            body.extend(self.bolt_bytes(size));
        }
    }

    fn request(&mut self, tag: u8, fields: Vec<Ps>, piece: usize) -> Vec<Ps> {
        let mut e = Encoder::new();
        e.value(&Ps::Struct(tag, fields));
        let mut out = Vec::new();
        chunk(&e.buf, &mut out);
        self.send(&out, piece);
        let mut responses = Vec::new();
        loop {
            let m = self.message();
            let record = matches!(m, Ps::Struct(0x71, _));
            responses.push(m);
            if !record {
                return responses;
            }
        }
    }
}

#[test]
fn bolt_runs_over_a_websocket_on_the_bolt_port() {
    let s = TestServer::open();
    let mut ws = WsClient::connect(s.addr);
    // The handshake itself split across frames.
    ws.send(&[0x60, 0x60, 0xB0, 0x17, 0, 4, 4, 5, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0], 3);
    assert_eq!(ws.bolt_bytes(4), [0, 0, 4, 5]);
    let hello = ws.request(0x01, vec![map([("user_agent", Ps::String("browser/1".into()))])], 5);
    assert!(matches!(&hello[0], Ps::Struct(0x70, _)), "{hello:?}");
    let logon = ws.request(0x6A, vec![map([("scheme", Ps::String("none".into()))])], 100);
    assert!(matches!(&logon[0], Ps::Struct(0x70, _)), "{logon:?}");
    let run = ws.request(0x10, vec![Ps::String("UNWIND range(1, 3000) AS i RETURN i".into()), map([]), map([])], 7);
    assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
    let pulled = ws.request(0x3F, vec![map([("n", Ps::Int(-1))])], 100);
    assert_eq!(pulled.len(), 3001, "every row, then the summary");
    assert_eq!(pulled[2999], Ps::Struct(0x71, vec![Ps::List(vec![Ps::Int(3000)])]));

    // A ping is answered with a pong carrying the same bytes, between Bolt messages.
    let mask = [1, 2, 3, 4];
    let mut ping = vec![0x89, 0x80 | 3];
    ping.extend_from_slice(&mask);
    ping.extend(b"abc".iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    ws.stream.write_all(&ping).unwrap();
    assert_eq!(ws.frame(), (0xA, b"abc".to_vec()));
    let again = ws.request(0x10, vec![Ps::String("RETURN 1 AS one".into()), map([]), map([])], 100);
    assert!(matches!(&again[0], Ps::Struct(0x70, _)), "{again:?}");

    // A close frame is echoed and ends the connection.
    let mut close = vec![0x88, 0x80 | 2];
    close.extend_from_slice(&mask);
    close.extend([0x03u8, 0xE8].iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    ws.stream.write_all(&close).unwrap();
    assert_eq!(ws.frame(), (0x8, vec![0x03, 0xE8]));
    assert_healthy(s.addr);
}

/// What the server answers `request` with before it closes the connection.
fn http_answer(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(request).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn a_plain_web_request_on_the_bolt_port_gets_an_answer_that_names_it() {
    let s = TestServer::open();
    let answer = http_answer(s.addr, b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 400 ") && answer.contains("Bolt port"), "{answer}");
    assert_healthy(s.addr);
}

/// A web page from an origin the server does not name (`--cors-origin`) is refused, as by the HTTP API: a page
/// the user visits must not reach a server on their machine.
#[test]
fn a_page_from_an_origin_not_named_is_refused() {
    let s = TestServer::open();
    let answer = http_answer(
        s.addr,
        b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Origin: https://evil.example\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 403 ") && answer.contains("--cors-origin"), "{answer}");
}

#[test]
fn an_unmasked_client_frame_closes_the_connection() {
    let s = TestServer::open();
    let mut ws = WsClient::connect(s.addr);
    ws.stream.write_all(&[0x82, 4, 0x60, 0x60, 0xB0, 0x17]).unwrap();
    let mut rest = Vec::new();
    let _ = ws.stream.read_to_end(&mut rest);
    assert!(rest.is_empty(), "{rest:?}");
    assert_healthy(s.addr);
}
