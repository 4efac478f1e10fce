//! `sluice info` (sinfo): nodes grouped by partition and state, with power symbols
//! (`~` powered down, `#` powering up, `%` powering down, `*` not responding); `-N` per node.

use std::collections::BTreeMap;

use serde::Serialize;
use sluice_api::{NodeRow, PartitionRow};

use super::daemon_client::{Conn, duration, print_json};

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
    let nodes: Vec<NodeRow> = c.get("/v1/nodes")?;
    let partitions: Vec<PartitionRow> = c.get("/v1/partitions")?;
    if args.conn.json {
        /// What `info --json` prints: both answers it read.
        #[derive(Serialize)]
        struct Both<'a> {
            nodes: &'a [NodeRow],
            partitions: &'a [PartitionRow],
        }
        print_json(&Both {
            nodes: &nodes,
            partitions: &partitions,
        });
        return Ok(());
    }
    if args.per_node {
        println!(
            "{:<15} {:>5} {:<10} {:>5}",
            "NODELIST", "NODES", "PARTITION", "STATE"
        );
        for n in &nodes {
            let st = short_state(&n.state, &n.power_symbol);
            for p in &n.partitions {
                println!("{:<15} {:>5} {:<10} {:>5}", n.name, 1, p, st);
            }
        }
        return Ok(());
    }
    println!(
        "{:<9} {:>5} {:>10} {:>6} {:>6} NODELIST",
        "PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE"
    );
    for p in &partitions {
        let pname = &p.name;
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for n in nodes.iter().filter(|n| n.partitions.contains(pname)) {
            groups
                .entry(short_state(&n.state, &n.power_symbol))
                .or_default()
                .push(n.name.clone());
        }
        let limit = p.max_time.map_or("infinite".into(), duration);
        let star = if p.default { "*" } else { "" };
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
    Ok(())
}
