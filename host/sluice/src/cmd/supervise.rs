//! `sluice supervise` and `sluice spawn-supervisors` (hidden): the per-job supervisor, as slurmd
//! starts slurmstepd, and the resident process the daemon asks to fork one per job. Not for
//! people to run.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;

/// Arguments of `sluice supervise`.
#[derive(clap::Args)]
pub struct Args {
    /// The job's spool directory for this run.
    dir: PathBuf,
    /// The inherited, locked descriptor of the run's directory.
    #[arg(long)]
    lock_fd: i32,
}

/// Supervises the job to its end; exits with the supervisor's code.
pub fn run(args: Args) -> anyhow::Result<()> {
    let code = sluice_daemon::run_supervisor(&args.dir, args.lock_fd);
    if code != 0 {
        anyhow::bail!("supervising {} failed (code {code})", args.dir.display());
    }
    Ok(())
}

/// Arguments of `sluice spawn-supervisors`.
#[derive(clap::Args)]
pub struct SpawnArgs {
    /// The inherited descriptor of the spawner's end of the daemon's socket pair.
    #[arg(long, value_parser = clap::value_parser!(i32).range(3..))]
    socket_fd: i32,
    /// The nice value jobs run at (the daemon's).
    #[arg(long, allow_negative_numbers = true)]
    job_nice: i32,
}

/// Forks supervisors on the daemon's requests until the daemon goes.
pub fn spawn(args: SpawnArgs) -> anyhow::Result<()> {
    // SAFETY: the daemon handed this descriptor over for this process to own.
    let socket = unsafe { OwnedFd::from_raw_fd(args.socket_fd) };
    match sluice_daemon::serve_spawner(socket, args.job_nice) {
        0 => Ok(()),
        code => anyhow::bail!("the supervisors' spawner failed (code {code})"),
    }
}
