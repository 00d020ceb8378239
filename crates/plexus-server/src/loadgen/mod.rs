//! `plexus loadgen`: open-loop load at a constant rate over Bolt or HTTP.
//!
//! Request `i` is due at `start + i / rate` whatever happened to earlier ones, and its latency is measured from
//! that due time, not from when a connection got round to sending it. So a server that stalls is charged for
//! every request that queued behind the stall (no coordinated omission). Each connection notes its latencies in a
//! buffer sized before the start, and they go into HDR histograms, per second and overall, once the phase is over.
//! Step mode raises the rate until p99 passes a bound or the server stops keeping up.
//!
//! [`client`] connects and logs on (asynchronously, before the clock starts); [`wire`] then sends the requests at
//! their due times and reads the answers, on threads of its own.

pub mod client;
mod template;
mod wire;

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
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
    /// Threads sending and reading, each with its share of the connections and of the schedule (at least 1).
    pub threads: usize,
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
    /// CPU time the load generator itself spent per request of the phase (warm-up included), in microseconds:
    /// on a machine it shares with the server, what it took from the server.
    pub generator_cpu_us: f64,
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

    fn into_wire(self) -> std::io::Result<wire::Wire> {
        match self {
            Conn::Bolt(c) => c.into_wire(),
            Conn::Http(c) => c.into_wire(),
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
    // The runtime connects and logs on; the measuring loop is `wire`'s, on threads of its own.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let ids = runtime.block_on(async {
        let mut setup = Conn::open(cfg).await.map_err(|e| format!("cannot connect: {e}"))?;
        let ids = match cfg.scenario {
            Scenario::Insert => {
                // A statement now, so that wrong credentials fail here rather than as every request of the run
                // (over HTTP nothing is asked before the first request, and each refusal counts towards the
                // server locking the user out).
                setup.ids("RETURN 1 AS id").await.map_err(|e| format!("cannot run a statement: {}", e.0))?;
                Ids::None
            }
            Scenario::Is1 => {
                Ids::Ints(setup.ids("MATCH (p:Person) RETURN p.id AS id LIMIT 100000").await.map_err(|e| e.0)?)
            }
            Scenario::Recommend => {
                Ids::Ints(setup.ids("MATCH (p:Person) RETURN id(p) AS id LIMIT 100000").await.map_err(|e| e.0)?)
            }
        };
        if let Ids::Ints(v) = &ids {
            if v.is_empty() {
                return Err::<Ids, String>(
                    "the database has no Person nodes for this scenario: import or generate its data first".into(),
                );
            }
        }
        Ok(ids)
    })?;
    // Insert ids continue across phases so every node is new.
    let mut offset = cfg.seed.wrapping_mul(1_000_000_007) % (1 << 40);
    let mut reports = Vec::new();
    let mut rate = cfg.rate;
    let mut retried = false;
    loop {
        let report = phase(cfg, rate, &ids, &mut offset, &runtime)?;
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
}

fn phase(
    cfg: &LoadConfig,
    rate: f64,
    ids: &Ids,
    offset: &mut u64,
    runtime: &tokio::runtime::Runtime,
) -> Result<PhaseReport, String> {
    let warmup = (rate * cfg.warmup.as_secs_f64()).round() as u64;
    let total = warmup + (rate * cfg.duration.as_secs_f64()).round().max(1.0) as u64;
    let base = *offset;
    *offset += total;
    let wires = runtime.block_on(async {
        let mut wires = Vec::with_capacity(cfg.connections);
        for _ in 0..cfg.connections.max(1) {
            let conn = Conn::open(cfg).await.map_err(|e| format!("cannot connect: {e}"))?;
            wires.push(conn.into_wire().map_err(|e| format!("cannot take over a connection: {e}"))?);
        }
        Ok::<_, String>(wires)
    })?;
    let threads = cfg.threads.clamp(1, wires.len());
    let mut groups: Vec<Vec<wire::Wire>> = (0..threads).map(|_| Vec::new()).collect();
    for (k, w) in wires.into_iter().enumerate() {
        groups[k % threads].push(w);
    }
    let interval = 1.0 / rate;
    let start = Instant::now() + Duration::from_millis(50);
    let measured_from = start + Duration::from_secs_f64(warmup as f64 * interval);
    // Room for a fair share of the measured requests and then some, so that no thread grows its buffer (a copy of
    // it) while the clock runs.
    let samples_per_thread = ((total - warmup) as usize / threads) * 2 + 1024;
    let cpu_before = process_cpu_seconds();
    let authorization = client::http_authorization(&cfg.user, &cfg.password);
    let outcomes: Vec<Result<Worker, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = groups
            .into_iter()
            .enumerate()
            .map(|(t, group)| {
                let share = wire::Share { first: t as u64, step: threads as u64, total, warmup, start, interval };
                let mut rng = cfg.seed ^ (t as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d);
                let authorization = authorization.as_str();
                std::thread::Builder::new().name(format!("loadgen-{t}")).spawn_scoped(scope, move || {
                    let requests = Requests::new(cfg, authorization);
                    let mut encode = |i: u64, out: &mut Vec<u8>| {
                        encode_request(cfg, &requests, authorization, ids, base + i, &mut rng, out)
                    };
                    wire::drive(group, &share, samples_per_thread, &mut encode)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| Err("a load thread panicked".into())),
                Err(e) => Err(format!("cannot start a load thread: {e}")),
            })
            .collect()
    });
    let workers = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
    // The measured requests were offered over `n` intervals: a rate over the span from the first one's send to
    // the last one's answer (n - 1 intervals and a latency) came out above the rate offered, by 1,500 times for
    // one request. A server that falls behind stretches the span past that, and the rate falls below.
    let offered_over = (total - warmup) as f64 * interval;
    let elapsed = measured_from.elapsed().as_secs_f64().max(offered_over);
    let generator_cpu = process_cpu_seconds() - cpu_before;
    let mut report = summarise(rate, elapsed, workers);
    report.generator_cpu_us = generator_cpu * 1e6 / total as f64;
    report.nodes_per_second =
        (cfg.scenario == Scenario::Insert).then_some(report.achieved_rate * NODES_PER_INSERT as f64);
    Ok(report)
}

/// How a thread writes its requests: point reads from bytes prepared once, inserts built whole each time.
enum Requests {
    PointRead(template::PointRead),
    Insert,
}

impl Requests {
    fn new(cfg: &LoadConfig, authorization: &str) -> Requests {
        let (query, key) = match cfg.scenario {
            Scenario::Insert => return Requests::Insert,
            Scenario::Is1 => (IS1_QUERY, "personId"),
            Scenario::Recommend => (RECOMMEND_QUERY, "id"),
        };
        Requests::PointRead(match &cfg.target {
            Target::Bolt(_) => template::PointRead::bolt(query, key),
            Target::Http(host) => template::PointRead::http(host, authorization, QUERY_PATH, query, key),
        })
    }
}

/// The Query API endpoint the HTTP requests go to.
const QUERY_PATH: &str = "/db/neo4j/query/v2";

/// Writes request `i` of the scenario, its query and parameters, for the target's protocol.
fn encode_request(
    cfg: &LoadConfig,
    requests: &Requests,
    authorization: &str,
    ids: &Ids,
    i: u64,
    rng: &mut u64,
    out: &mut Vec<u8>,
) {
    let Requests::PointRead(template) = requests else {
        match &cfg.target {
            Target::Bolt(_) => client::bolt_run_pull(INSERT_QUERY, insert_batch_ps(i), out),
            Target::Http(host) => {
                let body = serde_json::json!({ "statement": INSERT_QUERY, "parameters": insert_batch_json(i) });
                client::http_post(host, authorization, QUERY_PATH, &body.to_string(), out);
            }
        }
        return;
    };
    let value = match ids {
        Ids::Ints(ids) => ids[(next_random(rng) % ids.len() as u64) as usize],
        Ids::None => 0,
    };
    template.write(value, out);
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
        generator_cpu_us: 0.0,
    }
}

/// User and system CPU time of this process so far, in seconds.
fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

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
