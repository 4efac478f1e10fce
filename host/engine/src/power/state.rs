//! Owns the power state: every node's power flags, timestamps and timers, the resume job list,
//! the rate buckets and when the last power pass ran.

use sluice_cluster::{Cluster, NodeState as ConfigState};
use sluice_policy::{NodeBitmap, Power};

use super::bucket::TokenBucket;
use super::exclude::Exclusions;
use super::flags::PowerFlags;
use super::timers::{Timers, effective_timers};
use crate::job_id::JobId;

/// One node's power record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePower {
    /// Power flags.
    pub flags: PowerFlags,
    /// When the node last became idle (`LastBusyTime`); `None` is Slurm's 0, "Unknown".
    pub last_busy: Option<i64>,
    /// When ResumeProgram was asked for it (`boot_req_time`).
    pub boot_requested: Option<i64>,
    /// When SuspendProgram was asked for it (`power_save_req_time`).
    pub suspend_requested: Option<i64>,
    /// Effective timers.
    pub timers: Timers,
    /// Why the power side last acted on, or held back, this node ("SuspendTime reached",
    /// "rate-limited", "excluded by SuspendExcParts"…), for `sluice show node`.
    pub why: Option<String>,
    /// Who asked for the pending POWER_DOWN ("POWER_DOWN requested", "PowerDownOnIdle"…).
    pub down_request: Option<&'static str>,
    /// Configured `State=CLOUD`.
    pub cloud: bool,
}

/// Power state of every node and of the power pass.
#[derive(Clone, Debug)]
pub struct PowerState {
    pub(crate) nodes: Vec<NodePower>,
    /// Jobs waiting for nodes to be resumed, in the order they were allocated.
    pub(crate) resume_jobs: Vec<JobId>,
    pub(crate) resume_bucket: TokenBucket,
    pub(crate) suspend_bucket: TokenBucket,
    /// When the last power pass ran.
    pub(crate) last_scan: i64,
    /// When a node last changed in a way the power pass reacts to (Slurm's `last_node_update`).
    pub(crate) last_change: i64,
    /// Nodes powered up or booting (`power_up_node_bitmap`), what `max_powered_nodes` counts.
    pub(crate) powered_up: NodeBitmap,
    /// Automatic power saving: SuspendTime suspends and job-driven resumes (§1.2).
    pub(crate) automatic: bool,
    /// SuspendExcNodes, SuspendExcParts and SuspendExcStates, resolved.
    pub(crate) exclusions: Exclusions,
    /// Per node, the next time a pass has something to do for it, exclusions and rates aside
    /// (`i64::MAX`: never as things stand); kept by every change to the node.
    pub(crate) due: DueTimes,
}

/// Per node, the next time the power pass has something to do for it (`i64::MAX`: never as
/// things stand), with how many nodes have such a time: on a cluster where none has (no power
/// saving, no request) asking for the earliest costs one comparison, not a walk over the nodes
/// at every event of a replay.
#[derive(Clone, Debug, Default)]
pub(crate) struct DueTimes {
    times: Vec<i64>,
    /// Nodes whose time is not `i64::MAX`.
    set: usize,
}

impl DueTimes {
    fn new(times: Vec<i64>) -> Self {
        let set = times.iter().filter(|&&t| t != i64::MAX).count();
        Self { times, set }
    }

    /// Node `n`'s time.
    #[inline]
    pub(crate) fn get(&self, n: usize) -> i64 {
        self.times[n]
    }

    /// Sets node `n`'s time.
    #[inline]
    pub(crate) fn set(&mut self, n: usize, due: i64) {
        let old = std::mem::replace(&mut self.times[n], due);
        match (old == i64::MAX, due == i64::MAX) {
            (true, false) => self.set += 1,
            (false, true) => self.set -= 1,
            _ => {}
        }
    }

    /// Whether some node has a time.
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.set > 0
    }

    /// The earliest time of any node, if one has a time.
    pub(crate) fn earliest(&self) -> Option<i64> {
        if !self.any() {
            return None;
        }
        self.times.iter().copied().filter(|&t| t != i64::MAX).min()
    }
}

impl PowerState {
    /// The state at start-up `now`: CLOUD nodes are IDLE+CLOUD+POWERED_DOWN with no LastBusyTime;
    /// every other node registered at start-up, so its LastBusyTime is `now`.
    pub fn new(cluster: &Cluster, now: i64) -> Self {
        let timers = effective_timers(cluster);
        let mut powered_up = NodeBitmap::with_capacity(cluster.nodes.len());
        let nodes = cluster
            .nodes
            .iter()
            .zip(timers)
            .enumerate()
            .map(|(i, (node, timers))| {
                let cloud = node.state == ConfigState::Cloud;
                if !cloud && node.state != ConfigState::Future {
                    powered_up.insert(i as u32);
                }
                NodePower {
                    flags: if cloud {
                        PowerFlags::POWERED_DOWN
                    } else {
                        PowerFlags::NONE
                    },
                    last_busy: (!cloud).then_some(now),
                    boot_requested: None,
                    suspend_requested: None,
                    timers,
                    why: None,
                    down_request: None,
                    cloud,
                }
            })
            .collect::<Vec<_>>();
        let p = &cluster.power;
        let interval = p.power_save_interval.max(p.power_save_min_interval);
        let automatic = program_set(&p.suspend_program)
            && program_set(&p.resume_program)
            && nodes.iter().any(|n| n.timers.suspend_time.is_some())
            && p.resume_rate <= 60_000
            && p.suspend_rate <= 60_000
            && ((p.resume_rate == 0 && p.suspend_rate == 0)
                || (p.power_save_interval <= 60 && p.power_save_min_interval <= 60));
        // At start-up every node is idle: due SuspendTime after now under automatic power saving.
        let due = cluster
            .nodes
            .iter()
            .zip(&nodes)
            .map(|(node, np)| match (np.last_busy, np.timers.suspend_time) {
                (Some(busy), Some(st)) if automatic && node.state != ConfigState::Future => {
                    busy.saturating_add(st as i64 + 1)
                }
                _ => i64::MAX,
            })
            .collect();
        let due = DueTimes::new(due);
        Self {
            due,
            nodes,
            resume_jobs: Vec::new(),
            resume_bucket: TokenBucket::new(p.resume_rate, interval),
            suspend_bucket: TokenBucket::new(p.suspend_rate, interval),
            // As if a pass had run the second before start-up and the nodes changed at start-up:
            // the first tick runs a pass, as slurmctld's power thread does when it starts.
            last_scan: now - 1 - p.power_save_min_interval as i64,
            last_change: now,
            powered_up,
            automatic,
            exclusions: Exclusions::of_cluster(cluster),
        }
    }

    /// One node's power record.
    pub fn node(&self, n: usize) -> &NodePower {
        &self.nodes[n]
    }

    /// How long a power program may run before it is killed (Slurm's `max_timeout`, §1.17):
    /// the longest of the global and every partition's SuspendTimeout and ResumeTimeout;
    /// `None` when one of them is INFINITE.
    pub fn program_timeout(cluster: &Cluster) -> Option<u64> {
        let p = &cluster.power;
        let mut longest = Some(p.suspend_timeout.max(p.resume_timeout.seconds()?));
        for part in &cluster.partitions {
            if let Some(t) = part.power.resume_timeout {
                longest = longest.zip(t.seconds()).map(|(a, b)| a.max(b));
            }
            if let Some(t) = part.power.suspend_timeout {
                longest = longest.map(|a| a.max(t));
            }
        }
        longest
    }

    /// Whether automatic power saving is on (both programs set, some node with a finite
    /// SuspendTime, valid rates and intervals); manual requests and PowerDownOnIdle work either way.
    pub fn automatic(&self) -> bool {
        self.automatic
    }

    /// The power state the selection policy sees for a node with `flags`.
    pub fn policy_power(flags: PowerFlags) -> Power {
        if flags.has(PowerFlags::POWERING_UP) {
            Power::PoweringUp
        } else if flags.in_power_down() {
            Power::PoweredDown
        } else {
            Power::Up
        }
    }

    /// Notes a node change the next pass reacts to.
    pub(crate) fn touch(&mut self, now: i64) {
        self.last_change = self.last_change.max(now);
    }
}

/// Whether a program is configured (a non-empty path). Whether it exists and is executable is
/// the daemon's to check when it runs it; the engine never reads the file system.
pub fn program_set(program: &Option<String>) -> bool {
    program.as_deref().is_some_and(|p| !p.trim().is_empty())
}
