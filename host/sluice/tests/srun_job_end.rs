//! srun outside an allocation, when its job ends under its tasks (the time limit, scancel):
//! srun ends the tasks (SIGTERM, then SIGKILL after the cluster's KillWait), prints Slurm's
//! messages and exits non-zero, against the real daemon.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{BIN, Daemon, all_jobs, end_jobs, sluice, state_dir, wait_for};

/// `sluice srun ARGS…` in the background, outside any allocation; its output is piped.
fn srun(dir: &Path, args: &[&str]) -> Child {
    Command::new(BIN)
        .arg("srun")
        .args(args)
        .current_dir(dir)
        .env("SLUICE_STATE_DIR", dir)
        .env_remove("SLURM_JOB_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The first `n` lines srun's tasks print: their process ids.
fn task_pids(child: &mut Child, n: usize) -> Vec<i32> {
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    (0..n)
        .map(|_| {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            line.trim().parse().unwrap_or_else(|_| panic!("{line:?}"))
        })
        .collect()
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits `secs` at most for srun to exit; if it does not, kills it and its tasks and fails.
fn exit_of(child: &mut Child, pids: &[i32], secs: u64, what: &str) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let outlived: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
            for p in &outlived {
                // SAFETY: signalling processes this test's srun started.
                unsafe { libc::kill(*p, libc::SIGKILL) };
            }
            panic!("srun did not end {what}; tasks still running: {outlived:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_job_ending_under_srun_ends_its_tasks_with_slurms_messages() {
    let scratch = state_dir("srun-end");
    let dir = scratch.path();
    std::fs::write(dir.join("daemon.toml"), "kill_wait = 2\n").unwrap();
    let _d = Daemon::start(dir);

    // A one-minute limit; task 1 ignores SIGTERM, so only SIGKILL after KillWait ends it.
    let started = Instant::now();
    let mut child = srun(
        dir,
        &[
            "-t",
            "1",
            "-n",
            "2",
            "sh",
            "-c",
            "echo $$; if [ $SLURM_PROCID = 1 ]; then trap '' TERM; fi; exec sleep 300",
        ],
    );
    let pids = task_pids(&mut child, 2);
    let (code, err) = exit_of(&mut child, &pids, 120, "at its job's time limit");
    assert!(started.elapsed() >= Duration::from_secs(60), "{err}");
    assert!(pids.iter().all(|p| !alive(*p)), "{pids:?}");
    // The highest of SIGTERM's 143 and SIGKILL's 137.
    assert_eq!(code, 143, "{err}");
    let job = all_jobs(dir).into_iter().next().unwrap();
    let job = wait_for(dir, job.job_id, &["TIMEOUT"], 30);
    assert!(
        err.contains("srun: Job step aborted: Waiting up to 4 seconds for job step to finish.\n"),
        "{err}"
    );
    let stepd = err
        .lines()
        .find(|l| l.starts_with("slurmstepd: error: *** STEP"))
        .unwrap_or_else(|| panic!("{err}"));
    let head = format!(
        "slurmstepd: error: *** STEP {}.0 ON {} CANCELLED AT ",
        job.job_id, job.nodelist
    );
    assert!(stepd.starts_with(&head), "{stepd}");
    assert!(stepd.ends_with(" DUE TO TIME LIMIT ***"), "{stepd}");
    // The time between is the moment, as Slurm prints it (2026-11-26T14:00:00).
    let at = &stepd[head.len()..stepd.len() - " DUE TO TIME LIMIT ***".len()];
    assert_eq!((at.len(), &at[10..11]), (19, "T"), "{stepd}");

    // scancel: the job's cancellation ends the tasks too.
    let mut child = srun(dir, &["sh", "-c", "echo $$; exec sleep 300"]);
    let pids = task_pids(&mut child, 1);
    let running = common::poll(30, "a running allocation", || {
        all_jobs(dir)
            .into_iter()
            .find(|j| j.job_id != job.job_id && j.state == "RUNNING")
    });
    let out = sluice(dir, &["cancel", &running.job_id.to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, err) = exit_of(&mut child, &pids, 30, "when its job was cancelled");
    assert_eq!(code, 143, "{err}");
    assert!(!alive(pids[0]));
    let stepd = err
        .lines()
        .find(|l| l.starts_with("slurmstepd: error: *** STEP"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(stepd.ends_with(" DUE to SIGNAL Terminated ***"), "{stepd}");
    end_jobs(dir);
}
