//! The whole policy: weights, nice, site factor, clamping, the breakdown and conformance.

use sluice_plugin_priority_multifactor::Multifactor;
use sluice_sdk::testing::{self, fixtures};
use sluice_sdk::*;

const NOW: i64 = 1_700_000_000;

fn policy(pairs: &[(&str, SettingValue)]) -> Multifactor {
    let settings = pairs
        .iter()
        .fold(Settings::default(), |s, (k, v)| s.with(k, v.clone()));
    Multifactor::from_settings(&settings)
}

fn int(v: i64) -> SettingValue {
    SettingValue::Integer(v)
}

/// Two partitions (factors 10 and 5), three QOS (1000, 500, 0), one account with two users of
/// equal shares where `u_busy` used everything.
fn context() -> PriorityContext {
    let assoc = |name: &str, parent: Option<u32>, is_user: bool, raw_usage: f64| Association {
        name: name.into(),
        parent,
        is_user,
        raw_shares: 1,
        priority: 0,
        raw_usage,
    };
    PriorityContext {
        now: NOW,
        cluster_version: 0,
        cluster_nodes: 4,
        cluster_cpus: 64,
        partitions: vec![
            Partition {
                name: "test".into(),
                priority_job_factor: 10,
                priority_tier: 100,
            },
            Partition {
                name: "half".into(),
                priority_job_factor: 5,
                priority_tier: 1,
            },
        ],
        qos: vec![
            Qos {
                name: "interactive".into(),
                priority: 1000,
                usage_factor: 1.0,
            },
            Qos {
                name: "2h".into(),
                priority: 500,
                usage_factor: 1.0,
            },
            Qos {
                name: "normal".into(),
                priority: 0,
                usage_factor: 1.0,
            },
        ],
        associations: vec![
            assoc("root", None, false, 100.0),
            assoc("acct", Some(0), false, 100.0),
            assoc("u_idle", Some(1), true, 0.0),
            assoc("u_busy", Some(1), true, 100.0),
        ],
        skip_factors: false,
    }
}

/// One job per entry of `edits`, each edit applied to its own (last) row, starting from a 1-node, 16-CPU job of `u_idle` in
/// partition `half` and QOS `normal` that became eligible an hour ago.
fn jobs(edits: &[&dyn Fn(&mut JobTable)]) -> JobTable {
    let mut t = JobTable::default();
    for (i, edit) in edits.iter().enumerate() {
        t.job_id.push(i as u32 + 1);
        t.submit_time.push(NOW - 3600);
        t.eligible_time.push(NOW - 3600);
        t.association.push(2);
        t.partition.push(1);
        t.qos.push(2);
        t.nodes.push(1);
        t.cpus.push(16);
        t.memory_mb.push(4096);
        t.gpus.push(0);
        t.time_limit.push(3600);
        t.nice.push(0);
        t.site_factor.push(0);
        edit(&mut t);
    }
    t
}

fn last(t: &mut JobTable) -> usize {
    t.len() - 1
}

fn factor<'a>(p: &'a Priorities, name: &str) -> &'a [f64] {
    &p.factors
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name} factor"))
        .values
}

#[test]
fn half_the_maximum_qos_and_partition_give_half_the_weight() {
    // test24.6/24.7: weight 4,000,000 and a QOS or partition at half the maximum priority.
    let mut p = policy(&[
        ("weight.qos", int(4_000_000)),
        ("weight.partition", int(4_000_000)),
    ]);
    let t = jobs(&[&|t| {
        let i = last(t);
        t.qos[i] = 1;
    }]);
    let out = testing::priorities(&mut p, &context(), &t);
    assert_eq!(factor(&out, "QOS"), &[2_000_000.0]);
    assert_eq!(factor(&out, "PARTITION"), &[2_000_000.0]);
    assert_eq!(out.priority, vec![4_000_000]);
}

#[test]
fn the_association_factor_is_the_job_s_association_priority_over_the_largest() {
    let mut ctx = context();
    ctx.associations[2].priority = 250;
    ctx.associations[3].priority = 1000;
    let mut p = policy(&[("weight.assoc", int(4_000_000))]);
    let t = jobs(&[&|_| {}, &|t| {
        let i = last(t);
        t.association[i] = 3;
    }]);
    let out = testing::priorities(&mut p, &ctx, &t);
    assert_eq!(factor(&out, "ASSOC"), &[1_000_000.0, 4_000_000.0]);
    assert_eq!(out.priority, vec![1_000_000, 4_000_000]);
    // NO_NORMAL_ASSOC keeps the priority itself.
    let mut raw = policy(&[
        ("weight.assoc", int(3)),
        ("flags", SettingValue::Text("NO_NORMAL_ASSOC".into())),
    ]);
    let out = testing::priorities(&mut raw, &ctx, &t);
    assert_eq!(factor(&out, "ASSOC"), &[750.0, 3000.0]);
}

#[test]
fn no_normal_flags_use_raw_values() {
    let mut p = policy(&[
        ("weight.qos", int(3)),
        ("weight.partition", int(7)),
        (
            "flags",
            SettingValue::Text("NO_NORMAL_QOS, no_normal_part".into()),
        ),
    ]);
    let t = jobs(&[&|t| {
        let i = last(t);
        t.qos[i] = 1;
    }]);
    let out = testing::priorities(&mut p, &context(), &t);
    assert_eq!(factor(&out, "QOS"), &[1500.0]);
    assert_eq!(factor(&out, "PARTITION"), &[35.0]);
    assert_eq!(out.priority, vec![1535]);
}

#[test]
fn tres_cpu_factor_is_cpus_over_cluster_cpus() {
    let mut p = policy(&[
        ("weight.tres.cpu", int(1000)),
        ("weight.tres.gres/gpu", int(800)),
        ("cluster_tres.gres/gpu", int(16)),
    ]);
    let t = jobs(&[&|t| {
        let i = last(t);
        t.gpus[i] = 4;
    }]);
    let out = testing::priorities(&mut p, &context(), &t);
    assert_eq!(
        factor(&out, "TRES"),
        &[16.0 / 64.0 * 1000.0 + 4.0 / 16.0 * 800.0]
    );
    assert_eq!(out.priority, vec![450]);
}

#[test]
fn age_counts_from_eligibility_unless_accrue_always() {
    let t = jobs(&[&|t| {
        let i = last(t);
        t.submit_time[i] = NOW - 7200;
        t.eligible_time[i] = NOW - 1800;
    }]);
    let mut p = policy(&[("weight.age", int(10_000)), ("max_age", int(7200))]);
    assert_eq!(
        testing::priorities(&mut p, &context(), &t).priority,
        vec![2500]
    );
    let mut p = policy(&[
        ("weight.age", int(10_000)),
        ("max_age", int(7200)),
        ("flags", SettingValue::Text("ACCRUE_ALWAYS".into())),
    ]);
    assert_eq!(
        testing::priorities(&mut p, &context(), &t).priority,
        vec![10_000]
    );
}

#[test]
fn default_max_age_is_seven_days() {
    let t = jobs(&[&|t| {
        let i = last(t);
        t.eligible_time[i] = NOW - 7 * 86_400 / 4;
    }]);
    let mut p = policy(&[("weight.age", int(1000))]);
    assert_eq!(
        testing::priorities(&mut p, &context(), &t).priority,
        vec![250]
    );
}

#[test]
fn fairshare_is_the_fair_tree_factor_of_the_jobs_user() {
    let mut p = policy(&[("weight.fairshare", int(100_000))]);
    let t = jobs(&[&|_| {}, &|t| {
        let i = last(t);
        t.association[i] = 3;
    }]);
    let out = testing::priorities(&mut p, &context(), &t);
    // Two users: the idle one ranks first (2/2), the busy one second (1/2).
    assert_eq!(factor(&out, "FAIRSHARE"), &[100_000.0, 50_000.0]);
    assert_eq!(out.priority, vec![100_000, 50_000]);
}

#[test]
fn one_policy_called_again_answers_as_a_fresh_one_when_usage_changes_or_not() {
    let settings = [
        ("weight.fairshare", int(100_000)),
        ("weight.age", int(1000)),
    ];
    let mut reused = policy(&settings);
    let t = jobs(&[&|_| {}, &|t| {
        let i = last(t);
        t.association[i] = 3;
    }]);
    let busy_idle = context();
    let mut swapped = context();
    swapped.associations[2].raw_usage = 100.0;
    swapped.associations[3].raw_usage = 0.0;
    swapped.now += 600;
    // The same tree twice, another, then the first again: the reused policy must follow.
    for ctx in [&busy_idle, &busy_idle, &swapped, &busy_idle] {
        let fresh = testing::priorities(&mut policy(&settings), ctx, &t);
        assert_eq!(testing::priorities(&mut reused, ctx, &t), fresh);
    }
    let first = testing::priorities(&mut reused, &busy_idle, &t);
    let second = testing::priorities(&mut reused, &swapped, &t);
    assert_ne!(factor(&first, "FAIRSHARE"), factor(&second, "FAIRSHARE"));
}

#[test]
fn favor_small_ranks_smaller_jobs_higher() {
    let t = jobs(&[&|_| {}, &|t| {
        let i = last(t);
        t.nodes[i] = 4;
        t.cpus[i] = 64;
    }]);
    let mut large = policy(&[("weight.jobsize", int(1000))]);
    let out = testing::priorities(&mut large, &context(), &t);
    assert_eq!(
        out.priority,
        vec![(1000.0 * (0.25 + 0.25) / 2.0) as u32, 1000]
    );
    let mut small = policy(&[
        ("weight.jobsize", int(1000)),
        ("favor_small", SettingValue::Boolean(true)),
    ]);
    let out = testing::priorities(&mut small, &context(), &t);
    assert_eq!(out.priority, vec![750, 1]);
}

#[test]
fn nice_subtracts_exactly_and_negative_nice_adds() {
    let mut p = policy(&[("weight.qos", int(10_000))]);
    let t = jobs(&[
        &|t| {
            let i = last(t);
            t.qos[i] = 0;
        },
        &|t| {
            let i = last(t);
            t.qos[i] = 0;
            t.nice[i] = 100;
        },
        &|t| {
            let i = last(t);
            t.qos[i] = 0;
            t.nice[i] = -50;
        },
    ]);
    let out = testing::priorities(&mut p, &context(), &t);
    assert_eq!(out.priority, vec![10_000, 9_900, 10_050]);
    assert_eq!(factor(&out, "NICE"), &[0.0, -100.0, 50.0]);
}

#[test]
fn priority_never_drops_below_one_and_saturates_at_32_bits() {
    let mut p = policy(&[
        ("weight.qos", int(u32::MAX as i64)),
        ("weight.partition", int(u32::MAX as i64)),
    ]);
    let t = jobs(&[
        &|t| {
            let i = last(t);
            t.qos[i] = 0;
            t.partition[i] = 0;
        },
        &|t| {
            let i = last(t);
            t.qos[i] = 2;
            t.partition[i] = 1;
            t.nice[i] = 2_147_483_645;
        },
    ]);
    let out = testing::priorities(&mut p, &context(), &t);
    // Half of u32::MAX is 2147483647.5; less the largest nice leaves 2.5, truncated to 2.
    assert_eq!(out.priority, vec![u32::MAX, 2]);
    let mut p = policy(&[("weight.qos", int(100))]);
    let t = jobs(&[&|t| {
        let i = last(t);
        t.qos[i] = 0;
        t.nice[i] = 1000;
    }]);
    assert_eq!(
        testing::priorities(&mut p, &context(), &t).priority,
        vec![1]
    );
}

#[test]
fn site_factor_adds_to_the_sum() {
    let mut p = policy(&[("weight.qos", int(1000))]);
    let t = jobs(&[&|t| {
        let i = last(t);
        t.qos[i] = 1;
        t.site_factor[i] = 123;
    }]);
    let out = testing::priorities(&mut p, &context(), &t);
    assert_eq!(factor(&out, "SITE"), &[123.0]);
    assert_eq!(out.priority, vec![623]);
}

#[test]
fn breakdown_uses_sprio_names_and_sums_to_the_priority() {
    let mut p = policy(&[
        ("weight.age", int(10_000)),
        ("weight.fairshare", int(100_000)),
        ("weight.jobsize", int(1000)),
        ("weight.partition", int(1_000_000)),
        ("weight.qos", int(10_000)),
        ("weight.tres.cpu", int(50)),
    ]);
    let ctx = fixtures::priority_context(NOW, 32, 4, 3);
    let t = fixtures::job_table(&ctx, 300, 5);
    let out = testing::priorities(&mut p, &ctx, &t);
    let names: Vec<&str> = out.factors.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "AGE",
            "FAIRSHARE",
            "JOBSIZE",
            "PARTITION",
            "QOS",
            "TRES",
            "NICE"
        ]
    );
    for i in 0..t.len() {
        let sum: f64 = out.factors.iter().map(|f| f.values[i]).sum();
        assert_eq!(out.priority[i], sum.max(1.0) as u32, "job {i}");
    }
}

#[test]
fn with_slurms_defaults_every_job_gets_priority_one() {
    let mut p = policy(&[]);
    let ctx = fixtures::priority_context(NOW, 32, 4, 3);
    let mut t = fixtures::job_table(&ctx, 50, 6);
    t.nice.iter_mut().for_each(|n| *n = 0);
    let out = testing::priorities(&mut p, &ctx, &t);
    assert!(out.priority.iter().all(|&p| p == 1));
    assert!(out.factors.is_empty());
}

#[test]
fn gwdg_weights_put_the_test_partition_first() {
    // The site's weights: partition 1,000,000 outweighs everything else together (121,000).
    let mut p = policy(&[
        ("weight.age", int(10_000)),
        ("weight.fairshare", int(100_000)),
        ("weight.jobsize", int(1000)),
        ("weight.partition", int(1_000_000)),
        ("weight.qos", int(10_000)),
        ("max_age", int(5 * 86_400)),
    ]);
    let mut ctx = fixtures::priority_context(NOW, 32, 4, 3);
    ctx.partitions[0].priority_job_factor = 10;
    ctx.partitions[1].priority_job_factor = 1;
    let mut t = fixtures::job_table(&ctx, 400, 8);
    t.nice.iter_mut().for_each(|n| *n = 0);
    let out = testing::priorities(&mut p, &ctx, &t);
    let lowest_test = (0..t.len())
        .filter(|&i| t.partition[i] == 0)
        .map(|i| out.priority[i])
        .min()
        .unwrap();
    let highest_other = (0..t.len())
        .filter(|&i| t.partition[i] == 1)
        .map(|i| out.priority[i])
        .max()
        .unwrap();
    assert!(
        lowest_test > highest_other,
        "{lowest_test} <= {highest_other}"
    );
}

#[test]
fn shares_has_one_row_per_association() {
    let ctx = fixtures::priority_context(NOW, 32, 4, 3);
    let shares = policy(&[]).shares(&ctx);
    assert_eq!(shares.len(), ctx.associations.len());
    for s in &shares {
        let a = &ctx.associations[s.association as usize];
        if a.is_user {
            assert!(
                s.fair_share > 0.0 && s.fair_share <= 1.0,
                "{}: {}",
                a.name,
                s.fair_share
            );
        } else {
            assert!(
                s.fair_share.is_nan(),
                "accounts have no FairShare in Fair Tree"
            );
        }
    }
}

#[test]
fn conformance() {
    let mut p = policy(&[
        ("weight.age", int(1000)),
        ("weight.fairshare", int(10_000)),
        ("weight.jobsize", int(100)),
    ]);
    testing::assert_conformant(&testing::conformance::priority(&mut p));
    testing::assert_conformant(&testing::conformance::priority(&mut policy(&[])));
}

#[test]
fn a_long_lived_instance_answers_as_a_fresh_one() {
    testing::assert_conformant(&testing::conformance::protocol::priority(&mut |s| {
        Box::new(Multifactor::from_settings(s))
    }));
}
