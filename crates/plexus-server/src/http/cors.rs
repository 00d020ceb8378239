//! Cross-origin requests from web pages (CORS), off unless origins are named (`cors_origins`,
//! `--cors-origin`). Neo4j allows every origin by default; Plexus does not, because a page the user happens to
//! visit could then query a server on their own machine (one started with `--no-auth`, or through credentials
//! the page tricked out of them). A named origin gets its preflight answered and its answers marked readable;
//! any other origin gets no CORS headers, so the browser keeps its answers from the page.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_MAX_AGE,
    ACCESS_CONTROL_REQUEST_HEADERS, ACCESS_CONTROL_REQUEST_METHOD, ORIGIN, VARY,
};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::HttpState;

/// The request headers a page may send when none are asked for by name.
const DEFAULT_HEADERS: &str = "authorization, content-type, accept";
const METHODS: &str = "GET, POST, PATCH, DELETE, OPTIONS";
/// Seconds a browser may reuse a preflight answer.
const MAX_AGE: &str = "600";

/// The origins whose pages may call the HTTP API (and open a WebSocket to the Bolt port).
#[derive(Clone, Debug, Default)]
pub struct Cors {
    any: bool,
    origins: Vec<String>,
}

impl Cors {
    /// From the configured list: `*` for any origin, else origins such as `https://app.example.com:8443`.
    pub fn new(origins: &[String]) -> Cors {
        Cors {
            any: origins.iter().any(|o| o == "*"),
            origins: origins.iter().filter(|o| *o != "*").map(|o| o.to_ascii_lowercase()).collect(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.any || !self.origins.is_empty()
    }

    pub fn allows(&self, origin: &str) -> bool {
        self.any || self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }
}

/// Checks one configured origin: `*`, or `scheme://host[:port]` as a browser sends it in `Origin`.
pub fn check_origin(origin: &str) -> Result<(), String> {
    if origin == "*" {
        return Ok(());
    }
    let bad = |why: &str| Err(format!("bad CORS origin '{origin}': {why} (e.g. https://app.example.com:8443)"));
    let Some((scheme, rest)) = origin.split_once("://") else { return bad("expected scheme://host[:port]") };
    if scheme != "http" && scheme != "https" {
        return bad("the scheme must be http or https");
    }
    if rest.is_empty() || rest.contains(['/', '?', '#', ' ', '@']) {
        return bad("an origin is only scheme, host and port, with no path or trailing slash");
    }
    Ok(())
}

/// Answers preflights from allowed origins and marks their other answers readable by the page.
pub async fn apply(State(state): State<Arc<HttpState>>, request: Request, next: Next) -> Response {
    let cors = &state.cors;
    if !cors.enabled() {
        return next.run(request).await;
    }
    let origin = request.headers().get(ORIGIN).filter(|o| o.to_str().is_ok_and(|o| cors.allows(o))).cloned();
    let Some(origin) = origin else {
        let mut response = next.run(request).await;
        response.headers_mut().append(VARY, HeaderValue::from_static("origin"));
        return response;
    };
    let preflight =
        request.method() == Method::OPTIONS && request.headers().contains_key(ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        let asked = request.headers().get(ACCESS_CONTROL_REQUEST_HEADERS).cloned();
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(METHODS));
        headers
            .insert(ACCESS_CONTROL_ALLOW_HEADERS, asked.unwrap_or_else(|| HeaderValue::from_static(DEFAULT_HEADERS)));
        headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(MAX_AGE));
        response
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.append(VARY, HeaderValue::from_static("origin"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked_and_matched_without_case() {
        assert!(check_origin("*").is_ok());
        assert!(check_origin("http://localhost:3000").is_ok());
        assert!(check_origin("https://App.Example.com").is_ok());
        for bad in ["localhost:3000", "ftp://x", "https://x/", "https://x/path", "https://", "https://u@x"] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
        let cors = Cors::new(&["https://App.Example.com".into()]);
        assert!(cors.enabled() && cors.allows("https://app.example.com") && !cors.allows("https://evil.example"));
        assert!(!Cors::new(&[]).enabled());
        assert!(Cors::new(&["*".into()]).allows("https://anything"));
    }
}
