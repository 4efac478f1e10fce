//! A node set DOWN: its requeueable jobs go back to the queue (eligible again 121 s later, as
//! Slurm's batch_requeue_fini sets their begin time), the others end NODE_FAIL.

mod common;

use common::*;
use sluice_cluster::NodeId;
use sluice_engine::{Event, JobSpec, JobState, Reason};

#[test]
fn a_requeueable_job_on_a_down_node_is_requeued_and_starts_elsewhere() {
    let (mut e, clock) = engine(cluster(2, 4));
    let spec = JobSpec {
        tasks: 4,
        time_limit: Some(600),
        ..JobSpec::new("alice")
    };
    let kept = e
        .submit(JobSpec {
            requeue: Some(true),
            ..spec.clone()
        })
        .unwrap();
    let failed = e
        .submit(JobSpec {
            requeue: Some(false),
            ..spec
        })
        .unwrap();
    e.schedule();
    let on = |id| e.job(id).unwrap().alloc.as_ref().unwrap().placement.nodes[0];
    let (kept_node, failed_node) = (on(kept), on(failed));
    e.node_down(NodeId(kept_node), "not responding");
    e.node_down(NodeId(failed_node), "not responding");
    let job = e.job(kept).unwrap();
    assert_eq!((job.state, job.alloc.is_none()), (JobState::Pending, true));
    let job = e.job(failed).unwrap();
    assert_eq!(
        (job.state, job.reason),
        (JobState::NodeFail, Reason::NodeDown)
    );
    e.node_resume(NodeId(kept_node));
    assert_eq!(e.job(kept).unwrap().reason, Reason::BeginTime);
    clock.advance(121);
    let events = e.schedule();
    assert!(
        events
            .iter()
            .any(|ev| matches!(ev, Event::Started { job, .. } if *job == kept))
    );
}
