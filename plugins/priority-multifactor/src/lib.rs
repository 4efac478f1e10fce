//! priority/multifactor: Slurm's multifactor priority with Fair Tree fairshare.
//!
//! `priority = Σ weight·factor + TRES + site − nice`, clamped to `1..=u32::MAX` and truncated, as
//! `_get_priority_internal` computes it; the fairshare factor is Fair Tree's (`fair_tree.c`).
//!
//! Settings (the `[plugins.priority.settings]` table; absent keys take Slurm's defaults):
//!
//! | key | Slurm | default |
//! |---|---|---|
//! | `weight.age` | PriorityWeightAge | 0 |
//! | `weight.fairshare` | PriorityWeightFairshare | 0 |
//! | `weight.jobsize` | PriorityWeightJobSize | 0 |
//! | `weight.partition` | PriorityWeightPartition | 0 |
//! | `weight.qos` | PriorityWeightQOS | 0 |
//! | `weight.assoc` | PriorityWeightAssoc (the job's association priority over the largest) | 0 |
//! | `weight.tres.cpu`, `.mem`, `.node`, `."gres/gpu"` | PriorityWeightTRES | 0 |
//! | `max_age` | PriorityMaxAge, seconds | 604800 |
//! | `favor_small` | PriorityFavorSmall | false |
//! | `flags` | PriorityFlags, comma-separated | "" |
//! | `cluster_tres.mem`, `."gres/gpu"` | the TRES totals the Mem and GPU factors divide by | unset (factor 0) |
//!
//! Flags that change the arithmetic: `SMALL_RELATIVE_TO_TIME`, `ACCRUE_ALWAYS`, `NO_NORMAL_ALL`,
//! `NO_NORMAL_ASSOC`, `NO_NORMAL_PART`, `NO_NORMAL_QOS`, `NO_NORMAL_TRES`. Others are logged as
//! warnings and ignored; unknown keys and values are logged too.
//!
//! `FairShare=parent` is RawShares `0x7FFFFFFF` (Slurm's `SLURMDB_FS_USE_PARENT`).

pub mod factors;
pub mod fair_tree;
mod lanes;
pub mod settings;

use sluice_sdk::*;

use crate::factors::JobSize;
use crate::fair_tree::CachedFairTree;
use crate::settings::Config;

/// Multifactor priority with Fair Tree fairshare.
#[derive(Clone, Debug)]
pub struct Multifactor {
    /// The settings this generation was built with.
    pub config: Config,
    /// Fair Tree of the last association table, reused while the table is unchanged.
    fair_tree: CachedFairTree,
}

/// Two policies are equal when they are configured alike; the cached Fair Tree is derived from
/// the calls' input and changes no answer.
impl PartialEq for Multifactor {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
    }
}

impl FromSettings for Multifactor {
    fn from_settings(settings: &Settings) -> Self {
        let (config, warnings) = Config::parse(settings);
        for w in &warnings {
            sluice_sdk::log::warn(w);
        }
        Multifactor::new(config)
    }
}

impl Multifactor {
    /// A policy with the given configuration.
    pub fn new(config: Config) -> Self {
        Self {
            config,
            fair_tree: CachedFairTree::default(),
        }
    }
}

/// Looks an index column entry up in a per-table vector; out of range counts as 0 rather than
/// trapping, since the host would then discard the whole pass.
fn at(table: &[f64], i: u32) -> f64 {
    table.get(i as usize).copied().unwrap_or(0.0)
}

/// Adds one factor column to the running sum and, when shown, to the breakdown.
struct Sum {
    total: Vec<f64>,
    factors: Vec<Factor>,
    /// Whether the breakdown is kept (the context does not skip it).
    explain: bool,
}

impl Sum {
    /// Adds one value per job; the column is kept only when explained, so a skipped
    /// breakdown allocates none.
    fn add(&mut self, name: &str, values: impl IntoIterator<Item = f64>) {
        if !self.explain {
            for (t, v) in self.total.iter_mut().zip(values) {
                *t += v;
            }
            return;
        }
        let values: Vec<f64> = values.into_iter().collect();
        for (t, v) in self.total.iter_mut().zip(&values) {
            *t += v;
        }
        self.factors.push(Factor {
            name: name.to_string(),
            values,
        });
    }
}

/// Slurm's final step: below 1 becomes 1 (0 means held), above 32 bits saturates, then truncate.
fn to_priority(p: f64) -> u32 {
    if p.is_nan() || p < 1.0 {
        1
    } else {
        // `as` truncates and saturates at u32::MAX; an explicit `min` would be a libm call in
        // the component (wasm's f64.min treats NaN differently from Rust's).
        p as u32
    }
}

impl PriorityPolicy for Multifactor {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        let c = &self.config;
        let w = &c.weights;
        let n = jobs.len();
        let mut sum = Sum {
            total: vec![0.0; n],
            factors: Vec::new(),
            explain: !ctx.skip_factors,
        };

        // Columns are added in the order of Slurm's sum so that rounding matches it.
        if w.age != 0.0 {
            let accrue = if c.flags.accrue_always {
                &jobs.submit_time
            } else {
                &jobs.eligible_time
            };
            let v = accrue
                .iter()
                .map(|&t| w.age * factors::age(ctx.now, t, c.max_age));
            sum.add("AGE", v);
        }
        if w.assoc != 0.0 {
            let per_assoc: Vec<f64> =
                factors::association_factors(&ctx.associations, c.flags.no_normal_assoc)
                    .iter()
                    .map(|f| w.assoc * f)
                    .collect();
            sum.add("ASSOC", jobs.association.iter().map(|&a| at(&per_assoc, a)));
        }
        if w.fairshare != 0.0 {
            let mut v = self.fair_tree.fair_shares_of(ctx, &jobs.association);
            // An account's (NaN) factor counts as 0, and so does an index past the table.
            for f in &mut v {
                *f = w.fairshare * if f.is_nan() { 0.0 } else { *f };
            }
            sum.add("FAIRSHARE", v);
        }
        if w.jobsize != 0.0 {
            let size = JobSize {
                cluster_nodes: f64::from(ctx.cluster_nodes),
                cluster_cpus: f64::from(ctx.cluster_cpus),
                favor_small: c.favor_small,
                relative_to_time: c.flags.small_relative_to_time,
            };
            let v = (jobs.nodes.iter().zip(&jobs.cpus).zip(&jobs.time_limit))
                .map(|((&nodes, &cpus), &limit)| w.jobsize * size.factor(nodes, cpus, limit));
            sum.add("JOBSIZE", v);
        }
        if w.partition != 0.0 {
            let per_part: Vec<f64> =
                factors::partition_factors(&ctx.partitions, c.flags.no_normal_part)
                    .iter()
                    .map(|f| w.partition * f)
                    .collect();
            sum.add(
                "PARTITION",
                jobs.partition.iter().map(|&p| at(&per_part, p)),
            );
        }
        if w.qos != 0.0 {
            let per_qos: Vec<f64> = factors::qos_factors(&ctx.qos, c.flags.no_normal_qos)
                .iter()
                .map(|f| w.qos * f)
                .collect();
            sum.add("QOS", jobs.qos.iter().map(|&q| at(&per_qos, q)));
        }
        if w.tres.any() {
            sum.add("TRES", self.tres_column(ctx, jobs));
        }
        if jobs.site_factor.iter().any(|&s| s != 0) {
            sum.add("SITE", jobs.site_factor.iter().map(|&s| s as f64));
        }
        if jobs.nice.iter().any(|&s| s != 0) {
            sum.add("NICE", jobs.nice.iter().map(|&s| -f64::from(s)));
        }

        let priority = sum.total.iter().map(|&p| to_priority(p)).collect();
        Priorities {
            priority,
            factors: sum.factors,
        }
    }

    fn shares(&mut self, ctx: &PriorityContext) -> Vec<Share> {
        self.fair_tree
            .tree(ctx)
            .standing
            .iter()
            .enumerate()
            .map(|(i, s)| Share {
                association: i as u32,
                norm_shares: s.norm_shares,
                effective_usage: s.effective_usage,
                fair_share: s.fair_share,
                level_fs: s.level_fs,
            })
            .collect()
    }
}

impl Multifactor {
    /// Σ TRES factor × weight per job, in Slurm's TRES order (cpu, mem, node, gres/gpu).
    fn tres_column(&self, ctx: &PriorityContext, jobs: &JobTable) -> Vec<f64> {
        let (t, raw, totals) = (
            &self.config.weights.tres,
            self.config.flags.no_normal_tres,
            &self.config.tres_totals,
        );
        let (cpus, nodes) = (f64::from(ctx.cluster_cpus), f64::from(ctx.cluster_nodes));
        (jobs
            .cpus
            .iter()
            .zip(&jobs.memory_mb)
            .zip(&jobs.nodes)
            .zip(&jobs.gpus))
        .map(|(((&cpu, &mem), &node), &gpu)| {
            let mut s = 0.0;
            s += factors::tres(f64::from(cpu), cpus, raw) * t.cpu;
            s += factors::tres(mem as f64, totals.mem_mb, raw) * t.mem;
            s += factors::tres(f64::from(node), nodes, raw) * t.node;
            s += factors::tres(f64::from(gpu), totals.gpus, raw) * t.gpu;
            s
        })
        .collect()
    }
}

#[cfg(feature = "export")]
export_priority!(Multifactor);
