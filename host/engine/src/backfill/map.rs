//! Owns backfill's node-space map: time slices with the nodes, licenses and HRES still free.
//!
//! Backfill's node-space map: time slices in order, each with the nodes not yet promised to a
//! higher-priority job and the licenses/HRES those jobs hold (Slurm's `node_space_map_t`).

use sluice_policy::NodeBitmap;

/// The map reached `bf_node_space_size` records (Slurm's `BF_EXIT_TABLE_LIMIT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("node space map is full")]
pub struct TableFull;

/// One time slice `[begin, end)`.
#[derive(Debug, PartialEq, Eq)]
pub struct Slice {
    /// Start, Unix seconds.
    pub begin: i64,
    /// End, Unix seconds.
    pub end: i64,
    /// Nodes still free of reservations during the slice.
    pub avail: NodeBitmap,
    /// Licenses held by planned jobs during the slice, per license.
    pub licenses: Vec<i64>,
    /// HRES held by planned jobs during the slice, per layer.
    pub hres: Vec<i64>,
}

impl Clone for Slice {
    fn clone(&self) -> Self {
        Slice {
            begin: self.begin,
            end: self.end,
            avail: self.avail.clone(),
            licenses: self.licenses.clone(),
            hres: self.hres.clone(),
        }
    }

    /// Reuses this slice's storage (splitting a slice in a map of spares allocates nothing).
    fn clone_from(&mut self, source: &Self) {
        self.begin = source.begin;
        self.end = source.end;
        self.avail.clone_from(&source.avail);
        self.licenses.clone_from(&source.licenses);
        self.hres.clone_from(&source.hres);
    }
}

impl Slice {
    fn same_content(&self, other: &Slice) -> bool {
        // Amounts are compared only when there are some: most clusters plan no licenses or
        // HRES, and comparing empty columns would still be a `memcmp` call each.
        let same = |a: &[i64], b: &[i64]| a.len() == b.len() && (a.is_empty() || a == b);
        self.avail == other.avail
            && same(&self.licenses, &other.licenses)
            && same(&self.hres, &other.hres)
    }
}

/// A slice that alone leaves a job too few nodes, as [`NodeSpaceMap::narrow_between`] found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocker {
    /// The slice's index.
    index: usize,
}

/// Slices covering `[begin, end)` contiguously, in time order.
#[derive(Clone, Debug)]
pub struct NodeSpaceMap {
    slices: Vec<Slice>,
    max_records: usize,
    /// Slices merged away or left by the last [`NodeSpaceMap::reset`], whose storage a split
    /// reuses: a pass splits and merges slices at every reservation.
    spare: Vec<Slice>,
}

/// A map of no slices yet, for [`NodeSpaceMap::reset`] to make a window of (nothing allocated,
/// so a pass's buffers can stand in for a map taken from them).
impl Default for NodeSpaceMap {
    fn default() -> Self {
        Self {
            slices: Vec::new(),
            max_records: 2,
            spare: Vec::new(),
        }
    }
}

impl NodeSpaceMap {
    /// One slice over the whole window with every node of `avail` free.
    pub fn new(
        begin: i64,
        end: i64,
        avail: NodeBitmap,
        licenses: usize,
        layers: usize,
        max_records: usize,
    ) -> Self {
        let mut map = Self::default();
        map.reset(begin, end, &avail, licenses, layers, max_records);
        map
    }

    /// One slice over the whole window with every node of `avail` free, as [`NodeSpaceMap::new`]
    /// makes it, keeping this map's slices' storage for reuse.
    pub fn reset(
        &mut self,
        begin: i64,
        end: i64,
        avail: &NodeBitmap,
        licenses: usize,
        layers: usize,
        max_records: usize,
    ) {
        if self.slices.is_empty() {
            let slice = self.spare.pop().unwrap_or_else(|| Slice {
                begin: 0,
                end: 0,
                avail: NodeBitmap::default(),
                licenses: Vec::new(),
                hres: Vec::new(),
            });
            self.slices.push(slice);
        }
        self.spare.extend(self.slices.drain(1..));
        let first = &mut self.slices[0];
        first.begin = begin;
        first.end = end.max(begin + 1);
        first.avail.clone_from(avail);
        first.licenses.clear();
        first.licenses.resize(licenses, 0);
        first.hres.clear();
        first.hres.resize(layers, 0);
        self.max_records = max_records.max(2);
    }

    /// The slices, in time order.
    pub fn slices(&self) -> &[Slice] {
        &self.slices
    }

    /// End of the window.
    pub fn end(&self) -> i64 {
        self.slices.last().map_or(0, |s| s.end)
    }

    /// Slices overlapping `[from, to)`, found by binary search since slices are in time order.
    fn overlapping(&self, from: i64, to: i64) -> impl Iterator<Item = &Slice> {
        let first = self.slices.partition_point(|s| s.end <= from);
        self.slices[first..]
            .iter()
            .take_while(move |s| s.begin < to)
    }

    /// Sets `out` to the nodes of `all` that some planned job holds at a moment of `[from, to)`:
    /// what a job running then must not use (the complement of what is free during all of it).
    pub fn reserved_between(&self, all: &NodeBitmap, out: &mut NodeBitmap, from: i64, to: i64) {
        out.clone_from(all);
        for s in self.overlapping(from, to) {
            out.intersect_with(&s.avail);
        }
        for (o, a) in out.words.iter_mut().zip(&all.words) {
            *o = a & !*o;
        }
    }

    /// Sets `out` to the nodes of `nodes` free of reservations during all of `[from, to)`,
    /// giving up as soon as fewer than `min` remain, which is what makes will-run cheap when
    /// most candidate times fail. On failure, the latest slice that alone leaves fewer than
    /// `min` of `nodes`, if one does: every later start that still overlaps it fails too unless
    /// more nodes come free ([`NodeSpaceMap::blocks`] tells, for a fraction of the cost).
    ///
    /// `cursor` is a slice no later than the first one ending after `from` (0 always is), and
    /// is moved to that one: a caller asking about ascending times keeps it between calls, and
    /// the slice is found in a step or two instead of a search.
    pub fn narrow_between(
        &self,
        nodes: &NodeBitmap,
        out: &mut NodeBitmap,
        (from, to): (i64, i64),
        min: usize,
        cursor: &mut usize,
    ) -> Result<(), Option<Blocker>> {
        out.clone_from(nodes);
        let mut first = *cursor;
        while self.slices.get(first).is_some_and(|s| s.end <= from) {
            first += 1;
        }
        *cursor = first;
        let mut visited = 0;
        let mut left = None;
        for (i, s) in self.slices[first..]
            .iter()
            .take_while(|s| s.begin < to)
            .enumerate()
        {
            let n = out.intersect_counting(&s.avail);
            (visited, left) = (i + 1, Some(n));
            if i % 4 == 0 && n < min {
                break;
            }
        }
        let Some(left) = left else {
            return if out.len() >= min { Ok(()) } else { Err(None) };
        };
        if left >= min {
            return Ok(());
        }
        // The latest slice that alone leaves too few: no start before its end can use it.
        let alone = (first..first + visited)
            .rev()
            .find(|&i| self.free_in_slice(i, nodes) < min);
        Err(alone.map(|index| Blocker { index }))
    }

    /// Whether the slice `blocker` names overlaps `[from, to)` and alone leaves fewer than `min`
    /// of `nodes`, so that a start over `[from, to)` on them fails. `blocker` must come from
    /// [`NodeSpaceMap::narrow_between`] on this map unchanged since.
    pub fn blocks(
        &self,
        blocker: Blocker,
        nodes: &NodeBitmap,
        from: i64,
        to: i64,
        min: usize,
    ) -> bool {
        let s = &self.slices[blocker.index];
        s.begin < to && from < s.end && self.free_in_slice(blocker.index, nodes) < min
    }

    /// How many of `nodes` slice `i` leaves free.
    fn free_in_slice(&self, i: usize, nodes: &NodeBitmap) -> usize {
        nodes.common_len(&self.slices[i].avail)
    }

    /// The most of each license planned jobs hold at any moment of `[from, to)`.
    pub fn licenses_between(&self, from: i64, to: i64) -> Vec<i64> {
        self.max_between(from, to, |s| &s.licenses)
    }

    /// The most of each HRES layer planned jobs hold at any moment of `[from, to)`.
    pub fn hres_between(&self, from: i64, to: i64) -> Vec<i64> {
        self.max_between(from, to, |s| &s.hres)
    }

    fn max_between(&self, from: i64, to: i64, col: impl Fn(&Slice) -> &Vec<i64>) -> Vec<i64> {
        let mut out = vec![0; col(&self.slices[0]).len()];
        for s in self.overlapping(from, to) {
            for (o, v) in out.iter_mut().zip(col(s)) {
                *o = (*o).max(*v);
            }
        }
        out
    }

    /// The times in `[from, to)` when what is reserved changes, ascending: the slices that
    /// begin then, and the window's end if it falls there.
    pub fn boundaries_within(&self, from: i64, to: i64) -> (&[Slice], Option<i64>) {
        let first = self.slices.partition_point(|s| s.begin < from);
        let last = first + self.slices[first..].partition_point(|s| s.begin < to);
        let end = self.end();
        (
            &self.slices[first..last],
            (from..to).contains(&end).then_some(end),
        )
    }

    /// Makes `t` a slice boundary; returns the index of the slice that begins at `t` (the
    /// number of slices when `t` is the window's end or past it).
    fn split_at(&mut self, t: i64) -> Result<usize, TableFull> {
        let i = self.slices.partition_point(|s| s.end <= t);
        if self.slices.get(i).is_none_or(|s| s.begin >= t) {
            return Ok(i);
        }
        if self.slices.len() >= self.max_records {
            return Err(TableFull);
        }
        let mut tail = match self.spare.pop() {
            Some(mut spare) => {
                spare.clone_from(&self.slices[i]);
                spare
            }
            None => self.slices[i].clone(),
        };
        tail.begin = t;
        self.slices[i].end = t;
        self.slices.insert(i + 1, tail);
        Ok(i + 1)
    }

    /// Reserves `nodes` and the given license/HRES amounts over `[from, to)` (`_add_reservation`):
    /// splits slices at both ends, takes the nodes out of every slice in between, then merges
    /// neighbours that became identical.
    ///
    /// Neighbours differ after every reservation, so only the slices it touched and the one on
    /// either side can have become identical: the merge looks at those alone.
    pub fn add_reservation(
        &mut self,
        from: i64,
        to: i64,
        nodes: &NodeBitmap,
        licenses: &[(usize, i64)],
        hres: &[(usize, i64)],
    ) -> Result<(), TableFull> {
        let from = from.max(self.slices[0].begin);
        let to = to.min(self.end());
        if from >= to {
            return Ok(());
        }
        // The split at `to` lies after `first`, so it leaves that index in place.
        let first = self.split_at(from)?;
        let last = self.split_at(to)?;
        for s in &mut self.slices[first..last] {
            s.avail.subtract(nodes);
            for &(i, c) in licenses {
                s.licenses[i] += c;
            }
            for &(i, c) in hres {
                s.hres[i] += c;
            }
        }
        self.merge_equal_neighbours(first.saturating_sub(1), (last + 1).min(self.slices.len()));
        Ok(())
    }

    /// Merges runs of identical consecutive slices within `slices[lo..hi]` into their first.
    fn merge_equal_neighbours(&mut self, lo: usize, hi: usize) {
        if hi <= lo + 1 {
            return;
        }
        let mut kept = lo;
        for next in lo + 1..hi {
            if self.slices[kept].same_content(&self.slices[next]) {
                self.slices[kept].end = self.slices[next].end;
            } else {
                kept += 1;
                // Mostly nothing has merged yet, and a slice is not swapped with itself.
                if kept != next {
                    self.slices.swap(kept, next);
                }
            }
        }
        if kept + 1 < hi {
            self.spare.extend(self.slices.drain(kept + 1..hi));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nodes of `all` free of reservations during all of `[from, to)`: a narrowing that no
    /// count is too few for.
    fn free_between(m: &NodeSpaceMap, all: &NodeBitmap, from: i64, to: i64) -> NodeBitmap {
        let mut out = NodeBitmap::default();
        m.narrow_between(all, &mut out, (from, to), 0, &mut 0)
            .expect("no count is below zero");
        out
    }

    fn nodes(list: &[u32]) -> NodeBitmap {
        list.iter().copied().collect()
    }

    #[test]
    fn reservations_split_and_merge() {
        let mut m = NodeSpaceMap::new(0, 1000, NodeBitmap::full(4), 1, 0, 100);
        m.add_reservation(100, 200, &nodes(&[0, 1]), &[(0, 2)], &[])
            .unwrap();
        assert_eq!(m.slices().len(), 3);
        assert_eq!(free_between(&m, &NodeBitmap::full(4), 0, 100).len(), 4);
        assert_eq!(
            free_between(&m, &NodeBitmap::full(4), 50, 150)
                .iter()
                .collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(m.licenses_between(150, 160), vec![2]);
        assert_eq!(m.licenses_between(200, 300), vec![0]);
        // An identical neighbouring reservation merges into one slice.
        m.add_reservation(200, 300, &nodes(&[0, 1]), &[(0, 2)], &[])
            .unwrap();
        assert_eq!(m.slices().len(), 3);
        assert_eq!(m.slices()[1].begin, 100);
        assert_eq!(m.slices()[1].end, 300);
    }

    #[test]
    fn reservations_keep_neighbours_distinct_and_match_a_per_second_picture() {
        let mut rng = sluice_policy::fixtures::Rng::new(0x2545_F491_4F6C_DD1D);
        let mut next = move |bound: u64| rng.below(bound);
        for round in 0..200 {
            let mut m = NodeSpaceMap::new(0, 400, NodeBitmap::full(6), 0, 0, 1000);
            // Free nodes of every second, as bits.
            let mut free = vec![0b11_1111u64; 400];
            for _ in 0..1 + next(12) {
                let from = next(40) as i64 * 10;
                let to = from + 10 * (1 + next(15) as i64);
                let held: Vec<u32> = (0..6).filter(|_| next(3) == 0).collect();
                let mask = held.iter().fold(0u64, |m, &n| m | 1 << n);
                m.add_reservation(from, to, &nodes(&held), &[], &[])
                    .unwrap();
                for t in from.max(0)..to.min(400) {
                    free[t as usize] &= !mask;
                }
                let slices = m.slices();
                assert_eq!((slices[0].begin, m.end()), (0, 400), "round {round}");
                for pair in slices.windows(2) {
                    assert_eq!(pair[0].end, pair[1].begin, "round {round}");
                    assert!(!pair[0].same_content(&pair[1]), "round {round}: {pair:?}");
                }
                for s in slices {
                    for t in s.begin..s.end {
                        assert_eq!(s.avail.words[0], free[t as usize], "round {round} at {t}");
                    }
                }
                // Ascending times asked with one cursor, as will-run asks them.
                let (mut cursor, mut out) = (0, NodeBitmap::default());
                for from in (0..400).step_by(7) {
                    let to = from + 1 + next(30) as i64;
                    let all = NodeBitmap::full(6);
                    m.narrow_between(&all, &mut out, (from, to), 0, &mut cursor)
                        .expect("no count is below zero");
                    let truth = (from..to.min(400)).fold(0b11_1111, |w, t| w & free[t as usize]);
                    assert_eq!(out.words[0], truth, "round {round}, [{from}, {to})");
                }
            }
        }
    }

    #[test]
    fn reserved_nodes_are_the_complement_of_the_free_ones() {
        let mut m = NodeSpaceMap::new(0, 1000, NodeBitmap::full(70), 0, 0, 100);
        m.add_reservation(100, 200, &nodes(&[0, 65]), &[], &[])
            .unwrap();
        m.add_reservation(300, 400, &nodes(&[3]), &[], &[]).unwrap();
        let all = NodeBitmap::full(70);
        // A stale, larger scratch set must not leak into the answer.
        let mut out = NodeBitmap::full(200);
        m.reserved_between(&all, &mut out, 50, 350);
        assert_eq!(out.iter().collect::<Vec<_>>(), vec![0, 3, 65]);
        m.reserved_between(&all, &mut out, 200, 300);
        assert!(out.is_empty());
        // Past the window nothing is reserved.
        m.reserved_between(&all, &mut out, 2000, 3000);
        assert!(out.is_empty());
        for (from, to) in [(0, 150), (150, 320), (0, 1000)] {
            let mut expected = all.clone();
            for n in free_between(&m, &all, from, to).iter() {
                expected.remove(n);
            }
            m.reserved_between(&all, &mut out, from, to);
            assert_eq!(out, expected, "[{from}, {to})");
        }
    }

    #[test]
    fn narrowing_stops_below_the_minimum() {
        let mut m = NodeSpaceMap::new(0, 1000, NodeBitmap::full(4), 0, 0, 100);
        m.add_reservation(100, 200, &nodes(&[0, 1, 2]), &[], &[])
            .unwrap();
        let all = NodeBitmap::full(4);
        let mut out = NodeBitmap::default();
        // Slice [100, 200) alone leaves one node: no start before 200 can have two.
        let blocker = m
            .narrow_between(&all, &mut out, (50, 150), 2, &mut 0)
            .unwrap_err();
        assert_eq!(blocker.map(|b| m.slices()[b.index].end), Some(200));
        let blocker = blocker.unwrap();
        assert!(m.blocks(blocker, &all, 120, 220, 2));
        assert!(!m.blocks(blocker, &all, 200, 300, 2), "a start after it");
        assert!(!m.blocks(blocker, &all, 20, 90, 2), "a run before it");
        assert!(!m.blocks(blocker, &all, 120, 220, 1), "one node is enough");
        assert_eq!(
            m.narrow_between(&all, &mut out, (50, 150), 1, &mut 0),
            Ok(())
        );
        assert_eq!(out.iter().collect::<Vec<_>>(), vec![3]);
        assert_eq!(
            m.narrow_between(&all, &mut out, (200, 900), 4, &mut 0),
            Ok(())
        );
    }

    #[test]
    fn narrowing_skips_only_past_a_slice_that_alone_falls_short() {
        let mut m = NodeSpaceMap::new(0, 1000, NodeBitmap::full(4), 0, 0, 100);
        m.add_reservation(100, 200, &nodes(&[0, 1]), &[], &[])
            .unwrap();
        m.add_reservation(200, 300, &nodes(&[2, 3]), &[], &[])
            .unwrap();
        let all = NodeBitmap::full(4);
        let mut out = NodeBitmap::default();
        // Each slice alone leaves two, together none: later starts may still fit.
        assert_eq!(
            m.narrow_between(&all, &mut out, (150, 250), 2, &mut 0),
            Err(None)
        );
        assert_eq!(
            m.narrow_between(&all, &mut out, (200, 250), 2, &mut 0),
            Ok(())
        );
        assert_eq!(out.iter().collect::<Vec<_>>(), vec![0, 1]);
        // Three nodes: the slice [100, 200) alone is short, so nothing starts before 200.
        let end = |r: Result<(), Option<Blocker>>| r.unwrap_err().map(|b| m.slices()[b.index].end);
        assert_eq!(
            end(m.narrow_between(&all, &mut out, (150, 250), 3, &mut 0)),
            Some(200)
        );
        // From 200 the slice [200, 300) alone is short, so nothing starts before 300.
        assert_eq!(
            end(m.narrow_between(&all, &mut out, (200, 250), 3, &mut 0)),
            Some(300)
        );
    }

    #[test]
    fn a_reset_map_plans_as_a_new_one() {
        let mut rng = sluice_policy::fixtures::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut reused = NodeSpaceMap::new(0, 10, NodeBitmap::full(1), 0, 0, 100);
        let mut split_after_reset = false;
        for round in 0..200 {
            let (n, licenses, layers) = (1 + rng.below(130) as usize, round % 3, round % 2);
            let (begin, end) = (rng.below(100) as i64, 1000 + rng.below(1000) as i64);
            let mut fresh =
                NodeSpaceMap::new(begin, end, NodeBitmap::full(n), licenses, layers, 40);
            let spares = reused.spare.len() + reused.slices.len() - 1;
            reused.reset(begin, end, &NodeBitmap::full(n), licenses, layers, 40);
            for _ in 0..rng.below(12) {
                // Some from the map's beginning or before, which changes its first slice.
                let from = begin - 100 + rng.below(1600) as i64;
                let to = from + 1 + rng.below(600) as i64;
                let taken: NodeBitmap = (0..n as u32).filter(|_| rng.below(3) == 0).collect();
                let lic: Vec<(usize, i64)> = (0..licenses).map(|i| (i, 1)).collect();
                let hres: Vec<(usize, i64)> = (0..layers).map(|i| (i, 2)).collect();
                let a = fresh.add_reservation(from, to, &taken, &lic, &hres);
                let b = reused.add_reservation(from, to, &taken, &lic, &hres);
                assert_eq!(a, b, "round {round}");
            }
            split_after_reset |= spares > 0 && reused.slices.len() > 1;
            assert_eq!(fresh.slices(), reused.slices(), "round {round}");
        }
        assert!(
            split_after_reset,
            "some round reused slices left by the last"
        );
    }

    #[test]
    fn table_limit_is_enforced() {
        let mut m = NodeSpaceMap::new(0, 1000, NodeBitmap::full(4), 0, 0, 3);
        m.add_reservation(100, 200, &nodes(&[0]), &[], &[]).unwrap();
        assert_eq!(
            m.add_reservation(400, 500, &nodes(&[1]), &[], &[]),
            Err(TableFull)
        );
    }
}
