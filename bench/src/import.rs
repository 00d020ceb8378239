//! Import workloads: an edge list shaped like the patent citation graph, written as CSV, then parsed only and
//! imported into a new database in the same run, so the import rate can be compared with the parse rate.

use std::path::Path;
use std::time::Instant;

use plexus_import::edgelist::{self, Format};
use plexus_import::import::{import_edge_lists, read_input, EdgeImport};

use crate::gen::{rmat_edges, PATENT_EDGES, PATENT_NODES};
use crate::report::{Row, Table, Target};
use crate::{Config, Rate};

/// Bytes this process has written to storage so far (`/proc/self/io`), for write amplification.
fn bytes_written() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("write_bytes:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// Peak resident memory since the last [`reset_peak_rss`] (`VmHWM`).
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .map_or(0, |kb: u64| kb * 1024)
}

/// Restarts the peak-memory count (Linux: writing 5 to `clear_refs`).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
        .unwrap_or(0)
}

fn write_csv(path: &Path, edges: &[(u32, u32)]) {
    let mut out = Vec::with_capacity(edges.len() * 16);
    for &(u, v) in edges {
        out.extend_from_slice(u.to_string().as_bytes());
        out.push(b',');
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    }
    std::fs::write(path, out).expect("write the edge list");
}

/// The setup line naming the time of each import phase.
fn phases(summary: &plexus_import::import::ImportSummary) -> String {
    format!(
        "phases of the import: read {:.2} s, parse {:.2} s, build {:.2} s, write {:.2} s",
        summary.read.as_secs_f64(),
        summary.parse.as_secs_f64(),
        summary.build.as_secs_f64(),
        summary.write.as_secs_f64()
    )
}

/// I1: the patents-shaped edge list.
pub fn patents(cfg: &Config) -> Table {
    let nodes = cfg.scaled(PATENT_NODES, 1000);
    let edges = cfg.scaled(PATENT_EDGES, 5000);
    let work = cfg.durable_dir.with_extension("import");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("create the import work directory");
    let csv = work.join("patents.csv");
    write_csv(&csv, &rmat_edges(nodes, edges, cfg.seed ^ 0x1));
    let file_bytes = std::fs::metadata(&csv).map(|m| m.len()).unwrap_or(0);

    let (start, cpu) = (Instant::now(), crate::process_cpu_secs());
    let bytes = read_input(&csv).expect("read the edge list");
    let parsed = edgelist::parse(&bytes, &Format::default(), 0).expect("parse the edge list");
    let parse_secs = start.elapsed().as_secs_f64();
    let parse_cpu = crate::process_cpu_secs() - cpu;
    assert_eq!(parsed.src.len() as u64, edges);
    drop((parsed, bytes));

    let db = work.join("db");
    let written_before = bytes_written();
    let rss_before = crate::report::rss_bytes();
    reset_peak_rss();
    let (start, cpu) = (Instant::now(), crate::process_cpu_secs());
    let summary = import_edge_lists(&db, std::slice::from_ref(&csv), &EdgeImport::default(), |_| {}).expect("import");
    let import_secs = start.elapsed().as_secs_f64();
    let import_cpu = crate::process_cpu_secs() - cpu;
    let written = bytes_written().saturating_sub(written_before);
    let peak_growth = peak_rss().saturating_sub(rss_before);
    let on_disk = dir_size(&db);
    let _ = std::fs::remove_dir_all(&work);

    let parse_rate = edges as f64 / parse_secs;
    let import_rate = edges as f64 / import_secs;
    let mut t = Table::new("i1", "import the patents-shaped edge list");
    t.setup.push(format!(
        "R-MAT edge list, {nodes} vertices, {edges} edges, sorted by source, {file_bytes} bytes of CSV, in the \
         repository target dir; `plexus import` defaults (label `Node` with unique key `id`, type `EDGE`)"
    ));
    t.setup.push(phases(&summary));
    t.rows.push(Row::rate(
        "import, end to end",
        Rate::new(edges, import_secs, import_cpu),
        "edges/s",
        Target::AtLeast(5e6),
    ));
    t.rows.push(Row::rate("read + parse only", Rate::new(edges, parse_secs, parse_cpu), "edges/s", Target::Info));
    t.rows.push(Row::new("import rate ÷ parse rate", import_rate / parse_rate, "×", Target::AtLeast(0.5)));
    t.rows.push(Row::new(
        "write amplification (bytes written ÷ final size)",
        written as f64 / on_disk.max(1) as f64,
        "×",
        Target::AtMost(2.0),
    ));
    t.rows.push(Row::new("size on disk per relationship", on_disk as f64 / edges as f64, "bytes", Target::Info));
    t.rows.push(Row::new(
        "peak memory growth during the import",
        peak_growth as f64 / (1u64 << 30) as f64,
        "GiB",
        Target::Info,
    ));
    t
}

/// I2: the human-brain-shaped edge list (`plexus generate human-brain`: edges in random order, as the command line
/// writes them), imported through the same path as `plexus import --edges`.
pub fn human_brain(cfg: &Config) -> Table {
    use plexus_import::generate::{generate_file, Graph, Options, Preset};
    let work = cfg.durable_dir.with_extension("import-brain");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("create the import work directory");
    let csv = work.join("human-brain.csv");
    let graph = Graph::Preset { preset: Preset::HumanBrain, scale: cfg.scale };
    let options = Options { seed: cfg.seed, ..Options::default() };
    let generated = generate_file(&graph, &options, &csv, &mut |_| {}).expect("generate the edge list");
    let (nodes, edges) = (generated.nodes, generated.edges);

    let (start, cpu) = (Instant::now(), crate::process_cpu_secs());
    let bytes = read_input(&csv).expect("read the edge list");
    let parsed = edgelist::parse(&bytes, &Format::default(), 0).expect("parse the edge list");
    let (parse_secs, parse_cpu) = (start.elapsed().as_secs_f64(), crate::process_cpu_secs() - cpu);
    assert_eq!(parsed.src.len() as u64, edges);
    drop((parsed, bytes));

    let db = work.join("db");
    let rss_before = crate::report::rss_bytes();
    reset_peak_rss();
    let (start, cpu) = (Instant::now(), crate::process_cpu_secs());
    let summary = import_edge_lists(&db, std::slice::from_ref(&csv), &EdgeImport::default(), |_| {}).expect("import");
    let (import_secs, import_cpu) = (start.elapsed().as_secs_f64(), crate::process_cpu_secs() - cpu);
    let peak = peak_rss();
    let peak_growth = peak.saturating_sub(rss_before);
    let on_disk = dir_size(&db);
    let _ = std::fs::remove_dir_all(&work);

    let mut t = Table::new("i2", "import the human-brain-shaped edge list");
    t.setup.push(format!(
        "`plexus generate human-brain` at scale {}: {nodes} vertices, {edges} edges in random order, {} bytes of \
         CSV, in the repository target dir; `plexus import` defaults",
        cfg.scale, generated.bytes
    ));
    t.setup.push(phases(&summary));
    t.rows.push(Row::rate(
        "import, end to end",
        Rate::new(edges, import_secs, import_cpu),
        "edges/s",
        Target::AtLeast(5e6),
    ));
    t.rows.push(Row::rate("read + parse only", Rate::new(edges, parse_secs, parse_cpu), "edges/s", Target::Info));
    t.rows.push(Row::new(
        "peak resident memory of the process",
        peak as f64 / (1u64 << 30) as f64,
        "GiB",
        Target::AtMost(6.0 * 1e9 / (1u64 << 30) as f64),
    ));
    t.rows.push(Row::new(
        "peak memory growth during the import",
        peak_growth as f64 / (1u64 << 30) as f64,
        "GiB",
        Target::Info,
    ));
    t.rows.push(Row::new("size on disk per relationship", on_disk as f64 / edges as f64, "bytes", Target::AtMost(5.0)));
    t
}
