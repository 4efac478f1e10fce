//! HRES through the hres-modes plugin, advance reservations, usage accrual and the reports.

mod common;

use std::sync::Arc;

use common::*;
use sluice_cluster::{AssocId, NodeId};
use sluice_engine::request::parse_licenses;
use sluice_engine::{
    Engine, EngineConfig, JobId, JobSpec, JobState, ManualClock, Policies, Reason, ReservationSpec,
};
use sluice_plugin_hres_modes::HresModes;
use sluice_plugin_priority_multifactor::Multifactor;
use sluice_policy::{FromSettings, SettingValue, Settings};

fn one(user: &str, licenses: &str) -> JobSpec {
    JobSpec {
        licenses: parse_licenses(licenses).unwrap(),
        time_limit: Some(600),
        ..JobSpec::new(user)
    }
}

fn hres_engine() -> (Engine, ManualClock) {
    let (mut e, clock) = engine(with_hres_document(cluster(32, 4)));
    e.set_policies(Policies {
        priority: Box::new(SiteFactorPriority),
        selection: Box::new(FirstFit::default()),
        hres: Some(Box::new(HresModes::from_settings(&Settings::default()))),
        gres: Vec::new(),
    })
    .unwrap();
    (e, clock)
}

#[test]
fn mode1_charges_one_sufficient_layer() {
    let (mut e, _clock) = hres_engine();
    let a = e.submit(one("alice", "natural:100")).unwrap();
    let b = e.submit(one("alice", "natural:100")).unwrap();
    let c = e.submit(one("alice", "natural:100")).unwrap();
    let d = e.submit(one("alice", "natural:50")).unwrap();
    e.tick();
    let st = |id| e.job(id).unwrap().state;
    assert_eq!(
        [st(a), st(b), st(c), st(d)],
        [
            JobState::Running,
            JobState::Running,
            JobState::Pending,
            JobState::Running
        ]
    );
    assert_eq!(e.job(c).unwrap().reason, Reason::Licenses);
    let used: Vec<i64> = e.licenses().hres_layers()[..3]
        .iter()
        .map(|l| l.used)
        .collect();
    assert_eq!(used, vec![50, 100, 100], "root 50 and both halves 100");
    e.job_finished(a, 0).unwrap();
    assert_eq!(
        e.licenses().hres_layers()[..3]
            .iter()
            .map(|l| l.used)
            .sum::<i64>(),
        150
    );
    e.tick();
    assert_eq!(e.job(c).unwrap().state, JobState::Running);
}

#[test]
fn mode2_charges_every_overlapping_layer() {
    let (mut e, _clock) = hres_engine();
    let a = e.submit(one("alice", "flat:12")).unwrap();
    e.tick();
    let a_node = e.job(a).unwrap().alloc.as_ref().unwrap().placement.nodes[0];
    let b = e.submit(one("alice", "flat:12")).unwrap();
    let c = e.submit(one("alice", "flat:1")).unwrap();
    e.tick();
    assert_eq!(a_node, 0);
    let b_node = e.job(b).unwrap().alloc.as_ref().unwrap().placement.nodes[0];
    assert!(
        b_node >= 16,
        "only the other half has room on every layer, got node {b_node}"
    );
    assert_eq!(
        e.job(c).unwrap().reason,
        Reason::Licenses,
        "root (24) is used up"
    );
    assert_eq!(e.licenses().hres_layers()[3].used, 24);
}

#[test]
fn hres_requests_need_an_hres_policy_and_known_names() {
    let (mut e, _clock) = engine(with_hres_document(cluster(32, 4)));
    e.set_policies(Policies {
        priority: Box::new(SiteFactorPriority),
        selection: Box::new(FirstFit::default()),
        hres: None,
        gres: Vec::new(),
    })
    .unwrap();
    assert!(e.submit(one("alice", "natural:1")).is_err());
    let (mut e, _clock) = hres_engine();
    assert!(
        e.submit(one("alice", "natural:1000")).is_ok(),
        "counts above every layer wait, as Slurm lets them"
    );
    assert!(e.submit(one("alice", "bogus:1")).is_err());
}

#[test]
fn node_reservation_keeps_others_off_and_admits_its_users() {
    let (mut e, clock) = engine(cluster(4, 1));
    e.create_reservation(&ReservationSpec {
        name: "maint".into(),
        start: T0 + 600,
        end: T0 + 3600,
        nodes: vec!["node[01-03]".into()],
        users: vec!["carol".into()],
        ..Default::default()
    })
    .unwrap();
    // A 20-minute job would run into the reservation on nodes 1–3: only node04 is left.
    let a = e
        .submit(JobSpec {
            time_limit: Some(1200),
            ..JobSpec::new("alice")
        })
        .unwrap();
    let b = e
        .submit(JobSpec {
            time_limit: Some(1200),
            ..JobSpec::new("alice")
        })
        .unwrap();
    // A 5-minute job ends before it starts.
    let short = e
        .submit(JobSpec {
            time_limit: Some(300),
            site_factor: -1,
            ..JobSpec::new("bob")
        })
        .unwrap();
    let inside = e
        .submit(JobSpec {
            reservation: Some("maint".into()),
            time_limit: Some(600),
            ..JobSpec::new("carol")
        })
        .unwrap();
    assert!(
        e.submit(JobSpec {
            reservation: Some("maint".into()),
            ..JobSpec::new("alice")
        })
        .is_err()
    );
    e.tick();
    e.backfill();
    let job = |id| e.job(id).unwrap();
    assert_eq!(job(a).alloc.as_ref().unwrap().placement.nodes, vec![3]);
    assert_eq!(job(b).state, JobState::Pending);
    assert_eq!(job(short).state, JobState::Running);
    assert_eq!(job(inside).reason, Reason::Reservation);
    assert_eq!(
        job(inside).start_time,
        Some(T0 + 600),
        "backfill plans it at the reservation start"
    );
    clock.set(T0 + 600);
    e.job_finished(short, 0).unwrap();
    e.tick();
    let nodes = &e
        .job(inside)
        .unwrap()
        .alloc
        .as_ref()
        .unwrap()
        .placement
        .nodes;
    assert!(nodes[0] < 3, "inside the reservation's nodes");
    assert_eq!(e.job(inside).unwrap().state, JobState::Running);
}

#[test]
fn jobs_with_a_reservation_sort_first() {
    let (mut e, _clock) = engine(cluster(1, 1));
    e.params_mut().defer = true;
    e.create_reservation(&ReservationSpec {
        name: "r".into(),
        start: T0,
        end: T0 + 86_400,
        nodes: vec!["node01".into()],
        users: vec!["bob".into()],
        ..Default::default()
    })
    .unwrap();
    let high = e
        .submit(JobSpec {
            site_factor: 1000,
            ..JobSpec::new("alice")
        })
        .unwrap();
    let resv = e
        .submit(JobSpec {
            reservation: Some("r".into()),
            ..JobSpec::new("bob")
        })
        .unwrap();
    e.schedule();
    assert_eq!(e.job(resv).unwrap().state, JobState::Running);
    assert_eq!(e.job(high).unwrap().state, JobState::Pending);
    assert_eq!(e.queue_rows().first().map(|r| r.job_id), Some(resv));
}

#[test]
fn license_reservation_holds_licenses_for_its_account() {
    let (mut e, _clock) = engine(with_licenses(cluster(4, 4), &[("matlab", 4)]));
    e.create_reservation(&ReservationSpec {
        name: "lic".into(),
        start: T0,
        end: T0 + 86_400,
        licenses: vec!["matlab:3".into()],
        accounts: vec!["chem".into()],
        ..Default::default()
    })
    .unwrap();
    let a = e.submit(one("alice", "matlab:2")).unwrap();
    let b = e.submit(one("alice", "matlab:1")).unwrap();
    let c = e
        .submit(JobSpec {
            reservation: Some("lic".into()),
            ..one("carol", "matlab:3")
        })
        .unwrap();
    e.tick();
    assert_eq!(
        e.job(a).unwrap().reason,
        Reason::Licenses,
        "only 1 of 4 is outside the reservation"
    );
    assert_eq!(e.job(b).unwrap().state, JobState::Running);
    assert_eq!(e.job(c).unwrap().state, JobState::Running);
}

/// An engine decaying usage every 60 s with `half_life`, in which alice's 4-CPU job of QOS
/// `high` (UsageFactor 2) has run through one decay: the engine, its clock, the job and alice's
/// association.
fn alice_ran_one_decay(half_life: u64) -> (Engine, ManualClock, JobId, AssocId) {
    let mut c = cluster(2, 4);
    c.priority.priority_calc_period = 60;
    c.priority.priority_decay_half_life = half_life;
    let (mut e, clock) = engine(c);
    let job = e
        .submit(JobSpec {
            tasks: 4,
            qos: Some("high".into()),
            time_limit: Some(3600),
            ..JobSpec::new("alice")
        })
        .unwrap();
    e.tick();
    clock.advance(60);
    e.tick();
    let alice = e.cluster().user_assoc("alice", "physics").unwrap();
    (e, clock, job, alice)
}

#[test]
fn usage_accrues_with_usage_factor_to_every_ancestor_and_decays() {
    let (mut e, clock, a, alice) = alice_ran_one_decay(0);
    let physics = e.cluster().account_id("physics").unwrap();
    // 60 s × 4 CPUs × UsageFactor 2.
    assert_eq!(e.usage().raw(alice), 480.0);
    assert_eq!(e.usage().raw(physics), 480.0);
    assert_eq!(e.usage().raw(AssocId::ROOT), 480.0);
    clock.advance(30);
    e.job_finished(a, 0).unwrap();
    assert_eq!(
        e.usage().raw(alice),
        480.0,
        "an ended job waits for the next decay, as in Slurm's decay thread"
    );
    clock.advance(30);
    e.tick();
    assert_eq!(
        e.usage().raw(alice),
        720.0,
        "the last partial period is charged at the next decay"
    );
    let ctx = e.priority_context();
    assert_eq!(ctx.associations[alice.index()].raw_usage, 720.0);
}

#[test]
fn an_ended_job_is_charged_after_the_next_decay_not_decayed_by_it() {
    let (mut e, clock, a, alice) = alice_ran_one_decay(3600);
    let before = e.usage().raw(alice);
    assert!(before > 0.0);
    clock.advance(30);
    e.job_finished(a, 0).unwrap();
    // A state snapshot counts the ended job at once; the standing waits for the next decay.
    assert_eq!(
        e.usage().all_with_ended()[alice.index()],
        before + e.usage().job_delta(30, 4, 2.0)
    );
    assert_eq!(e.usage().raw(alice), before);
    clock.advance(30);
    e.tick();
    let df = e.usage().decay_factor();
    let expected = before * df.powf(60.0) + e.usage().job_delta(30, 4, 2.0);
    let got = e.usage().raw(alice);
    assert!((got - expected).abs() < 1e-9, "{got} != {expected}");
}

#[test]
fn usage_decays_by_half_each_half_life() {
    let mut c = cluster(2, 4);
    c.priority.priority_calc_period = 300;
    c.priority.priority_decay_half_life = 3600;
    let alice = c.user_assoc("alice", "physics").unwrap();
    c.associations[alice.index()].raw_usage = 1000.0;
    let (mut e, clock) = engine(c);
    clock.advance(3600);
    e.tick();
    let u = e.usage().raw(alice);
    assert!((u - 500.0).abs() < 5.0, "{u}");
    assert!((e.usage().raw(AssocId::ROOT) - u).abs() < 1e-9);
}

#[test]
fn reports_show_queue_factors_and_shares() {
    let mut c = cluster(1, 1);
    c.priority.priority_calc_period = 60;
    let clock = ManualClock::new(T0);
    let settings = Settings::default()
        .with("weight.age", SettingValue::Integer(1000))
        .with("weight.fairshare", SettingValue::Integer(10_000))
        .with("weight.qos", SettingValue::Integer(100));
    let policies = Policies {
        priority: Box::new(Multifactor::from_settings(&settings)),
        selection: Box::new(FirstFit::default()),
        hres: None,
        gres: Vec::new(),
    };
    let config = EngineConfig::for_cluster(&c);
    let mut e = Engine::with_config(c, policies, Arc::new(clock.clone()), config);
    let run = e
        .submit(JobSpec {
            time_limit: Some(86_400),
            ..JobSpec::new("alice")
        })
        .unwrap();
    e.tick();
    let waiting = e
        .submit(JobSpec {
            time_limit: Some(600),
            name: "wait".into(),
            ..JobSpec::new("carol")
        })
        .unwrap();
    let high = e
        .submit(JobSpec {
            time_limit: Some(600),
            qos: Some("high".into()),
            ..JobSpec::new("bob")
        })
        .unwrap();
    e.tick();
    clock.advance(3600);
    e.tick();
    e.schedule();

    let rows = e.queue_rows();
    assert_eq!(rows[0].job_id, run);
    assert_eq!(
        (rows[0].st, rows[0].time, rows[0].nodelist_reason()),
        ("R", 3600, "node01".to_string())
    );
    let pending: Vec<u32> = rows[1..].iter().map(|r| r.job_id).collect();
    assert_eq!(pending.len(), 2);
    assert!(rows[1..].iter().all(|r| r.st == "PD"));
    // carol's account has no usage, so Fair Tree ranks her above bob despite his QOS.
    assert_eq!((rows[1].job_id, rows[1].reason), (waiting, "Resources"));
    assert_eq!((rows[2].job_id, rows[2].reason), (high, "Priority"));
    let text = sluice_engine::report::format_queue(&rows);
    assert!(
        text.contains("(Resources)") && text.contains("node01"),
        "{text}"
    );

    let prio = e.priority_rows();
    assert_eq!(prio.len(), 2);
    let h = prio.iter().find(|r| r.job_id == high).unwrap();
    let w = prio.iter().find(|r| r.job_id == waiting).unwrap();
    assert!(h.factors.contains_key("QOS") && h.factors["QOS"] > 0.0);
    assert!(
        w.factors["FAIRSHARE"] > h.factors["FAIRSHARE"],
        "carol's account has no usage, alice's has"
    );
    assert_eq!(e.job(high).unwrap().priority[0], h.priority);

    let shares = e.share_rows();
    assert_eq!(shares[0].account, "root");
    let alice = shares
        .iter()
        .find(|r| r.user.as_deref() == Some("alice"))
        .unwrap();
    let carol = shares
        .iter()
        .find(|r| r.user.as_deref() == Some("carol"))
        .unwrap();
    assert!(alice.raw_usage > 0.0 && carol.raw_usage == 0.0);
    assert!(carol.fair_share > alice.fair_share);
    assert_eq!(alice.depth, 2);
    let json = serde_json::to_string(&shares).unwrap();
    assert!(json.contains("\"level_fs\""));
    let _ = NodeId(0);
}

#[test]
fn backfill_plans_hres_per_slice_with_bf_licenses() {
    let (mut e, _clock) = hres_engine();
    e.params_mut().bf_licenses = true;
    let a = e.submit(one("alice", "natural:100")).unwrap();
    let b = e
        .submit(JobSpec {
            time_limit: Some(1200),
            ..one("alice", "natural:100")
        })
        .unwrap();
    let c = e.submit(one("alice", "natural:100")).unwrap();
    e.tick();
    e.backfill();
    assert_eq!(
        (e.job(a).unwrap().state, e.job(b).unwrap().state),
        (JobState::Running, JobState::Running)
    );
    assert_eq!(e.job(c).unwrap().reason, Reason::Licenses);
    assert_eq!(
        e.job(c).unwrap().start_time,
        Some(T0 + 600),
        "a layer of 100 frees when job a ends"
    );
}

#[test]
fn demo_cluster_runs_jobs_with_the_bundled_policies() {
    let cluster = sluice_cluster::Cluster::demo();
    let user = cluster
        .associations
        .iter()
        .find(|a| a.is_user())
        .map(|a| a.name().to_string())
        .expect("demo has users");
    let clock = ManualClock::new(T0);
    let policies = Policies {
        priority: Box::new(Multifactor::from_settings(&Settings::default())),
        selection: Box::new(sluice_plugin_select_cons_tres::ConsTres::default()),
        hres: Some(Box::new(HresModes::from_settings(&Settings::default()))),
        gres: Vec::new(),
    };
    let mut e = Engine::new(cluster, policies, Arc::new(clock.clone()));
    let ids: Vec<u32> = (0..3)
        .map(|_| {
            e.submit(JobSpec {
                min_nodes: 2,
                tasks: 8,
                time_limit: Some(600),
                ..JobSpec::new(&user)
            })
            .unwrap()
        })
        .collect();
    let started = e
        .tick()
        .iter()
        .filter(|ev| matches!(ev, sluice_engine::Event::Started { .. }))
        .count();
    assert_eq!(started, 3);
    assert!(
        ids.iter()
            .all(|id| e.job(*id).unwrap().state == JobState::Running)
    );
}
