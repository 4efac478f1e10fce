//! `sluice run` (srun inside an allocation): asks the daemon for a step of the job
//! (`--jobid`, else `SLURM_JOB_ID`), runs the command here with the step's environment, and
//! reports its exit code; the step's CPUs come from the job's allocation.

use std::process::Command;

use anyhow::{Context, bail};
use sluice_api::{StepEndRequest, StepEnded, StepRequest, StepStarted};

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice run`.
#[derive(clap::Args)]
pub struct Args {
    /// The job whose allocation the step runs in (default: $SLURM_JOB_ID).
    #[arg(long, env = "SLURM_JOB_ID")]
    jobid: Option<u64>,
    /// Nodes of the step.
    #[arg(short = 'N', long, default_value_t = 1)]
    nodes: u32,
    /// CPUs per node.
    #[arg(short = 'c', long = "cpus-per-task", default_value_t = 1)]
    cpus: u32,
    #[command(flatten)]
    conn: Conn,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

/// Runs `sluice run`; exits with the command's exit code.
pub fn run(args: Args) -> anyhow::Result<()> {
    let Some(job) = args.jobid else {
        bail!(
            "no allocation: pass --jobid ID or run inside a batch job (SLURM_JOB_ID); submit one with `sluice submit`"
        );
    };
    let mut c = args.conn.client();
    let request = StepRequest {
        name: args.command[0].clone(),
        nodes: args.nodes,
        cpus_per_node: args.cpus,
    };
    let step: StepStarted = c.post(&format!("/v1/jobs/{job}/steps"), &request)?;
    let mut cmd = Command::new(&args.command[0]);
    cmd.args(&args.command[1..]);
    cmd.envs(&step.env);
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {}", args.command[0]));
    let code = match &status {
        Ok(s) => s.code().unwrap_or(128),
        Err(_) => 127,
    };
    let end: StepEnded = c.post(
        &format!("/v1/jobs/{job}/steps/{}/end", step.step_id),
        &StepEndRequest { exit_code: code },
    )?;
    if args.conn.json {
        print_json(&end);
    }
    status?;
    if code != 0 {
        std::process::exit(code);
    }
    Ok(())
}
