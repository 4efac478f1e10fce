//! Main loop: starts through the policies, queue order, partition blocking, depth and time limits.

mod common;

use common::*;
use sluice_cluster::NodeId;
use sluice_engine::{Event, JobSpec, JobState, Loop, Reason, SchedulerKind};
use sluice_plugin_priority_basic::Basic;
use sluice_policy::{JobRequest, NodeTable, PlaceMode, Placement, SelectionPolicy};

fn job(user: &str, prio: i64, nodes: u32, minutes: u64) -> JobSpec {
    JobSpec {
        site_factor: prio,
        min_nodes: nodes,
        tasks: nodes,
        time_limit: Some(minutes * 60),
        ..JobSpec::new(user)
    }
}

fn started(events: &[Event]) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| {
            if let Event::Started { job, .. } = e {
                Some(*job)
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn submit_starts_and_finish_frees() {
    let (mut e, clock) = engine(cluster(4, 8));
    let a = e
        .submit(JobSpec {
            tasks: 6,
            ..job("alice", 10, 1, 10)
        })
        .unwrap();
    let b = e.submit(job("bob", 5, 2, 10)).unwrap();
    let events = e.tick();
    assert_eq!(started(&events), vec![a, b]);
    match &events[0] {
        Event::Started {
            nodes, by, time, ..
        } => {
            assert_eq!(nodes, &vec![NodeId(0)]);
            assert_eq!(*by, Loop::Main);
            assert_eq!(*time, T0);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(e.nodes().table().free_cpus, vec![1, 7, 8, 8]);
    assert_eq!(e.job(a).unwrap().state, JobState::Running);
    clock.advance(100);
    e.job_finished(a, 0).unwrap();
    e.job_finished(b, 3).unwrap();
    let events = e.tick();
    assert!(events.contains(&Event::Ended {
        job: a,
        state: JobState::Completed,
        exit_code: Some(0),
        time: T0 + 100
    }));
    assert_eq!(e.job(b).unwrap().state, JobState::Failed);
    assert_eq!(e.job(b).unwrap().reason, Reason::NonZeroExitCode);
    assert_eq!(e.nodes().table().free_cpus, vec![8, 8, 8, 8]);
    assert_eq!(e.running_ids().count(), 0);
}

#[test]
fn higher_priority_runs_first_and_blocks_its_partition() {
    let (mut e, _clock) = engine(cluster(4, 8));
    let running = e
        .submit(JobSpec {
            exclusive: true,
            ..job("alice", 100, 2, 60)
        })
        .unwrap();
    e.tick();
    // Needs all 4 nodes: left pending; the 1-node job behind it must wait (Priority), not jump ahead.
    let big = e.submit(job("bob", 50, 4, 10)).unwrap();
    let small = e.submit(job("carol", 10, 1, 10)).unwrap();
    e.params_mut().bf_interval = -1;
    let events = e.tick();
    assert!(started(&events).is_empty());
    assert_eq!(e.job(running).unwrap().state, JobState::Running);
    assert_eq!(e.job(big).unwrap().reason, Reason::Resources);
    assert_eq!(e.job(small).unwrap().reason, Reason::Priority);
}

#[test]
fn partition_tier_orders_before_priority() {
    let c = with_debug_partition(cluster(2, 4), 2, 5);
    let (mut e, _clock) = engine(c);
    e.params_mut().defer = true;
    let low_tier = e
        .submit(JobSpec {
            partitions: vec!["batch".into()],
            exclusive: true,
            ..job("alice", 1000, 2, 10)
        })
        .unwrap();
    let high_tier = e
        .submit(JobSpec {
            partitions: vec!["debug".into()],
            exclusive: true,
            ..job("bob", 1, 2, 10)
        })
        .unwrap();
    let events = e.schedule();
    assert_eq!(started(&events), vec![high_tier]);
    assert_eq!(e.job(low_tier).unwrap().reason, Reason::Resources);
}

#[test]
fn equal_priority_orders_by_submit_time_then_id() {
    let (mut e, clock) = engine(cluster(1, 1));
    e.params_mut().defer = true;
    let first = e.submit(job("alice", 5, 1, 10)).unwrap();
    clock.advance(1);
    let second = e.submit(job("bob", 5, 1, 10)).unwrap();
    let events = e.schedule();
    assert_eq!(started(&events), vec![first]);
    assert_eq!(e.job(second).unwrap().state, JobState::Pending);
}

#[test]
fn multi_partition_job_runs_where_it_fits() {
    let c = with_debug_partition(cluster(4, 4), 1, 1);
    let (mut e, _clock) = engine(c);
    e.params_mut().defer = true;
    // Fill node01 (the debug partition's only node) and nodes 2–3 of batch.
    let filler = e
        .submit(JobSpec {
            partitions: vec!["batch".into()],
            exclusive: true,
            ..job("alice", 100, 3, 60)
        })
        .unwrap();
    let multi = e
        .submit(JobSpec {
            partitions: vec!["debug".into(), "batch".into()],
            ..job("bob", 50, 1, 10)
        })
        .unwrap();
    let events = e.schedule();
    assert_eq!(started(&events), vec![filler, multi]);
    let alloc = e.job(multi).unwrap().alloc.as_ref().unwrap();
    assert_eq!(
        e.cluster().partitions[alloc.partition.index()].name,
        "batch"
    );
    assert_eq!(e.priority_rows().len(), 0, "no pending job left to show");
}

#[test]
fn event_pass_stops_at_default_queue_depth_and_periodic_pass_goes_on() {
    let (mut e, clock) = engine(cluster(8, 1));
    e.params_mut().default_queue_depth = 2;
    e.params_mut().bf_interval = -1;
    for i in 0..5 {
        e.submit(job("alice", 100 - i, 1, 10)).unwrap();
    }
    let events = e.tick();
    assert_eq!(started(&events).len(), 2);
    assert_eq!(e.last_main_stats().stopped_by, Some("default_queue_depth"));
    clock.advance(60);
    let events = e.tick();
    assert_eq!(started(&events).len(), 3);
    assert_eq!(e.last_main_stats().stopped_by, None);
}

#[test]
fn jobs_skipped_behind_a_full_partition_count_against_the_depth() {
    // Slurm's `job_depth` is counted before the failed-partition test, so an event-triggered
    // pass behind a job short of resources looks at default_queue_depth records, not at the
    // whole queue.
    let (mut e, clock) = engine(cluster(2, 1));
    e.params_mut().default_queue_depth = 3;
    e.params_mut().bf_interval = -1;
    e.submit(job("alice", 200, 2, 10)).unwrap();
    assert_eq!(
        started(&e.tick()).len(),
        1,
        "the first job takes both nodes"
    );
    let big = e.submit(job("alice", 100, 2, 10)).unwrap();
    let waiting: Vec<u32> = (0..6)
        .map(|i| e.submit(job("alice", 50 - i, 1, 10)).unwrap())
        .collect();
    assert!(started(&e.tick()).is_empty());
    assert_eq!(e.last_main_stats().stopped_by, Some("default_queue_depth"));
    assert_eq!(e.last_main_stats().tested, 1, "only the big job was tried");
    assert_eq!(e.job(big).unwrap().reason, Reason::Resources);
    let reasons: Vec<Reason> = waiting
        .iter()
        .map(|&id| e.job(id).unwrap().reason)
        .collect();
    assert_eq!(&reasons[..2], &[Reason::Priority, Reason::Priority]);
    assert!(
        reasons[2..].iter().all(|r| *r != Reason::Priority),
        "records past the depth are not looked at: {reasons:?}"
    );
    clock.advance(60);
    e.tick();
    assert_eq!(
        e.last_main_stats().stopped_by,
        None,
        "the periodic pass goes on"
    );
    assert!(
        waiting
            .iter()
            .all(|&id| e.job(id).unwrap().reason == Reason::Priority)
    );
}

#[test]
fn max_sched_time_is_counted_on_the_given_clock() {
    let (mut e, clock) = engine(cluster(8, 1));
    e.params_mut().defer = true;
    e.params_mut().max_sched_time = 2;
    for i in 0..6 {
        e.submit(job("alice", 100 - i, 1, 10)).unwrap();
    }
    // Every budget reading costs 0.7 s of virtual time: the pass gets through only a few jobs.
    clock.set_tick_micros(700_000);
    let events = e.schedule();
    assert_eq!(e.last_main_stats().stopped_by, Some("max_sched_time"));
    assert!(
        !started(&events).is_empty() && started(&events).len() < 6,
        "{:?}",
        started(&events)
    );
}

#[test]
fn partition_job_depth_limits_tests_per_partition() {
    let (mut e, _clock) = engine(cluster(8, 1));
    e.params_mut().defer = true;
    e.params_mut().partition_job_depth = 3;
    for i in 0..6 {
        e.submit(job("alice", 100 - i, 1, 10)).unwrap();
    }
    let events = e.schedule();
    assert_eq!(started(&events).len(), 3);
    assert_eq!(e.last_main_stats().tested, 3);
}

#[test]
fn sched_max_job_start_limits_starts() {
    let (mut e, _clock) = engine(cluster(8, 1));
    e.params_mut().defer = true;
    e.params_mut().sched_max_job_start = 4;
    for i in 0..6 {
        e.submit(job("alice", 100 - i, 1, 10)).unwrap();
    }
    assert_eq!(started(&e.schedule()).len(), 4);
}

#[test]
fn time_limit_ends_job_with_timeout() {
    let (mut e, clock) = engine(cluster(2, 2));
    let id = e.submit(job("alice", 1, 1, 1)).unwrap();
    e.tick();
    clock.advance(59);
    assert!(e.tick().iter().all(|ev| !matches!(ev, Event::Ended { .. })));
    assert_eq!(e.next_wakeup(), Some(T0 + 60));
    clock.advance(1);
    let events = e.tick();
    assert!(events.contains(&Event::Ended {
        job: id,
        state: JobState::Timeout,
        exit_code: None,
        time: T0 + 60
    }));
    assert_eq!(e.job(id).unwrap().reason, Reason::TimeLimit);
}

#[test]
fn begin_time_hold_and_dependencies_keep_jobs_pending() {
    let (mut e, clock) = engine(cluster(4, 4));
    let later = e
        .submit(JobSpec {
            begin_time: Some(T0 + 300),
            ..job("alice", 1, 1, 10)
        })
        .unwrap();
    let held = e
        .submit(JobSpec {
            hold: true,
            ..job("alice", 1, 1, 10)
        })
        .unwrap();
    let parent = e.submit(job("bob", 1, 1, 10)).unwrap();
    let ok = e
        .submit(JobSpec {
            dependencies: sluice_engine::request::parse_dependencies(&format!("afterok:{parent}"))
                .unwrap(),
            ..job("bob", 1, 1, 10)
        })
        .unwrap();
    let notok = e
        .submit(JobSpec {
            dependencies: sluice_engine::request::parse_dependencies(&format!(
                "afternotok:{parent}"
            ))
            .unwrap(),
            ..job("bob", 1, 1, 10)
        })
        .unwrap();
    let events = e.tick();
    assert_eq!(started(&events), vec![parent]);
    assert_eq!(e.job(later).unwrap().reason, Reason::BeginTime);
    assert_eq!(e.job(held).unwrap().reason, Reason::JobHeldUser);
    assert_eq!(e.job(ok).unwrap().reason, Reason::Dependency);
    clock.advance(10);
    e.job_finished(parent, 0).unwrap();
    let events = e.tick();
    assert_eq!(started(&events), vec![ok]);
    assert_eq!(
        e.job(notok).unwrap().reason,
        Reason::DependencyNeverSatisfied
    );
    e.release(held).unwrap();
    assert_eq!(started(&e.tick()), vec![held]);
    clock.set(T0 + 300);
    let events = e.schedule();
    assert_eq!(started(&events), vec![later]);
    assert_eq!(e.job(later).unwrap().start_time, Some(T0 + 300));
}

#[test]
fn license_blocked_job_gets_licenses_reason_and_does_not_block_partition() {
    let (mut e, _clock) = engine(with_licenses(cluster(4, 4), &[("lic1", 1)]));
    e.params_mut().bf_interval = -1;
    let l = sluice_engine::request::parse_licenses("lic1:1").unwrap();
    let a = e
        .submit(JobSpec {
            licenses: l.clone(),
            ..job("alice", 10, 1, 10)
        })
        .unwrap();
    let b = e
        .submit(JobSpec {
            licenses: l,
            ..job("alice", 9, 1, 10)
        })
        .unwrap();
    let c = e.submit(job("alice", 8, 1, 10)).unwrap();
    assert_eq!(started(&e.tick()), vec![a, c]);
    assert_eq!(e.job(b).unwrap().reason, Reason::Licenses);
    assert_eq!(e.licenses().used(0), 1);
    e.job_finished(a, 0).unwrap();
    assert_eq!(started(&e.tick()), vec![b]);
}

#[test]
fn fcfs_stops_at_the_first_waiting_job() {
    let (mut e, _clock) = engine_with(
        cluster(2, 1),
        Box::new(SiteFactorPriority),
        SchedulerKind::Fcfs,
    );
    e.params_mut().defer = true;
    let a = e.submit(job("alice", 10, 1, 10)).unwrap();
    let big = e.submit(job("alice", 9, 2, 10)).unwrap();
    let small = e.submit(job("alice", 8, 1, 10)).unwrap();
    assert_eq!(started(&e.schedule()), vec![a]);
    assert_eq!(e.job(big).unwrap().reason, Reason::Resources);
    assert_eq!(e.job(small).unwrap().reason, Reason::Priority);
    // FCFS runs no backfill either.
    assert!(started(&e.backfill()).is_empty());
}

#[test]
fn fifo_priority_plugin_orders_by_submit_time() {
    let (mut e, clock) = engine_with(cluster(1, 1), Box::new(Basic), SchedulerKind::Backfill);
    e.params_mut().defer = true;
    let first = e
        .submit(JobSpec {
            nice: 1000,
            ..job("alice", 0, 1, 10)
        })
        .unwrap();
    clock.advance(5);
    let _second = e.submit(job("bob", 0, 1, 10)).unwrap();
    assert_eq!(started(&e.schedule()), vec![first]);
}

/// Gives answers that break the contract: a node that is not a candidate.
struct Liar;
impl SelectionPolicy for Liar {
    fn begin_pass(&mut self, _nodes: &NodeTable) {}
    fn place(&mut self, req: &JobRequest, _mode: PlaceMode) -> Option<Placement> {
        Some(Placement {
            nodes: vec![999],
            cpus: vec![req.tasks],
            memory_mb: vec![0],
            gres: vec![],
            rows: vec![],
        })
    }
    fn release(&mut self, _job_id: u32, _placement: &Placement) {}
}

#[test]
fn impossible_placement_is_refused_and_the_job_stays_pending() {
    let (mut e, _clock) = engine(cluster(2, 2));
    e.set_policies(sluice_engine::Policies {
        priority: Box::new(SiteFactorPriority),
        selection: Box::new(Liar),
        hres: None,
        gres: Vec::new(),
    })
    .unwrap();
    let id = e.submit(job("alice", 1, 1, 10)).unwrap();
    assert!(started(&e.tick()).is_empty());
    assert_eq!(e.job(id).unwrap().state, JobState::Pending);
    assert!(e.faults().selection >= 1);
    assert_eq!(e.nodes().table().free_cpus, vec![2, 2]);
}

/// Answers with the wrong number of priorities.
struct ShortPriority;
impl sluice_policy::PriorityPolicy for ShortPriority {
    fn compute(
        &mut self,
        _: &sluice_policy::PriorityContext,
        _: &sluice_policy::JobTable,
    ) -> sluice_policy::Priorities {
        sluice_policy::Priorities {
            priority: vec![1],
            factors: vec![],
        }
    }
}

#[test]
fn refused_priority_answer_leaves_jobs_pending() {
    let (mut e, _clock) = engine_with(
        cluster(2, 2),
        Box::new(ShortPriority),
        SchedulerKind::Backfill,
    );
    e.submit(job("alice", 1, 1, 10)).unwrap();
    e.submit(job("alice", 1, 1, 10)).unwrap();
    assert!(started(&e.tick()).is_empty());
    assert!(e.faults().priority >= 1);
}

#[test]
fn node_down_fails_its_jobs_and_drain_keeps_new_ones_off() {
    let (mut e, _clock) = engine(cluster(2, 2));
    // --no-requeue: with JobRequeue's default a batch job would be requeued instead.
    let a = e
        .submit(JobSpec {
            requeue: Some(false),
            ..job("alice", 1, 1, 10)
        })
        .unwrap();
    e.tick();
    e.node_down(NodeId(0), "not responding");
    assert_eq!(e.job(a).unwrap().state, JobState::NodeFail);
    assert_eq!(e.nodes().state_name(NodeId(0)), "DOWN");
    e.node_drain(NodeId(1), "maintenance");
    let b = e.submit(job("alice", 1, 1, 10)).unwrap();
    e.params_mut().bf_interval = -1;
    assert!(started(&e.tick()).is_empty());
    assert_eq!(e.job(b).unwrap().reason, Reason::Resources);
    e.node_resume(NodeId(1));
    let events = e.tick();
    assert_eq!(started(&events), vec![b]);
}

#[test]
fn powered_down_nodes_are_booted_and_the_job_configures() {
    let mut c = cluster(2, 2);
    c.nodes[0].state = sluice_cluster::NodeState::Cloud;
    c.nodes[1].state = sluice_cluster::NodeState::Cloud;
    c.power.resume_program = Some("/rec/resume".into());
    c.power.suspend_program = Some("/rec/suspend".into());
    c.power.suspend_time = sluice_cluster::TimeLimit::Seconds(600);
    let (mut e, clock) = engine(c);
    let id = e.submit(job("alice", 1, 1, 1)).unwrap();
    let events = e.tick();
    let resumed: Vec<_> = events
        .iter()
        .filter_map(|ev| match ev {
            Event::Power(sluice_engine::PowerEvent::Call(call)) => Some(call.nodes.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(resumed, vec![vec![NodeId(0)]]);
    assert_eq!(e.job(id).unwrap().state, JobState::Configuring);
    assert_eq!(e.nodes().state_name(NodeId(0)), "MIXED#");
    assert_eq!(
        e.node_state_string(NodeId(0)),
        "MIXED+CLOUD+NOT_RESPONDING+POWERING_UP"
    );
    clock.advance(120);
    e.tick();
    assert_eq!(
        e.job(id).unwrap().state,
        JobState::Configuring,
        "booting time does not count against the limit"
    );
    e.node_powered_up(NodeId(0));
    let job = e.job(id).unwrap();
    assert_eq!(
        (job.state, job.start_time, job.end_time),
        (JobState::Running, Some(T0 + 120), Some(T0 + 180))
    );
}

#[test]
fn submit_refuses_what_could_never_run() {
    use sluice_engine::SubmitError;
    let (mut e, _clock) = engine(cluster(2, 4));
    assert!(matches!(
        e.submit(JobSpec::new("mallory")),
        Err(SubmitError::UnknownAssociation { .. })
    ));
    assert!(matches!(
        e.submit(JobSpec {
            partitions: vec!["nope".into()],
            ..JobSpec::new("alice")
        }),
        Err(SubmitError::UnknownPartition(_))
    ));
    assert!(matches!(
        e.submit(job("alice", 1, 3, 10)),
        Err(SubmitError::NodeCount)
    ));
    assert!(matches!(
        e.submit(JobSpec {
            tasks: 5,
            ..job("alice", 1, 1, 10)
        }),
        Err(SubmitError::NodeConfig)
    ));
    // 4294967295 × 4294967295 CPUs once wrapped to a per-node share that fit (issue 33).
    assert!(matches!(
        e.submit(JobSpec {
            tasks: u32::MAX,
            cpus_per_task: u32::MAX,
            ..job("alice", 1, 1, 10)
        }),
        Err(SubmitError::NodeConfig)
    ));
    assert!(matches!(
        e.submit(JobSpec {
            licenses: sluice_engine::request::parse_licenses("nolic:1").unwrap(),
            ..JobSpec::new("alice")
        }),
        Err(SubmitError::Licenses(_))
    ));
    assert!(matches!(
        e.submit(JobSpec {
            qos: Some("gold".into()),
            ..JobSpec::new("alice")
        }),
        Err(SubmitError::UnknownQos(_))
    ));
    assert!(matches!(
        e.submit(JobSpec {
            constraint: Some(sluice_engine::Constraint::parse("gpu").unwrap()),
            ..JobSpec::new("alice")
        }),
        Err(SubmitError::NodeConfig)
    ));
    assert!(e.submit(JobSpec::new("alice")).is_ok());
}

#[test]
fn constraint_limits_candidates() {
    let (mut e, _clock) = engine(cluster(4, 4));
    let id = e
        .submit(JobSpec {
            constraint: Some(sluice_engine::Constraint::parse("eth").unwrap()),
            ..job("alice", 1, 1, 10)
        })
        .unwrap();
    e.tick();
    let nodes = &e.job(id).unwrap().alloc.as_ref().unwrap().placement.nodes;
    assert_eq!(nodes, &vec![2], "node03 is the first eth node");
}

#[test]
fn cancel_pending_and_running() {
    let (mut e, _clock) = engine(cluster(1, 1));
    let a = e.submit(job("alice", 2, 1, 10)).unwrap();
    let b = e.submit(job("alice", 1, 1, 10)).unwrap();
    e.tick();
    e.cancel(b).unwrap();
    e.cancel(a).unwrap();
    assert_eq!(e.job(a).unwrap().state, JobState::Cancelled);
    assert_eq!(e.job(b).unwrap().state, JobState::Cancelled);
    assert!(e.cancel(a).is_err());
    assert_eq!(e.nodes().table().free_cpus, vec![1]);
}

#[test]
fn steps_fit_inside_the_allocation() {
    let (mut e, _clock) = engine(cluster(2, 4));
    let id = e
        .submit(JobSpec {
            tasks: 8,
            ..job("alice", 1, 2, 10)
        })
        .unwrap();
    e.tick();
    let s0 = e.start_step(id, "a", 2, 3).unwrap();
    assert!(
        e.start_step(id, "b", 1, 2).is_err(),
        "only 1 CPU per node left"
    );
    let s1 = e.start_step(id, "c", 2, 1).unwrap();
    e.end_step(id, s0, 0).unwrap();
    assert!(e.start_step(id, "d", 1, 3).is_ok());
    assert_eq!((s0, s1), (0, 1));
    assert!(e.end_step(id, 9, 0).is_err());
}

#[test]
fn completing_holds_nodes_until_the_epilog_is_done() {
    let (mut e, _clock) = engine(cluster(1, 1));
    let mut config = e.config().clone();
    config.track_completing = true;
    let (mut e2, _c2) = {
        let c = e.cluster().clone();
        let clock = sluice_engine::ManualClock::new(T0);
        let engine = sluice_engine::Engine::with_config(
            c,
            sluice_engine::Policies {
                priority: Box::new(SiteFactorPriority),
                selection: Box::new(FirstFit::default()),
                hres: None,
                gres: Vec::new(),
            },
            std::sync::Arc::new(clock.clone()),
            config,
        );
        (engine, clock)
    };
    let a = e2.submit(job("alice", 2, 1, 10)).unwrap();
    let b = e2.submit(job("alice", 1, 1, 10)).unwrap();
    e2.tick();
    e2.job_finished(a, 0).unwrap();
    assert_eq!(e2.job(a).unwrap().state, JobState::Completing);
    e2.params_mut().bf_interval = -1;
    assert!(started(&e2.tick()).is_empty());
    e2.epilog_complete(a).unwrap();
    assert_eq!(e2.job(a).unwrap().state, JobState::Completed);
    assert_eq!(started(&e2.tick()), vec![b]);
    let _ = e.tick();
}

#[test]
fn priorities_are_recalculated_per_calc_period_and_for_jobs_without_one() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let calls = std::sync::Arc::new(AtomicUsize::new(0));
    let mut c = cluster(1, 1);
    c.priority.priority_calc_period = 300;
    let (mut e, clock) = engine_with(
        c,
        Box::new(CountingPriority(calls.clone())),
        SchedulerKind::Backfill,
    );
    let calls_now = || calls.load(SeqCst);
    let first = e.submit(job("alice", 1, 1, 600)).unwrap();
    assert_eq!(started(&e.tick()), vec![first]);
    assert_eq!(calls_now(), 1, "the new job needs a priority");

    let low = e.submit(job("alice", 5, 1, 10)).unwrap();
    let high = e.submit(job("alice", 9, 1, 10)).unwrap();
    clock.advance(10);
    e.tick();
    assert_eq!(
        calls_now(),
        2,
        "main loop and backfill share one calculation"
    );
    assert_eq!(e.job(high).unwrap().priority, vec![9]);
    assert_eq!(e.job(low).unwrap().priority_time, Some(e.now()));

    clock.advance(10);
    e.tick();
    assert_eq!(
        calls_now(),
        2,
        "nothing new and no decay: stored priorities order the queue"
    );

    clock.advance(300);
    e.tick();
    assert_eq!(
        calls_now(),
        3,
        "usage decayed: every pending job is recalculated"
    );

    e.hold(low, sluice_engine::Hold::User).unwrap();
    let shown: Vec<_> = e.priority_rows().iter().map(|r| r.job_id).collect();
    assert_eq!(
        shown,
        vec![high],
        "a held job leaves the sprio rows at once"
    );
    e.release(low).unwrap();
    clock.advance(1);
    e.tick();
    assert_eq!(calls_now(), 4, "a released job is recalculated");

    e.recalculate_priorities();
    e.schedule();
    assert_eq!(calls_now(), 5, "an explicit recalculation");

    // The stored order still holds: the higher site factor starts first when the node frees.
    e.job_finished(first, 0).unwrap();
    clock.advance(1);
    assert_eq!(started(&e.tick()), vec![high]);
}
