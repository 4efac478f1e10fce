//! Owns no state: a started job counted against its QOS, its partition's QOS and its
//! associations, with the TRES it was given.

use sluice_cluster::PartitionId;

use crate::engine::Engine;
use crate::job::JobId;

impl Engine {
    /// Counts a job that just started in `part`: the TRES of its allocation (CPUs, memory and
    /// nodes it got; GRES as asked per node) against its QOS, its partition's and its
    /// associations.
    pub(crate) fn count_start(&mut self, id: JobId, part: PartitionId) {
        let job = &self.jobs[&id];
        let Some(alloc) = &job.alloc else { return };
        let nodes = alloc.placement.nodes.len() as u64;
        let tres = self.limits.layout.amounts(
            (alloc.cpus(), alloc.placement.memory_mb.iter().sum(), nodes),
            job.gres
                .records
                .iter()
                .map(|r| (r.name.as_str(), u64::from(r.per_node) * nodes)),
        );
        let qos = self.qos_order(job.qos, part);
        self.limits.start(id, qos, tres);
    }
}
