//! The selection guest's copy of the node table: a `wit/v0.3.0` guest is sent the whole table
//! once (and when most nodes changed), then only the nodes whose free resources differ from its
//! copy, and no call when none does; a `wit/v0.2.0` guest still gets the whole table with every
//! pass.

use sluice_fixture_selection_v0_3_probe::{CALLS_JOB, COPY_JOB, OVERSIZE_JOB, TRAP_JOB};
use sluice_policy::{JobRequest, NodeBitmap, NodeTable, PlaceMode, Placement, PluginKind, Power};
use sluice_runtime::backend::SelectionBackend;
use sluice_runtime::{Fault, Loaded};

use crate::support::*;

/// The selection component built from `package`, loaded without the smoke call.
pub(crate) fn selection_component(package: &str) -> Box<dyn SelectionBackend> {
    match unsmoked_component(PluginKind::Selection, package) {
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
    }
}

pub(crate) fn request(job_id: u32, cpus: u32) -> JobRequest {
    JobRequest {
        job_id,
        min_nodes: 1,
        max_nodes: 1,
        tasks: cpus,
        cpus_per_task: 1,
        memory_per_node_mb: 0,
        gres_per_node: Vec::new(),
        exclusive: false,
        candidates: NodeBitmap::full(4).words,
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

/// The free columns the guest holds, as it reports them.
fn guest_copy(guest: &mut dyn SelectionBackend) -> (Vec<u32>, Vec<u64>, Vec<u32>) {
    let p = probe_report(guest, COPY_JOB);
    (p.cpus, p.memory_mb, p.gres)
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

/// `[set-nodes calls, begin-pass calls, changed nodes received]` of the probe's instance.
fn calls(guest: &mut dyn SelectionBackend) -> Vec<u32> {
    probe_report(guest, CALLS_JOB).nodes
}

/// Begins a pass on `t` and checks the guest then holds exactly `t`'s free columns, and how
/// many calls of each kind it has had.
fn begin_and_check(guest: &mut dyn SelectionBackend, t: &NodeTable, expected_calls: [u32; 3]) {
    guest.begin_pass(t).expect("begin-pass");
    assert_eq!(guest_copy(guest), free_columns(t), "the guest's copy");
    assert_eq!(
        calls(guest),
        expected_calls,
        "set-nodes, begin-pass, changes"
    );
}

/// A fresh 0.3.0 probe whose first pass, on `host`, sent it the whole table.
fn probe_holding(host: &NodeTable) -> Box<dyn SelectionBackend> {
    let mut guest = selection_component("sluice-fixture-selection-v0-3-probe");
    begin_and_check(guest.as_mut(), host, [1, 0, 0]);
    guest
}

#[test]
fn a_v0_3_guest_gets_the_table_once_and_then_only_the_nodes_that_changed() {
    let mut host = table();
    let mut guest = probe_holding(&host);
    let guest = guest.as_mut();
    // Nothing moved: no call at all.
    begin_and_check(guest, &host, [1, 0, 0]);

    // A start: the guest subtracts its own placement, so the host's table after committing
    // it is what the guest holds, and the next pass sends nothing.
    let p = start(guest, &mut host, 7, 4, "node 0 has 4 CPUs free");
    assert_eq!(p.nodes, [0]);
    begin_and_check(guest, &host, [1, 0, 0]);

    // A test placement changes nothing.
    guest.place(&request(8, 8), PlaceMode::Test).unwrap();
    begin_and_check(guest, &host, [1, 0, 0]);

    // Jobs ended on nodes 1 and 3 behind the guest's back: those two cross.
    host.free_cpus[1] = 8;
    host.free_memory_mb[3] = 1000;
    begin_and_check(guest, &host, [1, 1, 2]);
    // GRES alone, and power alone, are changes too.
    host.gres_free[3] = 2;
    begin_and_check(guest, &host, [1, 2, 3]);
    host.power[2] = Power::PoweredDown;
    guest.begin_pass(&host).unwrap();
    assert_eq!(calls(guest), [1, 3, 4]);

    // A placement given back: the guest adds it, and so does the host's model of its copy.
    let p = guest
        .place(&request(9, 8), PlaceMode::Allocate)
        .unwrap()
        .expect("node 1 is free");
    guest.release(9, &p).unwrap();
    begin_and_check(guest, &host, [1, 3, 4]);

    // More than half the nodes changed: the whole table crosses cheaper than the changes.
    host.free_cpus[..3].fill(1);
    begin_and_check(guest, &host, [2, 3, 4]);

    // A static column changed: the whole table again.
    host.weight[0] = 5;
    begin_and_check(guest, &host, [3, 3, 4]);
}

#[test]
fn a_fresh_v0_3_instance_after_a_trap_gets_the_whole_table_again() {
    let host = table();
    let mut guest = probe_holding(&host);
    let guest = guest.as_mut();
    let fault = guest.place(&request(TRAP_JOB, 1), PlaceMode::Test);
    assert!(matches!(fault, Err(Fault::Trap(_))), "{fault:?}");
    // The instance that trapped is gone; the new one has had no call yet.
    assert_eq!(calls(guest), [0, 0, 0]);
    begin_and_check(guest, &host, [1, 0, 0]);
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
    begin_and_check(guest, &host, [2, 0, 0]);
}

#[test]
fn a_v0_2_guest_gets_the_whole_table_with_every_pass() {
    let mut guest = selection_component("sluice-fixture-selection-v0-2");
    let guest = guest.as_mut();
    let mut host = table();
    guest.begin_pass(&host).unwrap();
    assert_eq!(guest_copy(guest), free_columns(&host));
    start(guest, &mut host, 1, 2, "node 0 fits");
    host.free_cpus[3] = 8;
    guest.begin_pass(&host).unwrap();
    assert_eq!(guest_copy(guest), free_columns(&host));
}
