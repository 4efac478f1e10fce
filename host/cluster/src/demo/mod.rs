//! The embedded demo cluster: node[01-32] from the HRES document with its resources.yaml.

use crate::{Cluster, ConfigError, Source};

const CLUSTER_TOML: &str = include_str!("cluster.toml");
const RESOURCES_YAML: &str = include_str!("resources.yaml");

/// Label of the embedded cluster file in messages.
pub const DEMO_TOML_NAME: &str = "<demo>/cluster.toml";
/// Label of the embedded resources.yaml in messages.
pub const DEMO_RESOURCES_NAME: &str = "<demo>/resources.yaml";

impl Cluster {
    /// The embedded demo cluster.
    pub fn demo() -> Self {
        // The embedded files are checked by this crate's tests, so failing here is a build defect.
        Self::try_demo().unwrap_or_else(|err| panic!("the embedded demo cluster is invalid: {err}"))
    }

    /// The embedded demo cluster, or why it does not load.
    pub fn try_demo() -> Result<Self, ConfigError> {
        Self::from_toml(
            Source::new(DEMO_TOML_NAME, CLUSTER_TOML),
            Some(Source::new(DEMO_RESOURCES_NAME, RESOURCES_YAML)),
        )
    }

    /// The embedded demo cluster file and resources.yaml texts, for `config show` and copying.
    pub fn demo_sources() -> (&'static str, &'static str) {
        (CLUSTER_TOML, RESOURCES_YAML)
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{HresCount, HresMode};
    use crate::{Cluster, NodeState};

    #[test]
    fn demo_loads_with_nodes_partitions_and_hres() {
        let cluster = Cluster::try_demo().unwrap();
        assert_eq!(cluster.nodes.len(), 32);
        assert_eq!(cluster.nodes[0].name, "node01");
        assert_eq!(cluster.nodes[31].name, "node32");
        assert_eq!(cluster.nodes[0].cpus, 32);
        assert_eq!(cluster.nodes[0].state, NodeState::Unknown);
        let gpu_node = &cluster.nodes[24];
        assert_eq!(gpu_node.name, "node25");
        assert_eq!(gpu_node.gres_count("gpu"), 4);
        assert_eq!(gpu_node.gres[0].devices.len(), 4);
        assert_eq!(gpu_node.gres[0].devices[3].file, "/dev/nvidia3");
        assert_eq!(gpu_node.gres[0].devices[3].cores.first(), Some(&16));
        assert_eq!(cluster.partitions.len(), 3);
        assert_eq!(cluster.default_partition().map(|p| p.index()), Some(0));
        assert_eq!(cluster.priority.priority_weight_partition, 1_000_000);
        assert_eq!(cluster.priority.priority_max_age, 5 * 86_400);
        let power = cluster.hres.iter().find(|r| r.name == "power").unwrap();
        assert_eq!(power.mode, HresMode::Mode3);
        assert_eq!(power.layers.len(), 7);
        assert_eq!(
            cluster
                .hres
                .iter()
                .find(|r| r.name == "natural")
                .unwrap()
                .layers[0]
                .count,
            HresCount::Count(50)
        );
        assert!(cluster.user_assoc("frank", "astro").is_some());
    }
}
