//! Runs the recommendation of C2 (`bench/results/cypher.md`) in a loop on one likes graph, for profiling:
//!
//! ```sh
//! cargo build --release -p plexus-bench --example recommend_loop
//! perf record -g target/release/examples/recommend_loop 200 10 1000 5
//! ```
//!
//! Arguments: items, likes per person, people, seconds, and `native` to run `plexus::algo::recommend` instead
//! of the Cypher query. `PLEXUS_QUERY` replaces the query text (its parameter `$id` is the person's node id);
//! `PLEXUS_PROFILE=1` prints the profiled plan of one run first; `PLEXUS_COUNT=N` runs exactly N
//! recommendations instead of as many as fit in the seconds, so that instruction counts of two builds (under
//! callgrind) cover the same people.

use plexus::cypher::Value;
use plexus::{Database, Params};
use plexus_bench::cypher::RECOMMEND_QUERY;
use plexus_bench::likes::{build, LIMIT};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (items, likes, people, secs) = (number(0, 200), number(1, 10), number(2, 1000), number(3, 5));
    let native = args.get(4).is_some_and(|a| a == "native");
    let query = std::env::var("PLEXUS_QUERY").unwrap_or_else(|_| RECOMMEND_QUERY.to_string());
    let db = Database::in_memory();
    let (people_ids, likes_type) = build(&db, items, likes, people, 7);
    let snapshot = db.read();
    let mut params = Params::new();
    if std::env::var_os("PLEXUS_PROFILE").is_some() {
        params.insert("id".into(), Value::Int(people_ids[0].0 as i64));
        let profiled = db.execute(&format!("PROFILE {query}"), &params).expect("the query runs");
        println!("{}", profiled.plan.unwrap_or_default());
    }
    let started = std::time::Instant::now();
    let mut done = 0usize;
    let count: Option<usize> = std::env::var("PLEXUS_COUNT").ok().and_then(|c| c.parse().ok());
    while count.map_or(started.elapsed().as_secs_f64() < secs as f64, |count| done < count) {
        let me = people_ids[done.wrapping_mul(7919) % people_ids.len()];
        if native {
            std::hint::black_box(plexus::algo::recommend(&snapshot, me, likes_type, LIMIT));
        } else {
            params.insert("id".into(), Value::Int(me.0 as i64));
            std::hint::black_box(db.execute(&query, &params).expect("the query runs"));
        }
        done += 1;
    }
    println!(
        "{} {items} items, {likes} likes, {people} people: {:.0} recommendations/s",
        if native { "native" } else { "Cypher" },
        done as f64 / started.elapsed().as_secs_f64()
    );
}
