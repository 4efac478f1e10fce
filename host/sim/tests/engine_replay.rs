//! The engine-backed replay: Slurm's decisions on hand-made traces, overruns, refusals,
//! determinism, and bundles that differ.

mod common;

use std::collections::BTreeMap;

use common::{expect, head_protection_workload, job, kth_path, run_on, starts};
use sluice_engine::Policies;
use sluice_plugin_priority_basic::Basic;
use sluice_plugin_priority_multifactor::Multifactor;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_policy::{FromSettings, SettingValue, Settings};
use sluice_sim::compare::compare;
use sluice_sim::csv::CsvWriter;
use sluice_sim::scheduler::{EngineOptions, EngineScheduler, FlatMachine, Passes};
use sluice_sim::{
    MemoryWorkload, ReplayConfig, ReplayOutput, RuntimeMode, SlurmRequest, SwfFields, Time,
    Workload, WorkloadJob, replay,
};

/// Which priority policy the bundle has.
#[derive(Clone, Copy)]
enum Priority {
    Basic,
    Multifactor,
}

fn policies(priority: Priority) -> Policies {
    let priority: Box<dyn sluice_policy::PriorityPolicy + Send> = match priority {
        Priority::Basic => Box::new(Basic::from_settings(&Settings::default())),
        Priority::Multifactor => Box::new(Multifactor::from_settings(
            &Settings::default()
                .with("weight.fairshare", SettingValue::Integer(100_000))
                .with("weight.age", SettingValue::Integer(10)),
        )),
    };
    Policies {
        priority,
        selection: Box::new(ConsTres::from_settings(&Settings::default())),
        hres: None,
        gres: Vec::new(),
    }
}

/// The engine on a flat machine of `procs` one-CPU nodes, with `priority` in its bundle and a
/// backfill cycle at most every `bf_interval` seconds.
fn flat_engine_with(procs: u32, priority: Priority, bf_interval: i64) -> EngineScheduler {
    let mut cluster = FlatMachine {
        procs,
        cpus_per_node: 1,
    }
    .cluster()
    .unwrap();
    cluster.scheduler.bf_interval = bf_interval;
    let options = EngineOptions::for_cluster("slurm", &cluster);
    EngineScheduler::new(cluster, policies(priority), options)
}

/// [`flat_engine_with`] with backfill allowed every second, so that a hand-made trace whose
/// events are seconds apart shows each backfill decision at the event that allows it.
fn flat_engine(procs: u32, priority: Priority) -> EngineScheduler {
    flat_engine_with(procs, priority, 1)
}

fn engine_run(
    jobs: &[WorkloadJob],
    procs: u32,
    priority: Priority,
    runtime: RuntimeMode,
) -> ReplayOutput {
    run_on(&mut flat_engine(procs, priority), jobs, procs, runtime)
}

fn user_job(id: u64, submit: Time, run: Time, procs: u32, user: i64) -> WorkloadJob {
    WorkloadJob {
        swf: SwfFields {
            user,
            ..SwfFields::UNKNOWN
        },
        ..job(id, submit, run, run, procs)
    }
}

/// 10 one-CPU nodes. J1 holds 6 until t=100; J2 (8 nodes) is reserved from 120 (the free time
/// rounded up to bf_resolution = 60 s) and starts at 100 in the main loop once J1 ends; J3 fits on
/// the two nodes the reservation leaves; J4 would need reserved nodes past 120; J5 ends by 100.
#[test]
fn slurm_backfill_starts_what_does_not_touch_a_reservation() {
    let jobs = head_protection_workload();
    let out = engine_run(&jobs, 10, Priority::Basic, RuntimeMode::KillAtLimit);
    assert_eq!(
        starts(&out),
        expect(&[(1, 0), (2, 100), (3, 2), (4, 150), (5, 4)])
    );
}

/// The same trace under Slurm's default `bf_interval` of 30 s: the engine's first backfill cycle
/// is allowed at 30, and runs then although no event comes. J3 starts in it; J5, which ended
/// before the head's reservation when started at 4, would now overlap it and waits with J4.
#[test]
fn backfill_runs_once_bf_interval_is_up_even_between_events() {
    let jobs = head_protection_workload();
    let mut scheduler = flat_engine_with(10, Priority::Basic, 30);
    let out = run_on(&mut scheduler, &jobs, 10, RuntimeMode::KillAtLimit);
    assert_eq!(
        starts(&out),
        expect(&[(1, 0), (2, 100), (3, 30), (4, 150), (5, 150)])
    );
}

/// The reservation is rounded to whole bf_resolution slots: a job that would end at 110, before
/// the head's real start (J1 ends at 100 but reservations begin on the minute, at 120), may run;
/// one that ends at 130 may not, where EASY with exact times would refuse both.
#[test]
fn reservations_sit_on_bf_resolution_boundaries() {
    let jobs = vec![
        job(1, 0, 100, 100, 6),
        job(2, 1, 50, 50, 10),
        job(3, 10, 100, 100, 4),
        job(4, 11, 119, 119, 4),
    ];
    let out = engine_run(&jobs, 10, Priority::Basic, RuntimeMode::KillAtLimit);
    let s = starts(&out);
    assert_eq!(
        s[&3], 10,
        "ends at 110, inside the slot before the reservation"
    );
    assert!(s[&4] >= s[&2], "ends at 130, past the reservation's start");
    assert!(s[&2] >= 100);
    let easy = common::run(
        &jobs,
        10,
        sluice_sim::SchedulerKind::Easy,
        RuntimeMode::KillAtLimit,
    );
    assert!(starts(&easy)[&3] > 10, "EASY's shadow time is exact");
}

/// Under run-to-completion the engine does not kill a job past its estimate: it runs until the
/// driver ends it, and the wide job waits for it.
#[test]
fn jobs_outliving_their_estimate_run_to_completion() {
    let jobs = vec![job(1, 0, 500, 60, 6), job(2, 1, 50, 50, 8)];
    let out = engine_run(&jobs, 10, Priority::Basic, RuntimeMode::RunToCompletion);
    let by_id: BTreeMap<u64, (Time, Time)> = out
        .records
        .iter()
        .map(|r| (r.id, (r.start, r.end)))
        .collect();
    assert_eq!(by_id[&1], (0, 500));
    assert_eq!(by_id[&2], (500, 550));
    assert_eq!(out.metrics.killed, 0);
    let killed = engine_run(&jobs, 10, Priority::Basic, RuntimeMode::KillAtLimit);
    assert_eq!(starts(&killed)[&2], 60);
}

/// Fair share moves a light user's job ahead of a heavy user's older one; FIFO does not.
#[test]
fn multifactor_and_basic_bundles_start_jobs_differently() {
    let jobs = vec![
        user_job(1, 0, 1000, 4, 1),
        user_job(2, 10, 100, 4, 1),
        user_job(3, 20, 100, 4, 1),
        user_job(4, 30, 100, 4, 2),
    ];
    let fifo = engine_run(&jobs, 4, Priority::Basic, RuntimeMode::KillAtLimit);
    let fair = engine_run(&jobs, 4, Priority::Multifactor, RuntimeMode::KillAtLimit);
    assert_eq!(
        starts(&fifo),
        expect(&[(1, 0), (2, 1000), (3, 1100), (4, 1200)])
    );
    assert_eq!(starts(&fair)[&4], 1000, "user 2 has used nothing");
    let cmp = compare(&fifo, &fair, 10).unwrap();
    assert!(cmp.moved_total >= 2);
    assert_eq!(cmp.moved[0].id, 4);
}

/// A JSON-lines job for a partition the cluster does not have is refused and counted.
#[test]
fn refused_submissions_are_counted_not_replayed() {
    let mut bad = job(2, 5, 10, 10, 1);
    bad.slurm = Some(Box::new(SlurmRequest {
        partition: Some("nope".into()),
        tasks: 1,
        cpus_per_task: 1,
        ..SlurmRequest::default()
    }));
    let jobs = vec![job(1, 0, 10, 10, 1), bad, job(3, 6, 10, 10, 1)];
    let out = engine_run(&jobs, 2, Priority::Basic, RuntimeMode::KillAtLimit);
    assert_eq!(out.metrics.jobs, 2);
    assert_eq!(out.metrics.refused, 1);
    assert_eq!(out.metrics.dropped, 1);
}

fn kth_prefix(n: usize) -> Vec<WorkloadJob> {
    Workload::open(&kth_path())
        .unwrap()
        .take(n)
        .collect::<Result<_, _>>()
        .unwrap()
}

fn csv_of(jobs: &[WorkloadJob]) -> Vec<u8> {
    let mut scheduler = flat_engine(100, Priority::Multifactor);
    let mut source = MemoryWorkload::new(jobs, 0, None);
    let config = ReplayConfig {
        procs: 100,
        runtime: RuntimeMode::RunToCompletion,
        keep_records: false,
    };
    let mut writer = CsvWriter::new(Vec::new()).unwrap();
    replay(&mut source, &mut scheduler, &config, &mut writer).unwrap();
    writer.finish().unwrap()
}

#[test]
fn the_engine_replay_is_byte_identical_across_runs() {
    let jobs = kth_prefix(2000);
    let first = csv_of(&jobs);
    assert!(first.len() > 2000 * 10, "one row per job");
    assert_eq!(first, csv_of(&jobs));
}

#[test]
fn memory_follows_the_jobs_in_flight_not_the_trace_length() {
    // 20,000 jobs in bursts of five, each burst done before the next: never more than five in
    // flight. A replay holding the trace would show a peak of thousands.
    let jobs: Vec<WorkloadJob> = (0..20_000u64)
        .map(|i| job(i + 1, (i / 5) as Time * 1_000, 300, 600, 4))
        .collect();
    let config = ReplayConfig {
        procs: 8,
        runtime: RuntimeMode::KillAtLimit,
        keep_records: false,
    };
    for kind in [
        sluice_sim::SchedulerKind::Easy,
        sluice_sim::SchedulerKind::Fcfs,
    ] {
        let mut source = MemoryWorkload::new(&jobs, 0, None);
        let mut scheduler = kind.build(8);
        let out = replay(&mut source, &mut scheduler, &config, ()).unwrap();
        assert_eq!(out.metrics.jobs, 20_000);
        assert_eq!(out.metrics.peak_in_flight, 5, "{}", kind.as_str());
        assert!(out.records.is_empty());
    }

    let mut scheduler = flat_engine(8, Priority::Multifactor);
    let mut source = MemoryWorkload::new(&jobs, 0, None);
    let out = replay(&mut source, &mut scheduler, &config, ()).unwrap();
    assert_eq!(out.metrics.jobs, 20_000);
    assert_eq!(out.metrics.peak_in_flight, 5);
    // The engine forgets every job once it has ended.
    let engine = scheduler.engine().expect("the engine was built");
    assert_eq!(engine.jobs().count(), 0);
}

/// A replay holds jobs to the cluster's QOS limits as the live engine does: with
/// `MaxJobsPerUser = 1` a user's second job waits for the first although CPUs are free, while
/// another user's job starts at once.
#[test]
fn a_replay_honours_qos_limits() {
    let mut cluster = FlatMachine {
        procs: 4,
        cpus_per_node: 1,
    }
    .cluster()
    .unwrap();
    cluster.scheduler.bf_interval = 1;
    cluster.qos.push(sluice_cluster::Qos {
        name: "normal".into(),
        priority: 0,
        usage_factor: 1.0,
        no_decay: false,
        limits: sluice_cluster::QosLimits {
            max_jobs_per_user: Some(1),
            ..Default::default()
        },
        deny_on_limit: false,
        over_part_qos: false,
    });
    let options = EngineOptions::for_cluster("slurm", &cluster);
    let mut scheduler = EngineScheduler::new(cluster, policies(Priority::Basic), options);
    let jobs = vec![
        user_job(1, 0, 100, 1, 1),
        user_job(2, 1, 100, 1, 1),
        user_job(3, 2, 100, 1, 2),
    ];
    let out = run_on(&mut scheduler, &jobs, 4, RuntimeMode::KillAtLimit);
    assert_eq!(starts(&out), expect(&[(1, 0), (2, 100), (3, 2)]));
}

/// A replay holds jobs to `GrpTRESRunMins` as the live engine does: with room for 4 CPU-minutes
/// of time left, two one-CPU jobs with two-minute limits leave no room for a third until their
/// time left drops under three minutes together (t = 31), long before either ends. Time alone
/// frees the room, so the passes run periodically (with passes at events only, the third job
/// waits for the next event).
#[test]
fn a_replay_honours_grp_tres_run_mins() {
    let mut cluster = FlatMachine {
        procs: 4,
        cpus_per_node: 1,
    }
    .cluster()
    .unwrap();
    cluster.scheduler.bf_interval = 1;
    cluster.qos.push(sluice_cluster::Qos {
        name: "normal".into(),
        priority: 0,
        usage_factor: 1.0,
        no_decay: false,
        limits: sluice_cluster::QosLimits {
            grp_tres_run_mins: sluice_cluster::TresLimits::parse("cpu=4").unwrap(),
            ..Default::default()
        },
        deny_on_limit: false,
        over_part_qos: false,
    });
    let options = EngineOptions {
        passes: Passes::Periodic,
        ..EngineOptions::for_cluster("slurm", &cluster)
    };
    let mut scheduler = EngineScheduler::new(cluster, policies(Priority::Basic), options);
    let jobs = vec![
        user_job(1, 0, 120, 1, 1),
        user_job(2, 1, 120, 1, 2),
        user_job(3, 2, 120, 1, 3),
    ];
    let out = run_on(&mut scheduler, &jobs, 4, RuntimeMode::KillAtLimit);
    assert_eq!(starts(&out), expect(&[(1, 0), (2, 1), (3, 31)]));
}
