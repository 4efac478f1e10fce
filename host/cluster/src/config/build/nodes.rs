//! `[[nodes]]` and `[[gres]]` tables into nodes with GRES and device detail.

use std::collections::HashSet;

use crate::config::schema::{CountValue, GresTable, NodeSpec};
use crate::gres::{GresConfLine, apply_gres_conf, parse_gres_spec};
use crate::keyvalue::Pair;
use crate::model::{Gres, Node};
use crate::{ConfigError, Source};

use super::{MAX_NODES, value_at};

/// Expands every `[[nodes]]` table, in order, rejecting duplicates and impossible shapes.
pub fn build_nodes(specs: &[NodeSpec], source: Source<'_>) -> Result<Vec<Node>, ConfigError> {
    let mut nodes = Vec::new();
    let mut seen = HashSet::new();
    for spec in specs {
        let at = value_at(source, &spec.node_name);
        let list = sluice_hostlist::Hostlist::parse_at_most(
            spec.node_name.get_ref(),
            sluice_hostlist::MAX_HOSTS,
        )
        .map_err(|source| ConfigError::Hostlist {
            at: at.clone(),
            expr: spec.node_name.get_ref().clone(),
            source,
        })?;
        if nodes.len() as u64 + list.len() > MAX_NODES as u64 {
            return Err(ConfigError::invalid(
                at,
                format!("{} more nodes", list.len()),
                format!("at most {MAX_NODES} nodes in all"),
            ));
        }
        for (field, value) in [
            ("Sockets", spec.sockets),
            ("CoresPerSocket", spec.cores_per_socket),
            ("ThreadsPerCore", spec.threads_per_core),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(
                    source.find_key(field, spec.node_name.span().start),
                    format!("{field} = 0"),
                    "at least 1",
                ));
            }
        }
        let gres = match &spec.gres {
            Some(text) => parse_gres(text, source)?,
            None => Vec::new(),
        };
        let derived = u32::from(spec.sockets)
            * u32::from(spec.cores_per_socket)
            * u32::from(spec.threads_per_core);
        let cpus = spec.cpus.unwrap_or(derived);
        if cpus == 0 {
            return Err(ConfigError::invalid(
                source.find_key("CPUs", spec.node_name.span().start),
                "CPUs = 0",
                "at least 1",
            ));
        }
        for name in list.iter() {
            if !seen.insert(name.clone()) {
                return Err(ConfigError::invalid(
                    at,
                    format!("node `{name}` defined twice"),
                    "each node defined once",
                ));
            }
            nodes.push(Node {
                name,
                sockets: spec.sockets,
                cores_per_socket: spec.cores_per_socket,
                threads_per_core: spec.threads_per_core,
                cpus,
                real_memory_mb: spec.real_memory,
                features: spec.features.clone(),
                weight: spec.weight,
                gres: gres.clone(),
                state: spec.state,
                suspend_time: spec.suspend_time,
            });
        }
    }
    Ok(nodes)
}

fn parse_gres(text: &toml::Spanned<String>, source: Source<'_>) -> Result<Vec<Gres>, ConfigError> {
    let at = value_at(source, text);
    let specs = parse_gres_spec(text.get_ref()).map_err(|(column, found, expected)| {
        let mut at = at.clone();
        at.column += column - 1;
        ConfigError::invalid(at, found, expected)
    })?;
    Ok(specs
        .into_iter()
        .map(|spec| Gres {
            name: spec.name,
            gres_type: spec.gres_type,
            count: spec.count,
            no_consume: spec.no_consume,
            flags: Vec::new(),
            devices: Vec::new(),
        })
        .collect())
}

/// Applies `[[gres]]` tables exactly as gres.conf lines.
pub fn apply_gres_tables(
    nodes: &mut [Node],
    tables: &[GresTable],
    source: Source<'_>,
) -> Result<(), ConfigError> {
    let lines = tables
        .iter()
        .map(|table| {
            let at = value_at(source, &table.name);
            let mut pairs = vec![pair("Name", table.name.get_ref(), &at)];
            let optional = [
                ("NodeName", table.node_name.clone()),
                ("Type", table.gres_type.clone()),
                ("File", table.file.clone()),
                (
                    "Count",
                    table.count.as_ref().map(|c| match c {
                        CountValue::Number(n) => n.to_string(),
                        CountValue::Text(t) => t.clone(),
                    }),
                ),
                ("Cores", table.cores.clone()),
                ("Links", table.links.clone()),
                ("Flags", table.flags.clone()),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    pairs.push(pair(key, &value, &at));
                }
            }
            GresConfLine::from_pairs(&pairs, at)
        })
        .collect::<Result<Vec<_>, _>>()?;
    apply_gres_conf(nodes, &lines)
}

fn pair(key: &str, value: &str, at: &crate::Location) -> Pair {
    Pair {
        key: key.into(),
        value: value.into(),
        at: at.clone(),
        value_at: at.clone(),
    }
}
