//! What a client sends: submissions and updates as Slurm spells them, parsed into a `JobSpec`
//! by the daemon so the journal keeps the request exactly as acknowledged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sluice_engine::request::{Constraint, parse_dependencies, parse_gres, parse_licenses};
use sluice_engine::{Dependency, JobSpec};

/// One `sbatch` submission. Relative values (`--begin=now+60`, `--time=1:00`) are resolved by
/// the client, so replaying the journal later gives the same job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubmitRequest {
    /// `-J/--job-name`; default the script's file name, or `wrap`.
    pub name: Option<String>,
    /// `-p/--partition`, comma-separated.
    pub partition: Option<String>,
    /// `-A/--account`.
    pub account: Option<String>,
    /// `-q/--qos`.
    pub qos: Option<String>,
    /// `-N/--nodes` minimum.
    pub min_nodes: Option<u32>,
    /// `-N/--nodes` maximum (`-N 2-4`).
    pub max_nodes: Option<u32>,
    /// `-n/--ntasks`.
    pub ntasks: Option<u32>,
    /// `-c/--cpus-per-task`.
    pub cpus_per_task: Option<u32>,
    /// `--mem` per node, MB.
    pub mem_mb: Option<u64>,
    /// `-t/--time`, seconds.
    pub time_limit: Option<u64>,
    /// `--gres` as written (`gpu:a100:2,nic:1`).
    pub gres: Option<String>,
    /// `--gpus` as written (`2` or `a100:2`).
    pub gpus: Option<String>,
    /// `-L/--licenses` as written.
    pub licenses: Option<String>,
    /// `--constraint` as written.
    pub constraint: Option<String>,
    /// `--exclusive`.
    pub exclusive: bool,
    /// `--nice`.
    pub nice: i32,
    /// `--begin`, Unix seconds.
    pub begin: Option<i64>,
    /// `-d/--dependency` as written (`afterok:12:13`).
    pub dependency: Option<String>,
    /// `-H/--hold`.
    pub hold: bool,
    /// `--reservation`.
    pub reservation: Option<String>,
    /// `--requeue` / `--no-requeue`; `None` follows the daemon's `job_requeue` (on, as Slurm's JobRequeue=1).
    pub requeue: Option<bool>,
    /// The batch script's text (with its `#!` line); empty for an allocation without a script.
    pub script: String,
    /// Working and submit directory (`SLURM_SUBMIT_DIR`).
    pub workdir: String,
    /// `-o/--output` pattern (`%j` is the job id); default `slurm-%j.out` in `workdir`.
    pub output: Option<String>,
    /// `-e/--error` pattern; default: with the output.
    pub error: Option<String>,
    /// Environment exported to the job (sbatch's `--export=ALL` sends the client's).
    pub env: BTreeMap<String, String>,
}

/// `scontrol update JobId=…` fields; only pending jobs change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpdateRequest {
    /// `JobName=`.
    pub name: Option<String>,
    /// `TimeLimit=`, seconds.
    pub time_limit: Option<u64>,
    /// `Nice=`.
    pub nice: Option<i32>,
    /// `Partition=`.
    pub partition: Option<String>,
    /// `QOS=`.
    pub qos: Option<String>,
    /// `NumNodes=` minimum.
    pub min_nodes: Option<u32>,
    /// `BeginTime=`, Unix seconds.
    pub begin: Option<i64>,
}

impl UpdateRequest {
    /// Applies the fields given to a submission.
    pub fn apply(&self, req: &mut SubmitRequest) {
        if let Some(v) = &self.name {
            req.name = Some(v.clone());
        }
        if let Some(v) = self.time_limit {
            req.time_limit = Some(v);
        }
        if let Some(v) = self.nice {
            req.nice = v;
        }
        if let Some(v) = &self.partition {
            req.partition = Some(v.clone());
        }
        if let Some(v) = &self.qos {
            req.qos = Some(v.clone());
        }
        if let Some(v) = self.min_nodes {
            req.min_nodes = Some(v);
        }
        if let Some(v) = self.begin {
            req.begin = Some(v);
        }
    }

    /// Whether nothing is to change.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl SubmitRequest {
    /// The job name Slurm would show.
    pub fn job_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| "wrap".into())
    }

    /// Builds the engine's job spec for `user`; `deps` are the dependencies already mapped to
    /// engine ids (the caller resolves public ids and drops ones already decided).
    pub fn to_spec(&self, user: &str, deps: Vec<Dependency>) -> Result<JobSpec, String> {
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

    /// The dependencies as written, with public job ids.
    pub fn dependencies(&self) -> Result<Vec<Dependency>, String> {
        match &self.dependency {
            None => Ok(Vec::new()),
            Some(d) => parse_dependencies(d).map_err(|e| e.to_string()),
        }
    }
}
