//! The abstract syntax tree of an openCypher statement, as the parser produces it. Every expression and pattern
//! element keeps its [`Span`] so later phases can point at the text when they report an error.

use crate::lexer::Span;
use crate::value::Value;

#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    pub kind: StatementKind,
    /// `EXPLAIN`: plan only. `PROFILE`: run and report rows and time per operator.
    pub mode: RunMode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RunMode {
    #[default]
    Normal,
    Explain,
    Profile,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StatementKind {
    Query(Query),
    Schema(SchemaCommand),
}

/// Single queries joined by `UNION` (`all[i]` says whether the i-th join is `UNION ALL`).
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub parts: Vec<SingleQuery>,
    pub union_all: Vec<bool>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SingleQuery {
    pub clauses: Vec<Clause>,
    /// Where each clause begins in the query text, for errors about how clauses are put together; empty for
    /// clauses made up by the parser (`SHOW ...`, a pattern predicate).
    pub starts: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Clause {
    Match {
        optional: bool,
        patterns: Vec<PatternPart>,
        predicate: Option<Expr>,
        span: Span,
    },
    Unwind {
        list: Expr,
        variable: Ident,
    },
    /// `LOAD CSV [WITH HEADERS] FROM url AS row [FIELDTERMINATOR ';']`: a row per record of the file, `row` a list
    /// of strings, or with headers a map from the first record's names.
    LoadCsv {
        headers: bool,
        url: Expr,
        variable: Ident,
        separator: u8,
        span: Span,
    },
    With(Projection),
    Return(Projection),
    Create {
        patterns: Vec<PatternPart>,
        span: Span,
    },
    Merge {
        pattern: PatternPart,
        on_create: Vec<SetItem>,
        on_match: Vec<SetItem>,
        span: Span,
    },
    Set {
        items: Vec<SetItem>,
    },
    Remove {
        items: Vec<RemoveItem>,
    },
    Delete {
        detach: bool,
        targets: Vec<Expr>,
    },
    Foreach {
        variable: Ident,
        list: Expr,
        body: Vec<Clause>,
    },
    Call(ProcedureCall),
    /// `CALL { ... }`: a subquery run once per incoming row.
    Subquery {
        query: Box<Query>,
        /// Written with a scope clause, `CALL (a) { ... }`: the variables it imports stay visible in the whole
        /// body, past any `WITH` (an importing `WITH a` at its start, the older form, makes them ordinary
        /// variables that a later `WITH` can drop).
        scoped: bool,
        /// `OPTIONAL CALL`: a row the subquery returns nothing for is kept, its columns null.
        optional: bool,
        /// `IN TRANSACTIONS [OF n ROWS]`: the rows per transaction (`None`: the default, 1,000).
        in_transactions: Option<Option<Expr>>,
        /// `ON ERROR ...` after `IN TRANSACTIONS`.
        on_error: OnError,
        /// `REPORT STATUS AS s`: the variable that receives each input row's transaction status.
        report_status: Option<Ident>,
        span: Span,
    },
}

/// What `CALL { } IN TRANSACTIONS` does when one of its transactions fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnError {
    /// The statement fails (the transactions before stay committed).
    #[default]
    Fail,
    /// The failed transaction is rolled back and the next one goes on.
    Continue,
    /// The failed transaction is rolled back and no other is tried.
    Break,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProcedureCall {
    /// Dotted name as written, e.g. `db.labels`.
    pub name: String,
    /// `None` for the implicit-arguments form `CALL proc` (arguments taken from parameters of the same name).
    pub args: Option<Vec<Expr>>,
    /// `YIELD a, b AS c`; `Some(vec![])` never occurs; `yield_star` for `YIELD *`.
    pub yields: Option<Vec<(Ident, Option<Ident>)>>,
    pub yield_star: bool,
    pub predicate: Option<Expr>,
    /// `OPTIONAL CALL`: a row the procedure yields nothing for (that passes the `WHERE`) goes on with nulls.
    pub optional: bool,
    pub span: Span,
}

/// `WITH` or `RETURN` with their modifiers.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub distinct: bool,
    /// `*`: every variable in scope.
    pub star: bool,
    pub items: Vec<ProjectionItem>,
    pub order_by: Vec<SortItem>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
    /// `WITH ... WHERE`.
    pub predicate: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionItem {
    pub expr: Expr,
    pub alias: Option<Ident>,
    /// The expression's text as written: the column name when there is no alias.
    pub text: String,
}

impl ProjectionItem {
    pub fn name(&self) -> &str {
        self.alias.as_ref().map_or(&self.text, |a| &a.name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SortItem {
    pub expr: Expr,
    pub descending: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SetItem {
    /// `n.p = v` (or any expression's property, e.g. `(CASE ... END).p`), or `n[key] = v`.
    Property { target: Expr, key: PropertyKey, value: Expr },
    /// `n = {map}` (replace all properties) or `n += {map}` (merge).
    Properties { variable: Ident, value: Expr, merge: bool },
    Labels {
        variable: Ident,
        labels: Vec<Ident>,
        /// `:$(expr)`: labels computed per row, a string or a list of strings each.
        dynamic: Vec<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum RemoveItem {
    Property { target: Expr, key: PropertyKey },
    Labels { variable: Ident, labels: Vec<Ident>, dynamic: Vec<Expr> },
}

/// The property a SET or REMOVE item names.
#[derive(Clone, Debug, PartialEq)]
pub enum PropertyKey {
    /// `n.name`.
    Name(Ident),
    /// `n[expr]`: the key is the string `expr` gives for each row (Neo4j 5).
    Dynamic(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    Normal,
    Shortest,
    AllShortest,
    /// `ANY SHORTEST`, `SHORTEST k`, `ANY k`: the `k` shortest paths (ties taken as the search meets them), as
    /// `Shortest` for one, but the MATCH's WHERE filters the paths found rather than steering the search (as
    /// Neo4j applies it to these selectors).
    ShortestPaths(u64),
    /// `ALL SHORTEST`, `SHORTEST k GROUPS`: every path of the `k` shortest lengths, filtered afterwards likewise.
    ShortestGroups(u64),
}

/// One comma-separated part of a pattern, optionally named: `p = (a)-->(b)`.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternPart {
    pub variable: Option<Ident>,
    pub kind: PathKind,
    pub element: PatternElement,
    /// The WHERE of a parenthesised path pattern, `((a)-[r]-+(b) WHERE ...)`: under a path selector it steers the
    /// search (the MATCH's WHERE filters what was selected); otherwise it is one more condition of the MATCH.
    pub predicate: Option<Expr>,
    pub span: Span,
}

/// A chain `(a)-[r]->(b)<-[s]-(c)`.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternElement {
    pub start: NodePattern,
    pub chain: Vec<(RelPattern, NodePattern)>,
}

/// Labels or a relationship type computed per row: `$(expr)` or `$all(expr)`, every label the string or list
/// names (for a relationship, its one type); `$any(expr)`, at least one of them (a pattern to match only).
#[derive(Clone, Debug, PartialEq)]
pub struct Computed {
    pub expr: Expr,
    pub any: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodePattern {
    pub variable: Option<Ident>,
    /// Labels the node must all have (`:A:B`, `:A&B`).
    pub labels: Vec<Ident>,
    /// Any other label expression (`:A|B`, `:!A`, `:%`), tested as a filter; `labels` is then empty.
    pub label_expr: Option<LabelExpr>,
    /// Labels computed per row, `:$(expr)` (a string or a list of strings), which the node must also have.
    pub dynamic_labels: Vec<Computed>,
    pub properties: Option<Expr>,
    pub span: Span,
}

/// A type as written in a type predicate: a union of members, each nullable or not.
#[derive(Clone, Debug, PartialEq)]
pub struct CypherType {
    pub members: Vec<(TypeMember, bool)>,
}

/// The types without parameters, in the order Neo4j lists the members of a type union (lists come between
/// maps and paths, hence the gap).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseType {
    Boolean = 1,
    String,
    Integer,
    Float,
    Date,
    LocalTime,
    ZonedTime,
    LocalDateTime,
    ZonedDateTime,
    Duration,
    Point,
    Bytes,
    Node,
    Relationship,
    Map,
    Path = 17,
}

impl BaseType {
    /// The name Neo4j gives the type.
    pub fn name(self) -> &'static str {
        match self {
            BaseType::Boolean => "BOOLEAN",
            BaseType::String => "STRING",
            BaseType::Integer => "INTEGER",
            BaseType::Float => "FLOAT",
            BaseType::Date => "DATE",
            BaseType::LocalTime => "LOCAL TIME",
            BaseType::ZonedTime => "ZONED TIME",
            BaseType::LocalDateTime => "LOCAL DATETIME",
            BaseType::ZonedDateTime => "ZONED DATETIME",
            BaseType::Duration => "DURATION",
            BaseType::Point => "POINT",
            BaseType::Bytes => "BYTES",
            BaseType::Node => "NODE",
            BaseType::Relationship => "RELATIONSHIP",
            BaseType::Map => "MAP",
            BaseType::Path => "PATH",
        }
    }
}

/// One member of a [`CypherType`] (the `bool` beside it: `NOT NULL`).
#[derive(Clone, Debug, PartialEq)]
pub enum TypeMember {
    Any,
    Nothing,
    Null,
    PropertyValue,
    Plain(BaseType),
    List(Box<CypherType>),
}

/// A label expression (GQL and Neo4j 5): on a node it asks about its labels, on a relationship about its type.
/// Parsed with the names as written; the planner maps them to tokens (`crate::expr::LabelTest`).
#[derive(Clone, Debug, PartialEq)]
pub enum LabelExpr<N = Ident> {
    Name(N),
    /// `%`: any label (a node with at least one; any relationship).
    Wildcard,
    Not(Box<LabelExpr<N>>),
    All(Vec<LabelExpr<N>>),
    AnyOf(Vec<LabelExpr<N>>),
}

impl<N> LabelExpr<N> {
    /// The same expression with each name mapped by `f`.
    pub fn map<M>(&self, f: &impl Fn(&N) -> M) -> LabelExpr<M> {
        match self {
            LabelExpr::Name(n) => LabelExpr::Name(f(n)),
            LabelExpr::Wildcard => LabelExpr::Wildcard,
            LabelExpr::Not(inner) => LabelExpr::Not(Box::new(inner.map(f))),
            LabelExpr::All(items) => LabelExpr::All(items.iter().map(|i| i.map(f)).collect()),
            LabelExpr::AnyOf(items) => LabelExpr::AnyOf(items.iter().map(|i| i.map(f)).collect()),
        }
    }

    /// Whether an entity passes, given whether it has each named label (or type) and whether it has any.
    pub fn matches(&self, has: &dyn Fn(&N) -> bool, any: bool) -> bool {
        match self {
            LabelExpr::Name(n) => has(n),
            LabelExpr::Wildcard => any,
            LabelExpr::Not(inner) => !inner.matches(has, any),
            LabelExpr::All(items) => items.iter().all(|i| i.matches(has, any)),
            LabelExpr::AnyOf(items) => items.iter().any(|i| i.matches(has, any)),
        }
    }
}

impl LabelExpr {
    /// The names, when the expression is only names joined by `&` (or `:`).
    pub fn conjunction(&self) -> Option<Vec<Ident>> {
        self.names_joined(true)
    }

    /// The names, when the expression is only names joined by `|`.
    pub fn disjunction(&self) -> Option<Vec<Ident>> {
        self.names_joined(false)
    }

    fn names_joined(&self, by_and: bool) -> Option<Vec<Ident>> {
        match self {
            LabelExpr::Name(n) => Some(vec![n.clone()]),
            LabelExpr::All(items) if by_and => Self::all_names(items, by_and),
            LabelExpr::AnyOf(items) if !by_and => Self::all_names(items, by_and),
            _ => None,
        }
    }

    fn all_names(items: &[LabelExpr], by_and: bool) -> Option<Vec<Ident>> {
        items.iter().map(|i| i.names_joined(by_and)).collect::<Option<Vec<_>>>().map(|v| v.concat())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelDirection {
    /// `-->`
    Out,
    /// `<--`
    In,
    /// `--` (or `<-->`)
    Both,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RelPattern {
    pub variable: Option<Ident>,
    /// Alternatives: `[:A|B]`; empty means any type.
    pub types: Vec<Ident>,
    /// Any other type expression (`[:!A]`, `[:%]`), tested on each relationship; `types` is then empty.
    pub type_expr: Option<LabelExpr>,
    /// A type computed per row, `[:$(expr)]`; `types` is then empty.
    pub dynamic_type: Option<Computed>,
    pub direction: RelDirection,
    /// `*min..max` for variable length; `Some((None, None))` is plain `*`.
    pub length: Option<(Option<u64>, Option<u64>)>,
    pub properties: Option<Expr>,
    /// Set when this relationship is the one hop of a quantified path pattern, `((x)-[r]->(y) WHERE ...){m,n}`:
    /// the hop's node patterns and condition, which every repetition must meet. `length` holds the quantifier.
    pub hop: Option<Box<HopPattern>>,
    pub span: Span,
}

/// The inside of a quantified path pattern: its first node pattern (`from`), its last (`to`) and its `WHERE`.
/// After the match, their variables are lists, one item per repetition.
///
/// A pattern of one relationship is the `RelPattern` holding this; one of several relationships,
/// `((a)-[:R]->(b)-[:S]->(c)){m,n}`, lists them in `steps`, each with the node pattern on its right (the last of
/// which is `to`), and the holding `RelPattern` stands for the whole path of repetitions (no type or variable of
/// its own).
#[derive(Clone, Debug, PartialEq)]
pub struct HopPattern {
    pub from: NodePattern,
    pub to: NodePattern,
    pub predicate: Option<Expr>,
    /// Empty for a pattern of one relationship.
    pub steps: Vec<(RelPattern, NodePattern)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    Xor,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    /// `||`.
    Concat,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    In,
    StartsWith,
    EndsWith,
    Contains,
    RegexMatch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
    Plus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    All,
    Any,
    None,
    Single,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MapProjectionItem {
    /// `.name`
    Property(Ident),
    /// `.*`
    AllProperties,
    /// `key: expr`
    Entry(Ident, Expr),
    /// `variable` (the variable's value under its own name)
    Variable(Ident),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Literal(Value),
    Parameter(String),
    Variable(String),
    Property(Box<Expr>, Ident),
    List(Vec<Expr>),
    Map(Vec<(Ident, Expr)>),
    Index(Box<Expr>, Box<Expr>),
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `x IS :: INTEGER`, `x IS NOT :: LIST<STRING NOT NULL>`, `x :: INTEGER | FLOAT`.
    TypeTest {
        expr: Box<Expr>,
        ty: CypherType,
        negated: bool,
    },
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    HasLabels(Box<Expr>, Vec<Ident>),
    /// `x:A|B`, `x:!A`, ...: any label expression but a plain conjunction (which is `HasLabels`).
    LabelTest(Box<Expr>, LabelExpr),
    /// Lower-cased dotted name.
    Function {
        name: String,
        distinct: bool,
        args: Vec<Expr>,
    },
    CountStar,
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    ListComprehension {
        variable: Ident,
        list: Box<Expr>,
        filter: Option<Box<Expr>>,
        map: Option<Box<Expr>>,
    },
    Quantified {
        quantifier: Quantifier,
        variable: Ident,
        list: Box<Expr>,
        predicate: Box<Expr>,
    },
    Reduce {
        accumulator: Ident,
        init: Box<Expr>,
        variable: Ident,
        list: Box<Expr>,
        expr: Box<Expr>,
    },
    PatternComprehension {
        path: Option<Ident>,
        pattern: Box<PatternElement>,
        filter: Option<Box<Expr>>,
        map: Box<Expr>,
    },
    /// A pattern used as a predicate (`WHERE (a)-->(b)`): true when it has a match.
    PatternPredicate(Box<PatternElement>),
    /// `EXISTS { MATCH ... }` or `EXISTS { (a)-->(b) WHERE ... }`.
    Exists(Box<Query>),
    /// `COUNT { ... }`.
    CountSubquery(Box<Query>),
    /// `COLLECT { ... RETURN x }`.
    CollectSubquery(Box<Query>),
    MapProjection {
        base: Box<Expr>,
        items: Vec<MapProjectionItem>,
    },
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SchemaCommand {
    CreateIndex {
        name: Option<String>,
        /// The label, or with `relationships` the relationship type.
        label: String,
        /// `FOR ()-[r:TYPE]-()`: an index on the relationships of a type.
        relationships: bool,
        /// One property, or several for a composite index (nodes only).
        properties: Vec<String>,
        if_not_exists: bool,
        /// `TEXT` or `POINT` when the statement asked for that kind, which a range index stands in for.
        asked: Option<&'static str>,
    },
    DropIndex {
        name: Option<String>,
        label: Option<String>,
        properties: Vec<String>,
        if_exists: bool,
    },
    CreateUnique {
        name: Option<String>,
        /// The label, or with `relationships` the relationship type.
        label: String,
        /// `FOR ()-[r:TYPE]-()`: a constraint on the relationships of a type.
        relationships: bool,
        /// One property, or several that must be unique together (nodes only).
        properties: Vec<String>,
        if_not_exists: bool,
    },
    DropConstraint {
        name: Option<String>,
        label: Option<String>,
        /// The properties of the older `DROP CONSTRAINT ON (n:L) ASSERT n.p IS UNIQUE`, empty with a name.
        properties: Vec<String>,
        if_exists: bool,
    },
}
