//! Example site policy built on the bundle: Slurm's multifactor priority (Fair Tree and all),
//! plus a boost on weekends for the jobs of one association and everything below it.
//!
//! It shows how a site extends a bundled policy instead of re-implementing it: depend on the
//! plugin crate without its `export` feature, wrap its policy, export the wrapper.
//!
//! Settings: every multifactor setting, plus `boost.association` (an account or user name),
//! `boost.amount` (added on Saturdays and Sundays, UTC; default 100000). Without
//! `boost.association` the answers are multifactor's, exactly.

use sluice_plugin_priority_multifactor::Multifactor;
use sluice_sdk::*;

/// The prefix of this policy's own settings; the rest are multifactor's.
const PREFIX: &str = "boost.";

/// Multifactor plus the weekend boost.
pub struct WeekendBoost {
    /// The bundled policy this one builds on.
    pub multifactor: Multifactor,
    /// The association whose jobs (and whose descendants' jobs) are boosted.
    pub association: Option<String>,
    /// What is added to their priority on weekends.
    pub amount: u32,
}

impl FromSettings for WeekendBoost {
    fn from_settings(settings: &Settings) -> Self {
        // Multifactor warns about keys it does not know: it gets only its own.
        let (own, theirs): (Vec<Setting>, Vec<Setting>) = settings
            .0
            .iter()
            .cloned()
            .partition(|s| s.key.starts_with(PREFIX));
        let own = Settings(own);
        for warning in own.unknown_keys(&["boost.association", "boost.amount"]) {
            sluice_sdk::log::warn(&warning);
        }
        Self {
            multifactor: Multifactor::from_settings(&Settings(theirs)),
            association: own.text("boost.association").map(str::to_string),
            amount: own
                .i64_or("boost.amount", 100_000)
                .clamp(0, i64::from(u32::MAX)) as u32,
        }
    }
}

/// Whether `now` (Unix seconds) falls on a Saturday or Sunday, UTC.
pub fn is_weekend(now: i64) -> bool {
    // 1970-01-01 was a Thursday: day 0 of the week count below is a Sunday.
    let weekday = (now.div_euclid(86_400) + 4).rem_euclid(7);
    weekday == 0 || weekday == 6
}

impl PriorityPolicy for WeekendBoost {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        let mut answer = self.multifactor.compute(ctx, jobs);
        let Some(name) = self.association.as_deref().filter(|_| is_weekend(ctx.now)) else {
            return answer;
        };
        let boosted = ctx.below(name, false);
        let mut factor = vec![0.0; jobs.len()];
        for (i, &a) in jobs.association.iter().enumerate() {
            if boosted.get(a as usize).copied().unwrap_or(false) {
                answer.priority[i] = answer.priority[i].saturating_add(self.amount);
                factor[i] = f64::from(self.amount);
            }
        }
        if !answer.factors.is_empty() {
            answer.factors.push(Factor {
                name: "WEEKEND".into(),
                values: factor,
            });
        }
        answer
    }

    fn shares(&mut self, ctx: &PriorityContext) -> Vec<Share> {
        self.multifactor.shares(ctx)
    }
}

export_priority!(WeekendBoost);
