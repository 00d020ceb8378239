//! Who is calling: HTTP Basic credentials checked against the server's users on every request that needs them,
//! with a cache of accepted `Authorization` headers so a busy client does not pay for an argon2 verification per
//! request. Any change to the users (here or by `plexus user` in another process) empties the cache in effect,
//! so a removed user or an old password stops working at the next request.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::StatusCode;
use base64::Engine as _;
use parking_lot::Mutex;

use super::connection::Activity;
use super::error::ApiError;
use super::HttpState;
use crate::auth::{AuthError, Role};
use crate::service::ServerError;

/// How long an accepted header is trusted without checking the password again while the users stay unchanged.
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
    accepted: Mutex<HashMap<String, Accepted>>,
}

struct Accepted {
    caller: Caller,
    at: Instant,
    /// The users' generation ([`crate::auth::Auth::generation`]) read before the password was checked.
    generation: u64,
}

impl Accepted {
    fn valid(&self, generation: u64) -> bool {
        self.generation == generation && self.at.elapsed() < CACHE_TTL
    }
}

impl CredentialCache {
    fn get(&self, header: &str, generation: u64) -> Option<Caller> {
        let accepted = self.accepted.lock();
        accepted.get(header).filter(|a| a.valid(generation)).map(|a| a.caller.clone())
    }

    fn insert(&self, header: &str, caller: &Caller, generation: u64) {
        let mut accepted = self.accepted.lock();
        if accepted.len() >= CACHE_CAPACITY {
            accepted.retain(|_, a| a.valid(generation));
            if accepted.len() >= CACHE_CAPACITY {
                accepted.clear();
            }
        }
        let entry = Accepted { caller: caller.clone(), at: Instant::now(), generation };
        accepted.insert(header.to_string(), entry);
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
        let caller = Self::authenticate(parts, state).await?;
        // The connection showed valid credentials: it may idle between requests for the idle timeout.
        if let Some(activity) = parts.extensions.get::<Arc<Activity>>() {
            activity.trust();
        }
        Ok(caller)
    }
}

impl Caller {
    async fn authenticate(parts: &Parts, state: &Arc<HttpState>) -> Result<Caller, ApiError> {
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
        // Read before checking the password: a change racing with the check then invalidates the entry.
        let generation = service.auth.generation();
        if let Some(caller) = state.credentials.get(header, generation) {
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
            .map_err(|e| match e {
                AuthError::TooManyAttempts { lock_time } => {
                    service.metrics.auth_failures.fetch_add(1, Ordering::Relaxed);
                    rate_limited(lock_time)
                }
                _ => unauthorized(),
            })?;
        let caller = Caller { user, role };
        state.credentials.insert(header, &caller, generation);
        Ok(caller)
    }
}

/// Neo4j's answer to a log-on of a user locked after too many failures: 429, with the code drivers know.
fn rate_limited(lock_time: Duration) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "Neo.ClientError.Security.AuthenticationRateLimit",
        format!(
            "Too many failed authentication requests. Please wait {} seconds and try again.",
            lock_time.as_secs_f64().ceil() as u64
        ),
    )
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
