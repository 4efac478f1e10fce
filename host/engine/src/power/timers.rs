//! Owns no state: each node's effective SuspendTime, SuspendTimeout and ResumeTimeout (§1.3).

use sluice_cluster::{Cluster, TimeLimit};

/// A node's effective timers; `None` is INFINITE (never suspend, never time out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timers {
    /// Idle seconds before an automatic power down.
    pub suspend_time: Option<u64>,
    /// Seconds a power down takes.
    pub suspend_timeout: u64,
    /// Seconds a boot may take before the node is set DOWN.
    pub resume_timeout: Option<u64>,
}

/// Slurm's `power_save_set_timeouts`: the node's own SuspendTime wins; otherwise the highest
/// value among its partitions that set one (INFINITE beats every number); otherwise the global
/// value. Timeouts take the highest value among the partitions that set them, else the global.
pub fn effective_timers(cluster: &Cluster) -> Vec<Timers> {
    // u64::MAX stands for INFINITE, so that MAX lets it win as Slurm's 0xFFFFFFFF does.
    let raw = |t: TimeLimit| t.seconds().unwrap_or(u64::MAX);
    let cooked = |v: u64| (v != u64::MAX).then_some(v);
    let mut suspend: Vec<Option<u64>> = cluster
        .nodes
        .iter()
        .map(|n| n.suspend_time.map(raw))
        .collect();
    let own: Vec<bool> = suspend.iter().map(Option::is_some).collect();
    let mut suspend_timeout: Vec<Option<u64>> = vec![None; cluster.nodes.len()];
    let mut resume_timeout: Vec<Option<u64>> = vec![None; cluster.nodes.len()];
    for part in &cluster.partitions {
        for node in &part.nodes {
            let i = node.index();
            if let Some(t) = part.suspend_time.map(raw)
                && !own[i]
            {
                suspend[i] = Some(suspend[i].map_or(t, |s| s.max(t)));
            }
            if let Some(t) = part.power.suspend_timeout {
                suspend_timeout[i] = Some(suspend_timeout[i].map_or(t, |s| s.max(t)));
            }
            if let Some(t) = part.power.resume_timeout.map(raw) {
                resume_timeout[i] = Some(resume_timeout[i].map_or(t, |s| s.max(t)));
            }
        }
    }
    let global = &cluster.power;
    (0..cluster.nodes.len())
        .map(|i| Timers {
            suspend_time: cooked(suspend[i].unwrap_or(raw(global.suspend_time))),
            suspend_timeout: suspend_timeout[i].unwrap_or(global.suspend_timeout),
            resume_timeout: cooked(resume_timeout[i].unwrap_or(raw(global.resume_timeout))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_cluster::Source;

    fn cluster(global: &str, parts: &str) -> Cluster {
        let text = format!(
            "[power]\n{global}\n[[nodes]]\nNodeName = \"n[1-3]\"\nCPUs = 1\n\
             [[nodes]]\nNodeName = \"own\"\nCPUs = 1\nSuspendTime = 5\n{parts}"
        );
        Cluster::from_toml(Source::new("t.toml", &text), None).unwrap()
    }

    #[test]
    fn unset_partitions_contribute_nothing_and_the_highest_value_wins() {
        let c = cluster(
            "SuspendTime = 600\nSuspendTimeout = 30",
            "[[partitions]]\nPartitionName = \"a\"\nNodes = \"n[1-2],own\"\nSuspendTime = 60\nSuspendTimeout = 50\n\
             [[partitions]]\nPartitionName = \"b\"\nNodes = \"n[1-3],own\"\nDefault = true\n\
             [[partitions]]\nPartitionName = \"c\"\nNodes = \"n2\"\nSuspendTime = \"INFINITE\"\nResumeTimeout = 90\n",
        );
        let t = effective_timers(&c);
        // test_141_2: pA=60 and pB unset with global 600 gives 60.
        assert_eq!(t[0].suspend_time, Some(60));
        // INFINITE beats every number.
        assert_eq!(t[1].suspend_time, None);
        assert_eq!(t[1].resume_timeout, Some(90));
        // No partition sets it: the global value.
        assert_eq!(t[2].suspend_time, Some(600));
        assert_eq!((t[2].suspend_timeout, t[2].resume_timeout), (30, Some(60)));
        // The node's own value beats its partitions.
        assert_eq!((t[3].suspend_time, t[3].suspend_timeout), (Some(5), 50));
        // Programs may run as long as the longest timeout anywhere: partition c's ResumeTimeout.
        assert_eq!(crate::power::PowerState::program_timeout(&c), Some(90));
    }
}
