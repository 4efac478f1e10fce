//! Owns a backfill pass's release times: when each node, license and HRES layer is given back.
//!
//! Per node the time it is free and the nodes in that order; licenses and HRES by end time.

use std::collections::BTreeSet;

use crate::job::{Job, plan_limit};
use crate::job_id::JobId;
use crate::job_map::JobMap;

/// What running jobs hold and when they give it back, for planning.
pub(super) struct Releases {
    /// The pass's time, which no release time is earlier than: idle nodes are free at it.
    pub now: i64,
    /// Per node: when every job on it will have ended.
    pub node_free_at: Vec<i64>,
    /// Nodes by (`node_free_at`, index), so planning a job needs no sort; empty when stale.
    pub by_release: Vec<u32>,
    /// The last order sorted (this pass's before a start, or the last pass's), which
    /// `by_release` is sorted from: only the nodes of jobs that started or ended since move.
    last_order: Vec<u32>,
    /// The release times `last_order` was sorted by.
    last_keys: Vec<i64>,
    /// (end, license, count) of running jobs.
    pub licenses: Vec<(i64, usize, i64)>,
    /// (end, layer, amount) of running jobs.
    pub hres: Vec<(i64, usize, i64)>,
}

impl Releases {
    /// What the running jobs hold and when they give it back, in the storage of `buffers`
    /// (which [`Releases::into_buffers`] gives back), with the last pass's order to sort from.
    pub fn of_running(
        jobs: &JobMap,
        running: &BTreeSet<JobId>,
        node_count: usize,
        now: i64,
        buffers: &mut ReleaseBuffers,
    ) -> Self {
        let mut node_free_at = std::mem::take(&mut buffers.node_free_at);
        node_free_at.clear();
        node_free_at.resize(node_count, now);
        let mut by_release = std::mem::take(&mut buffers.spare_order);
        by_release.clear();
        let mut out = Releases {
            now,
            node_free_at,
            by_release,
            last_order: std::mem::take(&mut buffers.release_order),
            last_keys: std::mem::take(&mut buffers.release_keys),
            licenses: Vec::new(),
            hres: Vec::new(),
        };
        for id in running {
            let job = &jobs[id];
            let Some(alloc) = &job.alloc else { continue };
            let end = job
                .end_time
                .unwrap_or_else(|| {
                    job.start_time.unwrap_or(now) + plan_limit(job.time_limit) as i64
                })
                // A job still holding resources past its limit (time limits not enforced) frees
                // them no earlier than the next second, never in the past.
                .max(now + 1);
            for &n in &alloc.placement.nodes {
                let slot = &mut out.node_free_at[n as usize];
                *slot = (*slot).max(end);
            }
            out.licenses
                .extend(alloc.licenses.iter().map(|&(i, c)| (end, i, i64::from(c))));
            out.hres
                .extend(alloc.hres.iter().map(|c| (end, c.layer as usize, c.amount)));
        }
        out
    }

    /// Records a job the pass started at `now`: what it holds is given back at the end of its
    /// time limit.
    pub fn note_started(&mut self, job: &Job, now: i64) {
        let end = now + plan_limit(job.time_limit) as i64;
        if let Some(alloc) = &job.alloc {
            self.release_later(&alloc.placement.nodes, end);
            self.licenses
                .extend(alloc.licenses.iter().map(|&(i, c)| (end, i, i64::from(c))));
            self.hres
                .extend(alloc.hres.iter().map(|c| (end, c.layer as usize, c.amount)));
        }
    }

    /// Nodes `nodes` are now held until at least `end`: their release times move, and the order
    /// sorted so far becomes the one [`Releases::sort_by_release`] sorts again from (a start
    /// moves few nodes, so that costs what moved).
    fn release_later(&mut self, nodes: &[u32], end: i64) {
        if self.by_release.len() == self.node_free_at.len() {
            self.last_order = std::mem::take(&mut self.by_release);
            self.last_keys.clone_from(&self.node_free_at);
        }
        for &n in nodes {
            let slot = &mut self.node_free_at[n as usize];
            *slot = (*slot).max(end);
        }
    }

    /// Returns its storage to `buffers`: the order to start the next pass's sort from (this
    /// pass's, if it sorted one) with the release times it was sorted by, the rest as spares.
    pub fn into_buffers(self, buffers: &mut ReleaseBuffers) {
        if self.by_release.len() == self.node_free_at.len() {
            buffers.release_order = self.by_release;
            buffers.release_keys = self.node_free_at;
            buffers.spare_order = self.last_order;
            buffers.node_free_at = self.last_keys;
        } else {
            buffers.release_order = self.last_order;
            buffers.release_keys = self.last_keys;
            buffers.spare_order = self.by_release;
            buffers.node_free_at = self.node_free_at;
        }
    }

    /// Puts `by_release` in order again after release times changed.
    ///
    /// Nodes free at `now` (idle ones) come first in index order. From the last order sorted,
    /// the other nodes whose release time is still the one it was sorted by keep their order,
    /// and the rest (those of jobs that started or outlived their limit since) are sorted and
    /// merged in: a pass over the nodes and a sort of what moved. Without a last order it
    /// sorts outright.
    pub fn sort_by_release(&mut self) {
        let n = self.node_free_at.len();
        if self.by_release.len() == n {
            return;
        }
        if self.last_order.len() == n && self.last_keys.len() == n {
            self.merge_moved();
        } else {
            self.sort_outright();
        }
    }

    /// [`Releases::sort_by_release`] from the last order, in its storage and `by_release`'s.
    fn merge_moved(&mut self) {
        let (free_at, sorted_by, now) = (&self.node_free_at, &self.last_keys, self.now);
        let key = |m: u32| (free_at[m as usize], m);
        let mut order = std::mem::take(&mut self.last_order);
        let mut moved = std::mem::take(&mut self.by_release);
        moved.clear();
        // The nodes still where the last order had them, gathered at its front in that order.
        let mut kept = 0;
        for i in 0..order.len() {
            let m = order[i];
            let t = free_at[m as usize];
            if t == now {
                continue;
            }
            if t == sorted_by[m as usize] {
                order[kept] = m;
                kept += 1;
            } else {
                moved.push(m);
            }
        }
        moved.sort_unstable_by_key(|&m| key(m));
        let idle = order.len() - kept - moved.len();
        // Each moved node from the last, its place found among the kept nodes not yet passed,
        // and those after it shifted right at once to the places after the idle nodes: the
        // cost is a search per moved node, not a step per node.
        let (mut i, mut j) = (kept, moved.len());
        while j > 0 {
            let m = moved[j - 1];
            let pos = order[..i].partition_point(|&o| key(o) < key(m));
            order.copy_within(pos..i, pos + j + idle);
            order[pos + j - 1 + idle] = m;
            i = pos;
            j -= 1;
        }
        order.copy_within(0..i, idle);
        let mut w = 0;
        for (m, &t) in free_at.iter().enumerate() {
            if t == now {
                order[w] = m as u32;
                w += 1;
            }
        }
        self.by_release = order;
        self.last_order = moved;
    }

    /// [`Releases::sort_by_release`] without a last order: the nodes free at the earliest time
    /// (idle ones: now) come first in index order without a sort. Release times within 2^32 s
    /// of the earliest (all of them, unless a job asks for more than a century) sort as one
    /// integer each, time above node, which is several times cheaper than sorting pairs; the
    /// order is the same.
    fn sort_outright(&mut self) {
        let free_at = &self.node_free_at;
        let earliest = free_at.iter().copied().min().unwrap_or(0);
        let mut first = Vec::with_capacity(free_at.len());
        let mut keys = Vec::with_capacity(free_at.len());
        for (n, &t) in free_at.iter().enumerate() {
            match t.checked_sub(earliest).and_then(|d| u32::try_from(d).ok()) {
                Some(0) => first.push(n as u32),
                Some(offset) => keys.push((u64::from(offset) << 32) | n as u64),
                None => break,
            }
        }
        if first.len() + keys.len() == free_at.len() {
            keys.sort_unstable();
            first.extend(keys.iter().map(|&k| k as u32));
            self.by_release = first;
        } else {
            self.by_release = (0..free_at.len() as u32).collect();
            self.by_release
                .sort_unstable_by_key(|&n| (free_at[n as usize], n));
        }
    }
}

/// The storage of [`Releases`] that the engine keeps from pass to pass: the last pass's order
/// to sort from, and spares.
#[derive(Default)]
pub(crate) struct ReleaseBuffers {
    /// The nodes by release time as the last pass left them ([`Releases::last_order`]).
    release_order: Vec<u32>,
    /// The release times `release_order` was sorted by ([`Releases::last_keys`]).
    release_keys: Vec<i64>,
    /// Storage for the pass's [`Releases::by_release`].
    spare_order: Vec<u32>,
    /// Storage for the pass's [`Releases::node_free_at`].
    node_free_at: Vec<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn releases(free_at: &[i64]) -> Releases {
        Releases {
            now: free_at.iter().copied().min().unwrap_or(0),
            node_free_at: free_at.to_vec(),
            by_release: Vec::new(),
            last_order: Vec::new(),
            last_keys: Vec::new(),
            licenses: Vec::new(),
            hres: Vec::new(),
        }
    }

    #[test]
    fn a_start_moves_its_nodes_to_their_new_release_order() {
        let mut rel = releases(&[5, 0, 9, 0, 5, 7]);
        rel.sort_by_release();
        assert_eq!(rel.by_release, vec![1, 3, 0, 4, 5, 2]);
        // Nodes 3 and 4 are now held until 8; node 2 already until 9 stays.
        rel.release_later(&[3, 4, 2], 8);
        rel.sort_by_release();
        let incremental = rel.by_release.clone();
        assert_eq!(rel.node_free_at, vec![5, 0, 9, 8, 8, 7]);
        // Sorted outright, without the order before the start.
        rel.by_release.clear();
        rel.last_order.clear();
        rel.sort_by_release();
        assert_eq!(incremental, rel.by_release);
        assert_eq!(incremental, vec![1, 0, 5, 3, 4, 2]);
    }

    #[test]
    fn release_order_is_by_time_then_node_even_centuries_apart() {
        let far = 5_000_000_000; // past what one packed key holds
        for free_at in [
            vec![7, 3, 7, 3, 0, 9],
            vec![far, 3, 7, far, 0, i64::MAX],
            vec![-5, 2, -5],
        ] {
            let mut rel = releases(&free_at);
            rel.sort_by_release();
            let mut expected: Vec<u32> = (0..free_at.len() as u32).collect();
            expected.sort_by_key(|&n| (free_at[n as usize], n));
            assert_eq!(rel.by_release, expected, "{free_at:?}");
        }
    }

    #[test]
    fn release_order_from_the_last_pass_is_the_order_a_full_sort_gives() {
        let mut rng = sluice_policy::fixtures::Rng::new(0x5851_f42d_4c95_7f2d);
        for round in 0..300 {
            let n = 1 + rng.below(150) as usize;
            let time = |rng: &mut sluice_policy::fixtures::Rng| rng.below(40) as i64 * 60;
            let mut free_at: Vec<i64> = (0..n).map(|_| time(&mut rng)).collect();
            let mut last = releases(&free_at);
            last.sort_by_release();
            // A few release times moved since the last pass, all of them, or the node count
            // changed (the last order does not apply). Nodes at the least time are idle.
            match round % 3 {
                0 => (0..1 + rng.below(4)).for_each(|_| {
                    free_at[rng.below(n as u64) as usize] = time(&mut rng);
                }),
                1 => free_at.iter_mut().for_each(|t| *t = time(&mut rng)),
                _ => free_at.push(time(&mut rng)),
            }
            let mut rel = releases(&free_at);
            let mut buffers = ReleaseBuffers::default();
            last.into_buffers(&mut buffers);
            rel.last_order = buffers.release_order;
            rel.last_keys = buffers.release_keys;
            rel.sort_by_release();
            let mut expected: Vec<u32> = (0..free_at.len() as u32).collect();
            expected.sort_by_key(|&m| (free_at[m as usize], m));
            assert_eq!(rel.by_release, expected, "round {round}: {free_at:?}");
        }
    }
}
