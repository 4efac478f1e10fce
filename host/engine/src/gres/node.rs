//! Owns the GRES on each node (Slurm's `gres_node_state_t`): devices, their holders, counts.
//!
//! GRES on the nodes (Slurm's `gres_node_state_t`): configured devices, which job holds each, counts where there are no devices.

use serde::Serialize;
use sluice_cluster::{Cluster, Node};
use sluice_policy::{Device, GresNodeConfig};

use crate::job_id::JobId;

/// Slurm's limit on a file-backed GRES count per node; count-only units beyond it stay counts.
pub const MAX_UNITS: u64 = 1024;

/// One device (or unit of a count-only GRES that has a policy) and who holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceState {
    /// Index among the node's devices of this name, in gres.conf order (the global index).
    pub index: u32,
    /// Type (`a100`), if any.
    pub gres_type: Option<String>,
    /// Device file; empty for a unit of a count-only GRES.
    pub file: String,
    /// Cores the device is close to; empty means any.
    pub cores: Vec<u32>,
    /// Link counts to the node's other devices.
    pub links: Vec<i32>,
    /// The job holding it.
    pub job: Option<JobId>,
}

/// One configured type of a GRES name on a node, with its count and what jobs hold of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TypeCount {
    /// Type, `None` when untyped.
    pub gres_type: Option<String>,
    /// Configured count.
    pub count: u64,
    /// Allocated count.
    pub alloc: u64,
}

/// One GRES name on one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GresOnNode {
    /// GRES name (`gpu`).
    pub name: String,
    /// Configured types with counts (one untyped entry for an untyped GRES).
    pub types: Vec<TypeCount>,
    /// `no_consume`: jobs never use it up, so nothing is tracked per job.
    pub no_consume: bool,
    /// Devices (bitmap-tracked); empty when only counts are tracked (CountOnly).
    pub devices: Vec<DeviceState>,
}

impl GresOnNode {
    /// Configured count over every type.
    pub fn count(&self) -> u64 {
        self.types.iter().map(|t| t.count).sum()
    }

    /// Allocated count over every type.
    pub fn alloc(&self) -> u64 {
        self.types.iter().map(|t| t.alloc).sum()
    }

    /// Configured count of a type (`None`: of every type).
    pub fn count_of(&self, gres_type: Option<&str>) -> u64 {
        match gres_type {
            None => self.count(),
            Some(t) => self
                .types
                .iter()
                .filter(|c| c.gres_type.as_deref() == Some(t))
                .map(|c| c.count)
                .sum(),
        }
    }

    /// Free count of a type (`None`: of every type); no_consume GRES are always all free.
    pub fn free_of(&self, gres_type: Option<&str>) -> u64 {
        if self.no_consume {
            return self.count_of(gres_type);
        }
        self.types
            .iter()
            .filter(|c| gres_type.is_none() || c.gres_type.as_deref() == gres_type)
            .map(|c| c.count.saturating_sub(c.alloc))
            .sum()
    }

    /// Whether per-device bitmaps are kept.
    pub fn has_devices(&self) -> bool {
        !self.devices.is_empty()
    }

    /// Indices of free devices.
    pub fn free_devices(&self) -> Vec<u32> {
        self.devices
            .iter()
            .filter(|d| d.job.is_none())
            .map(|d| d.index)
            .collect()
    }

    /// Gives `devices` to `job`, counting them against their types.
    pub fn take_devices(&mut self, job: JobId, devices: &[u32]) {
        for &i in devices {
            let d = &mut self.devices[i as usize];
            d.job = Some(job);
            let t = d.gres_type.clone();
            if let Some(c) = self.types.iter_mut().find(|c| c.gres_type == t) {
                c.alloc += 1;
            }
        }
    }

    /// Takes `count` of a type by count alone (first matching types first).
    pub fn take_count(&mut self, gres_type: Option<&str>, mut count: u64) {
        for c in self
            .types
            .iter_mut()
            .filter(|c| gres_type.is_none() || c.gres_type.as_deref() == gres_type)
        {
            let n = count.min(c.count.saturating_sub(c.alloc));
            c.alloc += n;
            count -= n;
        }
    }

    /// Gives back what `job` holds: its devices, and `counts` (type, count) taken by count.
    pub fn give_back(&mut self, job: JobId, devices: &[u32], counts: &[(Option<String>, u64)]) {
        for &i in devices {
            let Some(d) = self.devices.get_mut(i as usize) else {
                continue;
            };
            if d.job != Some(job) {
                continue;
            }
            d.job = None;
            let t = d.gres_type.clone();
            if let Some(c) = self.types.iter_mut().find(|c| c.gres_type == t) {
                c.alloc = c.alloc.saturating_sub(1);
            }
        }
        for (t, mut count) in counts.iter().cloned() {
            for c in self
                .types
                .iter_mut()
                .filter(|c| t.is_none() || c.gres_type == t)
            {
                let n = count.min(c.alloc);
                c.alloc -= n;
                count -= n;
            }
        }
    }

    /// The devices as the contract describes them.
    pub fn contract_devices(&self) -> Vec<Device> {
        self.devices
            .iter()
            .map(|d| Device {
                index: d.index,
                type_name: d.gres_type.clone().unwrap_or_default(),
                file: d.file.clone(),
                cores: d.cores.clone(),
                links: d.links.clone(),
            })
            .collect()
    }
}

/// Every node's GRES, by node and then by GRES kind (the node table's kind order).
#[derive(Clone, Debug, Default)]
pub struct GresState {
    kinds: Vec<String>,
    nodes: Vec<Vec<GresOnNode>>,
}

impl GresState {
    /// Builds the state from the configured nodes. Devices come from gres.conf files; a
    /// count-only GRES gets unit devices when `units_for(name)` (a policy picks for it).
    pub fn from_cluster(
        cluster: &Cluster,
        kinds: &[String],
        units_for: impl Fn(&str) -> bool,
    ) -> Self {
        let nodes = cluster
            .nodes
            .iter()
            .map(|node| {
                kinds
                    .iter()
                    .map(|k| on_node(node, k, units_for(k)))
                    .collect()
            })
            .collect();
        Self {
            kinds: kinds.to_vec(),
            nodes,
        }
    }

    /// GRES kind names, in table order.
    pub fn kinds(&self) -> &[String] {
        &self.kinds
    }

    /// One node's GRES of one kind.
    pub fn get(&self, node: usize, kind: usize) -> &GresOnNode {
        &self.nodes[node][kind]
    }

    /// One node's GRES of one kind, mutably.
    pub fn get_mut(&mut self, node: usize, kind: usize) -> &mut GresOnNode {
        &mut self.nodes[node][kind]
    }

    /// One node's GRES, every kind (empty entries for kinds the node lacks).
    pub fn node(&self, node: usize) -> &[GresOnNode] {
        &self.nodes[node]
    }

    /// Every node's configuration of `kind` as `GresPolicy::validate` takes it (nodes without it left out).
    pub fn node_configs(
        &self,
        kind: usize,
        nodes: &[sluice_cluster::Node],
    ) -> (Vec<usize>, Vec<GresNodeConfig>) {
        let mut which = Vec::new();
        let mut out = Vec::new();
        for (n, gres) in self.nodes.iter().enumerate() {
            let g = &gres[kind];
            if g.count() == 0 {
                continue;
            }
            which.push(n);
            out.push(GresNodeConfig {
                node: nodes[n].name.clone(),
                count: g.count(),
                cores: nodes[n].cores(),
                devices: g.contract_devices(),
            });
        }
        (which, out)
    }
}

fn on_node(node: &Node, kind: &str, units: bool) -> GresOnNode {
    let entries: Vec<_> = node.gres.iter().filter(|g| g.name == kind).collect();
    let mut types: Vec<TypeCount> = Vec::new();
    for e in &entries {
        match types.iter_mut().find(|t| t.gres_type == e.gres_type) {
            Some(t) => t.count += e.count,
            None => types.push(TypeCount {
                gres_type: e.gres_type.clone(),
                count: e.count,
                alloc: 0,
            }),
        }
    }
    let no_consume = entries.iter().any(|e| e.no_consume);
    let mut devices = Vec::new();
    let with_files = !entries.is_empty() && entries.iter().all(|e| !e.count_only());
    if with_files && !no_consume {
        for e in &entries {
            for d in &e.devices {
                devices.push(DeviceState {
                    index: d.index,
                    gres_type: e.gres_type.clone(),
                    file: d.file.clone(),
                    cores: d.cores.clone(),
                    links: d.links.clone(),
                    job: None,
                });
            }
        }
        devices.sort_by_key(|d| d.index);
        // Indices must be positions for the bitmaps; files that do not match the count leave counts only.
        let total: u64 = types.iter().map(|t| t.count).sum();
        if devices
            .iter()
            .enumerate()
            .any(|(i, d)| d.index as usize != i)
            || devices.len() as u64 != total
        {
            devices.clear();
        }
    } else if units && !no_consume && types.iter().map(|t| t.count).sum::<u64>() <= MAX_UNITS {
        for t in &types {
            for _ in 0..t.count {
                devices.push(DeviceState {
                    index: devices.len() as u32,
                    gres_type: t.gres_type.clone(),
                    file: String::new(),
                    cores: Vec::new(),
                    links: Vec::new(),
                    job: None,
                });
            }
        }
    }
    GresOnNode {
        name: kind.to_string(),
        types,
        no_consume,
        devices,
    }
}
