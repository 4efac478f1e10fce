//! The accounting store's two threads, so the driver never waits on a database: a writer that
//! takes batches of ended jobs and reports which were stored, and a reader that answers
//! `GET /v1/accounting`. Each keeps its own connection, opened when first needed and again after
//! a failure, so a database that is down at start-up or goes away is simply retried.
//!
//! Both queues are bounded: the writer's holds one batch (the driver sends the next only when
//! the last is answered, and keeps the ids of what waits), the reader's a few queries (more are
//! refused with 503).
//!
//! The writer also prunes the store (`purge_job_after`, `purge_step_after`): after the first
//! batch it stores and then at most hourly, after a batch or when idle, before it reports the
//! batch, so the database's work never reaches the driver.

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

use sluice_accounting::{AccountingStore, AcctJob, Filter, Purge, Target};
use sluice_api::AcctAnswer;
use tokio::sync::oneshot;

use crate::api::{ApiError, ApiResult, answer};

/// Queries waiting for the reader at most; more are refused.
const QUERY_QUEUE: usize = 8;
/// The longest time between two purges of the store (slurmdbd purges hourly at the finest).
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// What became of one batch: its job ids, and whether the store took them.
pub struct Outcome {
    /// The jobs of the batch.
    pub ids: Vec<u64>,
    /// `Err` with the store's message when the batch was not stored.
    pub result: Result<(), String>,
}

/// A query for the reader and where its answer goes.
type Query = (Filter, oneshot::Sender<ApiResult>);

/// The driver's end of the two threads.
pub struct AcctLink {
    batches: SyncSender<Vec<AcctJob>>,
    /// Outcomes of batches, in order.
    pub outcomes: Receiver<Outcome>,
    queries: SyncSender<Query>,
    /// The store, as logs name it.
    pub describe: String,
}

impl AcctLink {
    /// Starts the writer and reader threads for `target`, the writer pruning it as `purge`
    /// says; they connect when first needed.
    pub fn start(target: Target, purge: Purge) -> std::io::Result<Self> {
        let (batches, batch_rx) = sync_channel::<Vec<AcctJob>>(1);
        let (outcome_tx, outcomes) = sync_channel(2);
        let (queries, query_rx) = sync_channel::<Query>(QUERY_QUEUE);
        let describe = target.describe();
        let t = target.clone();
        std::thread::Builder::new()
            .name("acct-writer".into())
            .spawn(move || {
                let mut conn = Connection::new(t);
                let mut pruner = Pruner { purge, last: None };
                loop {
                    let batch = match batch_rx.recv_timeout(PURGE_EVERY) {
                        Ok(b) => b,
                        Err(RecvTimeoutError::Timeout) => {
                            pruner.run_if_due(&mut conn);
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    };
                    let mut ids: Vec<u64> = batch.iter().map(|j| j.job_id).collect();
                    ids.dedup();
                    let result = conn.with(|s| s.store(&batch));
                    if result.is_ok() {
                        pruner.run_if_due(&mut conn);
                    }
                    if outcome_tx.send(Outcome { ids, result }).is_err() {
                        return;
                    }
                }
            })?;
        std::thread::Builder::new()
            .name("acct-reader".into())
            .spawn(move || {
                let mut conn = Connection::new(target);
                for (filter, reply) in query_rx {
                    let found = conn.with(|s| s.query(&filter, AcctAnswer::MAX_JOBS + 1));
                    let result = match found {
                        Ok(mut jobs) => {
                            let truncated = jobs.len() > AcctAnswer::MAX_JOBS;
                            jobs.truncate(AcctAnswer::MAX_JOBS);
                            answer(&AcctAnswer { jobs, truncated })
                        }
                        Err(e) => Err(ApiError::unavailable(format!(
                            "the accounting store cannot be read: {e}"
                        ))),
                    };
                    let _ = reply.send(result);
                }
            })?;
        Ok(Self {
            batches,
            outcomes,
            queries,
            describe,
        })
    }

    /// Hands a batch to the writer; gives it back if one is still being written.
    pub fn send(&self, batch: Vec<AcctJob>) -> Result<(), Vec<AcctJob>> {
        self.batches.try_send(batch).map_err(|e| match e {
            TrySendError::Full(b) | TrySendError::Disconnected(b) => b,
        })
    }

    /// Hands a query to the reader; answers 503 at once when it has too many waiting.
    pub fn query(&self, filter: Filter, reply: oneshot::Sender<ApiResult>) {
        if let Err(e) = self.queries.try_send((filter, reply)) {
            let (TrySendError::Full((_, reply)) | TrySendError::Disconnected((_, reply))) = e;
            let _ = reply.send(Err(ApiError::unavailable(
                "too many accounting queries at once; try again",
            )));
        }
    }
}

/// When the writer last pruned the store, and by what rule.
struct Pruner {
    purge: Purge,
    last: Option<Instant>,
}

impl Pruner {
    /// Purges what the rule says is too old, if the rule says anything and the last purge was
    /// [`PURGE_EVERY`] ago (or never); a failure is logged and tried again at the next chance.
    fn run_if_due(&mut self, conn: &mut Connection) {
        if !self.purge.is_set() || self.last.is_some_and(|t| t.elapsed() < PURGE_EVERY) {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let (jobs, steps) = self.purge.cutoffs(now);
        match conn.with(|s| s.purge(jobs, steps)) {
            Ok(p) => {
                self.last = Some(Instant::now());
                if p.jobs + p.steps > 0 {
                    tracing::info!(
                        "accounting store: purged {} job runs and {} steps (purge_job_after, \
                         purge_step_after)",
                        p.jobs,
                        p.steps
                    );
                }
            }
            Err(e) => tracing::warn!("accounting store: purging old records failed: {e}"),
        }
    }
}

/// A connection opened on first use and dropped after any failure, so the next use reconnects.
struct Connection {
    target: Target,
    store: Option<Box<dyn AccountingStore>>,
}

impl Connection {
    fn new(target: Target) -> Self {
        Self {
            target,
            store: None,
        }
    }

    fn with<T>(
        &mut self,
        f: impl FnOnce(&mut dyn AccountingStore) -> Result<T, sluice_accounting::AcctError>,
    ) -> Result<T, String> {
        let store = match &mut self.store {
            Some(s) => s,
            None => self
                .store
                .insert(sluice_accounting::open(&self.target).map_err(|e| e.to_string())?),
        };
        let result = f(store.as_mut()).map_err(|e| e.to_string());
        if result.is_err() {
            self.store = None;
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_accounting::purge::Age;

    fn ended(id: u64, days_ago: i64, now: i64) -> AcctJob {
        AcctJob {
            job_id: id,
            name: format!("job{id}"),
            user: "ann".into(),
            state: "COMPLETED".into(),
            end: now - days_ago * 86_400,
            steps: vec![sluice_api::AcctStep {
                step_id: 0,
                end: now - days_ago * 86_400,
                ..sluice_api::AcctStep::default()
            }],
            ..AcctJob::default()
        }
    }

    #[test]
    fn the_writer_purges_what_is_older_than_the_setting_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let target = Target::Sqlite(dir.path().join("accounting.db"));
        let purge = Purge {
            jobs: Some(Age::Days(30)),
            steps: Some(Age::Hours(24 * 7)),
        };
        let link = AcctLink::start(target, purge).unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        // 40 days: the run goes; 10 days: the job stays, its step goes; 1 day: all stays.
        let batch = vec![ended(1, 40, now), ended(2, 10, now), ended(3, 1, now)];
        link.send(batch).unwrap();
        let outcome = link.outcomes.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!((outcome.ids, outcome.result), (vec![1, 2, 3], Ok(())));
        let (tx, rx) = oneshot::channel();
        link.query(Filter::default(), tx);
        let answer: AcctAnswer =
            serde_json::from_value(rx.blocking_recv().unwrap().unwrap()).unwrap();
        let kept: Vec<(u64, usize)> = answer
            .jobs
            .iter()
            .map(|j| (j.job_id, j.steps.len()))
            .collect();
        assert_eq!(kept, vec![(2, 0), (3, 1)]);
    }
}
