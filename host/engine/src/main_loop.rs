//! Slurm's main scheduling loop (`_schedule`): strict queue order, and once a job of a partition is
//! left pending for resources, the rest of that partition waits for this cycle.

use crate::config::SchedulerKind;
use crate::engine::Engine;
use crate::event::Loop;
use crate::job::{JobId, Reason};
use crate::pass_buffers::MainPassBuffers;
use crate::queue::QueueRecord;
use crate::stats::PassStats;

impl Engine {
    /// Pending jobs that may be tried now (not held, begin time passed, dependencies met), in id order.
    pub(crate) fn collect_eligible(&mut self, now: i64) -> Vec<JobId> {
        let ids: Vec<JobId> = self.pending.iter().copied().collect();
        ids.into_iter()
            .filter(|&id| self.refresh_job(id, now))
            .collect()
    }

    /// The sorted queue of eligible jobs, or `None` when the priority answer was refused
    /// ([`crate::priority::PriorityPass::order`]).
    pub(crate) fn build_queue(&mut self, now: i64) -> Option<Vec<QueueRecord>> {
        let eligible = self.collect_eligible(now);
        self.priority_pass().order(&eligible, now)
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
            None => self.build_queue(now).ok_or(PassStats {
                stopped_by: Some("priority answer refused"),
                ..PassStats::default()
            })?,
        };
        if records.is_empty() {
            return Err(PassStats::default());
        }
        self.selection_begun = false;
        Ok(records)
    }

    /// One main-loop pass. `full` is the periodic run over the whole queue; otherwise the
    /// event-triggered run that stops after `default_queue_depth` jobs. Returns the queue it
    /// sorted, for a backfill pass in the same tick ([`Engine::open_pass`]).
    pub(crate) fn run_main_pass(&mut self, full: bool) -> Option<Vec<QueueRecord>> {
        self.sched_requested = false;
        let now = self.clock.now();
        let started_at = self.clock.micros();
        let params = self.pass_params();
        let fcfs = self.config.scheduler == SchedulerKind::Fcfs;
        let records = match self.open_pass(now, None) {
            Ok(records) => records,
            Err(stats) => {
                self.last_main_stats = stats;
                return None;
            }
        };
        let mut stats = PassStats {
            queued: records.len(),
            ..PassStats::default()
        };
        let mut buffers = std::mem::take(&mut self.main_pass_buffers);
        let MainPassBuffers {
            usable,
            plan,
            failed_part,
            part_tested,
            start,
        } = &mut buffers;
        // Owned: the pass changes `self` while it holds this.
        usable.clone_from(self.nodes.usable_nodes());
        plan.exclude.clear_to(self.nodes.len());
        failed_part.clear();
        failed_part.resize(self.parts.len(), false);
        part_tested.clear();
        part_tested.resize(self.parts.len(), 0);
        let depth = if full {
            usize::MAX
        } else {
            params.default_queue_depth as usize
        };
        let budget = params.max_sched_time.saturating_mul(1_000_000);

        for rec in &records {
            if stats.tested >= depth {
                stats.stopped_by = Some("default_queue_depth");
                break;
            }
            if self.clock.micros().saturating_sub(started_at) >= budget {
                stats.stopped_by = Some("max_sched_time");
                break;
            }
            if params.sched_max_job_start > 0
                && stats.started >= params.sched_max_job_start as usize
            {
                stats.stopped_by = Some("sched_max_job_start");
                break;
            }
            if !self.jobs[&rec.job].is_pending() {
                continue;
            }
            let p = rec.partition.index();
            if failed_part[p] {
                self.jobs.get_mut(&rec.job).expect("queued job").reason = Reason::Priority;
                continue;
            }
            if params.partition_job_depth > 0 && part_tested[p] >= params.partition_job_depth {
                continue;
            }
            part_tested[p] += 1;
            stats.tested += 1;
            match self.try_start(rec, now, usable, plan, Loop::Main, start) {
                Ok(()) => stats.started += 1,
                Err(reason) => {
                    self.jobs.get_mut(&rec.job).expect("queued job").reason = reason;
                    if fcfs {
                        // Plain FCFS: nothing behind the first waiting job may start.
                        for r in &records {
                            let job = self.jobs.get_mut(&r.job).expect("queued job");
                            if job.is_pending() && r.job != rec.job && job.reason == Reason::None {
                                job.reason = Reason::Priority;
                            }
                        }
                        stats.stopped_by = Some("fcfs");
                        break;
                    }
                    if matches!(reason, Reason::Resources | Reason::ReqNodeNotAvail) {
                        // fail_by_part: the partition's nodes are off limits for the rest of the cycle.
                        failed_part[p] = true;
                        plan.exclude.union_with(&self.parts[p].nodes);
                    }
                }
            }
        }
        self.last_main_stats = stats;
        self.main_pass_buffers = buffers;
        Some(records)
    }
}
