//! PULL and DISCARD: sending a result's records in the batches a client asks for, from the rows RUN produced and
//! then from the cursor that holds the rest, and the summary that ends a stream (statistics, plan, bookmark).

use std::collections::BTreeMap;

use plexus::cypher::{PlanTree, ReadCursor};
use plexus::QueryStats;

use super::{chunk, msg, Pull, Session, State, Stream, NULL, PULL_OUTPUT_BYTES};
use crate::bolt::values;
use crate::packstream::{map, Encoder, Ps};
use crate::service::ServerError;

impl Session {
    pub(super) fn pull(&mut self, fields: &[Ps], out: &mut Vec<u8>, discard: bool) -> Result<(), ServerError> {
        if !matches!(self.state, State::Streaming | State::TxStreaming) {
            return Err(self.out_of_state(if discard { "DISCARD" } else { "PULL" }));
        }
        // The rest of a result is not read by a user removed since the RUN.
        self.authenticated()?;
        let extra = fields.first().unwrap_or(&NULL);
        let n = extra.get("n").and_then(Ps::as_int).unwrap_or(-1);
        if n == 0 || n < -1 {
            return Err(ServerError::request("PULL/DISCARD needs n > 0 or n = -1 (all)"));
        }
        let qid = extra.get("qid").and_then(Ps::as_int).unwrap_or(-1);
        let index =
            if qid == -1 { self.streams.len().checked_sub(1) } else { self.streams.iter().position(|s| s.qid == qid) }
                .ok_or_else(|| ServerError::request(format!("no open result with qid {qid}")))?;
        if discard && n == -1 {
            // Rows discarded are never produced.
            self.streams[index].rest = None;
        }
        if let Some(deadline) = self.streams[index].auto_commit_deadline {
            if self.streams[index].rest.is_some() {
                let interrupt = self.interrupt(deadline);
                if let Some(cursor) = self.streams[index].rest.as_mut() {
                    cursor.set_interrupt(Some(interrupt));
                }
            }
        }
        self.pull_rows(Pull { index, left: (n > 0).then_some(n as u64), discard }, out)
    }

    /// Whether a PULL has more records to send: the connection writes out what it has, then calls
    /// [`Session::resume`], so a large PULL never holds more than about [`PULL_OUTPUT_BYTES`] of records.
    pub fn pull_pending(&self) -> bool {
        self.pending_pull.is_some()
    }

    /// Goes on with a PULL that stopped to let its records be written out.
    pub fn resume(&mut self, out: &mut Vec<u8>) {
        let Some(pull) = self.pending_pull.take() else { return };
        let caller = self.caller.clone();
        crate::registry::as_caller(caller, || self.resume_pull(pull, out));
    }

    fn resume_pull(&mut self, pull: Pull, out: &mut Vec<u8>) {
        if let Err(e) = self.pull_rows(pull, out) {
            self.fail(out, e);
            self.state = State::Failed;
        }
    }

    /// Sends the records of `pull`, then its summary; stops early (leaving `pending_pull`) once `out` holds
    /// [`PULL_OUTPUT_BYTES`] and more records are wanted.
    fn pull_rows(&mut self, pull: Pull, out: &mut Vec<u8>) -> Result<(), ServerError> {
        if let Some(open) = &self.tx {
            // A terminated transaction's results end at the next PULL (or the next part of a long one), rows
            // produced but not yet sent included, as its next statement would fail.
            if let Err(e) = open.tx.check_terminated() {
                self.streams.clear();
                return Err(e);
            }
        }
        let Pull { index, mut left, discard } = pull;
        let shape = self.shape;
        let service = &self.service;
        let transaction = self.tx.as_ref().map(|open| open.tx.id());
        let stream = &mut self.streams[index];
        if let Some(Err(e)) = stream.listed.as_ref().map(|l| l.check()) {
            // Terminated between PULLs (TERMINATE TRANSACTIONS lists and stops an open auto-commit result).
            self.streams.remove(index);
            return Err(self.service.stream_error(e));
        }
        // Producing more rows is running the statement: stopping the server interrupts it, as at RUN. An open
        // auto-commit result is listed for its whole life already.
        let running = match (&stream.listed, stream.rest.as_ref().and_then(ReadCursor::interrupt), &stream.query) {
            (None, Some(i), Some(q)) => Some(service.registry.register(i, q, transaction)),
            _ => None,
        };
        let mut record = Encoder::new();
        let mut failure = None;
        let mut paused = false;
        while left != Some(0) {
            if out.len() >= PULL_OUTPUT_BYTES {
                paused = true;
                break;
            }
            let row = match stream.rows.next() {
                Some(row) => row,
                None => match stream.listed.as_ref().map_or(Ok(()), |l| l.check()) {
                    Err(e) => {
                        // Terminated while this PULL ran: no more rows are produced.
                        stream.rest = None;
                        failure = Some(e);
                        break;
                    }
                    Ok(()) => match refill(stream, service.registry.stopping()) {
                        Ok(true) => continue,
                        Ok(false) => break,
                        Err(e) => {
                            failure = Some(e);
                            break;
                        }
                    },
                },
            };
            if !discard {
                record.buf.clear();
                record.struct_header(1, msg::RECORD);
                record.list_header(row.len());
                for v in &row {
                    values::encode(&mut record, v, shape);
                }
                chunk(&record.buf, out);
            }
            left = left.map(|l| l - 1);
        }
        // Whether more rows follow is known only once the next batch is produced (a cursor cannot tell ahead).
        if failure.is_none() && !paused && stream.rows.len() == 0 {
            if let Err(e) = refill(stream, service.registry.stopping()) {
                failure = Some(e);
            }
        }
        drop(running);
        if let Some(e) = failure {
            // The records already sent stay sent; the result ends in the failure.
            self.streams.remove(index);
            return Err(self.service.stream_error(e));
        }
        if paused {
            self.pending_pull = Some(Pull { index, left, discard });
            return Ok(());
        }
        if stream.rows.len() > 0 {
            self.success(out, map([("has_more", Ps::Bool(true))]));
            return Ok(());
        }
        let stream = self.streams.remove(index);
        let summary = self.summary(stream);
        self.success(out, summary);
        self.state = match self.state {
            State::Streaming => State::Ready,
            _ if self.streams.is_empty() => State::TxReady,
            s => s,
        };
        Ok(())
    }

    fn summary(&self, stream: Stream) -> Ps {
        let mut m = vec![
            ("type".to_string(), Ps::String(stream.query_type.to_string())),
            ("t_last".to_string(), Ps::Int(stream.started.elapsed().as_millis() as i64)),
            ("db".to_string(), Ps::String(stream.db.to_string())),
        ];
        if let Some(b) = stream.bookmark {
            m.push(("bookmark".to_string(), Ps::String(b)));
        }
        if stream.stats.contains_updates() || stream.stats.system_updates > 0 {
            m.push(("stats".to_string(), stats(&stream.stats)));
        }
        if let Some(notifications) = stream.notification_filter.summary(&stream.notifications) {
            m.push(("notifications".to_string(), notifications));
        }
        if let Some(plan) = stream.plan {
            let key = if stream.profile { "profile" } else { "plan" };
            let tree = stream.plan_tree.unwrap_or_default();
            m.push((key.to_string(), plan_map(&tree, Some(&plan), &stream.columns, stream.profile)));
        }
        Ps::Map(m)
    }
}

/// Produces the next batch of `stream`'s cursor into its rows; false when there is none.
fn refill(stream: &mut Stream, stopping: bool) -> Result<bool, plexus::CypherError> {
    let Some(cursor) = stream.rest.as_mut() else { return Ok(false) };
    if stopping {
        // The server's grace period is over: rows not produced yet fail as a stopped query does (a retryable
        // error), rather than the connection being closed under a client that cannot tell why. Rows already
        // produced, and results without a cursor (a write committed at RUN), are still handed out.
        stream.rest = None;
        let stopped = plexus::cypher::Interrupt::new(None, None);
        stopped.cancel();
        return Err(stopped.check().expect_err("a cancelled interrupt refuses"));
    }
    match cursor.next_batch() {
        Ok(Some(rows)) => {
            stream.rows = rows.into_iter();
            Ok(true)
        }
        Ok(None) => {
            stream.rest = None;
            Ok(false)
        }
        Err(e) => {
            stream.rest = None;
            Err(e)
        }
    }
}

fn stats(s: &QueryStats) -> Ps {
    let counts: BTreeMap<&str, u64> = [
        ("nodes-created", s.nodes_created),
        ("nodes-deleted", s.nodes_deleted),
        ("relationships-created", s.relationships_created),
        ("relationships-deleted", s.relationships_deleted),
        ("properties-set", s.properties_set),
        ("labels-added", s.labels_added),
        ("labels-removed", s.labels_removed),
        ("indexes-added", s.indexes_added),
        ("indexes-removed", s.indexes_removed),
        ("constraints-added", s.constraints_added),
        ("constraints-removed", s.constraints_removed),
    ]
    .into_iter()
    .filter(|(_, v)| *v > 0)
    .collect();
    let mut entries: Vec<(String, Ps)> = counts.into_iter().map(|(k, v)| (k.to_string(), Ps::Int(v as i64))).collect();
    if s.contains_updates() {
        entries.push(("contains-updates".into(), Ps::Bool(true)));
    }
    if s.system_updates > 0 {
        entries.push(("system-updates".into(), Ps::Int(s.system_updates as i64)));
        entries.push(("contains-system-updates".into(), Ps::Bool(true)));
    }
    Ps::Map(entries)
}

/// The plan as drivers expect it: a tree of operators, each with its arguments and children, and under
/// PROFILE the rows it produced and its time (nanoseconds, its inputs included). The root also carries the
/// whole plan as text, as Neo4j's does.
fn plan_map(node: &PlanTree, text: Option<&str>, columns: &[String], profile: bool) -> Ps {
    let mut args = vec![("Details".to_string(), Ps::String(node.operator.clone()))];
    if let Some(text) = text {
        args.push(("string-representation".to_string(), Ps::String(text.to_string())));
    }
    let mut entries = vec![
        ("operatorType".to_string(), Ps::String(node.operator_type())),
        ("identifiers".to_string(), Ps::List(columns.iter().map(|c| Ps::String(c.clone())).collect())),
        ("args".to_string(), Ps::Map(args)),
        ("children".to_string(), Ps::List(node.children.iter().map(|c| plan_map(c, None, &[], profile)).collect())),
    ];
    if profile {
        entries.push(("dbHits".into(), Ps::Int(0)));
        entries.push(("rows".into(), Ps::Int(node.rows.unwrap_or(0) as i64)));
        entries.push(("time".into(), Ps::Int(node.time.map_or(0, |t| t.as_nanos() as i64))));
    }
    Ps::Map(entries)
}
