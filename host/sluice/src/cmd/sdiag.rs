//! `sluice sdiag`: the scheduler's statistics in sdiag's layout (`--json` for the raw figures).

use sluice_api::{CycleStats, Diag};

use super::clock::Zone;
use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice sdiag`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice sdiag`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let d: Diag = args.conn.client().get("/v1/diag")?;
    if args.conn.json {
        print_json(&d);
    } else {
        print!("{}", render(&d));
    }
    Ok(())
}

/// `Thu Nov 26 10:00:00 2026 (1764151200)`, as sdiag writes a time.
fn when(t: i64) -> String {
    // `struct tm`'s fields: months from 0, years from 1900.
    let c = Zone::Local.civil(t);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // 1970-01-01 was a Thursday; the local date's day number (its civil time read as UTC)
    // counts the weekday from it.
    let local_days = Zone::Utc
        .instant(c)
        .map_or(0, |local| local.div_euclid(86_400));
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {} ({t})",
        DAYS[local_days.rem_euclid(7) as usize],
        MONTHS[c.month.clamp(0, 11) as usize],
        c.day,
        c.hour,
        c.minute,
        c.second,
        c.year + 1900
    )
}

fn cycles(out: &mut String, s: &CycleStats, per_minute: u64) {
    use std::fmt::Write;
    let _ = writeln!(out, "\tLast cycle:   {}", s.last_cycle_us);
    let _ = writeln!(out, "\tMax cycle:    {}", s.max_cycle_us);
    let _ = writeln!(out, "\tTotal cycles: {}", s.cycles);
    let _ = writeln!(out, "\tMean cycle:   {}", s.mean_cycle_us);
    let _ = writeln!(out, "\tMean depth cycle:  {}", s.mean_depth);
    let _ = writeln!(out, "\tCycles per minute: {per_minute}");
    let _ = writeln!(out, "\tLast queue length: {}", s.last_queue_length);
}

/// The report, line for line as sdiag prints the parts sluice has.
fn render(d: &Diag) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let c = &d.counters;
    let stars = "*".repeat(55);
    let minutes = ((d.server_time - d.data_since) / 60).max(1) as u64;
    let _ = writeln!(out, "{stars}");
    let _ = writeln!(out, "sdiag output at {}", when(d.server_time));
    let _ = writeln!(out, "Data since      {}", when(d.data_since));
    let _ = writeln!(out, "{stars}");
    let _ = writeln!(out);
    let _ = writeln!(out, "Jobs submitted: {}", c.submitted);
    let _ = writeln!(out, "Jobs started:   {}", c.started);
    let _ = writeln!(out, "Jobs completed: {}", c.completed);
    let _ = writeln!(out, "Jobs canceled:  {}", c.cancelled);
    let _ = writeln!(out, "Jobs failed:    {}", c.failed);
    let _ = writeln!(out, "Jobs requeued:  {}", c.requeued);
    let _ = writeln!(out);
    let _ = writeln!(out, "Job states ts:  {}", when(d.server_time));
    let _ = writeln!(out, "Jobs pending:   {}", d.jobs_pending);
    let _ = writeln!(out, "Jobs running:   {}", d.jobs_running);
    let _ = writeln!(out);
    let _ = writeln!(out, "Main schedule statistics (microseconds):");
    cycles(&mut out, &d.main, d.main.cycles / minutes);
    let _ = writeln!(out);
    let b = &d.backfill;
    let _ = writeln!(out, "Backfilling stats");
    let _ = writeln!(
        out,
        "\tTotal backfilled jobs (since last slurm start): {}",
        b.started
    );
    let _ = writeln!(out, "\tTotal cycles: {}", b.cycles);
    let last = b.last_cycle_when.map_or("N/A".to_string(), when);
    let _ = writeln!(out, "\tLast cycle when: {last}");
    let _ = writeln!(out, "\tLast cycle: {}", b.last_cycle_us);
    let _ = writeln!(out, "\tMax cycle:  {}", b.max_cycle_us);
    let _ = writeln!(out, "\tMean cycle: {}", b.mean_cycle_us);
    let _ = writeln!(out, "\tLast depth cycle: {}", b.last_depth);
    let _ = writeln!(out, "\tDepth Mean: {}", b.mean_depth);
    let _ = writeln!(out, "\tLast queue length: {}", b.last_queue_length);
    let _ = writeln!(out);
    let _ = writeln!(out, "Remote Procedure Call statistics by endpoint");
    for e in &d.endpoints {
        let ave = e.total_time_us.checked_div(e.count).unwrap_or(0);
        let _ = writeln!(
            out,
            "\t{:<40} count:{:<6} ave_time:{:<6} total_time:{}",
            e.endpoint, e.count, ave, e.total_time_us
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_carries_every_figure_where_sdiag_puts_it() {
        let d = Diag {
            server_time: 1_764_151_200,
            data_since: 1_764_151_200 - 600,
            counters: sluice_api::Counters {
                submitted: 12,
                completed: 8,
                cancelled: 1,
                ..Default::default()
            },
            jobs_pending: 2,
            jobs_running: 1,
            main: CycleStats {
                cycles: 40,
                last_cycle_us: 1234,
                max_cycle_us: 5678,
                mean_cycle_us: 900,
                mean_depth: 3,
                last_queue_length: 2,
                ..Default::default()
            },
            backfill: CycleStats {
                cycles: 5,
                started: 3,
                ..Default::default()
            },
            endpoints: vec![sluice_api::EndpointStats {
                endpoint: "POST /v1/jobs".into(),
                count: 12,
                total_time_us: 4140,
            }],
        };
        let r = render(&d);
        for line in [
            "Jobs submitted: 12",
            "Jobs completed: 8",
            "Jobs canceled:  1",
            "Jobs pending:   2",
            "\tLast cycle:   1234",
            "\tMax cycle:    5678",
            "\tTotal cycles: 40",
            "\tCycles per minute: 4",
            "\tTotal backfilled jobs (since last slurm start): 3",
            "\tLast cycle when: N/A",
        ] {
            assert!(r.lines().any(|l| l == line), "{line:?} missing:\n{r}");
        }
        assert!(
            r.contains("POST /v1/jobs") && r.contains("ave_time:345"),
            "{r}"
        );
        assert!(r.contains("(1764151200)"), "{r}");
    }

    #[test]
    fn weekday_and_month_are_read_from_the_local_date() {
        // 2026-11-26 is a Thursday in every zone at UTC noon ± 11 h.
        let t = 1_795_694_400; // 2026-11-26T12:00:00Z
        let w = when(t);
        assert!(
            w.contains("Nov 26") || w.contains("Nov 27") || w.contains("Nov 25"),
            "{w}"
        );
        let day = Zone::Local.civil(t).day;
        let expected = match day {
            25 => "Wed",
            26 => "Thu",
            _ => "Fri",
        };
        assert!(w.starts_with(expected), "{w}");
        assert!(w.contains(" 2026 (1795694400)"), "{w}");
    }
}
