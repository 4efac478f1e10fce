//! `sluice update` (scontrol update): `job ID Key=Value…` for pending jobs, `node NAMES State=DRAIN|RESUME|DOWN Reason=…`.

use anyhow::{Context, bail};
use sluice_api::{JobUpdated, NodeActionDone, NodeActionRequest, UpdateRequest};

use sluice_daemon::client::segment;

use super::daemon_client::{Conn, print_json};

/// Arguments of `sluice update`.
#[derive(clap::Args)]
pub struct Args {
    /// `job` or `node`.
    what: String,
    /// Job id or node names (a hostlist).
    target: String,
    /// `Key=Value` pairs: job TimeLimit, Nice, Name, Partition, QOS, NumNodes, BeginTime; node State, Reason.
    pairs: Vec<String>,
    #[command(flatten)]
    conn: Conn,
}

/// Runs `sluice update`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut kv = Vec::new();
    for p in &args.pairs {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("{p}: expected Key=Value"))?;
        kv.push((k.to_ascii_lowercase(), v.to_string()));
    }
    let mut c = args.conn.client();
    match args.what.as_str() {
        "job" => {
            let mut u = UpdateRequest::default();
            for (k, v) in kv {
                match k.as_str() {
                    "timelimit" => {
                        u.time_limit =
                            Some(sluice_cluster::time::parse_duration(&v).with_context(|| {
                                format!("TimeLimit={v}: expected minutes or [D-]HH:MM:SS")
                            })?)
                    }
                    "nice" => {
                        u.nice = Some(
                            v.parse()
                                .with_context(|| format!("Nice={v}: expected an integer"))?,
                        )
                    }
                    "name" | "jobname" => u.name = Some(v),
                    "partition" => u.partition = Some(v),
                    "qos" => u.qos = Some(v),
                    "numnodes" => {
                        u.min_nodes = Some(
                            v.parse()
                                .with_context(|| format!("NumNodes={v}: expected a count"))?,
                        )
                    }
                    "begintime" => {
                        u.begin = Some(super::submit::parse_begin(
                            &v,
                            std::time::SystemTime::now()
                                .duration_since(std::time::UNIX_EPOCH)?
                                .as_secs() as i64,
                        )?)
                    }
                    other => bail!(
                        "update job: unknown key {other}; expected TimeLimit, Nice, Name, Partition, QOS, NumNodes or BeginTime"
                    ),
                }
            }
            let answer: JobUpdated =
                c.post(&format!("/v1/jobs/{}/update", segment(&args.target)), &u)?;
            if args.conn.json {
                print_json(&answer);
            }
        }
        "node" => {
            let state = kv
                .iter()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.to_ascii_lowercase())
                .context("update node: State=DRAIN|RESUME|DOWN is required")?;
            let reason = kv
                .iter()
                .find(|(k, _)| k == "reason")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            if !["drain", "resume", "down"].contains(&state.as_str()) {
                bail!("update node: State={state}: expected DRAIN, RESUME or DOWN");
            }
            let answer: NodeActionDone = c.post(
                &format!("/v1/nodes/{}/{state}", segment(&args.target)),
                &NodeActionRequest { reason },
            )?;
            if args.conn.json {
                print_json(&answer);
            }
        }
        other => bail!("update {other}: expected job or node"),
    }
    Ok(())
}
