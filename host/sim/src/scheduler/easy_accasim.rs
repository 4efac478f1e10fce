//! AccaSim's released `EASYBackfilling` ("EBF"), rule for rule, on one-processor nodes.

use std::collections::VecDeque;

use super::running::RunningJobs;
use super::{JobKey, QueuedJob, ReplayScheduler, Submission};
use crate::job::Time;

/// The EASY of AccaSim's released package (`accasim.base.scheduler_class.EASYBackfilling`).
///
/// It differs from Mu'alem & Feitelson's EASY ([`super::Easy`]) in three places:
///
/// * **Fixed reservation.** The first job that does not fit becomes *blocked*, and its reservation
///   time is computed once: the first running job's start + estimate (taken literally, even when
///   already past) after which enough processors are free. It is never recomputed.
/// * **No early start.** The blocked job is tried only at passes at or after that time, and at
///   every later pass until it fits. Processors freed by jobs that end before their estimate do
///   not let it start earlier.
/// * **Unprotected backfill.** Every later job that fits now starts, in queue order, whatever its
///   estimate: AccaSim passes the reservation to its allocator with an empty reserved-node list,
///   and the allocator only excludes reserved nodes, so the time check guards nothing.
///
/// A pass is made at every event time with a non-empty queue and at the blocked head's reservation
/// time, as in AccaSim's simulator loop, whose time points include every started job's believed end.
#[derive(Debug, Clone)]
pub struct EasyAccasim {
    queue: VecDeque<QueuedJob>,
    running: RunningJobs,
    /// The blocked head's reservation time; `Some` exactly while `queue[0]` is blocked.
    reservation: Option<Time>,
}

impl EasyAccasim {
    /// An empty machine with `procs` processors.
    pub fn new(procs: u32) -> Self {
        EasyAccasim {
            queue: VecDeque::new(),
            running: RunningJobs::new(procs),
            reservation: None,
        }
    }

    fn try_start(&mut self, job: &QueuedJob, now: Time, start: &mut Vec<JobKey>) -> bool {
        let fits = job.procs <= self.running.free();
        if fits {
            self.running.start(job, now);
            start.push(job.key);
        }
        fits
    }
}

impl ReplayScheduler for EasyAccasim {
    fn name(&self) -> &str {
        "easy-accasim"
    }

    fn submit(&mut self, job: &Submission<'_>, _now: Time) {
        self.queue.push_back(job.into());
    }

    fn complete(&mut self, key: JobKey, _now: Time) {
        self.running.complete(key);
    }

    fn schedule(&mut self, now: Time, start: &mut Vec<JobKey>) {
        if let Some(time) = self.reservation
            && time <= now
        {
            let head = self.queue[0];
            if self.try_start(&head, now, start) {
                self.queue.pop_front();
                self.reservation = None;
            }
        }
        if self.reservation.is_none() {
            while let Some(head) = self.queue.front().copied() {
                if !self.try_start(&head, now, start) {
                    // Jobs started in this pass count among the running jobs, as in AccaSim.
                    self.reservation = self.running.first_fit_by_estimate(head.procs);
                    break;
                }
                self.queue.pop_front();
            }
        }
        if self.queue.len() > 1 {
            // Behind the blocked head, anything that fits now starts.
            let mut kept = 1;
            for read in 1..self.queue.len() {
                let job = self.queue[read];
                if !self.try_start(&job, now, start) {
                    self.queue[kept] = job;
                    kept += 1;
                }
            }
            self.queue.truncate(kept);
        }
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }

    /// AccaSim makes a pass at every started job's believed end, so at the reservation time even
    /// when the jobs it waited for ended early; without that pass a head whose machine emptied
    /// before its reservation waited for an unrelated later submission, or for ever at the trace's end.
    fn next_wakeup(&self, now: Time) -> Option<Time> {
        self.reservation.filter(|&time| time > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(key: u32, procs: u32, estimate: Time) -> QueuedJob {
        QueuedJob {
            key: JobKey(key),
            procs,
            estimate,
        }
    }

    fn run(sched: &mut EasyAccasim, jobs: &[QueuedJob], now: Time) -> Vec<JobKey> {
        sched.queue.extend(jobs.iter().copied());
        let mut start = Vec::new();
        sched.schedule(now, &mut start);
        start
    }

    #[test]
    fn the_blocked_job_waits_for_its_reservation_time_even_if_processors_free_earlier() {
        let mut s = EasyAccasim::new(10);
        assert_eq!(run(&mut s, &[job(0, 6, 100)], 0), vec![JobKey(0)]);
        assert_eq!(run(&mut s, &[job(1, 8, 50)], 1), vec![]);
        s.complete(JobKey(0), 10);
        // Mu'alem & Feitelson's EASY would start job 1 now; AccaSim waits for t = 100.
        assert_eq!(run(&mut s, &[], 10), vec![]);
        assert_eq!(run(&mut s, &[], 100), vec![JobKey(1)]);
    }

    #[test]
    fn backfill_ignores_the_reservation() {
        let mut s = EasyAccasim::new(10);
        run(&mut s, &[job(0, 6, 100)], 0);
        // Job 2 ends long after job 1's reservation (t = 100) and still starts.
        let started = run(&mut s, &[job(1, 8, 50), job(2, 4, 1_000)], 1);
        assert_eq!(started, vec![JobKey(2)]);
    }

    #[test]
    fn a_passed_reservation_is_kept_and_retried_at_every_pass() {
        let mut s = EasyAccasim::new(10);
        run(&mut s, &[job(0, 6, 100)], 0);
        run(&mut s, &[job(1, 8, 50), job(2, 4, 1_000)], 1);
        s.complete(JobKey(0), 150);
        assert_eq!(run(&mut s, &[], 150), vec![]);
        assert_eq!(s.reservation, Some(100));
        s.complete(JobKey(2), 400);
        assert_eq!(run(&mut s, &[], 400), vec![JobKey(1)]);
        assert_eq!(s.reservation, None);
    }

    #[test]
    fn a_future_reservation_asks_for_a_pass_at_its_time() {
        let mut s = EasyAccasim::new(10);
        run(&mut s, &[job(0, 6, 100)], 0);
        run(&mut s, &[job(1, 8, 50)], 1);
        assert_eq!(s.next_wakeup(1), Some(100));
        s.complete(JobKey(0), 10);
        assert_eq!(run(&mut s, &[], 10), vec![]);
        assert_eq!(s.next_wakeup(10), Some(100));
        assert_eq!(run(&mut s, &[], 100), vec![JobKey(1)]);
        assert_eq!(s.next_wakeup(100), None);
    }
}
