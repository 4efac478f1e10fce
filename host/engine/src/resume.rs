//! Owns no state: a running job taken back after a restart of the host driving the engine. Its
//! processes never stopped, so it starts again on the nodes it ran on, at its first start time.

use sluice_cluster::NodeId;
use sluice_policy::NodeBitmap;

use crate::engine::Engine;
use crate::error::JobError;
use crate::event::Loop;
use crate::job::{JobId, JobState, Reason};
use crate::pass_buffers::{Plan, StartBuffers};
use crate::queue::QueueRecord;

/// Why a job could not be taken back as running.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// Not a pending job of this engine.
    #[error(transparent)]
    Job(#[from] JobError),
    /// The job is not (or no longer) allowed in the partition it ran in.
    #[error("job {0} may not run in partition {1}")]
    Partition(JobId, String),
    /// The policies would not place it on the nodes it ran on.
    #[error("job {0} no longer fits on the nodes it ran on: {1}")]
    Placement(JobId, &'static str),
}

impl Engine {
    /// Starts pending job `id` at once in `partition` on (a subset of) `nodes`, as having started
    /// at `start`: the job kept running while the host that drives this engine restarted. It
    /// goes through the same start as a pass (selection, HRES, GRES, licenses), restricted to
    /// those nodes; its `Started` event follows, which the host must not act on again.
    pub fn resume_running(
        &mut self,
        id: JobId,
        partition: &str,
        nodes: &[NodeId],
        start: i64,
    ) -> Result<(), ResumeError> {
        let job = self.jobs.get(&id).ok_or(JobError::UnknownJob(id))?;
        if job.state != JobState::Pending {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            }
            .into());
        }
        let pos = job
            .partitions
            .iter()
            .position(|p| self.cluster.partitions[p.index()].name == partition)
            .ok_or_else(|| ResumeError::Partition(id, partition.to_string()))?;
        let part = job.partitions[pos];
        let rec = QueueRecord {
            job: id,
            partition: part,
            part_pos: pos as u16,
            has_reservation: job.reservation.is_some(),
            tier: self.cluster.partitions[part.index()].priority_tier,
            priority: job.priority.get(pos).copied().unwrap_or(0),
            submit_time: job.submit_time,
        };
        let mut usable = NodeBitmap::with_capacity(self.nodes.len());
        for n in nodes {
            usable.insert(n.0);
        }
        let mut buffers = StartBuffers::default();
        let result = self.try_start(
            &rec,
            start,
            &usable,
            &Plan::default(),
            Loop::Main,
            &mut buffers,
        );
        // A later pass must hand the selection policy its table again.
        self.selection_begun = false;
        result.map_err(|r: Reason| ResumeError::Placement(id, r.as_str()))
    }
}
