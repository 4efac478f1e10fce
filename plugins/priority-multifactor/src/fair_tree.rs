//! Fair Tree fairshare: Level FS per association and the rank-based FairShare factor per user.
//!
//! A reproduction of Slurm's `fair_tree.c` as the code behaves, not as `fair_tree.shtml` reads:
//! tied sibling accounts are not merged (see [`FairTree::compute`]).

use sluice_sdk::Association;

/// `SLURMDB_FS_USE_PARENT`: the RawShares value Slurm stores for `FairShare=parent`.
pub const FS_USE_PARENT: u32 = 0x7FFF_FFFF;

/// Slurm's `NO_VAL` as a level FS: what a `FairShare=parent` account and the "previous sibling"
/// before the first one compare as. Kept as a number, not NaN, because Slurm compares it with `==`
/// and sorts by it like any other value.
const NO_VAL: f64 = 4_294_967_294.0;

/// One association's fair-share standing, the numbers `sshare -l` prints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standing {
    /// S: RawShares over the sum of its fs-siblings' RawShares (the fs-parent's for
    /// `FairShare=parent`; 0 for root, as sshare prints it).
    pub norm_shares: f64,
    /// U: RawUsage over the fs-parent's RawUsage; 0 when that is 0.
    pub effective_usage: f64,
    /// LF = S / U, with Slurm's special cases (0 shares → 0, 0 usage → ∞, parent user → ∞,
    /// parent account → NaN, root → NaN).
    pub level_fs: f64,
    /// rank / user associations, for users; NaN for accounts (`sshare` prints it blank).
    pub fair_share: f64,
}

/// The Fair Tree of one context: computed once per call, looked up per job.
#[derive(Clone, Debug, PartialEq)]
pub struct FairTree {
    /// Standing of every association, by index.
    pub standing: Vec<Standing>,
}

/// The Fair Tree of the last association table it was asked about, computed again only when
/// that table differs in what Fair Tree reads: parents, user flags, RawShares and usage.
///
/// Usage decays only every PriorityCalcPeriod, while the host asks for priorities at every
/// pass that finds a new job, so most calls see the table of the call before. Names are never
/// compared (Fair Tree does not read them), usage by bit pattern (so NaN matches itself), and
/// nothing is cloned on a hit: one pass over the table decides.
#[derive(Clone, Debug, Default)]
pub struct CachedFairTree {
    /// What Fair Tree read of each association of `tree`'s table.
    inputs: Vec<TreeInput>,
    tree: Option<FairTree>,
}

/// The fields of one association that Fair Tree reads.
#[derive(Clone, Copy, Debug, PartialEq)]
struct TreeInput {
    parent: Option<u32>,
    raw_shares: u32,
    usage_bits: u64,
    is_user: bool,
}

impl TreeInput {
    fn of(a: &Association) -> Self {
        Self {
            parent: a.parent,
            raw_shares: a.raw_shares,
            usage_bits: a.raw_usage.to_bits(),
            is_user: a.is_user,
        }
    }
}

impl CachedFairTree {
    /// The Fair Tree of `assocs`: the kept one when its table read the same, else computed.
    pub fn get(&mut self, assocs: &[Association]) -> &FairTree {
        let same = self.inputs.len() == assocs.len()
            && self
                .inputs
                .iter()
                .zip(assocs)
                .all(|(k, a)| *k == TreeInput::of(a));
        if !same {
            self.tree = None;
        }
        self.tree.get_or_insert_with(|| {
            self.inputs.clear();
            self.inputs.extend(assocs.iter().map(TreeInput::of));
            FairTree::compute(assocs)
        })
    }
}

/// The tree as Fair Tree walks it: children re-parented past `FairShare=parent` accounts.
struct Shape<'a> {
    assocs: &'a [Association],
    /// Children of each association in fs terms, in input order.
    fs_children: Vec<Vec<u32>>,
    /// Level FS of each association (NO_VAL for root).
    level_fs: Vec<f64>,
}

impl FairTree {
    /// Computes every association's standing.
    ///
    /// Follows `_calc_tree_fs`: siblings sort by Level FS descending with users before accounts
    /// on ties; a user not tied with the previous sibling takes the rank that counts every user
    /// ranked before it, a tied one keeps the previous rank; an account passes "tied" down to
    /// its first child. Slurm's `_count_tied_accounts` stops at the first *account*, so tied
    /// sibling accounts are never merged; this does the same. Equal siblings keep input order
    /// (Slurm's qsort leaves it unspecified; tied users get the same rank either way).
    pub fn compute(assocs: &[Association]) -> Self {
        let n = assocs.len();
        let nan = Standing {
            norm_shares: f64::NAN,
            effective_usage: f64::NAN,
            level_fs: f64::NAN,
            fair_share: f64::NAN,
        };
        let mut standing = vec![nan; n];
        let Some(root) = assocs.iter().position(|a| a.parent.is_none()) else {
            return Self { standing };
        };
        let fs_parent = fs_parents(assocs, root);

        let mut fs_children = vec![Vec::new(); n];
        for (i, p) in fs_parent.iter().enumerate() {
            if let Some(p) = p {
                fs_children[*p].push(i as u32);
            }
        }
        // A `FairShare=parent` association has no children of its own in fs terms, so it adds
        // nothing to its siblings' level shares (Slurm's `_foreach_sum_level_shares`).
        let level_shares: Vec<f64> = fs_children
            .iter()
            .map(|c| {
                c.iter()
                    .map(|&i| assocs[i as usize].raw_shares)
                    .filter(|&s| s != FS_USE_PARENT)
                    .map(f64::from)
                    .sum()
            })
            .collect();

        let mut level_fs = vec![NO_VAL; n];
        // sshare prints root's NormShares as 0 and its EffectvUsage as 1.
        standing[root] = Standing {
            norm_shares: 0.0,
            effective_usage: 1.0,
            level_fs: f64::NAN,
            fair_share: f64::NAN,
        };
        // Breadth-first from root, so a `FairShare=parent` child finds its fs-parent's S computed.
        let mut order = vec![root as u32];
        let mut k = 0;
        while k < order.len() {
            let p = order[k] as usize;
            k += 1;
            for &c in &fs_children[p] {
                let c = c as usize;
                let a = &assocs[c];
                let parent_usage = assocs[p].raw_usage;
                let u = if parent_usage == 0.0 {
                    0.0
                } else {
                    a.raw_usage / parent_usage
                };
                let (s, lf) = if a.raw_shares == FS_USE_PARENT {
                    (
                        standing[p].norm_shares,
                        if a.is_user { f64::INFINITY } else { NO_VAL },
                    )
                } else {
                    let s = if level_shares[p] > 0.0 {
                        f64::from(a.raw_shares) / level_shares[p]
                    } else {
                        0.0
                    };
                    // S/U with U = 0 is +∞ on purpose ("NOT A BUG" in Slurm).
                    (s, if s == 0.0 { 0.0 } else { s / u })
                };
                level_fs[c] = lf;
                let shown_lf = if a.raw_shares == FS_USE_PARENT && !a.is_user {
                    f64::NAN
                } else {
                    lf
                };
                standing[c] = Standing {
                    norm_shares: s,
                    effective_usage: u,
                    level_fs: shown_lf,
                    fair_share: f64::NAN,
                };
                order.push(c as u32);
            }
        }

        let users = assocs.iter().filter(|a| a.is_user).count() as u32;
        let shape = Shape {
            assocs,
            fs_children,
            level_fs,
        };
        let mut ranker = Ranker {
            rank: users,
            rnt: users,
            users,
            standing: &mut standing,
        };
        ranker.visit(&shape, &shape.fs_children[root], false);
        Self { standing }
    }

    /// FairShare factor of association `i` (0 for accounts and unknown indices).
    pub fn factor(&self, i: usize) -> f64 {
        self.standing
            .get(i)
            .map(|s| s.fair_share)
            .filter(|f| !f.is_nan())
            .unwrap_or(0.0)
    }
}

/// The first ancestor of each association that is not `FairShare=parent` (root for root's
/// children); `None` for root and for associations whose parent chain is broken or cyclic.
fn fs_parents(assocs: &[Association], root: usize) -> Vec<Option<usize>> {
    let n = assocs.len();
    (0..n)
        .map(|i| {
            if i == root {
                return None;
            }
            let mut p = assocs[i].parent? as usize;
            // A chain longer than the table is a cycle; bounded so a bad tree cannot hang a pass.
            for _ in 0..n {
                if p >= n {
                    return None;
                }
                if p == root || assocs[p].raw_shares != FS_USE_PARENT {
                    return Some(p);
                }
                p = assocs[p].parent? as usize;
            }
            None
        })
        .collect()
}

/// The running rank of `_calc_tree_fs`.
struct Ranker<'s> {
    /// Rank given to the current (possibly tied) user.
    rank: u32,
    /// Rank with no ties: users still to be ranked.
    rnt: u32,
    users: u32,
    standing: &'s mut [Standing],
}

impl Ranker<'_> {
    fn visit(&mut self, shape: &Shape, siblings: &[u32], account_tied: bool) {
        let mut sorted = siblings.to_vec();
        sorted.sort_by(|&a, &b| {
            let (la, lb) = (shape.level_fs[a as usize], shape.level_fs[b as usize]);
            let (ua, ub) = (
                shape.assocs[a as usize].is_user,
                shape.assocs[b as usize].is_user,
            );
            lb.partial_cmp(&la)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(ub.cmp(&ua))
        });
        let mut prev = NO_VAL;
        for (i, &c) in sorted.iter().enumerate() {
            let lf = shape.level_fs[c as usize];
            let tied = if i == 0 && account_tied {
                true
            } else {
                prev == lf
            };
            if shape.assocs[c as usize].is_user {
                if !tied {
                    self.rank = self.rnt;
                }
                self.standing[c as usize].fair_share = if self.users == 0 {
                    0.0
                } else {
                    f64::from(self.rank) / f64::from(self.users)
                };
                self.rnt = self.rnt.saturating_sub(1);
            } else {
                self.visit(shape, &shape.fs_children[c as usize], tied);
            }
            prev = lf;
        }
    }
}
