//! Bulk import and graph generators.
//!
//! - [`edgelist`]: parsing `source,target[,weight]` edge lists into dense vertex numbers.
//! - [`import`]: turning parsed input into a new database directory.
//!
//! Import builds the whole graph in memory with the storage engine's bulk builder and writes it as a checkpoint,
//! so a new database is written once, sequentially, and appears complete or not at all.

pub mod edgelist;
pub mod import;
