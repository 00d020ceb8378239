//! The runner end to end against a stand-in engine that understands a handful of queries, written with the
//! storage API: results, side effects, errors and parameters go through the same steps as in the real TCK.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;

use plexus::Database;
use plexus_cypher::{CypherError, ErrorKind, NodeData, Params, Phase, QueryResult, ResultValue, Value};
use plexus_tck::runner::{run_scenario_with, Status};
use plexus_tck::scenario::load_feature;

fn fake(db: &Database, query: &str, params: &Params) -> Result<QueryResult, CypherError> {
    let mut result = QueryResult::default();
    match query {
        "CREATE (:A {name: 'x'})" | "CREATE (:A:B {name: 'y'})" => {
            let mut tx = db.write();
            let mut labels = vec![tx.label("A")];
            if query.contains(":B") {
                labels.push(tx.label("B"));
            }
            let name = if query.contains("'x'") { "x" } else { "y" };
            let key = tx.prop_key("name");
            tx.create_node(&labels, vec![(key, plexus::Value::from(name))]).unwrap();
            tx.commit().unwrap();
        }
        "MATCH (n) RETURN n" => {
            result.columns = vec!["n".into()].into();
            let txn = db.read();
            let _ = txn.visit_nodes(|id| {
                let labels = txn
                    .node_labels(id)
                    .unwrap()
                    .iter()
                    .map(|l| txn.catalog().name(plexus::TokenKind::Label, l.0).unwrap())
                    .collect();
                let mut properties = BTreeMap::new();
                for (k, v) in txn.node_props(id).flatten().into_iter().flat_map(|p| p.iter()) {
                    let key = txn.catalog().name(plexus::TokenKind::PropKey, k.0).unwrap();
                    properties.insert(key, ResultValue::String(v.as_str().unwrap().into()));
                }
                result.rows.push(vec![ResultValue::Node(Box::new(NodeData { id: id.0, labels, properties }))]);
                ControlFlow::<()>::Continue(())
            });
        }
        "RETURN $p AS p" => {
            result.columns = vec!["p".into()].into();
            let value = match params.get("p") {
                Some(Value::Int(i)) => ResultValue::Int(*i),
                Some(Value::List(items)) => {
                    ResultValue::List(items.iter().map(|v| ResultValue::Int(v.as_int().unwrap_or_default())).collect())
                }
                _ => return Err(CypherError::new(ErrorKind::ParameterMissing, Phase::CompileTime, "", "no $p")),
            };
            result.rows.push(vec![value]);
        }
        "RETURN 1 / 0" => return Err(CypherError::arithmetic("DivisionByZero", "/ by zero")),
        "BOOM" => panic!("engine bug"),
        _ => return Err(CypherError::syntax("UnexpectedSyntax", "not understood")),
    }
    Ok(result)
}

const FEATURE: &str = r#"Feature: Fake

  Scenario: [1] Create and read back
    Given an empty graph
    And having executed:
      """
      CREATE (:A {name: 'x'})
      """
    When executing query:
      """
      CREATE (:A:B {name: 'y'})
      """
    Then the result should be empty
    And the side effects should be:
      | +nodes      | 1 |
      | +labels     | 1 |
      | +properties | 1 |
    When executing control query:
      """
      MATCH (n) RETURN n
      """
    Then the result should be, in any order:
      | n                    |
      | (:B:A {name: 'y'})   |
      | (:A {name: 'x'})     |

  Scenario: [2] Wrong expectations fail
    Given an empty graph
    When executing query:
      """
      CREATE (:A {name: 'x'})
      """
    Then the result should be empty
    And no side effects

  Scenario Outline: [3] Parameters
    Given any graph
    And parameters are:
      | p | <value> |
    When executing query:
      """
      RETURN $p AS p
      """
    Then the result should be (ignoring element order for lists):
      | p        |
      | <result> |
    And no side effects

    Examples:
      | value     | result    |
      | 1         | 1         |
      | [1, 2, 3] | [3, 1, 2] |
      | 2         | 2.0       |

  Scenario: [4] Errors
    Given any graph
    When executing query:
      """
      RETURN 1 / 0
      """
    Then a ArithmeticError should be raised at runtime: DivideByZero

  Scenario: [5] A panic is a failure
    Given any graph
    When executing query:
      """
      BOOM
      """
    Then the result should be empty
"#;

#[test]
fn scenarios_run_against_a_stand_in_engine() {
    let scenarios = load_feature("fake/area/Fake.feature", FEATURE).unwrap();
    let outcomes: Vec<_> = scenarios
        .iter()
        .map(|s| {
            std::panic::catch_unwind(|| run_scenario_with(s, Path::new("."), &fake))
                .map(|o| (o.status, o.message, o.notes))
                .unwrap_or((Status::Failed, "panicked".into(), vec![]))
        })
        .collect();
    let status: Vec<Status> = outcomes.iter().map(|o| o.0).collect();
    use Status::*;
    assert_eq!(status, [Passed, Failed, Passed, Passed, Failed, Passed, Failed], "{outcomes:#?}");
    assert!(outcomes[1].1.contains("side effects: expected none, got +nodes 1, +labels 1, +properties 1"));
    assert!(outcomes[4].1.contains("rows differ"), "{}", outcomes[4].1);
    assert_eq!(outcomes[5].2, ["detail: expected DivideByZero, got DivisionByZero"]);
}
