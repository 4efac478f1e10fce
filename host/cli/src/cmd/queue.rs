//! `sluice queue` (squeue): JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON), `--format`
//! with squeue's `%` fields, `--user`, `--states`, `--jobs`.

use serde_json::Value;
use sluice_daemon::http::escape;

use super::daemon_client::{Conn, cell, duration, print_json};

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

fn field(row: &Value, c: char) -> (String, &'static str) {
    let st = cell(row, "st");
    match c {
        'i' | 'A' => (cell(row, "job_id"), "JOBID"),
        'P' => (cell(row, "partition"), "PARTITION"),
        'j' => (cell(row, "name"), "NAME"),
        'u' => (cell(row, "user"), "USER"),
        'a' => (cell(row, "account"), "ACCOUNT"),
        't' => (st, "ST"),
        'T' => (cell(row, "state"), "STATE"),
        'M' => (duration(row["time"].as_u64().unwrap_or(0)), "TIME"),
        'l' => (
            row["time_limit"]
                .as_u64()
                .map_or("UNLIMITED".into(), duration),
            "TIME_LIMIT",
        ),
        'D' => (cell(row, "nodes"), "NODES"),
        'C' => (cell(row, "cpus"), "CPUS"),
        'N' => (cell(row, "nodelist"), "NODELIST"),
        'r' => (cell(row, "reason"), "REASON"),
        'R' => {
            let v = if st == "PD" || cell(row, "nodelist").is_empty() {
                format!("({})", cell(row, "reason"))
            } else {
                cell(row, "nodelist")
            };
            (v, "NODELIST(REASON)")
        }
        'Q' => (cell(row, "priority"), "PRIORITY"),
        'S' => (
            row["start_time"]
                .as_i64()
                .map_or("N/A".into(), |t| t.to_string()),
            "START_TIME",
        ),
        _ => (String::new(), "?"),
    }
}

/// Renders rows with a squeue format string.
pub fn render(rows: &[Value], format: &str, header: bool) -> String {
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
    if header {
        let empty = Value::Null;
        out.push_str(&line(&mut |c| field(&empty, c).1.to_string()));
        out.push('\n');
    }
    for r in rows {
        out.push_str(&line(&mut |c| field(r, c).0));
        out.push('\n');
    }
    out
}

/// Runs `sluice queue`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut q = Vec::new();
    if let Some(u) = &args.user {
        q.push(format!("user={}", escape(u)));
    }
    if let Some(s) = &args.states {
        let s = if s.eq_ignore_ascii_case("all") {
            "PD,CF,R,CG,CD,F,CA,TO,NF".to_string()
        } else {
            s.clone()
        };
        q.push(format!("states={}", escape(&s)));
    }
    if let Some(j) = &args.jobs {
        q.push(format!("jobs={}", escape(j)));
    }
    let path = format!("/v1/jobs?{}", q.join("&"));
    let rows = args.conn.client().get(&path)?;
    if args.conn.json {
        print_json(&rows);
        return Ok(());
    }
    let rows = rows.as_array().cloned().unwrap_or_default();
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
