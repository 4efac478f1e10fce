//! Fair Tree fairshare: Level FS per association and the rank-based FairShare factor per user.
//!
//! A reproduction of Slurm's `fair_tree.c` as the code behaves, not as `fair_tree.shtml` reads:
//! tied sibling accounts are not merged (see [`FairTree::compute`]).

use sluice_sdk::{Association, PriorityContext};

use crate::lanes;

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
///
/// A flat tree (root's fs-children are all users, as in a replay of a trace without accounts)
/// is not ranked at all for [`CachedFairTree::fair_shares_of`]: a user's rank there is the
/// user count less the users with a higher Level FS, so only the users asked about are
/// counted, each once per usage ([`FlatShape`]).
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
    /// Root's level of a flat tree under that usage; unused for other trees.
    flat: FlatLevel,
}

/// What a flat tree's ranking needs per usage: the Level FS keys of root's users and the
/// FairShare factors counted from them so far (see [`FlatShape`]).
#[derive(Clone, Debug, Default)]
struct FlatLevel {
    /// [`ordered_key`] of each root user's Level FS, in [`FlatShape::users`] order.
    keys: Vec<i64>,
    /// Whether `keys` are of the current usage.
    keyed: bool,
    /// Whether the keys stand for the Level FS (none is NaN, which ties with everything and
    /// needs the full ranking).
    usable: bool,
    /// Which usage `answers` entries belong to: bumped at every change of usage or shape,
    /// never 0 once a usage was seen (0 marks an entry never counted).
    usage_serial: u32,
    /// Per association: the `usage_serial` it was counted under and its FairShare factor.
    answers: Vec<(u32, f64)>,
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
    /// FairShare factor of every association of `ctx` (NaN for accounts), ranked again only
    /// if its table reads differently from the last one.
    pub fn fair_shares(&mut self, ctx: &PriorityContext) -> &[f64] {
        self.refresh(ctx);
        &self.scratch.fair_share
    }

    /// FairShare factor of each association of `wanted` under `ctx` (NaN for accounts and for
    /// indices past the table), as [`CachedFairTree::fair_shares`] would give them. A flat
    /// tree is not ranked for it (see [`FlatShape`]).
    pub fn fair_shares_of(&mut self, ctx: &PriorityContext, wanted: &[u32]) -> Vec<f64> {
        self.refresh_usage(ctx);
        let shape = self.shape.as_ref().expect("refresh builds the shape");
        let flat = &mut self.flat;
        let counted = shape.flat.as_ref().filter(|level| {
            if !flat.keyed {
                flat.usable = shape.key_flat_level(level, &ctx.associations, &mut flat.keys);
                flat.keyed = true;
            }
            flat.usable
        });
        let Some(level) = counted else {
            // The usage was looked at above: only the ranking may be missing.
            self.rank_unless_ranked(&ctx.associations);
            let all = &self.scratch.fair_share;
            return wanted
                .iter()
                .map(|&a| all.get(a as usize).copied().unwrap_or(f64::NAN))
                .collect();
        };
        flat.answers.resize(level.position.len(), (0, f64::NAN));
        let serial = flat.usage_serial;
        wanted
            .iter()
            .map(|&a| {
                let Some(&position) = level.position.get(a as usize) else {
                    return f64::NAN;
                };
                if position == NOT_IN_LEVEL {
                    return f64::NAN;
                }
                let (when, known) = &mut flat.answers[a as usize];
                if *when != serial {
                    *when = serial;
                    *known = shape.flat_fair_share(&flat.keys, position as usize);
                }
                *known
            })
            .collect()
    }

    /// Every association's standing under `ctx`.
    pub fn tree(&mut self, ctx: &PriorityContext) -> FairTree {
        self.refresh(ctx);
        let shape = self.shape.as_ref().expect("refresh builds the shape");
        shape.standings(&ctx.associations, &self.scratch.fair_share)
    }

    /// Ranks `ctx`'s associations unless the kept ranking is of a table that reads the same.
    fn refresh(&mut self, ctx: &PriorityContext) {
        self.refresh_usage(ctx);
        self.rank_unless_ranked(&ctx.associations);
    }

    /// Ranks `assocs`, the table [`CachedFairTree::refresh_usage`] last looked at, unless its
    /// ranking is kept.
    fn rank_unless_ranked(&mut self, assocs: &[Association]) {
        if !self.ranked {
            let shape = self.shape.as_ref().expect("built by refresh_usage");
            shape.rank(assocs, &mut self.scratch);
            self.ranked = true;
        }
    }

    /// Builds the shape of `ctx`'s table unless the kept one reads the same, and marks what
    /// was worked out from the last usage stale if the usage (or the shape) changed.
    fn refresh_usage(&mut self, ctx: &PriorityContext) {
        let assocs = &ctx.associations;
        let named = self.shape.is_some() && ctx.names_cluster(self.shape_version);
        let same_shape = named
            || (self.shape.is_some()
                && self.shape_inputs.len() == assocs.len()
                && self
                    .shape_inputs
                    .iter()
                    .zip(assocs)
                    .all(|(k, a)| *k == ShapeInput::of(a)));
        // Remembered either way: a new shape is built from this very table below.
        self.shape_version = ctx.cluster_version;
        if !same_shape {
            self.shape_inputs.clear();
            self.shape_inputs.extend(assocs.iter().map(ShapeInput::of));
            self.shape = Some(Shape::new(assocs));
            self.scratch = RankScratch::default();
            self.usage_bits.clear();
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
            self.flat.keyed = false;
            self.flat.usage_serial = self.flat.usage_serial.wrapping_add(1);
            if self.flat.usage_serial == 0 {
                // Entries of 2^32 usages ago would read as current, and fresh entries are
                // marked 0: forget them all and go on from 1.
                self.flat.answers.clear();
                self.flat.usage_serial = 1;
            }
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
    /// Sum of the RawShares of each association's fs-children (`FairShare=parent` ones excluded).
    level_shares: Vec<f64>,
    /// Associations breadth-first from root, root excluded.
    order: Vec<(u32, u32)>,
    /// Whether each association is a user's (read at every sibling, so kept dense).
    is_user: Vec<bool>,
    /// User associations.
    users: u32,
    /// Root's level, if all of it is users.
    flat: Option<FlatShape>,
}

/// Root's level of a flat tree, where every fs-child of root is a user.
///
/// Fair Tree walks such a level once in Level FS order, and a user not tied with the one
/// before takes as rank the users still unranked; tied users share the first one's rank. So a
/// user's rank is the user count less the users with a strictly higher Level FS, which a count
/// over the level gives without ordering it.
#[derive(Clone, Debug)]
struct FlatShape {
    /// Root's users, in `fs_children[root]` order.
    users: Vec<u32>,
    /// Each user's S (in `users` order) as [`Shape::level`] computes it, or infinity for a
    /// `FairShare=parent` user, whose Level FS is infinite: what a usage leaves unchanged.
    shares: Vec<f64>,
    /// Per association: its index in `users`, or [`NOT_IN_LEVEL`].
    position: Vec<u32>,
}

/// [`FlatShape::position`] of an association not on root's level.
const NOT_IN_LEVEL: u32 = u32::MAX;

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
        let flat = root
            .filter(|&r| fs_children[r].iter().all(|&c| assocs[c as usize].is_user))
            .map(|r| {
                let level = &fs_children[r];
                let mut position = vec![NOT_IN_LEVEL; n];
                for (k, &c) in level.iter().enumerate() {
                    position[c as usize] = k as u32;
                }
                FlatShape {
                    users: level.clone(),
                    shares: level
                        .iter()
                        .map(|&c| {
                            let a = &assocs[c as usize];
                            if a.raw_shares == FS_USE_PARENT {
                                f64::INFINITY
                            } else {
                                norm_shares(a.raw_shares, level_shares[r])
                            }
                        })
                        .collect(),
                    position,
                }
            });
        Shape {
            root,
            fs_children,
            level_shares,
            order,
            is_user: assocs.iter().map(|a| a.is_user).collect(),
            users: assocs.iter().filter(|a| a.is_user).count() as u32,
            flat,
        }
    }

    /// S (NaN for a `FairShare=parent` association, whose S is its fs-parent's), U and Level FS
    /// of association `c` under its fs-parent `p`.
    fn level(&self, assocs: &[Association], p: usize, c: usize) -> (f64, f64, f64) {
        let a = &assocs[c];
        let u = effective_usage(a.raw_usage, assocs[p].raw_usage);
        if a.raw_shares == FS_USE_PARENT {
            let lf = if a.is_user { f64::INFINITY } else { NO_VAL };
            return (f64::NAN, u, lf);
        }
        let s = norm_shares(a.raw_shares, self.level_shares[p]);
        (s, u, level_fs(s, u))
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
        scratch.orders.0.resize_with(n, Vec::new);
        let mut ranker = Ranker {
            rank: self.users,
            rnt: self.users,
            fair_share: &mut scratch.fair_share,
            shape: self,
            level_fs: &scratch.level_fs,
            orders: &mut scratch.orders,
        };
        ranker.visit(root, false);
    }

    /// Fills `keys` with the [`ordered_key`] of the Level FS of each of `level`'s users
    /// under the usage `assocs` carries; says whether they stand for the Level FS (none is
    /// NaN).
    fn key_flat_level(
        &self,
        level: &FlatShape,
        assocs: &[Association],
        keys: &mut Vec<i64>,
    ) -> bool {
        let Some(root) = self.root else {
            return false;
        };
        // As [`Shape::level`] computes Level FS, with S worked out once per shape.
        let root_usage = assocs[root].raw_usage;
        let mut nan = false;
        keys.clear();
        keys.resize(level.users.len(), 0);
        for ((key, &c), &s) in keys.iter_mut().zip(&level.users).zip(&level.shares) {
            let lf = level_fs(s, effective_usage(assocs[c as usize].raw_usage, root_usage));
            // A `FairShare=parent` user's infinite S stands for its infinite Level FS.
            let lf = if s == f64::INFINITY { s } else { lf };
            nan |= lf.is_nan();
            *key = ordered_key(lf);
        }
        !nan
    }

    /// FairShare factor of the user at `position` of a flat root level whose keys are
    /// `keys`: its rank (the users less those with a higher Level FS) over the user count.
    fn flat_fair_share(&self, keys: &[i64], position: usize) -> f64 {
        let above = lanes::count_above(keys, keys[position]);
        f64::from(self.users - above) / f64::from(self.users)
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

/// U: `usage` over its fs-parent's (0 when the parent has none).
fn effective_usage(usage: f64, parent_usage: f64) -> f64 {
    // Divided first and then chosen, so that the choice compiles to a select, not a branch.
    let quotient = usage / parent_usage;
    if parent_usage == 0.0 { 0.0 } else { quotient }
}

/// Level FS: S / U, 0 without shares; S/U with U = 0 is +∞ on purpose ("NOT A BUG" in Slurm).
fn level_fs(s: f64, u: f64) -> f64 {
    // As in `effective_usage`: a select, which in a component spares a branch and its fuel.
    let ratio = s / u;
    if s == 0.0 { 0.0 } else { ratio }
}

/// S: `raw_shares` over the level's shares (0 when the level has none).
fn norm_shares(raw_shares: u32, level_shares: f64) -> f64 {
    if level_shares > 0.0 {
        f64::from(raw_shares) / level_shares
    } else {
        0.0
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
    orders: &'s mut SiblingOrders,
}

/// Per association, its fs-children as last ranked, as [`order_siblings`] keys them (empty:
/// never ranked). Kept from one ranking to the next, where they are keyed again in place: after
/// a decay only the users that ran have moved.
#[derive(Clone, Debug, Default)]
struct SiblingOrders(Vec<Vec<(u64, u32)>>);

/// What a ranking keeps from one to the next: the sibling orders it starts from and the
/// columns it fills.
#[derive(Clone, Debug, Default)]
struct RankScratch {
    orders: SiblingOrders,
    level_fs: Vec<f64>,
    /// FairShare factor per association (NaN for accounts).
    fair_share: Vec<f64>,
}

impl Ranker<'_> {
    /// Ranks the fs-children of `parent` and, depth first, everything under them.
    fn visit(&mut self, parent: usize, account_tied: bool) {
        let siblings = &self.shape.fs_children[parent];
        // Out of the table while its subtrees are ranked (they reorder only their own
        // children), so the loop reads a plain slice; put back for the next ranking.
        let mut order = std::mem::take(&mut self.orders.0[parent]);
        order_siblings(siblings, self.level_fs, &self.shape.is_user, &mut order);
        let mut prev = NO_VAL;
        for (i, &entry) in order.iter().enumerate() {
            let c = siblings[position(entry)] as usize;
            let lf = self.level_fs[c];
            let tied = if i == 0 && account_tied {
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
        self.orders.0[parent] = order;
    }
}

/// The account flag of a sibling's key (its position below it).
const ACCOUNT: u32 = 1 << 31;

/// The position among its siblings that key `entry` stands for.
fn position(entry: (u64, u32)) -> usize {
    (entry.1 & !ACCOUNT) as usize
}

/// Brings `order` to Fair Tree's order of `siblings`: Level FS descending, users before
/// accounts, then input order — the order of a stable sort by (Level FS, user).
///
/// Each entry is a key: the order-preserving bits of −Level FS, then the account flag and the
/// sibling's position in `siblings`. The keys are distinct, so any sort of them gives the stable
/// order. `order` holds the last ranking's keys (or is empty, or of another length, and is then
/// started from input order); they are keyed again in place and insertion-sorted from there,
/// which costs what moved since, and past a budget the rest is sorted outright. A Level FS that
/// is NaN (which compares equal to everything) falls back to exactly Slurm's comparison.
fn order_siblings(
    siblings: &[u32],
    level_fs: &[f64],
    is_user: &[bool],
    order: &mut Vec<(u64, u32)>,
) {
    // The part of a key that never changes: the sibling's account flag and position.
    let tag = |pos: usize| {
        let account = if is_user[siblings[pos] as usize] {
            0
        } else {
            ACCOUNT
        };
        account | pos as u32
    };
    if order.len() != siblings.len() {
        order.clear();
        order.extend((0..siblings.len()).map(|pos| (0, tag(pos))));
    }
    let mut nan = false;
    for entry in order.iter_mut() {
        let lf = level_fs[siblings[position(*entry)] as usize];
        nan |= lf.is_nan();
        entry.0 = !ordered_bits(lf);
    }
    if nan {
        let positions: Vec<u32> = (0..siblings.len() as u32).collect();
        let sorted = sorted_by_comparison(&positions, |p| {
            let c = siblings[p as usize] as usize;
            (level_fs[c], !is_user[c])
        });
        for (entry, p) in order.iter_mut().zip(sorted) {
            *entry = (0, tag(p as usize));
        }
    } else if !insertion_sort_within(order, 4 * siblings.len() + 64) {
        order.sort_unstable();
    }
}

/// `items` in Fair Tree's order by a stable sort with Slurm's comparison (NaN ties all), given
/// each item's (Level FS, is an account).
///
/// A merge sort of its own: with NaN the comparison is not a total order, which the standard
/// library's sorts may answer with a panic; this one only asks whether an item must come
/// strictly before another, so it always finishes, and the same input gives the same order.
fn sorted_by_comparison(items: &[u32], of: impl Fn(u32) -> (f64, bool)) -> Vec<u32> {
    let before = |a: u32, b: u32| {
        let ((la, account_a), (lb, account_b)) = (of(a), of(b));
        lb.partial_cmp(&la)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(account_a.cmp(&account_b))
            .is_lt()
    };
    let n = items.len();
    let (mut order, mut merged) = (items.to_vec(), items.to_vec());
    let mut width = 1;
    while width < n {
        for lo in (0..n).step_by(2 * width) {
            let (mid, hi) = ((lo + width).min(n), (lo + 2 * width).min(n));
            let (mut i, mut j) = (lo, mid);
            for slot in &mut merged[lo..hi] {
                // The right run's head goes first only if it must: equal items keep their order.
                if j < hi && (i == mid || before(order[j], order[i])) {
                    *slot = order[j];
                    j += 1;
                } else {
                    *slot = order[i];
                    i += 1;
                }
            }
        }
        std::mem::swap(&mut order, &mut merged);
        width *= 2;
    }
    order
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

/// [`ordered_bits`] as a signed integer in the same order, as two-lane SIMD compares it.
fn ordered_key(x: f64) -> i64 {
    (ordered_bits(x) ^ (1 << 63)) as i64
}

/// Maps a non-NaN float to an integer in the same order (−0 and +0 alike, as `==` has them).
fn ordered_bits(x: f64) -> u64 {
    let bits = if x == 0.0 { 0 } else { x.to_bits() };
    // Negative: every bit flipped; otherwise the sign bit set.
    let flip = ((bits as i64 >> 63) as u64) | (1 << 63);
    bits ^ flip
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
            priority: 0,
            raw_usage: 6.0,
        }];
        for (i, s) in shares.into_iter().enumerate() {
            assocs.push(Association {
                name: format!("u{i}"),
                parent: Some(0),
                is_user: true,
                raw_shares: s,
                priority: 0,
                raw_usage: (i + 1) as f64,
            });
        }
        assocs
    }

    /// A context of `assocs` that names cluster `version`.
    fn named(assocs: &[Association], version: u64) -> PriorityContext {
        PriorityContext {
            associations: assocs.to_vec(),
            cluster_version: version,
            ..PriorityContext::default()
        }
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
        cache.fair_shares(&named(&even, 5));
        // Version 5 promises the shape ranked under it, so the new shares are not looked at.
        assert_eq!(
            factors(&cache.tree(&named(&uneven, 5))),
            factors(&FairTree::compute(&even))
        );
        // Version 0 promises nothing, and another version names another table: compared.
        for version in [0, 6] {
            let mut cache = CachedFairTree::default();
            cache.fair_shares(&named(&even, 5));
            assert_eq!(
                factors(&cache.tree(&named(&uneven, version))),
                factors(&FairTree::compute(&uneven)),
                "version {version}"
            );
        }
    }

    /// A root with `n` users (Level FS ties, zero shares and usage, `FairShare=parent`, NaN
    /// usage now and then) or, every fifth round, one account among them.
    fn random_tree(rng: &mut sluice_sdk::fixtures::Rng, round: usize) -> Vec<Association> {
        let n = 1 + rng.below(40) as usize;
        let shares = [0, 1, 1, 2, 5, FS_USE_PARENT];
        let usage = [0.0, 1.0, 1.0, 2.0, 3.5, 1e-300];
        let mut assocs = vec![Association {
            name: "root".into(),
            parent: None,
            is_user: false,
            raw_shares: 1,
            priority: 0,
            raw_usage: [0.0, 10.0, 7.25][rng.below(3) as usize],
        }];
        for i in 0..n {
            let raw_usage = match rng.below(20) {
                0 if round % 7 == 3 => f64::NAN,
                k if k < 6 => usage[k as usize],
                _ => rng.below(1000) as f64 / 8.0,
            };
            assocs.push(Association {
                name: format!("u{i}"),
                parent: Some(0),
                is_user: !(round % 5 == 4 && i == 0),
                raw_shares: shares[rng.below(shares.len() as u64) as usize],
                priority: 0,
                raw_usage,
            });
        }
        // A user whose parent is not in the table: Fair Tree never reaches it.
        if round % 3 == 0 {
            assocs.push(Association {
                name: "lost".into(),
                parent: Some(999),
                is_user: true,
                raw_shares: 1,
                priority: 0,
                raw_usage: 1.0,
            });
        }
        assocs
    }

    #[test]
    fn a_flat_tree_counted_gives_what_the_ranking_gives() {
        let mut rng = sluice_sdk::fixtures::Rng::new(0x2545_F491_4F6C_DD1D);
        let mut cache = CachedFairTree::default();
        for round in 0..400 {
            let mut assocs = random_tree(&mut rng, round);
            // The table as drawn, then (same shape) with one user's usage moved, as after a
            // decay: what was counted under the first usage must not be answered again.
            for usage_round in 0..2 {
                if usage_round == 1 {
                    let moved = 1 + rng.below(assocs.len() as u64 - 1) as usize;
                    assocs[moved].raw_usage = [0.0, 1e6, 2.0][rng.below(3) as usize];
                }
                let tree = FairTree::compute(&assocs);
                let ranked = factors_with_nan(&tree);
                // Every association (some twice), and one past the table.
                let n = assocs.len() as u32;
                let mut wanted: Vec<u32> = (0..n).rev().chain(0..n).collect();
                wanted.push(n + 3);
                let counted = cache.fair_shares_of(&named(&assocs, 0), &wanted);
                let expected: Vec<f64> = wanted
                    .iter()
                    .map(|&a| ranked.get(a as usize).copied().unwrap_or(f64::NAN))
                    .collect();
                assert_eq!(
                    format!("{counted:?}"),
                    format!("{expected:?}"),
                    "round {round}.{usage_round}: {assocs:?}"
                );
                // The counted path is taken where it applies, so the test covers it.
                let level = (1..assocs.len()).filter(|&i| assocs[i].parent == Some(0));
                let flat = level
                    .clone()
                    .all(|i| assocs[i].is_user && !tree.standing[i].level_fs.is_nan());
                let counted =
                    cache.shape.as_ref().is_some_and(|s| s.flat.is_some()) && cache.flat.usable;
                assert_eq!(counted, flat, "round {round}.{usage_round}");
            }
        }
    }

    fn factors_with_nan(tree: &FairTree) -> Vec<f64> {
        tree.standing.iter().map(|s| s.fair_share).collect()
    }

    #[test]
    fn keyed_order_is_the_comparison_order() {
        let mut rng = sluice_sdk::fixtures::Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = move |bound: usize| rng.below(bound as u64) as usize;
        for round in 0..600 {
            let n = 1 + next(60);
            let is_user: Vec<bool> = (0..n).map(|_| next(3) > 0).collect();
            // Every tenth round has NaN values, which only Slurm's comparison orders.
            let nan = round % 10 == 9;
            let level_fs: Vec<f64> = (0..n)
                .map(|_| match next(VALUES.len() + 1) {
                    v if v < VALUES.len() => VALUES[v],
                    _ if nan => f64::NAN,
                    _ => 1.0,
                })
                .collect();
            // Siblings in a shuffled input order, as a tree built in any order has them.
            let mut siblings: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                siblings.swap(i, next(i + 1));
            }
            let mut position_of = vec![0; n];
            for (pos, &c) in siblings.iter().enumerate() {
                position_of[c as usize] = pos as u32;
            }
            let of = |c: u32| (level_fs[c as usize], !is_user[c as usize]);
            let expected = sorted_by_comparison(&siblings, of);
            // Start from no order, a random one, the right one nudged, or one of another
            // length, in turn.
            let mut last: Vec<u32> = match round % 4 {
                0 => Vec::new(),
                1 => siblings.clone(),
                2 => expected.clone(),
                _ => siblings[..n / 2].to_vec(),
            };
            if round % 4 == 1 {
                for i in (1..n).rev() {
                    last.swap(i, next(i + 1));
                }
            } else if round % 4 == 2 && n > 1 {
                last.swap(0, n - 1);
            }
            let mut order: Vec<(u64, u32)> = last
                .iter()
                .map(|&c| {
                    let account = if is_user[c as usize] { 0 } else { ACCOUNT };
                    (next(1000) as u64, account | position_of[c as usize])
                })
                .collect();
            order_siblings(&siblings, &level_fs, &is_user, &mut order);
            let ordered: Vec<u32> = order.iter().map(|&e| siblings[position(e)]).collect();
            assert_eq!(ordered, expected, "round {round}");
            // The next ranking starts from this one's order, as after a decay.
            let level_fs: Vec<f64> = (0..n).map(|_| VALUES[next(VALUES.len())]).collect();
            let of = |c: u32| (level_fs[c as usize], !is_user[c as usize]);
            order_siblings(&siblings, &level_fs, &is_user, &mut order);
            let ordered: Vec<u32> = order.iter().map(|&e| siblings[position(e)]).collect();
            assert_eq!(
                ordered,
                sorted_by_comparison(&siblings, of),
                "round {round}, again"
            );
        }
    }
}
