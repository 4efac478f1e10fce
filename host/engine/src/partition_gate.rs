//! Owns no state: partition states applied to a pass. Queue records of partitions that start
//! nothing are left out, and a job with no other partition waits with their reason.

use std::collections::HashSet;

use sluice_cluster::PartitionId;

use crate::engine::Engine;
use crate::job::{JobId, Reason};
use crate::partition_state::PartitionState;
use crate::queue::QueueRecord;

impl Engine {
    /// Sets partition `p`'s state and asks for a pass.
    pub fn set_partition_state(&mut self, p: PartitionId, state: PartitionState) {
        if let Some(s) = self.part_states.get_mut(p.index()) {
            *s = state;
            self.pacing.requested = true;
        }
    }

    /// Partition `p`'s state.
    pub fn partition_state(&self, p: PartitionId) -> PartitionState {
        self.part_states.get(p.index()).copied().unwrap_or_default()
    }

    /// Leaves out the records of partitions that start nothing; a job left with none waits
    /// with the reason of its first such partition.
    pub(crate) fn drop_stopped_partitions(&mut self, records: &mut Vec<QueueRecord>) {
        if self.part_states.iter().all(|s| s.starts_jobs()) {
            return;
        }
        let mut stopped: Vec<(JobId, PartitionId)> = Vec::new();
        records.retain(|r| {
            let keep = self.part_states[r.partition.index()].starts_jobs();
            if !keep {
                stopped.push((r.job, r.partition));
            }
            keep
        });
        let kept: HashSet<JobId> = records.iter().map(|r| r.job).collect();
        for (job, p) in stopped {
            if kept.contains(&job) {
                continue;
            }
            let reason = match self.part_states[p.index()] {
                PartitionState::Inactive => Reason::PartitionInactive,
                _ => Reason::PartitionDown,
            };
            if let Some(j) = self.jobs.get_mut(&job) {
                j.reason = reason;
            }
        }
    }
}
