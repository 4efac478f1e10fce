//! A PostgreSQL store, for sites that run a server: the same schema, migrations and statements
//! as SQLite's, over the synchronous `postgres` client (no TLS: a Unix socket or a trusted
//! network, as slurmdbd's own MySQL link).

use postgres::types::ToSql;
use postgres::{Client, NoTls};

use crate::schema::{self, Param, RowRead};
use crate::target::redact;
use crate::{AccountingStore, AcctError, AcctJob, Filter};

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

    fn migrate(&mut self) -> Result<(), AcctError> {
        let current = self.schema_version()?;
        if current > schema::VERSION {
            return Err(AcctError::TooNew {
                store: self.target.clone(),
                found: current,
                known: schema::VERSION,
            });
        }
        let target = self.target.clone();
        let err = |source| AcctError::Postgres {
            target: target.clone(),
            source,
        };
        for (n, statements) in schema::MIGRATIONS.iter().enumerate().skip(current as usize) {
            let mut tx = self.client.transaction().map_err(err)?;
            for sql in *statements {
                tx.execute(*sql, &[]).map_err(err)?;
            }
            tx.execute("DELETE FROM schema_version", &[]).map_err(err)?;
            tx.execute(
                "INSERT INTO schema_version (version) VALUES ($1)",
                &[&(n as i64 + 1)],
            )
            .map_err(err)?;
            tx.commit().map_err(err)?;
        }
        Ok(())
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
            .prepare(&schema::upsert("jobs", &schema::JOB_COLUMNS, "job_id"))
            .map_err(err)?;
        let clear = tx.prepare(schema::DELETE_STEPS).map_err(err)?;
        let step = tx
            .prepare(&schema::upsert(
                "steps",
                &schema::STEP_COLUMNS,
                "job_id, step_id",
            ))
            .map_err(err)?;
        for j in jobs {
            tx.execute(&job, &bind(&schema::job_params(j)))
                .map_err(err)?;
            tx.execute(&clear, &[&(j.job_id as i64)]).map_err(err)?;
            for s in &j.steps {
                tx.execute(&step, &bind(&schema::step_params(j.job_id, s)))
                    .map_err(err)?;
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
            .query(&schema::select_jobs(&where_sql, limit), &bind(&params))
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

    fn schema_version(&mut self) -> Result<u32, AcctError> {
        self.client
            .execute(schema::VERSION_TABLE, &[])
            .map_err(|e| self.err(e))?;
        let row = self
            .client
            .query_one("SELECT MAX(version) FROM schema_version", &[])
            .map_err(|e| self.err(e))?;
        let v: Option<i64> = row.try_get(0).map_err(|e| self.err(e))?;
        Ok(v.unwrap_or(0) as u32)
    }
}
