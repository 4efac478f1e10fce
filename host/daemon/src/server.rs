//! The listeners: the Unix socket (identity from peer credentials) and an optional TCP address
//! (a bearer token; its holder acts as the daemon's user). Each accepted connection is admitted
//! by its door's [`Doorkeeper`] and served by hyper with the API's router, within bounds a hostile
//! client cannot stretch: connections per door and per user (admins apart, never locked out),
//! requests of one user answered at once, a short wait for a first request's head and a longer
//! one that closes idle keep-alive connections, a bound on the request head, and accept errors
//! (descriptors run out) backed off instead of spun on.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

use crate::caller::{Door, Token};
use crate::config::DaemonConfig;
use crate::identity::Identity;

/// Connections open at once through each door by users who are not admins, and again by
/// admins; beyond it, an idle connection of whoever holds the most is closed to make room.
/// Each door has its own, so clients on TCP, who may hold connections before showing a token,
/// cannot take the local users' socket away.
pub const MAX_CONNECTIONS: usize = 256;

/// Time a client has to send a request's head, counted from the previous answer, so an idle
/// keep-alive connection is closed after it too.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

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

/// daemon.toml's per-user quotas and who is exempt from them (root, the daemon's user and
/// `admins`), shared by the listeners and the driver, which replaces them whenever it loads the
/// file. Admins' names are resolved to uids here, so admitting a connection needs no lookup.
#[derive(Clone)]
pub struct Quotas(Arc<RwLock<QuotaRules>>);

struct QuotaRules {
    connections_per_user: usize,
    requests_per_user: usize,
    admins: HashSet<u32>,
}

impl Quotas {
    /// The quotas of `cfg`.
    pub fn new(cfg: &DaemonConfig) -> Self {
        Self(Arc::new(RwLock::new(QuotaRules::of(cfg))))
    }

    /// Puts `cfg`'s quotas and admins in effect for connections admitted from now on.
    pub fn apply(&self, cfg: &DaemonConfig) {
        let rules = QuotaRules::of(cfg);
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = rules;
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, QuotaRules> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `uid` is exempt from the per-user quotas.
    fn is_admin(&self, uid: u32) -> bool {
        self.read().admins.contains(&uid)
    }
}

impl Default for Quotas {
    fn default() -> Self {
        Self::new(&DaemonConfig::default())
    }
}

impl QuotaRules {
    fn of(cfg: &DaemonConfig) -> Self {
        // SAFETY: plain system call.
        let mut admins: HashSet<u32> = [0, unsafe { libc::geteuid() }].into();
        admins.extend(cfg.admins.iter().filter_map(|name| {
            crate::identity::uid_of(name).or_else(|| {
                // The driver knows a uid without a password entry by its digits.
                name.parse()
                    .ok()
                    .filter(|&uid| crate::identity::user_name(uid).is_none())
            })
        }));
        Self {
            connections_per_user: cfg.max_connections_per_user.max(1),
            requests_per_user: cfg.max_requests_per_user.max(1),
            admins,
        }
    }
}

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

/// Who holds a door's slots: admins and other users apart, each of the other users within its
/// quota. A connection past a quota takes the place of an idle connection (its user's own, or,
/// when the class is full, one of the user holding the most), else waits for a slot within
/// [`SLOT_WAIT`], else is refused.
struct Doorkeeper {
    classes: Mutex<[Slots; 2]>,
    quotas: Quotas,
    /// Woken whenever a connection ends.
    freed: Notify,
}

/// The two kinds of holders a door keeps apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A user who is not an admin: held to the per-user quotas.
    User = 0,
    /// Root, the daemon's user, `admins`, and the TCP token holder.
    Admin = 1,
}

/// One class's slots of a door.
#[derive(Default)]
struct Slots {
    holders: HashMap<u32, Holder>,
    /// Connections waiting for a slot.
    waiting: usize,
}

/// What one uid holds in a class.
struct Holder {
    conns: Vec<Arc<Conn>>,
    waiting: usize,
    /// Its turns at being answered; `None` for admins, who wait for none.
    requests: Option<Arc<Semaphore>>,
}

/// An admitted connection as its door sees it.
struct Conn {
    /// Requests in service, counted until their answer is written.
    busy: AtomicUsize,
    /// Requests received.
    received: AtomicU64,
    /// When it was admitted or last finished an answer.
    idle_since: Mutex<Instant>,
    /// Set, under the door's lock, when its slot was given to another connection.
    evicted: AtomicBool,
    /// Tells its task to close it.
    close: Notify,
}

impl Conn {
    fn new() -> Self {
        Self {
            busy: AtomicUsize::new(0),
            received: AtomicU64::new(0),
            idle_since: Mutex::new(Instant::now()),
            evicted: AtomicBool::new(false),
            close: Notify::new(),
        }
    }

    /// Since when it has had nothing to answer, if it has nothing.
    fn idle_since(&self) -> Option<Instant> {
        (self.busy.load(Ordering::Acquire) == 0)
            .then(|| *self.idle_since.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn live(&self) -> bool {
        !self.evicted.load(Ordering::Relaxed)
    }
}

/// What a connection's admission attempt came to.
enum Admission {
    In(Arc<Conn>, Option<Arc<Semaphore>>),
    Queued,
    Refused(String),
}

impl Doorkeeper {
    fn new(quotas: Quotas) -> Arc<Self> {
        Arc::new(Self {
            classes: Mutex::new(Default::default()),
            quotas,
            freed: Notify::new(),
        })
    }

    fn classes(&self) -> std::sync::MutexGuard<'_, [Slots; 2]> {
        self.classes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a connection of `uid`, or why there is none.
    async fn enter(self: &Arc<Self>, uid: u32, class: Class) -> Result<Ticket, String> {
        let deadline = tokio::time::Instant::now() + SLOT_WAIT;
        let mut queued = false;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let admission = {
                let rules = self.quotas.read();
                let (per_user, requests) = match class {
                    Class::User => (rules.connections_per_user, Some(rules.requests_per_user)),
                    Class::Admin => (MAX_CONNECTIONS, None),
                };
                drop(rules);
                let mut classes = self.classes();
                let slots = &mut classes[class as usize];
                if queued {
                    slots.unqueue(uid);
                }
                slots.admit(uid, per_user, requests)
            };
            match admission {
                Admission::In(conn, requests) => {
                    return Ok(Ticket {
                        door: self.clone(),
                        class,
                        uid,
                        conn,
                        requests,
                    });
                }
                Admission::Refused(why) => return Err(why),
                Admission::Queued => queued = true,
            }
            // Woken when a connection ends, or to look again for one that has become idle.
            let wake = tokio::time::Instant::now() + MIN_IDLE;
            if tokio::time::timeout_at(wake.min(deadline), freed)
                .await
                .is_err()
                && tokio::time::Instant::now() >= deadline
            {
                self.classes()[class as usize].unqueue(uid);
                return Err(format!(
                    "no connection slot within {} s: uid {uid}'s connections{} are all busy answering",
                    SLOT_WAIT.as_secs(),
                    if class == Class::User {
                        " (or the door's)"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
}

impl Slots {
    /// Admits a connection of `uid`, making room by closing an idle one if it must; else queues
    /// it, or refuses it when too many already wait.
    fn admit(&mut self, uid: u32, per_user: usize, requests: Option<usize>) -> Admission {
        let held = self.holders.get(&uid).map_or(0, Holder::live);
        let room = if held >= per_user {
            self.evict_idle_of(uid)
        } else if self.live() >= MAX_CONNECTIONS {
            self.evict_idle_of_largest()
        } else {
            true
        };
        let holder = self.holders.entry(uid).or_insert_with(|| Holder {
            conns: Vec::new(),
            waiting: 0,
            requests: requests.map(|n| Arc::new(Semaphore::new(n))),
        });
        if room {
            let conn = Arc::new(Conn::new());
            holder.conns.push(conn.clone());
            return Admission::In(conn, holder.requests.clone());
        }
        if holder.waiting >= per_user || self.waiting >= MAX_WAITING {
            let why = if held >= per_user {
                format!(
                    "uid {uid} holds {held} connections, the most one user may (max_connections_per_user), all busy answering"
                )
            } else {
                format!("all {MAX_CONNECTIONS} connections are busy answering")
            };
            self.forget_if_empty(uid);
            return Admission::Refused(why);
        }
        holder.waiting += 1;
        self.waiting += 1;
        Admission::Queued
    }

    fn unqueue(&mut self, uid: u32) {
        if let Some(h) = self.holders.get_mut(&uid) {
            h.waiting = h.waiting.saturating_sub(1);
        }
        self.waiting = self.waiting.saturating_sub(1);
        self.forget_if_empty(uid);
    }

    fn live(&self) -> usize {
        self.holders.values().map(Holder::live).sum()
    }

    /// Closes `uid`'s connection idle the longest, if one has been idle long enough.
    fn evict_idle_of(&mut self, uid: u32) -> bool {
        let Some(holder) = self.holders.get(&uid) else {
            return false;
        };
        let oldest = holder
            .conns
            .iter()
            .filter(|c| c.live())
            .filter_map(|c| Some((c.idle_since()?, c)))
            .filter(|(since, _)| since.elapsed() >= MIN_IDLE)
            .min_by_key(|(since, _)| *since);
        match oldest {
            Some((_, conn)) => {
                conn.evicted.store(true, Ordering::Relaxed);
                conn.close.notify_one();
                true
            }
            None => false,
        }
    }

    /// Closes an idle connection of the holder with the most connections that has one.
    fn evict_idle_of_largest(&mut self) -> bool {
        let mut by_size: Vec<(usize, u32)> = self
            .holders
            .iter()
            .map(|(&uid, h)| (h.live(), uid))
            .collect();
        by_size.sort_unstable_by(|a, b| b.cmp(a));
        by_size.into_iter().any(|(_, uid)| self.evict_idle_of(uid))
    }

    /// Drops `uid`'s entry once it holds and awaits nothing, so the map stays as small as the
    /// set of connected users.
    fn forget_if_empty(&mut self, uid: u32) {
        if self
            .holders
            .get(&uid)
            .is_some_and(|h| h.conns.is_empty() && h.waiting == 0)
        {
            self.holders.remove(&uid);
        }
    }
}

impl Holder {
    fn live(&self) -> usize {
        self.conns.iter().filter(|c| c.live()).count()
    }
}

/// An admitted connection's slot, given back when it drops.
struct Ticket {
    door: Arc<Doorkeeper>,
    class: Class,
    uid: u32,
    conn: Arc<Conn>,
    requests: Option<Arc<Semaphore>>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut classes = self.door.classes();
        let slots = &mut classes[self.class as usize];
        if let Some(h) = slots.holders.get_mut(&self.uid) {
            h.conns.retain(|c| !Arc::ptr_eq(c, &self.conn));
        }
        slots.forget_if_empty(self.uid);
        drop(classes);
        self.door.freed.notify_waiters();
    }
}

/// A request in service on a connection: from its head's arrival until its answer's body is
/// written (or abandoned), so a connection writing an answer is never taken for idle.
struct Working(Arc<Conn>);

impl Working {
    fn start(conn: &Arc<Conn>) -> Self {
        conn.busy.fetch_add(1, Ordering::AcqRel);
        conn.received.fetch_add(1, Ordering::Relaxed);
        Self(conn.clone())
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        *self.0.idle_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that keeps its request counted as in service until it is written.
struct Answer {
    body: Body,
    _working: Working,
}

impl hyper::body::Body for Answer {
    type Data = hyper::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
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
