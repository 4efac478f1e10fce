//! Resolving a parsed cluster file into a [`Cluster`]: names become indices, references are checked.

mod accounts;
mod nodes;
mod partitions;
mod plugins;
mod power;
mod qos;

use toml::Spanned;

use crate::model::{AccountingEnforce, License, TresLimits};
use crate::{Cluster, ConfigError, Location, Source};

use super::ConfigFile;

/// Most nodes a cluster may have (Slurm's `MAX_SLURM_NODES`).
pub const MAX_NODES: usize = sluice_hostlist::MAX_HOSTS as usize;

/// Builds the cluster; `resources` is the resources.yaml text, if any.
pub fn build(
    file: ConfigFile,
    source: Source<'_>,
    resources: Option<Source<'_>>,
) -> Result<Cluster, ConfigError> {
    let mut nodes = nodes::build_nodes(&file.nodes, source)?;
    nodes::apply_gres_tables(&mut nodes, &file.gres, source)?;
    let qos = qos::build_qos(&file.qos, source)?;
    let partitions = partitions::build_partitions(&file.partitions, &nodes, &qos, source)?;
    let associations = accounts::build_associations(&file.accounts, &file.users, &qos, source)?;
    let licenses: Vec<License> = file
        .licenses
        .iter()
        .map(|(name, &count)| License {
            name: name.clone(),
            count,
        })
        .collect();
    let hres = match resources {
        Some(resources) => crate::hres::parse_resources(resources, &nodes, &licenses)?,
        None => Vec::new(),
    };
    let plugins = plugins::resolve_plugins(file.plugins, source)?;
    let mut enforce = match &file.enforce {
        Some(flags) => AccountingEnforce::parse(flags.get_ref().iter().map(String::as_str))
            .map_err(|flag| {
                ConfigError::invalid(
                    source.at(flags.span().start),
                    format!("AccountingStorageEnforce flag `{flag}`"),
                    "associations, limits, qos, safe, all or none",
                )
            })?,
        None => AccountingEnforce::default(),
    };
    enforce.create_missing_users = file.create_missing_associations;
    check_scheduler(&file.scheduler, source)?;
    power::check_power(&file.power, &nodes, &partitions, source)?;
    Ok(Cluster {
        name: file.cluster_name,
        nodes,
        partitions,
        qos,
        associations,
        licenses,
        hres,
        scheduler: file.scheduler,
        priority: file.priority,
        power: file.power,
        plugins,
        enforce,
    })
}

/// A TRES limit string (`cpu=4,gres/gpu=2`) read at its place in the file; absent is no limit.
fn tres_at(
    source: Source<'_>,
    text: Option<&Spanned<String>>,
    key: &str,
) -> Result<TresLimits, ConfigError> {
    let Some(text) = text else {
        return Ok(TresLimits::default());
    };
    TresLimits::parse(text.get_ref()).map_err(|e| {
        ConfigError::invalid(
            value_at(source, text),
            format!("{key} = \"{}\" ({e})", text.get_ref()),
            "comma-separated cpu=, mem=, node=, gres/<name>=, license/<name>= counts",
        )
    })
}

/// Location of the first character inside a spanned string value (after its opening quote).
fn value_at<T>(source: Source<'_>, spanned: &Spanned<T>) -> Location {
    let start = spanned.span().start;
    let skip = usize::from(matches!(
        source.text.as_bytes().get(start),
        Some(b'"' | b'\'')
    ));
    source.at(start + skip)
}

/// Slurm's accepted ranges for the backfill parameters that have them.
fn check_scheduler(params: &crate::SchedulerParams, source: Source<'_>) -> Result<(), ConfigError> {
    let table = source.text.find("[scheduler]").unwrap_or(0);
    let checks: [(&str, i128, i128, i128); 6] = [
        ("MaxArraySize", params.max_array_size.into(), 0, 4_000_001),
        ("bf_interval", params.bf_interval.into(), -1, 10_800),
        ("bf_resolution", params.bf_resolution.into(), 1, 3600),
        ("bf_window", params.bf_window.into(), 1, 43_200),
        (
            "bf_max_job_test",
            params.bf_max_job_test.into(),
            1,
            1_000_000,
        ),
        (
            "bf_max_job_array_resv",
            params.bf_max_job_array_resv.into(),
            0,
            1000,
        ),
    ];
    for (key, value, min, max) in checks {
        if value < min || value > max || (key == "bf_interval" && value == 0) {
            return Err(ConfigError::invalid(
                source.find_key(key, table),
                format!("{key} = {value}"),
                format!(
                    "a value from {min} to {max}{}",
                    if key == "bf_interval" {
                        " other than 0"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    if let Some(max_time) = params.bf_max_time
        && !(1..=3600).contains(&max_time)
    {
        return Err(ConfigError::invalid(
            source.find_key("bf_max_time", table),
            format!("bf_max_time = {max_time}"),
            "a value from 1 to 3600",
        ));
    }
    Ok(())
}
