//! `SHOW INDEXES | CONSTRAINTS | PROCEDURES | FUNCTIONS` with `YIELD`, `WHERE` and `RETURN`, in read
//! transactions, and the built-in procedures tools call (`dbms.components`, `db.ping`, `db.schema.*`).

use plexus_cypher::{Access, Engine, ErrorKind, ParamType, Params, ProcedureSignature, ResultValue};
use plexus_storage::Store;

fn s(x: &str) -> ResultValue {
    ResultValue::String(x.into())
}

struct Db {
    store: Store,
    engine: Engine,
}

impl Db {
    fn new() -> Db {
        let db = Db { store: Store::in_memory(), engine: Engine::new() };
        db.run("CREATE INDEX idx_name FOR (p:Person) ON (p.name)");
        db.run("CREATE CONSTRAINT city_id FOR (c:City) REQUIRE c.id IS UNIQUE");
        db.run(
            "CREATE (:Person {name: 'a', age: 3})-[:KNOWS {since: 1}]->(:Person {name: 'b'}), (:City {id: 1}), \
             (:City:Capital {id: 2, at: point({x: 1, y: 2})}), ()",
        );
        db
    }

    fn result(&self, q: &str) -> plexus_cypher::QueryResult {
        // Through a read transaction: SHOW and the built-in procedures only read.
        self.engine.execute_read(&self.store.read(), q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}"))
    }

    fn run(&self, q: &str) -> Vec<Vec<ResultValue>> {
        self.engine.execute(&self.store, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}")).rows
    }

    fn columns(&self, q: &str) -> Vec<String> {
        self.result(q).columns.iter().map(|c| c.to_string()).collect()
    }
}

#[test]
fn indexes_and_constraints_as_neo4j_lists_them() {
    let db = Db::new();
    assert_eq!(
        db.columns("SHOW INDEXES"),
        [
            "id",
            "name",
            "state",
            "populationPercent",
            "type",
            "entityType",
            "labelsOrTypes",
            "properties",
            "indexProvider",
            "owningConstraint",
            "lastRead",
            "readCount"
        ]
    );
    assert_eq!(db.columns("SHOW INDEXES YIELD *").len(), 16);
    // The constraint's backing index carries its name; rows come by name.
    let rows = db.result("SHOW INDEXES YIELD name, type, labelsOrTypes, owningConstraint, createStatement").rows;
    assert_eq!(rows[0][..4], [s("city_id"), s("RANGE"), ResultValue::List(vec![s("City")]), s("city_id")]);
    assert_eq!(rows[1][3], ResultValue::Null);
    assert_eq!(rows[1][4], s("CREATE RANGE INDEX `idx_name` FOR (n:`Person`) ON (n.`name`)"));
    let rows = db.result("SHOW CONSTRAINTS YIELD *").rows;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][2], s("UNIQUENESS"));
    assert_eq!(rows[0][9], s("CREATE CONSTRAINT `city_id` FOR (n:`City`) REQUIRE (n.`id`) IS UNIQUE"));
    // WHERE, ORDER BY, LIMIT and RETURN as in any query.
    assert_eq!(db.result("SHOW INDEXES WHERE name STARTS WITH 'idx'").rows.len(), 1);
    assert_eq!(
        db.result("SHOW INDEXES YIELD name AS n ORDER BY n DESC LIMIT 1 RETURN toUpper(n) AS upper").rows,
        vec![vec![s("IDX_NAME")]]
    );
    assert_eq!(db.engine.access("SHOW ALL INDEXES").unwrap(), Access::Read);
}

#[test]
fn mistakes_in_a_show_command_point_at_themselves() {
    let db = Db::new();
    let err = |q: &str| db.engine.execute_read(&db.store.read(), q, &Params::new()).expect_err(q);
    let e = err("SHOW INDEXES YIELD nope");
    assert_eq!((e.kind, e.position.map(|p| p.column)), (ErrorKind::SyntaxError, Some(20)));
    let e = err("SHOW INDEXES RETURN name");
    assert!(e.message.contains("expected YIELD, WHERE or the end"), "{e}");
    let e = err("SHOW TABLES");
    assert!(e.message.contains("INDEXES, CONSTRAINTS, PROCEDURES or FUNCTIONS"), "{e}");
}

#[test]
fn procedures_and_functions_are_listed() {
    let db = Db::new();
    db.engine.register_procedure(
        ProcedureSignature {
            name: "my.echo".into(),
            inputs: vec![("x".into(), ParamType::Integer)],
            outputs: vec![("y".into(), ParamType::Integer)],
            description: "Echoes its argument.".into(),
        },
        |args| Ok(vec![vec![args[0].clone()]]),
    );
    let names: Vec<ResultValue> =
        db.result("SHOW PROCEDURES YIELD name").rows.into_iter().map(|r| r[0].clone()).collect();
    for expected in ["db.labels", "db.ping", "db.schema.nodeTypeProperties", "dbms.components", "my.echo"] {
        assert!(names.contains(&s(expected)), "{expected} in {names:?}");
    }
    let rows = db.result("SHOW PROCEDURES YIELD name, signature, argumentDescription WHERE name = 'my.echo'").rows;
    assert_eq!(rows[0][1], s("my.echo(x :: INTEGER) :: (y :: INTEGER)"));
    let described = db.result("SHOW PROCEDURES YIELD name, description WHERE name = 'my.echo' RETURN description").rows;
    assert_eq!(described, vec![vec![s("Echoes its argument.")]]);
    let ResultValue::List(args) = &rows[0][2] else { panic!("{rows:?}") };
    assert_eq!(args.len(), 1);
    assert_eq!(
        db.result("SHOW FUNCTIONS YIELD name, category, aggregating WHERE name IN ['count', 'point.distance']").rows,
        vec![
            vec![s("count"), s("Aggregating"), ResultValue::Bool(true)],
            vec![s("point.distance"), s("Spatial"), ResultValue::Bool(false)]
        ]
    );
    assert!(db.result("SHOW USER DEFINED FUNCTIONS").rows.is_empty());
    // Kinds there are none of list nothing.
    for q in
        ["SHOW TEXT INDEXES", "SHOW LOOKUP INDEXES", "SHOW KEY CONSTRAINTS", "SHOW NODE PROPERTY EXISTENCE CONSTRAINTS"]
    {
        assert!(db.result(q).rows.is_empty(), "{q}");
    }
    let rows =
        db.result("SHOW PROCEDURES YIELD name, mode, worksOnSystem WHERE name IN ['dbms.components', 'my.echo']").rows;
    assert_eq!(
        rows,
        vec![
            vec![s("dbms.components"), s("DBMS"), ResultValue::Bool(true)],
            vec![s("my.echo"), s("READ"), ResultValue::Bool(false)]
        ]
    );
}

/// A procedure registered after `SHOW PROCEDURES` ran is listed the next time (the plan is not kept).
#[test]
fn registering_a_procedure_renews_the_listing() {
    let db = Db::new();
    let count = |db: &Db| db.result("SHOW PROCEDURES YIELD name RETURN count(*)").rows[0][0].clone();
    let before = count(&db);
    db.engine.register_procedure(ProcedureSignature { name: "my.later".into(), ..Default::default() }, |_| Ok(vec![]));
    let ResultValue::Int(n) = before else { panic!() };
    assert_eq!(count(&db), ResultValue::Int(n + 1));
}

/// `SHOW FUNCTIONS` lists only functions that exist, and every pure function.
#[test]
fn the_function_list_matches_the_functions() {
    let db = Db::new();
    let listed: Vec<String> = db
        .result("SHOW FUNCTIONS YIELD name")
        .rows
        .into_iter()
        .map(|r| match &r[0] {
            ResultValue::String(n) => n.to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    for name in &listed {
        if ["all", "any", "none", "single", "reduce"].contains(&name.as_str()) {
            continue; // syntax rather than calls
        }
        if let Err(e) = db.engine.execute_read(&db.store.read(), &format!("RETURN {name}() AS x"), &Params::new()) {
            assert_ne!(e.detail, "UnknownFunction", "{name}: {e}");
        }
    }
    // Names with a space are the parser's own (`trim both` for `trim(BOTH ... FROM ...)`).
    for name in plexus_cypher::functions::names().filter(|n| !n.contains(' ')) {
        assert!(listed.iter().any(|l| l.eq_ignore_ascii_case(name)), "{name} is not listed");
    }
}

#[test]
fn tools_read_the_schema_and_the_version() {
    let db = Db::new();
    let rows = db.result("CALL db.schema.nodeTypeProperties()").rows;
    let row = |label: &str, prop: &str| {
        rows.iter().find(|r| r[0] == s(label) && r[2] == (if prop.is_empty() { ResultValue::Null } else { s(prop) }))
    };
    assert_eq!(row(":`Person`", "age").unwrap()[3..], [ResultValue::List(vec![s("Long")]), ResultValue::Bool(false)]);
    assert_eq!(row(":`Person`", "name").unwrap()[4], ResultValue::Bool(true));
    assert_eq!(row(":`Capital`:`City`", "at").unwrap()[3], ResultValue::List(vec![s("Point")]));
    assert_eq!(row("", "").unwrap()[1], ResultValue::List(vec![]));
    assert_eq!(
        db.result("CALL db.schema.relTypeProperties()").rows,
        vec![vec![s(":`KNOWS`"), s("since"), ResultValue::List(vec![s("Long")]), ResultValue::Bool(true)]]
    );
    let r = db.result("CALL dbms.components() YIELD name, versions, edition RETURN name, versions[0] AS v, edition");
    assert_eq!(
        r.rows,
        vec![vec![s("Neo4j Kernel"), s(plexus_cypher::builtin::NEO4J_COMPATIBLE_VERSION), s("community")]]
    );
    assert_eq!(db.result("CALL db.ping()").rows, vec![vec![ResultValue::Bool(true)]]);
}

/// An index and a uniqueness constraint on the same label and property would be two indexes on one schema: each
/// is refused while the other exists (as in Neo4j), and nothing is left behind by the refusal.
#[test]
fn an_index_and_a_uniqueness_constraint_do_not_share_a_property() {
    let db = Db::new();
    let err = |q: &str| db.engine.execute(&db.store, q, &Params::new()).expect_err(q);
    for q in [
        "CREATE CONSTRAINT person_name FOR (p:Person) REQUIRE p.name IS UNIQUE",
        "CREATE CONSTRAINT person_name IF NOT EXISTS FOR (p:Person) REQUIRE p.name IS UNIQUE",
    ] {
        let e = err(q);
        assert_eq!((e.kind, e.detail), (ErrorKind::SemanticError, "IndexAlreadyExists"), "{q}: {e}");
    }
    let e = err("CREATE INDEX city_id_index FOR (c:City) ON (c.id)");
    assert_eq!(e.detail, "ConstraintAlreadyExists", "{e}");
    db.run("CREATE INDEX city_id_index IF NOT EXISTS FOR (c:City) ON (c.id)");
    let names = db.run("SHOW INDEXES YIELD name RETURN name ORDER BY name");
    assert_eq!(names, vec![vec![s("city_id")], vec![s("idx_name")]]);
    // With the index dropped, the constraint can be made.
    db.run("DROP INDEX idx_name");
    db.run("CREATE CONSTRAINT person_name FOR (p:Person) REQUIRE p.name IS UNIQUE");
}

/// Scripts wait for their indexes with `db.awaitIndexes()`: here every index is online once the statement that
/// creates it commits, so they return at once, and `db.awaitIndex` checks the name.
#[test]
fn waiting_for_indexes() {
    let db = Db::new();
    for q in
        ["CALL db.awaitIndexes()", "CALL db.awaitIndexes(10)", "CALL db.awaitIndexes", "CALL db.awaitIndex('idx_name')"]
    {
        assert!(db.result(q).rows.is_empty(), "{q}");
    }
    assert_eq!(
        db.run("MATCH (p:Person) CALL db.awaitIndex('city_id', 5) RETURN count(*)"),
        vec![vec![ResultValue::Int(2)]]
    );
    let err = |q: &str| db.engine.execute_read(&db.store.read(), q, &Params::new()).unwrap_err();
    assert_eq!(err("CALL db.awaitIndex('nope')").kind, ErrorKind::ProcedureError);
    assert_eq!(err("CALL db.awaitIndex()").kind, ErrorKind::SyntaxError);
    assert_eq!(err("CALL db.awaitIndexes(1, 2)").kind, ErrorKind::SyntaxError);
    assert_eq!(err("CALL db.awaitIndexes(-1)").kind, ErrorKind::ArgumentError);
}

#[test]
fn return_star_after_yield_keeps_the_yield_order() {
    let db = Db::new();
    assert_eq!(db.columns("SHOW CONSTRAINTS YIELD name, type, entityType RETURN *"), ["name", "type", "entityType"]);
    assert_eq!(db.columns("SHOW INDEXES YIELD type, name RETURN *, 1 AS one"), ["type", "name", "one"]);
}

/// `OPTIONAL CALL proc() YIELD ... [WHERE ...]` keeps a row the procedure yields nothing for, with nulls.
#[test]
fn optional_procedure_calls() {
    let db = Db::new();
    let q = "MATCH (p:Person) OPTIONAL CALL db.labels() YIELD label WHERE label = 'Nope' RETURN p.name, label";
    assert_eq!(db.run(q).len(), 2);
    assert!(db.run(q).iter().all(|row| row[1] == ResultValue::Null));
    let q = "MATCH (p:Person) OPTIONAL CALL db.labels() YIELD label WHERE label STARTS WITH 'C' RETURN count(label)";
    assert_eq!(db.run(q), vec![vec![ResultValue::Int(4)]]);
    let q = "MATCH (p:Person) CALL db.labels() YIELD label WHERE label = 'Nope' RETURN count(*)";
    assert_eq!(db.run(q), vec![vec![ResultValue::Int(0)]]);
}

/// EXPLAIN of an index or constraint command shows its operator and changes nothing, in any kind of
/// transaction and on a read-only database; PROFILE runs it and shows the same operator.
#[test]
fn explain_plans_schema_commands_without_running_them() {
    let db = Db::new();
    let names = |db: &Db, what: &str| -> Vec<ResultValue> {
        db.run(&format!("SHOW {what} YIELD name RETURN name ORDER BY name")).into_iter().map(|r| r[0].clone()).collect()
    };
    let (indexes, constraints) = (names(&db, "INDEXES"), names(&db, "CONSTRAINTS"));
    for (q, operator) in [
        ("EXPLAIN DROP CONSTRAINT city_id", "DropConstraint"),
        ("EXPLAIN DROP INDEX idx_name", "DropIndex"),
        ("EXPLAIN CREATE INDEX other FOR (n:Other) ON (n.p)", "CreateIndex"),
        ("EXPLAIN CREATE CONSTRAINT other FOR (n:Other) REQUIRE n.k IS UNIQUE", "CreateConstraint"),
    ] {
        let through_store = db.engine.execute(&db.store, q, &Params::new()).unwrap();
        let in_read = db.result(q);
        let mut tx = db.store.write();
        let in_write = db.engine.execute_in(&mut tx, q, &Params::new()).unwrap();
        tx.commit().unwrap();
        for r in [&through_store, &in_read, &in_write] {
            assert!(r.plan.as_deref().is_some_and(|p| p.contains(operator)), "{q}: {:?}", r.plan);
            assert_eq!(r.plan_tree.as_ref().map(|t| t.operator_type()), Some(format!("{operator}@neo4j")), "{q}");
            assert!(r.rows.is_empty() && r.stats == Default::default(), "{q}: {:?}", r.stats);
        }
        assert_eq!(db.engine.access(q).unwrap(), Access::Read, "{q}");
        assert_eq!((names(&db, "INDEXES"), names(&db, "CONSTRAINTS")), (indexes.clone(), constraints.clone()), "{q}");
    }
    let profiled = db.engine.execute(&db.store, "PROFILE DROP CONSTRAINT city_id", &Params::new()).unwrap();
    assert!(profiled.plan.as_deref().is_some_and(|p| p.contains("DropConstraint")), "{:?}", profiled.plan);
    assert_eq!(profiled.stats.constraints_removed, 1);
    assert_eq!(names(&db, "CONSTRAINTS"), Vec::<ResultValue>::new());
}

#[test]
fn explain_of_a_schema_command_runs_on_a_read_only_database() {
    let dir = std::env::temp_dir().join(format!("plexus-explain-schema-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let (store, _) = Store::open(&dir).unwrap();
        Engine::new().execute(&store, "CREATE CONSTRAINT c FOR (n:N) REQUIRE n.k IS UNIQUE", &Params::new()).unwrap();
    }
    let (store, _) = Store::open_read_only(&dir).unwrap();
    let engine = Engine::new();
    let r = engine.execute(&store, "EXPLAIN DROP CONSTRAINT c", &Params::new()).unwrap();
    assert!(r.plan.unwrap().contains("DropConstraint"));
    let err = engine.execute(&store, "DROP CONSTRAINT c", &Params::new()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ReadOnlyDatabase);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Dropping, as an index, the index a uniqueness constraint owns says whose it is.
#[test]
fn dropping_a_constraint_s_index_names_the_constraint() {
    let db = Db::new();
    let err = db.engine.execute(&db.store, "DROP INDEX city_id", &Params::new()).unwrap_err();
    assert!(err.message.contains("belongs to the constraint city_id"), "{err}");
    assert!(db.run("SHOW CONSTRAINTS YIELD name RETURN name").len() == 1);
}

/// `:schema` in Neo4j Browser: a made-up node per label in use and a made-up relationship per type joining two
/// labels, numbered -1, -2, ... as Neo4j numbers virtual entities.
#[test]
fn the_schema_as_a_graph_of_labels_and_types() {
    let db = Db::new();
    db.run("MATCH (p:Person {name: 'b'}), (c:City {id: 2}) CREATE (p)-[:LIVES_IN]->(c)");
    let rows = db.result("CALL db.schema.visualization()").rows;
    assert_eq!(rows.len(), 1);
    let (ResultValue::List(nodes), ResultValue::List(rels)) = (&rows[0][0], &rows[0][1]) else { panic!("{rows:?}") };
    let nodes: Vec<&plexus_cypher::NodeData> =
        nodes.iter().map(|n| if let ResultValue::Node(n) = n { &**n } else { panic!("{n:?}") }).collect();
    let named = |label: &str| nodes.iter().find(|n| n.labels == [label.into()]).unwrap_or_else(|| panic!("{label}"));
    for label in ["Person", "City", "Capital"] {
        assert_eq!(named(label).properties["name"], s(label));
        assert!((named(label).id as i64) < 0, "made-up ids are negative on the wire");
    }
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    assert_eq!(named("Person").properties["indexes"], ResultValue::List(vec![s("name")]));
    assert_eq!(named("City").properties["constraints"], ResultValue::List(vec![s("city_id")]));
    let mut joined: Vec<(String, String, String)> = rels
        .iter()
        .map(|r| {
            let ResultValue::Rel(r) = r else { panic!("{r:?}") };
            let label = |id: u64| nodes.iter().find(|n| n.id == id).unwrap().labels[0].to_string();
            (label(r.start), r.rel_type.to_string(), label(r.end))
        })
        .collect();
    joined.sort();
    let expected = [("Person", "KNOWS", "Person"), ("Person", "LIVES_IN", "Capital"), ("Person", "LIVES_IN", "City")];
    assert_eq!(joined, expected.map(|(a, t, b)| (a.to_string(), t.to_string(), b.to_string())));
    // Its columns can be taken apart like any procedure's.
    let counted = db.result(
        "CALL db.schema.visualization() YIELD nodes, relationships RETURN size(nodes) AS n, size(relationships) AS r",
    );
    assert_eq!(counted.rows, vec![vec![ResultValue::Int(3), ResultValue::Int(3)]]);
    // Made up inside a subquery, they are still returned whole.
    let collected =
        db.result("RETURN COLLECT { CALL db.schema.visualization() YIELD relationships RETURN relationships } AS r");
    let ResultValue::List(outer) = &collected.rows[0][0] else { panic!("{collected:?}") };
    let ResultValue::List(inner) = &outer[0] else { panic!("{outer:?}") };
    assert!(inner.iter().all(|r| matches!(r, ResultValue::Rel(r) if r.rel_type.starts_with(['K', 'L']))), "{inner:?}");
    assert_eq!(inner.len(), 3);
}

/// The schema's made-up nodes and relationships answer expressions as stored ones do: properties, labels,
/// types, ends, label tests and filters (Neo4j Browser and scripts read `n.name` from them).
#[test]
fn expressions_read_the_schema_s_made_up_entities() {
    let db = Db::new();
    let one = |q: &str| {
        let q = format!("CALL db.schema.visualization() YIELD nodes, relationships {q}");
        db.result(&q).rows
    };
    let list = |xs: &[&str]| ResultValue::List(xs.iter().map(|x| s(x)).collect());
    assert_eq!(
        one("UNWIND nodes AS n WITH n WHERE n.name = 'Person' RETURN n.name, n.indexes, labels(n), n:Person, keys(n)"),
        vec![vec![
            s("Person"),
            list(&["name"]),
            list(&["Person"]),
            ResultValue::Bool(true),
            list(&["constraints", "indexes", "name"])
        ]]
    );
    assert_eq!(
        one("UNWIND nodes AS n WITH n ORDER BY n.name RETURN collect(n.name), collect(n:City|Capital)"),
        vec![vec![
            list(&["Capital", "City", "Person"]),
            ResultValue::List([true, true, false].map(ResultValue::Bool).to_vec())
        ]]
    );
    assert_eq!(
        one("UNWIND relationships AS r RETURN type(r), startNode(r).name, endNode(r).name, properties(r), r:KNOWS"),
        vec![vec![s("KNOWS"), s("Person"), s("Person"), ResultValue::Map(Default::default()), ResultValue::Bool(true)]]
    );
    let projected = one(
        "UNWIND nodes AS n WITH n WHERE n.name = 'City' RETURN n {.name, .constraints}, elementId(n) = 'n:' + id(n)",
    );
    let ResultValue::Map(m) = &projected[0][0] else { panic!("{projected:?}") };
    assert_eq!((&m["name"], &m["constraints"]), (&s("City"), &list(&["city_id"])));
    assert_eq!(projected[0][1], ResultValue::Bool(true));
}
