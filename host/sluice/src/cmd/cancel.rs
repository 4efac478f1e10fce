//! `sluice cancel` (scancel): cancel jobs, or send them a signal with `--signal`.

use sluice_api::{CancelRequest, JobCancelled};

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
        let req = CancelRequest {
            signal: args.signal,
        };
        match c.post::<_, JobCancelled>(&format!("/v1/jobs/{id}/cancel"), &req) {
            Ok(v) => out.push(v),
            Err(e) => {
                eprintln!("sluice cancel: error: {e}");
                first_err.get_or_insert(e);
            }
        }
    }
    if args.conn.json {
        print_json(&out);
    }
    match first_err {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
