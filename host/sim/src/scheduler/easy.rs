//! EASY backfilling (Mu'alem & Feitelson 2001): only the queue head holds a reservation.

use std::collections::VecDeque;

use super::running::RunningJobs;
use super::{JobKey, QueuedJob, ReplayScheduler, Submission};
use crate::job::Time;

/// EASY on a flat machine.
///
/// Each pass starts jobs from the head of the queue while they fit. If the head does not fit, its
/// *shadow time* is the believed moment enough processors are free for it, and the *extra*
/// processors are those it will leave unused then. A later job may start now (in queue order) if it
/// fits now and either ends by the shadow time (by its estimate) or needs no more than the extra
/// processors, which it then consumes. The head is never delayed as long as estimates hold.
#[derive(Debug, Clone)]
pub struct Easy {
    queue: VecDeque<QueuedJob>,
    running: RunningJobs,
}

impl Easy {
    /// An empty machine with `procs` processors.
    pub fn new(procs: u32) -> Self {
        Easy {
            queue: VecDeque::new(),
            running: RunningJobs::new(procs),
        }
    }

    fn start(&mut self, job: &QueuedJob, now: Time, start: &mut Vec<JobKey>) {
        self.running.start(job, now);
        start.push(job.key);
    }

    /// Backfills behind the blocked head, compacting the queue in place in one pass.
    fn backfill(&mut self, now: Time, start: &mut Vec<JobKey>) {
        let head = self.queue[0];
        let (shadow, mut extra) = self.running.shadow(head.procs, now);
        let len = self.queue.len();
        let mut kept = 1;
        let mut read = 1;
        while read < len && self.running.free() > 0 {
            let job = self.queue[read];
            read += 1;
            let fits = job.procs <= self.running.free();
            let ends_in_time = now + job.estimate <= shadow;
            if fits && (ends_in_time || job.procs <= extra) {
                if !ends_in_time {
                    extra -= job.procs;
                }
                self.start(&job, now, start);
            } else {
                self.queue[kept] = job;
                kept += 1;
            }
        }
        // Nothing more can start once the machine is full; close the gap left by started jobs.
        while read < len {
            self.queue[kept] = self.queue[read];
            kept += 1;
            read += 1;
        }
        self.queue.truncate(kept);
    }
}

impl ReplayScheduler for Easy {
    fn name(&self) -> &str {
        "easy"
    }

    fn submit(&mut self, job: &Submission<'_>, _now: Time) {
        self.queue.push_back(job.into());
    }

    fn complete(&mut self, key: JobKey, _now: Time) {
        self.running.complete(key);
    }

    fn schedule(&mut self, now: Time, start: &mut Vec<JobKey>) {
        while let Some(head) = self.queue.front().copied() {
            if head.procs > self.running.free() {
                break;
            }
            self.queue.pop_front();
            self.start(&head, now, start);
        }
        if self.queue.len() > 1 && self.running.free() > 0 {
            self.backfill(now, start);
        }
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }
}
