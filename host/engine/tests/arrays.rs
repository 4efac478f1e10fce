//! Job arrays in the engine: the throttle in the main loop and backfill alike, dependencies on
//! a whole array, on one task and task by task (`aftercorr`), and outcomes that outlive a purge.

mod common;

use common::*;
use sluice_engine::request::parse_dependencies;
use sluice_engine::{Event, JobId, JobSpec, JobState, Loop, Reason};

fn task() -> JobSpec {
    JobSpec {
        time_limit: Some(600),
        ..JobSpec::new("alice")
    }
}

fn started(events: &[Event], by: Loop) -> Vec<JobId> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Started { job, by: b, .. } if *b == by => Some(*job),
            _ => None,
        })
        .collect()
}

fn running(e: &sluice_engine::Engine, jobs: &[JobId]) -> usize {
    jobs.iter()
        .filter(|j| e.job(**j).unwrap().state == JobState::Running)
        .count()
}

#[test]
fn the_throttle_holds_tasks_in_the_main_loop_and_can_be_raised() {
    let (mut e, clock) = engine(cluster(4, 8));
    let (array, jobs) = e.submit_array(task(), &[1, 2, 3, 4, 5, 6], 2).unwrap();
    assert_eq!(jobs.len(), 6);
    assert!(
        jobs.iter().all(|j| *j > array),
        "the array's id names no task"
    );
    let first = e.tick();
    assert_eq!(started(&first, Loop::Main), jobs[..2]);
    assert_eq!(running(&e, &jobs), 2);
    for j in &jobs[2..] {
        assert_eq!(e.job(*j).unwrap().reason, Reason::JobArrayTaskLimit);
    }
    clock.advance(10);
    e.job_finished(jobs[0], 0).unwrap();
    assert_eq!(started(&e.tick(), Loop::Main), [jobs[2]]);
    assert_eq!(running(&e, &jobs), 2);
    e.set_array_throttle(array, 3).unwrap();
    assert_eq!(started(&e.schedule(), Loop::Main), [jobs[3]]);
    assert_eq!(running(&e, &jobs), 3);
    e.set_array_throttle(array, 0).unwrap();
    e.schedule();
    assert_eq!(running(&e, &jobs), 5, "no throttle: every task left runs");
}

#[test]
fn backfill_holds_to_the_throttle_too() {
    let (mut e, _clock) = engine(cluster(4, 8));
    let (_, jobs) = e.submit_array(task(), &[0, 1, 2, 3], 3).unwrap();
    let events = e.backfill();
    assert_eq!(started(&events, Loop::Backfill), jobs[..3]);
    assert_eq!(e.job(jobs[3]).unwrap().reason, Reason::JobArrayTaskLimit);
}

#[test]
fn aftercorr_waits_for_the_task_of_the_same_index() {
    let (mut e, clock) = engine(cluster(4, 8));
    let (a, first) = e.submit_array(task(), &[0, 1, 2], 0).unwrap();
    let deps = parse_dependencies(&format!("aftercorr:{a}")).unwrap();
    let (_, second) = e
        .submit_array(
            JobSpec {
                dependencies: deps,
                ..task()
            },
            &[0, 1, 2, 3],
            0,
        )
        .unwrap();
    e.tick();
    assert_eq!(running(&e, &first), 3);
    for j in &second[..3] {
        assert_eq!(e.job(*j).unwrap().reason, Reason::Dependency);
    }
    // Task 3 has no partner in the first array: nothing to wait for.
    assert_eq!(e.job(second[3]).unwrap().state, JobState::Running);
    clock.advance(10);
    e.job_finished(first[0], 0).unwrap();
    e.job_finished(first[1], 1).unwrap();
    e.tick();
    assert_eq!(e.job(second[0]).unwrap().state, JobState::Running);
    assert_eq!(
        e.job(second[1]).unwrap().reason,
        Reason::DependencyNeverSatisfied
    );
    assert_eq!(e.job(second[2]).unwrap().reason, Reason::Dependency);
}

#[test]
fn whole_array_and_one_task_dependencies_and_purged_outcomes() {
    let (mut e, clock) = engine(cluster(4, 8));
    let (a, tasks) = e.submit_array(task(), &[0, 1], 0).unwrap();
    let on = |text: String| JobSpec {
        dependencies: parse_dependencies(&text).unwrap(),
        ..task()
    };
    let ok = e.submit(on(format!("afterok:{a}"))).unwrap();
    let notok = e.submit(on(format!("afternotok:{a}"))).unwrap();
    let any = e.submit(on(format!("afterany:{a}"))).unwrap();
    let one = e.submit(on(format!("afterok:{a}_0"))).unwrap();
    e.tick();
    clock.advance(10);
    e.job_finished(tasks[0], 0).unwrap();
    // Task 0 leaves the engine; its outcome stays with the array.
    assert!(e.purge(tasks[0]));
    e.tick();
    assert_eq!(e.job(one).unwrap().state, JobState::Running);
    for j in [ok, notok, any] {
        assert_eq!(e.job(j).unwrap().reason, Reason::Dependency, "job {j}");
    }
    e.job_finished(tasks[1], 2).unwrap();
    e.tick();
    assert_eq!(e.job(ok).unwrap().reason, Reason::DependencyNeverSatisfied);
    assert_eq!(e.job(notok).unwrap().state, JobState::Running);
    assert_eq!(e.job(any).unwrap().state, JobState::Running);
}

#[test]
fn a_refused_array_queues_nothing() {
    let (mut e, _clock) = engine(cluster(4, 8));
    let too_big = JobSpec {
        min_nodes: 9,
        ..task()
    };
    assert!(e.submit_array(too_big, &[0, 1], 0).is_err());
    assert!(e.tick().is_empty());
    let (_, jobs) = e.submit_array(task(), &[0], 0).unwrap();
    assert_eq!(started(&e.tick(), Loop::Main), jobs);
}
