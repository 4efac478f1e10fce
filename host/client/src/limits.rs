//! The resource limits a submitter's jobs inherit, as Slurm's `PropagateResourceLimits=ALL`
//! gives them: read here, on the submitting side, and applied by the daemon to the job.

use std::collections::BTreeMap;

use rustix::process::{Resource, getrlimit};

/// The limits sbatch propagates, by Slurm's names (`PropagateResourceLimits=ALL`).
pub const PROPAGATED: [(&str, Resource); 10] = [
    ("AS", Resource::As),
    ("CORE", Resource::Core),
    ("CPU", Resource::Cpu),
    ("DATA", Resource::Data),
    ("FSIZE", Resource::Fsize),
    ("MEMLOCK", Resource::Memlock),
    ("NOFILE", Resource::Nofile),
    ("NPROC", Resource::Nproc),
    ("RSS", Resource::Rss),
    ("STACK", Resource::Stack),
];

/// This process's soft limits, as sbatch sends them (`None`: unlimited).
pub fn submitting_limits() -> BTreeMap<String, Option<u64>> {
    PROPAGATED
        .iter()
        .map(|(name, r)| (name.to_string(), getrlimit(*r).current))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_submitting_limits_name_every_propagated_resource() {
        let limits = submitting_limits();
        assert_eq!(limits.len(), PROPAGATED.len());
        assert!(limits.contains_key("NOFILE") && limits.contains_key("STACK"));
    }
}
