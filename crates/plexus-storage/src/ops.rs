//! Redo operations: what a transaction did, in a form that can be replayed onto any later state.
//!
//! A transaction records these as it works; the committer replays them onto the newest state when another commit
//! got in first, the write-ahead log stores them, and recovery replays them. Ids are decided when the operation is
//! recorded, so replay is deterministic.

use crate::catalog::TokenKind;
use crate::codec::{put_str, put_u8, put_value, put_varint, DecodeError, DecodeResult, Reader};
use crate::ids::{LabelId, NodeId, PropKeyId, RelId, TypeId};
use crate::records::{Labels, PropMap, Props};
use crate::value::Value;

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A token created before the operations that use it.
    Token {
        kind: TokenKind,
        id: u32,
        name: String,
    },
    /// The properties are the map the node gets (sorted by key, one value each, no nulls), shared between the
    /// operation and every state it is applied to: a node created in a transaction is one map in memory, not a
    /// list for the log and a copy for the graph.
    CreateNode {
        id: NodeId,
        labels: Labels,
        props: Props,
    },
    /// Creates `count` nodes with the consecutive ids from `first`, none with labels or properties. Ids come in
    /// runs from a thread's block, so a transaction creating many bare nodes records one operation, not one each.
    CreateEmptyNodes {
        first: NodeId,
        count: u64,
    },
    /// Sets a node property; `Value::Null` removes it.
    SetNodeProp {
        id: NodeId,
        key: PropKeyId,
        value: Value,
    },
    AddLabel {
        id: NodeId,
        label: LabelId,
    },
    RemoveLabel {
        id: NodeId,
        label: LabelId,
    },
    /// Deletes a node that has no relationships left.
    DeleteNode {
        id: NodeId,
    },
    CreateRel {
        id: RelId,
        ty: TypeId,
        src: NodeId,
        dst: NodeId,
        props: Vec<(PropKeyId, Value)>,
    },
    SetRelProp {
        id: RelId,
        key: PropKeyId,
        value: Value,
    },
    DeleteRel {
        id: RelId,
    },
    /// Declares a unique key; `name` is the one its creator gave, if any (the schema's reader derives one
    /// otherwise).
    DeclareUniqueKey {
        label: LabelId,
        key: PropKeyId,
        name: Option<String>,
    },
    DropUniqueKey {
        label: LabelId,
        key: PropKeyId,
    },
    /// Creates a property index on `(label, key)` over the nodes that exist when it applies; `name` is the one
    /// its creator gave, if any.
    CreateIndex {
        label: LabelId,
        key: PropKeyId,
        name: Option<String>,
    },
    DropIndex {
        label: LabelId,
        key: PropKeyId,
    },
    /// Creates a property index on the relationships of type `ty` holding `key`, over those that exist when it
    /// applies; `name` is the one its creator gave, if any.
    CreateRelIndex {
        ty: TypeId,
        key: PropKeyId,
        name: Option<String>,
        /// Backs a uniqueness constraint: no two relationships of the type may share a value.
        unique: bool,
    },
    DropRelIndex {
        ty: TypeId,
        key: PropKeyId,
    },
    /// Creates an index on two or more properties of the nodes of `label`, in the order given, over the nodes
    /// that exist when it applies; `name` is the one its creator gave, if any.
    CreateCompositeIndex {
        label: LabelId,
        keys: Vec<PropKeyId>,
        name: Option<String>,
        /// Backs a uniqueness constraint: no two nodes of the label may share all the values.
        unique: bool,
    },
    DropCompositeIndex {
        label: LabelId,
        keys: Vec<PropKeyId>,
    },
}

const OP_TOKEN: u8 = 1;
const OP_CREATE_NODE: u8 = 2;
const OP_SET_NODE_PROP: u8 = 3;
const OP_ADD_LABEL: u8 = 4;
const OP_REMOVE_LABEL: u8 = 5;
const OP_DELETE_NODE: u8 = 6;
const OP_CREATE_REL: u8 = 7;
const OP_SET_REL_PROP: u8 = 8;
const OP_DELETE_REL: u8 = 9;
const OP_DECLARE_KEY: u8 = 10;
const OP_DROP_KEY: u8 = 11;
const OP_CREATE_INDEX: u8 = 12;
const OP_DROP_INDEX: u8 = 13;
const OP_CREATE_EMPTY_NODES: u8 = 14;
/// A unique key or index with a name. Without one they keep the tags above, so logs written before names existed
/// read as they were, and a log with no name in it is still read by builds from before.
const OP_DECLARE_NAMED_KEY: u8 = 15;
const OP_CREATE_NAMED_INDEX: u8 = 16;
/// Relationship property indexes, named or not.
const OP_CREATE_REL_INDEX: u8 = 17;
const OP_CREATE_NAMED_REL_INDEX: u8 = 18;
const OP_DROP_REL_INDEX: u8 = 19;
/// Composite indexes, named or not.
const OP_CREATE_COMPOSITE_INDEX: u8 = 20;
const OP_CREATE_NAMED_COMPOSITE_INDEX: u8 = 21;
const OP_DROP_COMPOSITE_INDEX: u8 = 22;
/// Indexes backing uniqueness constraints (relationship property, composite); the name follows as an option.
const OP_CREATE_UNIQUE_REL_INDEX: u8 = 23;
const OP_CREATE_UNIQUE_COMPOSITE_INDEX: u8 = 24;

fn put_keys(buf: &mut Vec<u8>, keys: &[PropKeyId]) {
    put_varint(buf, keys.len() as u64);
    for k in keys {
        put_varint(buf, k.0 as u64);
    }
}

fn read_keys(r: &mut Reader) -> DecodeResult<Vec<PropKeyId>> {
    let n = r.count(1)?;
    (0..n).map(|_| Ok(PropKeyId(r.u32v()?))).collect()
}

/// The tag of an index's creation from its kind's `[plain, named, unique]` tags.
fn index_tag([plain, named, unique_tag]: [u8; 3], name: &Option<String>, unique: bool) -> u8 {
    match (unique, name) {
        (true, _) => unique_tag,
        (false, Some(_)) => named,
        (false, None) => plain,
    }
}

/// The name of an operation whose tag leaves it open: a presence byte, then the name. Under `optional` false
/// the tag said whether one follows, and a name follows only when there is one.
fn put_name(buf: &mut Vec<u8>, name: &Option<String>, optional: bool) {
    if optional {
        put_u8(buf, name.is_some() as u8);
    }
    if let Some(name) = name {
        put_str(buf, name);
    }
}

fn read_optional_name(r: &mut Reader) -> DecodeResult<Option<String>> {
    match r.u8()? {
        0 => Ok(None),
        1 => Ok(Some(r.str()?.to_string())),
        other => Err(DecodeError(format!("name presence byte {other}, not 0 or 1"))),
    }
}

fn put_props(buf: &mut Vec<u8>, props: &[(PropKeyId, Value)]) {
    put_varint(buf, props.len() as u64);
    for (k, v) in props {
        put_varint(buf, k.0 as u64);
        put_value(buf, v);
    }
}

fn read_props(r: &mut Reader) -> DecodeResult<Vec<(PropKeyId, Value)>> {
    let n = r.count(2)?;
    let mut props = Vec::with_capacity(n);
    for _ in 0..n {
        props.push((PropKeyId(r.u32v()?), r.value()?));
    }
    Ok(props)
}

impl Op {
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Op::Token { kind, id, name } => {
                put_u8(buf, OP_TOKEN);
                put_u8(buf, *kind as u8);
                put_varint(buf, *id as u64);
                put_str(buf, name);
            }
            Op::CreateNode { id, labels, props } => {
                put_u8(buf, OP_CREATE_NODE);
                put_varint(buf, id.0);
                put_varint(buf, labels.len() as u64);
                for l in labels {
                    put_varint(buf, l.0 as u64);
                }
                put_props(buf, crate::records::props_entries(props));
            }
            Op::CreateEmptyNodes { first, count } => {
                put_u8(buf, OP_CREATE_EMPTY_NODES);
                put_varint(buf, first.0);
                put_varint(buf, *count);
            }
            Op::SetNodeProp { id, key, value } => {
                put_u8(buf, OP_SET_NODE_PROP);
                put_varint(buf, id.0);
                put_varint(buf, key.0 as u64);
                put_value(buf, value);
            }
            Op::AddLabel { id, label } | Op::RemoveLabel { id, label } => {
                put_u8(buf, if matches!(self, Op::AddLabel { .. }) { OP_ADD_LABEL } else { OP_REMOVE_LABEL });
                put_varint(buf, id.0);
                put_varint(buf, label.0 as u64);
            }
            Op::DeleteNode { id } => {
                put_u8(buf, OP_DELETE_NODE);
                put_varint(buf, id.0);
            }
            Op::CreateRel { id, ty, src, dst, props } => {
                put_u8(buf, OP_CREATE_REL);
                put_varint(buf, id.0);
                put_varint(buf, ty.0 as u64);
                put_varint(buf, src.0);
                put_varint(buf, dst.0);
                put_props(buf, props);
            }
            Op::SetRelProp { id, key, value } => {
                put_u8(buf, OP_SET_REL_PROP);
                put_varint(buf, id.0);
                put_varint(buf, key.0 as u64);
                put_value(buf, value);
            }
            Op::DeleteRel { id } => {
                put_u8(buf, OP_DELETE_REL);
                put_varint(buf, id.0);
            }
            Op::DeclareUniqueKey { label, key, name } | Op::CreateIndex { label, key, name } => {
                let key_op = matches!(self, Op::DeclareUniqueKey { .. });
                let tag = match (key_op, name.is_some()) {
                    (true, false) => OP_DECLARE_KEY,
                    (true, true) => OP_DECLARE_NAMED_KEY,
                    (false, false) => OP_CREATE_INDEX,
                    (false, true) => OP_CREATE_NAMED_INDEX,
                };
                put_u8(buf, tag);
                put_varint(buf, label.0 as u64);
                put_varint(buf, key.0 as u64);
                if let Some(name) = name {
                    put_str(buf, name);
                }
            }
            Op::DropUniqueKey { label, key } | Op::DropIndex { label, key } => {
                put_u8(buf, if matches!(self, Op::DropUniqueKey { .. }) { OP_DROP_KEY } else { OP_DROP_INDEX });
                put_varint(buf, label.0 as u64);
                put_varint(buf, key.0 as u64);
            }
            Op::CreateRelIndex { ty, key, name, unique } => {
                let tags = [OP_CREATE_REL_INDEX, OP_CREATE_NAMED_REL_INDEX, OP_CREATE_UNIQUE_REL_INDEX];
                put_u8(buf, index_tag(tags, name, *unique));
                put_varint(buf, ty.0 as u64);
                put_varint(buf, key.0 as u64);
                put_name(buf, name, *unique);
            }
            Op::DropRelIndex { ty, key } => {
                put_u8(buf, OP_DROP_REL_INDEX);
                put_varint(buf, ty.0 as u64);
                put_varint(buf, key.0 as u64);
            }
            Op::CreateCompositeIndex { label, keys, name, unique } => {
                let tags =
                    [OP_CREATE_COMPOSITE_INDEX, OP_CREATE_NAMED_COMPOSITE_INDEX, OP_CREATE_UNIQUE_COMPOSITE_INDEX];
                put_u8(buf, index_tag(tags, name, *unique));
                put_varint(buf, label.0 as u64);
                put_keys(buf, keys);
                put_name(buf, name, *unique);
            }
            Op::DropCompositeIndex { label, keys } => {
                put_u8(buf, OP_DROP_COMPOSITE_INDEX);
                put_varint(buf, label.0 as u64);
                put_keys(buf, keys);
            }
        }
    }

    /// Whether the operation changes the schema (unique keys, indexes) rather than the data.
    pub fn is_schema(&self) -> bool {
        match self {
            Op::DeclareUniqueKey { .. }
            | Op::DropUniqueKey { .. }
            | Op::CreateIndex { .. }
            | Op::DropIndex { .. }
            | Op::CreateRelIndex { .. }
            | Op::DropRelIndex { .. }
            | Op::CreateCompositeIndex { .. }
            | Op::DropCompositeIndex { .. } => true,
            Op::Token { .. }
            | Op::CreateNode { .. }
            | Op::CreateEmptyNodes { .. }
            | Op::SetNodeProp { .. }
            | Op::AddLabel { .. }
            | Op::RemoveLabel { .. }
            | Op::DeleteNode { .. }
            | Op::CreateRel { .. }
            | Op::SetRelProp { .. }
            | Op::DeleteRel { .. } => false,
        }
    }

    pub fn decode(r: &mut Reader) -> DecodeResult<Op> {
        let tag = r.u8()?;
        Ok(match tag {
            OP_TOKEN => {
                let kind = TokenKind::from_u8(r.u8()?).ok_or_else(|| DecodeError("unknown token kind".into()))?;
                Op::Token { kind, id: r.u32v()?, name: r.str()?.to_string() }
            }
            OP_CREATE_NODE => {
                let id = NodeId(r.varint()?);
                let n = r.count(1)?;
                let mut labels = Labels::with_capacity(n);
                for _ in 0..n {
                    labels.push(LabelId(r.u32v()?));
                }
                Op::CreateNode { id, labels, props: PropMap::shared(read_props(r)?) }
            }
            OP_CREATE_EMPTY_NODES => {
                let first = r.varint()?;
                let count = r.varint()?;
                if count == 0 || first.checked_add(count).is_none() {
                    return Err(DecodeError(format!("a run of {count} nodes from {first} is not a valid id range")));
                }
                Op::CreateEmptyNodes { first: NodeId(first), count }
            }
            OP_SET_NODE_PROP => {
                Op::SetNodeProp { id: NodeId(r.varint()?), key: PropKeyId(r.u32v()?), value: r.value()? }
            }
            OP_ADD_LABEL => Op::AddLabel { id: NodeId(r.varint()?), label: LabelId(r.u32v()?) },
            OP_REMOVE_LABEL => Op::RemoveLabel { id: NodeId(r.varint()?), label: LabelId(r.u32v()?) },
            OP_DELETE_NODE => Op::DeleteNode { id: NodeId(r.varint()?) },
            OP_CREATE_REL => Op::CreateRel {
                id: RelId(r.varint()?),
                ty: TypeId(r.u32v()?),
                src: NodeId(r.varint()?),
                dst: NodeId(r.varint()?),
                props: read_props(r)?,
            },
            OP_SET_REL_PROP => Op::SetRelProp { id: RelId(r.varint()?), key: PropKeyId(r.u32v()?), value: r.value()? },
            OP_DELETE_REL => Op::DeleteRel { id: RelId(r.varint()?) },
            OP_DECLARE_KEY | OP_DECLARE_NAMED_KEY => {
                let (label, key) = (LabelId(r.u32v()?), PropKeyId(r.u32v()?));
                let name = if tag == OP_DECLARE_NAMED_KEY { Some(r.str()?.to_string()) } else { None };
                Op::DeclareUniqueKey { label, key, name }
            }
            OP_DROP_KEY => Op::DropUniqueKey { label: LabelId(r.u32v()?), key: PropKeyId(r.u32v()?) },
            OP_CREATE_INDEX | OP_CREATE_NAMED_INDEX => {
                let (label, key) = (LabelId(r.u32v()?), PropKeyId(r.u32v()?));
                let name = if tag == OP_CREATE_NAMED_INDEX { Some(r.str()?.to_string()) } else { None };
                Op::CreateIndex { label, key, name }
            }
            OP_DROP_INDEX => Op::DropIndex { label: LabelId(r.u32v()?), key: PropKeyId(r.u32v()?) },
            OP_CREATE_UNIQUE_REL_INDEX => {
                let (ty, key) = (TypeId(r.u32v()?), PropKeyId(r.u32v()?));
                Op::CreateRelIndex { ty, key, name: read_optional_name(r)?, unique: true }
            }
            OP_CREATE_UNIQUE_COMPOSITE_INDEX => {
                let (label, keys) = (LabelId(r.u32v()?), read_keys(r)?);
                Op::CreateCompositeIndex { label, keys, name: read_optional_name(r)?, unique: true }
            }
            OP_CREATE_REL_INDEX | OP_CREATE_NAMED_REL_INDEX => {
                let (ty, key) = (TypeId(r.u32v()?), PropKeyId(r.u32v()?));
                let name = if tag == OP_CREATE_NAMED_REL_INDEX { Some(r.str()?.to_string()) } else { None };
                Op::CreateRelIndex { ty, key, name, unique: false }
            }
            OP_DROP_REL_INDEX => Op::DropRelIndex { ty: TypeId(r.u32v()?), key: PropKeyId(r.u32v()?) },
            OP_CREATE_COMPOSITE_INDEX | OP_CREATE_NAMED_COMPOSITE_INDEX => {
                let (label, keys) = (LabelId(r.u32v()?), read_keys(r)?);
                let name = if tag == OP_CREATE_NAMED_COMPOSITE_INDEX { Some(r.str()?.to_string()) } else { None };
                Op::CreateCompositeIndex { label, keys, name, unique: false }
            }
            OP_DROP_COMPOSITE_INDEX => Op::DropCompositeIndex { label: LabelId(r.u32v()?), keys: read_keys(r)? },
            other => return Err(DecodeError(format!("unknown operation tag {other}"))),
        })
    }
}

/// Encodes one committed transaction: its version and operations.
pub fn encode_commit(buf: &mut Vec<u8>, version: u64, ops: &[Op]) {
    encode_commit_with_tokens(buf, version, &[], ops);
}

/// Encodes a committed transaction whose record must first define `tokens` (created since the last commit),
/// without copying the transaction's operations behind them.
pub fn encode_commit_with_tokens(buf: &mut Vec<u8>, version: u64, tokens: &[Op], ops: &[Op]) {
    put_varint(buf, version);
    put_varint(buf, (tokens.len() + ops.len()) as u64);
    for op in tokens.iter().chain(ops) {
        op.encode(buf);
    }
}

pub fn decode_commit(payload: &[u8]) -> DecodeResult<(u64, Vec<Op>)> {
    let mut r = Reader::new(payload);
    let version = r.varint()?;
    let n = r.count(2)?;
    let mut ops = Vec::with_capacity(n);
    for _ in 0..n {
        ops.push(Op::decode(&mut r)?);
    }
    if !r.is_empty() {
        return Err(DecodeError(format!("{} trailing bytes after the operations", r.remaining())));
    }
    Ok((version, ops))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_round_trips() {
        let ops = vec![
            Op::Token { kind: TokenKind::Label, id: 0, name: "Person".into() },
            Op::CreateNode {
                id: NodeId(5),
                labels: Labels::from_slice(&[LabelId(0)]),
                props: PropMap::shared(vec![(PropKeyId(1), Value::from("x"))]),
            },
            Op::CreateEmptyNodes { first: NodeId(64), count: 1000 },
            Op::CreateRel { id: RelId(9), ty: TypeId(0), src: NodeId(5), dst: NodeId(5), props: vec![] },
            Op::SetRelProp { id: RelId(9), key: PropKeyId(0), value: Value::Float(1.5) },
            Op::AddLabel { id: NodeId(5), label: LabelId(2) },
            Op::RemoveLabel { id: NodeId(5), label: LabelId(2) },
            Op::SetNodeProp { id: NodeId(5), key: PropKeyId(1), value: Value::Null },
            Op::DeleteRel { id: RelId(9) },
            Op::DeleteNode { id: NodeId(5) },
            Op::DeclareUniqueKey { label: LabelId(0), key: PropKeyId(1), name: None },
            Op::DeclareUniqueKey { label: LabelId(0), key: PropKeyId(1), name: Some("person_id".into()) },
            Op::DropUniqueKey { label: LabelId(0), key: PropKeyId(1) },
            Op::CreateIndex { label: LabelId(0), key: PropKeyId(1), name: None },
            Op::CreateIndex { label: LabelId(0), key: PropKeyId(1), name: Some("by name".into()) },
            Op::DropIndex { label: LabelId(3), key: PropKeyId(200) },
            Op::CreateRelIndex { ty: TypeId(2), key: PropKeyId(1), name: None, unique: false },
            Op::CreateRelIndex { ty: TypeId(2), key: PropKeyId(1), name: None, unique: true },
            Op::CreateRelIndex { ty: TypeId(2), key: PropKeyId(1), name: Some("u".into()), unique: true },
            Op::CreateRelIndex { ty: TypeId(2), key: PropKeyId(1), name: Some("since".into()), unique: false },
            Op::DropRelIndex { ty: TypeId(2), key: PropKeyId(1) },
            Op::CreateCompositeIndex {
                label: LabelId(1),
                keys: vec![PropKeyId(2), PropKeyId(0)],
                name: None,
                unique: false,
            },
            Op::CreateCompositeIndex {
                label: LabelId(1),
                keys: vec![PropKeyId(2), PropKeyId(3)],
                name: Some("c".into()),
                unique: false,
            },
            Op::CreateCompositeIndex {
                label: LabelId(1),
                keys: vec![PropKeyId(2), PropKeyId(3)],
                name: Some("cu".into()),
                unique: true,
            },
            Op::CreateCompositeIndex {
                label: LabelId(1),
                keys: vec![PropKeyId(3), PropKeyId(0)],
                name: None,
                unique: true,
            },
            Op::DropCompositeIndex { label: LabelId(1), keys: vec![PropKeyId(2), PropKeyId(0)] },
        ];
        let mut buf = Vec::new();
        encode_commit(&mut buf, 42, &ops);
        let (v, back) = decode_commit(&buf).unwrap();
        assert_eq!(v, 42);
        assert_eq!(back, ops);
        for cut in 0..buf.len() {
            assert!(decode_commit(&buf[..cut]).is_err());
        }
    }

    /// The byte layout of operations is fixed by logs already on disk: adding operations must not change it.
    #[test]
    fn encodings_are_stable() {
        let mut buf = Vec::new();
        Op::DeclareUniqueKey { label: LabelId(1), key: PropKeyId(2), name: None }.encode(&mut buf);
        Op::DropUniqueKey { label: LabelId(1), key: PropKeyId(2) }.encode(&mut buf);
        Op::CreateIndex { label: LabelId(1), key: PropKeyId(2), name: None }.encode(&mut buf);
        Op::DropIndex { label: LabelId(1), key: PropKeyId(2) }.encode(&mut buf);
        Op::CreateEmptyNodes { first: NodeId(3), count: 4 }.encode(&mut buf);
        assert_eq!(buf, [10, 1, 2, 11, 1, 2, 12, 1, 2, 13, 1, 2, 14, 3, 4]);
        buf.clear();
        Op::DeclareUniqueKey { label: LabelId(1), key: PropKeyId(2), name: Some("k".into()) }.encode(&mut buf);
        Op::CreateIndex { label: LabelId(1), key: PropKeyId(2), name: Some("i".into()) }.encode(&mut buf);
        assert_eq!(buf, [15, 1, 2, 1, b'k', 16, 1, 2, 1, b'i']);
        buf.clear();
        Op::CreateRelIndex { ty: TypeId(1), key: PropKeyId(2), name: None, unique: false }.encode(&mut buf);
        Op::CreateRelIndex { ty: TypeId(1), key: PropKeyId(2), name: Some("r".into()), unique: false }.encode(&mut buf);
        Op::DropRelIndex { ty: TypeId(1), key: PropKeyId(2) }.encode(&mut buf);
        assert_eq!(buf, [17, 1, 2, 18, 1, 2, 1, b'r', 19, 1, 2]);
        buf.clear();
        Op::CreateCompositeIndex {
            label: LabelId(1),
            keys: vec![PropKeyId(2), PropKeyId(3)],
            name: None,
            unique: false,
        }
        .encode(&mut buf);
        Op::DropCompositeIndex { label: LabelId(1), keys: vec![PropKeyId(2), PropKeyId(3)] }.encode(&mut buf);
        assert_eq!(buf, [20, 1, 2, 2, 3, 22, 1, 2, 2, 3]);
        buf.clear();
        Op::CreateRelIndex { ty: TypeId(1), key: PropKeyId(2), name: None, unique: true }.encode(&mut buf);
        Op::CreateCompositeIndex {
            label: LabelId(1),
            keys: vec![PropKeyId(2), PropKeyId(3)],
            name: Some("u".into()),
            unique: true,
        }
        .encode(&mut buf);
        assert_eq!(buf, [23, 1, 2, 0, 24, 1, 2, 2, 3, 1, 1, b'u']);
    }

    #[test]
    fn empty_runs_and_overflowing_runs_are_refused() {
        for (first, count) in [(5, 0), (u64::MAX - 1, 2)] {
            let mut buf = Vec::new();
            put_u8(&mut buf, OP_CREATE_EMPTY_NODES);
            put_varint(&mut buf, first);
            put_varint(&mut buf, count);
            assert!(Op::decode(&mut Reader::new(&buf)).is_err(), "{first} + {count}");
        }
    }
}
