//! A request's parameters and an API error: what every handler of `/api/*` shares.

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::Query;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::docs::{to_bytes, ErrorDoc};
use super::Inspector;

/// An API error: a status and `{"error": "one line"}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    /// The request lacks this run's token: 403.
    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
        }
    }

    /// The capture is still loading: 503.
    pub(crate) fn unavailable(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.into(),
        }
    }

    /// The server could not answer (the capture's file changed under it): 500.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = to_bytes(&ErrorDoc {
            error: &self.message,
        });
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response()
    }
}

pub(crate) fn json_bytes(body: impl Into<Bytes>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body.into()).into_response()
}

pub(crate) type Params = Result<Query<Vec<(String, String)>>, QueryRejection>;

/// The query's parameters, or a 400 when the query string does not parse or names a
/// parameter twice (which of two values was meant is not for the server to guess).
pub(crate) fn params(query: Params) -> Result<Vec<(String, String)>, ApiError> {
    let p = match query {
        Ok(Query(p)) => p,
        Err(e) => return Err(ApiError::bad(format!("bad query string: {e}"))),
    };
    // A set, not a scan of the names before each: a 64 KiB query holds thousands.
    let mut seen = std::collections::HashSet::with_capacity(p.len());
    for (name, _) in &p {
        if !seen.insert(name.as_str()) {
            return Err(ApiError::bad(format!(
                "parameter {name} given twice: give each parameter once"
            )));
        }
    }
    Ok(p)
}

pub(crate) fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A whole number written in decimal digits only: no sign (`+5` is refused, as `-5` is),
/// no blanks; `None` otherwise, or when it does not fit.
pub(crate) fn whole_number(text: &str) -> Option<usize> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<usize>().ok()
}

/// A row parameter: missing or not a number is 400; a number is returned as is (the
/// caller decides whether the row exists, 404).
pub(crate) fn row_param(
    params: &[(String, String)],
    name: &str,
) -> Result<Option<usize>, ApiError> {
    match param(params, name) {
        None => Ok(None),
        Some(text) => whole_number(text).map(Some).ok_or_else(|| {
            ApiError::bad(format!(
                "{name}={text:?} is not a row (a whole number from 0, in digits only)"
            ))
        }),
    }
}

pub(super) fn required_row(params: &[(String, String)], name: &str) -> Result<usize, ApiError> {
    row_param(params, name)?.ok_or_else(|| ApiError::bad(format!("missing parameter {name}")))
}

pub(super) fn no_such_row(inspector: &Inspector, row: usize) -> ApiError {
    ApiError::not_found(format!(
        "no frame at row {row}: the capture has {} frames (rows 0..{})",
        inspector.capture.frame_count(),
        inspector.capture.frame_count()
    ))
}
