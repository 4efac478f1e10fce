//! The weekend boost on top of multifactor: exactly multifactor's answers except for the
//! boosted association's jobs on weekends, and a KTH replay that changes only through them.

use std::collections::BTreeMap;
use std::path::Path;

use sluice_engine::Policies;
use sluice_example_multifactor_boost::{WeekendBoost, is_weekend};
use sluice_plugin_priority_multifactor::Multifactor;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_sdk::testing::fixtures;
use sluice_sdk::*;
use sluice_sim::scheduler::{EngineOptions, EngineScheduler, FlatMachine};
use sluice_sim::{MemoryWorkload, ReplayConfig, RuntimeMode, Workload, WorkloadJob, replay};

/// 2023-11-18, a Saturday, and 2023-11-20, a Monday (UTC noon).
const SATURDAY: i64 = 1_700_308_800;
const MONDAY: i64 = 1_700_481_600;

fn multifactor_settings() -> Settings {
    Settings::default()
        .with("weight.fairshare", SettingValue::Integer(100_000))
        .with("weight.age", SettingValue::Integer(10))
}

fn boost(association: &str, amount: i64) -> WeekendBoost {
    WeekendBoost::from_settings(
        &multifactor_settings()
            .with("boost.association", SettingValue::Text(association.into()))
            .with("boost.amount", SettingValue::Integer(amount)),
    )
}

#[test]
fn weekends_are_saturday_and_sunday_utc() {
    assert!(is_weekend(SATURDAY) && is_weekend(SATURDAY + 86_400));
    assert!(!is_weekend(MONDAY) && !is_weekend(SATURDAY - 86_400));
    // 1970-01-03, the first Saturday of the epoch.
    assert!(is_weekend(2 * 86_400) && !is_weekend(0));
}

#[test]
fn answers_are_multifactors_except_the_boosted_accounts_jobs_on_weekends() {
    for now in [SATURDAY, MONDAY] {
        let ctx = fixtures::priority_context(now, 32, 4, 3);
        let jobs = fixtures::job_table(&ctx, 300, 7);
        let plain = Multifactor::from_settings(&multifactor_settings()).compute(&ctx, &jobs);
        let boosted = boost("acct1", 5_000).compute(&ctx, &jobs);
        let in_acct1 = |i: usize| {
            let user = &ctx.associations[jobs.association[i] as usize];
            ctx.associations[user.parent.unwrap() as usize].name == "acct1"
        };
        let mut raised = 0;
        for i in 0..jobs.len() {
            let expected = if is_weekend(now) && in_acct1(i) {
                raised += 1;
                plain.priority[i] + 5_000
            } else {
                plain.priority[i]
            };
            assert_eq!(boosted.priority[i], expected, "job {i} at {now}");
        }
        assert_eq!(raised > 0, is_weekend(now), "the fixture has acct1 jobs");
    }
}

fn kth() -> Vec<WorkloadJob> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../host/sim/tests/data/KTH-SP2-1996-2.1-cln.swf.gz");
    Workload::open(&path)
        .expect("the KTH trace opens")
        .collect::<Result<_, _>>()
        .expect("the KTH trace reads")
}

/// Start time by job id of a KTH replay on 100 one-CPU nodes with `priority`.
fn starts(jobs: &[WorkloadJob], priority: Box<dyn PriorityPolicy + Send>) -> BTreeMap<u64, i64> {
    let cluster = FlatMachine {
        procs: 100,
        cpus_per_node: 1,
    }
    .cluster()
    .unwrap();
    let policies = Policies {
        priority,
        selection: Box::new(ConsTres::from_settings(&Settings::default())),
        hres: None,
        gres: Vec::new(),
    };
    let options = EngineOptions::for_cluster("slurm", &cluster);
    let mut scheduler = EngineScheduler::new(cluster, policies, options);
    let config = ReplayConfig {
        procs: 100,
        runtime: RuntimeMode::RunToCompletion,
        keep_records: true,
    };
    let out = replay(
        &mut MemoryWorkload::new(jobs, 0, None),
        &mut scheduler,
        &config,
        (),
    )
    .expect("KTH replays");
    assert_eq!(out.records.len(), jobs.len(), "every job ran");
    out.records.iter().map(|r| (r.id, r.start)).collect()
}

#[test]
fn a_kth_replay_changes_only_through_the_boosted_users_jobs() {
    let jobs = kth();
    // The user with the most jobs, as the replay names SWF users.
    let mut count: BTreeMap<i64, usize> = BTreeMap::new();
    for j in &jobs {
        *count.entry(j.swf.user).or_default() += 1;
    }
    let (&top, _) = count.iter().max_by_key(|(_, n)| **n).unwrap();
    let user = format!("u{top}");

    let plain = starts(
        &jobs,
        Box::new(Multifactor::from_settings(&multifactor_settings())),
    );
    let nobody = starts(&jobs, Box::new(boost("nobody", 1_000_000)));
    assert_eq!(
        plain, nobody,
        "a boost that applies to no job changes nothing"
    );

    let boosted = starts(&jobs, Box::new(boost(&user, 1_000_000)));
    assert_ne!(plain, boosted, "{user}'s weekend jobs jump the queue");
    let wait = |s: &BTreeMap<u64, i64>, theirs: bool| -> i64 {
        jobs.iter()
            .filter(|j| (j.swf.user == top) == theirs)
            .map(|j| s[&j.id] - j.submit)
            .sum()
    };
    assert!(
        wait(&boosted, true) < wait(&plain, true),
        "{user} waits less in total with the boost"
    );
}
