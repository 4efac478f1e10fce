//! The job accounting store: every ended job the daemon hands it, kept in SQLite (a file in the
//! daemon's state directory, the default) or PostgreSQL, behind one trait with the same schema,
//! migrations and queries, so `sluice acct` answers the same from either.
//!
//! [`Target`] names the store (`accounting = "postgres://…"` in daemon.toml, else the SQLite
//! file); [`open`] connects and brings its schema up to [`schema::VERSION`]. The store never
//! holds the only copy of anything: the daemon's journal keeps every ended job until the store
//! has it, so a write may fail and be retried at will (writes are upserts).

pub mod error;
pub mod filter;
pub mod postgres;
pub mod purge;
pub mod schema;
pub mod sqlite;
pub mod target;
#[cfg(feature = "testing")]
pub mod testing;

pub use error::AcctError;
pub use filter::Filter;
pub use purge::{Purge, Purged};
pub use sluice_api::{AcctJob, AcctStep};
pub use target::Target;

/// An accounting store: ended jobs written, and read back by sacct's filters.
pub trait AccountingStore: Send {
    /// Writes `jobs` (and their steps) in one transaction; a job already stored is replaced.
    fn store(&mut self, jobs: &[AcctJob]) -> Result<(), AcctError>;

    /// The jobs matching `filter`, by job id, at most `limit` of them.
    fn query(&mut self, filter: &Filter, limit: usize) -> Result<Vec<AcctJob>, AcctError>;

    /// Deletes the runs that ended before `jobs_before` (their steps and nodes with them) and
    /// the steps that ended before `steps_before`, in one transaction: slurmdbd's
    /// `PurgeJobAfter` and `PurgeStepAfter` applied at a moment.
    fn purge(
        &mut self,
        jobs_before: Option<i64>,
        steps_before: Option<i64>,
    ) -> Result<Purged, AcctError>;

    /// The schema version the store is at.
    fn schema_version(&mut self) -> Result<u32, AcctError>;
}

/// Connects to the store `target` names and migrates its schema to the current version.
pub fn open(target: &Target) -> Result<Box<dyn AccountingStore>, AcctError> {
    Ok(match target {
        Target::Sqlite(path) => Box::new(sqlite::SqliteStore::open(path)?),
        Target::Postgres(url) => Box::new(postgres::PostgresStore::connect(url)?),
    })
}
