//! `--deadline`: a pending job that can no longer end before its deadline (now plus its
//! `--time-min`, else its time limit, is past it) is cancelled, as Slurm removes it. Jobs are
//! kept ordered by the last moment they could still start, so a tick looks only at those due.

use super::Driver;
use crate::image::{Record, State};

impl Driver {
    /// Remembers the last moment job `id`, submitted as `request`, could start and still meet
    /// its deadline, if it has one; `limit` is its time limit in the engine.
    pub(super) fn note_deadline(
        &mut self,
        id: u64,
        request: &sluice_api::SubmitRequest,
        limit: Option<u64>,
    ) {
        if let Some(key) = latest_start(request, limit) {
            self.deadlines.insert((key, id));
        }
    }

    /// Cancels the pending jobs whose last possible start has passed.
    pub(super) fn expire_deadlines(&mut self) {
        let now = self.engine.now();
        while let Some(&(key, id)) = self.deadlines.first() {
            if key >= now {
                break;
            }
            self.deadlines.pop_first();
            let Some(eid) = self.ids.engine(id) else {
                continue;
            };
            let limit = self.engine.job(eid).and_then(|j| j.time_limit);
            let Some(job) = self.store.image().jobs.get(&id) else {
                continue;
            };
            // An update since may have moved the deadline; its own entry stands then.
            if job.state != State::Pending || latest_start(&job.request, limit) != Some(key) {
                continue;
            }
            if self.engine.cancel(eid).is_ok() {
                tracing::info!("job {id}: cancelled, it can no longer end before its deadline");
                self.commit(Record::Cancel { id, time: now });
            }
        }
    }
}

/// The deadline less the least the job must run: its `--time-min`, else its time limit.
fn latest_start(req: &sluice_api::SubmitRequest, limit: Option<u64>) -> Option<i64> {
    let deadline = req.deadline?;
    let need = req.time_min.or(limit).unwrap_or(0);
    Some(deadline.saturating_sub(i64::try_from(need).unwrap_or(i64::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_start_leaves_time_min_or_the_limit() {
        let mut r = sluice_api::SubmitRequest {
            deadline: Some(10_000),
            ..Default::default()
        };
        assert_eq!(latest_start(&r, Some(3600)), Some(6400));
        r.time_min = Some(600);
        assert_eq!(latest_start(&r, Some(3600)), Some(9400));
        r.deadline = None;
        assert_eq!(latest_start(&r, Some(3600)), None);
    }
}
