//! `sluice share` (sshare -l): the association tree with shares, usage and fair-share factors.

use sluice_api::ShareRow;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice share`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice share`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let rows: Vec<ShareRow> = args.conn.client().get("/v1/share")?;
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
    let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
    for r in &rows {
        let account = format!("{}{}", " ".repeat(r.depth as usize), r.account);
        println!(
            "{:<20} {:<10} {:>10} {:>11} {:>11.0} {:>11} {:>10} {:>10}",
            account,
            r.user.as_deref().unwrap_or(""),
            r.raw_shares.map_or("parent".into(), |v| v.to_string()),
            f(r.norm_shares),
            r.raw_usage,
            f(r.effective_usage),
            f(r.fair_share),
            f(r.level_fs),
        );
    }
    Ok(())
}
