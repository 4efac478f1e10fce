//! Runs the power programs (SuspendProgram, ResumeProgram, ResumeFailProgram) as Slurm's
//! slurmscriptd does (power-save.md §1.17): `argv[0]` the program's base name, one argument, the
//! hostlist; an environment built from scratch; `SLURM_RESUME_FILE` for a resume; killed with
//! its process group after the longest configured timeout. Each run has a thread of its own, so
//! the driver never waits for a program and a hanging one holds only its thread.

use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// Programs running at once; a call beyond this is not run (and logged), so that programs that
/// hang cannot take threads without bound.
pub const MAX_RUNNING: usize = 64;

/// How often a running program is looked at.
const POLL: Duration = Duration::from_millis(50);

/// Programs running now.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// One program run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramRun {
    /// The call's number in the journal.
    pub seq: u64,
    /// `suspend`, `resume` or `resume_fail`, for the log.
    pub program: &'static str,
    /// The program, from the cluster's configuration.
    pub path: String,
    /// Its arguments after `argv[0]`: the hostlist.
    pub args: Vec<String>,
    /// `SLURM_RESUME_FILE`'s content (resume calls only).
    pub resume_file: Option<String>,
    /// Killed after this long; `None` when a timeout is INFINITE.
    pub timeout: Option<Duration>,
    /// The whole environment it gets.
    pub env: Vec<(String, String)>,
    /// Where resume files are written (the daemon's own directory).
    pub spool: PathBuf,
}

/// Starts `run` on a thread of its own; `done` gets its number and how it ended.
pub fn start<M: Send + 'static>(run: ProgramRun, done: Sender<M>, ended: fn(u64, String) -> M) {
    if RUNNING.fetch_add(1, Ordering::SeqCst) >= MAX_RUNNING {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        let _ = done.send(ended(
            run.seq,
            format!("not run: {MAX_RUNNING} power programs are running already"),
        ));
        return;
    }
    let seq = run.seq;
    let spawned = std::thread::Builder::new()
        .name("power-program".into())
        .spawn({
            let done = done.clone();
            move || {
                let outcome = run_to_end(&run);
                RUNNING.fetch_sub(1, Ordering::SeqCst);
                let _ = done.send(ended(run.seq, outcome));
            }
        });
    if let Err(e) = spawned {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        let _ = done.send(ended(seq, format!("not run: no thread for it: {e}")));
    }
}

/// Runs the program to its end (or kills it at its timeout) and says how it ended.
pub fn run_to_end(run: &ProgramRun) -> String {
    if let Err(e) = runnable(Path::new(&run.path)) {
        return format!("cannot run {}: {e}", run.path);
    }
    let file = match &run.resume_file {
        Some(text) => match write_resume_file(&run.spool, run.seq, text) {
            Ok(p) => Some(p),
            Err(e) => return format!("not run: cannot write its resume file: {e}"),
        },
        None => None,
    };
    let outcome = spawn_and_wait(run, file.as_deref());
    if let Some(p) = file {
        // As Slurm's memfd, the file lives as long as the program runs.
        let _ = std::fs::remove_file(p);
    }
    outcome
}

/// Whether `path` may be run as the daemon's user: an absolute path to an executable regular
/// file, owned by root or the daemon's user and writable by no one else, as plugin files are
/// held to (the daemon runs it with its own rights).
fn runnable(path: &Path) -> Result<(), String> {
    if !path.is_absolute() {
        return Err("the path must be absolute".into());
    }
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mode = meta.permissions().mode();
    if mode & 0o111 == 0 {
        return Err("not executable".into());
    }
    // SAFETY: plain system call.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != 0 && meta.uid() != me {
        return Err(format!(
            "owned by uid {}, not root or the daemon's user",
            meta.uid()
        ));
    }
    if mode & 0o022 != 0 {
        return Err("writable by group or others".into());
    }
    Ok(())
}

/// Writes the resume file, readable by the daemon's user only.
fn write_resume_file(spool: &Path, seq: u64, text: &str) -> std::io::Result<PathBuf> {
    use std::io::Write;
    std::fs::create_dir_all(spool)?;
    std::fs::set_permissions(spool, std::fs::Permissions::from_mode(0o700))?;
    let path = spool.join(format!("resume-{seq}.json"));
    let _ = std::fs::remove_file(&path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    f.write_all(text.as_bytes())?;
    Ok(path)
}

fn spawn_and_wait(run: &ProgramRun, resume_file: Option<&Path>) -> String {
    let path = Path::new(&run.path);
    let name = path
        .file_name()
        .map_or_else(|| run.path.clone(), |n| n.to_string_lossy().into_owned());
    let mut cmd = Command::new(path);
    cmd.arg0(&name)
        .args(&run.args)
        .env_clear()
        .envs(run.env.iter().map(|(k, v)| (k, v)))
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group, so the kill at the timeout reaches what it started.
        .process_group(0);
    if let Some(f) = resume_file {
        cmd.env("SLURM_RESUME_FILE", f);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return format!("cannot run {}: {e}", run.path),
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return describe(status),
            Ok(None) => {}
            Err(e) => return format!("lost track of it: {e}"),
        }
        if let Some(limit) = run.timeout
            && started.elapsed() >= limit
        {
            let group = child.id() as i32;
            // SAFETY: signals to the process group of our own child, not yet reaped.
            unsafe {
                libc::killpg(group, libc::SIGTERM);
            }
            std::thread::sleep(Duration::from_millis(10));
            unsafe {
                libc::killpg(group, libc::SIGKILL);
            }
            let _ = child.wait();
            return format!(
                "killed after {} s (the longest power timeout)",
                limit.as_secs()
            );
        }
        std::thread::sleep(POLL);
    }
}

/// `exit 0`, `exit 3`, `signal 9`.
fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, name: &str, body: &str) -> String {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn run(dir: &Path, path: String, timeout: u64) -> ProgramRun {
        ProgramRun {
            seq: 7,
            program: "resume",
            path,
            args: vec!["cloud[1-2]".into()],
            resume_file: Some("{\"jobs\":[],\"all_nodes_resume\":\"cloud[1-2]\"}".into()),
            timeout: Some(Duration::from_secs(timeout)),
            env: vec![("SLURM_CONF".into(), "/etc/c.toml".into())],
            spool: dir.join("spool"),
        }
    }

    #[test]
    fn a_program_gets_slurms_arguments_environment_and_resume_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("seen");
        let body = format!(
            "echo \"$# $1 $SLURM_CONF $HOME\" > {o}; cat \"$SLURM_RESUME_FILE\" >> {o}; exit 3",
            o = out.display()
        );
        let p = script(dir.path(), "resume.sh", &body);
        let outcome = run_to_end(&run(dir.path(), p, 10));
        assert_eq!(outcome, "exit 3");
        let seen = std::fs::read_to_string(&out).unwrap();
        // One argument, the hostlist; the environment is only what was given (no HOME).
        assert_eq!(
            seen,
            "1 cloud[1-2] /etc/c.toml \n{\"jobs\":[],\"all_nodes_resume\":\"cloud[1-2]\"}"
        );
        // The resume file is gone with the program.
        assert!(!dir.path().join("spool/resume-7.json").exists());
    }

    #[test]
    fn a_hanging_program_is_killed_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("late");
        let body = format!("(sleep 3; touch {}) &\nsleep 30", marker.display());
        let p = script(dir.path(), "hang.sh", &body);
        let t0 = Instant::now();
        let outcome = run_to_end(&run(dir.path(), p, 1));
        assert!(outcome.starts_with("killed after 1 s"), "{outcome}");
        assert!(t0.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(3500));
        assert!(!marker.exists(), "its background child outlived the kill");
    }

    #[test]
    fn missing_unsafe_or_relative_programs_are_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope").to_string_lossy().into_owned();
        assert!(run_to_end(&run(dir.path(), missing, 1)).starts_with("cannot run"));
        assert!(run_to_end(&run(dir.path(), "resume.sh".into(), 1)).contains("absolute"));
        let open = script(dir.path(), "open.sh", "exit 0");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(run_to_end(&run(dir.path(), open, 1)).contains("writable by group or others"));
        let plain = script(dir.path(), "plain.sh", "exit 0");
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(run_to_end(&run(dir.path(), plain, 1)).contains("not executable"));
    }
}
