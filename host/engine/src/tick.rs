//! Owns no state: when passes run as the clock moves, and when the next tick has work.
//!
//! What `Engine::tick`, `Engine::schedule` and `Engine::backfill` do (time limits, usage, the main
//! loop and backfill by their intervals); the times of the last passes are kept on the engine.

use crate::config::SchedulerKind;
use crate::engine::Engine;
use crate::event::Event;
use crate::job::JobState;

impl Engine {
    /// Processes everything due at the clock's current time and returns what the engine decided:
    /// time limits, usage decay, an event-triggered main loop if something changed, the periodic
    /// main loop every `sched_interval`, backfill every `bf_interval`, and the power pass.
    pub fn tick(&mut self) -> Vec<Event> {
        let now = self.clock.now();
        let mut events = self.scheduling_passes(now);
        // After the scheduling passes, so that a pass sees the nodes they just allocated.
        self.power_tick(now);
        events.append(&mut self.outbox);
        events
    }

    /// What [`Engine::tick`] does besides the power pass.
    fn scheduling_passes(&mut self, now: i64) -> Vec<Event> {
        self.enforce_time_limits(now);
        self.accrue_usage(now);
        let params = &self.config.params;
        let periodic = params.sched_interval >= 0 && now >= self.main_loop_due_at();
        let backfill = self.backfills() && now >= self.backfill_due_at();
        let event = self.pacing.requested && !params.defer;
        if self.pending.is_empty() {
            // A pass over an empty queue decides nothing but would still call the policies.
            self.pacing.requested = false;
            if periodic {
                self.pacing.last_main = now;
            }
            if backfill {
                self.pacing.last_backfill = now;
            }
            self.pacing.backfill_owed = false;
            return std::mem::take(&mut self.outbox);
        }
        let queue = if periodic || event {
            if periodic {
                self.pacing.last_main = now;
            }
            let t0 = self.clock.micros();
            let queue = self.run_main_pass(periodic);
            let micros = self.clock.micros().saturating_sub(t0);
            self.main_totals.record(micros, now, &self.last_main_stats);
            queue
        } else {
            None
        };
        if backfill {
            if !self.config.skip_backfill_without_fit || self.some_pending_job_fits() {
                let t0 = self.clock.micros();
                self.run_backfill_pass(queue);
                let micros = self.clock.micros().saturating_sub(t0);
                self.backfill_totals
                    .record(micros, now, &self.last_backfill_stats);
            }
            self.pacing.last_backfill = now;
        }
        self.pacing.backfill_owed = !backfill && self.backfills();
        self.end_passes()
    }

    /// Whether backfill passes run at all: not under FCFS, nor with `bf_interval` = −1.
    fn backfills(&self) -> bool {
        self.config.scheduler != SchedulerKind::Fcfs && self.config.params.bf_interval >= 0
    }

    /// When the periodic main loop is next due: `sched_interval` after the last one.
    fn main_loop_due_at(&self) -> i64 {
        self.pacing.main_loop_due_at(&self.config.params)
    }

    /// When a backfill pass is next due: `bf_interval` after the last one.
    fn backfill_due_at(&self) -> i64 {
        self.pacing.backfill_due_at(&self.config.params)
    }

    /// When the backfill pass a tick went without is due: `bf_interval` after the last pass,
    /// if a tick since then ran without one while jobs still wait. Slurm's backfill agent runs
    /// once the interval is up and only if something changed since its last cycle; a replay
    /// that ticks only at events wakes at this time for the same effect.
    pub fn backfill_owed_at(&self) -> Option<i64> {
        (self.pacing.backfill_owed && !self.pending.is_empty() && self.backfills())
            .then(|| self.backfill_due_at())
    }

    /// Whether the pending job needing the fewest CPUs needs no more than the usable nodes have
    /// free: a necessary condition for any start, cheap enough to ask before every pass (a
    /// replay skips the passes that could start nothing).
    pub fn some_pending_job_fits(&self) -> bool {
        self.pending
            .fewest_cpus()
            .is_some_and(|fewest| fewest <= self.nodes.free_cpus_on(self.nodes.usable_nodes()))
    }

    /// What every way of running passes ends with: the priority call a pass put off is made
    /// (or found needless), then the passes' events are handed out.
    fn end_passes(&mut self) -> Vec<Event> {
        if self.priorities.owes_call() {
            self.priority_pass().settle_deferred();
        }
        std::mem::take(&mut self.outbox)
    }

    /// Runs a full (periodic) main-loop pass now, whatever the intervals say.
    pub fn schedule(&mut self) -> Vec<Event> {
        let now = self.clock.now();
        self.enforce_time_limits(now);
        self.run_main_pass(true);
        self.pacing.last_main = now;
        self.end_passes()
    }

    /// Runs a backfill pass now (or nothing under FCFS), whatever the intervals say.
    pub fn backfill(&mut self) -> Vec<Event> {
        let now = self.clock.now();
        self.enforce_time_limits(now);
        if self.config.scheduler != SchedulerKind::Fcfs {
            self.run_backfill_pass(None);
        }
        self.pacing.last_backfill = now;
        self.pacing.backfill_owed = false;
        self.end_passes()
    }

    /// The next time [`Engine::tick`] has work to do, for a discrete-event simulator.
    pub fn next_wakeup(&self) -> Option<i64> {
        let params = &self.config.params;
        let mut times = Vec::new();
        if self.pacing.requested && !params.defer {
            times.push(self.clock.now());
        }
        if !self.pending.is_empty() {
            if params.sched_interval >= 0 {
                times.push(self.main_loop_due_at());
            }
            if self.backfills() {
                times.push(self.backfill_due_at());
            }
            times.extend(self.pending.next_begin_after(self.clock.now()));
        }
        if self.config.enforce_time_limits {
            times.extend(self.running.iter().filter_map(|id| {
                let job = &self.jobs[id];
                (job.state == JobState::Running)
                    .then_some(job.end_time)
                    .flatten()
            }));
        }
        if !self.running.is_empty() {
            times.push(self.usage.next_due());
        }
        times.extend(self.power_wakeup());
        times.into_iter().min()
    }
}
