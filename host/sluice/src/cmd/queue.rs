//! `sluice queue` (squeue): JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON), `--format`
//! with squeue's `%` fields, `--user`, `--states`, `--jobs`.

use sluice_api::{Job, JobQuery};
use sluice_daemon::client::jobs_path;

use super::daemon_client::{Conn, duration, print_json};

/// squeue's default format.
pub const DEFAULT_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";

/// Arguments of `sluice queue`.
#[derive(clap::Args)]
pub struct Args {
    /// Output format with squeue's fields: %i %P %j %u %a %t %T %M %l %D %R %N %r %Q %S %C.
    #[arg(short = 'o', long)]
    format: Option<String>,
    /// Only these users' jobs (comma-separated).
    #[arg(short = 'u', long)]
    user: Option<String>,
    /// Only jobs in these states (PD,R,CD… or names; `all` for every state).
    #[arg(short = 't', long)]
    states: Option<String>,
    /// Only these job ids.
    #[arg(short = 'j', long)]
    jobs: Option<String>,
    /// No header.
    #[arg(long = "noheader")]
    noheader: bool,
    #[command(flatten)]
    conn: Conn,
}

/// The header of squeue's field `c`.
fn header(c: char) -> &'static str {
    match c {
        'i' | 'A' => "JOBID",
        'P' => "PARTITION",
        'j' => "NAME",
        'u' => "USER",
        'a' => "ACCOUNT",
        't' => "ST",
        'T' => "STATE",
        'M' => "TIME",
        'l' => "TIME_LIMIT",
        'D' => "NODES",
        'C' => "CPUS",
        'N' => "NODELIST",
        'r' => "REASON",
        'R' => "NODELIST(REASON)",
        'Q' => "PRIORITY",
        'S' => "START_TIME",
        _ => "?",
    }
}

/// The text of squeue's field `c` for `job`.
fn field(job: &Job, c: char) -> String {
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
        'D' => job.nodes.to_string(),
        'C' => job.cpus.to_string(),
        'N' => job.nodelist.clone(),
        'r' => job.reason.clone(),
        'R' if job.st == "PD" || job.nodelist.is_empty() => format!("({})", job.reason),
        'R' => job.nodelist.clone(),
        'Q' => job.priority.to_string(),
        'S' => job.start_time.map_or("N/A".into(), |t| t.to_string()),
        _ => String::new(),
    }
}

/// Renders rows with a squeue format string.
pub fn render(rows: &[Job], format: &str, with_header: bool) -> String {
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
        out.push_str(&line(&mut |c| header(c).to_string()));
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
    let query = JobQuery {
        user: args.user.clone(),
        states: args.states.as_ref().map(|s| {
            if s.eq_ignore_ascii_case("all") {
                JobQuery::ALL_STATES.to_string()
            } else {
                s.clone()
            }
        }),
        jobs: args.jobs.clone(),
    };
    let rows: Vec<Job> = args.conn.client().get(&jobs_path(&query))?;
    if args.conn.json {
        print_json(&rows);
        return Ok(());
    }
    print!(
        "{}",
        render(
            &rows,
            args.format.as_deref().unwrap_or(DEFAULT_FORMAT),
            !args.noheader
        )
    );
    Ok(())
}
