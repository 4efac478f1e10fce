//! A PostgreSQL store, for sites that run a server: the same schema, migrations and statements
//! as SQLite's, over the synchronous `postgres` client (no TLS: a Unix socket or a trusted
//! network, as slurmdbd's own MySQL link).

use postgres::types::ToSql;
use postgres::{Client, NoTls};

use crate::schema::{self, Param, RowRead};
use crate::target::redact;
use crate::{AccountingStore, AcctError, AcctJob, Filter, Purged};

/// The advisory lock key migrations hold (any fixed number the schema owns).
const MIGRATION_LOCK: i64 = 0x5_1_1ce_ac;

/// A connection to a PostgreSQL accounting store.
pub struct PostgresStore {
    target: String,
    client: Client,
}

impl RowRead for postgres::Row {
    fn int(&self, i: usize) -> Result<Option<i64>, String> {
        self.try_get(i).map_err(|e| e.to_string())
    }
    fn text(&self, i: usize) -> Result<Option<String>, String> {
        self.try_get(i).map_err(|e| e.to_string())
    }
}

/// The values as the client binds them.
fn bind(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|p| match p {
            Param::Int(v) => v as &(dyn ToSql + Sync),
            Param::Text(v) => v as &(dyn ToSql + Sync),
        })
        .collect()
}

impl PostgresStore {
    /// Connects to `url` and migrates the schema to the current version.
    pub fn connect(url: &str) -> Result<Self, AcctError> {
        let target = redact(url);
        let client = Client::connect(url, NoTls).map_err(|source| AcctError::Postgres {
            target: target.clone(),
            source,
        })?;
        let mut store = Self { target, client };
        store.migrate()?;
        Ok(store)
    }

    fn err(&self, source: postgres::Error) -> AcctError {
        AcctError::Postgres {
            target: self.target.clone(),
            source,
        }
    }

    /// Applies the missing migrations, each in one transaction, under a session lock: two
    /// daemons (or threads) opening the store at once migrate it once (PostgreSQL's
    /// `CREATE TABLE IF NOT EXISTS` alone may race).
    fn migrate(&mut self) -> Result<(), AcctError> {
        let err = |source| AcctError::Postgres {
            target: self.target.clone(),
            source,
        };
        self.client
            .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
            .map_err(err)?;
        let result = self.migrate_locked();
        let unlocked = self
            .client
            .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]);
        result?;
        unlocked.map(drop).map_err(|e| self.err(e))
    }

    fn migrate_locked(&mut self) -> Result<(), AcctError> {
        let target = self.target.clone();
        let err = |source| AcctError::Postgres {
            target: target.clone(),
            source,
        };
        self.client
            .execute(schema::VERSION_TABLE, &[])
            .map_err(err)?;
        loop {
            let mut tx = self.client.transaction().map_err(err)?;
            tx.execute("LOCK TABLE schema_version IN ACCESS EXCLUSIVE MODE", &[])
                .map_err(err)?;
            let current: Option<i64> = tx
                .query_one(schema::READ_VERSION, &[])
                .and_then(|r| r.try_get(0))
                .map_err(err)?;
            let Some((n, statements)) =
                schema::next_migration(current.unwrap_or(0) as u32, &target)?
            else {
                return tx.commit().map_err(err);
            };
            for sql in statements {
                tx.execute(*sql, &[]).map_err(err)?;
            }
            if n == schema::NODES_MIGRATION {
                let lists = tx.query(schema::NODE_LISTS, &[]).map_err(err)?;
                let insert = tx.prepare(schema::INSERT_NODE).map_err(err)?;
                for row in lists {
                    let job_id: i64 = row.try_get(0).map_err(err)?;
                    let restarts: i64 = row.try_get(1).map_err(err)?;
                    let list: String = row.try_get(2).map_err(err)?;
                    for values in schema::node_params(job_id, restarts, &list) {
                        tx.execute(&insert, &bind(&values)).map_err(err)?;
                    }
                }
            }
            tx.execute("DELETE FROM schema_version", &[]).map_err(err)?;
            tx.execute(schema::SET_VERSION, &[&i64::from(n)])
                .map_err(err)?;
            tx.commit().map_err(err)?;
        }
    }
}

impl AccountingStore for PostgresStore {
    fn store(&mut self, jobs: &[AcctJob]) -> Result<(), AcctError> {
        let target = self.target.clone();
        let err = |source| AcctError::Postgres {
            target: target.clone(),
            source,
        };
        let mut tx = self.client.transaction().map_err(err)?;
        let job = tx
            .prepare(&schema::upsert(
                "jobs",
                &schema::JOB_COLUMNS,
                schema::JOB_KEY,
            ))
            .map_err(err)?;
        let clear = tx.prepare(schema::DELETE_STEPS).map_err(err)?;
        let step = tx
            .prepare(&schema::upsert(
                "steps",
                &schema::STEP_COLUMNS,
                schema::STEP_KEY,
            ))
            .map_err(err)?;
        let clear_nodes = tx.prepare(schema::DELETE_NODES).map_err(err)?;
        let node = tx.prepare(schema::INSERT_NODE).map_err(err)?;
        for j in jobs {
            let (id, restarts) = (j.job_id as i64, i64::from(j.restarts));
            tx.execute(&job, &bind(&schema::job_params(j)))
                .map_err(err)?;
            tx.execute(&clear, &[&id, &restarts]).map_err(err)?;
            for s in &j.steps {
                tx.execute(&step, &bind(&schema::step_params(j, s)))
                    .map_err(err)?;
            }
            tx.execute(&clear_nodes, &[&id, &restarts]).map_err(err)?;
            for values in schema::node_params(id, restarts, &j.nodes) {
                tx.execute(&node, &bind(&values)).map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }

    fn query(&mut self, filter: &Filter, limit: usize) -> Result<Vec<AcctJob>, AcctError> {
        let (where_sql, mut params) = filter.to_sql(1);
        let bad = |job_id: i64, message: String| AcctError::BadRow {
            store: self.target.clone(),
            job_id,
            message,
        };
        let rows = self
            .client
            .query(
                &schema::select_jobs(&where_sql, limit, filter.duplicates),
                &bind(&params),
            )
            .map_err(|e| self.err(e))?;
        let mut jobs = Vec::with_capacity(rows.len());
        for row in &rows {
            jobs.push(schema::job_from_row(row).map_err(|m| bad(row.try_get(0).unwrap_or(-1), m))?);
        }
        let Some(last) = jobs.last().map(|j| j.job_id as i64) else {
            return Ok(jobs);
        };
        params.push(Param::Int(Some(last)));
        let last_mark = format!("${}", params.len());
        let rows = self
            .client
            .query(
                &schema::select_steps(&where_sql, &last_mark),
                &bind(&params),
            )
            .map_err(|e| self.err(e))?;
        let steps = rows
            .iter()
            .map(|row| schema::step_from_row(row).map_err(|m| bad(row.try_get(0).unwrap_or(-1), m)))
            .collect::<Result<Vec<_>, _>>()?;
        schema::attach_steps(&mut jobs, steps);
        Ok(jobs)
    }

    fn purge(
        &mut self,
        jobs_before: Option<i64>,
        steps_before: Option<i64>,
    ) -> Result<Purged, AcctError> {
        let target = self.target.clone();
        let err = |source| AcctError::Postgres {
            target: target.clone(),
            source,
        };
        let mut tx = self.client.transaction().map_err(err)?;
        let mut purged = Purged::default();
        if let Some(t) = jobs_before {
            purged.jobs = tx.execute(schema::PURGE_JOBS, &[&t]).map_err(err)?;
        }
        if let Some(t) = steps_before {
            purged.steps = tx.execute(schema::PURGE_STEPS, &[&t]).map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(purged)
    }

    fn schema_version(&mut self) -> Result<u32, AcctError> {
        // The table exists: connecting migrated the store.
        let row = self
            .client
            .query_one(schema::READ_VERSION, &[])
            .map_err(|e| self.err(e))?;
        let v: Option<i64> = row.try_get(0).map_err(|e| self.err(e))?;
        Ok(v.unwrap_or(0) as u32)
    }
}
