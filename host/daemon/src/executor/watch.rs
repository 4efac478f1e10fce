//! Watching a supervisor: alive while it holds its run's lock, which it lets go of only by
//! exiting, after its status is on disk. The same wait works for a supervisor this daemon
//! started and for one a restarted daemon finds, so neither depends on being its parent (the
//! spawner is).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

use super::ExitReport;
use crate::supervisor::descendants;
use crate::supervisor::spool::{self, JOB, JobFile, LEGACY_LOCK, PIDS, Pids, STATUS, Status};

/// The run's lock: its directory, or the lock file of a supervisor of an earlier version.
fn open_lock(dir: &Path) -> io::Result<File> {
    let legacy = dir.join(LEGACY_LOCK);
    File::open(if legacy.exists() { &legacy } else { dir })
}

/// Whether a supervisor holds the lock of the run in `dir`.
pub fn alive(dir: &Path) -> bool {
    let Ok(f) = open_lock(dir) else {
        return false;
    };
    // SAFETY: plain system call on an owned descriptor; the lock, if taken, goes with `f`.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    rc != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

/// Blocks until no supervisor holds the lock of the run in `dir`.
pub fn wait_gone(dir: &Path) {
    let Ok(f) = open_lock(dir) else {
        return;
    };
    loop {
        // SAFETY: as in `alive`.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// The pids the supervisor in `dir` recorded, once its job's process exists.
pub fn pids(dir: &Path) -> Option<Pids> {
    spool::read_json(dir, PIDS).ok().flatten()
}

/// What the (gone) supervisor of run `run` of `job` in `dir` recorded about the job's end.
pub fn outcome(dir: &Path, job: u64, run: u32) -> Option<ExitReport> {
    match spool::read_json::<Status>(dir, STATUS) {
        Ok(Some(s)) => Some(ExitReport {
            job,
            run,
            code: s.code,
            signal: s.signal,
            timed_out: s.timed_out,
            reason: s.reason,
            end_time: Some(s.end_time),
            out_of_memory: s.oom_kills > 0,
        }),
        Ok(None) => None,
        Err(e) => Some(ExitReport::failed(
            job,
            run,
            format!("the job's status is unreadable: {e}"),
        )),
    }
}

/// Waits for the supervisor of run `run` of `job` to be gone (the spawner, its parent, reaps
/// it) and returns how the job ended.
pub fn until_end(dir: &Path, job: u64, run: u32) -> ExitReport {
    wait_gone(dir);
    outcome(dir, job, run).unwrap_or_else(|| {
        end_orphans(dir);
        ExitReport::failed(
            job,
            run,
            "the job's supervisor ended without recording the job's end".into(),
        )
    })
}

/// Kills what is left of the job after its supervisor died without recording the job's end
/// (killed by an admin or the OOM killer): nothing may run on that the daemon counts as
/// ended. Every process in the job's cgroup, wherever it moved, is killed and the cgroup
/// removed; without one, its descendants are found by their group (the batch script died with
/// its supervisor, its parent-death signal), only while some process is still in the group:
/// Linux reuses no pid that is still some process's group id, so the group is still the job's.
pub fn end_orphans(dir: &Path) {
    if let Ok(Some(job)) = spool::read_json::<JobFile>(dir, JOB)
        && let Some(cg) = job.cgroup
    {
        let left = cg.kill_all(descendants::UNKILLABLE_AFTER);
        if left > 0 {
            tracing::error!(
                "{}: {left} processes of the job could not be killed",
                dir.display()
            );
        } else if let Err(e) = cg.remove() {
            tracing::warn!("{}: {e}", dir.display());
        }
    }
    let Some(p) = pids(dir) else {
        return;
    };
    let Ok(group) = i32::try_from(p.job) else {
        return;
    };
    if group <= 1 || descendants::group_members(group).is_empty() {
        return;
    }
    // SAFETY: signalling a process group this daemon's supervisor made for the job.
    unsafe { libc::kill(-group, libc::SIGKILL) };
}
