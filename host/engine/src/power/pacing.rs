//! Owns no state: when the power pass runs on the engine's clock and when it next has work —
//! the trigger rule (a change, `power_save_min_interval`, every `power_save_interval + 1` s) and
//! each node's next due time (power-save.md §1.4).

use sluice_policy::NodeBitmap;

use super::flags::PowerFlags as F;
use crate::engine::Engine;
use crate::job::JobState;

impl Engine {
    /// Runs the power pass if one is due at `now`: at once after a node change (no sooner than
    /// `power_save_min_interval` after the last pass), else every `power_save_interval + 1` s.
    /// Passes of the second kind land on a fixed grid from the last pass; when the clock jumps
    /// over grid points at which nothing was due, the grid is kept, so a replay ticking only at
    /// events runs the passes a per-second loop would have.
    pub(crate) fn power_tick(&mut self, now: i64) {
        let p = &self.cluster.power;
        let (interval, min) = (
            p.power_save_interval as i64,
            p.power_save_min_interval as i64,
        );
        let state = &mut self.power;
        if now <= state.last_scan + min {
            return;
        }
        if state.last_change > state.last_scan {
            self.power_pass(now);
        } else if now > state.last_scan + interval {
            let period = interval + 1;
            let grid = state.last_scan + (now - state.last_scan) / period * period;
            if grid == now {
                self.power_pass(now);
            } else {
                // Slurm's pass at `grid` found nothing due (next_wakeup woke us for everything that was).
                state.last_scan = grid;
            }
        }
    }

    /// When the next power pass has something to do, if ever: a pass after a change, or the
    /// first grid pass at or after the earliest timer (SuspendTime, SuspendTimeout,
    /// ResumeTimeout) or pending request.
    pub(crate) fn power_wakeup(&self) -> Option<i64> {
        let min = self.cluster.power.power_save_min_interval as i64;
        let state = &self.power;
        if state.last_change > state.last_scan {
            return Some((state.last_scan + min + 1).max(self.clock.now()));
        }
        self.power_work_at()
    }

    /// When the next power pass that acts on something runs, if any: like
    /// [`Engine::next_wakeup`]'s power part, but not for a pass a change asks for that would
    /// find nothing to do. A replay that skips ticks asks it so as not to skip such a pass.
    pub fn power_work_at(&self) -> Option<i64> {
        let p = &self.cluster.power;
        let (interval, min) = (
            p.power_save_interval as i64,
            p.power_save_min_interval as i64,
        );
        let state = &self.power;
        let due = self.earliest_power_due()?;
        let earliest = state.last_scan + min + 1;
        if state.last_change > state.last_scan {
            return Some(earliest.max(self.clock.now()));
        }
        let period = interval + 1;
        let k = (due.saturating_sub(state.last_scan).max(1) + period - 1) / period;
        Some((state.last_scan + k.max(1) * period).max(earliest))
    }

    /// Whether a power timer or request is pending: a pass will act on some node or job later
    /// (a replay runs until none is).
    pub fn power_pending(&self) -> bool {
        self.power_wakeup().is_some()
    }

    /// The earliest time a pass would act on a node or job, if any would.
    fn earliest_power_due(&self) -> Option<i64> {
        let state = &self.power;
        if state.resume_jobs.iter().any(|id| {
            self.jobs
                .get(id)
                .is_some_and(|j| j.state == JobState::Configuring)
        }) && state.automatic
        {
            return Some(i64::MIN);
        }
        if state.exclusions.is_empty() || !state.due.any() {
            return state.due.earliest();
        }
        // A node an exclusion keeps up is not pending: look closer at the nodes with a time.
        let kept = self.power_kept();
        (0..state.nodes.len())
            .filter(|&n| state.due.get(n) != i64::MAX)
            .filter_map(|n| self.node_due(n, &kept))
            .min()
    }

    /// The next time a pass has something to do for node `n` (rates aside): at once for a
    /// power-up or power-down request, SuspendTimeout or ResumeTimeout after the program was
    /// asked for, SuspendTime after it became idle (unless `kept` or another exclusion keeps
    /// it up); `None` if never as things stand.
    fn node_due(&self, n: usize, kept: &NodeBitmap) -> Option<i64> {
        let np = &self.power.nodes[n];
        let f = np.flags;
        let mut due = self.suspend_due(n, kept);
        let mut note = |t: i64| due = Some(due.map_or(t, |d: i64| d.min(t)));
        if f.has(F::POWER_UP) && f.has(F::POWERED_DOWN) && !f.has(F::POWERING_DOWN) {
            note(i64::MIN);
        }
        if f.has(F::POWERING_DOWN) {
            let since = np.suspend_requested.unwrap_or(i64::MIN);
            note(since.saturating_add(np.timers.suspend_timeout as i64 + 1));
        }
        if f.has(F::POWERING_UP)
            && f.has(F::NOT_RESPONDING)
            && let Some(rt) = np.timers.resume_timeout
        {
            let asked = np.boot_requested.unwrap_or(i64::MIN);
            note(asked.saturating_add(rt as i64 + 1));
        }
        due
    }

    /// Records when the pass next has to look at node `n` ([`Engine::node_due`], exclusions
    /// aside), so that a pass with nothing due skips every node by one comparison.
    pub(crate) fn refresh_due(&mut self, n: usize) {
        // Without power flags and automatic power saving nothing is ever due: `node_due`'s
        // answer, without asking it at every start and end.
        let due = if self.power.nodes[n].flags == F::NONE && !self.power.automatic {
            i64::MAX
        } else {
            self.node_due(n, &NodeBitmap::default()).unwrap_or(i64::MAX)
        };
        self.power.due.set(n, due);
    }
}
