//! Owns no state: whether a job fits, from node, GRES, license and reservation state it borrows.
//!
//! Built by `Engine::fit`; submission, the loops and planning all ask it.

use std::collections::BTreeSet;

use sluice_cluster::PartitionId;
use sluice_policy::{HresLayer, NodeBitmap};

use crate::gres::GresState;
use crate::gres::job::GresRecord;
use crate::job::Job;
use crate::job_id::JobId;
use crate::job_map::JobMap;
use crate::licenses::LicenseState;
use crate::node_state::{NodeState, PartView};
use crate::reservation::Reservations;

/// The state a fit is judged from, borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Fit<'a> {
    pub jobs: &'a JobMap,
    pub running: &'a BTreeSet<JobId>,
    pub nodes: &'a NodeState,
    pub parts: &'a [PartView],
    pub gres: &'a GresState,
    pub lic: &'a LicenseState,
    pub resv: &'a Reservations,
}

impl Fit<'_> {
    /// Whether at least the job's minimum node count of partition `p` could ever hold one node's
    /// share of it (stops counting as soon as enough are found).
    pub fn fits_somewhere(&self, job: &Job, p: PartitionId) -> bool {
        let need = job.fewest_nodes() as usize;
        let nodes = &self.parts[p.index()].nodes;
        if self.every_node_can_hold(job) {
            return nodes.len() >= need;
        }
        nodes
            .iter()
            .filter(|&n| self.node_can_hold(job, n as usize))
            .take(need)
            .count()
            == need
    }

    /// Whether every node's configuration can hold one node's share of the job without asking
    /// node by node: it asks for no GRES or features, and the smallest node holds its CPUs and
    /// memory ([`Fit::node_can_hold`] would say yes to each).
    pub fn every_node_can_hold(&self, job: &Job) -> bool {
        let per_node_cpus = job.cpus_per_node(job.max_nodes());
        job.gres_per_node.is_empty()
            && job.gres.records.is_empty()
            && job.gres_types.is_empty()
            && job.spec.constraint.is_none()
            && job.spec.required_nodes.is_empty()
            && job.spec.excluded_nodes.is_empty()
            && self
                .nodes
                .every_node_has(per_node_cpus, job.spec.memory_per_node_mb)
    }

    /// Whether node `i`'s configuration (CPUs, memory, GRES, features, GRES types) can hold one
    /// node's share of the job, and its node lists allow it, whatever its current state.
    pub fn node_can_hold(&self, job: &Job, i: usize) -> bool {
        let table = self.nodes.table();
        let kinds = table.gres_kinds.len();
        let per_node_cpus = job.cpus_per_node(job.max_nodes());
        let node = &self.nodes.nodes()[i];
        table.cpus[i] >= per_node_cpus
            && table.memory_mb[i] >= job.spec.memory_per_node_mb
            && job
                .gres_per_node
                .iter()
                .all(|&(k, c)| table.gres_total[i * kinds + k as usize] >= c)
            && self.gres_fits_config(job, i)
            && job
                .spec
                .constraint
                .as_ref()
                .is_none_or(|c| c.matches(&node.features))
            && job.gres_types.iter().all(|t| node.gres_types.contains(t))
            && job.spec.allows_node(&node.name)
    }

    /// Nodes of partition `p` whose configuration can hold one node's share of the job.
    pub fn static_mask(&self, job: &Job, p: PartitionId) -> NodeBitmap {
        let mut out = NodeBitmap::with_capacity(self.nodes.len());
        for n in self.parts[p.index()]
            .nodes
            .iter()
            .filter(|&n| self.node_can_hold(job, n as usize))
        {
            out.insert(n);
        }
        out
    }

    /// Whether node `i`'s configuration holds every GRES record of the job, type by type.
    pub fn gres_fits_config(&self, job: &Job, i: usize) -> bool {
        job.gres.records.iter().all(|r| {
            let g = self.gres.get(i, r.kind as usize);
            let same = per_node_of_type(job, r);
            let kind: u64 = job
                .gres
                .records
                .iter()
                .filter(|o| o.kind == r.kind)
                .map(|o| u64::from(o.per_node))
                .sum();
            g.count_of(r.gres_type.as_deref()) >= same && g.count() >= kind
        })
    }

    /// Whether node `i` has every GRES record of the job free now, type by type (what the
    /// per-name counts in the node table cannot tell on a node with several types).
    pub fn gres_fits_now(&self, job: &Job, i: usize) -> bool {
        job.gres.records.iter().all(|r| {
            let same = per_node_of_type(job, r);
            self.gres
                .get(i, r.kind as usize)
                .free_of(r.gres_type.as_deref())
                >= same
        })
    }

    /// Free count of license `i` for a job in reservation `own` running over `[from, to)`: what
    /// running jobs leave, minus what other reservations overlapping that time still hold back.
    pub fn license_free(&self, own: Option<usize>, i: usize, from: i64, to: i64) -> u32 {
        let mut free = self.lic.total(i).saturating_sub(self.lic.used(i));
        for (r, resv) in self.resv.iter() {
            if Some(r) == own || !resv.overlaps(from, to) {
                continue;
            }
            let held: u32 = resv
                .licenses
                .iter()
                .filter(|(l, _)| *l == i)
                .map(|(_, c)| *c)
                .sum();
            if held == 0 {
                continue;
            }
            let used_inside: u32 = self
                .running
                .iter()
                .filter_map(|id| self.jobs[id].alloc.as_ref())
                .filter(|a| a.reservation == Some(r))
                .flat_map(|a| a.licenses.iter())
                .filter(|(l, _)| *l == i)
                .map(|(_, c)| *c)
                .sum();
            free = free.saturating_sub(held.saturating_sub(used_inside));
        }
        free
    }

    /// HRES layers as a job in reservation `own` sees them over `[from, to)`: running jobs' use
    /// plus what other reservations hold.
    pub fn hres_layers_for(&self, own: Option<usize>, from: i64, to: i64) -> Vec<HresLayer> {
        let mut layers = self.lic.hres_layers().to_vec();
        for (r, resv) in self.resv.iter() {
            if Some(r) == own || !resv.overlaps(from, to) {
                continue;
            }
            for &(layer, count) in &resv.hres {
                let used_inside: i64 = self
                    .running
                    .iter()
                    .filter_map(|id| self.jobs[id].alloc.as_ref())
                    .filter(|a| a.reservation == Some(r))
                    .flat_map(|a| a.hres.iter())
                    .filter(|c| c.layer == layer)
                    .map(|c| c.amount)
                    .sum();
                layers[layer as usize].used += (count - used_inside).max(0);
            }
        }
        layers
    }
}

/// What the job asks per node of `r`'s name and type, over all its records of that pair.
fn per_node_of_type(job: &Job, r: &GresRecord) -> u64 {
    job.gres
        .records
        .iter()
        .filter(|o| o.kind == r.kind && o.gres_type == r.gres_type)
        .map(|o| u64::from(o.per_node))
        .sum()
}
