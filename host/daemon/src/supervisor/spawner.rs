//! The supervisors' spawner: one small resident process that forks each job's supervisor on the
//! daemon's request, so starting a job costs a fork of a small process instead of an `exec`
//! (the dynamic loader, the C library's start-up) of a new one.
//!
//! The daemon starts it (`spawn-supervisors --socket-fd N --job-nice M`) and talks to it over
//! one end of a private socket pair, never a path another user could reach. A request is one
//! datagram: the run's spool directory, with the directory's locked descriptor attached, so the
//! lock is held from before the supervisor exists. The answer is the supervisor's pid, or a
//! negated errno. The supervisors' diagnostics go to the spawner's standard error, which is the
//! daemon's. The spawner ends when the daemon's end of the socket closes; supervisors it started
//! go on, each in a process group of its own.

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

use rustix::io::Errno;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SendAncillaryBuffer,
    SendFlags, recvmsg, sendmsg,
};

/// Longest request read: a spool directory's path.
pub const MAX_REQUEST: usize = 4096;

/// How much lower than the daemon's a supervisor's priority is, under a root daemon.
pub const SUPERVISOR_NICER_BY: i32 = 5;

/// The nice value jobs run at, as the daemon asked; unset (`i32::MIN`) in a supervisor not
/// started by the spawner.
static JOB_NICE: AtomicI32 = AtomicI32::new(i32::MIN);

/// The nice value a job runs at, when its supervisor was started by the spawner.
pub fn job_nice() -> Option<i32> {
    Some(JOB_NICE.load(Ordering::Relaxed)).filter(|n| *n != i32::MIN)
}

/// Serves the daemon's requests on `socket` until the daemon closes it; returns the exit code.
/// The spawner keeps the (lower) priority the daemon started it with, supervisors run a little
/// below `job_nice` (the daemon's own), and jobs at it.
pub fn serve(socket: OwnedFd, job_nice: i32) -> i32 {
    JOB_NICE.store(job_nice, Ordering::Relaxed);
    // Ended supervisors are reaped by the kernel: nobody here waits for them, and the daemon
    // watches each through its lock, not as a parent.
    // SAFETY: installing a disposition, before any child exists.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    let mut buf = vec![0u8; MAX_REQUEST];
    loop {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let got = recvmsg(
            &socket,
            &mut [IoSliceMut::new(&mut buf)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        );
        let got = match got {
            Ok(got) => got,
            Err(Errno::INTR) => continue,
            Err(e) => {
                say!("sluice spawn-supervisors: receiving a request: {e}");
                return 1;
            }
        };
        if got.bytes == 0 && got.flags.is_empty() {
            // The daemon has gone.
            return 0;
        }
        let fds: Vec<OwnedFd> = control
            .drain()
            .flat_map(|m| match m {
                RecvAncillaryMessage::ScmRights(fds) => fds.collect(),
                _ => Vec::new(),
            })
            .collect();
        let truncated = got
            .flags
            .intersects(ReturnFlags::TRUNC | ReturnFlags::CTRUNC);
        let answer = match fds.as_slice() {
            [lock] if !truncated && got.bytes > 0 => {
                let dir = Path::new(std::ffi::OsStr::from_bytes(&buf[..got.bytes]));
                spawn(&socket, dir, lock).unwrap_or_else(|e| -e.raw_os_error())
            }
            _ => -libc::EINVAL,
        };
        // The descriptors are the child's now (or nobody's): this process lets go of them.
        drop(fds);
        if let Err(e) = sendmsg(
            &socket,
            &[IoSlice::new(&answer.to_le_bytes())],
            &mut SendAncillaryBuffer::default(),
            SendFlags::NOSIGNAL,
        ) {
            say!("sluice spawn-supervisors: answering: {e}");
            return 1;
        }
    }
}

/// Forks the supervisor of the run in `dir`; returns its pid.
fn spawn(socket: &OwnedFd, dir: &Path, lock: &OwnedFd) -> Result<i32, Errno> {
    // SAFETY: this process is single-threaded, so the child may run ordinary code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Errno::from_raw_os_error(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ));
    }
    if pid > 0 {
        return Ok(pid);
    }
    // The supervisor: without the daemon's socket (the daemon must see the spawner's end
    // close when the spawner ends), and with the default SIGCHLD its own job needs.
    // SAFETY: system calls on a descriptor and a disposition this process holds.
    unsafe {
        libc::close(socket.as_raw_fd());
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
    }
    // Between the spawner's priority and the daemon's: supervisors yield to the daemon, yet
    // never starve as the spawner may, since they end jobs at their time limit and on
    // cancellation. Only root lowers a priority (and so only root gives it back to jobs).
    if let Some(nice) = job_nice()
        // SAFETY: plain system call.
        && unsafe { libc::geteuid() } == 0
    {
        // SAFETY: plain system call.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, (nice + SUPERVISOR_NICER_BY).min(19)) };
    }
    let code = super::run(dir, lock.as_raw_fd());
    // SAFETY: leaving without unwinding into the spawner's loop or running its destructors.
    unsafe { libc::_exit(code) }
}
