//! Minimal asynchronous clients for the load generator: Bolt 5 and the HTTP Query API over a keep-alive HTTP/1.1
//! connection. They connect, log on and run the setup queries; the measured requests (a Bolt RUN and PULL
//! pipelined in one write, or one POST) are written by [`bolt_run_pull`] and [`http_post`] and sent by
//! [`super::wire`] over the same connections.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::bolt::session::chunk;
use crate::packstream::{decode, map, Encoder, Ps};

/// A request that failed, with the server's code when it sent one.
#[derive(Debug, Clone)]
pub struct RequestError(pub String);

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn io(e: std::io::Error) -> RequestError {
    RequestError(format!("i/o: {e}"))
}

/// One Bolt connection, logged on.
pub struct BoltClient {
    stream: TcpStream,
    inbuf: Vec<u8>,
    out: Vec<u8>,
}

impl BoltClient {
    pub async fn connect(addr: &str, user: &str, password: &str) -> Result<BoltClient, RequestError> {
        let stream = TcpStream::connect(addr).await.map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        let mut c = BoltClient { stream, inbuf: Vec::new(), out: Vec::new() };
        c.stream
            .write_all(&[0x60, 0x60, 0xB0, 0x17, 0, 4, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .await
            .map_err(io)?;
        let mut v = [0u8; 4];
        c.stream.read_exact(&mut v).await.map_err(io)?;
        if v[3] != 5 {
            return Err(RequestError("the server does not speak Bolt 5".into()));
        }
        let auth = [
            ("scheme", Ps::String("basic".into())),
            ("principal", Ps::String(user.into())),
            ("credentials", Ps::String(password.into())),
        ];
        let mut hello = vec![("user_agent".to_string(), Ps::String("plexus-loadgen/1".into()))];
        if v[2] >= 3 {
            // Bolt 5.3 made `bolt_agent` a required part of HELLO (Neo4j refuses a HELLO without it).
            hello.push(("bolt_agent".to_string(), map([("product", Ps::String("plexus-loadgen/1".into()))])));
        }
        if v[2] == 0 {
            hello.extend(auth.into_iter().map(|(k, v)| (k.to_string(), v)));
            c.send(0x01, vec![Ps::Map(hello)]);
        } else {
            c.send(0x01, vec![Ps::Map(hello)]);
            c.send(0x6A, vec![map(auth)]);
        }
        c.flush().await?;
        for _ in 0..(if v[2] == 0 { 1 } else { 2 }) {
            match c.receive().await? {
                Ps::Struct(0x70, _) => {}
                other => return Err(RequestError(format!("log-on failed: {}", failure_text(&other)))),
            }
        }
        Ok(c)
    }

    fn send(&mut self, tag: u8, fields: Vec<Ps>) {
        let mut e = Encoder::new();
        e.value(&Ps::Struct(tag, fields));
        chunk(&e.buf, &mut self.out);
    }

    async fn flush(&mut self) -> Result<(), RequestError> {
        self.stream.write_all(&self.out).await.map_err(io)?;
        self.out.clear();
        Ok(())
    }

    async fn receive(&mut self) -> Result<Ps, RequestError> {
        loop {
            if let Some(m) = crate::bolt::connection::take_message(&mut self.inbuf, usize::MAX).map_err(RequestError)? {
                return decode(&m).map_err(|e| RequestError(e.to_string()));
            }
            // Straight into the buffer's spare room: a zeroed stack buffer per read cost a 16 KiB memset.
            self.inbuf.reserve(16 * 1024);
            let n = self.stream.read_buf(&mut self.inbuf).await.map_err(io)?;
            if n == 0 {
                return Err(RequestError("the server closed the connection".into()));
            }
        }
    }

    /// The connection for the measuring loop, with anything read past the last answer.
    pub(super) fn into_wire(self) -> std::io::Result<super::wire::Wire> {
        super::wire::Wire::new(self.stream.into_std()?, false, self.inbuf)
    }

    /// Runs a query and returns the first column of every record (setup queries).
    pub async fn column(&mut self, query: &str) -> Result<Vec<Ps>, RequestError> {
        self.send(0x10, vec![Ps::String(query.into()), map([]), map([])]);
        self.send(0x3F, vec![map([("n", Ps::Int(-1))])]);
        self.flush().await?;
        let run = self.receive().await?;
        if !matches!(run, Ps::Struct(0x70, _)) {
            return Err(RequestError(failure_text(&run)));
        }
        let mut values = Vec::new();
        loop {
            match self.receive().await? {
                Ps::Struct(0x71, mut f) => {
                    if let Some(Ps::List(mut row)) = f.pop() {
                        if !row.is_empty() {
                            values.push(row.swap_remove(0));
                        }
                    }
                }
                Ps::Struct(0x70, _) => return Ok(values),
                other => return Err(RequestError(failure_text(&other))),
            }
        }
    }
}

pub(super) fn failure_text(m: &Ps) -> String {
    match m {
        Ps::Struct(0x7F, f) => {
            let code = f.first().and_then(|m| m.get("code")).and_then(Ps::as_str).unwrap_or("?");
            let message = f.first().and_then(|m| m.get("message")).and_then(Ps::as_str).unwrap_or("");
            format!("{code}: {message}")
        }
        other => format!("unexpected response {other:?}"),
    }
}

/// One keep-alive HTTP/1.1 connection to the Query API.
pub struct HttpClient {
    stream: TcpStream,
    host: String,
    authorization: String,
    inbuf: Vec<u8>,
}

impl HttpClient {
    /// `addr` is `HOST:PORT`.
    pub async fn connect(addr: &str, user: &str, password: &str) -> Result<HttpClient, RequestError> {
        let stream = TcpStream::connect(addr).await.map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        let authorization = http_authorization(user, password);
        Ok(HttpClient { stream, host: addr.to_string(), authorization, inbuf: Vec::new() })
    }

    /// The connection for the measuring loop, with anything read past the last answer.
    pub(super) fn into_wire(self) -> std::io::Result<super::wire::Wire> {
        super::wire::Wire::new(self.stream.into_std()?, true, self.inbuf)
    }

    /// Runs a statement and returns the first column of every row (setup queries).
    pub async fn column(&mut self, statement: &str) -> Result<Vec<serde_json::Value>, RequestError> {
        let v = self.query(statement, serde_json::json!({})).await?;
        let rows = v.pointer("/data/values").and_then(|r| r.as_array()).cloned().unwrap_or_default();
        Ok(rows.into_iter().filter_map(|r| r.as_array().and_then(|r| r.first().cloned())).collect())
    }

    async fn query(
        &mut self,
        statement: &str,
        parameters: serde_json::Value,
    ) -> Result<serde_json::Value, RequestError> {
        let body = serde_json::json!({ "statement": statement, "parameters": parameters });
        let response = self.post("/db/neo4j/query/v2", &body.to_string()).await?;
        let v: serde_json::Value =
            serde_json::from_slice(&response).map_err(|e| RequestError(format!("bad JSON response: {e}")))?;
        if let Some(errors) = v.get("errors").and_then(|e| e.as_array()).filter(|e| !e.is_empty()) {
            return Err(RequestError(errors[0].to_string()));
        }
        Ok(v)
    }

    async fn post(&mut self, path: &str, body: &str) -> Result<Vec<u8>, RequestError> {
        let mut request = Vec::new();
        http_post(&self.host, &self.authorization, path, body, &mut request);
        self.stream.write_all(&request).await.map_err(io)?;
        self.read_response().await
    }

    async fn fill(&mut self) -> Result<(), RequestError> {
        self.inbuf.reserve(16 * 1024);
        let n = self.stream.read_buf(&mut self.inbuf).await.map_err(io)?;
        if n == 0 {
            return Err(RequestError("the server closed the connection".into()));
        }
        Ok(())
    }

    async fn read_response(&mut self) -> Result<Vec<u8>, RequestError> {
        loop {
            if let Some((status, body)) = super::wire::take_http_response(&mut self.inbuf)? {
                super::wire::http_accepted(status, &body)?;
                return Ok(body);
            }
            self.fill().await?;
        }
    }
}

/// The `Authorization` header's value for basic auth.
pub(super) fn http_authorization(user: &str, password: &str) -> String {
    format!("Basic {}", base64(format!("{user}:{password}").as_bytes()))
}

/// Writes a POST of a JSON `body` to `path` on a keep-alive connection.
pub(super) fn http_post(host: &str, authorization: &str, path: &str, body: &str, out: &mut Vec<u8>) {
    use std::io::Write;
    let _ = write!(
        out,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {authorization}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
}

/// Writes a Bolt RUN of `query` with `params` and the PULL of all its records, pipelined.
pub(super) fn bolt_run_pull(query: &str, params: Ps, out: &mut Vec<u8>) {
    let mut e = Encoder::new();
    e.value(&Ps::Struct(0x10, vec![Ps::String(query.into()), params, map([])]));
    chunk(&e.buf, out);
    let mut e = Encoder::new();
    e.value(&Ps::Struct(0x3F, vec![map([("n", Ps::Int(-1))])]));
    chunk(&e.buf, out);
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [group[0], *group.get(1).unwrap_or(&0), *group.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= group.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(super::base64(b"neo4j:secret"), "bmVvNGo6c2VjcmV0");
        assert_eq!(super::base64(b"a"), "YQ==");
        assert_eq!(super::base64(b"ab"), "YWI=");
    }
}
