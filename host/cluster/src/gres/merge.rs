//! Merging gres.conf device detail into nodes whose `Gres=` declared the counts.

use std::collections::HashMap;

use crate::ConfigError;
use crate::model::{GresDevice, Node};

use super::GresConfLine;

/// Adds each line's devices, cores, links and flags to the matching GRES of every node it names, then
/// checks that the lines account for exactly the count each node's `Gres=` declared.
pub fn apply_gres_conf(nodes: &mut [Node], lines: &[GresConfLine]) -> Result<(), ConfigError> {
    let index: HashMap<String, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.clone(), i))
        .collect();
    // Count contributed per (node, gres entry), and the next device index per (node, gres name).
    let mut contributed: HashMap<(usize, usize), u64> = HashMap::new();
    let mut next_index: HashMap<(usize, String), u32> = HashMap::new();
    for line in lines {
        let targets: Vec<usize> = match &line.node_name {
            None => (0..nodes.len())
                .filter(|&i| nodes[i].gres.iter().any(|g| g.name == line.name))
                .collect(),
            Some(expr) => {
                let names = sluice_hostlist::expand_at_most(expr, sluice_hostlist::MAX_HOSTS)
                    .map_err(|source| ConfigError::Hostlist {
                        at: line.at.clone(),
                        expr: expr.clone(),
                        source,
                    })?;
                names
                    .iter()
                    .map(|name| {
                        index.get(name).copied().ok_or_else(|| {
                            ConfigError::invalid(
                                line.at.clone(),
                                format!("NodeName `{name}`"),
                                "a configured node",
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        for node_index in targets {
            let node = &mut nodes[node_index];
            let entry = find_entry(node, line).ok_or_else(|| {
                let wanted = match &line.gres_type {
                    Some(t) => format!("{}:{t}", line.name),
                    None => line.name.clone(),
                };
                ConfigError::invalid(
                    line.at.clone(),
                    format!("GRES `{wanted}` for node `{}`", node.name),
                    "a GRES the node's Gres= declares",
                )
            })?;
            let gres = &mut node.gres[entry];
            *contributed.entry((node_index, entry)).or_default() += line.count;
            for flag in &line.flags {
                if !gres.flags.contains(flag) {
                    gres.flags.push(*flag);
                }
            }
            let counter = next_index
                .entry((node_index, line.name.clone()))
                .or_default();
            for file in &line.files {
                gres.devices.push(GresDevice {
                    index: *counter,
                    file: file.clone(),
                    cores: line.cores.clone(),
                    links: line.links.clone(),
                });
                *counter += 1;
            }
        }
    }
    for ((node_index, entry), count) in contributed {
        let node = &nodes[node_index];
        let gres = &node.gres[entry];
        if count != gres.count {
            let at = lines
                .iter()
                .find(|l| l.name == gres.name)
                .map(|l| l.at.clone())
                .unwrap_or_else(|| crate::Location::new("gres.conf", 1, 1));
            return Err(ConfigError::invalid(
                at,
                format!(
                    "gres.conf lines giving {count} of `{}` on node `{}`",
                    gres.name, node.name
                ),
                format!("{} as its Gres= declares", gres.count),
            ));
        }
    }
    Ok(())
}

/// The node's GRES entry a line describes: same name and type; an untyped line matches the only entry
/// of that name.
fn find_entry(node: &Node, line: &GresConfLine) -> Option<usize> {
    let same_name: Vec<usize> = (0..node.gres.len())
        .filter(|&i| node.gres[i].name == line.name)
        .collect();
    match &line.gres_type {
        Some(t) => same_name
            .into_iter()
            .find(|&i| node.gres[i].gres_type.as_deref() == Some(t)),
        None if same_name.len() == 1 => same_name.first().copied(),
        None => same_name
            .into_iter()
            .find(|&i| node.gres[i].gres_type.is_none()),
    }
}
