//! Global slurm.conf keys: SchedulerParameters, Select*, Priority*, Suspend*/Resume*, Licenses.

use crate::ConfigError;
use crate::keyvalue::Pair;
use crate::model::{PriorityFlag, UsageResetPeriod};

use super::Importer;
use super::values::{invalid, limit, minutes, number, signed, yes_no};

/// Carries one global `Key=Value` over, or records why not.
pub fn global_pair(importer: &mut Importer, pair: &Pair) -> Result<(), ConfigError> {
    let file = &mut importer.file;
    let priority = &mut file.priority;
    let power = &mut file.power;
    match pair.key.to_ascii_lowercase().as_str() {
        "clustername" => file.cluster_name = pair.value.clone(),
        "schedulerparameters" => scheduler_parameters(importer, pair)?,
        "maxarraysize" => file.scheduler.max_array_size = number(pair)?,
        "schedulertype" => match pair.value.as_str() {
            "sched/backfill" => {}
            "sched/builtin" => file.scheduler.bf_interval = -1,
            _ => return Err(invalid(pair, "sched/backfill or sched/builtin")),
        },
        "selecttype" => {
            let plugin = match pair.value.as_str() {
                "select/cons_tres" => "cons_tres",
                "select/cons_res" => {
                    importer.skip(&pair.at, &pair.key, "select/cons_res was removed in Slurm 23.11; cons_tres, its successor, is used");
                    "cons_tres"
                }
                "select/linear" => "linear",
                _ => {
                    return Err(invalid(
                        pair,
                        "select/cons_tres, select/cons_res or select/linear",
                    ));
                }
            };
            importer.file.plugins.selection.plugin = plugin.into();
        }
        "selecttypeparameters" => {
            file.scheduler.select_type_parameters = pair
                .value
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        }
        "prioritytype" => {
            file.plugins.priority.plugin = match pair.value.as_str() {
                "priority/multifactor" => "multifactor".into(),
                "priority/basic" => "basic".into(),
                _ => return Err(invalid(pair, "priority/multifactor or priority/basic")),
            }
        }
        "priorityweightage" => priority.priority_weight_age = number(pair)?,
        "priorityweightassoc" => priority.priority_weight_assoc = number(pair)?,
        "priorityweightfairshare" => priority.priority_weight_fairshare = number(pair)?,
        "priorityweightjobsize" => priority.priority_weight_job_size = number(pair)?,
        "priorityweightpartition" => priority.priority_weight_partition = number(pair)?,
        "priorityweightqos" => priority.priority_weight_qos = number(pair)?,
        "priorityweighttres" => {
            for item in pair.value.split(',').filter(|s| !s.is_empty()) {
                let (tres, weight) = item.split_once('=').ok_or_else(|| {
                    invalid(pair, "TRES=weight pairs such as CPU=1000,GRES/gpu=3000")
                })?;
                let weight: f64 = weight
                    .parse()
                    .map_err(|_| invalid(pair, "numeric TRES weights"))?;
                priority
                    .priority_weight_tres
                    .insert(tres.to_ascii_lowercase(), weight);
            }
        }
        "prioritymaxage" => priority.priority_max_age = minutes(pair)?,
        "prioritydecayhalflife" => priority.priority_decay_half_life = minutes(pair)?,
        "prioritycalcperiod" => priority.priority_calc_period = minutes(pair)?,
        "priorityfavorsmall" => priority.priority_favor_small = yes_no(pair)?,
        "priorityflags" => priority_flags(importer, pair),
        "accountingstorageenforce" => {
            let flags = split_list(&pair.value);
            crate::model::AccountingEnforce::parse(flags.iter().map(String::as_str)).map_err(
                |_| {
                    invalid(
                        pair,
                        "associations, limits, qos, safe, nojobs, nosteps, wckeys, all or none",
                    )
                },
            )?;
            file.enforce = Some(toml::Spanned::new(0..0, flags));
        }
        "priorityusageresetperiod" => {
            priority.priority_usage_reset_period = serde_plain::<UsageResetPeriod>(&pair.value)
                .ok_or_else(|| {
                    invalid(
                        pair,
                        "NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY",
                    )
                })?
        }
        "fairsharedampeningfactor" => priority.fair_share_dampening_factor = number(pair)?,
        "suspendtime" => power.suspend_time = limit(pair, 1)?,
        "suspendtimeout" => power.suspend_timeout = number(pair)?,
        "resumetimeout" => power.resume_timeout = limit(pair, 1)?,
        "jobrequeue" => power.job_requeue = number::<u8>(pair)? != 0,
        "resumerate" => power.resume_rate = number(pair)?,
        "suspendrate" => power.suspend_rate = number(pair)?,
        "suspendprogram" => power.suspend_program = Some(pair.value.clone()),
        "resumeprogram" => power.resume_program = Some(pair.value.clone()),
        "resumefailprogram" => power.resume_fail_program = Some(pair.value.clone()),
        "suspendexcnodes" => power.suspend_exc_nodes = pair.value.clone(),
        "suspendexcparts" => power.suspend_exc_parts = split_list(&pair.value),
        "suspendexcstates" => power.suspend_exc_states = split_list(&pair.value),
        "slurmctldparameters" => slurmctld_parameters(importer, pair)?,
        "preempttype" | "preemptmode" | "preemptexempttime" | "preemptparameters" => importer.skip(
            &pair.at,
            &pair.key,
            "preemption is not implemented; jobs are never preempted",
        ),
        "licenses" => licenses(importer, pair)?,
        _ => importer.skip(
            &pair.at,
            &pair.key,
            "not part of the scheduling model (daemon, accounting, network or runtime setting)",
        ),
    }
    Ok(())
}

/// `PriorityFlags`, read as Slurm's `read_config.c` reads it: each flag is looked for anywhere
/// in the value, case-insensitively, so `FAIR_TREE` (the default since 19.05, once a flag of its
/// own) sets nothing; a word that names no flag is listed, since Slurm ignores it too.
fn priority_flags(importer: &mut Importer, pair: &Pair) {
    use PriorityFlag::*;
    let text = pair.value.to_ascii_uppercase();
    let has = |name: &str| text.contains(name);
    let flags = &mut importer.file.priority.priority_flags;
    let mut add = |on: bool, flag: PriorityFlag| {
        if on && !flags.contains(&flag) {
            flags.push(flag);
        }
    };
    add(has("ACCRUE_ALWAYS"), AccrueAlways);
    add(has("SMALL_RELATIVE_TO_TIME"), SmallRelativeToTime);
    add(has("CALCULATE_RUNNING"), CalculateRunning);
    add(has("DEPTH_OBLIVIOUS"), DepthOblivious);
    add(!has("DEPTH_OBLIVIOUS") && has("NO_FAIR_TREE"), NoFairTree);
    add(has("INCR_ONLY"), IncrOnly);
    add(has("MAX_TRES_GRES"), MaxTresGres);
    add(!has("MAX_TRES_GRES") && has("MAX_TRES"), MaxTres);
    add(has("NO_NORMAL_ALL"), NoNormalAll);
    for (name, flag) in [
        ("NO_NORMAL_ASSOC", NoNormalAssoc),
        ("NO_NORMAL_PART", NoNormalPart),
        ("NO_NORMAL_QOS", NoNormalQos),
        ("NO_NORMAL_TRES", NoNormalTres),
    ] {
        add(!has("NO_NORMAL_ALL") && has(name), flag);
    }
    const KNOWN: [&str; 14] = [
        "ACCRUE_ALWAYS",
        "SMALL_RELATIVE_TO_TIME",
        "CALCULATE_RUNNING",
        "DEPTH_OBLIVIOUS",
        "NO_FAIR_TREE",
        "FAIR_TREE",
        "INCR_ONLY",
        "MAX_TRES_GRES",
        "MAX_TRES",
        "NO_NORMAL_ALL",
        "NO_NORMAL_ASSOC",
        "NO_NORMAL_PART",
        "NO_NORMAL_QOS",
        "NO_NORMAL_TRES",
    ];
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if !KNOWN.contains(&word) {
            importer.skip(
                &pair.at,
                &format!("PriorityFlags={word}"),
                "not a PriorityFlags value (Slurm ignores it too)",
            );
        }
    }
}

/// Parses Slurm's uppercase spellings through the serde names of our enums.
fn serde_plain<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    T::deserialize(
        serde::de::value::StrDeserializer::<serde::de::value::Error>::new(
            &text.trim().to_ascii_uppercase(),
        ),
    )
    .ok()
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `SchedulerParameters=bf_interval=60,bf_continue,…`.
fn scheduler_parameters(importer: &mut Importer, pair: &Pair) -> Result<(), ConfigError> {
    for item in pair.value.split(',').filter(|s| !s.is_empty()) {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (item.trim(), None),
        };
        let sub = Pair {
            key: key.to_owned(),
            value: value.unwrap_or("").to_owned(),
            at: pair.at.clone(),
            value_at: pair.value_at.clone(),
        };
        let s = &mut importer.file.scheduler;
        let flag = value.is_none();
        match (key, flag) {
            ("default_queue_depth", false) => s.default_queue_depth = number(&sub)?,
            ("partition_job_depth", false) => s.partition_job_depth = number(&sub)?,
            ("sched_interval", false) => s.sched_interval = signed(&sub)?,
            ("sched_min_interval", false) => s.sched_min_interval = number(&sub)?,
            ("max_sched_time", false) => s.max_sched_time = number(&sub)?,
            ("sched_max_job_start", false) => s.sched_max_job_start = number(&sub)?,
            ("batch_sched_delay", false) => s.batch_sched_delay = number(&sub)?,
            ("max_rpc_cnt", false) => s.max_rpc_cnt = number(&sub)?,
            ("defer", true) => s.defer = true,
            ("requeue_on_resume_failure", true) => {
                importer.file.power.requeue_on_resume_failure = true
            }
            ("defer_batch", true) => s.defer_batch = true,
            ("bf_interval", false) => s.bf_interval = signed(&sub)?,
            ("bf_max_time", false) => s.bf_max_time = Some(number(&sub)?),
            ("bf_resolution", false) => s.bf_resolution = number(&sub)?,
            ("bf_window", false) => s.bf_window = number(&sub)?,
            ("bf_max_job_test", false) => s.bf_max_job_test = number(&sub)?,
            ("bf_max_job_user", false) => s.bf_max_job_user = number(&sub)?,
            ("bf_max_job_part", false) => s.bf_max_job_part = number(&sub)?,
            ("bf_max_job_user_part", false) => s.bf_max_job_user_part = number(&sub)?,
            ("bf_max_job_assoc", false) => s.bf_max_job_assoc = number(&sub)?,
            ("bf_max_job_start", false) => s.bf_max_job_start = number(&sub)?,
            ("bf_max_job_array_resv", false) => s.bf_max_job_array_resv = number(&sub)?,
            ("bf_node_space_size", false) => s.bf_node_space_size = Some(number(&sub)?),
            ("bf_yield_interval", false) => s.bf_yield_interval = number(&sub)?,
            ("bf_yield_sleep", false) => s.bf_yield_sleep = number(&sub)?,
            ("bf_min_age_reserve", false) => s.bf_min_age_reserve = number(&sub)?,
            ("bf_min_prio_reserve", false) => s.bf_min_prio_reserve = number(&sub)?,
            ("bf_window_linear", false) => s.bf_window_linear = number(&sub)?,
            ("bf_continue", true) => s.bf_continue = true,
            ("bf_licenses", true) => s.bf_licenses = true,
            ("bf_busy_nodes", true) => s.bf_busy_nodes = true,
            ("bf_one_resv_per_job", true) => s.bf_one_resv_per_job = true,
            ("bf_running_job_reserve", true) => s.bf_running_job_reserve = true,
            _ => importer.skip(
                &pair.at,
                &format!("SchedulerParameters={item}"),
                "a scheduler parameter sluice does not implement",
            ),
        }
    }
    Ok(())
}

/// `SlurmctldParameters=idle_on_node_suspend,power_save_interval=10,…`: only the power saving ones.
fn slurmctld_parameters(importer: &mut Importer, pair: &Pair) -> Result<(), ConfigError> {
    for item in pair.value.split(',').filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            None if item == "idle_on_node_suspend" => {
                importer.file.power.idle_on_node_suspend = true
            }
            Some(("power_save_interval", value)) => {
                importer.file.power.power_save_interval = value
                    .parse()
                    .map_err(|_| invalid(pair, "power_save_interval=<seconds>"))?
            }
            Some(("power_save_min_interval", value)) => {
                importer.file.power.power_save_min_interval = value
                    .parse()
                    .map_err(|_| invalid(pair, "power_save_min_interval=<seconds>"))?
            }
            Some(("max_powered_nodes", value)) => {
                importer.file.power.max_powered_nodes = Some(
                    value
                        .parse()
                        .map_err(|_| invalid(pair, "max_powered_nodes=<nodes>"))?,
                )
            }
            _ => importer.skip(
                &pair.at,
                &format!("SlurmctldParameters={item}"),
                "a controller parameter outside the scheduling model",
            ),
        }
    }
    Ok(())
}

/// `Licenses=matlab:10,ansys` (count defaults to 1).
fn licenses(importer: &mut Importer, pair: &Pair) -> Result<(), ConfigError> {
    for item in pair.value.split(',').filter(|s| !s.is_empty()) {
        let (name, count) = match item.split_once(':').or_else(|| item.split_once('=')) {
            Some((name, count)) => (
                name,
                count
                    .parse()
                    .map_err(|_| invalid(pair, "name:count license entries"))?,
            ),
            None => (item, 1),
        };
        if name.contains('@') {
            importer.skip(
                &pair.at,
                &format!("Licenses={item}"),
                "remote licenses come from the accounting database",
            );
            continue;
        }
        importer.file.licenses.insert(name.to_owned(), count);
    }
    Ok(())
}
