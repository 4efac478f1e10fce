//! The replay driver: an event-driven virtual clock feeding a [`ReplayScheduler`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::time::Instant;

use crate::error::ReadError;
use crate::histogram::WaitHistogram;
use crate::job::{Time, WorkloadJob};
use crate::metrics::{Metrics, MetricsAccumulator};
use crate::record::JobRecord;
use crate::runtime::RuntimeMode;
use crate::scheduler::{JobKey, ReplayScheduler, Submission};
use crate::timeline::Timeline;
use crate::workload::JobSource;

/// How often, in submissions, the observer hears about progress.
const PROGRESS_EVERY: u64 = 4096;

/// The machine and semantics of one replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayConfig {
    /// Processors of the flat machine; jobs asking for more are dropped and counted.
    pub procs: u32,
    /// What happens to jobs that outlive their requested time.
    pub runtime: RuntimeMode,
    /// Keep every [`JobRecord`] in [`ReplayOutput::records`] (needed for comparisons; memory then
    /// grows with the trace).
    pub keep_records: bool,
}

/// Receives per-job results and progress while the replay runs.
pub trait ReplayObserver {
    /// A job ended. Jobs are reported in end-time order, ties in submission order.
    fn job_finished(&mut self, record: &JobRecord) -> io::Result<()> {
        let _ = record;
        Ok(())
    }

    /// `submitted` jobs have been handed to the scheduler (called every few thousand jobs).
    fn progress(&mut self, submitted: u64) {
        let _ = submitted;
    }
}

impl ReplayObserver for () {}

impl<T: ReplayObserver + ?Sized> ReplayObserver for &mut T {
    fn job_finished(&mut self, record: &JobRecord) -> io::Result<()> {
        (**self).job_finished(record)
    }
    fn progress(&mut self, submitted: u64) {
        (**self).progress(submitted)
    }
}

impl<A: ReplayObserver, B: ReplayObserver> ReplayObserver for (A, B) {
    fn job_finished(&mut self, record: &JobRecord) -> io::Result<()> {
        self.0.job_finished(record)?;
        self.1.job_finished(record)
    }
    fn progress(&mut self, submitted: u64) {
        self.0.progress(submitted);
        self.1.progress(submitted);
    }
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The workload could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// An observer (CSV writer, …) failed.
    #[error("cannot write replay results: {0}")]
    Output(#[source] io::Error),
    /// The machine has no processors.
    #[error("the machine has 0 processors; give --procs or a trace header with MaxProcs")]
    NoProcessors,
    /// The scheduler broke the contract of [`ReplayScheduler`].
    #[error("scheduler `{scheduler}` at t={at}: {message}")]
    Scheduler {
        /// Scheduler name.
        scheduler: String,
        /// Virtual time of the violation.
        at: Time,
        /// What it did wrong.
        message: String,
    },
    /// Jobs remain queued but nothing is running and nothing more will arrive.
    #[error(
        "scheduler `{scheduler}` stalled at t={at}: {queued} jobs queued, none running, no more submissions"
    )]
    Stalled {
        /// Scheduler name.
        scheduler: String,
        /// Virtual time of the last event.
        at: Time,
        /// Jobs left in the queue.
        queued: usize,
    },
}

/// The results of one replay.
#[derive(Debug, Clone)]
pub struct ReplayOutput {
    /// Summary metrics.
    pub metrics: Metrics,
    /// Series and distribution for the report.
    pub timeline: Timeline,
    /// Every job's record in end order, if [`ReplayConfig::keep_records`] was set.
    pub records: Vec<JobRecord>,
}

impl ReplayOutput {
    /// `scheduler / runtime`, for plot legends and report headings.
    pub fn label(&self) -> String {
        format!("{} / {}", self.metrics.scheduler, self.metrics.runtime)
    }
}

/// A job between submission and completion.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    seq: u64,
    id: u64,
    submit: Time,
    procs: u32,
    duration: Time,
    killed: bool,
    start: Option<Time>,
}

/// Replays `source` through `scheduler` on a machine of `config.procs` processors.
///
/// Memory stays proportional to the jobs in flight (queued or running), unless
/// `config.keep_records` is set. Jobs submitted at the same second are submitted in job-id order;
/// at each event time completions are processed before submissions, then the scheduler is asked
/// once which jobs start.
pub fn replay<J, S>(
    source: &mut J,
    scheduler: &mut S,
    config: &ReplayConfig,
    mut observer: impl ReplayObserver,
) -> Result<ReplayOutput, ReplayError>
where
    J: JobSource + ?Sized,
    S: ReplayScheduler + ?Sized,
{
    if config.procs == 0 {
        return Err(ReplayError::NoProcessors);
    }
    let wall = Instant::now();
    let mut driver = Driver::new(config);
    let mut next = source.next().transpose()?;
    let mut timeline = Timeline::new(next.as_ref().map_or(0, |job| job.submit));
    let mut arrivals: Vec<WorkloadJob> = Vec::new();
    let mut started: Vec<JobKey> = Vec::new();
    let mut refused: Vec<(JobKey, String)> = Vec::new();
    let mut wakeup: Option<Time> = None;
    let mut now = 0;
    loop {
        let next_end = driver.completions.peek().map(|Reverse((end, _, _))| *end);
        let next_submit = next.as_ref().map(|job| job.submit);
        let Some(t) = [next_end, next_submit, wakeup].into_iter().flatten().min() else {
            break;
        };
        now = t;
        while let Some(&Reverse((end, _, slot))) = driver.completions.peek() {
            if end != now {
                break;
            }
            driver.completions.pop();
            let record = driver.finish(slot);
            scheduler.complete(JobKey(slot), now);
            observer
                .job_finished(&record)
                .map_err(ReplayError::Output)?;
        }
        while let Some(job) = next.take_if(|job| job.submit == now) {
            arrivals.push(job);
            next = source.next().transpose()?;
        }
        // Stable, so equal ids keep their file order.
        arrivals.sort_by_key(|job| job.id);
        for job in arrivals.drain(..) {
            if let Some((key, seq)) = driver.admit(&job) {
                let submission = Submission {
                    key,
                    seq,
                    id: job.id,
                    submit: job.submit,
                    procs: job.procs,
                    estimate: job.requested_time,
                    swf: &job.swf,
                    slurm: job.slurm.as_deref(),
                };
                scheduler.submit(&submission, now);
                if driver.submitted.is_multiple_of(PROGRESS_EVERY) {
                    observer.progress(driver.submitted);
                }
            }
        }
        scheduler.take_refused(&mut refused);
        for (key, _why) in refused.drain(..) {
            driver.refuse(key);
        }
        scheduler.schedule(now, &mut started);
        for key in started.drain(..) {
            driver
                .start(key, now)
                .map_err(|message| ReplayError::Scheduler {
                    scheduler: scheduler.name().to_string(),
                    at: now,
                    message,
                })?;
        }
        wakeup = scheduler.next_wakeup(now).filter(|&w| w > now);
        timeline.state(now, driver.busy, scheduler.queued());
    }
    if scheduler.queued() > 0 {
        return Err(ReplayError::Stalled {
            scheduler: scheduler.name().to_string(),
            at: now,
            queued: scheduler.queued(),
        });
    }
    let mut metrics = driver.metrics.finish(
        scheduler.name(),
        config.runtime.as_str(),
        config.procs,
        source.dropped() + driver.oversize + driver.refused,
        driver.oversize,
        wall.elapsed().as_secs_f64(),
    );
    metrics.refused = driver.refused;
    // Slots are reused as jobs end, so there are as many as were ever in flight at once.
    metrics.peak_in_flight = driver.slots.len() as u64;
    let records = if config.keep_records {
        driver.records
    } else {
        Vec::new()
    };
    Ok(ReplayOutput {
        metrics,
        timeline: Timeline {
            waits: driver.waits,
            ..timeline
        },
        records,
    })
}

/// The driver's bookkeeping: jobs in flight by slot, the completion heap, and the results.
struct Driver {
    config: ReplayConfig,
    slots: Vec<Option<InFlight>>,
    free_slots: Vec<u32>,
    /// (end, seq, slot): ties at the same end resolve in submission order.
    completions: BinaryHeap<Reverse<(Time, u64, u32)>>,
    busy: u32,
    submitted: u64,
    oversize: u64,
    refused: u64,
    metrics: MetricsAccumulator,
    waits: WaitHistogram,
    records: Vec<JobRecord>,
}

impl Driver {
    fn new(config: &ReplayConfig) -> Self {
        Driver {
            config: *config,
            slots: Vec::new(),
            free_slots: Vec::new(),
            completions: BinaryHeap::new(),
            busy: 0,
            submitted: 0,
            oversize: 0,
            refused: 0,
            metrics: MetricsAccumulator::default(),
            waits: WaitHistogram::default(),
            records: Vec::new(),
        }
    }

    /// Takes a job into flight and returns its key and sequence number, or `None` if it cannot
    /// ever run on this machine.
    fn admit(&mut self, job: &WorkloadJob) -> Option<(JobKey, u64)> {
        if job.procs > self.config.procs {
            self.oversize += 1;
            return None;
        }
        let duration = self.config.runtime.duration(job);
        let in_flight = InFlight {
            seq: self.submitted,
            id: job.id,
            submit: job.submit,
            procs: job.procs,
            duration,
            killed: duration < job.run_time,
            start: None,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(in_flight);
                slot
            }
            None => {
                self.slots.push(Some(in_flight));
                (self.slots.len() - 1) as u32
            }
        };
        let seq = self.submitted;
        self.submitted += 1;
        self.metrics.submitted(job.submit);
        Some((JobKey(slot), seq))
    }

    /// Forgets a job the scheduler refused at submission.
    fn refuse(&mut self, key: JobKey) {
        if let Some(slot) = self.slots.get_mut(key.index())
            && slot.take_if(|job| job.start.is_none()).is_some()
        {
            self.free_slots.push(key.0);
            self.refused += 1;
        }
    }

    fn start(&mut self, key: JobKey, now: Time) -> Result<(), String> {
        let job = self
            .slots
            .get_mut(key.index())
            .and_then(Option::as_mut)
            .ok_or_else(|| format!("started unknown job key {}", key.0))?;
        if job.start.is_some() {
            return Err(format!("started job {} twice", job.id));
        }
        if self.busy + job.procs > self.config.procs {
            return Err(format!(
                "started job {} needing {} processors with only {} free",
                job.id,
                job.procs,
                self.config.procs - self.busy
            ));
        }
        job.start = Some(now);
        self.busy += job.procs;
        self.completions
            .push(Reverse((now + job.duration, job.seq, key.0)));
        Ok(())
    }

    fn finish(&mut self, slot: u32) -> JobRecord {
        let job = self.slots[slot as usize]
            .take()
            .expect("a completion is scheduled only for a job in flight");
        self.free_slots.push(slot);
        self.busy -= job.procs;
        let start = job.start.expect("only started jobs complete");
        let record = JobRecord {
            seq: job.seq,
            id: job.id,
            submit: job.submit,
            start,
            end: start + job.duration,
            procs: job.procs,
            killed: job.killed,
        };
        self.metrics.finished(&record);
        self.waits.add(record.wait());
        if self.config.keep_records {
            self.records.push(record);
        }
        record
    }
}
