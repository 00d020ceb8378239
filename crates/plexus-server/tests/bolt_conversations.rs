//! Whole Bolt conversations, fed to the session the way the `bolt_session` fuzz target feeds it: 16 bytes of
//! version proposals, then the client's chunked messages, through version choice, de-chunking, decoding and
//! `Session::handle` on an in-memory database. Each conversation is one a driver holds (log on, auto-commit
//! and explicit transactions, results pulled in parts and discarded, a failure and its reset, routing, log off),
//! for each Bolt version family, and every answer must be the summary the driver waits for.
//!
//! With `PLEXUS_FUZZ_SEEDS=DIR` the conversations are also written to `DIR/bolt_session/` as the fuzz target's
//! seed corpus: random bytes rarely get past the handshake and the first message, mutations of these do.

use std::sync::Arc;

use plexus_server::auth::Auth;
use plexus_server::bolt::connection::{choose_version, take_message};
use plexus_server::bolt::session::{chunk, Control, Session};
use plexus_server::packstream::{decode, map, Encoder, Ps};
use plexus_server::service::{Limits, Service};

const HELLO: u8 = 0x01;
const GOODBYE: u8 = 0x02;
const RESET: u8 = 0x0F;
const RUN: u8 = 0x10;
const BEGIN: u8 = 0x11;
const COMMIT: u8 = 0x12;
const ROLLBACK: u8 = 0x13;
const DISCARD: u8 = 0x2F;
const PULL: u8 = 0x3F;
const TELEMETRY: u8 = 0x54;
const ROUTE: u8 = 0x66;
const LOGON: u8 = 0x6A;
const LOGOFF: u8 = 0x6B;

const SUCCESS: u8 = 0x70;
const RECORD: u8 = 0x71;
const IGNORED: u8 = 0x7E;
const FAILURE: u8 = 0x7F;

/// A client's side of a conversation: the messages, and the summary each must get.
struct Script {
    name: &'static str,
    proposals: [u8; 16],
    steps: Vec<(Ps, u8)>,
}

impl Script {
    /// The conversation as the fuzz target reads it.
    fn bytes(&self) -> Vec<u8> {
        let mut out = self.proposals.to_vec();
        for (message, _) in &self.steps {
            let mut e = Encoder::new();
            e.value(message);
            chunk(&e.buf, &mut out);
        }
        out
    }
}

fn message(tag: u8, fields: Vec<Ps>) -> Ps {
    Ps::Struct(tag, fields)
}

fn text(s: &str) -> Ps {
    Ps::String(s.into())
}

fn run(query: &str, params: Ps) -> Ps {
    message(RUN, vec![text(query), params, map([])])
}

fn pull(n: i64) -> Ps {
    message(PULL, vec![map([("n", Ps::Int(n))])])
}

/// Parameters of every kind a driver sends.
fn every_kind_of_parameter() -> Ps {
    map([
        ("i", Ps::Int(-42)),
        ("f", Ps::Float(2.5)),
        ("s", text("ünïcode")),
        ("b", Ps::Bool(true)),
        ("n", Ps::Null),
        ("l", Ps::List(vec![Ps::Int(1), Ps::Int(2), Ps::Int(3)])),
        ("m", map([("k", text("v"))])),
        ("bytes", Ps::Bytes(vec![0, 1, 254, 255])),
        // A date: days since the epoch.
        ("d", Ps::Struct(0x44, vec![Ps::Int(19_000)])),
    ])
}

/// The steps every version shares once logged on.
fn session_steps() -> Vec<(Ps, u8)> {
    vec![
        (
            run("CREATE (a:P {id: $i, name: $s})-[:R {w: $f}]->(b:P {id: 2}) RETURN a, b", every_kind_of_parameter()),
            SUCCESS,
        ),
        (pull(-1), SUCCESS),
        (
            run(
                "UNWIND range(1, 10) AS x RETURN x, $l AS l, $m AS m, $d AS d, $bytes AS bytes",
                every_kind_of_parameter(),
            ),
            SUCCESS,
        ),
        (pull(3), SUCCESS),
        (pull(3), SUCCESS),
        (message(DISCARD, vec![map([("n", Ps::Int(-1))])]), SUCCESS),
        (message(BEGIN, vec![map([("tx_metadata", map([("app", text("seeds"))]))])]), SUCCESS),
        (run("MATCH p = (:P)-[:R]->(:P) RETURN p, length(p) AS n", map([])), SUCCESS),
        (pull(-1), SUCCESS),
        (run("MERGE (c:P {id: 3}) SET c.seen = true RETURN c.id", map([])), SUCCESS),
        (pull(-1), SUCCESS),
        (message(COMMIT, vec![]), SUCCESS),
        (message(BEGIN, vec![map([])]), SUCCESS),
        (run("MATCH (n:P) DETACH DELETE n", map([])), SUCCESS),
        (pull(-1), SUCCESS),
        (message(ROLLBACK, vec![]), SUCCESS),
        (run("EXPLAIN MATCH (n:P) WHERE n.id = $i RETURN n", every_kind_of_parameter()), SUCCESS),
        (pull(-1), SUCCESS),
        (run("RETURN 1 +", map([])), FAILURE),
        (pull(-1), IGNORED),
        (message(RESET, vec![]), SUCCESS),
        (run("MATCH (n:P) RETURN count(n) AS nodes", map([])), SUCCESS),
        (pull(-1), SUCCESS),
    ]
}

fn scripts() -> Vec<Script> {
    // Before 5.1, HELLO carries the credentials.
    let hello = || (message(HELLO, vec![map([("user_agent", text("seeds/1")), ("scheme", text("none"))])]), SUCCESS);
    let logon = (message(LOGON, vec![map([("scheme", text("none"))])]), SUCCESS);
    let route = (message(ROUTE, vec![map([("address", text("localhost:7687"))]), Ps::List(vec![]), map([])]), SUCCESS);
    let goodbye = (message(GOODBYE, vec![]), SUCCESS);
    let mut v44 = vec![hello()];
    v44.extend(session_steps());
    v44.push((message(ROUTE, vec![map([]), Ps::List(vec![]), map([])]), SUCCESS));
    v44.push(goodbye.clone());
    let mut v50 = vec![hello()];
    v50.extend(session_steps());
    v50.push(goodbye.clone());
    let mut v51 = vec![(message(HELLO, vec![map([("user_agent", text("seeds/1"))])]), SUCCESS), logon.clone()];
    v51.extend(session_steps());
    v51.push((message(LOGOFF, vec![]), SUCCESS));
    v51.push(logon.clone());
    v51.push(route.clone());
    v51.push(goodbye.clone());
    let mut v54 = vec![
        (
            message(
                HELLO,
                vec![map([("user_agent", text("seeds/1")), ("bolt_agent", map([("product", text("seeds/1"))]))])],
            ),
            SUCCESS,
        ),
        logon,
        (message(TELEMETRY, vec![Ps::Int(0)]), SUCCESS),
    ];
    v54.extend(session_steps());
    v54.push(route);
    v54.push(goodbye);
    vec![
        Script { name: "bolt-4.4", proposals: [0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], steps: v44 },
        Script { name: "bolt-5.0", proposals: [0, 0, 0, 5, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0], steps: v50 },
        Script { name: "bolt-5.1", proposals: [0, 0, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], steps: v51 },
        Script { name: "bolt-5.4", proposals: [0, 4, 4, 5, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0], steps: v54 },
    ]
}

/// Plays `bytes` as the fuzz target does, returning each message's summary tag (and `Close` when the session
/// asked to close).
fn play(bytes: &[u8]) -> (Vec<u8>, bool) {
    let proposals: [u8; 16] = bytes[..16].try_into().unwrap();
    let version = choose_version(&proposals).expect("a version in common");
    let limits = Limits { query_timeout: Some(std::time::Duration::from_secs(10)), max_result_bytes: Some(1 << 20) };
    let service = Arc::new(Service::new(plexus::Database::in_memory(), Auth::disabled(), limits));
    let mut session = Session::new(service, version, "127.0.0.1:7687".into(), 1);
    let mut input = bytes[16..].to_vec();
    let (mut summaries, mut out) = (Vec::new(), Vec::new());
    while let Some(m) = take_message(&mut input, 1 << 20).expect("well-framed input") {
        out.clear();
        let control = session.handle(decode(&m).expect("valid PackStream"), &mut out);
        let mut summary = None;
        while let Some(r) = take_message(&mut out, usize::MAX).expect("responses are framed") {
            match decode(&r).expect("responses are valid PackStream") {
                Ps::Struct(RECORD, _) => {}
                Ps::Struct(tag, _) => summary = Some(tag),
                other => panic!("not a message: {other:?}"),
            }
        }
        if control == Control::Close {
            return (summaries, true);
        }
        summaries.push(summary.expect("every message gets a summary"));
    }
    (summaries, false)
}

#[test]
fn driver_conversations_get_the_answers_drivers_wait_for() {
    let mut seeds = Vec::new();
    for script in scripts() {
        let bytes = script.bytes();
        let (summaries, closed) = play(&bytes);
        let expected: Vec<u8> = script.steps.iter().map(|(_, s)| *s).collect();
        // GOODBYE closes without an answer.
        assert!(closed, "{}: the conversation ends with GOODBYE", script.name);
        assert_eq!(summaries, expected[..expected.len() - 1], "{}", script.name);
        seeds.push((script.name, bytes));
    }
    if let Some(dir) = std::env::var_os("PLEXUS_FUZZ_SEEDS") {
        let dir = std::path::Path::new(&dir).join("bolt_session");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &seeds {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
}
