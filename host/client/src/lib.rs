//! What a client of the daemon needs and nothing of the daemon itself: a blocking client of
//! its API for the CLI and the tests (one keep-alive hyper connection over the Unix socket, or
//! TCP with a bearer token; typed requests and answers), where the daemon is, who the caller is
//! ([`identity`]) and the limits a submitter's jobs inherit ([`limits`]).

pub mod error;
pub mod identity;
pub mod limits;

pub use error::{ClientError, Untrusted};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, RETRY_AFTER};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sluice_api::{ErrorBody, JobQuery};

/// Root's state directory when none is given.
pub const SYSTEM_DIR: &str = "/var/lib/sluice";

/// The state directory when neither `--state-dir` nor `SLUICE_STATE_DIR` names one: root's is
/// [`SYSTEM_DIR`]; a user's `$XDG_STATE_HOME/sluice`, else `$HOME/.local/state/sluice`, else
/// `/tmp/sluice-$UID` (refused at start-up if someone else created it first).
pub fn default_dir() -> PathBuf {
    let uid = rustix::process::geteuid().as_raw();
    if uid == 0 {
        return PathBuf::from(SYSTEM_DIR);
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("XDG_STATE_HOME").filter(|d| d.is_absolute()) {
        return d.join("sluice");
    }
    if let Some(h) = env("HOME").filter(|d| d.is_absolute()) {
        return h.join(".local/state/sluice");
    }
    PathBuf::from(format!("/tmp/sluice-{uid}"))
}

/// Largest answer read (every job of a large queue).
const MAX_ANSWER: usize = 256 << 20;

/// How long a request is tried again while the daemon's door turns its connection away.
const DOOR_RETRY: Duration = Duration::from_secs(30);

/// Why an exchange got no answer.
enum Failure {
    /// The request failed or was refused.
    Error(ClientError),
    /// The door refused the connection before reading the request, which may be sent again.
    TurnedAway(ClientError),
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        Self::Error(e)
    }
}

/// Where a client finds the daemon when neither `--state-dir` nor `SLUICE_STATE_DIR` says: the
/// caller's own daemon ([`default_dir`]) if its socket is there, else the
/// site's daemon run by root ([`SYSTEM_DIR`]) if its socket is there, else the
/// caller's own (so the error names where a daemon of theirs would be).
pub fn default_state_dir() -> PathBuf {
    let own = default_dir();
    let system = PathBuf::from(SYSTEM_DIR);
    if !socket_path(&own).exists() && socket_path(&system).exists() {
        return system;
    }
    own
}

/// The socket inside a state directory.
pub fn socket_path(dir: &Path) -> PathBuf {
    dir.join("sluice.sock")
}

/// The socket of the daemon whose state directory is `dir`, once it is known to be a daemon's
/// the caller may trust: the socket and every directory above it are root's or the caller's, and
/// no other user may write to the socket's directory (nor to those above it, unless sticky, as
/// `/tmp`). A socket another user planted, say in `/tmp/sluice-$UID` for a client without
/// HOME, would otherwise be sent the caller's job scripts and environment. Returns the socket's
/// canonical path, which is what is then connected to.
pub fn trusted_socket(dir: &Path) -> Result<PathBuf, ClientError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let canonical = std::fs::canonicalize(dir).map_err(|source| ClientError::Connect {
        socket: socket_path(dir),
        dir: dir.to_path_buf(),
        source,
    })?;
    let me = rustix::process::geteuid().as_raw();
    let untrusted = |path: &Path, found: String, expected: String| {
        ClientError::Untrusted(Untrusted {
            path: path.to_path_buf(),
            found,
            expected,
        })
    };
    let owner = |uid: u32| match identity::user_name(uid) {
        Some(name) => format!("owned by {name} (uid {uid})"),
        None => format!("owned by uid {uid}"),
    };
    let trusted = format!("root or you (uid {me})");
    let socket = canonical.join("sluice.sock");
    match std::fs::symlink_metadata(&socket) {
        Ok(m) if !m.file_type().is_socket() => {
            return Err(untrusted(
                &socket,
                "not a socket".into(),
                format!("the daemon's socket, owned by {trusted}"),
            ));
        }
        Ok(m) if m.uid() != 0 && m.uid() != me => {
            return Err(untrusted(
                &socket,
                owner(m.uid()),
                format!(
                    "a socket owned by {trusted}; another user may have put it there to capture your requests"
                ),
            ));
        }
        _ => {}
    }
    for (depth, above) in canonical.ancestors().enumerate() {
        let Ok(m) = std::fs::symlink_metadata(above) else {
            continue;
        };
        let expected = || {
            format!(
                "a directory owned by {trusted} that no other user may write to{}",
                if depth == 0 { "" } else { " unless sticky" }
            )
        };
        if m.uid() != 0 && m.uid() != me {
            return Err(untrusted(above, owner(m.uid()), expected()));
        }
        let mode = m.mode() & 0o7777;
        let sticky = depth > 0 && mode & 0o1000 != 0;
        if mode & 0o022 != 0 && !sticky {
            return Err(untrusted(
                above,
                format!("mode {mode:o}: writable by group or others"),
                expected(),
            ));
        }
    }
    Ok(socket)
}

/// The path of `GET /v1/jobs` with squeue's filters as its query.
pub fn jobs_path(query: &JobQuery) -> String {
    match serde_urlencoded::to_string(query) {
        Ok(q) if !q.is_empty() => format!("/v1/jobs?{q}"),
        _ => "/v1/jobs".to_string(),
    }
}

/// A name (node hostlist, reservation, plugin kind) as one path segment: `node[01-02]` and
/// names with `/` or spaces reach the daemon intact.
pub fn segment(name: &str) -> String {
    const KEEP: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b',');
    utf8_percent_encode(name, KEEP).to_string()
}

/// Where and how to reach the daemon.
#[derive(Clone, Debug)]
pub enum Target {
    /// The Unix socket of a state directory.
    Dir(PathBuf),
    /// A TCP address with its bearer token.
    Tcp {
        /// `host:port`.
        addr: String,
        /// The token the daemon was started with (`serve --token-file` or `SLUICE_TOKEN`).
        token: String,
    },
}

/// A connection to the daemon.
pub struct Client {
    target: Target,
    runtime: Option<tokio::runtime::Runtime>,
    sender: Option<SendRequest<Full<Bytes>>>,
    last_answer: Option<Instant>,
    timeout: Option<Duration>,
}

impl Client {
    /// A client of the daemon whose state directory is `dir`.
    pub fn new(dir: &Path) -> Self {
        Self::to(Target::Dir(dir.to_path_buf()))
    }

    /// A client of `target`.
    pub fn to(target: Target) -> Self {
        Self {
            target,
            runtime: None,
            sender: None,
            last_answer: None,
            timeout: None,
        }
    }

    /// Gives up on an answer after `t` (default: wait as long as it takes).
    pub fn with_timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// `GET path`, its answer read as `T`.
    pub fn get<T: DeserializeOwned>(&mut self, path: &str) -> Result<T, ClientError> {
        self.call(Method::GET, path, Vec::new())
    }

    /// `POST path` with a JSON body, its answer read as `T`.
    pub fn post<B: Serialize, T: DeserializeOwned>(
        &mut self,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| ClientError::Protocol(format!("the request does not serialize: {e}")))?;
        self.call(Method::POST, path, bytes)
    }

    /// `POST path` without a body (hold, release, rollback, reconfigure), its answer read as `T`.
    pub fn post_empty<T: DeserializeOwned>(&mut self, path: &str) -> Result<T, ClientError> {
        self.call(Method::POST, path, Vec::new())
    }

    /// `DELETE path`, its answer read as `T`.
    pub fn delete<T: DeserializeOwned>(&mut self, path: &str) -> Result<T, ClientError> {
        self.call(Method::DELETE, path, Vec::new())
    }

    /// `GET path`, its answer as text (`/metrics`).
    pub fn get_text(&mut self, path: &str) -> Result<String, ClientError> {
        let bytes = self.call_bytes(Method::GET, path, Vec::new())?;
        String::from_utf8(bytes.to_vec())
            .map_err(|e| ClientError::Protocol(format!("{path}: the answer is not UTF-8: {e}")))
    }

    /// One exchange, its answer read as JSON.
    fn call<T: DeserializeOwned>(
        &mut self,
        method: Method,
        path: &str,
        body: Vec<u8>,
    ) -> Result<T, ClientError> {
        let bytes = self.call_bytes(method, path, body)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::Protocol(format!("unexpected answer to {path}: {e}")))
    }

    /// One exchange. A connection that broke during it is not retried: the request may have been
    /// acted on. One the daemon closed while idle is replaced before anything is sent.
    fn call_bytes(
        &mut self,
        method: Method,
        path: &str,
        body: Vec<u8>,
    ) -> Result<Bytes, ClientError> {
        if self.runtime.is_none() {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| ClientError::Protocol(format!("starting the client runtime: {e}")))?;
            self.runtime = Some(rt);
        }
        let rt = self.runtime.take().expect("made above");
        let timeout = self.timeout;
        let exchange = self.exchange_in_turn(method, path, Bytes::from(body));
        let result = match timeout {
            Some(t) => rt
                .block_on(async { tokio::time::timeout(t, exchange).await })
                .unwrap_or_else(|_| {
                    Err(ClientError::Protocol(format!(
                        "no answer within {} ms",
                        t.as_millis()
                    )))
                }),
            None => rt.block_on(exchange),
        };
        self.runtime = Some(rt);
        if matches!(result, Err(ClientError::Protocol(_))) {
            self.sender = None;
        }
        result
    }

    /// One exchange, tried again while the daemon's door turns the connection away before
    /// reading the request (its user's connections are all busy), for up to [`DOOR_RETRY`].
    async fn exchange_in_turn(
        &mut self,
        method: Method,
        path: &str,
        body: Bytes,
    ) -> Result<Bytes, ClientError> {
        let deadline = Instant::now() + DOOR_RETRY;
        let mut pause = Duration::from_millis(20);
        loop {
            match self.exchange(method.clone(), path, body.clone()).await {
                Ok(bytes) => return Ok(bytes),
                Err(Failure::Error(e)) => return Err(e),
                Err(Failure::TurnedAway(e)) => {
                    // The door closed that connection.
                    self.sender = None;
                    if Instant::now() + pause > deadline {
                        return Err(e);
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    async fn exchange(
        &mut self,
        method: Method,
        path: &str,
        body: Bytes,
    ) -> Result<Bytes, Failure> {
        let proto = |e: hyper::Error| ClientError::Protocol(e.to_string());
        // The daemon closes connections idle for its header read timeout; one idle for half of
        // it is replaced rather than risk a request crossing the close.
        let stale = self
            .last_answer
            .is_none_or(|t| t.elapsed() > sluice_api::HEADER_READ_TIMEOUT / 2);
        let usable = match &mut self.sender {
            Some(s) if !stale => s.ready().await.is_ok(),
            _ => false,
        };
        if !usable {
            self.sender = Some(self.connect().await?);
        }
        let sender = self.sender.as_mut().expect("connected above");
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, "sluice")
            .header(CONTENT_TYPE, "application/json");
        if let Target::Tcp { token, .. } = &self.target {
            req = req.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| ClientError::Protocol(format!("{path}: {e}")))?;
        let answer = sender.send_request(req).await.map_err(proto)?;
        self.last_answer = Some(Instant::now());
        let status = answer.status().as_u16();
        // Only the door answers `503` with `Retry-After`, before reading the request.
        let turned_away = status == 503 && answer.headers().contains_key(RETRY_AFTER);
        let bytes = http_body_util::Limited::new(answer.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(|e| ClientError::Protocol(format!("reading the answer: {e}")))?
            .to_bytes();
        if status == 200 {
            return Ok(bytes);
        }
        let message = serde_json::from_slice::<ErrorBody>(&bytes)
            .map(|b| b.error)
            .unwrap_or_else(|_| format!("HTTP {status}"));
        let refused = ClientError::Refused { status, message };
        Err(if turned_away {
            Failure::TurnedAway(refused)
        } else {
            Failure::Error(refused)
        })
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, ClientError> {
        let handshake = |e: hyper::Error| ClientError::Protocol(format!("handshake: {e}"));
        match &self.target {
            Target::Dir(dir) => {
                let socket = trusted_socket(dir)?;
                let stream = tokio::net::UnixStream::connect(&socket)
                    .await
                    .map_err(|source| ClientError::Connect {
                        socket: socket.clone(),
                        dir: dir.clone(),
                        source,
                    })?;
                let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(handshake)?;
                tokio::spawn(conn);
                Ok(sender)
            }
            Target::Tcp { addr, .. } => {
                let stream = tokio::net::TcpStream::connect(addr)
                    .await
                    .map_err(|source| ClientError::Connect {
                        socket: PathBuf::from(addr),
                        dir: PathBuf::from("DIR --listen ADDR --token-file FILE"),
                        source,
                    })?;
                stream.set_nodelay(true).ok();
                let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(handshake)?;
                tokio::spawn(conn);
                Ok(sender)
            }
        }
    }
}
