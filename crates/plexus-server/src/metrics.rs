//! Server counters and latency histograms, rendered in the Prometheus text format for `GET /metrics`.
//! Everything is a relaxed atomic: recording a query costs a few uncontended increments.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Upper bounds of the latency buckets, in seconds.
const LATENCY_BOUNDS: [f64; 16] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// A cumulative histogram with fixed buckets.
#[derive(Default)]
pub struct Histogram {
    buckets: [AtomicU64; LATENCY_BOUNDS.len()],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Histogram {
    pub fn record(&self, d: Duration) {
        let secs = d.as_secs_f64();
        if let Some(i) = LATENCY_BOUNDS.iter().position(|&b| secs <= b) {
            self.buckets[i].fetch_add(1, Relaxed);
        }
        self.count.fetch_add(1, Relaxed);
        self.sum_nanos.fetch_add(d.as_nanos() as u64, Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (bound, bucket) in LATENCY_BOUNDS.iter().zip(&self.buckets) {
            cumulative += bucket.load(Relaxed);
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}");
        }
        let count = self.count.load(Relaxed);
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {count}");
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum_nanos.load(Relaxed) as f64 / 1e9);
        let _ = writeln!(out, "{name}_count{braces} {count}");
    }
}

/// Which listener a connection came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Bolt,
    Http,
}

#[derive(Default)]
pub struct Metrics {
    pub queries_succeeded: AtomicU64,
    pub queries_failed: AtomicU64,
    /// Queries stopped by their cancel switch: the client went away or the server is stopping.
    pub queries_cancelled: AtomicU64,
    pub query_latency: Histogram,
    pub transactions_committed: AtomicU64,
    pub transactions_rolled_back: AtomicU64,
    pub bolt_connections_open: AtomicI64,
    pub bolt_connections_total: AtomicU64,
    pub http_connections_open: AtomicI64,
    pub http_requests_total: AtomicU64,
    pub auth_failures: AtomicU64,
    pub connections_refused: AtomicU64,
    started: Option<Instant>,
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics { started: Some(Instant::now()), ..Metrics::default() }
    }

    pub fn record_query(&self, elapsed: Duration, ok: bool) {
        self.query_latency.record(elapsed);
        if ok { &self.queries_succeeded } else { &self.queries_failed }.fetch_add(1, Relaxed);
    }

    /// A streamed statement, counted as succeeded when its first rows went out, failed in a later row.
    pub fn query_failed_later(&self) {
        self.queries_succeeded.fetch_sub(1, Relaxed);
        self.queries_failed.fetch_add(1, Relaxed);
    }

    pub fn connection_opened(&self, p: Protocol) {
        match p {
            Protocol::Bolt => {
                self.bolt_connections_open.fetch_add(1, Relaxed);
                self.bolt_connections_total.fetch_add(1, Relaxed);
            }
            Protocol::Http => {
                self.http_connections_open.fetch_add(1, Relaxed);
            }
        }
    }

    pub fn connection_closed(&self, p: Protocol) {
        match p {
            Protocol::Bolt => self.bolt_connections_open.fetch_sub(1, Relaxed),
            Protocol::Http => self.http_connections_open.fetch_sub(1, Relaxed),
        };
    }

    /// The Prometheus exposition of these metrics plus the database's own (`wal_fsyncs`).
    pub fn render(&self, db: &plexus::Database) -> String {
        let mut out = String::with_capacity(4096);
        let mut counter = |name: &str, help: &str, kind: &str, value: String| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        };
        counter(
            "plexus_queries_total",
            "Queries that completed successfully.",
            "counter",
            self.queries_succeeded.load(Relaxed).to_string(),
        );
        counter(
            "plexus_query_errors_total",
            "Queries that failed.",
            "counter",
            self.queries_failed.load(Relaxed).to_string(),
        );
        counter(
            "plexus_queries_cancelled_total",
            "Queries stopped before the end because their client went away or the server was stopping (also counted as errors).",
            "counter",
            self.queries_cancelled.load(Relaxed).to_string(),
        );
        counter(
            "plexus_transactions_committed_total",
            "Transactions committed (auto-commit and explicit).",
            "counter",
            self.transactions_committed.load(Relaxed).to_string(),
        );
        counter(
            "plexus_transactions_rolled_back_total",
            "Explicit transactions rolled back, or whose commit failed (a conflict, a termination).",
            "counter",
            self.transactions_rolled_back.load(Relaxed).to_string(),
        );
        counter(
            "plexus_wal_fsyncs_total",
            "fsync calls on the write-ahead log.",
            "counter",
            db.wal_fsyncs().to_string(),
        );
        counter(
            "plexus_checkpoints_total",
            "Checkpoints written since the database opened (automatic ones included).",
            "counter",
            db.checkpoints().to_string(),
        );
        counter(
            "plexus_checkpoint_failures_total",
            "Checkpoints that failed since the database opened (a full disk, say); the log keeps every commit.",
            "counter",
            db.checkpoint_failures().0.to_string(),
        );
        counter(
            "plexus_bolt_connections_open",
            "Open Bolt connections.",
            "gauge",
            self.bolt_connections_open.load(Relaxed).to_string(),
        );
        counter(
            "plexus_bolt_connections_total",
            "Bolt connections accepted.",
            "counter",
            self.bolt_connections_total.load(Relaxed).to_string(),
        );
        counter(
            "plexus_http_connections_open",
            "Open HTTP connections.",
            "gauge",
            self.http_connections_open.load(Relaxed).to_string(),
        );
        counter(
            "plexus_http_requests_total",
            "HTTP requests served.",
            "counter",
            self.http_requests_total.load(Relaxed).to_string(),
        );
        counter(
            "plexus_auth_failures_total",
            "Failed authentication attempts.",
            "counter",
            self.auth_failures.load(Relaxed).to_string(),
        );
        counter(
            "plexus_connections_refused_total",
            "Connections refused because the connection limit was reached.",
            "counter",
            self.connections_refused.load(Relaxed).to_string(),
        );
        if let Some(rss) = resident_bytes() {
            counter("plexus_resident_memory_bytes", "Resident memory of the server process.", "gauge", rss.to_string());
        }
        let read = db.read();
        counter("plexus_nodes", "Nodes in the database.", "gauge", read.node_count().to_string());
        counter("plexus_relationships", "Relationships in the database.", "gauge", read.rel_count().to_string());
        if let Some(started) = self.started {
            counter(
                "plexus_uptime_seconds",
                "Seconds since the server started.",
                "gauge",
                format!("{:.3}", started.elapsed().as_secs_f64()),
            );
        }
        let _ = writeln!(
            out,
            "# HELP plexus_query_duration_seconds Query latency, from receipt to result.\n\
             # TYPE plexus_query_duration_seconds histogram"
        );
        self.query_latency.render(&mut out, "plexus_query_duration_seconds", "");
        out
    }
}

/// Resident set size from `/proc/self/statm` (Linux only).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::new();
        m.record_query(Duration::from_micros(300), true);
        m.record_query(Duration::from_millis(30), false);
        let text = m.render(&plexus::Database::in_memory());
        assert!(text.contains("plexus_queries_total 1\n"));
        assert!(text.contains("plexus_query_errors_total 1\n"));
        assert!(text.contains("plexus_query_duration_seconds_bucket{le=\"0.0005\"} 1\n"));
        assert!(text.contains("plexus_query_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
        assert!(text.contains("plexus_query_duration_seconds_count 2\n"));
        assert!(text.contains("# TYPE plexus_wal_fsyncs_total counter"));
    }
}
