//! W5: random edge writes on the patent-shaped graph, in memory (no log): upserts and removals, one edge per
//! transaction and 500 per transaction.

use plexus_storage::{EdgeUpsert, NodeId, Value};

use crate::gen::SplitMix;
use crate::patent::Patent;
use crate::report::{human, Row, Table, Target};
use crate::{rate, Config};

const BATCH: usize = 500;
const POOL: usize = 1 << 21;

pub fn random_writes(cfg: &Config, g: &Patent, edges: &[(u32, u32)]) -> Table {
    let store = &g.store;
    let before = store.read().rel_count();
    let mut rng = SplitMix(cfg.seed ^ 5);
    // Upserts come from a pre-drawn pool so the clock covers the transaction, not the generator. Half are
    // existing edges (an update), half random pairs (a create the first time the pool reaches them).
    let pool: Vec<EdgeUpsert> = (0..POOL).map(|_| random_upsert(&mut rng, g, edges)).collect();
    let mut next = 0usize;
    let mut take = |n: usize| {
        let start = if next + n > POOL { 0 } else { next };
        next = start + n;
        &pool[start..start + n]
    };
    let upsert_one = rate(cfg.budget, 0, || {
        let mut tx = store.write();
        tx.upsert_edges(take(1)).expect("upsert");
        tx.commit().expect("commit");
        1
    });
    let upsert_batch = rate(cfg.budget, 0, || {
        let mut tx = store.write();
        tx.upsert_edges(take(BATCH)).expect("upsert");
        tx.commit().expect("commit");
        BATCH as u64
    });
    let after_upserts = store.read().rel_count();

    // Removals visit existing edges in a stride order coprime with their number: each is removed once.
    let len = edges.len() as u64;
    let mut stride = len / 2 + 7_919;
    while gcd(stride, len) != 1 {
        stride += 1;
    }
    let mut k = 0u64;
    let mut next_edge = || {
        (k < len).then(|| {
            let (u, v) = edges[((k * stride) % len) as usize];
            k += 1;
            (NodeId(u64::from(u)), g.cites, NodeId(u64::from(v)))
        })
    };
    let remove_one = rate(cfg.budget, 0, || {
        let Some(e) = next_edge() else { return 0 };
        let mut tx = store.write();
        let removed = tx.remove_edges(&[e]).expect("remove");
        tx.commit().expect("commit");
        removed
    });
    let remove_batch = rate(cfg.budget, 0, || {
        let batch: Vec<_> = std::iter::from_fn(&mut next_edge).take(BATCH).collect();
        if batch.is_empty() {
            return 0;
        }
        let mut tx = store.write();
        let removed = tx.remove_edges(&batch).expect("remove");
        tx.commit().expect("commit");
        removed
    });
    assert_eq!(store.read().rel_count(), after_upserts - k, "every listed edge existed and was removed once");

    let mut t = Table::new("w5", "random edge writes, durability off (in memory)");
    t.setup.push(format!(
        "on the patent-shaped graph of W4 (its full size, no properties; {} relationships at the start), one thread",
        human(before as f64)
    ));
    t.setup.push(format!(
        "upserts (`WriteTxn::upsert_edges`, merge on (source, CITES, target), setting a float `weight`) come from a \
         pre-drawn pool of {} edges, half existing edges and half random pairs; {} relationships were created",
        human(POOL as f64),
        human((after_upserts - before) as f64)
    ));
    t.setup.push(format!(
        "removals (`WriteTxn::remove_edges`) take distinct existing edges of the generated list; {} removed",
        human(k as f64)
    ));
    t.rows.push(Row::rate("upsert, 1 edge per transaction", upsert_one, "edges/s", Target::AtLeast(2e6)));
    t.rows.push(Row::rate("upsert, 500 edges per transaction", upsert_batch, "edges/s", Target::AtLeast(5e6)));
    t.rows.push(Row::rate("remove, 1 edge per transaction", remove_one, "edges/s", Target::AtLeast(2e6)));
    t.rows.push(Row::rate("remove, 500 edges per transaction", remove_batch, "edges/s", Target::AtLeast(5e6)));
    t
}

/// One upsert of W5's mix: an existing edge (an update) or a random pair (a create), as likely, with a random
/// weight.
pub fn random_upsert(rng: &mut SplitMix, g: &Patent, edges: &[(u32, u32)]) -> EdgeUpsert {
    let (u, v) = if rng.next_u64() & 1 == 0 {
        let (u, v) = edges[rng.below(edges.len() as u64) as usize];
        (u64::from(u), u64::from(v))
    } else {
        (rng.below(g.nodes), rng.below(g.nodes))
    };
    (NodeId(u), g.cites, NodeId(v), vec![(g.weight, Value::Float(rng.unit()))])
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
