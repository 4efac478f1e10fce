//! The local executor: the demo cluster's nodes are virtual nodes on this machine, and a batch
//! script runs as a child process in its own session, which dies with the daemon (so a crash
//! leaves no orphans to adopt: their jobs are requeued or NODE_FAIL on restart, as Slurm does
//! when a node's processes vanish).

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Executor, ExitReport, Launch};

/// A callback told when a job's processes have ended.
pub type OnExit = Arc<dyn Fn(ExitReport) + Send + Sync>;

/// Runs scripts as local processes; scripts are kept under `DIR/jobs/<id>/`.
pub struct LocalExecutor {
    spool: PathBuf,
    pids: Arc<Mutex<HashMap<u64, u32>>>,
    on_exit: OnExit,
}

impl LocalExecutor {
    /// An executor writing scripts under `spool` and reporting ends to `on_exit`.
    ///
    /// Launches must come from one long-lived thread: the kernel's parent-death signal fires
    /// when the *thread* that forked exits.
    pub fn new(spool: PathBuf, on_exit: OnExit) -> Self {
        Self {
            spool,
            pids: Arc::default(),
            on_exit,
        }
    }
}

fn open_out(path: &PathBuf) -> Result<File, String> {
    OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))
}

impl Executor for LocalExecutor {
    fn launch(&mut self, l: Launch) -> Result<(), String> {
        let dir = self.spool.join(l.job.to_string());
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let script = dir.join("script");
        let text = if l.script.starts_with("#!") {
            l.script.clone()
        } else {
            format!("#!/bin/sh\n{}", l.script)
        };
        fs::write(&script, text).map_err(|e| format!("{}: {e}", script.display()))?;
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", script.display()))?;
        let out = open_out(&l.output)?;
        let err = match &l.error {
            Some(p) => open_out(p)?,
            None => out.try_clone().map_err(|e| e.to_string())?,
        };
        let workdir = if l.workdir.is_dir() {
            l.workdir.clone()
        } else {
            PathBuf::from("/")
        };
        let mut cmd = Command::new(&script);
        cmd.env_clear()
            .envs(&l.env)
            .current_dir(&workdir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let uid = l.uid;
        // Looked up before the fork: the password database is not async-signal-safe.
        let gid = crate::identity::primary_gid(uid);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::geteuid() == 0 && uid != 0 {
                    if let Some(gid) = gid
                        && libc::setgid(gid) < 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    if libc::setuid(uid) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("{}: {e}", script.display()))?;
        let pid = child.id();
        self.pids.lock().expect("pid map").insert(l.job, pid);
        let (pids, on_exit, job) = (self.pids.clone(), self.on_exit.clone(), l.job);
        std::thread::Builder::new()
            .name(format!("job-{job}"))
            .spawn(move || {
                let status = child.wait();
                pids.lock().expect("pid map").remove(&job);
                let (code, signal) = match status {
                    Ok(s) => (s.code(), s.signal()),
                    Err(_) => (None, None),
                };
                on_exit(ExitReport { job, code, signal });
            })
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    fn signal(&mut self, job: u64, signal: i32) -> Result<(), String> {
        let pid = *self
            .pids
            .lock()
            .expect("pid map")
            .get(&job)
            .ok_or_else(|| format!("job {job} has no running processes"))?;
        // The script leads its own session, so its pid is the process group of everything it starts.
        if unsafe { libc::kill(-(pid as i32), signal) } < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        Ok(())
    }

    fn terminate(&mut self, job: u64, grace: Duration) {
        let Some(pid) = self.pids.lock().expect("pid map").get(&job).copied() else {
            return;
        };
        unsafe {
            libc::kill(-(pid as i32), libc::SIGCONT);
            libc::kill(-(pid as i32), libc::SIGTERM);
        }
        let pids = self.pids.clone();
        std::thread::spawn(move || {
            std::thread::sleep(grace);
            // Still the same process: its waiter removes the entry the moment it is reaped.
            if pids.lock().expect("pid map").get(&job) == Some(&pid) {
                unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
            }
        });
    }

    fn running(&self) -> Vec<u64> {
        self.pids.lock().expect("pid map").keys().copied().collect()
    }
}
