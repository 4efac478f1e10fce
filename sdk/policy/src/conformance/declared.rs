//! Cases a policy declares about itself: what its settings do, checked on the fixtures by
//! loading it twice, with the case's settings and with a baseline. A policy that ignores a
//! setting its author says matters fails here, which no contract check can catch.
//!
//! `sluice plugin test --cases FILE` reads them from TOML (`[[case]]` tables); a policy crate
//! can also build them in its own `cargo test`.

use super::protocol::{MakePriority, MakeSelection};
use super::{CaseResult, case, ensure};
use crate::{PlaceMode, Settings, fixtures};

/// One declared case.
#[derive(Clone, Debug, PartialEq)]
pub struct Declared {
    /// What the case says, shown with its outcome.
    pub name: String,
    /// The settings under test.
    pub settings: Settings,
    /// The settings they are compared with (often none: the policy's defaults).
    pub baseline: Settings,
    /// What must hold between the two.
    pub expect: Expect,
    /// The fixture's clock (Unix seconds), for policies that depend on the date.
    pub now: Option<i64>,
}

/// What a declared case expects of the answers with its settings against the baseline's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The answers differ: the settings take effect.
    Differs,
    /// The answers are the same: the settings change nothing on the fixtures.
    Same,
    /// Priority only: every job of this association (or below it) gets a higher priority,
    /// every other job the same.
    Raises {
        /// An account or user name of the fixture tree (`acct0`…, `user0_0`…).
        association: String,
    },
}

/// The fixture clock when a case names none.
const NOW: i64 = 1_700_000_000;

/// Runs declared priority cases.
pub fn priority(make: &mut MakePriority<'_>, cases: &[Declared]) -> Vec<CaseResult> {
    cases
        .iter()
        .map(|c| {
            let ctx = fixtures::priority_context(c.now.unwrap_or(NOW), 32, 4, 3);
            let jobs = fixtures::job_table(&ctx, 300, 11);
            let with = make(&c.settings).compute(&ctx, &jobs).priority;
            let base = make(&c.baseline).compute(&ctx, &jobs).priority;
            let outcome = match &c.expect {
                Expect::Differs => ensure(with != base, || {
                    "the priorities are the same as with the baseline settings: the settings were ignored".into()
                }),
                Expect::Same => ensure(with == base, || {
                    "the priorities differ from the baseline's".into()
                }),
                Expect::Raises { association } => {
                    let Some(root) = ctx.associations.iter().position(|a| a.name == *association)
                    else {
                        return case(
                            c.name.clone(),
                            Err(format!("no association `{association}` in the fixture tree")),
                        );
                    };
                    let below = |mut at: usize| {
                        for _ in 0..=ctx.associations.len() {
                            if at == root {
                                return true;
                            }
                            match ctx.associations[at].parent {
                                Some(p) => at = p as usize,
                                None => return false,
                            }
                        }
                        false
                    };
                    let wrong = (0..jobs.len()).find(|&i| {
                        let (w, b) = (with.get(i), base.get(i));
                        if below(jobs.association[i] as usize) {
                            w <= b
                        } else {
                            w != b
                        }
                    });
                    ensure(with.len() == jobs.len() && wrong.is_none(), || match wrong {
                        Some(i) => format!(
                            "job {} of {}: priority {:?} against the baseline's {:?}",
                            jobs.job_id[i],
                            ctx.associations[jobs.association[i] as usize].name,
                            with.get(i),
                            base.get(i)
                        ),
                        None => format!("{} priorities for {} jobs", with.len(), jobs.len()),
                    })
                }
            };
            case(c.name.clone(), outcome)
        })
        .collect()
}

/// Runs declared selection cases (`differs` and `same`, on the fixture queue's placements).
pub fn selection(make: &mut MakeSelection<'_>, cases: &[Declared]) -> Vec<CaseResult> {
    let table = fixtures::node_table(64);
    let requests = fixtures::job_requests(64, 60, 13);
    let mut placements = |settings: &Settings| {
        let mut policy = make(settings);
        policy.begin_pass(&table);
        let mut host = table.clone();
        requests
            .iter()
            .map(|r| {
                let p = policy.place(r, PlaceMode::Allocate);
                if let Some(p) = &p
                    && host.check_placement(r, p).is_ok()
                {
                    host.commit(p);
                }
                p.map(|p| p.nodes)
            })
            .collect::<Vec<_>>()
    };
    cases
        .iter()
        .map(|c| {
            let (with, base) = (placements(&c.settings), placements(&c.baseline));
            let outcome = match &c.expect {
                Expect::Differs => ensure(with != base, || {
                    "the placements are the same as with the baseline settings: the settings were ignored".into()
                }),
                Expect::Same => ensure(with == base, || {
                    "the placements differ from the baseline's".into()
                }),
                Expect::Raises { .. } => Err("`raises` is a priority expectation".into()),
            };
            case(c.name.clone(), outcome)
        })
        .collect()
}
