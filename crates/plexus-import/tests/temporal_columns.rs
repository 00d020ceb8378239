//! Temporal columns store exactly what Cypher's constructor functions make of the same text: every input Cypher
//! accepts is imported and compares equal (and prints the same) as `date(text)`, `datetime(text)`, ...; every input
//! Cypher refuses is a bad value in the importer too.

use plexus::{Database, Params, ResultValue};
use plexus_import::load::{import_graph, GraphImport};
use plexus_import::nodes_rels::NodeFiles;
use plexus_import::progress::Progress;
use plexus_import::values::{parse_scalar, ScalarType};

const INPUTS: &[(&str, &[&str])] = &[
    (
        "date",
        &[
            "2024-01-01",
            "2024-02-29",
            "2023-02-29",
            "20240101",
            "2024-W01-1",
            "2024W011",
            "2024-W52",
            "2024-001",
            "2024001",
            "2024-366",
            "2023-366",
            "2024-01",
            "2024",
            "2024-Q3-45",
            "-0044-03-15",
            "+999999999-12-31",
            "1000000000-01-01",
            "2024-13-01",
            "2024-1-1",
            "24-01-01",
            "",
            "x",
            "2024-01-01T10:00",
        ],
    ),
    (
        "localtime",
        &[
            "10",
            "10:00",
            "1000",
            "10:00:30",
            "100030",
            "10:00:30.5",
            "10:00:30,123456789",
            "23:59:59.999999999",
            "24:00",
            "10:60",
            "10:00:60",
            "10:00Z",
            "10:00+01:00",
            "1",
            "",
            "10:00:30.1234567891",
        ],
    ),
    (
        "time",
        &[
            "10",
            "10:00",
            "10:00Z",
            "10:00+01:00",
            "10:00-0130",
            "10:00+02",
            "10:00:30.25+05:45",
            "1000Z",
            "10:00z",
            "10:00+19:00",
            "10:00[Europe/Berlin]",
            "10:00+01:00[Europe/Berlin]",
            "25:00",
            "",
        ],
    ),
    (
        "localdatetime",
        &[
            "2024-01-01T10:00",
            "2024-01-01T10",
            "20240101T1000",
            "2024-W01-1T10:00:30.5",
            "2024-001T00:00",
            "2024-01T10:00",
            "2024T10:00",
            "2024-01-01",
            "2024-01-01 10:00",
            "2024-01-01T10:00Z",
            "2024-01-01T10:00[Europe/Berlin]",
            "2024-01-01T24:00",
            "",
        ],
    ),
    (
        "datetime",
        &[
            "2024-01-01T10:00:00Z",
            "2024-01-01T10:00:00Z[Europe/Berlin]",
            "2024-06-01T10:00:00+01:00[Europe/Berlin]",
            "2024-06-01T10:00:00+02:00[Europe/Berlin]",
            "2024-01-01T10:00:00+01:00[Europe/Berlin]",
            "2024-06-01T10:00[Europe/Berlin]",
            "2024-01-01T10:00[Europe/Berlin]",
            "2024-03-31T02:30[Europe/Berlin]",
            "2024-10-27T02:30[Europe/Berlin]",
            "2024-10-27T02:30+01:00[Europe/Berlin]",
            "2024-10-27T02:30+02:00[Europe/Berlin]",
            "2024-01-01T10:00[Mars/Olympus]",
            "2024-01-01",
            "2024-W01-1",
            "2024-001T10",
            "2024-01-01T10:00",
            "2024-01-01T10:00+01:00",
            "2024-01-01T10:00-0130",
            "2024-01-01T10:00+02",
            "2024-01-01T10:00:30.123456789+05:45",
            "2024-01-01T10:00+01:00[+01:00]",
            "2024-01-01T10:00[UTC]",
            "2024-01-01T10:00Z[UTC]",
            "2024-01-01T10:00+19:00",
            "2024-01-01 10:00",
            "2024-01-01T25:00",
            "",
        ],
    ),
    (
        "duration",
        &[
            "P1Y2M3W4DT5H6M7.5S",
            "PT1S",
            "-PT1S",
            "P0.5D",
            "P1.5Y",
            "PT0.5H",
            "P-1D",
            "PT-0.5S",
            "P2012-02-02T14:37:21.545",
            "P1W",
            "PT1M",
            "P1M",
            "P",
            "PT",
            "1D",
            "P1S",
            "P1DT",
            "",
        ],
    ),
];

fn scalar_type(name: &str) -> ScalarType {
    ScalarType::from_name(name).unwrap()
}

fn label(name: &str) -> String {
    format!("T_{name}")
}

#[test]
fn temporal_columns_store_what_cypher_makes_of_the_text() {
    let cypher = Database::in_memory();
    let tmp = tempfile::tempdir().unwrap();
    let mut nodes = Vec::new();
    let mut accepted = 0;
    let mut refused = 0;
    for (function, inputs) in INPUTS {
        let mut csv = format!("id:ID({function}),s,v:{function}\n");
        for (i, text) in inputs.iter().enumerate() {
            let params: Params = [("s".to_string(), plexus::cypher::Value::string(*text))].into_iter().collect();
            let by_cypher = cypher.execute(&format!("RETURN {function}($s) AS v"), &params);
            let by_import = parse_scalar(scalar_type(function), text.as_bytes());
            match (&by_cypher, &by_import) {
                (Ok(_), Ok(_)) => {
                    csv.push_str(&format!("{i},\"{text}\",\"{text}\"\n"));
                    accepted += 1;
                }
                (Err(_), Err(_)) => refused += 1,
                _ => panic!("{function}('{text}'): Cypher says {by_cypher:?}, the importer says {by_import:?}"),
            }
        }
        let file = tmp.path().join(format!("{function}.csv"));
        std::fs::write(&file, csv).unwrap();
        nodes.push(NodeFiles { files: vec![file], labels: vec![label(function)], ..Default::default() });
    }
    assert!(accepted > 60 && refused > 20, "{accepted} accepted, {refused} refused");

    let db_dir = tmp.path().join("db");
    let spec = GraphImport { nodes, ..Default::default() };
    import_graph(&db_dir, &spec, &Progress::new()).unwrap();
    let db = Database::open(&db_dir).unwrap();
    for (function, _) in INPUTS {
        let query = format!(
            "MATCH (n:{}) WITH n, {function}(n.s) AS parsed \
             RETURN n.s, n.v = parsed AND toString(n.v) = toString(parsed) AS same, toString(n.v), toString(parsed)",
            label(function)
        );
        let result = db.execute(&query, &Params::new()).unwrap();
        assert!(!result.rows.is_empty(), "{function}");
        for row in &result.rows {
            assert_eq!(row[1], ResultValue::Bool(true), "{function}: {row:?}");
        }
    }
}

#[test]
fn an_offset_that_does_not_match_the_zone_is_a_bad_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("d.csv");
    std::fs::write(
        &file,
        "id:ID,v:datetime\n1,2024-06-01T10:00:00+02:00[Europe/Berlin]\n2,2024-01-01T10:00:00Z[Europe/Berlin]\n",
    )
    .unwrap();
    let spec = GraphImport {
        nodes: vec![NodeFiles { files: vec![file], labels: vec!["D".into()], ..Default::default() }],
        ..Default::default()
    };
    let db = tmp.path().join("db");
    let err = import_graph(&db, &spec, &Progress::new()).unwrap_err().to_string();
    assert!(err.contains("d.csv") && err.contains("line 3, column 3"), "{err}");
    assert!(err.contains("offset and time zone do not match"), "{err}");
    assert!(!db.exists());
}
