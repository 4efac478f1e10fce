//! Owns no state: where jobs meet power saving — allocation, release, node failure (kill or
//! requeue, §1.10) and CONFIGURING jobs becoming RUNNING.

use sluice_cluster::{NodeId, PartitionId};
use sluice_policy::Placement;

use super::event::PowerEvent;
use super::flags::PowerFlags as F;
use super::state::PowerState;
use crate::engine::Engine;
use crate::event::Event;
use crate::job::{JobId, JobState, Reason};

/// Seconds a job requeued after a node failure waits: Slurm's `cred_expiration()` (120) + 1.
pub const REQUEUE_DELAY: i64 = 121;

impl Engine {
    /// A job was allocated `nodes` (`make_node_alloc`): it must configure if any of them is
    /// powered down (it joins the resume list) or still booting. A PowerDownOnIdle partition
    /// asks for each node's power down at once, acted on once the node is idle (§1.14).
    pub(crate) fn power_allocated(
        &mut self,
        id: JobId,
        partition: PartitionId,
        nodes: &[u32],
        now: i64,
    ) -> bool {
        let pdoi = self.cluster.partitions[partition.index()]
            .power
            .power_down_on_idle;
        let (mut wake, mut booting) = (false, false);
        for &n in nodes {
            let np = &mut self.power.nodes[n as usize];
            if np.flags.in_power_down() {
                wake = true;
            } else if np.flags.has(F::POWERING_UP) {
                booting = true;
            }
            if pdoi {
                np.flags.set(F::POWER_DOWN);
                np.down_request = Some("PowerDownOnIdle");
            }
            self.sync_power(n as usize);
        }
        if wake {
            self.power.resume_jobs.push(id);
        }
        self.power.touch(now);
        wake || booting
    }

    /// Whether starting on `placement` keeps within `max_powered_nodes` (§1.12): a start that
    /// would boot a node may not bring the powered-up-or-booting count above it. The count is
    /// the power pass's, not updated at allocation, so one scheduling pass can overshoot it
    /// (Slurm's Q13).
    pub(crate) fn power_admits(&self, placement: &Placement) -> Result<(), Reason> {
        let Some(max) = self.cluster.power.max_powered_nodes else {
            return Ok(());
        };
        let booting: Vec<u32> = placement
            .nodes
            .iter()
            .copied()
            .filter(|&n| self.power.nodes[n as usize].flags.in_power_down())
            .collect();
        if booting.is_empty() {
            return Ok(());
        }
        let mut count = self.power.powered_up.clone();
        booting.iter().for_each(|&n| count.insert(n));
        if count.len() > max as usize {
            return Err(Reason::MaxPoweredUpNodes);
        }
        Ok(())
    }

    /// A job gave its nodes back: each node left idle becomes idle now (`LastBusyTime`, from
    /// which SuspendTime counts; a powered-down node keeps none) and, with a power-down request,
    /// is held back from new work until the power pass suspends it.
    pub(crate) fn power_released(&mut self, id: JobId, now: i64) {
        let Some(alloc) = self.jobs.get(&id).and_then(|j| j.alloc.as_ref()) else {
            return;
        };
        let nodes = alloc.placement.nodes.clone();
        for n in nodes {
            let n = n as usize;
            if self.nodes.is_idle(n) {
                let np = &mut self.power.nodes[n];
                if !np.flags.has(F::POWERED_DOWN) {
                    np.last_busy = Some(now);
                }
                self.sync_power(n);
            }
        }
        self.power.touch(now);
    }

    /// Brings the node's power as the scheduler sees it in line with its flags: the power tier
    /// selection prefers, and whether it is held back (POWERING_DOWN, or idle with POWER_DOWN).
    pub(crate) fn sync_power(&mut self, n: usize) {
        let flags = self.power.nodes[n].flags;
        let id = NodeId(n as u32);
        self.nodes.set_power(id, PowerState::policy_power(flags));
        let blocked =
            flags.has(F::POWERING_DOWN) || (flags.has(F::POWER_DOWN) && self.nodes.is_idle(n));
        self.nodes.set_power_blocked(id, blocked);
        self.refresh_due(n);
    }

    /// Kills or requeues the jobs on a failed node (`_foreach_kill_running_job_by_node`): a
    /// batch job is requeued if it may be (`--requeue` or JobRequeue), or if
    /// `requeue_on_resume_failure` is set and the node failed while being booted for it as it
    /// configured; every other job ends NODE_FAIL. A configuring job is never shrunk.
    pub(crate) fn fail_node_jobs(&mut self, n: usize, boot_failure: bool) {
        let now = self.clock.now();
        let power = &self.cluster.power;
        let (job_requeue, on_resume_failure) = (power.job_requeue, power.requeue_on_resume_failure);
        for id in self.nodes.node(NodeId(n as u32)).jobs.clone() {
            let Some(job) = self.jobs.get(&id) else {
                continue;
            };
            if !matches!(job.state, JobState::Running | JobState::Configuring) {
                continue;
            }
            let requeue = job.spec.batch
                && (job.spec.requeue.unwrap_or(job_requeue)
                    || (on_resume_failure && boot_failure && job.state == JobState::Configuring));
            if requeue {
                self.requeue_after_node_failure(id, now);
            } else {
                self.end_job(id, JobState::NodeFail, Some(1), Reason::NodeDown);
            }
        }
    }

    /// Requeues a job whose node failed: Restarts + 1, eligible again 121 s from now
    /// (`batch_requeue_fini`), reason BeginTime meanwhile.
    fn requeue_after_node_failure(&mut self, id: JobId, now: i64) {
        if self.requeue(id).is_err() {
            return;
        }
        let job = self.jobs.get_mut(&id).expect("requeued above");
        job.restarts += 1;
        job.spec.begin_time = Some(now + REQUEUE_DELAY);
        // scontrol's EligibleTime after a requeue is the new begin time.
        job.eligible_time = Some(now + REQUEUE_DELAY);
        job.reason = Reason::BeginTime;
        self.pending.set_begin(id, Some(now + REQUEUE_DELAY));
    }

    /// CONFIGURING jobs on node `n` whose nodes are now all up start RUNNING: their start and
    /// time limit count from now (`job_config_fini`), and a [`PowerEvent::JobReady`] says so.
    /// sluice does this at the registration of the last node, not at the next 30-s
    /// `job_time_limit` sweep Slurm waits for (docs/power-save.md).
    pub(crate) fn power_jobs_ready(&mut self, n: usize, now: i64) {
        for id in self.nodes.node(NodeId(n as u32)).jobs.clone() {
            let ready = self.jobs.get(&id).is_some_and(|job| {
                job.state == JobState::Configuring
                    && job.alloc.as_ref().is_some_and(|a| {
                        a.placement.nodes.iter().all(|&m| {
                            !self.power.nodes[m as usize]
                                .flags
                                .any(F::POWERING_UP.with(F::POWERED_DOWN).with(F::POWERING_DOWN))
                        })
                    })
            });
            if ready {
                let job = self.jobs.get_mut(&id).expect("checked above");
                job.state = JobState::Running;
                job.start_time = Some(now);
                job.end_time = job.time_limit.map(|l| now + l as i64);
                self.outbox
                    .push(Event::Power(PowerEvent::JobReady { job: id, time: now }));
            }
        }
    }
}
