//! Owns the ready queue: eligible pending jobs' records, kept in pass order between passes.
//!
//! Without it every event-triggered pass collects, checks and sorts every pending job before
//! trying the first; with it a pass costs the jobs that changed since the last one and the
//! records it looks at. Only the engine's own passes fill it ([`ReadyQueue::rebuild`],
//! [`ReadyQueue::settle`]); the pending set takes jobs out of it as they change.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use crate::job::JobId;
use crate::queue::{QueueRecord, cmp_records};

/// A record ordered as passes try them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ranked(QueueRecord);

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_records(&self.0, &other.0)
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The records of the pending jobs known to be eligible, with the priorities they store, in
/// pass order, and the pending jobs a pass must check before it may queue them.
///
/// It stands for the pending jobs only while it is complete: from a rebuild over all of them
/// until [`ReadyQueue::clear`]. While incomplete it tracks nothing, so engines that never use it
/// (a replay recalculates every priority at each submission) pay nothing for it.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadyQueue {
    /// Records of the jobs known eligible, in pass order.
    sorted: BTreeSet<Ranked>,
    /// Each job in `sorted` → its records there (one per partition), to take them out by id.
    records: HashMap<JobId, Vec<QueueRecord>>,
    /// Pending jobs the next pass checks: new, requeued, held or released, waiting for a begin
    /// time, or with dependencies (which may stop being met when the job they name is requeued).
    unsettled: BTreeSet<JobId>,
    /// Whether `sorted` and `unsettled` cover every pending job.
    complete: bool,
}

impl ReadyQueue {
    /// Whether a pass may take its records from here.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Forgets everything: the next pass must build the queue from every pending job.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// The queue built from every pending job: `records` of the eligible ones (any order), and
    /// `unsettled`, the jobs the next pass checks again.
    pub fn rebuild(&mut self, records: &[QueueRecord], unsettled: impl IntoIterator<Item = JobId>) {
        self.clear();
        for &r in records {
            self.sorted.insert(Ranked(r));
            self.records.entry(r.job).or_default().push(r);
        }
        self.unsettled.extend(unsettled);
        self.complete = true;
    }

    /// Job `id` was added or changed: its records leave the queue until a pass checks it again.
    pub fn unsettle(&mut self, id: JobId) {
        if self.complete {
            self.take_out(id);
            self.unsettled.insert(id);
        }
    }

    /// Job `id` is no longer pending.
    pub fn remove(&mut self, id: JobId) {
        if self.complete {
            self.take_out(id);
            self.unsettled.remove(&id);
        }
    }

    /// The jobs a pass must check, taken out of the queue's care: the pass settles or
    /// unsettles each of them again.
    pub fn take_unsettled(&mut self) -> Vec<JobId> {
        std::mem::take(&mut self.unsettled).into_iter().collect()
    }

    /// Job `id`, found eligible, is queued with `records`; `recheck` keeps it among the jobs
    /// the next pass checks as well.
    pub fn settle(&mut self, id: JobId, records: Vec<QueueRecord>, recheck: bool) {
        if !self.complete {
            return;
        }
        self.take_out(id);
        for &r in &records {
            self.sorted.insert(Ranked(r));
        }
        self.records.insert(id, records);
        if recheck {
            self.unsettled.insert(id);
        }
    }

    /// Appends to `out` up to `n` records that come after `after` (from the first when `None`);
    /// returns how many it appended.
    pub fn extend_after(
        &self,
        after: Option<QueueRecord>,
        n: usize,
        out: &mut Vec<QueueRecord>,
    ) -> usize {
        let from = after.map_or(Bound::Unbounded, |r| Bound::Excluded(Ranked(r)));
        let before = out.len();
        out.extend(
            self.sorted
                .range((from, Bound::Unbounded))
                .take(n)
                .map(|r| r.0),
        );
        out.len() - before
    }

    /// How many records are queued.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Every queued record, in pass order (for the check debug builds make).
    #[cfg(any(test, debug_assertions))]
    pub fn records(&self) -> impl Iterator<Item = &QueueRecord> {
        self.sorted.iter().map(|r| &r.0)
    }

    fn take_out(&mut self, id: JobId) {
        if let Some(records) = self.records.remove(&id) {
            for r in records {
                self.sorted.remove(&Ranked(r));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use sluice_cluster::PartitionId;

    use super::*;

    fn rec(job: JobId, part_pos: u16, priority: u32) -> QueueRecord {
        QueueRecord {
            job,
            partition: PartitionId(u32::from(part_pos)),
            part_pos,
            has_reservation: false,
            tier: 1,
            priority,
            submit_time: 0,
        }
    }

    fn jobs(q: &ReadyQueue) -> Vec<(JobId, u16)> {
        q.records().map(|r| (r.job, r.part_pos)).collect()
    }

    #[test]
    fn an_incomplete_queue_tracks_nothing() {
        let mut q = ReadyQueue::default();
        q.unsettle(1);
        q.settle(1, vec![rec(1, 0, 5)], false);
        assert!(!q.is_complete());
        assert_eq!(q.len(), 0);
        assert!(q.take_unsettled().is_empty());
    }

    #[test]
    fn records_stay_in_pass_order_as_jobs_settle_change_and_leave() {
        let mut q = ReadyQueue::default();
        q.rebuild(&[rec(1, 0, 10), rec(2, 0, 30), rec(2, 1, 5)], [7]);
        assert_eq!(jobs(&q), vec![(2, 0), (1, 0), (2, 1)]);
        // A changed job leaves until it is checked again; the others keep their places.
        q.unsettle(2);
        assert_eq!(jobs(&q), vec![(1, 0)]);
        let mut checked = q.take_unsettled();
        checked.sort_unstable();
        assert_eq!(checked, vec![2, 7]);
        q.settle(2, vec![rec(2, 0, 1)], false);
        q.settle(7, vec![rec(7, 0, 20)], true);
        assert_eq!(jobs(&q), vec![(7, 0), (1, 0), (2, 0)]);
        assert_eq!(
            q.take_unsettled(),
            vec![7],
            "a job settled with recheck is checked again"
        );
        q.remove(1);
        assert_eq!(jobs(&q), vec![(7, 0), (2, 0)]);
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn records_are_handed_out_in_chunks_after_the_last_one() {
        let mut q = ReadyQueue::default();
        let all: Vec<QueueRecord> = (1..=5).map(|j| rec(j, 0, 100 - j)).collect();
        q.rebuild(&all, []);
        let mut out = Vec::new();
        assert_eq!(q.extend_after(None, 2, &mut out), 2);
        // A record handed out may leave meanwhile (its job started): the next chunk follows it.
        q.remove(2);
        let last = *out.last().unwrap();
        assert_eq!(q.extend_after(Some(last), 2, &mut out), 2);
        assert_eq!(q.extend_after(out.last().copied(), 2, &mut out), 1);
        assert_eq!(q.extend_after(out.last().copied(), 2, &mut out), 0);
        let order: Vec<JobId> = out.iter().map(|r| r.job).collect();
        assert_eq!(order, vec![1, 2, 3, 4, 5]);
        q.clear();
        assert!(!q.is_complete());
    }
}
