//! `sluice reconfigure` (scontrol reconfigure): reload daemon.toml and the cluster file; a file
//! that fails to load changes nothing and the error says why.

use serde_json::json;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice reconfigure`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice reconfigure`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let v = args.conn.client().post("/v1/reconfigure", &json!({}))?;
    if args.conn.json {
        print_json(&v);
    } else {
        println!("reconfigured; plugins staged: {}", v["plugins_staged"]);
        if let Some(note) = v["note"].as_str().filter(|n| !n.is_empty()) {
            println!("note: {note}");
        }
    }
    Ok(())
}
