//! `sluice acct` (sacct): ended jobs from the daemon's accounting store, with sacct's options
//! `-j`, `-u`, `-a`, `-A`, `-S`/`-E` (Slurm's time forms), `-s`, `-o/--format` (sacct's field
//! names, `%N` widths), `-b`, `-X`, `-n`, `-p`, `-P`, `--json`. As sacct, jobs since 00:00 today
//! unless `-S` or `-j` says otherwise; your own jobs unless you are root or an admin (`-a`/`-u`
//! ask for others', which the daemon grants only to admins).

use anyhow::{Context, bail};
use sluice_api::{AcctAnswer, AcctJob, AcctQuery, AcctStep};
use sluice_daemon::identity::Identity;

use super::clock::{Zone, parse_past_time};
use super::daemon_client::{Conn, print_json};

/// sacct's default columns.
pub const DEFAULT_FORMAT: &str = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
/// sacct `-b`'s columns.
pub const BRIEF_FORMAT: &str = "JobID,State,ExitCode";

/// Arguments of `sluice acct`.
#[derive(clap::Args)]
pub struct Args {
    /// Only these jobs (comma-separated ids; `ID.STEP` selects the job).
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<String>,
    /// Only these users' jobs (comma-separated names).
    #[arg(short = 'u', long = "user", alias = "uid")]
    user: Option<String>,
    /// Every user's jobs (admins; others see their own).
    #[arg(short = 'a', long = "allusers")]
    all_users: bool,
    /// Only jobs charged to these accounts (comma-separated).
    #[arg(short = 'A', long = "accounts")]
    accounts: Option<String>,
    /// Jobs that ended at or after this time (Slurm's forms: `2026-11-26T08:00`, `now-2hours`,
    /// `08:00`, `1125`, `midnight`); default 00:00 today, or the epoch with `-j`.
    #[arg(short = 'S', long = "starttime")]
    start: Option<String>,
    /// Jobs eligible at or before this time (same forms); default now.
    #[arg(short = 'E', long = "endtime")]
    end: Option<String>,
    /// Only jobs in these states (CD,F,TO… or names: COMPLETED, FAILED, CANCELLED, TIMEOUT,
    /// NODE_FAIL, …).
    #[arg(short = 's', long = "state")]
    states: Option<String>,
    /// Columns with sacct's field names, `%N` for a width (`JobID,JobName%20,State`).
    #[arg(short = 'o', long = "format")]
    format: Option<String>,
    /// JobID, State and ExitCode only.
    #[arg(short = 'b', long = "brief")]
    brief: bool,
    /// Jobs only, not their steps.
    #[arg(short = 'X', long = "allocations")]
    allocations: bool,
    /// No header.
    #[arg(short = 'n', long = "noheader")]
    noheader: bool,
    /// `|` after every field.
    #[arg(short = 'p', long = "parsable")]
    parsable: bool,
    /// `|` between fields.
    #[arg(short = 'P', long = "parsable2")]
    parsable2: bool,
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice acct`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let query = query(&args, now, &Identity::current())?;
    let format = args.format.as_deref().unwrap_or(if args.brief {
        BRIEF_FORMAT
    } else {
        DEFAULT_FORMAT
    });
    let columns = columns(format)?;
    let path = format!("/v1/accounting?{}", serde_urlencoded_query(&query));
    let answer: AcctAnswer = args
        .conn
        .client()
        .get(&path)
        .context("reading the accounting store")?;
    if answer.truncated {
        eprintln!(
            "sluice acct: more than {} jobs match; showing the first (narrow it with -S, -j, -u or -s)",
            AcctAnswer::MAX_JOBS
        );
    }
    if args.conn.json {
        print_json(&answer);
        return Ok(());
    }
    let style = if args.parsable2 {
        Style::Parsable { trailing: false }
    } else if args.parsable {
        Style::Parsable { trailing: true }
    } else {
        Style::Fixed
    };
    let zone = Zone::Local;
    print!(
        "{}",
        render(
            &answer.jobs,
            &columns,
            style,
            !args.noheader,
            !args.allocations,
            zone
        )
    );
    Ok(())
}

/// The query string of `q`, percent-encoded.
fn serde_urlencoded_query(q: &AcctQuery) -> String {
    let mut pairs = Vec::new();
    let mut add = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            pairs.push(format!("{k}={}", encode(&v)));
        }
    };
    add("jobs", q.jobs.clone());
    add("users", q.users.clone());
    add("accounts", q.accounts.clone());
    add("states", q.states.clone());
    add("start", q.start.map(|t| t.to_string()));
    add("end", q.end.map(|t| t.to_string()));
    pairs.join("&")
}

/// Percent-encodes everything but unreserved characters and commas.
fn encode(v: &str) -> String {
    v.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The daemon query the options ask for, with times resolved as sacct resolves them.
fn query(args: &Args, now: i64, me: &Identity) -> anyhow::Result<AcctQuery> {
    let time = |flag: &str, text: &str| {
        parse_past_time(text, now, Zone::Local).with_context(|| {
            format!(
                "{flag} {text}: invalid time specification; expected Slurm's forms \
                 (YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], HH:MM[:SS], now[-N[units]], midnight, …)"
            )
        })
    };
    let start = match args.start.as_deref() {
        Some(t) => Some(time("-S", t)?),
        None if args.jobs.is_some() => None,
        None => Some(time("-S", "midnight")?),
    };
    // sacct's -E defaults to now: a job still waiting for its --begin when it was cancelled
    // was never eligible.
    let end = match args.end.as_deref() {
        Some(t) => time("-E", t)?,
        None => now,
    };
    if start.is_some_and(|s| end < s) {
        bail!("-E is before -S: the window is empty");
    }
    // sacct: root sees everyone's jobs, anyone else their own unless -a or -u says otherwise.
    let users = match (&args.user, args.all_users || me.uid == 0) {
        (Some(u), _) => Some(u.clone()),
        (None, true) => None,
        (None, false) => Some(me.user.clone()),
    };
    Ok(AcctQuery {
        jobs: args.jobs.clone(),
        users,
        accounts: args.accounts.clone(),
        states: args.states.clone(),
        start,
        end: Some(end),
    })
}

/// How rows are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    /// Fixed-width columns with a dashed line under the header, as sacct's default.
    Fixed,
    /// Fields separated by `|` (`-P`), or ended by it (`-p`).
    Parsable {
        /// `-p`: a `|` after the last field too.
        trailing: bool,
    },
}

/// One output column: a field and its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Column {
    field: Field,
    width: usize,
}

/// sacct's fields that the store has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    JobId,
    JobIdRaw,
    JobName,
    User,
    Uid,
    Account,
    Partition,
    Qos,
    State,
    ExitCode,
    Elapsed,
    ElapsedRaw,
    CpuTime,
    CpuTimeRaw,
    ReqTres,
    AllocTres,
    NodeList,
    NNodes,
    NCpus,
    ReqCpus,
    Submit,
    Eligible,
    Start,
    End,
    Timelimit,
    TimelimitRaw,
    WorkDir,
    ArrayJobId,
    ArrayTaskId,
    Reason,
    Restarts,
}

/// Each field: sacct's name (what `-o` takes, case aside, and the header), default width, and
/// whether it is left-aligned.
const FIELDS: [(Field, &str, usize, bool); 32] = [
    (Field::JobId, "JobID", 12, true),
    (Field::JobIdRaw, "JobIDRaw", 12, true),
    (Field::JobName, "JobName", 10, false),
    (Field::User, "User", 9, false),
    (Field::Uid, "UID", 6, false),
    (Field::Account, "Account", 10, false),
    (Field::Partition, "Partition", 10, false),
    (Field::Qos, "QOS", 10, false),
    (Field::State, "State", 10, false),
    (Field::ExitCode, "ExitCode", 8, false),
    (Field::Elapsed, "Elapsed", 10, false),
    (Field::ElapsedRaw, "ElapsedRaw", 10, false),
    (Field::CpuTime, "CPUTime", 10, false),
    (Field::CpuTimeRaw, "CPUTimeRAW", 10, false),
    (Field::ReqTres, "ReqTRES", 10, true),
    (Field::AllocTres, "AllocTRES", 10, true),
    (Field::NodeList, "NodeList", 15, false),
    (Field::NNodes, "NNodes", 8, false),
    (Field::NCpus, "NCPUS", 10, false),
    (Field::NCpus, "AllocCPUS", 10, false),
    (Field::ReqCpus, "ReqCPUS", 8, false),
    (Field::Submit, "Submit", 19, false),
    (Field::Eligible, "Eligible", 19, false),
    (Field::Start, "Start", 19, false),
    (Field::End, "End", 19, false),
    (Field::Timelimit, "Timelimit", 10, false),
    (Field::TimelimitRaw, "TimelimitRaw", 12, false),
    (Field::WorkDir, "WorkDir", 10, false),
    (Field::ArrayJobId, "ArrayJobID", 15, false),
    (Field::ArrayTaskId, "ArrayTaskID", 15, false),
    (Field::Reason, "Reason", 20, false),
    (Field::Restarts, "Restarts", 8, false),
];

fn spec(field: Field, name_of: Option<&str>) -> (&'static str, usize, bool) {
    let (_, name, width, left) = FIELDS
        .iter()
        .find(|(f, n, _, _)| *f == field && name_of.is_none_or(|x| x.eq_ignore_ascii_case(n)))
        .copied()
        .expect("every field is in the table");
    (name, width, left)
}

/// Reads `-o`: comma-separated field names, each with an optional `%N` width.
fn columns(format: &str) -> anyhow::Result<Vec<(Column, &'static str)>> {
    let mut out = Vec::new();
    for item in format.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, width) = match item.split_once('%') {
            Some((n, w)) => {
                let w: usize = w
                    .parse()
                    .ok()
                    .filter(|w| (1..=1024).contains(w))
                    .with_context(|| {
                        format!("--format {item}: '%{w}' is not a width (1 to 1024)")
                    })?;
                (n, Some(w))
            }
            None => (item, None),
        };
        let Some(&(field, header, default, _)) = FIELDS
            .iter()
            .find(|(_, n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            let known: Vec<&str> = FIELDS.iter().map(|(_, n, _, _)| *n).collect();
            bail!(
                "--format {item}: no field '{name}'; sluice acct knows {}",
                known.join(", ")
            );
        };
        out.push((
            Column {
                field,
                width: width.unwrap_or(default),
            },
            header,
        ));
    }
    if out.is_empty() {
        bail!("--format is empty; name at least one field (sacct --helpformat lists them)");
    }
    Ok(out)
}

/// A line of output: a job, or one of its steps.
#[derive(Clone, Copy)]
enum Line<'a> {
    Job(&'a AcctJob),
    Step(&'a AcctJob, &'a AcctStep),
}

/// `[D-]HH:MM:SS`, as sacct prints durations.
pub fn elapsed(secs: i64) -> String {
    let secs = secs.max(0);
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// The text of `field` on `line`.
fn value(field: Field, line: Line, zone: Zone) -> String {
    let time = |t: Option<i64>| t.map_or("Unknown".to_string(), |t| zone.iso(t));
    let (job, step) = match line {
        Line::Job(j) => (j, None),
        Line::Step(j, s) => (j, Some(s)),
    };
    let run = |j: &AcctJob| match step {
        Some(s) => (s.end - s.start).max(0),
        None => j.elapsed,
    };
    match field {
        Field::JobId | Field::JobIdRaw => match step {
            Some(s) => format!("{}.{}", job.job_id, s.step_id),
            None => match (field, job.array_job_id, job.array_task_id) {
                (Field::JobId, Some(a), Some(t)) => format!("{a}_{t}"),
                _ => job.job_id.to_string(),
            },
        },
        Field::JobName => step.map_or(job.name.clone(), |s| s.name.clone()),
        Field::User => step.map_or(job.user.clone(), |_| String::new()),
        Field::Uid => step.map_or(job.uid.to_string(), |_| String::new()),
        Field::Account => job.account.clone(),
        Field::Partition => step.map_or(job.partition.clone(), |_| String::new()),
        Field::Qos => step.map_or(job.qos.clone(), |_| String::new()),
        Field::State => step.map_or(job.state.clone(), |s| s.state.clone()),
        Field::ExitCode => match step {
            Some(s) => format!("{}:0", s.exit_code),
            None => format!("{}:{}", job.exit_code, job.signal),
        },
        Field::Elapsed => elapsed(run(job)),
        Field::ElapsedRaw => run(job).to_string(),
        Field::CpuTime => elapsed(run(job) * job.ncpus as i64),
        Field::CpuTimeRaw => (run(job) * job.ncpus as i64).to_string(),
        Field::ReqTres => step.map_or(job.req_tres.clone(), |_| String::new()),
        Field::AllocTres => job.alloc_tres.clone(),
        Field::NodeList => {
            if job.nodes.is_empty() {
                "None assigned".into()
            } else {
                job.nodes.clone()
            }
        }
        Field::NNodes => job.nnodes.to_string(),
        Field::NCpus => job.ncpus.to_string(),
        Field::ReqCpus => cpu_of(&job.req_tres).to_string(),
        Field::Submit => step.map_or(time(Some(job.submit)), |s| time(Some(s.start))),
        Field::Eligible => step.map_or(time(Some(job.eligible)), |s| time(Some(s.start))),
        Field::Start => step.map_or(time(job.start), |s| time(Some(s.start))),
        Field::End => step.map_or(time(Some(job.end)), |s| time(Some(s.end))),
        Field::Timelimit if step.is_some() => String::new(),
        Field::Timelimit => job.time_limit.map_or("Partition_Limit".into(), |t| {
            elapsed(t.div_ceil(60) as i64 * 60)
        }),
        Field::TimelimitRaw if step.is_some() => String::new(),
        Field::TimelimitRaw => job
            .time_limit
            .map_or("Partition_Limit".into(), |t| t.div_ceil(60).to_string()),
        Field::WorkDir => step.map_or(job.work_dir.clone(), |_| String::new()),
        Field::ArrayJobId => job.array_job_id.map_or(String::new(), |a| a.to_string()),
        Field::ArrayTaskId => job.array_task_id.map_or(String::new(), |t| t.to_string()),
        Field::Reason => step.map_or(job.reason.clone().unwrap_or("None".into()), |_| {
            String::new()
        }),
        Field::Restarts => step.map_or(job.restarts.to_string(), |_| String::new()),
    }
}

/// The `cpu=` count of a TRES string.
fn cpu_of(tres: &str) -> u64 {
    tres.split(',')
        .find_map(|p| p.strip_prefix("cpu="))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// `text` fitted to `width` as sacct fits it: padded, or cut with a `+` in the last place.
fn fit(text: &str, width: usize, left: bool) -> String {
    let n = text.chars().count();
    if n > width {
        let cut: String = text.chars().take(width.saturating_sub(1)).collect();
        return format!("{cut}+");
    }
    if left {
        format!("{text:<width$}")
    } else {
        format!("{text:>width$}")
    }
}

/// The whole output.
fn render(
    jobs: &[AcctJob],
    columns: &[(Column, &'static str)],
    style: Style,
    header: bool,
    steps: bool,
    zone: Zone,
) -> String {
    let mut out = String::new();
    let row = |cells: Vec<String>, out: &mut String| match style {
        Style::Fixed => {
            for c in cells {
                out.push_str(&c);
                out.push(' ');
            }
            out.push('\n');
        }
        Style::Parsable { trailing } => {
            out.push_str(&cells.join("|"));
            if trailing {
                out.push('|');
            }
            out.push('\n');
        }
    };
    let cells = |f: &dyn Fn(&Column, &'static str, bool) -> String| {
        columns
            .iter()
            .map(|(c, name)| {
                let (_, _, left) = spec(c.field, Some(name));
                f(c, name, left)
            })
            .collect::<Vec<_>>()
    };
    if header {
        match style {
            Style::Fixed => {
                row(cells(&|c, name, left| fit(name, c.width, left)), &mut out);
                row(cells(&|c, _, _| "-".repeat(c.width)), &mut out);
            }
            Style::Parsable { .. } => row(cells(&|_, name, _| name.to_string()), &mut out),
        }
    }
    for job in jobs {
        let mut lines = vec![Line::Job(job)];
        if steps {
            lines.extend(job.steps.iter().map(|s| Line::Step(job, s)));
        }
        for line in lines {
            let text = cells(&|c, _, left| {
                let v = value(c.field, line, zone);
                match style {
                    Style::Fixed => fit(&v, c.width, left),
                    Style::Parsable { .. } => v,
                }
            });
            row(text, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> AcctJob {
        AcctJob {
            job_id: 12,
            name: "a-rather-long-name".into(),
            user: "ann".into(),
            account: "phys".into(),
            partition: "batch".into(),
            state: "CANCELLED".into(),
            exit_code: 0,
            signal: 15,
            submit: 1_795_678_000,
            eligible: 1_795_678_000,
            start: Some(1_795_678_100),
            end: 1_795_768_161,
            elapsed: 90_061,
            ncpus: 4,
            nnodes: 1,
            nodes: "n1".into(),
            req_tres: "cpu=4,node=1".into(),
            time_limit: Some(3570),
            steps: vec![AcctStep {
                step_id: 0,
                name: "srun".into(),
                state: "FAILED".into(),
                exit_code: 2,
                start: 1_795_678_110,
                end: 1_795_678_170,
            }],
            ..AcctJob::default()
        }
    }

    #[test]
    fn durations_are_days_then_hours_minutes_seconds() {
        assert_eq!(elapsed(59), "00:00:59");
        assert_eq!(elapsed(90_061), "1-01:01:01");
    }

    #[test]
    fn the_default_columns_are_sacct_s_with_steps_below_their_job() {
        let cols = columns(DEFAULT_FORMAT).unwrap();
        let text = render(&[job()], &cols, Style::Fixed, true, true, Zone::Utc);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode "
        );
        assert_eq!(
            lines[1],
            "------------ ---------- ---------- ---------- ---------- ---------- -------- "
        );
        assert_eq!(
            lines[2],
            "12           a-rather-+      batch       phys          4  CANCELLED     0:15 "
        );
        assert_eq!(
            lines[3],
            "12.0               srun                  phys          4     FAILED      2:0 "
        );
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn parsable_output_has_no_widths_and_x_drops_steps() {
        let cols = columns("jobid,elapsed,cputime,start,timelimit,state%3").unwrap();
        let text = render(
            &[job()],
            &cols,
            Style::Parsable { trailing: false },
            true,
            false,
            Zone::Utc,
        );
        assert_eq!(
            text,
            "JobID|Elapsed|CPUTime|Start|Timelimit|State\n\
             12|1-01:01:01|4-04:04:04|2026-11-26T07:28:20|01:00:00|CANCELLED\n"
        );
        let text = render(
            &[job()],
            &cols,
            Style::Parsable { trailing: true },
            false,
            false,
            Zone::Utc,
        );
        assert!(text.ends_with("|CANCELLED|\n"), "{text}");
        let text = render(&[job()], &cols, Style::Fixed, false, false, Zone::Utc);
        assert!(text.ends_with(" CA+ \n"), "{text}");
    }

    #[test]
    fn bad_formats_name_the_field_and_the_choices() {
        let e = columns("JobID,Nope").unwrap_err().to_string();
        assert!(
            e.contains("no field 'Nope'") && e.contains("CPUTime"),
            "{e}"
        );
        assert!(columns("JobID%0").is_err());
        assert!(columns("").is_err());
    }

    #[test]
    fn options_resolve_as_sacct_s() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let me = Identity {
            uid: 1000,
            user: "ann".into(),
            known: true,
        };
        let parse = |words: &[&str]| {
            Cli::parse_from(std::iter::once("acct").chain(words.iter().copied())).args
        };
        let now = 1_795_678_215;
        // By default: today since midnight, my own jobs.
        let q = query(&parse(&[]), now, &me).unwrap();
        assert_eq!(q.users.as_deref(), Some("ann"));
        assert_eq!(q.start, parse_past_time("midnight", now, Zone::Local));
        // -j: from the epoch; -a: everyone.
        let q = query(&parse(&["-j", "4,5", "-a"]), now, &me).unwrap();
        assert_eq!((q.start, q.end, q.users), (None, Some(now), None));
        let q = query(
            &parse(&["-S", "now-1hour", "-E", "now", "-s", "CD"]),
            now,
            &me,
        )
        .unwrap();
        assert_eq!((q.start, q.end), (Some(now - 3600), Some(now)));
        assert!(query(&parse(&["-S", "yesterdayish"]), now, &me).is_err());
        assert!(query(&parse(&["-S", "now", "-E", "now-1hour"]), now, &me).is_err());
        assert_eq!(
            serde_urlencoded_query(&AcctQuery {
                users: Some("a b".into()),
                start: Some(5),
                ..AcctQuery::default()
            }),
            "users=a%20b&start=5"
        );
    }
}
