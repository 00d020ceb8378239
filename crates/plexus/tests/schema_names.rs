//! Names given to indexes and constraints are stored with them: they survive a reopen, whether the database comes
//! back from its log or from a checkpoint, and DROP finds them by name afterwards.

use plexus::{Database, Params, ResultValue};

fn run(db: &Database, query: &str) -> Vec<Vec<ResultValue>> {
    db.execute(query, &Params::new()).unwrap_or_else(|e| panic!("{query}: {e}")).rows
}

/// The names SHOW INDEXES lists, in its order (by name).
fn index_names(db: &Database) -> Vec<String> {
    run(db, "SHOW INDEXES YIELD name")
        .into_iter()
        .map(|row| match &row[0] {
            ResultValue::String(name) => name.to_string(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn names_survive_a_reopen_from_the_log_and_from_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let shown = ["constraint_M_k", "index_M_p", "my_con", "my_idx"];
    {
        let db = Database::open(dir.path()).unwrap();
        run(&db, "CREATE INDEX my_idx FOR (n:L) ON (n.p)");
        run(&db, "CREATE CONSTRAINT my_con FOR (n:L) REQUIRE n.k IS UNIQUE");
        run(&db, "CREATE INDEX FOR (n:M) ON (n.p)");
        run(&db, "CREATE CONSTRAINT FOR (n:M) REQUIRE n.k IS UNIQUE");
        run(&db, "CREATE (:L {p: 1, k: 1})");
        assert_eq!(index_names(&db), shown);
    }
    // From the log alone.
    {
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(index_names(&db), shown);
        assert!(db.execute("CREATE INDEX my_idx FOR (n:N) ON (n.q)", &Params::new()).is_err());
        db.checkpoint().unwrap();
    }
    // From the checkpoint.
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(index_names(&db), shown);
    assert!(db.execute("CREATE (:L {k: 1})", &Params::new()).is_err(), "the constraint still holds");
    run(&db, "DROP INDEX my_idx");
    run(&db, "DROP CONSTRAINT my_con");
    drop(db);
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(index_names(&db), ["constraint_M_k", "index_M_p"]);
    run(&db, "CREATE (:L {k: 1})");
}
