//! Runs the load generator's insert request (10 nodes with 2 properties, parameterised, returning a count) in a
//! loop against an in-memory database, for counting what the engine spends on a small write:
//!
//! ```sh
//! cargo build --release -p plexus-bench --example insert_loop
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect=plexus::Database::execute \
//!   target/release/examples/insert_loop 2000
//! ```
//!
//! Argument: how many requests.

use plexus::cypher::{Map, Value};
use plexus::{Database, Params};

const INSERT: &str = "UNWIND $batch AS row CREATE (n:LoadNode {id: row.id, name: row.name}) RETURN count(n) AS created";

fn main() {
    let requests: i64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let db = Database::in_memory();
    let mut params = Params::new();
    let started = std::time::Instant::now();
    for i in 0..requests {
        let batch = (0..10)
            .map(|k| {
                let id = i * 10 + k;
                let mut row = Map::new();
                row.insert("id".into(), Value::Int(id));
                row.insert("name".into(), Value::from(format!("node-{id}")));
                Value::map(row)
            })
            .collect();
        params.insert("batch".into(), Value::list(batch));
        std::hint::black_box(db.execute(INSERT, &params).expect("the insert runs"));
    }
    let rate = requests as f64 / started.elapsed().as_secs_f64();
    println!("{requests} requests: {rate:.0} requests/s");
}
