//! Owns no state: a partition's access rules applied at submission (`AllowAccounts`,
//! `DenyAccounts`, `AllowGroups`, `AllowQos`, `DenyQos`, `State`) and its terms for the job
//! (`OverSubscribe=EXCLUSIVE`, `DefMemPerCPU`, `MaxMemPerCPU`).

use sluice_cluster::{OverSubscribe, Partition, PartitionId, PartitionState, QosId};

use crate::engine::Engine;
use crate::error::SubmitError;
use crate::job::JobSpec;

impl Engine {
    /// Keeps the partitions that admit the job's account, groups and QOS and accept new jobs,
    /// in the order asked; refused with the first partition's reason when none does.
    pub(crate) fn keep_admitting_partitions(
        &self,
        spec: &JobSpec,
        account: &str,
        qos: QosId,
        parts: &mut Vec<PartitionId>,
    ) -> Result<(), SubmitError> {
        let qos_name = self
            .cluster
            .qos
            .get(qos.index())
            .map_or("normal", |q| q.name.as_str());
        let mut first_refusal = None;
        parts.retain(|p| {
            let part = &self.cluster.partitions[p.index()];
            match admits(part, spec, account, qos_name) {
                Ok(()) => true,
                Err(e) => {
                    first_refusal.get_or_insert(e);
                    false
                }
            }
        });
        match first_refusal {
            Some(e) if parts.is_empty() => Err(e),
            _ => Ok(()),
        }
    }

    /// The partition's terms applied to the request: whole nodes when every partition the job
    /// may run in is `OverSubscribe=EXCLUSIVE`; `DefMemPerCPU` for a job that asks no memory;
    /// more CPUs per task when the memory asked per CPU is over `MaxMemPerCPU` (Slurm raises
    /// `cpus_per_task` the same way). The first partition's values decide, as for the time limit.
    pub(crate) fn apply_partition_terms(&self, spec: &mut JobSpec, parts: &[PartitionId]) {
        let access = |p: &PartitionId| &self.cluster.partitions[p.index()].access;
        if !parts.is_empty()
            && parts
                .iter()
                .all(|p| access(p).oversubscribe == OverSubscribe::Exclusive)
        {
            spec.exclusive = true;
        }
        let Some(first) = parts.first().map(access) else {
            return;
        };
        let nodes = u64::from(spec.min_nodes.max(1));
        let tasks_per_node = u64::from(spec.tasks.max(1)).div_ceil(nodes);
        let cpus_per_node = tasks_per_node * u64::from(spec.cpus_per_task.max(1));
        if spec.memory_per_node_mb == 0
            && let Some(per_cpu) = first.def_mem_per_cpu
        {
            spec.memory_per_node_mb = per_cpu.saturating_mul(cpus_per_node);
        }
        if let Some(max) = first.max_mem_per_cpu.filter(|m| *m > 0)
            && spec.memory_per_node_mb > max.saturating_mul(cpus_per_node)
        {
            let cpus_needed = spec.memory_per_node_mb.div_ceil(max);
            let per_task = cpus_needed.div_ceil(tasks_per_node);
            spec.cpus_per_task = u32::try_from(per_task).unwrap_or(u32::MAX);
        }
    }
}

/// Whether one partition takes the job, and Slurm's error if not.
fn admits(part: &Partition, spec: &JobSpec, account: &str, qos: &str) -> Result<(), SubmitError> {
    let a = &part.access;
    if matches!(a.state, PartitionState::Drain | PartitionState::Inactive) {
        return Err(SubmitError::PartitionNotAvailable(part.name.clone()));
    }
    if !admitted(&a.allow_accounts, &a.deny_accounts, account) {
        return Err(SubmitError::AccountNotAllowed {
            account: account.to_owned(),
            partition: part.name.clone(),
        });
    }
    if let Some(groups) = &a.allow_groups
        && !spec.groups.iter().any(|g| groups.contains(g))
    {
        return Err(SubmitError::GroupNotAllowed(part.name.clone()));
    }
    if !admitted(&a.allow_qos, &a.deny_qos, qos) {
        return Err(SubmitError::QosNotAllowed {
            qos: qos.to_owned(),
            partition: part.name.clone(),
        });
    }
    Ok(())
}

/// Whether `name` passes an allow list (`None` is ALL) and a deny list.
fn admitted(allow: &Option<Vec<String>>, deny: &[String], name: &str) -> bool {
    allow
        .as_ref()
        .is_none_or(|list| list.iter().any(|x| x == name))
        && !deny.iter().any(|x| x == name)
}
