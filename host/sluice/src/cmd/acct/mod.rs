//! `sluice acct` (sacct): ended jobs from the daemon's accounting store, with sacct's options
//! `-j`, `-u`, `-a`, `-A`, `--name`, `-r`, `-q`, `-N`, `-S`/`-E` (Slurm's time forms), `-s`,
//! `-D`, `-o/--format` (sacct's field names, `%N` widths), `-b`, `-l`, `-X`, `-n`, `-p`, `-P`,
//! `--delimiter`, `-T`, `--json`. As sacct, jobs since 00:00 today unless `-S` or `-j` says
//! otherwise; your own jobs unless you are root, give `-a`, or select by `-j` or `-N` (the
//! daemon still shows other users' jobs only to admins).
//!
//! `fields` names and prints sacct's fields, `render` lays the lines out.

mod fields;
mod render;

use anyhow::{Context, bail};
use sluice_api::{AcctAnswer, AcctQuery};
use sluice_client::identity::Identity;

use super::clock::{Zone, parse_past_time};
use super::daemon_client::{Conn, print_json};
use fields::{BRIEF_FORMAT, DEFAULT_FORMAT, LONG_FORMAT, columns};
use render::{Style, render, truncate};

/// Arguments of `sluice acct`.
#[derive(clap::Args)]
pub struct Args {
    /// Only these jobs (comma-separated ids; `ID.STEP` selects the job); every user's.
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<String>,
    /// Only these users' jobs (comma-separated names; `-1` is everyone's).
    #[arg(short = 'u', long = "user", alias = "uid", allow_hyphen_values = true)]
    user: Option<String>,
    /// Every user's jobs (admins; others see their own).
    #[arg(short = 'a', long = "allusers")]
    all_users: bool,
    /// Only jobs charged to these accounts (comma-separated).
    #[arg(short = 'A', long = "accounts")]
    accounts: Option<String>,
    /// Only jobs with these names (comma-separated).
    #[arg(long = "name")]
    name: Option<String>,
    /// Only jobs that ran in these partitions (comma-separated).
    #[arg(short = 'r', long = "partition")]
    partition: Option<String>,
    /// Only jobs of these QOS (comma-separated).
    #[arg(short = 'q', long = "qos")]
    qos: Option<String>,
    /// Only jobs that ran on any of these nodes (a hostlist, `n[1-4],gpu7`); every user's.
    #[arg(short = 'N', long = "nodelist")]
    nodelist: Option<String>,
    /// Jobs that ended at or after this time (Slurm's forms: `2026-11-26T08:00`, `now-2hours`,
    /// `08:00`, `1125`, `midnight`); default 00:00 today, or the epoch with `-j`.
    #[arg(short = 'S', long = "starttime")]
    start: Option<String>,
    /// Jobs eligible at or before this time (same forms); default now.
    #[arg(short = 'E', long = "endtime")]
    end: Option<String>,
    /// Only jobs in these states (CD,F,TO… or names: COMPLETED, FAILED, CANCELLED, TIMEOUT,
    /// NODE_FAIL, REQUEUED, …).
    #[arg(short = 's', long = "state")]
    states: Option<String>,
    /// Every run of a requeued job (REQUEUED runs first), not only its newest.
    #[arg(short = 'D', long = "duplicates")]
    duplicates: bool,
    /// Columns with sacct's field names, `%N` for a width (`JobID,JobName%20,State`).
    #[arg(short = 'o', long = "format")]
    format: Option<String>,
    /// JobID, State and ExitCode only.
    #[arg(short = 'b', long = "brief")]
    brief: bool,
    /// sacct's long list of fields (those the store has).
    #[arg(short = 'l', long = "long")]
    long: bool,
    /// Jobs only, not their steps.
    #[arg(short = 'X', long = "allocations")]
    allocations: bool,
    /// No header.
    #[arg(short = 'n', long = "noheader")]
    noheader: bool,
    /// The delimiter after every field.
    #[arg(short = 'p', long = "parsable")]
    parsable: bool,
    /// The delimiter between fields.
    #[arg(short = 'P', long = "parsable2")]
    parsable2: bool,
    /// The delimiter of `-p` and `-P` (default `|`); ignored without them.
    #[arg(long = "delimiter", default_value = "|")]
    delimiter: String,
    /// Start, end, elapsed and CPU times cut to the `-S`/`-E` window.
    #[arg(short = 'T', long = "truncate")]
    truncate: bool,
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice acct`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let query = query(&args, now, &Identity::current())?;
    let columns = columns(&format(&args))?;
    let path = format!("/v1/accounting?{}", serde_urlencoded_query(&query));
    let mut answer: AcctAnswer = args
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
    if args.truncate {
        truncate(&mut answer.jobs, query.start, query.end.unwrap_or(now));
    }
    if args.conn.json {
        print_json(&answer);
        return Ok(());
    }
    print!(
        "{}",
        render(
            &answer.jobs,
            &columns,
            &style(&args),
            !args.noheader,
            !args.allocations,
            Zone::Local
        )
    );
    Ok(())
}

/// The fields asked for: `-o`, then `-b` and `-l` added after it, as sacct adds them; the
/// default list when none is given.
fn format(args: &Args) -> String {
    let mut lists: Vec<&str> = args.format.iter().map(String::as_str).collect();
    if args.brief {
        lists.push(BRIEF_FORMAT);
    }
    if args.long {
        lists.push(LONG_FORMAT);
    }
    if lists.is_empty() {
        lists.push(DEFAULT_FORMAT);
    }
    lists.join(",")
}

/// The layout `-p`, `-P` and `--delimiter` ask for (`-P` wins over `-p`).
fn style(args: &Args) -> Style {
    if args.parsable || args.parsable2 {
        Style::Parsable {
            trailing: !args.parsable2,
            delimiter: args.delimiter.clone(),
        }
    } else {
        Style::Fixed
    }
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
    add("names", q.names.clone());
    add("partitions", q.partitions.clone());
    add("qos", q.qos.clone());
    add("nodes", q.nodes.clone());
    add("duplicates", q.duplicates.then(|| "true".to_string()));
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
    // sacct: everyone's jobs for root, with -a or `-u -1`, and when jobs or nodes are named
    // without -u; else the caller's own.
    let everyone = args.all_users
        || me.uid == 0
        || args.user.as_deref() == Some("-1")
        || args.jobs.is_some()
        || args.nodelist.is_some();
    let users = match &args.user {
        Some(u) if u != "-1" => Some(u.clone()),
        _ if everyone => None,
        _ => Some(me.user.clone()),
    };
    Ok(AcctQuery {
        jobs: args.jobs.clone(),
        users,
        accounts: args.accounts.clone(),
        states: args.states.clone(),
        start,
        end: Some(end),
        names: args.name.clone(),
        partitions: args.partition.clone(),
        qos: args.qos.clone(),
        nodes: args.nodelist.clone(),
        duplicates: args.duplicates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(words: &[&str]) -> Args {
        Cli::parse_from(std::iter::once("acct").chain(words.iter().copied())).args
    }

    fn ann() -> Identity {
        Identity {
            uid: 1000,
            user: "ann".into(),
            known: true,
        }
    }

    #[test]
    fn options_resolve_as_sacct_s() {
        let me = ann();
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

    #[test]
    fn naming_jobs_or_nodes_or_minus_one_asks_for_every_user_s_jobs() {
        let me = ann();
        let users = |words: &[&str]| query(&parse(words), 100, &me).unwrap().users;
        assert_eq!(users(&["-j", "4"]), None);
        assert_eq!(users(&["-N", "n[1-2]"]), None);
        assert_eq!(users(&["-u", "-1"]), None);
        assert_eq!(users(&["-j", "4", "-u", "bob"]).as_deref(), Some("bob"));
        assert_eq!(users(&["-r", "gpu"]).as_deref(), Some("ann"));
        let root = Identity {
            uid: 0,
            user: "root".into(),
            known: true,
        };
        assert_eq!(query(&parse(&[]), 100, &root).unwrap().users, None);
    }

    #[test]
    fn selections_and_duplicates_reach_the_daemon_s_query() {
        let q = query(
            &parse(&[
                "--name", "sim,post", "-r", "gpu", "-q", "high", "-N", "n[1,3]", "-D", "-S", "now",
            ]),
            100,
            &ann(),
        )
        .unwrap();
        assert_eq!(
            (
                q.names.as_deref(),
                q.partitions.as_deref(),
                q.qos.as_deref(),
                q.nodes.as_deref(),
                q.duplicates
            ),
            (
                Some("sim,post"),
                Some("gpu"),
                Some("high"),
                Some("n[1,3]"),
                true
            )
        );
        assert_eq!(
            serde_urlencoded_query(&q),
            "start=100&end=100&names=sim,post&partitions=gpu&qos=high&nodes=n%5B1,3%5D&duplicates=true"
        );
        // What the daemon reads back is what was asked.
        let back: AcctQuery = serde_json::from_value(serde_json::json!({
            "names": "sim,post", "nodes": "n[1,3]", "duplicates": true
        }))
        .unwrap();
        assert!(back.duplicates && back.nodes.as_deref() == Some("n[1,3]"));
    }

    #[test]
    fn brief_long_and_parsable_choose_columns_and_layout() {
        assert_eq!(format(&parse(&[])), DEFAULT_FORMAT);
        assert_eq!(format(&parse(&["-b"])), BRIEF_FORMAT);
        assert_eq!(format(&parse(&["-l"])), LONG_FORMAT);
        assert_eq!(
            format(&parse(&["-o", "User", "-b"])),
            format!("User,{BRIEF_FORMAT}")
        );
        assert_eq!(style(&parse(&[])), Style::Fixed);
        assert_eq!(style(&parse(&["--delimiter", ";"])), Style::Fixed);
        assert_eq!(
            style(&parse(&["-p", "--delimiter", ";"])),
            Style::Parsable {
                trailing: true,
                delimiter: ";".into()
            }
        );
        assert_eq!(
            style(&parse(&["-P"])),
            Style::Parsable {
                trailing: false,
                delimiter: "|".into()
            }
        );
    }
}
