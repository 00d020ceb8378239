//! Transactions. A read transaction is a pinned snapshot. A write transaction works on a private copy of its
//! snapshot (so it reads its own writes through the same code as everyone else), records redo operations and the
//! keys it wrote, and hands both to the committer.
//!
//! Creating an empty node or a relationship is checked without changing the private copy: the operation waits
//! until the transaction next reads, or does anything else, and is applied then. A small transaction that only
//! creates (one node and one relationship, say) thus never copies the leaves it touches: under concurrent
//! durable commits its operations are applied once, by the group's combiner, instead of twice. A transaction
//! whose reads come between its writes applies everything at once after its first such read (see `eager`).

use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::ops::{ControlFlow, Deref};
use std::sync::{Arc, OnceLock};

use crate::adjacency::TypeFilter;
use crate::error::{Result, StorageError};
use crate::graph::GraphState;
use crate::ids::{Direction, LabelId, NodeId, PropKeyId, RelId, TypeId};
use crate::ops::Op;
use crate::store::Shared;
use crate::value::Value;

/// A consistent, immutable view of the database at one version. Never blocks and is never blocked.
#[derive(Clone)]
pub struct ReadTxn {
    pub(crate) snapshot: Arc<GraphState>,
    pub(crate) shared: Arc<Shared>,
}

impl Deref for ReadTxn {
    type Target = GraphState;
    fn deref(&self) -> &GraphState {
        &self.snapshot
    }
}

impl ReadTxn {
    pub fn label_id(&self, name: &str) -> Option<LabelId> {
        self.shared.catalog.lookup(crate::catalog::TokenKind::Label, name).map(LabelId)
    }
    pub fn type_id(&self, name: &str) -> Option<TypeId> {
        self.shared.catalog.lookup(crate::catalog::TokenKind::Type, name).map(TypeId)
    }
    pub fn prop_key_id(&self, name: &str) -> Option<PropKeyId> {
        self.shared.catalog.lookup(crate::catalog::TokenKind::PropKey, name).map(PropKeyId)
    }
    pub fn catalog(&self) -> &crate::catalog::Catalog {
        &self.shared.catalog
    }
}

/// A key a transaction wrote, for write-write conflict detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteKey {
    /// The node's own record: created, properties or labels changed, or deleted.
    NodeRecord(u64),
    /// The node was deleted.
    NodeDeleted(u64),
    /// A relationship was added to or removed from the node.
    NodeLinked(u64),
    RelRecord(u64),
    /// A unique-key value `(label, value)` was taken or released (hashed).
    Unique(u64),
    /// An edge upsert on `(src, type, dst)` (hashed).
    EdgeMerge(u64),
    /// A property index `(label, key)` was created or dropped (hashed).
    Index(u64),
}

impl WriteKey {
    /// The keys that, written by a transaction committed after our start, conflict with our `self`.
    pub fn conflicts_with(self) -> [Option<WriteKey>; 2] {
        match self {
            WriteKey::NodeRecord(id) => [Some(WriteKey::NodeRecord(id)), None],
            WriteKey::NodeDeleted(id) => [Some(WriteKey::NodeLinked(id)), Some(WriteKey::NodeRecord(id))],
            WriteKey::NodeLinked(id) => [Some(WriteKey::NodeDeleted(id)), None],
            k @ (WriteKey::RelRecord(_) | WriteKey::Unique(_) | WriteKey::EdgeMerge(_) | WriteKey::Index(_)) => {
                [Some(k), None]
            }
        }
    }
}

fn hash_of(v: impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// One edge for [`WriteTxn::upsert_edges`]: source, type, target and the properties to set.
pub type EdgeUpsert = (NodeId, TypeId, NodeId, Vec<(PropKeyId, Value)>);

/// Outcome counts of a batch edge upsert.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpsertCounts {
    pub created: u64,
    pub updated: u64,
}

/// A read-write transaction. Dropping it without [`WriteTxn::commit`] rolls it back.
pub struct WriteTxn {
    pub(crate) shared: Arc<Shared>,
    pub(crate) start_version: u64,
    /// The state with `ops[..settled]` applied; later operations are pending (see the module documentation).
    pub(crate) state: GraphState,
    pub(crate) ops: Vec<Op>,
    pub(crate) settled: usize,
    /// Nodes created by pending operations.
    pending_nodes: IdRanges,
    /// The state with every operation applied, built by the first read while some are pending, and taken over
    /// by the next write.
    view: OnceLock<GraphState>,
    /// Set once a read came between writes: from then on every operation is applied at once, since each read
    /// that found operations pending would copy the leaves they touch all over again.
    eager: bool,
    /// Operations recorded, counting each node of a [`Op::CreateEmptyNodes`] run.
    pub(crate) op_count: usize,
    pub(crate) writes: Vec<WriteKey>,
    /// Nodes this transaction created: nobody else can have seen them, so their keys cannot conflict.
    pub(crate) created: IdRanges,
    /// Token counts already checked against (see [`crate::catalog::Catalog::check_op_cached`]).
    pub(crate) token_counts: [usize; 3],
    pub(crate) schema_change: bool,
    pub(crate) registered: bool,
    /// Names the history `ops` records: new for every transaction and after every rollback to a savepoint, so a
    /// reader of [`WriteTxn::change_log`] knows whether the operations it has seen are still a prefix of it.
    generation: u64,
}

/// Source of [`WriteTxn`] generations.
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_generation() -> u64 {
    GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Applies operations recorded as pending: they were checked when recorded, as `GraphState::apply` checks them.
pub(crate) fn apply_pending(state: &mut GraphState, ops: &[Op]) {
    for op in ops {
        state.apply(op).expect("a pending operation was checked when it was recorded");
    }
}

impl WriteTxn {
    /// A read snapshot of the transaction's state as it is now, its own writes included: reads through it see
    /// nothing the transaction writes later (its next writes copy what they change, as after any snapshot).
    pub fn snapshot(&self) -> ReadTxn {
        let state: &GraphState = self;
        ReadTxn { snapshot: Arc::new(state.clone()), shared: self.shared.clone() }
    }
}

impl Deref for WriteTxn {
    type Target = GraphState;
    fn deref(&self) -> &GraphState {
        if self.settled == self.ops.len() {
            return &self.state;
        }
        self.view.get_or_init(|| {
            let mut state = self.state.clone();
            apply_pending(&mut state, &self.ops[self.settled..]);
            state
        })
    }
}

impl Drop for WriteTxn {
    fn drop(&mut self) {
        if self.registered {
            self.shared.unregister_writer(self.start_version);
        }
        SpareLists::give_back(&mut self.ops, &mut self.writes);
    }
}

/// A thread's emptied operation and write-key lists, handed to its next transaction: a small transaction
/// otherwise allocates both and frees them again, two of the few allocations left in a single-edge commit.
/// (A `sync` commit hands its lists to the commit group instead, so those are not reused.)
#[derive(Default)]
struct SpareLists {
    ops: Vec<Op>,
    writes: Vec<WriteKey>,
}

/// Lists longer than this are freed rather than kept for the thread's next transaction.
const SPARE_LIST_CAPACITY: usize = 256;

thread_local! {
    static SPARE_LISTS: std::cell::RefCell<SpareLists> = std::cell::RefCell::new(SpareLists::default());
}

impl SpareLists {
    fn take() -> (Vec<Op>, Vec<WriteKey>) {
        SPARE_LISTS
            .try_with(|spare| {
                let mut spare = spare.borrow_mut();
                (std::mem::take(&mut spare.ops), std::mem::take(&mut spare.writes))
            })
            .unwrap_or_default()
    }

    fn give_back(ops: &mut Vec<Op>, writes: &mut Vec<WriteKey>) {
        ops.clear();
        writes.clear();
        let _ = SPARE_LISTS.try_with(|spare| {
            let mut spare = spare.borrow_mut();
            if ops.capacity() <= SPARE_LIST_CAPACITY && ops.capacity() > spare.ops.capacity() {
                spare.ops = std::mem::take(ops);
            }
            if writes.capacity() <= SPARE_LIST_CAPACITY && writes.capacity() > spare.writes.capacity() {
                spare.writes = std::mem::take(writes);
            }
        });
    }
}

impl WriteTxn {
    pub(crate) fn new(shared: Arc<Shared>, start_version: u64, state: GraphState) -> WriteTxn {
        let (ops, writes) = SpareLists::take();
        WriteTxn {
            shared,
            start_version,
            state,
            ops,
            settled: 0,
            pending_nodes: IdRanges::default(),
            view: OnceLock::new(),
            eager: false,
            op_count: 0,
            writes,
            created: Default::default(),
            token_counts: [0; 3],
            schema_change: false,
            registered: true,
            generation: next_generation(),
        }
    }

    /// The operations this transaction has recorded so far, in order, with the generation of that history. While
    /// the generation stays the same, the operations seen before are still the first ones and later calls only
    /// append (the count of a trailing [`Op::CreateEmptyNodes`] may grow; such nodes have neither labels nor
    /// properties). A rollback to a savepoint starts a new generation. For a query engine that keeps a structure
    /// of its own over the transaction's state up to date with the writes of a statement.
    pub fn change_log(&self) -> (u64, &[Op]) {
        (self.generation, &self.ops)
    }

    /// Takes over the state a read built while operations were pending (and applies operations at once from then
    /// on, see `eager`).
    fn take_view(&mut self) {
        if let Some(view) = self.view.take() {
            self.eager = true;
            self.state = view;
            self.settled = self.ops.len();
            self.pending_nodes = IdRanges::default();
        }
    }

    /// Applies the pending operations to the private state.
    pub(crate) fn settle(&mut self) {
        self.take_view();
        apply_pending(&mut self.state, &self.ops[self.settled..]);
        self.settled = self.ops.len();
        self.pending_nodes = IdRanges::default();
    }

    /// Whether `id` exists counting pending creations (which are never deletions).
    fn node_exists_now(&self, id: NodeId) -> bool {
        self.pending_nodes.contains(id.0) || self.state.node_exists(id)
    }

    /// Whether this transaction created node `id` (it may have deleted it since).
    pub fn created_node(&self, id: NodeId) -> bool {
        self.created.contains(id.0)
    }

    pub fn start_version(&self) -> u64 {
        self.start_version
    }

    /// Why this transaction could never commit a change, if it could not: its database was opened read-only,
    /// or this process is a child forked from the one that opened it. Statements that write are refused up
    /// front with it, rather than at commit after all their work.
    pub fn refusal(&self) -> Option<StorageError> {
        self.shared.writable().err()
    }

    /// Number of operations recorded so far.
    pub fn op_count(&self) -> usize {
        self.op_count
    }

    pub fn label(&self, name: &str) -> LabelId {
        self.shared.catalog.label(name)
    }
    pub fn rel_type(&self, name: &str) -> TypeId {
        self.shared.catalog.rel_type(name)
    }
    pub fn prop_key(&self, name: &str) -> PropKeyId {
        self.shared.catalog.prop_key(name)
    }
    pub fn catalog(&self) -> &crate::catalog::Catalog {
        &self.shared.catalog
    }

    /// Records a written key, unless it is about a node this transaction created.
    fn key(&mut self, key: WriteKey) {
        if let WriteKey::NodeRecord(id) | WriteKey::NodeLinked(id) | WriteKey::NodeDeleted(id) = key {
            if self.created.contains(id) {
                return;
            }
        }
        self.writes.push(key);
    }

    fn record(&mut self, op: Op) -> Result<()> {
        self.settle();
        self.shared.catalog.check_op_cached(&op, &mut self.token_counts).map_err(StorageError::InvalidValue)?;
        self.state.apply(&op).map_err(|e| self.named(e))?;
        self.ops.push(op);
        self.settled = self.ops.len();
        self.op_count += 1;
        Ok(())
    }

    /// `e` with token ids replaced by names, for the user.
    fn named(&self, e: StorageError) -> StorageError {
        let catalog = &self.shared.catalog;
        let name = |kind, id: u32| catalog.name(kind, id).map_or_else(|| id.to_string(), |n| n.to_string());
        let key_name = |key: PropKeyId| name(crate::catalog::TokenKind::PropKey, key.0);
        fn literal(value: &Value) -> String {
            match value {
                Value::String(s) => format!("'{s}'"),
                Value::Int(i) => i.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Point(p) => p.to_string(),
                Value::List(items) => format!("[{}]", items.iter().map(literal).collect::<Vec<_>>().join(", ")),
                other => format!("{other:?}"),
            }
        }
        let message = match e {
            StorageError::UniqueKeyTaken { holder, label, key, value } => format!(
                "{holder} already has label {} with {} = {}, which must be unique",
                name(crate::catalog::TokenKind::Label, label.0),
                key_name(key),
                literal(&value),
            ),
            StorageError::CompositeKeyTaken { holder, label, keys, values } => {
                let pairs: Vec<String> =
                    keys.iter().zip(&values).map(|(&k, v)| format!("{} = {}", key_name(k), literal(v))).collect();
                format!(
                    "{holder} already has label {} with {}, which must be unique together",
                    name(crate::catalog::TokenKind::Label, label.0),
                    pairs.join(", "),
                )
            }
            StorageError::RelKeyTaken { holder, ty, key, value } => format!(
                "{holder} already has type {} with {} = {}, which must be unique",
                name(crate::catalog::TokenKind::Type, ty.0),
                key_name(key),
                literal(&value),
            ),
            other => return other,
        };
        StorageError::ConstraintViolation(message)
    }

    fn unique_keys_of(&self, labels: &[LabelId], key: PropKeyId, value: &Value) -> Vec<WriteKey> {
        if self.state.unique.is_empty() {
            return Vec::new();
        }
        self.state
            .unique
            .iter()
            .filter(|u| u.key == key && labels.contains(&u.label) && !value.is_null())
            .map(|u| WriteKey::Unique(hash_of((u.label, u.key, value))))
            .collect()
    }

    fn node_unique_keys(&self, id: NodeId, only_label: Option<LabelId>) -> Vec<WriteKey> {
        if self.state.unique.is_empty() {
            return Vec::new();
        }
        let Some(labels) = self.state.node_labels(id) else {
            return Vec::new();
        };
        let labels: Vec<LabelId> = match only_label {
            Some(l) => vec![l],
            None => labels.to_vec(),
        };
        let mut keys = Vec::new();
        if let Some(Some(props)) = self.state.node_props(id) {
            for (k, v) in props.iter() {
                keys.extend(self.unique_keys_of(&labels, k, v));
            }
        }
        keys
    }

    pub fn create_node(&mut self, labels: &[LabelId], props: Vec<(PropKeyId, Value)>) -> Result<NodeId> {
        if labels.is_empty() && props.is_empty() {
            return self.create_empty_node();
        }
        let id = NodeId(self.shared.node_ids.allocate());
        self.record(Op::CreateNode { id, labels: labels.into(), props: crate::records::PropMap::shared(props) })?;
        self.created.insert(id.0);
        let keys = self.node_unique_keys(id, None);
        self.writes.extend(keys);
        Ok(id)
    }

    /// A node without labels or properties: no tokens to check, no unique keys, and consecutive ids extend the
    /// last operation instead of recording one each.
    /// Pending unless the transaction is `eager` (see the module documentation): the id is fresh, so there is
    /// nothing to check.
    fn create_empty_node(&mut self) -> Result<NodeId> {
        self.take_view();
        if self.eager {
            self.settle();
        }
        let id = NodeId(self.shared.node_ids.allocate());
        if self.eager {
            self.state.create_empty_nodes(id, 1)?;
        }
        // A run grows when its operation is pending, or when the state gets the node too (eager).
        let grows = self.eager || self.ops.len() > self.settled;
        match self.ops.last_mut() {
            Some(Op::CreateEmptyNodes { first, count }) if grows && first.0 + *count == id.0 => *count += 1,
            _ => self.ops.push(Op::CreateEmptyNodes { first: id, count: 1 }),
        }
        if self.eager {
            self.settled = self.ops.len();
        } else {
            self.pending_nodes.insert(id.0);
        }
        self.op_count += 1;
        self.created.insert(id.0);
        Ok(id)
    }

    pub fn set_node_prop(&mut self, id: NodeId, key: PropKeyId, value: Value) -> Result<()> {
        self.settle();
        let labels = self.state.node_labels(id).ok_or(StorageError::NodeNotFound(id))?.to_vec();
        let mut keys = Vec::new();
        if let Some(old) = self.state.node_prop(id, key) {
            keys.extend(self.unique_keys_of(&labels, key, old));
        }
        keys.extend(self.unique_keys_of(&labels, key, &value));
        self.record(Op::SetNodeProp { id, key, value })?;
        self.key(WriteKey::NodeRecord(id.0));
        self.writes.extend(keys);
        Ok(())
    }

    /// Sets several properties (null removes); all or nothing.
    pub fn set_node_props(&mut self, id: NodeId, props: Vec<(PropKeyId, Value)>) -> Result<()> {
        let mark = self.savepoint();
        for (k, v) in props {
            if let Err(e) = self.set_node_prop(id, k, v) {
                self.rollback_to(mark);
                return Err(e);
            }
        }
        Ok(())
    }

    pub fn add_label(&mut self, id: NodeId, label: LabelId) -> Result<()> {
        self.record(Op::AddLabel { id, label })?;
        self.key(WriteKey::NodeRecord(id.0));
        let keys = self.node_unique_keys(id, Some(label));
        self.writes.extend(keys);
        Ok(())
    }

    pub fn remove_label(&mut self, id: NodeId, label: LabelId) -> Result<()> {
        self.settle();
        let keys = self.node_unique_keys(id, Some(label));
        self.record(Op::RemoveLabel { id, label })?;
        self.key(WriteKey::NodeRecord(id.0));
        self.writes.extend(keys);
        Ok(())
    }

    /// Deletes a node; fails if it still has relationships.
    pub fn delete_node(&mut self, id: NodeId) -> Result<()> {
        self.settle();
        let keys = self.node_unique_keys(id, None);
        self.record(Op::DeleteNode { id })?;
        self.key(WriteKey::NodeRecord(id.0));
        self.key(WriteKey::NodeDeleted(id.0));
        self.writes.extend(keys);
        Ok(())
    }

    /// Deletes a node and every relationship attached to it (both directions); returns how many were removed.
    pub fn detach_delete_node(&mut self, id: NodeId) -> Result<u64> {
        self.settle();
        if !self.state.node_exists(id) {
            return Err(StorageError::NodeNotFound(id));
        }
        // Every step below works on entities that exist, so none can fail: no savepoint needed (a savepoint
        // would share every leaf and make the next writes copy them).
        let rels = self.state.rels_of(id, Direction::Both, TypeFilter::All);
        for r in &rels {
            self.delete_rel(r.rel).expect("relationship of a live node exists");
        }
        self.delete_node(id).expect("node without relationships can be deleted");
        Ok(rels.len() as u64)
    }

    pub fn create_rel(
        &mut self,
        src: NodeId,
        ty: TypeId,
        dst: NodeId,
        props: Vec<(PropKeyId, Value)>,
    ) -> Result<RelId> {
        self.take_view();
        let id = RelId(self.shared.rel_ids.allocate());
        let op = Op::CreateRel { id, ty, src, dst, props };
        // A uniqueness constraint on the type needs the state as it is, pending writes and all.
        if self.eager || self.state.rel_indexes.iter().any(|i| i.unique && i.ty == ty) {
            self.record(op)?;
        } else {
            // Pending (see the module documentation): checked here as `GraphState::apply` would check it, the id
            // being fresh.
            self.shared.catalog.check_op_cached(&op, &mut self.token_counts).map_err(StorageError::InvalidValue)?;
            for end in [src, dst] {
                if !self.node_exists_now(end) {
                    return Err(StorageError::NodeNotFound(end));
                }
            }
            let Op::CreateRel { props, .. } = &op else { unreachable!("built above") };
            GraphState::validate_props(props)?;
            self.ops.push(op);
            self.op_count += 1;
        }
        // The new relationship's own record cannot conflict (its id is fresh); linking its ends can.
        self.key(WriteKey::NodeLinked(src.0));
        self.key(WriteKey::NodeLinked(dst.0));
        Ok(id)
    }

    pub fn set_rel_prop(&mut self, id: RelId, key: PropKeyId, value: Value) -> Result<()> {
        self.record(Op::SetRelProp { id, key, value })?;
        self.writes.push(WriteKey::RelRecord(id.0));
        Ok(())
    }

    pub fn delete_rel(&mut self, id: RelId) -> Result<()> {
        self.settle();
        let rec = self.state.rel(id).ok_or(StorageError::RelNotFound(id))?;
        self.record(Op::DeleteRel { id })?;
        self.key(WriteKey::RelRecord(id.0));
        self.key(WriteKey::NodeLinked(rec.src.0));
        self.key(WriteKey::NodeLinked(rec.dst.0));
        Ok(())
    }

    /// Creates or updates edges merging on `(src, type, dst)`: when such a relationship exists its properties are
    /// set (the first one found, by id), otherwise one is created. All or nothing.
    pub fn upsert_edges(&mut self, edges: &[EdgeUpsert]) -> Result<UpsertCounts> {
        self.settle();
        // Checked up front so that the batch cannot fail half-way: all or nothing without a savepoint.
        for (src, _, dst, props) in edges {
            self.check_edge_input(*src, *dst, props)?;
        }
        // A uniqueness constraint on a written type can still refuse an edge half-way: only then is a savepoint
        // worth its copy.
        let constrained = self.state.rel_indexes.iter().any(|i| i.unique && edges.iter().any(|e| e.1 == i.ty));
        let mark = constrained.then(|| self.savepoint());
        let mut counts = UpsertCounts::default();
        for (src, ty, dst, props) in edges {
            match self.upsert_edge_from(*src, *ty, *dst, Cow::Borrowed(props)) {
                Ok(true) => counts.created += 1,
                Ok(false) => counts.updated += 1,
                Err(e) => {
                    if let Some(mark) = mark {
                        self.rollback_to(mark);
                    }
                    return Err(e);
                }
            }
        }
        Ok(counts)
    }

    fn check_edge_input(&self, src: NodeId, dst: NodeId, props: &[(PropKeyId, Value)]) -> Result<()> {
        for end in [src, dst] {
            if !self.state.node_exists(end) {
                return Err(StorageError::NodeNotFound(end));
            }
        }
        for (_, v) in props {
            v.validate().map_err(StorageError::InvalidValue)?;
        }
        Ok(())
    }

    /// Upserts one edge; returns true when it was created.
    pub fn upsert_edge(
        &mut self,
        src: NodeId,
        ty: TypeId,
        dst: NodeId,
        props: Vec<(PropKeyId, Value)>,
    ) -> Result<bool> {
        self.upsert_edge_from(src, ty, dst, Cow::Owned(props))
    }

    /// [`WriteTxn::upsert_edge`] with the properties owned or borrowed: a batch's are copied only into a
    /// relationship it creates (it used to copy every edge's list first, an allocation per edge even when the
    /// edge existed), an owned list is moved there.
    fn upsert_edge_from(
        &mut self,
        src: NodeId,
        ty: TypeId,
        dst: NodeId,
        props: Cow<'_, [(PropKeyId, Value)]>,
    ) -> Result<bool> {
        self.settle();
        self.writes.push(WriteKey::EdgeMerge(hash_of((src, ty, dst))));
        let only = [ty];
        let mut existing: Option<RelId> = None;
        let _ = self.state.visit_rels_between::<()>(src, dst, Direction::Out, TypeFilter::Only(&only), |e| {
            existing = Some(existing.map_or(e.rel, |x| x.min(e.rel)));
            ControlFlow::Continue(())
        });
        match existing {
            Some(rel) => {
                for (k, v) in props.iter() {
                    self.set_rel_prop(rel, *k, v.clone())?;
                }
                Ok(false)
            }
            None => {
                self.create_rel(src, ty, dst, props.into_owned())?;
                Ok(true)
            }
        }
    }

    /// Declares that this transaction creates a relationship of type `ty` between `a` and `b` because it found
    /// none (a Cypher `MERGE`): a concurrent transaction declaring or upserting the same, in either direction,
    /// then conflicts with it, so that two merges cannot both create one. Nothing to declare about a node this
    /// transaction created, which no other can see.
    pub fn declare_merged_edge(&mut self, a: NodeId, ty: TypeId, b: NodeId) {
        if self.created.contains(a.0) || self.created.contains(b.0) {
            return;
        }
        self.writes.push(WriteKey::EdgeMerge(hash_of((a, ty, b))));
        if a != b {
            self.writes.push(WriteKey::EdgeMerge(hash_of((b, ty, a))));
        }
    }

    /// Removes every relationship matching each `(src, type, dst)`; returns how many were removed. All or nothing.
    pub fn remove_edges(&mut self, edges: &[(NodeId, TypeId, NodeId)]) -> Result<u64> {
        self.settle();
        let mut removed = 0;
        for &(src, ty, dst) in edges {
            self.writes.push(WriteKey::EdgeMerge(hash_of((src, ty, dst))));
            // Usually one relationship: gathered inline, not into a list allocated per edge.
            let mut rels = smallvec::SmallVec::<[RelId; 4]>::new();
            let _ = self.state.visit_rels_between::<()>(src, dst, Direction::Out, TypeFilter::Only(&[ty]), |e| {
                rels.push(e.rel);
                ControlFlow::Continue(())
            });
            for rel in rels {
                self.delete_rel(rel).expect("a listed relationship exists");
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Deletes the node with `label` whose unique key is `value`; returns whether it existed.
    pub fn delete_node_by_key(&mut self, label: LabelId, value: &Value, detach: bool) -> Result<bool> {
        self.settle();
        match self.state.node_by_key(label, value) {
            None => Ok(false),
            Some(id) if detach => self.detach_delete_node(id).map(|_| true),
            Some(id) => self.delete_node(id).map(|_| true),
        }
    }

    /// Sets properties of the node with `label` whose unique key is `value`; returns its id when it exists.
    pub fn update_node_by_key(
        &mut self,
        label: LabelId,
        value: &Value,
        props: Vec<(PropKeyId, Value)>,
    ) -> Result<Option<NodeId>> {
        self.settle();
        match self.state.node_by_key(label, value) {
            None => Ok(None),
            Some(id) => self.set_node_props(id, props).map(|_| Some(id)),
        }
    }

    /// A point to roll back to within this transaction.
    /// Whether the transaction has changed anything yet (its commit would log a record).
    pub fn has_changes(&self) -> bool {
        !self.ops.is_empty()
    }

    /// Whether the transaction has changed the schema (unique keys, indexes).
    pub fn changes_schema(&self) -> bool {
        self.ops.iter().any(Op::is_schema)
    }

    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            state: (**self).clone(),
            ops: self.ops.len(),
            last_run: match self.ops.last() {
                Some(Op::CreateEmptyNodes { count, .. }) => *count,
                _ => 0,
            },
            op_count: self.op_count,
            writes: self.writes.len(),
            created: self.created.clone(),
            schema: self.schema_change,
        }
    }

    /// Undoes everything done since `mark` (the statement-level atomicity a query engine needs).
    pub fn rollback_to(&mut self, mark: Savepoint) {
        self.view = OnceLock::new();
        self.state = mark.state;
        self.ops.truncate(mark.ops);
        self.settled = self.ops.len();
        self.pending_nodes = IdRanges::default();
        // A run of created nodes may have grown since the mark: shorten it back.
        if let Some(Op::CreateEmptyNodes { count, .. }) = self.ops.last_mut() {
            *count = mark.last_run;
        }
        self.op_count = mark.op_count;
        self.writes.truncate(mark.writes);
        self.created = mark.created;
        self.schema_change = mark.schema;
        self.generation = next_generation();
    }

    /// Commits: validates against transactions committed since this one began, logs, and publishes. Returns
    /// the commit version. On a write-write conflict returns a retryable [`StorageError::Conflict`].
    pub fn commit(mut self) -> Result<u64> {
        self.state.fold_large_key_maps();
        let shared = self.shared.clone();
        shared.commit(&mut self)
    }

    /// Commits the work so far, then goes on as a new transaction starting from the newest state (which includes
    /// it): for a statement that commits part-way through (`CALL { } IN TRANSACTIONS`). Returns the version
    /// committed. On an error nothing of this part is committed and the transaction should be dropped.
    pub fn commit_and_continue(&mut self) -> Result<u64> {
        self.state.fold_large_key_maps();
        let shared = self.shared.clone();
        let version = shared.commit(self)?;
        // The committed transaction is dropped here (releasing its place among the open writers).
        *self = Shared::begin_write(&shared);
        Ok(version)
    }

    /// Discards what the transaction did and goes on in a new transaction from the newest state: after a part of
    /// a statement that commits in parts failed to commit (a conflict), the statement's next part starts afresh.
    pub fn restart(&mut self) {
        let shared = self.shared.clone();
        *self = Shared::begin_write(&shared);
    }

    /// Discards the transaction (the same as dropping it).
    pub fn rollback(self) {}
}

/// A set of ids kept as sorted, merged ranges: ids a transaction allocates come in runs from its thread's block,
/// so a transaction creating thousands of nodes keeps a handful of ranges instead of a hash set.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdRanges {
    ranges: Vec<(u64, u64)>,
}

impl IdRanges {
    pub(crate) fn insert(&mut self, id: u64) {
        if let Some(last) = self.ranges.last_mut() {
            if last.1 == id {
                last.1 = id + 1;
                return;
            }
        }
        let pos = self.ranges.partition_point(|r| r.1 < id);
        match self.ranges.get(pos).copied() {
            Some(r) if r.0 <= id && id < r.1 => {}
            Some(r) if r.1 == id => {
                self.ranges[pos].1 = id + 1;
                if self.ranges.get(pos + 1).is_some_and(|next| next.0 == id + 1) {
                    self.ranges[pos].1 = self.ranges[pos + 1].1;
                    self.ranges.remove(pos + 1);
                }
            }
            Some(r) if r.0 == id + 1 => self.ranges[pos].0 = id,
            _ => self.ranges.insert(pos, (id, id + 1)),
        }
    }

    #[inline]
    pub(crate) fn contains(&self, id: u64) -> bool {
        let pos = self.ranges.partition_point(|r| r.1 <= id);
        self.ranges.get(pos).is_some_and(|r| r.0 <= id)
    }
}

/// State captured by [`WriteTxn::savepoint`].
pub struct Savepoint {
    state: GraphState,
    ops: usize,
    /// The length of the last operation, when it is a run of created nodes.
    last_run: u64,
    op_count: usize,
    writes: usize,
    created: IdRanges,
    schema: bool,
}

mod schema;
#[cfg(test)]
mod tests;
