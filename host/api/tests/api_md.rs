//! API.md stays true to the types: the job object's fields are the ones it lists, in its order,
//! and the answers read back what the daemon writes.

use sluice_api::{HoldBy, Job, JobRequestSummary, Metrics, ShadowReports, StepRecord};

const API_MD: &str = include_str!("../../daemon/API.md");

fn job() -> Job {
    Job {
        job_id: 7,
        name: "wrap".into(),
        user: "alice".into(),
        uid: 1000,
        account: Some("physics".into()),
        partition: "batch".into(),
        state: "RUNNING".into(),
        st: "R".into(),
        reason: "None".into(),
        hold: Some(HoldBy::Admin),
        priority: 12,
        time: 30,
        time_limit: None,
        nodes: 1,
        nodelist: "node01".into(),
        cpus: 4,
        submit_time: 100,
        start_time: Some(110),
        end_time: None,
        exit_code: None,
        signal: None,
        restarts: 0,
        requeue: true,
        workdir: "/home/alice".into(),
        steps: vec![StepRecord {
            id: 0,
            name: "hostname".into(),
            start: 111,
            end: Some(112),
            exit_code: Some(0),
        }],
        request: JobRequestSummary {
            ntasks: Some(4),
            cpus_per_task: None,
            mem_mb: None,
            gres: None,
            gpus: None,
            licenses: None,
            constraint: None,
            dependency: None,
            nice: 0,
            begin: None,
            qos: None,
            output: None,
            error: None,
            input: None,
            command: Some("/home/alice/job.sh".into()),
            comment: None,
            time_min: None,
            deadline: None,
            nodelist: None,
            exclude: Some("node02".into()),
            ntasks_per_node: None,
            mem_per_cpu_mb: None,
            mail_type: None,
            mail_user: None,
            exclusive: false,
            contiguous: false,
            oversubscribe: false,
        },
        array: None,
    }
}

#[test]
fn the_job_object_has_the_fields_api_md_lists_in_its_order() {
    let listed = API_MD
        .split("## Job object")
        .nth(1)
        .and_then(|rest| rest.split('`').nth(1))
        .expect("API.md has a `## Job object` section with the fields in backticks");
    let listed: Vec<&str> = listed.split_whitespace().collect();
    let value = serde_json::to_value(job()).unwrap();
    let fields: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(fields, listed);
}

#[test]
fn answers_read_back_what_is_written() {
    let j = job();
    let text = serde_json::to_string(&j).unwrap();
    assert!(text.contains(r#""hold":"admin""#), "{text}");
    assert_eq!(serde_json::from_str::<Job>(&text).unwrap(), j);

    // Metrics keep the daemon's counters at the top level, as API.md's table names them.
    let m: Metrics = serde_json::from_str(
        r#"{"submitted":3,"refused":0,"started":2,"ended":1,"ticks":9,"tick_ms_total":1.5,
            "tick_ms_max":0.5,"syncs":4,"snapshots":0,"swaps_published":1,"swaps_refused":0,
            "start_latency_ms_total":20.0,"start_latency_ms_max":15.0,
            "engine_faults":{"priority":0,"selection":0,"hres":0,"gres":0},
            "last_main_pass":{"queued":1,"tested":1,"started":1,"reserved":0,"stopped_by":null},
            "last_backfill_pass":{"queued":0,"tested":0,"started":0,"reserved":0,"stopped_by":"bf_max_job_test"},
            "engine_pending":1,"engine_running":2}"#,
    )
    .unwrap();
    assert_eq!(m.counters.started, 2);
    assert_eq!(
        m.last_backfill_pass.stopped_by.as_deref(),
        Some("bf_max_job_test")
    );

    // No shadow: both reports are null.
    let none: ShadowReports =
        serde_json::from_str(r#"{"priority":null,"selection":null}"#).unwrap();
    assert_eq!(none, ShadowReports::default());
}
