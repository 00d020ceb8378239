//! Runs one parameterised query in a loop against a database directory, for profiling a query on real data:
//!
//! ```sh
//! cargo build --release -p plexus-bench --example query_loop
//! perf record -g target/release/examples/query_loop DIR QUERY_FILE PARAM VALUES_FILE SECONDS
//! ```
//!
//! `PARAM` is bound in turn to each integer of `VALUES_FILE` (one per line; other lines are skipped).
//! `PLEXUS_COUNT=N` runs exactly N queries instead of as many as fit in the seconds, so that instruction counts
//! of two builds (under callgrind) cover the same parameters.

use plexus::cypher::Value;
use plexus::{Database, Params};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, query_file, param, values_file, secs] = args.as_slice() else {
        eprintln!("usage: query_loop DIR QUERY_FILE PARAM VALUES_FILE SECONDS");
        std::process::exit(2);
    };
    let query = std::fs::read_to_string(query_file).expect("the query file reads");
    let values: Vec<i64> = std::fs::read_to_string(values_file)
        .expect("the values file reads")
        .lines()
        .filter_map(|l| l.split(['|', ',']).next()?.trim().parse().ok())
        .collect();
    assert!(!values.is_empty(), "no integer values in {values_file}");
    let secs: f64 = secs.parse().expect("seconds");
    let db = Database::open(dir).expect("the database opens");
    let mut params = Params::new();
    let (started, mut done, mut rows) = (std::time::Instant::now(), 0usize, 0usize);
    let count: Option<usize> = std::env::var("PLEXUS_COUNT").ok().and_then(|c| c.parse().ok());
    while count.map_or(started.elapsed().as_secs_f64() < secs, |count| done < count) {
        params.insert(param.clone(), Value::Int(values[done % values.len()]));
        rows += db.execute(&query, &params).expect("the query runs").rows.len();
        done += 1;
    }
    let rate = done as f64 / started.elapsed().as_secs_f64();
    println!("{done} queries, {rows} rows: {rate:.0} queries/s");
}
