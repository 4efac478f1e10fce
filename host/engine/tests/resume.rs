//! A running job taken back after a restart of the host driving the engine (`resume_running`):
//! on the nodes it ran on, from its first start time, its time limit counted from then.

mod common;

use common::*;
use sluice_cluster::NodeId;
use sluice_engine::{Event, JobSpec, JobState};

fn job(cpus: u32) -> JobSpec {
    JobSpec {
        cpus_per_task: cpus,
        time_limit: Some(600),
        ..JobSpec::new("alice")
    }
}

#[test]
fn a_resumed_job_runs_where_and_since_when_it_ran_and_holds_its_cpus() {
    let (mut e, _clock) = engine(cluster(4, 4));
    let now = e.now();
    let a = e.submit(job(4)).unwrap();
    // Taken back on node 2, started 100 s ago.
    e.resume_running(a, "batch", &[NodeId(2)], now - 100)
        .unwrap();
    let j = e.job(a).unwrap();
    assert_eq!(j.state, JobState::Running);
    assert_eq!(j.start_time, Some(now - 100));
    assert_eq!(
        j.end_time,
        Some(now + 500),
        "its limit counts from its first start"
    );
    assert_eq!(j.alloc.as_ref().unwrap().placement.nodes, vec![2]);
    let events = e.tick();
    assert!(
        events
            .iter()
            .any(|ev| matches!(ev, Event::Started { job, .. } if *job == a)),
        "the start is reported, for the host to recognise as its own: {events:?}"
    );
    // Its node is full: a second whole-node job taken back there does not fit.
    let b = e.submit(job(4)).unwrap();
    assert_eq!(e.job(a).unwrap().state, JobState::Running);
    assert!(
        e.resume_running(b, "batch", &[NodeId(2)], now - 50)
            .is_err()
    );
    assert_eq!(e.job(b).unwrap().state, JobState::Pending);
    // An unknown partition is refused.
    assert!(
        e.resume_running(b, "nowhere", &[NodeId(1)], now - 50)
            .is_err()
    );
    // On a free node it is taken back.
    e.resume_running(b, "batch", &[NodeId(1)], now - 50)
        .unwrap();
    assert_eq!(
        e.job(b).unwrap().alloc.as_ref().unwrap().placement.nodes,
        vec![1]
    );
}
