//! Invariants under random workloads: nothing allocated twice, no early start, no overrun, determinism.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::*;
use proptest::prelude::*;
use sluice_engine::request::{DependencyKind, parse_licenses};
use sluice_engine::{
    Clock, Engine, EngineConfig, Event, JobSpec, JobState, ManualClock, Policies, SchedulerKind,
};
use sluice_plugin_priority_multifactor::Multifactor;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_policy::{FromSettings, SettingValue, Settings};

#[derive(Clone, Debug)]
struct Work {
    submit: i64,
    nodes: u32,
    tasks_per_node: u32,
    limit_min: u64,
    runtime: i64,
    begin: Option<i64>,
    dep: Option<(usize, bool)>,
    exit: i32,
    prio: i64,
    license: bool,
    exclusive: bool,
    user: usize,
}

fn work() -> impl Strategy<Value = Work> {
    (
        (0i64..600, 1u32..4, 1u32..5, 1u64..20, 10i64..1500),
        (
            proptest::option::of(0i64..900),
            proptest::option::of((0usize..40, any::<bool>())),
            0i32..2,
            0i64..100,
        ),
        (any::<bool>(), prop::bool::weighted(0.2), 0usize..3),
    )
        .prop_map(
            |(
                (submit, nodes, tpn, limit_min, runtime),
                (begin, dep, exit, prio),
                (license, exclusive, user),
            )| Work {
                submit,
                nodes,
                tasks_per_node: tpn,
                limit_min,
                runtime,
                begin,
                dep,
                exit,
                prio,
                license,
                exclusive,
                user,
            },
        )
}

fn kind(i: u8) -> SchedulerKind {
    [
        SchedulerKind::Backfill,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
        SchedulerKind::Fcfs,
    ][i as usize % 4]
}

/// Runs a workload to the end in 30-second steps, checking the invariants at every step, and
/// returns the decisions made.
fn simulate(
    workload: &[Work],
    nodes: usize,
    sched: SchedulerKind,
    cons_tres: bool,
    multifactor: bool,
) -> Vec<Event> {
    let cluster = with_licenses(cluster(nodes, 4), &[("lic", 2)]);
    let clock = ManualClock::new(T0);
    let mut config = EngineConfig::for_cluster(&cluster);
    config.scheduler = sched;
    config.params.bf_interval = 30;
    config.params.sched_interval = 60;
    config.params.bf_licenses = true;
    let priority: Box<dyn sluice_policy::PriorityPolicy + Send> = if multifactor {
        let s = Settings::default()
            .with("weight.age", SettingValue::Integer(1000))
            .with("weight.fairshare", SettingValue::Integer(5000))
            .with("weight.jobsize", SettingValue::Integer(100));
        Box::new(Multifactor::from_settings(&s))
    } else {
        Box::new(SiteFactorPriority)
    };
    let selection: Box<dyn sluice_policy::SelectionPolicy + Send> = if cons_tres {
        Box::new(ConsTres::default())
    } else {
        Box::new(FirstFit::default())
    };
    let mut e = Engine::with_config(
        cluster,
        Policies {
            priority,
            selection,
            hres: None,
            gres: Vec::new(),
        },
        Arc::new(clock.clone()),
        config,
    );

    let users = ["alice", "bob", "carol"];
    let mut ids: Vec<Option<u32>> = vec![None; workload.len()];
    let mut log = Vec::new();
    let mut runtime: BTreeMap<u32, i64> = BTreeMap::new();
    let mut order: Vec<usize> = (0..workload.len()).collect();
    order.sort_by_key(|&i| (workload[i].submit, i));
    let mut next = 0;
    let end = T0 + 6 * 3600;
    while clock.now() <= end {
        let now = clock.now();
        while next < order.len() && T0 + workload[order[next]].submit <= now {
            let i = order[next];
            let w = &workload[i];
            let dependencies = w
                .dep
                .and_then(|(d, ok)| if d < i { ids[d] } else { None }.map(|job| (job, ok)))
                .map(|(job, ok)| vec![after(job, ok)])
                .unwrap_or_default();
            let spec = JobSpec {
                min_nodes: w.nodes.min(nodes as u32),
                tasks: w.nodes.min(nodes as u32) * w.tasks_per_node,
                time_limit: Some(w.limit_min * 60),
                begin_time: w.begin.map(|b| T0 + b),
                dependencies,
                site_factor: w.prio,
                licenses: if w.license {
                    parse_licenses("lic:1").unwrap()
                } else {
                    vec![]
                },
                exclusive: w.exclusive,
                ..JobSpec::new(users[w.user])
            };
            let id = e.submit(spec).expect("generated jobs are valid");
            runtime.insert(id, w.runtime);
            ids[i] = Some(id);
            next += 1;
        }
        let finished: Vec<u32> = e
            .running_ids()
            .filter(|id| {
                let j = e.job(*id).unwrap();
                j.state == JobState::Running && j.start_time.unwrap() + runtime[id] <= now
            })
            .collect();
        for id in finished {
            let exit = workload[ids.iter().position(|x| *x == Some(id)).unwrap()].exit;
            e.job_finished(id, exit).unwrap();
        }
        let events = e.tick();
        check(&e, &events, now);
        log.extend(events);
        clock.advance(30);
    }
    log
}

fn check(e: &Engine, events: &[Event], now: i64) {
    // Nothing is allocated twice: per node, what running jobs hold never exceeds the node.
    let table = e.nodes().table();
    let mut cpus = vec![0u64; table.len()];
    let mut mem = vec![0u64; table.len()];
    let mut lic = 0u32;
    for id in e.running_ids() {
        let alloc = e.job(id).unwrap().alloc.as_ref().unwrap();
        for (i, &n) in alloc.placement.nodes.iter().enumerate() {
            cpus[n as usize] += u64::from(alloc.placement.cpus[i]);
            mem[n as usize] += alloc.placement.memory_mb[i];
        }
        lic += alloc.licenses.iter().map(|(_, c)| c).sum::<u32>();
    }
    for n in 0..table.len() {
        assert!(
            cpus[n] <= u64::from(table.cpus[n]),
            "node {n} has {} CPUs allocated of {}",
            cpus[n],
            table.cpus[n]
        );
        assert_eq!(
            u64::from(table.free_cpus[n]) + cpus[n],
            u64::from(table.cpus[n]),
            "free CPUs agree on node {n}"
        );
        assert!(mem[n] <= table.memory_mb[n]);
    }
    assert!(lic <= 2, "{lic} licenses in use of 2");
    for ev in events {
        match ev {
            Event::Started { job, time, .. } => {
                let j = e.job(*job).unwrap();
                assert!(*time >= j.submit_time, "job {job} started before submit");
                assert!(
                    j.spec.begin_time.is_none_or(|b| *time >= b),
                    "job {job} started before its begin time"
                );
                for dep in &j.spec.dependencies {
                    let d = e.job(dep.job).unwrap();
                    assert!(
                        d.state.is_final(),
                        "job {job} started before dependency {} ended",
                        dep.job
                    );
                    assert!(d.end_time.unwrap() <= *time);
                    if dep.kind == DependencyKind::AfterOk {
                        assert_eq!(d.state, JobState::Completed, "afterok on a failed job");
                    }
                }
            }
            Event::Ended { job, time, .. } => {
                let j = e.job(*job).unwrap();
                if let (Some(start), Some(limit)) = (j.start_time, j.time_limit) {
                    assert!(
                        *time - start <= limit as i64,
                        "job {job} ran {} s past a {limit} s limit",
                        *time - start
                    );
                }
            }
            Event::Power(_) => {}
        }
    }
    for id in e.running_ids() {
        let j = e.job(id).unwrap();
        if let (Some(start), Some(limit)) = (j.start_time, j.time_limit) {
            assert!(
                now - start < limit as i64,
                "job {id} still running past its limit"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_for_every_scheduler(
        workload in proptest::collection::vec(work(), 1..40),
        nodes in 2usize..6,
        sched in 0u8..4,
        cons_tres in any::<bool>(),
    ) {
        let log = simulate(&workload, nodes, kind(sched), cons_tres, false);
        let started = log.iter().filter(|e| matches!(e, Event::Started { .. })).count();
        prop_assert!(started > 0, "something must run in six hours");
    }

    #[test]
    fn decisions_and_priorities_are_deterministic(
        workload in proptest::collection::vec(work(), 1..30),
        nodes in 2usize..5,
        sched in 0u8..4,
    ) {
        let a = simulate(&workload, nodes, kind(sched), true, true);
        let b = simulate(&workload, nodes, kind(sched), true, true);
        prop_assert_eq!(a, b);
    }
}

#[test]
fn priority_rows_are_identical_across_runs() {
    let run = || {
        let (mut e, clock) = engine_with(
            cluster(2, 1),
            Box::new(Multifactor::from_settings(
                &Settings::default()
                    .with("weight.age", SettingValue::Integer(1000))
                    .with("weight.fairshare", SettingValue::Integer(100)),
            )),
            SchedulerKind::Backfill,
        );
        for (i, user) in ["alice", "bob", "carol", "alice"].iter().enumerate() {
            e.submit(JobSpec {
                min_nodes: 2,
                tasks: 2,
                time_limit: Some(600 + i as u64),
                ..JobSpec::new(*user)
            })
            .unwrap();
            clock.advance(7);
        }
        e.tick();
        clock.advance(300);
        e.schedule();
        e.priority_rows()
    };
    let first = run();
    assert_eq!(first.len(), 3);
    assert!(first.iter().all(|r| r.priority > 0));
    assert_eq!(first, run());
}
