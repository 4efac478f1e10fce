//! The selection guest's copy of the node table: the whole table crosses once (and when most
//! nodes or a static column changed); then a pass's changed nodes cross packed into one list
//! with the pass's first `place`, and `begin-pass` carries them only when something must come
//! first (the next pass, a `release`); a fault discards what was owed with the instance.

use sluice_policy::{JobRequest, NodeBitmap, NodeTable, PlaceMode, Placement, PluginKind, Power};
use sluice_runtime::backend::SelectionBackend;
use sluice_runtime::{Fault, Loaded};
use sluice_test_guests::selection_probe::{CALLS_JOB, COPY_JOB, OVERSIZE_JOB, TRAP_JOB};

use crate::support::*;

/// The selection test guest `guest`, loaded without the smoke call.
pub(crate) fn selection_component(guest: &str) -> Box<dyn SelectionBackend> {
    match unsmoked_component(PluginKind::Selection, guest) {
        Loaded::Selection(g) => g.backend,
        _ => unreachable!("loaded as a selection plugin"),
    }
}

/// Four nodes of 8 CPUs with one GRES kind, two of them partly busy.
pub(crate) fn table() -> NodeTable {
    NodeTable {
        cpus: vec![8; 4],
        free_cpus: vec![8, 3, 8, 0],
        memory_mb: vec![1000; 4],
        free_memory_mb: vec![1000, 400, 1000, 0],
        weight: vec![1; 4],
        power: vec![Power::Up; 4],
        gres_kinds: vec!["gpu".into()],
        gres_total: vec![2; 4],
        gres_free: vec![2, 1, 2, 0],
        row_free_cpus: vec![],
        share_rows: 0,
    }
}

pub(crate) fn request(job_id: u32, cpus: u32) -> JobRequest {
    JobRequest {
        job_id,
        min_nodes: 1,
        max_nodes: 1,
        tasks: cpus,
        cpus_per_task: 1,
        tasks_per_node: 0,
        memory_per_node_mb: 0,
        gres_per_node: Vec::new(),
        exclusive: false,
        candidates: NodeBitmap::full(4).words,
        share_rows: 0,
    }
}

/// Places job `job_id` of `cpus` CPUs in allocate mode and commits the placement to `host`, as
/// the engine does with a job it starts; `fits` says why the job must fit.
pub(crate) fn start(
    guest: &mut dyn SelectionBackend,
    host: &mut NodeTable,
    job_id: u32,
    cpus: u32,
    fits: &str,
) -> Placement {
    let p = guest
        .place(&request(job_id, cpus), PlaceMode::Allocate)
        .unwrap()
        .expect(fits);
    host.commit(&p);
    p
}

/// What a probe reports as the placement of `job_id`, one of the job ids it answers with what
/// it holds or was told (every selection probe answers its copy and its calls this way).
pub(crate) fn probe_report(guest: &mut dyn SelectionBackend, job_id: u32) -> Placement {
    guest
        .place(&request(job_id, 1), PlaceMode::Test)
        .expect("the probe answers")
        .expect("the probe reports")
}

pub(crate) fn free_columns(t: &NodeTable) -> (Vec<u32>, Vec<u64>, Vec<u32>) {
    (
        t.free_cpus.clone(),
        t.free_memory_mb.clone(),
        t.gres_free.clone(),
    )
}

/// A fresh probe whose first pass, on `host`, sent it the whole table.
fn probe_holding(host: &NodeTable) -> Box<dyn SelectionBackend> {
    let mut guest = selection_component("selection_probe");
    guest.begin_pass(host).expect("set-nodes");
    guest
}

/// `[set-nodes calls, begin-pass calls, nodes changed by begin-pass, place calls that carried
/// changes, nodes changed by them]` of the probe's instance, asked with a place that carries
/// whatever the pass still owes.
fn calls(guest: &mut dyn SelectionBackend) -> Vec<u32> {
    probe_report(guest, CALLS_JOB).nodes
}

/// Checks the guest holds exactly `t`'s free columns.
fn assert_holds(guest: &mut dyn SelectionBackend, t: &NodeTable) {
    let copy = probe_report(guest, COPY_JOB);
    assert_eq!(
        (copy.cpus, copy.memory_mb, copy.gres),
        free_columns(t),
        "the guest's copy"
    );
}

#[test]
fn a_pass_s_changed_nodes_ride_along_with_its_first_place() {
    let mut host = table();
    let mut guest = probe_holding(&host);
    let guest = guest.as_mut();
    assert_eq!(
        calls(guest),
        [1, 0, 0, 0, 0],
        "the first pass sends the table"
    );
    // Nothing moved: the next pass's places carry nothing.
    guest.begin_pass(&host).unwrap();
    assert_eq!(calls(guest), [1, 0, 0, 0, 0]);

    // Jobs ended on nodes 1 and 3: the pass's first place brings both, the next ones nothing.
    host.free_cpus[1] = 8;
    host.free_memory_mb[3] = 1000;
    host.gres_free[3] = 2;
    guest.begin_pass(&host).unwrap();
    let p = start(guest, &mut host, 7, 8, "node 0 has 8 CPUs free");
    assert_eq!(p.nodes, [0]);
    assert_eq!(calls(guest), [1, 0, 0, 1, 2]);
    assert_holds(guest, &host);
    // The guest applied its own placement, so the next pass owes it nothing.
    guest.begin_pass(&host).unwrap();
    assert_eq!(calls(guest), [1, 0, 0, 1, 2]);

    // Power alone is a change too.
    host.power[2] = Power::PoweredDown;
    guest.begin_pass(&host).unwrap();
    assert_eq!(calls(guest), [1, 0, 0, 2, 3]);

    // More than half the nodes changed: the whole table crosses, and nothing is owed.
    host.free_cpus[..3].fill(1);
    guest.begin_pass(&host).unwrap();
    assert_eq!(calls(guest), [2, 0, 0, 2, 3]);
    assert_holds(guest, &host);
}

#[test]
fn changes_a_pass_did_not_place_with_cross_by_begin_pass_before_the_next_pass_s() {
    let mut host = table();
    let mut guest = probe_holding(&host);
    let guest = guest.as_mut();
    assert_holds(guest, &host);

    // A pass that places nothing owes its changes; the next pass pays them first.
    host.free_cpus[1] = 8;
    guest.begin_pass(&host).unwrap();
    host.free_cpus[3] = 5;
    host.gres_free[0] = 1;
    guest.begin_pass(&host).unwrap();
    assert_eq!(calls(guest), [1, 1, 1, 1, 2]);
    assert_holds(guest, &host);
}

#[test]
fn a_release_gets_the_owed_changes_first() {
    let mut host = table();
    let mut guest = probe_holding(&host);
    let guest = guest.as_mut();
    let p = start(guest, &mut host, 7, 2, "node 0 has 2 CPUs free");
    // A job ended; the host then gives the placement back (its job could not start).
    host.free_cpus[1] = 8;
    guest.begin_pass(&host).unwrap();
    guest.release(7, &p).unwrap();
    host.release(&p);
    assert_eq!(calls(guest), [1, 1, 1, 0, 0]);
    assert_holds(guest, &host);
    guest.begin_pass(&host).unwrap();
    assert_eq!(
        calls(guest),
        [1, 1, 1, 0, 0],
        "nothing differs after the release"
    );
}

#[test]
fn a_trap_in_a_place_that_carried_changes_leaves_nothing_owed_and_the_next_instance_the_table() {
    let mut host = table();
    let mut guest = probe_holding(&host);
    let guest = guest.as_mut();
    host.free_cpus[1] = 8;
    guest.begin_pass(&host).unwrap();
    let fault = guest.place(&request(TRAP_JOB, 1), PlaceMode::Test);
    assert!(matches!(fault, Err(Fault::Trap(_))), "{fault:?}");
    // The instance that trapped is gone; the new one has had no call yet, and is owed nothing.
    assert_eq!(calls(guest), [0, 0, 0, 0, 0]);
    guest.begin_pass(&host).unwrap();
    assert_eq!(calls(guest), [1, 0, 0, 0, 0]);
    assert_holds(guest, &host);
}

#[test]
fn a_placement_that_cannot_fit_sends_the_whole_table_next_pass() {
    let host = table();
    let mut guest = probe_holding(&host);
    let guest = guest.as_mut();
    // The host cannot apply this to its model of the guest's copy (nor would the SDK to the
    // copy), so it no longer knows what the guest holds.
    let p = guest
        .place(&request(OVERSIZE_JOB, 1), PlaceMode::Allocate)
        .unwrap();
    assert_eq!(p.map(|p| p.cpus), Some(vec![9]));
    guest.begin_pass(&host).unwrap();
    assert_eq!(calls(guest), [2, 0, 0, 0, 0], "set-nodes again");
    assert_holds(guest, &host);
}
