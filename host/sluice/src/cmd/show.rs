//! `sluice show job|node|partition|license|config|reservation` (scontrol show): jobs, nodes and
//! partitions in scontrol's layout (`show_layout`), the rest as `Key=Value` pairs.

use anyhow::bail;
use serde::Serialize;
use serde_json::Value;
use sluice_api::{
    Config, Job, JobQuery, LicenseRow, NodeReport, NodeRow, PartitionRow, Reservation,
};
use sluice_daemon::client::{jobs_path, segment};

use super::daemon_client::{Conn, print_json};
use super::sbatch::clock::Zone;
use super::show_layout;

/// Arguments of `sluice show`.
#[derive(clap::Args)]
pub struct Args {
    /// What to show: job, node, partition, license, config, reservation.
    what: String,
    /// Which one (job id, node name, partition name); all when omitted.
    name: Option<String>,
    #[command(flatten)]
    conn: Conn,
}

fn camel(key: &str) -> String {
    key.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Prints an object as scontrol does: `Key=Value` pairs, a few per line.
pub fn key_values(v: &Value) -> String {
    let Some(map) = v.as_object() else {
        return v.to_string();
    };
    let mut out = String::new();
    let mut line = String::new();
    let mut nested = Vec::new();
    for (k, val) in map {
        // Lists of records (a node's devices) get a line each, as scontrol prints sub-records.
        if let Value::Array(items) = val
            && !items.is_empty()
            && items.iter().all(Value::is_object)
        {
            nested.extend(items.iter().map(|item| {
                format!(
                    "     {}: {}",
                    camel(k),
                    key_values(item).trim_end().replace("\n   ", " ")
                )
            }));
            continue;
        }
        let text = match val {
            Value::Null => "(null)".into(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let pair = format!("{}={} ", camel(k), text);
        if line.len() + pair.len() > 100 && !line.is_empty() {
            out.push_str("   ");
            out.push_str(line.trim_end());
            out.push('\n');
            line.clear();
        }
        line.push_str(&pair);
    }
    if !line.is_empty() {
        out.push_str("   ");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for n in nested {
        out.push_str(&n);
        out.push('\n');
    }
    out.trim_start().to_string()
}

/// An answer as its fields, for `Key=Value` printing.
fn fields<T: Serialize>(answer: T) -> anyhow::Result<Value> {
    Ok(serde_json::to_value(answer)?)
}

/// Runs `sluice show`: jobs, nodes and partitions in scontrol's layout; the rest as
/// `Key=Value` pairs of their fields.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut c = args.conn.client();
    let zone = Zone::Local;
    let what = args.what.to_ascii_lowercase();
    if !args.conn.json {
        let records: Option<Vec<String>> = match (what.as_str(), &args.name) {
            ("job" | "jobs" | "jobid", Some(id)) => Some(vec![show_layout::job(
                &c.get::<Job>(&format!("/v1/jobs/{}", segment(id)))?,
                zone,
            )]),
            ("job" | "jobs", None) => Some(
                c.get::<Vec<Job>>(&jobs_path(&JobQuery::default()))?
                    .iter()
                    .map(|j| show_layout::job(j, zone))
                    .collect(),
            ),
            ("node" | "nodes" | "nodename", Some(n)) => Some(vec![show_layout::node(
                &c.get::<NodeReport>(&format!("/v1/nodes/{}", segment(n)))?,
            )]),
            ("partition" | "partitions" | "partitionname", name) => {
                let all: Vec<PartitionRow> = c.get("/v1/partitions")?;
                if let Some(n) = name
                    && !all.iter().any(|p| p.name == *n)
                {
                    bail!("Partition {n} not found");
                }
                Some(
                    all.iter()
                        .filter(|p| name.as_ref().is_none_or(|n| p.name == *n))
                        .map(show_layout::partition)
                        .collect(),
                )
            }
            _ => None,
        };
        if let Some(records) = records {
            for r in records {
                println!("{r}");
            }
            return Ok(());
        }
    }
    // Each answer is read as its type, then printed field by field whatever the type.
    let v = match (what.as_str(), &args.name) {
        ("job" | "jobs" | "jobid", Some(id)) => {
            fields(c.get::<Job>(&format!("/v1/jobs/{}", segment(id)))?)?
        }
        ("job" | "jobs", None) => fields(c.get::<Vec<Job>>(&jobs_path(&JobQuery::default()))?)?,
        ("node" | "nodes" | "nodename", Some(n)) => {
            fields(c.get::<NodeReport>(&format!("/v1/nodes/{}", segment(n)))?)?
        }
        ("node" | "nodes", None) => fields(c.get::<Vec<NodeRow>>("/v1/nodes")?)?,
        ("partition" | "partitions" | "partitionname", name) => {
            let all: Vec<PartitionRow> = c.get("/v1/partitions")?;
            match name {
                Some(n) => fields(
                    all.into_iter()
                        .find(|p| p.name == *n)
                        .ok_or_else(|| anyhow::anyhow!("Partition {n} not found"))?,
                )?,
                None => fields(all)?,
            }
        }
        ("license" | "licenses", _) => fields(c.get::<Vec<LicenseRow>>("/v1/licenses")?)?,
        ("config", _) => fields(c.get::<Config>("/v1/config")?)?,
        ("reservation" | "reservations", _) => {
            fields(c.get::<Vec<Reservation>>("/v1/reservations")?)?
        }
        (other, _) => {
            bail!("show {other}: expected job, node, partition, license, config or reservation")
        }
    };
    if args.conn.json {
        print_json(&v);
    } else if let Some(items) = v.as_array() {
        for item in items {
            println!("{}", key_values(item));
        }
    } else {
        println!("{}", key_values(&v));
    }
    Ok(())
}
