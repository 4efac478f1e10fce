//! Checking the power saving exclusions against the nodes, partitions and Slurm's state names.

use crate::model::{Node, Partition, PowerSaveParams};
use crate::{ConfigError, Source};

/// States `SuspendExcStates` accepts (slurm.conf).
const EXCLUDABLE_STATES: [&str; 12] = [
    "CLOUD",
    "DOWN",
    "DRAIN",
    "DYNAMIC_FUTURE",
    "DYNAMIC_NORM",
    "FAIL",
    "INVALID_REG",
    "MAINTENANCE",
    "NOT_RESPONDING",
    "PERFCTRS",
    "PLANNED",
    "RESERVED",
];

/// `SuspendExcNodes` must be hostlists of configured nodes, each optionally `:count`;
/// `SuspendExcParts` must name partitions; `SuspendExcStates` must be Slurm's state names.
pub fn check_power(
    power: &PowerSaveParams,
    nodes: &[Node],
    partitions: &[Partition],
    source: Source<'_>,
) -> Result<(), ConfigError> {
    let table = source.text.find("[power]").unwrap_or(0);
    let at = |key: &str| source.find_key(key, table);
    for part in split_outside_brackets(&power.suspend_exc_nodes) {
        let (expr, count) = match part.rsplit_once(':') {
            Some((expr, count)) if !count.contains(']') => (expr, Some(count)),
            _ => (part, None),
        };
        if let Some(count) = count
            && count.parse::<u32>().is_err()
        {
            return Err(ConfigError::invalid(
                at("SuspendExcNodes"),
                format!("count `{count}` in `{part}`"),
                "a node count after `:`",
            ));
        }
        let names = sluice_hostlist::expand_at_most(expr, sluice_hostlist::MAX_HOSTS).map_err(
            |source| ConfigError::Hostlist {
                at: at("SuspendExcNodes"),
                expr: expr.to_owned(),
                source,
            },
        )?;
        if let Some(unknown) = names
            .iter()
            .find(|name| !nodes.iter().any(|n| &n.name == *name))
        {
            return Err(ConfigError::invalid(
                at("SuspendExcNodes"),
                format!("node `{unknown}`"),
                "configured nodes",
            ));
        }
    }
    if let Some(unknown) = power
        .suspend_exc_parts
        .iter()
        .find(|name| !partitions.iter().any(|p| &p.name == *name))
    {
        return Err(ConfigError::invalid(
            at("SuspendExcParts"),
            format!("partition `{unknown}`"),
            "configured partitions",
        ));
    }
    if let Some(unknown) = power
        .suspend_exc_states
        .iter()
        .find(|s| !EXCLUDABLE_STATES.contains(&s.to_ascii_uppercase().as_str()))
    {
        return Err(ConfigError::invalid(
            at("SuspendExcStates"),
            format!("state `{unknown}`"),
            format!("one of {}", EXCLUDABLE_STATES.join(", ")),
        ));
    }
    Ok(())
}

/// Splits at commas that are not inside brackets (`nid[10-20]:4,nid[80-90]:2`).
fn split_outside_brackets(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_counted_hostlists() {
        assert_eq!(
            split_outside_brackets("nid[10-20]:4,nid[80,90]:2,x"),
            ["nid[10-20]:4", "nid[80,90]:2", "x"]
        );
        assert!(split_outside_brackets("").is_empty());
    }
}
