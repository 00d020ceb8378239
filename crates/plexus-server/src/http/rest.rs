//! REST resources for nodes over the embedded graph API, without Cypher: by id (`/db/{name}/nodes/{id}`) and by
//! label and unique key (`/db/{name}/labels/{label}/nodes/{key}`), plus the helpers the relationship resources in
//! [`super::relationships`] share (ids from URL segments, entities as JSON, storage errors as HTTP errors). Writes
//! commit before answering and are retried on write conflicts; readers may read, writers may also write.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use plexus::cypher::value::{NodeData, RelData};
use plexus::cypher::ResultValue;
use plexus::value::Value as Stored;
use plexus::{Direction, LabelId, NodeId, RelId, TokenKind, TypeFilter, WriteTxn};
use plexus_storage::{Catalog, GraphState};
use serde::Deserialize;
use serde_json::{json, Value as Json};

use super::caller::Caller;
use super::error::ApiError;
use super::json::{self, Format};
use super::{blocking, body_formats, formats, json_response, HttpState};
use crate::auth::Role;
use crate::bolt::values::node_element_id;
use crate::service::ServerError;

pub(super) type Body = Result<Bytes, BytesRejection>;

/// How long a REST write keeps retrying when other transactions commit conflicting changes first, before it
/// answers 409. Concurrent writers of the same entities (say sixteen clients upserting the same edge) each
/// commit in turn within this.
const RETRY_FOR: Duration = Duration::from_secs(2);
/// The first pause between attempts; each pause doubles (up to [`MAX_PAUSE`]) and is jittered, so writers that
/// clashed once do not clash again in step.
const FIRST_PAUSE: Duration = Duration::from_millis(1);
const MAX_PAUSE: Duration = Duration::from_millis(100);

/// Runs `work` in a write transaction and commits, running it again after a pause when another transaction
/// committed a conflicting change first, for up to [`RETRY_FOR`].
pub(super) fn write_retrying<T>(
    db: &plexus::Database,
    work: impl FnMut(&mut plexus::WriteTxn) -> plexus::Result<T>,
) -> plexus::Result<T> {
    retry_for(db, RETRY_FOR, work)
}

fn retry_for<T>(
    db: &plexus::Database,
    budget: Duration,
    mut work: impl FnMut(&mut plexus::WriteTxn) -> plexus::Result<T>,
) -> plexus::Result<T> {
    let deadline = Instant::now() + budget;
    let mut pause = FIRST_PAUSE;
    loop {
        let mut tx = db.write();
        let value = work(&mut tx)?;
        match tx.commit() {
            Ok(_) => return Ok(value),
            Err(e) if e.is_retryable() && Instant::now() < deadline => {
                // Full jitter: anywhere from nothing to the current pause, never past the deadline.
                let jittered = pause.mul_f64(rand::random::<f64>());
                std::thread::sleep(jittered.min(deadline.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(MAX_PAUSE);
            }
            Err(e) => return Err(e),
        }
    }
}

/// A storage error as a client sees it.
pub(super) fn storage_error(e: plexus::Error) -> ApiError {
    use plexus::Error as E;
    let code = match &e {
        E::NodeNotFound(_) | E::RelNotFound(_) => "Neo.ClientError.Statement.EntityNotFound",
        E::NodeHasRelationships(..)
        | E::ConstraintViolation(_)
        | E::UniqueKeyTaken { .. }
        | E::CompositeKeyTaken { .. }
        | E::RelKeyTaken { .. } => "Neo.ClientError.Schema.ConstraintValidationFailed",
        E::InvalidValue(_) => "Neo.ClientError.Statement.TypeError",
        E::Conflict(_) => "Neo.TransientError.Transaction.Outdated",
        _ => "Neo.DatabaseError.General.UnknownError",
    };
    ApiError::from(ServerError::new(code, e.to_string()))
}

pub(super) fn check(state: &HttpState, name: &str, caller: &Caller, writes: bool) -> Result<(), ApiError> {
    state.service.check_database(Some(name))?;
    if writes {
        state.service.require_role(caller.role, Role::Writer, "Writing")?;
    }
    Ok(())
}

pub(super) fn node_id(segment: &str) -> Result<NodeId, ApiError> {
    json::parse_node_id(segment)
        .map(NodeId)
        .ok_or_else(|| ApiError::bad_request(format!("'{segment}' is not a node id: use a number or 'n:<number>'")))
}

pub(super) fn rel_id(segment: &str) -> Result<RelId, ApiError> {
    json::parse_rel_id(segment).map(RelId).ok_or_else(|| {
        ApiError::bad_request(format!("'{segment}' is not a relationship id: use a number or 'r:<number>'"))
    })
}

pub(super) fn no_node(id: NodeId) -> ApiError {
    ApiError::not_found(format!("node {} does not exist", id.0))
}

pub(super) fn no_rel(id: RelId) -> ApiError {
    ApiError::not_found(format!("relationship {} does not exist", id.0))
}

/// A stored property value as a result value.
fn result_of(v: &Stored) -> ResultValue {
    match v {
        Stored::Null => ResultValue::Null,
        Stored::Bool(b) => ResultValue::Bool(*b),
        Stored::Int(i) => ResultValue::Int(*i),
        Stored::Float(f) => ResultValue::Float(*f),
        Stored::String(s) => ResultValue::String(s.clone()),
        Stored::Bytes(b) => ResultValue::Bytes(b.clone()),
        Stored::Date(d) => ResultValue::Date(*d),
        Stored::LocalTime(t) => ResultValue::LocalTime(*t),
        Stored::Time(t) => ResultValue::Time(*t),
        Stored::LocalDateTime(t) => ResultValue::LocalDateTime(*t),
        Stored::DateTime(t) => ResultValue::DateTime(t.clone()),
        Stored::Duration(d) => ResultValue::Duration(**d),
        Stored::Point(p) => ResultValue::Point(**p),
        Stored::List(items) => ResultValue::List(items.iter().map(result_of).collect()),
    }
}

fn properties(props: Option<&plexus::PropMap>, catalog: &Catalog) -> BTreeMap<Arc<str>, ResultValue> {
    props
        .map(|p| {
            p.iter()
                .map(|(k, v)| (catalog.name(TokenKind::PropKey, k.0).unwrap_or_else(|| "?".into()), result_of(v)))
                .collect()
        })
        .unwrap_or_default()
}

/// A node as JSON, if it exists.
pub(super) fn node_json(g: &GraphState, catalog: &Catalog, id: NodeId, format: Format) -> Option<Json> {
    let mut labels: Vec<Arc<str>> =
        g.node_labels(id)?.iter().map(|l| catalog.name(TokenKind::Label, l.0).unwrap_or_else(|| "?".into())).collect();
    labels.sort();
    let node = NodeData { id: id.0, labels, properties: properties(g.node_props(id).flatten(), catalog) };
    Some(json::encode(&ResultValue::Node(Box::new(node)), format))
}

/// A relationship as JSON, if it exists.
pub(super) fn rel_json(g: &GraphState, catalog: &Catalog, id: RelId, format: Format) -> Option<Json> {
    let rec = g.rel(id)?;
    let rel = RelData {
        id: id.0,
        start: rec.src.0,
        end: rec.dst.0,
        rel_type: catalog.name(TokenKind::Type, rec.ty.0).unwrap_or_else(|| "?".into()),
        properties: properties(g.rel_props(id).flatten().as_deref(), catalog),
    };
    Some(json::encode(&ResultValue::Rel(Box::new(rel)), format))
}

pub(super) fn committed(state: &HttpState) {
    state.service.metrics.transactions_committed.fetch_add(1, Ordering::Relaxed);
}

/// Interns property names.
pub(super) fn property_ids(tx: &WriteTxn, props: &[(String, Stored)]) -> Vec<(plexus::PropKeyId, Stored)> {
    props.iter().map(|(k, v)| (tx.prop_key(k), v.clone())).collect()
}

// ---------------------------------------------------------------------------------------------------------------
// Nodes by id
// ---------------------------------------------------------------------------------------------------------------

/// `POST /db/{name}/nodes` with `{labels, properties}`.
pub async fn create_node(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let (input, output) = body_formats(&headers)?;
    let node = json::parse_new_node(&body?, input)?;
    let worker = state.clone();
    let created = blocking(move || {
        write_retrying(&worker.service.db, |tx| {
            let labels: Vec<LabelId> = node.labels.iter().map(|l| tx.label(l)).collect();
            let props = property_ids(tx, &node.properties);
            let id = tx.create_node(&labels, props)?;
            Ok(node_json(tx, tx.catalog(), id, output))
        })
    })
    .await?
    .map_err(storage_error)?;
    committed(&state);
    Ok(json_response(StatusCode::CREATED, output, &created.unwrap_or(Json::Null)))
}

/// `GET /db/{name}/nodes/{id}`.
pub async fn get_node(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, false)?;
    let id = node_id(&id)?;
    let (_, output) = formats(&headers);
    let g = state.service.db.read();
    let node = node_json(&g, g.catalog(), id, output).ok_or_else(|| no_node(id))?;
    Ok(json_response(StatusCode::OK, output, &node))
}

/// Sets properties of node `id` (null removes one); the node as it is afterwards.
fn update_properties(
    state: &HttpState,
    id: NodeId,
    props: Vec<(String, Stored)>,
    format: Format,
) -> Result<Json, ApiError> {
    let node = write_retrying(&state.service.db, |tx| {
        if !tx.node_exists(id) {
            return Err(plexus::Error::NodeNotFound(id));
        }
        let props = property_ids(tx, &props);
        tx.set_node_props(id, props)?;
        Ok(node_json(tx, tx.catalog(), id, format))
    })
    .map_err(storage_error)?;
    committed(state);
    node.ok_or_else(|| no_node(id))
}

/// `PATCH /db/{name}/nodes/{id}` with an object of properties to set (null removes).
pub async fn update_node(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let id = node_id(&id)?;
    let (input, output) = body_formats(&headers)?;
    let props = json::parse_property_update(&body?, input)?;
    let worker = state.clone();
    let node = blocking(move || update_properties(&worker, id, props, output)).await??;
    Ok(json_response(StatusCode::OK, output, &node))
}

#[derive(Debug, Default, Deserialize)]
pub struct DeleteOptions {
    /// Also delete the node's relationships (otherwise a node that has any is not deleted).
    #[serde(default)]
    detach: bool,
}

pub(super) fn query_error(e: QueryRejection) -> ApiError {
    ApiError::bad_request(format!("bad query string: {}", e.body_text()))
}

/// Deletes node `id`; answers how many relationships went with it.
fn delete(state: &HttpState, id: NodeId, detach: bool) -> Result<Json, ApiError> {
    let removed = write_retrying(&state.service.db, |tx| {
        if !tx.node_exists(id) {
            return Err(plexus::Error::NodeNotFound(id));
        }
        if detach {
            tx.detach_delete_node(id)
        } else {
            let degree = tx.degree(id, Direction::Both, TypeFilter::All);
            if degree > 0 {
                return Err(plexus::Error::NodeHasRelationships(id, degree));
            }
            tx.delete_node(id).map(|_| 0)
        }
    })
    .map_err(storage_error)?;
    committed(state);
    Ok(json!({"deleted": node_element_id(id.0), "relationshipsDeleted": removed}))
}

/// `DELETE /db/{name}/nodes/{id}[?detach=true]`.
pub async fn delete_node(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    options: Result<Query<DeleteOptions>, QueryRejection>,
    caller: Caller,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let id = node_id(&id)?;
    let detach = options.map_err(query_error)?.detach;
    let worker = state.clone();
    let body = blocking(move || delete(&worker, id, detach)).await??;
    Ok(json_response(StatusCode::OK, Format::Plain, &body))
}

// ---------------------------------------------------------------------------------------------------------------
// Nodes by label and unique key
// ---------------------------------------------------------------------------------------------------------------

/// Which of a label's unique keys a lookup by key uses: `?property=email`; without it, the label's key (the
/// first unique key declared for it).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct KeyOptions {
    property: Option<String>,
    /// Only `DELETE` reads it.
    #[serde(default)]
    detach: bool,
}

/// The node of `label` whose unique key (the label's, or `property`) is `key`: the key as a string, or else as
/// an integer when it is one written as integers print (`7`, not `07` or `+7`, which name no integer key: a
/// URL segment cannot say which type it is, and a key `"07"` must not find the node keyed 7).
fn find_by_key(g: &plexus::ReadTxn, label: &str, key: &str, property: Option<&str>) -> Result<NodeId, ApiError> {
    let missing = || ApiError::not_found(format!("no node :{label} has the key '{key}'"));
    let label_id = g.label_id(label).ok_or_else(missing)?;
    let unique_key = match property {
        None => g.unique_key(label_id).ok_or_else(|| {
            ApiError::bad_request(format!(
                "label :{label} has no unique key; declare one with CREATE CONSTRAINT FOR (n:{label}) REQUIRE n.key IS UNIQUE"
            ))
        })?,
        Some(property) => g.prop_key_id(property).filter(|&k| g.has_unique_key(label_id, k)).ok_or_else(|| {
            let keys: Vec<String> = g
                .unique_keys()
                .into_iter()
                .filter(|&(l, _)| l == label_id)
                .filter_map(|(_, k)| g.catalog().name(TokenKind::PropKey, k.0).map(|n| n.to_string()))
                .collect();
            ApiError::bad_request(format!(
                "label :{label} has no unique key on '{property}' (its unique keys: {})",
                if keys.is_empty() { "none".to_string() } else { keys.join(", ") }
            ))
        })?,
    };
    let as_string = Stored::String(key.into());
    if let Some(id) = g.node_by_unique(label_id, unique_key, &as_string) {
        return Ok(id);
    }
    key.parse::<i64>()
        .ok()
        .filter(|i| i.to_string() == key)
        .and_then(|i| g.node_by_unique(label_id, unique_key, &Stored::Int(i)))
        .ok_or_else(missing)
}

/// The `property` of a read or an update by key (which take no `detach`).
fn key_property(options: Result<Query<KeyOptions>, QueryRejection>) -> Result<Option<String>, ApiError> {
    let Query(options) = options.map_err(query_error)?;
    if options.detach {
        return Err(ApiError::bad_request("detach applies to DELETE only".to_string()));
    }
    Ok(options.property)
}

/// `GET /db/{name}/labels/{label}/nodes/{key}[?property=p]`.
pub async fn get_node_by_key(
    State(state): State<Arc<HttpState>>,
    Path((name, label, key)): Path<(String, String, String)>,
    options: Result<Query<KeyOptions>, QueryRejection>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, false)?;
    let property = key_property(options)?;
    let (_, output) = formats(&headers);
    let g = state.service.db.read();
    let id = find_by_key(&g, &label, &key, property.as_deref())?;
    let node = node_json(&g, g.catalog(), id, output).ok_or_else(|| no_node(id))?;
    Ok(json_response(StatusCode::OK, output, &node))
}

/// `PATCH /db/{name}/labels/{label}/nodes/{key}[?property=p]` with an object of properties to set (null removes).
pub async fn update_node_by_key(
    State(state): State<Arc<HttpState>>,
    Path((name, label, key)): Path<(String, String, String)>,
    options: Result<Query<KeyOptions>, QueryRejection>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let property = key_property(options)?;
    let (input, output) = body_formats(&headers)?;
    let props = json::parse_property_update(&body?, input)?;
    let worker = state.clone();
    let node = blocking(move || {
        let g = worker.service.db.read();
        let id = find_by_key(&g, &label, &key, property.as_deref())?;
        update_properties(&worker, id, props, output)
    })
    .await??;
    Ok(json_response(StatusCode::OK, output, &node))
}

/// `DELETE /db/{name}/labels/{label}/nodes/{key}[?detach=true][&property=p]`.
pub async fn delete_node_by_key(
    State(state): State<Arc<HttpState>>,
    Path((name, label, key)): Path<(String, String, String)>,
    options: Result<Query<KeyOptions>, QueryRejection>,
    caller: Caller,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let Query(KeyOptions { property, detach }) = options.map_err(query_error)?;
    let worker = state.clone();
    let body = blocking(move || {
        let g = worker.service.db.read();
        let id = find_by_key(&g, &label, &key, property.as_deref())?;
        delete(&worker, id, detach)
    })
    .await??;
    Ok(json_response(StatusCode::OK, Format::Plain, &body))
}

#[cfg(test)]
mod retry_tests {
    use super::*;

    /// Another transaction commits a change to the same node while `tx` runs: `tx`'s commit then conflicts.
    fn clash(db: &plexus::Database, tx: &mut WriteTxn, node: NodeId, value: i64) -> plexus::Result<()> {
        let key = tx.prop_key("n");
        let mut other = db.write();
        other.set_node_props(node, vec![(key, Stored::Int(-value))])?;
        other.commit()?;
        tx.set_node_props(node, vec![(key, Stored::Int(value))])
    }

    #[test]
    fn conflicting_writes_are_retried_until_they_commit_or_time_runs_out() {
        let db = plexus::Database::in_memory();
        let mut tx = db.write();
        let node = tx.create_node(&[], vec![]).unwrap();
        tx.commit().unwrap();
        // Ten clashes in a row, far more than a few attempts would take: the eleventh attempt commits.
        let mut attempts = 0;
        let result = retry_for(&db, Duration::from_secs(60), |tx| {
            attempts += 1;
            if attempts <= 10 {
                clash(&db, tx, node, attempts)
            } else {
                tx.set_node_props(node, vec![(tx.prop_key("n"), Stored::Int(0))])
            }
        });
        result.unwrap();
        assert_eq!(attempts, 11);
        // With no time left the conflict is answered (409 for the client).
        let mut attempts = 0;
        let result = retry_for(&db, Duration::ZERO, |tx| {
            attempts += 1;
            clash(&db, tx, node, 1)
        });
        assert!(result.unwrap_err().is_retryable());
        assert_eq!(attempts, 1);
    }
}
