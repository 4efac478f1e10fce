//! The running jobs as a planning scheduler sees them: processors held and believed end times.

use std::collections::BTreeSet;

use super::{JobKey, QueuedJob};
use crate::job::Time;

/// Free processors and the running jobs ordered by the time the scheduler believes they end.
///
/// A job is believed to end at its start plus its estimate. Once that moment has passed and the job
/// is still running (possible only under `run-to-completion`), it is believed to end one second from
/// now: the earliest end that is still in the future, which keeps "free now" and "free at the first
/// believed end" distinct.
#[derive(Debug, Clone)]
pub(super) struct RunningJobs {
    free: u32,
    by_end: BTreeSet<(Time, JobKey)>,
    /// (estimated end, processors) by key slot.
    slots: Vec<Option<(Time, u32)>>,
}

impl RunningJobs {
    pub(super) fn new(procs: u32) -> Self {
        RunningJobs {
            free: procs,
            by_end: BTreeSet::new(),
            slots: Vec::new(),
        }
    }

    /// Processors free right now.
    pub(super) fn free(&self) -> u32 {
        self.free
    }

    pub(super) fn start(&mut self, job: &QueuedJob, now: Time) {
        let end = now + job.estimate;
        let index = job.key.index();
        if self.slots.len() <= index {
            self.slots.resize(index + 1, None);
        }
        self.slots[index] = Some((end, job.procs));
        self.by_end.insert((end, job.key));
        self.free -= job.procs;
    }

    /// Forgets a completed job; unknown keys (jobs this scheduler never started) are ignored.
    pub(super) fn complete(&mut self, key: JobKey) {
        if let Some((end, procs)) = self.slots.get_mut(key.index()).and_then(Option::take) {
            self.by_end.remove(&(end, key));
            self.free += procs;
        }
    }

    /// Believed (end, processors) of each running job in end order, ties by key.
    pub(super) fn releases(&self, now: Time) -> impl Iterator<Item = (Time, u32)> + '_ {
        self.by_end.iter().map(move |&(end, key)| {
            let procs = self.slots[key.index()].map_or(0, |(_, p)| p);
            (end.max(now + 1), procs)
        })
    }

    /// The first believed end, taken literally (start + estimate, even if already past), at which
    /// at least `procs` processors are free; `None` if even all running jobs ending is not enough.
    pub(super) fn first_fit_by_estimate(&self, procs: u32) -> Option<Time> {
        let mut available = self.free;
        self.by_end.iter().find_map(|&(end, key)| {
            available += self.slots[key.index()].map_or(0, |(_, p)| p);
            (available >= procs).then_some(end)
        })
    }

    /// EASY's shadow time and extra processors for a head job needing `procs`: the believed time
    /// when enough processors are free for it, and how many of those it leaves over.
    pub(super) fn shadow(&self, procs: u32, now: Time) -> (Time, u32) {
        let mut available = self.free;
        let mut shadow = None;
        for (end, released) in self.releases(now) {
            // Every job believed to end at the shadow time frees processors then, so all of them
            // count towards the extra processors, whatever their order among equal end times.
            if shadow.is_some_and(|s| end > s) {
                break;
            }
            available += released;
            if shadow.is_none() && available >= procs {
                shadow = Some(end);
            }
        }
        if let Some(shadow) = shadow {
            return (shadow, available - procs);
        }
        // Unreachable while the head job fits the machine (the driver drops larger ones); a shadow
        // before any possible end with no extra processors forbids backfilling rather than guess.
        (Time::MIN, 0)
    }
}
