//! sbatch's input environment variables (`SBATCH_ACCOUNT`, `SBATCH_TIMELIMIT`, …): options a
//! site or a user's profile sets for every submission. As in Slurm they override the script's
//! `#SBATCH` lines, and the command line overrides them.

use std::collections::BTreeMap;

use crate::cmd::options::{Command, Found, Takes, table};

/// Each variable and the long option it stands for.
const VARIABLES: &[(&str, &str)] = &[
    ("SBATCH_ACCOUNT", "account"),
    ("SBATCH_ACCTG_FREQ", "acctg-freq"),
    ("SBATCH_ARRAY_INX", "array"),
    ("SBATCH_BATCH", "batch"),
    ("SBATCH_CLUSTERS", "clusters"),
    ("SLURM_CLUSTERS", "clusters"),
    ("SBATCH_CONSTRAINT", "constraint"),
    ("SBATCH_CONTAINER", "container"),
    ("SBATCH_CORE_SPEC", "core-spec"),
    ("SBATCH_CPUS_PER_GPU", "cpus-per-gpu"),
    ("SBATCH_DELAY_BOOT", "delay-boot"),
    ("SBATCH_DISTRIBUTION", "distribution"),
    ("SBATCH_ERROR", "error"),
    ("SBATCH_EXCLUSIVE", "exclusive"),
    ("SBATCH_EXPORT", "export"),
    ("SBATCH_GET_USER_ENV", "get-user-env"),
    ("SBATCH_GPU_BIND", "gpu-bind"),
    ("SBATCH_GPU_FREQ", "gpu-freq"),
    ("SBATCH_GPUS", "gpus"),
    ("SBATCH_GPUS_PER_NODE", "gpus-per-node"),
    ("SBATCH_GPUS_PER_TASK", "gpus-per-task"),
    ("SBATCH_GRES", "gres"),
    ("SBATCH_GRES_FLAGS", "gres-flags"),
    ("SBATCH_HINT", "hint"),
    ("SLURM_HINT", "hint"),
    ("SBATCH_IGNORE_PBS", "ignore-pbs"),
    ("SBATCH_INPUT", "input"),
    ("SBATCH_JOB_NAME", "job-name"),
    ("SBATCH_MEM_BIND", "mem-bind"),
    ("SBATCH_MEM_PER_CPU", "mem-per-cpu"),
    ("SBATCH_MEM_PER_GPU", "mem-per-gpu"),
    ("SBATCH_MEM_PER_NODE", "mem"),
    ("SBATCH_NETWORK", "network"),
    ("SBATCH_NO_KILL", "no-kill"),
    ("SBATCH_NO_REQUEUE", "no-requeue"),
    ("SBATCH_OPEN_MODE", "open-mode"),
    ("SBATCH_OUTPUT", "output"),
    ("SBATCH_OVERCOMMIT", "overcommit"),
    ("SBATCH_PARTITION", "partition"),
    ("SBATCH_POWER", "power"),
    ("SBATCH_PROFILE", "profile"),
    ("SBATCH_QOS", "qos"),
    ("SBATCH_REQUEUE", "requeue"),
    ("SBATCH_RESERVATION", "reservation"),
    ("SBATCH_SIGNAL", "signal"),
    ("SBATCH_SPREAD_JOB", "spread-job"),
    ("SBATCH_THREAD_SPEC", "thread-spec"),
    ("SBATCH_THREADS_PER_CORE", "threads-per-core"),
    ("SBATCH_TIMELIMIT", "time"),
    ("SBATCH_USE_MIN_NODES", "use-min-nodes"),
    ("SBATCH_WAIT", "wait"),
    ("SBATCH_WAIT_ALL_NODES", "wait-all-nodes"),
    ("SBATCH_WCKEY", "wckey"),
];

/// The options the environment sets, each with the variable that set it.
pub fn options(env: &BTreeMap<String, String>) -> Vec<(&'static str, Found)> {
    let mut out = Vec::new();
    for (var, long) in VARIABLES {
        let Some(value) = env.get(*var) else {
            continue;
        };
        let Some(spec) = table::find(Command::Sbatch, long) else {
            continue;
        };
        let value = match spec.takes {
            Takes::Nothing => None,
            Takes::Optional => Some(value.clone()).filter(|v| !v.is_empty()),
            Takes::Value => Some(value.clone()),
        };
        out.push((*var, Found { spec, value }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_become_options() {
        let env = BTreeMap::from([
            ("SBATCH_ACCOUNT".to_string(), "proj".to_string()),
            ("SBATCH_TIMELIMIT".to_string(), "1:00:00".to_string()),
            ("SBATCH_EXCLUSIVE".to_string(), String::new()),
            ("SBATCH_NO_REQUEUE".to_string(), "1".to_string()),
            ("UNRELATED".to_string(), "x".to_string()),
        ]);
        let all = options(&env);
        let found: Vec<(&str, Option<&str>)> = all
            .iter()
            .map(|(_, f)| (f.spec.long, f.value.as_deref()))
            .collect();
        assert_eq!(
            found,
            vec![
                ("account", Some("proj")),
                ("exclusive", None),
                ("no-requeue", None),
                ("time", Some("1:00:00")),
            ]
        );
    }

    #[test]
    fn every_variable_names_an_option_of_the_table() {
        for (var, long) in VARIABLES {
            assert!(
                table::find(Command::Sbatch, long).is_some(),
                "{var} → --{long}"
            );
        }
    }
}
