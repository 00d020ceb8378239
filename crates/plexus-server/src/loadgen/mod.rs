//! `plexus loadgen`: open-loop load at a constant rate over Bolt or HTTP.
//!
//! Request `i` is due at `start + i / rate` whatever happened to earlier ones, and its latency is measured from
//! that due time, not from when a connection got round to sending it. So a server that stalls is charged for
//! every request that queued behind the stall (no coordinated omission). Each connection notes its latencies in a
//! buffer sized before the start, and they go into HDR histograms, per second and overall, once the phase is over.
//! Step mode raises the rate until p99 passes a bound or the server stops keeping up.
//! Requests are released at their due times by a pacing thread (a timed sleep accurate to tens of
//! microseconds, at least 100 µs long: at high rates each wake-up releases what fell due since), not by the async
//! runtime's millisecond timer.

pub mod client;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use parking_lot::Mutex;
use serde::Serialize;

use crate::packstream::{map, Ps};
use client::{BoltClient, HttpClient, RequestError};

/// What each request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// 10 nodes with 2 properties per request, parameterised, returning a count.
    Insert,
    /// LDBC SNB IS1: a person's profile and city by person id (needs an imported SNB graph).
    Is1,
    /// The likes graph's recommendation traversal for a random person (needs `plexus demo` data).
    Recommend,
}

pub const INSERT_QUERY: &str =
    "UNWIND $batch AS row CREATE (n:LoadNode {id: row.id, name: row.name}) RETURN count(n) AS created";
pub const IS1_QUERY: &str = "MATCH (n:Person {id: $personId})-[:IS_LOCATED_IN]->(city:City) \
     RETURN n.firstName AS firstName, n.lastName AS lastName, n.birthday AS birthday, n.locationIP AS locationIP, \
     n.browserUsed AS browserUsed, city.id AS cityId, n.gender AS gender, n.creationDate AS creationDate";
pub const RECOMMEND_QUERY: &str = "MATCH (me)-[:LIKES]->(:Item)<-[:LIKES]-(other) WHERE id(me) = $id AND other <> me \
     WITH me, other, count(*) AS shared \
     MATCH (other)-[:LIKES]->(rec) WHERE NOT (me)-[:LIKES]->(rec) \
     RETURN id(rec) AS item, sum(shared) AS score ORDER BY score DESC, item LIMIT 10";

/// Where to send load.
#[derive(Clone, Debug)]
pub enum Target {
    /// `HOST:PORT` of a Bolt listener.
    Bolt(String),
    /// `HOST:PORT` of an HTTP listener.
    Http(String),
}

#[derive(Clone, Debug)]
pub struct LoadConfig {
    pub target: Target,
    pub user: String,
    pub password: String,
    pub scenario: Scenario,
    /// Requests per second.
    pub rate: f64,
    pub duration: Duration,
    /// Load at the target rate before measuring, so thread pools and caches are warm.
    pub warmup: Duration,
    pub connections: usize,
    /// Step mode: multiply the rate by `step_factor` after each phase while p99 stays within `p99_bound` and the
    /// achieved rate keeps up, up to `max_rate`.
    pub step: Option<StepConfig>,
    pub seed: u64,
}

#[derive(Clone, Debug)]
pub struct StepConfig {
    pub factor: f64,
    pub max_rate: f64,
    pub p99_bound: Duration,
    /// Run a phase that misses the bound once more at the same rate before stopping (a single fsync or scheduling
    /// stall on a shared machine can decide a short phase's p99). Both runs are reported.
    pub retry: bool,
}

/// Latency percentiles in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Percentiles {
    fn of(h: &Histogram<u64>) -> Percentiles {
        let ms = |v: u64| v as f64 / 1000.0;
        Percentiles {
            p50: ms(h.value_at_quantile(0.5)),
            p90: ms(h.value_at_quantile(0.9)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Second {
    pub second: u64,
    pub completed: u64,
    pub errors: u64,
    pub latency_ms: Percentiles,
}

/// One phase at one target rate.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseReport {
    pub target_rate: f64,
    pub achieved_rate: f64,
    pub completed: u64,
    /// Records the measured, successful requests returned (a check: IS1 answers one row per person).
    pub rows: u64,
    /// Successful requests during the warm-up (not measured, but their writes happened: with `completed` they
    /// account for every node the insert scenario created).
    pub warmup_completed: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub latency_ms: Percentiles,
    pub seconds: Vec<Second>,
    /// Nodes created per second (insert scenario).
    pub nodes_per_second: Option<f64>,
}

/// What requests need that is read from the database once before the load starts.
enum Ids {
    None,
    Ints(Vec<i64>),
}

struct Worker {
    /// One per measured request, in the order this connection completed them.
    samples: Vec<Sample>,
    rows: u64,
    warmup_completed: u64,
    first_error: Option<String>,
}

/// A measured request: the second of the phase it was due in, and its latency in microseconds or `ERROR`.
struct Sample {
    second: u32,
    micros: u32,
}

impl Sample {
    const ERROR: u32 = 0;

    fn latency(second: u32, latency: Duration) -> Sample {
        // At least 1 µs, so that no latency reads as an error; at most about 71 minutes.
        Sample { second, micros: latency.as_micros().clamp(1, u32::MAX as u128) as u32 }
    }

    fn error(second: u32) -> Sample {
        Sample { second, micros: Sample::ERROR }
    }
}

fn histogram() -> Histogram<u64> {
    // Microseconds up to one hour, three significant digits.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
}

enum Conn {
    Bolt(BoltClient),
    Http(HttpClient),
}

impl Conn {
    async fn open(cfg: &LoadConfig) -> Result<Conn, RequestError> {
        Ok(match &cfg.target {
            Target::Bolt(a) => Conn::Bolt(BoltClient::connect(a, &cfg.user, &cfg.password).await?),
            Target::Http(a) => Conn::Http(HttpClient::connect(a, &cfg.user, &cfg.password).await?),
        })
    }

    async fn ids(&mut self, query: &str) -> Result<Vec<i64>, RequestError> {
        Ok(match self {
            Conn::Bolt(c) => c.column(query).await?.iter().filter_map(Ps::as_int).collect(),
            Conn::Http(c) => c.column(query).await?.iter().filter_map(json_int).collect(),
        })
    }

    async fn request(&mut self, scenario: Scenario, i: u64, ids: &Ids, rng: &mut u64) -> Result<usize, RequestError> {
        let pick = |rng: &mut u64, ids: &[i64]| ids[(next_random(rng) % ids.len() as u64) as usize];
        match (self, scenario, ids) {
            (Conn::Bolt(c), Scenario::Insert, _) => c.run(INSERT_QUERY, insert_batch_ps(i)).await,
            (Conn::Http(c), Scenario::Insert, _) => c.run(INSERT_QUERY, insert_batch_json(i)).await,
            (Conn::Bolt(c), Scenario::Is1, Ids::Ints(ids)) => {
                c.run(IS1_QUERY, map([("personId", Ps::Int(pick(rng, ids)))])).await
            }
            (Conn::Http(c), Scenario::Is1, Ids::Ints(ids)) => {
                c.run(IS1_QUERY, serde_json::json!({ "personId": pick(rng, ids) })).await
            }
            (Conn::Bolt(c), Scenario::Recommend, Ids::Ints(ids)) => {
                c.run(RECOMMEND_QUERY, map([("id", Ps::Int(pick(rng, ids)))])).await
            }
            (Conn::Http(c), Scenario::Recommend, Ids::Ints(ids)) => {
                c.run(RECOMMEND_QUERY, serde_json::json!({ "id": pick(rng, ids) })).await
            }
            _ => Err(RequestError("the scenario has no ids to draw from".into())),
        }
    }
}

/// HTTP values may come plain or typed (`{"$type": "Integer", "_value": "1"}`).
fn json_int(v: &serde_json::Value) -> Option<i64> {
    v.as_i64().or_else(|| v.get("_value")?.as_str()?.parse().ok())
}

const NODES_PER_INSERT: u64 = 10;

fn insert_batch_ps(i: u64) -> Ps {
    let rows = (0..NODES_PER_INSERT)
        .map(|k| {
            let id = (i * NODES_PER_INSERT + k) as i64;
            map([("id", Ps::Int(id)), ("name", Ps::String(format!("node-{id}")))])
        })
        .collect();
    map([("batch", Ps::List(rows))])
}

fn insert_batch_json(i: u64) -> serde_json::Value {
    let rows: Vec<_> = (0..NODES_PER_INSERT)
        .map(|k| {
            let id = i * NODES_PER_INSERT + k;
            serde_json::json!({ "id": id, "name": format!("node-{id}") })
        })
        .collect();
    serde_json::json!({ "batch": rows })
}

fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Runs the configured load (one phase, or steps) and returns a report per phase.
pub fn run(cfg: &LoadConfig, mut progress: impl FnMut(&PhaseReport)) -> Result<Vec<PhaseReport>, String> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let mut setup = Conn::open(cfg).await.map_err(|e| format!("cannot connect: {e}"))?;
        let ids = match cfg.scenario {
            Scenario::Insert => Ids::None,
            Scenario::Is1 => {
                Ids::Ints(setup.ids("MATCH (p:Person) RETURN p.id AS id LIMIT 100000").await.map_err(|e| e.0)?)
            }
            Scenario::Recommend => {
                Ids::Ints(setup.ids("MATCH (p:Person) RETURN id(p) AS id LIMIT 100000").await.map_err(|e| e.0)?)
            }
        };
        if let Ids::Ints(v) = &ids {
            if v.is_empty() {
                return Err(
                    "the database has no Person nodes for this scenario: import or generate its data first".into()
                );
            }
        }
        let ids = Arc::new(ids);
        // Insert ids continue across phases so every node is new.
        let offset = Arc::new(AtomicU64::new(cfg.seed.wrapping_mul(1_000_000_007) % (1 << 40)));
        let mut reports = Vec::new();
        let mut rate = cfg.rate;
        let mut retried = false;
        loop {
            let report = phase(cfg, rate, ids.clone(), offset.clone()).await?;
            progress(&report);
            let keeps_up = report.achieved_rate >= 0.95 * rate;
            let within = cfg.step.as_ref().is_some_and(|s| report.latency_ms.p99 <= s.p99_bound.as_secs_f64() * 1e3);
            reports.push(report);
            match &cfg.step {
                Some(s) if keeps_up && within && rate * s.factor <= s.max_rate => {
                    rate *= s.factor;
                    retried = false;
                }
                Some(s) if !(keeps_up && within) && s.retry && !retried => retried = true,
                _ => break,
            }
        }
        Ok(reports)
    })
}

/// The shortest sleep of the pacing thread.
const PACER_TICK: Duration = Duration::from_micros(100);

/// Releases one permit per request at its time (`start + i * interval`), then one more per connection so that
/// every connection's task finds the schedule exhausted and ends.
fn pace(start: Instant, interval: f64, total: u64, connections: usize, released: &tokio::sync::Semaphore) {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK changes how late this thread's timed sleeps may end, nothing else.
    unsafe {
        // 10 µs instead of the default 50: requests are tens of microseconds apart at the rates measured.
        libc::prctl(libc::PR_SET_TIMERSLACK, 10_000 as libc::c_ulong);
    }
    let mut sent = 0u64;
    while sent < total {
        let now = Instant::now();
        if now >= start {
            let due = ((now - start).as_secs_f64() / interval) as u64 + 1;
            let due = due.min(total);
            if due > sent {
                released.add_permits((due - sent) as usize);
                sent = due;
            }
        }
        if sent < total {
            // At high rates the pacer wakes at most every `PACER_TICK` and releases what fell due meanwhile:
            // a wake-up per request was a fifth of the generator's CPU at 15,000/s, which the server then lacked
            // on a machine both share. A request released late is measured from its due time all the same.
            let next = start + Duration::from_secs_f64(sent as f64 * interval);
            let now = Instant::now();
            if next > now {
                std::thread::sleep((next - now).max(PACER_TICK));
            }
        }
    }
    released.add_permits(connections);
}

async fn phase(cfg: &LoadConfig, rate: f64, ids: Arc<Ids>, offset: Arc<AtomicU64>) -> Result<PhaseReport, String> {
    let warmup = (rate * cfg.warmup.as_secs_f64()).round() as u64;
    let total = warmup + (rate * cfg.duration.as_secs_f64()).round().max(1.0) as u64;
    let base = offset.fetch_add(total, Ordering::Relaxed);
    let mut conns = Vec::with_capacity(cfg.connections);
    for _ in 0..cfg.connections.max(1) {
        conns.push(Conn::open(cfg).await.map_err(|e| format!("cannot connect: {e}"))?);
    }
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now() + Duration::from_millis(50);
    let interval = 1.0 / rate;
    let results = Arc::new(Mutex::new(Vec::new()));
    let measured_from = start + Duration::from_secs_f64(warmup as f64 * interval);
    // A pacing thread releases each request at its scheduled time. Tokio's timers tick once a millisecond: sleeping
    // until each request's time sent every millisecond's requests together (16 at once at 16,000/s, waking as
    // many server threads at once), and counted up to a millisecond of the timer's own lateness as latency.
    let released = Arc::new(tokio::sync::Semaphore::new(0));
    let pacer = {
        let released = released.clone();
        let connections = conns.len();
        std::thread::Builder::new()
            .name("loadgen-pacer".into())
            .spawn(move || pace(start, interval, total, connections, &released))
            .map_err(|e| format!("cannot start the pacing thread: {e}"))?
    };
    // Room for a fair share of the measured requests and then some, so that no worker grows its buffer (a copy of
    // it) while the clock runs.
    let samples_per_connection = ((total - warmup) as usize / conns.len()) * 2 + 1024;
    let mut tasks = Vec::new();
    for (w, mut conn) in conns.into_iter().enumerate() {
        let released = released.clone();
        let next = next.clone();
        let ids = ids.clone();
        let results = results.clone();
        let scenario = cfg.scenario;
        let mut rng = cfg.seed ^ (w as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        tasks.push(tokio::spawn(async move {
            let mut worker = Worker {
                samples: Vec::with_capacity(samples_per_connection),
                rows: 0,
                warmup_completed: 0,
                first_error: None,
            };
            loop {
                // Each permit is one request whose time has come; a request released while every connection is
                // busy waits here, and its latency still counts from its scheduled time.
                match released.acquire().await {
                    Ok(permit) => permit.forget(),
                    Err(_) => break,
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let due = start + Duration::from_secs_f64(i as f64 * interval);
                let outcome = conn.request(scenario, base + i, &ids, &mut rng).await;
                if i < warmup {
                    worker.warmup_completed += outcome.is_ok() as u64;
                    continue;
                }
                let latency = Instant::now().saturating_duration_since(due);
                let second = ((i - warmup) as f64 * interval) as u32;
                match outcome {
                    Ok(rows) => {
                        worker.rows += rows as u64;
                        worker.samples.push(Sample::latency(second, latency));
                    }
                    Err(e) => {
                        worker.samples.push(Sample::error(second));
                        worker.first_error.get_or_insert(e.0);
                    }
                }
            }
            results.lock().push(worker);
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())?;
    }
    let _ = pacer.join();
    let elapsed = measured_from.elapsed().as_secs_f64();
    let workers = std::mem::take(&mut *results.lock());
    let mut report = summarise(rate, elapsed, workers);
    report.nodes_per_second =
        (cfg.scenario == Scenario::Insert).then_some(report.achieved_rate * NODES_PER_INSERT as f64);
    Ok(report)
}

/// A phase's report from what its connections noted. Histograms are built only here, once the clock has stopped:
/// a fresh one per connection and second (a few hundred KiB to allocate and zero each) cost milliseconds of a
/// runtime thread at each second's turn, which showed up in the latencies of the requests waiting on that thread.
fn summarise(rate: f64, elapsed: f64, workers: Vec<Worker>) -> PhaseReport {
    let mut overall = histogram();
    let (mut errors, mut rows, mut warmup_completed) = (0, 0, 0);
    let mut first_error = None;
    let mut seconds: std::collections::BTreeMap<u32, (u64, Histogram<u64>)> = Default::default();
    for w in workers {
        rows += w.rows;
        warmup_completed += w.warmup_completed;
        if first_error.is_none() {
            first_error = w.first_error;
        }
        for sample in w.samples {
            let entry = seconds.entry(sample.second).or_insert_with(|| (0, histogram()));
            match sample.micros {
                Sample::ERROR => {
                    errors += 1;
                    entry.0 += 1;
                }
                micros => {
                    overall.saturating_record(micros as u64);
                    entry.1.saturating_record(micros as u64);
                }
            }
        }
    }
    let completed = overall.len();
    PhaseReport {
        target_rate: rate,
        achieved_rate: completed as f64 / elapsed.max(1e-9),
        completed,
        rows,
        warmup_completed,
        errors,
        first_error,
        latency_ms: Percentiles::of(&overall),
        seconds: seconds
            .into_iter()
            .map(|(second, (errors, h))| Second {
                second: second as u64,
                completed: h.len(),
                errors,
                latency_ms: Percentiles::of(&h),
            })
            .collect(),
        nodes_per_second: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pacer_releases_no_request_before_its_time_and_then_one_per_connection() {
        let start = Instant::now() + Duration::from_millis(5);
        let interval = 0.0005;
        let (total, connections) = (40u64, 3usize);
        let released = Arc::new(tokio::sync::Semaphore::new(0));
        let pacer = {
            let released = released.clone();
            std::thread::spawn(move || pace(start, interval, total, connections, &released))
        };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            for i in 0..total {
                released.acquire().await.unwrap().forget();
                let due = start + Duration::from_secs_f64(i as f64 * interval);
                assert!(Instant::now() >= due, "request {i} released before its time");
            }
        });
        pacer.join().unwrap();
        assert_eq!(released.available_permits(), connections, "one permit per connection ends the tasks");
    }

    #[test]
    fn a_phase_is_summarised_per_second_from_every_connection() {
        let worker = |samples: Vec<Sample>, error: Option<&str>| Worker {
            samples,
            rows: 2,
            warmup_completed: 1,
            first_error: error.map(str::to_owned),
        };
        let ms = Duration::from_millis;
        let workers = vec![
            worker(vec![Sample::latency(0, ms(1)), Sample::latency(0, Duration::ZERO), Sample::error(1)], Some("boom")),
            worker(vec![Sample::latency(1, ms(4)), Sample::latency(1, ms(2))], None),
        ];
        let report = summarise(5.0, 1.0, workers);
        assert_eq!((report.completed, report.errors, report.rows, report.warmup_completed), (4, 1, 4, 2));
        assert_eq!(report.first_error.as_deref(), Some("boom"));
        assert_eq!(report.achieved_rate, 4.0);
        assert!((report.latency_ms.max - 4.0).abs() < 0.01, "{:?}", report.latency_ms);
        let per_second: Vec<(u64, u64, u64)> =
            report.seconds.iter().map(|s| (s.second, s.completed, s.errors)).collect();
        // A request answered in under a microsecond is a latency, not an error.
        assert_eq!(per_second, vec![(0, 2, 0), (1, 2, 1)]);
        assert!((report.seconds[1].latency_ms.max - 4.0).abs() < 0.01);
    }
}
