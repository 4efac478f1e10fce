//! The embedded store: one SQLite file, opened without following a symlink and kept private
//! (0600), written in WAL mode so readers never wait for the writer.

use std::path::{Path, PathBuf};

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};

use crate::schema::{self, Param, RowRead};
use crate::{AccountingStore, AcctError, AcctJob, Filter, Purged};

/// An open SQLite accounting store.
pub struct SqliteStore {
    path: PathBuf,
    conn: Connection,
}

impl ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Param::Int(Some(v)) => ToSqlOutput::Owned(Value::Integer(*v)),
            Param::Text(Some(t)) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Param::Int(None) | Param::Text(None) => ToSqlOutput::Owned(Value::Null),
        })
    }
}

impl RowRead for rusqlite::Row<'_> {
    fn int(&self, i: usize) -> Result<Option<i64>, String> {
        self.get(i).map_err(|e| e.to_string())
    }
    fn text(&self, i: usize) -> Result<Option<String>, String> {
        self.get(i).map_err(|e| e.to_string())
    }
}

/// How long opening a store waits for other connections' locks.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether `e` is SQLite's "database is locked".
fn is_busy(e: &AcctError) -> bool {
    matches!(
        e,
        AcctError::Sqlite {
            source: rusqlite::Error::SqliteFailure(f, _),
            ..
        } if f.code == rusqlite::ErrorCode::DatabaseBusy
    )
}

impl SqliteStore {
    /// Opens (creating, 0600) the store at `path` and migrates it to the current version.
    pub fn open(path: &Path) -> Result<Self, AcctError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let err = |source| AcctError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        // The file holds every user's job names and directories: private from its first byte.
        create_private(path).map_err(|source| AcctError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let conn = Connection::open_with_flags(path, flags).map_err(err)?;
        // First the wait for a lock: switching to WAL and migrating take one briefly.
        conn.busy_timeout(BUSY_WAIT).map_err(err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(err)?;
        let mut store = Self {
            path: path.to_path_buf(),
            conn,
        };
        // SQLite answers "database is locked" without waiting when connections opening a new
        // file at once race to switch it to WAL or to upgrade a read to a write; the busy
        // timeout does not cover those, so the whole set-up is tried again until it would have.
        let deadline = std::time::Instant::now() + BUSY_WAIT;
        loop {
            match store.set_up() {
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                done => return done.map(|()| store),
            }
        }
    }

    /// Switches the store to WAL and migrates it.
    fn set_up(&mut self) -> Result<(), AcctError> {
        self.conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| self.err(e))?;
        self.migrate()
    }

    fn err(&self, source: rusqlite::Error) -> AcctError {
        AcctError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Applies the missing migrations, each in one transaction that holds the write lock from
    /// its start, so a second connection opening the store at the same moment waits and then
    /// finds it current.
    fn migrate(&mut self) -> Result<(), AcctError> {
        let path = self.path.clone();
        let err = |source| AcctError::Sqlite {
            path: path.clone(),
            source,
        };
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            tx.execute(schema::VERSION_TABLE, []).map_err(err)?;
            let current: Option<i64> = tx
                .query_row(schema::READ_VERSION, [], |r| r.get(0))
                .map_err(err)?;
            let next =
                schema::next_migration(current.unwrap_or(0) as u32, &path.display().to_string())?;
            let Some((n, statements)) = next else {
                return tx.commit().map_err(err);
            };
            for sql in statements {
                tx.execute(sql, []).map_err(err)?;
            }
            if n == schema::NODES_MIGRATION {
                let lists = {
                    let mut stmt = tx.prepare(schema::NODE_LISTS).map_err(err)?;
                    stmt.query_map([], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, String>(2)?,
                        ))
                    })
                    .map_err(err)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(err)?
                };
                let mut insert = tx.prepare(schema::INSERT_NODE).map_err(err)?;
                for (job_id, restarts, list) in lists {
                    for row in schema::node_params(job_id, restarts, &list) {
                        insert
                            .execute(rusqlite::params_from_iter(row))
                            .map_err(err)?;
                    }
                }
            }
            tx.execute("DELETE FROM schema_version", []).map_err(err)?;
            tx.execute(schema::SET_VERSION, [i64::from(n)])
                .map_err(err)?;
            tx.commit().map_err(err)?;
        }
    }
}

/// Creates `path` 0600 if it is not there, without following a symlink.
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map(drop)
}

impl AccountingStore for SqliteStore {
    fn store(&mut self, jobs: &[AcctJob]) -> Result<(), AcctError> {
        let path = self.path.clone();
        let err = |source| AcctError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(err)?;
        {
            let mut job = tx
                .prepare_cached(&schema::upsert(
                    "jobs",
                    &schema::JOB_COLUMNS,
                    schema::JOB_KEY,
                ))
                .map_err(err)?;
            let mut clear = tx.prepare_cached(schema::DELETE_STEPS).map_err(err)?;
            let mut step = tx
                .prepare_cached(&schema::upsert(
                    "steps",
                    &schema::STEP_COLUMNS,
                    schema::STEP_KEY,
                ))
                .map_err(err)?;
            let mut clear_nodes = tx.prepare_cached(schema::DELETE_NODES).map_err(err)?;
            let mut node = tx.prepare_cached(schema::INSERT_NODE).map_err(err)?;
            for j in jobs {
                let run = [j.job_id as i64, i64::from(j.restarts)];
                job.execute(rusqlite::params_from_iter(schema::job_params(j)))
                    .map_err(err)?;
                clear.execute(run).map_err(err)?;
                for s in &j.steps {
                    step.execute(rusqlite::params_from_iter(schema::step_params(j, s)))
                        .map_err(err)?;
                }
                clear_nodes.execute(run).map_err(err)?;
                for row in schema::node_params(run[0], run[1], &j.nodes) {
                    node.execute(rusqlite::params_from_iter(row)).map_err(err)?;
                }
            }
        }
        tx.commit().map_err(err)
    }

    fn query(&mut self, filter: &Filter, limit: usize) -> Result<Vec<AcctJob>, AcctError> {
        let (where_sql, params) = filter.to_sql(1);
        let bad = |job_id: i64, message: String| AcctError::BadRow {
            store: self.path.display().to_string(),
            job_id,
            message,
        };
        let mut stmt = self
            .conn
            .prepare(&schema::select_jobs(&where_sql, limit, filter.duplicates))
            .map_err(|e| self.err(e))?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(|e| self.err(e))?;
        let mut jobs = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let job = schema::job_from_row(row).map_err(|m| bad(row.get(0).unwrap_or(-1), m))?;
            jobs.push(job);
        }
        drop(rows);
        drop(stmt);
        let Some(last) = jobs.last().map(|j| j.job_id as i64) else {
            return Ok(jobs);
        };
        let mut params = params;
        params.push(Param::Int(Some(last)));
        let last_mark = format!("${}", params.len());
        let mut stmt = self
            .conn
            .prepare(&schema::select_steps(&where_sql, &last_mark))
            .map_err(|e| self.err(e))?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(|e| self.err(e))?;
        let mut steps = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            steps.push(schema::step_from_row(row).map_err(|m| bad(row.get(0).unwrap_or(-1), m))?);
        }
        schema::attach_steps(&mut jobs, steps);
        Ok(jobs)
    }

    fn purge(
        &mut self,
        jobs_before: Option<i64>,
        steps_before: Option<i64>,
    ) -> Result<Purged, AcctError> {
        let path = self.path.clone();
        let err = |source| AcctError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(err)?;
        let mut purged = Purged::default();
        if let Some(t) = jobs_before {
            purged.jobs = tx.execute(schema::PURGE_JOBS, [t]).map_err(err)? as u64;
        }
        if let Some(t) = steps_before {
            purged.steps = tx.execute(schema::PURGE_STEPS, [t]).map_err(err)? as u64;
        }
        tx.commit().map_err(err)?;
        Ok(purged)
    }

    fn schema_version(&mut self) -> Result<u32, AcctError> {
        // The table exists: opening migrated the store.
        let v: Option<i64> = self
            .conn
            .query_row(schema::READ_VERSION, [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        Ok(v.unwrap_or(0) as u32)
    }
}
