//! `[[partitions]]` tables into partitions with node indices.

use std::collections::{HashMap, HashSet};

use crate::config::schema::PartitionSpec;
use toml::Spanned;

use crate::model::{
    Node, NodeId, OverSubscribe, Partition, PartitionAccess, PartitionPower, PartitionState, Qos,
    QosId,
};
use crate::{ConfigError, Source};

use super::value_at;

/// Builds partitions; `Nodes=ALL` takes every node, names must exist, at most one may be Default.
pub fn build_partitions(
    specs: &[PartitionSpec],
    nodes: &[Node],
    qos: &[Qos],
    source: Source<'_>,
) -> Result<Vec<Partition>, ConfigError> {
    let index: HashMap<&str, u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32))
        .collect();
    let mut seen = HashSet::new();
    let mut default_seen = false;
    specs
        .iter()
        .map(|spec| {
            let name = spec.partition_name.get_ref();
            if !seen.insert(name.clone()) {
                return Err(ConfigError::invalid(
                    value_at(source, &spec.partition_name),
                    format!("partition `{name}` defined twice"),
                    "unique partition names",
                ));
            }
            if spec.default {
                if default_seen {
                    return Err(ConfigError::invalid(
                        source.find_key("Default", spec.partition_name.span().start),
                        format!("a second default partition `{name}`"),
                        "at most one partition with Default = true",
                    ));
                }
                default_seen = true;
            }
            let qos_id = match &spec.qos {
                Some(q) => Some(qos_named(qos, q, source)?),
                None => None,
            };
            Ok(Partition {
                name: name.clone(),
                nodes: member_nodes(spec, &index, source)?,
                priority_tier: spec.priority_tier,
                priority_job_factor: spec.priority_job_factor,
                max_time: spec.max_time,
                default_time: spec.default_time,
                default: spec.default,
                max_nodes: spec.max_nodes,
                suspend_time: spec.suspend_time,
                qos: qos_id,
                power: PartitionPower {
                    resume_timeout: spec.resume_timeout,
                    suspend_timeout: spec.suspend_timeout,
                    power_down_on_idle: spec.power_down_on_idle,
                },
                access: access(spec, qos, source)?,
            })
        })
        .collect()
}

fn member_nodes(
    spec: &PartitionSpec,
    index: &HashMap<&str, u32>,
    source: Source<'_>,
) -> Result<Vec<NodeId>, ConfigError> {
    let expr = spec.nodes.get_ref();
    let at = value_at(source, &spec.nodes);
    if expr.eq_ignore_ascii_case("ALL") {
        let mut all: Vec<NodeId> = index.values().map(|&i| NodeId(i)).collect();
        all.sort();
        return Ok(all);
    }
    let list = sluice_hostlist::Hostlist::parse_at_most(expr, sluice_hostlist::MAX_HOSTS).map_err(
        |source| ConfigError::Hostlist {
            at: at.clone(),
            expr: expr.clone(),
            source,
        },
    )?;
    if list.len() > index.len() as u64 {
        return Err(ConfigError::invalid(
            at,
            format!("{} node names", list.len()),
            format!("at most the {} configured nodes", index.len()),
        ));
    }
    let mut members = Vec::new();
    let mut seen = HashSet::new();
    for name in list.iter() {
        let id = index.get(name.as_str()).ok_or_else(|| {
            ConfigError::invalid(
                at.clone(),
                format!("node `{name}`"),
                "a node defined in [[nodes]]",
            )
        })?;
        if seen.insert(*id) {
            members.push(NodeId(*id));
        }
    }
    Ok(members)
}

/// The QOS a partition key names, which must be defined.
fn qos_named(
    qos: &[Qos],
    name: &Spanned<String>,
    source: Source<'_>,
) -> Result<QosId, ConfigError> {
    qos.iter()
        .position(|record| &record.name == name.get_ref())
        .map(|i| QosId(i as u32))
        .ok_or_else(|| {
            ConfigError::invalid(
                value_at(source, name),
                format!("QOS `{}`", name.get_ref()),
                "a QOS defined in [[qos]]",
            )
        })
}

/// `AllowAccounts` … `MaxMemPerCPU` of one partition; `ALL` in an allow list is no list.
fn access(
    spec: &PartitionSpec,
    qos: &[Qos],
    source: Source<'_>,
) -> Result<PartitionAccess, ConfigError> {
    let all = |list: &Option<Vec<String>>| {
        list.clone()
            .filter(|l| !l.iter().any(|n| n.eq_ignore_ascii_case("ALL")))
    };
    let qos_list = |list: &[Spanned<String>]| -> Result<Vec<String>, ConfigError> {
        list.iter()
            .map(|q| qos_named(qos, q, source).map(|_| q.get_ref().clone()))
            .collect()
    };
    let allow_qos = match &spec.allow_qos {
        Some(list) if !list.iter().any(|q| q.get_ref().eq_ignore_ascii_case("ALL")) => {
            Some(qos_list(list)?)
        }
        _ => None,
    };
    let state = keyword(source, spec.state.as_ref(), "State", PartitionState::parse)
        .unwrap_or(Ok(PartitionState::Up))
        .map_err(|e| e("UP, DOWN, DRAIN or INACTIVE"))?;
    let oversubscribe = keyword(
        source,
        spec.over_subscribe.as_ref(),
        "OverSubscribe",
        OverSubscribe::parse,
    )
    .unwrap_or(Ok(OverSubscribe::No))
    .map_err(|e| e("NO, EXCLUSIVE, YES[:count] or FORCE[:count] (count 1 to 64)"))?;
    Ok(PartitionAccess {
        allow_accounts: all(&spec.allow_accounts),
        deny_accounts: spec.deny_accounts.clone(),
        allow_groups: all(&spec.allow_groups),
        allow_qos,
        deny_qos: qos_list(&spec.deny_qos)?,
        state,
        oversubscribe,
        def_mem_per_cpu: spec.def_mem_per_cpu,
        max_mem_per_cpu: spec.max_mem_per_cpu,
    })
}

/// A keyword value read with `parse`: `None` when the key is absent, else the value or a
/// function making the error from what was expected.
fn keyword<T>(
    source: Source<'_>,
    value: Option<&Spanned<String>>,
    key: &str,
    parse: fn(&str) -> Option<T>,
) -> Option<Result<T, impl FnOnce(&str) -> ConfigError>> {
    let value = value?;
    Some(parse(value.get_ref()).ok_or_else(|| {
        let at = value_at(source, value);
        let found = format!("{key} = \"{}\"", value.get_ref());
        move |expected: &str| ConfigError::invalid(at, found, expected)
    }))
}
