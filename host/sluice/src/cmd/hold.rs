//! `sluice hold` and `sluice release` (scontrol hold/release): one job action per id (an admin's
//! hold needs an admin to release).

use sluice_api::{JobHeld, JobReleased};

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
    let mut c = args.conn.client();
    let (mut held, mut released) = (Vec::<JobHeld>::new(), Vec::<JobReleased>::new());
    for id in &args.jobs {
        match action {
            Action::Hold => held.push(c.post_empty(&format!("/v1/jobs/{id}/hold"))?),
            Action::Release => released.push(c.post_empty(&format!("/v1/jobs/{id}/release"))?),
        }
    }
    if args.conn.json {
        match action {
            Action::Hold => print_json(&held),
            Action::Release => print_json(&released),
        }
    }
    Ok(())
}
