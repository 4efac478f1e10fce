//! Who is calling, as an axum extractor: the Unix socket's peer credentials, or on TCP the
//! holder of the bearer token (compared in constant time), who acts as the daemon's user.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use sluice_client::identity::Identity;
use subtle::ConstantTimeEq;

use crate::api::ApiError;

/// The door a connection came in by, put on each of its requests by the listener.
#[derive(Clone)]
pub enum Door {
    /// A Unix socket peer with this identity (from `SO_PEERCRED`).
    Socket(Identity),
    /// TCP: each request must carry this bearer token.
    Tcp(Arc<Token>),
}

/// A TCP bearer token. Its text never appears in a message or a log.
pub struct Token(String);

impl Token {
    /// A token; `None` when it is empty (an empty token would let anyone in).
    pub fn new(text: &str) -> Option<Self> {
        let t = text.trim();
        (!t.is_empty()).then(|| Self(t.to_string()))
    }

    fn admits(&self, header: Option<&[u8]>) -> bool {
        let given = header
            .and_then(|h| h.strip_prefix(b"Bearer "))
            .unwrap_or_default();
        // Lengths may differ: `ct_eq` on slices of different lengths is false without
        // comparing, and the token's length is not the secret.
        bool::from(given.ct_eq(self.0.as_bytes()))
    }
}

/// The caller of a request, or a `401` for a TCP request without the right token.
pub struct Caller(pub Identity);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        match parts.extensions.get::<Door>() {
            Some(Door::Socket(who)) => Ok(Caller(who.clone())),
            Some(Door::Tcp(token)) => {
                let header = parts.headers.get(AUTHORIZATION).map(|v| v.as_bytes());
                if token.admits(header) {
                    Ok(Caller(Identity::current()))
                } else {
                    Err(ApiError::unauthorized(format!(
                        "{} {}: missing or wrong bearer token (send `Authorization: Bearer TOKEN` with the token of `serve --token-file` or SLUICE_TOKEN)",
                        parts.method,
                        parts.uri.path()
                    )))
                }
            }
            None => Err(ApiError::internal(
                "the listener did not say which door the request came in by",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_bearer_token_is_admitted() {
        let t = Token::new("s3cret\n").unwrap();
        assert!(t.admits(Some(b"Bearer s3cret")));
        assert!(!t.admits(Some(b"Bearer s3cre")));
        assert!(!t.admits(Some(b"Bearer s3cret2")));
        assert!(!t.admits(Some(b"s3cret")));
        assert!(!t.admits(None));
        assert!(Token::new(" \n").is_none());
    }
}
