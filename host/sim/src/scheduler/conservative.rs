//! Conservative backfilling: every queued job holds a reservation, and none may be delayed by a later one.

use std::collections::VecDeque;

use super::profile::Profile;
use super::running::RunningJobs;
use super::{JobKey, QueuedJob, ReplayScheduler, Submission};
use crate::job::Time;

/// Conservative backfilling on a flat machine.
///
/// Each pass rebuilds the availability profile from the running jobs' believed ends and gives every
/// queued job, in queue order, the earliest slot where it fits for its whole estimate without
/// touching an earlier job's slot; the jobs whose slot is "now" start. Rebuilding at every event,
/// instead of keeping the reservation made at submission, is the usual schedule compression after
/// early completions, applied eagerly; it is what keeps the profile right when a job outlives its
/// estimate under `run-to-completion`.
#[derive(Debug, Clone)]
pub struct Conservative {
    queue: VecDeque<QueuedJob>,
    running: RunningJobs,
    profile: Profile,
}

impl Conservative {
    /// An empty machine with `procs` processors.
    pub fn new(procs: u32) -> Self {
        Conservative {
            queue: VecDeque::new(),
            running: RunningJobs::new(procs),
            profile: Profile::default(),
        }
    }
}

impl ReplayScheduler for Conservative {
    fn name(&self) -> &str {
        "conservative"
    }

    fn submit(&mut self, job: &Submission<'_>, _now: Time) {
        self.queue.push_back(job.into());
    }

    fn complete(&mut self, key: JobKey, _now: Time) {
        self.running.complete(key);
    }

    fn schedule(&mut self, now: Time, start: &mut Vec<JobKey>) {
        if self.queue.is_empty() || self.running.free() == 0 {
            return;
        }
        self.profile
            .reset(now, self.running.free(), self.running.releases(now));
        let len = self.queue.len();
        let (mut kept, mut read) = (0, 0);
        // Once nothing is free now, later jobs cannot start in this pass, and their reservations
        // are rebuilt in the next one anyway.
        while read < len && self.profile.free_now() > 0 {
            let job = self.queue[read];
            read += 1;
            let (at, step) = self.profile.earliest_start(job.procs, job.estimate);
            self.profile.reserve(step, job.procs, job.estimate);
            if at == now {
                self.running.start(&job, now);
                start.push(job.key);
            } else {
                self.queue[kept] = job;
                kept += 1;
            }
        }
        while read < len {
            self.queue[kept] = self.queue[read];
            kept += 1;
            read += 1;
        }
        self.queue.truncate(kept);
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }
}
