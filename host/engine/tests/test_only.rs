//! `--test-only` (`Engine::will_run`): when and where a job would start, from the backfill
//! plan, with nothing queued or changed.

mod common;

use common::*;
use sluice_engine::{JobSpec, JobState, SubmitError, WillRunError};

/// A job of `tasks` one-CPU tasks on as many 4-CPU nodes as they need.
fn job(tasks: u32, limit: u64) -> JobSpec {
    JobSpec {
        tasks,
        min_nodes: tasks.div_ceil(4),
        time_limit: Some(limit),
        ..JobSpec::new("alice")
    }
}

#[test]
fn a_job_that_fits_now_would_start_now_and_nothing_is_queued() {
    let (mut e, _clock) = engine(cluster(2, 4));
    let now = e.now();
    let answer = e.will_run(job(4, 600)).unwrap();
    assert_eq!(answer.start, now);
    assert_eq!(answer.nodes.len(), 1);
    assert_eq!(answer.cpus, 4);
    assert_eq!(answer.partition, "batch");
    assert_eq!(e.jobs().count(), 0, "the tested job is not kept");
    // The id the test did not take is the next submission's.
    let first = e.submit(job(4, 600)).unwrap();
    let (mut fresh, _c) = engine(cluster(2, 4));
    assert_eq!(first, fresh.submit(job(4, 600)).unwrap());
}

#[test]
fn a_job_that_waits_for_running_jobs_would_start_when_they_end() {
    let (mut e, _clock) = engine(cluster(2, 4));
    let now = e.now();
    let running = e.submit(job(8, 600)).unwrap();
    e.schedule();
    assert_eq!(e.job(running).unwrap().state, JobState::Running);
    let answer = e.will_run(job(8, 60)).unwrap();
    assert!(
        answer.start >= now + 600 && answer.start < now + 600 + 120,
        "start {} should follow the running job's end at {}",
        answer.start,
        now + 600
    );
    assert_eq!(answer.nodes.len(), 2);
    assert_eq!(answer.cpus, 8);
    assert_eq!(e.pending_ids().count(), 0);
    assert_eq!(e.job(running).unwrap().state, JobState::Running);
}

#[test]
fn a_job_is_planned_behind_what_the_backfill_plan_holds_for_others() {
    let (mut e, _clock) = engine(cluster(2, 4));
    let now = e.now();
    // One node busy until +600; a two-node job is planned to start then on both nodes.
    e.submit(job(4, 600)).unwrap();
    e.schedule();
    let planned = e.submit(job(8, 600)).unwrap();
    e.schedule();
    e.backfill();
    let planned_start = e.job(planned).unwrap().start_time.expect("planned");
    assert!(planned_start >= now + 600);
    // A short job fits before the planned start on the free node: it would start now.
    let short = e.will_run(job(4, 300)).unwrap();
    assert_eq!(short.start, now);
    // A long one would delay the planned job: it waits until that job has ended.
    let long = e.will_run(job(4, 3_000)).unwrap();
    assert!(
        long.start >= planned_start + 600,
        "start {} should follow the planned job's end at {}",
        long.start,
        planned_start + 600
    );
}

#[test]
fn a_job_submission_would_refuse_is_refused_with_its_reason() {
    let (mut e, _clock) = engine(cluster(2, 4));
    let err = e
        .will_run(JobSpec {
            partitions: vec!["nosuch".into()],
            ..job(1, 60)
        })
        .unwrap_err();
    assert_eq!(
        err,
        WillRunError::Submit(SubmitError::UnknownPartition("nosuch".into()))
    );
    let err = e
        .will_run(JobSpec {
            min_nodes: 1,
            ..job(8, 60)
        })
        .unwrap_err();
    assert_eq!(err, WillRunError::Submit(SubmitError::NodeConfig));
}
