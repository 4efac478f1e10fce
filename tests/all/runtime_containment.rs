//! Hostile plugins are contained: each fault becomes a typed error, the last good generation
//! answers the same call, and repeated faults back off into quarantine.

use sluice_policy::{PluginKind, PriorityPolicy, SelectionPolicy, fixtures};
use sluice_runtime::contained::{PrioritySlot, SelectionSlot};
use sluice_runtime::slot::{QUARANTINE_AFTER, Role, Slot};
use sluice_runtime::{Fault, Loaded, Loader};

use crate::support::*;

fn priority_slot_with_hostile(mode: &str) -> PrioritySlot {
    let loader = loader();
    let good = match loader.load(&hostile_priority("ok")).unwrap() {
        Loaded::Priority(g) => g,
        _ => unreachable!(),
    };
    let fallback =
        match Loader::builtin(PluginKind::Priority, "basic", &Default::default()).unwrap() {
            Loaded::Priority(g) => g,
            _ => unreachable!(),
        };
    let mut slot = Slot::new(PluginKind::Priority, good, fallback);
    // Loading the hostile one bypasses the smoke call on purpose: a plugin can pass it and
    // still misbehave later on real input.
    let spec = hostile_priority(mode);
    let hostile = match loader
        .component(
            PluginKind::Priority,
            mode,
            &std::fs::read(&spec.plugin).unwrap(),
            &spec,
        )
        .unwrap()
    {
        Loaded::Priority(g) => g,
        _ => unreachable!(),
    };
    slot.publish(hostile);
    slot
}

fn expect_contained(mode: &str, expected: impl Fn(&Fault) -> bool) {
    let mut slot = priority_slot_with_hostile(mode);
    let ctx = fixtures::priority_context(1_700_000_000, 32, 3, 3);
    let jobs = fixtures::job_table(&ctx, 300, 5);
    let answer = slot.compute(&ctx, &jobs);
    // The previous generation (the well-behaved fixture) answered in its place.
    let mut reference = priority_slot_with_hostile("ok");
    assert_eq!(
        answer,
        reference.compute(&ctx, &jobs),
        "mode {mode}: the last good policy must answer"
    );
    let status = slot.status();
    let active = status.iter().find(|s| s.role == Role::Active).unwrap();
    assert_eq!(active.health.faults, 1, "mode {mode}: the fault is counted");
    let fault_text = active.health.last_fault.clone().unwrap();
    let previous = status.iter().find(|s| s.role == Role::Previous).unwrap();
    assert_eq!(
        previous.health.answered, 1,
        "mode {mode}: the previous generation answered"
    );
    assert!(!fault_text.is_empty());
    // The same fault, classified, directly from the backend.
    let mut direct = priority_slot_with_hostile(mode);
    let raw = direct
        .get_mut(Role::Active)
        .backend
        .compute(&ctx, &jobs)
        .and_then(|p| {
            p.check(jobs.len())?;
            Ok(p)
        });
    let err = raw.expect_err("the hostile plugin must fault");
    assert!(expected(&err), "mode {mode}: unexpected fault {err:?}");
}

#[test]
fn endless_loop_exhausts_the_budget() {
    expect_contained("loop", |f| matches!(f, Fault::Budget(_)));
}

#[test]
fn memory_bomb_hits_the_cap() {
    expect_contained("bomb", |f| matches!(f, Fault::Memory(_)));
}

#[test]
fn trap_is_contained() {
    expect_contained(
        "trap",
        |f| matches!(f, Fault::Trap(t) if t.contains("unreachable")),
    );
}

#[test]
fn guest_panic_is_contained_as_a_trap() {
    expect_contained("panic", |f| matches!(f, Fault::Trap(_)));
}

#[test]
fn short_answer_breaks_the_contract() {
    expect_contained("short", |f| matches!(f, Fault::Contract(_)));
}

#[test]
fn oversized_answer_breaks_the_contract() {
    expect_contained("huge", |f| matches!(f, Fault::Contract(_)));
}

#[test]
fn repeated_faults_back_off_then_quarantine() {
    let mut slot = priority_slot_with_hostile("trap");
    let ctx = fixtures::priority_context(1_700_000_000, 8, 1, 2);
    let jobs = fixtures::job_table(&ctx, 10, 1);
    let mut tried = Vec::new();
    for _ in 0..200 {
        let before = slot.status()[0].health.faults;
        slot.compute(&ctx, &jobs);
        tried.push(slot.status()[0].health.faults > before);
    }
    let active = &slot.status()[0].health;
    assert!(
        active.quarantined,
        "after {QUARANTINE_AFTER} faults in a row the generation is quarantined"
    );
    assert_eq!(active.faults, QUARANTINE_AFTER as u64);
    // Backoff: the second attempt is not on the very next pass.
    let attempts: Vec<usize> = tried
        .iter()
        .enumerate()
        .filter(|(_, t)| **t)
        .map(|(i, _)| i)
        .collect();
    // Backoff: 1, 2, 4 … passes between attempts.
    let gaps: Vec<usize> = attempts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.windows(2).all(|g| g[1] == 2 * g[0]),
        "attempts at passes {attempts:?}"
    );
    // Rolling back clears it.
    slot.rollback().unwrap();
    slot.rollback().unwrap();
    assert!(!slot.status()[0].health.quarantined);
}

fn selection_slot_with_hostile(mode: &str) -> SelectionSlot {
    let loader = loader();
    let good = match loader.load(&hostile_selection("ok")).unwrap() {
        Loaded::Selection(g) => g,
        _ => unreachable!(),
    };
    let fallback = match loader.load(&hostile_selection("ok")).unwrap() {
        Loaded::Selection(g) => g,
        _ => unreachable!(),
    };
    let mut slot = Slot::new(PluginKind::Selection, good, fallback);
    let spec = hostile_selection(mode);
    let hostile = match loader
        .component(
            PluginKind::Selection,
            mode,
            &std::fs::read(&spec.plugin).unwrap(),
            &spec,
        )
        .unwrap()
    {
        Loaded::Selection(g) => g,
        _ => unreachable!(),
    };
    slot.publish(hostile);
    SelectionSlot::new(slot)
}

fn run_selection_pass(slot: &mut SelectionSlot) -> Vec<Option<sluice_policy::Placement>> {
    let table = fixtures::node_table(32);
    let mut host = table.clone();
    slot.begin_pass(&table);
    let mut out = Vec::new();
    for mut req in fixtures::job_requests(32, 60, 11) {
        req.exclusive = false;
        let p = slot.place(&req, sluice_policy::PlaceMode::Allocate);
        if let Some(p) = &p {
            host.check_placement(&req, p)
                .expect("every placement the engine sees is valid");
            host.commit(p);
        }
        out.push(p);
    }
    out
}

#[test]
fn impossible_placements_are_refused_and_retried_with_the_last_good() {
    for mode in ["overcommit", "unknown-node", "loop", "trap-on-begin"] {
        let mut slot = selection_slot_with_hostile(mode);
        let answers = run_selection_pass(&mut slot);
        let mut reference = selection_slot_with_hostile("ok");
        assert_eq!(
            answers,
            run_selection_pass(&mut reference),
            "mode {mode}: same placements as the good policy"
        );
        assert!(
            answers.iter().any(Option::is_some),
            "mode {mode}: jobs were placed"
        );
        let hostile = &slot.slot.status()[0].health;
        assert!(hostile.faults >= 1, "mode {mode}: the fault is counted");
    }
}
