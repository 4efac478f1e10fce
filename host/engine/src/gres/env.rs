//! Owns no state: the GRES part of a job's and a step's environment on one node, from each GRES
//! name's policy (`GresPolicy::env`); `sluice_api::job_env::SlurmEnv::gres` puts it with the rest.

use sluice_policy::NodeDevices;

use crate::engine::Engine;
use crate::error::JobError;
use crate::job::JobId;

impl Engine {
    /// The GRES environment of job `id` on its allocation node `position` (CUDA_VISIBLE_DEVICES,
    /// SLURM_JOB_GPUS, …): each GRES name with a policy and devices there contributes its variables.
    pub fn job_env(&mut self, id: JobId, position: u32) -> Result<Vec<(String, String)>, JobError> {
        self.gres_env(id, None, position)
    }

    /// The GRES environment of step `step` of job `id` on job allocation node `position`, from the
    /// step's devices only (SLURM_STEP_GPUS, …).
    pub fn step_env(
        &mut self,
        id: JobId,
        step: u32,
        position: u32,
    ) -> Result<Vec<(String, String)>, JobError> {
        self.gres_env(id, Some(step), position)
    }

    fn gres_env(
        &mut self,
        id: JobId,
        step: Option<u32>,
        position: u32,
    ) -> Result<Vec<(String, String)>, JobError> {
        let job = self.jobs.get(&id).ok_or(JobError::UnknownJob(id))?;
        let alloc = job.alloc.as_ref().ok_or(JobError::WrongState {
            job: id,
            state: job.state,
        })?;
        let p = position as usize;
        let node = *alloc
            .placement
            .nodes
            .get(p)
            .ok_or(JobError::StepTooBig(id))? as usize;
        let the_step = match step {
            None => None,
            Some(s) => Some(
                job.steps
                    .get(s as usize)
                    .ok_or(JobError::UnknownStep { job: id, step: s })?,
            ),
        };
        // Per GRES name: the devices of every record of that name (a step: only its own).
        let mut per_name: Vec<(String, usize, Vec<u32>)> = Vec::new();
        for (ri, r) in job.gres.records.iter().enumerate() {
            let devices: Vec<u32> = match the_step {
                None => r.bit_alloc.get(p).cloned().unwrap_or_default(),
                Some(s) => s
                    .gres
                    .iter()
                    .filter(|g| g.record == ri)
                    .flat_map(|g| g.bit_alloc.get(p).cloned().unwrap_or_default())
                    .collect(),
            };
            match per_name.iter_mut().find(|(n, ..)| *n == r.name) {
                Some((_, _, d)) => d.extend(devices),
                None => per_name.push((r.name.clone(), r.kind as usize, devices)),
            }
        }
        let mut out = Vec::new();
        for (name, kind, mut devices) in per_name {
            devices.sort_unstable();
            let configured = self.gres.get(node, kind).contract_devices();
            let Some((_, policy)) = self.policies.gres.iter_mut().find(|(n, _)| *n == name) else {
                continue;
            };
            out.extend(policy.env(
                &NodeDevices {
                    node_position: position,
                    devices,
                    configured,
                },
                step.is_some(),
            ));
        }
        Ok(out)
    }
}
