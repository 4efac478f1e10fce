//! The daemon's side of the supervisors' spawner ([`crate::supervisor::spawner`]): starts the
//! resident process on first use, asks it for one supervisor per launch, and starts another
//! should it have ended. Used from the launch thread only.

use std::fs::File;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage,
    SendFlags, SocketFlags, SocketType, recvmsg, sendmsg, socketpair,
};

/// Longest wait for the spawner's answer; a spawner that takes longer is taken for stuck and
/// replaced.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// The resident spawner, started when first needed.
pub struct Spawner {
    program: PathBuf,
    /// The nice value jobs run at.
    job_nice: i32,
    running: Option<Running>,
}

struct Running {
    socket: OwnedFd,
    child: Child,
}

/// Why a request failed.
enum Failure {
    /// The request never reached the spawner (it had ended): another may be asked.
    NotSent(io::Error),
    /// The request was sent but not answered: the spawner ended or is stuck, and may or may
    /// not have started the supervisor.
    Unanswered(io::Error),
    /// The spawner could not fork the supervisor.
    Refused(io::Error),
}

impl Spawner {
    /// A spawner run as `program spawn-supervisors --socket-fd N --job-nice M`
    /// (`sluice-supervise` or `sluice`), at the calling thread's priority, starting jobs at
    /// `job_nice`.
    pub fn new(program: PathBuf, job_nice: i32) -> Self {
        Self {
            program,
            job_nice,
            running: None,
        }
    }

    /// Starts the supervisor of the run in `dir`, handing it `lock` (the run's directory,
    /// locked, so a supervisor is never seen gone before it starts).
    pub fn spawn(&mut self, dir: &Path, lock: File) -> Result<(), String> {
        for attempt in 0..2 {
            let running = match &mut self.running {
                Some(r) => r,
                None => self.running.insert(
                    start(&self.program, self.job_nice)
                        .map_err(|e| format!("{}: {e}", self.program.display()))?,
                ),
            };
            match request(&running.socket, dir, &lock) {
                Ok(()) => return Ok(()),
                Err(Failure::Refused(e)) => return Err(format!("cannot start a supervisor: {e}")),
                Err(Failure::NotSent(e)) if attempt == 0 => {
                    tracing::warn!("the supervisors' spawner has ended ({e}); starting another");
                    self.stop();
                }
                Err(Failure::NotSent(e)) => {
                    self.stop();
                    return Err(format!("the supervisors' spawner has ended: {e}"));
                }
                Err(Failure::Unanswered(e)) => {
                    self.stop();
                    // Asking again could start the job twice. With the spawner gone, the lock
                    // is held only by a supervisor it forked, which may also have ended.
                    drop(lock);
                    let started = super::watch::alive(dir)
                        || dir.join(crate::supervisor::spool::STATUS).exists();
                    return if started {
                        Ok(())
                    } else {
                        Err(format!("the supervisors' spawner did not answer: {e}"))
                    };
                }
            }
        }
        unreachable!("the second attempt returns")
    }

    /// Ends the spawner (supervisors it started go on).
    fn stop(&mut self) {
        if let Some(mut r) = self.running.take() {
            drop(r.socket);
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts the spawner with its end of a new socket pair.
fn start(program: &Path, job_nice: i32) -> io::Result<Running> {
    let (ours, theirs) = socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::sockopt::set_socket_timeout(
        &ours,
        rustix::net::sockopt::Timeout::Recv,
        Some(ANSWER_WITHIN),
    )?;
    let fd = theirs.as_raw_fd();
    let mut cmd = Command::new(program);
    cmd.arg("spawn-supervisors")
        .arg("--socket-fd")
        .arg(fd.to_string())
        .arg("--job-nice")
        .arg(job_nice.to_string())
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    // Its standard error, and so its supervisors', is the daemon's: their diagnostics name the
    // run's directory and go to the daemon's log, as slurmstepd's go to slurmd's.
    // Only the spawner gets its end: close-on-exec is cleared in the child alone, so no other
    // process the daemon starts meanwhile can inherit it. Nothing else of the daemon's reaches
    // the spawner, and so its supervisors and their jobs.
    // SAFETY: system calls only, and `fd` is open in the child (a copy of ours).
    unsafe {
        cmd.pre_exec(move || {
            crate::supervisor::inherited::close_on_exec_above_stderr();
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    drop(theirs);
    Ok(Running {
        socket: ours,
        child,
    })
}

/// Sends one request and reads its answer.
fn request(socket: &OwnedFd, dir: &Path, lock: &File) -> Result<(), Failure> {
    let fds = [lock.as_fd()];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    control.push(SendAncillaryMessage::ScmRights(&fds));
    let path = dir.as_os_str().as_bytes();
    if path.len() > crate::supervisor::spawner::MAX_REQUEST {
        return Err(Failure::Refused(io::Error::other("spool path too long")));
    }
    sendmsg(
        socket,
        &[IoSlice::new(path)],
        &mut control,
        SendFlags::NOSIGNAL,
    )
    .map_err(|e| Failure::NotSent(e.into()))?;
    let mut answer = [0u8; 4];
    let got = recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut answer)],
        &mut RecvAncillaryBuffer::default(),
        RecvFlags::empty(),
    )
    .map_err(|e| Failure::Unanswered(e.into()))?;
    if got.bytes != answer.len() {
        return Err(Failure::Unanswered(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "no answer",
        )));
    }
    match i32::from_le_bytes(answer) {
        pid if pid > 0 => Ok(()),
        errno => Err(Failure::Refused(io::Error::from_raw_os_error(-errno))),
    }
}
