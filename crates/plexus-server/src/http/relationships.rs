//! REST resources for relationships over the embedded graph API: single relationships
//! (`/db/{name}/relationships[/{id}]`), a node's relationships, neighbours and degree filtered by direction
//! (`out`, `in`, `both`) and types (`/db/{name}/nodes/{id}/relationships|neighbours|degree?direction=&type=A,B`),
//! and edge batches merged on `(src, type, dst)` like the storage engine's `upsert_edges` and `remove_edges`.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use plexus::{Direction, NodeId, RelId, TypeFilter, TypeId};
use serde::Deserialize;
use serde_json::{json, Value as Json};

use super::caller::Caller;
use super::error::ApiError;
use super::json::{self, Format};
use super::rest::{
    check, committed, no_node, no_rel, node_id, node_json, property_ids, query_error, rel_id, rel_json, storage_error,
    write_retrying, Body,
};
use super::{blocking, body_formats, formats, json_response, HttpState};
use crate::bolt::values::rel_element_id;

/// `?direction=out|in|both&type=A,B` on a node's neighbourhood.
#[derive(Debug, Default, Deserialize)]
pub struct Neighbourhood {
    direction: Option<String>,
    /// Relationship types, comma-separated; all types when absent.
    #[serde(rename = "type")]
    types: Option<String>,
}

impl Neighbourhood {
    fn direction(&self) -> Result<Direction, ApiError> {
        match self.direction.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("both") => Ok(Direction::Both),
            Some("out") | Some("outgoing") => Ok(Direction::Out),
            Some("in") | Some("incoming") => Ok(Direction::In),
            Some(other) => Err(ApiError::bad_request(format!("direction '{other}': use out, in or both"))),
        }
    }

    /// The requested type names, or `None` for every type. `type=` naming no type is refused: read as "no type"
    /// it would answer nothing, read as "every type" it would hide a client's empty variable.
    fn type_names(&self) -> Result<Option<Vec<&str>>, ApiError> {
        let Some(types) = self.types.as_deref() else { return Ok(None) };
        let names: Vec<&str> = types.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
        if names.is_empty() {
            return Err(ApiError::bad_request(
                "type= names no relationship type: leave it out for every type, or name one or more, comma-separated"
                    .to_string(),
            ));
        }
        Ok(Some(names))
    }
}

/// Reads a node's neighbourhood with the filter the query string asks for; `None` when a type filter names only
/// types that do not exist (so nothing can match).
fn with_filter<T>(
    g: &plexus::ReadTxn,
    options: &Neighbourhood,
    read: impl FnOnce(Direction, TypeFilter) -> T,
) -> Result<Option<T>, ApiError> {
    let direction = options.direction()?;
    match options.type_names()? {
        None => Ok(Some(read(direction, TypeFilter::All))),
        Some(names) => {
            let ids: Vec<TypeId> = names.iter().filter_map(|n| g.type_id(n)).collect();
            if ids.is_empty() {
                Ok(None)
            } else {
                Ok(Some(read(direction, TypeFilter::Only(&ids))))
            }
        }
    }
}

struct NodeRead {
    state: Arc<HttpState>,
    id: NodeId,
    options: Neighbourhood,
    format: Format,
}

async fn node_read(
    state: Arc<HttpState>,
    name: &str,
    id: &str,
    options: Result<Query<Neighbourhood>, QueryRejection>,
    caller: &Caller,
    headers: &HeaderMap,
) -> Result<NodeRead, ApiError> {
    check(&state, name, caller, false)?;
    let id = node_id(id)?;
    let Query(options) = options.map_err(query_error)?;
    options.direction()?;
    options.type_names()?;
    let (_, format) = formats(headers);
    Ok(NodeRead { state, id, options, format })
}

/// `GET /db/{name}/nodes/{id}/relationships?direction=&type=`: `{"relationships": [...]}`.
pub async fn node_relationships(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    options: Result<Query<Neighbourhood>, QueryRejection>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let r = node_read(state, &name, &id, options, &caller, &headers).await?;
    let format = r.format;
    let body = blocking(move || {
        let g = r.state.service.db.read();
        if !g.node_exists(r.id) {
            return Err(no_node(r.id));
        }
        let rels = with_filter(&g, &r.options, |dir, filter| g.rels_of(r.id, dir, filter))?.unwrap_or_default();
        let rels: Vec<Json> = rels.iter().filter_map(|e| rel_json(&g, g.catalog(), e.rel, r.format)).collect();
        Ok(json!({"relationships": rels}))
    })
    .await??;
    Ok(json_response(StatusCode::OK, format, &body))
}

/// `GET /db/{name}/nodes/{id}/neighbours?direction=&type=`: `{"neighbours": [...]}`, distinct, by id.
pub async fn node_neighbours(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    options: Result<Query<Neighbourhood>, QueryRejection>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let r = node_read(state, &name, &id, options, &caller, &headers).await?;
    let format = r.format;
    let body = blocking(move || {
        let g = r.state.service.db.read();
        if !g.node_exists(r.id) {
            return Err(no_node(r.id));
        }
        let ids = with_filter(&g, &r.options, |dir, filter| g.neighbours(r.id, dir, filter))?.unwrap_or_default();
        let nodes: Vec<Json> = ids.iter().filter_map(|n| node_json(&g, g.catalog(), *n, r.format)).collect();
        Ok(json!({"neighbours": nodes}))
    })
    .await??;
    Ok(json_response(StatusCode::OK, format, &body))
}

/// `GET /db/{name}/nodes/{id}/degree?direction=&type=`: `{"degree": n}` (a self-loop counts once for `both`).
pub async fn node_degree(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    options: Result<Query<Neighbourhood>, QueryRejection>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let r = node_read(state, &name, &id, options, &caller, &headers).await?;
    let body = blocking(move || {
        let g = r.state.service.db.read();
        if !g.node_exists(r.id) {
            return Err(no_node(r.id));
        }
        let degree = with_filter(&g, &r.options, |dir, filter| g.degree(r.id, dir, filter))?.unwrap_or(0);
        Ok(json!({"degree": degree}))
    })
    .await??;
    Ok(json_response(StatusCode::OK, Format::Plain, &body))
}

/// `POST /db/{name}/relationships` with `{src, type, dst, properties}`: always creates a new relationship.
pub async fn create_relationship(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let (input, output) = body_formats(&headers)?;
    let edge = json::parse_new_relationship(&body?, input)?;
    let worker = state.clone();
    let created = blocking(move || {
        write_retrying(&worker.service.db, |tx| {
            let (src, dst) = (NodeId(edge.src), NodeId(edge.dst));
            for end in [src, dst] {
                if !tx.node_exists(end) {
                    return Err(plexus::Error::NodeNotFound(end));
                }
            }
            let ty = tx.rel_type(&edge.rel_type);
            let props = property_ids(tx, &edge.properties);
            let id = tx.create_rel(src, ty, dst, props)?;
            Ok(rel_json(tx, tx.catalog(), id, output))
        })
    })
    .await?
    .map_err(storage_error)?;
    committed(&state);
    Ok(json_response(StatusCode::CREATED, output, &created.unwrap_or(Json::Null)))
}

/// `GET /db/{name}/relationships/{id}`.
pub async fn get_relationship(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, false)?;
    let id = rel_id(&id)?;
    let (_, output) = formats(&headers);
    let g = state.service.db.read();
    let rel = rel_json(&g, g.catalog(), id, output).ok_or_else(|| no_rel(id))?;
    Ok(json_response(StatusCode::OK, output, &rel))
}

/// `PATCH /db/{name}/relationships/{id}` with an object of properties to set (null removes).
pub async fn update_relationship(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let id = rel_id(&id)?;
    let (input, output) = body_formats(&headers)?;
    let props = json::parse_property_update(&body?, input)?;
    let worker = state.clone();
    let rel = blocking(move || {
        write_retrying(&worker.service.db, |tx| {
            if !tx.rel_exists(id) {
                return Err(plexus::Error::RelNotFound(id));
            }
            for (k, v) in property_ids(tx, &props) {
                tx.set_rel_prop(id, k, v)?;
            }
            Ok(rel_json(tx, tx.catalog(), id, output))
        })
    })
    .await?
    .map_err(storage_error)?;
    committed(&state);
    Ok(json_response(StatusCode::OK, output, &rel.ok_or_else(|| no_rel(id))?))
}

/// `DELETE /db/{name}/relationships/{id}`.
pub async fn delete_relationship(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    caller: Caller,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let id: RelId = rel_id(&id)?;
    let worker = state.clone();
    blocking(move || write_retrying(&worker.service.db, |tx| tx.delete_rel(id))).await?.map_err(storage_error)?;
    committed(&state);
    Ok(json_response(StatusCode::OK, Format::Plain, &json!({"deleted": rel_element_id(id.0)})))
}

/// `POST /db/{name}/edges/upsert` with `[{src, type, dst, properties}]`: for each, the first relationship
/// `(src)-[:type]->(dst)` gets the properties set, or one is created. All or nothing.
pub async fn upsert_edges(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let (input, _) = body_formats(&headers)?;
    let edges = json::parse_edge_batch(&body?, input, true)?;
    let worker = state.clone();
    let counts = blocking(move || {
        write_retrying(&worker.service.db, |tx| {
            let batch: Vec<plexus::EdgeUpsert> = edges
                .iter()
                .map(|e| (NodeId(e.src), tx.rel_type(&e.rel_type), NodeId(e.dst), property_ids(tx, &e.properties)))
                .collect();
            tx.upsert_edges(&batch)
        })
    })
    .await?
    .map_err(storage_error)?;
    committed(&state);
    Ok(json_response(StatusCode::OK, Format::Plain, &json!({"created": counts.created, "updated": counts.updated})))
}

/// `POST /db/{name}/edges/remove` with `[{src, type, dst}]`: removes every relationship `(src)-[:type]->(dst)`.
pub async fn remove_edges(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check(&state, &name, &caller, true)?;
    let (input, _) = body_formats(&headers)?;
    let edges = json::parse_edge_batch(&body?, input, false)?;
    let worker = state.clone();
    let removed = blocking(move || {
        write_retrying(&worker.service.db, |tx| {
            // A type that was never used has no relationships to remove.
            let batch: Vec<(NodeId, TypeId, NodeId)> = edges
                .iter()
                .filter_map(|e| tx.catalog().lookup(plexus::TokenKind::Type, &e.rel_type).map(|t| (e, TypeId(t))))
                .map(|(e, t)| (NodeId(e.src), t, NodeId(e.dst)))
                .collect();
            tx.remove_edges(&batch)
        })
    })
    .await?
    .map_err(storage_error)?;
    committed(&state);
    Ok(json_response(StatusCode::OK, Format::Plain, &json!({"removed": removed})))
}
