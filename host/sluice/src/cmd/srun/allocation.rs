//! An interactive allocation (salloc, and srun outside a job): a job whose script reports
//! its environment and then waits on a FIFO until the command run in the allocation ends,
//! then exits with that command's exit code, so the job ends as the command did.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use sluice_api::{CancelRequest, Job, JobCancelled, JobSubmitted};
use sluice_client::{Client, segment};

use crate::cmd::options::Options;
use crate::cmd::sbatch::request::{self, Inputs};

/// A granted allocation: the job and the variables its batch environment has.
pub struct Allocation {
    /// The job holding the allocation.
    pub job: u64,
    /// Its `SLURM_*` variables (and `SLUICE_STATE_DIR`), as a batch script sees them.
    pub env: BTreeMap<String, String>,
    spool: Spool,
}

/// The private directory of the FIFO and the environment file, removed when dropped.
struct Spool(PathBuf);

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Set by Ctrl-C (SIGINT) once [`outlive_interrupts`] is in place.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Notes the interrupt; an atomic store is all a signal handler may safely do here.
extern "C" fn note_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Keeps this process alive through Ctrl-C (SIGINT, which the terminal sends to the commands
/// run in the allocation too) so that it still releases the allocation when they end, as
/// salloc does; while the allocation is pending, Ctrl-C withdraws it. A handler rather than
/// `SIG_IGN`, since an ignored signal would stay ignored in the commands it starts.
fn outlive_interrupts() {
    // SAFETY: installs a handler that only stores to an atomic; `action` is fully initialised.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = note_interrupt as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// States in which a job has not ended.
fn live(state: &str) -> bool {
    matches!(state, "PENDING" | "CONFIGURING" | "RUNNING" | "COMPLETING")
}

/// The holding script: it writes its environment where the client reads it, then blocks on
/// the FIFO until the client writes the exit code.
fn holding_script(dir: &Path) -> String {
    let d = dir.to_string_lossy();
    format!(
        "#!/bin/sh\n# sluice: holds this interactive allocation until its command ends.\nenv > '{d}/env.tmp' && mv '{d}/env.tmp' '{d}/env'\nread code < '{d}/release'\nexit \"${{code:-0}}\"\n"
    )
}

/// Asks for an allocation shaped by `opts` (its output goes nowhere), waits until it runs,
/// and returns it; `who` (`salloc`, `srun`) names the messages on standard error.
pub fn grant(
    client: &mut Client,
    opts: &Options,
    default_name: &str,
    who: &str,
) -> anyhow::Result<Allocation> {
    let dir = std::env::temp_dir().join(format!(
        "sluice-alloc-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_nanos()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let spool = Spool(dir.clone());
    let fifo = CString::new(dir.join("release").as_os_str().as_bytes())?;
    // SAFETY: `fifo` is a NUL-terminated path that lives across the call.
    if unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) } != 0 {
        bail!("cannot create a FIFO in {}", dir.display());
    }
    let mut o = opts.clone();
    o.output = Some("/dev/null".into());
    o.error = None;
    o.input = None;
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let (req, warnings) = request::build(
        &o,
        Inputs {
            script: holding_script(&dir),
            default_name: default_name.to_string(),
            cwd: std::env::current_dir()?,
            env,
            export_file: None,
            command: None,
        },
    )
    .map_err(|e| anyhow!(e))?;
    for w in warnings {
        eprintln!("{who}: warning: {w}");
    }
    outlive_interrupts();
    let answer: JobSubmitted = client.post("/v1/jobs", &req)?;
    let job = answer.job_id;
    let mut told_pending = false;
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("env")) {
            eprintln!("{who}: Granted job allocation {job}");
            return Ok(Allocation {
                job,
                env: batch_vars(&text),
                spool,
            });
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            let _: JobCancelled =
                client.post(&format!("/v1/jobs/{job}/cancel"), &CancelRequest::default())?;
            bail!("Job allocation {job} has been revoked");
        }
        let j: Job = client.get(&format!("/v1/jobs/{}", segment(&job.to_string())))?;
        if !live(&j.state) {
            bail!(
                "job {job} ended before its allocation was granted ({})",
                j.state
            );
        }
        if j.state == "PENDING" && !told_pending {
            eprintln!("{who}: Pending job allocation {job}");
            eprintln!("{who}: job {job} queued and waiting for resources");
            told_pending = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The `SLURM_*` and `SLUICE_*` lines of `env`'s output.
fn batch_vars(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| l.starts_with("SLURM_") || l.starts_with("SLUICE_"))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl Allocation {
    /// Ends the allocation with `code` as its job's exit code (the holding script exits with
    /// it) and waits, ten seconds at most, until the daemon has recorded the end.
    pub fn end(self, client: &mut Client, code: i32, who: &str) -> anyhow::Result<()> {
        eprintln!("{who}: Relinquishing job allocation {}", self.job);
        // Non-blocking: with no reader (the job was cancelled or timed out) there is nothing
        // to release.
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.spool.0.join("release"));
        if let Ok(mut f) = opened {
            let _ = writeln!(f, "{code}");
        }
        let path = format!("/v1/jobs/{}", segment(&self.job.to_string()));
        for _ in 0..100 {
            let j: Job = client.get(&path)?;
            if !live(&j.state) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_jobs_variables_are_taken() {
        let vars = batch_vars("PATH=/bin\nSLURM_JOB_ID=4\nSLUICE_STATE_DIR=/s\nX=SLURM_Y=1\n");
        assert_eq!(vars.len(), 2);
        assert_eq!(vars["SLURM_JOB_ID"], "4");
    }

    #[test]
    fn the_holding_script_waits_on_the_fifo() {
        let s = holding_script(Path::new("/tmp/a"));
        assert!(s.starts_with("#!/bin/sh\n"));
        assert!(s.contains("read code < '/tmp/a/release'"));
    }
}
