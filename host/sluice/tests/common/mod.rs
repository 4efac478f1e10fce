//! Helpers the tests that run the real daemon binary share: state dirs, a daemon child, polling.
// Each test crate uses a different subset of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use sluice_api::{Health, Job, JobQuery, SubmitRequest};
use sluice_client::{Client, jobs_path};
use tempfile::TempDir;

pub mod unprivileged;

/// The `sluice` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_sluice");

/// A fresh state directory for test `name`, removed when the returned guard drops.
pub fn state_dir(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("sluice-live-{name}-"))
        .tempdir()
        .unwrap()
}

/// `sluice ARGS… --state-dir DIR`, run to completion.
pub fn sluice(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--state-dir")
        .arg(dir)
        .output()
        .unwrap()
}

/// The JSON a successful command printed, read as `T` (fails with its stderr otherwise).
pub fn json_of<T: DeserializeOwned>(out: &Output) -> T {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A running `sluice serve`, killed when dropped (its jobs' supervisors outlive it: see
/// [`end_jobs`]).
pub struct Daemon {
    /// The daemon process.
    pub child: Child,
}

impl Daemon {
    /// `sluice serve --state-dir DIR`, once it answers.
    pub fn start(dir: &Path) -> Self {
        Self::start_with(dir, &[])
    }

    /// `sluice serve --state-dir DIR ARGS…` with its log in `DIR/daemon.err`, once it answers.
    pub fn start_with(dir: &Path, args: &[&str]) -> Self {
        let log = std::fs::File::create(dir.join("daemon.err")).unwrap();
        let child = Command::new(BIN)
            .args(["serve", "--state-dir"])
            .arg(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        Self::adopt(child, dir)
    }

    /// A daemon the caller spawned for `dir`, once it answers.
    pub fn adopt(mut child: Child, dir: &Path) -> Self {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if Client::new(dir).get::<Health>("/v1/health").is_ok() {
                return Self { child };
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("daemon exited with {status}: {}", log_of(dir));
            }
            assert!(Instant::now() < deadline, "daemon did not come up");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM (a graceful stop), and wait for it to exit.
    pub fn terminate(mut self) {
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.child.wait().unwrap();
    }

    /// SIGKILL, and reap it.
    pub fn kill9(mut self) {
        self.child.kill().unwrap(); // SIGKILL
        self.child.wait().unwrap();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Kills what is left of the jobs run under state directory `dir`: supervisors outlive their
/// daemon by design, so a test ends its own (by the pids they recorded) rather than leave them.
pub fn end_jobs(dir: &Path) {
    let Ok(jobs) = std::fs::read_dir(dir.join("jobs")) else {
        return;
    };
    for run in jobs
        .flatten()
        .filter_map(|j| std::fs::read_dir(j.path()).ok())
        .flatten()
        .flatten()
    {
        let Ok(bytes) = std::fs::read(run.path().join("pids")) else {
            continue;
        };
        let Ok(pids) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        // The run's directory is its supervisor's lock.
        let Ok(lock) = std::fs::File::open(run.path()) else {
            continue;
        };
        // Whatever happens to the supervisor, its job's cgroup must not outlive the test.
        let _cgroup = JobCgroupGuard(run.path());
        // SAFETY: a try-lock on our descriptor; signals to processes this test's daemon started,
        // only while their supervisor still holds its lock (so the pids are still theirs).
        unsafe {
            use std::os::fd::AsRawFd;
            if libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 {
                continue;
            }
            if let Some(group) = pids["job"].as_i64() {
                libc::kill(-(group as i32), libc::SIGKILL);
            }
            if let Some(supervisor) = pids["supervisor"].as_i64() {
                libc::kill(supervisor as i32, libc::SIGKILL);
            }
        }
    }
}

/// On drop, kills what is in the cgroup of the run in its directory and removes it: a
/// supervisor killed with its daemon leaves its job's cgroup behind, and no daemon restarts here
/// to sweep it.
struct JobCgroupGuard(PathBuf);

impl Drop for JobCgroupGuard {
    fn drop(&mut self) {
        let Ok(bytes) = std::fs::read(self.0.join("job.json")) else {
            return;
        };
        let Ok(job) = serde_json::from_slice::<sluice_daemon::supervisor::spool::JobFile>(&bytes)
        else {
            return;
        };
        if let Some(cg) = job.cgroup {
            cg.kill_all(Duration::from_secs(10));
            let _ = cg.remove();
        }
    }
}

/// The job id a successful `--parsable` submission printed; fails with its stderr otherwise.
pub fn submitted_id(out: &Output) -> u64 {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Runs `cmd` with `stdin` on its standard input, its output captured.
pub fn output_with_stdin(cmd: &mut Command, stdin: &[u8]) -> Output {
    use std::io::Write as _;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Writes `script` to `prog`, executable, and makes it daemon.toml's `mail_prog` in state
/// directory `dir`.
pub fn install_mail_prog(dir: &Path, prog: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(prog, script).unwrap();
    std::fs::set_permissions(prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("daemon.toml"),
        format!("mail_prog = \"{}\"\n", prog.display()),
    )
    .unwrap();
}

/// What the daemon wrote to stderr so far (only for daemons started with `start_with`).
pub fn log_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("daemon.err")).unwrap_or_default()
}

/// A `--wrap`-style submission running `cmd` in `dir`.
pub fn wrap(name: &str, cmd: &str, dir: &Path) -> SubmitRequest {
    SubmitRequest {
        name: Some(name.into()),
        script: format!("#!/bin/sh\n{cmd}\n"),
        workdir: dir.to_string_lossy().into_owned(),
        ..SubmitRequest::default()
    }
}

/// Every job the daemon knows, in any state.
pub fn all_jobs(dir: &Path) -> Vec<Job> {
    let every_state = JobQuery {
        states: Some(JobQuery::ALL_STATES.into()),
        ..JobQuery::default()
    };
    Client::new(dir).get(&jobs_path(&every_state)).unwrap()
}

/// Polls job `id` until it is in one of `states`; fails after `secs`.
pub fn wait_for(dir: &Path, id: u64, states: &[&str], secs: u64) -> Job {
    poll(secs, &format!("job {id} in {states:?}"), || {
        let j: Job = Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap();
        states.contains(&j.state.as_str()).then_some(j)
    })
}

/// Calls `f` every 100 ms until it gives a value; fails naming `what` after `secs`. A bound on
/// waiting, never a timing assertion: a slow machine only waits longer.
pub fn poll<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The spool directory of job `id`'s first run in state directory `dir`.
pub fn run_dir(dir: &Path, id: u64) -> PathBuf {
    dir.join("jobs").join(id.to_string()).join("0")
}
