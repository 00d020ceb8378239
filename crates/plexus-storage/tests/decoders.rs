//! The on-disk decoders never panic, whatever bytes they are given.
//!
//! This is the stable-toolchain counterpart of the cargo-fuzz targets in `fuzz/`: about 20,000 inputs, random
//! and mutated from valid encodings with a fixed seed, go through the same three decoders:
//! - `wal::read_segment`, with every record it returns decoded by `ops::decode_commit`;
//! - `checkpoint::decode_body` with a fresh catalog;
//! - `codec::Reader::value`, called until the input is used up or an error.
//!
//! Valid inputs must decode; mutated ones may fail, but only with an error. WAL records are also mutated inside
//! valid framing (recomputed CRC), so `decode_commit` sees damaged payloads rather than only failed checksums.
//!
//! With `PLEXUS_FUZZ_SEEDS=DIR`, the valid encodings are also written to `DIR/<target>/` as a seed corpus for the
//! fuzz targets (see `fuzz/README.md`).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use plexus_storage::checkpoint::{decode_body, encode_body};
use plexus_storage::codec::{put_value, Reader};
use plexus_storage::ops::{decode_commit, encode_commit, Op};
use plexus_storage::value::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use plexus_storage::wal::{encode_header, frame, read_segment};
use plexus_storage::{Catalog, LabelId, NodeId, PropKeyId, PropMap, RelId, Store, TokenKind, TypeId, Value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const SEED: u64 = 0xDEC0_DE25;
/// Inputs per decoder.
const CASES: usize = 7000;

fn sample_values() -> Vec<Value> {
    vec![
        Value::Null,
        Value::Bool(true),
        Value::Bool(false),
        Value::Int(0),
        Value::Int(-1),
        Value::Int(i64::MAX),
        Value::Int(i64::MIN),
        Value::Float(3.25),
        Value::Float(f64::NAN),
        Value::from("hello"),
        Value::from(""),
        Value::from("ünïcødé ✓"),
        Value::from(vec![0u8, 1, 2, 0xff]),
        Value::Date(Date { days: -719_162 }),
        Value::LocalTime(LocalTime { nanos: 86_399_999_999_999 }),
        Value::Time(Time { nanos: 3_600_000_000_000, offset_seconds: -18_000 }),
        Value::LocalDateTime(LocalDateTime { seconds: 1_700_000_000, nanos: 999_999_999 }),
        Value::from(DateTime { seconds: 1_700_000_000, nanos: 5, offset_seconds: 3600, zone: None }),
        Value::from(DateTime { seconds: -1, nanos: 0, offset_seconds: 0, zone: Some(Arc::from("Europe/Paris")) }),
        Value::from(Duration { months: 14, days: -3, seconds: 7200, nanos: -5 }),
        Value::from(vec![1i64, 2, 3]),
        Value::from(vec!["a", "bc"]),
        Value::from(vec![1.5f64, -0.0]),
    ]
}

fn value_encodings() -> Vec<Vec<u8>> {
    let values = sample_values();
    let mut out: Vec<Vec<u8>> = values
        .iter()
        .map(|v| {
            let mut buf = Vec::new();
            put_value(&mut buf, v);
            buf
        })
        .collect();
    let mut all = Vec::new();
    for v in &values {
        put_value(&mut all, v);
    }
    out.push(all);
    out
}

fn sample_ops() -> Vec<Vec<Op>> {
    let v = sample_values();
    vec![
        vec![
            Op::Token { kind: TokenKind::Label, id: 0, name: "Person".into() },
            Op::Token { kind: TokenKind::PropKey, id: 0, name: "name".into() },
            Op::DeclareUniqueKey { label: LabelId(0), key: PropKeyId(0), name: None },
            Op::CreateNode {
                id: NodeId(1),
                labels: [LabelId(0)].into_iter().collect(),
                props: PropMap::shared(vec![(PropKeyId(0), v[9].clone())]),
            },
        ],
        vec![
            Op::CreateNode {
                id: NodeId(70),
                labels: Default::default(),
                props: PropMap::shared(v.iter().cloned().enumerate().map(|(i, x)| (PropKeyId(i as u32), x)).collect()),
            },
            Op::CreateRel {
                id: RelId(5),
                ty: TypeId(1),
                src: NodeId(1),
                dst: NodeId(70),
                props: vec![(PropKeyId(1), v[20].clone())],
            },
            Op::SetRelProp { id: RelId(5), key: PropKeyId(2), value: v[7].clone() },
        ],
        vec![
            Op::SetNodeProp { id: NodeId(1), key: PropKeyId(0), value: Value::Null },
            Op::AddLabel { id: NodeId(1), label: LabelId(4) },
            Op::RemoveLabel { id: NodeId(1), label: LabelId(4) },
            Op::DeleteRel { id: RelId(5) },
            Op::DeleteNode { id: NodeId(70) },
            Op::DropUniqueKey { label: LabelId(0), key: PropKeyId(0) },
            Op::CreateIndex { label: LabelId(0), key: PropKeyId(3), name: Some("by_name".into()) },
            Op::DropIndex { label: LabelId(0), key: PropKeyId(3) },
        ],
    ]
}

fn commit_payloads() -> Vec<Vec<u8>> {
    sample_ops()
        .iter()
        .enumerate()
        .map(|(i, ops)| {
            let mut buf = Vec::new();
            encode_commit(&mut buf, 1 + i as u64 * 1000, ops);
            buf
        })
        .collect()
}

fn segment(payloads: &[Vec<u8>]) -> Vec<u8> {
    let mut seg = encode_header(&[7; 16], 3, 1).to_vec();
    for p in payloads {
        frame(&mut seg, p);
    }
    seg
}

/// Checkpoint bodies of a few real graphs, built through the ordinary write path.
fn checkpoint_bodies() -> Vec<Vec<u8>> {
    let store = Store::in_memory();
    let mut bodies = vec![encode_body(&store.read(), store.catalog())];
    let values = sample_values();
    let mut tx = store.write();
    let (person, city) = (tx.label("Person"), tx.label("City"));
    let (name, misc) = (tx.prop_key("name"), tx.prop_key("misc"));
    let (knows, lives) = (tx.rel_type("KNOWS"), tx.rel_type("LIVES_IN"));
    tx.declare_unique_key(person, name).unwrap();
    tx.create_index(person, misc).unwrap();
    tx.create_index(city, name).unwrap();
    let mut people = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let props = vec![(name, Value::from(format!("p{i}"))), (misc, v.clone())];
        people.push(tx.create_node(&[person], props).unwrap());
    }
    let paris = tx.create_node(&[city, person], vec![(name, "paris".into())]).unwrap();
    for (i, &p) in people.iter().enumerate() {
        tx.create_rel(p, lives, paris, vec![]).unwrap();
        let other = people[(i * 7 + 3) % people.len()];
        tx.create_rel(p, knows, other, vec![(misc, values[i % values.len()].clone())]).unwrap();
    }
    tx.commit().unwrap();
    bodies.push(encode_body(&store.read(), store.catalog()));
    let mut tx = store.write();
    tx.detach_delete_node(people[2]).unwrap();
    tx.create_rel(paris, knows, paris, vec![]).unwrap();
    tx.drop_index(city, name).unwrap();
    tx.commit().unwrap();
    bodies.push(encode_body(&store.read(), store.catalog()));
    // The layout written before property indexes existed: no index section at all.
    let mut old = bodies[0].clone();
    assert_eq!(old.pop(), Some(0), "an empty index section is one zero byte");
    bodies.push(old);
    bodies
}

/// Writes `inputs` as seed files for a fuzz target when `PLEXUS_FUZZ_SEEDS` is set.
fn write_seeds(target: &str, inputs: &[Vec<u8>]) {
    let Some(dir) = std::env::var_os("PLEXUS_FUZZ_SEEDS") else {
        return;
    };
    let dir = std::path::Path::new(&dir).join(target);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, input) in inputs.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i}")), input).unwrap();
    }
}

/// One random change of the kinds that find decoder bugs: bit flips, boundary bytes, inserted, deleted or
/// duplicated runs, truncation, splices from another valid input.
fn mutate(rng: &mut StdRng, input: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..rng.gen_range(1..=4) {
        let len = b.len();
        match rng.gen_range(0..8) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                b[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.gen_range(0..len);
                b[i] = [0x00, 0x01, 0x7f, 0x80, 0xff, rng.gen()][rng.gen_range(0..6)];
            }
            2 => {
                let i = rng.gen_range(0..=len);
                let extra: Vec<u8> = (0..rng.gen_range(1..8)).map(|_| rng.gen()).collect();
                b.splice(i..i, extra);
            }
            3 if len > 0 => {
                let i = rng.gen_range(0..len);
                let j = rng.gen_range(i..=len.min(i + 8));
                b.drain(i..j);
            }
            4 => b.truncate(rng.gen_range(0..=len)),
            5 if len > 0 => {
                let i = rng.gen_range(0..len);
                let j = rng.gen_range(i..=len.min(i + 16));
                let run = b[i..j].to_vec();
                let at = rng.gen_range(0..=b.len());
                b.splice(at..at, run);
            }
            6 => {
                let other = &corpus[rng.gen_range(0..corpus.len())];
                let cut = rng.gen_range(0..=len);
                let from = rng.gen_range(0..=other.len());
                b.truncate(cut);
                b.extend_from_slice(&other[from..]);
            }
            _ if len >= 10 => {
                // A varint that claims a huge length or id, where a small one stood.
                let i = rng.gen_range(0..len - 9);
                b[i..i + 9].fill(0xff);
                b[i + 9] = 0x01;
            }
            _ => {}
        }
    }
    b
}

fn random_bytes(rng: &mut StdRng) -> Vec<u8> {
    let len = rng.gen_range(0..200);
    (0..len).map(|_| rng.gen()).collect()
}

/// Runs `f` on each input, naming the input (in hex) if it panics.
fn run_all(name: &str, inputs: impl Iterator<Item = Vec<u8>>, f: impl Fn(&[u8])) -> usize {
    let mut n = 0;
    for input in inputs {
        if std::panic::catch_unwind(AssertUnwindSafe(|| f(&input))).is_err() {
            let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
            panic!("{name} panicked on input {hex}");
        }
        n += 1;
    }
    n
}

fn inputs(rng: &mut StdRng, corpus: &[Vec<u8>], cases: usize) -> Vec<Vec<u8>> {
    (0..cases)
        .map(|i| {
            if i % 10 == 0 {
                random_bytes(rng)
            } else {
                let base = &corpus[rng.gen_range(0..corpus.len())];
                mutate(rng, base, corpus)
            }
        })
        .collect()
}

fn wal_segment(bytes: &[u8]) {
    let (records, end, _) = read_segment(bytes);
    assert!(end as usize <= bytes.len().max(plexus_storage::wal::SEGMENT_HEADER_LEN));
    for payload in records {
        let _ = decode_commit(payload);
    }
}

fn values(bytes: &[u8]) {
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let before = r.remaining();
        if r.value().is_err() {
            break;
        }
        assert!(r.remaining() < before, "a value consumed no bytes");
    }
}

#[test]
fn wal_segments_never_panic() {
    let mut rng = StdRng::seed_from_u64(SEED);
    let payloads = commit_payloads();
    for p in &payloads {
        decode_commit(p).expect("a valid commit decodes");
    }
    let corpus = vec![segment(&payloads), segment(&payloads[..1]), segment(&[])];
    write_seeds("wal_segment", &[corpus.clone(), payloads.clone()].concat());
    let (records, _, tail) = read_segment(&corpus[0]);
    assert_eq!((records.len(), tail), (payloads.len(), plexus_storage::wal::TailState::Clean));
    let mut n = run_all("read_segment", inputs(&mut rng, &corpus, CASES / 2).into_iter(), wal_segment);
    // Damage inside correctly framed records, so that decode_commit itself is exercised.
    let framed = (0..CASES / 2).map(|_| {
        let damaged: Vec<Vec<u8>> = payloads.iter().map(|p| mutate(&mut rng, p, &payloads)).collect();
        segment(&damaged)
    });
    n += run_all("decode_commit", framed, wal_segment);
    assert_eq!(n, CASES);
}

#[test]
fn checkpoint_bodies_never_panic() {
    let mut rng = StdRng::seed_from_u64(SEED ^ 1);
    let corpus = checkpoint_bodies();
    write_seeds("checkpoint_body", &corpus);
    for (i, body) in corpus.iter().enumerate() {
        decode_body(body, &Catalog::new(), 9).unwrap_or_else(|e| panic!("valid body {i} does not decode: {e}"));
    }
    let n = run_all("decode_body", inputs(&mut rng, &corpus, CASES).into_iter(), |b| {
        let _ = decode_body(b, &Catalog::new(), 9);
    });
    assert_eq!(n, CASES);
}

#[test]
fn checkpoint_body_with_an_absurd_label_is_refused() {
    // No tokens, no keys, one segment of one node (id 0) with one label, u32::MAX: its label index would need
    // 128 GiB. Then no relationships, no relationship properties, no indexes.
    let body = [0u8, 0, 1, 1, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 1, 0, 1, 0, 0];
    let err = decode_body(&body, &Catalog::new(), 1).err().expect("refused");
    assert!(err.0.contains("not in the catalog"), "{}", err.0);
}

#[test]
fn values_never_panic() {
    let mut rng = StdRng::seed_from_u64(SEED ^ 2);
    let corpus = value_encodings();
    write_seeds("value_codec", &corpus);
    for (v, enc) in sample_values().iter().zip(&corpus) {
        let mut r = Reader::new(enc);
        assert_eq!(&r.value().expect("a valid value decodes"), v);
        assert!(r.is_empty());
    }
    let n = run_all("Reader::value", inputs(&mut rng, &corpus, CASES).into_iter(), values);
    assert_eq!(n, CASES);
}
