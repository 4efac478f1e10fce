//! Job steps: `srun` inside an allocation takes CPUs of the job's nodes, never more than it holds.

use crate::engine::Engine;
use crate::error::JobError;
use crate::job::{JobId, JobState, Step};

impl Engine {
    /// Starts a step of `nodes` nodes with `cpus_per_node` CPUs each inside a running job, on the
    /// first allocation nodes with that many CPUs not used by other running steps.
    pub fn start_step(
        &mut self,
        id: JobId,
        name: &str,
        nodes: u32,
        cpus_per_node: u32,
    ) -> Result<u32, JobError> {
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        if job.state != JobState::Running {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        let alloc = job.alloc.as_ref().expect("a running job has an allocation");
        let mut used = vec![0u32; alloc.placement.nodes.len()];
        for step in job.steps.iter().filter(|s| s.state == JobState::Running) {
            for (pos, cpus) in step.node_positions.iter().zip(&step.cpus) {
                used[*pos as usize] += cpus;
            }
        }
        let positions: Vec<u32> = (0..alloc.placement.nodes.len())
            .filter(|&p| alloc.placement.cpus[p] - used[p] >= cpus_per_node.max(1))
            .take(nodes.max(1) as usize)
            .map(|p| p as u32)
            .collect();
        if positions.len() < nodes.max(1) as usize {
            return Err(JobError::StepTooBig(id));
        }
        let step_id = job.steps.len() as u32;
        job.steps.push(Step {
            id: step_id,
            name: name.into(),
            cpus: vec![cpus_per_node.max(1); positions.len()],
            node_positions: positions,
            state: JobState::Running,
            exit_code: None,
        });
        Ok(step_id)
    }

    /// Ends a step with its exit code; the CPUs go back to the job, not to the cluster.
    pub fn end_step(&mut self, id: JobId, step: u32, exit_code: i32) -> Result<(), JobError> {
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        let s = job
            .steps
            .get_mut(step as usize)
            .ok_or(JobError::UnknownStep { job: id, step })?;
        if s.state != JobState::Running {
            return Err(JobError::WrongState {
                job: id,
                state: s.state,
            });
        }
        s.state = if exit_code == 0 {
            JobState::Completed
        } else {
            JobState::Failed
        };
        s.exit_code = Some(exit_code);
        Ok(())
    }
}
