//! `sluice prio` (sprio): pending jobs' priority and its weighted factors.

use std::collections::BTreeSet;

use sluice_api::PriorityRow;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice prio`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice prio`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let rows: Vec<PriorityRow> = args.conn.client().get("/v1/prio")?;
    if args.conn.json {
        print_json(&rows);
        return Ok(());
    }
    let factors: BTreeSet<&String> = rows.iter().flat_map(|r| r.factors.keys()).collect();
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
            r.job_id, r.partition, r.user, r.priority
        );
        for f in &factors {
            print!(" {:>10.0}", r.factors.get(*f).copied().unwrap_or(0.0));
        }
        println!();
    }
    Ok(())
}
