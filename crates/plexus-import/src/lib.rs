//! Bulk import and graph generators.
//!
//! - [`edgelist`]: parsing `source,target[,weight]` edge lists into dense vertex numbers.
//! - [`import`]: turning parsed edge lists into a new database directory. Import builds the whole graph in memory
//!   with the storage engine's bulk builder and writes it as a checkpoint, so a new database is written once,
//!   sequentially, and appears complete or not at all.
//! - Node and relationship files in the format of Neo4j's offline importer: [`csv`] (records and parallel,
//!   quote-safe chunking), [`header`] (column specifications), [`values`] (typed values), [`nodes_rels`]
//!   (files parsed into columns, id spaces), [`load`] (unique keys, building the database: create mode),
//!   [`incremental`] (adding to an existing database through transactions), [`ldbc`] (the LDBC SNB CSV layout
//!   as a table of node and relationship inputs), [`progress`] (counters for a front end).
//! - [`generate`]: synthetic graphs as edge-list files (optionally gzip- or zstd-compressed): Graph500
//!   R-MAT/Kronecker graphs, presets shaped like the data sets of published graph-database write-ups, and
//!   GuancialeDB's items/people/likes graph; deterministic for a seed, streaming in bounded memory, on all cores.

pub mod csv;
pub mod edgelist;
pub mod generate;
pub mod header;
pub mod import;
pub mod incremental;
pub mod ldbc;
pub mod load;
pub mod nodes_rels;
pub mod progress;
pub mod publish;
pub mod values;
