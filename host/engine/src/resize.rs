//! Owns no state: requeueing a running job and shrinking its allocation.
//!
//! Requeueing a running job and shrinking its allocation: what they hold is given back and the
//! per-position GRES arrays are rebuilt.

use sluice_cluster::NodeId;

use crate::engine::Engine;
use crate::error::JobError;
use crate::event::Event;
use crate::job::{JobId, JobState, Reason};

impl Engine {
    /// Requeues a running (or configuring) job (scontrol requeue): it gives back everything it
    /// holds and is pending again with the same request, licenses and HRES included. An
    /// `Ended` event with state PENDING tells the executor to stop its processes.
    pub fn requeue(&mut self, id: JobId) -> Result<(), JobError> {
        let now = self.clock.now();
        let job = self.jobs.get(&id).ok_or(JobError::UnknownJob(id))?;
        if !matches!(job.state, JobState::Running | JobState::Configuring) {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        self.release_resources(id);
        self.forget_gres(id);
        self.limits.stop(id);
        let job = self.jobs.get_mut(&id).expect("checked above");
        job.state = JobState::Pending;
        job.reason = Reason::None;
        job.alloc = None;
        job.steps.clear();
        job.start_time = None;
        job.end_time = None;
        job.priority_time = None;
        let (cpus, begin) = (job.cpus(), job.spec.begin_time);
        self.pending.insert(id, cpus, begin);
        self.outbox.push(Event::Ended {
            job: id,
            state: JobState::Pending,
            exit_code: None,
            time: now,
        });
        self.pacing.requested = true;
        Ok(())
    }

    /// Shrinks a running job to the allocation nodes in `keep` (scontrol update NumNodes=/NodeList=):
    /// the other nodes' CPUs, memory and GRES go back, and every array indexed by allocation
    /// position (placement, CPUs held, GRES bitmaps and counts, steps' positions) is rebuilt
    /// with the kept nodes shifted down. Refused while a running step uses a node to drop.
    /// Licenses and HRES charges stay as they were at the start.
    pub fn shrink(&mut self, id: JobId, keep: &[NodeId]) -> Result<(), JobError> {
        let job = self.jobs.get(&id).ok_or(JobError::UnknownJob(id))?;
        let Some(alloc) = job
            .alloc
            .as_ref()
            .filter(|_| job.state == JobState::Running)
        else {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        };
        let nodes = &alloc.placement.nodes;
        let kept: Vec<usize> = (0..nodes.len())
            .filter(|&p| keep.contains(&NodeId(nodes[p])))
            .collect();
        let dropped: Vec<usize> = (0..nodes.len()).filter(|p| !kept.contains(p)).collect();
        let busy = job.steps.iter().any(|s| {
            s.state == JobState::Running
                && s.node_positions
                    .iter()
                    .any(|p| dropped.contains(&(*p as usize)))
        });
        if kept.is_empty() || keep.len() != kept.len() || busy {
            return Err(JobError::StepTooBig(id));
        }
        // The dropped nodes' share, as a placement of its own, goes back through the table.
        let kinds = self.nodes.table().gres_kinds.len();
        let part = |positions: &[usize]| {
            let p = &alloc.placement;
            sluice_policy::Placement {
                nodes: positions.iter().map(|&i| p.nodes[i]).collect(),
                cpus: positions.iter().map(|&i| p.cpus[i]).collect(),
                memory_mb: positions.iter().map(|&i| p.memory_mb[i]).collect(),
                gres: positions
                    .iter()
                    .flat_map(|&i| p.gres[i * kinds..(i + 1) * kinds].iter().copied())
                    .collect(),
                rows: positions
                    .iter()
                    .filter_map(|&i| p.rows.get(i).copied())
                    .collect(),
            }
        };
        let (gone, stays) = (part(&dropped), part(&kept));
        self.release_gres(id, dropped.iter().copied());
        self.nodes.release(id, &gone);
        let job = self.jobs.get_mut(&id).expect("checked above");
        for r in &mut job.gres.records {
            r.keep_positions(&kept);
        }
        job.cpu_ids = job.cpu_ids.only(&kept);
        let new_pos = |p: u32| kept.iter().position(|&k| k == p as usize).map(|i| i as u32);
        for s in &mut job.steps {
            let (positions, cpus) = s
                .node_positions
                .iter()
                .zip(&s.cpus)
                .filter_map(|(&p, &c)| new_pos(p).map(|q| (q, c)))
                .unzip();
            (s.node_positions, s.cpus) = (positions, cpus);
            for g in &mut s.gres {
                g.bit_alloc = kept
                    .iter()
                    .filter_map(|&p| g.bit_alloc.get(p).cloned())
                    .collect();
            }
        }
        job.alloc.as_mut().expect("running").placement = stays;
        self.pacing.requested = true;
        Ok(())
    }
}
