//! The priority contract's `set-cluster` protocol: a priority component is sent the cluster's
//! static part when, and only when, the instance does not hold it yet (first call, a change, a
//! fresh instance after a trap), and only the associations a grown cluster appended; every job
//! column reaches an SDK component as the host holds it; a component brings its factors back
//! only when they are wanted; and a component built against another contract is refused.

use sluice_policy::{
    Association, JobTable, PluginKind, Priorities, PriorityContext, Settings, fixtures,
};
use sluice_runtime::backend::PriorityBackend;
use sluice_runtime::{Fault, Limits, Loaded};

use crate::support::*;
use sluice_test_guests::priority_probe::{ADD_ASSOCIATIONS, ASSOCIATIONS, SET_CLUSTER, TRAP_JOB};
use sluice_test_guests::usage_priority;

const NOW: i64 = 1_700_000_000;

/// The probe guest, loaded without the smoke call.
const PROBE: &str = "priority_probe";

/// The priority test guest `guest`, loaded without the smoke call.
fn priority_component(guest: &str) -> Box<dyn PriorityBackend> {
    match unsmoked_component(PluginKind::Priority, guest) {
        Loaded::Priority(g) => g.backend,
        _ => unreachable!("loaded as a priority plugin"),
    }
}

/// What the fixtures' policy answers for `jobs` in `ctx`, computed here from the host's data.
fn expected(ctx: &PriorityContext, jobs: &JobTable) -> Vec<u32> {
    jobs.submit_time
        .iter()
        .zip(&jobs.association)
        .map(|(&t, &a)| {
            usage_priority::priority(ctx.now, t, ctx.associations[a as usize].raw_usage)
        })
        .collect()
}

/// Every value of the factor `name`, which the probe makes the same for every job.
fn probe_factor(p: &Priorities, name: &str) -> f64 {
    let values = &p
        .factors
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name} factor in {p:?}"))
        .values;
    assert!(values.windows(2).all(|w| w[0] == w[1]), "{values:?}");
    values[0]
}

/// `ctx` an hour later, after usage decayed and some associations used more: every usage value
/// differs and the users' order by usage changes.
fn decayed(ctx: &PriorityContext) -> PriorityContext {
    let mut later = ctx.clone();
    later.now += 3600;
    for (i, a) in later.associations.iter_mut().enumerate() {
        a.raw_usage = a.raw_usage * 0.5 + (i * 7919 % 1000) as f64 * 500.0;
    }
    later
}

/// Checks one probe answer: the guest's priorities for this context (so the usage column and
/// the held cluster match what the host meant), and how many set-cluster and add-associations
/// calls it has seen.
fn check_probe(
    probe: &mut dyn PriorityBackend,
    ctx: &PriorityContext,
    jobs: &JobTable,
    set_cluster_calls: u32,
    appends: u32,
) {
    let answer = probe.compute(ctx, jobs).expect("the probe answers");
    assert_eq!(answer.priority, expected(ctx, jobs), "priorities");
    assert_eq!(
        probe_factor(&answer, SET_CLUSTER),
        f64::from(set_cluster_calls),
        "set-cluster calls so far"
    );
    assert_eq!(
        probe_factor(&answer, ADD_ASSOCIATIONS),
        f64::from(appends),
        "add-associations calls so far"
    );
    assert_eq!(
        probe_factor(&answer, ASSOCIATIONS),
        ctx.associations.len() as f64,
        "associations the guest holds"
    );
}

/// Checks that `shares` echoes every association of `ctx` as the guest holds it (name, parent,
/// kind, shares) with its usage: the guest's cluster is `ctx`'s.
fn assert_shares_echo(probe: &mut dyn PriorityBackend, ctx: &PriorityContext) {
    let shares = probe.shares(ctx).unwrap();
    assert_eq!(shares.len(), ctx.associations.len());
    for (s, a) in shares.iter().zip(&ctx.associations) {
        let echo =
            usage_priority::share_echo(a.raw_shares, a.raw_usage, &a.name, a.is_user, a.parent);
        assert_eq!(
            (s.norm_shares, s.effective_usage, s.fair_share, s.level_fs),
            echo,
            "association {}",
            a.name
        );
    }
}

#[test]
fn a_component_built_against_another_contract_is_refused_with_a_rebuild_message() {
    let spec = guest_spec(
        PluginKind::Priority,
        "priority_other_contract",
        Settings::default(),
        Limits::default(),
    );
    let Err(e) = loader().load(&spec) else {
        panic!("a sluice:policy@0.6.0 component loaded");
    };
    let text = e.to_string();
    assert!(
        text.contains("sluice:policy/priority@0.6.0")
            && text.contains(sluice_policy::WIT_PACKAGE)
            && text.contains("rebuild it"),
        "{text}"
    );
}

#[test]
fn set_cluster_is_sent_first_and_then_only_when_the_static_part_changes() {
    {
        let mut probe = priority_component(PROBE);
        let ctx = fixtures::priority_context(NOW, 16, 3, 4);
        let jobs = fixtures::job_table(&ctx, 200, 9);
        check_probe(&mut *probe, &ctx, &jobs, 1, 0);
        // Usage and clock are not the static part: they cross with every call.
        let later = decayed(&ctx);
        check_probe(&mut *probe, &later, &jobs, 1, 0);
        check_probe(&mut *probe, &decayed(&later), &jobs, 1, 0);
        let shares = probe.shares(&later).unwrap();
        let usage: Vec<f64> = shares.iter().map(|s| s.effective_usage).collect();
        let want: Vec<f64> = later.associations.iter().map(|a| a.raw_usage).collect();
        assert_eq!(usage, want, "shares gets the usage column too");
        check_probe(&mut *probe, &later, &jobs, 1, 0);

        // A new user's first job creates an association: only it crosses.
        let mut grown = later.clone();
        grown.associations.push(user("newcomer", 1));
        check_probe(&mut *probe, &grown, &jobs, 1, 1);
        check_probe(&mut *probe, &decayed(&grown), &jobs, 1, 1);

        // Each part of the static part counts, and only once per change.
        let mut renamed = grown.clone();
        renamed.associations[2].name.push_str("-renamed");
        check_probe(&mut *probe, &renamed, &jobs, 2, 1);
        let mut reshared = renamed.clone();
        reshared.associations[2].raw_shares += 1;
        check_probe(&mut *probe, &reshared, &jobs, 3, 1);
        let mut reprioritized = reshared.clone();
        reprioritized.associations[2].priority += 10;
        check_probe(&mut *probe, &reprioritized, &jobs, 4, 1);
        let mut repartitioned = reprioritized.clone();
        repartitioned.partitions[1].priority_job_factor += 1;
        check_probe(&mut *probe, &repartitioned, &jobs, 5, 1);
        let mut requalified = repartitioned.clone();
        requalified.qos[1].usage_factor = f64::NAN;
        check_probe(&mut *probe, &requalified, &jobs, 6, 1);
        // NaN is compared by bit pattern, so it does not resend every pass.
        check_probe(&mut *probe, &requalified, &jobs, 6, 1);
        let mut resized = requalified.clone();
        resized.cluster_cpus += 64;
        check_probe(&mut *probe, &resized, &jobs, 7, 1);
        check_probe(&mut *probe, &decayed(&resized), &jobs, 7, 1);
    }
}

#[test]
fn a_context_naming_the_cluster_version_last_found_current_is_not_compared_again() {
    {
        let mut probe = priority_component(PROBE);
        let mut ctx = fixtures::priority_context(NOW, 16, 3, 4);
        ctx.cluster_version = 7;
        let jobs = fixtures::job_table(&ctx, 200, 9);
        check_probe(&mut *probe, &ctx, &jobs, 1, 0);
        check_probe(&mut *probe, &decayed(&ctx), &jobs, 1, 0);
        let set_cluster_calls = |probe: &mut dyn PriorityBackend, ctx: &PriorityContext| {
            probe_factor(&probe.compute(ctx, &jobs).unwrap(), SET_CLUSTER)
        };
        // The same version is the host's word that nothing static changed: not compared, not sent.
        let mut renamed = decayed(&ctx);
        renamed.associations[2].name.push_str("-renamed");
        assert_eq!(set_cluster_calls(&mut *probe, &renamed), 1.0);
        // A new version is compared once: equal, so not sent, and remembered.
        let mut same = decayed(&ctx);
        same.cluster_version = 8;
        assert_eq!(set_cluster_calls(&mut *probe, &same), 1.0);
        // Another new version with a change is sent; so is any change without a version.
        renamed.cluster_version = 9;
        check_probe(&mut *probe, &renamed, &jobs, 2, 0);
        let mut reshared = renamed.clone();
        reshared.cluster_version = 0;
        reshared.associations[3].raw_shares += 1;
        check_probe(&mut *probe, &reshared, &jobs, 3, 0);
    }
}

#[test]
fn a_fresh_instance_after_a_trap_is_sent_the_cluster_again() {
    {
        let mut probe = priority_component(PROBE);
        let ctx = fixtures::priority_context(NOW, 16, 3, 4);
        let jobs = fixtures::job_table(&ctx, 200, 9);
        check_probe(&mut *probe, &ctx, &jobs, 1, 0);
        check_probe(&mut *probe, &ctx, &jobs, 1, 0);

        let mut poisoned = jobs.clone();
        poisoned.job_id[0] = TRAP_JOB;
        let fault = probe.compute(&ctx, &poisoned).expect_err("the probe traps");
        assert!(matches!(fault, Fault::Trap(_)), "{fault}");

        // The trap discarded the instance; its successor has seen one set-cluster, the one the host
        // sent it before this call.
        check_probe(&mut *probe, &ctx, &jobs, 1, 0);
        check_probe(&mut *probe, &decayed(&ctx), &jobs, 1, 0);
        assert!(
            probe.shares(&ctx).unwrap().len() == ctx.associations.len(),
            "shares after the trap has the cluster too"
        );
    }
}

/// A new user association under `parent`.
fn user(name: &str, parent: u32) -> Association {
    Association {
        name: name.into(),
        parent: Some(parent),
        is_user: true,
        raw_shares: 1,
        priority: 0,
        raw_usage: 0.0,
    }
}

#[test]
fn an_instance_is_sent_only_the_associations_a_grown_cluster_appended() {
    let mut probe = priority_component(PROBE);
    let probe = &mut *probe;
    let ctx = fixtures::priority_context(NOW, 16, 3, 4);
    let jobs = fixtures::job_table(&ctx, 200, 9);
    check_probe(probe, &ctx, &jobs, 1, 0);

    // A new user's first job: only the newcomer crosses.
    let mut grown = decayed(&ctx);
    grown.associations.push(user("newcomer", 1));
    check_probe(probe, &grown, &jobs, 1, 1);
    check_probe(probe, &decayed(&grown), &jobs, 1, 1);

    // A new account and a user under it, in one step: both cross in one call, in order.
    let mut deeper = decayed(&grown);
    let account = deeper.associations.len() as u32;
    deeper.associations.push(Association {
        name: "new-account".into(),
        parent: Some(0),
        is_user: false,
        raw_shares: 3,
        priority: 0,
        raw_usage: 0.0,
    });
    deeper.associations.push(user("new-user", account));
    check_probe(probe, &deeper, &jobs, 1, 2);
    // What the guest holds is the cluster set-cluster would have sent.
    assert_shares_echo(probe, &decayed(&deeper));

    // Anything else that changed, even beside an append, sends the whole cluster.
    let mut renamed = deeper.clone();
    renamed.associations.push(user("late", 1));
    renamed.associations[2].name.push_str("-renamed");
    check_probe(probe, &renamed, &jobs, 2, 2);
    let mut resized = renamed.clone();
    resized.associations.push(user("later", 1));
    resized.cluster_cpus += 64;
    check_probe(probe, &resized, &jobs, 3, 2);
    // So do fewer associations (a reconfiguration).
    let mut shrunk = resized.clone();
    shrunk.associations.pop();
    check_probe(probe, &shrunk, &jobs, 4, 2);
    assert_shares_echo(probe, &shrunk);
    // And an append after that is again just the append.
    let mut regrown = decayed(&shrunk);
    regrown.associations.push(user("again", 1));
    check_probe(probe, &regrown, &jobs, 4, 3);
    assert_shares_echo(probe, &regrown);
}

/// Multifactor with every weight set, as the bundle's component and linked in natively.
fn multifactor_both_ways() -> (Box<dyn PriorityBackend>, Box<dyn PriorityBackend>) {
    priority_both_ways(&loader(), "multifactor", &weighted_multifactor())
}

#[test]
fn sdk_components_answer_as_the_native_build_while_the_cluster_changes() {
    // The SDK's guest writes usage into the context it kept; every step must still answer as
    // the same policy linked in does with the whole context.
    let (mut wasm, mut native) = multifactor_both_ways();
    let ctx = fixtures::priority_context(NOW, 16, 3, 4);
    let mut grown = decayed(&ctx);
    grown.associations.push(Association {
        raw_shares: 3,
        ..user("newcomer", 1)
    });
    let mut reshaped = decayed(&grown);
    reshaped.associations[3].parent = Some(0);
    reshaped.partitions[0].priority_job_factor = 5;
    let steps = [
        ctx.clone(),
        decayed(&ctx),
        grown.clone(),
        decayed(&grown),
        reshaped,
        ctx,
    ];
    // The same jobs throughout, so that the clock moves their age too.
    let jobs = fixtures::job_table(&steps[0], 300, 4);
    let mut answers = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let answer = wasm.compute(step, &jobs).unwrap();
        assert_eq!(answer, native.compute(step, &jobs).unwrap(), "step {i}");
        assert_eq!(
            format!("{:?}", wasm.shares(step).unwrap()),
            format!("{:?}", native.shares(step).unwrap()),
            "shares at step {i}"
        );
        answers.push(answer);
    }
    let same: Vec<usize> = (1..answers.len())
        .filter(|&i| answers[i] == answers[i - 1])
        .collect();
    assert!(same.is_empty(), "steps {same:?} did not change the answer");
}

#[test]
fn an_sdk_component_explains_only_when_asked() {
    let (mut wasm, mut native) = multifactor_both_ways();
    let ctx = fixtures::priority_context(NOW, 16, 3, 4);
    let jobs = fixtures::job_table(&ctx, 300, 4);
    let explained = wasm.compute(&ctx, &jobs).unwrap();
    assert!(!explained.factors.is_empty(), "{explained:?}");
    let quiet_ctx = PriorityContext {
        skip_factors: true,
        ..ctx.clone()
    };
    let quiet = wasm.compute(&quiet_ctx, &jobs).unwrap();
    assert_eq!(quiet.priority, explained.priority);
    assert!(quiet.factors.is_empty(), "{quiet:?}");
    // The policy itself skips them, not only the component's glue.
    assert_eq!(native.compute(&quiet_ctx, &jobs).unwrap(), quiet);
    assert_eq!(native.compute(&ctx, &jobs).unwrap(), explained);
}

#[test]
fn every_job_column_reaches_an_sdk_component_as_the_host_holds_it() {
    // The contract concatenates the columns by type; the SDK splits them again.
    let mut echo = priority_component("priority_columns_echo");
    let ctx = fixtures::priority_context(NOW, 16, 3, 4);
    for rows in [37, 0, 1, 5] {
        let jobs = fixtures::distinct_job_table(rows);
        let answer = echo.compute(&ctx, &jobs).expect("the echo answers");
        let f = |v: &[u32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
        let s = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
        let want: [(&str, Vec<f64>); 13] = [
            ("job-id", f(&jobs.job_id)),
            ("submit-time", s(&jobs.submit_time)),
            ("eligible-time", s(&jobs.eligible_time)),
            ("association", f(&jobs.association)),
            ("partition", f(&jobs.partition)),
            ("qos", f(&jobs.qos)),
            ("nodes", f(&jobs.nodes)),
            ("cpus", f(&jobs.cpus)),
            (
                "memory-mb",
                jobs.memory_mb.iter().map(|&x| x as f64).collect(),
            ),
            ("gpus", f(&jobs.gpus)),
            ("time-limit", f(&jobs.time_limit)),
            ("nice", jobs.nice.iter().map(|&x| f64::from(x)).collect()),
            ("site-factor", s(&jobs.site_factor)),
        ];
        assert_eq!(answer.priority, vec![1; rows], "{rows} rows");
        assert_eq!(answer.factors.len(), want.len());
        for (got, (name, values)) in answer.factors.iter().zip(want) {
            assert_eq!(
                (got.name.as_str(), &got.values),
                (name, &values),
                "{rows} rows"
            );
        }
    }
}
