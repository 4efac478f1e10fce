//! `sluice info` (sinfo): nodes grouped by partition and state, with power symbols
//! (`~` powered down, `#` powering up, `%` powering down, `*` not responding); `-N` per node,
//! `-s` summarised, `-l` long, `-R` reasons, `-p` partitions, `-o` with sinfo's `%` fields,
//! `-h/--noheader` (help is `--help`).

use std::collections::BTreeMap;

use serde::Serialize;
use sluice_api::{NodeRow, PartitionRow};

use super::daemon_client::{Conn, duration, print_json};
use super::queue::render_rows;

/// sinfo's default format (`#` is as wide as the longest partition name).
pub const DEFAULT_FORMAT: &str = "%#P %.5a %.10l %.6D %.6t %N";
/// sinfo `-s`.
pub const SUMMARY_FORMAT: &str = "%#P %.5a %.10l %.16F %N";
/// sinfo `-l`.
pub const LONG_FORMAT: &str = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
/// sinfo `-N`.
pub const NODE_FORMAT: &str = "%#N %.6D %#P %6t";
/// sinfo `-R`.
pub const REASON_FORMAT: &str = "%20E %9u %19H %N";

/// Arguments of `sluice info`.
#[derive(clap::Args)]
pub struct Args {
    /// One line per node.
    #[arg(short = 'N', long = "Node")]
    per_node: bool,
    /// One line per partition, nodes counted allocated/idle/other/total.
    #[arg(short = 's', long = "summarize")]
    summarize: bool,
    /// Long listing.
    #[arg(short = 'l', long)]
    long: bool,
    /// Why nodes are down or drained.
    #[arg(short = 'R', long = "list-reasons")]
    reasons: bool,
    /// Only these partitions (comma-separated).
    #[arg(short = 'p', long)]
    partition: Option<String>,
    /// Output format with sinfo's fields: %P %R %a %l %D %t %T %N %c %m %f %E %F %s %r %h %g %u %H.
    #[arg(short = 'o', long)]
    format: Option<String>,
    /// No header.
    #[arg(short = 'h', long = "noheader")]
    noheader: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
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
    } else if s.starts_with("reserved") {
        "resv"
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

/// sinfo's long state (`%T`): `idle`, `mixed`, `allocated`, `drained`, `draining`, `down`.
fn long_state(short: &str) -> String {
    let (base, rest) = short.split_at(
        short
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(short.len()),
    );
    let long = match base {
        "mix" => "mixed",
        "alloc" => "allocated",
        "drain" => "drained",
        "drng" => "draining",
        "resv" => "reserved",
        other => other,
    };
    format!("{long}{rest}")
}

/// One line of sinfo: some nodes of a partition.
struct Group<'a> {
    partition: &'a PartitionRow,
    nodes: Vec<&'a NodeRow>,
    /// The nodes' shared short state; empty when a line mixes states (`-s`).
    state: String,
    /// The nodes' shared reason (`-R`).
    reason: String,
}

fn header(c: char) -> String {
    match c {
        'P' | 'R' => "PARTITION",
        'a' => "AVAIL",
        'l' => "TIMELIMIT",
        'D' => "NODES",
        't' | 'T' => "STATE",
        'N' => "NODELIST",
        'c' => "CPUS",
        'm' => "MEMORY",
        'f' => "AVAIL_FEATURES",
        'E' => "REASON",
        'F' => "NODES(A/I/O/T)",
        's' => "JOB_SIZE",
        'r' => "ROOT",
        'h' => "OVERSUBS",
        'g' => "GROUPS",
        'u' => "USER",
        'H' => "TIMESTAMP",
        _ => "?",
    }
    .into()
}

fn field(g: &Group<'_>, c: char) -> String {
    let p = g.partition;
    let range = |mut v: Vec<u64>| {
        v.sort_unstable();
        match (v.first(), v.last()) {
            (Some(a), Some(b)) if a == b => a.to_string(),
            (Some(a), Some(_)) => format!("{a}+"),
            _ => "0".into(),
        }
    };
    match c {
        'P' => format!("{}{}", p.name, if p.default { "*" } else { "" }),
        'R' => p.name.clone(),
        // sinfo's AVAIL: up, down, drain, inact.
        'a' => match p.state.as_str() {
            "DOWN" => "down",
            "DRAIN" => "drain",
            "INACTIVE" => "inact",
            _ => "up",
        }
        .into(),
        'l' => p.max_time.map_or("infinite".into(), duration),
        'D' => g.nodes.len().to_string(),
        't' => g.state.clone(),
        'T' => long_state(&g.state),
        'N' => {
            let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
            sluice_hostlist::compress(&names)
        }
        'c' => range(g.nodes.iter().map(|n| u64::from(n.cpus)).collect()),
        'm' => range(g.nodes.iter().map(|n| n.memory_mb).collect()),
        'f' => {
            let mut f: Vec<&str> = g
                .nodes
                .iter()
                .flat_map(|n| n.features.iter().map(String::as_str))
                .collect();
            f.sort_unstable();
            f.dedup();
            if f.is_empty() {
                "(null)".into()
            } else {
                f.join(",")
            }
        }
        'E' => g.reason.clone(),
        'F' => {
            let (mut a, mut i, mut o) = (0, 0, 0);
            for n in &g.nodes {
                match short_state(&n.state, "").trim_end_matches('*') {
                    "alloc" | "mix" => a += 1,
                    "idle" => i += 1,
                    _ => o += 1,
                }
            }
            format!("{a}/{i}/{o}/{}", g.nodes.len())
        }
        's' => format!(
            "1-{}",
            p.max_nodes.map_or("infinite".into(), |m| m.to_string())
        ),
        'r' => "no".into(),
        'h' => "NO".into(),
        'g' => "all".into(),
        'u' | 'H' => "Unknown".into(),
        _ => String::new(),
    }
}

/// The lines sinfo prints for these options.
fn groups<'a>(args: &Args, nodes: &'a [NodeRow], partitions: &'a [PartitionRow]) -> Vec<Group<'a>> {
    let wanted: Option<Vec<&str>> = args
        .partition
        .as_deref()
        .map(|p| p.split(',').map(str::trim).collect());
    let mut out = Vec::new();
    for p in partitions
        .iter()
        .filter(|p| wanted.as_ref().is_none_or(|w| w.contains(&p.name.as_str())))
    {
        let members = nodes.iter().filter(|n| n.partitions.contains(&p.name));
        if args.per_node {
            for n in members {
                out.push(Group {
                    partition: p,
                    nodes: vec![n],
                    state: short_state(&n.state, &n.power_symbol),
                    reason: n.reason.clone().unwrap_or_default(),
                });
            }
            continue;
        }
        if args.summarize {
            out.push(Group {
                partition: p,
                nodes: members.collect(),
                state: String::new(),
                reason: String::new(),
            });
            continue;
        }
        let mut by: BTreeMap<(String, String), Vec<&NodeRow>> = BTreeMap::new();
        for n in members {
            let reason = if args.reasons {
                match &n.reason {
                    Some(r) => r.clone(),
                    None => continue,
                }
            } else {
                String::new()
            };
            by.entry((short_state(&n.state, &n.power_symbol), reason))
                .or_default()
                .push(n);
        }
        out.extend(by.into_iter().map(|((state, reason), nodes)| Group {
            partition: p,
            nodes,
            state,
            reason,
        }));
    }
    if args.reasons {
        // -R lists each reason once, over every partition.
        let mut seen: BTreeMap<String, Group<'a>> = BTreeMap::new();
        for g in out {
            let e = seen.entry(g.reason.clone()).or_insert(Group {
                partition: g.partition,
                nodes: Vec::new(),
                state: g.state.clone(),
                reason: g.reason.clone(),
            });
            for n in g.nodes {
                if !e.nodes.iter().any(|m| m.name == n.name) {
                    e.nodes.push(n);
                }
            }
        }
        return seen.into_values().collect();
    }
    out
}

/// Replaces `%#X` with the width of the longest value of field `X` (at least its header's).
fn widen<T>(format: &str, rows: &[T], field: impl Fn(&T, char) -> String) -> String {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' && chars.peek() == Some(&'#') {
            chars.next();
            if let Some(&f) = chars.peek() {
                let w = rows
                    .iter()
                    .map(|r| field(r, f).len())
                    .chain([header(f).len()])
                    .max()
                    .unwrap_or(0);
                out.push_str(&w.to_string());
            }
        }
    }
    out
}

/// The text sinfo prints for these options.
fn report(args: &Args, nodes: &[NodeRow], partitions: &[PartitionRow]) -> String {
    let rows = groups(args, nodes, partitions);
    let format = args.format.clone().unwrap_or_else(|| {
        if args.reasons {
            REASON_FORMAT
        } else if args.per_node {
            NODE_FORMAT
        } else if args.summarize {
            SUMMARY_FORMAT
        } else if args.long {
            LONG_FORMAT
        } else {
            DEFAULT_FORMAT
        }
        .into()
    });
    let format = widen(&format, &rows, field);
    render_rows(&rows, &format, !args.noheader, header, field)
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
    print!("{}", report(&args, &nodes, &partitions));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    #[command(disable_help_flag = true)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn args(words: &[&str]) -> Args {
        Cli::parse_from(std::iter::once("info").chain(words.iter().copied())).args
    }

    fn node(name: &str, state: &str, parts: &[&str], reason: Option<&str>) -> NodeRow {
        NodeRow {
            name: name.into(),
            state: state.into(),
            power_symbol: String::new(),
            cpus: 8,
            memory_mb: 64_000,
            features: vec![],
            partitions: parts.iter().map(|p| p.to_string()).collect(),
            jobs: vec![],
            reason: reason.map(String::from),
        }
    }

    fn part(name: &str, default: bool) -> PartitionRow {
        PartitionRow {
            name: name.into(),
            default,
            nodes: String::new(),
            total_nodes: 0,
            max_time: Some(86_400),
            default_time: None,
            max_nodes: None,
            priority_tier: 1,
            priority_job_factor: 1,
            state: if name == "debug" { "DOWN" } else { "UP" }.into(),
            oversubscribe: "NO".into(),
        }
    }

    fn cluster() -> (Vec<NodeRow>, Vec<PartitionRow>) {
        (
            vec![
                node("n1", "IDLE", &["batch", "debug"], None),
                node("n2", "IDLE", &["batch"], None),
                node("n3", "ALLOCATED", &["batch"], None),
                node("n4", "DRAINED", &["batch"], Some("disk")),
                node("n5", "RESERVED", &["batch"], None),
            ],
            vec![part("batch", true), part("debug", false)],
        )
    }

    #[test]
    fn default_groups_by_partition_and_state() {
        let (n, p) = cluster();
        let out = report(&args(&[]), &n, &p);
        assert_eq!(
            out,
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n\
             batch*       up 1-00:00:00      1  alloc n3\n\
             batch*       up 1-00:00:00      1  drain n4\n\
             batch*       up 1-00:00:00      2   idle n[1-2]\n\
             batch*       up 1-00:00:00      1   resv n5\n\
             debug      down 1-00:00:00      1   idle n1\n"
        );
    }

    #[test]
    fn summary_reasons_partition_filter_and_noheader() {
        let (n, p) = cluster();
        let out = report(&args(&["-s", "-p", "batch", "-h"]), &n, &p);
        assert_eq!(out, "batch*       up 1-00:00:00          1/2/2/5 n[1-5]\n");
        let out = report(&args(&["-R"]), &n, &p);
        assert_eq!(
            out,
            "REASON               USER      TIMESTAMP           NODELIST\ndisk                 Unknown   Unknown             n4\n"
        );
        let out = report(&args(&["-o", "%R %a %D %T", "-h", "-p", "debug"]), &n, &p);
        assert_eq!(out, "debug down 1 idle\n");
    }

    #[test]
    fn per_node_lines() {
        let (n, p) = cluster();
        let out = report(&args(&["-N", "-p", "debug"]), &n, &p);
        assert_eq!(
            out,
            "NODELIST  NODES PARTITION STATE\nn1            1 debug     idle\n"
        );
    }
}
