//! Backfill: Slurm's own unit scenarios (backfill_test.c), limits, EASY and conservative.

mod common;

use common::*;
use sluice_engine::{Engine, Event, JobSpec, JobState, Loop, Policies, Reason, SchedulerKind};
use sluice_plugin_select_cons_tres::ConsTres;

/// (priority, nodes, minutes), as the tuples of backfill_test.c.
fn job(prio: i64, nodes: u32, minutes: u64) -> JobSpec {
    JobSpec {
        site_factor: prio,
        min_nodes: nodes,
        tasks: nodes,
        exclusive: true,
        time_limit: Some(minutes * 60),
        ..JobSpec::new("alice")
    }
}

fn backfilled(events: &[Event]) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Started {
                job,
                by: Loop::Backfill,
                ..
            } => Some(*job),
            _ => None,
        })
        .collect()
}

fn with_cons_tres(e: &mut Engine) {
    e.set_policies(Policies {
        priority: Box::new(SiteFactorPriority),
        selection: Box::new(ConsTres::default()),
        hres: None,
        gres: Vec::new(),
    })
    .unwrap();
}

fn backfill_1(cons_tres: bool) {
    let (mut e, _clock) = engine(cluster(32, 4));
    if cons_tres {
        with_cons_tres(&mut e);
    }
    let j1 = e.submit(job(10, 1, 10)).unwrap();
    let j2 = e.submit(job(5, 32, 10)).unwrap();
    let j3 = e.submit(job(1, 31, 5)).unwrap();
    e.tick();
    assert_eq!(e.job(j1).unwrap().state, JobState::Running);
    assert_eq!(e.job(j2).unwrap().reason, Reason::Resources);
    assert_eq!(
        e.job(j3).unwrap().reason,
        Reason::Priority,
        "the main loop does not jump the queue"
    );
    let events = e.backfill();
    assert_eq!(backfilled(&events), vec![j3]);
    assert_eq!(e.job(j2).unwrap().state, JobState::Pending);
    assert_eq!(
        e.job(j2).unwrap().start_time,
        Some(T0 + 600),
        "planned when job 1 ends"
    );
    assert_eq!(e.last_backfill_stats().reserved, 1);
}

#[test]
fn slurm_backfill_1_blocked_32_node_job_and_backfilled_31_node_job() {
    backfill_1(false);
}

#[test]
fn slurm_backfill_1_with_cons_tres() {
    backfill_1(true);
}

#[test]
fn backfill_never_delays_a_reservation() {
    let (mut e, _clock) = engine(cluster(32, 4));
    e.submit(job(10, 1, 10)).unwrap();
    let big = e.submit(job(5, 32, 10)).unwrap();
    // 31 nodes for 20 minutes would still run when the 32-node job is due at +10 min.
    let long = e.submit(job(1, 31, 20)).unwrap();
    e.tick();
    assert!(backfilled(&e.backfill()).is_empty());
    assert_eq!(
        e.job(long).unwrap().start_time,
        Some(T0 + 1200),
        "planned after the big job"
    );
    assert_eq!(e.job(big).unwrap().start_time, Some(T0 + 600));
}

#[test]
fn slurm_backfill_2_no_later_start_than_a_lower_priority_job_of_equal_or_larger_size() {
    let (mut e, _clock) = engine(cluster(32, 4));
    // Ticket 20847's shape: equal time limits, sizes mixed, so size is the node count.
    let specs = [
        (100, 20, 30),
        (90, 16, 30),
        (80, 8, 30),
        (70, 16, 30),
        (60, 4, 30),
        (50, 32, 30),
        (40, 8, 30),
        (30, 12, 30),
    ];
    let ids: Vec<u32> = specs
        .iter()
        .map(|&(p, n, m)| e.submit(job(p, n, m)).unwrap())
        .collect();
    e.tick();
    e.backfill();
    let start = |id: u32| {
        let j = e.job(id).unwrap();
        j.start_time.unwrap_or(i64::MAX)
    };
    for (a, &(pa, na, _)) in specs.iter().enumerate() {
        for (b, &(pb, nb, _)) in specs.iter().enumerate() {
            if pa > pb && na <= nb {
                assert!(
                    start(ids[a]) <= start(ids[b]),
                    "job {} (prio {pa}, {na} nodes) starts after job {} (prio {pb}, {nb} nodes)",
                    ids[a],
                    ids[b]
                );
            }
        }
    }
}

#[test]
fn slurm_backfill_3_bf_max_job_test_cuts_off_the_501st_job() {
    let (mut e, _clock) = engine(cluster(32, 4));
    e.params_mut().defer = true;
    let ids: Vec<u32> = (0..1000)
        .map(|_| e.submit(job(1, 32, 1)).unwrap())
        .collect();
    e.backfill();
    assert_eq!(e.last_backfill_stats().stopped_by, Some("bf_max_job_test"));
    assert_eq!(e.job(ids[0]).unwrap().state, JobState::Running);
    assert_eq!(e.job(ids[499]).unwrap().start_time, Some(T0 + 499 * 60));
    assert_eq!(e.job(ids[500]).unwrap().start_time, None);
    assert!(e.job(ids[500]).unwrap().is_pending());
}

#[test]
fn slurm_backfill_lic_1_license_blocked_jobs() {
    for bf_licenses in [false, true] {
        let (mut e, _clock) = engine(with_licenses(cluster(32, 4), &[("lic1", 1), ("lic2", 6)]));
        e.params_mut().bf_licenses = bf_licenses;
        e.params_mut().defer = true;
        let lic = sluice_engine::request::parse_licenses("lic1:1").unwrap();
        let ids: Vec<u32> = (0..3)
            .map(|i| {
                e.submit(JobSpec {
                    licenses: lic.clone(),
                    ..job(10 - i, 1, 10)
                })
                .unwrap()
            })
            .collect();
        let free = e.submit(job(1, 1, 10)).unwrap();
        e.backfill();
        let state = |id| e.job(id).unwrap().state;
        assert_eq!(
            [state(ids[0]), state(ids[1]), state(ids[2]), state(free)],
            [
                JobState::Running,
                JobState::Pending,
                JobState::Pending,
                JobState::Running
            ]
        );
        assert_eq!(e.job(ids[1]).unwrap().reason, Reason::Licenses);
        assert_eq!(e.job(ids[2]).unwrap().reason, Reason::Licenses);
        if bf_licenses {
            // The map tracks licenses: each waits for the previous holder.
            assert_eq!(e.job(ids[1]).unwrap().start_time, Some(T0 + 600));
            assert_eq!(e.job(ids[2]).unwrap().start_time, Some(T0 + 1200));
        } else {
            assert_eq!(
                e.job(ids[1]).unwrap().start_time,
                None,
                "no reservation without bf_licenses"
            );
        }
    }
}

#[test]
fn slurm_backfill_lic_2_jobs_7_and_12_share_a_start_time() {
    let (mut e, _clock) = engine(with_licenses(cluster(32, 4), &[("lic1", 1), ("lic2", 6)]));
    e.params_mut().bf_licenses = true;
    e.params_mut().defer = true;
    let lic = sluice_engine::request::parse_licenses("lic2:1").unwrap();
    let ids: Vec<u32> = (0..12)
        .map(|i| {
            e.submit(JobSpec {
                licenses: lic.clone(),
                ..job(100 - i, 1, 10)
            })
            .unwrap()
        })
        .collect();
    e.backfill();
    assert!(
        ids[..6]
            .iter()
            .all(|id| e.job(*id).unwrap().state == JobState::Running)
    );
    assert_eq!(e.job(ids[6]).unwrap().start_time, Some(T0 + 600));
    assert_eq!(
        e.job(ids[6]).unwrap().start_time,
        e.job(ids[11]).unwrap().start_time
    );
}

#[test]
fn bf_max_job_user_and_part_limit_tests() {
    let (mut e, _clock) = engine(cluster(2, 1));
    e.params_mut().defer = true;
    e.params_mut().bf_max_job_user = 2;
    e.submit(job(100, 2, 60)).unwrap();
    e.backfill();
    for user in ["alice", "bob", "carol"] {
        for _ in 0..3 {
            e.submit(JobSpec {
                user: user.into(),
                ..job(1, 2, 10)
            })
            .unwrap();
        }
    }
    e.backfill();
    assert_eq!(e.last_backfill_stats().tested, 6);
    e.params_mut().bf_max_job_user = 0;
    e.params_mut().bf_max_job_part = 4;
    e.backfill();
    assert_eq!(e.last_backfill_stats().tested, 4);
}

#[test]
fn beyond_bf_window_gets_no_start_time() {
    let (mut e, _clock) = engine(cluster(2, 1));
    e.params_mut().bf_window = 60;
    e.submit(job(100, 2, 120)).unwrap();
    let late = e.submit(job(1, 2, 10)).unwrap();
    e.tick();
    e.backfill();
    assert_eq!(e.job(late).unwrap().start_time, None);
    e.params_mut().bf_window = 1440;
    e.backfill();
    assert_eq!(e.job(late).unwrap().start_time, Some(T0 + 7200));
}

/// A running 2-node job until +100 min; B (3 nodes) is planned at +100 on nodes 1–3, C (4 nodes)
/// after it; D (1 node, 115 min) fits now only on node 4, which C needs at +110.
fn easy_vs_conservative(kind: SchedulerKind) -> (Engine, [u32; 3]) {
    let (mut e, _clock) = engine_with(cluster(4, 1), Box::new(SiteFactorPriority), kind);
    e.submit(job(1000, 2, 100)).unwrap();
    e.tick();
    let b = e.submit(job(100, 3, 10)).unwrap();
    let c = e.submit(job(50, 4, 10)).unwrap();
    let d = e.submit(job(10, 1, 115)).unwrap();
    e.params_mut().defer = true;
    e.backfill();
    (e, [b, c, d])
}

#[test]
fn easy_reserves_only_for_the_first_blocked_job() {
    let (e, [b, c, d]) = easy_vs_conservative(SchedulerKind::Easy);
    assert_eq!(e.job(b).unwrap().start_time, Some(T0 + 6000));
    assert_eq!(e.job(c).unwrap().start_time, None);
    assert_eq!(
        e.job(d).unwrap().state,
        JobState::Running,
        "EASY lets D delay C"
    );
}

#[test]
fn conservative_reserves_for_every_job() {
    let (e, [b, c, d]) = easy_vs_conservative(SchedulerKind::Conservative);
    assert_eq!(e.job(b).unwrap().start_time, Some(T0 + 6000));
    assert_eq!(e.job(c).unwrap().start_time, Some(T0 + 6600));
    assert_eq!(
        e.job(d).unwrap().state,
        JobState::Pending,
        "D would delay C"
    );
    assert_eq!(e.job(d).unwrap().start_time, Some(T0 + 7200));
}

#[test]
fn slurm_backfill_matches_conservative_here() {
    let (e, [_, c, d]) = easy_vs_conservative(SchedulerKind::Backfill);
    assert_eq!(e.job(c).unwrap().start_time, Some(T0 + 6600));
    assert_eq!(e.job(d).unwrap().state, JobState::Pending);
}

#[test]
fn periodic_backfill_runs_every_bf_interval_from_tick() {
    let (mut e, clock) = engine(cluster(32, 4));
    e.submit(job(10, 1, 10)).unwrap();
    e.submit(job(5, 32, 10)).unwrap();
    let small = e.submit(job(1, 31, 5)).unwrap();
    e.tick();
    clock.advance(29);
    assert!(backfilled(&e.tick()).is_empty());
    clock.advance(1);
    assert_eq!(backfilled(&e.tick()), vec![small]);
}

#[test]
fn a_backfill_pass_after_a_main_pass_of_the_same_tick_queues_only_the_jobs_left_pending() {
    let (mut e, clock) = engine(cluster(32, 4));
    // Past sched_interval and bf_interval: the next tick runs both loops (backfill_test.c's
    // first scenario, in one tick).
    clock.advance(60);
    let j1 = e.submit(job(10, 1, 10)).unwrap();
    let j2 = e.submit(job(5, 32, 10)).unwrap();
    let j3 = e.submit(job(1, 31, 5)).unwrap();
    let events = e.tick();
    assert_eq!(e.last_main_stats().queued, 3);
    assert_eq!(e.job(j1).unwrap().state, JobState::Running);
    assert_eq!(e.last_backfill_stats().queued, 2);
    assert_eq!(backfilled(&events), vec![j3]);
    assert_eq!(e.job(j2).unwrap().start_time, Some(T0 + 60 + 600));
}

/// Three running/planned jobs leave only node 4, free from +10 min until the 4-node job planned
/// at +30 takes every node; `first` is then planned (or not), and `second`'s start is returned.
fn planned_after(first: (u32, u64), second: (u32, u64)) -> (Option<i64>, Option<i64>) {
    let (mut e, _clock) = engine(cluster(4, 1));
    e.params_mut().bf_window = 60;
    e.submit(job(1000, 3, 30)).unwrap();
    e.submit(job(900, 1, 10)).unwrap();
    e.tick();
    e.submit(job(500, 4, 100)).unwrap();
    let a = e.submit(job(100, first.0, first.1)).unwrap();
    let b = e.submit(job(50, second.0, second.1)).unwrap();
    e.params_mut().defer = true;
    e.backfill();
    (e.job(a).unwrap().start_time, e.job(b).unwrap().start_time)
}

#[test]
fn a_job_with_no_start_in_the_window_rules_out_only_jobs_needing_as_many_nodes_for_as_long() {
    // Two nodes are never free together before the 4-node job's reservation; one is.
    assert_eq!(planned_after((2, 10), (1, 15)), (None, Some(T0 + 600)));
    // 25 minutes on node 4 from +10 run into the reservation at +30; 15 minutes do not.
    assert_eq!(planned_after((1, 25), (1, 15)), (None, Some(T0 + 600)));
    // Needing more nodes for longer fails as the first did.
    assert_eq!(planned_after((1, 25), (2, 30)), (None, None));
}

/// Every job's state and expected start, by id.
fn plans(e: &Engine) -> Vec<(u32, JobState, Option<i64>)> {
    let mut out: Vec<_> = e.jobs().map(|j| (j.id, j.state, j.start_time)).collect();
    out.sort_by_key(|p| p.0);
    out
}

#[test]
fn remembering_unplannable_jobs_changes_no_start_and_no_plan() {
    let mut rng = sluice_policy::fixtures::Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut ruled_out_somewhere = false;
    for _ in 0..60 {
        let window = 30 + rng.below(240);
        let pair = [true, false].map(|remember| {
            let (mut e, clock) =
                engine_configured(cluster(8, 2), Box::new(SiteFactorPriority), |c| {
                    c.remember_unplannable = remember
                });
            e.params_mut().bf_window = window;
            e.params_mut().defer = true;
            (e, clock)
        });
        let specs: Vec<JobSpec> = (0..24)
            .map(|_| {
                let nodes = 1 + rng.below(6) as u32;
                let exclusive = rng.below(2) == 0;
                JobSpec {
                    site_factor: rng.below(1000) as i64,
                    min_nodes: nodes,
                    tasks: if exclusive {
                        nodes
                    } else {
                        nodes + rng.below(u64::from(nodes)) as u32
                    },
                    exclusive,
                    time_limit: Some(60 * (1 + rng.below(180))),
                    ..JobSpec::new("alice")
                }
            })
            .collect();
        let steps: Vec<(i64, u64)> = (0..8)
            .map(|_| (rng.below(3600) as i64, rng.below(8)))
            .collect();
        let [(mut a, clock_a), (mut b, clock_b)] = pair;
        for e in [&mut a, &mut b] {
            for spec in &specs {
                e.submit(spec.clone()).unwrap();
            }
            e.schedule();
        }
        for &(wait, pick) in &steps {
            a.backfill();
            b.backfill();
            assert_eq!(plans(&a), plans(&b));
            let unplanned = plans(&a)
                .iter()
                .filter(|p| p.1 == JobState::Pending && p.2.is_none())
                .count();
            ruled_out_somewhere |= unplanned > 1;
            clock_a.advance(wait);
            clock_b.advance(wait);
            for e in [&mut a, &mut b] {
                let running: Vec<u32> = e
                    .jobs()
                    .filter(|j| j.state == JobState::Running)
                    .map(|j| j.id)
                    .collect();
                if !running.is_empty() {
                    let id = running[pick as usize % running.len()];
                    e.job_finished(id, 0).unwrap();
                }
                e.schedule();
            }
        }
    }
    assert!(
        ruled_out_somewhere,
        "some pass left several jobs without a start"
    );
}

/// Nodes 1–2 have 4 CPUs and run a job until +100 min; nodes 3–4 have 2 and run one until +50.
/// A job of one 4-CPU task is planned when the big nodes free up: the small ones never could
/// hold it, however early they free up.
#[test]
fn a_job_is_planned_only_on_nodes_configured_to_hold_its_share() {
    let mut c = cluster(4, 4);
    c.nodes[2].cpus = 2;
    c.nodes[3].cpus = 2;
    let (mut e, _clock) = engine_with(c, Box::new(SiteFactorPriority), SchedulerKind::Backfill);
    let big = e
        .submit(JobSpec {
            cpus_per_task: 4,
            ..job(1000, 2, 100)
        })
        .unwrap();
    let small = e.submit(job(500, 2, 50)).unwrap();
    e.tick();
    assert_eq!(e.job(big).unwrap().state, JobState::Running);
    assert_eq!(e.job(small).unwrap().state, JobState::Running);
    let wide = e
        .submit(JobSpec {
            cpus_per_task: 4,
            ..job(10, 1, 10)
        })
        .unwrap();
    e.params_mut().defer = true;
    e.backfill();
    assert_eq!(e.job(wide).unwrap().start_time, Some(T0 + 6000));
}

#[test]
fn every_pass_is_counted_and_timed_on_the_engine_clock() {
    let (mut e, clock) = engine(cluster(32, 4));
    // Each reading of the clock's microseconds advances it, as a replay charges cost per job.
    clock.set_tick_micros(7);
    e.submit(job(10, 1, 10)).unwrap();
    e.submit(job(5, 32, 10)).unwrap();
    e.submit(job(1, 31, 5)).unwrap();
    e.tick();
    let main = e.main_totals().clone();
    assert_eq!(main.cycles, 1);
    assert_eq!(main.total_started, 1);
    assert_eq!(main.total_depth, e.last_main_stats().tested as u64);
    assert!(main.last_micros > 0 && main.max_micros == main.last_micros);
    assert_eq!(e.backfill_totals().cycles, 0, "backfill is not due yet");
    clock.advance(30);
    e.tick();
    let backfill = e.backfill_totals();
    assert_eq!((backfill.cycles, backfill.total_started), (1, 1));
    assert_eq!(backfill.last_at, e.now());
    assert_eq!(
        backfill.total_micros, backfill.last_micros,
        "one pass: its length is the total"
    );
}

/// `sbatch -N 2 --ntasks-per-node=4` (eight one-CPU tasks) as the main loop and backfill start
/// it under cons_tres: four CPUs on each of two nodes that can give them, never 7 + 1.
#[test]
fn tasks_per_node_gives_each_node_its_tasks_in_both_loops() {
    let per_node_job = |prio: i64, minutes: u64| JobSpec {
        site_factor: prio,
        min_nodes: 2,
        tasks: 8,
        tasks_per_node: 4,
        time_limit: Some(minutes * 60),
        ..JobSpec::new("alice")
    };
    let cpus_of = |e: &Engine, id| {
        let placement = &e.job(id).unwrap().alloc.as_ref().unwrap().placement;
        (placement.nodes.clone(), placement.cpus.clone())
    };

    // The main loop, on two idle 8-CPU nodes.
    let (mut e, _clock) = engine(cluster(2, 8));
    with_cons_tres(&mut e);
    let j = e.submit(per_node_job(1, 10)).unwrap();
    e.tick();
    assert_eq!(e.job(j).unwrap().state, JobState::Running);
    assert_eq!(cpus_of(&e, j), (vec![0, 1], vec![4, 4]));

    // Backfill: node01 keeps 3 CPUs free under a 5-task job, a 3-node exclusive job waits for
    // it, and the per-node job fits before that on node02 and node03 (node01 cannot run four).
    let (mut e, _clock) = engine(cluster(3, 8));
    with_cons_tres(&mut e);
    let first = e
        .submit(JobSpec {
            site_factor: 10,
            tasks: 5,
            time_limit: Some(600),
            ..JobSpec::new("alice")
        })
        .unwrap();
    let wide = e.submit(job(5, 3, 10)).unwrap();
    let j = e.submit(per_node_job(1, 5)).unwrap();
    e.tick();
    assert_eq!(e.job(first).unwrap().state, JobState::Running);
    assert_eq!(e.job(wide).unwrap().reason, Reason::Resources);
    assert_eq!(e.job(j).unwrap().state, JobState::Pending);
    let events = e.backfill();
    assert_eq!(backfilled(&events), vec![j]);
    assert_eq!(cpus_of(&e, j), (vec![1, 2], vec![4, 4]));
    assert_eq!(e.job(wide).unwrap().start_time, Some(T0 + 600));
}
