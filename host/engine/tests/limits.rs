//! Association and QOS limits and partition access: each rule holds a job with Slurm's reason
//! (or refuses it with sbatch's error) and lets it start once the limit allows, in the main
//! loop and in backfill alike.

mod common;

use common::*;
use sluice_cluster::{
    AccountingEnforce, AssocId, Cluster, OverSubscribe, PartitionState, QosId, TimeLimit,
    TresLimits,
};
use sluice_engine::limits::reason::{Limit, LimitReason, Scope, Tres};
use sluice_engine::request::parse_licenses;
use sluice_engine::{Engine, Event, JobId, JobSpec, JobState, ManualClock, Reason, SubmitError};

/// Which pass runs the queue.
#[derive(Clone, Copy, Debug)]
enum Via {
    Main,
    Backfill,
}

const BOTH: [Via; 2] = [Via::Main, Via::Backfill];

fn pass(e: &mut Engine, via: Via) -> Vec<Event> {
    match via {
        Via::Main => e.schedule(),
        Via::Backfill => e.backfill(),
    }
}

fn started(events: &[Event]) -> Vec<JobId> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Started { job, .. } => Some(*job),
            _ => None,
        })
        .collect()
}

/// A job of `user` asking `cpus` CPUs on one node for ten minutes, under QOS `high`.
fn job(user: &str, cpus: u32) -> JobSpec {
    JobSpec {
        tasks: cpus,
        time_limit: Some(600),
        qos: Some("high".into()),
        ..JobSpec::new(user)
    }
}

fn state(e: &Engine, id: JobId) -> (JobState, Reason) {
    let j = e.job(id).unwrap();
    (j.state, j.reason)
}

fn held(scope: Scope, limit: Limit) -> (JobState, Reason) {
    (
        JobState::Pending,
        Reason::Limit(LimitReason::of(scope, limit)),
    )
}

fn held_tres(scope: Scope, limit: Limit, tres: Tres) -> (JobState, Reason) {
    (
        JobState::Pending,
        Reason::Limit(LimitReason { scope, limit, tres }),
    )
}

const RUNNING: (JobState, Reason) = (JobState::Running, Reason::None);

/// Eight nodes of 8 CPUs; QOS `high` is `cluster.qos[1]`.
fn base() -> Cluster {
    cluster(8, 8)
}

fn high(c: &mut Cluster) -> &mut sluice_cluster::QosLimits {
    &mut c.qos[1].limits
}

fn account(c: &Cluster, name: &str) -> AssocId {
    c.account_id(name).unwrap()
}

fn run(c: Cluster) -> (Engine, ManualClock) {
    engine(c)
}

#[test]
fn qos_max_jobs_per_user_holds_the_fifth_job_until_one_ends() {
    for via in BOTH {
        let mut c = base();
        high(&mut c).max_jobs_per_user = Some(4);
        let (mut e, _clock) = run(c);
        let ids: Vec<JobId> = (0..6).map(|_| e.submit(job("alice", 1)).unwrap()).collect();
        let other = e.submit(job("bob", 1)).unwrap();
        let events = pass(&mut e, via);
        assert_eq!(
            started(&events).len(),
            5,
            "{via:?}: four of alice's and bob's"
        );
        for &id in &ids[..4] {
            assert_eq!(state(&e, id), RUNNING, "{via:?}");
        }
        for &id in &ids[4..] {
            assert_eq!(state(&e, id), held(Scope::Qos, Limit::Jobs), "{via:?}");
        }
        assert_eq!(
            e.job(ids[4]).unwrap().reason.as_str(),
            "QOSMaxJobsPerUserLimit"
        );
        assert_eq!(state(&e, other), RUNNING);
        e.job_finished(ids[0], 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![ids[4]], "{via:?}");
        assert_eq!(state(&e, ids[5]), held(Scope::Qos, Limit::Jobs));
    }
}

#[test]
fn qos_max_submit_jobs_per_user_refuses_at_submission() {
    let mut c = base();
    high(&mut c).max_submit_jobs_per_user = Some(2);
    let (mut e, _clock) = run(c);
    let a = e.submit(job("alice", 1)).unwrap();
    e.submit(job("alice", 1)).unwrap();
    let err = e.submit(job("alice", 1)).unwrap_err();
    assert_eq!(
        err,
        SubmitError::AccountingPolicy(LimitReason::of(Scope::Qos, Limit::SubmitJobs))
    );
    assert!(
        err.to_string().contains("QOSMaxSubmitJobPerUserLimit"),
        "{err}"
    );
    e.submit(job("bob", 1)).unwrap();
    e.schedule();
    e.job_finished(a, 0).unwrap();
    e.submit(job("alice", 1)).unwrap();
}

#[test]
fn qos_grp_jobs_and_grp_submit_jobs_count_every_user() {
    for via in BOTH {
        let mut c = base();
        high(&mut c).grp_jobs = Some(2);
        high(&mut c).grp_submit_jobs = Some(3);
        let (mut e, _clock) = run(c);
        let a = e.submit(job("alice", 1)).unwrap();
        let b = e.submit(job("bob", 1)).unwrap();
        let c3 = e.submit(job("carol", 1)).unwrap();
        assert_eq!(
            e.submit(job("carol", 1)).unwrap_err(),
            SubmitError::AccountingPolicy(LimitReason::of(Scope::Qos, Limit::GrpSubmitJobs))
        );
        pass(&mut e, via);
        assert_eq!((state(&e, a), state(&e, b)), (RUNNING, RUNNING));
        assert_eq!(state(&e, c3), held(Scope::Qos, Limit::GrpJobs), "{via:?}");
        e.job_finished(b, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![c3], "{via:?}");
    }
}

#[test]
fn qos_grp_tres_and_max_tres_per_user_count_cpus_in_use() {
    for via in BOTH {
        let mut c = base();
        high(&mut c).grp_tres = TresLimits::parse("cpu=10").unwrap();
        high(&mut c).max_tres_per_user = TresLimits::parse("cpu=6").unwrap();
        let (mut e, _clock) = run(c);
        let a1 = e.submit(job("alice", 4)).unwrap();
        let a2 = e.submit(job("alice", 4)).unwrap();
        let b1 = e.submit(job("bob", 6)).unwrap();
        let c1 = e.submit(job("carol", 2)).unwrap();
        pass(&mut e, via);
        assert_eq!(state(&e, a1), RUNNING);
        assert_eq!(
            state(&e, a2),
            held_tres(Scope::Qos, Limit::TresPerUser, Tres::Cpu),
            "{via:?}"
        );
        assert_eq!(state(&e, b1), RUNNING);
        assert_eq!(
            state(&e, c1),
            held_tres(Scope::Qos, Limit::GrpTres, Tres::Cpu),
            "{via:?}"
        );
        assert_eq!(e.job(c1).unwrap().reason.as_str(), "QOSGrpCpuLimit");
        e.job_finished(b1, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![c1], "{via:?}");
        e.job_finished(a1, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![a2], "{via:?}");
    }
}

#[test]
fn per_job_limits_hold_the_job_or_refuse_it_with_deny_on_limit() {
    for via in BOTH {
        let mut c = base();
        high(&mut c).max_tres_per_job = TresLimits::parse("node=1,cpu=8").unwrap();
        high(&mut c).max_wall = Some(TimeLimit::Seconds(3600));
        high(&mut c).max_tres_mins_per_job = TresLimits::parse("cpu=240").unwrap();
        let (mut e, _clock) = run(c);
        let two_nodes = e
            .submit(JobSpec {
                min_nodes: 2,
                ..job("alice", 2)
            })
            .unwrap();
        let long = e
            .submit(JobSpec {
                time_limit: Some(7200),
                ..job("alice", 1)
            })
            .unwrap();
        let costly = e
            .submit(JobSpec {
                time_limit: Some(3600),
                ..job("alice", 8)
            })
            .unwrap();
        let untimed = e
            .submit(JobSpec {
                time_limit: None,
                ..job("bob", 4)
            })
            .unwrap();
        let fits = e
            .submit(JobSpec {
                time_limit: Some(3600),
                ..job("bob", 4)
            })
            .unwrap();
        pass(&mut e, via);
        assert_eq!(
            state(&e, two_nodes),
            held_tres(Scope::Qos, Limit::TresPerJob, Tres::Node),
            "{via:?}"
        );
        assert_eq!(
            e.job(two_nodes).unwrap().reason.as_str(),
            "QOSMaxNodePerJobLimit"
        );
        assert_eq!(state(&e, long), held(Scope::Qos, Limit::MaxWall));
        assert_eq!(
            e.job(long).unwrap().reason.as_str(),
            "QOSMaxWallDurationPerJobLimit"
        );
        assert_eq!(
            state(&e, costly),
            held_tres(Scope::Qos, Limit::TresMinsPerJob, Tres::Cpu)
        );
        // No time limit asked: the partition's default (an hour) is within MaxWall.
        assert_eq!(e.job(untimed).unwrap().time_limit, Some(3600));
        assert_eq!(state(&e, untimed), RUNNING, "{via:?}");
        assert_eq!(state(&e, fits), RUNNING, "{via:?}");
    }
    let mut c = base();
    high(&mut c).max_tres_per_job = TresLimits::parse("node=1").unwrap();
    c.qos[1].deny_on_limit = true;
    let (mut e, _clock) = run(c);
    assert_eq!(
        e.submit(JobSpec {
            min_nodes: 2,
            ..job("alice", 2)
        })
        .unwrap_err(),
        SubmitError::AccountingPolicy(LimitReason {
            scope: Scope::Qos,
            limit: Limit::TresPerJob,
            tres: Tres::Node
        })
    );
    e.submit(job("alice", 2)).unwrap();
}

#[test]
fn max_wall_caps_the_default_time_limit() {
    let mut c = base();
    high(&mut c).max_wall = Some(TimeLimit::Seconds(1200));
    let (mut e, _clock) = run(c);
    let id = e
        .submit(JobSpec {
            time_limit: None,
            ..job("alice", 1)
        })
        .unwrap();
    assert_eq!(e.job(id).unwrap().time_limit, Some(1200));
    e.schedule();
    assert_eq!(state(&e, id), RUNNING);
}

#[test]
fn association_limits_inherit_max_and_sum_grp_over_the_subtree() {
    for via in BOTH {
        let mut c = base();
        let physics = account(&c, "physics");
        c.associations[physics.index()].limits.max_jobs = Some(2);
        c.associations[physics.index()].limits.grp_jobs = Some(3);
        let (mut e, _clock) = run(c);
        let plain = |user: &str| JobSpec {
            qos: None,
            ..job(user, 1)
        };
        let a: Vec<JobId> = (0..3).map(|_| e.submit(plain("alice")).unwrap()).collect();
        let b: Vec<JobId> = (0..2).map(|_| e.submit(plain("bob")).unwrap()).collect();
        let carol = e.submit(plain("carol")).unwrap();
        pass(&mut e, via);
        // MaxJobs=2 is inherited by each user; GrpJobs=3 counts alice's and bob's together.
        assert_eq!((state(&e, a[0]), state(&e, a[1])), (RUNNING, RUNNING));
        assert_eq!(state(&e, a[2]), held(Scope::Assoc, Limit::Jobs), "{via:?}");
        assert_eq!(e.job(a[2]).unwrap().reason.as_str(), "AssocMaxJobsLimit");
        assert_eq!(state(&e, b[0]), RUNNING);
        assert_eq!(
            state(&e, b[1]),
            held(Scope::Assoc, Limit::GrpJobs),
            "{via:?}"
        );
        assert_eq!(e.job(b[1]).unwrap().reason.as_str(), "AssocGrpJobsLimit");
        assert_eq!(state(&e, carol), RUNNING, "chem is not physics");
        e.job_finished(a[0], 0).unwrap();
        // One slot in the group: the first job in queue order that its own limit allows.
        assert_eq!(started(&pass(&mut e, via)).len(), 1, "{via:?}");
    }
}

#[test]
fn association_grp_tres_and_submit_limits() {
    for via in BOTH {
        let mut c = base();
        let chem = account(&c, "chem");
        c.associations[chem.index()].limits.grp_tres = TresLimits::parse("cpu=8").unwrap();
        let carol = c.user_assoc("carol", "chem").unwrap();
        c.associations[carol.index()].limits.max_submit_jobs = Some(3);
        let (mut e, _clock) = run(c);
        let plain = JobSpec {
            qos: None,
            ..job("carol", 6)
        };
        let j1 = e.submit(plain.clone()).unwrap();
        let j2 = e.submit(plain.clone()).unwrap();
        e.submit(plain.clone()).unwrap();
        assert_eq!(
            e.submit(plain.clone()).unwrap_err(),
            SubmitError::AccountingPolicy(LimitReason::of(Scope::Assoc, Limit::SubmitJobs))
        );
        pass(&mut e, via);
        assert_eq!(state(&e, j1), RUNNING);
        assert_eq!(
            state(&e, j2),
            held_tres(Scope::Assoc, Limit::GrpTres, Tres::Cpu),
            "{via:?}"
        );
        assert_eq!(e.job(j2).unwrap().reason.as_str(), "AssocGrpCpuLimit");
        e.job_finished(j1, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![j2], "{via:?}");
    }
}

#[test]
fn a_qos_limit_shadows_the_same_association_limit() {
    let mut c = base();
    let physics = account(&c, "physics");
    c.associations[physics.index()].limits.max_jobs = Some(1);
    high(&mut c).max_jobs_per_user = Some(3);
    let (mut e, _clock) = run(c);
    let ids: Vec<JobId> = (0..4).map(|_| e.submit(job("alice", 1)).unwrap()).collect();
    e.schedule();
    assert_eq!(
        ids.iter().filter(|id| state(&e, **id) == RUNNING).count(),
        3
    );
    assert_eq!(state(&e, ids[3]), held(Scope::Qos, Limit::Jobs));
}

#[test]
fn a_partition_qos_limits_every_job_in_the_partition() {
    for via in BOTH {
        let mut c = base();
        high(&mut c).grp_jobs = Some(1);
        c.partitions[0].qos = Some(QosId(1));
        let (mut e, _clock) = run(c);
        let plain = |user: &str| JobSpec {
            qos: None,
            ..job(user, 1)
        };
        let a = e.submit(plain("alice")).unwrap();
        let b = e.submit(plain("bob")).unwrap();
        pass(&mut e, via);
        assert_eq!(state(&e, a), RUNNING);
        assert_eq!(state(&e, b), held(Scope::Qos, Limit::GrpJobs), "{via:?}");
        e.job_finished(a, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![b], "{via:?}");
    }
}

#[test]
fn partition_access_refuses_accounts_groups_and_qos_as_sbatch_does() {
    let mut c = with_debug_partition(base(), 4, 1);
    c.partitions[1].access.allow_accounts = Some(vec!["chem".into()]);
    let (mut e, _clock) = run(c.clone());
    let debug = |user: &str| JobSpec {
        partitions: vec!["debug".into()],
        ..job(user, 1)
    };
    assert!(matches!(
        e.submit(debug("alice")),
        Err(SubmitError::AccountNotAllowed { .. })
    ));
    assert!(
        e.submit(debug("alice"))
            .unwrap_err()
            .to_string()
            .starts_with("invalid account or account/partition combination specified")
    );
    e.submit(debug("carol")).unwrap();
    // With two partitions, the one that refuses is dropped.
    let both = e
        .submit(JobSpec {
            partitions: vec!["debug".into(), "batch".into()],
            ..job("alice", 1)
        })
        .unwrap();
    assert_eq!(e.job(both).unwrap().partitions.len(), 1);

    let mut denied = c.clone();
    denied.partitions[1].access.allow_accounts = None;
    denied.partitions[1].access.deny_accounts = vec!["physics".into()];
    denied.partitions[1].access.allow_qos = Some(vec!["normal".into()]);
    let (mut e, _clock) = run(denied);
    assert!(matches!(
        e.submit(debug("bob")),
        Err(SubmitError::AccountNotAllowed { .. })
    ));
    assert!(matches!(
        e.submit(debug("carol")),
        Err(SubmitError::QosNotAllowed { .. })
    ));
    e.submit(JobSpec {
        qos: None,
        ..debug("carol")
    })
    .unwrap();

    let mut groups = c;
    groups.partitions[1].access.allow_accounts = None;
    groups.partitions[1].access.allow_groups = Some(vec!["hpc".into()]);
    let (mut e, _clock) = run(groups);
    assert!(matches!(
        e.submit(debug("alice")),
        Err(SubmitError::GroupNotAllowed(_))
    ));
    e.submit(JobSpec {
        groups: vec!["users".into(), "hpc".into()],
        ..debug("alice")
    })
    .unwrap();
}

#[test]
fn partition_state_down_holds_jobs_and_drain_refuses_them() {
    for via in BOTH {
        let mut c = base();
        c.partitions[0].access.state = PartitionState::Down;
        let (mut e, _clock) = run(c);
        let id = e.submit(job("alice", 1)).unwrap();
        pass(&mut e, via);
        assert_eq!(state(&e, id), (JobState::Pending, Reason::PartitionDown));
    }
    let mut c = base();
    c.partitions[0].access.state = PartitionState::Drain;
    let (mut e, _clock) = run(c);
    assert!(matches!(
        e.submit(job("alice", 1)),
        Err(SubmitError::PartitionNotAvailable(_))
    ));
}

#[test]
fn unknown_accounts_are_refused_unless_associations_are_not_enforced() {
    let (mut e, _clock) = run(base());
    let nosuch = JobSpec {
        account: Some("nosuch".into()),
        ..job("alice", 1)
    };
    let err = e.submit(nosuch.clone()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid account or account/partition combination specified"),
        "{err}"
    );
    assert!(e.submit(job("zoe", 1)).is_err(), "a user the tree lacks");

    let mut create = base();
    create.enforce.create_missing_users = true;
    let (mut e, _clock) = run(create);
    assert!(
        e.submit(nosuch.clone()).is_err(),
        "accounts are never created"
    );
    e.submit(JobSpec {
        account: Some("chem".into()),
        ..job("zoe", 1)
    })
    .unwrap();

    let mut open = base();
    open.enforce = AccountingEnforce::NONE;
    let (mut e, _clock) = run(open);
    e.submit(nosuch).unwrap();
}

#[test]
fn limits_are_not_enforced_without_accounting_storage_enforce_limits() {
    let mut c = base();
    high(&mut c).max_jobs_per_user = Some(1);
    c.enforce.limits = false;
    let (mut e, _clock) = run(c);
    let ids: Vec<JobId> = (0..3).map(|_| e.submit(job("alice", 1)).unwrap()).collect();
    assert_eq!(started(&e.schedule()), ids);
}

#[test]
fn partition_terms_shape_the_request() {
    let mut c = base();
    c.partitions[0].access.oversubscribe = OverSubscribe::Exclusive;
    c.partitions[0].access.def_mem_per_cpu = Some(1000);
    c.partitions[0].access.max_mem_per_cpu = Some(2000);
    let (mut e, _clock) = run(c);
    let small = e.submit(job("alice", 2)).unwrap();
    let hungry = e
        .submit(JobSpec {
            memory_per_node_mb: 8000,
            ..job("bob", 2)
        })
        .unwrap();
    let s = &e.job(small).unwrap().spec;
    assert!(s.exclusive);
    assert_eq!(s.memory_per_node_mb, 2000, "DefMemPerCPU × 2 CPUs");
    // 8000 MB over 2 tasks is 4000 MB per CPU: MaxMemPerCPU gives each task 2 CPUs.
    assert_eq!(e.job(hungry).unwrap().spec.cpus_per_task, 2);
    e.schedule();
    let alloc = e.job(small).unwrap().alloc.as_ref().unwrap();
    assert_eq!(alloc.cpus(), 8, "a whole node");
}

#[test]
fn requeue_and_cancel_give_their_counts_back() {
    let mut c = base();
    high(&mut c).max_jobs_per_user = Some(1);
    high(&mut c).max_submit_jobs_per_user = Some(2);
    let (mut e, _clock) = run(c);
    let a = e.submit(job("alice", 1)).unwrap();
    let b = e.submit(job("alice", 1)).unwrap();
    e.schedule();
    assert_eq!(state(&e, b), held(Scope::Qos, Limit::Jobs));
    e.requeue(a).unwrap();
    e.cancel(a).unwrap();
    assert_eq!(started(&e.schedule()), vec![b]);
    e.submit(job("alice", 1)).unwrap();
}

/// An engine whose ticks decay usage and run no pass, so that each test picks the pass.
fn run_quiet(c: Cluster) -> (Engine, ManualClock) {
    engine_configured(c, Box::new(SiteFactorPriority), |cfg| {
        cfg.params.sched_interval = -1;
        cfg.params.defer = true;
        cfg.params.bf_interval = i64::MAX / 4;
    })
}

#[test]
fn max_tres_per_node_holds_a_job_too_big_for_one_node() {
    for via in BOTH {
        let mut c = base();
        high(&mut c).max_tres_per_node = TresLimits::parse("cpu=4").unwrap();
        let physics = account(&c, "physics");
        c.associations[physics.index()].limits.max_tres_per_node =
            TresLimits::parse("mem=1000").unwrap();
        let (mut e, _clock) = run(c);
        let wide = e.submit(job("alice", 8)).unwrap();
        let spread = e
            .submit(JobSpec {
                min_nodes: 2,
                ..job("alice", 8)
            })
            .unwrap();
        let hungry = e
            .submit(JobSpec {
                qos: None,
                memory_per_node_mb: 2000,
                ..job("bob", 1)
            })
            .unwrap();
        let modest = e
            .submit(JobSpec {
                qos: None,
                memory_per_node_mb: 1000,
                ..job("bob", 1)
            })
            .unwrap();
        pass(&mut e, via);
        assert_eq!(
            state(&e, wide),
            held_tres(Scope::Qos, Limit::TresPerNode, Tres::Cpu),
            "{via:?}"
        );
        assert_eq!(e.job(wide).unwrap().reason.as_str(), "QOSMaxCpuPerNode");
        assert_eq!(state(&e, spread), RUNNING, "{via:?}: four CPUs a node");
        assert_eq!(
            state(&e, hungry),
            held_tres(Scope::Assoc, Limit::TresPerNode, Tres::Mem),
            "{via:?}"
        );
        assert_eq!(e.job(hungry).unwrap().reason.as_str(), "AssocMaxMemPerNode");
        assert_eq!(state(&e, modest), RUNNING, "{via:?}");
    }
    let mut c = base();
    high(&mut c).max_tres_per_node = TresLimits::parse("cpu=4").unwrap();
    c.qos[1].deny_on_limit = true;
    let (mut e, _clock) = run(c);
    assert_eq!(
        e.submit(job("alice", 8)).unwrap_err(),
        SubmitError::AccountingPolicy(LimitReason {
            scope: Scope::Qos,
            limit: Limit::TresPerNode,
            tres: Tres::Cpu
        })
    );
    e.submit(job("alice", 4)).unwrap();
}

#[test]
fn grp_tres_run_mins_holds_a_job_until_running_jobs_use_up_their_time() {
    for via in BOTH {
        let mut c = base();
        // Room for 8 CPUs × 10 minutes (the jobs' time limit) and no more.
        high(&mut c).grp_tres_run_mins = TresLimits::parse("cpu=80").unwrap();
        let chem = account(&c, "chem");
        c.associations[chem.index()].limits.grp_tres_run_mins =
            TresLimits::parse("cpu=40").unwrap();
        let (mut e, clock) = run(c);
        let a = e.submit(job("alice", 4)).unwrap();
        let b = e.submit(job("bob", 4)).unwrap();
        let late = e.submit(job("alice", 2)).unwrap();
        pass(&mut e, via);
        assert_eq!((state(&e, a), state(&e, b)), (RUNNING, RUNNING));
        assert_eq!(
            state(&e, late),
            held_tres(Scope::Qos, Limit::GrpTresRunMins, Tres::Cpu),
            "{via:?}"
        );
        assert_eq!(
            e.job(late).unwrap().reason.as_str(),
            "QOSGrpCPURunMinutesLimit"
        );
        // An extended limit holds more: 4 × 20 + 4 × 10 minutes are over 80 a while longer.
        e.set_time_limit(a, Some(20 * 60)).unwrap();
        clock.advance(300);
        assert!(started(&pass(&mut e, via)).is_empty(), "{via:?}");
        // Cut back: 8 × 5 minutes left, and 2 × 10 more fit in 80.
        e.set_time_limit(a, Some(600)).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![late], "{via:?}");

        let plain = JobSpec {
            qos: None,
            ..job("carol", 4)
        };
        let c1 = e.submit(plain.clone()).unwrap();
        let c2 = e.submit(plain).unwrap();
        pass(&mut e, via);
        assert_eq!(state(&e, c1), RUNNING);
        assert_eq!(
            state(&e, c2),
            held_tres(Scope::Assoc, Limit::GrpTresRunMins, Tres::Cpu),
            "{via:?}"
        );
        assert_eq!(
            e.job(c2).unwrap().reason.as_str(),
            "AssocGrpCPURunMinutesLimit"
        );
        e.job_finished(c1, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![c2], "{via:?}");
    }
}

#[test]
fn grp_tres_mins_holds_jobs_once_decayed_use_reaches_it() {
    for via in BOTH {
        let mut c = base();
        c.priority.priority_decay_half_life = 3600;
        c.priority.priority_calc_period = 60;
        let physics = account(&c, "physics");
        // 100 CPU-minutes of the limit's 100 already used (a migrated site's usage).
        c.associations[physics.index()].raw_usage = 100.0 * 60.0;
        c.associations[physics.index()].limits.grp_tres_mins =
            TresLimits::parse("cpu=100").unwrap();
        high(&mut c).grp_tres_mins = TresLimits::parse("cpu=30").unwrap();
        let (mut e, clock) = run_quiet(c);
        let plain = |user: &str| JobSpec {
            qos: None,
            ..job(user, 1)
        };
        let alice = e.submit(plain("alice")).unwrap();
        let carol = e.submit(plain("carol")).unwrap();
        pass(&mut e, via);
        assert_eq!(
            state(&e, alice),
            held_tres(Scope::Assoc, Limit::GrpTresMins, Tres::Cpu),
            "{via:?}"
        );
        assert_eq!(
            e.job(alice).unwrap().reason.as_str(),
            "AssocGrpCPUMinutesLimit"
        );
        assert_eq!(state(&e, carol), RUNNING, "chem has used nothing");
        // A half-life later half the use is left: physics may run again.
        clock.advance(3600);
        e.tick();
        assert_eq!(started(&pass(&mut e, via)), vec![alice], "{via:?}");

        // QOS high: 8 CPUs for two minutes, times UsageFactor 2, is 32 CPU-minutes of its 30.
        let big = e.submit(job("carol", 8)).unwrap();
        pass(&mut e, via);
        assert_eq!(state(&e, big), RUNNING);
        clock.advance(120);
        e.tick();
        // The QOS's use has reached its limit: the job is ended, as acct_policy_job_time_out
        // ends it in slurmctld.
        assert_eq!(e.job(big).unwrap().state, JobState::Timeout, "{via:?}");
        clock.advance(60);
        e.tick();
        let next = e.submit(job("carol", 1)).unwrap();
        pass(&mut e, via);
        assert_eq!(
            state(&e, next),
            held_tres(Scope::Qos, Limit::GrpTresMins, Tres::Cpu),
            "{via:?}"
        );
        assert_eq!(
            e.job(next).unwrap().reason.as_str(),
            "QOSGrpCPUMinutesLimit"
        );
        // Three half-lives on, an eighth of it is left.
        clock.advance(3 * 3600);
        e.tick();
        assert_eq!(started(&pass(&mut e, via)), vec![next], "{via:?}");
    }
}

#[test]
fn grp_wall_holds_jobs_once_decayed_wall_time_reaches_it() {
    for via in BOTH {
        let mut c = base();
        c.priority.priority_decay_half_life = 3600;
        c.priority.priority_calc_period = 60;
        let chem = account(&c, "chem");
        c.associations[chem.index()].limits.grp_wall = Some(TimeLimit::Seconds(20 * 60));
        let (mut e, clock) = run_quiet(c);
        let plain = JobSpec {
            qos: None,
            time_limit: Some(3600),
            ..job("carol", 8)
        };
        let first = e.submit(plain.clone()).unwrap();
        pass(&mut e, via);
        assert_eq!(state(&e, first), RUNNING);
        // Minutes of one job's wall time, whatever its CPUs, until the decayed twenty are
        // used (a little over twenty run, as they decay while it runs).
        let mut minutes = 0;
        while state(&e, first) == RUNNING && minutes < 30 {
            clock.advance(60);
            e.tick();
            minutes += 1;
        }
        assert!(
            (21..30).contains(&minutes),
            "{via:?}: ended after {minutes} minutes"
        );
        // Its association's decayed wall time reached twenty minutes while it ran: ended.
        assert_eq!(e.job(first).unwrap().state, JobState::Timeout, "{via:?}");
        let second = e.submit(plain).unwrap();
        let other = e.submit(JobSpec {
            qos: None,
            ..job("alice", 1)
        });
        pass(&mut e, via);
        assert_eq!(
            state(&e, second),
            held(Scope::Assoc, Limit::GrpWall),
            "{via:?}"
        );
        assert_eq!(e.job(second).unwrap().reason.as_str(), "AssocGrpWallLimit");
        assert_eq!(state(&e, other.unwrap()), RUNNING, "physics has no GrpWall");
        // Decayed below twenty minutes after a while with nothing running.
        for _ in 0..30 {
            clock.advance(60);
            e.tick();
        }
        assert_eq!(started(&pass(&mut e, via)), vec![second], "{via:?}");
    }
}

#[test]
fn qos_grp_wall_counts_every_job_of_the_qos() {
    let mut c = base();
    c.priority.priority_decay_half_life = 0;
    c.priority.priority_calc_period = 60;
    c.qos[1].usage_factor = 1.0;
    high(&mut c).grp_wall = Some(TimeLimit::Seconds(10 * 60));
    let (mut e, clock) = run_quiet(c);
    let a = e.submit(job("alice", 1)).unwrap();
    let b = e.submit(job("bob", 1)).unwrap();
    e.schedule();
    // Two jobs for four minutes each: eight minutes of the QOS's wall time, never decayed.
    for _ in 0..4 {
        clock.advance(60);
        e.tick();
    }
    assert_eq!(state(&e, a), RUNNING);
    // A fifth minute makes ten: both are ended, as slurmctld ends jobs at GrpWall.
    clock.advance(60);
    e.tick();
    for id in [a, b] {
        assert_eq!(e.job(id).unwrap().state, JobState::Timeout);
    }
    let c3 = e.submit(job("carol", 1)).unwrap();
    e.schedule();
    assert_eq!(state(&e, c3), held(Scope::Qos, Limit::GrpWall));
    assert_eq!(e.job(c3).unwrap().reason.as_str(), "QOSGrpWallLimit");
}

#[test]
fn license_limits_count_licenses_as_tres() {
    for via in BOTH {
        let mut c = with_licenses(base(), &[("matlab", 10), ("fluent", 10)]);
        high(&mut c).grp_tres = TresLimits::parse("license/matlab=4").unwrap();
        high(&mut c).max_tres_per_user = TresLimits::parse("license/matlab=3").unwrap();
        high(&mut c).max_tres_per_job = TresLimits::parse("license/fluent=2").unwrap();
        let (mut e, _clock) = run(c);
        let with = |user: &str, lic: &str| JobSpec {
            licenses: parse_licenses(lic).unwrap(),
            ..job(user, 1)
        };
        let a1 = e.submit(with("alice", "matlab:2")).unwrap();
        let a2 = e.submit(with("alice", "matlab:2")).unwrap();
        let b1 = e.submit(with("bob", "matlab:2")).unwrap();
        let c1 = e.submit(with("carol", "matlab:1")).unwrap();
        let greedy = e.submit(with("carol", "fluent:3")).unwrap();
        pass(&mut e, via);
        assert_eq!((state(&e, a1), state(&e, b1)), (RUNNING, RUNNING));
        assert_eq!(
            state(&e, a2),
            held_tres(Scope::Qos, Limit::TresPerUser, Tres::License),
            "{via:?}"
        );
        assert_eq!(e.job(a2).unwrap().reason.as_str(), "QOSMaxLicensePerUser");
        assert_eq!(
            state(&e, c1),
            held_tres(Scope::Qos, Limit::GrpTres, Tres::License),
            "{via:?}"
        );
        assert_eq!(e.job(c1).unwrap().reason.as_str(), "QOSGrpLicense");
        assert_eq!(
            state(&e, greedy),
            held_tres(Scope::Qos, Limit::TresPerJob, Tres::License)
        );
        assert_eq!(
            e.job(greedy).unwrap().reason.as_str(),
            "QOSMaxLicensePerJob"
        );
        e.job_finished(b1, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![c1], "{via:?}");
        e.job_finished(a1, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![a2], "{via:?}");
    }
}

#[test]
fn association_grp_license_holds_the_subtree() {
    for via in BOTH {
        let mut c = with_licenses(base(), &[("matlab", 10)]);
        let physics = account(&c, "physics");
        c.associations[physics.index()].limits.grp_tres =
            TresLimits::parse("license/matlab=2").unwrap();
        let (mut e, _clock) = run(c);
        let with = |user: &str| JobSpec {
            qos: None,
            licenses: parse_licenses("matlab:2").unwrap(),
            ..job(user, 1)
        };
        let a = e.submit(with("alice")).unwrap();
        let b = e.submit(with("bob")).unwrap();
        let carol = e.submit(with("carol")).unwrap();
        pass(&mut e, via);
        assert_eq!((state(&e, a), state(&e, carol)), (RUNNING, RUNNING));
        assert_eq!(
            state(&e, b),
            held_tres(Scope::Assoc, Limit::GrpTres, Tres::License),
            "{via:?}"
        );
        assert_eq!(e.job(b).unwrap().reason.as_str(), "AssocGrpLicense");
        e.job_finished(a, 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![b], "{via:?}");
    }
}

#[test]
fn an_association_qos_list_refuses_other_qos_unless_qos_are_not_enforced() {
    let high_only = |enforce: AccountingEnforce| {
        let mut c = base();
        c.enforce = enforce;
        let physics = account(&c, "physics");
        c.associations[physics.index()].limits.qos = Some(vec![QosId(1)]);
        c.associations[physics.index()].default_qos = Some(QosId(1));
        let alice = c.user_assoc("alice", "physics").unwrap();
        // alice's own list (normal only) shadows physics' list.
        c.associations[alice.index()].limits.qos = Some(vec![QosId(0)]);
        c.associations[alice.index()].default_qos = Some(QosId(0));
        run(c).0
    };
    let mut e = high_only(AccountingEnforce::ALL);
    let err = e.submit(JobSpec {
        qos: Some("normal".into()),
        ..job("bob", 1)
    });
    assert_eq!(
        err.unwrap_err(),
        SubmitError::QosNotInAssociation {
            qos: "normal".into(),
            account: "physics".into()
        }
    );
    assert!(
        e.submit(JobSpec {
            qos: Some("normal".into()),
            ..job("bob", 1)
        })
        .unwrap_err()
        .to_string()
        .starts_with("invalid qos specification")
    );
    // bob's default comes from physics and is in its list.
    let bob = e
        .submit(JobSpec {
            qos: None,
            ..job("bob", 1)
        })
        .unwrap();
    assert_eq!(e.job(bob).unwrap().qos, QosId(1));
    assert!(matches!(
        e.submit(job("alice", 1)),
        Err(SubmitError::QosNotInAssociation { .. })
    ));
    e.submit(JobSpec {
        qos: None,
        ..job("alice", 1)
    })
    .unwrap();
    e.submit(job("carol", 1)).unwrap();
    let mut lax = high_only(AccountingEnforce {
        qos: false,
        ..AccountingEnforce::ALL
    });
    lax.submit(JobSpec {
        qos: Some("normal".into()),
        ..job("bob", 1)
    })
    .unwrap();
}

#[test]
fn with_safe_grp_tres_mins_holds_a_job_that_could_not_run_to_its_limit() {
    for via in BOTH {
        for safe in [false, true] {
            let mut c = base();
            c.enforce.safe = safe;
            c.priority.priority_decay_half_life = 0;
            c.priority.priority_calc_period = 60;
            let chem = account(&c, "chem");
            c.associations[chem.index()].limits.grp_tres_mins =
                TresLimits::parse("cpu=100").unwrap();
            let (mut e, clock) = run_quiet(c);
            // 8 CPUs × 10 minutes each: 80 CPU-minutes a job.
            let plain = JobSpec {
                qos: None,
                ..job("carol", 8)
            };
            let first = e.submit(plain.clone()).unwrap();
            let second = e.submit(plain).unwrap();
            pass(&mut e, via);
            assert_eq!(state(&e, first), RUNNING);
            if !safe {
                assert_eq!(state(&e, second), RUNNING, "{via:?}: nothing used yet");
                continue;
            }
            assert_eq!(
                state(&e, second),
                held_tres(Scope::Assoc, Limit::GrpTresMins, Tres::Cpu),
                "{via:?}: 80 left to the first and 80 of its own"
            );
            // The first ends after a minute: 8 used, and 8 + 80 fit in 100.
            clock.advance(60);
            e.job_finished(first, 0).unwrap();
            clock.advance(60);
            e.tick();
            assert_eq!(started(&pass(&mut e, via)), vec![second], "{via:?}");
        }
    }
}

/// An engine with the bundle's cons_tres on one node of four CPUs whose partition shares CPUs
/// as `mode` says (the tests' first-fit selection shares nothing, which the contract allows).
fn sharing(mode: OverSubscribe) -> (Engine, ManualClock) {
    let mut c = cluster(1, 4);
    c.partitions[0].access.oversubscribe = mode;
    let (mut e, clock) = run(c);
    e.set_policies(sluice_engine::Policies {
        priority: Box::new(SiteFactorPriority),
        selection: Box::new(sluice_plugin_select_cons_tres::ConsTres::default()),
        hres: None,
        gres: Vec::new(),
    })
    .unwrap();
    (e, clock)
}

#[test]
fn force_lets_each_cpu_hold_up_to_its_count_of_jobs() {
    for via in BOTH {
        let (mut e, _clock) = sharing(OverSubscribe::Force(2));
        let ids: Vec<JobId> = (0..9).map(|_| e.submit(job("alice", 1)).unwrap()).collect();
        assert_eq!(
            started(&pass(&mut e, via)),
            ids[..8],
            "{via:?}: two jobs on each of the four CPUs"
        );
        assert_eq!(state(&e, ids[8]).0, JobState::Pending, "{via:?}");
        if let Via::Main = via {
            assert_eq!(state(&e, ids[8]).1, Reason::Resources);
        }
        e.job_finished(ids[0], 0).unwrap();
        assert_eq!(started(&pass(&mut e, via)), vec![ids[8]], "{via:?}");
    }
}

#[test]
fn yes_shares_the_cpus_of_jobs_that_ask_and_no_others() {
    for via in BOTH {
        let (mut e, _clock) = sharing(OverSubscribe::Yes(2));
        let asking = || JobSpec {
            oversubscribe: true,
            ..job("alice", 2)
        };
        // Two jobs fill the four CPUs; the third shares two of them.
        let shared: Vec<JobId> = (0..3).map(|_| e.submit(asking()).unwrap()).collect();
        let alone = e.submit(job("bob", 1)).unwrap();
        assert_eq!(started(&pass(&mut e, via)), shared, "{via:?}");
        assert_eq!(
            state(&e, alone).0,
            JobState::Pending,
            "{via:?}: every CPU has a job, and bob's job does not share"
        );
        e.job_finished(shared[0], 0).unwrap();
        e.job_finished(shared[1], 0).unwrap();
        // Two CPUs are now held by no job: bob's one-CPU job takes one of them.
        assert_eq!(started(&pass(&mut e, via)), vec![alone], "{via:?}");
    }
    // Without --oversubscribe a YES partition shares nothing.
    let (mut e, _clock) = sharing(OverSubscribe::Yes(2));
    let ids: Vec<JobId> = (0..3).map(|_| e.submit(job("alice", 2)).unwrap()).collect();
    assert_eq!(started(&e.schedule()), ids[..2]);
}

#[test]
fn an_exclusive_job_takes_whole_nodes_even_under_force() {
    let (mut e, _clock) = sharing(OverSubscribe::Force(4));
    let whole = e
        .submit(JobSpec {
            exclusive: true,
            ..job("alice", 1)
        })
        .unwrap();
    let other = e.submit(job("bob", 1)).unwrap();
    assert_eq!(started(&e.schedule()), vec![whole]);
    assert_eq!(e.job(whole).unwrap().alloc.as_ref().unwrap().cpus(), 4);
    assert_eq!(state(&e, other).0, JobState::Pending);
}

#[test]
fn decayed_use_is_given_back_to_a_restarted_engine() {
    let mut c = base();
    c.priority.priority_decay_half_life = 3600;
    c.priority.priority_calc_period = 60;
    // QOS use is not seeded from associations' raw usage: only the kept use can hold a job.
    high(&mut c).grp_wall = Some(TimeLimit::Seconds(10 * 60));
    let (mut e, clock) = run_quiet(c.clone());
    let a = e.submit(job("alice", 1)).unwrap();
    e.schedule();
    for _ in 0..12 {
        clock.advance(60);
        e.tick();
    }
    assert_eq!(e.job(a).unwrap().state, JobState::Timeout);
    let (qos, assocs) = e.limit_use();
    assert!(qos[1].wall_secs >= 600.0, "{:?}", qos[1]);
    let restarted = |keep: bool| {
        let (mut e, _clock) = run_quiet(c.clone());
        if keep {
            let qos: Vec<_> = (qos.iter().cloned().enumerate())
                .map(|(i, u)| (QosId(i as u32), u))
                .collect();
            let assocs: Vec<_> = (assocs.iter().cloned().enumerate())
                .map(|(i, u)| (AssocId(i as u32), u))
                .collect();
            e.restore_limit_use(&qos, &assocs);
        }
        let b = e.submit(job("bob", 1)).unwrap();
        e.schedule();
        state(&e, b)
    };
    assert_eq!(restarted(true), held(Scope::Qos, Limit::GrpWall));
    assert_eq!(restarted(false), RUNNING, "without it the use is forgotten");
}
