//! Hand-computed schedules: where each scheduler must, and must not, start a job.

mod common;

use common::{expect, head_protection_workload, job, run, starts};
use sluice_sim::{RuntimeMode, SchedulerKind};

const KILL: RuntimeMode = RuntimeMode::KillAtLimit;
const RTC: RuntimeMode = RuntimeMode::RunToCompletion;

#[test]
fn easy_backfills_on_extra_processors_and_by_the_shadow_time_but_never_delays_the_head() {
    let out = run(&head_protection_workload(), 10, SchedulerKind::Easy, KILL);
    assert_eq!(
        starts(&out),
        expect(&[(1, 0), (2, 100), (3, 2), (4, 150), (5, 4)])
    );
}

#[test]
fn fcfs_never_lets_a_job_overtake() {
    let out = run(&head_protection_workload(), 10, SchedulerKind::Fcfs, KILL);
    assert_eq!(
        starts(&out),
        expect(&[(1, 0), (2, 100), (3, 100), (4, 150), (5, 150)])
    );
}

#[test]
fn conservative_matches_easy_when_only_the_head_is_at_stake() {
    let out = run(
        &head_protection_workload(),
        10,
        SchedulerKind::Conservative,
        KILL,
    );
    assert_eq!(
        starts(&out),
        expect(&[(1, 0), (2, 100), (3, 2), (4, 150), (5, 4)])
    );
}

/// J3 (the whole machine) waits behind head J2. J4 fits on J2's extra processors, so EASY starts
/// it and delays J3; conservative backfilling must not, because J3 holds a reservation too.
fn second_job_workload() -> Vec<sluice_sim::WorkloadJob> {
    vec![
        job(1, 0, 100, 100, 6),
        job(2, 1, 100, 100, 8),
        job(3, 2, 100, 100, 10),
        job(4, 3, 300, 300, 2),
    ]
}

#[test]
fn easy_may_delay_the_second_queued_job() {
    let out = run(&second_job_workload(), 10, SchedulerKind::Easy, KILL);
    assert_eq!(starts(&out), expect(&[(1, 0), (2, 100), (3, 303), (4, 3)]));
}

#[test]
fn conservative_protects_every_reservation() {
    let out = run(
        &second_job_workload(),
        10,
        SchedulerKind::Conservative,
        KILL,
    );
    assert_eq!(
        starts(&out),
        expect(&[(1, 0), (2, 100), (3, 200), (4, 300)])
    );
}

#[test]
fn easy_naive_makes_the_same_decisions_on_the_hand_made_cases() {
    for jobs in [head_protection_workload(), second_job_workload()] {
        let fast = run(&jobs, 10, SchedulerKind::Easy, KILL);
        let naive = run(&jobs, 10, SchedulerKind::EasyNaive, KILL);
        assert_eq!(fast.records, naive.records);
    }
}

/// J1 asks for 100 s but runs 300 s. Killed at its limit it frees the machine at 100; run to
/// completion it holds it until 300, and J3, arriving while J1 overruns, must not be backfilled
/// in front of head J2 because J1 is believed to end any second.
#[test]
fn runtime_switch_decides_when_an_underestimated_job_ends() {
    let jobs = vec![
        job(1, 0, 300, 100, 8),
        job(2, 1, 10, 10, 10),
        job(3, 120, 50, 50, 2),
    ];

    let killed = run(&jobs, 10, SchedulerKind::Easy, KILL);
    assert_eq!(starts(&killed), expect(&[(1, 0), (2, 100), (3, 120)]));
    assert_eq!(
        killed
            .records
            .iter()
            .find(|r| r.id == 1)
            .map(|r| (r.end, r.killed)),
        Some((100, true))
    );
    assert_eq!(killed.metrics.killed, 1);

    let completed = run(&jobs, 10, SchedulerKind::Easy, RTC);
    assert_eq!(starts(&completed), expect(&[(1, 0), (2, 300), (3, 310)]));
    assert_eq!(completed.metrics.killed, 0);
}

/// The shape of the SDSC-SP2 stall (128 processors): J1 asks for an hour and ends after ten
/// minutes, so head J2, which needs the whole machine, is blocked with a reservation at J1's
/// believed end (t = 3600) that no completion or submission reaches. `easy-accasim` stopped at
/// t = 600 with J2 queued; AccaSim makes a pass at the reservation time and starts it there.
#[test]
fn no_scheduler_stalls_when_the_machine_empties_before_the_blocked_head_s_reservation() {
    let jobs = vec![job(1, 0, 600, 3_600, 64), job(2, 10, 100, 200, 128)];
    for runtime in [KILL, RTC] {
        let accasim = run(&jobs, 128, SchedulerKind::EasyAccasim, runtime);
        assert_eq!(starts(&accasim), expect(&[(1, 0), (2, 3_600)]), "{runtime}");
        for kind in SchedulerKind::ALL {
            let out = run(&jobs, 128, kind, runtime);
            assert_eq!(out.metrics.jobs, 2, "{kind} / {runtime}");
        }
    }
}

#[test]
fn equal_submit_times_are_ordered_by_job_id() {
    let jobs = vec![job(5, 0, 10, 10, 10), job(3, 0, 10, 10, 10)];
    let out = run(&jobs, 10, SchedulerKind::Fcfs, KILL);
    assert_eq!(starts(&out), expect(&[(3, 0), (5, 10)]));
}

#[test]
fn zero_length_jobs_free_their_processors_at_once() {
    let jobs = vec![job(1, 0, 0, 0, 10), job(2, 0, 5, 5, 10)];
    for kind in [
        SchedulerKind::Fcfs,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
    ] {
        let out = run(&jobs, 10, kind, KILL);
        assert_eq!(starts(&out), expect(&[(1, 0), (2, 0)]), "{kind}");
    }
}

#[test]
fn jobs_larger_than_the_machine_are_dropped_and_counted() {
    let jobs = vec![
        job(1, 0, 10, 10, 4),
        job(2, 1, 10, 10, 11),
        job(3, 2, 10, 10, 10),
    ];
    let out = run(&jobs, 10, SchedulerKind::Easy, KILL);
    assert_eq!(out.metrics.jobs, 2);
    assert_eq!((out.metrics.dropped, out.metrics.dropped_oversize), (1, 1));
    assert_eq!(starts(&out), expect(&[(1, 0), (3, 10)]));
}

#[test]
fn metric_formulas_on_a_tiny_case() {
    // J2 waits 90 s behind J1 on a 4-processor machine and then runs 5 s.
    let jobs = vec![job(1, 0, 100, 100, 4), job(2, 10, 5, 5, 2)];
    let m = run(&jobs, 4, SchedulerKind::Fcfs, KILL).metrics;
    let bsld_j2 = (90.0 + 5.0) / 10.0; // run below τ = 10 s is bounded
    assert_eq!(m.jobs, 2);
    assert_eq!(m.avg_wait_s, 45.0);
    assert_eq!(m.max_wait_s, 90);
    assert_eq!(m.avg_bsld, (1.0 + bsld_j2) / 2.0);
    assert_eq!(m.makespan_s, 105);
    assert_eq!(m.utilization, (100.0 * 4.0 + 5.0 * 2.0) / (4.0 * 105.0));
}
