//! Owns node state: health, power, free CPUs, memory, GRES, jobs per node, partitions' nodes.
//!
//! Node state owned by the engine: health, power, free CPUs, memory and GRES, and the jobs on each node.

use serde::Serialize;
use sluice_cluster::{Cluster, Node, NodeId, NodeState as ConfigState, OverSubscribe};
use sluice_policy::bitmap::nodes_of_words;
use sluice_policy::{NodeBitmap, NodeTable, Placement, Power};

use crate::job::{Job, JobId};

/// The nodes of one partition and how its jobs share CPUs, fixed at start-up.
#[derive(Clone, Debug)]
pub(crate) struct PartView {
    pub nodes: NodeBitmap,
    pub oversubscribe: OverSubscribe,
}

impl PartView {
    /// The nodes of each of the cluster's partitions, in partition order.
    pub fn of_cluster(cluster: &Cluster) -> Vec<PartView> {
        cluster
            .partitions
            .iter()
            .map(|p| PartView {
                nodes: p.nodes.iter().map(|n| n.0).collect(),
                oversubscribe: p.access.oversubscribe,
            })
            .collect()
    }

    /// The sharing rows `job` may use here (the `OverSubscribe` count under FORCE, or under
    /// YES when the job asked `--oversubscribe`); none for an exclusive job, which takes whole
    /// nodes whatever the partition says.
    pub fn share_rows(&self, job: &Job) -> u32 {
        if job.spec.exclusive {
            return 0;
        }
        self.oversubscribe.share_rows(job.spec.oversubscribe)
    }
}

/// Whether a node may take new work, Slurm's base node states minus the allocation part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Health {
    /// Responding and not drained: IDLE, MIXED or ALLOCATED depending on its jobs.
    Up,
    /// Not responding or set DOWN; its jobs were ended with NODE_FAIL.
    Down,
    /// Running jobs may finish, nothing new starts (DRAINING, then DRAINED).
    Drain,
    /// Failed; like DOWN, waiting for an admin.
    Fail,
    /// Defined for the future; invisible to scheduling.
    Future,
}

/// One node's runtime state besides its free resources (those live in the engine's [`NodeTable`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeRuntime {
    /// Host name.
    pub name: String,
    /// Health.
    pub health: Health,
    /// Power state; kept here so suspend/resume and cloud nodes need no other place.
    pub power: Power,
    /// Features for `--constraint`.
    pub features: Vec<String>,
    /// Configured GRES types per name (`gpu` → `a100`), for typed requests.
    pub gres_types: Vec<(String, String)>,
    /// Jobs holding resources on the node.
    pub jobs: Vec<JobId>,
    /// Why the node was set DOWN or DRAIN.
    pub reason: Option<String>,
}

/// Every node's state, with the free-resource columns the selection plugin sees.
#[derive(Clone, Debug)]
pub struct NodeState {
    nodes: Vec<NodeRuntime>,
    table: NodeTable,
    /// Node indices by (Weight, index); `None` when that is plain index order (every node has
    /// the same weight, the usual case).
    by_weight: Option<Vec<u32>>,
    /// Nodes whose health is UP and that power saving does not hold back, kept with `health`
    /// since every pass asks for it.
    usable: NodeBitmap,
    /// Nodes power saving holds back: powering down, or idle with a power-down request.
    power_blocked: NodeBitmap,
    /// Nodes with at least one free CPU, kept with every commit and release, so that a busy
    /// machine's full nodes are skipped 64 at a time.
    open: NodeBitmap,
    /// The fewest CPUs and the least memory of any node (configuration, fixed for the
    /// engine's life).
    smallest: (u32, u64),
}

impl NodeState {
    /// Builds the state from the configured nodes: UNKNOWN counts as IDLE, CLOUD as powered down.
    pub fn from_cluster(cluster: &Cluster) -> Self {
        let kinds = gres_kinds(cluster);
        let mut table = NodeTable {
            gres_kinds: kinds.clone(),
            ..Default::default()
        };
        let mut nodes = Vec::with_capacity(cluster.nodes.len());
        for node in &cluster.nodes {
            let (health, power) = initial_state(node.state);
            push_row(&mut table, node, power, &kinds);
            nodes.push(NodeRuntime {
                name: node.name.clone(),
                health,
                power,
                features: node.features.clone(),
                gres_types: node
                    .gres
                    .iter()
                    .filter_map(|g| g.gres_type.clone().map(|t| (g.name.clone(), t)))
                    .collect(),
                jobs: Vec::new(),
                reason: None,
            });
        }
        // One sharing row per CPU share the largest OverSubscribe count allows; none at all,
        // and so no cost, when no partition shares CPUs.
        let rows = cluster
            .partitions
            .iter()
            .map(|p| p.access.oversubscribe.rows())
            .max()
            .unwrap_or(0);
        table.share_rows = rows;
        table.row_free_cpus = table
            .cpus
            .iter()
            .flat_map(|&c| std::iter::repeat_n(c, rows as usize))
            .collect();
        let mut by_weight: Vec<u32> = (0..nodes.len() as u32).collect();
        by_weight.sort_by_key(|&n| (table.weight[n as usize], n));
        let mut usable = NodeBitmap::with_capacity(nodes.len());
        for (n, node) in nodes.iter().enumerate() {
            if node.health == Health::Up {
                usable.insert(n as u32);
            }
        }
        let in_index_order = by_weight.iter().enumerate().all(|(i, &n)| n as usize == i);
        let smallest = (
            table.cpus.iter().copied().min().unwrap_or(0),
            table.memory_mb.iter().copied().min().unwrap_or(0),
        );
        let mut state = Self {
            power_blocked: NodeBitmap::with_capacity(nodes.len()),
            open: NodeBitmap::with_capacity(nodes.len()),
            smallest,
            nodes,
            table,
            by_weight: (!in_index_order).then_some(by_weight),
            usable,
        };
        for n in 0..state.nodes.len() as u32 {
            state.refresh_open(n);
        }
        state
    }

    /// Nodes with at least one free CPU, one no job holds or one free in a sharing row.
    pub fn open_nodes(&self) -> &NodeBitmap {
        &self.open
    }

    /// Sets node `n`'s bit of [`NodeState::open_nodes`] from its free CPUs.
    fn refresh_open(&mut self, n: u32) {
        if self.table.has_free_cpu(n as usize) {
            self.open.insert(n);
        } else {
            self.open.remove(n);
        }
    }

    /// Node indices by (Weight, index): the order whole nodes are reserved in; `None` when it is
    /// index order. Weights are configuration, so the order is fixed for the engine's life.
    pub fn by_weight(&self) -> Option<&[u32]> {
        self.by_weight.as_deref()
    }

    /// Whether every node is configured with at least `cpus` CPUs and `memory_mb` of memory,
    /// so that a share that size needs no check node by node.
    pub fn every_node_has(&self, cpus: u32, memory_mb: u64) -> bool {
        cpus <= self.smallest.0 && memory_mb <= self.smallest.1
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The free-resource table, as handed to `SelectionPolicy::begin_pass`.
    pub fn table(&self) -> &NodeTable {
        &self.table
    }

    /// One node's runtime state.
    pub fn node(&self, n: NodeId) -> &NodeRuntime {
        &self.nodes[n.index()]
    }

    /// Every node's runtime state, in cluster order.
    pub fn nodes(&self) -> &[NodeRuntime] {
        &self.nodes
    }

    /// Index of a GRES kind in the table, by name.
    pub fn gres_kind(&self, name: &str) -> Option<u32> {
        self.table
            .gres_kinds
            .iter()
            .position(|k| k == name)
            .map(|i| i as u32)
    }

    /// Whether a node may take new jobs now: health UP and not held back by power saving
    /// (powered-down nodes may: allocating them is what resumes them).
    pub fn usable(&self, n: usize) -> bool {
        self.usable.contains(n as u32)
    }

    /// Nodes that may take new jobs.
    pub fn usable_nodes(&self) -> &NodeBitmap {
        &self.usable
    }

    /// Free CPUs summed over `nodes` (each node's best sharing row where that has more): no
    /// job needing more can be placed on them.
    pub fn free_cpus_on(&self, nodes: &NodeBitmap) -> u64 {
        let open = nodes.words.iter().zip(&self.open.words).map(|(a, b)| a & b);
        let t = &self.table;
        nodes_of_words(0, open)
            .map(|n| u64::from(t.free_cpus_for(n as usize, t.share_rows)))
            .sum()
    }

    /// Whether nothing is allocated on the node.
    pub fn is_idle(&self, n: usize) -> bool {
        self.nodes[n].jobs.is_empty()
    }

    /// Subtracts a checked placement and records the job on its nodes.
    pub fn commit(&mut self, job: JobId, p: &Placement) {
        self.table.commit(p);
        for &n in &p.nodes {
            self.nodes[n as usize].jobs.push(job);
            self.refresh_open(n);
        }
    }

    /// Gives back a placement and forgets the job on its nodes.
    pub fn release(&mut self, job: JobId, p: &Placement) {
        self.table.release(p);
        for &n in &p.nodes {
            self.nodes[n as usize].jobs.retain(|j| *j != job);
            self.refresh_open(n);
        }
    }

    /// Sets a node's health and reason.
    pub fn set_health(&mut self, n: NodeId, health: Health, reason: Option<String>) {
        let node = &mut self.nodes[n.index()];
        node.health = health;
        node.reason = reason;
        self.refresh_usable(n.0);
    }

    /// Holds a node back from new work for power saving (powering down, or idle with a power-down
    /// request), or lets it go again (power-save.md §1.1).
    pub fn set_power_blocked(&mut self, n: NodeId, blocked: bool) {
        // Usable follows health and this hold, each kept where it changes: an unchanged hold
        // (every start and end on a cluster without power saving) changes nothing.
        if self.power_blocked.contains(n.0) == blocked {
            return;
        }
        if blocked {
            self.power_blocked.insert(n.0);
        } else {
            self.power_blocked.remove(n.0);
        }
        self.refresh_usable(n.0);
    }

    /// Sets node `n`'s bit of [`NodeState::usable_nodes`] from its health and power hold.
    fn refresh_usable(&mut self, n: u32) {
        if self.nodes[n as usize].health == Health::Up && !self.power_blocked.contains(n) {
            self.usable.insert(n);
        } else {
            self.usable.remove(n);
        }
    }

    /// Sets a node's power state (in the runtime state and in the table the plugin sees).
    pub fn set_power(&mut self, n: NodeId, power: Power) {
        self.nodes[n.index()].power = power;
        self.table.power[n.index()] = power;
    }

    /// The state `sinfo` would print: IDLE, MIXED, ALLOCATED, DRAINING, DRAINED, DOWN, FAIL or FUTURE,
    /// with `~` for powered down and `#` for powering up, as Slurm suffixes them.
    pub fn state_name(&self, n: NodeId) -> String {
        let i = n.index();
        let node = &self.nodes[i];
        let busy = !node.jobs.is_empty();
        let full = self.table.free_cpus[i] == 0;
        let base = match (node.health, busy, full) {
            (Health::Up, false, _) => "IDLE",
            (Health::Up, true, false) => "MIXED",
            (Health::Up, true, true) => "ALLOCATED",
            (Health::Drain, true, _) => "DRAINING",
            (Health::Drain, false, _) => "DRAINED",
            (Health::Down, ..) => "DOWN",
            (Health::Fail, ..) => "FAIL",
            (Health::Future, ..) => "FUTURE",
        };
        let suffix = match node.power {
            Power::Up => "",
            Power::PoweringUp => "#",
            Power::PoweredDown => "~",
        };
        format!("{base}{suffix}")
    }
}

/// The GRES names the cluster's nodes configure, in order of first appearance.
fn gres_kinds(cluster: &Cluster) -> Vec<String> {
    let mut kinds: Vec<String> = Vec::new();
    for node in &cluster.nodes {
        for g in &node.gres {
            if !kinds.contains(&g.name) {
                kinds.push(g.name.clone());
            }
        }
    }
    kinds
}

/// Health and power of a node in its configured state.
fn initial_state(state: ConfigState) -> (Health, Power) {
    match state {
        ConfigState::Unknown | ConfigState::Idle => (Health::Up, Power::Up),
        ConfigState::Down => (Health::Down, Power::Up),
        ConfigState::Drain => (Health::Drain, Power::Up),
        ConfigState::Fail => (Health::Fail, Power::Up),
        ConfigState::Future => (Health::Future, Power::Up),
        ConfigState::Cloud => (Health::Up, Power::PoweredDown),
    }
}

/// Adds a node's row to the table, everything free: CPUs, memory, weight, power, and a count
/// per GRES kind.
fn push_row(table: &mut NodeTable, node: &Node, power: Power, kinds: &[String]) {
    table.cpus.push(node.cpus);
    table.free_cpus.push(node.cpus);
    table.memory_mb.push(node.real_memory_mb);
    table.free_memory_mb.push(node.real_memory_mb);
    table.weight.push(node.weight);
    table.power.push(power);
    for kind in kinds {
        // no_consume GRES never run out, so the table shows them as always free.
        let count: u64 = node
            .gres
            .iter()
            .filter(|g| &g.name == kind)
            .map(|g| g.count)
            .sum();
        let count = count.min(u64::from(u32::MAX)) as u32;
        table.gres_total.push(count);
        table.gres_free.push(count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::synthetic_cluster;

    /// The open map and the free-CPU sum, worked out the plain way.
    fn plain(state: &NodeState) -> (Vec<u32>, u64) {
        let t = state.table();
        let open = (0..t.len() as u32).filter(|&n| t.free_cpus[n as usize] > 0);
        (
            open.collect(),
            t.free_cpus.iter().map(|&c| u64::from(c)).sum(),
        )
    }

    #[test]
    fn every_node_has_what_the_smallest_node_has() {
        let mut cluster = synthetic_cluster(4, 0);
        cluster.nodes[1].cpus = 16;
        cluster.nodes[2].real_memory_mb = 1_000;
        let state = NodeState::from_cluster(&cluster);
        assert!(state.every_node_has(16, 1_000));
        assert!(!state.every_node_has(17, 1_000));
        assert!(!state.every_node_has(16, 1_001));
        assert!(NodeState::from_cluster(&synthetic_cluster(4, 0)).every_node_has(64, 256_000));
    }

    #[test]
    fn open_nodes_follow_every_commit_and_release() {
        let mut state = NodeState::from_cluster(&synthetic_cluster(130, 0));
        let all = NodeBitmap::full(state.len());
        let mut rng = sluice_policy::fixtures::Rng::new(0x0DD_B1A5);
        let mut running: Vec<(JobId, Placement)> = Vec::new();
        for round in 0..400u64 {
            if rng.below(3) == 0 && !running.is_empty() {
                let (job, p) = running.swap_remove(rng.below(running.len() as u64) as usize);
                state.release(job, &p);
            } else {
                // All of a node's free CPUs, or one of them, on a few nodes.
                let t = state.table();
                let mut nodes: Vec<u32> = (0..3)
                    .map(|_| rng.below(t.len() as u64) as u32)
                    .filter(|&n| t.free_cpus[n as usize] > 0)
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                let cpus: Vec<u32> = nodes
                    .iter()
                    .map(|&n| {
                        if rng.below(2) == 0 {
                            t.free_cpus[n as usize]
                        } else {
                            1
                        }
                    })
                    .collect();
                let p = Placement {
                    memory_mb: vec![0; nodes.len()],
                    gres: vec![0; nodes.len() * t.gres_kinds.len()],
                    nodes,
                    cpus,
                    rows: vec![],
                };
                state.commit(round as JobId, &p);
                running.push((round as JobId, p));
            }
            let (open, free) = plain(&state);
            assert_eq!(
                state.open_nodes().iter().collect::<Vec<_>>(),
                open,
                "round {round}"
            );
            assert_eq!(state.free_cpus_on(&all), free, "round {round}");
        }
    }
}
