//! The accounting store's two threads, so the driver never waits on a database: a writer that
//! takes batches of ended jobs and reports which were stored, and a reader that answers
//! `GET /v1/accounting`. Each keeps its own connection, opened when first needed and again after
//! a failure, so a database that is down at start-up or goes away is simply retried.
//!
//! Both queues are bounded: the writer's holds one batch (the driver sends the next only when
//! the last is answered, and keeps the ids of what waits), the reader's a few queries (more are
//! refused with 503).

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use sluice_accounting::{AccountingStore, AcctJob, Filter, Target};
use sluice_api::AcctAnswer;
use tokio::sync::oneshot;

use crate::api::{ApiError, ApiResult, answer};

/// Queries waiting for the reader at most; more are refused.
const QUERY_QUEUE: usize = 8;

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
    /// Starts the writer and reader threads for `target`; they connect when first needed.
    pub fn start(target: Target) -> std::io::Result<Self> {
        let (batches, batch_rx) = sync_channel::<Vec<AcctJob>>(1);
        let (outcome_tx, outcomes) = sync_channel(2);
        let (queries, query_rx) = sync_channel::<Query>(QUERY_QUEUE);
        let describe = target.describe();
        let t = target.clone();
        std::thread::Builder::new()
            .name("acct-writer".into())
            .spawn(move || {
                let mut conn = Connection::new(t);
                for batch in batch_rx {
                    let ids = batch.iter().map(|j| j.job_id).collect();
                    let result = conn.with(|s| s.store(&batch));
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
