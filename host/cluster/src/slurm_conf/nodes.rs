//! `NodeName=` and `PartitionName=` lines, with their `DEFAULT` lines.

use sluice_hostlist::{Hostlist, MAX_HOSTS};
use toml::Spanned;

use crate::ConfigError;
use crate::config::{NodeSpec, PartitionSpec};
use crate::keyvalue::{Line, Pair};
use crate::model::{NodeState, TimeLimit};

use super::Importer;
use super::values::{invalid, limit, number, yes_no};
use crate::model::{OverSubscribe, PartitionState};

/// Merges `update` into `defaults`, later keys replacing earlier ones.
fn merge_defaults(defaults: &mut Vec<Pair>, update: &[Pair]) {
    for pair in update {
        defaults.retain(|p| !p.key.eq_ignore_ascii_case(&pair.key));
        defaults.push(pair.clone());
    }
}

/// One `NodeName=` line; `NodeName=DEFAULT` sets defaults for the lines after it.
pub fn node_line(importer: &mut Importer, line: &Line) -> Result<(), ConfigError> {
    let name = &line.pairs[0];
    if name.value.eq_ignore_ascii_case("DEFAULT") {
        merge_defaults(&mut importer.node_defaults, &line.pairs[1..]);
        return Ok(());
    }
    // Counted from the ranges, never expanded: `NodeName=a[0-65535]b[0-65535]c[0-65535]` is
    // refused here rather than allocated.
    let names = Hostlist::parse_at_most(&name.value, MAX_HOSTS)
        .map_err(|source| ConfigError::Hostlist {
            at: name.value_at.clone(),
            expr: name.value.clone(),
            source,
        })?
        .len();
    if importer.node_names + names > MAX_HOSTS {
        return Err(ConfigError::invalid(
            name.value_at.clone(),
            format!(
                "{names} more nodes after {} on earlier lines",
                importer.node_names
            ),
            format!("at most {MAX_HOSTS} nodes in all"),
        ));
    }
    importer.node_names += names;
    let mut spec = NodeSpec {
        node_name: Spanned::new(0..0, name.value.clone()),
        sockets: 1,
        cores_per_socket: 1,
        threads_per_core: 1,
        cpus: None,
        real_memory: 1,
        features: Vec::new(),
        weight: 1,
        gres: None,
        state: NodeState::Unknown,
        suspend_time: None,
    };
    let mut pairs = importer.node_defaults.clone();
    merge_defaults(&mut pairs, &line.pairs[1..]);
    let mut sockets_per_board = None;
    let mut boards = 1u16;
    let mut sockets_given = false;
    for pair in &pairs {
        match pair.key.to_ascii_lowercase().as_str() {
            "sockets" => {
                spec.sockets = number(pair)?;
                sockets_given = true;
            }
            "socketsperboard" => sockets_per_board = Some(number::<u16>(pair)?),
            "boards" => boards = number(pair)?,
            "corespersocket" => spec.cores_per_socket = number(pair)?,
            "threadspercore" => spec.threads_per_core = number(pair)?,
            "cpus" | "procs" => spec.cpus = Some(number(pair)?),
            "realmemory" => spec.real_memory = number(pair)?,
            "feature" | "features" => {
                spec.features = pair
                    .value
                    .split(',')
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned)
                    .collect()
            }
            "weight" => spec.weight = number(pair)?,
            "gres" => spec.gres = Some(Spanned::new(0..0, pair.value.clone())),
            "state" => match NodeState::parse(&pair.value) {
                Some(state) => spec.state = state,
                None => importer.skip(
                    &pair.at,
                    &pair.key,
                    format!(
                        "State={} is not a configurable state here; UNKNOWN is used",
                        pair.value
                    ),
                ),
            },
            "suspendtime" => spec.suspend_time = Some(limit(pair, 1)?),
            _ => importer.skip(
                &pair.at,
                &pair.key,
                "a node key the scheduler does not use (addresses, ports, spec limits, disks …)",
            ),
        }
    }
    if let (Some(per_board), false) = (sockets_per_board, sockets_given) {
        spec.sockets = per_board.saturating_mul(boards);
    }
    importer.file.nodes.push(spec);
    importer
        .origins
        .nodes
        .push(line.pairs.iter().chain(&pairs).cloned().collect());
    Ok(())
}

/// Whether `key` is written on the line itself rather than inherited from its DEFAULT line.
fn own_line(line: &Line, key: &str) -> bool {
    line.pairs[1..]
        .iter()
        .any(|p| p.key.eq_ignore_ascii_case(key))
}

/// One `PartitionName=` line; `PartitionName=DEFAULT` sets defaults for the lines after it.
pub fn partition_line(importer: &mut Importer, line: &Line) -> Result<(), ConfigError> {
    let name = &line.pairs[0];
    if name.value.eq_ignore_ascii_case("DEFAULT") {
        merge_defaults(&mut importer.partition_defaults, &line.pairs[1..]);
        return Ok(());
    }
    let mut spec = PartitionSpec {
        partition_name: Spanned::new(0..0, name.value.clone()),
        nodes: Spanned::new(0..0, String::new()),
        priority_tier: 1,
        priority_job_factor: 1,
        max_time: TimeLimit::Infinite,
        default_time: None,
        default: false,
        max_nodes: None,
        suspend_time: None,
        qos: None,
        resume_timeout: None,
        suspend_timeout: None,
        power_down_on_idle: false,
        allow_accounts: None,
        deny_accounts: Vec::new(),
        allow_groups: None,
        allow_qos: None,
        deny_qos: Vec::new(),
        state: None,
        over_subscribe: None,
        def_mem_per_cpu: None,
        max_mem_per_cpu: None,
    };
    let mut pairs = importer.partition_defaults.clone();
    merge_defaults(&mut pairs, &line.pairs[1..]);
    for pair in &pairs {
        match pair.key.to_ascii_lowercase().as_str() {
            "nodes" => {
                if !pair.value.eq_ignore_ascii_case("ALL") {
                    Hostlist::parse_at_most(&pair.value, MAX_HOSTS).map_err(|source| {
                        ConfigError::Hostlist {
                            at: pair.value_at.clone(),
                            expr: pair.value.clone(),
                            source,
                        }
                    })?;
                }
                spec.nodes = Spanned::new(0..0, pair.value.clone());
            }
            "prioritytier" => spec.priority_tier = number(pair)?,
            "priorityjobfactor" => spec.priority_job_factor = number(pair)?,
            // Slurm's old `Priority=` sets both the tier and the job factor.
            "priority" => {
                spec.priority_tier = number(pair)?;
                spec.priority_job_factor = spec.priority_tier;
            }
            "maxtime" => spec.max_time = limit(pair, 60)?,
            "defaulttime" => spec.default_time = Some(limit(pair, 60)?),
            "default" => spec.default = yes_no(pair)?,
            "maxnodes" => {
                spec.max_nodes = if pair.value.eq_ignore_ascii_case("UNLIMITED") { None } else { Some(number(pair)?) }
            }
            // Slurm reads these two from the partition's own line only (power-save.md §1.2, Q12).
            "suspendtime" | "powerdownonidle" if !own_line(line, &pair.key) => importer.skip(
                &pair.at,
                &pair.key,
                "Slurm ignores this key on PartitionName=DEFAULT; set it on each partition",
            ),
            "suspendtime" => spec.suspend_time = Some(limit(pair, 1)?),
            "powerdownonidle" => spec.power_down_on_idle = yes_no(pair)?,
            "resumetimeout" => spec.resume_timeout = Some(limit(pair, 1)?),
            "suspendtimeout" => spec.suspend_timeout = Some(number(pair)?),
            "qos" => spec.qos = Some(importer.qos_named(pair)),
            "allowaccounts" => spec.allow_accounts = Some(list(&pair.value)),
            "denyaccounts" => spec.deny_accounts = list(&pair.value),
            "allowgroups" => spec.allow_groups = Some(list(&pair.value)),
            "allowqos" => {
                spec.allow_qos = Some(
                    list(&pair.value)
                        .iter()
                        .filter(|q| !q.eq_ignore_ascii_case("ALL"))
                        .map(|q| importer.qos_named(&Pair { value: q.clone(), ..pair.clone() }))
                        .collect(),
                )
            }
            "denyqos" => {
                spec.deny_qos = list(&pair.value)
                    .iter()
                    .map(|q| importer.qos_named(&Pair { value: q.clone(), ..pair.clone() }))
                    .collect()
            }
            "state" => {
                PartitionState::parse(&pair.value)
                    .ok_or_else(|| invalid(pair, "UP, DOWN, DRAIN or INACTIVE"))?;
                spec.state = Some(Spanned::new(0..0, pair.value.to_ascii_uppercase()));
            }
            "oversubscribe" | "shared" => over_subscribe(importer, pair, &mut spec),
            "defmempercpu" => spec.def_mem_per_cpu = Some(number(pair)?),
            "maxmempercpu" => spec.max_mem_per_cpu = Some(number(pair)?),
            "preemptmode" | "graceperiod" => importer.skip(&pair.at, &pair.key, "preemption is not implemented; jobs are never preempted"),
            _ => importer.skip(&pair.at, &pair.key, "a partition key the scheduler does not model (node and CPU limits per node, hidden, root-only, default memory per node …)"),
        }
    }
    importer.file.partitions.push(spec);
    importer
        .origins
        .partitions
        .push(line.pairs.iter().chain(&pairs).cloned().collect());
    Ok(())
}

/// A comma-separated slurm.conf list.
fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `OverSubscribe=` (or the old `Shared=`): every value carries over, `YES` and `FORCE` with
/// their count.
fn over_subscribe(importer: &mut Importer, pair: &Pair, spec: &mut PartitionSpec) {
    match OverSubscribe::parse(&pair.value) {
        Some(o) => spec.over_subscribe = Some(Spanned::new(0..0, o.to_string())),
        None => importer.skip(
            &pair.at,
            &pair.key,
            format!(
                "OverSubscribe={}: expected NO, EXCLUSIVE, YES[:count] or FORCE[:count] (count 1 to {}); the partition does not oversubscribe",
                pair.value,
                OverSubscribe::MAX_COUNT
            ),
        ),
    }
}
