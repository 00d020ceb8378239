//! Tests of the generators through the public entry points: determinism, counts, id ranges, shapes and
//! compressed output.

use std::collections::HashSet;
use std::io::Read;

use super::*;

fn text(graph: &Graph, options: &Options) -> (Vec<u8>, Summary) {
    let mut out = Vec::new();
    let summary = generate_to(graph, options, &mut out, &mut |_| {}).unwrap();
    assert_eq!(summary.bytes, out.len() as u64);
    (out, summary)
}

/// Parses the edge lines (skipping a header) into (source, target, weight).
fn parse(bytes: &[u8]) -> Vec<(u64, u64, Option<f64>)> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("source"))
        .map(|l| {
            let mut f = l.split(',');
            let s = f.next().unwrap().parse().unwrap();
            let t = f.next().unwrap().parse().unwrap();
            let w = f.next().map(|w| w.parse().unwrap());
            assert!(f.next().is_none(), "too many fields in {l:?}");
            (s, t, w)
        })
        .collect()
}

fn opts(seed: u64, threads: usize) -> Options {
    Options { seed, threads, ..Options::default() }
}

fn preset(preset: Preset, scale: f64) -> Graph {
    Graph::Preset { preset, scale }
}

#[test]
fn same_seed_same_bytes_whatever_the_thread_count() {
    let graphs = [
        Graph::Rmat(Rmat::graph500(12, 40).unwrap()),
        preset(Preset::Patents, 0.05),
        Graph::Likes(Likes { items: 5000, people: 20_000, likes: 7 }),
    ];
    for graph in &graphs {
        let (one, _) = text(graph, &opts(9, 1));
        for threads in [2, 3, 8] {
            assert!(one == text(graph, &opts(9, threads)).0, "{graph:?} differs with {threads} threads");
        }
        assert!(one != text(graph, &opts(10, 2)).0, "{graph:?}: another seed should give another graph");
    }
}

#[test]
fn rmat_counts_id_range_and_skew() {
    let scale = 14;
    let graph = Graph::Rmat(Rmat::graph500(scale, 16).unwrap());
    let (out, summary) = text(&graph, &opts(1, 0));
    let edges = parse(&out);
    assert_eq!((summary.nodes, summary.edges), (1 << scale, 16 << scale));
    assert_eq!(edges.len() as u64, summary.edges);
    assert!(edges.iter().all(|&(s, t, w)| s < 1 << scale && t < 1 << scale && w.is_none()));
    let mut degree = vec![0u64; 1 << scale];
    for &(s, t, _) in &edges {
        degree[s as usize] += 1;
        degree[t as usize] += 1;
    }
    let mean = 2.0 * edges.len() as f64 / degree.len() as f64;
    let max = *degree.iter().max().unwrap();
    assert!(max as f64 > 20.0 * mean, "heavy tail expected: max {max}, mean {mean}");
    // The relabelling must move the hub away from id 0, where unrelabelled R-MAT puts it.
    let hub = degree.iter().position(|&d| d == max).unwrap();
    assert_ne!(hub, 0);
    assert!(edges.iter().any(|&(s, t, _)| s == t), "Graph500 keeps self-loops by default");
}

#[test]
fn rmat_options_weights_header_self_loops_and_noise() {
    let mut rmat = Rmat::graph500(10, 8).unwrap();
    rmat.no_self_loops = true;
    rmat.noise = 0.1;
    let options = Options { weights: true, header: true, ..opts(4, 2) };
    let (out, summary) = text(&Graph::Rmat(rmat.clone()), &options);
    assert!(out.starts_with(b"source,target,weight\n"));
    let edges = parse(&out);
    assert_eq!(edges.len() as u64, summary.edges);
    assert!(edges.iter().all(|&(s, t, _)| s != t));
    let weights: Vec<f64> = edges.iter().map(|e| e.2.unwrap()).collect();
    assert!(weights.iter().all(|w| (0.0..1.0).contains(w)));
    let mean = weights.iter().sum::<f64>() / weights.len() as f64;
    assert!((mean - 0.5).abs() < 0.02, "uniform weights should average 1/2, got {mean}");
    rmat.noise = 0.0;
    assert!(out != text(&Graph::Rmat(rmat), &options).0, "noise should change the graph");
}

#[test]
fn presets_keep_the_average_degree_at_small_scale() {
    for (p, scale) in [(Preset::Patents, 0.01), (Preset::MouseGenes, 0.02), (Preset::HumanBrain, 0.002)] {
        let (n, m) = p.counts();
        let (out, summary) = text(&preset(p, scale), &opts(3, 0));
        let edges = parse(&out);
        assert_eq!(edges.len() as u64, summary.edges);
        assert_eq!(summary.nodes, (n as f64 * scale).round() as u64);
        assert!(edges.iter().all(|&(s, t, _)| s < summary.nodes && t < summary.nodes && s != t));
        let want = 2.0 * m as f64 / n as f64;
        let got = 2.0 * edges.len() as f64 / summary.nodes as f64;
        assert!((got - want).abs() / want < 0.01, "{}: average degree {got}, want {want}", p.name());
        let touched: HashSet<u64> = edges.iter().flat_map(|&(s, t, _)| [s, t]).collect();
        assert!(touched.len() as u64 > summary.nodes / 2, "{}: most ids should have edges", p.name());
    }
}

#[test]
fn likes_has_exact_counts_and_distinct_items() {
    let likes = Likes { items: 300, people: 1234, likes: 25 };
    let (out, summary) = text(&Graph::Likes(likes.clone()), &opts(5, 2));
    let edges = parse(&out);
    assert_eq!((summary.nodes, summary.edges), (1234 + 300, 1234 * 25));
    assert_eq!(edges.len(), 1234 * 25);
    let mut per_person = vec![HashSet::new(); 1234];
    for &(s, t, _) in &edges {
        assert!(s < 1234, "sources are people");
        assert!((1234..1234 + 300).contains(&t), "targets are items");
        assert!(per_person[s as usize].insert(t), "person {s} likes item {t} twice");
    }
    assert!(per_person.iter().all(|items| items.len() == 25));
    // Every item can be liked by everyone.
    let all = Likes { items: 10, people: 3, likes: 10 };
    assert_eq!(parse(&text(&Graph::Likes(all), &opts(1, 1)).0).len(), 30);
}

#[test]
fn compressed_files_read_back_as_the_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let graph = preset(Preset::MouseGenes, 0.01);
    let options = Options { header: true, ..opts(8, 2) };
    let (plain, _) = text(&graph, &options);
    // Other compressed formats are refused before anything is written, rather than written as text.
    for name in ["edges.csv.bz2", "edges.csv.xz", "edges.zip"] {
        let path = dir.path().join(name);
        let err = generate_file(&graph, &options, &path, &mut |_| {}).unwrap_err().to_string();
        assert!(err.contains(".gz or .zst"), "{name}: {err}");
        assert!(!path.exists(), "{name}");
    }
    for name in ["edges.csv", "edges.csv.gz", "edges.csv.zst", "edges.csv.GZ"] {
        let path = dir.path().join(name);
        let summary = generate_file(&graph, &options, &path, &mut |_| {}).unwrap();
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(summary.bytes, raw.len() as u64);
        assert_eq!(summary.text_bytes, plain.len() as u64);
        let decoded = if name.to_ascii_lowercase().ends_with(".gz") {
            let mut d = Vec::new();
            flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut d).unwrap();
            assert!(raw.len() < plain.len() * 3 / 4, "gzip should compress: {} of {}", raw.len(), plain.len());
            d
        } else if name.ends_with(".zst") {
            assert!(raw.len() < plain.len() * 3 / 4, "zstd should compress: {} of {}", raw.len(), plain.len());
            zstd::decode_all(&raw[..]).unwrap()
        } else {
            raw
        };
        assert!(decoded == plain, "{name} does not decode to the plain text");
    }
}

#[test]
fn bad_parameters_are_errors_not_panics() {
    let bad_sum = Rmat { initiator: Initiator { a: 0.5, b: 0.2, c: 0.2, d: 0.2 }, ..Rmat::graph500(4, 2).unwrap() };
    let cases = [
        Graph::Rmat(bad_sum),
        Graph::Preset { preset: Preset::Patents, scale: 0.0 },
        Graph::Preset { preset: Preset::Patents, scale: 1e-9 },
        Graph::Preset { preset: Preset::Patents, scale: f64::NAN },
        Graph::Likes(Likes { items: 5, people: 5, likes: 6 }),
        Graph::Likes(Likes { items: 0, people: 5, likes: 0 }),
    ];
    for graph in &cases {
        assert!(matches!(validate(graph), Err(Error::Invalid(_))), "{graph:?} should be refused");
    }
    assert!(Rmat::graph500(0, 16).is_err());
    assert!(Rmat::graph500(41, 16).is_err());
    assert!(Rmat::graph500(10, 0).is_err());
    let dir = tempfile::tempdir().unwrap();
    let unwritable = dir.path().join("missing").join("edges.csv");
    let err = generate_file(&preset(Preset::Patents, 0.001), &opts(1, 1), &unwritable, &mut |_| {}).unwrap_err();
    assert!(matches!(err, Error::Io { .. }) && err.to_string().contains("edges.csv"), "{err}");
}

/// Prints the shape of each preset (degrees, isolated ids, duplicates) for the documentation in presets.rs:
/// `cargo test --release -p plexus-import preset_shape -- --ignored --nocapture`, optionally with
/// `PRESET_SCALE=1`, or with `PRESET_ABCD=a,b,c,d` to try another initiator.
#[test]
#[ignore]
fn preset_shape_report() {
    let scale: f64 = std::env::var("PRESET_SCALE").map_or(0.1, |s| s.parse().unwrap());
    let abcd: Option<Vec<f64>> =
        std::env::var("PRESET_ABCD").ok().map(|s| s.split(',').map(|p| p.parse().unwrap()).collect());
    for p in Preset::ALL {
        let mut rmat = p.rmat(scale).unwrap();
        if let Some(abcd) = &abcd {
            rmat.initiator = Initiator { a: abcd[0], b: abcd[1], c: abcd[2], d: abcd[3] };
        }
        let (out, summary) = text(&Graph::Rmat(rmat), &opts(42, 0));
        let n = summary.nodes as usize;
        let (mut out_deg, mut in_deg) = (vec![0u32; n], vec![0u32; n]);
        let mut keys = Vec::with_capacity(summary.edges as usize);
        for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let comma = line.iter().position(|&b| b == b',').unwrap();
            let s: u64 = std::str::from_utf8(&line[..comma]).unwrap().parse().unwrap();
            let t: u64 = std::str::from_utf8(&line[comma + 1..]).unwrap().parse().unwrap();
            out_deg[s as usize] += 1;
            in_deg[t as usize] += 1;
            keys.push(s << 32 | t);
        }
        keys.sort_unstable();
        let distinct = {
            keys.dedup();
            keys.len()
        };
        let isolated = (0..n).filter(|&i| out_deg[i] + in_deg[i] == 0).count();
        let mut total: Vec<u32> = (0..n).map(|i| out_deg[i] + in_deg[i]).collect();
        total.sort_unstable();
        println!(
            "{} x{scale}: {} nodes, {} edges; max out {}, max in {}, max total {}, median total {}, \
             isolated {:.1}%, duplicate edges {:.2}%",
            p.name(),
            n,
            summary.edges,
            out_deg.iter().max().unwrap(),
            in_deg.iter().max().unwrap(),
            total[n - 1],
            total[n / 2],
            100.0 * isolated as f64 / n as f64,
            100.0 * (1.0 - distinct as f64 / summary.edges as f64)
        );
    }
}
