//! The listeners: the Unix socket (identity from peer credentials) and an optional TCP address
//! (a bearer token; its holder acts as the daemon's user). Each accepted connection is served by
//! hyper with the API's router, within bounds a hostile client cannot stretch: a cap on open
//! connections, a header read timeout that also closes idle keep-alive connections, a bound on
//! the request head, and accept errors (descriptors run out) backed off instead of spun on.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

use crate::caller::{Door, Token};
use crate::identity::Identity;

/// Connections open at once through each door; more wait in the kernel's backlog until one
/// closes. Each door has its own, so clients on TCP, who may hold connections before showing a
/// token, cannot take the local users' socket away.
pub const MAX_CONNECTIONS: usize = 256;

/// Time a client has to send a request's head, counted from the connection's start or from the
/// previous answer, so an idle keep-alive connection is closed after it too.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest request head (request line and headers) read; a longer one is refused with `431`.
pub const MAX_HEAD: usize = 64 << 10;

/// Longest pause after an `accept()` error (out of descriptors, out of memory).
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// What both listeners share: the router.
#[derive(Clone)]
pub struct Server {
    router: Router,
}

impl Server {
    /// A server of `router` with at most [`MAX_CONNECTIONS`] connections open through each door.
    pub fn new(router: Router) -> Self {
        Self { router }
    }

    /// Accepts connections on the Unix socket until the runtime stops.
    pub async fn serve_unix(self, listener: UnixListener) {
        accept_each(listener, "unix socket", |stream, slot| {
            let router = self.router.clone();
            tokio::spawn(async move {
                // The password database lookup runs here, not in the accept loop.
                let door = match stream.peer_cred() {
                    Ok(c) => Door::Socket(Identity::of_uid(c.uid())),
                    Err(e) => {
                        tracing::warn!(
                            "peer credentials unavailable, refusing the connection: {e}"
                        );
                        return;
                    }
                };
                connection(stream, door, router, slot).await;
            });
        })
        .await
    }

    /// Accepts connections on a TCP address until the runtime stops.
    pub async fn serve_tcp(self, listener: TcpListener, token: Token) {
        let token = Arc::new(token);
        accept_each(listener, "tcp", |stream, slot| {
            stream.set_nodelay(true).ok();
            let door = Door::Tcp(token.clone());
            tokio::spawn(connection(stream, door, self.router.clone(), slot));
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

/// Hands every connection of `listener` to `serve` with its slot, at most [`MAX_CONNECTIONS`]
/// open at once, backing off after accept errors; runs until the runtime stops.
async fn accept_each<L: Accept>(
    listener: L,
    door: &str,
    mut serve: impl FnMut(L::Stream, OwnedSemaphorePermit),
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = Backoff::default();
    loop {
        let slot = slot(&slots).await;
        match listener.accept_stream().await {
            Ok(stream) => {
                backoff.reset();
                serve(stream, slot);
            }
            Err(e) => backoff.pause(door, &e).await,
        }
    }
}

/// A connection slot of a door, once one is free.
async fn slot(slots: &Arc<Semaphore>) -> OwnedSemaphorePermit {
    // The semaphore is never closed, so acquiring only waits.
    loop {
        if let Ok(p) = slots.clone().acquire_owned().await {
            return p;
        }
    }
}

/// Serves one connection's requests, each marked with the door it came in by.
async fn connection<S>(stream: S, door: Door, router: Router, _slot: OwnedSemaphorePermit)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(door.clone());
        router.clone().oneshot(req)
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_HEAD)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    if let Err(e) = served {
        tracing::debug!("connection closed: {e}");
    }
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
