//! Candidate bookkeeping of one traversal step: edge groups per resource type (Fluxion's
//! `scoring_api_t`, `evals_t`, `eval_egroup_t`).

use std::cell::RefCell;

use smallvec::SmallVec;

/// One edge inside an edge group: what it offers and what the match takes through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EvalEdge {
    /// Units available at the target.
    pub count: u32,
    /// Units the match takes from the target.
    pub needs: u32,
    /// Whether the target is taken exclusively.
    pub exclusive: bool,
    /// The edge's index in the dominant subsystem, or [`ROOT_EDGE`].
    pub edge: u32,
}

/// Up to this many best candidates are chosen in one pass without allocating.
const SMALL_TOP: usize = 8;

/// Marks the virtual edge into the root.
pub(crate) const ROOT_EDGE: u32 = u32::MAX;

/// A candidate: one child vertex, or one slot made of several children.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EdgeGroup {
    pub score: i64,
    pub count: u32,
    pub exclusive: bool,
    pub root: bool,
    /// One edge for a child, several for a slot; kept inline for the common case.
    pub edges: SmallVec<[EvalEdge; 1]>,
}

impl EdgeGroup {
    /// A candidate of one vertex: `count` units through `edge`, all of them needed. Built in
    /// place, since every child visit that succeeds makes one.
    #[inline]
    pub fn single(score: i64, count: u32, exclusive: bool, root: bool, edge: u32) -> Self {
        EdgeGroup {
            score,
            count,
            exclusive,
            root,
            edges: SmallVec::from_buf([EvalEdge {
                count,
                needs: count,
                exclusive,
                edge,
            }]),
        }
    }
}

/// The candidates of one resource type.
#[derive(Debug, Clone, Default)]
pub(crate) struct Evals {
    pub groups: Vec<EdgeGroup>,
    pub qualified: u32,
    pub total: u32,
    pub best_k: u32,
    pub best_i: u32,
    cursor: Option<usize>,
}

impl Evals {
    #[inline]
    fn add(&mut self, group: EdgeGroup) {
        self.total += group.count;
        if group.score > 0 {
            self.qualified += group.count;
        }
        self.groups.push(group);
    }

    /// Sorts the candidates by the policy and takes the first `k` units (`choose_best_k`);
    /// refuses (false, nothing changed) when `k` is 0 or more than qualify.
    fn choose_best_k(&mut self, k: u32, higher_first: bool) -> bool {
        if k == 0 || k > self.qualified {
            return false;
        }
        if !self.select_distinct_top(k, higher_first) && !self.order_if_monotone(higher_first) {
            crate::introsort::sort_by(&mut self.groups, |a, b| {
                if higher_first {
                    a.score > b.score
                } else {
                    a.score < b.score
                }
            });
        }
        let mut to_select = i64::from(k);
        let mut i = 0;
        while to_select > 0 {
            to_select -= i64::from(self.groups[i].count);
            i += 1;
        }
        self.best_k = k;
        self.best_i = i as u32;
        true
    }

    /// Sorts the candidates in O(n) when their scores are strictly monotone, either way: with
    /// no two scores equal the sorted order is unique, so it is the one libstdc++'s sort
    /// would give. The ID policies score siblings by id, so this is the common case. False,
    /// with nothing moved, otherwise.
    fn order_if_monotone(&mut self, higher_first: bool) -> bool {
        let better = |a: i64, b: i64| if higher_first { a > b } else { a < b };
        let groups = &self.groups;
        if groups.windows(2).all(|w| better(w[0].score, w[1].score)) {
            return true;
        }
        if groups.windows(2).all(|w| better(w[1].score, w[0].score)) {
            self.groups.reverse();
            return true;
        }
        false
    }

    /// Puts the best `k` candidates first, in order, in O(n) when that order cannot depend on
    /// how the sort treats ties: the best `k` scores differ from each other and from every
    /// score left behind. Then libstdc++'s sort would place exactly these first in this order,
    /// and nothing reads past them (a full choice, which does, takes every candidate and so
    /// is sorted in full). False, with nothing moved, when ties decide.
    fn select_distinct_top(&mut self, k: u32, higher_first: bool) -> bool {
        let n = self.groups.len();
        let m = (k as usize).min(n);
        if n <= 16 || m == n {
            return false;
        }
        let better = |a: i64, b: i64| if higher_first { a > b } else { a < b };
        if m == 1 {
            return self.select_best(better);
        }
        if m <= SMALL_TOP {
            return self.select_small_top(m, better);
        }
        let mut order: Vec<(i64, usize)> = self
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.score, i))
            .collect();
        order.select_nth_unstable_by(m - 1, |a, b| {
            if better(a.0, b.0) {
                std::cmp::Ordering::Less
            } else if better(b.0, a.0) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        let boundary = order[m - 1].0;
        if order[m..].iter().any(|&(s, _)| s == boundary) {
            return false;
        }
        let top = &mut order[..m];
        top.sort_unstable_by(|a, b| {
            if better(a.0, b.0) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        });
        if top.windows(2).any(|w| w[0].0 == w[1].0) {
            return false;
        }
        let mut chosen = vec![false; n];
        let mut front = Vec::with_capacity(n);
        for &(_, i) in top.iter() {
            chosen[i] = true;
            front.push(std::mem::take(&mut self.groups[i]));
        }
        for (i, g) in self.groups.iter_mut().enumerate() {
            if !chosen[i] {
                front.push(std::mem::take(g));
            }
        }
        self.groups = front;
        true
    }

    /// [`Evals::select_distinct_top`] for one: the best score, unless another candidate ties
    /// with it.
    fn select_best(&mut self, better: impl Fn(i64, i64) -> bool) -> bool {
        let mut best = 0;
        let mut tied = false;
        for (i, g) in self.groups.iter().enumerate().skip(1) {
            let top = self.groups[best].score;
            if better(g.score, top) {
                best = i;
                tied = false;
            } else if g.score == top {
                tied = true;
            }
        }
        if tied {
            return false;
        }
        self.groups.swap(0, best);
        true
    }

    /// [`Evals::select_distinct_top`] for a few: one pass keeping the best `m` (score, index)
    /// pairs and the best score dropped, no allocation.
    fn select_small_top(&mut self, m: usize, better: impl Fn(i64, i64) -> bool) -> bool {
        let mut top = [(0i64, 0usize); SMALL_TOP];
        let mut len = 0;
        // Nothing dropped is better than what is finally kept, so a tie at the boundary is a
        // dropped score equal to the worst kept one: the best dropped score tells.
        let mut best_dropped: Option<i64> = None;
        let mut drop = |s: i64| {
            if best_dropped.is_none_or(|b| better(s, b)) {
                best_dropped = Some(s);
            }
        };
        for (i, g) in self.groups.iter().enumerate() {
            let s = g.score;
            if len == m && !better(s, top[m - 1].0) {
                drop(s);
                continue;
            }
            if len == m {
                drop(top[m - 1].0);
                len -= 1;
            }
            let mut j = len;
            while j > 0 && better(s, top[j - 1].0) {
                top[j] = top[j - 1];
                j -= 1;
            }
            if j > 0 && top[j - 1].0 == s {
                return false;
            }
            top[j] = (s, i);
            len += 1;
        }
        if top[..len].windows(2).any(|w| w[0].0 == w[1].0) || best_dropped == Some(top[len - 1].0) {
            return false;
        }
        let mut kept = [0usize; SMALL_TOP];
        for (k, &(_, i)) in kept.iter_mut().zip(&top[..len]) {
            *k = i;
        }
        let positions = &mut kept[..len];
        for j in 0..len {
            let from = positions[j];
            self.groups.swap(j, from);
            // The element that was at `j` moved to `from`; follow it if it is kept later.
            for p in positions.iter_mut().skip(j + 1) {
                if *p == j {
                    *p = from;
                }
            }
        }
        true
    }

    /// The next candidate of the running iteration (`eval_egroups_iter_next`).
    pub fn next(&mut self) -> Option<&EdgeGroup> {
        let i = self.cursor.map_or(0, |c| c + 1);
        self.cursor = Some(i.min(self.groups.len()));
        self.groups.get(i)
    }

    /// Restarts the iteration.
    pub fn reset(&mut self) {
        self.cursor = None;
    }
}

/// How many emptied candidate lists are kept for reuse.
const SPARE_LISTS: usize = 16;

thread_local! {
    /// Candidate lists of finished levels, emptied, for the next levels to fill: a match
    /// fills the same few lists again and again (the root's holds one candidate per child),
    /// and allocating them afresh cost more than filling them.
    static SPARE_GROUPS: RefCell<Vec<Vec<EdgeGroup>>> = const { RefCell::new(Vec::new()) };
}

/// An empty candidate list with room for `capacity`: the smallest spare that has it, else
/// the largest spare grown, else a new one.
fn spare_groups(capacity: usize) -> Vec<EdgeGroup> {
    let spare = SPARE_GROUPS.with(|spares| {
        let mut spares = spares.borrow_mut();
        let fits = (0..spares.len())
            .filter(|&i| spares[i].capacity() >= capacity)
            .min_by_key(|&i| spares[i].capacity());
        let pick = fits.or_else(|| (0..spares.len()).max_by_key(|&i| spares[i].capacity()));
        pick.map(|i| spares.swap_remove(i))
    });
    match spare {
        Some(mut groups) => {
            groups.reserve(capacity);
            groups
        }
        None => Vec::with_capacity(capacity),
    }
}

/// Empties `groups` and keeps it for [`spare_groups`] while there is room.
fn keep_spare(mut groups: Vec<EdgeGroup>) {
    if groups.capacity() == 0 {
        return;
    }
    groups.clear();
    SPARE_GROUPS.with(|spares| {
        let mut spares = spares.borrow_mut();
        if spares.len() < SPARE_LISTS {
            spares.push(groups);
        }
    });
}

/// Candidates gathered under one vertex, per resource type in type order, and what the visit
/// passes up to its parent.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scoring {
    types: Vec<(u32, Evals)>,
    /// Whether this level chose among its candidates (its choice is enforced here).
    pub constrain_now: bool,
    /// The score passed up by the last child visit.
    pub overall: i64,
    /// The availability passed up by the last child visit.
    pub avail: u32,
    /// Room to make for the candidates of a type seen first (the children to come).
    pub capacity_hint: usize,
    /// How many child levels merged their candidates in (a run of such children is not
    /// recorded for replay: see `visit_run`).
    pub merges: u32,
}

impl Scoring {
    /// The candidates of `kind`, created empty when absent (as `std::map::operator[]`).
    #[inline]
    pub fn evals(&mut self, kind: u32) -> &mut Evals {
        // A level holds candidates of one to three types: a scan beats a binary search.
        let i = match self.types.iter().position(|(k, _)| *k >= kind) {
            Some(i) if self.types[i].0 == kind => i,
            found => {
                let i = found.unwrap_or(self.types.len());
                let evals = Evals {
                    groups: spare_groups(self.capacity_hint),
                    ..Evals::default()
                };
                self.types.insert(i, (kind, evals));
                i
            }
        };
        &mut self.types[i].1
    }

    /// The candidates of `kind` if any were ever recorded.
    pub fn get(&self, kind: u32) -> Option<&Evals> {
        self.types
            .binary_search_by_key(&kind, |(k, _)| *k)
            .ok()
            .map(|i| &self.types[i].1)
    }

    #[inline]
    pub fn add(&mut self, kind: u32, group: EdgeGroup) {
        self.evals(kind).add(group);
    }

    /// Adds candidates of one type in order, finding the type's list once (a replayed run of
    /// children).
    pub fn add_all(&mut self, kind: u32, groups: impl Iterator<Item = EdgeGroup>) {
        let evals = self.evals(kind);
        groups.for_each(|g| evals.add(g));
    }

    pub fn qualified(&mut self, kind: u32) -> u32 {
        self.evals(kind).qualified
    }

    pub fn total(&mut self, kind: u32) -> u32 {
        self.evals(kind).total
    }

    /// `choose_accum_best_k`: on success the level becomes constrained.
    pub fn choose_best_k(&mut self, kind: u32, k: u32, higher_first: bool) -> bool {
        let chosen = self.evals(kind).choose_best_k(k, higher_first);
        self.constrain_now |= chosen;
        chosen
    }

    /// `choose_accum_all`: every qualified unit of every type.
    pub fn choose_all(&mut self, higher_first: bool) {
        for i in 0..self.types.len() {
            let k = self.types[i].1.qualified;
            let chosen = self.types[i].1.choose_best_k(k, higher_first);
            self.constrain_now |= chosen;
        }
    }

    /// Replaces every score of `kind` by the first score of its run in `runs` (a set of scores
    /// in which consecutive values form one run), as `locality` compares candidates.
    pub fn rank_by_runs(&mut self, kind: u32, runs: &std::collections::BTreeSet<i64>) {
        for g in &mut self.evals(kind).groups {
            let mut lower = g.score;
            for &s in runs.range(..g.score).rev() {
                if s + 1 != lower {
                    break;
                }
                lower = s;
            }
            g.score = lower;
        }
    }

    /// Every score recorded for `kind`.
    pub fn scores(&mut self, kind: u32) -> impl Iterator<Item = i64> + '_ {
        self.evals(kind).groups.iter().map(|g| g.score)
    }

    /// Moves `other`'s candidates under this level (an unconstrained child's `merge`).
    pub fn merge(&mut self, mut other: Scoring) {
        self.merges += 1;
        for (kind, mut evals) in std::mem::take(&mut other.types) {
            let mine = self.evals(kind);
            mine.qualified += evals.qualified;
            mine.total += evals.total;
            mine.groups.append(&mut evals.groups);
            keep_spare(evals.groups);
        }
    }

    /// Every type with its candidates, in type order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Evals)> {
        self.types.iter().map(|(k, e)| (*k, e))
    }
}

impl Drop for Scoring {
    fn drop(&mut self) {
        for (_, evals) in self.types.drain(..) {
            keep_spare(evals.groups);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{EdgeGroup, EvalEdge, Evals};
    use proptest::prelude::*;

    fn evals(scores: &[(i64, u32)]) -> Evals {
        let mut e = Evals::default();
        for (i, &(score, count)) in scores.iter().enumerate() {
            e.add(EdgeGroup {
                score,
                count,
                exclusive: false,
                root: false,
                edges: smallvec::smallvec![EvalEdge {
                    count,
                    needs: count,
                    exclusive: false,
                    edge: i as u32,
                }],
            });
        }
        e
    }

    proptest! {
        #[test]
        fn the_fast_choice_takes_what_the_full_sort_takes(
            scores in prop::collection::vec((1..200i64, 1..4u32), 1..80),
            k in 1..30u32,
            higher in any::<bool>(),
        ) {
            let mut fast = evals(&scores);
            let mut full = evals(&scores);
            let chosen = fast.choose_best_k(k, higher);
            prop_assert_eq!(chosen, k <= full.qualified);
            if !chosen {
                return Ok(());
            }
            crate::introsort::sort_by(&mut full.groups, |a, b| {
                if higher { a.score > b.score } else { a.score < b.score }
            });
            let i = fast.best_i as usize;
            let edges = |e: &Evals| e.groups[..i].iter().map(|g| g.edges[0].edge).collect::<Vec<_>>();
            prop_assert_eq!(edges(&fast), edges(&full));
        }

        #[test]
        fn monotone_scores_sort_as_the_full_sort_does(
            distinct in prop::collection::btree_set(1..500i64, 1..60),
            ascending in any::<bool>(),
            higher in any::<bool>(),
            every in any::<bool>(),
        ) {
            let mut scores: Vec<(i64, u32)> = distinct.into_iter().map(|s| (s, 1)).collect();
            if !ascending {
                scores.reverse();
            }
            let n = scores.len() as u32;
            let mut fast = evals(&scores);
            let mut full = evals(&scores);
            let k = if every { n } else { n.div_ceil(2) };
            prop_assert!(fast.choose_best_k(k, higher));
            crate::introsort::sort_by(&mut full.groups, |a, b| {
                if higher { a.score > b.score } else { a.score < b.score }
            });
            let i = if every { fast.groups.len() } else { fast.best_i as usize };
            let edges = |e: &Evals| e.groups[..i].iter().map(|g| g.edges[0].edge).collect::<Vec<_>>();
            prop_assert_eq!(edges(&fast), edges(&full));
        }
    }
}
