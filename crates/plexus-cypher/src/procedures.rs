//! Procedures an application registers with
//! [`crate::Engine::register_procedure`] (a signature and a Rust function from arguments to rows); the built-in
//! ones are in [`crate::builtin`].

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::Result;
use crate::value::Value;

/// The type of a procedure argument or output, as written in signatures (`name :: STRING?`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    Any,
    String,
    Integer,
    Float,
    Number,
    Boolean,
    Map,
    List,
    Node,
    Relationship,
    Path,
}

impl ParamType {
    /// Parses `STRING?`, `INTEGER`, `LIST? OF ...` (the `?` meaning "or null" is accepted and ignored: every
    /// type admits null here).
    pub fn parse(text: &str) -> Option<ParamType> {
        let t = text.trim().trim_end_matches('?').to_ascii_uppercase();
        Some(match t.split_whitespace().next()? {
            "ANY" => ParamType::Any,
            "STRING" => ParamType::String,
            "INTEGER" | "INT" => ParamType::Integer,
            "FLOAT" => ParamType::Float,
            "NUMBER" => ParamType::Number,
            "BOOLEAN" => ParamType::Boolean,
            "MAP" => ParamType::Map,
            "LIST" => ParamType::List,
            "NODE" => ParamType::Node,
            "RELATIONSHIP" => ParamType::Relationship,
            "PATH" => ParamType::Path,
            _ => return None,
        })
    }

    /// The type as signatures write it.
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Any => "ANY",
            ParamType::String => "STRING",
            ParamType::Integer => "INTEGER",
            ParamType::Float => "FLOAT",
            ParamType::Number => "NUMBER",
            ParamType::Boolean => "BOOLEAN",
            ParamType::Map => "MAP",
            ParamType::List => "LIST<ANY>",
            ParamType::Node => "NODE",
            ParamType::Relationship => "RELATIONSHIP",
            ParamType::Path => "PATH",
        }
    }

    /// Whether `v` may be passed as this type (null always may; an integer may stand for a float).
    pub fn accepts(self, v: &Value) -> bool {
        matches!(
            (self, v),
            (_, Value::Null)
                | (ParamType::Any, _)
                | (ParamType::String, Value::String(_))
                | (ParamType::Integer, Value::Int(_))
                | (ParamType::Float, Value::Float(_) | Value::Int(_))
                | (ParamType::Number, Value::Int(_) | Value::Float(_))
                | (ParamType::Boolean, Value::Bool(_))
                | (ParamType::Map, Value::Map(_))
                | (ParamType::List, Value::List(_))
                | (ParamType::Node, Value::Node(_))
                | (ParamType::Relationship, Value::Rel(_))
                | (ParamType::Path, Value::Path(_))
        )
    }
}

/// What a procedure takes and yields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcedureSignature {
    /// Dotted name, e.g. `my.proc`.
    pub name: String,
    pub inputs: Vec<(String, ParamType)>,
    pub outputs: Vec<(String, ParamType)>,
    /// What `SHOW PROCEDURES` says the procedure does (empty: nothing).
    pub description: String,
}

/// The body of a registered procedure: arguments in signature order → rows of outputs in signature order.
pub type ProcedureFn = dyn Fn(&[Value]) -> Result<Vec<Vec<Value>>> + Send + Sync;

pub struct UserProcedure {
    pub signature: ProcedureSignature,
    pub body: Box<ProcedureFn>,
}

impl std::fmt::Debug for UserProcedure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserProcedure({})", self.signature.name)
    }
}

/// Registered procedures by lower-cased name.
#[derive(Default)]
pub struct ProcedureRegistry {
    procedures: HashMap<String, Arc<UserProcedure>>,
}

impl ProcedureRegistry {
    pub fn register(&mut self, procedure: UserProcedure) {
        self.procedures.insert(procedure.signature.name.to_ascii_lowercase(), Arc::new(procedure));
    }

    pub fn get(&self, name: &str) -> Option<Arc<UserProcedure>> {
        self.procedures.get(&name.to_ascii_lowercase()).cloned()
    }

    /// Every registered procedure, in no particular order.
    pub fn all(&self) -> impl Iterator<Item = &Arc<UserProcedure>> {
        self.procedures.values()
    }
}
