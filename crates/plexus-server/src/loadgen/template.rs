//! Point-read requests written from bytes prepared once per phase: only the one integer parameter changes from
//! request to request. Building each request from a JSON or PackStream tree (the query text copied, escaped and
//! framed again every time) was about a tenth of the generator's CPU per HTTP request, CPU taken from the server
//! it measures on a shared machine.

use crate::bolt::session::chunk;
use crate::http::json::write_decimal;
use crate::packstream::{map, Encoder, Ps};

/// The fixed bytes around a point read's integer parameter.
pub(super) enum PointRead {
    /// An HTTP POST: the head up to the length's value, then the body before the integer (the body ends `}}`).
    Http { head: Vec<u8>, body_prefix: Vec<u8> },
    /// A Bolt RUN up to the integer and after it (both inside one chunk), then the whole PULL.
    Bolt { run_prefix: Vec<u8>, run_suffix: Vec<u8>, pull: Vec<u8> },
}

const HTTP_BODY_SUFFIX: &[u8] = b"}}";

impl PointRead {
    /// A POST of `query` with the one parameter `key` to `path`.
    pub fn http(host: &str, authorization: &str, path: &str, query: &str, key: &str) -> PointRead {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {authorization}\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nContent-Length: "
        )
        .into_bytes();
        let mut body_prefix = b"{\"statement\":".to_vec();
        serde_json::to_writer(&mut body_prefix, query).expect("JSON to memory");
        body_prefix.extend_from_slice(b",\"parameters\":{");
        serde_json::to_writer(&mut body_prefix, key).expect("JSON to memory");
        body_prefix.push(b':');
        PointRead::Http { head, body_prefix }
    }

    /// A Bolt RUN of `query` with the one parameter `key`, and a PULL of every record, pipelined.
    pub fn bolt(query: &str, key: &str) -> PointRead {
        // RUN is a structure of three fields: the query, the parameters (a map of one entry) and an empty map.
        let mut e = Encoder::new();
        e.buf.extend_from_slice(&[0xB3, 0x10]);
        e.value(&Ps::String(query.into()));
        e.buf.push(0xA1);
        e.value(&Ps::String(key.into()));
        let run_prefix = std::mem::take(&mut e.buf);
        e.value(&map([]));
        let run_suffix = std::mem::take(&mut e.buf);
        e.value(&Ps::Struct(0x3F, vec![map([("n", Ps::Int(-1))])]));
        let mut pull = Vec::new();
        chunk(&e.buf, &mut pull);
        PointRead::Bolt { run_prefix, run_suffix, pull }
    }

    /// Writes the request with the parameter's value `value`.
    pub fn write(&self, value: i64, out: &mut Vec<u8>) {
        match self {
            PointRead::Http { head, body_prefix } => {
                // The body's length is known before its digits are written: no buffer per request.
                let magnitude = value.unsigned_abs();
                let digits = magnitude.checked_ilog10().map_or(1, |l| l as usize + 1) + usize::from(value < 0);
                let length = body_prefix.len() + digits + HTTP_BODY_SUFFIX.len();
                out.extend_from_slice(head);
                write_decimal(out, length as u64);
                out.extend_from_slice(b"\r\n\r\n");
                out.extend_from_slice(body_prefix);
                if value < 0 {
                    out.push(b'-');
                }
                write_decimal(out, magnitude);
                out.extend_from_slice(HTTP_BODY_SUFFIX);
            }
            PointRead::Bolt { run_prefix, run_suffix, pull } => {
                let mut e = Encoder::new();
                e.value(&Ps::Int(value));
                let length = run_prefix.len() + e.buf.len() + run_suffix.len();
                if length > u16::MAX as usize {
                    // Longer than one chunk (a query text of tens of kilobytes): framed the general way.
                    let mut message = run_prefix.clone();
                    message.extend_from_slice(&e.buf);
                    message.extend_from_slice(run_suffix);
                    chunk(&message, out);
                } else {
                    out.extend_from_slice(&(length as u16).to_be_bytes());
                    out.extend_from_slice(run_prefix);
                    out.extend_from_slice(&e.buf);
                    out.extend_from_slice(run_suffix);
                    out.extend_from_slice(&[0, 0]);
                }
                out.extend_from_slice(pull);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::client;

    const VALUES: [i64; 12] = [0, 1, -1, -16, -17, 127, 128, 40_000, -40_000, 1 << 40, i64::MAX, i64::MIN];

    #[test]
    fn http_requests_carry_the_same_statement_and_parameter_as_a_json_tree() {
        let query = "MATCH (n:Person {id: $personId})\nRETURN n.firstName AS \"first\", '\\u00e9'";
        let template = PointRead::http("127.0.0.1:7474", "Basic bmVvNGo6eA==", "/db/neo4j/query/v2", query, "personId");
        for value in VALUES {
            let mut made = Vec::new();
            template.write(value, &mut made);
            let mut expected = Vec::new();
            let body = serde_json::json!({ "statement": query, "parameters": { "personId": value } }).to_string();
            client::http_post("127.0.0.1:7474", "Basic bmVvNGo6eA==", "/db/neo4j/query/v2", &body, &mut expected);
            let split = |bytes: &[u8]| {
                let at = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
                (String::from_utf8(bytes[..at].to_vec()).unwrap(), bytes[at..].to_vec())
            };
            let ((made_head, made_body), (expected_head, expected_body)) = (split(&made), split(&expected));
            let length = format!("Content-Length: {}\r\n", made_body.len());
            assert!(made_head.contains(&length), "{made_head}");
            let without_length = |head: &str| head.lines().filter(|l| !l.starts_with("Content-Length")).count();
            assert_eq!(without_length(&made_head), without_length(&expected_head));
            let parse = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap();
            assert_eq!(parse(&made_body), parse(&expected_body), "value {value}");
        }
    }

    #[test]
    fn bolt_requests_are_the_bytes_of_the_general_encoder() {
        for query in ["MATCH (n {id: $id}) RETURN n", &"x".repeat(70_000)] {
            let template = PointRead::bolt(query, "id");
            for value in VALUES {
                let mut made = Vec::new();
                template.write(value, &mut made);
                let mut expected = Vec::new();
                client::bolt_run_pull(query, map([("id", Ps::Int(value))]), &mut expected);
                assert!(made == expected, "query of {} bytes, value {value}", query.len());
            }
        }
    }
}
