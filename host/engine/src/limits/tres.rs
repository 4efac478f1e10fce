//! Owns the TRES layout limits count in: cpu, mem, node, then each GRES and each license a
//! limit names.

use sluice_cluster::{Cluster, TresLimits};

use super::reason::Tres;

/// Position of `cpu`, `mem` and `node` in a TRES vector; GRES, then licenses, follow.
const CPU: usize = 0;
const MEM: usize = 1;
const NODE: usize = 2;
const FIXED: usize = 3;

/// Which GRES and license names limits count: those some QOS or association limit names, so a
/// job's other GRES and licenses cost nothing to track.
#[derive(Clone, Debug, Default)]
pub(crate) struct TresLayout {
    gres: Vec<String>,
    licenses: Vec<String>,
}

impl TresLayout {
    /// The layout of every GRES and license a limit of `cluster` names.
    pub fn of(cluster: &Cluster) -> Self {
        let mut out = Self::default();
        let qos = cluster.qos.iter().flat_map(|q| {
            let l = &q.limits;
            [
                &l.max_tres_per_job,
                &l.max_tres_per_user,
                &l.max_tres_mins_per_job,
                &l.grp_tres,
                &l.max_tres_per_node,
                &l.grp_tres_mins,
                &l.grp_tres_run_mins,
            ]
        });
        let assoc = cluster.associations.iter().flat_map(|a| {
            let l = &a.limits;
            [
                &l.max_tres_per_job,
                &l.max_tres_mins_per_job,
                &l.grp_tres,
                &l.max_tres_per_node,
                &l.grp_tres_mins,
                &l.grp_tres_run_mins,
            ]
        });
        for limits in qos.chain(assoc) {
            for (name, _) in &limits.gres {
                if !out.gres.contains(name) {
                    out.gres.push(name.clone());
                }
            }
            for (name, _) in &limits.licenses {
                if !out.licenses.contains(name) {
                    out.licenses.push(name.clone());
                }
            }
        }
        out
    }

    /// Entries in a TRES vector.
    pub fn len(&self) -> usize {
        FIXED + self.gres.len() + self.licenses.len()
    }

    /// A job's TRES: CPUs, memory and nodes, its GRES counts by name (`gres` gives
    /// `(name, total)` pairs) and its license counts by name; names not in the layout ignored.
    pub fn amounts<'a>(
        &self,
        (cpus, mem_mb, nodes): (u64, u64, u64),
        gres: impl IntoIterator<Item = (&'a str, u64)>,
        licenses: impl IntoIterator<Item = (&'a str, u64)>,
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
        let first_license = FIXED + self.gres.len();
        for (name, count) in licenses {
            if let Some(i) = self.licenses.iter().position(|l| l == name) {
                out[first_license + i] += count;
            }
        }
        out
    }

    /// Entry `i`'s name as sacctmgr writes TRES: `cpu`, `mem`, `node`, `gres/NAME`,
    /// `license/NAME`.
    pub fn name(&self, i: usize) -> String {
        match i {
            CPU => "cpu".into(),
            MEM => "mem".into(),
            NODE => "node".into(),
            i if i < FIXED + self.gres.len() => format!("gres/{}", self.gres[i - FIXED]),
            i => format!(
                "license/{}",
                self.licenses
                    .get(i - FIXED - self.gres.len())
                    .map_or("", String::as_str)
            ),
        }
    }

    /// Which TRES an entry of the vector is.
    pub fn kind(&self, index: usize) -> Tres {
        match index {
            CPU => Tres::Cpu,
            MEM => Tres::Mem,
            NODE => Tres::Node,
            i if i < FIXED + self.gres.len() => Tres::Gres,
            _ => Tres::License,
        }
    }

    /// Entry `i` on one node of a job over `nodes` nodes, for the TRES a node holds a share of
    /// (CPUs, memory, GRES); `None` for nodes and licenses, which `MaxTRESPerNode` does not
    /// bound.
    pub fn per_node(&self, i: usize, amount: u64, nodes: u64) -> Option<u64> {
        match self.kind(i) {
            Tres::Cpu | Tres::Mem | Tres::Gres => Some(amount.div_ceil(nodes.max(1))),
            Tres::Node | Tres::License => None,
        }
    }

    /// The node count of a TRES vector.
    pub fn nodes(amounts: &[u64]) -> u64 {
        amounts.get(NODE).copied().unwrap_or(0)
    }

    /// Entry `i` of limit `l`, `None` when not limited.
    pub fn limit(&self, l: &TresLimits, i: usize) -> Option<u64> {
        let named = |list: &[(String, u64)], name: &String| {
            list.iter().find(|(n, _)| n == name).map(|(_, c)| *c)
        };
        match i {
            CPU => l.cpu,
            MEM => l.mem_mb,
            NODE => l.node,
            _ if i < FIXED + self.gres.len() => named(&l.gres, &self.gres[i - FIXED]),
            _ => named(&l.licenses, self.licenses.get(i - FIXED - self.gres.len())?),
        }
    }
}
