//! Owns the pending jobs: their ids in order, and how many need each CPU count.
//!
//! The pending jobs: their ids in order, how many need each CPU count, and their begin times.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use crate::job::JobId;
use crate::ready::ReadyQueue;

/// The ids of the pending jobs, with the CPU counts they need kept beside them so that "could
/// any of them start on this many free CPUs" is one lookup, not a walk over the queue (the
/// replay asks it at every event), and their begin times beside them so that "when does the
/// next one become eligible" is one lookup too (the daemon asks it at every request batch).
#[derive(Clone, Debug, Default)]
pub(crate) struct PendingJobs {
    /// Each pending job's id, the CPUs it needs and its begin time.
    ids: BTreeMap<JobId, (u64, Option<i64>)>,
    /// CPUs a job needs → how many pending jobs need that many.
    by_cpus: BTreeMap<u64, u32>,
    /// (begin time, id) of each pending job that has a begin time.
    begins: BTreeSet<(i64, JobId)>,
    /// The eligible ones' records in pass order, kept between passes; a job added or removed
    /// here is added to or taken out of it too.
    pub ready: ReadyQueue,
}

impl PendingJobs {
    /// Adds job `id`, which needs `cpus` CPUs and may not start before `begin`; a job already
    /// pending is left as it is.
    pub fn insert(&mut self, id: JobId, cpus: u64, begin: Option<i64>) {
        if let Entry::Vacant(slot) = self.ids.entry(id) {
            slot.insert((cpus, begin));
            *self.by_cpus.entry(cpus).or_default() += 1;
            if let Some(t) = begin {
                self.begins.insert((t, id));
            }
            self.ready.unsettle(id);
        }
    }

    /// Pending job `id` may now not start before `begin`; an unknown id is ignored.
    pub fn set_begin(&mut self, id: JobId, begin: Option<i64>) {
        let Some((_, held)) = self.ids.get_mut(&id) else {
            return;
        };
        if let Some(t) = std::mem::replace(held, begin) {
            self.begins.remove(&(t, id));
        }
        if let Some(t) = begin {
            self.begins.insert((t, id));
        }
        self.ready.unsettle(id);
    }

    /// Removes job `id`; an unknown id is ignored.
    pub fn remove(&mut self, id: JobId) {
        let Some((cpus, begin)) = self.ids.remove(&id) else {
            return;
        };
        self.ready.remove(id);
        if let Some(t) = begin {
            self.begins.remove(&(t, id));
        }
        if let Some(count) = self.by_cpus.get_mut(&cpus) {
            *count -= 1;
            if *count == 0 {
                self.by_cpus.remove(&cpus);
            }
        }
    }

    /// The ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = &JobId> {
        self.ids.keys()
    }

    /// Whether no job is pending.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How many jobs are pending.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The earliest begin time after `now` of any pending job.
    pub fn next_begin_after(&self, now: i64) -> Option<i64> {
        let after = now.checked_add(1)?;
        self.begins.range((after, 0)..).next().map(|&(t, _)| t)
    }

    /// The fewest CPUs any pending job needs.
    pub fn fewest_cpus(&self) -> Option<u64> {
        self.by_cpus.keys().next().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fewest_cpus_follow_insertions_and_removals() {
        let mut p = PendingJobs::default();
        assert_eq!(p.fewest_cpus(), None);
        p.insert(1, 8, None);
        p.insert(2, 4, None);
        p.insert(3, 4, None);
        // A second insertion of a pending job counts it once.
        p.insert(2, 4, None);
        assert_eq!(p.fewest_cpus(), Some(4));
        p.remove(2);
        assert_eq!(p.fewest_cpus(), Some(4), "job 3 still needs 4");
        p.remove(3);
        assert_eq!(p.fewest_cpus(), Some(8));
        // Removing an id that is not pending changes nothing.
        p.remove(3);
        p.remove(9);
        assert_eq!(p.fewest_cpus(), Some(8));
        assert_eq!(p.iter().copied().collect::<Vec<_>>(), vec![1]);
        p.remove(1);
        assert!(p.is_empty());
        assert_eq!(p.fewest_cpus(), None);
    }

    #[test]
    fn the_next_begin_time_follows_insertions_changes_and_removals() {
        let mut p = PendingJobs::default();
        p.insert(1, 1, Some(100));
        p.insert(2, 1, Some(50));
        p.insert(3, 1, None);
        assert_eq!(p.next_begin_after(0), Some(50));
        assert_eq!(
            p.next_begin_after(50),
            Some(100),
            "a begin time passed is not next"
        );
        p.set_begin(1, Some(70));
        assert_eq!(p.next_begin_after(50), Some(70));
        p.remove(2);
        assert_eq!(p.next_begin_after(0), Some(70));
        p.set_begin(3, Some(60));
        assert_eq!(p.next_begin_after(0), Some(60));
        p.set_begin(3, None);
        p.remove(1);
        assert_eq!(p.next_begin_after(0), None);
        assert_eq!(p.next_begin_after(i64::MAX), None);
        assert_eq!(p.len(), 1);
    }
}
