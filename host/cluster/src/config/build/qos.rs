//! `[[qos]]` tables into QOS records.

use std::collections::HashSet;

use crate::config::schema::QosSpec;
use crate::model::{Qos, QosLimits};
use crate::{ConfigError, Source};

use super::{tres_at, value_at};

/// Builds the QOS list; names must be unique and only known flags are accepted.
pub fn build_qos(specs: &[QosSpec], source: Source<'_>) -> Result<Vec<Qos>, ConfigError> {
    let mut seen = HashSet::new();
    specs
        .iter()
        .map(|spec| {
            let name = spec.name.get_ref();
            if !seen.insert(name.clone()) {
                return Err(ConfigError::invalid(
                    value_at(source, &spec.name),
                    format!("QOS `{name}` defined twice"),
                    "unique QOS names",
                ));
            }
            let (mut no_decay, mut deny_on_limit, mut over_part_qos) = (false, false, false);
            for flag in &spec.flags {
                let slot = match flag.get_ref().to_ascii_lowercase().as_str() {
                    "nodecay" => &mut no_decay,
                    "denyonlimit" => &mut deny_on_limit,
                    "overpartqos" => &mut over_part_qos,
                    _ => {
                        return Err(ConfigError::invalid(
                            value_at(source, flag),
                            format!("flag `{}`", flag.get_ref()),
                            "NoDecay, DenyOnLimit or OverPartQOS",
                        ));
                    }
                };
                *slot = true;
            }
            if !(spec.usage_factor >= 0.0 && spec.usage_factor.is_finite()) {
                return Err(ConfigError::invalid(
                    source.find_key("UsageFactor", spec.name.span().start),
                    format!("UsageFactor = {}", spec.usage_factor),
                    "a finite number of at least 0",
                ));
            }
            Ok(Qos {
                name: name.clone(),
                priority: spec.priority,
                usage_factor: spec.usage_factor,
                no_decay,
                limits: qos_limits(spec, source)?,
                deny_on_limit,
                over_part_qos,
            })
        })
        .collect()
}

/// The limits of one `[[qos]]` table; `MaxCPUsPerUser`, `MaxNodesPerJob` and `GrpCPUs` are
/// shorthand for one TRES of the TRES limits and fill it when the TRES string leaves it out.
fn qos_limits(spec: &QosSpec, source: Source<'_>) -> Result<QosLimits, ConfigError> {
    let mut max_tres_per_job = tres_at(source, spec.max_tres_per_job.as_ref(), "MaxTRESPerJob")?;
    let mut max_tres_per_user = tres_at(source, spec.max_tres_per_user.as_ref(), "MaxTRESPerUser")?;
    let mut grp_tres = tres_at(source, spec.grp_tres.as_ref(), "GrpTRES")?;
    max_tres_per_job.node = max_tres_per_job
        .node
        .or(spec.max_nodes_per_job.map(u64::from));
    max_tres_per_user.cpu = max_tres_per_user
        .cpu
        .or(spec.max_cpus_per_user.map(u64::from));
    grp_tres.cpu = grp_tres.cpu.or(spec.grp_cpus.map(u64::from));
    Ok(QosLimits {
        max_wall: spec.max_wall,
        max_jobs_per_user: spec.max_jobs_per_user,
        max_submit_jobs_per_user: spec.max_submit_jobs_per_user,
        max_tres_per_job,
        max_tres_per_user,
        max_tres_mins_per_job: tres_at(
            source,
            spec.max_tres_mins_per_job.as_ref(),
            "MaxTRESMinsPerJob",
        )?,
        grp_tres,
        grp_jobs: spec.grp_jobs,
        grp_submit_jobs: spec.grp_submit_jobs,
        max_tres_per_node: tres_at(source, spec.max_tres_per_node.as_ref(), "MaxTRESPerNode")?,
        grp_tres_mins: tres_at(source, spec.grp_tres_mins.as_ref(), "GrpTRESMins")?,
        grp_tres_run_mins: tres_at(source, spec.grp_tres_run_mins.as_ref(), "GrpTRESRunMins")?,
        grp_wall: spec.grp_wall,
    })
}
