//! `sluice run` / `sluice srun`: srun's options (the one table's, `cmd/options`, with the
//! variables srun reads, `srun/options.rs`)
//! and what each task runs (`--multi-prog`), then inside an allocation (`--jobid`,
//! `SLURM_JOB_ID`) a step whose tasks run across the allocation's nodes; outside one, an
//! interactive allocation of the same shape made first and ended with the tasks' exit code.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{anyhow, bail};

use super::clock::Zone;
use super::daemon_client::Conn;
use super::options::{Command, Context, scan};
use super::srun::allocation;
use super::srun::local::Local;
use super::srun::options::{self, Srun};
use super::srun::program::{self, Program};
use super::srun::step::{self, StepSpec};

/// Arguments of `sluice run`: srun's own words, read by `cmd/options`, not by clap.
#[derive(clap::Args)]
pub struct Args {
    /// srun options, then the command and its arguments (see `sluice srun --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    words: Vec<String>,
}

/// The time now and the local clock face, for option values that are dates.
pub fn context() -> anyhow::Result<Context> {
    Ok(Context {
        now: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs() as i64,
        zone: Zone::Local,
    })
}

/// The daemon `--state-dir` or `SLUICE_STATE_DIR` names.
pub fn conn(state_dir: Option<PathBuf>) -> Conn {
    Conn {
        state_dir: state_dir.or_else(|| std::env::var_os("SLUICE_STATE_DIR").map(PathBuf::from)),
        json: false,
    }
}

/// Runs `sluice run`; exits with the highest exit code of the tasks.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scanned = scan::command_line(Command::Srun, &args.words).map_err(|e| anyhow!(e))?;
    let cx = context()?;
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let mut s = options::read(&env, &scanned.options, cx).map_err(|e| anyhow!(e))?;
    if s.options.help {
        print!("{}", Command::Srun.usage());
        return Ok(());
    }
    let argv = scanned.rest;
    if argv.is_empty() {
        bail!("No command given to execute.");
    }
    if !s.options.ignored.is_empty() {
        eprintln!(
            "srun: note: accepted with no effect on this machine: --{} (docs/srun.md)",
            s.options.ignored.join(", --")
        );
    }
    let conn = conn(s.options.state_dir.clone());
    let mut client = conn.client();
    let code = match s.options.jobid {
        Some(job) => {
            if s.env_nodes.is_none() {
                attach(&mut client, job, &mut s)?;
            }
            let program = program_of(&mut s, &argv);
            in_allocation(&mut client, job, &s, &program, &argv, &env)?
        }
        None => {
            let program = program_of(&mut s, &argv);
            let (shape, _) = s.shape();
            let mut opts = s.options.clone();
            opts.nodes = Some((shape.nodes, None));
            opts.ntasks = Some(shape.tasks);
            let name = PathBuf::from(&argv[0])
                .file_name()
                .map_or_else(|| argv[0].clone(), |n| n.to_string_lossy().into_owned());
            let alloc = allocation::grant(&mut client, &opts, &name, "srun")?;
            // Inside it, srun reads the allocation's variables as it would in a batch job.
            let mut inner_env = env.clone();
            inner_env.extend(alloc.env.clone());
            let inner = options::read(&inner_env, &scanned.options, cx).map_err(|e| anyhow!(e))?;
            let result = in_allocation(&mut client, alloc.job, &inner, &program, &argv, &inner_env);
            let code = *result.as_ref().unwrap_or(&1);
            alloc.end(&mut client, code, "srun")?;
            result?
        }
    };
    if code != 0 {
        std::process::exit(code);
    }
    Ok(())
}

/// `--jobid` from outside the job's own environment: the allocation's shape comes from the
/// daemon's view of the job, as srun takes it from the controller.
fn attach(client: &mut sluice_client::Client, job: u64, s: &mut Srun) -> anyhow::Result<()> {
    let j: sluice_api::Job = client.get(&format!("/v1/jobs/{job}"))?;
    s.env_nodes = u32::try_from(j.nodes).ok().filter(|n| *n > 0);
    s.env_ntasks = j.request.ntasks;
    Ok(())
}

/// What each task runs; a `--multi-prog` file that cannot be read or is malformed ends srun
/// with srun's messages.
fn program_of(s: &mut Srun, argv: &[String]) -> Program {
    program::read(s, argv).unwrap_or_else(|messages| {
        for line in messages.lines() {
            eprintln!("srun: error: {line}");
        }
        std::process::exit(1)
    })
}

/// Runs the step in job `job`; returns its exit code.
fn in_allocation(
    client: &mut sluice_client::Client,
    job: u64,
    s: &Srun,
    program: &Program,
    argv: &[String],
    env: &BTreeMap<String, String>,
) -> anyhow::Result<i32> {
    let (shape, warnings) = s.shape();
    for w in warnings {
        eprintln!("srun: warning: {w}");
    }
    let argvs = program.argvs(shape.tasks).map_err(|e| anyhow!(e))?;
    let spec = StepSpec {
        shape: &shape,
        name: &argv[0],
        argvs: &argvs,
        stdio: &s.stdio(),
        writing: s.writing(),
    };
    step::run(client, job, &spec, env, &Local)
}
