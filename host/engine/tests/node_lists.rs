//! `--nodelist` and `--exclude`: the nodes a job may be placed on, in the main loop and backfill.

mod common;

use common::*;
use sluice_cluster::NodeId;
use sluice_engine::{Event, JobSpec, SubmitError};

fn started_on(events: &[Event], job: u32) -> Vec<NodeId> {
    events
        .iter()
        .find_map(|e| match e {
            Event::Started { job: j, nodes, .. } if *j == job => Some(nodes.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn excluded_nodes_are_never_chosen() {
    let (mut e, _clock) = engine(cluster(4, 8));
    let j = e
        .submit(JobSpec {
            min_nodes: 2,
            tasks: 2,
            time_limit: Some(600),
            excluded_nodes: vec!["node01".into(), "node02".into()],
            ..JobSpec::new("alice")
        })
        .unwrap();
    assert_eq!(started_on(&e.tick(), j), vec![NodeId(2), NodeId(3)]);
}

#[test]
fn required_nodes_are_the_only_candidates() {
    let (mut e, _clock) = engine(cluster(4, 8));
    let j = e
        .submit(JobSpec {
            time_limit: Some(600),
            required_nodes: vec!["node03".into()],
            ..JobSpec::new("alice")
        })
        .unwrap();
    assert_eq!(started_on(&e.tick(), j), vec![NodeId(2)]);
}

#[test]
fn a_job_whose_lists_leave_too_few_nodes_is_refused() {
    let (mut e, _clock) = engine(cluster(2, 8));
    let err = e
        .submit(JobSpec {
            min_nodes: 2,
            tasks: 2,
            excluded_nodes: vec!["node02".into()],
            ..JobSpec::new("alice")
        })
        .unwrap_err();
    assert!(matches!(err, SubmitError::NodeConfig), "{err:?}");
}

#[test]
fn a_required_node_that_is_busy_makes_the_job_wait_for_it() {
    let (mut e, clock) = engine(cluster(2, 1));
    let first = e
        .submit(JobSpec {
            time_limit: Some(600),
            required_nodes: vec!["node01".into()],
            ..JobSpec::new("alice")
        })
        .unwrap();
    let second = e
        .submit(JobSpec {
            time_limit: Some(600),
            required_nodes: vec!["node01".into()],
            ..JobSpec::new("bob")
        })
        .unwrap();
    let events = e.tick();
    assert_eq!(started_on(&events, first), vec![NodeId(0)]);
    // node02 is free, but the second job may only run on node01.
    assert!(started_on(&events, second).is_empty());
    clock.advance(60);
    e.job_finished(first, 0).unwrap();
    assert_eq!(started_on(&e.tick(), second), vec![NodeId(0)]);
}
