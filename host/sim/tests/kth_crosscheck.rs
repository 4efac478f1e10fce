//! Cross-check against published EASY results on KTH-SP2 (100 processors, user estimates).
//!
//! Reference (two independent simulators): average wait 6,095 s and bounded slowdown 81 when jobs
//! run to completion; 6,897 s and 89 when they are killed at their requested time. See README.md
//! for why the run-to-completion figures differ more (the reference is AccaSim's own EASY, which
//! `easy-accasim` reproduces); the tolerances are justified there.

mod common;

use sluice_sim::{RuntimeMode, SchedulerKind};

fn relative_error(got: f64, reference: f64) -> f64 {
    (got - reference).abs() / reference
}

#[test]
fn easy_kill_at_limit_is_within_two_percent_on_wait_and_six_on_slowdown() {
    let m = common::run_kth(SchedulerKind::Easy, RuntimeMode::KillAtLimit).metrics;
    assert_eq!((m.jobs, m.dropped), (28_475, 1));
    assert!(
        relative_error(m.avg_wait_s, 6_897.0) < 0.02,
        "avg wait {}",
        m.avg_wait_s
    );
    assert!(
        relative_error(m.avg_bsld, 89.0) < 0.06,
        "avg bsld {}",
        m.avg_bsld
    );
}

#[test]
fn easy_run_to_completion_is_within_fifteen_percent() {
    let m = common::run_kth(SchedulerKind::Easy, RuntimeMode::RunToCompletion).metrics;
    assert!(
        relative_error(m.avg_wait_s, 6_095.0) < 0.15,
        "avg wait {}",
        m.avg_wait_s
    );
    assert!(
        relative_error(m.avg_bsld, 81.0) < 0.15,
        "avg bsld {}",
        m.avg_bsld
    );
}

#[test]
fn accasim_easy_run_to_completion_matches_the_reference_within_one_percent() {
    let m = common::run_kth(SchedulerKind::EasyAccasim, RuntimeMode::RunToCompletion).metrics;
    assert_eq!((m.jobs, m.dropped), (28_475, 1));
    // 1 % is far inside the effect of each of AccaSim's three rule differences (the smallest moves
    // the wait by 5 %), so the test fails if any of them is lost.
    assert!(
        relative_error(m.avg_wait_s, 6_095.0) < 0.01,
        "avg wait {}",
        m.avg_wait_s
    );
    assert!(
        relative_error(m.avg_bsld, 81.0) < 0.01,
        "avg bsld {}",
        m.avg_bsld
    );
}

#[test]
fn fast_and_naive_easy_produce_the_same_schedule_on_the_whole_trace() {
    for runtime in [RuntimeMode::KillAtLimit, RuntimeMode::RunToCompletion] {
        let fast = common::run_kth(SchedulerKind::Easy, runtime);
        let naive = common::run_kth(SchedulerKind::EasyNaive, runtime);
        assert_eq!(fast.records, naive.records, "{runtime}");
    }
}

#[test]
fn backfilling_beats_fcfs_and_easy_beats_conservative_on_wait() {
    let fcfs = common::run_kth(SchedulerKind::Fcfs, RuntimeMode::KillAtLimit).metrics;
    let easy = common::run_kth(SchedulerKind::Easy, RuntimeMode::KillAtLimit).metrics;
    let conservative =
        common::run_kth(SchedulerKind::Conservative, RuntimeMode::KillAtLimit).metrics;
    assert!(easy.avg_wait_s < fcfs.avg_wait_s / 10.0);
    assert!(conservative.avg_wait_s < fcfs.avg_wait_s / 10.0);
    // Not a law, but the literature's finding on this trace: EASY's aggressiveness pays off.
    assert!(easy.avg_wait_s < conservative.avg_wait_s);
    // Utilization is fixed by the workload once every job has run; only the makespan tail moves.
    assert!((easy.utilization - conservative.utilization).abs() < 0.01);
}
