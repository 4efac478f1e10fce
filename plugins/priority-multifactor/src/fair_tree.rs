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

/// The Fair Tree of one context with every association's standing, as sshare shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct FairTree {
    /// Standing of every association, by index.
    pub standing: Vec<Standing>,
}

/// The FairShare factors of the last association table it was asked about, ranked again only
/// when that table differs in what Fair Tree reads: parents, user flags, RawShares and usage.
///
/// Usage decays only every PriorityCalcPeriod, while the host asks for priorities at every
/// pass that finds a new job, so most calls see the table of the call before. Names are never
/// compared (Fair Tree does not read them), usage by bit pattern (so NaN matches itself), and
/// nothing is cloned on a hit: one pass over the table decides. A context naming the cluster
/// version the shape was last found current for is not compared for shape at all
/// ([`sluice_sdk::PriorityContext::cluster_version`]). When only usage changed (every decay)
/// the tree's shape is kept and only the ranking is done again. A ranking computes what
/// it orders by (Level FS) and its result (FairShare); the rest of a standing (S, U) is
/// computed when [`CachedFairTree::tree`] asks for it, as only sshare does.
#[derive(Clone, Debug, Default)]
pub struct CachedFairTree {
    /// What the shape was built from, per association.
    shape_inputs: Vec<ShapeInput>,
    /// The last nonzero cluster version found to name a table of `shape_inputs` (0: none).
    shape_version: u64,
    /// Usage bits of each association of the ranked table.
    usage_bits: Vec<u64>,
    shape: Option<Shape>,
    /// The sibling orders of the last ranking and the columns it filled.
    scratch: RankScratch,
    /// Whether `scratch` holds the ranking of the table of `shape_inputs` and `usage_bits`.
    ranked: bool,
}

/// The fields of one association that the tree's shape depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ShapeInput {
    parent: Option<u32>,
    raw_shares: u32,
    is_user: bool,
}

impl ShapeInput {
    fn of(a: &Association) -> Self {
        Self {
            parent: a.parent,
            raw_shares: a.raw_shares,
            is_user: a.is_user,
        }
    }
}

impl CachedFairTree {
    /// FairShare factor of every association of `assocs` (NaN for accounts), ranked again only
    /// if the table reads differently from the last one. `version` is the context's cluster
    /// version (0 promises nothing).
    pub fn fair_shares(&mut self, assocs: &[Association], version: u64) -> &[f64] {
        self.refresh(assocs, version);
        &self.scratch.fair_share
    }

    /// Every association's standing under `assocs`, of a context naming cluster `version`.
    pub fn tree(&mut self, assocs: &[Association], version: u64) -> FairTree {
        self.refresh(assocs, version);
        let shape = self.shape.as_ref().expect("refresh builds the shape");
        shape.standings(assocs, &self.scratch.fair_share)
    }

    /// Ranks `assocs` unless the kept ranking is of a table that reads the same.
    fn refresh(&mut self, assocs: &[Association], version: u64) {
        let named = version != 0 && version == self.shape_version && self.shape.is_some();
        let same_shape = named
            || (self.shape.is_some()
                && self.shape_inputs.len() == assocs.len()
                && self
                    .shape_inputs
                    .iter()
                    .zip(assocs)
                    .all(|(k, a)| *k == ShapeInput::of(a)));
        // Remembered either way: a new shape is built from this very table below.
        self.shape_version = version;
        if !same_shape {
            self.shape_inputs.clear();
            self.shape_inputs.extend(assocs.iter().map(ShapeInput::of));
            self.shape = Some(Shape::new(assocs));
            self.scratch = RankScratch::default();
            self.ranked = false;
        }
        let same_usage = self.usage_bits.len() == assocs.len()
            && self
                .usage_bits
                .iter()
                .zip(assocs)
                .all(|(&bits, a)| bits == a.raw_usage.to_bits());
        if !same_usage {
            self.usage_bits.clear();
            self.usage_bits
                .extend(assocs.iter().map(|a| a.raw_usage.to_bits()));
            self.ranked = false;
        }
        if !self.ranked {
            let shape = self.shape.as_ref().expect("built above");
            shape.rank(assocs, &mut self.scratch);
            self.ranked = true;
        }
    }
}

/// The tree as Fair Tree walks it — children re-parented past `FairShare=parent` accounts —
/// which depends on parents, user flags and RawShares, not on usage.
#[derive(Clone, Debug)]
struct Shape {
    root: Option<usize>,
    /// Children of each association in fs terms, in input order.
    fs_children: Vec<Vec<u32>>,
    /// Where each association stands in its fs-parent's `fs_children`.
    position: Vec<u32>,
    /// Sum of the RawShares of each association's fs-children (`FairShare=parent` ones excluded).
    level_shares: Vec<f64>,
    /// Associations breadth-first from root, root excluded.
    order: Vec<(u32, u32)>,
    /// Whether each association is a user's (read at every sibling, so kept dense).
    is_user: Vec<bool>,
    /// User associations.
    users: u32,
}

impl Shape {
    fn new(assocs: &[Association]) -> Self {
        let n = assocs.len();
        let mut fs_children = vec![Vec::new(); n];
        let root = assocs.iter().position(|a| a.parent.is_none());
        if let Some(root) = root {
            for (i, p) in fs_parents(assocs, root).iter().enumerate() {
                if let Some(p) = p {
                    fs_children[*p].push(i as u32);
                }
            }
        }
        let mut position = vec![0; n];
        for children in &fs_children {
            for (pos, &c) in children.iter().enumerate() {
                position[c as usize] = pos as u32;
            }
        }
        // A `FairShare=parent` association has no children of its own in fs terms, so it adds
        // nothing to its siblings' level shares (Slurm's `_foreach_sum_level_shares`).
        let level_shares = fs_children
            .iter()
            .map(|c| {
                c.iter()
                    .map(|&i| assocs[i as usize].raw_shares)
                    .filter(|&s| s != FS_USE_PARENT)
                    .map(f64::from)
                    .sum()
            })
            .collect();
        // Breadth-first from root, so a `FairShare=parent` child finds its fs-parent's S computed.
        let mut order = Vec::with_capacity(n);
        if let Some(root) = root {
            let mut parents = vec![root as u32];
            let mut k = 0;
            while k < parents.len() {
                let p = parents[k];
                k += 1;
                for &c in &fs_children[p as usize] {
                    order.push((p, c));
                    parents.push(c);
                }
            }
        }
        Shape {
            root,
            fs_children,
            position,
            level_shares,
            order,
            is_user: assocs.iter().map(|a| a.is_user).collect(),
            users: assocs.iter().filter(|a| a.is_user).count() as u32,
        }
    }

    /// S (NaN for a `FairShare=parent` association, whose S is its fs-parent's), U and Level FS
    /// of association `c` under its fs-parent `p`.
    fn level(&self, assocs: &[Association], p: usize, c: usize) -> (f64, f64, f64) {
        let a = &assocs[c];
        let parent_usage = assocs[p].raw_usage;
        let u = if parent_usage == 0.0 {
            0.0
        } else {
            a.raw_usage / parent_usage
        };
        if a.raw_shares == FS_USE_PARENT {
            let lf = if a.is_user { f64::INFINITY } else { NO_VAL };
            return (f64::NAN, u, lf);
        }
        let s = if self.level_shares[p] > 0.0 {
            f64::from(a.raw_shares) / self.level_shares[p]
        } else {
            0.0
        };
        // S/U with U = 0 is +∞ on purpose ("NOT A BUG" in Slurm).
        (s, u, if s == 0.0 { 0.0 } else { s / u })
    }

    /// Ranks the usage `assocs` carries: fills `scratch.level_fs` and `scratch.fair_share`
    /// (NaN for accounts).
    fn rank(&self, assocs: &[Association], scratch: &mut RankScratch) {
        let n = assocs.len();
        scratch.fair_share.clear();
        scratch.fair_share.resize(n, f64::NAN);
        scratch.level_fs.clear();
        scratch.level_fs.resize(n, NO_VAL);
        let Some(root) = self.root else {
            return;
        };
        for &(p, c) in &self.order {
            scratch.level_fs[c as usize] = self.level(assocs, p as usize, c as usize).2;
        }
        scratch.sorted.clear();
        let mut ranker = Ranker {
            rank: self.users,
            rnt: self.users,
            fair_share: &mut scratch.fair_share,
            shape: self,
            level_fs: &scratch.level_fs,
            sorted: &mut scratch.sorted,
            orders: &mut scratch.orders,
        };
        ranker.visit(root, false);
    }

    /// Every association's standing under the usage `assocs` carries, with the FairShare
    /// factors its ranking gave.
    fn standings(&self, assocs: &[Association], fair_share: &[f64]) -> FairTree {
        let nan = Standing {
            norm_shares: f64::NAN,
            effective_usage: f64::NAN,
            level_fs: f64::NAN,
            fair_share: f64::NAN,
        };
        let mut standing = vec![nan; assocs.len()];
        let Some(root) = self.root else {
            return FairTree { standing };
        };
        // sshare prints root's NormShares as 0 and its EffectvUsage as 1.
        standing[root] = Standing {
            norm_shares: 0.0,
            effective_usage: 1.0,
            level_fs: f64::NAN,
            fair_share: f64::NAN,
        };
        for &(p, c) in &self.order {
            let (p, c) = (p as usize, c as usize);
            let (s, u, lf) = self.level(assocs, p, c);
            let parent_kind = assocs[c].raw_shares == FS_USE_PARENT;
            standing[c] = Standing {
                norm_shares: if parent_kind {
                    standing[p].norm_shares
                } else {
                    s
                },
                effective_usage: u,
                level_fs: if parent_kind && !assocs[c].is_user {
                    f64::NAN
                } else {
                    lf
                },
                fair_share: fair_share[c],
            };
        }
        FairTree { standing }
    }
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
        let shape = Shape::new(assocs);
        let mut scratch = RankScratch::default();
        shape.rank(assocs, &mut scratch);
        shape.standings(assocs, &scratch.fair_share)
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
    /// FairShare factor per association, written for users.
    fair_share: &'s mut [f64],
    shape: &'s Shape,
    level_fs: &'s [f64],
    /// Sort keys of the sibling lists being walked, innermost last (a stack shared by the
    /// recursion).
    sorted: &'s mut Vec<(u64, u32)>,
    orders: &'s mut SiblingOrders,
}

/// Per association, its fs-children in the order they were last ranked (empty: never).
#[derive(Clone, Debug, Default)]
struct SiblingOrders(Vec<Vec<u32>>);

/// What a ranking keeps from one to the next: the sibling orders it starts from (after a decay
/// only the users that ran have moved), the columns it fills and its sort buffer.
#[derive(Clone, Debug, Default)]
struct RankScratch {
    orders: SiblingOrders,
    level_fs: Vec<f64>,
    /// FairShare factor per association (NaN for accounts).
    fair_share: Vec<f64>,
    sorted: Vec<(u64, u32)>,
}

impl Ranker<'_> {
    /// Ranks the fs-children of `parent` and, depth first, everything under them.
    fn visit(&mut self, parent: usize, account_tied: bool) {
        let siblings = &self.shape.fs_children[parent];
        let from = self.sorted.len();
        self.sort_siblings(parent, siblings);
        let mut prev = NO_VAL;
        for i in from..self.sorted.len() {
            let c = self.sorted[i].1 as usize;
            let lf = self.level_fs[c];
            let tied = if i == from && account_tied {
                true
            } else {
                prev == lf
            };
            if self.shape.is_user[c] {
                if !tied {
                    self.rank = self.rnt;
                }
                // `c` is a user, so the tree has at least one.
                self.fair_share[c] = f64::from(self.rank) / f64::from(self.shape.users);
                self.rnt = self.rnt.saturating_sub(1);
            } else {
                self.visit(c, tied);
            }
            prev = lf;
        }
        self.sorted.truncate(from);
    }

    /// Pushes `siblings` onto `sorted` in Fair Tree's order: Level FS descending, users before
    /// accounts, then input order. The order is that of a stable sort by (Level FS, user), done
    /// on integer keys; a Level FS that is NaN (which compares equal to everything) falls back
    /// to exactly that comparison.
    fn sort_siblings(&mut self, parent: usize, siblings: &[u32]) {
        let (level_fs, is_user) = (self.level_fs, &self.shape.is_user);
        let from = self.sorted.len();
        let orders = &mut self.orders.0;
        if orders.len() <= parent {
            orders.resize(parent + 1, Vec::new());
        }
        if siblings.iter().any(|&c| level_fs[c as usize].is_nan()) {
            let order = sorted_by_comparison(siblings, level_fs, is_user);
            self.sorted.extend(order.iter().map(|&c| (0, c)));
        } else {
            let keys = SortKeys {
                level_fs,
                is_user,
                position: &self.shape.position,
            };
            keys.sort(siblings, &orders[parent], self.sorted);
        }
        let order = &mut orders[parent];
        order.clear();
        order.extend(self.sorted[from..].iter().map(|&(_, c)| c));
    }
}

/// `siblings` in Fair Tree's order by a stable sort with Slurm's comparison (NaN ties all).
fn sorted_by_comparison(siblings: &[u32], level_fs: &[f64], is_user: &[bool]) -> Vec<u32> {
    let is_account = |c: u32| !is_user[c as usize];
    let mut order = siblings.to_vec();
    order.sort_by(|&a, &b| {
        let (la, lb) = (level_fs[a as usize], level_fs[b as usize]);
        lb.partial_cmp(&la)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(is_account(a).cmp(&is_account(b)))
    });
    order
}

/// What Fair Tree's order reads of an association, as integer keys (for Level FS values
/// without NaN): the order-preserving bits of −Level FS, then the account flag and the position
/// among its siblings. The keys are distinct, so any sort of them gives the stable order.
struct SortKeys<'a> {
    level_fs: &'a [f64],
    is_user: &'a [bool],
    position: &'a [u32],
}

impl SortKeys<'_> {
    const ACCOUNT: u32 = 1 << 31;

    /// Appends `siblings` to `out` in the order of [`sorted_by_comparison`], starting from
    /// `last` (the order of a previous ranking; ignored unless it holds as many siblings).
    /// Insertion sort from there costs what moved since; past a budget the rest is sorted
    /// outright.
    fn sort(&self, siblings: &[u32], last: &[u32], out: &mut Vec<(u64, u32)>) {
        let from = out.len();
        let start = if last.len() == siblings.len() {
            last
        } else {
            siblings
        };
        out.extend(start.iter().map(|&c| {
            let c = c as usize;
            let account = if self.is_user[c] { 0 } else { Self::ACCOUNT };
            (!ordered_bits(self.level_fs[c]), account | self.position[c])
        }));
        let keys = &mut out[from..];
        if !insertion_sort_within(keys, 4 * keys.len() + 64) {
            keys.sort_unstable();
        }
        for entry in keys {
            entry.1 = siblings[(entry.1 & !Self::ACCOUNT) as usize];
        }
    }
}

/// Insertion-sorts `keys` unless that takes more than `budget` moves; says whether it finished.
fn insertion_sort_within(keys: &mut [(u64, u32)], mut budget: usize) -> bool {
    for i in 1..keys.len() {
        let mut j = i;
        while j > 0 && keys[j - 1] > keys[j] {
            if budget == 0 {
                return false;
            }
            budget -= 1;
            keys.swap(j - 1, j);
            j -= 1;
        }
    }
    true
}

/// Maps a non-NaN float to an integer in the same order (−0 and +0 alike, as `==` has them).
fn ordered_bits(x: f64) -> u64 {
    let bits = if x == 0.0 { 0 } else { x.to_bits() };
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Level FS values that tie often and cover Fair Tree's special ones.
    const VALUES: [f64; 8] = [0.0, -0.0, 0.5, 1.0, 2.0, 1e300, f64::INFINITY, NO_VAL];

    /// Root and three users with `shares` and usage 1, 2, 3.
    fn users(shares: [u32; 3]) -> Vec<Association> {
        let mut assocs = vec![Association {
            name: "root".into(),
            parent: None,
            is_user: false,
            raw_shares: 1,
            raw_usage: 6.0,
        }];
        for (i, s) in shares.into_iter().enumerate() {
            assocs.push(Association {
                name: format!("u{i}"),
                parent: Some(0),
                is_user: true,
                raw_shares: s,
                raw_usage: (i + 1) as f64,
            });
        }
        assocs
    }

    fn factors(tree: &FairTree) -> Vec<f64> {
        (0..tree.standing.len()).map(|i| tree.factor(i)).collect()
    }

    #[test]
    fn a_table_naming_the_cluster_version_it_was_ranked_under_is_not_compared_for_shape() {
        let (even, uneven) = (users([1, 1, 1]), users([1, 1, 9]));
        assert_ne!(
            factors(&FairTree::compute(&even)),
            factors(&FairTree::compute(&uneven)),
            "the shares decide the ranking"
        );
        let mut cache = CachedFairTree::default();
        cache.fair_shares(&even, 5);
        // Version 5 promises the shape ranked under it, so the new shares are not looked at.
        assert_eq!(
            factors(&cache.tree(&uneven, 5)),
            factors(&FairTree::compute(&even))
        );
        // Version 0 promises nothing, and another version names another table: compared.
        for version in [0, 6] {
            let mut cache = CachedFairTree::default();
            cache.fair_shares(&even, 5);
            assert_eq!(
                factors(&cache.tree(&uneven, version)),
                factors(&FairTree::compute(&uneven)),
                "version {version}"
            );
        }
    }

    #[test]
    fn keyed_order_is_the_comparison_order() {
        let mut rng = sluice_sdk::fixtures::Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = move |bound: usize| rng.below(bound as u64) as usize;
        for round in 0..500 {
            let n = 1 + next(60);
            let assocs: Vec<Association> = (0..n)
                .map(|i| Association {
                    name: format!("a{i}"),
                    parent: Some(0),
                    is_user: next(3) > 0,
                    raw_shares: 1,
                    raw_usage: 0.0,
                })
                .collect();
            let level_fs: Vec<f64> = (0..n).map(|_| VALUES[next(VALUES.len())]).collect();
            // Siblings in a shuffled input order, as a tree built in any order has them.
            let mut siblings: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                siblings.swap(i, next(i + 1));
            }
            let mut position = vec![0; n];
            for (pos, &c) in siblings.iter().enumerate() {
                position[c as usize] = pos as u32;
            }
            let is_user: Vec<bool> = assocs.iter().map(|a| a.is_user).collect();
            let keys = SortKeys {
                level_fs: &level_fs,
                is_user: &is_user,
                position: &position,
            };
            // Start from no order, a random one, or the right one nudged, in turn.
            let mut last: Vec<u32> = match round % 3 {
                0 => Vec::new(),
                1 => siblings.clone(),
                _ => sorted_by_comparison(&siblings, &level_fs, &is_user),
            };
            if round % 3 == 1 {
                for i in (1..n).rev() {
                    last.swap(i, next(i + 1));
                }
            } else if n > 1 && !last.is_empty() {
                last.swap(0, n - 1);
            }
            let mut keyed = vec![(7, 7)];
            keys.sort(&siblings, &last, &mut keyed);
            let keyed: Vec<u32> = keyed[1..].iter().map(|&(_, c)| c).collect();
            assert_eq!(
                keyed,
                sorted_by_comparison(&siblings, &level_fs, &is_user),
                "round {round}"
            );
        }
    }
}
