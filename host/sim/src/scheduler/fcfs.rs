//! First come, first served: start jobs in queue order and stop at the first that does not fit.

use std::collections::VecDeque;

use super::{JobKey, QueuedJob, ReplayScheduler, Submission};
use crate::job::Time;

/// Strict FCFS on a flat machine: no job ever overtakes an earlier one.
#[derive(Debug, Clone)]
pub struct Fcfs {
    free: u32,
    queue: VecDeque<QueuedJob>,
    /// Processors held, by key slot.
    held: Vec<u32>,
}

impl Fcfs {
    /// An empty machine with `procs` processors.
    pub fn new(procs: u32) -> Self {
        Fcfs {
            free: procs,
            queue: VecDeque::new(),
            held: Vec::new(),
        }
    }
}

impl ReplayScheduler for Fcfs {
    fn name(&self) -> &str {
        "fcfs"
    }

    fn submit(&mut self, job: &Submission<'_>, _now: Time) {
        self.queue.push_back(job.into());
    }

    fn complete(&mut self, key: JobKey, _now: Time) {
        if let Some(procs) = self.held.get_mut(key.index()) {
            self.free += std::mem::take(procs);
        }
    }

    fn schedule(&mut self, _now: Time, start: &mut Vec<JobKey>) {
        while let Some(job) = self.queue.front().copied() {
            if job.procs > self.free {
                break;
            }
            self.queue.pop_front();
            self.free -= job.procs;
            let index = job.key.index();
            if self.held.len() <= index {
                self.held.resize(index + 1, 0);
            }
            self.held[index] = job.procs;
            start.push(job.key);
        }
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }
}
