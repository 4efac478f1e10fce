//! `sluice show job|node|partition|license|config|reservation` (scontrol show): jobs, nodes and
//! partitions in scontrol's layout (`show_layout`), the rest as `Key=Value` pairs.

use anyhow::bail;
use serde::Serialize;
use serde_json::Value;
use sluice_api::{
    Config, Job, JobQuery, LicenseRow, NodeReport, NodeRow, PartitionRow, Reservation,
};
use sluice_client::{jobs_path, segment};

use super::clock::Zone;
use super::daemon_client::{Conn, print_json};
use super::job_arrays::JobRef;
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

/// What `show` read: jobs, a node and partitions print in scontrol's layout, the rest field by
/// field; `one` keeps `--json` printing the object alone when one was named.
enum Shown {
    /// Jobs.
    Jobs { jobs: Vec<Job>, one: bool },
    /// One node.
    Node(NodeReport),
    /// Partitions.
    Partitions { parts: Vec<PartitionRow>, one: bool },
    /// Anything else, as its fields.
    Fields(Value),
}

/// Whether job `id` is the first task of an array, so that `show job ID` means the array.
fn array_named(c: &mut sluice_client::Client, id: &str) -> anyhow::Result<bool> {
    let Ok(n) = id.parse::<u64>() else {
        return Ok(false);
    };
    let job = c.get::<Job>(&format!("/v1/jobs/{n}"))?;
    Ok(job.array.is_some_and(|a| a.job_id == n))
}

/// Reads what `show WHAT [NAME]` names from the daemon.
fn fetch(
    c: &mut sluice_client::Client,
    what: &str,
    name: Option<&String>,
) -> anyhow::Result<Shown> {
    Ok(match (what, name) {
        ("job" | "jobs" | "jobid", Some(id)) if id.contains('_') || array_named(c, id)? => {
            // An array id shows every task, `123_4` the one task, as scontrol does.
            let all: Vec<Job> = c.get(&jobs_path(&JobQuery {
                states: Some(JobQuery::ALL_STATES.into()),
                ..JobQuery::default()
            }))?;
            let wanted = JobRef::parse(id)?.resolve(&all);
            let jobs: Vec<Job> = all
                .into_iter()
                .filter(|j| j.array.is_some() && wanted.contains(&j.job_id))
                .collect();
            if jobs.is_empty() {
                bail!("Invalid job id specified: {id}");
            }
            Shown::Jobs { jobs, one: false }
        }
        ("job" | "jobs" | "jobid", Some(id)) => Shown::Jobs {
            jobs: vec![c.get::<Job>(&format!("/v1/jobs/{}", segment(id)))?],
            one: true,
        },
        ("job" | "jobs" | "jobid", None) => Shown::Jobs {
            jobs: c.get(&jobs_path(&JobQuery::default()))?,
            one: false,
        },
        ("node" | "nodes" | "nodename", Some(n)) => {
            Shown::Node(c.get(&format!("/v1/nodes/{}", segment(n)))?)
        }
        ("node" | "nodes" | "nodename", None) => {
            Shown::Fields(fields(c.get::<Vec<NodeRow>>("/v1/nodes")?)?)
        }
        ("partition" | "partitions" | "partitionname", name) => {
            let mut parts: Vec<PartitionRow> = c.get("/v1/partitions")?;
            if let Some(n) = name {
                parts.retain(|p| p.name == *n);
                if parts.is_empty() {
                    bail!("Partition {n} not found");
                }
            }
            Shown::Partitions {
                parts,
                one: name.is_some(),
            }
        }
        ("license" | "licenses", _) => {
            Shown::Fields(fields(c.get::<Vec<LicenseRow>>("/v1/licenses")?)?)
        }
        ("config", _) => Shown::Fields(fields(c.get::<Config>("/v1/config")?)?),
        ("reservation" | "reservations", _) => {
            Shown::Fields(fields(c.get::<Vec<Reservation>>("/v1/reservations")?)?)
        }
        (other, _) => {
            bail!("show {other}: expected job, node, partition, license, config or reservation")
        }
    })
}

/// Runs `sluice show`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut c = args.conn.client();
    let what = args.what.to_ascii_lowercase();
    let shown = fetch(&mut c, &what, args.name.as_ref())?;
    if args.conn.json {
        let v = match shown {
            Shown::Jobs {
                mut jobs,
                one: true,
            } => fields(jobs.remove(0))?,
            Shown::Jobs { jobs, .. } => fields(jobs)?,
            Shown::Node(n) => fields(n)?,
            Shown::Partitions {
                mut parts,
                one: true,
            } => fields(parts.remove(0))?,
            Shown::Partitions { parts, .. } => fields(parts)?,
            Shown::Fields(v) => v,
        };
        print_json(&v);
        return Ok(());
    }
    let zone = Zone::Local;
    let records: Vec<String> = match shown {
        Shown::Jobs { jobs, .. } => jobs.iter().map(|j| show_layout::job(j, zone)).collect(),
        Shown::Node(n) => vec![show_layout::node(&n, zone)],
        Shown::Partitions { parts, .. } => parts.iter().map(show_layout::partition).collect(),
        Shown::Fields(Value::Array(items)) => items.iter().map(key_values).collect(),
        Shown::Fields(v) => vec![key_values(&v)],
    };
    for r in records {
        println!("{r}");
    }
    Ok(())
}
