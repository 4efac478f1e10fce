//! Owns no state: job steps, which take CPUs of their job's nodes, never more than it holds.
//!
//! Job steps: `srun` inside an allocation takes CPUs of the job's nodes, never more than it holds.

use crate::engine::Engine;
use crate::error::JobError;
use crate::gres::step::step_gres_room;
use crate::job::{JobId, JobState, Step};
use crate::request::GresRequest;

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
        self.start_step_with_gres(id, name, nodes, cpus_per_node, &[])
    }

    /// Starts a step as [`Engine::start_step`] that also uses `gres` (srun's `--gres`, per node):
    /// on each of its nodes a subset of the job's devices that no running step uses, chosen by
    /// the GRES policy of each name.
    pub fn start_step_with_gres(
        &mut self,
        id: JobId,
        name: &str,
        nodes: u32,
        cpus_per_node: u32,
        gres: &[GresRequest],
    ) -> Result<u32, JobError> {
        let job = self.jobs.get(&id).ok_or(JobError::UnknownJob(id))?;
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
            .filter(|&p| step_gres_room(job, p, gres))
            .take(nodes.max(1) as usize)
            .map(|p| p as u32)
            .collect();
        if positions.len() < nodes.max(1) as usize {
            return Err(JobError::StepTooBig(id));
        }
        let step_gres = self.pick_step_gres(id, &positions, gres)?;
        self.mark_step_gres(id, &step_gres, true);
        let job = self.jobs.get_mut(&id).expect("checked above");
        let step_id = job.steps.len() as u32;
        job.steps.push(Step {
            id: step_id,
            name: name.into(),
            cpus: vec![cpus_per_node.max(1); positions.len()],
            node_positions: positions,
            state: JobState::Running,
            exit_code: None,
            gres: step_gres,
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
        let gres = s.gres.clone();
        self.mark_step_gres(id, &gres, false);
        Ok(())
    }
}
