//! Ended jobs on their way to the accounting store, and `sluice acct`'s queries.
//!
//! A job that ends (or changes after its end) is noted; after each journal sync the driver
//! sends what was noted, in batches, to the writer thread, and journals `Accounted` for what it
//! reports stored. The journal is the durable copy until then: at start-up every ended job not
//! marked accounted is noted again. Only ids wait here, never records, whatever the store's
//! state; a store that fails is retried after 1, 2, 4 … 60 s.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use sluice_accounting::Filter;
use sluice_api::AcctQuery;
use sluice_client::identity::Identity;
use tokio::sync::oneshot;

use super::Driver;
use crate::accounting::AcctLink;
use crate::api::{ApiError, ApiResult};
use crate::image::{Image, Record};

/// Jobs per batch written in one transaction.
const BATCH: usize = 256;
/// The longest wait before a failing store is tried again.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// What the driver keeps about jobs not yet in the store.
pub(super) struct AcctState {
    link: AcctLink,
    /// Ended jobs to send (again), by id.
    noted: BTreeSet<u64>,
    /// The batch the writer has, if any.
    in_flight: Vec<u64>,
    /// No batch is sent before this (the store failed).
    retry_at: Option<Instant>,
    backoff: Duration,
}

impl AcctState {
    /// The state at start-up: every ended job the store may not have yet.
    pub(super) fn new(link: AcctLink, image: &Image) -> Self {
        let noted = image
            .jobs
            .values()
            .filter(|j| unstored(j))
            .map(|j| j.id)
            .collect::<BTreeSet<_>>();
        if !noted.is_empty() {
            tracing::info!(
                "{} ended jobs to record in the accounting store {}",
                noted.len(),
                link.describe
            );
        }
        Self {
            link,
            noted,
            in_flight: Vec::new(),
            retry_at: None,
            backoff: Duration::from_secs(1),
        }
    }

    /// Ended jobs not yet known to be stored (a job in flight and noted again counts once).
    pub(super) fn unstored(&self) -> usize {
        let in_flight_only = self
            .in_flight
            .iter()
            .filter(|id| !self.noted.contains(id))
            .count();
        self.noted.len() + in_flight_only
    }
}

/// Whether the store lacks something of `job`: its end, or a run that ended in a requeue.
fn unstored(job: &crate::image::JobRecord) -> bool {
    (job.state.is_final() && !job.accounted) || !job.runs.is_empty()
}

impl Driver {
    /// Notes job `id` for the store if it lacks the job's end or one of its requeued runs.
    pub(super) fn accounting_note(&mut self, id: u64) {
        if self
            .store
            .image()
            .jobs
            .get(&id)
            .is_some_and(|j| unstored(j))
        {
            self.acct.noted.insert(id);
        }
    }

    /// Whether the writer has a batch or one is due: the loop then wakes often, so a backlog
    /// (after an outage or an upgrade) drains at the store's pace rather than one batch a second.
    pub(super) fn accounting_busy(&self) -> bool {
        !self.acct.in_flight.is_empty()
            || (!self.acct.noted.is_empty()
                && self.acct.retry_at.is_none_or(|t| Instant::now() >= t))
    }

    /// Takes the writer's outcomes and sends the next batch. Called right after a journal sync,
    /// so every job noted so far has its end durable before the store sees it.
    pub(super) fn accounting_flush(&mut self) {
        while let Ok(outcome) = self.acct.link.outcomes.try_recv() {
            self.acct.in_flight.clear();
            match outcome.result {
                Ok(()) => {
                    if self.acct.retry_at.take().is_some() {
                        tracing::info!(
                            "accounting store {} is taking jobs again",
                            self.acct.link.describe
                        );
                    }
                    self.acct.backoff = Duration::from_secs(1);
                    // A job that changed while its batch was written goes again, so the
                    // `Accounted` mark never covers a state the store does not have.
                    let ids: Vec<u64> = outcome
                        .ids
                        .into_iter()
                        .filter(|id| !self.acct.noted.contains(id))
                        .collect();
                    if !ids.is_empty() {
                        self.commit(Record::Accounted { ids });
                    }
                }
                Err(e) => {
                    if self.acct.retry_at.is_none() {
                        tracing::warn!(
                            "accounting store: {e}; ended jobs wait in the journal and are retried"
                        );
                    }
                    self.acct.noted.extend(outcome.ids);
                    self.acct.retry_at = Some(Instant::now() + self.acct.backoff);
                    self.acct.backoff = (self.acct.backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
        if !self.acct.in_flight.is_empty()
            || self.acct.noted.is_empty()
            || self.acct.retry_at.is_some_and(|t| Instant::now() < t)
        {
            return;
        }
        let mut ids = Vec::with_capacity(BATCH);
        while ids.len() < BATCH {
            let Some(id) = self.acct.noted.pop_first() else {
                break;
            };
            ids.push(id);
        }
        let image = self.store.image();
        let batch = ids
            .iter()
            .filter_map(|id| image.jobs.get(id))
            .flat_map(|j| crate::acct_row::acct_runs(j))
            .collect();
        match self.acct.link.send(batch) {
            Ok(()) => self.acct.in_flight = ids,
            Err(_) => self.acct.noted.extend(ids),
        }
    }

    /// `GET /v1/accounting`: answered by the reader thread, with [`visible_users`] applied.
    pub(super) fn accounting_query(
        &mut self,
        who: &Identity,
        query: AcctQuery,
        reply: oneshot::Sender<ApiResult>,
    ) {
        let mut filter = match Filter::from_query(&query) {
            Ok(f) => f,
            Err(e) => {
                let _ = reply.send(Err(ApiError::bad(format!("GET /v1/accounting: {e}"))));
                return;
            }
        };
        let private = self.private("jobs");
        visible_users(&mut filter, who, self.is_admin(who), private);
        self.acct.link.query(filter, reply);
    }
}

/// Slurm's PrivateData words.
const PRIVATE_DATA: [&str; 9] = [
    "accounts",
    "cloud",
    "events",
    "jobs",
    "nodes",
    "partitions",
    "reservations",
    "usage",
    "users",
];

/// Checks daemon.toml's `private_data`: each word one of Slurm's, any case.
pub(crate) fn check_private_data(words: &[String]) -> Result<(), String> {
    match words
        .iter()
        .find(|w| !PRIVATE_DATA.contains(&w.to_ascii_lowercase().as_str()))
    {
        Some(w) => Err(format!(
            "private_data: '{w}' is not one of Slurm's PrivateData words ({})",
            PRIVATE_DATA.join(", ")
        )),
        None => Ok(()),
    }
}

/// Whose records a query may read: an admin's or, unless the site keeps jobs private
/// (`private_data` has `jobs`, sacct's `PrivateData=jobs`), anyone's, as asked; otherwise the
/// caller's own only, whatever users they named.
fn visible_users(filter: &mut Filter, who: &Identity, admin: bool, private: bool) {
    if private && !admin {
        filter.users = vec![who.user.clone()];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sacct_s_selections_arrive_from_the_query_string_as_a_filter() {
        // As `sluice acct --name sim,post -r gpu -q high -N n[1,3] -D` sends them.
        let q: AcctQuery = serde_urlencoded::from_str(
            "names=sim,post&partitions=gpu&qos=high&nodes=n%5B1,3%5D&duplicates=true",
        )
        .unwrap();
        let f = Filter::from_query(&q).unwrap();
        assert_eq!(f.names, vec!["sim", "post"]);
        assert_eq!(
            (f.partitions.as_slice(), f.qos.as_slice()),
            (&["gpu".to_string()][..], &["high".to_string()][..])
        );
        assert_eq!(f.nodes, vec!["n1", "n3"]);
        assert!(f.duplicates);
        assert!(
            !Filter::from_query(&AcctQuery::default())
                .unwrap()
                .duplicates
        );
        assert!(serde_urlencoded::from_str::<AcctQuery>("cluster=x").is_err());
    }

    #[test]
    fn private_jobs_limit_non_admins_to_their_own_records() {
        let ann = Identity {
            uid: 1000,
            user: "ann".into(),
            known: true,
        };
        let asked = |users: &[&str]| Filter {
            users: users.iter().map(|u| u.to_string()).collect(),
            ..Filter::default()
        };
        let seen = |users: &[&str], admin, private| {
            let mut f = asked(users);
            visible_users(&mut f, &ann, admin, private);
            f.users
        };
        assert_eq!(seen(&[], false, true), vec!["ann"]);
        assert_eq!(seen(&["bob"], false, true), vec!["ann"]);
        assert!(seen(&[], true, true).is_empty(), "an admin sees everyone's");
        // Without PrivateData=jobs, sacct -a shows everyone's, -u bob bob's.
        assert!(seen(&[], false, false).is_empty());
        assert_eq!(seen(&["bob"], false, false), vec!["bob"]);
        assert!(check_private_data(&["jobs".into(), "Usage".into()]).is_ok());
        let e = check_private_data(&["job".into()]).unwrap_err();
        assert!(e.contains("'job'") && e.contains("reservations"), "{e}");
    }
}
