//! The unweighted priority factors of `set_priority_factors`, each normalised as Slurm does.

use sluice_sdk::{Association, Partition, Qos};

/// Partition factor of each partition: PriorityJobFactor over the largest of any partition.
///
/// The denominator is at least 1 (`DEF_PART_MAX_PRIORITY`); a partition with factor 0 gets 0.
/// `raw` (`NO_NORMAL_PART`) keeps PriorityJobFactor itself.
pub fn partition_factors(partitions: &[Partition], raw: bool) -> Vec<f64> {
    let max = partitions
        .iter()
        .map(|p| p.priority_job_factor)
        .max()
        .unwrap_or(0)
        .max(1);
    partitions
        .iter()
        .map(|p| {
            let f = f64::from(p.priority_job_factor);
            if raw { f } else { f / f64::from(max) }
        })
        .collect()
}

/// QOS factor of each QOS: its priority over the largest QOS priority (0 for priority 0).
/// `raw` (`NO_NORMAL_QOS`) keeps the priority itself.
pub fn qos_factors(qos: &[Qos], raw: bool) -> Vec<f64> {
    let max = qos.iter().map(|q| q.priority).max().unwrap_or(0);
    qos.iter()
        .map(|q| match (q.priority, raw) {
            (0, _) => 0.0,
            (p, true) => f64::from(p),
            (p, false) => f64::from(p) / f64::from(max),
        })
        .collect()
}

/// Association factor of each association: its priority (inherited, as the host sends it) over
/// the largest of any association, as `assoc->priority / g_assoc_max_priority`; 0 when no
/// association has one. `raw` (`NO_NORMAL_ASSOC`) keeps the priority itself.
pub fn association_factors(associations: &[Association], raw: bool) -> Vec<f64> {
    let max = associations.iter().map(|a| a.priority).max().unwrap_or(0);
    associations
        .iter()
        .map(|a| match (a.priority, raw) {
            (0, _) => 0.0,
            (p, true) => f64::from(p),
            (p, false) => f64::from(p) / f64::from(max),
        })
        .collect()
}

/// Age factor: time since `accrue` over `max_age`, capped at 1.
///
/// `accrue <= 0` means the job never started accruing (factor 0). A job accruing in the future
/// counts 0 seconds. As in Slurm, `diff < max_age` decides, so `max_age = 0` gives 1.
pub fn age(now: i64, accrue: i64, max_age: i64) -> f64 {
    if accrue <= 0 {
        return 0.0;
    }
    let diff = if now > accrue { now - accrue } else { 0 };
    if diff < max_age {
        diff as f64 / max_age as f64
    } else {
        1.0
    }
}

/// The job-size factor's cluster-wide inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobSize {
    /// Nodes in the cluster (`node_record_count`).
    pub cluster_nodes: f64,
    /// CPUs in the cluster.
    pub cluster_cpus: f64,
    /// `PriorityFavorSmall`.
    pub favor_small: bool,
    /// `PriorityFlags=SMALL_RELATIVE_TO_TIME`.
    pub relative_to_time: bool,
}

impl JobSize {
    /// Job-size factor of a job asking for `min_nodes` nodes and `cpus` CPUs (0: not given)
    /// for `time_limit` seconds (0: not given), clamped to [0, 1].
    pub fn factor(&self, min_nodes: u32, cpus: u32, time_limit: u32) -> f64 {
        let (nodes, total_cpus) = (self.cluster_nodes, self.cluster_cpus);
        // Slurm would divide by zero here; an empty cluster has no size to compare against.
        if nodes <= 0.0 || total_cpus <= 0.0 {
            return 0.0;
        }
        let min_nodes = f64::from(min_nodes);
        let cpu_cnt = f64::from(cpus);
        let js = if self.relative_to_time {
            let mut js = (min_nodes * total_cpus / nodes).max(cpu_cnt);
            js /= time_limit_minutes(time_limit);
            js /= total_cpus;
            if self.favor_small { 1.0 - js } else { js }
        } else if self.favor_small {
            // Slurm guards the node term against unsigned wrap-around; the CPU term is guarded
            // the same way here, since a wrapped value would pin the factor to 1.
            let mut js = if nodes > min_nodes {
                (nodes - min_nodes) / nodes
            } else {
                0.0
            };
            if cpus != 0 {
                js += (total_cpus - cpu_cnt).max(0.0) / total_cpus;
                js /= 2.0;
            }
            js
        } else {
            let mut js = min_nodes / nodes;
            if cpus != 0 {
                js += cpu_cnt / total_cpus;
                js /= 2.0;
            }
            js
        };
        js.clamp(0.0, 1.0)
    }
}

/// A time limit in Slurm's unit, whole minutes rounded up; 1 when not given, as Slurm uses when
/// neither the job nor the partition has a limit.
fn time_limit_minutes(seconds: u32) -> f64 {
    if seconds == 0 {
        1.0
    } else {
        f64::from(seconds.div_ceil(60))
    }
}

/// A TRES factor: the requested count over the total, or the count itself when `raw`
/// (`NO_NORMAL_TRES`); 0 when nothing is requested or the total is unknown.
pub fn tres(value: f64, total: f64, raw: bool) -> f64 {
    if value == 0.0 {
        0.0
    } else if raw {
        value
    } else if total > 0.0 {
        value / total
    } else {
        0.0
    }
}
