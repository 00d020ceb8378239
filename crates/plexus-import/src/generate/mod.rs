//! Synthetic graph generators writing edge-list files: the public entry points, parameters and errors.
//!
//! Every generator is a [`Source`] cut into fixed-size chunks of edges. A chunk's random numbers come from a
//! generator seeded by (seed, chunk index) only, so the output is byte-for-byte the same whatever the number of
//! threads; worker threads format chunks into byte buffers and one writer thread writes them in order
//! ([`output`]). Memory stays bounded by a few chunk buffers per thread: nothing holds the whole edge list.
//!
//! The output format is the importer's edge-list CSV: one edge per line, `source,target` or
//! `source,target,weight`, integer ids, an optional header line `source,target[,weight]`. Weights are uniform in
//! [0, 1) on a grid of 10^-6, printed with six decimals (exact, short and fast to format). A path ending in
//! `.gz` is gzip-compressed, `.zst` zstd-compressed, anything else is plain text.

mod likes;
mod output;
mod presets;
mod rmat;
pub mod snb;

#[cfg(test)]
mod tests;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use likes::Likes;
pub use output::unwritable_compression;
pub use presets::Preset;
pub use rmat::{Initiator, Rmat};
pub use snb::{Snb, SnbProgress, SnbSummary};

/// Why generation failed: bad parameters or an I/O error. Never a panic.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid parameters: {0}")]
    Invalid(String),
    #[error("cannot write {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// Which graph to generate.
#[derive(Clone, Debug)]
pub enum Graph {
    /// A Graph500 R-MAT / Kronecker graph ([`Rmat`]).
    Rmat(Rmat),
    /// A graph shaped like a published data set, counts multiplied by `scale` ([`Preset`]).
    Preset { preset: Preset, scale: f64 },
    /// GuancialeDB's items/people/likes graph ([`Likes`]).
    Likes(Likes),
}

/// Choices that apply to every generator.
#[derive(Clone, Debug)]
pub struct Options {
    pub seed: u64,
    /// Append a uniform weight in [0, 1) to every edge.
    pub weights: bool,
    /// Start with the line `source,target[,weight]`.
    pub header: bool,
    /// Worker threads formatting chunks; 0 means one per available core. The output does not depend on it.
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { seed: 42, weights: false, header: false, threads: 0 }
    }
}

/// What a run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub edges: u64,
    /// Size of the id space (ids are `0..nodes`); generators may leave some ids without edges.
    pub nodes: u64,
    /// Bytes of edge-list text before compression.
    pub text_bytes: u64,
    /// Bytes written to the output (after compression).
    pub bytes: u64,
    pub seconds: f64,
}

/// Progress report, called by the writer after each chunk.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub edges_done: u64,
    pub edges_total: u64,
}

/// A generator cut into chunks: `write_chunk` must depend only on the source's parameters and the chunk index.
pub(crate) trait Source: Sync {
    fn nodes(&self) -> u64;
    fn edges(&self) -> u64;
    fn chunks(&self) -> u64;
    /// Appends chunk `chunk`'s edges as text to `out` and returns how many it wrote.
    fn write_chunk(&self, chunk: u64, out: &mut Vec<u8>) -> u64;
}

/// Edges per chunk: about a megabyte of text, small enough to keep a few per thread, large enough that the
/// per-chunk hand-off costs nothing.
pub(crate) const CHUNK_EDGES: u64 = 1 << 16;

/// The random generator for one chunk of one stream, a function of (seed, stream, chunk) only.
pub(crate) fn chunk_rng(seed: u64, stream: u64, chunk: u64) -> plexus::random::SplitMix {
    let mut s = plexus::random::SplitMix(seed ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    let base = s.next_u64();
    let mut c = plexus::random::SplitMix(chunk.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5851_F42D_4C95_7F2D);
    plexus::random::SplitMix(base ^ c.next_u64())
}

fn source(graph: &Graph, options: &Options) -> Result<Box<dyn Source>, Error> {
    Ok(match graph {
        Graph::Rmat(r) => Box::new(r.source(options.seed, options.weights)?),
        Graph::Preset { preset, scale } => Box::new(preset.rmat(*scale)?.source(options.seed, options.weights)?),
        Graph::Likes(l) => Box::new(l.source(options.seed, options.weights)?),
    })
}

/// Checks the parameters without generating anything.
pub fn validate(graph: &Graph) -> Result<(), Error> {
    source(graph, &Options::default()).map(|_| ())
}

/// Writes the graph to `out` (uncompressed). `bytes` in the summary counts what was written to `out`.
pub fn generate_to(
    graph: &Graph,
    options: &Options,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary, std::io::Error> {
    let src = source(graph, options).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let start = Instant::now();
    let text_bytes = output::run(src.as_ref(), options, out, progress)?;
    Ok(Summary {
        edges: src.edges(),
        nodes: src.nodes(),
        text_bytes,
        bytes: text_bytes,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Writes the graph to the file `path`, compressed according to its extension (`.gz`, `.zst`).
pub fn generate_file(
    graph: &Graph,
    options: &Options,
    path: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary, Error> {
    // Validate before creating the file, so bad parameters leave nothing behind.
    let src = source(graph, options)?;
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let start = Instant::now();
    let mut sink = output::Sink::create(path).map_err(io)?;
    let text_bytes = output::run(src.as_ref(), options, &mut sink, progress).map_err(io)?;
    let bytes = sink.finish().map_err(io)?;
    Ok(Summary { edges: src.edges(), nodes: src.nodes(), text_bytes, bytes, seconds: start.elapsed().as_secs_f64() })
}
