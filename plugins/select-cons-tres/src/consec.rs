//! Slurm's node order and consecutive-block best fit, shared by select/cons_tres and select/linear.
//!
//! Slurm folds power state and Weight into one scheduling weight (powered-up before powering-up
//! before powered-down, each by Weight), then `_eval_nodes_consec` groups usable nodes into runs
//! of consecutive indices of equal weight and repeatedly takes the best run: a lower weight
//! always wins; at equal weight a sufficient run beats an insufficient one, the tightest
//! sufficient run (fewest task slots) wins, and among insufficient runs the largest wins; ties go
//! to the earlier run. select/linear includes this file through `#[path]` so the two plugins share
//! one implementation without a crate dependency (which would clash on the component exports).

use sluice_sdk::{JobRequest, NodeTable, Power};

/// Nodes of one scheduling tier (same power state and Weight), as bitmap words over a span.
#[derive(Debug)]
struct Tier {
    /// Index of the first bitmap word the tier touches.
    first_word: usize,
    /// The tier's bits from `first_word` on.
    bits: Vec<u64>,
}

/// The tiers of a pass, most preferred first; computed at a `begin_pass` whose power states or
/// Weights differ from the last one's.
#[derive(Debug, Default)]
pub struct Tiers {
    tiers: Vec<Tier>,
    /// The power and Weight columns `tiers` were built from.
    power: Vec<Power>,
    weight: Vec<u32>,
}

impl Tiers {
    /// Makes these the tiers of `table`, building them again only if its power states or
    /// Weights changed (they are configuration and power saving, rarely touched between passes).
    pub fn refresh(&mut self, table: &NodeTable) {
        // A fresh `Tiers` holds empty columns, so any table with nodes differs from it.
        if !same_values(&self.power, &table.power) || !same_values(&self.weight, &table.weight) {
            *self = Self::new(table);
        }
    }

    /// Orders the nodes of `table` by power state, then Weight.
    pub fn new(table: &NodeTable) -> Self {
        let key = |n: u32| (table.power[n as usize], table.weight[n as usize]);
        let mut order: Vec<u32> = (0..table.len() as u32).collect();
        order.sort_by_key(|&n| (key(n), n));
        let mut tiers = Vec::new();
        for group in order.chunk_by(|&a, &b| key(a) == key(b)) {
            // Sorted by index within a group, so the span is first..=last.
            let first_word = group[0] as usize / 64;
            let last_word = group[group.len() - 1] as usize / 64;
            let mut bits = vec![0u64; last_word - first_word + 1];
            for &n in group {
                bits[n as usize / 64 - first_word] |= 1 << (n % 64);
            }
            tiers.push(Tier { first_word, bits });
        }
        Tiers {
            tiers,
            power: table.power.clone(),
            weight: table.weight.clone(),
        }
    }
}

/// Whether two columns hold the same values. Element by element on purpose: slice `==` is a
/// `memcmp`, which in a component is wasi-libc's loop over bytes (in a KTH-SP2 replay, more
/// instructions than the rest of `begin_pass`).
fn same_values<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// What a job needs: task slots in total and a node count range.
#[derive(Clone, Copy, Debug)]
pub struct Need {
    /// Task slots needed over all nodes (a slot is what one task uses on a node).
    pub slots: u64,
    /// Fewest nodes (at least one).
    pub min_nodes: u32,
    /// Most nodes (at least `min_nodes`).
    pub max_nodes: u32,
}

impl Need {
    /// What `req` needs: its tasks as slots, on at least [`JobRequest::fewest_nodes`] nodes
    /// (with `--ntasks-per-node`, enough to hold the tasks at that many each). `None` when that
    /// is more nodes than the job accepts: no placement could satisfy it.
    pub fn of(req: &JobRequest) -> Option<Self> {
        let min_nodes = req.fewest_nodes();
        let max_nodes = req.max_nodes.max(req.min_nodes).max(1);
        (min_nodes <= max_nodes).then_some(Need {
            slots: u64::from(req.tasks),
            min_nodes,
            max_nodes,
        })
    }
}

/// The task slots a node that could run `slots` of the job's tasks offers it. With a per-node
/// count (`tasks_per_node` > 0) a node runs exactly that many, as Slurm's cons_tres gives each
/// node ntasks-per-node × cpus-per-task CPUs, so a node that cannot hold them offers none;
/// without one, all it could run.
#[inline(always)]
pub fn per_node_slots(slots: u32, tasks_per_node: u32) -> u32 {
    match tasks_per_node {
        0 => slots,
        per_node if slots >= per_node => per_node,
        _ => 0,
    }
}

/// A run of consecutive usable nodes in one tier.
#[derive(Clone, Copy, Debug)]
struct Run {
    first: u32,
    last: u32,
    nodes: u32,
    slots: u64,
    taken: bool,
}

/// How one pass of the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// The need is met.
    Fit,
    /// The node limit was reached first.
    Capped,
    /// The usable nodes are not enough.
    Short,
}

/// Reusable buffers of the search, so that a placement allocates nothing once they have grown.
#[derive(Debug, Default)]
pub struct Search {
    runs: Vec<Run>,
    /// After a successful [`Search::best_fit`]: the chosen (node, task slots offered), ascending.
    pub chosen: Vec<(u32, u32)>,
}

impl Search {
    /// Chooses nodes for `need`, tier by tier, by consecutive-block best fit.
    ///
    /// `open(w)` gives bitmap word `w` of the nodes worth looking at (candidates that are not
    /// full), so full nodes are skipped 64 at a time; `slots(n)` gives the task slots node `n`
    /// offers this job, 0 when it cannot take it. Returns whether the need is met, with the
    /// nodes in [`Search::chosen`].
    ///
    /// Slurm's greedy order can spend a job's node limit on small runs (a lower weight wins even
    /// when insufficient). When that happens the search is repeated over nodes offering at
    /// least tasks / max-nodes slots, where any max-nodes of them are enough: a job that fits
    /// within its node limit is never refused for the order it was tried in.
    pub fn best_fit(
        &mut self,
        tiers: &Tiers,
        open: impl Fn(usize) -> u64,
        slots: impl Fn(u32) -> u32,
        need: Need,
    ) -> bool {
        match self.attempt(tiers, &open, &slots, need) {
            Outcome::Fit => true,
            Outcome::Short => false,
            Outcome::Capped => {
                let max_nodes = need.max_nodes.max(need.min_nodes).max(1) as u64;
                let floor = need.slots.div_ceil(max_nodes).max(1);
                let big_enough = |n| Some(slots(n)).filter(|&s| s as u64 >= floor).unwrap_or(0);
                self.attempt(tiers, &open, &big_enough, need) == Outcome::Fit
            }
        }
    }

    /// One pass of the best fit over all tiers.
    fn attempt(
        &mut self,
        tiers: &Tiers,
        open: &impl Fn(usize) -> u64,
        slots: &impl Fn(u32) -> u32,
        need: Need,
    ) -> Outcome {
        self.chosen.clear();
        let min_nodes = need.min_nodes.max(1);
        let max_nodes = need.max_nodes.max(min_nodes);
        let mut got = 0u64;
        for tier in &tiers.tiers {
            self.collect_runs(tier, open, slots);
            loop {
                let rem_slots = need.slots.saturating_sub(got);
                let rem_nodes = min_nodes.saturating_sub(self.chosen.len() as u32);
                let Some(best) = self.best_run(rem_slots, rem_nodes) else {
                    break;
                };
                self.runs[best].taken = true;
                let run = self.runs[best];
                for n in run.first..=run.last {
                    let s = slots(n);
                    self.chosen.push((n, s));
                    got += s as u64;
                    if got >= need.slots && self.chosen.len() as u32 >= min_nodes {
                        self.chosen.sort_unstable();
                        return Outcome::Fit;
                    }
                    if self.chosen.len() as u32 >= max_nodes {
                        return Outcome::Capped;
                    }
                }
            }
        }
        Outcome::Short
    }

    /// Gathers the tier's runs of consecutive nodes that can take the job.
    fn collect_runs(
        &mut self,
        tier: &Tier,
        open: &impl Fn(usize) -> u64,
        slots: &impl Fn(u32) -> u32,
    ) {
        self.runs.clear();
        // The bit loop is written out rather than `nodes_of_words`: built as a component, the
        // iterator cost the KTH-SP2 replay 31 M more instructions in this loop alone.
        for (i, &bits) in tier.bits.iter().enumerate() {
            let word = tier.first_word + i;
            let mut m = bits & open(word);
            while m != 0 {
                let n = (word * 64) as u32 + m.trailing_zeros();
                m &= m - 1;
                let s = slots(n);
                if s == 0 {
                    continue;
                }
                match self.runs.last_mut() {
                    Some(run) if run.last + 1 == n => {
                        run.last = n;
                        run.nodes += 1;
                        run.slots += s as u64;
                    }
                    _ => self.runs.push(Run {
                        first: n,
                        last: n,
                        nodes: 1,
                        slots: s as u64,
                        taken: false,
                    }),
                }
            }
        }
    }

    /// The best run left for what is still missing, by Slurm's equal-weight rules.
    fn best_run(&self, rem_slots: u64, rem_nodes: u32) -> Option<usize> {
        let mut best: Option<(usize, bool, u64)> = None;
        for (i, run) in self.runs.iter().enumerate().filter(|(_, r)| !r.taken) {
            let sufficient = run.slots >= rem_slots && run.nodes >= rem_nodes;
            let better = match best {
                None => true,
                Some((_, best_sufficient, best_slots)) => match (sufficient, best_sufficient) {
                    (true, false) => true,
                    (true, true) => run.slots < best_slots,
                    (false, false) => run.slots > best_slots,
                    (false, true) => false,
                },
            };
            if better {
                best = Some((i, sufficient, run.slots));
            }
        }
        best.map(|(i, _, _)| i)
    }
}
