//! From a trace job to the engine's job request.

use sluice_engine::{Dependency as EngineDependency, DependencyKind, GresRequest, JobId, JobSpec};
use sluice_engine::{LicenseRequest, request};

use crate::job::{Dependency, SlurmRequest};
use crate::scheduler::Submission;

/// Why a trace job cannot be expressed as an engine job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("job {id}: {message}")]
pub struct SpecError {
    /// The trace job number.
    pub id: u64,
    /// What is wrong.
    pub message: String,
}

/// The engine request for `job`.
///
/// * SWF (no Slurm fields): user `u<field 12>` (`unknown` when −1) with no account, so users
///   share the root account in fair share; `procs` tasks of one CPU on ⌈procs / `cpus_per_node`⌉
///   nodes; time limit = the estimate.
/// * JSON lines: user (default `sim`), account, partition, QOS, nice and GRES as given; `priority`
///   becomes the job's SiteFactor (added to what the priority policy computes); `tasks` ×
///   `cpus_per_task` on `nodes` nodes, or on as few nodes as `cpus_per_node` allows; licenses by
///   name. `dependency` maps ids through `resolve` (jobs still in flight): a dependency on a job
///   that has already ended, or is unknown, counts as satisfied; `after` waits for the end, like
///   `afterany`; `singleton` is ignored.
pub fn job_spec(
    job: &Submission<'_>,
    cpus_per_node: u32,
    resolve: impl Fn(u64) -> Option<JobId>,
) -> Result<JobSpec, SpecError> {
    let cpus_per_node = cpus_per_node.max(1);
    let mut spec = match job.slurm {
        None => {
            let user = if job.swf.user >= 0 {
                // `to_string` of an integer skips the formatting machinery `format!` goes
                // through, which costs more than the rest of turning a trace job into a spec.
                let digits = job.swf.user.to_string();
                let mut user = String::with_capacity(digits.len() + 1);
                user.push('u');
                user.push_str(&digits);
                user
            } else {
                "unknown".to_string()
            };
            let mut spec = JobSpec::new(user);
            spec.tasks = job.procs.max(1);
            spec.min_nodes = job.procs.max(1).div_ceil(cpus_per_node);
            spec
        }
        Some(slurm) => slurm_spec(job.id, slurm, cpus_per_node, resolve)?,
    };
    spec.name = job.id.to_string();
    spec.time_limit = Some(u64::try_from(job.estimate.max(1)).unwrap_or(1));
    Ok(spec)
}

fn slurm_spec(
    id: u64,
    slurm: &SlurmRequest,
    cpus_per_node: u32,
    resolve: impl Fn(u64) -> Option<JobId>,
) -> Result<JobSpec, SpecError> {
    let error = |message: String| SpecError { id, message };
    let mut spec = JobSpec::new(slurm.user.as_deref().unwrap_or("sim"));
    spec.account = slurm.account.clone();
    spec.partitions = slurm.partition.iter().cloned().collect();
    spec.qos = slurm.qos.clone();
    spec.tasks = slurm.tasks.max(1);
    spec.cpus_per_task = slurm.cpus_per_task.max(1);
    let cpus = spec.tasks.saturating_mul(spec.cpus_per_task);
    spec.min_nodes = slurm
        .nodes
        .unwrap_or_else(|| cpus.div_ceil(cpus_per_node))
        .max(1);
    spec.nice = slurm.nice;
    spec.site_factor = slurm.priority.map_or(0, i64::from);
    spec.batch = !slurm.interactive;
    spec.requeue = slurm.requeue;
    for item in &slurm.gres {
        let parsed: Vec<GresRequest> =
            request::parse_gres(item).map_err(|e| error(e.to_string()))?;
        spec.gres.extend(parsed);
    }
    spec.licenses = slurm
        .licenses
        .iter()
        .map(|(name, count)| LicenseRequest {
            name: name.clone(),
            count: u64::from(*count),
            variable: None,
        })
        .collect();
    for dep in &slurm.dependencies {
        let (kind, target) = match *dep {
            Dependency::After(j) | Dependency::AfterAny(j) => (DependencyKind::AfterAny, j),
            Dependency::AfterOk(j) => (DependencyKind::AfterOk, j),
            Dependency::AfterNotOk(j) => (DependencyKind::AfterNotOk, j),
            Dependency::Singleton => continue,
        };
        if let Some(job) = resolve(target) {
            spec.dependencies.push(EngineDependency::on(kind, job));
        }
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::SwfFields;
    use crate::scheduler::JobKey;

    fn submission<'a>(swf: &'a SwfFields, slurm: Option<&'a SlurmRequest>) -> Submission<'a> {
        Submission {
            key: JobKey(0),
            seq: 0,
            id: 7,
            submit: 100,
            procs: 6,
            estimate: 900,
            swf,
            slurm,
        }
    }

    #[test]
    fn swf_processors_become_tasks_on_whole_nodes() {
        let swf = SwfFields {
            user: 12,
            ..SwfFields::UNKNOWN
        };
        let spec = job_spec(&submission(&swf, None), 1, |_| None).unwrap();
        assert_eq!(spec.user, "u12");
        assert_eq!((spec.tasks, spec.min_nodes), (6, 6));
        assert_eq!(spec.time_limit, Some(900));
        let packed = job_spec(&submission(&SwfFields::UNKNOWN, None), 4, |_| None).unwrap();
        assert_eq!(packed.user, "unknown");
        assert_eq!((packed.tasks, packed.min_nodes), (6, 2));
    }

    #[test]
    fn slurm_fields_carry_over_and_ended_dependencies_are_dropped() {
        let slurm = SlurmRequest {
            user: Some("ann".into()),
            account: Some("physics".into()),
            tasks: 4,
            cpus_per_task: 2,
            gres: vec!["gpu:a100:2".into()],
            licenses: vec![("matlab".into(), 1)],
            priority: Some(50),
            nice: 10,
            dependencies: vec![Dependency::AfterOk(3), Dependency::AfterAny(4)],
            ..SlurmRequest::default()
        };
        let spec = job_spec(&submission(&SwfFields::UNKNOWN, Some(&slurm)), 4, |id| {
            (id == 3).then_some(30)
        })
        .unwrap();
        assert_eq!(spec.user, "ann");
        assert_eq!(spec.account.as_deref(), Some("physics"));
        assert_eq!((spec.tasks, spec.cpus_per_task, spec.min_nodes), (4, 2, 2));
        assert_eq!(spec.gres.len(), 1);
        assert_eq!(spec.site_factor, 50);
        assert_eq!(spec.nice, 10);
        assert_eq!(
            spec.dependencies,
            vec![EngineDependency::on(DependencyKind::AfterOk, 30)]
        );
    }
}
