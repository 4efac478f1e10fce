//! `sluice share` (sshare -l): the association tree with shares, usage and fair-share factors.

use super::daemon_client::{Conn, cell, print_json};

/// Arguments of `sluice share`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice share`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let rows = args.conn.client().get("/v1/share")?;
    if args.conn.json {
        print_json(&rows);
        return Ok(());
    }
    println!(
        "{:<20} {:<10} {:>10} {:>11} {:>11} {:>11} {:>10} {:>10}",
        "Account",
        "User",
        "RawShares",
        "NormShares",
        "RawUsage",
        "EffectvUsage",
        "FairShare",
        "LevelFS"
    );
    for r in rows.as_array().into_iter().flatten() {
        let depth = r["depth"].as_u64().unwrap_or(0) as usize;
        let account = format!("{}{}", " ".repeat(depth), cell(r, "account"));
        let f = |k: &str| r[k].as_f64().map_or(String::new(), |v| format!("{v:.6}"));
        println!(
            "{:<20} {:<10} {:>10} {:>11} {:>11.0} {:>11} {:>10} {:>10}",
            account,
            cell(r, "user"),
            r["raw_shares"]
                .as_u64()
                .map_or("parent".into(), |v| v.to_string()),
            f("norm_shares"),
            r["raw_usage"].as_f64().unwrap_or(0.0),
            f("effective_usage"),
            f("fair_share"),
            f("level_fs"),
        );
    }
    Ok(())
}
