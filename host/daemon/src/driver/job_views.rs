//! Jobs as squeue and `scontrol show job` see them: the daemon's durable record joined with
//! what the engine knows of a live job.

use std::collections::BTreeMap;

use sluice_api::{Job, JobRequestSummary};
use sluice_cluster::OverSubscribe;

use super::Driver;
use super::engine::assoc_key;
use crate::api::{ApiError, JobFilter};
use crate::image::{JobRecord, State};

impl Driver {
    /// One job as `scontrol show job` (and squeue) see it.
    pub(super) fn job_view(&self, job: &JobRecord) -> Job {
        let e = self.ids.engine(job.id).and_then(|e| self.engine.job(e));
        let live = e.filter(|j| !j.state.is_final());
        let now = self.engine.now();
        let run = match (job.start_time, job.end_time) {
            (Some(s), Some(end)) => (end - s).max(0),
            (Some(s), None) => (now - s).max(0),
            _ => 0,
        };
        let reason = match (job.state, live) {
            (State::Pending, Some(j)) => j.reason.as_str().to_string(),
            _ => job.reason.clone().unwrap_or_else(|| "None".into()),
        };
        let partition = job.partition.clone().unwrap_or_else(|| {
            live.map(|j| {
                j.partitions
                    .iter()
                    .map(|p| self.cluster.partitions[p.index()].name.clone())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .or(job.request.partition.clone())
            .unwrap_or_default()
        });
        let nodes = if job.nodes.is_empty() {
            job.request.min_nodes.unwrap_or(1) as usize
        } else {
            job.nodes.len()
        };
        let request = &job.request;
        let shares_cpus = request.oversubscribe || self.forces_sharing(&partition);
        Job {
            job_id: job.id,
            name: request.job_name(),
            user: job.user.clone(),
            uid: job.uid,
            account: job.account.clone().or_else(|| {
                live.map(|j| {
                    assoc_key(self.engine.cluster(), j.assoc)
                        .split('/')
                        .next()
                        .unwrap_or_default()
                        .to_string()
                })
            }),
            partition,
            state: job.state.as_str().into(),
            st: job.state.short().into(),
            reason,
            hold: job.hold,
            priority: live
                .and_then(|j| j.priority.iter().max().copied())
                .unwrap_or(0),
            time: run,
            time_limit: live.and_then(|j| j.time_limit).or(request.time_limit),
            nodes,
            nodelist: sluice_hostlist::compress(&job.nodes),
            cpus: job.cpus,
            submit_time: job.submit_time,
            start_time: job.start_time.or(live.and_then(|j| j.start_time)),
            end_time: job.end_time,
            exit_code: job.exit_code,
            signal: job.signal,
            restarts: job.restarts,
            requeue: request.requeue.unwrap_or(self.cfg.job_requeue),
            workdir: request.workdir.clone(),
            steps: job.steps.clone(),
            request: JobRequestSummary {
                ntasks: request.ntasks,
                cpus_per_task: request.cpus_per_task,
                mem_mb: request.mem_mb,
                gres: request.gres.clone(),
                gpus: request.gpus.clone(),
                licenses: request.licenses.clone(),
                constraint: request.constraint.clone(),
                dependency: request.dependency.clone(),
                nice: request.nice,
                begin: request.begin,
                qos: request.qos.clone(),
                output: request.output.clone(),
                error: request.error.clone(),
                input: request.input.clone(),
                command: request.command.clone(),
                comment: request.comment.clone(),
                time_min: request.time_min,
                deadline: request.deadline,
                nodelist: request.nodelist.clone(),
                exclude: request.exclude.clone(),
                ntasks_per_node: request.ntasks_per_node,
                mem_per_cpu_mb: request.mem_per_cpu_mb,
                mail_type: request.mail_type.clone(),
                mail_user: request.mail_user.clone(),
                exclusive: request.exclusive,
                oversubscribe: shares_cpus,
                contiguous: request.contiguous,
            },
            array: job.array,
        }
    }

    /// Whether the first of the job's partitions is `OverSubscribe=FORCE`, which shares every
    /// job's CPUs.
    fn forces_sharing(&self, partitions: &str) -> bool {
        let first = partitions.split(',').next().unwrap_or_default();
        self.cluster
            .partitions
            .iter()
            .any(|p| p.name == first && matches!(p.access.oversubscribe, OverSubscribe::Force(_)))
    }

    pub(super) fn show_job(&self, id: u64) -> Result<Job, ApiError> {
        Ok(self.job_view(self.job_record(id)?))
    }

    pub(super) fn list_jobs(&self, f: &JobFilter) -> Vec<Job> {
        let states: Vec<State> = if f.states.is_empty() {
            vec![
                State::Pending,
                State::Configuring,
                State::Running,
                State::Completing,
            ]
        } else {
            f.states.clone()
        };
        let image = self.store.image();
        let keep = |j: &&JobRecord| {
            states.contains(&j.state)
                && (f.users.is_empty() || f.users.contains(&j.user))
                && (f.ids.is_empty() || f.ids.contains(&j.id))
        };
        // squeue's order: running by id, then pending in scheduling order, then the rest by id.
        let order: BTreeMap<u64, usize> = self
            .engine
            .queue_rows()
            .iter()
            .enumerate()
            .filter_map(|(i, r)| self.ids.public(r.job_id).map(|p| (p, i)))
            .collect();
        let mut rows: Vec<&JobRecord> = if f.ids.is_empty() {
            image.jobs.values().map(|j| &**j).filter(keep).collect()
        } else {
            f.ids
                .iter()
                .filter_map(|i| image.jobs.get(i).map(|j| &**j))
                .filter(keep)
                .collect()
        };
        rows.sort_by_key(|j| (order.get(&j.id).copied().unwrap_or(usize::MAX), j.id));
        rows.into_iter().map(|j| self.job_view(j)).collect()
    }
}
