//! Errors of the storage engine.

use std::path::PathBuf;

use crate::ids::{LabelId, NodeId, PropKeyId, RelId, TypeId};
use crate::value::Value;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("{0} does not exist")]
    NodeNotFound(NodeId),
    #[error("{0} does not exist")]
    RelNotFound(RelId),
    #[error("cannot delete {0}: it still has {1} relationship(s); detach-delete it to remove them too")]
    NodeHasRelationships(NodeId, u64),
    #[error("constraint violation: {0}")]
    ConstraintViolation(String),
    /// A unique key's value is held by another node. A write transaction names the label and key in its
    /// message ([`StorageError::ConstraintViolation`]); this form, with token ids, is for code without the
    /// catalog.
    #[error("constraint violation: {holder} already has label {} with key {} = {value:?}", label.0, key.0)]
    UniqueKeyTaken { holder: NodeId, label: LabelId, key: PropKeyId, value: Value },
    /// [`StorageError::UniqueKeyTaken`] for a uniqueness constraint on several properties: `holder` has every
    /// one of `keys` equal to `values`.
    #[error("constraint violation: {holder} already has label {} with keys {keys:?} = {values:?}", label.0)]
    CompositeKeyTaken { holder: NodeId, label: LabelId, keys: Vec<PropKeyId>, values: Vec<Value> },
    /// [`StorageError::UniqueKeyTaken`] for a uniqueness constraint on a relationship property.
    #[error("constraint violation: {holder} already has type {} with key {} = {value:?}", ty.0, key.0)]
    RelKeyTaken { holder: RelId, ty: TypeId, key: PropKeyId, value: Value },
    #[error("invalid value: {0}")]
    InvalidValue(String),
    #[error("write conflict: {0} changed in a transaction that committed after this one began; retry the transaction")]
    Conflict(String),
    #[error("the transaction is read-only")]
    ReadOnly,
    #[error("database at {path} was opened read-only: it cannot commit or checkpoint")]
    ReadOnlyDatabase { path: PathBuf },
    #[error(
        "database at {path} was opened by process {owner}, and this is a child forked from it: it cannot write \
         there (the log and the lock are the parent's). Open the database in the child instead, or start workers \
         with 'spawn' rather than 'fork'"
    )]
    ForkedProcess { path: PathBuf, owner: u32 },
    #[error("database at {path} is locked by another process (or another open handle in this one)")]
    Locked { path: PathBuf },
    #[error("{path}: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error("{path}: belongs to another database (id {found}, expected {expected})")]
    ForeignFile { path: PathBuf, found: String, expected: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the database refuses writes until it is reopened: {0}")]
    Poisoned(String),
}

impl StorageError {
    /// What the error says, without the refusal's own preface when it is one: for a message that refuses writes
    /// because of it (which adds the preface once).
    pub fn cause(&self) -> String {
        match self {
            StorageError::Poisoned(why) => why.clone(),
            other => other.to_string(),
        }
    }

    /// True for errors a client should answer by retrying the whole transaction.
    pub fn is_retryable(&self) -> bool {
        matches!(self, StorageError::Conflict(_))
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StorageError::Io { path: path.into(), source }
    }
}

pub type Result<T, E = StorageError> = std::result::Result<T, E>;
