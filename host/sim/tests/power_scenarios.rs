//! Power saving scenarios in the form of power-save.md §2: a slurm.conf, jobs and timed actions,
//! and what the scenario log must show — node states, program calls and the windows they fall
//! in. "P>x" is the first power pass after x: some t with x < t ≤ x + I + 1 (I = 10 here).

use serde_json::Value;
use sluice_cluster::Source;
use sluice_cluster::slurm_conf::import_slurm_conf;
use sluice_engine::Policies;
use sluice_plugin_priority_basic::Basic;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_policy::{FromSettings, Settings};
use sluice_sim::scenario::{Boot, Scenario, ScenarioOutcome, run_scenario};

/// Every scenario's programs and selection (§2.1).
const COMMON: &str = "SuspendProgram=/rec/suspend\nResumeProgram=/rec/resume\n\
                      SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n";

/// S1's configuration.
const S1: &str = "SuspendTime=10\nSuspendTimeout=10\nResumeTimeout=60\n\
                  SlurmctldParameters=idle_on_node_suspend\n\
                  NodeName=node1 CPUs=1 State=CLOUD\n\
                  PartitionName=cloud1 Nodes=node1 Default=YES\n";

/// A replay's log, read back.
struct Log {
    records: Vec<Value>,
    outcome: ScenarioOutcome,
}

fn replay(conf: &str, workload: &str, boot: Boot) -> Log {
    let text = format!("{COMMON}{conf}");
    let cluster = import_slurm_conf(Source::new("slurm.conf", &text), None, None, None)
        .unwrap()
        .cluster;
    let policies = Policies {
        priority: Box::new(Basic::from_settings(&Settings::default())),
        selection: Box::new(ConsTres::from_settings(&Settings::default())),
        hres: None,
        gres: Vec::new(),
    };
    let scenario = Scenario::read(workload.as_bytes(), "w.jsonl").unwrap();
    let (outcome, out) = run_scenario(cluster, policies, scenario, boot, Vec::new()).unwrap();
    let records = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Log { records, outcome }
}

impl Log {
    /// The last record of `node` at or before `t`.
    fn node(&self, node: &str, t: i64) -> &Value {
        self.records
            .iter()
            .rfind(|r| r["node"] == node && r["t"].as_i64().unwrap() <= t)
            .unwrap_or_else(|| panic!("no record of {node} by {t}"))
    }

    fn state(&self, node: &str, t: i64) -> (&str, &str) {
        let r = self.node(node, t);
        (r["state"].as_str().unwrap(), r["sinfo"].as_str().unwrap())
    }

    /// Every state `node` was logged in at instant `t`, in order.
    fn states_at(&self, node: &str, t: i64) -> Vec<(&str, &str)> {
        self.records
            .iter()
            .filter(|r| r["node"] == node && r["t"] == t)
            .map(|r| (r["state"].as_str().unwrap(), r["sinfo"].as_str().unwrap()))
            .collect()
    }

    /// LastBusyTime of `node` at `t` (the last record that carried one).
    fn last_busy(&self, node: &str, t: i64) -> Option<i64> {
        self.records
            .iter()
            .rfind(|r| {
                r["node"] == node
                    && r["t"].as_i64().unwrap() <= t
                    && r.as_object().unwrap().contains_key("last_busy")
            })
            .and_then(|r| r["last_busy"].as_i64())
    }

    /// The first time `node` was in `state`.
    fn first(&self, node: &str, state: &str) -> Option<i64> {
        self.records
            .iter()
            .find(|r| r["node"] == node && r["state"] == state)
            .and_then(|r| r["t"].as_i64())
    }

    /// The last record of job `id` at or before `t`.
    fn job(&self, id: u64, t: i64) -> &Value {
        self.records
            .iter()
            .rfind(|r| r["job"] == id && r["t"].as_i64().unwrap() <= t)
            .unwrap_or_else(|| panic!("no record of job {id} by {t}"))
    }

    /// The first time job `id` was in `state`.
    fn job_first(&self, id: u64, state: &str) -> Option<i64> {
        self.records
            .iter()
            .find(|r| r["job"] == id && r["state"] == state)
            .and_then(|r| r["t"].as_i64())
    }

    /// Program calls of `program` as (t, hostlist argument).
    fn calls(&self, program: &str) -> Vec<(i64, String)> {
        self.records
            .iter()
            .filter(|r| r["program"] == program)
            .map(|r| {
                (
                    r["t"].as_i64().unwrap(),
                    r["argv"][0].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn call(&self, program: &str, n: usize) -> &Value {
        self.records
            .iter()
            .filter(|r| r["program"] == program)
            .nth(n)
            .unwrap_or_else(|| panic!("no call {n} of {program}"))
    }

    fn errors(&self) -> Vec<&str> {
        self.records
            .iter()
            .filter_map(|r| r["error"].as_str())
            .collect()
    }
}

/// x < t ≤ x + 11: the first power pass after x.
fn first_pass_after(x: i64, t: i64) -> bool {
    x < t && t <= x + 11
}

#[test]
fn s1_cloud_node_cycle() {
    let log = replay(
        S1,
        r#"{"id": 1, "submit": 5, "run_time": 5}
{"at": 30, "action": "register", "nodes": "node1"}"#,
        Boot::Manual,
    );
    assert_eq!(log.state("node1", 4), ("IDLE+CLOUD+POWERED_DOWN", "idle~"));
    assert_eq!(log.last_busy("node1", 4), None);
    assert_eq!(
        log.state("node1", 17),
        ("ALLOCATED+CLOUD+NOT_RESPONDING+POWERING_UP", "alloc#")
    );
    assert_eq!(log.job(1, 17)["state"], "CONFIGURING");
    let resumes = log.calls("resume");
    assert_eq!(resumes.len(), 1);
    assert!((5..=16).contains(&resumes[0].0), "{resumes:?}");
    assert_eq!(resumes[0].1, "node1");
    let file = &log.call("resume", 0)["resume_file"];
    assert_eq!(file["all_nodes_resume"], "node1");
    let job = &file["jobs"][0];
    assert_eq!(
        (
            &job["job_id"],
            &job["nodes_alloc"],
            &job["nodes_resume"],
            &job["partition"]
        ),
        (
            &Value::from(1),
            &Value::from("node1"),
            &Value::from("node1"),
            &Value::from("cloud1")
        )
    );
    assert_eq!(log.state("node1", 30), ("ALLOCATED+CLOUD", "alloc"));
    let r = log.job_first(1, "RUNNING").unwrap();
    assert!((30..=60).contains(&r));
    let e = log.job_first(1, "COMPLETED").unwrap();
    assert_eq!(e, r + 5);
    assert_eq!(log.state("node1", e), ("IDLE+CLOUD", "idle"));
    assert_eq!(log.last_busy("node1", e), Some(e));
    let suspends = log.calls("suspend");
    assert_eq!(suspends.len(), 1, "{suspends:?}");
    let p = suspends[0].0;
    assert!(
        first_pass_after(e + 10, p),
        "suspend at {p}, idle since {e}"
    );
    assert_eq!(suspends[0].1, "node1");
    assert_eq!(log.state("node1", p), ("IDLE+CLOUD+POWERING_DOWN", "idle%"));
    assert_eq!(
        log.state("node1", p + 10),
        ("IDLE+CLOUD+POWERING_DOWN", "idle%")
    );
    let down = log.first("node1", "IDLE+CLOUD+POWERED_DOWN").unwrap_or(0);
    let down = log
        .records
        .iter()
        .filter(|r| r["node"] == "node1" && r["state"] == "IDLE+CLOUD+POWERED_DOWN")
        .map(|r| r["t"].as_i64().unwrap())
        .find(|&t| t > p)
        .unwrap_or(down);
    assert!(first_pass_after(p + 10, down), "powered down at {down}");
    assert_eq!(log.last_busy("node1", down), None);
    assert_eq!(log.calls("resume").len(), 1);
    assert_eq!(log.calls("suspend").len(), 1);
    assert!(log.outcome.jobs_left.is_empty());
}

/// S4's events: POWER_UP at 5, registration at 20, POWER_DOWN at 40, a job at 41.
const S4_EVENTS: &str = r#"{"at": 5, "action": "update", "nodes": "node1", "state": "POWER_UP"}
{"at": 20, "action": "register", "nodes": "node1"}
{"at": 40, "action": "update", "nodes": "node1", "state": "POWER_DOWN"}
{"id": 1, "submit": 41, "run_time": 5}"#;

/// S4's written times need the node still up at 40. Under S1's SuspendTime=10 the registration
/// at 20 sets LastBusyTime (§1.8), so the node is suspended at P>30, before the POWER_DOWN,
/// which is then ignored (§1.13 step 2): this test shows that reading; the two after it run S4
/// with the POWER_DOWN inside SuspendTime, and at 40 with SuspendTime=60.
#[test]
fn s4_under_suspend_time_10_the_registered_node_is_suspended_first() {
    let log = replay(S1, S4_EVENTS, Boot::Manual);
    let down = log.calls("suspend");
    assert!(first_pass_after(30, down[0].0), "{down:?}");
    assert_eq!(
        log.state("node1", 40),
        ("IDLE+CLOUD+POWERING_DOWN", "idle%")
    );
    assert_eq!(log.calls("suspend").len(), 1);
}

/// S4's checks for a POWER_DOWN at `down_at` and a job submitted the second after.
fn check_s4(log: &Log, down_at: i64) {
    let up = log.calls("resume");
    assert!(!up.is_empty() && (5..=16).contains(&up[0].0), "{up:?}");
    assert_eq!(
        log.call("resume", 0)["resume_file"],
        serde_json::json!({"jobs": [], "all_nodes_resume": "node1"})
    );
    assert_eq!(
        log.state("node1", up[0].0),
        ("IDLE+CLOUD+NOT_RESPONDING+POWERING_UP", "idle#")
    );
    assert_eq!(log.state("node1", 20), ("IDLE+CLOUD", "idle"));
    assert_eq!(log.last_busy("node1", 20), Some(20));
    assert!(
        log.states_at("node1", down_at)
            .contains(&("IDLE+CLOUD+POWER_DOWN", "idle!"))
    );
    let down = log.calls("suspend");
    assert!((down_at..=down_at + 11).contains(&down[0].0), "{down:?}");
    assert_eq!(log.call("suspend", 0)["reasons"][0], "POWER_DOWN requested");
    // The job submitted the second after does not start on node1 while it powers down.
    assert_eq!(log.job(1, down[0].0 + 10)["state"], "PENDING");
    let off = log
        .records
        .iter()
        .filter(|r| r["node"] == "node1" && r["state"] == "IDLE+CLOUD+POWERED_DOWN")
        .map(|r| r["t"].as_i64().unwrap())
        .find(|&t| t > down[0].0)
        .unwrap();
    assert!(
        first_pass_after(down[0].0 + 10, off),
        "powered down at {off}"
    );
    // Then the job is allocated and node1 resumed.
    let allocated = log.job_first(1, "CONFIGURING").unwrap();
    assert!(allocated >= off);
    assert_eq!(log.calls("resume").len(), 2);
    assert!(log.errors().is_empty(), "{:?}", log.errors());
}

/// S4 on S1's configuration exactly, with the POWER_DOWN (and the job) 5 s after the
/// registration, inside SuspendTime, as test_141_1 issues it right after the node is up.
#[test]
fn s4_manual_power_up_and_power_down() {
    let events = S4_EVENTS
        .replace(r#""at": 40"#, r#""at": 25"#)
        .replace(r#""submit": 41"#, r#""submit": 26"#);
    check_s4(&replay(S1, &events, Boot::Manual), 25);
}

/// S4 at its written times (POWER_DOWN at 40), with a SuspendTime that leaves the node up
/// until then.
#[test]
fn s4_at_its_written_times_with_a_longer_suspend_time() {
    let log = replay(
        &S1.replace("SuspendTime=10", "SuspendTime=60"),
        S4_EVENTS,
        Boot::Manual,
    );
    check_s4(&log, 40);
}

/// Three cloud nodes in one partition, SuspendTime 100, the S1 timeouts.
const CLOUD3: &str = "SuspendTime=100\nSuspendTimeout=10\nResumeTimeout=60\n\
                      NodeName=c[1-3] CPUs=1 State=CLOUD\n\
                      PartitionName=cloud Nodes=c[1-3] Default=YES\n";

/// Three local nodes that register at start-up.
const LOCAL3: &str = "SuspendTime=100\nSuspendTimeout=10\nResumeTimeout=60\n\
                      NodeName=n[1-3] CPUs=1\n\
                      PartitionName=batch Nodes=n[1-3] Default=YES\n";

fn jobs(specs: &[(u64, i64, i64)]) -> String {
    specs
        .iter()
        .map(|(id, submit, run)| {
            format!(r#"{{"id": {id}, "submit": {submit}, "run_time": {run}}}"#)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_node_is_logged_at_start_and_cloud_nodes_are_visible() {
    let log = replay(
        "SuspendTime=100\nNodeName=n1 CPUs=1\nNodeName=c1 CPUs=1 State=CLOUD\nPartitionName=p Nodes=n1,c1 Default=YES\n",
        "",
        Boot::Manual,
    );
    assert_eq!(log.state("n1", 0), ("IDLE", "idle"));
    assert_eq!(log.last_busy("n1", 0), Some(0));
    assert_eq!(log.state("c1", 0), ("IDLE+CLOUD+POWERED_DOWN", "idle~"));
    assert_eq!(log.node("c1", 0)["last_busy"], Value::Null);
    // n1 idles from 0 and is suspended at P>100, then powered down 10 s later.
    let s = log.calls("suspend");
    assert!(first_pass_after(100, s[0].0) && s[0].1 == "n1", "{s:?}");
    assert_eq!(log.call("suspend", 0)["reasons"][0], "SuspendTime reached");
}

#[test]
fn without_both_programs_nothing_suspends_and_jobs_on_cloud_nodes_hang_configuring() {
    // Q3: automatic power saving is off without a SuspendProgram; the job is allocated its
    // powered-down node, which nothing resumes.
    let conf = "SuspendTime=10\nNodeName=c1 CPUs=1 State=CLOUD\nNodeName=n1 CPUs=1\n\
                PartitionName=p Nodes=c1 Default=YES\nPartitionName=q Nodes=n1\n";
    let text = format!("ResumeProgram=/rec/resume\n{conf}");
    let cluster = import_slurm_conf(Source::new("slurm.conf", &text), None, None, None)
        .unwrap()
        .cluster;
    let policies = Policies {
        priority: Box::new(Basic::from_settings(&Settings::default())),
        selection: Box::new(ConsTres::from_settings(&Settings::default())),
        hres: None,
        gres: Vec::new(),
    };
    let scenario = Scenario::read(
        r#"{"id": 1, "submit": 5, "run_time": 5}
{"at": 30, "action": "update", "nodes": "n1", "state": "POWER_DOWN"}"#
            .as_bytes(),
        "w.jsonl",
    )
    .unwrap();
    let (outcome, out) =
        run_scenario(cluster, policies, scenario, Boot::After(5), Vec::new()).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("\"program\""), "{text}");
    assert!(text.contains("invalid power action"), "{text}");
    assert!(text.contains("\"ALLOCATED+CLOUD+POWERED_DOWN\""), "{text}");
    assert_eq!(outcome.jobs_left, [1]);
}

#[test]
fn the_highest_partition_suspend_time_wins_and_infinite_never_suspends() {
    let log = replay(
        "SuspendTime=600\nNodeName=n[1-3] CPUs=1\n\
         PartitionName=pa Nodes=n[1-2] SuspendTime=60 Default=YES\n\
         PartitionName=pb Nodes=n[1-3]\n\
         PartitionName=pc Nodes=n2 SuspendTime=INFINITE\n",
        "",
        Boot::Manual,
    );
    let s = log.calls("suspend");
    let n1 = s.iter().find(|c| c.1 == "n1").unwrap().0;
    let n3 = s.iter().find(|c| c.1 == "n3").unwrap().0;
    assert!(first_pass_after(60, n1), "{s:?}");
    assert!(first_pass_after(600, n3), "{s:?}");
    assert!(!s.iter().any(|c| c.1.contains("n2")), "{s:?}");
}

#[test]
fn a_change_wakes_the_pass_no_sooner_than_power_save_min_interval() {
    let log = replay(
        &format!("SlurmctldParameters=power_save_min_interval=30\n{CLOUD3}"),
        r#"{"at": 5, "action": "update", "nodes": "c1", "state": "POWER_UP"}"#,
        Boot::Manual,
    );
    // The start-up pass ran at 0; the next may not run before 31.
    assert_eq!(log.calls("resume")[0].0, 31);
}

#[test]
fn resume_rate_limits_resumes_and_the_resume_file_says_which_nodes_woke() {
    let log = replay(
        &format!("ResumeRate=1\n{CLOUD3}"),
        r#"{"id": 1, "submit": 5, "run_time": 30, "nodes": 2, "tasks": 2}
{"id": 2, "submit": 5, "run_time": 30}"#,
        Boot::After(5),
    );
    let calls = log.calls("resume");
    // One token per minute, and a bucket of one.
    assert_eq!(calls[0], (5, "c1".to_string()), "{calls:?}");
    let file = &log.call("resume", 0)["resume_file"];
    assert_eq!(file["jobs"][0]["nodes_alloc"], "c[1-2]");
    assert_eq!(file["jobs"][0]["nodes_resume"], "c1");
    assert_eq!(
        log.state("c2", 6),
        ("ALLOCATED+CLOUD+POWERED_DOWN", "alloc~")
    );
    assert_eq!((calls[1].1.as_str(), calls[2].1.as_str()), ("c2", "c3"));
    assert_one_token_per_minute(&calls);
    assert!(log.outcome.jobs_left.is_empty());
}

/// At a rate of 1/min each call falls in a later refill period (whole minutes of the clock)
/// than the one before, and within a period and a pass of it.
fn assert_one_token_per_minute(calls: &[(i64, String)]) {
    let period = |t: i64| (sluice_sim::scenario::START + t) / 60;
    for pair in calls.windows(2) {
        assert_eq!(period(pair[1].0), period(pair[0].0) + 1, "{calls:?}");
    }
}

#[test]
fn suspend_rate_spreads_suspends_out() {
    let log = replay(&format!("SuspendRate=1\n{LOCAL3}"), "", Boot::Manual);
    let calls = log.calls("suspend");
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert!(first_pass_after(100, calls[0].0));
    assert_one_token_per_minute(&calls);
}

#[test]
fn suspend_exc_nodes_counts_keep_busy_nodes_counted_and_the_first_idle_ones_up() {
    // n[1-3]:2 — at least two up; n1 runs a long job and counts, so n2 (the first suspendable)
    // is kept, n3 suspended.
    let log = replay(
        &format!("SuspendExcNodes=n[1-3]:2\n{LOCAL3}"),
        &jobs(&[(1, 0, 10_000)]),
        Boot::Manual,
    );
    let calls = log.calls("suspend");
    assert_eq!(calls[0].1, "n3", "{calls:?}");
    assert!(
        !calls.iter().any(|c| c.1.contains("n2") && c.0 < 10_000),
        "{calls:?}"
    );
    assert_eq!(log.node("n2", 500)["state"], "IDLE");
}

#[test]
fn suspend_exc_parts_and_states_keep_nodes_up_but_not_a_power_down_request() {
    let log = replay(
        "SuspendTime=50\nSuspendExcParts=keep\nSuspendExcStates=DRAIN\n\
         NodeName=n[1-3] CPUs=1\nPartitionName=keep Nodes=n1 Default=YES\nPartitionName=rest Nodes=n[2-3]\n",
        r#"{"at": 5, "action": "update", "nodes": "n2", "state": "DRAIN", "reason": "disk"}
{"at": 200, "action": "update", "nodes": "n1", "state": "POWER_DOWN"}"#,
        Boot::Manual,
    );
    let calls = log.calls("suspend");
    assert_eq!(calls[0].1, "n3", "{calls:?}");
    assert!(first_pass_after(50, calls[0].0));
    assert_eq!(calls[1], (200, "n1".to_string()), "{calls:?}");
    assert!(!calls.iter().any(|c| c.1.contains("n2")), "{calls:?}");
}

#[test]
fn idle_down_and_drained_nodes_are_suspended_too_and_idle_on_node_suspend_makes_them_idle() {
    let events = r#"{"at": 5, "action": "update", "nodes": "n1", "state": "DOWN", "reason": "bad"}
{"at": 5, "action": "update", "nodes": "n2", "state": "DRAIN", "reason": "disk"}"#;
    let plain = replay(LOCAL3, events, Boot::Manual);
    let off = plain.outcome.end;
    assert_eq!(plain.state("n1", off), ("DOWN+POWERED_DOWN", "down~"));
    assert_eq!(
        plain.state("n2", off),
        ("IDLE+DRAIN+POWERED_DOWN", "drain~")
    );
    let idle = replay(
        &format!("SlurmctldParameters=idle_on_node_suspend\n{LOCAL3}"),
        events,
        Boot::Manual,
    );
    let off = idle.outcome.end;
    assert_eq!(idle.state("n1", off), ("IDLE+POWERED_DOWN", "idle~"));
    assert_eq!(idle.state("n2", off), ("IDLE+POWERED_DOWN", "idle~"));
}

#[test]
fn resume_on_a_powering_down_node_powers_it_down_at_once() {
    let log = replay(
        CLOUD3
            .replace("SuspendTimeout=10", "SuspendTimeout=300")
            .as_str(),
        r#"{"at": 5, "action": "update", "nodes": "c1", "state": "POWER_UP"}
{"at": 10, "action": "register", "nodes": "c1"}
{"at": 20, "action": "update", "nodes": "c1", "state": "POWER_DOWN"}
{"at": 30, "action": "update", "nodes": "c1", "state": "RESUME"}"#,
        Boot::Manual,
    );
    assert_eq!(log.state("c1", 29), ("IDLE+CLOUD+POWERING_DOWN", "idle%"));
    assert_eq!(log.state("c1", 30), ("IDLE+CLOUD+POWERED_DOWN", "idle~"));
}

#[test]
fn resume_timeout_downs_the_node_requeues_the_job_121_s_later_and_calls_resume_fail() {
    let log = replay(
        &format!("ResumeFailProgram=/rec/fail\n{S1}"),
        &jobs(&[(1, 5, 5)]),
        Boot::Manual,
    );
    let resumed = log.calls("resume")[0].0;
    let failed = log.calls("resume_fail");
    assert!(first_pass_after(resumed + 60, failed[0].0), "{failed:?}");
    let t = failed[0].0;
    assert_eq!(failed[0].1, "node1");
    assert_eq!(log.state("node1", t), ("DOWN+CLOUD+POWERED_DOWN", "down~"));
    assert_eq!(log.node("node1", t)["reason"], "ResumeTimeout reached");
    let job = log.job(1, t);
    assert_eq!(
        (&job["state"], &job["reason"]),
        (&Value::from("PENDING"), &Value::from("BeginTime"))
    );
    assert_eq!(job["restarts"], 1);
    // Eligible again 121 s later; the node stays down~, so it waits for resources.
    assert_eq!(job["eligible_time"].as_i64(), Some(t + 121));
    assert_eq!(log.outcome.power.requeues, 1);
    assert_eq!(log.outcome.jobs_left, [1]);
}

#[test]
fn resume_after_resume_timeout_makes_the_node_idle_powered_down_and_usable() {
    let log = replay(
        S1,
        r#"{"id": 1, "submit": 5, "run_time": 5}
{"at": 200, "action": "update", "nodes": "node1", "state": "RESUME"}
{"at": 230, "action": "register", "nodes": "node1"}"#,
        Boot::Manual,
    );
    let states = log.states_at("node1", 200);
    assert!(
        states.contains(&("IDLE+CLOUD+POWERED_DOWN+NOT_RESPONDING", "idle~")),
        "{states:?}"
    );
    // The requeued job takes the node again and it is resumed a second time.
    assert_eq!(log.calls("resume").len(), 2);
    assert_eq!(log.job_first(1, "COMPLETED"), Some(235));
}

#[test]
fn late_registration_after_resume_timeout_leaves_the_node_down_with_its_reason() {
    let log = replay(
        S1,
        r#"{"id": 1, "submit": 5, "run_time": 5, "requeue": false}
{"at": 100, "action": "register", "nodes": "node1"}"#,
        Boot::Manual,
    );
    assert_eq!(log.job(1, 100)["state"], "NODE_FAIL");
    assert_eq!(log.state("node1", 100), ("DOWN+CLOUD", "down"));
    assert_eq!(log.node("node1", 100)["reason"], "ResumeTimeout reached");
    assert_eq!(log.last_busy("node1", 100), Some(100));
}

#[test]
fn requeue_rules_batch_no_requeue_and_interactive_jobs() {
    let workload = r#"{"id": 1, "submit": 5, "run_time": 5, "requeue": false}
{"id": 2, "submit": 5, "run_time": 5, "batch": false}
{"id": 3, "submit": 5, "run_time": 5}"#;
    let log = replay(CLOUD3, workload, Boot::Manual);
    let fail = log.calls("resume")[0].0 + 61;
    assert_eq!(log.job(1, fail + 11)["state"], "NODE_FAIL");
    assert_eq!(log.job(2, fail + 11)["state"], "NODE_FAIL");
    assert_eq!(log.job(3, fail + 11)["state"], "PENDING");
    let log = replay(
        &format!("SchedulerParameters=requeue_on_resume_failure\n{CLOUD3}"),
        workload,
        Boot::Manual,
    );
    assert_eq!(log.job(1, fail + 11)["state"], "PENDING");
    assert_eq!(log.job(2, fail + 11)["state"], "NODE_FAIL");
}

#[test]
fn cancelling_a_configuring_job_leaves_its_node_booting_then_idle() {
    let log = replay(
        CLOUD3,
        r#"{"id": 1, "submit": 5, "run_time": 5}
{"at": 10, "action": "cancel", "job": 1}"#,
        Boot::After(20),
    );
    assert_eq!(log.job(1, 10)["state"], "CANCELLED");
    assert_eq!(
        log.state("c1", 10),
        ("IDLE+CLOUD+NOT_RESPONDING+POWERING_UP", "idle#")
    );
    assert_eq!(log.last_busy("c1", 10), Some(10));
    assert_eq!(log.state("c1", 25), ("IDLE+CLOUD", "idle"));
    // Registered at 25: idle from then, suspended SuspendTime later.
    let s = log.calls("suspend");
    assert!(first_pass_after(125, s[0].0), "{s:?}");
}

#[test]
fn drain_or_down_on_a_booting_allocated_node_requeues_its_job_and_down_then_power_down_aborts_the_boot()
 {
    let log = replay(
        CLOUD3,
        r#"{"id": 1, "submit": 5, "run_time": 5}
{"at": 10, "action": "update", "nodes": "c1", "state": "DRAIN", "reason": "bad image"}"#,
        Boot::Manual,
    );
    assert_eq!(log.job(1, 10)["state"], "PENDING");
    assert_eq!(log.job(1, 10)["restarts"], 1);
    let log = replay(
        CLOUD3,
        r#"{"id": 1, "submit": 5, "run_time": 5}
{"at": 10, "action": "update", "nodes": "c1", "state": "DOWN", "reason": "capacity"}
{"at": 11, "action": "update", "nodes": "c1", "state": "POWER_DOWN"}"#,
        Boot::Manual,
    );
    assert_eq!(log.state("c1", 10).1, "down#");
    let s = log.calls("suspend");
    assert_eq!(s[0], (11, "c1".to_string()));
    assert!(log.calls("resume_fail").is_empty());
}

#[test]
fn nodes_are_taken_powered_up_first_then_booting_then_powered_down() {
    // The guide's hybrid cluster in small: a local node of Weight 10 beats cloud nodes of Weight 1.
    let log = replay(
        "SuspendTime=INFINITE\nNodeName=tux0 CPUs=1 Weight=10\nNodeName=ec[0-1] CPUs=1 Weight=1 State=CLOUD\n\
         PartitionName=batch Nodes=tux0,ec[0-1] Default=YES SuspendTime=300\n",
        &jobs(&[(1, 5, 100), (2, 6, 100), (3, 40, 5)]),
        Boot::After(60),
    );
    assert_eq!(log.state("tux0", 5).0, "ALLOCATED");
    assert!(log.state("ec0", 6).0.starts_with("ALLOCATED+CLOUD"));
    // Job 3 at 40: tux0 is busy, ec0 busy booting, ec1 powered down: ec1 boots.
    assert!(log.state("ec1", 40).0.starts_with("ALLOCATED+CLOUD"));
    assert!(log.outcome.jobs_left.is_empty());
}

#[test]
fn max_powered_nodes_holds_jobs_and_refuses_power_up() {
    let log = replay(
        &format!("SlurmctldParameters=max_powered_nodes=1\n{CLOUD3}"),
        r#"{"id": 1, "submit": 5, "run_time": 500}
{"id": 2, "submit": 20, "run_time": 5}
{"at": 30, "action": "update", "nodes": "c3", "state": "POWER_UP"}"#,
        Boot::After(10),
    );
    assert_eq!(log.job(2, 25)["reason"], "MaxPoweredUpNodes");
    assert!(
        log.errors().iter().any(|e| e.contains("max_powered_nodes")),
        "{:?}",
        log.errors()
    );
}

#[test]
fn power_down_asap_drains_a_busy_node_then_powers_it_down_idle() {
    let log = replay(
        CLOUD3,
        r#"{"id": 1, "submit": 5, "run_time": 50}
{"at": 30, "action": "update", "nodes": "c1", "state": "POWER_DOWN_ASAP"}
{"id": 2, "submit": 31, "run_time": 5, "nodes": 1}"#,
        Boot::After(10),
    );
    assert_eq!(
        log.state("c1", 30),
        ("ALLOCATED+CLOUD+DRAIN+POWER_DOWN", "drng!")
    );
    assert_eq!(log.node("c1", 30)["reason"], "POWER_DOWN_ASAP");
    let end = log.job_first(1, "COMPLETED").unwrap();
    let s = log.calls("suspend");
    assert!(
        s[0].0 >= end && s[0].0 <= end + 11 && s[0].1 == "c1",
        "{s:?}"
    );
    assert_eq!(
        log.call("suspend", 0)["reasons"][0],
        "POWER_DOWN_ASAP requested"
    );
    let final_state = log.state("c1", log.outcome.end);
    assert_eq!(final_state, ("IDLE+CLOUD+POWERED_DOWN", "idle~"));
    // Job 2 went to another node while c1 drained.
    assert!(log.state("c2", 31).0.starts_with("ALLOCATED"));
}

#[test]
fn power_down_force_requeues_the_running_job_and_powers_down_now() {
    let log = replay(
        CLOUD3,
        r#"{"id": 1, "submit": 5, "run_time": 500}
{"at": 30, "action": "update", "nodes": "c1", "state": "POWER_DOWN_FORCE"}"#,
        Boot::After(10),
    );
    assert_eq!(log.job(1, 30)["restarts"], 1);
    assert!(
        log.calls("suspend")
            .iter()
            .any(|c| c == &(30, "c1".to_string()))
    );
}

#[test]
fn power_down_on_idle_powers_nodes_down_when_their_job_ends_not_after_suspend_time() {
    let log = replay(
        "SuspendTime=1000\nSuspendTimeout=10\nNodeName=n[1-2] CPUs=1\n\
         PartitionName=p Nodes=n[1-2] Default=YES PowerDownOnIdle=YES\n",
        &jobs(&[(1, 5, 20)]),
        Boot::Manual,
    );
    assert_eq!(log.state("n1", 10), ("ALLOCATED+POWER_DOWN", "alloc!"));
    let end = log.job_first(1, "COMPLETED").unwrap();
    let s = log.calls("suspend");
    assert!(
        s[0].0 >= end && s[0].0 <= end + 11 && s[0].1 == "n1",
        "{s:?}"
    );
    assert_eq!(log.call("suspend", 0)["reasons"][0], "PowerDownOnIdle");
}

#[test]
fn repeated_power_up_resumes_again_and_power_up_on_a_powering_down_node_is_ignored() {
    let log = replay(
        CLOUD3,
        r#"{"at": 5, "action": "update", "nodes": "c1", "state": "POWER_UP"}
{"at": 30, "action": "update", "nodes": "c1", "state": "POWER_UP"}
{"at": 50, "action": "register", "nodes": "c1"}
{"at": 60, "action": "update", "nodes": "c1", "state": "POWER_DOWN"}
{"at": 62, "action": "update", "nodes": "c1", "state": "POWER_UP"}"#,
        Boot::Manual,
    );
    let r = log.calls("resume");
    // Q6: the second POWER_UP runs ResumeProgram again.
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r[1].0 >= 30 && r[1].0 <= 41);
    // Q7: the POWER_UP at 62 does nothing; the node powers down.
    assert_eq!(log.state("c1", 62).0, "IDLE+CLOUD+POWERING_DOWN");
    assert_eq!(
        log.state("c1", log.outcome.end).0,
        "IDLE+CLOUD+POWERED_DOWN"
    );
}

#[test]
fn repeated_power_down_on_a_powered_down_node_runs_suspend_again() {
    let log = replay(
        CLOUD3,
        r#"{"at": 5, "action": "update", "nodes": "c2", "state": "POWER_DOWN"}"#,
        Boot::Manual,
    );
    assert_eq!(log.calls("suspend"), [(5, "c2".to_string())]);
}

#[test]
fn refused_actions_are_logged_and_the_replay_goes_on() {
    let log = replay(
        CLOUD3,
        r#"{"at": 5, "action": "update", "nodes": "c1", "state": "DOWN"}
{"at": 6, "action": "update", "nodes": "c9", "state": "RESUME"}
{"at": 7, "action": "update", "nodes": "c1", "state": "REBOOT"}
{"at": 8, "action": "cancel", "job": 42}
{"id": 1, "submit": 9, "run_time": 5}"#,
        Boot::After(5),
    );
    let errors = log.errors();
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(errors[0].contains("reason"));
    assert!(errors[1].contains("c9"));
    assert!(errors[2].contains("REBOOT"));
    assert!(errors[3].contains("42"));
    assert_eq!(log.job_first(1, "COMPLETED"), Some(9 + 5 + 5));
}

#[test]
fn a_boot_time_brings_resumed_nodes_up_that_many_seconds_later() {
    let log = replay(CLOUD3, &jobs(&[(1, 5, 5)]), Boot::After(42));
    let resumed = log.calls("resume")[0].0;
    assert_eq!(log.job_first(1, "RUNNING"), Some(resumed + 42));
}

#[test]
fn power_accounting_adds_up_node_hours_boots_boot_delay_and_energy() {
    let text = r#"
[power]
SuspendTime = 10
SuspendTimeout = 10
ResumeTimeout = 60
SuspendProgram = "/rec/suspend"
ResumeProgram = "/rec/resume"
idle_on_node_suspend = true

[power.Watts]
Busy = 100.0
Idle = 50.0
Booting = 80.0
PoweringDown = 30.0
Off = 2.0

[[nodes]]
NodeName = "node1"
CPUs = 1
State = "CLOUD"

[[partitions]]
PartitionName = "cloud1"
Nodes = "node1"
Default = true
"#;
    let cluster = sluice_cluster::Cluster::from_toml(Source::new("c.toml", text), None).unwrap();
    let policies = Policies {
        priority: Box::new(Basic::from_settings(&Settings::default())),
        selection: Box::new(ConsTres::from_settings(&Settings::default())),
        hres: None,
        gres: Vec::new(),
    };
    let scenario = Scenario::read(jobs(&[(1, 5, 5)]).as_bytes(), "w.jsonl").unwrap();
    let (outcome, out) =
        run_scenario(cluster, policies, scenario, Boot::After(25), Vec::new()).unwrap();
    let log = Log {
        records: String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        outcome: outcome.clone(),
    };
    let resumed = log.calls("resume")[0].0;
    let running = log.job_first(1, "RUNNING").unwrap();
    let done = log.job_first(1, "COMPLETED").unwrap();
    let suspended = log.calls("suspend")[0].0;
    let end = outcome.end;
    let p = &outcome.power;
    let h = |s: i64| s as f64 / 3600.0;
    assert_eq!(p.booting_node_h, h(running - resumed));
    assert_eq!(p.busy_node_h, h(done - running));
    assert_eq!(p.idle_node_h, h(suspended - done));
    assert_eq!(p.powering_down_node_h, h(end - suspended));
    assert_eq!(p.off_node_h, h(resumed));
    assert_eq!((p.boots, p.suspends, p.jobs_started), (1, 1, 1));
    assert_eq!(p.boot_delay_s, running - resumed);
    assert_eq!(p.avg_wait_s, (running - 5) as f64);
    let wh = h(running - resumed) * 80.0
        + h(done - running) * 100.0
        + h(suspended - done) * 50.0
        + h(end - suspended) * 30.0
        + h(resumed) * 2.0;
    assert!((p.energy_kwh.unwrap() - wh / 1000.0).abs() < 1e-12);
    // One node: the most it drew is its busiest state's watts.
    assert_eq!(p.peak_kw, Some(0.1));
    assert_eq!(p.requeues, 0);
}

#[test]
fn the_guides_hybrid_cluster_bursts_to_cloud_nodes_and_keeps_local_ones_up() {
    // The Cloud Scheduling Guide's example configuration, as the cluster crate's import test
    // reads it: tux[0-127] local and excluded, ec[0-127] CLOUD.
    let conf = include_str!("../../cluster/tests/fixtures/cloud_slurm.conf");
    let log = replay(
        conf,
        r#"{"id": 1, "submit": 10, "run_time": 100, "partition": "batch", "nodes": 130, "tasks": 130}"#,
        Boot::After(60),
    );
    let resumes = log.calls("resume");
    assert_eq!(resumes, [(10, "ec[0-1]".to_string())]);
    assert_eq!(log.job_first(1, "RUNNING"), Some(70));
    assert_eq!(log.job_first(1, "COMPLETED"), Some(170));
    let suspends = log.calls("suspend");
    assert_eq!(suspends.len(), 1, "{suspends:?}");
    assert_eq!(suspends[0].1, "ec[0-1]");
    assert!(first_pass_after(770, suspends[0].0), "{suspends:?}");
    assert_eq!(log.state("tux5", log.outcome.end), ("IDLE", "idle"));
    assert_eq!(
        log.state("ec0", log.outcome.end),
        ("IDLE+CLOUD+POWERED_DOWN", "idle~")
    );
    assert_eq!(log.state("ec2", 100), ("IDLE+CLOUD+POWERED_DOWN", "idle~"));
}

#[test]
fn a_trace_replay_on_cloud_nodes_boots_them_at_once_completes_every_job_and_powers_them_down() {
    use sluice_sim::scheduler::{EngineOptions, EngineScheduler};
    use sluice_sim::{MemoryWorkload, ReplayConfig, ReplayScheduler, RuntimeMode, replay};

    let text = format!("{COMMON}{CLOUD3}");
    let cluster = import_slurm_conf(Source::new("slurm.conf", &text), None, None, None)
        .unwrap()
        .cluster;
    let policies = Policies {
        priority: Box::new(Basic::from_settings(&Settings::default())),
        selection: Box::new(ConsTres::from_settings(&Settings::default())),
        hres: None,
        gres: Vec::new(),
    };
    let options = EngineOptions::for_cluster("slurm", &cluster);
    let mut scheduler = EngineScheduler::new(cluster, policies, options);
    let jobs = Scenario::read(
        jobs(&[(1, 0, 50), (2, 10, 50), (3, 500, 20)]).as_bytes(),
        "w.jsonl",
    )
    .unwrap()
    .jobs;
    let mut source = MemoryWorkload::new(&jobs, 0, None);
    let config = ReplayConfig {
        procs: 3,
        runtime: RuntimeMode::KillAtLimit,
        keep_records: true,
    };
    let output = replay(&mut source, &mut scheduler, &config, ()).unwrap();
    assert_eq!(output.metrics.jobs, 3);
    let starts: Vec<i64> = output.records.iter().map(|r| r.start).collect();
    assert_eq!(starts.len(), 3);
    assert!(starts.contains(&0) && starts.contains(&10) && starts.contains(&500));
    // SuspendTime 100 after the last job ended at 520, then SuspendTimeout: all powered down.
    let engine = scheduler.engine().unwrap();
    for n in 0..3 {
        let id = sluice_cluster::NodeId(n);
        assert_eq!(engine.node_sinfo_state(id), "idle~", "node {n}");
    }
    assert!(!engine.power_pending());
    assert_eq!(scheduler.queued(), 0);
}
