//! Who is calling: HTTP Basic credentials checked against the server's users on every request that needs them,
//! with a short-lived cache of accepted `Authorization` headers so a busy client does not pay for an argon2
//! verification per request.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine as _;
use parking_lot::Mutex;

use super::error::ApiError;
use super::HttpState;
use crate::auth::Role;
use crate::service::ServerError;

/// How long an accepted header is trusted without checking the password again. Bounds how long a changed
/// password or removed user keeps working over HTTP.
const CACHE_TTL: Duration = Duration::from_secs(60);
const CACHE_CAPACITY: usize = 1024;

/// An authenticated client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub user: String,
    pub role: Role,
}

/// Accepted `Authorization` headers and who they stand for.
#[derive(Default)]
pub struct CredentialCache {
    accepted: Mutex<HashMap<String, (Caller, Instant)>>,
}

impl CredentialCache {
    fn get(&self, header: &str) -> Option<Caller> {
        let accepted = self.accepted.lock();
        accepted.get(header).filter(|(_, at)| at.elapsed() < CACHE_TTL).map(|(c, _)| c.clone())
    }

    fn insert(&self, header: &str, caller: &Caller) {
        let mut accepted = self.accepted.lock();
        if accepted.len() >= CACHE_CAPACITY {
            accepted.retain(|_, (_, at)| at.elapsed() < CACHE_TTL);
            if accepted.len() >= CACHE_CAPACITY {
                accepted.clear();
            }
        }
        accepted.insert(header.to_string(), (caller.clone(), Instant::now()));
    }
}

/// The user name and password of a `Basic` authorization header.
pub fn parse_basic(header: &str) -> Option<(String, String)> {
    let (scheme, token) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(token.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

impl FromRequestParts<Arc<HttpState>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<HttpState>) -> Result<Caller, ApiError> {
        let service = &state.service;
        if !service.auth.enabled() {
            return Ok(Caller { user: String::new(), role: Role::Admin });
        }
        let unauthorized = || {
            service.metrics.auth_failures.fetch_add(1, Ordering::Relaxed);
            ApiError::from(ServerError::unauthorized())
        };
        let Some(header) = parts.headers.get(AUTHORIZATION).and_then(|h| h.to_str().ok()) else {
            return Err(unauthorized());
        };
        if let Some(caller) = state.credentials.get(header) {
            return Ok(caller);
        }
        let Some((user, password)) = parse_basic(header) else {
            return Err(unauthorized());
        };
        let checker = service.clone();
        let name = user.clone();
        let role = tokio::task::spawn_blocking(move || checker.auth.authenticate("basic", &name, &password))
            .await
            .map_err(|_| unauthorized())?
            .map_err(|_| unauthorized())?;
        let caller = Caller { user, role };
        state.credentials.insert(header, &caller);
        Ok(caller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_headers_are_decoded() {
        // "neo4j:pa:ss" — the password may contain colons, the user name may not.
        assert_eq!(parse_basic("Basic bmVvNGo6cGE6c3M="), Some(("neo4j".into(), "pa:ss".into())));
        assert_eq!(parse_basic("basic bmVvNGo6cGE6c3M="), Some(("neo4j".into(), "pa:ss".into())));
        assert_eq!(parse_basic("Bearer abc"), None);
        assert_eq!(parse_basic("Basic !!!"), None);
    }
}
