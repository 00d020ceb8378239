//! Who is calling: HTTP Basic credentials checked against the server's users on every request that needs them.
//! A password verified lately is answered on the event loop from `Auth`'s memory of it (the one Bolt log-ons
//! use); only a password to check with argon2 goes to a blocking thread. Any change to a user (here or by
//! `plexus user` in another process) applies at the next request.
//!
//! A connection remembers the header its last request proved: a keep-alive client sends the same one every
//! time, and while the users' generation stays the same (it moves with any change to a user, and with any failed
//! log-on, so lockouts are judged afresh) the header names the same caller. That skips decoding it and the keyed
//! hash of the password cache, which with the users' lock were a tenth of a point read's CPU over HTTP.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::StatusCode;
use base64::Engine as _;

use super::connection::{Activity, Proved};
use super::error::ApiError;
use super::HttpState;
use crate::auth::{AuthError, Role};
use crate::service::ServerError;

/// An authenticated client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub user: String,
    pub role: Role,
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
        let auth = &state.service.auth;
        let activity = parts.extensions.get::<Arc<Activity>>();
        let header = parts.headers.get(AUTHORIZATION).filter(|_| auth.enabled());
        // Read before the check, so that a change during it leaves the proof stale rather than wrongly fresh.
        let generation = header.map(|_| auth.generation());
        if let (Some(activity), Some(header), Some(generation)) = (activity, header, generation) {
            if let Some(caller) = activity.proved_caller(header, generation) {
                return Ok(caller);
            }
        }
        let caller = Self::authenticate(parts, state).await?;
        // The connection showed valid credentials: it may idle between requests for the idle timeout.
        if let Some(activity) = activity {
            activity.trust();
            if let (Some(header), Some(generation)) = (header, generation) {
                activity.prove(Proved { header: header.clone(), caller: caller.clone(), generation });
            }
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
        let Some((user, password)) = parse_basic(header) else {
            return Err(unauthorized());
        };
        let answer = match service.auth.authenticate_without_hashing("basic", &user, &password) {
            Some(answer) => answer,
            None => {
                let checker = service.clone();
                let name = user.clone();
                tokio::task::spawn_blocking(move || checker.auth.authenticate("basic", &name, &password))
                    .await
                    .map_err(|_| unauthorized())?
            }
        };
        let role = answer.map_err(|e| match e {
            AuthError::TooManyAttempts { lock_time } => {
                service.metrics.auth_failures.fetch_add(1, Ordering::Relaxed);
                rate_limited(lock_time)
            }
            _ => unauthorized(),
        })?;
        Ok(Caller { user, role })
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
