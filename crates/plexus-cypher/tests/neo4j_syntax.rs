//! Neo4j 5 syntax beyond openCypher that queries written for Neo4j use: the SQL-style `trim(... FROM ...)`,
//! the `||` concatenation operator, underscores in number literals, and Unicode normalization.

use plexus_cypher::{Engine, ErrorKind, Params, ResultValue};
use plexus_storage::Store;

fn run(q: &str) -> Vec<Vec<ResultValue>> {
    Engine::new().execute(&Store::in_memory(), q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows
}

fn one(q: &str) -> ResultValue {
    run(q).remove(0).remove(0)
}

fn err(q: &str) -> plexus_cypher::CypherError {
    Engine::new().execute(&Store::in_memory(), q, &Params::new()).expect_err(q)
}

fn s(x: &str) -> ResultValue {
    ResultValue::String(x.into())
}

#[test]
fn trim_from_strips_one_character_on_the_given_side() {
    assert_eq!(one("RETURN trim(BOTH 'x' FROM 'xxaxx')"), s("a"));
    assert_eq!(one("RETURN trim(LEADING 'x' FROM 'xxaxx')"), s("axx"));
    assert_eq!(one("RETURN trim(trailing 'x' from 'xxaxx')"), s("xxa"));
    assert_eq!(one("RETURN trim('x' FROM 'xxaxx')"), s("a"));
    assert_eq!(one("RETURN trim(LEADING FROM '  a  ')"), s("a  "));
    assert_eq!(one("RETURN trim(FROM '  a  ')"), s("a"));
    assert_eq!(one("RETURN trim(BOTH null FROM 'xax')"), ResultValue::Null);
    assert_eq!(one("RETURN trim(BOTH 'x' FROM null)"), ResultValue::Null);
    for chars in ["'xy'", "''"] {
        assert_eq!(err(&format!("RETURN trim(BOTH {chars} FROM 'xyaxy')")).kind, ErrorKind::ArgumentError);
    }
}

#[test]
fn trim_keywords_may_still_be_variables() {
    assert_eq!(one("WITH ' x ' AS both RETURN trim(both)"), s("x"));
    assert_eq!(one("WITH 'x' AS both RETURN trim(both FROM 'xax')"), s("xax"));
    assert_eq!(one("WITH 'x' AS both RETURN trim(both both FROM 'xax')"), s("a"));
    assert_eq!(one("WITH 'x' AS leading RETURN trim(leading + ' ')"), s("x"));
    assert_eq!(one("WITH ' f ' AS from RETURN trim(from)"), s("f"));
}

#[test]
fn trimming_whitespace_follows_java_not_unicode() {
    // No-break spaces and NEL stay; the information separators U+001C..U+001F go.
    assert_eq!(one("RETURN trim('\\u00a0a\\u2007')"), s("\u{a0}a\u{2007}"));
    assert_eq!(one("RETURN ltrim('\\u0085a')"), s("\u{85}a"));
    assert_eq!(one("RETURN btrim('\\u202fa\\u001c')"), s("\u{202f}a"));
    assert_eq!(one("RETURN trim('\\u2003\\u001fa\\u3000')"), s("a"));
}

#[test]
fn double_bar_concatenates_strings_and_lists_only() {
    assert_eq!(one("RETURN 'a' || 'b' || 'c'"), s("abc"));
    assert_eq!(
        one("RETURN [1] || [2] + 3"),
        ResultValue::List(vec![1, 2, 3].into_iter().map(ResultValue::Int).collect())
    );
    assert_eq!(one("RETURN 'a' || 'b' = 'ab'"), ResultValue::Bool(true));
    assert_eq!(one("RETURN 'a' || null"), ResultValue::Null);
    assert_eq!(one("WITH [1] AS l RETURN size([x IN l || [2] | x])"), ResultValue::Int(2));
    assert_eq!(one("RETURN reduce(acc = '', x IN ['a', 'b'] | acc || x)"), s("ab"));
    for q in ["WITH 1 AS x RETURN 'a' || x", "WITH 'b' AS x RETURN ['a'] || x"] {
        assert_eq!(err(q).kind, ErrorKind::TypeError, "{q}");
    }
    // Two bars apart are not the operator.
    assert_eq!(err("RETURN 'a' | | 'b'").kind, ErrorKind::SyntaxError);
}

#[test]
fn underscores_separate_digits_in_number_literals() {
    assert_eq!(one("RETURN 1_000"), ResultValue::Int(1000));
    assert_eq!(one("RETURN 0x_1_F + 0o1_7"), ResultValue::Int(46));
    assert_eq!(one("RETURN 1_0.5_5"), ResultValue::Float(10.55));
    assert_eq!(one("RETURN -9_223_372_036_854_775_808"), ResultValue::Int(i64::MIN));
    for q in ["RETURN 1__0", "RETURN 1_", "RETURN 1.5e_3"] {
        assert_eq!(err(q).kind, ErrorKind::SyntaxError, "{q}");
    }
}

#[test]
fn extended_simple_case_tests_the_operand() {
    let q = "UNWIND [1, 2, 5, null, 'abc'] AS x RETURN CASE x WHEN 1, 2 THEN 'small' WHEN > 3 THEN 'big' \
             WHEN IS NULL THEN 'none' WHEN STARTS WITH 'a' THEN 'a-word' ELSE 'other' END";
    let got: Vec<ResultValue> = run(q).into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(got, ["small", "small", "big", "none", "a-word"].map(s));
    assert_eq!(one("RETURN CASE 3 WHEN :: STRING THEN 's' WHEN IS :: INTEGER THEN 'i' END"), s("i"));
    assert_eq!(one("RETURN CASE 0 WHEN <-1 THEN 'neg' WHEN = 0, <> 0 THEN 'zero' END"), s("zero"));
    // A plain simple CASE compares with = (null matches nothing).
    assert_eq!(one("RETURN CASE null WHEN null THEN 1 ELSE 2 END"), ResultValue::Int(2));
}

#[test]
fn order_by_skip_and_limit_as_clauses_of_their_own() {
    let col = |q: &str| run(q).into_iter().map(|mut r| r.remove(0)).collect::<Vec<_>>();
    let ints = |v: &[i64]| v.iter().map(|i| ResultValue::Int(*i)).collect::<Vec<_>>();
    assert_eq!(col("UNWIND [3, 1, 2] AS x ORDER BY x DESC LIMIT 2 RETURN x"), ints(&[3, 2]));
    assert_eq!(col("UNWIND [3, 1, 2] AS x ORDER BY x OFFSET 1 RETURN x"), ints(&[2, 3]));
    assert_eq!(col("UNWIND [3, 1, 2] AS x SKIP 2 RETURN count(*)"), ints(&[1]));
    assert_eq!(col("UNWIND [3, 1, 2] AS x LIMIT 1 RETURN count(*)"), ints(&[1]));
    assert_eq!(col("WITH 1 AS limit RETURN limit"), ints(&[1]));
}

/// Labels computed per row, `:$(expr)`, in MATCH, CREATE and MERGE patterns (Neo4j 5.26).
#[test]
fn computed_labels_in_patterns() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows;
    let list = |items: &[&str]| ResultValue::List(items.iter().map(|x| s(x)).collect());
    assert_eq!(
        // (In a fixed order: `labels()` lists labels in the order their names were first used in the database.)
        run("WITH ['A', 'B'] AS ls CREATE (n:$(ls):C {k: 1}) RETURN [l IN ['A', 'B', 'C'] WHERE l IN labels(n)]"),
        vec![vec![list(&["A", "B", "C"])]]
    );
    run("CREATE (:A {k: 2})-[:T]->(:B {k: 3})");
    let count = |q: &str| run(q).remove(0).remove(0);
    assert_eq!(count("MATCH (n:$('A')) RETURN count(n)"), ResultValue::Int(2));
    assert_eq!(count("WITH 'B' AS l MATCH (n:A:$(l)) RETURN count(n)"), ResultValue::Int(1));
    assert_eq!(count("MATCH (n:$(['A', 'Nope'])) RETURN count(n)"), ResultValue::Int(0));
    assert_eq!(count("MATCH (a:$('A'))-[:T]->(b:$('B')) RETURN b.k"), ResultValue::Int(3));
    assert_eq!(count("MATCH (a {k: 2}) RETURN exists { (a)-->(:$('B')) }"), ResultValue::Bool(true));
    assert_eq!(count("MATCH (a {k: 2}) RETURN [(a)-->(b:$('X')) | b.k]"), ResultValue::List(vec![]));
    // MERGE matches with them and creates with them.
    run("MERGE (n:$('A') {k: 2})");
    assert_eq!(count("MATCH (n:A {k: 2}) RETURN count(n)"), ResultValue::Int(1));
    assert_eq!(run("MERGE (n:$('D') {k: 9}) RETURN labels(n)"), vec![vec![list(&["D"])]]);
    for bad in ["MATCH (n:$(null)) RETURN n", "CREATE (:$(''))", "CREATE (:$(1))"] {
        assert_eq!(engine.execute(&store, bad, &Params::new()).unwrap_err().kind, ErrorKind::TypeError, "{bad}");
    }
}

/// GQL path selectors: `ANY SHORTEST` / `SHORTEST k` and `ALL SHORTEST` / `SHORTEST k GROUPS` select shortest
/// paths first and the MATCH's WHERE then filters them (unlike `shortestPath()`, whose WHERE steers the search),
/// as Neo4j 5 does.
#[test]
fn path_selectors_select_then_filter() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows;
    run("CREATE (a:N {n: 'a'})-[:R]->(:N {n: 'b'})-[:R]->(:N {n: 'c'})-[:R]->(d:N {n: 'd'}), \
         (a)-[:R]->(:N {n: 'x'})-[:R]->(d), (a)-[:R]->(:N {n: 'y'})-[:R]->(d)");
    let one = |q: &str| run(q).remove(0).remove(0);
    let ends = "(a:N {n: 'a'})-[:R]->+(d:N {n: 'd'})";
    assert_eq!(one(&format!("MATCH p = ANY SHORTEST {ends} RETURN length(p)")), ResultValue::Int(2));
    assert_eq!(one(&format!("MATCH p = SHORTEST 1 {ends} RETURN count(p)")), ResultValue::Int(1));
    assert_eq!(one(&format!("MATCH p = ALL SHORTEST {ends} RETURN count(p)")), ResultValue::Int(2));
    assert_eq!(one(&format!("MATCH p = SHORTEST 1 GROUPS {ends} RETURN count(p)")), ResultValue::Int(2));
    assert_eq!(one(&format!("MATCH p = ALL PATHS {ends} RETURN count(p)")), ResultValue::Int(3));
    // The WHERE comes after the selection; with shortestPath() it steers the search.
    assert!(run(&format!("MATCH p = ANY SHORTEST {ends} WHERE length(p) > 2 RETURN p")).is_empty());
    let q = "MATCH p = shortestPath((a:N {n: 'a'})-[:R*]->(d:N {n: 'd'})) WHERE length(p) > 2 RETURN length(p)";
    assert_eq!(one(q), ResultValue::Int(3));
    assert_eq!(
        one(&format!("MATCH p = SHORTEST 2 {ends} RETURN collect(length(p))")),
        ResultValue::List(vec![ResultValue::Int(2), ResultValue::Int(2)])
    );
    assert_eq!(one(&format!("MATCH p = SHORTEST 5 {ends} RETURN count(p)")), ResultValue::Int(3));
    assert_eq!(one(&format!("MATCH p = SHORTEST 2 GROUPS {ends} RETURN count(p)")), ResultValue::Int(3));
    assert_eq!(one(&format!("MATCH p = ANY 2 {ends} RETURN count(p)")), ResultValue::Int(2));
    let e = engine.execute(&store, &format!("MATCH p = SHORTEST 0 {ends} RETURN p"), &Params::new()).unwrap_err();
    assert_eq!(e.detail, "InvalidArgument");
    // A minimum length beyond 1: the shortest of the longer paths, not nothing for a node reached sooner.
    let q = "MATCH p = ALL SHORTEST (a:N {n: 'a'})-[:R]->{3,}(b) RETURN b.n, length(p)";
    assert_eq!(run(q), vec![vec![s("d"), ResultValue::Int(3)]]);
    let q = "MATCH p = SHORTEST 1 (a:N {n: 'a'})-[*2..]-(b:N {n: 'b'}) RETURN length(p)";
    assert_eq!(one(q), ResultValue::Int(4));
    // From a node back to itself: the shortest cycle for a selector, an error for shortestPath() (as Neo4j's
    // default), which never searches from a node to itself.
    run("MATCH (b:N {n: 'b'}), (a:N {n: 'a'}) CREATE (b)-[:BACK]->(a)");
    let q = "MATCH p = SHORTEST 1 (a:N {n: 'a'})-[:R|BACK]->+(a) RETURN [n IN nodes(p) | n.n]";
    assert_eq!(one(q), ResultValue::List(vec![s("a"), s("b"), s("a")]));
    let q = "MATCH p = ANY (a:N)-->+(a) RETURN a.n ORDER BY a.n";
    assert_eq!(run(q), vec![vec![s("a")], vec![s("b")]]);
    let q = "MATCH (a:N {n: 'a'}) MATCH p = shortestPath((a)-[*]->(a)) RETURN p";
    assert_eq!(engine.execute(&store, q, &Params::new()).unwrap_err().detail, "ShortestPathCommonEndNodes");
    // The WHERE of a parenthesised path steers the search (the shortest that pass); the MATCH's filters after.
    let q = "MATCH p = SHORTEST 1 ((a:N {n: 'a'})-[r:R]->+(d:N {n: 'd'}) WHERE size(r) > 2) RETURN length(p)";
    assert_eq!(one(q), ResultValue::Int(3));
    let q = "MATCH p = SHORTEST 1 (a:N {n: 'a'})-[r:R]->+(d:N {n: 'd'}) WHERE size(r) > 2 RETURN length(p)";
    assert!(run(q).is_empty());
    let q = "MATCH p = ALL SHORTEST ((a:N {n: 'a'})-[r:R]->+(d:N {n: 'd'}) WHERE none(x IN nodes(p) WHERE x.n = 'x')) \
             RETURN length(p)";
    assert_eq!(engine.execute(&store, q, &Params::new()).unwrap_err().detail, "InvalidReference");
    let q = "MATCH ((a:N)-[:R]->(b:N) WHERE b.n = 'd') RETURN a.n ORDER BY a.n";
    assert_eq!(run(q), vec![vec![s("c")], vec![s("x")], vec![s("y")]]);
    // `any` stays a variable name.
    assert_eq!(one("MATCH (any:N {n: 'a'}) RETURN any.n"), s("a"));
}

/// `USE` names the one graph there is.
#[test]
fn use_names_the_one_graph() {
    assert_eq!(one("USE neo4j RETURN 1"), ResultValue::Int(1));
    assert_eq!(one("USE `NEO4J` CALL { USE neo4j RETURN 2 AS x } RETURN x"), ResultValue::Int(2));
    assert_eq!(one("USE graph.byName('neo4j') RETURN 3"), ResultValue::Int(3));
    assert_eq!(err("USE other MATCH (n) RETURN n").detail, "GraphNotFound");
    assert_eq!(one("WITH 1 AS use RETURN use"), ResultValue::Int(1));
}

/// A relationship type computed per row, `[:$(expr)]`, in CREATE, MERGE and MATCH (Neo4j 5.26): what LOAD CSV
/// imports with a type column need.
#[test]
fn computed_relationship_types() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows;
    let one = |q: &str| run(q).remove(0).remove(0);
    run("CREATE (a:P {n: 1}), (b:P {n: 2}) WITH a, b UNWIND ['KNOWS', 'LIKES'] AS t CREATE (a)-[:$(t)]->(b)");
    assert_eq!(one("MATCH ()-[r:$('KNOWS')]->(b) RETURN b.n"), ResultValue::Int(2));
    assert_eq!(one("WITH ['LIKES'] AS t MATCH (a)-[:$(t)]->() RETURN count(a)"), ResultValue::Int(1));
    run("MATCH (a:P {n: 1}), (b:P {n: 2}) MERGE (a)-[:$('KNOWS')]->(b) MERGE (a)-[:$('HATES')]->(b)");
    assert_eq!(one("MATCH ()-[r]->() RETURN count(r)"), ResultValue::Int(3));
    for (q, detail) in [
        ("CREATE ()-[:$('')]->()", "InvalidArgumentType"),
        ("CREATE ()-[:$(['A', 'B'])]->()", "InvalidArgumentType"),
        ("MATCH ()-[:$('KNOWS')*]->() RETURN 1", "UnsupportedFeature"),
    ] {
        assert_eq!(engine.execute(&store, q, &Params::new()).unwrap_err().detail, detail, "{q}");
    }
}

/// A pattern predicate between bound nodes takes a shortcut through the adjacency only when nothing but the
/// types is asked of the relationship: a type or label expression is still checked.
#[test]
fn pattern_predicates_keep_their_type_and_label_expressions() {
    let (engine, store) = (Engine::new(), Store::in_memory());
    let run = |q: &str| engine.execute(&store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows;
    run("CREATE (:A)-[:T]->(:B)");
    let q = "MATCH (a:A), (b:B) RETURN exists { (a)-[:!T]->(b) }, count { (a)-[:!T]->(b) }, exists { (a)-->(:!B) }";
    assert_eq!(run(q), vec![vec![ResultValue::Bool(false), ResultValue::Int(0), ResultValue::Bool(false)]]);
    assert_eq!(run("MATCH (a:A), (b:B) WHERE (a)-[:!T]->(b) RETURN count(*)"), vec![vec![ResultValue::Int(0)]]);
}

#[test]
fn normalize_takes_its_form_as_a_keyword_and_is_normalized_tests_it() {
    assert_eq!(one("RETURN normalize('A\\u030A') = '\\u00C5'"), ResultValue::Bool(true));
    assert_eq!(one("RETURN size(normalize('\\u00C5', NFD))"), ResultValue::Int(2));
    assert_eq!(one("RETURN normalize('\\uFB01', nfkc)"), s("fi"));
    assert_eq!(one("WITH 'x' AS NFC RETURN normalize(NFC || 'y', NFD)"), s("xy"));
    assert_eq!(one("RETURN '\\u00C5' IS NORMALIZED"), ResultValue::Bool(true));
    assert_eq!(one("RETURN 'A\\u030A' IS NOT NFC NORMALIZED"), ResultValue::Bool(true));
    assert_eq!(one("RETURN '\\uFB01' IS NFKD NORMALIZED"), ResultValue::Bool(false));
    assert_eq!(one("RETURN 1 IS NORMALIZED"), ResultValue::Null);
    assert_eq!(one("RETURN 'a' IS NORMALIZED AND 'b' IS NOT NULL"), ResultValue::Bool(true));
    assert_eq!(err("RETURN normalize('a', NFX)").kind, ErrorKind::SyntaxError);
    assert_eq!(err("RETURN normalize('a', 'NFC')").kind, ErrorKind::SyntaxError);
    assert_eq!(err("WITH 'NFD' AS f RETURN normalize('a', f)").kind, ErrorKind::SyntaxError);
    assert_eq!(err("RETURN 'a' IS NFC NULL").kind, ErrorKind::SyntaxError);
}

/// A query may end with a subquery that returns nothing (a unit subquery), not with one that returns rows,
/// as in Neo4j: those rows would go nowhere, and the query's writes ran all the same.
#[test]
fn a_query_ends_with_a_unit_subquery_only() {
    let e = err("UNWIND [1] AS x CALL (x) { CREATE (m:M) SET m.x = x RETURN m }");
    assert_eq!((e.kind, e.detail), (ErrorKind::SyntaxError, "InvalidClauseComposition"));
    assert!(e.message.contains("cannot conclude with CALL"), "{}", e.message);
    assert!(run("UNWIND [1] AS x CALL (x) { CREATE (m:M) SET m.x = x }").is_empty());
    assert_eq!(one("UNWIND [1] AS x CALL (x) { CREATE (m:M) RETURN m.x AS y } RETURN y"), ResultValue::Null);
}

/// Errors about how clauses are put together, and wrong argument counts of temporal functions, point at the
/// clause or the call, as every other syntax error does (Neo4j reports a position for each of these).
#[test]
fn clause_composition_and_temporal_arity_errors_have_a_position() {
    for (query, line, column) in [
        ("RETURN 1 AS x\nRETURN 2", 1, 1),
        ("CREATE (n) MATCH (m) RETURN m", 1, 12),
        ("MATCH (n)\nWITH n", 2, 1),
        ("UNWIND [1] AS x", 1, 1),
        ("FOREACH (x IN [1] | MATCH (n) RETURN n)", 1, 1),
        ("RETURN date(1, 2)", 1, 8),
        ("RETURN 1 AS a, duration.between(date())", 1, 16),
        ("RETURN datetime.fromepoch()", 1, 8),
        ("RETURN date.truncate('day')", 1, 8),
        ("RETURN date.nonsense()", 1, 8),
    ] {
        let e = err(query);
        assert_eq!(e.kind, ErrorKind::SyntaxError, "{query}: {e}");
        let at = e.position.unwrap_or_else(|| panic!("{query}: no position in {e}"));
        assert_eq!((at.line, at.column), (line, column), "{query}: {e}");
    }
    let e = err("RETURN coalesce()");
    assert!(e.message.contains("at least 1 argument"), "{e}");
}
