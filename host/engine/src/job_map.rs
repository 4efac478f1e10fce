//! Owns the engine's jobs by id, in ascending id order.
//!
//! The engine's jobs by id: ids are handed out in ascending order, so a job is found by its
//! offset from the oldest id still held instead of by a tree search.

use std::collections::VecDeque;
use std::ops::Index;

use crate::job::{Job, JobId};

/// Jobs (or, in tests, anything) by id, iterated in id order.
///
/// Holds one slot per id from the oldest job still held to the newest (8 bytes for an id whose
/// job is gone), so memory follows the jobs held and the ids handed out while the oldest lives.
#[derive(Clone, Debug)]
pub(crate) struct JobMap<T = Job> {
    /// Id of `slots[0]`.
    first: JobId,
    slots: VecDeque<Option<Box<T>>>,
    len: usize,
}

impl<T> Default for JobMap<T> {
    fn default() -> Self {
        Self {
            first: 0,
            slots: VecDeque::new(),
            len: 0,
        }
    }
}

impl<T> JobMap<T> {
    fn slot(&self, id: JobId) -> Option<usize> {
        let offset = id.checked_sub(self.first)? as usize;
        (offset < self.slots.len()).then_some(offset)
    }

    /// The job with `id`.
    pub fn get(&self, id: &JobId) -> Option<&T> {
        self.slots[self.slot(*id)?].as_deref()
    }

    /// The job with `id`, to change.
    pub fn get_mut(&mut self, id: &JobId) -> Option<&mut T> {
        let slot = self.slot(*id)?;
        self.slots[slot].as_deref_mut()
    }

    /// Whether a job with `id` is held.
    pub fn contains_key(&self, id: &JobId) -> bool {
        self.get(id).is_some()
    }

    /// Adds a job under an id above every id held so far.
    ///
    /// # Panics
    /// If `id` is not above the newest id held: the engine hands ids out in ascending order.
    pub fn insert(&mut self, id: JobId, job: T) {
        if self.len == 0 {
            self.slots.clear();
            self.first = id;
        }
        let next = self.first as usize + self.slots.len();
        assert!(id as usize >= next, "job id {id} handed out twice");
        self.slots
            .resize_with(id as usize - self.first as usize, || None);
        self.slots.push_back(Some(Box::new(job)));
        self.len += 1;
    }

    /// Takes the job with `id` out, boxed as it was held (a job is large; moving it out of the
    /// box would copy it); the slots of gone jobs at either end are dropped with it.
    pub fn remove(&mut self, id: &JobId) -> Option<Box<T>> {
        let slot = self.slot(*id)?;
        let job = self.slots[slot].take()?;
        self.len -= 1;
        while self.slots.front().is_some_and(Option::is_none) {
            self.slots.pop_front();
            self.first += 1;
        }
        // So that the newest id can be held again (`--test-only` holds a job for a moment
        // under the next id, which the next submission then takes).
        while self.slots.back().is_some_and(Option::is_none) {
            self.slots.pop_back();
        }
        Some(job)
    }

    /// Every job, in id order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().filter_map(|slot| slot.as_deref())
    }
}

impl<T> Index<&JobId> for JobMap<T> {
    type Output = T;

    fn index(&self, id: &JobId) -> &T {
        self.get(id).expect("no job with this id")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_found_by_id_and_listed_in_id_order() {
        let mut map = JobMap::default();
        for id in [3, 4, 7, 8] {
            map.insert(id, id * 10);
        }
        assert_eq!(map.get(&7), Some(&70));
        assert_eq!(map.get(&5), None, "an id never handed out");
        assert_eq!(map.get(&2), None, "below the oldest");
        assert_eq!(map.get(&9), None, "above the newest");
        assert_eq!(map.remove(&4), Some(Box::new(40)));
        assert_eq!(map.remove(&4), None);
        assert_eq!(map.values().copied().collect::<Vec<_>>(), vec![30, 70, 80]);
        assert!(!map.contains_key(&4));
        assert_eq!(map[&8], 80);
    }

    #[test]
    fn gone_jobs_at_the_front_give_their_slots_back() {
        let mut map = JobMap::default();
        for id in 1..=1000 {
            map.insert(id, id);
        }
        for id in 1..1000 {
            map.remove(&id);
        }
        assert_eq!(map.slots.len(), 1, "only the newest job's slot is left");
        assert_eq!(map.get(&1000), Some(&1000));
        map.remove(&1000);
        assert_eq!(map.values().count(), 0);
        // An empty map starts again at whatever id comes next.
        map.insert(5000, 1);
        assert_eq!(map.slots.len(), 1);
        assert_eq!(map.get(&5000), Some(&1));
    }

    #[test]
    #[should_panic(expected = "handed out twice")]
    fn an_id_is_not_handed_out_twice() {
        let mut map = JobMap::default();
        map.insert(5, 'a');
        map.insert(5, 'b');
    }
}
