//! `sluice salloc`: an interactive allocation (salloc's options from the one table, read as
//! srun reads them) and a command run in it, `$SHELL` by default, with the job's `SLURM_*` variables;
//! the allocation ends when the command does, with its exit code.

use std::collections::BTreeMap;
use std::process;

use anyhow::{Context as _, anyhow};

use super::options::{Command, scan};
use super::run::{conn, context};
use super::srun::{allocation, options};

/// Arguments of `sluice salloc`: salloc's own words, read by `cmd/options`, not by clap.
#[derive(clap::Args)]
pub struct Args {
    /// salloc options, then the command and its arguments (default: $SHELL).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    words: Vec<String>,
}

/// Runs `sluice salloc`; exits with the command's exit code.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scanned = scan::command_line(Command::Salloc, &args.words).map_err(|e| anyhow!(e))?;
    // salloc is not inside an allocation: the variables of one around it are not its options.
    let s =
        options::read(&BTreeMap::new(), &scanned.options, context()?).map_err(|e| anyhow!(e))?;
    if s.options.help {
        print!("{}", Command::Salloc.usage());
        return Ok(());
    }
    // Options that shape a step's tasks have nothing to act on: salloc runs no step.
    let mut ignored = s.options.ignored.clone();
    ignored.extend(s.step_only());
    if !ignored.is_empty() {
        eprintln!(
            "salloc: note: accepted with no effect on this machine: --{} (docs/srun.md)",
            ignored.join(", --")
        );
    }
    let argv = if scanned.rest.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        scanned.rest
    };
    let mut client = conn(s.options.state_dir.clone()).client();
    let alloc = allocation::grant(&mut client, &s.options, "interactive", "salloc")?;
    let status = process::Command::new(&argv[0])
        .args(&argv[1..])
        .envs(&alloc.env)
        .status()
        .with_context(|| format!("cannot run {}", argv[0]));
    let code = match &status {
        Ok(st) => std::os::unix::process::ExitStatusExt::signal(st)
            .map_or_else(|| st.code().unwrap_or(1), |sig| 128 + sig),
        Err(_) => 127,
    };
    alloc.end(&mut client, code, "salloc")?;
    status?;
    if code != 0 {
        std::process::exit(code);
    }
    Ok(())
}
