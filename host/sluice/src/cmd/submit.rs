//! `sluice submit` (sbatch): a script with `#SBATCH` lines, or `--wrap`, with sbatch's options
//! read as sbatch reads them (`sbatch/`); `--wait` follows the job to its end.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context as _, anyhow, bail};
use sluice_api::{Job, JobSubmitted, JobWillRun};
use sluice_client::segment;

use super::clock::Zone;
use super::daemon_client::{Conn, print_json};
use super::options::{Command, Context, scan};
use super::sbatch::environment;
use super::sbatch::options;
use super::sbatch::request::{self, Inputs};

/// Arguments of `sluice submit`: sbatch's own words, read by `cmd/options`, not by clap.
#[derive(clap::Args)]
pub struct Args {
    /// sbatch options, then the script and its arguments (see `sluice submit --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    words: Vec<String>,
}

/// Slurm's checks of a script's text before its directives are read.
fn check_script(name: &str, text: &str) -> anyhow::Result<()> {
    if text.is_empty() {
        bail!("{name}: Batch script is empty!");
    }
    if !text.starts_with("#!") {
        bail!(
            "{name}: This does not look like a batch script.  The first line must start with #! followed by the path to an interpreter.\nFor instance: #!/bin/sh"
        );
    }
    if text.contains('\0') {
        bail!(
            "{name}: The SLURM controller does not allow scripts that contain a NULL character '\\0'."
        );
    }
    if text.contains("\r\n") {
        bail!(
            "{name}: Batch script contains DOS line breaks (\\r\\n) instead of expected UNIX line breaks (\\n)."
        );
    }
    Ok(())
}

/// Runs `sluice submit`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scanned = scan::command_line(Command::Sbatch, &args.words).map_err(|e| anyhow!(e))?;
    let cx = Context {
        now: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs() as i64,
        zone: Zone::Local,
    };
    // The command line alone first: --help and --wrap decide where the script comes from.
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let variables = environment::options(&env);
    let cli = options::read("", None, &[], &scanned.options, cx).map_err(|e| anyhow!(e))?;
    if cli.help {
        print!("{}", Command::Sbatch.usage());
        return Ok(());
    }
    let cwd = std::env::current_dir()?;
    let (script, name, file) = match (&cli.wrap, scanned.rest.first()) {
        (Some(_), Some(_)) => bail!("Script arguments are not permitted with the --wrap option."),
        (Some(cmd), None) => (
            format!("#!/bin/sh\n# This script was created by sluice submit --wrap\n{cmd}\n"),
            "wrap".to_string(),
            "wrap".to_string(),
        ),
        (None, Some(path)) => {
            let text = if path == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(path)
                    .with_context(|| format!("{path}: unable to open file"))?
            };
            let name = PathBuf::from(path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sbatch".into());
            (text, name, path.clone())
        }
        (None, None) => {
            if std::io::stdin().is_terminal() {
                bail!(
                    "no script: give a batch script file (with #SBATCH lines), pipe one on standard input, or use --wrap \"command\""
                );
            }
            let text = std::io::read_to_string(std::io::stdin())?;
            (text, "sbatch".to_string(), "(stdin)".to_string())
        }
    };
    check_script(&file, &script)?;
    let directives = (cli.wrap.is_none()).then_some(script.as_str());
    let mut opts = options::read(&file, directives, &variables, &scanned.options, cx)
        .map_err(|e| anyhow!(e))?;
    if let Some(list) = &opts.nodelist {
        opts.nodelist = Some(request::resolve_nodelist(list, &cwd).map_err(|e| anyhow!(e))?);
    }
    if let Some(file) = &opts.nodefile {
        opts.nodelist = Some(request::read_node_file(file, &cwd).map_err(|e| anyhow!(e))?);
    }
    let command = (cli.wrap.is_none() && file != "(stdin)" && file != "-")
        .then(|| cwd.join(&file).to_string_lossy().into_owned());
    let export_file = opts
        .export_file
        .as_deref()
        .map(|p| request::read_export_file(p, &cwd))
        .transpose()
        .map_err(|e| anyhow!(e))?;
    let (mut req, warnings) = request::build(
        &opts,
        Inputs {
            script,
            default_name: name,
            cwd,
            env,
            export_file,
            command,
        },
    )
    .map_err(|e| anyhow!(e))?;
    req.script_args = scanned.rest.iter().skip(1).cloned().collect();
    // As sbatch, whatever --export says: where the job came from.
    req.env.insert(
        "SLURM_SUBMIT_HOST".into(),
        sluice_client::identity::host_name(),
    );
    for w in warnings {
        eprintln!("sluice submit: warning: {w}");
    }
    if !opts.ignored.is_empty() {
        eprintln!(
            "sluice submit: note: accepted with no effect on this machine: --{} (docs/sbatch.md)",
            opts.ignored.join(", --")
        );
    }
    let conn = Conn {
        state_dir: opts
            .state_dir
            .clone()
            .or_else(|| std::env::var_os("SLUICE_STATE_DIR").map(PathBuf::from)),
        json: opts.json,
    };
    let mut client = conn.client();
    if opts.test_only {
        let answer: JobWillRun = client.post("/v1/jobs/will-run", &req)?;
        if conn.json {
            print_json(&answer);
        } else {
            eprintln!("sbatch: {}", will_run_line(&answer, Zone::Local));
        }
        return Ok(());
    }
    let answer: JobSubmitted = client.post("/v1/jobs", &req)?;
    if conn.json {
        print_json(&answer);
    } else if opts.parsable {
        println!("{}", answer.job_id);
    } else {
        println!("Submitted batch job {}", answer.job_id);
    }
    if opts.wait {
        let code = wait_for(&conn, answer.job_id)?;
        std::process::exit(code);
    }
    Ok(())
}

/// sbatch's `--test-only` line: `Job 7 to start at 2026-11-26T13:45:00 using 4 processors on
/// nodes n[1-2] in partition batch`.
fn will_run_line(answer: &JobWillRun, zone: Zone) -> String {
    format!(
        "Job {} to start at {} using {} processors on nodes {} in partition {}",
        answer.job_id,
        zone.iso(answer.start_time),
        answer.processors,
        answer.nodes,
        answer.partition
    )
}

/// `--wait`: polls the job until it ends; its exit code is sbatch's (1 when it never ran).
fn wait_for(conn: &Conn, job: u64) -> anyhow::Result<i32> {
    let mut client = conn.client();
    loop {
        let j: Job = client.get(&format!("/v1/jobs/{}", segment(&job.to_string())))?;
        if !matches!(
            j.state.as_str(),
            "PENDING" | "CONFIGURING" | "RUNNING" | "COMPLETING"
        ) {
            return Ok(j.exit_code.unwrap_or(1));
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_only_line_is_sbatchs() {
        let answer = JobWillRun {
            job_id: 7,
            start_time: 1_795_700_700,
            processors: 8,
            nodes: "n[1-2]".into(),
            partition: "batch".into(),
        };
        assert_eq!(
            will_run_line(&answer, Zone::Utc),
            "Job 7 to start at 2026-11-26T13:45:00 using 8 processors on nodes n[1-2] in partition batch"
        );
    }
}
