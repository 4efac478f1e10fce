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
pub const VERSION: u32 = 2;

/// Creates the version table if the store is empty; both databases accept it.
pub const VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)";

/// The migrations, in order: migration `n` (1-based) takes a store from version `n - 1` to `n`.
/// Each is a list of statements run in one transaction.
pub const MIGRATIONS: &[&[&str]] = &[
    &[
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
    ],
    // 2: one row per run (`restarts` joins the key), so a requeued job's earlier runs are kept
    // (sacct -D); each run's nodes as rows (sacct -N); indexes for purging old rows. Tables are
    // rebuilt and renamed, as neither database can change a primary key in place.
    &[
        "CREATE TABLE jobs_v2 (
        job_id BIGINT NOT NULL,
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
        reason TEXT,
        PRIMARY KEY (job_id, restarts)
    )",
        "INSERT INTO jobs_v2 SELECT * FROM jobs",
        "CREATE TABLE steps_v2 (
        job_id BIGINT NOT NULL,
        restarts BIGINT NOT NULL,
        step_id BIGINT NOT NULL,
        step_name TEXT NOT NULL,
        state TEXT NOT NULL,
        exit_code BIGINT NOT NULL,
        start_time BIGINT NOT NULL,
        end_time BIGINT NOT NULL,
        PRIMARY KEY (job_id, restarts, step_id),
        FOREIGN KEY (job_id, restarts) REFERENCES jobs_v2 (job_id, restarts) ON DELETE CASCADE
    )",
        "INSERT INTO steps_v2 SELECT s.job_id, j.restarts, s.step_id, s.step_name, s.state,
        s.exit_code, s.start_time, s.end_time FROM steps s JOIN jobs j ON s.job_id = j.job_id",
        "CREATE TABLE job_nodes (
        job_id BIGINT NOT NULL,
        restarts BIGINT NOT NULL,
        node TEXT NOT NULL,
        PRIMARY KEY (job_id, restarts, node),
        FOREIGN KEY (job_id, restarts) REFERENCES jobs_v2 (job_id, restarts) ON DELETE CASCADE
    )",
        "DROP TABLE steps",
        "DROP TABLE jobs",
        "ALTER TABLE jobs_v2 RENAME TO jobs",
        "ALTER TABLE steps_v2 RENAME TO steps",
        "CREATE INDEX jobs_by_end ON jobs (end_time)",
        "CREATE INDEX jobs_by_user ON jobs (user_name, end_time)",
        "CREATE INDEX steps_by_end ON steps (end_time)",
        "CREATE INDEX job_nodes_by_node ON job_nodes (node)",
    ],
];

/// The migration after which each stored run's `node_list` is expanded into `job_nodes` (a
/// hostlist cannot be expanded in SQL): see [`NODE_LISTS`] and [`node_params`].
pub const NODES_MIGRATION: u32 = 2;

/// Every stored run's node list, for filling `job_nodes` after [`NODES_MIGRATION`].
pub const NODE_LISTS: &str = "SELECT job_id, restarts, node_list FROM jobs";

/// Adds one node of a run.
pub const INSERT_NODE: &str = "INSERT INTO job_nodes (job_id, restarts, node) VALUES ($1, $2, $3)";

/// Deletes a run's nodes before its current ones are written.
pub const DELETE_NODES: &str = "DELETE FROM job_nodes WHERE job_id = $1 AND restarts = $2";

/// The rows of `job_nodes` for a run on `node_list`: one per node, each as `(job_id, restarts,
/// node)` values. A list that is not a hostlist (never written by the daemon) gives none.
pub fn node_params(job_id: i64, restarts: i64, node_list: &str) -> Vec<Vec<Param>> {
    let mut nodes = sluice_hostlist::expand(node_list).unwrap_or_default();
    nodes.sort();
    nodes.dedup();
    nodes
        .into_iter()
        .map(|n| vec![int(job_id), int(restarts), Param::Text(Some(n))])
        .collect()
}

/// Deletes the runs (steps and nodes with them) that ended before `$1` (`PurgeJobAfter`).
pub const PURGE_JOBS: &str = "DELETE FROM jobs WHERE end_time < $1";

/// Deletes the steps that ended before `$1` (`PurgeStepAfter`); their jobs stay.
pub const PURGE_STEPS: &str = "DELETE FROM steps WHERE end_time < $1";

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
pub const STEP_COLUMNS: [&str; 8] = [
    "job_id",
    "restarts",
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

/// Deletes a run's steps before its current ones are written (a step it no longer has goes).
pub const DELETE_STEPS: &str = "DELETE FROM steps WHERE job_id = $1 AND restarts = $2";

/// The key of a job's row: one row per run.
pub const JOB_KEY: &str = "job_id, restarts";

/// The key of a step's row.
pub const STEP_KEY: &str = "job_id, restarts, step_id";

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

/// The values of one step's row of `job`'s run, in [`STEP_COLUMNS`] order.
pub fn step_params(job: &AcctJob, step: &AcctStep) -> Vec<Param> {
    vec![
        int(job.job_id as i64),
        int(job.restarts),
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

/// Which run of which job a step row belongs to: (job id, restarts).
pub type RunKey = (u64, u32);

/// Reads a step row (columns in [`STEP_COLUMNS`] order): its run and the step.
pub fn step_from_row(row: &impl RowRead) -> Result<(RunKey, AcctStep), String> {
    let i = |c: usize| {
        row.int(c)?
            .ok_or_else(|| format!("{} is null", STEP_COLUMNS[c]))
    };
    let t = |c: usize| {
        row.text(c)?
            .ok_or_else(|| format!("{} is null", STEP_COLUMNS[c]))
    };
    let step = AcctStep {
        step_id: u32::try_from(i(2)?).map_err(|_| "step_id is out of range".to_string())?,
        name: t(3)?,
        state: t(4)?,
        exit_code: i32::try_from(i(5)?).map_err(|_| "exit_code is out of range".to_string())?,
        start: i(6)?,
        end: i(7)?,
    };
    let restarts = u32::try_from(i(1)?).map_err(|_| "restarts is out of range".to_string())?;
    Ok(((i(0)? as u64, restarts), step))
}

/// The runs matching `where_sql` (over alias `j`), by job id and run, at most `limit`; unless
/// `every_run`, only the newest run of each job among those that match (sacct without `-D`).
pub fn select_jobs(where_sql: &str, limit: usize, every_run: bool) -> String {
    let cols: Vec<String> = JOB_COLUMNS.iter().map(|c| format!("j.{c}")).collect();
    let cols = cols.join(", ");
    if every_run {
        return format!(
            "SELECT {cols} FROM jobs j WHERE {where_sql} ORDER BY j.job_id, j.restarts LIMIT {limit}"
        );
    }
    format!(
        "SELECT {cols} FROM (SELECT j.*, ROW_NUMBER() OVER \
         (PARTITION BY j.job_id ORDER BY j.restarts DESC) AS newest FROM jobs j WHERE {where_sql}) j \
         WHERE j.newest = 1 ORDER BY j.job_id, j.restarts LIMIT {limit}"
    )
}

/// The steps of the runs matching `where_sql` whose job id is at most placeholder `last_mark`
/// (the last job a limited [`select_jobs`] returned), by job, run and step id. Steps of runs
/// [`select_jobs`] left out are dropped by [`attach_steps`].
pub fn select_steps(where_sql: &str, last_mark: &str) -> String {
    let cols: Vec<String> = STEP_COLUMNS.iter().map(|c| format!("s.{c}")).collect();
    format!(
        "SELECT {} FROM steps s JOIN jobs j ON s.job_id = j.job_id AND s.restarts = j.restarts \
         WHERE {where_sql} AND j.job_id <= {last_mark} ORDER BY s.job_id, s.restarts, s.step_id",
        cols.join(", ")
    )
}

/// Puts each step read back under its run (both lists in job id and run order).
pub fn attach_steps(jobs: &mut [AcctJob], steps: Vec<(RunKey, AcctStep)>) {
    let mut at = 0;
    for (key, step) in steps {
        while at < jobs.len() && (jobs[at].job_id, jobs[at].restarts) < key {
            at += 1;
        }
        if let Some(job) = jobs.get_mut(at).filter(|j| (j.job_id, j.restarts) == key) {
            job.steps.push(step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upsert_updates_every_column_but_the_key() {
        let sql = upsert("steps", &STEP_COLUMNS, STEP_KEY);
        assert!(sql.starts_with("INSERT INTO steps (job_id, restarts, step_id, step_name"));
        assert!(sql.contains("VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"));
        assert!(sql.contains(
            "ON CONFLICT (job_id, restarts, step_id) DO UPDATE SET step_name = excluded.step_name"
        ));
        assert!(!sql.contains("job_id = excluded") && !sql.contains("restarts = excluded"));
    }

    #[test]
    fn a_job_has_one_value_per_column() {
        assert_eq!(job_params(&AcctJob::default()).len(), JOB_COLUMNS.len());
        assert_eq!(
            step_params(&AcctJob::default(), &AcctStep::default()).len(),
            STEP_COLUMNS.len()
        );
    }
}
