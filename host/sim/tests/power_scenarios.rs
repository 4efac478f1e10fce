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
            .filter(|r| r["node"] == node && r["t"].as_i64().unwrap() <= t)
            .last()
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
            .filter(|r| {
                r["node"] == node
                    && r["t"].as_i64().unwrap() <= t
                    && r.as_object().unwrap().contains_key("last_busy")
            })
            .last()
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
            .filter(|r| r["job"] == id && r["t"].as_i64().unwrap() <= t)
            .last()
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

/// S4 as written needs the node still up at 40. Under S1's SuspendTime=10 the registration at
/// 20 sets LastBusyTime (§1.8), so the node is suspended at P>30, before the POWER_DOWN, which
/// is then ignored (§1.13 step 2): this test shows that reading, and the next one runs S4 with
/// SuspendTime=60 so that its POWER_DOWN is what powers the node down.
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

#[test]
fn s4_manual_power_up_and_power_down() {
    let log = replay(
        &S1.replace("SuspendTime=10", "SuspendTime=60"),
        S4_EVENTS,
        Boot::Manual,
    );
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
        log.states_at("node1", 40)
            .contains(&("IDLE+CLOUD+POWER_DOWN", "idle!"))
    );
    let down = log.calls("suspend");
    assert!((40..=51).contains(&down[0].0), "{down:?}");
    // The job submitted at 41 does not start on node1 while it powers down.
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
