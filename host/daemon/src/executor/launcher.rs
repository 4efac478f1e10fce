//! Starting a job's supervisor: the job's spool directory for this run, the script and what to
//! run written into it, the directory locked and handed with the request to the spawner, whose
//! supervisor makes a session of its own so it outlives the daemon. Runs on the executor's
//! launch thread, never on the thread that schedules.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::Launch;
use super::spawner::Spawner;
use crate::cgroup::Containment;
use crate::supervisor::spool::{self, JOB, JobFile, SCRIPT};

/// The spool directory of one run of a job: `SPOOL/<job>/<run>`.
pub fn run_dir(spool: &Path, job: u64, run: u32) -> PathBuf {
    spool.join(job.to_string()).join(run.to_string())
}

/// Prepares `dir` for `l` and has `spawner` start its supervisor, which runs it in a cgroup of
/// its own where `containment` is.
pub fn start(
    spawner: &mut Spawner,
    containment: Option<&Containment>,
    dir: &Path,
    l: &Launch,
) -> Result<(), String> {
    let shown = |e: io::Error| format!("{}: {e}", dir.display());
    if super::watch::alive(dir) {
        return Err(format!(
            "{}: a supervisor of this run is still alive",
            dir.display()
        ));
    }
    if dir.exists() {
        // Left by a run that never got under way (the daemon stopped before journaling it).
        fs::remove_dir_all(dir).map_err(shown)?;
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(shown)?;
    let (script, env) = match &l.files {
        Some(files) => {
            let (script, submitted) = files
                .load()
                .map_err(|e| format!("{}: {e}", files.script.display()))?;
            (
                script,
                crate::job_files::launch_env(submitted, l.env.clone()),
            )
        }
        None => (l.script.clone(), l.env.clone()),
    };
    let text = if script.starts_with("#!") {
        script
    } else {
        format!("#!/bin/sh\n{script}")
    };
    write_script(&dir.join(SCRIPT), &text).map_err(shown)?;
    let job = JobFile {
        job: l.job,
        uid: l.uid,
        workdir: l.workdir.clone(),
        output: l.output.clone(),
        error: l.error.clone(),
        env,
        time_limit: l.time_limit.map(|d| d.as_secs()),
        kill_wait: l.kill_wait.as_secs(),
        warn_signal: l.warn_signal.clone(),
        append: l.append,
        input: l.input.clone(),
        args: l.args.clone(),
        rlimits: l.rlimits.clone(),
        cgroup: containment
            .map(|c| c.job((l.job, l.run), &l.cpu_ids, l.memory_mb, &l.other_devices)),
    };
    spool::write_json(dir, JOB, &job, spool::Persist::Atomic).map_err(shown)?;
    let lock = lock(dir).map_err(shown)?;
    spawner.spawn(dir, lock)
}

/// Writes the batch script, closed before this returns: a job cannot execute a file that any
/// process still holds open for writing.
fn write_script(path: &Path, text: &str) -> io::Result<()> {
    let mut script = File::create(path)?;
    script.write_all(text.as_bytes())?;
    // Executed by descriptor as the user, who needs to execute and read it (never to find it:
    // the directory is root's alone).
    script.set_permissions(fs::Permissions::from_mode(0o755))
}

/// Opens and locks the run's directory, which is its supervisor's lock.
fn lock(dir: &Path) -> io::Result<File> {
    let f = File::open(dir)?;
    // SAFETY: plain system call on an owned descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}
