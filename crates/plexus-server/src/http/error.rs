//! Errors as HTTP responses: every failure, from a bad route to a failed query, answers with the Query API's
//! `{"errors": [{"code", "message"}]}` body and a status chosen from the Neo4j status code.

use axum::extract::rejection::BytesRejection;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::service::ServerError;

/// A failed request.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub error: ServerError,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, error: ServerError::new(code, message) }
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "Neo.ClientError.Statement.EntityNotFound", message)
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "Neo.ClientError.Request.Invalid", message)
    }
}

/// The HTTP status for a Neo4j status code.
pub fn status_for(code: &str) -> StatusCode {
    match code {
        "Neo.ClientError.Security.Unauthorized" => StatusCode::UNAUTHORIZED,
        "Neo.ClientError.Security.Forbidden" => StatusCode::FORBIDDEN,
        "Neo.ClientError.Security.AuthenticationRateLimit" => StatusCode::TOO_MANY_REQUESTS,
        "Neo.ClientError.Database.DatabaseNotFound"
        | "Neo.ClientError.Transaction.TransactionNotFound"
        | "Neo.ClientError.Statement.EntityNotFound" => StatusCode::NOT_FOUND,
        "Neo.ClientError.Schema.ConstraintValidationFailed" => StatusCode::CONFLICT,
        "Neo.ClientError.Request.TooLarge" => StatusCode::PAYLOAD_TOO_LARGE,
        // A write conflict: the client should retry, as with 409 elsewhere.
        c if c.starts_with("Neo.TransientError.Transaction.") => StatusCode::CONFLICT,
        c if c.starts_with("Neo.TransientError.") => StatusCode::SERVICE_UNAVAILABLE,
        c if c.starts_with("Neo.ClientError.") => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<ServerError> for ApiError {
    fn from(error: ServerError) -> ApiError {
        ApiError { status: status_for(error.code), error }
    }
}

impl From<BytesRejection> for ApiError {
    fn from(r: BytesRejection) -> ApiError {
        let status = r.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                status,
                "Neo.ClientError.Request.TooLarge",
                "the request body is larger than the server accepts",
            )
        } else {
            ApiError::new(
                status,
                "Neo.ClientError.Request.Invalid",
                format!("cannot read the request body: {}", r.body_text()),
            )
        }
    }
}

/// The error body, as JSON text.
pub fn error_body(error: &ServerError) -> String {
    json!({"errors": [{"code": error.code, "message": error.message}]}).to_string()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, error_body(&self.error)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"Plexus\""));
        }
        response
    }
}

/// Unknown paths.
pub async fn no_such_route() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "Neo.ClientError.Request.Invalid", "no such resource; see GET /openapi.json")
}

/// Known paths asked with a method they do not support.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "Neo.ClientError.Request.Invalid",
        "this resource does not support that method; see GET /openapi.json",
    )
}
