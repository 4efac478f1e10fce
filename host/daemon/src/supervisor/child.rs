//! The job's process: forked by the supervisor, it leads its own process group, becomes the
//! user, enters the working directory and opens the job's files *as the user* (so the user's
//! own permissions decide, through symlinks too), then executes the script by descriptor with
//! nothing of the daemon's but what [`super::inherited`] allows.
//!
//! Everything it needs is prepared before the fork; the child only makes system calls and, if
//! a step fails, writes why on a pipe the supervisor reads.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::inherited;
use super::spool::{JobFile, SCRIPT};
use super::user::{User, become_user};
use crate::cgroup::BATCH_STEP;
use crate::escaped::escaped;

/// What the child executes, prepared in the supervisor.
pub struct Prepared {
    user: Option<User>,
    workdir: CString,
    output: CString,
    error: Option<CString>,
    /// Whether output files are appended to (`--open-mode=append`).
    append: bool,
    /// Standard input, else /dev/null.
    input: Option<CString>,
    /// The script, opened by root in the daemon's spool, executed through this descriptor.
    script: File,
    argv: Vec<CString>,
    envp: Vec<CString>,
    /// The submitter's soft resource limits.
    rlimits: BTreeMap<String, Option<u64>>,
    /// This process (the supervisor), which the job's process must still have as its parent.
    supervisor: libc::pid_t,
    /// The `cgroup.procs` files of the job's batch step, which the job's process joins.
    cgroup_procs: Vec<CString>,
}

fn c_path(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| format!("{}: NUL in path", escaped(&p.to_string_lossy())))
}

impl Prepared {
    /// Prepares `job` from the spool directory `dir`; `user` is whom to become (`None`: stay).
    pub fn new(job: &JobFile, dir: &Path, user: Option<User>) -> Result<Self, String> {
        let script_path = dir.join(SCRIPT);
        let script =
            File::open(&script_path).map_err(|e| format!("{}: {e}", script_path.display()))?;
        let envp = job
            .env
            .iter()
            .filter_map(|(k, v)| CString::new(format!("{k}={v}")).ok())
            .collect();
        Ok(Self {
            user,
            workdir: c_path(&job.workdir)?,
            output: c_path(&job.output)?,
            error: job.error.as_deref().map(c_path).transpose()?,
            append: job.append,
            input: job.input.as_deref().map(c_path).transpose()?,
            script,
            argv: std::iter::once(c_path(&script_path))
                .chain(job.args.iter().map(|a| {
                    CString::new(a.as_bytes()).map_err(|_| format!("{a:?}: NUL in an argument"))
                }))
                .collect::<Result<_, _>>()?,
            envp,
            rlimits: job.rlimits.clone(),
            // SAFETY: plain system call.
            supervisor: unsafe { libc::getpid() },
            cgroup_procs: job
                .cgroup
                .iter()
                .flat_map(|cg| cg.procs_files(BATCH_STEP))
                .map(|p| c_path(&p))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Forks the job. Returns its pid and the pipe on which it reports a failure to start
    /// (end of file with nothing read: the script is executing).
    pub fn spawn(&self) -> io::Result<(libc::pid_t, File)> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: pipe2 fills the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors are fresh and owned here.
        let (read, write) = unsafe { (File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the supervisor is single-threaded, so the child may run ordinary code.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            drop(read);
            let why = self.exec();
            let msg = why.as_bytes();
            // SAFETY: writing what is left of a buffer we own, then leaving without unwinding.
            unsafe {
                libc::write(write.as_raw_fd(), msg.as_ptr().cast(), msg.len());
                libc::_exit(1);
            }
        }
        Ok((pid, read))
    }

    /// The child's steps up to `fexecve`; returns only on failure, with the reason.
    fn exec(&self) -> String {
        // SAFETY: system calls on data prepared before the fork.
        unsafe {
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            // Ignored signals stay ignored across exec: a job must not inherit the SIGPIPE the
            // Rust runtime ignores here (`yes | head` would never end), nor the spawner's SIGCHLD.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        }
        // Into the job's cgroup while still root (its files are root's), before anything of
        // the job runs: every process it starts is born there.
        // SAFETY: plain system call.
        if let Err(e) = crate::cgroup::enter(&self.cgroup_procs, unsafe { libc::getpid() }) {
            return format!("cannot join the job's cgroup: {e}");
        }
        // A session of its own, and so a process group the supervisor signals as a whole, and
        // no controlling terminal: nothing of the user's reaches a terminal the daemon has.
        // SAFETY: plain system call; the child is no group leader yet, so it cannot fail.
        if unsafe { libc::setsid() } < 0 {
            return format!("cannot start a session: {}", io::Error::last_os_error());
        }
        // The job runs at the daemon's priority, above its supervisor's (while still root, who
        // alone may raise it).
        if let Some(nice) = super::spawner::job_nice() {
            // SAFETY: plain system call.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
        }
        // The daemon may run shielded from the OOM killer (as slurmd does); its jobs are not.
        // Best effort: without root a score can only be raised, and 0 is what jobs get anyway.
        let _ = inherited::set_oom_score_adj(0);
        if let Some(user) = &self.user
            && let Err(e) = become_user(user)
        {
            return format!("cannot become uid {}: {e}", user.uid);
        }
        // As the user: the kernel itself keeps every limit within the hard ones the daemon had.
        if let Err(e) = inherited::apply_limits(&self.rlimits) {
            return format!("cannot set the submitter's resource limits: {e}");
        }
        // The batch script dies with its supervisor (after the change of user, which clears the
        // setting); the daemon ends the rest of its group (`watch::end_orphans`). A supervisor
        // already gone leaves nothing to run under.
        // SAFETY: plain system calls.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            if libc::getppid() != self.supervisor {
                return "the supervisor ended before the job started".into();
            }
        }
        // SAFETY: NUL-terminated paths.
        if unsafe { libc::chdir(self.workdir.as_ptr()) } != 0
            && unsafe { libc::chdir(c"/tmp".as_ptr()) } != 0
        {
            return format!(
                "cannot enter a working directory: {}",
                io::Error::last_os_error()
            );
        }
        let out = match open_output(&self.output, self.append) {
            Ok(fd) => fd,
            Err(e) => return e,
        };
        let err = match &self.error {
            Some(p) => match open_output(p, self.append) {
                Ok(fd) => fd,
                Err(e) => return e,
            },
            None => out,
        };
        let input = self.input.as_deref().unwrap_or(c"/dev/null");
        // SAFETY: a NUL-terminated path, opened as the job's user.
        let stdin = unsafe { libc::open(input.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if stdin < 0 {
            return format!(
                "cannot open input {} as the job's user: {}",
                escaped(&input.to_string_lossy()),
                io::Error::last_os_error()
            );
        }
        // SAFETY: descriptors this process owns; dup2 clears close-on-exec on the copies.
        unsafe {
            if libc::dup2(stdin, 0) < 0 || libc::dup2(out, 1) < 0 || libc::dup2(err, 2) < 0 {
                return format!(
                    "cannot set up standard streams: {}",
                    io::Error::last_os_error()
                );
            }
            // Nothing the daemon inherited or opened reaches the job; the interpreter of a `#!`
            // script reads it through /dev/fd, so the script alone survives exec.
            inherited::close_on_exec_above_stderr();
            let fd = self.script.as_raw_fd();
            libc::fcntl(fd, libc::F_SETFD, 0);
            let mut argv: Vec<*const libc::c_char> = self.argv.iter().map(|a| a.as_ptr()).collect();
            argv.push(std::ptr::null());
            let mut envp: Vec<*const libc::c_char> = self.envp.iter().map(|e| e.as_ptr()).collect();
            envp.push(std::ptr::null());
            libc::fexecve(fd, argv.as_ptr(), envp.as_ptr());
        }
        format!(
            "cannot execute the batch script: {}",
            io::Error::last_os_error()
        )
    }
}

/// Opens a job's output file as whoever the child now is, truncating it or, with `append`,
/// appending to it. A FIFO with no reader fails at once (`O_NONBLOCK`) instead of waiting; the
/// file is then made blocking again.
fn open_output(path: &CString, append: bool) -> Result<RawFd, String> {
    // Reasons reach the daemon's log and `show job`: a path's newline must not start a line.
    let path_text = path.to_string_lossy();
    let shown = escaped(&path_text);
    let flags = libc::O_WRONLY
        | libc::O_CREAT
        | if append {
            libc::O_APPEND
        } else {
            libc::O_TRUNC
        }
        | libc::O_NONBLOCK
        | libc::O_NOCTTY
        | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), flags, 0o644 as libc::c_uint) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::ENXIO) {
            format!("cannot open output {shown}: a FIFO with no reader")
        } else {
            format!("cannot open output {shown} as the job's user: {e}")
        });
    }
    // SAFETY: a descriptor just opened.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
    }
    Ok(fd)
}
