//! `sluice queue` (squeue): JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON); `-o` with
//! squeue's `%` fields, `-O/--Format` with its field names, `-l`, `--start`, `-u`, `--me`, `-p`,
//! `-t`, `-j`, `-h/--noheader` (help is `--help`).

use sluice_api::{Job, JobQuery};
use sluice_client::identity::Identity;
use sluice_client::jobs_path;

use super::clock::Zone;
use super::daemon_client::{Conn, duration, print_json};

/// squeue's default format.
pub const DEFAULT_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";

/// squeue `-l`'s format.
pub const LONG_FORMAT: &str = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";

/// squeue `--start`'s format.
pub const START_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %R";

/// Arguments of `sluice queue`.
#[derive(clap::Args)]
pub struct Args {
    /// Output format with squeue's fields: %i %A %P %j %u %a %t %T %M %l %L %D %C %c %N %r %R %Q
    /// %S %e %V %b %m %q %E %f %k %n %x %Z %o %y %v %h %p.
    #[arg(short = 'o', long)]
    format: Option<String>,
    /// Output format with squeue's field names (`JobID,Name:.20,StartTime`).
    #[arg(short = 'O', long = "Format")]
    format_long: Option<String>,
    /// Long listing (STATE and TIME_LIMIT).
    #[arg(short = 'l', long)]
    long: bool,
    /// Pending jobs with their expected start time, from the backfill plan.
    #[arg(long)]
    start: bool,
    /// Only these users' jobs (comma-separated).
    #[arg(short = 'u', long)]
    user: Option<String>,
    /// Only your own jobs.
    #[arg(long)]
    me: bool,
    /// Only jobs in these partitions (comma-separated).
    #[arg(short = 'p', long)]
    partition: Option<String>,
    /// Only jobs in these states (PD,R,CD… or names; `all` for every state).
    #[arg(short = 't', long)]
    states: Option<String>,
    /// Only these job ids.
    #[arg(short = 'j', long)]
    jobs: Option<String>,
    /// No header.
    #[arg(short = 'h', long = "noheader")]
    noheader: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
    #[command(flatten)]
    conn: Conn,
}

/// The header of squeue's field `c`.
fn header(c: char) -> &'static str {
    match c {
        'i' => "JOBID",
        'A' => "JOBID",
        'F' => "ARRAY_JOB_ID",
        'K' => "ARRAY_TASK_ID",
        'P' => "PARTITION",
        'j' => "NAME",
        'u' => "USER",
        'a' => "ACCOUNT",
        't' => "ST",
        'T' => "STATE",
        'M' => "TIME",
        'l' => "TIME_LIMIT",
        'L' => "TIME_LEFT",
        'D' => "NODES",
        'C' => "CPUS",
        'c' => "MIN_CPUS",
        'N' => "NODELIST",
        'r' => "REASON",
        'R' => "NODELIST(REASON)",
        'Q' => "PRIORITY",
        'p' => "PRIORITY",
        'S' => "START_TIME",
        'e' => "END_TIME",
        'V' => "SUBMIT_TIME",
        'b' => "TRES_PER_NODE",
        'm' => "MIN_MEMORY",
        'q' => "QOS",
        'E' => "DEPENDENCY",
        'f' => "FEATURES",
        'k' => "COMMENT",
        'n' => "REQ_NODES",
        'x' => "EXC_NODES",
        'Z' => "WORK_DIR",
        'o' => "COMMAND",
        'y' => "NICE",
        'v' => "RESERVATION",
        'h' => "OVER_SUBSCRIBE",
        _ => "?",
    }
}

/// A date as squeue prints one, `N/A` when there is none.
fn date(t: Option<i64>) -> String {
    t.filter(|t| *t > 0)
        .map_or("N/A".into(), |t| Zone::Local.iso(t))
}

/// The text of squeue's field `c` for `job`.
fn field(job: &Job, c: char) -> String {
    let r = &job.request;
    let null = |v: &Option<String>| v.clone().unwrap_or_else(|| "(null)".into());
    match c {
        'i' | 'A' => job.job_id.to_string(),
        'P' => job.partition.clone(),
        'j' => job.name.clone(),
        'u' => job.user.clone(),
        'a' => job.account.clone().unwrap_or_default(),
        't' => job.st.clone(),
        'T' => job.state.clone(),
        'M' => duration(job.time.max(0) as u64),
        'l' => job.time_limit.map_or("UNLIMITED".into(), duration),
        'L' => match job.time_limit {
            None => "UNLIMITED".into(),
            Some(l) => duration(l.saturating_sub(job.time.max(0) as u64)),
        },
        'D' => job.nodes.to_string(),
        'C' => job.cpus.to_string(),
        'c' => r.cpus_per_task.unwrap_or(1).to_string(),
        'N' => job.nodelist.clone(),
        'r' => job.reason.clone(),
        'R' if job.st == "PD" || job.nodelist.is_empty() => format!("({})", job.reason),
        'R' => job.nodelist.clone(),
        'Q' => job.priority.to_string(),
        'p' => format!("{:.8}", f64::from(job.priority) / f64::from(u32::MAX)),
        'S' => date(job.start_time),
        'e' => date(job.end_time.or_else(|| {
            let start = job.start_time?;
            Some(start + i64::try_from(job.time_limit?).ok()?)
        })),
        'V' => date(Some(job.submit_time)),
        'b' => match (&r.gpus, &r.gres) {
            (Some(g), _) => format!("gres/gpu:{g}"),
            (None, Some(g)) => format!("gres/{g}"),
            (None, None) => "N/A".into(),
        },
        'm' => r
            .mem_mb
            .or(r.mem_per_cpu_mb)
            .map_or("0".into(), |m| format!("{m}M")),
        'q' => r.qos.clone().unwrap_or_else(|| "normal".into()),
        'E' => null(&r.dependency),
        'f' => null(&r.constraint),
        'k' => null(&r.comment),
        'n' => null(&r.nodelist),
        'x' => null(&r.exclude),
        'Z' => job.workdir.clone(),
        'o' => null(&r.command),
        'y' => r.nice.to_string(),
        'v' => "(null)".into(),
        'h' => r.oversubscribe_word().into(),
        _ => String::new(),
    }
}

/// squeue's `-O` field names, as the `%` letters above.
const LONG_NAMES: &[(&str, char)] = &[
    ("jobid", 'i'),
    ("jobarrayid", 'i'),
    ("arrayjobid", 'F'),
    ("arraytaskid", 'K'),
    ("partition", 'P'),
    ("name", 'j'),
    ("username", 'u'),
    ("account", 'a'),
    ("statecompact", 't'),
    ("state", 'T'),
    ("timeused", 'M'),
    ("timelimit", 'l'),
    ("timeleft", 'L'),
    ("numnodes", 'D'),
    ("numcpus", 'C'),
    ("mincpus", 'c'),
    ("nodelist", 'N'),
    ("reason", 'r'),
    ("reasonlist", 'R'),
    ("priority", 'Q'),
    ("starttime", 'S'),
    ("endtime", 'e'),
    ("submittime", 'V'),
    ("tres-per-node", 'b'),
    ("minmemory", 'm'),
    ("qos", 'q'),
    ("dependency", 'E'),
    ("feature", 'f'),
    ("comment", 'k'),
    ("reqnodes", 'n'),
    ("excnodes", 'x'),
    ("workdir", 'Z'),
    ("command", 'o'),
    ("nice", 'y'),
    ("reservation", 'v'),
    ("oversubscribe", 'h'),
];

/// An `-O` list as the equivalent `-o` format: each field `name[:[.]size]`, 20 wide unless
/// sized, left-aligned unless the size starts with `.`, as squeue does.
pub fn long_format(list: &str) -> anyhow::Result<String> {
    let mut out = String::new();
    for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, size) = match item.split_once(':') {
            Some((n, s)) => (n, Some(s)),
            None => (item, None),
        };
        let c = LONG_NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, c)| *c)
            .ok_or_else(|| anyhow::anyhow!("Invalid job format specification: {name}"))?;
        let (right, width) = match size {
            Some(s) => match s.strip_prefix('.') {
                Some(w) => (true, w),
                None => (false, s),
            },
            None => (false, "20"),
        };
        let width: usize = width
            .parse()
            .map_err(|_| anyhow::anyhow!("Invalid job format specification: {item}"))?;
        // squeue -O separates fields by padding alone; a width of its own plus one space.
        out.push_str(&format!(
            "%{}{}{c} ",
            if right { "." } else { "" },
            width.max(1) - 1
        ));
    }
    Ok(out)
}

/// Renders jobs with a squeue format string, each array's pending tasks as one row.
pub fn render(jobs: &[Job], format: &str, with_header: bool) -> String {
    let rows = super::job_arrays::rows(jobs);
    render_rows(
        &rows,
        format,
        with_header,
        |c| header(c).to_string(),
        |row, c| match c {
            'i' => row.job_id(),
            'F' => row.array_job_id(),
            'K' => row.task_id(),
            _ => field(row.job, c),
        },
    )
}

/// Renders rows with a squeue/sinfo-style format string: `%[.][-][width]letter` fields
/// (`.` right-aligns; a width pads and truncates) and literal text between them.
pub fn render_rows<T>(
    rows: &[T],
    format: &str,
    with_header: bool,
    header: impl Fn(char) -> String,
    field: impl Fn(&T, char) -> String,
) -> String {
    struct Spec {
        lit: String,
        right: bool,
        width: Option<usize>,
        c: Option<char>,
    }
    let mut specs = Vec::new();
    let mut chars = format.chars().peekable();
    let mut lit = String::new();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            lit.push(ch);
            continue;
        }
        let mut right = false;
        if chars.peek() == Some(&'.') {
            right = true;
            chars.next();
        }
        if chars.peek() == Some(&'-') {
            chars.next();
        }
        let mut w = String::new();
        while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            w.push(*d);
            chars.next();
        }
        specs.push(Spec {
            lit: std::mem::take(&mut lit),
            right,
            width: w.parse().ok(),
            c: chars.next(),
        });
    }
    let tail = lit;
    let line = |vals: &mut dyn FnMut(char) -> String| {
        let mut out = String::new();
        for s in &specs {
            out.push_str(&s.lit);
            let Some(c) = s.c else { continue };
            let mut v = vals(c);
            if let Some(w) = s.width {
                v.truncate(w);
                v = if s.right {
                    format!("{v:>w$}")
                } else {
                    format!("{v:<w$}")
                };
            }
            out.push_str(&v);
        }
        out.push_str(&tail);
        out.trim_end().to_string()
    };
    let mut out = String::new();
    if with_header {
        out.push_str(&line(&mut |c| header(c)));
        out.push('\n');
    }
    for r in rows {
        out.push_str(&line(&mut |c| field(r, c)));
        out.push('\n');
    }
    out
}

/// Runs `sluice queue`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let user = if args.me {
        Some(Identity::current().user)
    } else {
        args.user.clone()
    };
    let states = if args.start {
        Some("PD".to_string())
    } else {
        args.states.as_ref().map(|s| {
            if s.eq_ignore_ascii_case("all") {
                JobQuery::ALL_STATES.to_string()
            } else {
                s.clone()
            }
        })
    };
    // `-j 123` names every task of array 123 and `123_4` one: the ids are matched here.
    let query = JobQuery {
        user,
        states,
        jobs: None,
    };
    let mut rows: Vec<Job> = args.conn.client().get(&jobs_path(&query))?;
    if let Some(list) = &args.jobs {
        let mut wanted = Vec::new();
        for text in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            wanted.extend(super::job_arrays::JobRef::parse(text)?.resolve(&rows));
        }
        rows.retain(|j| wanted.contains(&j.job_id));
    }
    if let Some(parts) = &args.partition {
        let wanted: Vec<&str> = parts.split(',').map(str::trim).collect();
        rows.retain(|j| j.partition.split(',').any(|p| wanted.contains(&p)));
    }
    if args.start {
        // squeue --start lists the jobs by expected start, those without one last.
        rows.sort_by_key(|j| (j.start_time.is_none(), j.start_time, j.job_id));
    }
    if args.conn.json {
        print_json(&rows);
        return Ok(());
    }
    let format = match (&args.format, &args.format_long) {
        (Some(f), _) => f.clone(),
        (None, Some(list)) => long_format(list)?,
        (None, None) if args.start => START_FORMAT.into(),
        (None, None) if args.long => LONG_FORMAT.into(),
        (None, None) => DEFAULT_FORMAT.into(),
    };
    print!("{}", render(&rows, &format, !args.noheader));
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use sluice_api::JobRequestSummary;

    /// A running job with a few requests, for the tests of the commands that list jobs.
    pub(crate) fn job() -> Job {
        Job {
            job_id: 42,
            name: "train".into(),
            user: "alice".into(),
            uid: 1000,
            account: Some("ml".into()),
            partition: "gpu".into(),
            state: "RUNNING".into(),
            st: "R".into(),
            reason: "None".into(),
            hold: None,
            priority: 100,
            time: 600,
            time_limit: Some(3600),
            nodes: 1,
            nodelist: "n1".into(),
            cpus: 8,
            submit_time: 1_795_678_215,
            start_time: Some(1_795_678_215),
            end_time: None,
            exit_code: None,
            signal: None,
            restarts: 0,
            requeue: true,
            workdir: "/w".into(),
            steps: vec![],
            request: JobRequestSummary {
                ntasks: None,
                cpus_per_task: None,
                mem_mb: Some(4096),
                gres: None,
                gpus: Some("2".into()),
                licenses: None,
                constraint: None,
                dependency: None,
                nice: 0,
                begin: None,
                qos: Some("high".into()),
                output: None,
                error: None,
                input: None,
                command: None,
                comment: None,
                time_min: None,
                deadline: None,
                nodelist: None,
                exclude: None,
                ntasks_per_node: None,
                mem_per_cpu_mb: None,
                mail_type: None,
                mail_user: None,
                exclusive: false,
                contiguous: false,
                oversubscribe: false,
            },
            array: None,
        }
    }

    #[test]
    fn percent_fields_print_dates_limits_and_requests() {
        let j = job();
        assert_eq!(field(&j, 'L'), "50:00");
        assert_eq!(field(&j, 'b'), "gres/gpu:2");
        assert_eq!(field(&j, 'm'), "4096M");
        assert_eq!(field(&j, 'q'), "high");
        assert_eq!(field(&j, 'S'), Zone::Local.iso(1_795_678_215));
        assert_eq!(field(&j, 'V'), Zone::Local.iso(1_795_678_215));
        // A running job's end is its start plus its limit.
        assert_eq!(field(&j, 'e'), Zone::Local.iso(1_795_678_215 + 3600));
        assert_eq!(field(&j, 'E'), "(null)");
        // %h: OK for CPUs held alone, YES when they may be shared, NO for whole nodes.
        assert_eq!(field(&j, 'h'), "OK");
        let mut shared = job();
        shared.request.oversubscribe = true;
        assert_eq!(field(&shared, 'h'), "YES");
        shared.request.exclusive = true;
        assert_eq!(field(&shared, 'h'), "NO");
    }

    #[test]
    fn long_names_make_the_same_columns_as_letters() {
        let f = long_format("JobID:6,Name:.8,State").unwrap();
        assert_eq!(f, "%5i %.7j %19T ");
        let out = render(&[job()], &f, true);
        assert_eq!(out, "JOBID    NAME STATE\n42      train RUNNING\n");
        assert!(long_format("Bogus").is_err());
    }

    #[test]
    fn long_and_start_formats_have_squeues_columns() {
        let out = render(&[job()], LONG_FORMAT, true);
        assert!(out.starts_with("             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)"), "{out}");
        let out = render(&[job()], START_FORMAT, true);
        assert!(out.contains("START_TIME"), "{out}");
    }
}
