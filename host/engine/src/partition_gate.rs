//! Owns no state: a partition's state as `scontrol update PartitionName=… State=` changes it at
//! run time. The state lives in the cluster model (`Partition::access`, which the configuration
//! sets), so submission (limits/access.rs) and both loops (`limit_reason`) read the one value.

use sluice_cluster::{PartitionId, PartitionState};

use crate::engine::Engine;

impl Engine {
    /// Sets partition `p`'s state and asks for a pass.
    pub fn set_partition_state(&mut self, p: PartitionId, state: PartitionState) {
        if let Some(part) = self.cluster.partitions.get_mut(p.index()) {
            part.access.state = state;
            self.pacing.requested = true;
        }
    }

    /// Partition `p`'s state.
    pub fn partition_state(&self, p: PartitionId) -> PartitionState {
        self.cluster
            .partitions
            .get(p.index())
            .map(|part| part.access.state)
            .unwrap_or_default()
    }
}
