//! `sluice register NODE [NodeAddr=… NodeHostname=…]`: a node says it booted, as slurmd
//! registers with slurmctld — what a node's agent, or a site's ResumeProgram, calls.

use anyhow::{Context as _, bail};
use sluice_api::{NodeRegistered, RegisterRequest};
use sluice_client::segment;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice register`.
#[derive(clap::Args)]
pub struct Args {
    /// The node's name.
    node: String,
    /// `NodeAddr=ADDRESS` and `NodeHostname=NAME` (scontrol's spelling, any case).
    pairs: Vec<String>,
    #[command(flatten)]
    conn: Conn,
}

/// The request `pairs` ask for.
pub fn request(pairs: &[String]) -> anyhow::Result<RegisterRequest> {
    let mut req = RegisterRequest::default();
    for p in pairs {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("register: {p}: expected NodeAddr=… or NodeHostname=…"))?;
        match k.to_ascii_lowercase().as_str() {
            "nodeaddr" => req.node_addr = Some(v.to_string()),
            "nodehostname" => req.node_hostname = Some(v.to_string()),
            other => bail!("register: {other}: expected NodeAddr or NodeHostname"),
        }
    }
    Ok(req)
}

/// Runs `sluice register`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let req = request(&args.pairs)?;
    let answer: NodeRegistered = args
        .conn
        .client()
        .post(&format!("/v1/nodes/{}/register", segment(&args.node)), &req)?;
    if args.conn.json {
        print_json(&answer);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scontrols_keys_in_any_case() {
        let r = request(&["nodeaddr=10.0.0.7".into(), "NodeHostname=ec1".into()]).unwrap();
        assert_eq!(r.node_addr.as_deref(), Some("10.0.0.7"));
        assert_eq!(r.node_hostname.as_deref(), Some("ec1"));
        assert!(request(&["Weight=3".into()]).is_err());
        assert!(request(&["10.0.0.7".into()]).is_err());
    }
}
