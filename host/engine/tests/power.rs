//! Power saving through the engine's API: show node, node updates refused as scontrol refuses
//! them, the resume file's JSON, and a cluster without power saving having nothing pending.

mod common;

use common::*;
use sluice_cluster::{NodeId, NodeState, TimeLimit};
use sluice_engine::{Event, JobSpec, NodeUpdate, NodeUpdateError, PowerEvent, Program};

fn cloud_engine() -> (sluice_engine::Engine, sluice_engine::ManualClock) {
    let mut c = cluster(2, 1);
    for n in &mut c.nodes {
        n.state = NodeState::Cloud;
    }
    c.power.resume_program = Some("/rec/resume".into());
    c.power.suspend_program = Some("/rec/suspend".into());
    c.power.suspend_time = TimeLimit::Seconds(60);
    engine(c)
}

#[test]
fn show_node_prints_the_full_state_last_busy_time_and_why() {
    let (mut e, _clock) = cloud_engine();
    let name = e.cluster().nodes[0].name.clone();
    let text = e.node_report(&name).unwrap().to_string();
    assert!(text.contains("State=IDLE+CLOUD+POWERED_DOWN"), "{text}");
    assert!(
        text.contains("LastBusyTime=Unknown SuspendTime=60"),
        "{text}"
    );
    e.update_node(NodeId(0), NodeUpdate::PowerUp, None).unwrap();
    let report = e.node_report(&name).unwrap();
    assert_eq!(report.power.state, "IDLE+CLOUD+POWER_UP+POWERED_DOWN");
    assert_eq!(report.power.sinfo, "idle~");
    assert!(
        report
            .to_string()
            .contains("PowerReason=POWER_UP requested")
    );
}

#[test]
fn updates_are_refused_as_scontrol_refuses_them() {
    let (mut e, _clock) = cloud_engine();
    assert_eq!(
        e.update_node(NodeId(0), NodeUpdate::Down, None),
        Err(NodeUpdateError::ReasonRequired(NodeUpdate::Down))
    );
    assert!(matches!(
        "reboot".parse::<NodeUpdate>(),
        Err(NodeUpdateError::UnknownState(_))
    ));
    assert_eq!(
        "power_down_asap".parse::<NodeUpdate>(),
        Ok(NodeUpdate::PowerDownAsap)
    );
    let (mut plain, _clock) = engine(cluster(1, 1));
    assert_eq!(
        plain.update_node(NodeId(0), NodeUpdate::PowerDown, None),
        Err(NodeUpdateError::InvalidPowerAction("SuspendProgram"))
    );
}

#[test]
fn the_resume_file_has_slurms_keys_in_slurms_order() {
    let (mut e, _clock) = cloud_engine();
    let id = e
        .submit(JobSpec {
            exclusive: true,
            ..JobSpec::new("alice")
        })
        .unwrap();
    let call = e
        .tick()
        .into_iter()
        .find_map(|ev| match ev {
            Event::Power(PowerEvent::Call(call)) if call.program == Program::Resume => Some(call),
            _ => None,
        })
        .expect("a resume");
    let json = serde_json::to_string(&call.resume_file.unwrap()).unwrap();
    let expected =
        format!(r#"{{"jobs":[{{"exclusive":"NODE","extra":null,"job_id":{id},"priority":"#);
    assert!(json.starts_with(&expected), "{json}");
    let keys = [
        "\"features\"",
        "\"nodes_alloc\"",
        "\"nodes_resume\"",
        "\"oversubscribe\":\"NO\"",
        "\"partition\"",
        "\"reservation\":null}],\"all_nodes_resume\"",
    ];
    let mut at = 0;
    for key in keys {
        at = json[at..]
            .find(key)
            .map(|i| at + i)
            .unwrap_or_else(|| panic!("{key} after {at} in {json}"));
    }
    assert_eq!(call.args, vec![e.cluster().nodes[0].name.clone()]);
}

#[test]
fn without_power_saving_nothing_is_pending_and_no_pass_acts() {
    let (mut e, clock) = engine(cluster(4, 2));
    e.tick();
    assert!(!e.power_pending());
    clock.advance(100_000);
    assert!(e.tick().is_empty());
    assert!(!e.power_pending());
}

#[test]
fn resume_is_refused_on_a_node_that_is_up() {
    let (mut e, _clock) = engine(cluster(1, 1));
    assert_eq!(
        e.update_node(NodeId(0), NodeUpdate::Resume, None),
        Err(NodeUpdateError::InvalidTransition {
            from: "IDLE".into(),
            to: NodeUpdate::Resume
        })
    );
    e.update_node(NodeId(0), NodeUpdate::Drain, Some("disk"))
        .unwrap();
    assert_eq!(e.node_state_string(NodeId(0)), "IDLE+DRAIN");
    e.update_node(NodeId(0), NodeUpdate::Resume, None).unwrap();
    assert_eq!(e.node_state_string(NodeId(0)), "IDLE");
}

#[test]
fn noresp_and_future_updates() {
    let (mut e, _clock) = engine(cluster(1, 1));
    e.update_node(NodeId(0), "noresp".parse().unwrap(), None)
        .unwrap();
    assert_eq!(e.node_sinfo_state(NodeId(0)), "idle*");
    e.register_node(NodeId(0));
    assert_eq!(e.node_sinfo_state(NodeId(0)), "idle");
    e.update_node(NodeId(0), NodeUpdate::Future, None).unwrap();
    assert_eq!(e.node_state_string(NodeId(0)), "FUTURE");
    e.update_node(NodeId(0), NodeUpdate::Resume, None).unwrap();
    assert_eq!(e.node_state_string(NodeId(0)), "IDLE");
    e.submit(JobSpec::new("alice")).unwrap();
    e.tick();
    assert!(matches!(
        e.update_node(NodeId(0), NodeUpdate::Future, None),
        Err(NodeUpdateError::InvalidTransition { .. })
    ));
}

#[test]
fn a_restored_booting_node_times_out_from_its_first_request() {
    use sluice_engine::Clock as _;
    let (mut e, clock) = cloud_engine();
    e.update_node(NodeId(0), NodeUpdate::PowerUp, None).unwrap();
    e.tick();
    let saved = e.saved_power(NodeId(0));
    assert!(e.node_state_string(NodeId(0)).contains("POWERING_UP"));
    // A fresh engine ten seconds later (a restarted host), the record put back.
    let (mut fresh, fresh_clock) = cloud_engine();
    fresh_clock.set(clock.now() + 10);
    assert!(fresh.node_state_string(NodeId(0)).contains("POWERED_DOWN"));
    fresh.restore_node_power(NodeId(0), saved.clone());
    assert_eq!(fresh.saved_power(NodeId(0)), saved);
    assert_eq!(
        fresh.node_state_string(NodeId(0)),
        "IDLE+CLOUD+NOT_RESPONDING+POWERING_UP"
    );
    // ResumeTimeout (60 s) counts from the request, not from the restart.
    let asked = saved.boot_requested.unwrap();
    fresh_clock.set(asked + 60);
    fresh.tick();
    assert!(fresh.node_state_string(NodeId(0)).contains("POWERING_UP"));
    // The next pass on the power_save_interval grid (10 s) finds it past ResumeTimeout.
    let due = fresh.next_wakeup().expect("the timeout is pending");
    assert!(due > asked + 60 && due <= asked + 71, "{due} vs {asked}");
    fresh_clock.set(due);
    fresh.tick();
    assert_eq!(fresh.node_sinfo_state(NodeId(0)), "down~");
}
