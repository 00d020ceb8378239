//! `plexus loadgen` end to end against a real server on loopback: every scheduled request is sent and
//! accounted for, over Bolt and over HTTP, with auth on and `sync` durability.

use std::time::Duration;

use plexus_server::loadgen::{self, LoadConfig, Scenario, Target};
use plexus_server::{Server, ServerConfig};

#[test]
fn every_scheduled_insert_is_sent_answered_and_counted() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        data: dir.path().to_path_buf(),
        bolt: "127.0.0.1:0".into(),
        http: "127.0.0.1:0".into(),
        password: Some("secret".into()),
        durability: "sync".into(),
        ..ServerConfig::default()
    };
    let server = runtime.block_on(Server::start(&config)).unwrap();
    let targets = [
        Target::Bolt(server.bolt_addr.expect("Bolt listens").to_string()),
        Target::Http(server.http_addr.expect("HTTP listens").to_string()),
    ];
    let mut created = 0;
    for (run, target) in targets.into_iter().enumerate() {
        let load = LoadConfig {
            target: target.clone(),
            user: "neo4j".into(),
            password: "secret".into(),
            scenario: Scenario::Insert,
            rate: 400.0,
            duration: Duration::from_millis(1500),
            warmup: Duration::from_millis(250),
            connections: 4,
            step: None,
            // Ids follow from the seed: each run its own, so that every node is new.
            seed: 7 + run as u64,
            threads: 1 + run,
        };
        let mut seen = 0;
        let reports = loadgen::run(&load, |_| seen += 1).unwrap();
        assert_eq!((reports.len(), seen), (1, 1), "{target:?}: one phase without step mode");
        let r = &reports[0];
        assert_eq!((r.errors, r.first_error.as_deref()), (0, None), "{target:?}");
        // 400/s for 1.5 s after 0.25 s of warm-up: 600 measured requests and 100 before, all answered.
        assert_eq!((r.completed, r.warmup_completed), (600, 100), "{target:?}");
        // Never above the rate offered: 600 requests offered over 1.5 s, answered over at least that.
        assert!(r.achieved_rate > 300.0 && r.achieved_rate <= 400.0, "{target:?}: {}", r.achieved_rate);
        let l = &r.latency_ms;
        assert!(0.0 < l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999 && l.p999 <= l.max, "{l:?}");
        assert_eq!(r.seconds.iter().map(|s| s.second).collect::<Vec<_>>(), [0, 1], "{target:?}");
        assert_eq!(r.seconds.iter().map(|s| s.completed).sum::<u64>(), 600, "{target:?}");
        assert!(r.nodes_per_second.is_some_and(|n| n > 3000.0), "{target:?}: {:?}", r.nodes_per_second);
        // The generator's own CPU per request: more than nothing, less than the request's whole budget.
        assert!(r.generator_cpu_us > 0.0 && r.generator_cpu_us < 2500.0, "{target:?}: {}", r.generator_cpu_us);
        created += (r.completed + r.warmup_completed) * 10;
    }
    // Requests the server refuses are counted as errors, and each connection goes on serving after its RESET:
    // the same ids again, now under a uniqueness constraint.
    server
        .service
        .db
        .execute("CREATE CONSTRAINT FOR (n:LoadNode) REQUIRE n.id IS UNIQUE", &Default::default())
        .unwrap();
    for (run, target) in
        [Target::Bolt(server.bolt_addr.unwrap().to_string()), Target::Http(server.http_addr.unwrap().to_string())]
            .into_iter()
            .enumerate()
    {
        let load = LoadConfig {
            target: target.clone(),
            user: "neo4j".into(),
            password: "secret".into(),
            scenario: Scenario::Insert,
            rate: 200.0,
            duration: Duration::from_millis(500),
            warmup: Duration::ZERO,
            connections: 3,
            step: None,
            seed: 7 + run as u64,
            threads: 1,
        };
        let r = &loadgen::run(&load, |_| {}).unwrap()[0];
        assert_eq!((r.completed, r.errors), (0, 100), "{target:?}");
        assert!(r.first_error.as_deref().is_some_and(|e| e.contains("ConstraintValidationFailed")), "{r:?}");
        assert_eq!(r.seconds.iter().map(|s| s.errors).sum::<u64>(), 100);
    }
    // A scenario whose data is missing, and a wrong password, end the run with a clear error.
    let bolt = Target::Bolt(server.bolt_addr.unwrap().to_string());
    let mut load = LoadConfig {
        target: bolt,
        user: "neo4j".into(),
        password: "secret".into(),
        scenario: Scenario::Is1,
        rate: 100.0,
        duration: Duration::from_millis(200),
        warmup: Duration::ZERO,
        connections: 1,
        step: None,
        seed: 1,
        threads: 1,
    };
    let e = loadgen::run(&load, |_| {}).unwrap_err();
    assert!(e.contains("no Person nodes"), "{e}");
    load.scenario = Scenario::Insert;
    load.password = "wrong".into();
    let e = loadgen::run(&load, |_| {}).unwrap_err();
    assert!(e.contains("cannot connect"), "{e}");
    // Over HTTP nothing is asked before the first request: the run checks the credentials first all the same.
    load.target = Target::Http(server.http_addr.unwrap().to_string());
    let e = loadgen::run(&load, |_| {}).unwrap_err();
    assert!(e.contains("401") || e.contains("Unauthorized"), "{e}");
    // Every acknowledged request's ten nodes are in the database, each with its own id.
    let count =
        server.service.db.execute("MATCH (n:LoadNode) RETURN count(n), count(DISTINCT n.id)", &Default::default());
    let rows = count.unwrap().rows;
    let expected = plexus::ResultValue::Int(created as i64);
    assert_eq!(rows[0], vec![expected.clone(), expected]);
    runtime.block_on(server.shutdown(Duration::from_secs(5))).unwrap();
}
