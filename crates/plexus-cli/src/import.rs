//! `plexus import`: edge lists into a new database.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use plexus_import::edgelist::{Delimiter, Format, IdType};
use plexus_import::import::{import_edge_lists, EdgeImport};

#[derive(Args)]
pub struct ImportArgs {
    /// Directory of the new database (must not exist, or be empty).
    #[arg(long, default_value = "plexus-data")]
    data: PathBuf,
    /// Edge-list file: `source,target[,weight]` per line; repeatable; `.gz` and `.zst` are decompressed.
    #[arg(long = "edges", required = true)]
    edges: Vec<PathBuf>,
    /// Field separator: comma, tab or space (detected when omitted).
    #[arg(long, value_parser = Delimiter::parse)]
    delimiter: Option<Delimiter>,
    /// The first line is a header.
    #[arg(long, conflicts_with = "no_header")]
    header: bool,
    /// The first line is data.
    #[arg(long)]
    no_header: bool,
    /// Vertex ids are integers or strings (detected when omitted).
    #[arg(long, value_parser = ["integer", "string"])]
    id_type: Option<String>,
    /// Relationship type of the edges.
    #[arg(long = "type", default_value = "EDGE")]
    rel_type: String,
    /// Label of the created nodes; their id is stored as the unique key property `id`.
    #[arg(long, default_value = "Node")]
    label: String,
    /// Store every edge in both directions.
    #[arg(long)]
    undirected: bool,
    /// Skip up to N malformed lines (reported) instead of failing on the first.
    #[arg(long, default_value_t = 0)]
    skip_bad_lines: usize,
}

pub fn run(args: ImportArgs) -> Result<ExitCode, String> {
    let header = match (args.header, args.no_header) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let id_type = args.id_type.as_deref().map(|t| if t == "integer" { IdType::Integer } else { IdType::String });
    let options = EdgeImport {
        label: args.label,
        key: "id".into(),
        rel_type: args.rel_type,
        undirected: args.undirected,
        format: Format { delimiter: args.delimiter, header, id_type },
        skip_bad_lines: args.skip_bad_lines,
    };
    let summary = import_edge_lists(&args.data, &args.edges, &options, |line| eprintln!("plexus import: {line}"))
        .map_err(|e| e.to_string())?;
    for (path, bad) in &summary.bad_lines {
        eprintln!("plexus import: skipped {}: {bad}", path.display());
    }
    let secs = summary.total().as_secs_f64();
    println!(
        "imported {} nodes and {} relationships into {} in {:.2} s ({:.2} M edges/s; {} bytes on disk, {:.2} bytes per relationship)",
        summary.nodes,
        summary.relationships,
        args.data.display(),
        secs,
        summary.relationships as f64 / secs.max(1e-9) / 1e6,
        summary.bytes_on_disk,
        summary.bytes_on_disk as f64 / summary.relationships.max(1) as f64
    );
    Ok(ExitCode::SUCCESS)
}
