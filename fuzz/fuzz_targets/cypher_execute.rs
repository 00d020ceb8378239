//! Arbitrary query text compiled and run against a small graph, in a write transaction that is rolled back:
//! a result or an error, never a panic, with a time limit per query so that a query that would run for hours
//! ends as an error. Reaches the planner and the executor, which `cypher_parse` does not.

#![no_main]

use std::sync::Arc;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use plexus::cypher::{FileAccess, Interrupt};
use plexus::Database;

fn graph() -> Database {
    let db = Database::in_memory();
    db.engine().set_file_access(FileAccess::Nowhere);
    db.execute(
        "CREATE (a:A:B {id: 1, name: 'a', xs: [1, 2], d: date('2020-01-01')}), (b:B {id: 2, name: 'b', f: 1.5}), \
         (c:C {id: 3}), (a)-[:R {w: 1}]->(b), (b)-[:R {w: 2}]->(c), (c)-[:S]->(a), (a)-[:S]->(a), (b)-[:T]->(a)",
        &Default::default(),
    )
    .expect("the seed graph");
    db.execute("CREATE INDEX FOR (n:B) ON (n.name)", &Default::default()).expect("an index");
    db
}

thread_local! {
    static DB: Database = graph();
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    DB.with(|db| {
        let interrupt = Arc::new(Interrupt::new(Some(Instant::now() + Duration::from_millis(250)), Some(16 << 20)));
        let mut tx = db.write();
        let _ = db.engine().execute_in_with(&mut tx, text, &Default::default(), Some(&interrupt));
        drop(tx);
    });
});
