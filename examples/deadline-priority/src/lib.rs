//! Example site policy: favour one project's jobs as its deadline approaches.
//!
//! Every job gets a base priority from how long it has waited and how large it is. Jobs of the
//! project's account (or any account below it) get up to `boost` more, growing linearly over the
//! `window` before the deadline and gone once the deadline has passed: after it, the rush is
//! over and the project queues like everyone else.
//!
//! Settings: `project` (account name), `deadline` (Unix seconds), `boost` (default 100000),
//! `window` (seconds, default 7 days), `weight.age`, `weight.size` (default 1000 each),
//! `max_age` (seconds, default 7 days).

pub mod settings;

use sluice_sdk::*;

use crate::settings::Config;

/// The deadline policy.
#[derive(Clone, Debug, PartialEq)]
pub struct DeadlinePriority {
    /// The settings this generation was built with.
    pub config: Config,
}

impl FromSettings for DeadlinePriority {
    fn from_settings(settings: &Settings) -> Self {
        let (config, warnings) = Config::parse(settings);
        for w in &warnings {
            sluice_sdk::log::warn(w);
        }
        Self { config }
    }
}

impl DeadlinePriority {
    /// How urgent the project is at `now`: 0 before the window, rising to 1 at the deadline,
    /// 0 after it.
    pub fn urgency(&self, now: i64) -> f64 {
        let c = &self.config;
        if c.project.is_none() || now > c.deadline {
            return 0.0;
        }
        let left = c.deadline - now;
        if c.window == 0 {
            return if left == 0 { 1.0 } else { 0.0 };
        }
        (1.0 - left as f64 / c.window as f64).max(0.0)
    }
}

impl PriorityPolicy for DeadlinePriority {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        let c = &self.config;
        let nodes = f64::from(ctx.cluster_nodes.max(1));
        let age: Vec<f64> = jobs
            .eligible_time
            .iter()
            .map(|&t| {
                let waited = (ctx.now - t).max(0) as f64;
                let max = c.max_age.max(1) as f64;
                c.weight_age * (waited / max).min(1.0)
            })
            .collect();
        let size: Vec<f64> = jobs
            .nodes
            .iter()
            .map(|&n| c.weight_size * (f64::from(n) / nodes).min(1.0))
            .collect();
        let boost = c.boost * self.urgency(ctx.now);
        let member = match &c.project {
            Some(project) => ctx.below(project, true),
            None => vec![false; ctx.associations.len()],
        };
        let deadline: Vec<f64> = jobs
            .association
            .iter()
            .map(|&a| {
                if member.get(a as usize).copied().unwrap_or(false) {
                    boost
                } else {
                    0.0
                }
            })
            .collect();
        let priority = age
            .iter()
            .zip(&size)
            .zip(&deadline)
            .map(|((a, s), d)| (a + s + d).clamp(1.0, f64::from(u32::MAX)) as u32)
            .collect();
        let factors = vec![
            Factor {
                name: "AGE".into(),
                values: age,
            },
            Factor {
                name: "JOBSIZE".into(),
                values: size,
            },
            Factor {
                name: "DEADLINE".into(),
                values: deadline,
            },
        ];
        Priorities { priority, factors }
    }
}

export_priority!(DeadlinePriority);
