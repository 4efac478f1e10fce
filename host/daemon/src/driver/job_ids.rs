//! Which engine job each public job id is, and when ended jobs leave the engine. Public ids
//! are what users and the journal see; the engine numbers its jobs itself, and a requeue or an
//! update gives a job a new engine id under the same public one.

use std::collections::{BTreeMap, HashMap, VecDeque};

use sluice_engine::JobId;

/// The two-way map between public and engine job ids, and the engine ids due to be purged.
#[derive(Default)]
pub(super) struct JobIds {
    engine: BTreeMap<u64, JobId>,
    public: HashMap<JobId, u64>,
    /// Ended jobs to purge from the engine after MinJobAge: (when, engine id), oldest first.
    purge: VecDeque<(i64, JobId)>,
    /// Each job array's engine id by its public `ArrayJobId`; the engine keeps arrays for good.
    arrays: HashMap<u64, JobId>,
}

impl JobIds {
    /// Public job `public` is engine job `engine` from now on.
    pub(super) fn link(&mut self, public: u64, engine: JobId) {
        self.engine.insert(public, engine);
        self.public.insert(engine, public);
    }

    /// Forgets public job `public`'s engine job; returns it.
    pub(super) fn unlink(&mut self, public: u64) -> Option<JobId> {
        let engine = self.engine.remove(&public)?;
        self.public.remove(&engine);
        Some(engine)
    }

    /// The engine job of public job `public`, while the engine knows it.
    pub(super) fn engine(&self, public: u64) -> Option<JobId> {
        self.engine.get(&public).copied()
    }

    /// The public id of engine job `engine`.
    pub(super) fn public(&self, engine: JobId) -> Option<u64> {
        self.public.get(&engine).copied()
    }

    /// Public array `public` is engine array `engine`.
    pub(super) fn link_array(&mut self, public: u64, engine: JobId) {
        self.arrays.insert(public, engine);
    }

    /// The engine array of public array `public`, once a task of it was queued.
    pub(super) fn array(&self, public: u64) -> Option<JobId> {
        self.arrays.get(&public).copied()
    }

    /// Forgets public array `public` (its submission failed).
    pub(super) fn unlink_array(&mut self, public: u64) {
        self.arrays.remove(&public);
    }

    /// Engine job `engine` ended at `time`; it is purged once MinJobAge has passed.
    pub(super) fn purge_after(&mut self, time: i64, engine: JobId) {
        self.purge.push_back((time, engine));
    }

    /// The next engine job that ended at or before `horizon`, taken off the purge queue.
    pub(super) fn next_due(&mut self, horizon: i64) -> Option<JobId> {
        let &(time, engine) = self.purge.front()?;
        if time > horizon {
            return None;
        }
        self.purge.pop_front();
        Some(engine)
    }

    /// Forgets engine job `engine` once the engine has purged it.
    pub(super) fn purged(&mut self, engine: JobId) {
        if let Some(p) = self.public.remove(&engine) {
            self.engine.remove(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relinked_job_is_found_by_its_new_engine_id_only() {
        let mut ids = JobIds::default();
        ids.link(7, 100);
        assert_eq!((ids.engine(7), ids.public(100)), (Some(100), Some(7)));
        assert_eq!(ids.unlink(7), Some(100));
        ids.link(7, 101);
        assert_eq!(ids.public(100), None);
        assert_eq!((ids.engine(7), ids.public(101)), (Some(101), Some(7)));
    }

    #[test]
    fn ended_jobs_come_due_in_order_once_their_horizon_passes() {
        let mut ids = JobIds::default();
        ids.link(1, 10);
        ids.link(2, 20);
        ids.purge_after(100, 10);
        ids.purge_after(200, 20);
        assert_eq!(ids.next_due(50), None);
        assert_eq!(ids.next_due(150), Some(10));
        assert_eq!(ids.next_due(150), None);
        ids.purged(10);
        assert_eq!((ids.engine(1), ids.engine(2)), (None, Some(20)));
        assert_eq!(ids.next_due(200), Some(20));
    }
}
