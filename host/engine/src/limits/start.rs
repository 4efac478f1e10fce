//! Owns no state: a started job counted against its QOS, its partition's QOS and its
//! associations, with the TRES it was given.

use sluice_cluster::PartitionId;

use crate::engine::Engine;
use crate::job::JobId;

/// Slurm's INFINITE time limit in minutes: a job without one holds its TRES this long as far
/// as `GrpTRESRunMins` is concerned.
pub(crate) const INFINITE_MINUTES: u64 = 0xffff_fffe;

impl Engine {
    /// Counts a job that just started in `part`: the TRES of its allocation (CPUs, memory and
    /// nodes it got; GRES as asked per node; licenses it holds) against its QOS, its
    /// partition's and its associations, until the end of its time limit.
    pub(crate) fn count_start(&mut self, id: JobId, part: PartitionId) {
        let job = &self.jobs[&id];
        let Some(alloc) = &job.alloc else { return };
        let nodes = alloc.placement.nodes.len() as u64;
        let names = self.lic.names();
        let tres = self.limits.layout.amounts(
            (alloc.cpus(), alloc.placement.memory_mb.iter().sum(), nodes),
            job.gres
                .records
                .iter()
                .map(|r| (r.name.as_str(), u64::from(r.per_node) * nodes)),
            alloc
                .licenses
                .iter()
                .filter_map(|(i, n)| Some((names.get(*i)?.as_str(), u64::from(*n)))),
        );
        let end = self.limit_end(id);
        let qos = self.qos_order(job.qos, part);
        self.limits.start(id, qos, tres, end);
    }

    /// When a running job's time limit ends, for `GrpTRESRunMins` (an unlimited job's in
    /// Slurm's INFINITE minutes).
    fn limit_end(&self, id: JobId) -> u64 {
        let job = &self.jobs[&id];
        let start = job.start_time.unwrap_or_else(|| self.clock.now()).max(0) as u64;
        start.saturating_add(job.time_limit.unwrap_or(INFINITE_MINUTES * 60))
    }

    /// Counts a running job's changed time limit: the TRES-minutes left on it follow.
    pub(crate) fn count_time_limit(&mut self, id: JobId) {
        let end = self.limit_end(id);
        self.limits.move_end(id, end);
    }
}
