//! The replay scheduler interface and the fast flat-machine schedulers that implement it.
//!
//! The replay driver owns the virtual clock and the jobs' real run times; a scheduler only ever sees
//! what a real one would: submissions (with the user's estimate, never the run time), completions,
//! and the question "which queued jobs start now?". The Slurm-like engine implements the same trait.

mod conservative;
mod easy;
mod easy_accasim;
mod easy_naive;
pub mod engine;
mod fcfs;
mod kind;
mod profile;
mod running;

pub use conservative::Conservative;
pub use easy::Easy;
pub use easy_accasim::EasyAccasim;
pub use easy_naive::EasyNaive;
pub use engine::{EngineOptions, EngineScheduler, FlatMachine, Passes};
pub use fcfs::Fcfs;
pub use kind::{SchedulerKind, UnknownScheduler};

use crate::job::{SlurmRequest, SwfFields, Time};

/// The driver's handle for a job between submission and completion.
///
/// Keys are small dense integers (a slot index), so a scheduler can index a `Vec` by
/// [`JobKey::index`]; a key is reused for a later job once [`ReplayScheduler::complete`] has been
/// called for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobKey(pub u32);

impl JobKey {
    /// The slot index, for schedulers that keep per-job state in a `Vec`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a scheduler learns when a job is submitted: everything except its real run time.
#[derive(Debug, Clone, Copy)]
pub struct Submission<'a> {
    /// The driver's handle for this job until it completes.
    pub key: JobKey,
    /// Position in submission order (0, 1, 2, …): the tie-breaker among equal submit times, which
    /// the driver has already ordered by job id.
    pub seq: u64,
    /// The job number from the trace.
    pub id: u64,
    /// Submission time; equal to the `now` of the [`ReplayScheduler::submit`] call.
    pub submit: Time,
    /// Processors requested (at most the machine size: larger jobs are dropped by the driver).
    pub procs: u32,
    /// The runtime estimate the scheduler may plan with (the user's requested time).
    pub estimate: Time,
    /// The SWF bookkeeping fields (user, group, queue, partition, …).
    pub swf: &'a SwfFields,
    /// The Slurm-like request for JSON-lines workloads.
    pub slurm: Option<&'a SlurmRequest>,
}

/// Something that gets submissions and completions on a virtual clock and answers which jobs start.
///
/// The driver calls, for each distinct event time `now` in increasing order:
/// 1. [`complete`](Self::complete) for every job ending at `now` (ties in submission order),
/// 2. [`submit`](Self::submit) for every job submitted at `now` (in submission order),
/// 3. [`schedule`](Self::schedule) once, then once more at the same `now` if a started job has an
///    actual duration of 0 and therefore completes at once.
///
/// A job the scheduler returns from `schedule` is running from `now` until the driver calls
/// `complete` for it. Under `run-to-completion` that may be later than `now + estimate`: the
/// scheduler must cope with jobs that outlive their estimates (the built-in ones believe such a
/// job ends one second from now). The driver verifies that every started job was queued and that
/// the processors it holds never exceed the machine; a violation ends the replay with an error.
pub trait ReplayScheduler {
    /// A short name for reports, e.g. `easy`.
    fn name(&self) -> &str;

    /// A job joins the queue at `now`.
    fn submit(&mut self, job: &Submission<'_>, now: Time);

    /// A running job ended at `now`; its processors are free again.
    fn complete(&mut self, key: JobKey, now: Time);

    /// Appends to `start` the queued jobs that start at `now`, in the order they are started.
    fn schedule(&mut self, now: Time, start: &mut Vec<JobKey>);

    /// How many jobs are waiting (for the queue-length plot and stall detection).
    fn queued(&self) -> usize;

    /// A time after `now` at which the scheduler wants [`schedule`](Self::schedule) called even if
    /// no job arrives or ends (periodic backfill, priority aging); `None` if it has no such need.
    fn next_wakeup(&self, now: Time) -> Option<Time> {
        let _ = now;
        None
    }

    /// Moves into `out` the jobs submitted since the last call that the scheduler refused (with
    /// why); the driver forgets them and counts them in `refused`. The flat schedulers accept
    /// every job the driver hands them.
    fn take_refused(&mut self, out: &mut Vec<(JobKey, String)>) {
        let _ = out;
    }
}

impl<S: ReplayScheduler + ?Sized> ReplayScheduler for Box<S> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn submit(&mut self, job: &Submission<'_>, now: Time) {
        (**self).submit(job, now)
    }
    fn complete(&mut self, key: JobKey, now: Time) {
        (**self).complete(key, now)
    }
    fn schedule(&mut self, now: Time, start: &mut Vec<JobKey>) {
        (**self).schedule(now, start)
    }
    fn queued(&self) -> usize {
        (**self).queued()
    }
    fn next_wakeup(&self, now: Time) -> Option<Time> {
        (**self).next_wakeup(now)
    }
    fn take_refused(&mut self, out: &mut Vec<(JobKey, String)>) {
        (**self).take_refused(out)
    }
}

/// The part of a submission the flat schedulers keep in their queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct QueuedJob {
    key: JobKey,
    procs: u32,
    estimate: Time,
}

impl From<&Submission<'_>> for QueuedJob {
    fn from(job: &Submission<'_>) -> Self {
        QueuedJob {
            key: job.key,
            procs: job.procs,
            estimate: job.estimate,
        }
    }
}
