//! `CALL tx.setMetaData(map)`: the metadata `SHOW TRANSACTIONS` lists for the explicit transaction the call runs
//! in, as a BEGIN's `tx_metadata` sets it (Neo4j's procedure, which applications call where their driver's
//! transaction configuration does not reach). In an auto-commit statement it sets nothing anyone could see, and
//! answers as Neo4j does: no rows.

use std::sync::Arc;

use plexus::cypher::{Interrupt, Value};
use plexus::Params;

use crate::service::{Outcome, ServerError, Service};
use crate::system::after_call;

const PROCEDURE: &str = "tx.setMetaData";

/// The argument's text, when `query` is a call of the procedure and nothing else.
pub fn parse(query: &str) -> Option<&str> {
    let rest = after_call(query.trim(), PROCEDURE)?.trim_start();
    let inside = rest.strip_prefix('(')?.trim_end().trim_end_matches(';').trim_end().strip_suffix(')')?;
    Some(inside)
}

/// Evaluates `argument` (a map, a parameter holding one, or null for none) and makes it transaction
/// `transaction`'s metadata.
pub fn run(
    service: &Service,
    argument: &str,
    params: &Params,
    transaction: Option<u64>,
    interrupt: &Arc<Interrupt>,
) -> Result<Outcome, ServerError> {
    let wrong = |what: &str| {
        ServerError::new(
            "Neo.ClientError.Statement.TypeError",
            format!("{PROCEDURE} takes one map of metadata, got {what}"),
        )
    };
    if argument.trim().is_empty() {
        return Err(ServerError::new(
            "Neo.ClientError.Statement.ArgumentError",
            format!("{PROCEDURE} takes one argument: a map of metadata"),
        ));
    }
    // Evaluated as a listing is, on a snapshot, where a statement that writes is refused: the text is the client's.
    let query = format!("RETURN {argument} AS metadata");
    let (evaluated, _) = crate::system::run_listing(service, &query, Vec::new(), params, interrupt)?;
    let metadata = match evaluated.rows.as_slice() {
        [row] if row.len() == 1 => match row[0].clone().into_value() {
            Value::Map(map) => Some(map),
            Value::Null => None,
            other => return Err(wrong(other.type_name())),
        },
        _ => return Err(wrong("more than one value")),
    };
    if let Some(id) = transaction {
        service.registry.set_metadata(id, metadata);
    }
    let result = plexus::QueryResult::default();
    Ok(Outcome { result, bookmark: None, query_type: "r" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_call_of_the_procedure_alone_is_taken() {
        assert_eq!(parse("CALL tx.setMetaData({app: 'x'})"), Some("{app: 'x'}"));
        assert_eq!(parse("  call TX.SETMETADATA ( $m ) ;"), Some(" $m "));
        assert_eq!(parse("CALL tx.setMetaData({}) RETURN 1"), None);
        assert_eq!(parse("CALL tx.getMetaData()"), None);
        assert_eq!(parse("MATCH (n) RETURN n"), None);
    }
}
