//! The listeners: the Unix socket (identity from peer credentials) and an optional TCP address
//! (a bearer token; its holder acts as the daemon's user). Each connection is a tokio task that
//! parses requests and hands them to the driver.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::oneshot;

use crate::api::{self, ApiError};
use crate::driver::Msg;
use crate::http;
use crate::identity::Identity;

/// How a connection authenticates.
#[derive(Clone)]
enum Auth {
    /// A Unix socket peer with this identity.
    Peer(Identity),
    /// TCP: requests must carry this bearer token.
    Token(Arc<String>),
}

/// Accepts connections on the Unix socket until the runtime stops.
pub async fn serve_unix(listener: UnixListener, tx: Sender<Msg>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let who = match stream.peer_cred() {
            Ok(c) => Identity::of_uid(c.uid()),
            Err(e) => {
                tracing::warn!("peer credentials unavailable, refusing the connection: {e}");
                continue;
            }
        };
        let tx = tx.clone();
        tokio::spawn(async move {
            let (r, w) = stream.into_split();
            connection(r, w, Auth::Peer(who), tx).await;
        });
    }
}

/// Accepts connections on a TCP address until the runtime stops.
pub async fn serve_tcp(listener: TcpListener, token: String, tx: Sender<Msg>) {
    let token = Arc::new(token);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        stream.set_nodelay(true).ok();
        let (tx, token) = (tx.clone(), token.clone());
        tokio::spawn(async move {
            let (r, w) = stream.into_split();
            connection(r, w, Auth::Token(token), tx).await;
        });
    }
}

async fn connection<R, W>(r: R, mut w: W, auth: Auth, tx: Sender<Msg>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut r = BufReader::new(r);
    loop {
        let req = match http::read_request(&mut r).await {
            Ok(Some(req)) => req,
            Ok(None) => return,
            Err(e) => {
                let body = json!({ "error": format!("bad request: {e}") }).to_string();
                let _ = http::write_response(&mut w, 400, body.as_bytes(), true).await;
                return;
            }
        };
        let close = req.wants_close();
        let (status, body) = match answer(&req, &auth, &tx).await {
            Ok(v) => (200, v.to_string()),
            Err(e) => (e.status, json!({ "error": e.message }).to_string()),
        };
        if http::write_response(&mut w, status, body.as_bytes(), close)
            .await
            .is_err()
            || close
        {
            return;
        }
    }
}

async fn answer(
    req: &http::Request,
    auth: &Auth,
    tx: &Sender<Msg>,
) -> Result<serde_json::Value, ApiError> {
    let who = match auth {
        Auth::Peer(who) => who.clone(),
        Auth::Token(token) => {
            let given = req
                .headers
                .get("authorization")
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or("");
            if !constant_time_eq(given.as_bytes(), token.as_bytes()) {
                return Err(ApiError {
                    status: 401,
                    message: format!(
                        "{} {}: missing or wrong bearer token (send `Authorization: Bearer <token given to serve --token>`)",
                        req.method, req.path
                    ),
                });
            }
            Identity::current()
        }
    };
    let request = api::route(req)?;
    let (reply, rx) = oneshot::channel();
    tx.send(Msg::Api {
        who,
        req: request,
        reply,
    })
    .map_err(|_| ApiError {
        status: 503,
        message: "the daemon is shutting down".into(),
    })?;
    rx.await.map_err(|_| ApiError {
        status: 503,
        message: "the daemon stopped before answering".into(),
    })?
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
