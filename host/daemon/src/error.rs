//! Errors of the daemon library: the store and start-up (a client's are `sluice-client`'s).

use std::path::PathBuf;

/// Why the durable store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A record or snapshot passed its checksum but does not parse.
    #[error("{}: record at offset {offset} does not parse: {message}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte offset of the record.
        offset: u64,
        /// What the parser said.
        message: String,
    },
    /// The journal has a bad range with intact records after it (or a complete record that
    /// fails its checksum): not a torn write, so nothing is cut.
    #[error(
        "{}: damaged at byte offset {offset} ({bad_bytes} bad bytes, {records_after} intact records after them); \
         the file is left untouched; start with `sluice serve --recover-damaged-journal` to copy it aside \
         and keep every intact record",
        path.display()
    )]
    Damaged {
        /// The journal.
        path: PathBuf,
        /// Offset of the first bad byte.
        offset: u64,
        /// Bytes that are not intact records.
        bad_bytes: u64,
        /// Intact records after the first bad byte.
        records_after: usize,
    },
    /// The file system holding the state has no room for the next records.
    #[error(
        "{}: no space left on the file system for {need} more bytes of state; the change was not made (reads still work; free space and retry)",
        path.display()
    )]
    Full {
        /// The journal.
        path: PathBuf,
        /// Bytes that were asked for.
        need: u64,
    },
    /// The snapshot and the journal do not follow each other (a missing or older snapshot, or
    /// journal records missing between them): nothing is changed.
    #[error(
        "{}: snapshot.json and journal.log do not agree: {message}; both are left untouched; \
         start with `sluice serve --recover-damaged-journal` to start from what is readable (what is lost is logged)",
        dir.display()
    )]
    Mismatch {
        /// The state directory.
        dir: PathBuf,
        /// What does not follow.
        message: String,
    },
    /// The state directory or one of its files is not the daemon's own.
    #[error(transparent)]
    Untrusted(#[from] sluice_client::Untrusted),
}

/// Why the daemon could not start or reload.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The cluster configuration did not load.
    #[error("{0}")]
    Config(String),
    /// A plugin of the configuration did not load.
    #[error("loading plugins: {0}")]
    Plugins(String),
    /// The socket could not be bound or another daemon holds the state directory.
    #[error("{0}")]
    Listen(String),
    /// Anything else at start-up, with what was being done.
    #[error("{0}")]
    Other(String),
}
