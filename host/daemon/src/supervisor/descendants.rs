//! The job's whole process tree, as slurmstepd's process tracking keeps it: the supervisor is a
//! child subreaper, so a process that leaves the job's process group and session (`setsid`, a
//! double fork) still descends from it, comes back to it when its parent ends, and is ended
//! with the job.

use std::collections::{HashMap, HashSet};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// How long the supervisor goes on killing a job's processes before it gives up on those that
/// do not die (a process stuck in the kernel): Slurm's `UnkillableStepTimeout` default.
pub const UNKILLABLE_AFTER: Duration = Duration::from_secs(60);

/// Makes this process the child subreaper of everything it starts: orphans of the job are
/// reparented here instead of to init, so none leaves the tree.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: plain system call.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One process as `/proc/PID/stat` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Process {
    pid: libc::pid_t,
    parent: libc::pid_t,
    group: libc::pid_t,
    zombie: bool,
}

/// Reads `/proc/PID/stat`'s line: the state, parent and group follow the command name's closing
/// parenthesis (the name may hold spaces and parentheses).
fn parse_stat(pid: libc::pid_t, stat: &str) -> Option<Process> {
    let mut after = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = after.next()?;
    Some(Process {
        pid,
        zombie: state == "Z",
        parent: after.next()?.parse().ok()?,
        group: after.next()?.parse().ok()?,
    })
}

fn process(pid: libc::pid_t) -> Option<Process> {
    parse_stat(
        pid,
        &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?,
    )
}

/// Every process of the machine (one that ends meanwhile is skipped).
fn processes() -> Vec<Process> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter_map(process)
        .collect()
}

/// The processes in process group `group` (zombies too).
pub fn group_members(group: libc::pid_t) -> Vec<libc::pid_t> {
    processes()
        .into_iter()
        .filter(|p| p.group == group)
        .map(|p| p.pid)
        .collect()
}

/// The processes of `all` descended from `root`, `root` excluded.
fn descendants_of(all: &[Process], root: libc::pid_t) -> Vec<Process> {
    let mut children: HashMap<libc::pid_t, Vec<&Process>> = HashMap::new();
    for p in all {
        children.entry(p.parent).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut next = vec![root];
    while let Some(pid) = next.pop() {
        for c in children.get(&pid).into_iter().flatten() {
            if seen.insert(c.pid) {
                out.push(**c);
                next.push(c.pid);
            }
        }
    }
    out
}

fn me() -> libc::pid_t {
    // SAFETY: plain system call.
    unsafe { libc::getpid() }
}

/// Sends `signal` to `p` unless its pid has meanwhile gone to another process: it is still the
/// one seen if its parent is the same or is now this process.
fn signal_process(p: &Process, signal: i32) {
    signal_pinned(p.pid, signal, || {
        process(p.pid).is_some_and(|now| now.parent == p.parent || now.parent == me())
    });
}

/// Sends `signal` to `pid` if `still_ours` holds once a pidfd pins the process, so a pid reused
/// between the check and the signal is never hit. Kernels before 5.3 have no pidfds: there the
/// check is made and a plain kill sent, with the pid's usual race.
pub(crate) fn signal_pinned(pid: libc::pid_t, signal: i32, still_ours: impl FnOnce() -> bool) {
    // SAFETY: plain system call; a descriptor it returns is owned here.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        if io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) && still_ours() {
            // SAFETY: plain system call.
            unsafe { libc::kill(pid, signal) };
        }
        return;
    }
    // SAFETY: a descriptor just returned.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    if still_ours() {
        use std::os::fd::AsRawFd;
        // SAFETY: plain system call on a pidfd this process holds.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd.as_raw_fd(),
                signal,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
    }
}

/// Sends `signal` to every live process descended from this one outside process group
/// `group` (which the caller signals as a whole, so nothing is signalled twice): what left the
/// job's group with `setsid` or `setpgid`.
pub fn signal_escaped(group: libc::pid_t, signal: i32) {
    for p in descendants_of(&processes(), me()) {
        if !p.zombie && p.group != group {
            signal_process(&p, signal);
        }
    }
}

/// Reaps this process's ended children other than `leader`: the job's orphans that came back
/// here, which would otherwise stay zombies until the job's end.
pub fn reap_orphans(leader: libc::pid_t) {
    let me = me();
    for p in processes() {
        if p.zombie && p.parent == me && p.pid != leader {
            // SAFETY: reaping a child of this process that has ended.
            unsafe { libc::waitpid(p.pid, std::ptr::null_mut(), libc::WNOHANG) };
        }
    }
}

/// Kills every process descended from this one but the ended, unreaped `leader`, again and
/// again (a dying process may have forked) until none is left or [`UNKILLABLE_AFTER`] has
/// passed; returns how many are left.
pub fn kill_all(leader: libc::pid_t) -> usize {
    let give_up = Instant::now() + UNKILLABLE_AFTER;
    loop {
        reap_orphans(leader);
        let live: Vec<Process> = descendants_of(&processes(), me())
            .into_iter()
            .filter(|p| !p.zombie)
            .collect();
        if live.is_empty() || Instant::now() >= give_up {
            return live.len();
        }
        for p in &live {
            signal_process(p, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, parent: i32) -> Process {
        Process {
            pid,
            parent,
            group: pid,
            zombie: false,
        }
    }

    #[test]
    fn the_stat_line_is_read_after_the_command_name() {
        assert_eq!(
            parse_stat(1234, "1234 (a (weird) name) Z 1 4321 4321 0 -1"),
            Some(Process {
                pid: 1234,
                parent: 1,
                group: 4321,
                zombie: true
            })
        );
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[test]
    fn descendants_are_the_whole_tree_below_the_root_only() {
        let all = [
            p(10, 1),
            p(11, 10),
            p(12, 11),
            p(13, 12),
            p(20, 1),
            p(21, 20),
        ];
        let mut got: Vec<i32> = descendants_of(&all, 10).iter().map(|p| p.pid).collect();
        got.sort();
        assert_eq!(got, [11, 12, 13]);
    }

    #[test]
    fn this_process_is_nobodys_descendant_but_its_parents() {
        let all = processes();
        // SAFETY: plain system call.
        let parent = unsafe { libc::getppid() };
        assert!(descendants_of(&all, parent).iter().any(|p| p.pid == me()));
        assert!(descendants_of(&all, me()).iter().all(|p| p.pid != me()));
    }
}
