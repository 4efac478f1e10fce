//! `sluice hold` and `sluice release` (scontrol hold/release): one job action per id (an admin's
//! hold needs an admin to release).

use serde_json::json;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice hold` and `sluice release`.
#[derive(clap::Args)]
pub struct Args {
    /// Job ids.
    #[arg(required = true)]
    jobs: Vec<u64>,
    #[command(flatten)]
    conn: Conn,
}

/// Which of the two.
#[derive(Clone, Copy)]
pub enum Action {
    /// Hold pending jobs.
    Hold,
    /// Release held jobs.
    Release,
}

/// Runs `sluice hold` or `sluice release`.
pub fn run(args: Args, action: Action) -> anyhow::Result<()> {
    let verb = match action {
        Action::Hold => "hold",
        Action::Release => "release",
    };
    let mut c = args.conn.client();
    let mut out = Vec::new();
    for id in &args.jobs {
        out.push(c.post(&format!("/v1/jobs/{id}/{verb}"), &json!({}))?);
    }
    if args.conn.json {
        print_json(&json!(out));
    }
    Ok(())
}
