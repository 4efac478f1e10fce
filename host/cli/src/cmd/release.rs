//! `sluice release` (scontrol release): release held jobs.

use serde_json::json;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice release`.
#[derive(clap::Args)]
pub struct Args {
    /// Job ids.
    #[arg(required = true)]
    jobs: Vec<u64>,
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice release`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut c = args.conn.client();
    let mut out = Vec::new();
    for id in &args.jobs {
        out.push(c.post(&format!("/v1/jobs/{id}/release"), &json!({}))?);
    }
    if args.conn.json {
        print_json(&json!(out));
    }
    Ok(())
}
