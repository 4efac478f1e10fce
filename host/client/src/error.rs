//! Why a client got no answer, and why a path it was pointed at is not to be trusted.

use std::path::PathBuf;

/// Why a path was refused (a state directory, the daemon's socket, a file in them): the path,
/// what was found and what was expected.
#[derive(Debug, thiserror::Error)]
#[error("{}: {found}; expected {expected}", path.display())]
pub struct Untrusted {
    /// The path refused.
    pub path: PathBuf,
    /// What it is.
    pub found: String,
    /// What it needs to be.
    pub expected: String,
}

/// Why the client could not get an answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No daemon answers on the socket.
    #[error(
        "cannot reach the daemon at {}: {source}; is the daemon running? start it with `sluice serve --state-dir {}`",
        socket.display(), dir.display()
    )]
    Connect {
        /// The socket tried.
        socket: PathBuf,
        /// Its state directory.
        dir: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The socket, or a directory above it, could have been put there by another user: it is
    /// not root's or the caller's, or others may write to it.
    #[error("refusing to talk to the daemon: {0}")]
    Untrusted(#[from] Untrusted),
    /// The connection broke or the answer was not HTTP.
    #[error("talking to the daemon: {0}")]
    Protocol(String),
    /// The daemon refused the request; the message says why.
    #[error("{message}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// The daemon's explanation.
        message: String,
    },
}
