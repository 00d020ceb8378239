//! The Plexus storage engine: an in-memory property graph with snapshot isolation, made durable by a write-ahead
//! log with group commit and by compressed checkpoints.
//!
//! Layers, bottom up:
//! - [`value`], [`codec`]: what a property can hold and how values are written to disk.
//! - [`pvec`], [`adjacency`], [`records`], [`rel_props`]: the copy-on-write structures a snapshot is made of.
//! - [`graph`]: one version of the graph, with every read and the checked application of redo [`ops`]; [`flat`]:
//!   the flat adjacency a bulk-loaded graph reads from while its leaves are unchanged;
//!   [`index`]: the ordered property indexes it maintains.
//! - [`txn`], [`store`]: transactions, conflict detection, the commit path and publication of snapshots.
//! - [`wal`], [`checkpoint`], [`recovery`]: durability.

pub mod adjacency;
pub mod bulk;
mod bulk_adjacency;
pub mod catalog;
pub mod check;
pub mod checkpoint;
pub mod codec;
pub mod edge_list_image;
pub mod error;
pub mod flat;
pub mod fxhash;
pub mod graph;
pub mod ids;
pub mod idvec;
pub mod image;
pub mod index;
pub mod keymap;
pub mod ops;
mod parallel;
pub mod point;
pub mod prefetch;
mod process;
pub mod pset;
pub mod pvec;
pub mod records;
pub mod recovery;
pub mod rel_props;
pub mod store;
pub mod txn;
pub mod value;
pub mod wal;

/// log2 of the number of ids per leaf.
pub const LEAF_BITS: u32 = 6;
/// Ids per leaf: nodes and relationships live in leaves of this many consecutive ids.
pub const LEAF_SIZE: usize = 1 << LEAF_BITS;

pub use adjacency::TypeFilter;
pub use catalog::{Catalog, TokenKind};
pub use error::{Result, StorageError};
pub use graph::{GraphState, RelEntry, RelRecord};
pub use ids::{Direction, LabelId, NodeId, PropKeyId, RelId, TypeId};
pub use idvec::IdSlice;
pub use index::{CompositeIndex, IndexKey, PropertyIndex, RelPropertyIndex};
pub use records::PropMap;
pub use recovery::RecoveryReport;
pub use store::{Backup, Durability, Identity, Options, Store};
pub use txn::{EdgeUpsert, ReadTxn, Savepoint, UpsertCounts, WriteTxn};
pub use value::Value;
