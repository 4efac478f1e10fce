//! `sluice hold` (scontrol hold): hold pending jobs (an admin's hold needs an admin to release).

use serde_json::json;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice hold`.
#[derive(clap::Args)]
pub struct Args {
    /// Job ids.
    #[arg(required = true)]
    jobs: Vec<u64>,
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice hold`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut c = args.conn.client();
    let mut out = Vec::new();
    for id in &args.jobs {
        out.push(c.post(&format!("/v1/jobs/{id}/hold"), &json!({}))?);
    }
    if args.conn.json {
        print_json(&json!(out));
    }
    Ok(())
}
