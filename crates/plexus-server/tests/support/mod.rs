//! A Bolt test server on a loopback port and a minimal Bolt client written here, shared by the Bolt tests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use plexus_server::auth::Auth;
use plexus_server::bolt::session::chunk;
use plexus_server::packstream::{decode, map, Encoder, Ps};
use plexus_server::service::Service;
use plexus_server::{Server, ServerConfig};

pub struct TestServer {
    pub addr: SocketAddr,
    pub runtime: tokio::runtime::Runtime,
    pub server: Option<Server>,
}

impl TestServer {
    pub fn start(config: ServerConfig, auth: Auth) -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let service = Arc::new(Service::new(plexus::Database::in_memory(), auth, config.limits()));
        let server = runtime.block_on(Server::start_with(service, &config, None)).unwrap();
        TestServer { addr: server.bolt_addr.unwrap(), runtime, server: Some(server) }
    }

    /// A Bolt-only server with authentication on, the initial user's password `password`, its users kept in
    /// the returned directory.
    pub fn with_password(password: &str) -> (tempfile::TempDir, TestServer) {
        let dir = tempfile::tempdir().unwrap();
        let (auth, _) = Auth::open(dir.path(), Some(password)).unwrap();
        let config = ServerConfig { bolt: "127.0.0.1:0".into(), http: String::new(), ..Default::default() };
        (dir, Self::start(config, auth))
    }

    pub fn open() -> TestServer {
        let config =
            ServerConfig { bolt: "127.0.0.1:0".into(), http: String::new(), auth: false, ..Default::default() };
        Self::start(config, Auth::disabled())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            let _ = self.runtime.block_on(s.shutdown(Duration::from_secs(1)));
        }
    }
}

pub struct Client {
    pub stream: TcpStream,
}

impl Client {
    pub fn connect(addr: SocketAddr, versions: [u8; 16]) -> std::io::Result<(Client, [u8; 4])> {
        let mut stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.write_all(&[0x60, 0x60, 0xB0, 0x17])?;
        stream.write_all(&versions)?;
        let mut chosen = [0u8; 4];
        stream.read_exact(&mut chosen)?;
        Ok((Client { stream }, chosen))
    }

    /// Connects with Bolt 5.4 and logs on.
    pub fn ready(addr: SocketAddr) -> Client {
        let (mut c, v) = Self::connect(addr, [0, 4, 4, 5, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(v, [0, 0, 4, 5]);
        let hello = c.request(0x01, vec![map([("user_agent", Ps::String("test/1".into()))])]);
        assert!(matches!(&hello[0], Ps::Struct(0x70, _)), "{hello:?}");
        let logon = c.request(0x6A, vec![map([("scheme", Ps::String("none".into()))])]);
        assert!(matches!(&logon[0], Ps::Struct(0x70, _)), "{logon:?}");
        c
    }

    /// Connects with Bolt 5.4 and logs on as `user`.
    pub fn logged_on(addr: SocketAddr, user: &str, password: &str) -> Client {
        let (mut c, _) = Self::connect(addr, [0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        c.request(0x01, vec![map([("user_agent", Ps::String("test/1".into()))])]);
        let logon = c.request(0x6A, vec![basic_credentials(user, password)]);
        assert!(matches!(&logon[0], Ps::Struct(0x70, _)), "{logon:?}");
        c
    }

    /// The code of the failure a RUN of `q` with `extra` meets (panics if it succeeds).
    pub fn run_failure(&mut self, q: &str, extra: Ps) -> String {
        match self.request(0x10, vec![Ps::String(q.into()), map([]), extra]).remove(0) {
            Ps::Struct(0x7F, f) => f[0].get("code").and_then(Ps::as_str).unwrap_or_default().to_string(),
            other => panic!("{q}: {other:?}"),
        }
    }

    pub fn send(&mut self, tag: u8, fields: Vec<Ps>) {
        let mut e = Encoder::new();
        e.value(&Ps::Struct(tag, fields));
        let mut out = Vec::new();
        chunk(&e.buf, &mut out);
        self.stream.write_all(&out).unwrap();
    }

    pub fn receive(&mut self) -> std::io::Result<Ps> {
        let mut message = Vec::new();
        loop {
            let mut size = [0u8; 2];
            self.stream.read_exact(&mut size)?;
            let size = u16::from_be_bytes(size) as usize;
            if size == 0 {
                break;
            }
            let start = message.len();
            message.resize(start + size, 0);
            self.stream.read_exact(&mut message[start..])?;
        }
        Ok(decode(&message).expect("the server sends valid PackStream"))
    }

    /// Sends one message and reads responses up to and including the summary (SUCCESS/FAILURE/IGNORED).
    pub fn request(&mut self, tag: u8, fields: Vec<Ps>) -> Vec<Ps> {
        self.send(tag, fields);
        self.responses()
    }

    pub fn responses(&mut self) -> Vec<Ps> {
        let mut out = Vec::new();
        loop {
            let m = self.receive().unwrap();
            let summary = !matches!(m, Ps::Struct(0x71, _));
            out.push(m);
            if summary {
                return out;
            }
        }
    }

    /// RUN + PULL; the records' first fields and the final summary.
    pub fn query(&mut self, q: &str) -> (Vec<Ps>, Ps) {
        let run = self.request(0x10, vec![Ps::String(q.into()), map([]), map([])]);
        assert!(matches!(&run[0], Ps::Struct(0x70, _)), "{run:?}");
        self.pull(-1, None)
    }

    /// PULL `n` records (of result `qid`); their first fields and the summary.
    pub fn pull(&mut self, n: i64, qid: Option<i64>) -> (Vec<Ps>, Ps) {
        let extra = match qid {
            Some(q) => map([("n", Ps::Int(n)), ("qid", Ps::Int(q))]),
            None => map([("n", Ps::Int(n))]),
        };
        let mut pulled = self.request(0x3F, vec![extra]);
        let summary = pulled.pop().unwrap();
        let records = pulled
            .into_iter()
            .map(|r| match r {
                Ps::Struct(0x71, mut f) => match f.remove(0) {
                    Ps::List(mut values) => values.remove(0),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect();
        (records, summary)
    }

    pub fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.stream.read(&mut b), Ok(0) | Err(_))
    }
}

pub fn assert_healthy(addr: SocketAddr) {
    let mut c = Client::ready(addr);
    let (records, _) = c.query("RETURN 41 + 1 AS x");
    assert_eq!(records, vec![Ps::Int(42)]);
}

/// A Bolt-only server without authentication that takes messages up to `bytes`.
pub fn bolt_only_with_message_limit(bytes: usize) -> ServerConfig {
    ServerConfig {
        bolt: "127.0.0.1:0".into(),
        http: String::new(),
        auth: false,
        max_request_bytes: bytes,
        ..Default::default()
    }
}

/// A Bolt-only server without authentication on a database in `data`, with its runtime.
pub fn start_on_disk(data: std::path::PathBuf) -> (tokio::runtime::Runtime, Server) {
    let config =
        ServerConfig { data, bolt: "127.0.0.1:0".into(), http: String::new(), auth: false, ..Default::default() };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = runtime.block_on(Server::start(&config)).unwrap();
    (runtime, server)
}

/// A LOGON's auth map for the basic scheme.
pub fn basic_credentials(user: &str, password: &str) -> Ps {
    map([
        ("scheme", Ps::String("basic".into())),
        ("principal", Ps::String(user.into())),
        ("credentials", Ps::String(password.into())),
    ])
}
