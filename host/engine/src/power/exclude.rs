//! Owns the power exclusions: `SuspendExcNodes` (with `:count`), `SuspendExcParts` and
//! `SuspendExcStates`, and which nodes they keep up in a pass (§1.6).

use std::collections::HashMap;

use sluice_cluster::Cluster;
use sluice_policy::NodeBitmap;

/// A `SuspendExcNodes` group with a count: keep at least `count` of `nodes` up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountGroup {
    /// The group's nodes, in index order.
    pub nodes: Vec<u32>,
    /// How many to keep up.
    pub count: usize,
}

/// The exclusions as configured, resolved to node indices once.
#[derive(Clone, Debug, Default)]
pub struct Exclusions {
    /// `SuspendExcNodes` parts without a count, or whose count covers the whole part.
    pub nodes: NodeBitmap,
    /// `SuspendExcNodes` parts with a count smaller than the part.
    pub groups: Vec<CountGroup>,
    /// Nodes of the `SuspendExcParts` partitions.
    pub parts: NodeBitmap,
    /// `SuspendExcStates` as upper-case names.
    pub states: Vec<String>,
    /// Whether there is no exclusion at all, worked out once (a pass asks for every node).
    none: bool,
}

impl Exclusions {
    /// Resolves the configured exclusions (already checked by the config reader: known nodes,
    /// partitions and states). `:0` and a missing count mean the whole part, as in Slurm (Q4).
    pub fn of_cluster(cluster: &Cluster) -> Self {
        let n = cluster.nodes.len();
        let index: HashMap<&str, u32> = cluster
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (node.name.as_str(), i as u32))
            .collect();
        let mut out = Exclusions {
            nodes: NodeBitmap::with_capacity(n),
            parts: NodeBitmap::with_capacity(n),
            ..Exclusions::default()
        };
        for (expr, count) in cluster.power.suspend_exc_node_groups() {
            let mut nodes: Vec<u32> = sluice_hostlist::expand(expr)
                .unwrap_or_default()
                .iter()
                .filter_map(|name| index.get(name.as_str()).copied())
                .collect();
            nodes.sort_unstable();
            nodes.dedup();
            let count = count.and_then(|c| c.parse::<usize>().ok()).unwrap_or(0);
            if count == 0 || count >= nodes.len() {
                nodes.iter().for_each(|&i| out.nodes.insert(i));
            } else {
                out.groups.push(CountGroup { nodes, count });
            }
        }
        for name in &cluster.power.suspend_exc_parts {
            if let Some(p) = cluster.partitions.iter().find(|p| &p.name == name) {
                p.nodes.iter().for_each(|id| out.parts.insert(id.0));
            }
        }
        out.states = cluster
            .power
            .suspend_exc_states
            .iter()
            .map(|s| s.to_ascii_uppercase())
            .collect();
        out.none = out.nodes.is_empty()
            && out.groups.is_empty()
            && out.parts.is_empty()
            && out.states.is_empty();
        out
    }

    /// Whether there is any exclusion at all (the pass then skips computing them).
    pub fn is_empty(&self) -> bool {
        self.none
    }

    /// The nodes each count group keeps up this pass (`_pick_exc_nodes`): busy nodes count
    /// toward the number kept; the rest are the first suspendable, not powered-down nodes in
    /// index order. `suspendable(n)` and `active(n)` classify a node as Slurm does.
    pub fn kept_by_groups(
        &self,
        len: usize,
        suspendable: impl Fn(u32) -> bool,
        active: impl Fn(u32) -> bool,
    ) -> NodeBitmap {
        let mut kept = NodeBitmap::with_capacity(len);
        for group in &self.groups {
            let active_count = group.nodes.iter().filter(|&&n| active(n)).count();
            let keep = group.count.saturating_sub(active_count);
            group
                .nodes
                .iter()
                .copied()
                .filter(|&n| suspendable(n))
                .take(keep)
                .for_each(|n| kept.insert(n));
        }
        kept
    }
}
