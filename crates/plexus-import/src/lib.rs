//! Bulk import and graph generators.
//!
//! - [`edgelist`]: parsing `source,target[,weight]` edge lists into dense vertex numbers.
//! - [`import`]: turning parsed input into a new database directory. Import builds the whole graph in memory
//!   with the storage engine's bulk builder and writes it as a checkpoint, so a new database is written once,
//!   sequentially, and appears complete or not at all.
//! - [`generate`]: synthetic graphs as edge-list files (optionally gzip- or zstd-compressed): Graph500
//!   R-MAT/Kronecker graphs, presets shaped like the data sets of published graph-database write-ups, and
//!   GuancialeDB's items/people/likes graph; deterministic for a seed, streaming in bounded memory, on all cores.

pub mod edgelist;
pub mod generate;
pub mod import;
