//! A database whose log write failed, as on a full disk: the storage then refuses every commit until it is
//! reopened, and `/ready` must say so while `/health` still answers. The failure is made real with the file size
//! limit (`RLIMIT_FSIZE`): writes to files fail with `EFBIG`, as they would with `ENOSPC`. The limit is per
//! process, so this test has a file (and so a test binary) of its own.

#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use plexus_server::{Server, ServerConfig};
use serde_json::{json, Value as Json};

/// Sends one request on a connection of its own; the status and the body as JSON.
fn send(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, Json) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete head");
    let status = String::from_utf8_lossy(&raw[..split]).split(' ').nth(1).unwrap().parse().unwrap();
    let body = serde_json::from_slice(&raw[split + 4..]).unwrap_or(Json::Null);
    (status, body)
}

/// Sets the soft limit on the size of files this process writes.
fn limit_file_size(bytes: libc::rlim_t) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid rlimit to fill and then to pass back.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit), 0);
        limit.rlim_cur = bytes.min(limit.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    }
}

#[test]
fn a_failed_log_write_makes_the_server_unready_but_alive() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        data: dir.path().to_path_buf(),
        bolt: String::new(),
        http: "127.0.0.1:0".into(),
        auth: false,
        durability: "sync".into(),
        ..ServerConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = runtime.block_on(Server::start(&config)).unwrap();
    let addr = server.http_addr.unwrap();
    let write = json!({"statement": "CREATE (:N {i: 1})"}).to_string();
    assert_eq!(send(addr, "POST", "/db/neo4j/query/v2", &write).0, 202);
    let (status, body) = send(addr, "GET", "/ready", "");
    assert_eq!((status, &body["status"]), (200, &json!("ready")), "{body}");

    // Past the limit a write fails with EFBIG instead of raising SIGXFSZ, which would end the process.
    // SAFETY: ignoring a signal installs no handler.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    limit_file_size(0);
    let (status, body) = send(addr, "POST", "/db/neo4j/query/v2", &write);
    limit_file_size(libc::RLIM_INFINITY);
    assert!(status >= 500, "the commit should fail: {status} {body}");
    assert_eq!(body["errors"][0]["code"], "Neo.DatabaseError.Transaction.TransactionCommitFailed", "{body}");

    // The disk has room again, but the log stays poisoned until the database is reopened: not ready.
    let (status, body) = send(addr, "GET", "/ready", "");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "refusing_writes", "{body}");
    assert!(body["reason"].as_str().unwrap().contains("refuses writes"), "{body}");
    let (status, body) = send(addr, "GET", "/health", "");
    assert_eq!((status, &body["status"]), (200, &json!("up")), "{body}");
    // Reads still work.
    let (status, body) =
        send(addr, "POST", "/db/neo4j/query/v2", &json!({"statement": "MATCH (n:N) RETURN count(n)"}).to_string());
    assert_eq!((status, &body["data"]["values"]), (202, &json!([[1]])), "{body}");
    // The checkpoint at shutdown is refused too; what was committed is in the log.
    assert!(runtime.block_on(server.shutdown(Duration::from_secs(1))).is_err());
    let db = plexus::Database::open(dir.path()).unwrap();
    assert!(db.refusing_writes().is_none());
    let count = db.execute("MATCH (n:N) RETURN count(n)", &plexus::Params::new()).unwrap();
    assert_eq!(count.rows, vec![vec![plexus::ResultValue::Int(1)]]);
}
