//! `sluice cancel` (scancel): cancel jobs, or send them a signal with `--signal`.

use serde_json::json;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice cancel`.
#[derive(clap::Args)]
pub struct Args {
    /// Job ids.
    #[arg(required = true)]
    jobs: Vec<u64>,
    /// Send this signal number to the job's processes instead of cancelling it.
    #[arg(short = 's', long)]
    signal: Option<i32>,
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice cancel`; every job is tried, the first refusal is the error.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut c = args.conn.client();
    let mut first_err = None;
    let mut out = Vec::new();
    for id in &args.jobs {
        match c.post(
            &format!("/v1/jobs/{id}/cancel"),
            &json!({ "signal": args.signal }),
        ) {
            Ok(v) => out.push(v),
            Err(e) => {
                eprintln!("sluice cancel: error: {e}");
                first_err.get_or_insert(e);
            }
        }
    }
    if args.conn.json {
        print_json(&json!(out));
    }
    match first_err {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
