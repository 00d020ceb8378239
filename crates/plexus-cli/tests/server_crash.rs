//! `plexus serve` killed with SIGKILL while Bolt clients commit: every commit the server acknowledged (a SUCCESS
//! for the PULL of an auto-commit write, sent after its fsync) is there after a restart, each transaction whole,
//! and `plexus check` finds the database consistent.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{path, plexus, text};
use plexus_server::bolt::session::chunk;
use plexus_server::packstream::{decode, map, Encoder, Ps};

/// A server on a free loopback port, and the port.
fn start(data: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["serve", "--data", data, "--bolt", "127.0.0.1:0", "--http", "127.0.0.1:0", "--no-auth"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start plexus serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let address = loop {
        let line = lines.next().expect("the server says where it listens").unwrap();
        if let Some(a) = line.strip_prefix("Bolt listening on bolt://") {
            break a.to_string();
        }
    };
    // Keep reading what it prints, so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, address)
}

struct Bolt(TcpStream);

impl Bolt {
    fn connect(address: &str) -> std::io::Result<Bolt> {
        let mut s = TcpStream::connect(address)?;
        s.set_read_timeout(Some(Duration::from_secs(20)))?;
        s.write_all(&[0x60, 0x60, 0xB0, 0x17, 0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])?;
        let mut version = [0u8; 4];
        s.read_exact(&mut version)?;
        let mut b = Bolt(s);
        b.request(0x01, vec![map([("user_agent", Ps::String("crash-test/1".into()))])])?;
        b.request(0x6A, vec![map([("scheme", Ps::String("none".into()))])])?;
        Ok(b)
    }

    /// Sends one message; reads responses up to its summary, which is returned with the records before it.
    fn request(&mut self, tag: u8, fields: Vec<Ps>) -> std::io::Result<Vec<Ps>> {
        let mut e = Encoder::new();
        e.value(&Ps::Struct(tag, fields));
        let mut out = Vec::new();
        chunk(&e.buf, &mut out);
        self.0.write_all(&out)?;
        let mut responses = Vec::new();
        loop {
            let mut body = Vec::new();
            loop {
                let mut size = [0u8; 2];
                self.0.read_exact(&mut size)?;
                let size = u16::from_be_bytes(size) as usize;
                if size == 0 {
                    break;
                }
                let start = body.len();
                body.resize(start + size, 0);
                self.0.read_exact(&mut body[start..])?;
            }
            let message = decode(&body).expect("valid PackStream");
            let record = matches!(message, Ps::Struct(0x71, _));
            responses.push(message);
            if !record {
                return Ok(responses);
            }
        }
    }

    /// Runs `query` in its own transaction; `Ok(true)` once the server acknowledged its commit.
    fn run(&mut self, query: &str, params: Ps) -> std::io::Result<(bool, Vec<Ps>)> {
        let run = self.request(0x10, vec![Ps::String(query.into()), params, map([])])?;
        if !matches!(run[0], Ps::Struct(0x70, _)) {
            return Ok((false, run));
        }
        let mut pulled = self.request(0x3F, vec![map([("n", Ps::Int(-1))])])?;
        let done = matches!(pulled.pop(), Some(Ps::Struct(0x70, _)));
        Ok((done, pulled))
    }
}

#[test]
fn acknowledged_commits_survive_the_server_killed_mid_commit() {
    let dir = tempfile::tempdir().unwrap();
    let data = path(dir.path(), "db");
    let acknowledged: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    for round in 0..6u32 {
        let (mut server, address) = start(&data);
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..4)
            .map(|thread| {
                let (address, stop, acknowledged) = (address.clone(), stop.clone(), acknowledged.clone());
                std::thread::spawn(move || {
                    let Ok(mut bolt) = Bolt::connect(&address) else { return };
                    for seq in 0.. {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let key = format!("{round}-{thread}-{seq}");
                        // Two nodes and a relationship in one transaction: after the crash, all or nothing.
                        let params = map([("k", Ps::String(key.clone()))]);
                        match bolt.run("CREATE (:T {k: $k})-[:R {k: $k}]->(:U {k: $k})", params) {
                            Ok((true, _)) => {
                                acknowledged.lock().unwrap().insert(key);
                            }
                            _ => return,
                        }
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(150 + 70 * u64::from(round)));
        server.kill().unwrap(); // SIGKILL
        server.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.join().unwrap();
        }

        let check = plexus(&["check", "--data", &data]);
        assert!(check.status.success(), "round {round}: {}{}", text(&check.stdout), text(&check.stderr));
        let (mut server, address) = start(&data);
        let mut bolt = Bolt::connect(&address).unwrap();
        let (done, rows) =
            bolt.run("MATCH (t:T)-[r:R]->(u:U) WHERE t.k = r.k AND r.k = u.k RETURN t.k", map([])).unwrap();
        assert!(done);
        let whole: BTreeSet<String> = rows
            .into_iter()
            .map(|r| match r {
                Ps::Struct(0x71, mut f) => match f.remove(0) {
                    Ps::List(mut v) => match v.remove(0) {
                        Ps::String(s) => s.to_string(),
                        other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect();
        let (_, counts) = bolt
            .run("RETURN COUNT { MATCH (t:T) }, COUNT { MATCH (u:U) }, COUNT { MATCH ()-[r:R]->() }", map([]))
            .unwrap();
        let n = whole.len() as i64;
        assert_eq!(
            counts,
            vec![Ps::Struct(0x71, vec![Ps::List(vec![Ps::Int(n), Ps::Int(n), Ps::Int(n)])])],
            "round {round}: no transaction is there in part"
        );
        let lost: Vec<_> = acknowledged.lock().unwrap().difference(&whole).cloned().collect();
        assert!(lost.is_empty(), "round {round}: acknowledged commits lost after SIGKILL: {lost:?}");
        server.kill().unwrap();
        server.wait().unwrap();
    }
    assert!(acknowledged.lock().unwrap().len() > 20, "the writers committed before the kills");
}
