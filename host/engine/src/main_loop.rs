//! Owns no state: Slurm's main scheduling loop (`_schedule`), run on the engine.
//!
//! Strict queue order; once a job of a partition is left pending for resources, the rest of
//! that partition waits for this cycle.

use std::ops::ControlFlow;

use sluice_cluster::SchedulerParams;

use crate::config::SchedulerKind;
use crate::engine::Engine;
use crate::event::Loop;
use crate::job::Reason;
use crate::pass_buffers::MainPassBuffers;
use crate::queue::{Gate, QueueRecord};
use crate::stats::PassStats;

/// What one main-loop pass holds while it walks the queue.
struct MainPass<'b> {
    now: i64,
    /// The clock's microseconds at the pass's start, which max_sched_time counts from.
    started_at: u64,
    /// max_sched_time in microseconds.
    budget: u64,
    /// Records to look at most: the whole queue, or default_queue_depth.
    depth: usize,
    /// Records counted against `depth` so far: those tested, and those skipped because their
    /// partition failed this pass, as Slurm's `job_depth` counts them (it is checked before
    /// the failed-partition test), so an event-triggered pass never walks the whole queue.
    considered: usize,
    /// Plain FCFS: the pass ends at the first job that cannot start.
    fcfs: bool,
    params: SchedulerParams,
    stats: PassStats,
    buffers: &'b mut MainPassBuffers,
}

impl Engine {
    /// One main-loop pass. `full` is the periodic run over the whole queue; otherwise the
    /// event-triggered run that stops after `default_queue_depth` jobs. Returns the queue it
    /// sorted when it sorted all of it, for a backfill pass in the same tick
    /// ([`Engine::open_pass`]).
    pub(crate) fn run_main_pass(&mut self, full: bool) -> Option<Vec<QueueRecord>> {
        self.pacing.requested = false;
        let now = self.clock.now();
        let started_at = self.clock.micros();
        // An event-triggered pass looks at about default_queue_depth records: it takes them
        // from the ready queue's head in chunks rather than sorting every pending job.
        let partial = !full && self.ready_queue_usable();
        let chunk = (self.config.params.default_queue_depth as usize).clamp(16, 1024) + 1;
        let opened = if partial {
            self.open_ready(now, chunk)
        } else {
            self.open_pass(now, None)
        };
        let mut records = match opened {
            Ok(records) => records,
            Err(stats) => {
                self.last_main_stats = stats;
                return None;
            }
        };
        let queued = if partial {
            self.pending.ready.len()
        } else {
            records.len()
        };
        let mut buffers = std::mem::take(&mut self.pass_buffers.main);
        let mut pass = self.begin_main((now, started_at), full, queued, &mut buffers);
        let mut next = 0;
        loop {
            if next == records.len() && !(partial && self.extend_head(&mut records, chunk)) {
                break;
            }
            let rec = records[next];
            next += 1;
            match self.main_gate(&mut pass, &rec) {
                Gate::Test => {}
                Gate::Skip => continue,
                Gate::Stop(why) => {
                    pass.stats.stopped_by = Some(why);
                    break;
                }
            }
            pass.stats.tested += 1;
            if self.held_by_limits(&rec) {
                continue;
            }
            let MainPassBuffers {
                usable,
                plan,
                start,
                ..
            } = &mut *pass.buffers;
            match self.try_start(&rec, pass.now, usable, plan, Loop::Main, start) {
                Ok(()) => pass.stats.started += 1,
                Err(reason) => {
                    if self
                        .main_failed(&mut pass, &records, &rec, reason)
                        .is_break()
                    {
                        pass.stats.stopped_by = Some("fcfs");
                        break;
                    }
                }
            }
        }
        self.last_main_stats = pass.stats;
        self.pass_buffers.main = buffers;
        // A partial queue would leave a backfill pass in the same tick without the rest.
        (!partial).then_some(records)
    }

    /// Sets up a main-loop pass over `queued` records: its limits, and `buffers` (the engine's
    /// from the last pass) cleared. `started_at` is the clock's microseconds when the pass
    /// began, which max_sched_time counts from.
    fn begin_main<'b>(
        &mut self,
        (now, started_at): (i64, u64),
        full: bool,
        queued: usize,
        buffers: &'b mut MainPassBuffers,
    ) -> MainPass<'b> {
        let params = self.pass_params();
        // Owned: the pass changes `self` while it holds this.
        buffers.usable.clone_from(self.nodes.usable_nodes());
        buffers.plan.exclude.clear_to(self.nodes.len());
        buffers.failed_part.clear();
        buffers.failed_part.resize(self.parts.len(), false);
        buffers.part_tested.clear();
        buffers.part_tested.resize(self.parts.len(), 0);
        MainPass {
            now,
            started_at,
            budget: params.max_sched_time.saturating_mul(1_000_000),
            depth: if full {
                usize::MAX
            } else {
                params.default_queue_depth as usize
            },
            considered: 0,
            fcfs: self.config.scheduler == SchedulerKind::Fcfs,
            params,
            stats: PassStats {
                queued,
                ..PassStats::default()
            },
            buffers,
        }
    }

    /// Whether the record is tried, skipped, or ends the pass: the queue depth, the time
    /// budget, sched_max_job_start, a partition that failed this pass (its later jobs wait for
    /// Priority, and count against the depth) and partition_job_depth (counting the record
    /// against its partition when tried).
    fn main_gate(&mut self, pass: &mut MainPass<'_>, rec: &QueueRecord) -> Gate {
        let params = &pass.params;
        if pass.considered >= pass.depth {
            return Gate::Stop("default_queue_depth");
        }
        if self.clock.micros().saturating_sub(pass.started_at) >= pass.budget {
            return Gate::Stop("max_sched_time");
        }
        if params.sched_max_job_start > 0
            && pass.stats.started >= params.sched_max_job_start as usize
        {
            return Gate::Stop("sched_max_job_start");
        }
        if !self.jobs[&rec.job].is_pending() {
            return Gate::Skip;
        }
        let p = rec.partition.index();
        if pass.buffers.failed_part[p] {
            pass.considered += 1;
            self.jobs.get_mut(&rec.job).expect("queued job").reason = Reason::Priority;
            return Gate::Skip;
        }
        let tested = &mut pass.buffers.part_tested[p];
        if params.partition_job_depth > 0 && *tested >= params.partition_job_depth {
            return Gate::Skip;
        }
        *tested += 1;
        pass.considered += 1;
        Gate::Test
    }

    /// Records why the record's job did not start. Under FCFS nothing behind it may start
    /// (`Break`); a job short of resources closes its partition's nodes for the rest of the
    /// pass (Slurm's fail_by_part).
    fn main_failed(
        &mut self,
        pass: &mut MainPass<'_>,
        records: &[QueueRecord],
        rec: &QueueRecord,
        reason: Reason,
    ) -> ControlFlow<()> {
        self.jobs.get_mut(&rec.job).expect("queued job").reason = reason;
        if pass.fcfs {
            for r in records {
                let job = self.jobs.get_mut(&r.job).expect("queued job");
                if job.is_pending() && r.job != rec.job && job.reason == Reason::None {
                    job.reason = Reason::Priority;
                }
            }
            return ControlFlow::Break(());
        }
        if matches!(reason, Reason::Resources | Reason::ReqNodeNotAvail) {
            let p = rec.partition.index();
            pass.buffers.failed_part[p] = true;
            pass.buffers.plan.exclude.union_with(&self.parts[p].nodes);
        }
        ControlFlow::Continue(())
    }
}
