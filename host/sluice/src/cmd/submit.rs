//! `sluice submit` (sbatch): a script with `#SBATCH` lines, or `--wrap`; options as sbatch names them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Parser;
use sluice_api::{JobSubmitted, SubmitRequest};

use super::daemon_client::{Conn, print_json};

/// sbatch's options. `#SBATCH` lines in the script are parsed with the same definitions;
/// the command line wins over them.
#[derive(Parser, Clone, Debug, Default)]
#[command(no_binary_name = true)]
pub struct Opts {
    /// Job name.
    #[arg(short = 'J', long = "job-name")]
    job_name: Option<String>,
    /// Partition(s), comma-separated.
    #[arg(short = 'p', long)]
    partition: Option<String>,
    /// Account.
    #[arg(short = 'A', long)]
    account: Option<String>,
    /// QOS.
    #[arg(short = 'q', long)]
    qos: Option<String>,
    /// Nodes: N or MIN-MAX.
    #[arg(short = 'N', long)]
    nodes: Option<String>,
    /// Tasks.
    #[arg(short = 'n', long)]
    ntasks: Option<u32>,
    /// CPUs per task.
    #[arg(short = 'c', long = "cpus-per-task")]
    cpus_per_task: Option<u32>,
    /// Memory per node (MB, or with K/M/G/T suffix).
    #[arg(long)]
    mem: Option<String>,
    /// Time limit (minutes, MM:SS, HH:MM:SS, D-HH…).
    #[arg(short = 't', long)]
    time: Option<String>,
    /// Generic resources per node (gpu:2).
    #[arg(long)]
    gres: Option<String>,
    /// GPUs in total ([type:]count).
    #[arg(short = 'G', long)]
    gpus: Option<String>,
    /// Licenses (name:count,…).
    #[arg(short = 'L', long)]
    licenses: Option<String>,
    /// Node features.
    #[arg(short = 'C', long)]
    constraint: Option<String>,
    /// Whole nodes.
    #[arg(long)]
    exclusive: bool,
    /// Nice value.
    #[arg(long, allow_hyphen_values = true)]
    nice: Option<i32>,
    /// Begin time: Unix seconds, `now+N[s|m|h|d]`.
    #[arg(short = 'b', long)]
    begin: Option<String>,
    /// Dependencies (afterok:ID[:ID],afterany:ID…).
    #[arg(short = 'd', long)]
    dependency: Option<String>,
    /// Submit held.
    #[arg(short = 'H', long)]
    hold: bool,
    /// Advance reservation.
    #[arg(long)]
    reservation: Option<String>,
    /// Output file pattern (%j = job id, %x = name, %u = user).
    #[arg(short = 'o', long)]
    output: Option<String>,
    /// Error file pattern.
    #[arg(short = 'e', long)]
    error: Option<String>,
    /// Requeue when a node fails or the daemon restarts.
    #[arg(long, overrides_with = "no_requeue")]
    requeue: bool,
    /// Never requeue.
    #[arg(long = "no-requeue")]
    no_requeue: bool,
    /// Working directory.
    #[arg(short = 'D', long)]
    chdir: Option<PathBuf>,
}

/// Arguments of `sluice submit`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    opts: Opts,
    /// Wrap a command line in a `/bin/sh` script.
    #[arg(long)]
    wrap: Option<String>,
    /// Print only the job id (sbatch --parsable).
    #[arg(long)]
    parsable: bool,
    /// Do not send the submitting environment (sbatch --export=NONE).
    #[arg(long)]
    export_none: bool,
    #[command(flatten)]
    conn: Conn,
    /// The batch script (`-` or nothing with --wrap).
    script: Option<PathBuf>,
}

fn merge(cli: Opts, file: Opts) -> Opts {
    macro_rules! pick {
        ($($f:ident),*) => { Opts { $($f: cli.$f.or(file.$f),)* exclusive: cli.exclusive || file.exclusive, hold: cli.hold || file.hold, requeue: cli.requeue || file.requeue, no_requeue: cli.no_requeue || file.no_requeue } };
    }
    pick!(
        job_name,
        partition,
        account,
        qos,
        nodes,
        ntasks,
        cpus_per_task,
        mem,
        time,
        gres,
        gpus,
        licenses,
        constraint,
        nice,
        begin,
        dependency,
        reservation,
        output,
        error,
        chdir
    )
}

/// The options of `#SBATCH` lines before the first command.
fn script_opts(script: &str) -> anyhow::Result<Opts> {
    let mut words = Vec::new();
    for (i, line) in script.lines().enumerate() {
        let t = line.trim();
        if i == 0 && t.starts_with("#!") {
            continue;
        }
        if let Some(rest) = t.strip_prefix("#SBATCH") {
            words.extend(rest.split_whitespace().map(String::from));
        } else if t.is_empty() || t.starts_with('#') {
            continue;
        } else {
            break;
        }
    }
    Opts::try_parse_from(words).context("in the script's #SBATCH lines")
}

/// Memory as sbatch reads it: MB by default, K/M/G/T suffixes.
pub fn parse_mem(text: &str) -> anyhow::Result<u64> {
    let t = text.trim().to_ascii_uppercase();
    let (num, mult) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 1.0 / 1024.0),
        Some('M') => (&t[..t.len() - 1], 1.0),
        Some('G') => (&t[..t.len() - 1], 1024.0),
        Some('T') => (&t[..t.len() - 1], 1024.0 * 1024.0),
        _ => (t.as_str(), 1.0),
    };
    let n: f64 = num
        .parse()
        .with_context(|| format!("--mem={text}: expected a size like 4000, 4G or 512M"))?;
    Ok((n * mult).ceil() as u64)
}

/// `--begin` as Unix seconds: a number, `now`, or `now+N[s|m|h|d]`.
pub fn parse_begin(text: &str, now: i64) -> anyhow::Result<i64> {
    let t = text.trim();
    if let Ok(v) = t.parse() {
        return Ok(v);
    }
    let Some(rest) = t.strip_prefix("now") else {
        bail!("--begin={text}: expected Unix seconds or now+N[s|m|h|d]");
    };
    if rest.is_empty() {
        return Ok(now);
    }
    let rest = rest
        .strip_prefix('+')
        .with_context(|| format!("--begin={text}: expected now+N"))?;
    let (n, unit) = match rest.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => (&rest[..rest.len() - 1], c),
        _ => (rest, 's'),
    };
    let n: i64 = n
        .parse()
        .with_context(|| format!("--begin={text}: expected now+N"))?;
    let mult = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => bail!("--begin={text}: unit must be s, m, h or d"),
    };
    Ok(now + n * mult)
}

/// Builds the request from options, a script's text and the working directory.
pub fn build(
    o: Opts,
    script: String,
    default_name: String,
    env: BTreeMap<String, String>,
) -> anyhow::Result<SubmitRequest> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs() as i64;
    let (min_nodes, max_nodes) = match &o.nodes {
        None => (None, None),
        Some(n) => match n.split_once('-') {
            Some((a, b)) => (Some(a.parse()?), Some(b.parse()?)),
            None => (
                Some(
                    n.parse()
                        .with_context(|| format!("--nodes={n}: expected N or MIN-MAX"))?,
                ),
                None,
            ),
        },
    };
    let workdir = match &o.chdir {
        Some(d) => d.clone(),
        None => std::env::current_dir()?,
    };
    Ok(SubmitRequest {
        name: Some(o.job_name.unwrap_or(default_name)),
        partition: o.partition,
        account: o.account,
        qos: o.qos,
        min_nodes,
        max_nodes,
        ntasks: o.ntasks,
        cpus_per_task: o.cpus_per_task,
        mem_mb: o.mem.as_deref().map(parse_mem).transpose()?,
        time_limit: o
            .time
            .as_deref()
            .map(|t| {
                sluice_cluster::time::parse_duration(t).with_context(|| {
                    format!("--time={t}: expected minutes, MM:SS, HH:MM:SS or D-HH[:MM[:SS]]")
                })
            })
            .transpose()?,
        gres: o.gres,
        gpus: o.gpus,
        licenses: o.licenses,
        constraint: o.constraint,
        exclusive: o.exclusive,
        nice: o.nice.unwrap_or(0),
        begin: o
            .begin
            .as_deref()
            .map(|b| parse_begin(b, now))
            .transpose()?,
        dependency: o.dependency,
        hold: o.hold,
        reservation: o.reservation,
        requeue: if o.no_requeue {
            Some(false)
        } else if o.requeue {
            Some(true)
        } else {
            None
        },
        script,
        workdir: workdir.to_string_lossy().into_owned(),
        output: o.output,
        error: o.error,
        env,
    })
}

/// Runs `sluice submit`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let (script, name, file_opts) = match (&args.wrap, &args.script) {
        (Some(cmd), None) => (
            format!("#!/bin/sh\n# This script was created by sluice --wrap\n{cmd}\n"),
            "wrap".to_string(),
            Opts::default(),
        ),
        (Some(_), Some(_)) => bail!("give either a script or --wrap, not both"),
        (None, None) => {
            bail!("no script: pass a batch script file (with #SBATCH lines) or --wrap \"command\"")
        }
        (None, Some(p)) => {
            let text = if p.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(p)
                    .with_context(|| format!("{}: cannot read the batch script", p.display()))?
            };
            if !text.starts_with("#!") {
                bail!(
                    "{}: a batch script must start with a #! line (e.g. #!/bin/bash)",
                    p.display()
                );
            }
            let opts = script_opts(&text).with_context(|| p.display().to_string())?;
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sbatch".into());
            (text, name, opts)
        }
    };
    let opts = merge(args.opts, file_opts);
    let env = if args.export_none {
        BTreeMap::new()
    } else {
        std::env::vars().collect()
    };
    let req = build(opts, script, name, env)?;
    let answer: JobSubmitted = args.conn.client().post("/v1/jobs", &req)?;
    if args.conn.json {
        print_json(&answer);
    } else if args.parsable {
        println!("{}", answer.job_id);
    } else {
        println!("Submitted batch job {}", answer.job_id);
    }
    Ok(())
}
