//! What can go wrong with the accounting store.

use std::path::PathBuf;

/// An accounting store failure; the text names the store and what failed.
#[derive(Debug, thiserror::Error)]
pub enum AcctError {
    /// The SQLite file could not be opened or used.
    #[error("accounting store {}: {source}", path.display())]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The SQLite file could not be created.
    #[error("accounting store {}: {source}", path.display())]
    Io {
        /// The database file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The PostgreSQL server refused or failed a request.
    #[error("accounting store {target}: {source}")]
    Postgres {
        /// The server, without its password.
        target: String,
        /// What the client said.
        #[source]
        source: ::postgres::Error,
    },
    /// The store's schema is newer than this daemon knows.
    #[error(
        "accounting store {store}: schema version {found}, this daemon knows up to {known}; upgrade sluice"
    )]
    TooNew {
        /// The store.
        store: String,
        /// Its version.
        found: u32,
        /// The newest this build knows.
        known: u32,
    },
    /// A row read back does not fit the record (a value out of range or of the wrong kind).
    #[error("accounting store {store}: job {job_id}: {message}")]
    BadRow {
        /// The store.
        store: String,
        /// The job.
        job_id: i64,
        /// What was wrong.
        message: String,
    },
    /// A purge setting is not one of slurmdbd's ages.
    #[error(
        "{key} = {given:?}: expected a number of hours, days or months (`720hours`, `30days`, \
         `12months`; a bare number is months)"
    )]
    BadPurge {
        /// The daemon.toml key.
        key: &'static str,
        /// What was given.
        given: String,
    },
    /// The `accounting` setting is not a store this daemon can use.
    #[error("accounting = {given:?}: {expected}")]
    BadTarget {
        /// What was given.
        given: String,
        /// What was expected.
        expected: String,
    },
}
