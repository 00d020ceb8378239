//! Logical plans: the operator tree a statement compiles to. Plans are immutable and shared through the plan
//! cache; [`crate::exec`] instantiates operators from them for each run.
//!
//! Every variable of a statement has its own slot in a fixed-width row (see [`planner`]); operators read and
//! write slots, never names.

pub(crate) mod compile;
pub(crate) mod explain;
pub(crate) mod fuse;
mod index_start;
mod node_start;
pub(crate) mod operand_types;
pub(crate) mod pattern;
pub(crate) mod planner;
pub(crate) mod quantified;
pub(crate) mod shortest;
pub(crate) mod statistics;

use std::sync::Arc;

use plexus_storage::Direction;

use crate::expr::CExpr;
pub(crate) use crate::token::Token;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AggFn {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    Collect,
    StDev,
    StDevP,
    PercentileCont,
    PercentileDisc,
}

impl AggFn {
    pub fn from_name(name: &str) -> Option<AggFn> {
        Some(match name {
            "count" => AggFn::Count,
            "sum" => AggFn::Sum,
            "avg" => AggFn::Avg,
            "min" => AggFn::Min,
            "max" => AggFn::Max,
            "collect" => AggFn::Collect,
            "stdev" => AggFn::StDev,
            "stdevp" => AggFn::StDevP,
            "percentilecont" => AggFn::PercentileCont,
            "percentiledisc" => AggFn::PercentileDisc,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
pub(crate) struct AggSpec {
    pub func: AggFn,
    pub distinct: bool,
    /// `None` for `count(*)`.
    pub arg: Option<CExpr>,
    /// The percentile argument of percentileCont/percentileDisc.
    pub extra: Option<CExpr>,
    pub slot: usize,
}

/// A node to create: reuse the node in `slot` if `bound`, else create it with labels and properties.
#[derive(Clone, Debug)]
pub(crate) struct CreateNode {
    pub slot: usize,
    pub bound: bool,
    pub labels: Vec<Token>,
    /// Labels computed per row (`CREATE (n:$(expr))`).
    pub dynamic_labels: Vec<CExpr>,
    pub properties: Option<CExpr>,
}

#[derive(Clone, Debug)]
pub(crate) struct CreateRel {
    /// The type computed per row (`[:$(expr)]`), when `rel_type` is not it.
    pub dynamic_type: Option<CExpr>,
    pub slot: usize,
    pub from: usize,
    pub to: usize,
    pub rel_type: Token,
    pub properties: Option<CExpr>,
}

#[derive(Clone, Debug)]
pub(crate) enum SetOp {
    Property {
        target: CExpr,
        key: PropKey,
        value: CExpr,
    },
    /// `n = map` (`merge: false`) or `n += map`.
    Properties {
        slot: usize,
        value: CExpr,
        merge: bool,
    },
    Labels {
        slot: usize,
        labels: Vec<Arc<str>>,
        /// Labels computed per row (`SET n:$(expr)`).
        dynamic: Vec<CExpr>,
    },
    RemoveProperty {
        target: CExpr,
        key: PropKey,
    },
    RemoveLabels {
        slot: usize,
        labels: Vec<Arc<str>>,
        dynamic: Vec<CExpr>,
    },
}

/// The key of a property that SET or REMOVE writes: named in the query, or computed per row (`n[key]`).
#[derive(Clone, Debug)]
pub(crate) enum PropKey {
    Name(Arc<str>),
    Dynamic(CExpr),
}

pub(crate) use crate::builtin::Builtin;

/// A procedure a plan calls.
#[derive(Clone, Debug)]
pub(crate) enum Procedure {
    Builtin(Builtin),
    User(Arc<crate::procedures::UserProcedure>),
    /// What `SHOW PROCEDURES` / `SHOW FUNCTIONS` list, made when the statement is planned (registering a
    /// procedure empties the plan cache).
    Listing {
        fields: &'static [&'static str],
        rows: Arc<Vec<Vec<crate::value::Value>>>,
    },
}

impl Procedure {
    pub fn resolve(name: &str, registry: &crate::procedures::ProcedureRegistry) -> Option<Procedure> {
        if let Some(b) = Builtin::resolve(name) {
            return Some(Procedure::Builtin(b));
        }
        Some(match name.to_ascii_lowercase().as_str() {
            crate::builtin::SHOW_PROCEDURES => Procedure::Listing {
                fields: crate::builtin::PROCEDURE_COLUMNS,
                rows: Arc::new(crate::builtin::procedure_rows(registry)),
            },
            crate::builtin::SHOW_FUNCTIONS => Procedure::Listing {
                fields: crate::builtin::FUNCTION_COLUMNS,
                rows: Arc::new(crate::builtin::function_rows()),
            },
            _ => Procedure::User(registry.get(name)?),
        })
    }

    pub fn inputs(&self) -> Vec<(String, crate::procedures::ParamType)> {
        match self {
            Procedure::Builtin(b) => b.inputs().0.iter().map(|&(name, ty)| (name.to_string(), ty)).collect(),
            Procedure::Listing { .. } => vec![],
            Procedure::User(p) => p.signature.inputs.clone(),
        }
    }

    /// How many of the last inputs have defaults and may be left out.
    pub fn optional_inputs(&self) -> usize {
        match self {
            Procedure::Builtin(b) => b.inputs().1,
            _ => 0,
        }
    }

    pub fn fields(&self) -> Vec<String> {
        match self {
            Procedure::Builtin(b) => b.fields().iter().map(|f| f.to_string()).collect(),
            Procedure::Listing { fields, .. } => fields.iter().map(|f| f.to_string()).collect(),
            Procedure::User(p) => p.signature.outputs.iter().map(|(n, _)| n.clone()).collect(),
        }
    }
}

/// One repetition of a quantified path pattern of several relationships, `((a)-[:R]->(b)<-[:S]-(c)){m,n}`.
#[derive(Clone, Debug)]
pub(crate) struct HopCycle {
    /// Each relationship's direction as written (left to right) and types (empty: any type).
    pub steps: Vec<(Direction, Vec<Token>)>,
    /// Scratch slots receiving a repetition's nodes (one more than `steps`) and relationships, in the pattern's
    /// order, while `condition` runs.
    pub node_slots: Vec<usize>,
    pub rel_slots: Vec<usize>,
    /// What every repetition meets: its node and relationship patterns' labels, types, properties and WHERE.
    pub condition: Option<CExpr>,
    /// The pattern's variables: each slot receives the list of that node or relationship over the repetitions.
    pub groups: Vec<(usize, GroupItem)>,
}

/// A position inside a repetition of a quantified path pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupItem {
    Node(usize),
    Rel(usize),
}

/// The lower and upper bounds of a range, each as `(expression, inclusive)`; at least one.
pub(crate) type Bounds = (Option<(CExpr, bool)>, Option<(CExpr, bool)>);

/// What a [`PlanNode::RelIndexSeek`] asks its index for.
#[derive(Clone, Debug)]
pub(crate) enum RelLookup {
    Equal(CExpr),
    /// A list of values, any of which the property may equal.
    AnyOf(CExpr),
    /// Bounds as `(expression, inclusive)`; at least one.
    Range(Option<(CExpr, bool)>, Option<(CExpr, bool)>),
}

/// What a [`PlanNode::CountFromStore`] counts.
#[derive(Clone, Debug)]
pub(crate) enum StoreCount {
    /// Every node, or the nodes with the label.
    Nodes(Option<Token>),
    /// Every relationship, or those of the types (each named once).
    Rels(Vec<Token>),
}

#[derive(Clone, Debug)]
pub(crate) enum PlanNode {
    /// One row: all nulls, or the argument row when the plan runs as a subquery.
    Start,
    ScanNodes {
        input: Box<PlanNode>,
        slot: usize,
        label: Option<Token>,
    },
    /// Nodes found by equality on `key`: through the label's unique key or a property index when there is one,
    /// otherwise a label scan filtered on the property. With `any_of`, `value` is a list and a node matches
    /// when its property equals one of its elements (`n.key IN list`), each node once.
    KeyLookup {
        input: Box<PlanNode>,
        slot: usize,
        label: Token,
        key: Token,
        value: CExpr,
        any_of: bool,
    },
    /// Nodes of a label whose property lies in a range, through a property index when there is one (else a label
    /// scan; the range predicates stay as filters above either way). Bounds are `(expression, inclusive)`.
    IndexRange {
        input: Box<PlanNode>,
        slot: usize,
        label: Token,
        key: Token,
        lower: Option<(CExpr, bool)>,
        upper: Option<(CExpr, bool)>,
    },
    /// A node by its id (`WHERE id(n) = $id`).
    NodeById {
        input: Box<PlanNode>,
        slot: usize,
        id: CExpr,
    },
    /// Nodes of `label` whose properties `keys` equal `values` one for one, through the composite index on
    /// them (a label scan should it be gone when the operator runs); with a `range`, `values` are those of all
    /// but the last property, which lies between the bounds. Candidates: the predicates stay as filters.
    CompositeSeek {
        input: Box<PlanNode>,
        slot: usize,
        label: Token,
        keys: Vec<Token>,
        values: Vec<CExpr>,
        range: Option<Box<Bounds>>,
    },
    /// Relationships of type `ty` found through the property index on `key`, bound with their nodes: `left` and
    /// `right` are the pattern's nodes before and after it, `dir` its direction as written
    /// ([`crate::exec::rel_lookup`]). Candidates: the predicate on the property stays as a filter above.
    RelIndexSeek {
        input: Box<PlanNode>,
        rel: usize,
        left: usize,
        right: usize,
        dir: Direction,
        ty: Token,
        key: Token,
        lookup: RelLookup,
    },
    Expand {
        input: Box<PlanNode>,
        from: usize,
        rel: usize,
        to: usize,
        dir: Direction,
        types: Vec<Token>,
        to_bound: bool,
        rel_bound: bool,
        /// Relationship slots bound earlier in the same MATCH: the new relationship must differ from them.
        distinct_from: Vec<usize>,
        /// Labels the new node must have: a label test on it, moved into the hop once the plan is fused
        /// ([`fuse::push_hop_labels`]). Empty until then.
        to_labels: Vec<Token>,
    },
    VarExpand {
        input: Box<PlanNode>,
        from: usize,
        /// Receives the list of relationships.
        rel: usize,
        to: usize,
        dir: Direction,
        types: Vec<Token>,
        min: u64,
        max: Option<u64>,
        to_bound: bool,
        /// A scratch slot holding each candidate relationship while `rel_filter` is evaluated.
        rel_scratch: usize,
        rel_filter: Option<CExpr>,
        distinct_from: Vec<usize>,
        /// The pattern was written in the other direction: report the relationships in its order.
        reverse: bool,
        /// The relationship list is already bound: follow exactly those relationships.
        rel_bound: bool,
        /// Nothing reads the relationship list (an anonymous relationship, no path variable, no later
        /// relationship of the MATCH to keep distinct from it): the walk does not build it, which would cost
        /// each path its length.
        list_unread: bool,
        /// For a quantified path pattern: scratch slots receiving each candidate relationship's two nodes, the
        /// pattern's left one first, while `rel_filter` (which then holds the repetition's condition) runs.
        hop_nodes: Option<(usize, usize)>,
        /// For a quantified path pattern of several relationships: one repetition, walked whole each time
        /// (`min` and `max` then count repetitions, and `dir` and `types` are unused).
        cycle: Option<Box<HopCycle>>,
        /// Labels every reported path's end node must have: a label filter on `to` moved into the walk
        /// ([`crate::plan::fuse`]), so that a path ending elsewhere is never copied into a row.
        to_labels: Vec<Token>,
    },
    ShortestPath {
        input: Box<PlanNode>,
        from: usize,
        to: usize,
        rel: usize,
        path: Option<usize>,
        dir: Direction,
        types: Vec<Token>,
        min: u64,
        max: Option<u64>,
        /// Every path of the shortest lengths, or one path per count.
        all: bool,
        /// How many paths (or, with `all`, lengths) are sought.
        count: u64,
        /// A GQL selector (`SHORTEST k`, `ALL SHORTEST`, ...) rather than `shortestPath()`: between a node and
        /// itself it seeks the shortest cycles, where `shortestPath()` finds nothing.
        selector: bool,
        /// A scratch slot holding each candidate relationship while `rel_filters` are evaluated.
        rel_scratch: usize,
        /// Conditions every relationship of the path must meet (its property map, and `WHERE all(r IN
        /// relationships(p) WHERE ...)`), checked as the search goes.
        rel_filters: Vec<CExpr>,
        /// The rest of the `WHERE` conjuncts that mention the path or its relationships: the shortest paths
        /// sought are the shortest of those that pass them, not the shortest that happen to.
        path_filters: Vec<CExpr>,
        /// For a quantified path pattern: scratch slots receiving each candidate relationship's two nodes, the
        /// pattern's left one first, while `rel_filters` (which then hold the repetition's condition) run.
        hop_nodes: Option<(usize, usize)>,
        /// For a quantified path pattern of several relationships: one repetition, which the search takes whole
        /// (`min` and `max` then count repetitions, and `dir` and `types` are unused).
        cycle: Option<Box<HopCycle>>,
    },
    Filter {
        input: Box<PlanNode>,
        predicate: CExpr,
    },
    /// OPTIONAL MATCH: the inner plan runs per row; no match keeps the row with the new slots null.
    Optional {
        input: Box<PlanNode>,
        inner: Arc<PlanNode>,
    },
    /// `CALL { }`: the inner plan runs per row; its returned columns go into `returns`. With `IN TRANSACTIONS`,
    /// `rows_per_transaction` says after how many input rows the work so far is committed.
    Apply {
        input: Box<PlanNode>,
        inner: Arc<PlanNode>,
        returns: Vec<usize>,
        /// `OPTIONAL CALL`: an input row the inner plan gives no rows for passes on, `returns` null.
        optional: bool,
        rows_per_transaction: Option<CExpr>,
        /// With `IN TRANSACTIONS`: what a failed transaction does, and the slot of `REPORT STATUS AS`.
        on_error: crate::ast::OnError,
        status: Option<usize>,
    },
    Unwind {
        input: Box<PlanNode>,
        list: CExpr,
        slot: usize,
    },
    /// `LOAD CSV`: a row per record of the file `url` names, read as the rows are asked for.
    LoadCsv {
        input: Box<PlanNode>,
        url: CExpr,
        slot: usize,
        /// Slots for the record's line number and the file's path (`linenumber()`, `file()`).
        position: (usize, usize),
        headers: bool,
        separator: u8,
        access: Arc<crate::files::FileAccess>,
    },
    Project {
        input: Box<PlanNode>,
        items: Vec<(CExpr, usize)>,
    },
    Aggregate {
        input: Box<PlanNode>,
        keys: Vec<(CExpr, usize)>,
        aggs: Vec<AggSpec>,
        /// When the keys are only outer variables that a subquery carries past this `WITH` (see
        /// `Planner::carrying_persistent`), one value each per run of the subquery: each one's slot in the
        /// subquery's argument row and in the rows here. The run then has one row even over no input, as an
        /// aggregation without keys has, its keys read from the argument row. Empty otherwise.
        per_run: Vec<(usize, usize)>,
    },
    /// An `Aggregate` directly over `Filter`s over a single-hop `Expand` (`expand`, which keeps its own input),
    /// run as one operator that never materialises the expanded rows (see [`fuse`]).
    ExpandAggregate {
        expand: Box<PlanNode>,
        /// The predicates of the filters between the expand and the aggregation, innermost first.
        filters: Vec<CExpr>,
        keys: Vec<(CExpr, usize)>,
        aggs: Vec<AggSpec>,
        /// How the work splits between the input rows and the relationships, when the aggregation allows it.
        shape: Option<Box<fuse::CountShape>>,
    },
    /// The number of nodes (of a label) or of relationships, read from the counts the graph keeps instead of
    /// counting a scan (`MATCH (n:L) RETURN count(n)`, see [`fuse`]): each input row with the count in `slot`.
    CountFromStore {
        input: Box<PlanNode>,
        slot: usize,
        counted: StoreCount,
    },
    Distinct {
        input: Box<PlanNode>,
        slots: Vec<usize>,
    },
    Sort {
        input: Box<PlanNode>,
        keys: Vec<(CExpr, bool)>,
    },
    Skip {
        input: Box<PlanNode>,
        count: CExpr,
    },
    Limit {
        input: Box<PlanNode>,
        count: CExpr,
    },
    Create {
        input: Box<PlanNode>,
        nodes: Vec<CreateNode>,
        rels: Vec<CreateRel>,
        /// Whether the rows are changed batch by batch as they arrive instead of all read first (see
        /// [`planner::stream_creates`], which sets it).
        streams: bool,
    },
    /// MERGE: per row, run `matcher`; if it finds rows apply `on_match` to each, else create and apply
    /// `on_create`.
    Merge {
        input: Box<PlanNode>,
        matcher: Arc<PlanNode>,
        nodes: Vec<CreateNode>,
        rels: Vec<CreateRel>,
        on_create: Vec<SetOp>,
        on_match: Vec<SetOp>,
    },
    Set {
        input: Box<PlanNode>,
        items: Vec<SetOp>,
    },
    Delete {
        input: Box<PlanNode>,
        targets: Vec<CExpr>,
        detach: bool,
    },
    Foreach {
        input: Box<PlanNode>,
        slot: usize,
        list: CExpr,
        body: Arc<PlanNode>,
    },
    Call {
        input: Box<PlanNode>,
        procedure: Procedure,
        args: Vec<CExpr>,
        /// `(field index, slot)`.
        yields: Vec<(usize, usize)>,
        /// `OPTIONAL CALL`: its `WHERE` (checked here, so that a row none of whose yields pass still goes on),
        /// and a row with the yields null when nothing passes.
        optional: Option<Option<CExpr>>,
    },
    /// Rows become the named columns' values.
    Produce {
        input: Box<PlanNode>,
        columns: Vec<usize>,
    },
    Union {
        parts: Vec<PlanNode>,
        all: bool,
    },
}

/// `$then` with `$input` bound to the operator's input (an `ExpandAggregate`'s expand, which holds the input
/// in turn), or `$otherwise` for the operators without one; shared by [`PlanNode::input`] and
/// [`PlanNode::input_mut`], so the list of operators is written once.
macro_rules! with_input {
    ($node:expr, $input:ident => $then:expr, $otherwise:expr) => {{
        use PlanNode::*;
        match $node {
            Start | Union { .. } => $otherwise,
            ScanNodes { input: $input, .. }
            | KeyLookup { input: $input, .. }
            | NodeById { input: $input, .. }
            | RelIndexSeek { input: $input, .. }
            | CompositeSeek { input: $input, .. }
            | IndexRange { input: $input, .. }
            | Expand { input: $input, .. }
            | VarExpand { input: $input, .. }
            | ShortestPath { input: $input, .. }
            | Filter { input: $input, .. }
            | Optional { input: $input, .. }
            | Apply { input: $input, .. }
            | Unwind { input: $input, .. }
            | LoadCsv { input: $input, .. }
            | Project { input: $input, .. }
            | Aggregate { input: $input, .. }
            | ExpandAggregate { expand: $input, .. }
            | CountFromStore { input: $input, .. }
            | Distinct { input: $input, .. }
            | Sort { input: $input, .. }
            | Skip { input: $input, .. }
            | Limit { input: $input, .. }
            | Create { input: $input, .. }
            | Merge { input: $input, .. }
            | Set { input: $input, .. }
            | Delete { input: $input, .. }
            | Foreach { input: $input, .. }
            | Call { input: $input, .. }
            | Produce { input: $input, .. } => $then,
        }
    }};
}

impl PlanNode {
    pub fn input(&self) -> Option<&PlanNode> {
        with_input!(self, input => Some(&**input), None)
    }

    pub fn input_mut(&mut self) -> Option<&mut PlanNode> {
        with_input!(self, input => Some(&mut **input), None)
    }

    /// Whether `test` holds for this operator or one below it (the chain of inputs).
    fn any_below(&self, test: impl Fn(&PlanNode) -> bool) -> bool {
        let mut node = Some(self);
        while let Some(n) = node {
            if test(n) {
                return true;
            }
            node = n.input();
        }
        false
    }

    /// Whether this operator, one below it or a plan inside one of them writes.
    pub(crate) fn writes_anywhere(&self) -> bool {
        self.any_below(|n| match n {
            PlanNode::Create { .. }
            | PlanNode::Merge { .. }
            | PlanNode::Set { .. }
            | PlanNode::Delete { .. }
            | PlanNode::Foreach { .. } => true,
            PlanNode::Optional { inner, .. } | PlanNode::Apply { inner, .. } => inner.writes_anywhere(),
            PlanNode::Union { parts, .. } => parts.iter().any(PlanNode::writes_anywhere),
            _ => false,
        })
    }

    /// Whether a write can happen while an operator below is part-way through its input. Updating operators
    /// read all their input before writing, but a subquery (`CALL { }`, an OPTIONAL MATCH's inner plan) runs once
    /// per row as rows stream past, so one that writes does so between the rows of the operators under it.
    pub fn writes_per_row(&self) -> bool {
        self.any_below(|n| match n {
            PlanNode::Optional { inner, .. } | PlanNode::Apply { inner, .. } => {
                inner.writes_anywhere() || inner.writes_per_row()
            }
            PlanNode::Union { parts, .. } => parts.iter().any(PlanNode::writes_per_row),
            _ => false,
        })
    }
}

impl PlanNode {
    /// Whether the statement commits part-way through (`CALL { } IN TRANSACTIONS`).
    pub fn commits_in_parts(&self) -> bool {
        self.any_below(|n| matches!(n, PlanNode::Apply { rows_per_transaction: Some(_), .. }))
    }
}

/// A compiled statement.
#[derive(Debug)]
pub(crate) struct Plan {
    pub root: PlanNode,
    pub columns: std::sync::Arc<[String]>,
    /// Slots per row.
    pub width: usize,
    /// Whether the statement writes (then it needs a write transaction).
    pub writes: bool,
    /// Whether it may write while a reading operator is part-way through its input ([`PlanNode::writes_per_row`]).
    pub writes_per_row: bool,
    /// The parameters it uses, with where one use is in the text.
    pub params: Vec<(String, Option<crate::error::Position>)>,
    /// The parameters that are operands of operators taking some types only, checked when a run starts.
    pub typed_params: Vec<operand_types::TypedParameter>,
    /// It commits part-way through (`CALL { } IN TRANSACTIONS`), so it runs only in a transaction of its own.
    pub commits_in_parts: bool,
    /// Run on its own (auto-commit), it may run again from the start when its commit meets a conflict: it writes,
    /// commits only at its end, and calls no procedure of the embedding program.
    pub reruns_on_conflict: bool,
    /// It commits in parts, and a part whose commit meets a conflict may run again: it calls no procedure of the
    /// embedding program.
    pub parts_rerun_on_conflict: bool,
    /// What each run may be told about the statement ([`crate::notices`]).
    pub notices: crate::notices::Notices,
    /// The label counts its choice of where patterns start rested on.
    pub planned_on: statistics::PlannedOn,
}
