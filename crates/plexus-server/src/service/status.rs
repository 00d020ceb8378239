//! Cypher's errors as the clients see them: the Neo4j status code each kind of error carries (drivers and tools
//! match on the codes, and retry the transient ones).

use super::*;

impl From<CypherError> for ServerError {
    fn from(e: CypherError) -> ServerError {
        let code = match e.kind {
            // Schema commands that clash with what exists carry Neo4j's own codes, which drivers name.
            _ if e.detail == "IndexWithNameAlreadyExists" => "Neo.ClientError.Schema.IndexWithNameAlreadyExists",
            _ if e.detail == "ConstraintWithNameAlreadyExists" => {
                "Neo.ClientError.Schema.ConstraintWithNameAlreadyExists"
            }
            _ if e.detail == "EquivalentSchemaRuleAlreadyExists" => {
                "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
            }
            _ if e.detail == "ConstraintAlreadyExists" => "Neo.ClientError.Schema.ConstraintAlreadyExists",
            _ if e.detail == "IndexAlreadyExists" => "Neo.ClientError.Schema.IndexAlreadyExists",
            _ if e.detail == "RepeatedPropertyInCompositeSchema" => {
                "Neo.ClientError.Schema.RepeatedPropertyInCompositeSchema"
            }
            // Neo4j reports these two, and a statement committing in parts inside an explicit transaction, as
            // database errors (clients match on these codes).
            _ if e.detail == "ConstraintNotFound" => "Neo.DatabaseError.Schema.ConstraintDropFailed",
            _ if e.detail == "IndexNotFound" => "Neo.DatabaseError.Schema.IndexDropFailed",
            _ if e.detail == "ImplicitTransactionRequired" => "Neo.DatabaseError.Transaction.TransactionStartFailed",
            _ if e.detail == "ConstraintCreationFailed" => "Neo.ClientError.Schema.ConstraintCreationFailed",
            _ if e.detail == "GraphNotFound" => "Neo.ClientError.Database.DatabaseNotFound",
            // Neo4j reports what its semantic analysis finds before running as syntax errors, and semantic errors
            // found while running (MERGE on a null property, deleting a node with relationships) as such.
            ErrorKind::SemanticError if e.phase == plexus::cypher::Phase::Runtime => {
                "Neo.ClientError.Statement.SemanticError"
            }
            ErrorKind::SyntaxError | ErrorKind::SemanticError => "Neo.ClientError.Statement.SyntaxError",
            ErrorKind::ParameterMissing => "Neo.ClientError.Statement.ParameterMissing",
            ErrorKind::TypeError => "Neo.ClientError.Statement.TypeError",
            ErrorKind::ArgumentError | ErrorKind::PropertyNotFound => "Neo.ClientError.Statement.ArgumentError",
            ErrorKind::ArithmeticError => "Neo.ClientError.Statement.ArithmeticError",
            ErrorKind::EntityNotFound => "Neo.ClientError.Statement.EntityNotFound",
            ErrorKind::ConstraintVerificationFailed | ErrorKind::ConstraintValidationFailed => {
                "Neo.ClientError.Schema.ConstraintValidationFailed"
            }
            _ if e.detail == "ProcedureNotFound" => "Neo.ClientError.Procedure.ProcedureNotFound",
            ErrorKind::ProcedureError => "Neo.ClientError.Procedure.ProcedureCallFailed",
            // Another transaction committed a conflicting change first: running again sees it and may succeed.
            ErrorKind::Conflict => OUTDATED,
            ErrorKind::Storage if e.detail == "TransactionCommitFailed" => {
                "Neo.DatabaseError.Transaction.TransactionCommitFailed"
            }
            ErrorKind::Storage => "Neo.DatabaseError.General.UnknownError",
            ErrorKind::Timeout if e.detail == "TransactionTimedOutClientConfiguration" => TIMED_OUT_CLIENT,
            ErrorKind::Timeout => TIMED_OUT,
            ErrorKind::Terminated => TERMINATED,
            ErrorKind::MemoryLimit => "Neo.ClientError.General.TransactionOutOfMemoryError",
            ErrorKind::ReadOnlyDatabase => "Neo.ClientError.General.ForbiddenOnReadOnlyDatabase",
            ErrorKind::ExternalResource => "Neo.ClientError.Statement.ExternalResourceFailed",
            ErrorKind::ExecutionFailed => "Neo.ClientError.Statement.ExecutionFailed",
        };
        // A located error quotes the query's line with a caret under the place, as Neo4j's messages do.
        ServerError { code, message: e.with_excerpt() }
    }
}

impl From<plexus::Error> for ServerError {
    fn from(e: plexus::Error) -> ServerError {
        ServerError::from(CypherError::from(e))
    }
}
