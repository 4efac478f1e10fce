//! `sluice prio` (sprio): pending jobs' priority and its weighted factors.

use super::daemon_client::{Conn, cell, print_json};

/// Arguments of `sluice prio`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice prio`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let rows = args.conn.client().get("/v1/prio")?;
    if args.conn.json {
        print_json(&rows);
        return Ok(());
    }
    let rows = rows.as_array().cloned().unwrap_or_default();
    let mut factors: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            r["factors"]
                .as_object()
                .into_iter()
                .flat_map(|m| m.keys().cloned())
        })
        .collect();
    factors.sort();
    factors.dedup();
    print!(
        "{:>8} {:<9} {:<8} {:>10}",
        "JOBID", "PARTITION", "USER", "PRIORITY"
    );
    for f in &factors {
        print!(" {:>10}", f);
    }
    println!();
    for r in &rows {
        print!(
            "{:>8} {:<9} {:<8} {:>10}",
            cell(r, "job_id"),
            cell(r, "partition"),
            cell(r, "user"),
            cell(r, "priority")
        );
        for f in &factors {
            print!(" {:>10.0}", r["factors"][f].as_f64().unwrap_or(0.0));
        }
        println!();
    }
    Ok(())
}
