//! An auto-commit read's answer written while its rows are produced: past the first 8 MiB of JSON (which go out
//! with the response's head), later batches follow as the client takes them, so a result of millions of rows
//! never sits whole in the server's memory (as with Bolt's PULL). A smaller answer is sent whole, with an error
//! status if any of its rows fails.
//!
//! A blocking thread runs the cursor and hands encoded pieces of the JSON document to the response body through
//! a bounded channel: when the client reads slowly the thread waits, and when the client goes away the body is
//! dropped, which cancels the query. A failure after the head went out can no longer change the status: the
//! body then ends without its closing part (the connection is cut), so no client takes a cut-short result for a
//! whole one. So does an answer the server stops producing because its grace period for shutting down is over.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use axum::body::Bytes;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper::body::Frame;
use parking_lot::Mutex;
use plexus::cypher::{Interrupt, ReadCursor, ResultValue};
use serde_json::Value as Json;
use tokio::sync::mpsc;

use super::json::{self, Format};
use crate::service::{ServerError, Service};

/// Pieces of the document in flight between the producing thread and the client: with about
/// [`PIECE_BYTES`] each, what a slow client leaves unread stays within a few megabytes.
const PIECES_IN_FLIGHT: usize = 4;
/// A piece is sent once it holds about this much JSON.
const PIECE_BYTES: usize = 256 << 10;
/// Rows the statement's first batch produces.
pub const FIRST_ROWS: usize = 4096;
/// JSON produced before the answer's head goes out: an answer up to this size is sent whole.
const HEAD_BYTES: usize = 8 << 20;

/// The body of a streamed answer: pieces as the producing thread sends them. Dropping it (the client went away)
/// cancels the query.
struct StreamedBody {
    pieces: mpsc::Receiver<Result<Bytes, std::io::Error>>,
    /// The request's interrupt: cancelled when the body goes, so the producer stops between batches.
    interrupt: Arc<Interrupt>,
    /// The interrupt of the batch being produced, cancelled too so that the batch stops where it is.
    live: Arc<Mutex<Arc<Interrupt>>>,
    /// Set by the producer once the document's last piece is in the channel. A producer that stops before
    /// (the server's grace period for stopping ran out) leaves it unset, and the body ends in an error rather
    /// than as a whole answer.
    complete: Arc<AtomicBool>,
    /// The error of a body that ended early has been reported.
    cut: bool,
}

impl Drop for StreamedBody {
    fn drop(&mut self) {
        self.interrupt.cancel();
        self.live.lock().cancel();
    }
}

/// Hands `piece` to the body, waiting while the client has not read the pieces before it. Gives up (false) when
/// the client went away, when the server's grace period for stopping is over, or when the statement was
/// terminated: a producer must never wait forever on a client that stopped reading.
fn send(
    sender: &mpsc::Sender<Result<Bytes, std::io::Error>>,
    mut piece: Result<Bytes, std::io::Error>,
    service: &Service,
    interrupt: &Interrupt,
) -> bool {
    loop {
        match sender.try_send(piece) {
            Ok(()) => return true,
            Err(mpsc::error::TrySendError::Closed(_)) => return false,
            Err(mpsc::error::TrySendError::Full(back)) => {
                if service.registry.stopping() || interrupt.is_cancelled() {
                    return false;
                }
                piece = back;
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    }
}

impl hyper::body::Body for StreamedBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match ready!(self.pieces.poll_recv(cx)) {
            Some(piece) => Poll::Ready(Some(piece.map(Frame::data))),
            None if self.complete.load(Ordering::Acquire) || std::mem::replace(&mut self.cut, true) => {
                Poll::Ready(None)
            }
            None => Poll::Ready(Some(Err(std::io::Error::other("the answer was cut short: the server is stopping")))),
        }
    }
}

/// What a statement produced before its cursor: the answer's fields and first rows, its format, and what
/// follows the `data` member.
pub struct Produced {
    pub fields: Vec<String>,
    pub rows: Vec<Vec<ResultValue>>,
    pub format: Format,
    pub tail: Vec<u8>,
}

/// Starts an answer's JSON document: the `data` member's `fields`, then the `values` array up to its first row.
pub fn open_document(out: &mut Vec<u8>, fields: &[String]) {
    out.extend_from_slice(b"{\"data\":{\"fields\":");
    serde_json::to_writer(&mut *out, fields).expect("JSON to memory");
    out.extend_from_slice(b",\"values\":[");
}

/// Ends an answer's JSON document after its last row: the `values` array, the `data` member, then `tail` (the
/// members that follow `data`, each led by a comma).
pub fn close_document(out: &mut Vec<u8>, tail: &[u8]) {
    out.extend_from_slice(b"]}");
    out.extend_from_slice(tail);
    out.push(b'}');
}

/// Writes rows into `out` as elements of the `values` array; `first` says no element was written before.
pub fn write_rows(out: &mut Vec<u8>, rows: Vec<Vec<ResultValue>>, format: Format, first: &mut bool) {
    for row in rows {
        if !std::mem::take(first) {
            out.push(b',');
        }
        let row = Json::Array(row.iter().map(|v| json::encode(v, format)).collect());
        serde_json::to_writer(&mut *out, &row).expect("JSON to memory");
    }
}

/// The answer to an auto-commit read whose rows go on in `cursor` past `first_rows`. `tail` is what follows
/// the `data` member (counters, bookmarks, ...), as `"key":value` pairs each led by a comma. Call on a blocking
/// thread: it returns once the head is ready, and a thread of its own goes on producing the rest. An error is
/// returned only before anything is sent.
pub fn answer(
    produced: Produced,
    mut cursor: ReadCursor,
    interrupt: Arc<Interrupt>,
    service: Arc<Service>,
    query: String,
) -> Result<Response, ServerError> {
    let Produced { fields, rows: first_rows, format, tail } = produced;
    let mut head = Vec::with_capacity(PIECE_BYTES);
    open_document(&mut head, &fields);
    let mut first = true;
    write_rows(&mut head, first_rows, format, &mut first);
    // Most answers are produced whole before the head goes out, so that a failure in any row is an error
    // answer with its status; only past `HEAD_BYTES` does the answer stream.
    let running = service.register(&interrupt, &query);
    while head.len() < HEAD_BYTES {
        match cursor.next_batch() {
            Ok(Some(rows)) => write_rows(&mut head, rows, format, &mut first),
            Ok(None) => {
                close_document(&mut head, &tail);
                return Ok(super::bytes_response(StatusCode::ACCEPTED, format, head));
            }
            Err(e) => return Err(service.stream_error(e)),
        }
    }
    drop(running);
    let (sender, pieces) = mpsc::channel(PIECES_IN_FLIGHT);
    sender.try_send(Ok(Bytes::from(head))).expect("an empty channel takes one piece");
    let caller = crate::registry::current_caller();
    let (live, body_live) = (Arc::new(Mutex::new(interrupt.clone())), interrupt.clone());
    let live_for_body = live.clone();
    let complete = Arc::new(AtomicBool::new(false));
    let done = complete.clone();
    // On the blocking pool: its threads have the query stack (deeply nested values are encoded and dropped
    // recursively) and count against `query_threads`.
    tokio::task::spawn_blocking(move || {
        crate::registry::as_caller(caller, || {
            let mut piece = Vec::with_capacity(PIECE_BYTES);
            loop {
                // Each batch gets the server's time and size limits afresh, as each Bolt PULL does: a client
                // reading a large answer slowly is not timed out for its own pace.
                let fresh = service.interrupt(crate::service::ClientDeadline::ServerLimit);
                *live.lock() = fresh.clone();
                if body_live.is_cancelled() {
                    return; // The client went away while the last piece was being sent.
                }
                cursor.set_interrupt(Some(fresh.clone()));
                // Producing the rows is running the statement: listed by SHOW TRANSACTIONS, stopped by a shutdown.
                let running = service.register(&fresh, &query);
                let batch = cursor.next_batch();
                drop(running);
                match batch {
                    Ok(Some(rows)) => {
                        write_rows(&mut piece, rows, format, &mut first);
                        if piece.len() >= PIECE_BYTES {
                            let full = std::mem::replace(&mut piece, Vec::with_capacity(PIECE_BYTES));
                            if !send(&sender, Ok(Bytes::from(full)), &service, &fresh) {
                                return;
                            }
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!("a streamed HTTP answer failed after its head was sent: {e}");
                        if send(&sender, Ok(Bytes::from(piece)), &service, &fresh) {
                            send(&sender, Err(std::io::Error::other(e.to_string())), &service, &fresh);
                        }
                        return;
                    }
                }
            }
            close_document(&mut piece, &tail);
            let fresh = live.lock().clone();
            if send(&sender, Ok(Bytes::from(piece)), &service, &fresh) {
                done.store(true, Ordering::Release);
            }
        })
    });
    let body = StreamedBody { pieces, interrupt, live: live_for_body, complete, cut: false };
    let mut response = (StatusCode::ACCEPTED, axum::body::Body::new(body)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(format.media_type()));
    Ok(response)
}
