//! What the daemon computes for a job's `SLURM_*` environment, which `sluice_api::job_env`
//! builds: the batch layout's tasks per node, an array's indexes.

use sluice_api::layout::{Distribution, Layout};
use sluice_engine::array_spec::{MAX_ARRAY_SIZE_LIMIT, parse_array};

/// A batch job's `SLURM_TASKS_PER_NODE`: its `tasks` laid out in blocks on nodes with `cpus`
/// CPUs each, `cpus_per_task` to a task, as slurmd computes it for the batch environment.
/// With `--ntasks-per-node` each node has room for that many: the selection contract's
/// `tasks-per-node` gives every node at least their CPUs (an exclusive job's whole nodes may
/// hold more).
pub fn tasks_per_node(
    tasks: u32,
    cpus: &[u32],
    cpus_per_task: u32,
    ntasks_per_node: Option<u32>,
) -> String {
    let room: Vec<u32> = match ntasks_per_node {
        Some(n) => vec![n; cpus.len()],
        None => cpus.iter().map(|c| c / cpus_per_task.max(1)).collect(),
    };
    Layout::new(tasks, &room, Distribution::Block).per_node_text()
}

/// The indexes of the array submitted with `--array` `spec`, in order; none when there is
/// no spec (the task's own index then stands for its array).
pub fn array_indexes(spec: Option<&str>) -> Vec<u32> {
    // Accepted at submission below MaxArraySize, so it parses within Slurm's largest bound.
    spec.and_then(|s| parse_array(s, MAX_ARRAY_SIZE_LIMIT).ok())
        .map(|s| s.tasks)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_api::ArrayMember;

    /// An array task's `SLURM_ARRAY_*` variables, from the `--array` it was submitted with.
    fn array_vars(member: ArrayMember, spec: Option<&str>) -> Vec<(&'static str, String)> {
        sluice_api::job_env::array_vars(member, &array_indexes(spec))
    }

    #[test]
    fn batch_tasks_per_node_follow_the_allocation() {
        assert_eq!(tasks_per_node(8, &[4, 4], 1, None), "4(x2)");
        assert_eq!(tasks_per_node(3, &[8, 8], 2, None), "2,1");
        assert_eq!(tasks_per_node(5, &[4, 2], 2, None), "3,2");
        assert_eq!(tasks_per_node(8, &[7, 1], 1, None), "7,1");
        assert_eq!(tasks_per_node(8, &[7, 1], 1, Some(4)), "4(x2)");
    }

    #[test]
    fn array_variables_describe_the_task_and_its_array() {
        let member = ArrayMember {
            job_id: 40,
            task_id: 8,
            throttle: 2,
        };
        let vars: std::collections::BTreeMap<_, _> =
            array_vars(member, Some("0-15:4%2")).into_iter().collect();
        assert_eq!(vars["SLURM_ARRAY_JOB_ID"], "40");
        assert_eq!(vars["SLURM_ARRAY_TASK_ID"], "8");
        assert_eq!(vars["SLURM_ARRAY_TASK_COUNT"], "4");
        assert_eq!(vars["SLURM_ARRAY_TASK_MIN"], "0");
        assert_eq!(vars["SLURM_ARRAY_TASK_MAX"], "12");
        assert_eq!(vars["SLURM_ARRAY_TASK_STEP"], "4");
        let vars: std::collections::BTreeMap<_, _> =
            array_vars(member, Some("1,3,8")).into_iter().collect();
        assert_eq!(vars["SLURM_ARRAY_TASK_STEP"], "1");
        assert_eq!(vars["SLURM_ARRAY_TASK_COUNT"], "3");
    }
}
