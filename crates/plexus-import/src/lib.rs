//! Bulk import tooling for Plexus.
//!
//! [`generate`] writes synthetic graphs as edge-list files (`source,target[,weight]`, one edge per line,
//! optionally gzip- or zstd-compressed): Graph500 R-MAT/Kronecker graphs, presets shaped like the data sets of
//! published graph-database write-ups, and GuancialeDB's items/people/likes graph. Generation is deterministic
//! for a given seed, streams in bounded memory and runs on all cores.

pub mod generate;
