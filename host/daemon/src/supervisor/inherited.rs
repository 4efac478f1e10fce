//! What a job's process inherits, and what it must not: descriptors (none but its standard
//! streams and its script), resource limits (the submitter's, as Slurm's
//! `PropagateResourceLimits=ALL` gives them) and its OOM score (0, whatever the daemon's).

use std::collections::BTreeMap;
use std::io;
use std::os::fd::RawFd;

use rustix::process::{Rlimit, getrlimit, setrlimit};
use sluice_client::limits::PROPAGATED;

/// Marks every descriptor above standard error close-on-exec, so no program started from here
/// on inherits one it was not given on purpose (the daemon's start inherits whatever its parent
/// left open). Only system calls: safe between fork and exec.
pub fn close_on_exec_above_stderr() {
    // SAFETY: plain system call; marks descriptors, closes none.
    let marked = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if marked {
        return;
    }
    // Kernels before 5.11: every descriptor a process may hold, one by one.
    // SAFETY: getrlimit fills `rl`; fcntl on a number that is no descriptor fails harmlessly.
    unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        let highest = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 {
            rl.rlim_max.clamp(1024, 1 << 20) as RawFd
        } else {
            1 << 20
        };
        for fd in 3..highest {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// The soft limit a job asking for `asked` gets under `now`: never above the hard limit, which
/// stays as it is (`None`: unlimited).
pub fn granted(asked: Option<u64>, now: Rlimit) -> Rlimit {
    let current = match (asked, now.maximum) {
        (Some(a), Some(max)) => Some(a.min(max)),
        (Some(a), None) => Some(a),
        (None, max) => max,
    };
    Rlimit {
        current,
        maximum: now.maximum,
    }
}

/// Gives this process the soft limits `asked` names (unknown names are ignored), each within
/// its hard limit; the first that cannot be set is the error. Called in the job's process once
/// it is the user, so the kernel too keeps every limit within what the daemon had.
pub fn apply_limits(asked: &BTreeMap<String, Option<u64>>) -> io::Result<()> {
    for (name, resource) in PROPAGATED {
        if let Some(&value) = asked.get(name) {
            setrlimit(resource, granted(value, getrlimit(resource))).map_err(io::Error::from)?;
        }
    }
    Ok(())
}

/// Sets this process's OOM score adjustment (`/proc/self/oom_score_adj`); lowering it needs
/// root. Jobs get 0, as slurmstepd gives tasks, whatever the daemon runs with.
pub fn set_oom_score_adj(adj: i32) -> io::Result<()> {
    std::fs::write("/proc/self/oom_score_adj", adj.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(current: Option<u64>, maximum: Option<u64>) -> Rlimit {
        Rlimit { current, maximum }
    }

    #[test]
    fn a_job_gets_the_submitters_soft_limit_within_the_hard_one() {
        let now = limit(Some(777), Some(4096));
        assert_eq!(granted(Some(555), now), limit(Some(555), Some(4096)));
        assert_eq!(granted(Some(1 << 30), now), limit(Some(4096), Some(4096)));
        assert_eq!(granted(None, now), limit(Some(4096), Some(4096)));
        let unlimited = limit(None, None);
        assert_eq!(granted(Some(9), unlimited), limit(Some(9), None));
        assert_eq!(granted(None, unlimited), limit(None, None));
    }
}
