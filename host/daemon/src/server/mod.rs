//! The listeners: the Unix socket (identity from peer credentials) and an optional TCP address
//! (a bearer token; its holder acts as the daemon's user). Each accepted connection is admitted
//! by its door's [`Doorkeeper`] and served by hyper with the API's router, within bounds a hostile
//! client cannot stretch: connections per door and per user (admins apart, never locked out),
//! requests of one user answered at once, a short wait for a first request's head and a longer
//! one that closes idle keep-alive connections, a bound on the request head, and accept errors
//! (descriptors run out) backed off instead of spun on.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::OwnedSemaphorePermit;
use tower::ServiceExt;

use crate::caller::{Door, Token};
use sluice_client::identity::Identity;

mod doorkeeper;

pub use doorkeeper::Quotas;
use doorkeeper::{Answer, Class, Doorkeeper, Ticket, Working};

/// Connections open at once through each door by users who are not admins, and again by
/// admins; beyond it, an idle connection of whoever holds the most is closed to make room.
/// Each door has its own, so clients on TCP, who may hold connections before showing a token,
/// cannot take the local users' socket away.
pub const MAX_CONNECTIONS: usize = 256;

/// Time a client has to send a request's head, counted from the previous answer, so an idle
/// keep-alive connection is closed after it too: the API's, which the client plans by.
pub const HEADER_READ_TIMEOUT: Duration = sluice_api::HEADER_READ_TIMEOUT;

/// Time a new connection has to send its first request's head: a client sends it at once, so
/// a connection that is silent or sends it a byte at a time is closed after this.
pub const FIRST_HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest a connection waits for a slot while its user's (or the door's) slots are all busy
/// answering; then it is refused with `503`.
pub const SLOT_WAIT: Duration = Duration::from_secs(10);

/// Largest request head (request line and headers) read; a longer one is refused with `431`.
pub const MAX_HEAD: usize = 64 << 10;

/// Connections waiting for a slot at once, per door and class (users, admins); more are refused.
const MAX_WAITING: usize = MAX_CONNECTIONS / 2;

/// How long a connection has been idle before it may be closed to make room: a keep-alive
/// client between two quick requests keeps its connection.
const MIN_IDLE: Duration = Duration::from_millis(250);

/// Longest a refused connection is given to take its answer and close.
const REFUSAL_GRACE: Duration = Duration::from_millis(200);

/// Longest pause after an `accept()` error (out of descriptors, out of memory).
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// What both listeners share: the router and the quotas.
#[derive(Clone)]
pub struct Server {
    router: Router,
    quotas: Quotas,
}

impl Server {
    /// A server of `router` holding users to `quotas`.
    pub fn new(router: Router, quotas: Quotas) -> Self {
        Self { router, quotas }
    }

    /// Accepts connections on the Unix socket until the runtime stops. Each peer's uid sets its
    /// class: admins share one set of slots, every other user holds at most its quota of the
    /// other set and has at most its quota of requests answered at once.
    pub async fn serve_unix(self, listener: UnixListener) {
        let door = Doorkeeper::new(self.quotas.clone());
        accept_each(listener, "unix socket", |stream| {
            let (router, quotas, door) = (self.router.clone(), self.quotas.clone(), door.clone());
            tokio::spawn(async move {
                let uid = match stream.peer_cred() {
                    Ok(c) => c.uid(),
                    Err(e) => {
                        tracing::warn!(
                            "peer credentials unavailable, refusing the connection: {e}"
                        );
                        return;
                    }
                };
                let class = if quotas.is_admin(uid) {
                    Class::Admin
                } else {
                    Class::User
                };
                match door.enter(uid, class).await {
                    Ok(ticket) => {
                        // The password database lookup runs here, not in the accept loop.
                        let caller = Door::Socket(Identity::of_uid(uid));
                        connection(stream, caller, router, ticket).await;
                    }
                    Err(why) => refuse(stream, &why).await,
                }
            });
        })
        .await
    }

    /// Accepts connections on a TCP address until the runtime stops. Every request through it
    /// is the token holder's, the daemon's user: its connections share the door's admin slots
    /// and no request quota.
    pub async fn serve_tcp(self, listener: TcpListener, token: Token) {
        let token = Arc::new(token);
        let door = Doorkeeper::new(self.quotas.clone());
        // SAFETY: plain system call.
        let holder = unsafe { libc::geteuid() };
        accept_each(listener, "tcp", |stream| {
            stream.set_nodelay(true).ok();
            let caller = Door::Tcp(token.clone());
            let (router, door) = (self.router.clone(), door.clone());
            tokio::spawn(async move {
                match door.enter(holder, Class::Admin).await {
                    Ok(ticket) => connection(stream, caller, router, ticket).await,
                    Err(why) => refuse(stream, &why).await,
                }
            });
        })
        .await
    }
}

/// A listener of one door.
trait Accept {
    /// A connection's stream.
    type Stream;
    /// The next connection.
    async fn accept_stream(&self) -> std::io::Result<Self::Stream>;
}

impl Accept for UnixListener {
    type Stream = tokio::net::UnixStream;
    async fn accept_stream(&self) -> std::io::Result<Self::Stream> {
        self.accept().await.map(|(stream, _)| stream)
    }
}

impl Accept for TcpListener {
    type Stream = tokio::net::TcpStream;
    async fn accept_stream(&self) -> std::io::Result<Self::Stream> {
        self.accept().await.map(|(stream, _)| stream)
    }
}

/// Hands every connection of `listener` to `serve`, backing off after accept errors; runs until
/// the runtime stops. Accepting never waits for a slot: a connection must be accepted for its
/// user to be known, and one the door cannot take is refused at once.
async fn accept_each<L: Accept>(listener: L, door: &str, mut serve: impl FnMut(L::Stream)) {
    let mut backoff = Backoff::default();
    loop {
        match listener.accept_stream().await {
            Ok(stream) => {
                backoff.reset();
                serve(stream);
            }
            Err(e) => backoff.pause(door, &e).await,
        }
    }
}

/// Serves one connection's requests, each marked with the door it came in by and, for a user
/// held to a request quota, answered in its turn; until the client closes, a timeout, or the
/// door gives its slot to another connection.
async fn connection<S>(stream: S, door: Door, router: Router, ticket: Ticket)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let conn = ticket.conn.clone();
    let turns = ticket.requests.clone();
    let served_conn = conn.clone();
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(door.clone());
        let working = Working::start(&served_conn);
        let (router, turns) = (router.clone(), turns.clone());
        async move {
            let _turn: Option<OwnedSemaphorePermit> = match turns {
                // The semaphore is never closed, so acquiring only waits.
                Some(t) => t.acquire_owned().await.ok(),
                None => None,
            };
            let answer = router.oneshot(req).await?;
            Ok::<_, std::convert::Infallible>(answer.map(|body| {
                Body::new(Answer {
                    body,
                    _working: working,
                })
            }))
        }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_HEAD)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(served);
    let silent = async {
        tokio::time::sleep(FIRST_HEAD_TIMEOUT).await;
        if conn.received.load(Ordering::Relaxed) > 0 {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = served.as_mut() => {
            if let Err(e) = result {
                tracing::debug!("connection closed: {e}");
            }
        }
        _ = conn.close.notified() => {
            // Chosen idle; a request that arrived since is answered first.
            if conn.busy.load(Ordering::Acquire) > 0 {
                served.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(HEADER_READ_TIMEOUT, served).await;
            }
        }
        _ = silent => tracing::debug!("connection closed: no request within {} s", FIRST_HEAD_TIMEOUT.as_secs()),
    }
    drop(ticket);
}

/// Tells a connection the door cannot take why (`503` with `Retry-After`, which clients take
/// to mean the request was not read and may be sent again), then closes it. What the client sent
/// meanwhile is read first, briefly, since closing a socket with unread data resets it and the
/// client would see that instead of the answer.
async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, why: &str) {
    let body = serde_json::json!({ "error": why }).to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\nretry-after: 1\r\n\r\n{body}",
        body.len()
    );
    // Never long on a client that neither reads nor closes.
    let _ = tokio::time::timeout(REFUSAL_GRACE, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        std::io::Result::Ok(())
    })
    .await;
}

/// Pauses after accept errors, doubling up to [`MAX_ACCEPT_BACKOFF`]; they mean descriptors or
/// memory ran out, and retrying at once would spin the CPU until a connection closes.
#[derive(Default)]
struct Backoff {
    pause: Option<Duration>,
}

impl Backoff {
    async fn pause(&mut self, door: &str, e: &std::io::Error) {
        let next = self.pause.map_or(Duration::from_millis(5), |p| {
            (p * 2).min(MAX_ACCEPT_BACKOFF)
        });
        tracing::warn!(
            "{door}: accept failed ({e}); retrying in {} ms",
            next.as_millis()
        );
        self.pause = Some(next);
        tokio::time::sleep(next).await;
    }

    fn reset(&mut self) {
        self.pause = None;
    }
}
