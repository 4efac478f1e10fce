//! The per-job supervisor, as slurmstepd is to slurmd: a small process the executor's
//! [`spawner`] forks for each job, in its own process group so it outlives the daemon. It drops
//! privileges completely before touching anything of the user's, runs the job in its own
//! process group, ends it at its time limit, and records how it ended durably in the job's spool
//! directory, holding the directory's lock until then so the daemon (this one or a restarted
//! one) can tell a live supervisor from a gone one. The job runs in a cgroup of its own where
//! one is usable ([`crate::cgroup`]), created here as root and removed once every process in it
//! is killed at the job's end, wherever it moved; its OOM kills are recorded. Without one, every
//! process the job starts stays its descendant ([`descendants`]) and is ended with the job,
//! whatever group or session it made.
//!
//! It is single-threaded: signals arrive through a `signalfd`, the child's start-up failure
//! through a pipe, and one `poll` waits for either or for the next deadline.

/// Writes a line to standard error, ignoring failure: the supervisor and the spawner ignore
/// SIGPIPE, so `eprintln!` would panic on a closed stderr, where a lost line costs nothing.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod child;
pub mod descendants;
pub mod inherited;
pub mod spawner;
pub mod spool;
pub mod user;

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cgroup::{BATCH_STEP, JobCgroup};
use spool::{JOB, JobFile, PIDS, Pids, STATUS, Status};

/// Seconds past its time limit before the supervisor itself ends a job: the daemon ends it at
/// the limit; this is for when no daemon is there to do it.
const LIMIT_SLACK: u64 = 5;

/// Supervises the job in spool directory `dir`. `lock_fd` is a descriptor of `dir` itself,
/// locked by the daemon and inherited. Returns the process's exit code.
pub fn run(dir: &Path, lock_fd: RawFd) -> i32 {
    // Its own process group: no signal to the daemon's process group or from its terminal
    // reaches it, and it is not ended with the daemon. It stays in the spawner's session, so
    // where the kernel shares the CPU per session (autogroup), supervisors share the daemon's
    // part instead of each taking as much as the whole daemon; the job gets a session of its
    // own (`child`).
    // SAFETY: plain system call.
    unsafe { libc::setpgid(0, 0) };
    // SAFETY: the daemon handed this descriptor over; from here on it is owned here.
    let lock = unsafe { OwnedFd::from_raw_fd(lock_fd) };
    // The job must not inherit the lock: it could release it and fake the supervisor's death.
    // SAFETY: system calls on an owned descriptor.
    let held = unsafe {
        libc::fcntl(lock.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) == 0
            && libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0
    };
    if !held {
        say!(
            "sluice supervise: {}: the job lock is not held",
            dir.display()
        );
        return 2;
    }
    let status = supervise(dir).unwrap_or_else(|reason| Status {
        reason: Some(reason),
        code: Some(1),
        end_time: spool::now(),
        ..Status::default()
    });
    if let Err(e) = spool::write_json(dir, STATUS, &status, spool::Persist::Durable) {
        say!("sluice supervise: {}: {e}", dir.display());
        return 1;
    }
    drop(lock);
    0
}

/// Runs the job to its end; `Err` when it could not be started at all.
fn supervise(dir: &Path) -> Result<Status, String> {
    let job: JobFile = spool::read_json(dir, JOB)
        .map_err(|e| format!("{}: {e}", dir.join(JOB).display()))?
        .ok_or_else(|| format!("{}: missing", dir.join(JOB).display()))?;
    let signals = Signals::block()?;
    // SAFETY: plain system call.
    let user = if unsafe { libc::geteuid() } == 0 {
        Some(user::lookup(job.uid)?)
    } else {
        None
    };
    if user.is_some() {
        // As slurmstepd: the OOM killer takes a job's processes, never the one that records
        // their end and ends what is left of them.
        let _ = inherited::set_oom_score_adj(-1000);
    }
    descendants::become_subreaper().map_err(|e| format!("cannot become a subreaper: {e}"))?;
    let prepared = child::Prepared::new(&job, dir, user)?;
    if let Some(cg) = &job.cgroup {
        cg.create(BATCH_STEP)
            .map_err(|e| format!("cannot create the job's cgroup: {e}"))?;
    }
    let spawned = prepared.spawn();
    let (pid, failure) = match spawned {
        Ok(child) => child,
        Err(e) => {
            if let Some(cg) = &job.cgroup {
                let _ = cg.remove();
            }
            return Err(format!("cannot fork the job: {e}"));
        }
    };
    let pids = Pids {
        supervisor: std::process::id(),
        job: pid as u32,
    };
    if let Err(e) = spool::write_json(dir, PIDS, &pids, spool::Persist::Atomic) {
        say!("sluice supervise: {}: {e}", dir.join(PIDS).display());
    }
    Ok(Watch::new(&job, pid, failure, dir).run(signals))
}

/// SIGTERM, SIGINT, SIGHUP and SIGCHLD, blocked and read from a `signalfd`.
struct Signals {
    fd: File,
}

impl Signals {
    fn block() -> Result<Self, String> {
        // SAFETY: a signal set built and installed by system calls.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGCHLD] {
                libc::sigaddset(&mut set, s);
            }
            if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return Err(format!("sigprocmask: {}", io::Error::last_os_error()));
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(format!("signalfd: {}", io::Error::last_os_error()));
            }
            Ok(Self {
                fd: File::from_raw_fd(fd),
            })
        }
    }

    /// The signals that arrived since the last call.
    fn drain(&mut self) -> Vec<i32> {
        let mut out = Vec::new();
        let mut info = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
        while let Ok(n) = self.fd.read(&mut info) {
            if n < info.len() {
                break;
            }
            // SAFETY: the kernel wrote one whole signalfd_siginfo.
            let si: libc::signalfd_siginfo =
                unsafe { std::ptr::read_unaligned(info.as_ptr().cast()) };
            out.push(si.ssi_signo as i32);
        }
        out
    }
}

/// One running job and its deadlines.
struct Watch {
    /// Public job id.
    job: u64,
    /// The job's cgroup, which tracks its processes; `None`: they are this process's
    /// descendants.
    cgroup: Option<JobCgroup>,
    /// The spool directory, whose job file holds the time limit in force.
    dir: std::path::PathBuf,
    /// When the job started: limits count from here.
    started: Instant,
    pid: libc::pid_t,
    /// The child's start-up failure pipe, until it closes.
    failure: Option<File>,
    reason: String,
    limit_at: Option<Instant>,
    kill_wait: Duration,
    kill_at: Option<Instant>,
    timed_out: bool,
    /// `--signal`, and when it is due.
    warn: Option<(Instant, sluice_api::WarnSignal)>,
}

impl Watch {
    fn new(job: &JobFile, pid: libc::pid_t, failure: File, dir: &Path) -> Self {
        let now = Instant::now();
        Self {
            job: job.job,
            cgroup: job.cgroup.clone(),
            dir: dir.to_path_buf(),
            started: now,
            pid,
            failure: Some(failure),
            reason: String::new(),
            limit_at: limit_at(now, job),
            kill_wait: Duration::from_secs(job.kill_wait),
            kill_at: None,
            timed_out: false,
            warn: warn_at(now, job),
        }
    }

    /// SIGHUP: the job file's time limit changed (scontrol update); the deadlines follow it.
    fn reload_limit(&mut self) {
        if self.kill_at.is_some() {
            return;
        }
        match spool::read_json::<JobFile>(&self.dir, JOB) {
            Ok(Some(job)) => {
                self.limit_at = limit_at(self.started, &job);
                // A warning already sent is not sent again.
                if self.warn.is_some() {
                    self.warn = warn_at(self.started, &job);
                }
            }
            Ok(None) => say!("sluice supervise: SIGHUP: the job file is gone"),
            Err(e) => say!("sluice supervise: SIGHUP: {e}"),
        }
    }

    /// Sends `--signal`'s signal: with `B:` to the batch shell alone, else, as Slurm signals the
    /// job's steps but not its batch shell, to every other process of the job's group.
    fn send_warning(&self, w: &sluice_api::WarnSignal) {
        if w.batch_only {
            // SAFETY: plain system call; the leader is unreaped, so the pid is still the job's.
            unsafe { libc::kill(self.pid, w.signal) };
            return;
        }
        for pid in descendants::group_members(self.pid) {
            if pid != self.pid {
                // SAFETY: as above; a process that just exited makes this fail harmlessly.
                unsafe { libc::kill(pid, w.signal) };
            }
        }
    }

    /// Waits for the job's end, acting on signals and deadlines, and returns its status.
    fn run(mut self, mut signals: Signals) -> Status {
        loop {
            if let Some(status) = self.reap() {
                return status;
            }
            let mut fds = vec![libc::pollfd {
                fd: signals.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            if let Some(f) = &self.failure {
                fds.push(libc::pollfd {
                    fd: f.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
            }
            let timeout = self.timeout_ms();
            // SAFETY: `fds` is a valid array of its length.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if fds.get(1).is_some_and(|p| p.revents != 0) {
                self.read_failure();
            }
            for s in signals.drain() {
                if matches!(s, libc::SIGTERM | libc::SIGINT) {
                    self.terminate();
                } else if s == libc::SIGHUP {
                    self.reload_limit();
                } else if s == libc::SIGCHLD {
                    descendants::reap_orphans(self.pid);
                }
            }
            let now = Instant::now();
            if let Some((at, w)) = self.warn.clone()
                && now >= at
                && self.kill_at.is_none()
            {
                self.send_warning(&w);
                self.warn = None;
            }
            if self.limit_at.is_some_and(|t| now >= t) && self.kill_at.is_none() {
                self.timed_out = true;
                self.terminate();
            }
            if self.kill_at.is_some_and(|t| now >= t) {
                self.signal_all(libc::SIGKILL);
                self.kill_at = Some(now + Duration::from_secs(1));
            }
        }
    }

    fn timeout_ms(&self) -> i32 {
        let now = Instant::now();
        [
            self.limit_at.filter(|_| self.kill_at.is_none()),
            self.kill_at,
            self.warn.as_ref().map(|(at, _)| *at),
        ]
        .into_iter()
        .flatten()
        .map(|t| t.saturating_duration_since(now).as_millis() as i32 + 1)
        .min()
        .unwrap_or(1000)
        .min(1000)
    }

    fn read_failure(&mut self) {
        let Some(f) = &mut self.failure else { return };
        let mut buf = [0u8; 1024];
        match f.read(&mut buf) {
            Ok(0) | Err(_) => self.failure = None,
            Ok(n) => {
                if self.reason.len() < 4096 {
                    self.reason.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        }
    }

    /// SIGCONT and SIGTERM to every process of the job now, SIGKILL after KillWait.
    fn terminate(&mut self) {
        if self.kill_at.is_some() {
            return;
        }
        self.signal_all(libc::SIGCONT);
        self.signal_all(libc::SIGTERM);
        self.kill_at = Some(Instant::now() + self.kill_wait);
    }

    /// `signal` to every process of the job: those in its cgroup (and its leader, should it
    /// not have joined yet); without one, its group and every descendant that left the group.
    fn signal_all(&self, signal: i32) {
        match &self.cgroup {
            Some(cg) => {
                if !cg.pids().contains(&self.pid) {
                    // SAFETY: plain system call; the leader is unreaped, so the pid is the job's.
                    unsafe { libc::kill(self.pid, signal) };
                }
                cg.signal(signal);
            }
            None => {
                self.group_signal(signal);
                descendants::signal_escaped(self.pid, signal);
            }
        }
    }

    fn group_signal(&self, signal: i32) {
        // SAFETY: plain system calls; the group is the job's as long as its leader is unreaped,
        // and before the leader has made its session (and group) it is the job's only process.
        unsafe {
            if libc::kill(-self.pid, signal) < 0 {
                libc::kill(self.pid, signal);
            }
        }
    }

    /// The job's status once its script has ended: what is left of its group, and of its
    /// processes anywhere else, is killed while the leader, unreaped, still keeps the group id
    /// from being reused; then it is reaped.
    fn reap(&mut self) -> Option<Status> {
        // SAFETY: waitid fills `info`.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: si_pid is valid for a filled CLD_* siginfo.
        if rc != 0 || unsafe { info.si_pid() } == 0 {
            return None;
        }
        self.group_signal(libc::SIGKILL);
        let left = match &self.cgroup {
            Some(cg) => cg.kill_all(descendants::UNKILLABLE_AFTER),
            None => descendants::kill_all(self.pid),
        };
        if left > 0 {
            say!(
                "sluice supervise: {}: {left} processes of the job could not be killed",
                self.dir.display()
            );
        }
        let mut raw = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(self.pid, &mut raw, 0) };
        descendants::reap_orphans(self.pid);
        let oom_kills = self
            .cgroup
            .as_ref()
            .map_or(0, |cg| self.close_cgroup(cg, left));
        while self.failure.is_some() {
            self.read_failure();
        }
        let (code, signal) = if libc::WIFEXITED(raw) {
            (Some(libc::WEXITSTATUS(raw)), None)
        } else if libc::WIFSIGNALED(raw) {
            (None, Some(libc::WTERMSIG(raw)))
        } else {
            (None, None)
        };
        let reason = self.reason.trim();
        Some(Status {
            code,
            signal,
            timed_out: self.timed_out,
            reason: (!reason.is_empty()).then(|| reason.to_string()),
            end_time: spool::now(),
            oom_kills,
        })
    }

    /// Reads the OOM kills of the job's emptied cgroup (`left` processes could not be killed)
    /// and removes it; returns the count, logged in slurmstepd's words.
    fn close_cgroup(&self, cg: &JobCgroup, left: usize) -> u64 {
        let oom_kills = cg.oom_kills();
        if oom_kills > 0 {
            say!(
                "sluice supervise: Detected {oom_kills} oom_kill event{} in StepId={}.batch. \
                 Some of the step tasks have been OOM Killed.",
                if oom_kills == 1 { "" } else { "s" },
                self.job
            );
        }
        if left == 0
            && let Err(e) = cg.remove()
        {
            say!("sluice supervise: {}: {e}", self.dir.display());
        }
        oom_kills
    }
}

/// When a job started at `started` is past its limit, with the slack the daemon is given.
fn limit_at(started: Instant, job: &JobFile) -> Option<Instant> {
    job.time_limit
        .map(|l| started + Duration::from_secs(l.saturating_add(LIMIT_SLACK)))
}

/// When `--signal` is due for a job started at `started`, with the signal.
fn warn_at(started: Instant, job: &JobFile) -> Option<(Instant, sluice_api::WarnSignal)> {
    job.time_limit
        .zip(job.warn_signal.clone())
        .map(|(limit, w)| {
            let after = limit.saturating_sub(u64::from(w.seconds_before));
            (started + Duration::from_secs(after), w)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sighup_reads_the_new_time_limit_from_the_job_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut job = JobFile {
            job: 1,
            uid: 0,
            workdir: "/".into(),
            output: "/dev/null".into(),
            error: None,
            env: Default::default(),
            time_limit: Some(60),
            kill_wait: 30,
            warn_signal: Some(sluice_api::WarnSignal {
                signal: libc::SIGUSR1,
                seconds_before: 30,
                ..Default::default()
            }),
            append: false,
            input: None,
            args: Vec::new(),
            rlimits: Default::default(),
            cgroup: None,
        };
        let null = File::open("/dev/null").unwrap();
        let mut w = Watch::new(&job, 1, null, dir.path());
        let limit = |w: &Watch| w.limit_at.map(|t| t.duration_since(w.started).as_secs());
        let warn = |w: &Watch| {
            w.warn
                .as_ref()
                .map(|(t, _)| t.duration_since(w.started).as_secs())
        };
        assert_eq!((limit(&w), warn(&w)), (Some(60 + LIMIT_SLACK), Some(30)));
        job.time_limit = Some(600);
        spool::write_json(dir.path(), JOB, &job, spool::Persist::Atomic).unwrap();
        w.reload_limit();
        assert_eq!((limit(&w), warn(&w)), (Some(600 + LIMIT_SLACK), Some(570)));
    }

    #[test]
    fn this_process_is_in_its_own_group() {
        // SAFETY: plain system calls.
        let (pid, pgid) = unsafe { (libc::getpid(), libc::getpgrp()) };
        assert!(descendants::group_members(pgid).contains(&pid));
    }
}
