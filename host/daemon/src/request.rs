//! What a client sends: submissions and updates as Slurm spells them, parsed into a `JobSpec`
//! by the daemon so the journal keeps the request exactly as acknowledged.

pub use sluice_api::{SubmitRequest, UpdateRequest};
use sluice_engine::request::{Constraint, parse_dependencies, parse_gres, parse_licenses};
use sluice_engine::{Dependency, JobSpec};

/// What the daemon reads from a submission: the engine's job spec and the dependencies.
pub trait SubmitRequestExt {
    /// Builds the engine's job spec for `user`; `deps` are the dependencies already mapped to
    /// engine ids (the caller resolves public ids and drops ones already decided).
    fn to_spec(&self, user: &str, deps: Vec<Dependency>) -> Result<JobSpec, String>;

    /// The dependencies as written, with public job ids.
    fn dependencies(&self) -> Result<Vec<Dependency>, String>;
}

impl SubmitRequestExt for SubmitRequest {
    fn to_spec(&self, user: &str, deps: Vec<Dependency>) -> Result<JobSpec, String> {
        let mut spec = JobSpec::new(user);
        spec.name = self.job_name();
        spec.account = self.account.clone();
        spec.partitions = self
            .partition
            .iter()
            .flat_map(|p| p.split(','))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect();
        spec.qos = self.qos.clone();
        spec.min_nodes = self.min_nodes.unwrap_or(1).max(1);
        spec.max_nodes = self.max_nodes;
        spec.tasks = self.ntasks.unwrap_or(1).max(1);
        spec.cpus_per_task = self.cpus_per_task.unwrap_or(1).max(1);
        spec.memory_per_node_mb = self.mem_mb.unwrap_or(0);
        spec.time_limit = self.time_limit;
        if let Some(g) = &self.gres {
            spec.gres = parse_gres(g).map_err(|e| e.to_string())?;
        }
        if let Some(g) = &self.gpus {
            let (ty, count) = match g.rsplit_once(':') {
                Some((ty, n)) => (Some(ty.to_string()), n),
                None => (None, g.as_str()),
            };
            spec.gpus = Some(
                count
                    .trim()
                    .parse()
                    .map_err(|_| format!("--gpus={g}: expected [type:]count"))?,
            );
            spec.gpu_type = ty;
        }
        if let Some(l) = &self.licenses {
            spec.licenses = parse_licenses(l).map_err(|e| e.to_string())?;
        }
        if let Some(c) = &self.constraint {
            spec.constraint = Some(Constraint::parse(c).map_err(|e| e.to_string())?);
        }
        spec.exclusive = self.exclusive;
        spec.nice = self.nice;
        spec.begin_time = self.begin;
        spec.dependencies = deps;
        spec.hold = false; // holds are applied by the daemon, so the journal has one place for them
        spec.reservation = self.reservation.clone();
        Ok(spec)
    }

    fn dependencies(&self) -> Result<Vec<Dependency>, String> {
        match &self.dependency {
            None => Ok(Vec::new()),
            Some(d) => parse_dependencies(d).map_err(|e| e.to_string()),
        }
    }
}
