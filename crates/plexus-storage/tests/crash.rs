//! Crash test: a child process commits with durability `Sync` from several threads and is killed with SIGKILL at a
//! random moment, over and over on the same directory. After every kill the parent reopens the database and
//! verifies that
//! - every commit the child acknowledged is present,
//! - no transaction is partly visible (each one creates a node, two relationships and property updates that are
//!   checked against each other, and moves money between accounts),
//! - the total over all accounts is conserved and each balance equals the sum of the recorded transfers,
//! - `check()` finds no inconsistency in adjacency, counts or indexes (including a property index on the
//!   balances, which every transfer updates).
//!
//! Some rounds checkpoint concurrently (explicitly and through `checkpoint_after_bytes`), so recovery also starts
//! from a checkpoint plus the log. Some rounds kill the child while it is still opening (recovering) the database.
//! Every eighth round commits with durability `Off`, and every eighth another with `Batch`: both also promise to
//! survive a process crash (`Batch` writes each record at once and only defers the fsync). After each
//! reopen no checkpoint temporary file may remain, and while a child runs a second open must be `Locked`.
//!
//! The test binary is its own child: `crash_child` does nothing unless `PLEXUS_CRASH_CHILD` names a directory.
//! Set `PLEXUS_CRASH_SEED` to replay a seed and `PLEXUS_CRASH_ROUNDS` to run longer.

#![cfg(unix)]

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::ops::Bound;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use plexus_storage::{
    Direction, Durability, NodeId, Options, RecoveryReport, RelId, StorageError, Store, TypeFilter, Value, WriteTxn,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const CHILD_ENV: &str = "PLEXUS_CRASH_CHILD";
const THREADS: usize = 4;
const ACCOUNTS: i64 = 8;
const INITIAL_BALANCE: i64 = 1000;
const DEFAULT_SEED: u64 = 0x5EED_C4A5_0001;
const DEFAULT_ROUNDS: u32 = 48;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

fn item_key(round: u32, thread: usize, seq: u64) -> String {
    format!("r{round}-t{thread}-s{seq}")
}

/// How one round's child behaves; parent and child derive it from the seed alike.
struct Plan {
    /// A thread calls `checkpoint()` every few milliseconds while the workers commit.
    concurrent_checkpoints: bool,
    /// `Options::checkpoint_after_bytes`: nonzero makes commits checkpoint by themselves.
    auto_checkpoint_bytes: u64,
    durability: Durability,
}

fn round_plan(seed: u64, round: u32) -> Plan {
    let mut rng = StdRng::seed_from_u64(seed ^ (u64::from(round) << 32));
    let auto_checkpoint_bytes = if rng.gen_bool(0.3) { rng.gen_range(8 << 10..64 << 10) } else { 0 };
    // `Off` skips fsync but still promises to survive a process crash, which is all SIGKILL tests.
    let durability = match round % 8 {
        7 => Durability::Off,
        3 => Durability::Batch,
        _ => Durability::Sync,
    };
    Plan { concurrent_checkpoints: round % 3 == 2, auto_checkpoint_bytes, durability }
}

// ----- the child -----

#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let seed = env_u64("PLEXUS_CRASH_SEED").expect("seed");
    let round = env_u64("PLEXUS_CRASH_ROUND").expect("round") as u32;
    let plan = round_plan(seed, round);
    let options = Options {
        checkpoint_after_bytes: plan.auto_checkpoint_bytes,
        durability: plan.durability,
        ..Options::default()
    };
    let store = match Store::open_with(&dir, options) {
        Ok((store, _)) => store,
        Err(e) => fail(&format!("child open failed: {e}")),
    };
    setup(&store);
    say("ready");
    if plan.concurrent_checkpoints {
        let store = store.clone();
        let mut rng = StdRng::seed_from_u64(seed ^ 0xC4EC);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(rng.gen_range(2..30)));
            if let Err(e) = store.checkpoint() {
                fail(&format!("checkpoint failed: {e}"));
            }
        });
    }
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let store = store.clone();
            let rng = StdRng::seed_from_u64(seed ^ (u64::from(round) << 32) ^ (t as u64 + 1));
            std::thread::spawn(move || worker(&store, round, t, rng))
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    fail("workers stopped before the child was killed");
}

/// Writes one line to the parent. Writes straight to stdout because the test harness captures `println!`.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
        // The parent is gone: nobody is left to kill us.
        std::process::exit(0);
    }
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(3)
}

/// Creates the root node, the accounts and the unique keys once; a kill during setup leaves nothing behind.
fn setup(store: &Store) {
    let mut tx = store.write();
    let item = tx.label("Item");
    let account = tx.label("Account");
    let key = tx.prop_key("key");
    if tx.node_by_key(account, &Value::from("acct-0")).is_some() {
        return;
    }
    let balance = tx.prop_key("balance");
    tx.declare_unique_key(item, key).unwrap();
    tx.declare_unique_key(account, key).unwrap();
    // Balances change in every transfer: the index is maintained under concurrent commits, checkpoints and kills,
    // and `check()` compares it with the nodes after every reopen.
    tx.create_index(account, balance).unwrap();
    tx.create_node(&[item], vec![(key, Value::from("root"))]).unwrap();
    for a in 0..ACCOUNTS {
        tx.create_node(
            &[account],
            vec![(key, Value::from(format!("acct-{a}"))), (balance, Value::Int(INITIAL_BALANCE))],
        )
        .unwrap();
    }
    if let Err(e) = tx.commit() {
        fail(&format!("setup commit failed: {e}"));
    }
}

fn worker(store: &Store, round: u32, thread: usize, mut rng: StdRng) {
    let (item, account) = (store.catalog().label("Item"), store.catalog().label("Account"));
    let cat = store.catalog();
    let (key, balance, seq_key, marked_by) =
        (cat.prop_key("key"), cat.prop_key("balance"), cat.prop_key("seq"), cat.prop_key("marked_by"));
    let (from_key, to_key, amount_key) = (cat.prop_key("from"), cat.prop_key("to"), cat.prop_key("amount"));
    let (next_ty, extra_ty) = (cat.rel_type("NEXT"), cat.rel_type("EXTRA"));
    let root = store.read().node_by_key(item, &Value::from("root")).expect("root exists after setup");
    // The previous item of this thread's chain and its EXTRA relationship.
    let mut prev: Option<(NodeId, RelId)> = None;
    for seq in 0u64.. {
        let target = prev.map_or(root, |p| p.0);
        let prev_extra = prev.map(|p| p.1);
        let name = item_key(round, thread, seq);
        let from = rng.gen_range(0..ACCOUNTS);
        let to = (from + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
        let amount = rng.gen_range(1..50i64);
        let attempt = |tx: &mut WriteTxn| -> plexus_storage::Result<(NodeId, RelId)> {
            let node = tx.create_node(
                &[item],
                vec![
                    (key, Value::from(name.as_str())),
                    (seq_key, Value::Int(seq as i64)),
                    (from_key, Value::Int(from)),
                    (to_key, Value::Int(to)),
                    (amount_key, Value::Int(amount)),
                ],
            )?;
            tx.create_rel(node, next_ty, target, vec![(key, Value::from(name.as_str()))])?;
            let extra = tx.create_rel(node, extra_ty, target, vec![])?;
            if seq % 3 == 0 && seq > 0 {
                tx.set_node_prop(target, marked_by, Value::from(name.as_str()))?;
            }
            if seq % 4 == 2 {
                if let Some(prev_extra) = prev_extra {
                    tx.delete_rel(prev_extra)?;
                }
            }
            for (acct, delta) in [(from, -amount), (to, amount)] {
                let id = tx.node_by_key(account, &Value::from(format!("acct-{acct}"))).expect("account");
                let old = tx.node_prop(id, balance).and_then(Value::as_int).expect("balance");
                tx.set_node_prop(id, balance, Value::Int(old + delta))?;
            }
            Ok((node, extra))
        };
        loop {
            let mut tx = store.write();
            match attempt(&mut tx).and_then(|created| tx.commit().map(|_| created)) {
                Ok(created) => {
                    prev = Some(created);
                    say(&format!("ack {thread} {seq}"));
                    break;
                }
                Err(e) if e.is_retryable() => continue,
                Err(e) => fail(&format!("thread {thread} seq {seq}: {e}")),
            }
        }
    }
}

// ----- the parent -----

#[test]
fn crash_recovery() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let seed = env_u64("PLEXUS_CRASH_SEED").unwrap_or(DEFAULT_SEED);
    let rounds = env_u64("PLEXUS_CRASH_ROUNDS").map_or(DEFAULT_ROUNDS, |r| r as u32);
    // Shown by the harness when the test fails.
    println!("crash test seed {seed} (rerun with PLEXUS_CRASH_SEED={seed})");
    let dir = tempfile::tempdir().unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut acked: BTreeMap<(u32, usize), u64> = BTreeMap::new();
    let started = Instant::now();
    let mut total_acks = 0;
    let (mut from_checkpoint, mut torn) = (0, 0);
    for round in 0..rounds {
        // Every eighth round is killed soon after the start, typically while it is still recovering.
        let early = round % 8 == 5;
        let delay = if early { rng.gen_range(0..15) } else { rng.gen_range(20..300) };
        let acks = run_child(dir.path(), seed, round, Duration::from_millis(delay), early);
        total_acks += acks.len();
        for (thread, seq) in acks {
            let e = acked.entry((round, thread)).or_insert(0);
            *e = (*e).max(seq + 1);
        }
        let report = verify(dir.path(), &acked, seed, round);
        from_checkpoint += u32::from(report.checkpoint_version.is_some());
        torn += u32::from(!report.is_clean());
    }
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    println!(
        "{rounds} rounds, {total_acks} acknowledged commits, {from_checkpoint} recoveries from a checkpoint, \
         {torn} with a dropped tail, {:?}; files left: {files:?}",
        started.elapsed()
    );
    assert!(total_acks > 0, "seed {seed}: no commit was ever acknowledged");
    assert!(from_checkpoint > 0, "seed {seed}: no recovery started from a checkpoint");
}

/// Runs one child until the kill; returns the acknowledged (thread, seq) pairs.
fn run_child(dir: &Path, seed: u64, round: u32, delay: Duration, from_spawn: bool) -> Vec<(usize, u64)> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir)
        .env("PLEXUS_CRASH_SEED", seed.to_string())
        .env("PLEXUS_CRASH_ROUND", round.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (ready_tx, ready_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut acks = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // The harness prints "test crash_child ... " without a newline, so "ready" may share that line.
            if line.ends_with("ready") {
                let _ = ready_tx.send(());
            } else if let Some(rest) = line.strip_prefix("ack ") {
                let mut parts = rest.split(' ').map(|p| p.parse::<u64>().expect("ack field"));
                acks.push((parts.next().unwrap() as usize, parts.next().unwrap()));
            }
        }
        acks
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let context = |what: &str| format!("seed {seed} round {round}: {what}");
    if !from_spawn {
        // Startup (exec, recovery) is not what this round is about: the clock starts once the child is open.
        if ready_rx.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{}\n{}", context("the child never became ready"), err_reader.join().unwrap());
        }
        // While the child holds the directory, another process must be refused.
        match Store::open(dir) {
            Err(StorageError::Locked { .. }) => {}
            Err(e) => panic!("{}: {e}", context("opening a locked directory gave the wrong error")),
            Ok(_) => panic!("{}", context("a second process opened a locked directory")),
        }
    }
    std::thread::sleep(delay);
    if let Some(status) = child.try_wait().unwrap() {
        panic!("{} ({status})\n{}", context("the child exited before the kill"), err_reader.join().unwrap());
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    let acks = reader.join().unwrap();
    let errors = err_reader.join().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "{}\n{errors}", context("the child did not die by SIGKILL"));
    acks
}

/// Reopens the database and checks every invariant the child's transactions maintain.
fn verify(dir: &Path, acked: &BTreeMap<(u32, usize), u64>, seed: u64, round: u32) -> RecoveryReport {
    let ctx = |what: String| format!("seed {seed} round {round}: {what}");
    let (store, report) = Store::open(dir).unwrap_or_else(|e| panic!("{}", ctx(format!("reopen failed: {e}"))));
    // A checkpoint cut short by the kill must not leave its temporary file behind for good.
    let temps: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(temps.is_empty(), "{}", ctx(format!("temporary files left after recovery: {temps:?}")));
    let r = store.read();
    let problems = r.check();
    assert!(problems.is_empty(), "{}", ctx(format!("check() found {problems:?}; recovery: {report}")));
    let Some(item) = r.label_id("Item") else {
        assert!(acked.is_empty(), "{}", ctx("acknowledged commits but no Item label".into()));
        return report;
    };
    let Some(account) = r.label_id("Account") else {
        // Setup logs the labels' tokens in the same record as the nodes: it did not survive, so nothing did.
        assert!(acked.is_empty(), "{}", ctx("acknowledged commits but no Account label".into()));
        assert_eq!(r.node_count(), 0, "{}", ctx("nodes exist without setup".into()));
        return report;
    };
    let p = |name: &str| r.prop_key_id(name);
    let key = p("key").unwrap();
    let balance = p("balance").unwrap();
    let root = match r.node_by_key(item, &Value::from("root")) {
        Some(root) => root,
        None => {
            assert!(acked.is_empty(), "{}", ctx("acknowledged commits but no root".into()));
            assert_eq!(r.node_count(), 0, "{}", ctx("a partial setup is visible".into()));
            return report;
        }
    };

    // Every acknowledged commit is there.
    for (&(rd, thread), &count) in acked {
        for seq in 0..count {
            let k = item_key(rd, thread, seq);
            assert!(r.node_by_key(item, &Value::from(k.as_str())).is_some(), "{}", ctx(format!("lost {k}; {report}")));
        }
    }

    // Every transaction is whole, and the chains of each (round, thread) are gap-free prefixes.
    let str_prop = |n: NodeId, k| r.node_prop(n, k).and_then(Value::as_str).map(str::to_owned);
    let int_prop = |n: NodeId, name: &str| p(name).and_then(|k| r.node_prop(n, k)).and_then(Value::as_int);
    let mut by_key: HashMap<String, NodeId> = HashMap::new();
    let _ = r.visit_label::<()>(item, |n| {
        by_key.insert(str_prop(n, key).expect("item key"), n);
        std::ops::ControlFlow::Continue(())
    });
    let mut flows = vec![0i64; ACCOUNTS as usize];
    let mut chain_lengths: HashMap<(u32, usize), u64> = HashMap::new();
    let mut items = 0u64;
    for (name, &n) in &by_key {
        if n == root {
            continue;
        }
        items += 1;
        let (rd, thread, seq) = parse_key(name);
        let len = chain_lengths.entry((rd, thread)).or_insert(0);
        *len = (*len).max(seq + 1);
        assert_eq!(int_prop(n, "seq"), Some(seq as i64), "{}", ctx(format!("{name}: seq property")));
        let expected_target = if seq == 0 { root } else { by_key[&item_key(rd, thread, seq - 1)] };
        let out = r.rels_of(n, Direction::Out, TypeFilter::All);
        let next: Vec<_> = out.iter().filter(|e| Some(e.ty) == r.type_id("NEXT")).collect();
        assert_eq!(next.len(), 1, "{}", ctx(format!("{name}: NEXT relationships {next:?}")));
        assert_eq!(next[0].nbr, expected_target, "{}", ctx(format!("{name}: NEXT target")));
        assert_eq!(
            r.rel_prop(next[0].rel, key),
            Some(Value::String(name.as_str().into())),
            "{}",
            ctx(format!("{name}: NEXT relationship without its property"))
        );
        let extra = out.iter().filter(|e| Some(e.ty) == r.type_id("EXTRA")).count();
        let child_key = item_key(rd, thread, seq + 1);
        let deleted_by_child = (seq + 1) % 4 == 2 && by_key.contains_key(&child_key);
        assert_eq!(extra, usize::from(!deleted_by_child), "{}", ctx(format!("{name}: EXTRA relationships")));
        let marked = p("marked_by").and_then(|k| str_prop(n, k));
        let marked_by_child = (seq + 1) % 3 == 0 && by_key.contains_key(&child_key);
        assert_eq!(
            marked,
            marked_by_child.then(|| child_key.clone()),
            "{}",
            ctx(format!("{name}: marked_by does not match its successor"))
        );
        let (from, to, amount) =
            (int_prop(n, "from").unwrap(), int_prop(n, "to").unwrap(), int_prop(n, "amount").unwrap());
        flows[from as usize] -= amount;
        flows[to as usize] += amount;
    }
    for (&(rd, thread), &len) in &chain_lengths {
        for seq in 0..len {
            assert!(
                by_key.contains_key(&item_key(rd, thread, seq)),
                "{}",
                ctx(format!("gap: {} is missing below a later commit", item_key(rd, thread, seq)))
            );
        }
    }

    // Money is conserved and every balance is explained by the transfers recorded on the items.
    let mut total = 0;
    for a in 0..ACCOUNTS {
        let n = r.node_by_key(account, &Value::from(format!("acct-{a}"))).expect("account");
        let b = r.node_prop(n, balance).and_then(Value::as_int).expect("balance");
        assert_eq!(b, INITIAL_BALANCE + flows[a as usize], "{}", ctx(format!("acct-{a} disagrees with transfers")));
        assert!(r.index_seek(account, balance, &Value::Int(b)).contains(&n), "{}", ctx(format!("acct-{a} unindexed")));
        total += b;
    }
    let indexed = r.index_range(account, balance, Bound::Included(&Value::Int(i64::MIN)), Bound::Unbounded);
    assert_eq!(indexed.len(), ACCOUNTS as usize, "{}", ctx("the balance index lists other nodes".into()));
    assert_eq!(total, INITIAL_BALANCE * ACCOUNTS, "{}", ctx("the total is not conserved".into()));

    assert_eq!(r.node_count(), 1 + ACCOUNTS as u64 + items, "{}", ctx("stray nodes".into()));
    let next_and_extra: u64 = by_key.values().map(|&n| r.degree(n, Direction::Out, TypeFilter::All)).sum();
    assert_eq!(r.rel_count(), next_and_extra, "{}", ctx("stray relationships".into()));
    report
}

fn parse_key(name: &str) -> (u32, usize, u64) {
    let mut parts = name.split('-');
    let mut field = |prefix: char| -> u64 {
        parts.next().and_then(|p| p.strip_prefix(prefix)).and_then(|p| p.parse().ok()).expect("item key format")
    };
    (field('r') as u32, field('t') as usize, field('s'))
}
