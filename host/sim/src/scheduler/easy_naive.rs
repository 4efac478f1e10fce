//! A deliberately naive EASY: the same decisions as [`Easy`](super::Easy), recomputed from scratch.

use super::{JobKey, QueuedJob, ReplayScheduler, Submission};
use crate::job::Time;

/// EASY written the way simple simulators write it, as a speed baseline and a second opinion.
///
/// Every pass copies and sorts the running jobs to find the shadow time, and removes started jobs
/// from the middle of a `Vec`. It must make exactly the decisions [`Easy`](super::Easy) makes; the
/// tests compare the two schedules job by job.
#[derive(Debug, Clone)]
pub struct EasyNaive {
    free: u32,
    queue: Vec<QueuedJob>,
    /// (key, estimated end, processors) in start order.
    running: Vec<(JobKey, Time, u32)>,
}

impl EasyNaive {
    /// An empty machine with `procs` processors.
    pub fn new(procs: u32) -> Self {
        EasyNaive {
            free: procs,
            queue: Vec::new(),
            running: Vec::new(),
        }
    }

    fn start_at(&mut self, index: usize, now: Time, start: &mut Vec<JobKey>) {
        let job = self.queue.remove(index);
        self.free -= job.procs;
        self.running.push((job.key, now + job.estimate, job.procs));
        start.push(job.key);
    }
}

impl ReplayScheduler for EasyNaive {
    fn name(&self) -> &str {
        "easy-naive"
    }

    fn submit(&mut self, job: &Submission<'_>, _now: Time) {
        self.queue.push(job.into());
    }

    fn complete(&mut self, key: JobKey, _now: Time) {
        if let Some(pos) = self.running.iter().position(|r| r.0 == key) {
            self.free += self.running.remove(pos).2;
        }
    }

    fn schedule(&mut self, now: Time, start: &mut Vec<JobKey>) {
        while !self.queue.is_empty() && self.queue[0].procs <= self.free {
            self.start_at(0, now, start);
        }
        if self.queue.is_empty() {
            return;
        }
        let mut ends: Vec<(Time, JobKey, u32)> = self
            .running
            .iter()
            .map(|&(key, end, procs)| (end.max(now + 1), key, procs))
            .collect();
        ends.sort();
        let need = self.queue[0].procs;
        let mut available = self.free;
        let shadow = ends
            .iter()
            .find(|&&(_, _, procs)| {
                available += procs;
                available >= need
            })
            .map_or(Time::MIN, |&(end, _, _)| end);
        let free_at_shadow: u32 = self.free
            + ends
                .iter()
                .filter(|&&(end, _, _)| end <= shadow)
                .map(|&(_, _, procs)| procs)
                .sum::<u32>();
        let mut extra = free_at_shadow.saturating_sub(need);
        let mut i = 1;
        while i < self.queue.len() {
            let job = self.queue[i];
            let ends_in_time = now + job.estimate <= shadow;
            if job.procs <= self.free && (ends_in_time || job.procs <= extra) {
                if !ends_in_time {
                    extra -= job.procs;
                }
                self.start_at(i, now, start);
            } else {
                i += 1;
            }
        }
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }
}
