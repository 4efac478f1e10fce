//! A blocking client of the daemon's API, for the CLI and the tests: one keep-alive connection
//! over the Unix socket (or TCP with a bearer token), JSON in and out.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::error::ClientError;

/// Where the daemon's state directory is when neither `--state-dir` nor `SLUICE_STATE_DIR` says:
/// `$XDG_RUNTIME_DIR/sluice`, else `/tmp/sluice-$UID`.
pub fn default_state_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("sluice"),
        _ => PathBuf::from(format!("/tmp/sluice-{}", unsafe { libc::geteuid() })),
    }
}

/// The socket inside a state directory.
pub fn socket_path(dir: &Path) -> PathBuf {
    dir.join("sluice.sock")
}

enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Stream::Unix(s) => s,
            Stream::Tcp(s) => s,
        }
    }
    fn try_clone_reader(&self) -> std::io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Stream::Unix(s) => Box::new(s.try_clone()?),
            Stream::Tcp(s) => Box::new(s.try_clone()?),
        })
    }
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
        /// The token `serve --token` was given.
        token: String,
    },
}

/// A connection to the daemon.
pub struct Client {
    target: Target,
    conn: Option<(Stream, BufReader<Box<dyn Read + Send>>)>,
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
            conn: None,
            timeout: None,
        }
    }

    /// Gives up on an answer after `t` (default: wait as long as it takes).
    pub fn with_timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    fn connect(&mut self) -> Result<(), ClientError> {
        if self.conn.is_some() {
            return Ok(());
        }
        let stream = match &self.target {
            Target::Dir(dir) => {
                let socket = socket_path(dir);
                let s = UnixStream::connect(&socket).map_err(|source| ClientError::Connect {
                    socket: socket.clone(),
                    dir: dir.clone(),
                    source,
                })?;
                s.set_read_timeout(self.timeout).ok();
                Stream::Unix(s)
            }
            Target::Tcp { addr, .. } => {
                let s = TcpStream::connect(addr).map_err(|source| ClientError::Connect {
                    socket: PathBuf::from(addr),
                    dir: PathBuf::from("DIR --listen ADDR --token T"),
                    source,
                })?;
                s.set_nodelay(true).ok();
                s.set_read_timeout(self.timeout).ok();
                Stream::Tcp(s)
            }
        };
        let reader = BufReader::new(
            stream
                .try_clone_reader()
                .map_err(|e| ClientError::Protocol(e.to_string()))?,
        );
        self.conn = Some((stream, reader));
        Ok(())
    }

    /// `GET path`.
    pub fn get(&mut self, path: &str) -> Result<Value, ClientError> {
        self.call("GET", path, None)
    }

    /// `POST path` with a JSON body.
    pub fn post<T: Serialize>(&mut self, path: &str, body: &T) -> Result<Value, ClientError> {
        let bytes = serde_json::to_vec(body).map_err(|e| ClientError::Protocol(e.to_string()))?;
        self.call("POST", path, Some(bytes))
    }

    /// `DELETE path`.
    pub fn delete(&mut self, path: &str) -> Result<Value, ClientError> {
        self.call("DELETE", path, None)
    }

    /// One exchange. A broken connection is not retried: the request may have been acted on.
    pub fn call(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Value, ClientError> {
        self.connect()?;
        let result = self.exchange(method, path, body);
        if matches!(result, Err(ClientError::Protocol(_))) {
            self.conn = None;
        }
        result
    }

    fn exchange(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Value, ClientError> {
        let proto = |e: std::io::Error| ClientError::Protocol(e.to_string());
        let auth = match &self.target {
            Target::Tcp { token, .. } => format!("Authorization: Bearer {token}\r\n"),
            Target::Dir(_) => String::new(),
        };
        let (stream, reader) = self.conn.as_mut().expect("connected above");
        let body = body.unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: sluice\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let w = stream.writer();
        w.write_all(head.as_bytes()).map_err(proto)?;
        w.write_all(&body).map_err(proto)?;
        w.flush().map_err(proto)?;
        let mut line = String::new();
        if reader.read_line(&mut line).map_err(proto)? == 0 {
            return Err(ClientError::Protocol(
                "the daemon closed the connection without answering".into(),
            ));
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ClientError::Protocol(format!("bad status line {line:?}")))?;
        let mut len = 0usize;
        let mut close = false;
        loop {
            line.clear();
            if reader.read_line(&mut line).map_err(proto)? == 0 {
                return Err(ClientError::Protocol("answer cut short".into()));
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                let k = k.trim().to_ascii_lowercase();
                if k == "content-length" {
                    len = v.trim().parse().unwrap_or(0);
                } else if k == "connection" && v.trim().eq_ignore_ascii_case("close") {
                    close = true;
                }
            }
        }
        let mut buf = vec![0; len];
        reader.read_exact(&mut buf).map_err(proto)?;
        if close {
            self.conn = None;
        }
        let value: Value = if buf.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&buf)
                .map_err(|e| ClientError::Protocol(format!("answer is not JSON: {e}")))?
        };
        if status == 200 {
            Ok(value)
        } else {
            let message = value
                .get("error")
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_else(|| format!("HTTP {status}"));
            Err(ClientError::Refused { status, message })
        }
    }
}
