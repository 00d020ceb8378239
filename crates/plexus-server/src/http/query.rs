//! The Neo4j Query API (v2): auto-commit statements at `POST /db/{name}/query/v2` and explicit transactions under
//! `/db/{name}/query/v2/tx`, answered as `{"data": {"fields", "values"}, "counters", "bookmarks"}` in plain or
//! typed JSON. A statement that fails inside an explicit transaction rolls the transaction back, as in Neo4j.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use plexus::cypher::Interrupt;
use serde_json::{json, Map as JsonMap, Value as Json};

use super::caller::Caller;
use super::error::ApiError;
use super::json::{self, Format, QueryRequest};
use super::quick;
use super::stream;
use super::transactions::{expiry_timestamp, not_found};
use super::{blocking, bytes_response, formats, json_response, BodyFormats, HttpState};
use crate::service::{Outcome, ServerError, Service, Target};

type Body = Result<Bytes, BytesRejection>;

/// Reads and parses a Query API request for database `name`, which must be the graph's.
fn request(
    state: &HttpState,
    name: &str,
    formats: BodyFormats,
    body: Body,
) -> Result<(QueryRequest, Format), ApiError> {
    state.service.check_database(Some(name))?;
    parse_request(formats, body)
}

fn parse_request(formats: BodyFormats, body: Body) -> Result<(QueryRequest, Format), ApiError> {
    let body = body?;
    let (input, output) = formats.0?;
    let request = json::parse_query_request(&body, input)?;
    if request.impersonated_user.is_some() {
        return Err(ServerError::new("Neo.ClientError.Security.Forbidden", "impersonation is not supported").into());
    }
    Ok((request, output))
}

/// Cancels a request's query when the request goes away before its answer: hyper drops the handler's future when
/// the client closes the connection, but the blocking thread running the query would carry on to the end.
/// A streamed answer's body takes the guard's place (see `stream.rs`).
struct CancelOnDrop(Option<Arc<Interrupt>>);

impl CancelOnDrop {
    /// The query goes on after the handler returns: its streamed body cancels it when dropped instead.
    fn hand_over(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(interrupt) = &self.0 {
            interrupt.cancel();
        }
    }
}

/// A fresh interrupt for one request's query, and the guard that cancels it if the request is dropped.
fn cancellable(service: &Service) -> (Arc<Interrupt>, CancelOnDrop) {
    let interrupt = service.interrupt(crate::service::ClientDeadline::ServerLimit);
    (interrupt.clone(), CancelOnDrop(Some(interrupt)))
}

/// An auto-commit statement's outcome: whole, or a read whose answer is already streaming.
enum Answered {
    Whole(Result<Outcome, ServerError>),
    Streamed(Response),
}

/// One operator of a plan and its inputs, in the Query API's shape (the root also carries the whole plan as
/// text). Plexus counts rows and time per operator, not storage hits or page-cache use: those are zero.
fn plan_json(node: &plexus::cypher::PlanTree, text: Option<&str>, columns: &[String], profiled: bool) -> Json {
    let mut arguments = JsonMap::new();
    arguments.insert("Details".into(), json!(node.operator));
    if let Some(text) = text {
        arguments.insert("string-representation".into(), json!(text));
    }
    let mut plan = JsonMap::new();
    plan.insert("operatorType".into(), json!(node.operator_type()));
    plan.insert("arguments".into(), Json::Object(arguments));
    plan.insert("identifiers".into(), json!(columns));
    plan.insert(
        "children".into(),
        Json::Array(node.children.iter().map(|c| plan_json(c, None, &[], profiled)).collect()),
    );
    if profiled {
        plan.insert("dbHits".into(), json!(0));
        plan.insert("records".into(), json!(node.rows.unwrap_or(0)));
        plan.insert("time".into(), json!(node.time.map_or(0, |t| t.as_nanos() as u64)));
        plan.insert("hasPageCacheStats".into(), json!(false));
        plan.insert("pageCacheHits".into(), json!(0));
        plan.insert("pageCacheMisses".into(), json!(0));
        plan.insert("pageCacheHitRatio".into(), json!(0.0));
    }
    Json::Object(plan)
}

/// The body of a statement's answer.
fn result_body(outcome: &Outcome, format: Format, counters: bool, elapsed_ms: u64) -> JsonMap<String, Json> {
    let result = &outcome.result;
    let values: Vec<Json> =
        result.rows.iter().map(|row| Json::Array(row.iter().map(|v| json::encode(v, format)).collect())).collect();
    let mut body = JsonMap::new();
    body.insert("data".into(), json!({"fields": &*result.columns, "values": values}));
    if counters {
        body.insert("counters".into(), json::counters(&result.stats));
    }
    body.insert("bookmarks".into(), json!(outcome.bookmark.iter().collect::<Vec<_>>()));
    body.extend(occasional_members(outcome).map(|(key, value)| (key.to_string(), value)));
    body.insert("queryType".into(), json!(outcome.query_type));
    body.insert("resultAvailableAfter".into(), json!(elapsed_ms));
    body.insert("resultConsumedAfter".into(), json!(0));
    body
}

/// What follows the `data` member of an answer, as `,"key":value` pairs: the members of [`result_body`] after
/// `data`, in the same order (a JSON object's, by name), written straight to text since every answer has them.
fn tail_members(outcome: &Outcome, counters: bool, elapsed_ms: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    let member = |out: &mut Vec<u8>, key: &str| {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
    };
    member(&mut out, "bookmarks");
    serde_json::to_writer(&mut out, outcome.bookmark.as_slice()).expect("JSON to memory");
    if counters {
        member(&mut out, "counters");
        json::write_counters(&mut out, &outcome.result.stats);
    }
    for (key, value) in occasional_members(outcome) {
        member(&mut out, key);
        serde_json::to_writer(&mut out, &value).expect("JSON to memory");
    }
    member(&mut out, "queryType");
    serde_json::to_writer(&mut out, outcome.query_type).expect("JSON to memory");
    member(&mut out, "resultAvailableAfter");
    json::write_decimal(&mut out, elapsed_ms);
    member(&mut out, "resultConsumedAfter");
    out.push(b'0');
    out
}

/// The members an answer has only sometimes: notifications, and the plan under EXPLAIN or PROFILE, in the order
/// of their names.
fn occasional_members(outcome: &Outcome) -> impl Iterator<Item = (&'static str, Json)> + '_ {
    let result = &outcome.result;
    let notifications = (!result.notifications.is_empty()).then(|| {
        let notifications: Vec<Json> = result
            .notifications
            .iter()
            .map(|n| {
                json!({
                    "code": n.code,
                    "title": n.title,
                    "description": &*n.description,
                    "severity": n.severity.name(),
                    "category": n.category,
                    "position": {"offset": n.position.offset, "line": n.position.line, "column": n.position.column},
                })
            })
            .collect();
        ("notifications", Json::Array(notifications))
    });
    let plan = result.plan_tree.as_ref().map(|tree| {
        // As Neo4j's Query API answers: the plan under EXPLAIN, the plan with what each operator did under PROFILE.
        let profiled = tree.rows.is_some();
        let key = if profiled { "profiledQueryPlan" } else { "queryPlan" };
        (key, plan_json(tree, result.plan.as_deref(), &result.columns, profiled))
    });
    notifications.into_iter().chain(plan)
}

fn elapsed_ms(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}

/// `POST /db/{name}/query/v2`: one statement in its own transaction.
pub async fn auto_commit(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
    caller: Caller,
    formats: BodyFormats,
    body: Body,
) -> Result<Response, ApiError> {
    // `system` answers what it answers over Bolt (`db.ping()`, `dbms.components()`, SHOW and user commands):
    // drivers in HTTP mode check the connection with `CALL db.ping()` there.
    let target = state.service.select_database(Some(&name))?;
    let (request, format) = parse_request(formats, body)?;
    check_bookmarks(&state.service, &request.bookmarks)?;
    let statement = request.statement.ok_or_else(|| ApiError::bad_request("the request needs a 'statement'"))?;
    let counters = !request.omit_counters;
    let started = Instant::now();
    // Quick statements run inline on the graph; `system`'s answers are all administrative.
    if target == Target::Graph && state.quick.is_quick(&statement) {
        let service = &state.service;
        let (role, mode, params) = (caller.role, request.access_mode, &request.parameters);
        match service.try_auto_commit_within(role, mode, &statement, params, quick::BUDGET) {
            Some(outcome) => {
                let outcome = outcome?;
                state.quick.record(&statement, started.elapsed(), outcome.query_type == "r");
                return Ok(answer(outcome, format, counters, started));
            }
            // Heavier than its earlier runs (larger parameters, say): stopped before it held the event loop for
            // long. Recording the time it was given stops inlining it until quick runs bring its estimate down.
            None => state.quick.record(&statement, started.elapsed(), true),
        }
    }
    let (interrupt, cancel_if_dropped) = cancellable(&state.service);
    let worker = state.clone();
    let who = crate::registry::Caller { user: caller.user.as_str().into(), ..Default::default() };
    let answered = blocking(move || {
        crate::registry::as_caller(who, || {
            let service = &worker.service;
            let began = Instant::now();
            // SHOW TRANSACTIONS, TERMINATE TRANSACTIONS and SHOW DATABASES answer here as over Bolt, and every
            // statement on `system`.
            let (role, params, mode) = (caller.role, request.parameters, request.access_mode);
            if let Some(outcome) =
                service.run_administrative(target, role, mode, &statement, &params, "", &interrupt, None)
            {
                return Answered::Whole(outcome);
            }
            let params = Arc::new(params);
            let outcome =
                service.run_auto_commit_streaming(role, mode, &statement, params, &interrupt, stream::FIRST_ROWS);
            match &outcome {
                Ok((o, None)) => worker.quick.record(&statement, began.elapsed(), o.query_type == "r"),
                // Its first rows' time says nothing of the rest: never inline a statement whose answer streams.
                Ok((_, Some(_))) => worker.quick.record(&statement, quick::BUDGET * 1000, true),
                Err(_) => {}
            }
            match outcome {
                Err(e) => Answered::Whole(Err(e)),
                Ok((outcome, None)) => Answered::Whole(Ok(outcome)),
                Ok((mut outcome, Some(cursor))) => {
                    let produced = stream::Produced {
                        fields: outcome.result.columns.to_vec(),
                        rows: std::mem::take(&mut outcome.result.rows),
                        format,
                        tail: tail_members(&outcome, counters, elapsed_ms(started)),
                    };
                    match stream::answer(produced, cursor, interrupt, worker.service.clone(), statement) {
                        Ok(response) => Answered::Streamed(response),
                        Err(e) => Answered::Whole(Err(e)),
                    }
                }
            }
        })
    })
    .await?;
    match answered {
        Answered::Whole(outcome) => Ok(answer(outcome?, format, counters, started)),
        Answered::Streamed(response) => {
            cancel_if_dropped.hand_over();
            Ok(response)
        }
    }
}

/// The request's bookmarks, checked before anything runs (see [`crate::service::check_bookmarks`]).
fn check_bookmarks(service: &Service, bookmarks: &[String]) -> Result<(), ServerError> {
    crate::service::check_bookmarks(service, &bookmarks.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The answer of an auto-commit statement, written row by row: building the whole result as one JSON tree
/// first more than doubled what the rows took, and each row's values are let go as soon as they are written
/// (2 M rows of an integer and a short string, 46 MB of JSON: 963 MB → 547 MB at the server's peak).
fn answer(mut outcome: Outcome, format: Format, counters: bool, started: Instant) -> Response {
    let rows = std::mem::take(&mut outcome.result.rows);
    let tail = tail_members(&outcome, counters, elapsed_ms(started));
    let mut out: Vec<u8> = Vec::with_capacity(256 + rows.len() * 16);
    stream::open_document(&mut out, &outcome.result.columns);
    stream::write_rows(&mut out, rows, format, &mut true);
    stream::close_document(&mut out, &tail);
    bytes_response(StatusCode::ACCEPTED, format, out)
}

/// Runs `statement` in the open transaction `id`, rolling the transaction back if it fails. Returns the answer
/// body with the transaction's new expiry.
fn run_in_open(
    state: &HttpState,
    id: &str,
    caller: &Caller,
    request: &QueryRequest,
    format: Format,
    interrupt: &Arc<Interrupt>,
) -> Result<JsonMap<String, Json>, ServerError> {
    let service: &Service = &state.service;
    let open = state.transactions.get(id, &caller.user)?;
    let mut tx_state = open.state.lock();
    let mut body = JsonMap::new();
    if let Some(statement) = &request.statement {
        let tx = tx_state.live(service, id)?;
        let started = Instant::now();
        // SHOW TRANSACTIONS, user commands and the like answer here as in an auto-commit request and over Bolt.
        let (role, params, open) = (caller.role, &request.parameters, Some(tx.id()));
        let mode = tx.mode();
        let outcome =
            match service.run_administrative(Target::Graph, role, mode, statement, params, "", interrupt, open) {
                Some(outcome) => outcome.map(|o| Outcome { bookmark: None, ..o }),
                None => service.run_in_transaction(tx, role, statement, params, interrupt),
            };
        match outcome {
            Ok(outcome) => body = result_body(&outcome, format, !request.omit_counters, elapsed_ms(started)),
            Err(e) => {
                if let Some(tx) = tx_state.tx.take() {
                    service.rollback(tx);
                }
                state.transactions.remove(id);
                return Err(e);
            }
        }
    } else {
        tx_state.live(service, id)?;
    }
    tx_state.touch(state.transactions.timeout);
    body.insert("transaction".into(), json!({"id": id, "expires": expiry_timestamp(tx_state.expires)}));
    Ok(body)
}

/// `POST /db/{name}/query/v2/tx`: opens a transaction, optionally running a first statement in it.
pub async fn open(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
    caller: Caller,
    formats: BodyFormats,
    body: Body,
) -> Result<Response, ApiError> {
    let (request, format) = request(&state, &name, formats, body)?;
    check_bookmarks(&state.service, &request.bookmarks)?;
    let (interrupt, _cancel_if_dropped) = cancellable(&state.service);
    let worker = state.clone();
    let body = blocking(move || {
        let who = crate::registry::Caller { user: caller.user.as_str().into(), ..Default::default() };
        let tx = crate::registry::as_caller(who, || worker.service.begin(request.access_mode));
        let (id, _) = worker.transactions.open(&caller.user, tx);
        let mut body = run_in_open(&worker, &id, &caller, &request, format, &interrupt)?;
        body.entry("bookmarks").or_insert_with(|| json!([]));
        Ok::<_, ServerError>(body)
    })
    .await??;
    Ok(json_response(StatusCode::ACCEPTED, format, &Json::Object(body)))
}

/// `POST /db/{name}/query/v2/tx/{id}`: runs a statement in an open transaction.
pub async fn run(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    caller: Caller,
    formats: BodyFormats,
    body: Body,
) -> Result<Response, ApiError> {
    let (request, format) = request(&state, &name, formats, body)?;
    let (interrupt, _cancel_if_dropped) = cancellable(&state.service);
    let worker = state.clone();
    let body = blocking(move || {
        let who = crate::registry::Caller { user: caller.user.as_str().into(), ..Default::default() };
        crate::registry::as_caller(who, || run_in_open(&worker, &id, &caller, &request, format, &interrupt))
    })
    .await??;
    Ok(json_response(StatusCode::ACCEPTED, format, &Json::Object(body)))
}

/// `POST /db/{name}/query/v2/tx/{id}/commit`: runs an optional last statement, then commits.
pub async fn commit(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    caller: Caller,
    formats: BodyFormats,
    body: Body,
) -> Result<Response, ApiError> {
    let (request, format) = request(&state, &name, formats, body)?;
    let (interrupt, _cancel_if_dropped) = cancellable(&state.service);
    let worker = state.clone();
    let body = blocking(move || {
        let mut body = JsonMap::new();
        if request.statement.is_some() {
            body = run_in_open(&worker, &id, &caller, &request, format, &interrupt)?;
            body.remove("transaction");
        }
        let open = worker.transactions.get(&id, &caller.user)?;
        let mut tx_state = open.state.lock();
        worker.transactions.remove(&id);
        tx_state.live(&worker.service, &id)?;
        let tx = tx_state.tx.take().ok_or_else(|| not_found(&id))?;
        let bookmark = worker.service.commit(caller.role, tx)?;
        body.insert("bookmarks".into(), json!([bookmark]));
        Ok::<_, ServerError>(body)
    })
    .await??;
    Ok(json_response(StatusCode::OK, format, &Json::Object(body)))
}

/// `DELETE /db/{name}/query/v2/tx/{id}`: rolls back.
pub async fn rollback(
    State(state): State<Arc<HttpState>>,
    Path((name, id)): Path<(String, String)>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    state.service.check_database(Some(&name))?;
    let (_, format) = formats(&headers);
    let worker = state.clone();
    blocking(move || {
        let open = worker.transactions.get(&id, &caller.user)?;
        let mut tx_state = open.state.lock();
        worker.transactions.remove(&id);
        let tx = tx_state.tx.take().ok_or_else(|| not_found(&id))?;
        worker.service.rollback(tx);
        Ok::<_, ServerError>(())
    })
    .await??;
    Ok(json_response(StatusCode::OK, format, &json!({"bookmarks": []})))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The members written straight to text are the bytes the JSON object of a whole answer holds after `data`.
    #[test]
    fn tail_members_match_the_answer_object() {
        let db = plexus::Database::in_memory();
        let statements = [
            "CREATE (:A {x: 1})-[:R]->(:B)",
            "MATCH (n) RETURN n",
            "MATCH (n:Missing) RETURN n",
            "EXPLAIN MATCH (n:A) RETURN n.x",
            "PROFILE MATCH (n:A)-->(m) RETURN m",
            "MATCH (n) DETACH DELETE n",
        ];
        let mut seen = String::new();
        for (i, statement) in statements.into_iter().enumerate() {
            let result = db.execute(statement, &Default::default()).unwrap();
            let bookmark = (i % 2 == 0).then(|| format!("FB:plexus:{i}"));
            let outcome = Outcome { result, bookmark, query_type: "rw" };
            for counters in [true, false] {
                let mut body = result_body(&outcome, Format::Typed, counters, 7);
                body.remove("data");
                let whole = serde_json::to_string(&body).unwrap();
                let tail = String::from_utf8(tail_members(&outcome, counters, 7)).unwrap();
                assert_eq!(format!("{{{}}}", &tail[1..]), whole, "{statement}");
                seen += &tail;
            }
        }
        for member in ["\"notifications\"", "\"queryPlan\"", "\"profiledQueryPlan\"", "\"nodesCreated\":2"] {
            assert!(seen.contains(member), "no answer had {member}");
        }
    }
}
