//! Owns no state: the backfill pass, run on the engine with storage it borrows from it.
//!
//! Backfill (`_attempt_backfill`): in queue order, start what fits without delaying the planned
//! start of any higher-priority job, and plan (reserve whole nodes for) the jobs that cannot start.
//! The same machinery runs EASY (one reservation) and conservative (all, no limits) backfilling.
//! Planning owns its buffers (`planner`), the node-space map its slices ([`map`]), and the
//! release times what running jobs give back (`releases`).

pub mod map;
pub(crate) mod planner;
mod releases;
mod test_only;
mod times;

pub use test_only::WillRunAnswer;

use std::collections::HashMap;
use std::ops::ControlFlow;

use sluice_cluster::SchedulerParams;

use crate::config::SchedulerKind;
use crate::engine::Engine;
use crate::event::Loop;
use crate::job::{Reason, plan_limit};
use crate::pass_buffers::BackfillPassBuffers;
use crate::queue::{Gate, QueueRecord};
use crate::stats::PassStats;
use planner::{Planning, PlanningBuffers, ceil_to, floor_to, window_end};
use releases::Releases;

/// What one backfill pass holds while it walks the queue: its settings, counters, and what it
/// plans with.
struct BackfillPass<'b> {
    now: i64,
    /// The clock's microseconds at the pass's start, which bf_max_time counts from.
    started_at: u64,
    /// bf_max_time in microseconds.
    budget: u64,
    params: SchedulerParams,
    kind: SchedulerKind,
    /// Whether the bf_* limits apply (Slurm's backfill, not EASY or conservative).
    limited: bool,
    stats: PassStats,
    per_user: HashMap<String, u32>,
    reservations: usize,
    /// CPUs free on the usable nodes, kept up to date as jobs start.
    free_cpus: u64,
    rel: Releases,
    planning: Planning<'b>,
    buffers: &'b mut BackfillPassBuffers,
}

impl Engine {
    /// One backfill pass with the configured scheduler kind; `queue` is the one a main-loop
    /// pass of the same tick sorted, if one ran.
    pub(crate) fn run_backfill_pass(&mut self, queue: Option<Vec<QueueRecord>>) {
        let now = self.clock.now();
        let started_at = self.clock.micros();
        let records = match self.open_pass(now, queue) {
            Ok(records) => records,
            Err(stats) => {
                self.last_backfill_stats = stats;
                return;
            }
        };
        let mut planning_buffers = std::mem::take(&mut self.pass_buffers.planning);
        let mut buffers = std::mem::take(&mut self.pass_buffers.backfill);
        let mut pass = self.begin_backfill(
            (now, started_at),
            &records,
            &mut planning_buffers,
            &mut buffers,
        );
        for (i, rec) in records.iter().enumerate() {
            match self.backfill_gate(&mut pass, i, rec) {
                Gate::Test => {}
                Gate::Skip => continue,
                Gate::Stop(why) => {
                    pass.stats.stopped_by = Some(why);
                    break;
                }
            }
            pass.stats.tested += 1;
            let reason = match self.backfill_start(&mut pass, rec) {
                Ok(()) => continue,
                Err(reason) => reason,
            };
            if self.backfill_reserve(&mut pass, rec, reason).is_break() {
                pass.stats.stopped_by = Some("bf_node_space_size");
                break;
            }
        }
        pass.rel.into_buffers(&mut pass.planning.buffers.releases);
        self.last_backfill_stats = pass.stats;
        self.pass_buffers.planning = planning_buffers;
        self.pass_buffers.backfill = buffers;
    }

    /// Sets up a pass over `records`: its window and limits, the node-space map reset to the
    /// window (reusing the last pass's slices), what running jobs give back and when, and the
    /// buffers (the engine's from the last pass) cleared. `started_at` is the clock's microseconds
    /// when the pass began, which bf_max_time counts from.
    fn begin_backfill<'b>(
        &mut self,
        (now, started_at): (i64, u64),
        records: &[QueueRecord],
        planning_buffers: &'b mut PlanningBuffers,
        buffers: &'b mut BackfillPassBuffers,
    ) -> BackfillPass<'b> {
        let params = self.pass_params();
        let kind = self.config.scheduler;
        let limited = kind == SchedulerKind::Backfill;
        let res = params.bf_resolution.max(1) as i64;
        let window_end = window_end(kind, &params, now);
        let max_records = if limited {
            params.effective_bf_node_space_size() as usize
        } else {
            usize::MAX
        };
        if buffers.all_nodes.len() != self.nodes.len() {
            buffers.all_nodes = sluice_policy::NodeBitmap::full(self.nodes.len());
        }
        // The last pass's map, made this pass's window so that its slices are reused.
        buffers.map.reset(
            floor_to(now, res),
            window_end,
            &buffers.all_nodes,
            self.lic.license_count(),
            self.lic.hres_layers().len(),
            max_records,
        );
        // Owned: the pass changes `self` while it holds this.
        buffers.usable.clone_from(self.nodes.usable_nodes());
        // Refilled for every job: what planned jobs hold during its run.
        buffers.plan.lic_held.clear();
        buffers.plan.hres_held.clear();
        let free_cpus = self.nodes.free_cpus_on(&buffers.usable);
        let rel = Releases::of_running(
            &self.jobs,
            &self.running,
            self.nodes.len(),
            now,
            &mut planning_buffers.releases,
        );
        buffers.per_part.clear();
        buffers.per_part.resize(self.parts.len(), 0);
        buffers.fewest_after.clear();
        if self.config.skip_backfill_without_fit {
            self.fewest_cpus_from(records, &mut buffers.fewest_after);
        }
        let planning = Planning::new(
            (now, window_end, res),
            params.bf_licenses,
            self.config.remember_unplannable,
            planning_buffers,
        );
        BackfillPass {
            now,
            started_at,
            budget: params.effective_bf_max_time().saturating_mul(1_000_000),
            params,
            kind,
            limited,
            stats: PassStats {
                queued: records.len(),
                ..PassStats::default()
            },
            per_user: HashMap::new(),
            reservations: 0,
            free_cpus,
            rel,
            planning,
            buffers,
        }
    }

    /// Whether record `i` of the queue is tried, skipped, or ends the pass: a job that can no
    /// longer start, the time budget, and the bf_max_job_* limits (counting the record against
    /// its user's and partition's when it is tried).
    fn backfill_gate(&self, pass: &mut BackfillPass<'_>, i: usize, rec: &QueueRecord) -> Gate {
        let params = &pass.params;
        if pass
            .buffers
            .fewest_after
            .get(i)
            .is_some_and(|&fewest| fewest > pass.free_cpus)
        {
            // No job from here on can start, and planning them would only refresh their
            // expected start times and reasons (see `skip_backfill_without_fit`).
            return Gate::Stop("no later job fits");
        }
        if !self.jobs[&rec.job].is_pending() {
            return Gate::Skip;
        }
        if self.clock.micros().saturating_sub(pass.started_at) >= pass.budget {
            return Gate::Stop("bf_max_time");
        }
        if !pass.limited {
            return Gate::Test;
        }
        if pass.stats.tested >= params.bf_max_job_test as usize {
            return Gate::Stop("bf_max_job_test");
        }
        if params.bf_max_job_start > 0 && pass.stats.started >= params.bf_max_job_start as usize {
            return Gate::Stop("bf_max_job_start");
        }
        let p = rec.partition.index();
        let user = &self.jobs[&rec.job].spec.user;
        if params.bf_max_job_user > 0
            && pass.per_user.get(user).copied().unwrap_or(0) >= params.bf_max_job_user
        {
            return Gate::Skip;
        }
        if params.bf_max_job_part > 0 && pass.buffers.per_part[p] >= params.bf_max_job_part {
            return Gate::Skip;
        }
        pass.buffers.per_part[p] += 1;
        if params.bf_max_job_user > 0 {
            *pass.per_user.entry(user.clone()).or_default() += 1;
        }
        Gate::Test
    }

    /// Tries to start the record now on nodes no planned job holds over its run; a start moves
    /// the release times planning works from.
    fn backfill_start(
        &mut self,
        pass: &mut BackfillPass<'_>,
        rec: &QueueRecord,
    ) -> Result<(), Reason> {
        let now = pass.now;
        if let Some(reason) = self.limit_reason(&self.jobs[&rec.job], rec.partition) {
            return Err(reason);
        }
        let BackfillPassBuffers {
            all_nodes,
            usable,
            plan,
            map,
            start,
            ..
        } = &mut *pass.buffers;
        let end = now + plan_limit(self.jobs[&rec.job].time_limit) as i64;
        // A job of nodes alone that needs more CPUs than are free fails for Resources
        // whatever the policy says; the check spares building its request and what planned
        // jobs hold during its run. Other jobs go on to find the reason they report
        // (Licenses, a reservation's own).
        let job = &self.jobs[&rec.job];
        if job.needs_nodes_alone() && job.cpus() > pass.free_cpus {
            return Err(Reason::Resources);
        }
        map.reserved_between(all_nodes, &mut plan.exclude, now, end);
        if pass.params.bf_licenses {
            plan.lic_held = map.licenses_between(now, end);
            plan.hres_held = map.hres_between(now, end);
        }
        if let Err(reason) = self.try_start(rec, now, usable, plan, Loop::Backfill, start) {
            // --time-min: where the whole limit does not fit before what is planned, Slurm's
            // backfill may start the job with a shorter one; sluice tries its time_min.
            let job = &self.jobs[&rec.job];
            let full = job.time_limit;
            let Some(min) = job
                .spec
                .time_min
                .filter(|m| *m > 0 && full.is_none_or(|l| *m < l))
            else {
                return Err(reason);
            };
            let end = now + plan_limit(Some(min)) as i64;
            map.reserved_between(all_nodes, &mut plan.exclude, now, end);
            if pass.params.bf_licenses {
                plan.lic_held = map.licenses_between(now, end);
                plan.hres_held = map.hres_between(now, end);
            }
            self.jobs.get_mut(&rec.job).expect("queued job").time_limit = Some(min);
            if self
                .try_start(rec, now, usable, plan, Loop::Backfill, start)
                .is_err()
            {
                self.jobs.get_mut(&rec.job).expect("queued job").time_limit = full;
                return Err(reason);
            }
        }
        pass.stats.started += 1;
        pass.rel.note_started(&self.jobs[&rec.job], now);
        pass.planning.forget_shape();
        pass.free_cpus = self.nodes.free_cpus_on(usable);
        Ok(())
    }

    /// After a failed start: records the reason and, unless the pass may not reserve for the
    /// job, plans its start and reserves its nodes in the map. `Break` when the map is full.
    fn backfill_reserve(
        &mut self,
        pass: &mut BackfillPass<'_>,
        rec: &QueueRecord,
        reason: Reason,
    ) -> ControlFlow<()> {
        if !self.may_reserve(pass, rec, reason) {
            self.jobs.get_mut(&rec.job).expect("queued job").start_time = None;
            return ControlFlow::Continue(());
        }
        let (fit, hres) = self.fit_and_hres();
        let BackfillPassBuffers { map, usable, .. } = &mut *pass.buffers;
        let planned = pass
            .planning
            .will_run(fit, hres, rec, map, &mut pass.rel, usable);
        let job = self.jobs.get_mut(&rec.job).expect("queued job");
        let Some(plan) = planned else {
            job.start_time = None;
            return ControlFlow::Continue(());
        };
        let res = pass.planning.res();
        let limit = plan_limit(job.time_limit) as i64;
        let slot_start = floor_to(plan.start, res);
        let slot_end = ceil_to(plan.start + limit, res).max(slot_start + res);
        job.start_time = Some(plan.start);
        let chosen = &pass.planning.buffers.chosen;
        if map
            .add_reservation(slot_start, slot_end, chosen, &plan.licenses, &plan.hres)
            .is_err()
        {
            return ControlFlow::Break(());
        }
        pass.reservations += 1;
        pass.stats.reserved += 1;
        ControlFlow::Continue(())
    }

    /// Records why the job did not start and tells whether the pass may reserve for it: not a
    /// license-blocked job without bf_licenses, not past EASY's one reservation, not younger
    /// or lower in priority than bf_min_age_reserve and bf_min_prio_reserve allow.
    fn may_reserve(&mut self, pass: &BackfillPass<'_>, rec: &QueueRecord, reason: Reason) -> bool {
        let (params, now) = (&pass.params, pass.now);
        let job = self.jobs.get_mut(&rec.job).expect("queued job");
        if job.reason != Reason::Priority || reason != Reason::Resources {
            job.reason = reason;
        }
        if reason.holds_without_reservation() {
            // Slurm's backfill skips a job its limits or partition hold: no reservation.
            return false;
        }
        if reason == Reason::Licenses && !params.bf_licenses {
            // Without bf_licenses, license-blocked jobs get no reservation.
            return false;
        }
        if pass.kind == SchedulerKind::Easy && pass.reservations >= 1 {
            return false;
        }
        let age = now - job.eligible_time.unwrap_or(now);
        let prio = u64::from(rec.priority);
        !((params.bf_min_age_reserve > 0 && (age as u64) < params.bf_min_age_reserve)
            || (params.bf_min_prio_reserve > 0 && prio < params.bf_min_prio_reserve))
    }

    /// Fills `fewest` with, for each queue position, the fewest CPUs any job from there on
    /// needs: a job starts only on that many free CPUs of usable nodes, as
    /// [`Engine::some_pending_job_fits`] assumes for the whole queue.
    fn fewest_cpus_from(&self, records: &[QueueRecord], fewest: &mut Vec<u64>) {
        fewest.clear();
        fewest.resize(records.len(), 0);
        let mut least = u64::MAX;
        for (i, rec) in records.iter().enumerate().rev() {
            least = least.min(self.jobs[&rec.job].cpus());
            fewest[i] = least;
        }
    }
}
