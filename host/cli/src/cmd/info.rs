//! `sluice info` (sinfo): nodes grouped by partition and state, with power symbols
//! (`~` powered down, `#` powering up, `%` powering down, `*` not responding); `-N` per node.

use std::collections::BTreeMap;

use serde_json::Value;

use super::daemon_client::{Conn, cell, duration, print_json};

/// Arguments of `sluice info`.
#[derive(clap::Args)]
pub struct Args {
    /// One line per node.
    #[arg(short = 'N', long = "Node")]
    per_node: bool,
    #[command(flatten)]
    conn: Conn,
}

/// sinfo's short state (`idle`, `mix`, `alloc`, `drain`, `down`…) with its symbol.
pub fn short_state(state: &str, symbol: &str) -> String {
    let s = state.to_ascii_lowercase();
    let base = if s.starts_with("mixed") {
        "mix"
    } else if s.starts_with("alloc") {
        "alloc"
    } else if s.starts_with("drain") && s.contains("ing") {
        "drng"
    } else if s.starts_with("drain") {
        "drain"
    } else if s.starts_with("down") {
        "down"
    } else if s.starts_with("idle") {
        "idle"
    } else {
        s.split('+').next().unwrap_or("unk")
    };
    let not_responding = s.contains("not_responding") || s.ends_with('*');
    format!(
        "{base}{symbol}{}",
        if not_responding && symbol.is_empty() {
            "*"
        } else {
            ""
        }
    )
}

/// Runs `sluice info`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut c = args.conn.client();
    let nodes = c.get("/v1/nodes")?;
    let parts = c.get("/v1/partitions")?;
    if args.conn.json {
        print_json(&serde_json::json!({"nodes": nodes, "partitions": parts}));
        return Ok(());
    }
    let nodes = nodes.as_array().cloned().unwrap_or_default();
    let parts = parts.as_array().cloned().unwrap_or_default();
    if args.per_node {
        println!(
            "{:<15} {:>5} {:<10} {:>5}",
            "NODELIST", "NODES", "PARTITION", "STATE"
        );
        for n in &nodes {
            let st = short_state(&cell(n, "state"), &cell(n, "power_symbol"));
            for p in n["partitions"].as_array().into_iter().flatten() {
                println!(
                    "{:<15} {:>5} {:<10} {:>5}",
                    cell(n, "name"),
                    1,
                    p.as_str().unwrap_or(""),
                    st
                );
            }
        }
        return Ok(());
    }
    println!(
        "{:<9} {:>5} {:>10} {:>6} {:>6} NODELIST",
        "PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE"
    );
    for p in &parts {
        let pname = cell(p, "name");
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for n in nodes.iter().filter(|n| {
            n["partitions"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|x| x.as_str() == Some(&pname)))
        }) {
            groups
                .entry(short_state(&cell(n, "state"), &cell(n, "power_symbol")))
                .or_default()
                .push(cell(n, "name"));
        }
        let limit = p["max_time"].as_u64().map_or("infinite".into(), duration);
        let star = if p["default"].as_bool() == Some(true) {
            "*"
        } else {
            ""
        };
        for (state, names) in groups {
            println!(
                "{:<9} {:>5} {:>10} {:>6} {:>6} {}",
                format!("{pname}{star}"),
                "up",
                limit,
                names.len(),
                state,
                sluice_hostlist::compress(&names)
            );
        }
    }
    let _ = Value::Null;
    Ok(())
}
