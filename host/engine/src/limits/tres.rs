//! Owns the TRES layout limits count in: cpu, mem, node, then each GRES name a limit names.

use sluice_cluster::{Cluster, TresLimits};

use super::reason::Tres;

/// Position of `cpu`, `mem` and `node` in a TRES vector; GRES follow.
const CPU: usize = 0;
const MEM: usize = 1;
const NODE: usize = 2;
const FIXED: usize = 3;

/// Which GRES names limits count: those some QOS or association limit names, so a job's other
/// GRES cost nothing to track.
#[derive(Clone, Debug, Default)]
pub(crate) struct TresLayout {
    gres: Vec<String>,
}

impl TresLayout {
    /// The layout of every GRES a limit of `cluster` names.
    pub fn of(cluster: &Cluster) -> Self {
        let mut gres: Vec<String> = Vec::new();
        let qos = cluster.qos.iter().flat_map(|q| {
            let l = &q.limits;
            [
                &l.max_tres_per_job,
                &l.max_tres_per_user,
                &l.max_tres_mins_per_job,
                &l.grp_tres,
            ]
        });
        let assoc = cluster.associations.iter().flat_map(|a| {
            let l = &a.limits;
            [&l.max_tres_per_job, &l.max_tres_mins_per_job, &l.grp_tres]
        });
        for limits in qos.chain(assoc) {
            for (name, _) in &limits.gres {
                if !gres.contains(name) {
                    gres.push(name.clone());
                }
            }
        }
        Self { gres }
    }

    /// Entries in a TRES vector.
    pub fn len(&self) -> usize {
        FIXED + self.gres.len()
    }

    /// A job's TRES: CPUs, memory and nodes, and its GRES counts by name (`gres` gives
    /// `(name, total)` pairs, names not in the layout ignored).
    pub fn amounts<'a>(
        &self,
        (cpus, mem_mb, nodes): (u64, u64, u64),
        gres: impl IntoIterator<Item = (&'a str, u64)>,
    ) -> Vec<u64> {
        let mut out = vec![0; self.len()];
        out[CPU] = cpus;
        out[MEM] = mem_mb;
        out[NODE] = nodes;
        for (name, count) in gres {
            if let Some(i) = self.gres.iter().position(|g| g == name) {
                out[FIXED + i] += count;
            }
        }
        out
    }

    /// Which TRES an entry of the vector is.
    pub fn kind(index: usize) -> Tres {
        match index {
            CPU => Tres::Cpu,
            MEM => Tres::Mem,
            NODE => Tres::Node,
            _ => Tres::Gres,
        }
    }
}

impl TresLayout {
    /// Entry `i` of limit `l`, `None` when not limited.
    pub fn limit(&self, l: &TresLimits, i: usize) -> Option<u64> {
        match i {
            CPU => l.cpu,
            MEM => l.mem_mb,
            NODE => l.node,
            _ => {
                let name = self.gres.get(i - FIXED)?;
                l.gres.iter().find(|(g, _)| g == name).map(|(_, c)| *c)
            }
        }
    }
}
