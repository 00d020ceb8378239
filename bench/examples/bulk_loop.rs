//! Runs one write statement over a parameter list of rows (`$rows`: `{id, city}` maps, as C3 builds them) into
//! a new in-memory database each time, for profiling bulk writes in Cypher:
//!
//! ```sh
//! cargo build --release -p plexus-bench --example bulk_loop
//! perf record -g target/release/examples/bulk_loop 1000000 3 'UNWIND $rows AS r CREATE (:Person {id: r.id})'
//! ```
//!
//! Arguments: rows, rounds, and the statement (C3's when left out). `PLEXUS_SETUP` runs statements separated by
//! `;` first on each new database, with the same `$rows` (a constraint, or the nodes relationships will join).

use plexus::cypher::{Map, Value};
use plexus::{Database, Params};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: i64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let statement =
        args.get(2).cloned().unwrap_or_else(|| "UNWIND $rows AS r CREATE (:Person {id: r.id, city: r.city})".into());
    let list: Vec<Value> = (0..rows)
        .map(|i| {
            let mut m = Map::new();
            m.insert("id".into(), Value::Int(i));
            m.insert("city".into(), Value::from(format!("city {}", i % 1000)));
            Value::map(m)
        })
        .collect();
    let mut params = Params::new();
    params.insert("rows".into(), Value::list(list));
    for _ in 0..rounds {
        let db = Database::in_memory();
        for setup in std::env::var("PLEXUS_SETUP").unwrap_or_default().split(';').filter(|s| !s.trim().is_empty()) {
            db.execute(setup, &params).expect("the set-up statement runs");
        }
        let started = std::time::Instant::now();
        let result = db.execute(&statement, &params).expect("the statement runs");
        let secs = started.elapsed().as_secs_f64();
        println!("{rows} rows in {:.3} s: {:.0} rows/s; {:?}", secs, rows as f64 / secs, result.stats);
    }
}
