//! `sluice show job|node|partition|license|config|reservation` (scontrol show), `Key=Value` style.

use anyhow::bail;
use serde_json::Value;

use super::daemon_client::{Conn, print_json};

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

/// Runs `sluice show`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut c = args.conn.client();
    let v = match (args.what.as_str(), &args.name) {
        ("job", Some(id)) => c.get(&format!("/v1/jobs/{id}"))?,
        ("job", None) => c.get("/v1/jobs")?,
        ("node", Some(n)) => c.get(&format!("/v1/nodes/{n}"))?,
        ("node", None) => c.get("/v1/nodes")?,
        ("partition", name) => {
            let all = c.get("/v1/partitions")?;
            match name {
                Some(n) => all
                    .as_array()
                    .and_then(|a| a.iter().find(|p| p["name"] == n.as_str()).cloned())
                    .ok_or_else(|| anyhow::anyhow!("partition {n} not found"))?,
                None => all,
            }
        }
        ("license" | "licenses", _) => c.get("/v1/licenses")?,
        ("config", _) => c.get("/v1/config")?,
        ("reservation" | "reservations", _) => c.get("/v1/reservations")?,
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
