//! Transaction throughput on small data: committing batches of empty nodes (W1), the GuancialeDB creation
//! transaction (W2), and small durable transactions from many committer threads sharing fsyncs (W6).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use plexus::{Database, Durability, NodeId, Options};

use crate::gen::SplitMix;
use crate::report::{fs_type, Row, Table, Target};
use crate::{process_cpu_secs, thread_cpu_secs, Config, Rate};

/// W1: transactions of 1,000 empty nodes, each committed.
pub fn create_empty_nodes(cfg: &Config) -> Table {
    const PER_TXN: u64 = 1_000;
    let total = cfg.scaled(10_000_000, 10_000).div_ceil(PER_TXN) * PER_TXN;
    let db = Database::in_memory();
    let (start, cpu) = (Instant::now(), thread_cpu_secs());
    for _ in 0..total / PER_TXN {
        let mut tx = db.write();
        for _ in 0..PER_TXN {
            tx.create_node(&[], vec![]).expect("create node");
        }
        tx.commit().expect("commit");
    }
    let rate = Rate::new(total, start.elapsed().as_secs_f64(), thread_cpu_secs() - cpu);
    assert_eq!(db.read().node_count(), total);
    let mut t = Table::new("w1", "create empty nodes");
    t.setup.push(format!(
        "{total} nodes in {} transactions of {PER_TXN}, each committed, one thread, in memory",
        total / PER_TXN
    ));
    t.rows.push(Row::rate("1,000 empty nodes per transaction", rate, "nodes/s", Target::AtLeast(10e6)));
    t
}

/// W2: one transaction creating 1,000 nodes and 100 relationships from each to random other nodes of the 1,000.
pub fn guanciale_create(cfg: &Config) -> Table {
    const NODES: usize = 1_000;
    const PER_NODE: usize = 100;
    let mut rng = SplitMix(cfg.seed ^ 2);
    let (mut rels, mut secs, mut cpu_secs, mut runs) = (0u64, 0.0, 0.0, 0);
    while runs < 3 || secs < cfg.budget.as_secs_f64() {
        // Targets are drawn before the clock starts: the workload is the transaction, not the generator.
        let targets: Vec<usize> = (0..NODES * PER_NODE)
            .map(|k| {
                let other = rng.below(NODES as u64 - 1) as usize;
                if other >= k / PER_NODE {
                    other + 1
                } else {
                    other
                }
            })
            .collect();
        let db = Database::in_memory();
        let (start, cpu) = (Instant::now(), thread_cpu_secs());
        let mut tx = db.write();
        let ty = tx.rel_type("CONNECTED");
        let nodes: Vec<NodeId> = (0..NODES).map(|_| tx.create_node(&[], vec![]).expect("node")).collect();
        for (k, &dst) in targets.iter().enumerate() {
            tx.create_rel(nodes[k / PER_NODE], ty, nodes[dst], vec![]).expect("rel");
        }
        tx.commit().expect("commit");
        secs += start.elapsed().as_secs_f64();
        cpu_secs += thread_cpu_secs() - cpu;
        rels += (NODES * PER_NODE) as u64;
        runs += 1;
        assert_eq!(db.read().rel_count(), (NODES * PER_NODE) as u64);
    }
    let mut t = Table::new("w2", "GuancialeDB creation transaction");
    t.setup.push(format!(
        "one transaction: {NODES} nodes, then {PER_NODE} relationships from each to random other nodes of them \
         (duplicates allowed), committed; fresh in-memory database per run; {runs} runs; time covers node \
         creation, relationship creation and commit"
    ));
    t.rows.push(Row::rate(
        "1,000 nodes + 100k relationships, committed",
        Rate::new(rels, secs, cpu_secs),
        "rels/s",
        Target::AtLeast(5e6),
    ));
    t
}

/// W6: each transaction creates one node and one relationship to a random existing node, with `sync`
/// durability, from a growing number of committer threads; group commit should make throughput rise.
pub fn durable_small(cfg: &Config) -> Table {
    const SEED_NODES: usize = 10_000;
    let dir = &cfg.durable_dir;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("create the durable benchmark directory");
    let fs = fs_type(dir);
    let db = Database::open_with(dir, Options { durability: Durability::Sync, ..Options::default() }).expect("open");
    let mut tx = db.write();
    let ty = tx.rel_type("LINKS");
    let seeds: Vec<NodeId> = (0..SEED_NODES).map(|_| tx.create_node(&[], vec![]).expect("node")).collect();
    tx.commit().expect("commit seed nodes");
    let mut t = Table::new("w6", "small durable transactions (group commit)");
    t.setup.push(format!(
        "each transaction: 1 node + 1 relationship to one of {SEED_NODES} existing nodes, `Durability::Sync`; \
         database in the repository target dir ({fs}); {:.1} s per committer count; one database for all counts",
        cfg.durable.as_secs_f64()
    ));
    t.extra_headers = vec!["fsyncs/s", "tx per fsync", "CPU in use (cores)", "failed commits"];
    let mut previous: Option<f64> = None;
    for threads in [1usize, 4, 16, 64, 256] {
        let commits = AtomicU64::new(0);
        let failures = AtomicU64::new(0);
        let barrier = Barrier::new(threads + 1);
        let (fsyncs_before, cpu_before) = (db.wal_fsyncs(), process_cpu_secs());
        // The scope joins every committer, so the clock stops when the last commit has returned.
        let start = std::thread::scope(|s| {
            for i in 0..threads {
                let (db, seeds, commits, failures, barrier) = (&db, &seeds, &commits, &failures, &barrier);
                let mut rng = SplitMix(cfg.seed ^ ((i as u64 + 1) * 0x9E37));
                s.spawn(move || {
                    barrier.wait();
                    let deadline = Instant::now() + cfg.durable;
                    let (mut ok, mut failed) = (0, 0);
                    while Instant::now() < deadline {
                        let mut tx = db.write();
                        let dst = seeds[rng.below(seeds.len() as u64) as usize];
                        let result = tx
                            .create_node(&[], vec![])
                            .and_then(|n| tx.create_rel(n, ty, dst, vec![]))
                            .and_then(|_| tx.commit());
                        match result {
                            Ok(_) => ok += 1,
                            Err(_) => failed += 1,
                        }
                    }
                    commits.fetch_add(ok, Ordering::Relaxed);
                    failures.fetch_add(failed, Ordering::Relaxed);
                });
            }
            barrier.wait();
            Instant::now()
        });
        let secs = start.elapsed().as_secs_f64();
        let tx_rate = commits.load(Ordering::Relaxed) as f64 / secs;
        let fsyncs = db.wal_fsyncs() - fsyncs_before;
        let cores_busy = (process_cpu_secs() - cpu_before) / secs;
        let target = match (threads, previous) {
            (64, _) => Target::AtLeast(100_000.0),
            (_, Some(p)) => Target::Above(p),
            (_, None) => Target::Info,
        };
        t.rows.push(
            Row::new(
                format!("{threads} committer thread{}", if threads == 1 { "" } else { "s" }),
                tx_rate,
                "tx/s",
                target,
            )
            .with(crate::report::human(fsyncs as f64 / secs))
            .with(format!("{:.1}", commits.load(Ordering::Relaxed) as f64 / fsyncs.max(1) as f64))
            .with(format!("{cores_busy:.2}"))
            .with(failures.load(Ordering::Relaxed).to_string()),
        );
        previous = Some(tx_rate);
    }
    drop(db);
    let _ = std::fs::remove_dir_all(dir);
    t
}
