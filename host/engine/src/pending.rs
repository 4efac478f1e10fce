//! Owns the pending jobs: their ids in order, and how many need each CPU count.
//!
//! The pending jobs: their ids in order, and how many need each CPU count.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use crate::job::JobId;

/// The ids of the pending jobs, with the CPU counts they need kept beside them so that "could
/// any of them start on this many free CPUs" is one lookup, not a walk over the queue (the
/// replay asks it at every event).
#[derive(Clone, Debug, Default)]
pub(crate) struct PendingJobs {
    /// Each pending job's id and the CPUs it needs.
    ids: BTreeMap<JobId, u64>,
    /// CPUs a job needs → how many pending jobs need that many.
    by_cpus: BTreeMap<u64, u32>,
}

impl PendingJobs {
    /// Adds job `id`, which needs `cpus` CPUs; a job already pending is left as it is.
    pub fn insert(&mut self, id: JobId, cpus: u64) {
        if let Entry::Vacant(slot) = self.ids.entry(id) {
            slot.insert(cpus);
            *self.by_cpus.entry(cpus).or_default() += 1;
        }
    }

    /// Removes job `id`; an unknown id is ignored.
    pub fn remove(&mut self, id: JobId) {
        let Some(cpus) = self.ids.remove(&id) else {
            return;
        };
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
        p.insert(1, 8);
        p.insert(2, 4);
        p.insert(3, 4);
        // A second insertion of a pending job counts it once.
        p.insert(2, 4);
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
}
