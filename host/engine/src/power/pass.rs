//! Owns no state: the power pass (`_do_power_work`) — what it does in Slurm's order: resume
//! for jobs, then per node resume, suspend, POWERING_DOWN expiry and ResumeTimeout, then one
//! call per program (power-save.md §1.4–§1.9). `pacing.rs` says when it runs, `decide.rs`
//! whether a node is due.

use sluice_cluster::NodeId;
use sluice_policy::NodeBitmap;

use super::decide::Suspend;
use super::event::{PowerCall, PowerEvent, Program, ResumeFile, ResumeJob};
use super::flags::PowerFlags as F;
use super::state::program_set;
use crate::engine::Engine;
use crate::event::Event;
use crate::job::JobState;
use crate::node_state::Health;
use crate::request::Constraint;

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
        // With no node due and none marked for a job, no node has anything to do: the walk
        // is skipped (most passes of a cluster without power saving).
        if self.power.due.any() || !marked.is_empty() {
            for n in 0..self.nodes.len() {
                // Exclusions only hold nodes back, so a node not due without them is not due.
                if self.power.due.get(n) <= now || marked.contains(n as u32) {
                    self.power_node(n, now, &marked, &kept, &mut out);
                }
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
                        // Slurm's job_share_string: NO for whole nodes, YES for CPUs
                        // that may be shared, OK for CPUs held alone.
                        oversubscribe: match self.parts[partition.index()].share_rows(job) {
                            _ if job.spec.exclusive => "NO",
                            0 => "OK",
                            _ => "YES",
                        },
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
        // Cloned only for a call made: most passes make none.
        let (suspend, resume, fail) = (
            || p.suspend_program.clone(),
            || p.resume_program.clone(),
            || p.resume_fail_program.clone(),
        );
        if !sleep.is_empty() {
            let call = self.power_call(Program::Suspend, suspend(), sleep, None, now);
            self.outbox.push(Event::Power(PowerEvent::Call(call)));
        }
        if !wake.is_empty() {
            let nodes: Vec<u32> = wake.iter().map(|(n, _)| *n).collect();
            let file = ResumeFile {
                jobs,
                all_nodes_resume: self.hostlist(&nodes),
            };
            let call = self.power_call(Program::Resume, resume(), wake, Some(file), now);
            self.outbox.push(Event::Power(PowerEvent::Call(call)));
        }
        if !failed.is_empty() {
            let why = failed
                .into_iter()
                .map(|n| (n, "ResumeTimeout reached".to_string()))
                .collect();
            let call = self.power_call(Program::ResumeFail, fail(), why, None, now);
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
