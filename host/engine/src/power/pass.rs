//! Owns no state: the power pass (`_do_power_work`) — when it runs, and what it does in Slurm's
//! order: resume for jobs, then per node resume, suspend, POWERING_DOWN expiry and
//! ResumeTimeout, then one call per program (power-save.md §1.4–§1.9).

use sluice_cluster::NodeId;
use sluice_policy::NodeBitmap;

use super::event::{PowerCall, PowerEvent, Program, ResumeFile, ResumeJob};
use super::flags::PowerFlags as F;
use super::state::program_set;
use crate::engine::Engine;
use crate::event::Event;
use crate::job::JobState;
use crate::node_state::Health;
use crate::request::Constraint;

/// Whether and when a node is due to be suspended.
enum Suspend {
    /// Nothing asks for it, or it cannot be suspended now.
    Never,
    /// Due at this time (i64::MIN: at once), for this reason.
    Due(i64, &'static str),
    /// Would be due at this time, but an exclusion keeps it up.
    Excluded(i64, Exclusion),
}

/// Which exclusion keeps a node up.
enum Exclusion {
    /// `SuspendExcStates`, by its index.
    State(usize),
    /// `SuspendExcParts`.
    Parts,
    /// `SuspendExcNodes`, listed or kept by a count.
    Nodes,
}

impl Exclusion {
    /// The node's PowerReason while it is kept up.
    fn describe(&self, states: &[String]) -> String {
        match self {
            Exclusion::State(i) => format!("excluded by SuspendExcStates={}", states[*i]),
            Exclusion::Parts => "excluded by SuspendExcParts".into(),
            Exclusion::Nodes => "excluded by SuspendExcNodes".into(),
        }
    }
}

/// What one pass decided, node by node, before the program calls are made.
#[derive(Default)]
struct PassOutcome {
    /// (node, why) to suspend.
    sleep: Vec<(u32, String)>,
    /// (node, why) to resume.
    wake: Vec<(u32, String)>,
    /// Nodes that missed ResumeTimeout.
    failed: Vec<u32>,
    /// Resume file entries of the jobs handled.
    jobs: Vec<ResumeJob>,
}

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
        let due = state.due.iter().copied().filter(|&t| t != i64::MAX);
        if state.exclusions.is_empty() {
            return due.min();
        }
        // A node an exclusion keeps up is not pending: look closer at the nodes with a time.
        let kept = self.power_kept();
        (0..state.nodes.len())
            .filter(|&n| state.due[n] != i64::MAX)
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
        let due = self.node_due(n, &NodeBitmap::default()).unwrap_or(i64::MAX);
        self.power.due[n] = due;
    }

    /// Whether node `n` may be suspended at all (`_node_state_suspendable`): IDLE or DOWN, no
    /// completing job, not booting nor powering down.
    pub(crate) fn power_suspendable(&self, n: usize) -> bool {
        let node = self.nodes.node(NodeId(n as u32));
        let f = self.power.nodes[n].flags;
        let base_ok = match node.health {
            Health::Future => false,
            Health::Down => true,
            _ => node.jobs.is_empty(),
        };
        let completing = node.jobs.iter().any(|id| {
            self.jobs
                .get(id)
                .is_some_and(|j| j.state == JobState::Completing)
        });
        base_ok && !completing && !f.any(F::POWERING_UP.with(F::POWERING_DOWN))
    }

    /// When node `n` is due to be suspended, ignoring the rate; `None` when it never is as
    /// things stand (an exclusion keeps it up, or nothing asks for it).
    fn suspend_due(&self, n: usize, kept: &NodeBitmap) -> Option<i64> {
        match self.suspend_decision(n, kept) {
            Suspend::Due(t, _) => Some(t),
            _ => None,
        }
    }

    /// Whether and when node `n` is due to be suspended, and why: at once with a power-down
    /// request; SuspendTime after it became idle under automatic power saving, unless an
    /// exclusion keeps it up. No allocation: a pass asks this of every node.
    fn suspend_decision(&self, n: usize, kept: &NodeBitmap) -> Suspend {
        let np = &self.power.nodes[n];
        let wanted = np.flags.has(F::POWER_DOWN);
        let timed =
            self.power.automatic && np.last_busy.is_some() && np.timers.suspend_time.is_some();
        if !(wanted || timed) || !self.power_suspendable(n) {
            return Suspend::Never;
        }
        if wanted {
            return Suspend::Due(i64::MIN, np.down_request.unwrap_or("POWER_DOWN requested"));
        }
        let (Some(busy), Some(st)) = (np.last_busy, np.timers.suspend_time) else {
            return Suspend::Never;
        };
        let due = busy.saturating_add(st as i64 + 1);
        match self.excluded_by(n, kept) {
            Some(exclusion) => Suspend::Excluded(due, exclusion),
            None => Suspend::Due(due, "SuspendTime reached"),
        }
    }

    /// The exclusion that keeps node `n` up, if any.
    fn excluded_by(&self, n: usize, kept: &NodeBitmap) -> Option<Exclusion> {
        let ex = &self.power.exclusions;
        if ex.is_empty() {
            return None;
        }
        let i = n as u32;
        if let Some(state) = self.excluded_state(n) {
            return Some(Exclusion::State(state));
        }
        if ex.parts.contains(i) {
            return Some(Exclusion::Parts);
        }
        if ex.nodes.contains(i) || kept.contains(i) {
            return Some(Exclusion::Nodes);
        }
        None
    }

    /// The index of the first `SuspendExcStates` entry node `n` is in
    /// (`_node_state_should_suspend`).
    fn excluded_state(&self, n: usize) -> Option<usize> {
        let node = self.nodes.node(NodeId(n as u32));
        let np = &self.power.nodes[n];
        self.power
            .exclusions
            .states
            .iter()
            .map(String::as_str)
            .position(|s| match s {
                "DOWN" => node.health == Health::Down,
                "DRAIN" => node.health == Health::Drain,
                "FAIL" => node.health == Health::Fail,
                "CLOUD" => np.cloud,
                "NOT_RESPONDING" => np.flags.has(F::NOT_RESPONDING),
                // sluice never sets DYNAMIC_*, EXTERNAL, INVALID_REG, MAINTENANCE, PLANNED, RESERVED.
                _ => false,
            })
    }

    /// The nodes the `SuspendExcNodes` count groups keep up this pass.
    fn power_kept(&self) -> NodeBitmap {
        let ex = &self.power.exclusions;
        if ex.groups.is_empty() {
            return NodeBitmap::default();
        }
        let suspendable = |n: u32| {
            self.power_suspendable(n as usize)
                && !self.power.nodes[n as usize].flags.has(F::POWERED_DOWN)
        };
        let active = |n: u32| {
            let node = self.nodes.node(NodeId(n));
            let f = self.power.nodes[n as usize].flags;
            !suspendable(n)
                && node.health == Health::Up
                && !f.any(F::POWERING_UP.with(F::POWERING_DOWN).with(F::POWERED_DOWN))
        };
        ex.kept_by_groups(self.nodes.len(), suspendable, active)
    }

    /// One power pass at `now`.
    pub(crate) fn power_pass(&mut self, now: i64) {
        self.power.last_scan = now;
        self.power.resume_bucket.refill(now);
        self.power.suspend_bucket.refill(now);
        let kept = self.power_kept();
        let mut out = PassOutcome::default();
        let mut marked = NodeBitmap::with_capacity(self.nodes.len());
        if self.power.automatic {
            self.resume_for_jobs(&mut marked, &mut out);
        }
        for n in 0..self.nodes.len() {
            // Exclusions only hold nodes back, so a node not due without them is not due.
            if self.power.due[n] <= now || marked.contains(n as u32) {
                self.power_node(n, now, &marked, &kept, &mut out);
            }
        }
        self.power_calls(now, out);
    }

    /// Step 2 of the pass: walks the resume list in allocation order and marks the
    /// powered-down nodes of each CONFIGURING job to wake, one resume token each. A node marked
    /// by an earlier job of the pass costs a token again and is listed for both (Slurm's Q2).
    fn resume_for_jobs(&mut self, marked: &mut NodeBitmap, out: &mut PassOutcome) {
        let mut i = 0;
        while i < self.power.resume_jobs.len() {
            if !self.power.resume_bucket.has_token() {
                break;
            }
            let id = self.power.resume_jobs[i];
            let Some((nodes, partition, entry)) = self
                .jobs
                .get(&id)
                .and_then(|job| {
                    let alloc = job
                        .alloc
                        .as_ref()
                        .filter(|_| job.state == JobState::Configuring)?;
                    let resv = alloc.reservation.map(|r| self.resv.get(r).name.clone());
                    Some((alloc.placement.nodes.clone(), alloc.partition, (job, resv)))
                })
                .map(|(nodes, partition, (job, resv))| {
                    let entry = ResumeJob {
                        exclusive: if job.spec.exclusive { "NODE" } else { "NO" },
                        extra: None,
                        job_id: job.id,
                        priority: job
                            .partitions
                            .iter()
                            .position(|p| *p == partition)
                            .and_then(|i| job.priority.get(i).copied())
                            .unwrap_or(0),
                        features: job.spec.constraint.as_ref().map(|c| match c {
                            Constraint::All(f) => f.join("&"),
                            Constraint::Any(f) => f.join("|"),
                        }),
                        nodes_alloc: String::new(),
                        nodes_resume: String::new(),
                        oversubscribe: "NO",
                        partition: self.cluster.partitions[partition.index()].name.clone(),
                        reservation: resv,
                    };
                    (nodes, partition, entry)
                })
            else {
                self.power.resume_jobs.remove(i);
                continue;
            };
            let _ = partition;
            let down: Vec<u32> = nodes
                .iter()
                .copied()
                .filter(|&n| self.power.nodes[n as usize].flags.in_power_down())
                .collect();
            if down.is_empty() {
                self.power.resume_jobs.remove(i);
                continue;
            }
            let mut resumed = Vec::new();
            for &n in &down {
                if self.power.resume_bucket.take() {
                    marked.insert(n);
                    resumed.push(n);
                    out.wake.push((n, format!("job {id} allocated it")));
                } else {
                    self.power.nodes[n as usize].why = Some("rate-limited (ResumeRate)".into());
                }
            }
            let mut entry = entry;
            entry.nodes_alloc = self.hostlist(&nodes);
            entry.nodes_resume = self.hostlist(&resumed);
            out.jobs.push(entry);
            if resumed.len() == down.len() {
                self.power.resume_jobs.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Step 3 for one node, in Slurm's order: resume, suspend, POWERING_DOWN expiry,
    /// ResumeTimeout.
    fn power_node(
        &mut self,
        n: usize,
        now: i64,
        marked: &NodeBitmap,
        kept: &NodeBitmap,
        out: &mut PassOutcome,
    ) {
        let f = self.power.nodes[n].flags;
        let manual_up = f.has(F::POWERED_DOWN) && f.has(F::POWER_UP) && !f.has(F::POWERING_DOWN);
        if marked.contains(n as u32) {
            self.resume_node(n, now);
        } else if manual_up {
            if self.power.resume_bucket.take() {
                self.resume_node(n, now);
                out.wake.push((n as u32, "POWER_UP requested".into()));
            } else {
                self.power.nodes[n].why = Some("rate-limited (ResumeRate)".into());
            }
        }
        match self.suspend_decision(n, kept) {
            Suspend::Due(due, why) if due <= now => {
                if self.power.suspend_bucket.take() {
                    self.suspend_node(n, now);
                    out.sleep.push((n as u32, why.to_string()));
                } else {
                    self.power.nodes[n].why = Some("rate-limited (SuspendRate)".into());
                }
            }
            Suspend::Excluded(due, exclusion) if due <= now => {
                let why = exclusion.describe(&self.power.exclusions.states);
                if self.power.nodes[n].why.as_deref() != Some(why.as_str()) {
                    self.power.nodes[n].why = Some(why);
                }
            }
            _ => {}
        }
        let np = &self.power.nodes[n];
        if np.flags.has(F::POWERING_DOWN)
            && np
                .suspend_requested
                .is_some_and(|t| t + (np.timers.suspend_timeout as i64) < now)
        {
            self.powered_down(n, now);
        }
        let np = &self.power.nodes[n];
        if np.flags.has(F::POWERING_UP.with(F::NOT_RESPONDING))
            && let (Some(rt), Some(asked)) = (np.timers.resume_timeout, np.boot_requested)
            && now > asked + rt as i64
        {
            self.resume_timed_out(n, now);
            if program_set(&self.cluster.power.resume_fail_program) {
                out.failed.push(n as u32);
            }
        }
    }

    /// Resume: POWERING_UP and NOT_RESPONDING until the node registers (§1.5).
    fn resume_node(&mut self, n: usize, now: i64) {
        let np = &mut self.power.nodes[n];
        np.flags.clear(F::POWER_UP.with(F::POWERED_DOWN));
        np.flags.set(F::POWERING_UP.with(F::NOT_RESPONDING));
        np.boot_requested = Some(now);
        np.why = Some("resumed".into());
        self.power.powered_up.insert(n as u32);
        self.sync_power(n);
    }

    /// Suspend: POWERING_DOWN for SuspendTimeout; an ASAP request's DRAIN goes (also an
    /// admin's earlier one: Slurm's Q5); with `idle_on_node_suspend` the node becomes IDLE.
    fn suspend_node(&mut self, n: usize, now: i64) {
        let id = NodeId(n as u32);
        let np = &mut self.power.nodes[n];
        let requested = np.flags.has(F::POWER_DOWN);
        np.flags.set(F::POWERING_DOWN);
        np.flags
            .clear(F::POWER_DOWN.with(F::POWERED_DOWN).with(F::NOT_RESPONDING));
        np.suspend_requested = Some(now);
        np.down_request = None;
        np.why = Some("suspended".into());
        self.power.powered_up.remove(n as u32);
        let node = self.nodes.node(id);
        if self.cluster.power.idle_on_node_suspend && node.health != Health::Future {
            self.nodes.set_health(id, Health::Up, None);
        } else if requested && node.health == Health::Drain {
            let reason = node.reason.clone();
            self.nodes.set_health(id, Health::Up, reason);
        }
        self.sync_power(n);
    }

    /// SuspendTimeout passed: POWERED_DOWN, no LastBusyTime, and available again unless
    /// DOWN, DRAIN or FAIL (§1.7).
    pub(crate) fn powered_down(&mut self, n: usize, now: i64) {
        let np = &mut self.power.nodes[n];
        np.flags.clear(F::POWERING_DOWN);
        np.flags.set(F::POWERED_DOWN);
        np.last_busy = None;
        np.suspend_requested = None;
        np.why = Some("powered down".into());
        self.sync_power(n);
        self.power.touch(now);
        self.pacing.requested = true;
    }

    /// ResumeTimeout passed without registration: DOWN+POWERED_DOWN "ResumeTimeout reached",
    /// its jobs killed or requeued (§1.9, §1.10).
    fn resume_timed_out(&mut self, n: usize, now: i64) {
        let id = NodeId(n as u32);
        let np = &mut self.power.nodes[n];
        np.flags
            .clear(F::POWER_DOWN.with(F::POWERING_UP).with(F::NOT_RESPONDING));
        np.flags.set(F::POWERED_DOWN);
        np.down_request = None;
        np.why = Some("ResumeTimeout reached".into());
        self.power.powered_up.remove(n as u32);
        let reason = match self.nodes.node(id).reason.as_deref() {
            Some(old) if !old.is_empty() => format!("{old} : ResumeTimeout reached"),
            _ => "ResumeTimeout reached".to_string(),
        };
        self.nodes.set_health(id, Health::Down, Some(reason));
        self.sync_power(n);
        self.fail_node_jobs(n, true);
        let np = &mut self.power.nodes[n];
        np.last_busy = None;
        np.boot_requested = None;
        self.refresh_due(n);
        self.power.touch(now);
    }

    /// Step 4: one call per program, in Slurm's order suspend, resume, resume-fail.
    fn power_calls(&mut self, now: i64, out: PassOutcome) {
        let PassOutcome {
            mut sleep,
            mut wake,
            failed,
            jobs,
        } = out;
        sleep.sort_by_key(|(n, _)| *n);
        wake.sort_by_key(|(n, _)| *n);
        // A node woken for two jobs of one pass is one node to boot.
        wake.dedup_by_key(|(n, _)| *n);
        let p = &self.cluster.power;
        let (suspend, resume, fail) = (
            p.suspend_program.clone(),
            p.resume_program.clone(),
            p.resume_fail_program.clone(),
        );
        if !sleep.is_empty() {
            let call = self.power_call(Program::Suspend, suspend, sleep, None, now);
            self.outbox.push(Event::Power(PowerEvent::Call(call)));
        }
        if !wake.is_empty() {
            let nodes: Vec<u32> = wake.iter().map(|(n, _)| *n).collect();
            let file = ResumeFile {
                jobs,
                all_nodes_resume: self.hostlist(&nodes),
            };
            let call = self.power_call(Program::Resume, resume, wake, Some(file), now);
            self.outbox.push(Event::Power(PowerEvent::Call(call)));
        }
        if !failed.is_empty() {
            let why = failed
                .into_iter()
                .map(|n| (n, "ResumeTimeout reached".to_string()))
                .collect();
            let call = self.power_call(Program::ResumeFail, fail, why, None, now);
            self.outbox.push(Event::Power(PowerEvent::Call(call)));
        }
    }

    /// A program call over `nodes` (index order) with its hostlist argument.
    fn power_call(
        &self,
        program: Program,
        path: Option<String>,
        nodes: Vec<(u32, String)>,
        resume_file: Option<ResumeFile>,
        time: i64,
    ) -> PowerCall {
        let (ids, reasons): (Vec<u32>, Vec<String>) = nodes.into_iter().unzip();
        PowerCall {
            program,
            path,
            args: vec![self.hostlist(&ids)],
            nodes: ids.into_iter().map(NodeId).collect(),
            reasons,
            resume_file,
            time,
        }
    }

    /// The hostlist of nodes by index, sorted as Slurm's `hostlist_ranged_string` of a bitmap.
    pub(crate) fn hostlist(&self, nodes: &[u32]) -> String {
        let mut sorted = nodes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let names: Vec<&str> = sorted
            .iter()
            .map(|&n| self.cluster.nodes[n as usize].name.as_str())
            .collect();
        sluice_hostlist::compress(&names)
    }
}
