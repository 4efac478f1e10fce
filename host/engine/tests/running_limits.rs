//! A running job's time limit changed while it runs: it ends at the new limit, not the old.

mod common;

use common::*;
use sluice_engine::{Event, JobSpec, JobState};

#[test]
fn an_extended_limit_moves_the_end_and_a_shortened_one_ends_it_sooner() {
    let (mut e, clock) = engine(cluster(2, 8));
    let long = e
        .submit(JobSpec {
            time_limit: Some(600),
            ..JobSpec::new("alice")
        })
        .unwrap();
    let short = e
        .submit(JobSpec {
            time_limit: Some(600),
            ..JobSpec::new("bob")
        })
        .unwrap();
    e.tick();
    assert_eq!(e.job(long).unwrap().state, JobState::Running);
    e.set_time_limit(long, Some(1200)).unwrap();
    e.set_time_limit(short, Some(120)).unwrap();
    clock.advance(121);
    e.tick();
    assert_eq!(e.job(short).unwrap().state, JobState::Timeout);
    clock.advance(600);
    let events = e.tick();
    // Past the old limit, the extended job still runs.
    assert!(
        !events
            .iter()
            .any(|ev| matches!(ev, Event::Ended { job, .. } if *job == long))
    );
    assert_eq!(e.job(long).unwrap().state, JobState::Running);
    clock.advance(600);
    e.tick();
    assert_eq!(e.job(long).unwrap().state, JobState::Timeout);
    // Only a running job's limit changes this way.
    let pending = e
        .submit(JobSpec {
            hold: true,
            ..JobSpec::new("carol")
        })
        .unwrap();
    assert_eq!(e.job(pending).unwrap().state, JobState::Pending);
    assert!(e.set_time_limit(pending, Some(60)).is_err());
}
