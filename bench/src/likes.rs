//! W3: the GuancialeDB recommendation traversal (`plexus::algo::recommend`) on the eight parameter rows of the
//! GuancialeDB write-up, each compared with the ops/s the write-up reports.

use plexus::algo::recommend;
use plexus::{Database, NodeId, TypeId};

use crate::gen::{distinct, SplitMix};
use crate::report::{human, Row, Table, Target};
use crate::{rate, Config};

/// (items, likes per person, people, write-up ops/s).
pub const ROWS: [(usize, usize, usize, f64); 8] = [
    (200, 10, 1_000, 5_743.0),
    (200, 10, 10_000, 471.0),
    (200, 100, 1_000, 13.1),
    (200, 100, 10_000, 1.39),
    (2_000, 10, 1_000, 31_664.0),
    (2_000, 10, 10_000, 3_150.0),
    (2_000, 100, 1_000, 56.8),
    (2_000, 100, 10_000, 6.0),
];

/// How many results a recommendation returns.
pub const LIMIT: usize = 10;

/// Builds the items/people/likes graph through one write transaction; returns the people and the type.
pub fn build(db: &Database, items: usize, likes: usize, people: usize, seed: u64) -> (Vec<NodeId>, TypeId) {
    let mut rng = SplitMix(seed);
    let mut tx = db.write();
    let (item_label, person_label, ty) = (tx.label("Item"), tx.label("Person"), tx.rel_type("LIKES"));
    let item_ids: Vec<NodeId> = (0..items).map(|_| tx.create_node(&[item_label], vec![]).expect("item")).collect();
    let mut pool: Vec<u32> = (0..items as u32).collect();
    let mut person_ids = Vec::with_capacity(people);
    for _ in 0..people {
        let me = tx.create_node(&[person_label], vec![]).expect("person");
        for &i in distinct(&mut rng, &mut pool, likes) {
            tx.create_rel(me, ty, item_ids[i as usize], vec![]).expect("like");
        }
        person_ids.push(me);
    }
    tx.commit().expect("commit");
    (person_ids, ty)
}

pub fn recommendation(cfg: &Config) -> Table {
    let mut t = Table::new("w3", "GuancialeDB recommendation traversal");
    t.setup.push(format!(
        "each person likes `likes` distinct random items; one op = `recommend(person, LIKES, {LIMIT})` for a \
         uniformly random person: items liked by people who like what the person likes, minus the person's own, \
         counted and ranked; one thread, in memory; at least 3 ops per row"
    ));
    t.setup.push("target: 10× the ops/s of the GuancialeDB write-up on every row".into());
    t.extra_headers = vec!["write-up ops/s", "ratio to write-up"];
    for (row, &(items, likes, people, writeup)) in ROWS.iter().enumerate() {
        let people = cfg.scaled(people as u64, 20) as usize;
        let db = Database::in_memory();
        let (person_ids, ty) = build(&db, items, likes, people, cfg.seed ^ row as u64);
        let snapshot = db.read();
        let mut rng = SplitMix(cfg.seed ^ 0x3333 ^ row as u64);
        let ops = rate(cfg.budget, 3, || {
            let me = person_ids[rng.below(person_ids.len() as u64) as usize];
            std::hint::black_box(recommend(&snapshot, me, ty, LIMIT));
            1
        });
        t.rows.push(
            Row::rate(
                format!("items {items}, likes {likes}, people {people}"),
                ops,
                "ops/s",
                Target::AtLeast(10.0 * writeup),
            )
            .with(human(writeup))
            .with(format!("{:.2}×", ops.per_sec / writeup)),
        );
    }
    t
}
