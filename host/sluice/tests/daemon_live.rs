//! The real daemon binary: kill -9 while a client submits, jobs with Slurm's environment and
//! time limits, peer-credential authorization, hot swap under load.

use std::process::Command;
use std::time::{Duration, Instant};

use sluice_api::{
    Job, JobCancelled, JobSubmitted, Metrics, PluginFile, Plugins, Reconfigured, Role, Swapped,
};
use sluice_client::Client;

mod common;

use common::{BIN, Daemon, all_jobs, state_dir, wait_for, wrap};

#[test]
fn kill_9_while_submitting_loses_no_acknowledged_job() {
    let scratch = state_dir("crash");
    let dir = scratch.path();
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut acked: Vec<(String, u64)> = Vec::new();
    let mut unacked: Vec<String> = Vec::new();
    let mut n = 0;
    for round in 0..6 {
        let daemon = Daemon::start(&dir);
        let mut c = Client::new(&dir);
        // Kill from another thread, mid-stream, once a random number of submissions were
        // acknowledged (a count, not a time: a loaded machine acknowledges fewer per second).
        let budget = 40 + next() % 60;
        let kill_at = (20 + next() % 20) as usize;
        let (go, signal) = std::sync::mpsc::channel::<()>();
        let killer = std::thread::spawn(move || {
            // Also when the round ends first (the sender is dropped).
            let _ = signal.recv();
            daemon.kill9();
        });
        let mut go = Some(go);
        let acked_before = acked.len();
        for _ in 0..budget {
            n += 1;
            let name = format!("crash-{n}");
            let cmd = if n % 3 == 0 { "sleep 100" } else { "true" };
            match c.post::<_, JobSubmitted>("/v1/jobs", &wrap(&name, cmd, &dir)) {
                Ok(v) => acked.push((name, v.job_id)),
                Err(_) => {
                    unacked.push(name);
                    break;
                }
            }
            if acked.len() - acked_before >= kill_at
                && let Some(go) = go.take()
            {
                let _ = go.send(());
            }
        }
        drop(go);
        killer.join().unwrap();
        let _ = round;
    }
    let daemon = Daemon::start(&dir);
    let jobs = all_jobs(&dir);
    // Their supervisors outlive the daemon; the test ends its `sleep 100`s itself.
    drop(daemon);
    common::end_jobs(dir);
    assert!(acked.len() >= 100, "only {} acknowledged", acked.len());
    for (name, id) in &acked {
        let same: Vec<&Job> = jobs.iter().filter(|j| j.name == *name).collect();
        assert_eq!(same.len(), 1, "{name} appears {} times", same.len());
        assert_eq!(same[0].job_id, *id, "{name} changed id");
    }
    for name in &unacked {
        let count = jobs.iter().filter(|j| j.name == *name).count();
        assert!(count <= 1, "unacknowledged {name} appears {count} times");
    }
    let mut ids: Vec<u64> = jobs.iter().map(|j| j.job_id).collect();
    ids.sort();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "duplicate job ids");
    for j in &jobs {
        let state = j.state.as_str();
        // Consistency: a running job has nodes, an ended one an end time, a pending one neither.
        match state {
            "RUNNING" => assert!(!j.nodelist.is_empty(), "{j:?}"),
            "PENDING" => assert!(j.end_time.is_none(), "{j:?}"),
            _ => assert!(j.end_time.is_some(), "{j:?}"),
        }
        // Supervisors outlive the daemon: a crash runs no job twice, so none was requeued.
        assert_eq!(j.restarts, 0, "{j:?}");
    }
}

#[test]
fn a_batch_script_runs_with_slurm_environment_and_its_limit_is_enforced() {
    let scratch = state_dir("exec");
    let dir = scratch.path();
    let _d = Daemon::start(&dir);
    let mut c = Client::new(&dir);
    let script = "echo id=$SLURM_JOB_ID name=$SLURM_JOB_NAME nodes=$SLURM_JOB_NODELIST nn=$SLURM_NNODES nt=$SLURM_NTASKS cpt=$SLURM_CPUS_PER_TASK part=$SLURM_JOB_PARTITION dir=$SLURM_SUBMIT_DIR\necho err >&2\nexit 3";
    let mut req = wrap("envcheck", script, &dir);
    req.ntasks = Some(2);
    req.cpus_per_task = Some(2);
    let id = c.post::<_, JobSubmitted>("/v1/jobs", &req).unwrap().job_id;
    let j = wait_for(&dir, id, &["FAILED"], 30);
    assert_eq!(j.exit_code, Some(3));
    let out = std::fs::read_to_string(dir.join(format!("slurm-{id}.out"))).unwrap();
    let node = &j.nodelist;
    assert!(
        out.contains(&format!(
            "id={id} name=envcheck nodes={node} nn=1 nt=2 cpt=2 part=compute dir={}",
            dir.display()
        )),
        "{out}"
    );
    assert!(out.contains("err"), "stderr goes to the same file: {out}");

    // Over its one-minute limit; SIGTERM is ignored, so SIGKILL after KillWait ends it.
    std::fs::write(dir.join("daemon.toml"), "kill_wait = 1\n").unwrap();
    c.post_empty::<Reconfigured>("/v1/reconfigure").unwrap();
    let mut req = wrap("overrun", "trap '' TERM; sleep 300", &dir);
    req.time_limit = Some(60);
    req.output = Some("out-%j.txt".into());
    let id = c.post::<_, JobSubmitted>("/v1/jobs", &req).unwrap().job_id;
    let j = wait_for(&dir, id, &["TIMEOUT"], 100);
    assert_eq!(j.reason, "TimeLimit");
    // The process is gone: its exit by SIGKILL was recorded.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let j: Job = c.get(&format!("/v1/jobs/{id}")).unwrap();
        if j.signal == Some(9) {
            break;
        }
        assert!(Instant::now() < deadline, "no SIGKILL recorded: {j:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(dir.join(format!("out-{id}.txt")).exists());
}

#[test]
fn another_uid_cannot_cancel_your_job() {
    if unsafe { libc_geteuid() } != 0 {
        eprintln!("skipped: switching uid needs root");
        return;
    }
    let scratch = state_dir("auth");
    let dir = scratch.path();
    let _d = Daemon::start(&dir);
    // A job of uid 65534 (nobody), submitted through the CLI running as that uid.
    let out = Command::new(BIN)
        .args([
            "submit",
            "--parsable",
            "--export-none",
            // Its output opened as nobody, who may not write in `/` (its working directory).
            "-o",
            "/dev/null",
            "--wrap",
            "sleep 60",
            "--state-dir",
        ])
        .arg(&dir)
        .current_dir("/")
        .env_clear()
        .uid(65534)
        .output()
        .unwrap();
    let nobody_job = common::submitted_id(&out);
    // Root's job, which nobody may not touch.
    let root_job = Client::new(&dir)
        .post::<_, JobSubmitted>("/v1/jobs", &wrap("root-job", "sleep 60", &dir))
        .unwrap()
        .job_id;
    let cancel = |id: u64| {
        Command::new(BIN)
            .args(["cancel", &id.to_string(), "--state-dir"])
            .arg(&dir)
            .current_dir("/")
            .env_clear()
            .uid(65534)
            .output()
            .unwrap()
    };
    let refused = cancel(root_job);
    assert!(!refused.status.success());
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains("access denied") && msg.contains("not an admin"),
        "{msg}"
    );
    assert_ne!(
        Client::new(&dir)
            .get::<Job>(&format!("/v1/jobs/{root_job}"))
            .unwrap()
            .state,
        "CANCELLED"
    );
    // Its own job it may cancel; root (an admin) may cancel anyone's.
    assert!(cancel(nobody_job).status.success());
    wait_for(&dir, nobody_job, &["CANCELLED"], 10);
    Client::new(&dir)
        .post_empty::<JobCancelled>(&format!("/v1/jobs/{root_job}/cancel"))
        .unwrap();
}

unsafe fn libc_geteuid() -> u32 {
    unsafe extern "C" {
        fn geteuid() -> u32;
    }
    unsafe { geteuid() }
}

use std::os::unix::process::CommandExt;

#[test]
fn hot_swap_under_load_loses_no_job_and_refuses_a_broken_candidate() {
    let scratch = state_dir("swap");
    let dir = scratch.path();
    let _d = Daemon::start(&dir);
    let mut c = Client::new(&dir);
    let mut ids = Vec::new();
    let hostile = std::path::Path::new(sluice_plugin_artifacts::test_guest("hostile_priority"));
    for round in 0..6 {
        for i in 0..40 {
            let cmd = if i % 2 == 0 { "true" } else { "sleep 1" };
            let req = wrap(&format!("s{round}-{i}"), cmd, &dir);
            ids.push(c.post::<_, JobSubmitted>("/v1/jobs", &req).unwrap().job_id);
        }
        let plugin = if round % 2 == 0 {
            "basic"
        } else {
            "multifactor"
        };
        let swap = PluginFile {
            file: plugin.into(),
            ..PluginFile::default()
        };
        let v: Swapped = c.post("/v1/plugins/priority/swap", &swap).unwrap();
        assert_eq!(v.kind, "priority");
        if round == 3 {
            let trap = PluginFile {
                file: hostile.to_string_lossy().into_owned(),
                settings: [("mode".to_string(), "trap".to_string())].into(),
            };
            let err = c
                .post::<_, Swapped>("/v1/plugins/priority/swap", &trap)
                .unwrap_err()
                .to_string();
            assert!(err.contains("refused") && err.contains("smoke"), "{err}");
        }
    }
    let plugins: Plugins = c.get("/v1/plugins").unwrap();
    let active: Vec<_> = plugins
        .generations
        .iter()
        .filter(|g| g.kind == "priority" && g.role == Role::Active)
        .collect();
    assert_eq!(active.len(), 1);
    assert!(active[0].origin.contains("multifactor"), "{:?}", active[0]);
    let metrics: Metrics = c.get("/v1/metrics").unwrap();
    assert_eq!(metrics.counters.swaps_published, 6);
    assert_eq!(metrics.counters.swaps_refused, 1);
    assert_eq!(metrics.engine_faults.priority, 0, "a pass saw a bad answer");
    for id in &ids {
        wait_for(&dir, *id, &["COMPLETED"], 120);
    }
}
