//! The deadline policy under the SDK harness: the boost's shape, who gets it, and conformance.

use sluice_example_deadline_priority::DeadlinePriority;
use sluice_sdk::testing::{self, fixtures};
use sluice_sdk::*;

const DEADLINE: i64 = 1_700_000_000;
const DAY: i64 = 86_400;

fn policy(extra: &[(&str, SettingValue)]) -> DeadlinePriority {
    let base = Settings::default()
        .with("project", SettingValue::Text("acct1".into()))
        .with("deadline", SettingValue::Integer(DEADLINE))
        .with("boost", SettingValue::Integer(50_000))
        .with("window", SettingValue::Integer(10 * DAY));
    DeadlinePriority::from_settings(&extra.iter().fold(base, |s, (k, v)| s.with(k, v.clone())))
}

/// The fixture tree (accounts acct0..acct3 with three users each) at time `now`, and one
/// identical job for every user, so that only the account can make priorities differ.
fn queue(now: i64) -> (PriorityContext, JobTable) {
    let ctx = fixtures::priority_context(now, 32, 4, 3);
    let mut jobs = fixtures::job_table(&ctx, 0, 1);
    for (i, _) in ctx
        .associations
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_user)
    {
        jobs.job_id.push(jobs.len() as u32 + 1);
        jobs.submit_time.push(now - DAY);
        jobs.eligible_time.push(now - DAY);
        jobs.association.push(i as u32);
        jobs.partition.push(0);
        jobs.qos.push(0);
        jobs.nodes.push(2);
        jobs.cpus.push(8);
        jobs.memory_mb.push(1024);
        jobs.gpus.push(0);
        jobs.time_limit.push(3600);
        jobs.nice.push(0);
        jobs.site_factor.push(0);
    }
    (ctx, jobs)
}

fn in_acct1(ctx: &PriorityContext, jobs: &JobTable, row: usize) -> bool {
    let user = &ctx.associations[jobs.association[row] as usize];
    ctx.associations[user.parent.unwrap() as usize].name == "acct1"
}

/// (lowest project priority − highest other priority) at `now`.
fn lead(p: &mut DeadlinePriority, now: i64) -> i64 {
    let (ctx, jobs) = queue(now);
    let out = testing::priorities(p, &ctx, &jobs);
    let rows = 0..jobs.len();
    let project = rows
        .clone()
        .filter(|&r| in_acct1(&ctx, &jobs, r))
        .map(|r| out.priority[r] as i64)
        .min()
        .unwrap();
    let other = rows
        .filter(|&r| !in_acct1(&ctx, &jobs, r))
        .map(|r| out.priority[r] as i64)
        .max()
        .unwrap();
    project - other
}

#[test]
fn no_boost_before_the_window_opens() {
    assert_eq!(lead(&mut policy(&[]), DEADLINE - 30 * DAY), 0);
    assert_eq!(lead(&mut policy(&[]), DEADLINE - 10 * DAY), 0);
}

#[test]
fn boost_grows_as_the_deadline_approaches_and_is_full_at_it() {
    let mut p = policy(&[]);
    let leads: Vec<i64> = (0..=10)
        .rev()
        .map(|d| lead(&mut p, DEADLINE - d * DAY))
        .collect();
    assert!(
        leads.windows(2).all(|w| w[0] < w[1]),
        "not strictly growing: {leads:?}"
    );
    assert_eq!(leads[5], 25_000);
    assert_eq!(*leads.last().unwrap(), 50_000);
}

#[test]
fn boost_stops_after_the_deadline() {
    assert_eq!(lead(&mut policy(&[]), DEADLINE + 1), 0);
    assert_eq!(lead(&mut policy(&[]), DEADLINE + 30 * DAY), 0);
}

#[test]
fn breakdown_shows_the_boost_only_on_project_jobs() {
    let (ctx, jobs) = queue(DEADLINE - 2 * DAY);
    let out = testing::priorities(&mut policy(&[]), &ctx, &jobs);
    let boost = &out
        .factors
        .iter()
        .find(|f| f.name == "DEADLINE")
        .unwrap()
        .values;
    for (r, b) in boost.iter().enumerate() {
        assert_eq!(*b > 0.0, in_acct1(&ctx, &jobs, r), "row {r}");
    }
}

#[test]
fn without_a_project_nobody_is_boosted() {
    let mut p = DeadlinePriority::from_settings(
        &Settings::default().with("deadline", SettingValue::Integer(DEADLINE)),
    );
    assert_eq!(lead(&mut p, DEADLINE), 0);
}

#[test]
fn base_priority_prefers_longer_waits_and_larger_jobs() {
    let mut p = policy(&[
        ("weight.age", SettingValue::Integer(700)),
        ("weight.size", SettingValue::Integer(3200)),
    ]);
    let (ctx, mut jobs) = queue(DEADLINE - 30 * DAY);
    jobs.eligible_time[1] = ctx.now - 7 * DAY;
    jobs.nodes[2] = 32;
    let out = testing::priorities(&mut p, &ctx, &jobs);
    // 1 day of a 7-day max age is 100; 2 of 32 nodes is 200.
    assert_eq!(out.priority[0], 300);
    assert_eq!(out.priority[1], 900);
    assert_eq!(out.priority[2], 3300);
}

#[test]
fn conformance() {
    testing::assert_conformant(&testing::conformance::priority(&mut policy(&[])));
}
