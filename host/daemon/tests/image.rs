//! The image as a function of its records: a job's life from submit through a run, its steps,
//! a requeue (its run kept for the accounting store) and an end, with usage accrued; cancels,
//! holds, node states and reservations; power records, program calls and registrations.

use sluice_daemon::image::{HoldBy, Image, NodeAction, Record, State};
use sluice_daemon::request::{SubmitRequest, UpdateRequest};

fn submit(id: u64, hold: bool) -> Record {
    Record::Submit {
        id,
        time: 100,
        uid: 1000,
        user: "alice".into(),
        request: Box::new(SubmitRequest {
            name: Some(format!("job{id}")),
            account: Some("physics".into()),
            ..SubmitRequest::default()
        }),
        hold,
        array: None,
    }
}

#[test]
fn array_tasks_keep_their_place_and_take_throttle_updates() {
    let mut image = Image::new(1);
    for (i, task_id) in [(7u64, 1u32), (8, 3)] {
        let Record::Submit {
            id,
            time,
            uid,
            user,
            request,
            hold,
            ..
        } = submit(i, false)
        else {
            unreachable!()
        };
        image.apply(&Record::Submit {
            id,
            time,
            uid,
            user,
            request,
            hold,
            array: Some(sluice_api::ArrayMember {
                job_id: 7,
                task_id,
                throttle: 2,
            }),
        });
    }
    image.apply(&Record::Update {
        id: 8,
        changes: UpdateRequest {
            array_task_throttle: Some(5),
            ..UpdateRequest::default()
        },
    });
    let a = image.jobs[&8].array.unwrap();
    assert_eq!((a.job_id, a.task_id, a.throttle), (7, 3, 5));
    assert_eq!(
        image.jobs[&7].array.unwrap().throttle,
        2,
        "one record per task"
    );
    assert_eq!(image.next_id, 9);
    // A record written before arrays existed reads as a plain job.
    let old = r#"{"op":"submit","id":3,"time":1,"uid":0,"user":"u","request":{},"hold":false}"#;
    let rec: Record = serde_json::from_str(old).unwrap();
    image.apply(&rec);
    assert_eq!(image.jobs[&3].array, None);
}

fn started(id: u64, time: i64) -> Record {
    Record::Started {
        id,
        time,
        partition: "batch".into(),
        nodes: vec!["node01".into(), "node02".into()],
        cpus: 4,
        account: "physics".into(),
        configuring: false,
    }
}

#[test]
fn a_job_runs_steps_is_requeued_runs_again_and_ends_with_its_usage() {
    let mut image = Image::new(1);
    image.usage_time = 150;
    image.apply(&submit(7, true));
    assert_eq!(image.next_id, 8);
    let job = &image.jobs[&7];
    assert_eq!(
        (job.state, job.hold, job.account.as_deref()),
        (State::Pending, Some(HoldBy::User), Some("physics"))
    );
    image.apply(&Record::Release { id: 7 });
    image.apply(&Record::Update {
        id: 7,
        changes: UpdateRequest {
            nice: Some(5),
            ..UpdateRequest::default()
        },
    });
    assert_eq!(
        (image.jobs[&7].hold, image.jobs[&7].request.nice),
        (None, 5)
    );

    image.apply(&started(7, 200));
    image.apply(&Record::StepStarted {
        id: 7,
        step: 0,
        name: "hostname".into(),
        time: 210,
    });
    image.apply(&Record::StepEnded {
        id: 7,
        step: 0,
        exit_code: 3,
        time: 220,
    });
    let job = &image.jobs[&7];
    assert_eq!(job.state, State::Running);
    assert_eq!(
        (job.steps[0].end, job.steps[0].exit_code),
        (Some(220), Some(3))
    );

    image.apply(&Record::Requeued {
        id: 7,
        time: 230,
        reason: "NodeFail".into(),
        begin: Some(351),
    });
    let job = &image.jobs[&7];
    assert_eq!((job.state, job.restarts), (State::Pending, 1));
    // Eligible again only 121 s later, also after a restart.
    assert_eq!(job.request.begin, Some(351));
    assert!(job.nodes.is_empty() && job.steps.is_empty() && job.start_time.is_none());
    // The run that ended here waits for the accounting store (sacct -D), then goes.
    let run = &job.runs[0];
    assert_eq!(
        (
            run.restarts,
            run.start,
            run.end,
            run.cpus,
            run.reason.as_str()
        ),
        (0, 200, 230, 4, "NodeFail")
    );
    assert_eq!(run.nodes, vec!["node01", "node02"]);
    assert_eq!(run.steps[0].exit_code, Some(3));
    image.apply(&Record::Accounted { ids: vec![7] });
    assert!(image.jobs[&7].runs.is_empty());

    image.apply(&started(7, 300));
    image.apply(&Record::StepStarted {
        id: 7,
        step: 1,
        name: "sleep".into(),
        time: 310,
    });
    image.apply(&Record::Ended {
        id: 7,
        time: 400,
        state: State::Completed,
        exit_code: Some(0),
        reason: None,
    });
    image.apply(&Record::Exited {
        id: 7,
        code: Some(0),
        signal: None,
    });
    let job = &image.jobs[&7];
    assert_eq!((job.state, job.end_time), (State::Completed, Some(400)));
    assert_eq!(
        job.steps[0].end,
        Some(400),
        "an open step ends with its job"
    );
    // 100 s on 4 CPUs, all after the usage snapshot at 150.
    assert_eq!(image.usage["physics/alice"], 400.0);
}

#[test]
fn cancels_nodes_and_reservations_change_only_what_they_name() {
    let mut image = Image::new(1);
    image.apply(&submit(1, false));
    image.apply(&submit(2, false));
    image.apply(&started(2, 150));
    image.apply(&Record::Cancel { id: 1, time: 160 });
    image.apply(&Record::Cancel { id: 2, time: 160 });
    image.apply(&Record::Cancel { id: 99, time: 160 });
    assert_eq!(image.jobs[&1].state, State::Cancelled);
    assert_eq!(image.jobs[&1].end_time, Some(160));
    // A running job ends when its processes do; the cancel is remembered for a crash.
    assert_eq!(image.jobs[&2].state, State::Running);
    assert!(image.jobs[&2].cancel_requested);
    assert!(!image.jobs.contains_key(&99));

    image.apply(&Record::Node {
        node: "node01".into(),
        action: NodeAction::Drain,
        reason: "disk".into(),
        time: 170,
    });
    assert_eq!(image.nodes["node01"].reason, "disk");
    image.apply(&Record::Node {
        node: "node01".into(),
        action: NodeAction::Resume,
        reason: String::new(),
        time: 180,
    });
    assert!(image.nodes.is_empty());

    let spec = sluice_engine::ReservationSpec {
        name: "maint".into(),
        start: 0,
        end: 10,
        ..sluice_engine::ReservationSpec::default()
    };
    image.apply(&Record::ReservationCreate { spec });
    assert!(image.reservations.contains_key("maint"));
    image.apply(&Record::ReservationDelete {
        name: "maint".into(),
    });
    assert!(image.reservations.is_empty());
}

#[test]
fn power_records_calls_registrations_and_configuring_jobs() {
    use sluice_daemon::power_image::{NodeAddress, NodePowerImage, PowerCallImage};
    let mut image = Image::new(1);
    image.apply(&submit(1, false));
    let Record::Started {
        id,
        time,
        partition,
        nodes,
        cpus,
        account,
        ..
    } = started(1, 150)
    else {
        unreachable!()
    };
    image.apply(&Record::Started {
        id,
        time,
        partition,
        nodes,
        cpus,
        account,
        configuring: true,
    });
    assert_eq!(image.jobs[&1].state, State::Configuring);
    // Its time counts from the boot's end.
    image.apply(&Record::Ready { id: 1, time: 190 });
    assert_eq!(image.jobs[&1].state, State::Running);
    assert_eq!(image.jobs[&1].start_time, Some(190));

    let booting = NodePowerImage {
        flags: vec!["NOT_RESPONDING".into(), "POWERING_UP".into()],
        boot_requested: Some(150),
        why: Some("resumed".into()),
        health: "UP".into(),
        ..NodePowerImage::default()
    };
    let record = Record::Power {
        node: "node01".into(),
        power: booting.clone(),
    };
    // Records cross the journal as JSON.
    let text = serde_json::to_string(&record).unwrap();
    let back: Record = serde_json::from_str(&text).unwrap();
    assert_eq!(back, record);
    image.apply(&back);
    assert_eq!(image.power["node01"], booting);
    assert!(booting.flags().has(sluice_engine::PowerFlags::POWERING_UP));

    let call = PowerCallImage {
        program: "resume".into(),
        path: Some("/sbin/resume".into()),
        args: vec!["node[01-02]".into()],
        time: 150,
    };
    image.apply(&Record::PowerCall { seq: 0, call });
    image.apply(&Record::PowerCall {
        seq: 1,
        call: PowerCallImage {
            program: "suspend".into(),
            path: None,
            args: vec!["node03".into()],
            time: 151,
        },
    });
    image.apply(&Record::PowerCallDone {
        seq: 0,
        outcome: "exit 0".into(),
    });
    assert_eq!(image.power_calls.keys().copied().collect::<Vec<_>>(), [1]);
    assert_eq!(image.next_power_call, 2);

    image.apply(&Record::Registered {
        node: "node01".into(),
        address: NodeAddress {
            addr: Some("10.0.0.1".into()),
            hostname: None,
            time: 190,
        },
    });
    assert_eq!(image.addresses["node01"].addr.as_deref(), Some("10.0.0.1"));
    // An image from before power records reads as one with none.
    let old: Image = serde_json::from_str(
        r#"{"seq":0,"next_id":1,"jobs":{},"nodes":{},"reservations":{},"usage":{},"usage_time":0}"#,
    )
    .unwrap();
    assert!(old.power.is_empty() && old.power_calls.is_empty());
}

#[test]
fn a_job_is_accounted_until_anything_about_it_changes_again() {
    let mut image = Image::new(1);
    image.apply(&submit(3, false));
    image.apply(&started(3, 200));
    image.apply(&Record::Ended {
        id: 3,
        time: 260,
        state: State::Cancelled,
        exit_code: None,
        reason: None,
    });
    assert!(!image.jobs[&3].accounted);
    // Ids the image does not know are ignored, as for every record.
    image.apply(&Record::Accounted { ids: vec![3, 99] });
    assert!(image.jobs[&3].accounted);
    assert!(!image.jobs.contains_key(&99));
    // The signal that killed it arrives after its end: the store must hear of it again.
    image.apply(&Record::Exited {
        id: 3,
        code: None,
        signal: Some(15),
    });
    assert!(!image.jobs[&3].accounted);
    // The mark survives a snapshot; one written before the field existed reads as unaccounted.
    image.apply(&Record::Accounted { ids: vec![3] });
    let json = serde_json::to_value(&image).unwrap();
    let back: Image = serde_json::from_value(json.clone()).unwrap();
    assert!(back.jobs[&3].accounted);
    let mut old = json;
    old["jobs"]["3"]
        .as_object_mut()
        .unwrap()
        .remove("accounted");
    let back: Image = serde_json::from_value(old).unwrap();
    assert!(!back.jobs[&3].accounted);
}
