//! Partition states: DOWN and INACTIVE partitions start nothing and say so; DRAIN still starts
//! what it has; UP again starts what waited.

mod common;

use common::*;
use sluice_cluster::PartitionId;
use sluice_engine::{JobSpec, JobState, PartitionState};

#[test]
fn down_partitions_start_nothing_until_up_again() {
    let (mut e, _clock) = engine(cluster(2, 8));
    let p = PartitionId(0);
    e.set_partition_state(p, PartitionState::Down);
    assert_eq!(e.partition_state(p), PartitionState::Down);
    let j = e
        .submit(JobSpec {
            time_limit: Some(600),
            ..JobSpec::new("alice")
        })
        .unwrap();
    e.tick();
    let job = e.job(j).unwrap();
    assert_eq!(job.state, JobState::Pending);
    assert_eq!(job.reason.as_str(), "PartitionDown");
    e.set_partition_state(p, PartitionState::Inactive);
    e.tick();
    assert_eq!(e.job(j).unwrap().reason.as_str(), "PartitionInactive");
    // DRAIN starts the jobs it holds.
    e.set_partition_state(p, PartitionState::Drain);
    e.tick();
    assert_eq!(e.job(j).unwrap().state, JobState::Running);
}

#[test]
fn states_read_and_print_as_scontrol_spells_them() {
    for s in ["UP", "down", "Drain", "INACTIVE"] {
        let state = PartitionState::parse(s).unwrap();
        assert_eq!(state.as_str(), s.to_ascii_uppercase());
    }
    assert_eq!(PartitionState::parse("sideways"), None);
    assert!(PartitionState::Down.takes_jobs() && !PartitionState::Down.starts_jobs());
    assert!(!PartitionState::Drain.takes_jobs() && PartitionState::Drain.starts_jobs());
}
