//! Power saving in the live daemon with real shell programs and timers of seconds: a cloud
//! node's whole cycle (allocated → ResumeProgram with the hostlist and SLURM_RESUME_FILE →
//! `sluice register` → the job runs → idle → SuspendTime → SuspendProgram → powered down), a
//! ResumeTimeout that requeues the job across a `kill -9` of the daemon, and POWER_DOWN_ASAP
//! on a busy node with the demo site's example programs.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::*;
use sluice_api::Job;
use sluice_client::Client;

/// A program that appends its name, argument count, arguments and resume file to `log`.
fn recorder(name: &str, log: &Path) -> String {
    format!(
        "#!/bin/sh\necho \"{name} $# $1 $(cat \"${{SLURM_RESUME_FILE:-/dev/null}}\")\" >> {}\n",
        log.display()
    )
}

/// Writes an executable program into `dir`.
fn program(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A cluster of two CLOUD nodes with the given programs and short timers.
fn cluster(dir: &Path, resume: &Path, suspend: &Path, fail: &Path, resume_timeout: u64) -> PathBuf {
    let text = format!(
        "ClusterName = \"power\"\nAccountingStorageEnforce = []\n\
         [power]\nSuspendTime = 3\nSuspendTimeout = 2\nResumeTimeout = {resume_timeout}\n\
         power_save_interval = 1\nResumeProgram = \"{}\"\nSuspendProgram = \"{}\"\n\
         ResumeFailProgram = \"{}\"\n\
         [[nodes]]\nNodeName = \"cloud[1-2]\"\nCPUs = 1\nState = \"CLOUD\"\n\
         [[partitions]]\nPartitionName = \"cloud\"\nNodes = \"ALL\"\nDefault = true\n",
        resume.display(),
        suspend.display(),
        fail.display()
    );
    let p = dir.join("cluster.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// The programs' calls so far, one line each.
fn calls(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The first call starting with `prefix`, waiting for it.
fn wait_call(log: &Path, prefix: &str) -> String {
    poll(40, &format!("a call `{prefix}`"), || {
        calls(log).into_iter().find(|l| l.starts_with(prefix))
    })
}

/// What a command printed; fails with its stderr if it failed.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = sluice(dir, args);
    assert!(
        out.status.success(),
        "sluice {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a failing command said.
fn refused(dir: &Path, args: &[&str]) -> String {
    let out = sluice(dir, args);
    assert!(!out.status.success(), "sluice {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `sluice show node NAME`, once it holds every piece of `wanted`.
fn wait_node(dir: &Path, node: &str, wanted: &[&str]) -> String {
    poll(40, &format!("{node} showing {wanted:?}"), || {
        let shown = ok(dir, &["show", "node", node]);
        wanted.iter().all(|w| shown.contains(w)).then_some(shown)
    })
}

/// `sluice info`'s line for partition cloud's nodes in sinfo state `state`, once there is one.
fn wait_info(dir: &Path, state: &str, nodes: &str) -> String {
    poll(40, &format!("sinfo {state} {nodes}"), || {
        let text = ok(dir, &["info"]);
        text.lines()
            .find(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.contains(&state) && w.last() == Some(&nodes)
            })
            .map(str::to_string)
    })
}

fn submit(dir: &Path, cmd: &str) -> u64 {
    ok(
        dir,
        &["submit", "--parsable", "-o", "/dev/null", "--wrap", cmd],
    )
    .trim()
    .parse()
    .unwrap()
}

fn job(dir: &Path, id: u64) -> Job {
    Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap()
}

#[test]
fn a_cloud_node_boots_for_a_job_registers_runs_it_and_is_suspended_when_idle() {
    let scratch = state_dir("power-cycle");
    let dir = scratch.path();
    let log = dir.join("calls.log");
    let resume = program(dir, "resume.sh", &recorder("resume", &log));
    let suspend = program(dir, "suspend.sh", &recorder("suspend", &log));
    let fail = program(dir, "fail.sh", &recorder("resume_fail", &log));
    let conf = cluster(dir, &resume, &suspend, &fail, 60);
    let power_log = dir.join("power.jsonl");
    std::fs::write(
        dir.join("daemon.toml"),
        format!("power_log = \"{}\"\n", power_log.display()),
    )
    .unwrap();
    let _d = Daemon::start_with(dir, &["--config", conf.to_str().unwrap()]);

    let shown = ok(dir, &["show", "node", "cloud1"]);
    assert!(shown.contains("State=IDLE+CLOUD+POWERED_DOWN"), "{shown}");
    assert!(shown.contains("LastBusyTime=Unknown"), "{shown}");
    wait_info(dir, "idle~", "cloud[1-2]");

    let id = submit(dir, "sleep 2");
    // ResumeProgram: one argument, the hostlist; SLURM_RESUME_FILE names the job.
    let call = wait_call(&log, "resume ");
    let rest = call.strip_prefix("resume 1 cloud1 ").expect(&call);
    let file: serde_json::Value = serde_json::from_str(rest).unwrap();
    assert_eq!(file["all_nodes_resume"], "cloud1");
    assert_eq!(file["jobs"][0]["job_id"], id);
    assert_eq!(file["jobs"][0]["nodes_alloc"], "cloud1");
    assert_eq!(file["jobs"][0]["nodes_resume"], "cloud1");
    // Until it registers the node boots and the job configures.
    assert_eq!(job(dir, id).state, "CONFIGURING");
    wait_node(
        dir,
        "cloud1",
        &["State=ALLOCATED+CLOUD+NOT_RESPONDING+POWERING_UP"],
    );
    wait_info(dir, "alloc#", "cloud1");

    ok(dir, &["register", "cloud1", "NodeAddr=127.0.0.1"]);
    wait_for(dir, id, &["RUNNING", "COMPLETED"], 30);
    let done = wait_for(dir, id, &["COMPLETED"], 30);
    assert_eq!(done.exit_code, Some(0));

    // Idle for SuspendTime: SuspendProgram, POWERING_DOWN for SuspendTimeout, then off.
    let call = wait_call(&log, "suspend ");
    assert_eq!(call.trim_end(), "suspend 1 cloud1");
    let shown = wait_node(dir, "cloud1", &["State=IDLE+CLOUD+POWERED_DOWN"]);
    assert!(shown.contains("NodeAddr=127.0.0.1"), "{shown}");
    assert!(shown.contains("LastBusyTime=Unknown"), "{shown}");
    assert!(shown.contains("PowerReason=powered down"), "{shown}");
    wait_info(dir, "idle~", "cloud[1-2]");
    let all = calls(&log);
    assert_eq!(all.len(), 2, "one resume, one suspend: {all:?}");

    // The same JSON lines as `sluice sim --log`: cloud1's states in order, and the calls.
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&power_log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let states: Vec<&str> = records
        .iter()
        .filter(|r| r["node"] == "cloud1")
        .filter_map(|r| r["sinfo"].as_str())
        .collect();
    let at = |s: &str| states.iter().position(|x| *x == s).expect(s);
    assert_eq!(states[0], "idle~", "{states:?}");
    assert!(
        at("alloc#") < at("alloc") && at("alloc") < at("idle%"),
        "{states:?}"
    );
    assert_eq!(states.last(), Some(&"idle~"), "{states:?}");
    let programs: Vec<(&str, &serde_json::Value)> = records
        .iter()
        .filter_map(|r| Some((r["program"].as_str()?, &r["argv"])))
        .collect();
    assert_eq!(programs.len(), 2, "{programs:?}");
    assert_eq!(programs[0].0, "resume");
    assert_eq!(programs[0].1, &serde_json::json!(["cloud1"]));
    assert_eq!(programs[1].0, "suspend");
    // And the job's states, by its public id: configuring while its node boots, then done.
    let job_states: Vec<&str> = records
        .iter()
        .filter(|r| r["job"] == id)
        .filter_map(|r| r["state"].as_str())
        .collect();
    let at = |s: &str| job_states.iter().position(|x| *x == s).expect(s);
    assert!(
        at("CONFIGURING") < at("COMPLETED"),
        "the job's records: {job_states:?}"
    );
    assert_eq!(
        job_states.iter().filter(|s| **s == "COMPLETED").count(),
        1,
        "an ended job is logged once: {job_states:?}"
    );
    end_jobs(dir);
}

#[test]
fn a_node_that_never_registers_times_out_across_a_kill_9_and_its_job_is_requeued() {
    let scratch = state_dir("power-timeout");
    let dir = scratch.path();
    let log = dir.join("calls.log");
    let resume = program(dir, "resume.sh", &recorder("resume", &log));
    let suspend = program(dir, "suspend.sh", &recorder("suspend", &log));
    let fail = program(dir, "fail.sh", &recorder("resume_fail", &log));
    let conf = cluster(dir, &resume, &suspend, &fail, 15);
    let args = ["--config", conf.to_str().unwrap()];
    let d = Daemon::start_with(dir, &args);

    let id = submit(dir, "true");
    wait_call(&log, "resume 1 cloud1 ");
    wait_for(dir, id, &["CONFIGURING"], 10);
    // The daemon dies while the node boots; what it journaled brings the boot back.
    d.kill9();
    let d = Daemon::start_with(dir, &args);
    let j = job(dir, id);
    assert_eq!((j.state.as_str(), j.restarts), ("CONFIGURING", 0));
    let shown = ok(dir, &["show", "node", "cloud1"]);
    assert!(
        shown.contains("POWERING_UP") || shown.contains("ResumeTimeout reached"),
        "{shown}"
    );

    // ResumeTimeout from the first request: DOWN, ResumeFailProgram, the job requeued.
    let shown = wait_node(
        dir,
        "cloud1",
        &[
            "State=DOWN+CLOUD+POWERED_DOWN",
            "Reason=ResumeTimeout reached",
        ],
    );
    assert!(shown.contains("LastBusyTime=Unknown"), "{shown}");
    assert_eq!(
        wait_call(&log, "resume_fail ").trim_end(),
        "resume_fail 1 cloud1"
    );
    let j = poll(20, "the job requeued", || {
        let j = job(dir, id);
        (j.state == "PENDING" && j.restarts == 1).then_some(j)
    });
    assert_eq!(j.reason, "BeginTime");
    // A second kill -9: the requeued job keeps its 121-second wait.
    d.kill9();
    let d = Daemon::start_with(dir, &args);
    let j = job(dir, id);
    assert_eq!((j.state.as_str(), j.restarts), ("PENDING", 1));
    assert_eq!(j.reason, "BeginTime");
    // Once only: the restart ran no program again.
    assert_eq!(
        calls(&log)
            .iter()
            .filter(|l| l.starts_with("resume "))
            .count(),
        1,
        "{:?}",
        calls(&log)
    );
    wait_info(dir, "down~", "cloud1");

    // RESUME: a powered-down DOWN node is available again at once, still off.
    ok(dir, &["update", "NodeName=cloud1", "State=RESUME"]);
    wait_node(dir, "cloud1", &["State=IDLE+CLOUD+POWERED_DOWN"]);
    ok(dir, &["cancel", &id.to_string()]);
    drop(d);
    end_jobs(dir);
}

/// The demo site's example program `name`, with a short boot and its calls in `log`.
fn example(dir: &Path, name: &str, log: &Path) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../cluster/src/demo/power-programs")
            .join(name),
    )
    .unwrap()
    .replace("BOOT_DELAY=10", "BOOT_DELAY=1")
    .replace("LOG=/dev/null", &format!("LOG={}", log.display()));
    program(dir, name, &text)
}

#[test]
fn power_down_asap_drains_a_busy_node_and_powers_it_down_after_its_job() {
    let scratch = state_dir("power-asap");
    let dir = scratch.path();
    let log = dir.join("calls.log");
    let resume = example(dir, "resume.sh", &log);
    let suspend = example(dir, "suspend.sh", &log);
    let fail = program(dir, "fail.sh", &recorder("resume_fail", &log));
    let conf = cluster(dir, &resume, &suspend, &fail, 60);
    let _d = Daemon::start_with(dir, &["--config", conf.to_str().unwrap()]);

    // Only root and the daemon's user register nodes; unknown nodes are named.
    assert!(refused(dir, &["register", "nosuch"]).contains("node nosuch not found"));
    if let Some(user) = unprivileged::TestUser::create("pw") {
        let out = user.sluice(dir, &["register", "cloud2"]);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("may not register nodes"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = user.sluice(dir, &["update", "NodeName=cloud2", "State=POWER_UP"]);
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not an admin"));
    }
    // RESUME on a node that is neither drained, down nor powering down: scontrol's refusal.
    assert!(
        refused(dir, &["update", "NodeName=cloud2", "State=RESUME"])
            .contains("invalid node state transition")
    );

    // A reason is kept per node: a bounded one.
    let long = format!("Reason={}", "x".repeat(2000));
    assert!(
        refused(
            dir,
            &["update", "NodeName=cloud2", "State=POWER_DOWN", &long]
        )
        .contains("at most 1024")
    );

    // The example ResumeProgram registers the node a second after it is called.
    let id = submit(dir, "sleep 4");
    wait_for(dir, id, &["RUNNING"], 30);
    assert!(
        calls(&log).iter().any(|l| l.contains("resume cloud1 {")),
        "{:?}",
        calls(&log)
    );
    wait_node(
        dir,
        "cloud1",
        &["NodeHostName=cloud1", "State=ALLOCATED+CLOUD"],
    );

    ok(dir, &["update", "node", "cloud1", "State=POWER_DOWN_ASAP"]);
    let shown = ok(dir, &["show", "node", "cloud1"]);
    assert!(
        shown.contains("State=ALLOCATED+CLOUD+DRAIN+POWER_DOWN"),
        "{shown}"
    );
    assert!(
        shown.contains("PowerReason=POWER_DOWN_ASAP requested"),
        "{shown}"
    );
    wait_info(dir, "drng!", "cloud1");
    assert!(!calls(&log).iter().any(|l| l.contains("suspend")));

    // After its job the node powers down at once (not SuspendTime later), its DRAIN gone.
    wait_for(dir, id, &["COMPLETED"], 30);
    let call = poll(30, "the suspend call", || {
        calls(&log).into_iter().find(|l| l.contains(" suspend "))
    });
    assert!(call.ends_with("suspend cloud1"), "{call}");
    wait_node(dir, "cloud1", &["State=IDLE+CLOUD+POWERED_DOWN"]);
    wait_info(dir, "idle~", "cloud[1-2]");
    end_jobs(dir);
}
