//! `CALL db.info()`: the database's id and creation date, stable across reopenings, as Neo4j's tools read them.

use plexus::cypher::ResultValue;
use plexus::{Database, Params};

fn info(db: &Database) -> Vec<String> {
    let result = db
        .execute("CALL db.info() YIELD id, name, creationDate RETURN id, name, creationDate", &Params::new())
        .unwrap();
    assert_eq!(result.columns.to_vec(), ["id", "name", "creationDate"]);
    assert_eq!(result.rows.len(), 1);
    result.rows[0]
        .iter()
        .map(|v| match v {
            ResultValue::String(s) => s.to_string(),
            other => panic!("a string, not {other:?}"),
        })
        .collect()
}

#[test]
fn a_database_keeps_its_id_and_creation_date_across_reopenings() {
    let dir = tempfile::tempdir().unwrap();
    let before = std::time::SystemTime::now();
    let first = info(&Database::open(dir.path()).unwrap());
    let (id, name, created) = (&first[0], &first[1], &first[2]);
    assert_eq!(id.len(), 32, "{id}");
    assert!(id.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase()), "{id}");
    assert_eq!(name, "neo4j");
    // An instant in UTC, written as `toString(datetime())` writes one, and not before the database was made.
    assert!(created.ends_with('Z') && created.contains('T'), "{created}");
    let year = before.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() / (365 * 86_400) + 1970;
    assert!(created.starts_with(&year.to_string()) || created.starts_with(&(year - 1).to_string()), "{created}");
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(info(&Database::open(dir.path()).unwrap()), first);
    assert_eq!(info(&Database::open_read_only(dir.path()).unwrap()), first);
    // Another database has another id.
    let other = tempfile::tempdir().unwrap();
    assert_ne!(info(&Database::open(other.path()).unwrap())[0], *id);
    assert_ne!(info(&Database::in_memory())[0], info(&Database::in_memory())[0]);
}

#[test]
fn show_procedures_lists_db_info() {
    let db = Database::in_memory();
    let result = db
        .execute(
            "SHOW PROCEDURES YIELD name, signature, description WHERE name = 'db.info' RETURN signature, description",
            &Params::new(),
        )
        .unwrap();
    assert_eq!(result.rows.len(), 1);
    assert_eq!(
        result.rows[0],
        [
            ResultValue::String("db.info() :: (id :: STRING, name :: STRING, creationDate :: STRING)".into()),
            ResultValue::String("Provides information regarding the database.".into())
        ]
    );
}
