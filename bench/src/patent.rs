//! The patent-shaped graph: generated with R-MAT, bulk-loaded with `build_state`, measured for resident memory
//! per relationship (W7) and for random reads from one and two threads (W4); W5's writes run on it too.

use std::ops::ControlFlow;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use plexus_storage::bulk::{build_state, NodeInput, RelInput};
use plexus_storage::{
    Catalog, Direction, GraphState, NodeId, PropKeyId, PropMap, ReadTxn, RelId, RelRecord, Store, TypeFilter, TypeId,
    Value,
};

use crate::gen::{rmat_edges, SplitMix, PATENT_EDGES, PATENT_NODES, RMAT};
use crate::report::{rss_bytes, Row, Table, Target};
use crate::{rate, writes, Config};

/// A loaded patent-shaped graph.
pub struct Patent {
    pub store: Store,
    pub nodes: u64,
    pub cites: TypeId,
    pub weight: PropKeyId,
}

/// Bulk-loads `edges` on `nodes` nodes; relationship ids follow the edge list, so they are sorted by source like
/// an imported edge file. With `weighted`, every relationship gets a random float `weight`.
pub fn load(edges: &[(u32, u32)], nodes: u64, weighted: bool, seed: u64) -> Patent {
    let catalog = Catalog::new();
    let (cites, weight) = (catalog.rel_type("CITES"), catalog.prop_key("weight"));
    let node_inputs: Vec<NodeInput> =
        (0..nodes).map(|i| NodeInput { id: NodeId(i), labels: Default::default(), props: None }).collect();
    let mut rng = SplitMix(seed);
    let rels: Vec<RelInput> = edges
        .iter()
        .enumerate()
        .map(|(i, &(u, v))| RelInput {
            rec: RelRecord { id: RelId(i as u64), ty: cites, src: NodeId(u64::from(u)), dst: NodeId(u64::from(v)) },
            props: weighted.then(|| Arc::new(PropMap::from_pairs(vec![(weight, Value::Float(rng.unit()))]))),
        })
        .collect();
    let state = build_state(0, node_inputs, rels, &[]).expect("the generated graph is valid");
    Patent { store: Store::from_state(state, catalog), nodes, cites, weight }
}

/// Hands freed heap back to the OS so resident memory reflects live data only.
pub fn trim_heap() {
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// W4, W5 and W7 on one generated graph (loaded twice: without properties, then with a weight on every edge).
pub fn run(cfg: &Config) -> Vec<Table> {
    let (nodes, edges) = (cfg.scaled(PATENT_NODES, 1_000), cfg.scaled(PATENT_EDGES, 4_000));
    let start = Instant::now();
    let edge_list = rmat_edges(nodes, edges, cfg.seed);
    let gen_secs = start.elapsed().as_secs_f64();
    let shape = describe_shape(&edge_list, nodes);
    println!("generated {nodes} nodes, {edges} edges in {gen_secs:.1} s: {shape}");
    let inputs = Inputs::new(&edge_list, nodes, cfg.seed ^ 4);

    let mut w4 = Table::new("w4", "random reads on the patent-shaped graph");
    w4.setup.push(format!(
        "R-MAT (a, b, c, d) = ({}, {}, {}, {:.2}), {nodes} nodes, {edges} directed edges (no self-loops or \
         duplicates), ids permuted; {shape}; one `CITES` type",
        RMAT.0,
        RMAT.1,
        RMAT.2,
        1.0 - RMAT.0 - RMAT.1 - RMAT.2
    ));
    w4.setup.push(
        "uniformly random vertices; find-edge pairs are an existing edge half the time and a random pair the other \
         half; `mixed` cycles through the six operations, each thread on its own `ReadTxn` clone"
            .into(),
    );
    let mut w7 = Table::new("w7", "resident memory of the patent-shaped graph");
    w7.setup.push(
        "VmRSS before and after `bulk::build_state` + `Store::from_state` (load inputs dropped, heap trimmed with \
         malloc_trim), divided by the number of relationships; the generated edge list is resident in both"
            .into(),
    );
    w7.extra_headers = vec!["RSS growth", "load time", "adjacency (engine estimate)"];
    let mut tables = Vec::new();

    for weighted in [false, true] {
        let label = if weighted { "weight on every edge" } else { "no properties" };
        trim_heap();
        let before = rss_bytes();
        let start = Instant::now();
        let g = load(&edge_list, nodes, weighted, cfg.seed ^ 5);
        let load_secs = start.elapsed().as_secs_f64();
        trim_heap();
        let grown = rss_bytes().saturating_sub(before);
        let adjacency = g.store.read().adjacency_bytes();
        let target = if weighted { Target::Info } else { Target::AtMost(48.0) };
        w7.rows.push(
            Row::new(label, grown as f64 / edges as f64, "bytes/rel", target)
                .with(format!("{:.2} GiB", grown as f64 / f64::from(1 << 30)))
                .with(format!("{load_secs:.1} s"))
                .with(format!("{:.1} bytes/rel", adjacency as f64 / edges as f64)),
        );
        println!("loaded ({label}) in {load_secs:.1} s, RSS +{:.2} GiB", grown as f64 / f64::from(1 << 30));
        if cfg.wants("w4") {
            reads(cfg, &g, &inputs, label, &mut w4);
        }
        if !weighted && cfg.wants("w5") {
            tables.push(writes::random_writes(cfg, &g, &edge_list));
        }
        drop(g);
    }
    if cfg.wants("w4") {
        tables.push(w4);
    }
    if cfg.wants("w7") {
        tables.push(w7);
    }
    tables
}

/// Degree extremes, for the setup line.
fn describe_shape(edges: &[(u32, u32)], nodes: u64) -> String {
    let (mut out, mut inc) = (vec![0u32; nodes as usize], vec![0u32; nodes as usize]);
    for &(u, v) in edges {
        out[u as usize] += 1;
        inc[v as usize] += 1;
    }
    let isolated = (0..nodes as usize).filter(|&i| out[i] == 0 && inc[i] == 0).count();
    format!(
        "max out-degree {}, max in-degree {}, {:.1}% of nodes isolated",
        out.iter().max().unwrap_or(&0),
        inc.iter().max().unwrap_or(&0),
        100.0 * isolated as f64 / nodes as f64
    )
}

/// Pre-drawn random vertices and pairs, so the measured loop holds only the read.
pub struct Inputs {
    vertices: Vec<NodeId>,
    pairs: Vec<(NodeId, NodeId)>,
}

const INPUTS: usize = 1 << 20;

impl Inputs {
    pub fn new(edges: &[(u32, u32)], nodes: u64, seed: u64) -> Inputs {
        let mut rng = SplitMix(seed);
        let vertices = (0..INPUTS).map(|_| NodeId(rng.below(nodes))).collect();
        let pairs = (0..INPUTS)
            .map(|_| {
                if rng.next_u64() & 1 == 0 {
                    let (u, v) = edges[rng.below(edges.len() as u64) as usize];
                    (NodeId(u64::from(u)), NodeId(u64::from(v)))
                } else {
                    (NodeId(rng.below(nodes)), NodeId(rng.below(nodes)))
                }
            })
            .collect();
        Inputs { vertices, pairs }
    }
}

#[derive(Clone, Copy, Debug)]
enum ReadOp {
    FindEdge,
    OutEdges,
    InEdges,
    Neighbours,
    CountWeight,
    Degree,
    DegreeOut,
}

/// The single-operation cases: name, operation, target ops/s.
const CASES: [(&str, ReadOp, f64); 7] = [
    ("find edge (`has_edge` Out)", ReadOp::FindEdge, 5e6),
    ("out-edges (`visit_rels` Out)", ReadOp::OutEdges, 5e6),
    ("in-edges (`visit_rels` In)", ReadOp::InEdges, 5e6),
    ("unique neighbours (`neighbours` Both)", ReadOp::Neighbours, 5e6),
    ("count + summed weight (`count_and_weight` In)", ReadOp::CountWeight, 5e6),
    ("degree count (`degree` Both)", ReadOp::Degree, 20e6),
    ("degree count (`degree` Out)", ReadOp::DegreeOut, 20e6),
];

const MIX: [ReadOp; 6] =
    [ReadOp::FindEdge, ReadOp::OutEdges, ReadOp::InEdges, ReadOp::Neighbours, ReadOp::CountWeight, ReadOp::Degree];

/// One read; returns something derived from the result so the optimiser cannot drop it.
#[inline]
fn read_once(g: &GraphState, op: ReadOp, i: usize, inputs: &Inputs, weight: PropKeyId) -> u64 {
    let v = inputs.vertices[i & (INPUTS - 1)];
    let sum_rels = |dir| {
        let mut s = 0u64;
        let _ = g.visit_rels::<()>(v, dir, TypeFilter::All, |e| {
            s = s.wrapping_add(e.rel.0);
            ControlFlow::Continue(())
        });
        s
    };
    match op {
        ReadOp::FindEdge => {
            let (a, b) = inputs.pairs[i & (INPUTS - 1)];
            u64::from(g.has_edge(a, b, Direction::Out, TypeFilter::All))
        }
        ReadOp::OutEdges => sum_rels(Direction::Out),
        ReadOp::InEdges => sum_rels(Direction::In),
        ReadOp::Neighbours => g.neighbours(v, Direction::Both, TypeFilter::All).len() as u64,
        ReadOp::CountWeight => {
            let (n, w) = g.count_and_weight(v, Direction::In, TypeFilter::All, weight);
            n.wrapping_add(w.to_bits())
        }
        ReadOp::Degree => g.degree(v, Direction::Both, TypeFilter::All),
        ReadOp::DegreeOut => g.degree(v, Direction::Out, TypeFilter::All),
    }
}

fn reads(cfg: &Config, g: &Patent, inputs: &Inputs, label: &str, table: &mut Table) {
    let snapshot = g.store.read();
    for (name, op, target) in CASES {
        let (mut i, mut acc) = (0usize, 0u64);
        let ops = rate(cfg.budget, 0, || {
            for _ in 0..4096 {
                acc = acc.wrapping_add(read_once(&snapshot, op, i, inputs, g.weight));
                i += 1;
            }
            4096
        });
        std::hint::black_box(acc);
        table.rows.push(Row::rate(format!("{name}, {label}"), ops, "ops/s", Target::AtLeast(target)));
    }
    let one = mixed(cfg, &snapshot, inputs, g.weight, 1);
    let two = mixed(cfg, &snapshot, inputs, g.weight, 2);
    table.rows.push(Row::new(format!("mixed, 1 thread, {label}"), one, "ops/s", Target::Info));
    table.rows.push(Row::new(format!("mixed, 2 threads, {label}"), two, "ops/s", Target::Info));
    table.rows.push(Row::new(format!("2 threads ÷ 1 thread, {label}"), two / one, "×", Target::AtLeast(1.8)));
}

/// Total ops/s of `threads` threads running the six-operation mix, each on its own snapshot clone.
fn mixed(cfg: &Config, snapshot: &ReadTxn, inputs: &Inputs, weight: PropKeyId, threads: usize) -> f64 {
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (snap, barrier) = (snapshot.clone(), &barrier);
                s.spawn(move || {
                    barrier.wait();
                    // Threads start far apart in the inputs so they do not share cache lines of results.
                    let (mut i, mut acc) = (t * (INPUTS / 2 + 6), 0u64);
                    let ops = rate(cfg.budget * 2, 0, || {
                        for _ in 0..1024 {
                            acc = acc.wrapping_add(read_once(&snap, MIX[i % MIX.len()], i, inputs, weight));
                            i += 1;
                        }
                        1024
                    });
                    std::hint::black_box(acc);
                    ops.per_sec
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("reader thread")).sum()
    })
}
