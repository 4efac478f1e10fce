//! Checking the power saving exclusions against the nodes, partitions and Slurm's state names.

use crate::model::{Node, Partition, PowerSaveParams};
use crate::{ConfigError, Source};

/// States `SuspendExcStates` accepts: Slurm's `_parse_exc_states` list (power-save.md §1.2).
/// `PERFCTRS`, which the guide lists, is not among them; Slurm logs and ignores it, sluice
/// refuses it like every other unknown name.
pub const EXCLUDABLE_STATES: [&str; 12] = [
    "CLOUD",
    "DOWN",
    "DRAIN",
    "DYNAMIC_FUTURE",
    "DYNAMIC_NORM",
    "EXTERNAL",
    "FAIL",
    "INVALID_REG",
    "MAINTENANCE",
    "NOT_RESPONDING",
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
    for (part, (expr, count)) in power
        .suspend_exc_node_parts()
        .into_iter()
        .zip(power.suspend_exc_node_groups())
    {
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
    if let Some(watts) = &power.watts {
        let all = [
            watts.busy,
            watts.idle,
            watts.booting,
            watts.powering_down,
            watts.off,
        ];
        if all.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(ConfigError::invalid(
                at("Watts"),
                "a negative or non-finite wattage",
                "watts ≥ 0 for Busy, Idle, Booting, PoweringDown and Off",
            ));
        }
    }
    Ok(())
}
