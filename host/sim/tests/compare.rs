//! Comparing two runs: metrics side by side, the jobs whose start moved most, and the plots.

mod common;

use common::{head_protection_workload, job, run};
use sluice_sim::compare::{COMPARISON_MD, CompareError, compare};
use sluice_sim::report::DIFFERENCE_SVG;
use sluice_sim::{RuntimeMode, SchedulerKind};

#[test]
fn the_jobs_that_moved_most_come_first() {
    // FCFS starts J3 at 100 and J5 at 150; EASY starts them at 2 and 4.
    let jobs = head_protection_workload();
    let fcfs = run(&jobs, 10, SchedulerKind::Fcfs, RuntimeMode::KillAtLimit);
    let easy = run(&jobs, 10, SchedulerKind::Easy, RuntimeMode::KillAtLimit);
    let cmp = compare(&fcfs, &easy, 10).unwrap();
    assert_eq!(cmp.moved_total, 2);
    assert_eq!(
        cmp.moved
            .iter()
            .map(|d| (d.id, d.delta()))
            .collect::<Vec<_>>(),
        [(5, -146), (3, -98)]
    );
    let md = cmp.to_markdown();
    assert!(md.contains("| 5 | 4 | 150 | 4 | -146 |"), "{md}");
    assert!(md.contains("A: fcfs / kill-at-limit vs B: easy / kill-at-limit"));

    let dir = std::env::temp_dir().join(format!("sluice-sim-compare-{}", std::process::id()));
    cmp.write(&dir, &fcfs, &easy).unwrap();
    let svg = std::fs::read_to_string(dir.join("utilization.svg")).unwrap();
    assert!(svg.contains("fcfs / kill-at-limit") && svg.contains("easy / kill-at-limit"));
    // A trace of a few minutes is shown in hours, not in fractions of a day.
    assert!(svg.contains("hours since first submission"));
    let difference = std::fs::read_to_string(dir.join(DIFFERENCE_SVG)).unwrap();
    assert!(difference.contains("B waits less than A (fcfs / kill-at-limit)"));
    assert!(dir.join(COMPARISON_MD).exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn runs_without_records_cannot_be_compared() {
    let jobs = vec![job(1, 0, 10, 10, 1)];
    let mut a = run(&jobs, 4, SchedulerKind::Fcfs, RuntimeMode::KillAtLimit);
    let b = a.clone();
    a.records.clear();
    assert!(matches!(
        compare(&a, &b, 5),
        Err(CompareError::NoRecords(_))
    ));
}
