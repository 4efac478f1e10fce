//! Owns no state: a step's share of its job's devices, a subset of the job's bitmap per node.
//!
//! A step's share of its job's devices: a subset of the job's bitmap on each node it runs on.

use sluice_policy::PickRequest;
use sluice_policy::gres::check_picks;

use crate::engine::Engine;
use crate::error::JobError;
use crate::gres::alloc::builtin_pick;
use crate::gres::job::StepGres;
use crate::job::JobId;
use crate::request::GresRequest;

impl Engine {
    /// Chooses, on each of `positions`, devices of the job's records for the step's `--gres` items,
    /// among those no running step uses. `Err(StepTooBig)` when the job does not hold enough.
    pub(crate) fn pick_step_gres(
        &mut self,
        id: JobId,
        positions: &[u32],
        wanted: &[GresRequest],
    ) -> Result<Vec<StepGres>, JobError> {
        let mut out: Vec<StepGres> = Vec::new();
        for w in wanted.iter().filter(|w| w.count > 0) {
            let (record, requests) = {
                let job = &self.jobs[&id];
                let record = job
                    .gres
                    .records
                    .iter()
                    .position(|r| {
                        r.name == w.name && (w.gres_type.is_none() || r.gres_type == w.gres_type)
                    })
                    .ok_or(JobError::StepTooBig(id))?;
                let r = &job.gres.records[record];
                let alloc = job.alloc.as_ref().ok_or(JobError::StepTooBig(id))?;
                let mut requests = Vec::new();
                for &pos in positions {
                    let p = pos as usize;
                    let held = r.bit_alloc.get(p).cloned().unwrap_or_default();
                    if held.is_empty() {
                        // Counted only: the step may use up to what the job holds there.
                        if u64::from(w.count) > r.cnt_node_alloc.get(p).copied().unwrap_or(0) {
                            return Err(JobError::StepTooBig(id));
                        }
                        continue;
                    }
                    let in_use = r.bit_step_alloc.get(p).cloned().unwrap_or_default();
                    let node = alloc.placement.nodes[p] as usize;
                    let g = self.gres.get(node, r.kind as usize);
                    requests.push(PickRequest {
                        node_position: pos,
                        count: w.count,
                        type_name: w.gres_type.clone().unwrap_or_default(),
                        free: held.into_iter().filter(|d| !in_use.contains(d)).collect(),
                        cores: self.cpus.cores_of(node, job.cpu_ids.node(p).unwrap_or(&[])),
                        devices: g.contract_devices(),
                    });
                }
                (record, requests)
            };
            let name = w.name.clone();
            let answer = match self.policies.gres.iter_mut().find(|(n, _)| *n == name) {
                Some((_, policy)) => policy.pick(&requests),
                None => requests.iter().map(builtin_pick).collect(),
            };
            if check_picks(&requests, &answer).is_err() {
                return Err(JobError::StepTooBig(id));
            }
            let len = self.jobs[&id].gres.records[record].bit_alloc.len();
            let mut step = StepGres {
                record,
                bit_alloc: vec![Vec::new(); len],
            };
            for (req, pick) in requests.iter().zip(answer) {
                step.bit_alloc[req.node_position as usize] = pick;
            }
            out.push(step);
        }
        Ok(out)
    }

    /// Marks a step's devices used (`start`) or free again in the job's step bitmap.
    pub(crate) fn mark_step_gres(&mut self, id: JobId, gres: &[StepGres], start: bool) {
        let job = self.jobs.get_mut(&id).expect("a known job");
        for s in gres {
            let r = &mut job.gres.records[s.record];
            for (p, devices) in s.bit_alloc.iter().enumerate() {
                let Some(slot) = r.bit_step_alloc.get_mut(p) else {
                    continue;
                };
                if start {
                    slot.extend(devices);
                    slot.sort_unstable();
                } else {
                    slot.retain(|d| !devices.contains(d));
                }
            }
        }
    }
}

/// Whether allocation position `p` of `job` still has room for the step's `--gres` items.
pub(crate) fn step_gres_room(job: &crate::job::Job, p: usize, wanted: &[GresRequest]) -> bool {
    wanted.iter().filter(|w| w.count > 0).all(|w| {
        job.gres.records.iter().any(|r| {
            let type_ok = w.gres_type.is_none() || r.gres_type == w.gres_type;
            let held = r.bit_alloc.get(p).map_or(0, Vec::len) as u64;
            let free = if held == 0 {
                r.cnt_node_alloc.get(p).copied().unwrap_or(0)
            } else {
                held - r.bit_step_alloc.get(p).map_or(0, Vec::len) as u64
            };
            r.name == w.name && type_ok && free >= u64::from(w.count)
        })
    })
}
