//! The schema, as numbered migrations both databases run unchanged, and the one mapping between
//! a job record and its row.
//!
//! `schema_version` holds one row, the number of the last migration applied. A store is
//! migrated in one transaction per migration when opened; a store newer than this build is
//! refused rather than written with columns it does not know. Column types are the subset both
//! databases read alike (`BIGINT`, `TEXT`), and names avoid words PostgreSQL reserves
//! (`user`, `partition`).

use sluice_api::{AcctJob, AcctStep};

use crate::AcctError;

/// The schema version this build writes.
pub const VERSION: u32 = 1;

/// Creates the version table if the store is empty; both databases accept it.
pub const VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)";

/// The migrations, in order: migration `n` (1-based) takes a store from version `n - 1` to `n`.
/// Each is a list of statements run in one transaction.
pub const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE jobs (
        job_id BIGINT PRIMARY KEY,
        array_job_id BIGINT,
        array_task_id BIGINT,
        job_name TEXT NOT NULL,
        user_name TEXT NOT NULL,
        uid BIGINT NOT NULL,
        account TEXT NOT NULL,
        partition_name TEXT NOT NULL,
        qos TEXT NOT NULL,
        state TEXT NOT NULL,
        exit_code BIGINT NOT NULL,
        exit_signal BIGINT NOT NULL,
        submit_time BIGINT NOT NULL,
        eligible_time BIGINT NOT NULL,
        start_time BIGINT,
        end_time BIGINT NOT NULL,
        elapsed BIGINT NOT NULL,
        time_limit BIGINT,
        req_tres TEXT NOT NULL,
        alloc_tres TEXT NOT NULL,
        node_list TEXT NOT NULL,
        nnodes BIGINT NOT NULL,
        ncpus BIGINT NOT NULL,
        cpu_time BIGINT NOT NULL,
        work_dir TEXT NOT NULL,
        restarts BIGINT NOT NULL,
        reason TEXT
    )",
    "CREATE INDEX jobs_by_end ON jobs (end_time)",
    "CREATE INDEX jobs_by_user ON jobs (user_name, end_time)",
    "CREATE TABLE steps (
        job_id BIGINT NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
        step_id BIGINT NOT NULL,
        step_name TEXT NOT NULL,
        state TEXT NOT NULL,
        exit_code BIGINT NOT NULL,
        start_time BIGINT NOT NULL,
        end_time BIGINT NOT NULL,
        PRIMARY KEY (job_id, step_id)
    )",
]];

/// The migration that follows version `current` of `store`, as (its number, its statements);
/// `None` when the store is current, [`AcctError::TooNew`] when it is ahead of this build.
pub fn next_migration(
    current: u32,
    store: &str,
) -> Result<Option<(u32, &'static [&'static str])>, AcctError> {
    if current > VERSION {
        return Err(AcctError::TooNew {
            store: store.to_string(),
            found: current,
            known: VERSION,
        });
    }
    Ok(MIGRATIONS
        .get(current as usize)
        .map(|statements| (current + 1, *statements)))
}

/// Reads the version inside a migration's transaction.
pub const READ_VERSION: &str = "SELECT MAX(version) FROM schema_version";

/// Sets the version inside a migration's transaction (after `DELETE FROM schema_version`).
pub const SET_VERSION: &str = "INSERT INTO schema_version (version) VALUES ($1)";

/// The job columns in the order [`job_params`] gives their values and [`job_from_row`] reads them.
pub const JOB_COLUMNS: [&str; 27] = [
    "job_id",
    "array_job_id",
    "array_task_id",
    "job_name",
    "user_name",
    "uid",
    "account",
    "partition_name",
    "qos",
    "state",
    "exit_code",
    "exit_signal",
    "submit_time",
    "eligible_time",
    "start_time",
    "end_time",
    "elapsed",
    "time_limit",
    "req_tres",
    "alloc_tres",
    "node_list",
    "nnodes",
    "ncpus",
    "cpu_time",
    "work_dir",
    "restarts",
    "reason",
];

/// The step columns, likewise.
pub const STEP_COLUMNS: [&str; 7] = [
    "job_id",
    "step_id",
    "step_name",
    "state",
    "exit_code",
    "start_time",
    "end_time",
];

/// A value bound to a statement: every column is a 64-bit integer or text, either nullable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    /// `BIGINT`.
    Int(Option<i64>),
    /// `TEXT`.
    Text(Option<String>),
}

fn int(v: impl Into<i64>) -> Param {
    Param::Int(Some(v.into()))
}

fn text(v: &str) -> Param {
    Param::Text(Some(v.to_string()))
}

/// `INSERT … ON CONFLICT (key) DO UPDATE` for `columns` of `table`, with `$1…$n` placeholders
/// (both databases read them): storing a job twice replaces it.
pub fn upsert(table: &str, columns: &[&str], key: &str) -> String {
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
    let sets: Vec<String> = columns
        .iter()
        .filter(|c| !key.split(", ").any(|k| k == **c))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect();
    format!(
        "INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT ({key}) DO UPDATE SET {}",
        columns.join(", "),
        marks.join(", "),
        sets.join(", ")
    )
}

/// Deletes a job's steps before its current ones are written (a step it no longer has goes).
pub const DELETE_STEPS: &str = "DELETE FROM steps WHERE job_id = $1";

/// The values of `job`'s row, in [`JOB_COLUMNS`] order.
pub fn job_params(job: &AcctJob) -> Vec<Param> {
    vec![
        int(job.job_id as i64),
        Param::Int(job.array_job_id.map(|v| v as i64)),
        Param::Int(job.array_task_id.map(i64::from)),
        text(&job.name),
        text(&job.user),
        int(job.uid),
        text(&job.account),
        text(&job.partition),
        text(&job.qos),
        text(&job.state),
        int(job.exit_code),
        int(job.signal),
        int(job.submit),
        int(job.eligible),
        Param::Int(job.start),
        int(job.end),
        int(job.elapsed),
        Param::Int(job.time_limit.map(|v| v as i64)),
        text(&job.req_tres),
        text(&job.alloc_tres),
        text(&job.nodes),
        int(job.nnodes),
        int(job.ncpus as i64),
        int(job.cpu_time),
        text(&job.work_dir),
        int(job.restarts),
        Param::Text(job.reason.clone()),
    ]
}

/// The values of one step's row, in [`STEP_COLUMNS`] order.
pub fn step_params(job_id: u64, step: &AcctStep) -> Vec<Param> {
    vec![
        int(job_id as i64),
        int(step.step_id),
        text(&step.name),
        text(&step.state),
        int(step.exit_code),
        int(step.start),
        int(step.end),
    ]
}

/// One row read back, whatever the database: column `i` as an integer or text.
pub trait RowRead {
    /// Column `i` as a nullable integer.
    fn int(&self, i: usize) -> Result<Option<i64>, String>;
    /// Column `i` as nullable text.
    fn text(&self, i: usize) -> Result<Option<String>, String>;
}

/// Reads a job row (columns in [`JOB_COLUMNS`] order); steps are added by the caller.
pub fn job_from_row(row: &impl RowRead) -> Result<AcctJob, String> {
    let i = |c: usize| {
        row.int(c)?
            .ok_or_else(|| format!("{} is null", JOB_COLUMNS[c]))
    };
    let t = |c: usize| {
        row.text(c)?
            .ok_or_else(|| format!("{} is null", JOB_COLUMNS[c]))
    };
    let fit = |c: usize, v: i64| -> Result<u32, String> {
        u32::try_from(v).map_err(|_| format!("{} = {v} is out of range", JOB_COLUMNS[c]))
    };
    let small = |c: usize, v: i64| -> Result<i32, String> {
        i32::try_from(v).map_err(|_| format!("{} = {v} is out of range", JOB_COLUMNS[c]))
    };
    Ok(AcctJob {
        job_id: i(0)? as u64,
        array_job_id: row.int(1)?.map(|v| v as u64),
        array_task_id: row.int(2)?.map(|v| fit(2, v)).transpose()?,
        name: t(3)?,
        user: t(4)?,
        uid: fit(5, i(5)?)?,
        account: t(6)?,
        partition: t(7)?,
        qos: t(8)?,
        state: t(9)?,
        exit_code: small(10, i(10)?)?,
        signal: small(11, i(11)?)?,
        submit: i(12)?,
        eligible: i(13)?,
        start: row.int(14)?,
        end: i(15)?,
        elapsed: i(16)?,
        time_limit: row.int(17)?.map(|v| v as u64),
        req_tres: t(18)?,
        alloc_tres: t(19)?,
        nodes: t(20)?,
        nnodes: fit(21, i(21)?)?,
        ncpus: i(22)? as u64,
        cpu_time: i(23)?,
        work_dir: t(24)?,
        restarts: fit(25, i(25)?)?,
        reason: row.text(26)?,
        steps: Vec::new(),
    })
}

/// Reads a step row (columns in [`STEP_COLUMNS`] order): its job id and the step.
pub fn step_from_row(row: &impl RowRead) -> Result<(u64, AcctStep), String> {
    let i = |c: usize| {
        row.int(c)?
            .ok_or_else(|| format!("{} is null", STEP_COLUMNS[c]))
    };
    let t = |c: usize| {
        row.text(c)?
            .ok_or_else(|| format!("{} is null", STEP_COLUMNS[c]))
    };
    let step = AcctStep {
        step_id: u32::try_from(i(1)?).map_err(|_| "step_id is out of range".to_string())?,
        name: t(2)?,
        state: t(3)?,
        exit_code: i32::try_from(i(4)?).map_err(|_| "exit_code is out of range".to_string())?,
        start: i(5)?,
        end: i(6)?,
    };
    Ok((i(0)? as u64, step))
}

/// The jobs matching `where_sql` (over alias `j`), by job id, at most `limit`.
pub fn select_jobs(where_sql: &str, limit: usize) -> String {
    let cols: Vec<String> = JOB_COLUMNS.iter().map(|c| format!("j.{c}")).collect();
    format!(
        "SELECT {} FROM jobs j WHERE {where_sql} ORDER BY j.job_id LIMIT {limit}",
        cols.join(", ")
    )
}

/// The steps of the jobs matching `where_sql` whose id is at most placeholder `last_mark` (the
/// last job a limited [`select_jobs`] returned), by job and step id.
pub fn select_steps(where_sql: &str, last_mark: &str) -> String {
    let cols: Vec<String> = STEP_COLUMNS.iter().map(|c| format!("s.{c}")).collect();
    format!(
        "SELECT {} FROM steps s JOIN jobs j ON s.job_id = j.job_id \
         WHERE {where_sql} AND j.job_id <= {last_mark} ORDER BY s.job_id, s.step_id",
        cols.join(", ")
    )
}

/// Puts each step read back under its job (both lists in job id order).
pub fn attach_steps(jobs: &mut [AcctJob], steps: Vec<(u64, AcctStep)>) {
    let mut at = 0;
    for (job_id, step) in steps {
        while at < jobs.len() && jobs[at].job_id < job_id {
            at += 1;
        }
        if let Some(job) = jobs.get_mut(at).filter(|j| j.job_id == job_id) {
            job.steps.push(step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upsert_updates_every_column_but_the_key() {
        let sql = upsert("steps", &STEP_COLUMNS, "job_id, step_id");
        assert!(sql.starts_with("INSERT INTO steps (job_id, step_id, step_name"));
        assert!(sql.contains("VALUES ($1, $2, $3, $4, $5, $6, $7)"));
        assert!(sql.contains(
            "ON CONFLICT (job_id, step_id) DO UPDATE SET step_name = excluded.step_name"
        ));
        assert!(!sql.contains("job_id = excluded"));
    }

    #[test]
    fn a_job_has_one_value_per_column() {
        assert_eq!(job_params(&AcctJob::default()).len(), JOB_COLUMNS.len());
        assert_eq!(
            step_params(1, &AcctStep::default()).len(),
            STEP_COLUMNS.len()
        );
    }
}
