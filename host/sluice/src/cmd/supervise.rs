//! `sluice supervise` (hidden): the per-job supervisor the daemon starts for each job, as
//! slurmd starts slurmstepd. Not for people to run.

use std::path::PathBuf;

/// Arguments of `sluice supervise`.
#[derive(clap::Args)]
pub struct Args {
    /// The job's spool directory for this run.
    dir: PathBuf,
    /// The inherited, locked descriptor of the directory's lock file.
    #[arg(long)]
    lock_fd: i32,
}

/// Supervises the job to its end; exits with the supervisor's code.
pub fn run(args: Args) -> anyhow::Result<()> {
    let code = sluice_daemon::supervisor::run(&args.dir, args.lock_fd);
    if code != 0 {
        anyhow::bail!("supervising {} failed (code {code})", args.dir.display());
    }
    Ok(())
}
