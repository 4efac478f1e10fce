//! WIT 0.6.0's selection protocol: a pass's changed nodes cross packed into one list with the
//! pass's first `place`; `begin-pass` carries them only when something must come first (the
//! next pass, a `release`); a fault discards what was owed with the instance.

use sluice_fixture_selection_v0_6_probe::{CALLS_JOB, COPY_JOB, TRAP_JOB};
use sluice_policy::{NodeTable, PlaceMode, Power};
use sluice_runtime::Fault;
use sluice_runtime::backend::SelectionBackend;

use crate::selection_copy::{
    free_columns, probe_report, request, selection_component, start, table,
};

/// A fresh 0.6.0 probe whose first pass, on `host`, sent it the whole table.
fn probe_holding(host: &NodeTable) -> Box<dyn SelectionBackend> {
    let mut guest = selection_component("sluice-fixture-selection-v0-6-probe");
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
