//! Owns no state: the queue a pass walks, built from every pending job or taken from the ready
//! queue kept between passes.
//!
//! A full build checks every pending job, asks for the priorities due and sorts. An engine that
//! calculates only new jobs' priorities between recalculations
//! ([`crate::config::EngineConfig::priority_new_jobs_alone`], the daemon) keeps the result in
//! the ready queue, and its event-triggered passes then check only the jobs that changed and
//! take the records they look at from its head.

use crate::config::SchedulerKind;
use crate::engine::Engine;
use crate::job::JobId;
use crate::queue::QueueRecord;
use crate::stats::PassStats;

impl Engine {
    /// Pending jobs that may be tried now (not held, begin time passed, dependencies met), in
    /// id order, and the others.
    fn collect_eligible(&mut self, now: i64) -> (Vec<JobId>, Vec<JobId>) {
        let ids: Vec<JobId> = self.pending.iter().copied().collect();
        // Sized up front: most pending jobs are eligible, and `partition` grew both lists a
        // job at a time at every pass.
        let mut eligible = Vec::with_capacity(ids.len());
        let mut waiting = Vec::new();
        for id in ids {
            if self.refresh_job(id, now) {
                eligible.push(id);
            } else {
                waiting.push(id);
            }
        }
        (eligible, waiting)
    }

    /// Whether passes keep the queue between them: when asked to, and only when new jobs'
    /// priorities are calculated alone (otherwise each one changes every job's) and the order
    /// is not plain FCFS (whose failed pass marks every queued job).
    fn keeps_ready_queue(&self) -> bool {
        self.config.keep_ready_queue
            && self.config.priority_new_jobs_alone
            && !self.config.defer_lone_priority
            && self.config.scheduler != SchedulerKind::Fcfs
    }

    /// Whether an event-triggered pass may take its records from the ready queue: it is kept,
    /// complete, and no recalculation of every priority is due.
    pub(crate) fn ready_queue_usable(&self) -> bool {
        self.keeps_ready_queue() && self.pending.ready.is_complete() && !self.priorities.due
    }

    /// The sorted queue of every eligible job, or `None` when the priority answer was refused
    /// ([`crate::priority::PriorityPass::order`]); kept in the ready queue when passes keep it.
    pub(crate) fn build_queue(&mut self, now: i64) -> Option<Vec<QueueRecord>> {
        let (eligible, waiting) = self.collect_eligible(now);
        let records = self.priority_pass().order(&eligible, now)?;
        if self.keeps_ready_queue() {
            let recheck = eligible
                .into_iter()
                .filter(|id| !self.jobs[id].spec.dependencies.is_empty());
            let unsettled: Vec<JobId> = waiting.into_iter().chain(recheck).collect();
            self.pending.ready.rebuild(&records, unsettled);
        } else {
            self.pending.ready.clear();
        }
        Some(records)
    }

    /// The start both loops share: the sorted queue, and the selection policy due its node table
    /// at the pass's first placement (a pass that places nothing costs the policy nothing). `Err`
    /// is the whole pass's record when there is nothing to do or the priority answer was refused.
    ///
    /// `sorted` is the queue a main-loop pass of the same tick sorted, for the backfill pass
    /// right after it: less the jobs that pass started it is what building the queue again
    /// would give, since nothing else can have changed in between (eligibility follows holds,
    /// begin times and ended jobs; the order, stored priorities).
    pub(crate) fn open_pass(
        &mut self,
        now: i64,
        sorted: Option<Vec<QueueRecord>>,
    ) -> Result<Vec<QueueRecord>, PassStats> {
        let records = match sorted {
            Some(mut records) => {
                records.retain(|r| self.jobs[&r.job].is_pending());
                records
            }
            None => self.build_queue(now).ok_or_else(refused)?,
        };
        self.opened(records)
    }

    /// [`Engine::open_pass`] from the ready queue: the jobs that changed since the last pass
    /// are checked (and new ones given a priority), and the first `chunk` records handed out;
    /// the pass asks for more with [`Engine::extend_head`].
    pub(crate) fn open_ready(
        &mut self,
        now: i64,
        chunk: usize,
    ) -> Result<Vec<QueueRecord>, PassStats> {
        self.settle_changed(now).ok_or_else(refused)?;
        #[cfg(debug_assertions)]
        self.check_ready_queue(now);
        let mut head = Vec::with_capacity(chunk);
        self.pending.ready.extend_after(None, chunk, &mut head);
        self.opened(head)
    }

    /// Appends the next `chunk` records of the ready queue after the last of `records`;
    /// returns whether there were any.
    pub(crate) fn extend_head(&self, records: &mut Vec<QueueRecord>, chunk: usize) -> bool {
        let last = records.last().copied();
        self.pending.ready.extend_after(last, chunk, records) > 0
    }

    fn opened(&mut self, records: Vec<QueueRecord>) -> Result<Vec<QueueRecord>, PassStats> {
        if records.is_empty() {
            return Err(PassStats::default());
        }
        self.selection_begun = false;
        Ok(records)
    }

    /// Checks the jobs the ready queue lists as changed or waiting: the eligible ones are
    /// queued (new ones with a priority calculated for them alone), the others wait for the
    /// next pass. `None` when the priority answer was refused, which leaves them all waiting.
    fn settle_changed(&mut self, now: i64) -> Option<()> {
        let mut eligible = Vec::new();
        let mut fresh = Vec::new();
        for id in self.pending.ready.take_unsettled() {
            if self.refresh_job(id, now) {
                if self.jobs[&id].priority_time.is_none() {
                    fresh.push(id);
                }
                eligible.push(id);
            } else {
                self.pending.ready.unsettle(id);
            }
        }
        if !fresh.is_empty() && self.priority_pass().prioritize(&fresh, now).is_none() {
            for id in eligible {
                self.pending.ready.unsettle(id);
            }
            return None;
        }
        for id in eligible {
            let records = self.priority_inputs().stored_priorities(&self.jobs, &[id]);
            let recheck = !self.jobs[&id].spec.dependencies.is_empty();
            self.pending.ready.settle(id, records, recheck);
        }
        Some(())
    }

    /// Debug builds check at every pass from the ready queue that it holds what a full build
    /// would give: a change to a pending job that forgot to unsettle it shows here.
    #[cfg(debug_assertions)]
    fn check_ready_queue(&self, now: i64) {
        let eligible: Vec<JobId> = self
            .pending
            .iter()
            .copied()
            .filter(|id| self.blocked_reason(&self.jobs[id], now).is_none())
            .collect();
        let mut expected = self
            .priority_inputs()
            .stored_priorities(&self.jobs, &eligible);
        crate::queue::sort(&mut expected);
        let kept: Vec<QueueRecord> = self.pending.ready.records().copied().collect();
        assert_eq!(
            kept, expected,
            "the ready queue differs from the pending jobs it stands for"
        );
    }
}

/// The record of a pass the priority policy's refused answer stopped.
fn refused() -> PassStats {
    PassStats {
        stopped_by: Some("priority answer refused"),
        ..PassStats::default()
    }
}
