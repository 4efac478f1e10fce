//! Owns no state: pending jobs' queue records, in Slurm's `sort_job_queue2` order.
//!
//! The job queue: one record per pending job and partition, sorted as Slurm's `sort_job_queue2`.

use std::cmp::Ordering;

use sluice_cluster::PartitionId;

use crate::job::JobId;

/// One (job, partition) pair to try; a multi-partition job has one per partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueRecord {
    /// Job id.
    pub job: JobId,
    /// Partition this record ranks the job in.
    pub partition: PartitionId,
    /// Position of the partition in the job's own list (for per-partition priorities).
    pub part_pos: u16,
    /// Whether the job asked for an advance reservation.
    pub has_reservation: bool,
    /// The partition's PriorityTier.
    pub tier: u16,
    /// Priority in this partition.
    pub priority: u32,
    /// Submit time.
    pub submit_time: i64,
}

/// What a pass does with a queue record before trying it.
pub(crate) enum Gate {
    /// Try it.
    Test,
    /// Go on to the next record.
    Skip,
    /// End the pass, for this reason.
    Stop(&'static str),
}

/// Slurm's order: reservation first, then PriorityTier, priority (both descending), submit time, job id.
pub fn cmp_records(a: &QueueRecord, b: &QueueRecord) -> Ordering {
    b.has_reservation
        .cmp(&a.has_reservation)
        .then(b.tier.cmp(&a.tier))
        .then(b.priority.cmp(&a.priority))
        .then(a.submit_time.cmp(&b.submit_time))
        .then(a.job.cmp(&b.job))
        .then(a.part_pos.cmp(&b.part_pos))
}

/// Sorts records into scheduling order.
pub fn sort(records: &mut [QueueRecord]) {
    records.sort_unstable_by(cmp_records);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(job: JobId, resv: bool, tier: u16, priority: u32, submit: i64) -> QueueRecord {
        QueueRecord {
            job,
            partition: PartitionId(0),
            part_pos: 0,
            has_reservation: resv,
            tier,
            priority,
            submit_time: submit,
        }
    }

    #[test]
    fn order_is_reservation_tier_priority_submit_id() {
        let mut q = vec![
            rec(1, false, 1, 100, 10),
            rec(2, false, 2, 1, 10),
            rec(3, true, 1, 1, 10),
            rec(4, false, 1, 100, 5),
            rec(5, false, 1, 200, 50),
            rec(7, false, 1, 100, 5),
            rec(6, false, 1, 100, 5),
        ];
        sort(&mut q);
        let order: Vec<JobId> = q.iter().map(|r| r.job).collect();
        assert_eq!(order, vec![3, 2, 5, 4, 6, 7, 1]);
    }
}
