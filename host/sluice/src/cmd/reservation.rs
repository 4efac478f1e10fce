//! `sluice create reservation Key=Value…` and `sluice delete reservation NAME` (scontrol create/delete).

use anyhow::{Context, bail};
use sluice_api::{Reservation, ReservationCreated, ReservationDeleted};

use sluice_client::segment;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice create`.
#[derive(clap::Args)]
pub struct CreateArgs {
    /// `reservation` (the only thing created this way).
    what: String,
    /// `ReservationName=`, `StartTime=` (now, now+N[s|m|h|d] or Unix seconds), `Duration=`
    /// (minutes or [D-]HH:MM:SS) or `EndTime=`, `Nodes=` (a hostlist), `Licenses=` (`lic:n` or
    /// `resource(hostlist):n` for an HRES layer, comma-separated), `Users=`, `Accounts=`.
    #[arg(required = true)]
    pairs: Vec<String>,
    #[command(flatten)]
    conn: Conn,
}

/// Arguments of `sluice delete`.
#[derive(clap::Args)]
pub struct DeleteArgs {
    /// `reservation`.
    what: String,
    /// The reservation's name (or `ReservationName=NAME`).
    name: String,
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice create reservation`.
pub fn create(args: CreateArgs) -> anyhow::Result<()> {
    expect_reservation("create", &args.what)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let record = record(&args.pairs, now)?;
    let answer: ReservationCreated = args.conn.client().post("/v1/reservations", &record)?;
    if args.conn.json {
        print_json(&answer);
    } else {
        println!("Reservation created: {}", record.name);
    }
    Ok(())
}

/// Runs `sluice delete reservation`.
pub fn delete(args: DeleteArgs) -> anyhow::Result<()> {
    expect_reservation("delete", &args.what)?;
    let name = match args.name.split_once('=') {
        Some((k, v)) if k.eq_ignore_ascii_case("reservationname") => v,
        Some(_) => bail!("{}: expected NAME or ReservationName=NAME", args.name),
        None => &args.name,
    };
    let answer: ReservationDeleted = args
        .conn
        .client()
        .delete(&format!("/v1/reservations/{}", segment(name)))?;
    if args.conn.json {
        print_json(&answer);
    }
    Ok(())
}

fn expect_reservation(verb: &str, what: &str) -> anyhow::Result<()> {
    if !what.eq_ignore_ascii_case("reservation") {
        bail!("{verb} {what}: only `{verb} reservation` exists");
    }
    Ok(())
}

/// The reservation the `Key=Value` pairs describe, with times resolved against `now`.
fn record(pairs: &[String], now: i64) -> anyhow::Result<Reservation> {
    let mut r = Reservation {
        start: now,
        ..Reservation::default()
    };
    let (mut duration, mut end) = (None, None);
    for pair in pairs {
        let (key, value) = pair
            .split_once('=')
            .with_context(|| format!("{pair}: expected Key=Value"))?;
        match key.to_ascii_lowercase().as_str() {
            "reservationname" | "reservation" => r.name = value.to_string(),
            "starttime" => r.start = instant("StartTime", value, now)?,
            "endtime" => end = Some(instant("EndTime", value, now)?),
            "duration" => {
                let secs = sluice_cluster::time::parse_duration(value).with_context(|| {
                    format!("Duration={value}: expected minutes or [D-]HH:MM:SS")
                })?;
                duration = Some(secs as i64);
            }
            "nodes" => {
                r.nodes = sluice_hostlist::expand(value)
                    .with_context(|| format!("Nodes={value}: expected a hostlist"))?
            }
            "licenses" => r.licenses = split_outside_brackets(value),
            "users" => r.users = value.split(',').map(str::to_string).collect(),
            "accounts" => r.accounts = value.split(',').map(str::to_string).collect(),
            other => bail!(
                "{other}: unknown key (expected ReservationName, StartTime, Duration, EndTime, \
                 Nodes, Licenses, Users or Accounts)"
            ),
        }
    }
    if r.name.is_empty() {
        bail!("ReservationName= is required");
    }
    r.end = match (duration, end) {
        (Some(_), Some(_)) => bail!("give Duration= or EndTime=, not both"),
        (Some(d), None) => r.start + d,
        (None, Some(e)) => e,
        (None, None) => bail!("Duration= or EndTime= is required"),
    };
    if r.end <= r.start {
        bail!("the reservation ends before it starts");
    }
    Ok(r)
}

fn instant(key: &str, value: &str, now: i64) -> anyhow::Result<i64> {
    super::clock::parse_user_time(value, now, super::clock::Zone::Local).ok_or_else(
        || anyhow::anyhow!("{key}={value}: expected a date as Slurm writes them (now+N[units], YYYY-MM-DD[THH:MM[:SS]], HH:MM, tomorrow…) or Unix seconds"),
    )
}

/// Splits at commas that are not inside `[…]` or `(…)`, so `natural(node[01,03]):2,lic:1` is two.
fn split_outside_brackets(text: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in text.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn pairs_become_a_record_with_resolved_times() {
        let r = record(
            &pairs(&[
                "ReservationName=maint",
                "StartTime=now+1h",
                "Duration=1-00:00:00",
                "Nodes=node[01-03]",
                "Licenses=natural(node[01,03]):2,lic:1",
                "Users=alice,bob",
            ]),
            1_000,
        )
        .unwrap();
        assert_eq!((r.name.as_str(), r.start, r.end), ("maint", 4_600, 91_000));
        assert_eq!(r.nodes, vec!["node01", "node02", "node03"]);
        assert_eq!(r.licenses, vec!["natural(node[01,03]):2", "lic:1"]);
        assert_eq!(r.users, vec!["alice", "bob"]);
    }

    #[test]
    fn bad_pairs_say_what_was_expected() {
        let err = |list: &[&str]| record(&pairs(list), 0).unwrap_err().to_string();
        assert!(err(&["StartTime=now", "Duration=5"]).contains("ReservationName"));
        assert!(err(&["ReservationName=x"]).contains("Duration= or EndTime="));
        assert!(err(&["ReservationName=x", "Duration=soon"]).contains("Duration=soon"));
        assert!(err(&["ReservationName=x", "Duration=5", "Nodes=n[1-"]).contains("hostlist"));
        assert!(err(&["ReservationName=x", "Color=red"]).contains("unknown key"));
        assert!(err(&["ReservationName=x", "StartTime=100", "EndTime=50"]).contains("ends before"));
    }
}
