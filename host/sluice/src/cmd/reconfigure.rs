//! `sluice reconfigure` (scontrol reconfigure): reload daemon.toml and the cluster file; a file
//! that fails to load changes nothing and the error says why.

use sluice_api::Reconfigured;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice reconfigure`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice reconfigure`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let v: Reconfigured = args.conn.client().post_empty("/v1/reconfigure")?;
    if args.conn.json {
        print_json(&v);
    } else {
        let staged = if v.plugins_staged.is_empty() {
            "none".to_string()
        } else {
            v.plugins_staged.join(", ")
        };
        println!("reconfigured; plugins staged: {staged}");
        if !v.note.is_empty() {
            println!("note: {}", v.note);
        }
    }
    Ok(())
}
