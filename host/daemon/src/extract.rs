//! The extractors of the API's routes: bodies (bounded in size and time), path parameters and
//! query strings, each refused with a `400`-family status and a message as `{"error": "…"}`
//! rather than axum's plain-text rejections.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;
use serde::de::DeserializeOwned;
use sluice_api::ErrorBody;

use crate::api::ApiError;

/// Largest request body accepted (a submission with its script and environment).
pub const MAX_BODY: usize = 16 << 20;

/// Time a client has to send a request's body once its head has arrived.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (
            status,
            axum::Json(ErrorBody {
                error: self.message,
            }),
        )
            .into_response()
    }
}

/// A request body as bytes, at most [`MAX_BODY`] of them.
pub struct Raw(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Raw {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let what = format!("{} {}", req.method(), req.uri().path());
        let read = tokio::time::timeout(BODY_READ_TIMEOUT, Bytes::from_request(req, state));
        let Ok(bytes) = read.await else {
            return Err(ApiError::timeout(format!(
                "{what}: the body did not arrive within {} s",
                BODY_READ_TIMEOUT.as_secs()
            )));
        };
        bytes.map(Raw).map_err(|e| match e {
            BytesRejection::FailedToBufferBody(_) => ApiError::too_large(format!(
                "{what}: body over the {MAX_BODY}-byte limit or cut short"
            )),
            other => ApiError::bad(format!("{what}: body: {}", other.body_text())),
        })
    }
}

/// A JSON body; an empty body is the type's default, so `curl -X POST` needs no `-d '{}'`.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let what = format!("{} {}", req.method(), req.uri().path());
        let Raw(bytes) = Raw::from_request(req, state).await?;
        parse(&what, &bytes).map(Body)
    }
}

/// A JSON body that must be there: an empty one is refused rather than read as the default
/// (an empty submission must not become a job).
pub struct Required<T>(pub T);

impl<T: DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for Required<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let what = format!("{} {}", req.method(), req.uri().path());
        let Raw(bytes) = Raw::from_request(req, state).await?;
        if bytes.is_empty() {
            return Err(ApiError::bad(format!(
                "{what}: the body is empty, expected a JSON object"
            )));
        }
        parse(&what, &bytes).map(Required)
    }
}

/// Path parameters; a malformed one (bad percent-encoding) is a `400` with a message.
pub struct Params<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(t)| Params(t))
            .map_err(|e| {
                ApiError::bad(format!(
                    "{} {}: {}",
                    parts.method,
                    parts.uri.path(),
                    e.body_text()
                ))
            })
    }
}

/// Refuses a query string that form decoding would only guess at: raw non-ASCII bytes, a `%`
/// not followed by two hex digits, escapes that do not decode to UTF-8.
pub fn check_query(query: &str) -> Result<(), String> {
    if query.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err(
            "raw spaces, control or non-ASCII characters; percent-encode them as UTF-8".into(),
        );
    }
    let b = query.as_bytes();
    if let Some(i) = (0..b.len()).find(|&i| {
        b[i] == b'%'
            && !(i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit())
    }) {
        return Err(format!(
            "bad percent-escape at byte {i}: '%' must be followed by two hex digits"
        ));
    }
    let spaced = query.replace('+', " ");
    percent_decode_str(&spaced)
        .decode_utf8()
        .map(|_| ())
        .map_err(|_| "percent-escapes that do not decode to UTF-8".into())
}

/// Parses a body already read (for routes whose body type depends on the path).
pub fn parse<T: DeserializeOwned + Default>(what: &str, body: &[u8]) -> Result<T, ApiError> {
    if body.is_empty() {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ApiError::bad(format!("{what}: body: {e}")))
}
