//! `--time-min`: backfill starts a job with its shorter limit where its whole one would delay a
//! planned job, and never otherwise.

mod common;

use common::*;
use sluice_engine::{Event, JobSpec, JobState, Loop};

/// (priority, nodes, minutes) on whole nodes, as the backfill tests write jobs.
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

#[test]
fn a_job_that_fits_with_its_time_min_is_backfilled_with_that_limit() {
    let (mut e, _clock) = engine(cluster(32, 4));
    e.submit(job(10, 1, 10)).unwrap();
    let big = e.submit(job(5, 32, 10)).unwrap();
    // 20 minutes would run into the 32-node job due at +10 min; 10 minutes end just in time.
    let flexible = e
        .submit(JobSpec {
            time_min: Some(600),
            ..job(1, 31, 20)
        })
        .unwrap();
    e.tick();
    assert_eq!(backfilled(&e.backfill()), vec![flexible]);
    let j = e.job(flexible).unwrap();
    assert_eq!((j.state, j.time_limit), (JobState::Running, Some(600)));
    assert_eq!(e.job(big).unwrap().start_time, Some(T0 + 600));
}

#[test]
fn a_time_min_too_long_to_fit_leaves_the_job_and_its_limit_alone() {
    let (mut e, _clock) = engine(cluster(32, 4));
    e.submit(job(10, 1, 10)).unwrap();
    e.submit(job(5, 32, 10)).unwrap();
    let stiff = e
        .submit(JobSpec {
            time_min: Some(900),
            ..job(1, 31, 20)
        })
        .unwrap();
    e.tick();
    assert!(backfilled(&e.backfill()).is_empty());
    let j = e.job(stiff).unwrap();
    assert_eq!((j.state, j.time_limit), (JobState::Pending, Some(1200)));
}
