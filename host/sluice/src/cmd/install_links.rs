//! `sluice install-links DIR`: links named after Slurm's commands (sbatch, srun, squeue, …) to
//! this binary, which acts as each when called by its name; a file of someone else's by one of
//! those names is never overwritten.

use std::path::PathBuf;

use anyhow::Context as _;
use sluice_daemon::{LinkChange, install_slurm_commands};

/// Arguments of `sluice install-links`.
#[derive(clap::Args)]
pub struct Args {
    /// The directory to make the links in (created if missing), e.g. /usr/local/bin.
    dir: PathBuf,
}

/// Runs `sluice install-links`, printing what it did with each name.
pub fn run(args: Args) -> anyhow::Result<()> {
    let me = std::env::current_exe().context("this program's path")?;
    for linked in install_slurm_commands(&args.dir, &me)? {
        let path = linked.path.display();
        match linked.change {
            LinkChange::Created => println!("created {path} -> {}", me.display()),
            LinkChange::Replaced(old) => {
                println!(
                    "replaced {path} -> {} (was {})",
                    me.display(),
                    old.display()
                )
            }
            LinkChange::Kept => println!("kept {path} -> {}", me.display()),
        }
    }
    Ok(())
}
