//! `[[qos]]` tables into QOS records.

use std::collections::HashSet;

use crate::config::schema::QosSpec;
use crate::model::{Qos, QosLimits};
use crate::{ConfigError, Source};

use super::value_at;

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
            let mut no_decay = false;
            for flag in &spec.flags {
                if flag.get_ref().eq_ignore_ascii_case("NoDecay") {
                    no_decay = true;
                } else {
                    return Err(ConfigError::invalid(
                        value_at(source, flag),
                        format!("flag `{}`", flag.get_ref()),
                        "NoDecay",
                    ));
                }
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
                limits: QosLimits {
                    max_wall: spec.max_wall,
                    max_jobs_per_user: spec.max_jobs_per_user,
                    max_submit_jobs_per_user: spec.max_submit_jobs_per_user,
                    max_cpus_per_user: spec.max_cpus_per_user,
                    max_nodes_per_job: spec.max_nodes_per_job,
                    grp_cpus: spec.grp_cpus,
                    grp_jobs: spec.grp_jobs,
                },
            })
        })
        .collect()
}
