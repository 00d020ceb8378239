//! The Cypher workloads (`cypher.md`): C1 a cached parameterised point query, C2 the GuancialeDB recommendation
//! written in Cypher next to the native traversal on the same graph, C3 a bulk `UNWIND ... CREATE`.

use plexus::algo::recommend;
use plexus::cypher::Value;
use plexus::{Database, Params};

use crate::gen::SplitMix;
use crate::likes::{build, LIMIT, ROWS};
use crate::report::{Row, Table, Target};
use crate::{rate, thread_cpu_secs, Config, Rate};

/// The IS1-like point query: a person by key, their properties and their city.
pub const POINT_QUERY: &str = "MATCH (p:Person {id: $id})-[:IS_LOCATED_IN]->(c:City) \
     RETURN p.firstName AS firstName, p.lastName AS lastName, p.birthday AS birthday, c.id AS cityId";

/// The recommendation in Cypher, aggregating per co-liker first as the native traversal does.
pub const RECOMMEND_QUERY: &str = "MATCH (me)-[:LIKES]->(:Item)<-[:LIKES]-(other) WHERE id(me) = $id AND other <> me \
     WITH me, other, count(*) AS shared \
     MATCH (other)-[:LIKES]->(rec) WHERE NOT (me)-[:LIKES]->(rec) \
     RETURN id(rec) AS item, sum(shared) AS score ORDER BY score DESC, item LIMIT 10";

fn params(entries: &[(&str, Value)]) -> Params {
    entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// Builds persons with a unique `id` and the city each lives in.
pub fn build_persons(db: &Database, persons: u64) {
    db.execute("CREATE CONSTRAINT FOR (p:Person) REQUIRE p.id IS UNIQUE", &Params::new()).expect("constraint");
    db.execute("UNWIND range(0, 99) AS i CREATE (:City {id: i, name: 'city ' + toString(i)})", &Params::new())
        .expect("cities");
    db.execute(
        "MATCH (c:City) WITH collect(c) AS cities \
         UNWIND range(0, $n - 1) AS i \
         WITH cities[i % 100] AS city, i \
         CREATE (:Person {id: i, firstName: 'First' + toString(i), lastName: 'Last' + toString(i), birthday: 19700101 + i})-[:IS_LOCATED_IN]->(city)",
        &params(&[("n", Value::Int(persons as i64))]),
    )
    .expect("persons");
}

pub fn point_query(cfg: &Config) -> Table {
    let mut t = Table::new("c1", "Cached parameterised point query (IS1-like)");
    let persons = cfg.scaled(100_000, 100);
    t.setup.push(format!(
        "{persons} persons with a unique key `id`, each IS_LOCATED_IN one of 100 cities; one op = `{POINT_QUERY}` \
         for a uniformly random `$id` through `Database::execute` (plan cache hit, snapshot, execution, result \
         values); one thread, in memory"
    ));
    t.setup.push("target: ≥ 200k queries/s; a plan-cache hit (`RETURN $x`, the smallest whole query) ≤ 2 µs".into());
    let db = Database::in_memory();
    build_persons(&db, persons);
    let mut rng = SplitMix(cfg.seed);
    let mut p = params(&[("id", Value::Int(0))]);
    let ops = rate(cfg.budget, 1000, || {
        p.insert("id".into(), Value::Int(rng.below(persons) as i64));
        let r = db.execute(POINT_QUERY, &p).expect("point query");
        assert_eq!(r.rows.len(), 1);
        1
    });
    t.rows.push(Row::rate("IS1-like point query", ops, "queries/s", Target::AtLeast(200_000.0)));
    let p = params(&[("x", Value::Int(1))]);
    let trivial = rate(cfg.budget, 1000, || {
        std::hint::black_box(db.execute("RETURN $x AS x", &p).expect("trivial"));
        1
    });
    t.rows.push(Row::new("whole cached query `RETURN $x`", 1e6 / trivial.per_sec, "µs", Target::AtMost(2.0)));
    t
}

pub fn recommendation(cfg: &Config) -> Table {
    let mut t = Table::new("c2", "GuancialeDB recommendation in Cypher against the native traversal");
    t.setup.push(format!(
        "the W3 graphs; one op = a recommendation for a uniformly random person, in Cypher (`{RECOMMEND_QUERY}`) \
         and with `plexus::algo::recommend`, alternating in the same run; answers checked equal first"
    ));
    t.setup.push("target: Cypher within 2× of native (the ratio native time / Cypher time ≥ 0.5)".into());
    t.extra_headers = vec!["Cypher ops/s", "native ops/s"];
    for (row, &(items, likes, people, _)) in ROWS.iter().enumerate() {
        let people = cfg.scaled(people as u64, 20) as usize;
        let db = Database::in_memory();
        let (person_ids, ty) = build(&db, items, likes, people, cfg.seed ^ row as u64);
        let snapshot = db.read();
        // Correctness first: the two agree on scores for a few people.
        for &me in person_ids.iter().take(3) {
            let native = recommend(&snapshot, me, ty, LIMIT);
            let r = db.execute(RECOMMEND_QUERY, &params(&[("id", Value::Int(me.0 as i64))])).expect("recommend");
            let cypher: Vec<(u64, u64)> = r
                .rows
                .iter()
                .map(|row| match (&row[0], &row[1]) {
                    (plexus::ResultValue::Int(i), plexus::ResultValue::Int(s)) => (*i as u64, *s as u64),
                    other => panic!("unexpected row {other:?}"),
                })
                .collect();
            let native: Vec<(u64, u64)> = native.iter().map(|(n, s)| (n.0, *s)).collect();
            assert_eq!(cypher, native, "Cypher and native recommendations differ");
        }
        let mut rng = SplitMix(cfg.seed ^ 0x3333 ^ row as u64);
        let mut p = params(&[("id", Value::Int(0))]);
        let cypher = rate(cfg.budget, 3, || {
            let me = person_ids[rng.below(person_ids.len() as u64) as usize];
            p.insert("id".into(), Value::Int(me.0 as i64));
            std::hint::black_box(db.execute(RECOMMEND_QUERY, &p).expect("recommend"));
            1
        });
        let native = rate(cfg.budget, 3, || {
            let me = person_ids[rng.below(person_ids.len() as u64) as usize];
            std::hint::black_box(recommend(&snapshot, me, ty, LIMIT));
            1
        });
        t.rows.push(
            Row::new(
                format!("items {items}, likes {likes}, people {people}"),
                cypher.per_sec / native.per_sec,
                "× native speed",
                Target::AtLeast(0.5),
            )
            .with(crate::report::human(cypher.per_sec))
            .with(crate::report::human(native.per_sec)),
        );
    }
    t
}

pub fn bulk_create(cfg: &Config) -> Table {
    let mut t = Table::new("c3", "Bulk write in Cypher");
    let n = cfg.scaled(1_000_000, 1000);
    t.setup.push(format!(
        "one op = `UNWIND $rows AS r CREATE (:Person {{id: r.id, city: r.city}})` with {n} rows of `{{id, city}}` \
         maps as a parameter, committed with durability off, into a new database each time; rate = nodes per second \
         of the whole statement (creating and dropping the database are not timed)"
    ));
    t.setup.push("target: ≥ 1M nodes/s".into());
    let rows: Vec<Value> = (0..n as i64)
        .map(|i| {
            let mut m = plexus::cypher::Map::new();
            m.insert("id".into(), Value::Int(i));
            m.insert("city".into(), Value::from(format!("city {}", i % 1000)));
            Value::map(m)
        })
        .collect();
    let p = params(&[("rows", Value::list(rows))]);
    // Each op runs on a new database; the clock covers the statement, not creating and dropping the database
    // (dropping a million nodes' records took longer than creating them, and is not part of the statement).
    let (mut ops, mut wall, mut cpu) = (0u64, 0.0f64, 0.0f64);
    while ops == 0 || wall < cfg.budget.as_secs_f64() {
        let db = Database::in_memory();
        let (start, cpu_start) = (std::time::Instant::now(), thread_cpu_secs());
        let r = db.execute("UNWIND $rows AS r CREATE (:Person {id: r.id, city: r.city})", &p).expect("bulk create");
        wall += start.elapsed().as_secs_f64();
        cpu += thread_cpu_secs() - cpu_start;
        ops += r.stats.nodes_created;
        drop(r);
        drop(db);
    }
    let nodes = Rate::new(ops, wall, cpu);
    t.rows.push(Row::rate("UNWIND $rows CREATE", nodes, "nodes/s", Target::AtLeast(1_000_000.0)));
    t
}
