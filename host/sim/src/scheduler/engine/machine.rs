//! The flat machine the engine replays on when no cluster file is given.

use sluice_cluster::{Cluster, ConfigError, Source};

/// Label of the generated cluster file in messages.
const FLAT_NAME: &str = "<sim>/flat.toml";

/// The generated cluster: `procs` processors as identical nodes of `cpus_per_node` CPUs.
///
/// One partition `batch` (default, no time limit, every node), no accounts (trace users are
/// created under `root` as they appear), Slurm's scheduler defaults, and the default bundle with
/// multifactor weights on age (1,000, capped at 7 days) and fair share (10,000) so that
/// `--scheduler slurm` differs from plain FIFO in the way a site's setup would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatMachine {
    /// Processors in total; rounded up to whole nodes.
    pub procs: u32,
    /// CPUs per node (1: every processor is a node, as on the SP2).
    pub cpus_per_node: u32,
}

impl FlatMachine {
    /// Nodes the machine has.
    pub fn nodes(&self) -> u32 {
        self.procs.div_ceil(self.cpus_per_node.max(1))
    }

    /// The cluster file text this machine is built from (shown by tests and `--verbose` users).
    pub fn to_toml(&self) -> String {
        let nodes = self.nodes().max(1);
        let width = nodes.to_string().len();
        format!(
            r#"ClusterName = "sim"

[priority]
PriorityWeightAge = 1000
PriorityWeightFairshare = 10000
PriorityMaxAge = "7-0"

[[nodes]]
NodeName = "sim[{first:0width$}-{nodes:0width$}]"
CPUs = {cpus}
RealMemory = 1

[[partitions]]
PartitionName = "batch"
Nodes = "sim[{first:0width$}-{nodes:0width$}]"
Default = true
MaxTime = "UNLIMITED"
"#,
            first = 1,
            cpus = self.cpus_per_node.max(1),
        )
    }

    /// Builds the cluster.
    pub fn cluster(&self) -> Result<Cluster, ConfigError> {
        let text = self.to_toml();
        Cluster::from_toml(Source::new(FLAT_NAME, &text), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processors_become_whole_nodes_in_one_default_partition() {
        let cluster = FlatMachine {
            procs: 100,
            cpus_per_node: 1,
        }
        .cluster()
        .unwrap();
        assert_eq!(cluster.nodes.len(), 100);
        assert_eq!(cluster.total_cpus(), 100);
        assert_eq!(cluster.partitions.len(), 1);
        assert!(cluster.default_partition().is_some());

        let packed = FlatMachine {
            procs: 10,
            cpus_per_node: 4,
        }
        .cluster()
        .unwrap();
        assert_eq!(packed.nodes.len(), 3);
        assert_eq!(packed.total_cpus(), 12);
    }
}
