//! From a cluster's configuration to the plugin specs to load: which plugin, its limits, and
//! its settings, where the multifactor policy also receives the cluster's `Priority*` keys.

use sluice_cluster::Cluster;
use sluice_cluster::model::plugins::default_plugin;
use sluice_policy::{PluginKind, SettingValue, Settings};

use crate::limits::Limits;
use crate::loader::PluginSpec;
use crate::settings::flatten;

/// One spec per kind, from the cluster's `[plugins.*]` sections.
pub fn from_cluster(cluster: &Cluster) -> Vec<PluginSpec> {
    PluginKind::ALL
        .into_iter()
        .map(|kind| {
            let config = cluster.plugins.get(kind);
            let plugin = if config.plugin.is_empty() {
                default_plugin(kind).to_string()
            } else {
                config.plugin.clone()
            };
            let mut settings = flatten(&config.settings);
            if kind == PluginKind::Priority
                && plugin.trim_start_matches("builtin:") == "multifactor"
            {
                settings = with_priority_params(cluster, settings);
            }
            PluginSpec {
                kind,
                plugin,
                settings,
                limits: Limits {
                    memory_bytes: config.memory_limit_mb as usize * (1 << 20),
                    fuel_per_call: config.fuel_per_call,
                },
            }
        })
        .collect()
}

/// The cluster's `Priority*` keys as multifactor settings; keys set explicitly in the plugin's
/// own settings table win.
/// A count-only GRES plugin spec for every GRES name other than `gpu` the cluster's nodes
/// configure, with Slurm-style variable names (`nic` → `SLURM_JOB_NICS`).
pub fn gres_by_name(cluster: &Cluster) -> Vec<(String, PluginSpec)> {
    let gpu = cluster.plugins.get(PluginKind::Gres);
    let names: std::collections::BTreeSet<&str> = cluster
        .nodes
        .iter()
        .flat_map(|n| n.gres.iter().map(|g| g.name.as_str()))
        .filter(|n| *n != "gpu")
        .collect();
    names
        .into_iter()
        .map(|name| {
            let settings = Settings::default().with(
                "env_name",
                SettingValue::Text(format!("{}S", name.to_ascii_uppercase())),
            );
            let spec = PluginSpec {
                kind: PluginKind::Gres,
                plugin: "count".into(),
                settings,
                limits: Limits {
                    memory_bytes: gpu.memory_limit_mb as usize * (1 << 20),
                    fuel_per_call: gpu.fuel_per_call,
                },
            };
            (name.to_string(), spec)
        })
        .collect()
}

fn with_priority_params(cluster: &Cluster, explicit: Settings) -> Settings {
    let p = &cluster.priority;
    let mut s = Settings::default()
        .with(
            "weight.age",
            SettingValue::Integer(p.priority_weight_age.into()),
        )
        .with(
            "weight.assoc",
            SettingValue::Integer(p.priority_weight_assoc.into()),
        )
        .with(
            "weight.fairshare",
            SettingValue::Integer(p.priority_weight_fairshare.into()),
        )
        .with(
            "weight.jobsize",
            SettingValue::Integer(p.priority_weight_job_size.into()),
        )
        .with(
            "weight.partition",
            SettingValue::Integer(p.priority_weight_partition.into()),
        )
        .with(
            "weight.qos",
            SettingValue::Integer(p.priority_weight_qos.into()),
        )
        .with("max_age", SettingValue::Integer(p.priority_max_age as i64))
        .with("favor_small", SettingValue::Boolean(p.priority_favor_small));
    for (tres, weight) in &p.priority_weight_tres {
        s = s.with(&format!("weight.tres.{tres}"), SettingValue::Float(*weight));
    }
    let flags: Vec<String> = p
        .priority_flags
        .iter()
        .filter_map(|f| {
            serde_json::to_value(f)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
        })
        .collect();
    if !flags.is_empty() {
        s = s.with("flags", SettingValue::Text(flags.join(",")));
    }
    for setting in explicit.0 {
        s = s.with(&setting.key, setting.value);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_cluster_hands_its_weights_to_multifactor() {
        let cluster = Cluster::demo();
        let specs = from_cluster(&cluster);
        assert_eq!(specs.len(), 4);
        let priority = &specs[0];
        assert_eq!(priority.plugin, "multifactor");
        assert_eq!(
            priority.settings.i64_or("weight.partition", 0),
            cluster.priority.priority_weight_partition as i64
        );
        assert_eq!(
            priority.settings.i64_or("weight.fairshare", 0),
            cluster.priority.priority_weight_fairshare as i64
        );
        assert_eq!(
            priority.settings.i64_or("max_age", 0),
            cluster.priority.priority_max_age as i64
        );
        assert_eq!(specs[1].plugin, "cons_tres");
    }
}
