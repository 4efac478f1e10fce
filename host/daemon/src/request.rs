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
        let shape = Shape::of(self)?;
        spec.min_nodes = shape.min_nodes;
        spec.max_nodes = self.max_nodes.map(|m| m.max(shape.min_nodes));
        spec.tasks = shape.tasks;
        spec.cpus_per_task = shape.cpus_per_task;
        spec.tasks_per_node = shape.tasks_per_node;
        spec.memory_per_node_mb = shape.memory_per_node_mb;
        spec.time_limit = self.time_limit;
        if let Some(g) = &self.gres {
            spec.gres = parse_gres(g).map_err(|e| e.to_string())?;
        }
        spec.gpus = shape.gpus;
        spec.gpus_per_node = shape.gpus_per_node;
        spec.gpu_type = shape.gpu_type;
        if let Some(l) = &self.licenses {
            spec.licenses = parse_licenses(l).map_err(|e| e.to_string())?;
        }
        if let Some(c) = &self.constraint {
            spec.constraint = Some(Constraint::parse(c).map_err(|e| e.to_string())?);
        }
        // --mem=0 asks for all of each node's memory: the node itself, as --exclusive gives.
        spec.exclusive = self.exclusive || self.mem_whole_node;
        spec.oversubscribe = self.oversubscribe;
        spec.nice = self.nice;
        spec.priority = self.priority;
        spec.begin_time = self.begin;
        spec.dependencies = deps;
        spec.hold = false; // holds are applied by the daemon, so the journal has one place for them
        spec.reservation = self.reservation.clone();
        spec.time_min = self.time_min;
        spec.required_nodes = node_names("nodelist", self.nodelist.as_deref())?;
        spec.excluded_nodes = node_names("exclude", self.exclude.as_deref())?;
        // Slurm gives a job every node of its --nodelist, so that many at least.
        let listed = u32::try_from(spec.required_nodes.len()).unwrap_or(u32::MAX);
        spec.min_nodes = spec.min_nodes.max(listed);
        spec.max_nodes = spec.max_nodes.map(|m| m.max(spec.min_nodes));
        Ok(spec)
    }

    fn dependencies(&self) -> Result<Vec<Dependency>, String> {
        match &self.dependency {
            None => Ok(Vec::new()),
            Some(d) => parse_dependencies(d).map_err(|e| e.to_string()),
        }
    }
}

/// A `--nodelist`/`--exclude` hostlist as sorted names, bounded as every hostlist a user sends:
/// in hosts, and in the bytes its names take (admission holds a new request to the cluster's
/// nodes; this bound is for a request journaled before it did).
fn node_names(option: &str, list: Option<&str>) -> Result<Vec<String>, String> {
    let Some(list) = list.filter(|l| !l.trim().is_empty()) else {
        return Ok(Vec::new());
    };
    let hosts = sluice_hostlist::Hostlist::parse_at_most(list, sluice_hostlist::MAX_HOSTS)
        .map_err(|e| format!("--{option}={list}: {e}"))?;
    let bytes = hosts.len().saturating_mul(hosts.longest_name() as u64);
    if bytes > crate::extract::MAX_BODY as u64 {
        return Err(format!(
            "--{option}: {} names of up to {} bytes are more than a request may carry",
            hosts.len(),
            hosts.longest_name()
        ));
    }
    let mut names: Vec<String> = hosts.iter().collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The job's size as the engine counts it, from sbatch's several ways of saying it:
/// `--ntasks-per-node` times the nodes when `-n` is not given (and enough nodes for `-n`
/// tasks when `-N` is not), `--gpus-per-task` times the tasks, `--cpus-per-gpu` spread over
/// the tasks, `--mem-per-cpu` and `--mem-per-gpu` times what one node holds of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Minimum nodes.
    pub min_nodes: u32,
    /// Tasks.
    pub tasks: u32,
    /// CPUs per task.
    pub cpus_per_task: u32,
    /// `--ntasks-per-node`, 0 when not given: every node of the job runs that many tasks.
    pub tasks_per_node: u32,
    /// Memory per node, MB.
    pub memory_per_node_mb: u64,
    /// GPUs over the whole job.
    pub gpus: Option<u32>,
    /// GPUs per node.
    pub gpus_per_node: Option<u32>,
    /// The GPUs' type, if named.
    pub gpu_type: Option<String>,
}

/// `[type:]count` of a `--gpus*` option.
fn gpu_count(option: &str, text: &str) -> Result<(Option<String>, u32), String> {
    let (ty, count) = match text.rsplit_once(':') {
        Some((ty, n)) => (Some(ty.to_string()), n),
        None => (None, text),
    };
    let n = count
        .trim()
        .parse()
        .map_err(|_| format!("--{option}={text}: expected [type:]count"))?;
    Ok((ty, n))
}

impl Shape {
    /// The shape a submission asks for.
    pub fn of(r: &SubmitRequest) -> Result<Self, String> {
        let per_node = r.ntasks_per_node.filter(|n| *n > 0);
        let given_nodes = r.min_nodes.unwrap_or(1).max(1);
        let tasks = match (r.ntasks, per_node) {
            (Some(n), _) => n.max(1),
            (None, Some(p)) => p.saturating_mul(given_nodes),
            (None, None) => 1,
        };
        let min_nodes = match (r.min_nodes, per_node) {
            (None, Some(p)) => tasks.div_ceil(p).max(1),
            _ => given_nodes,
        };
        let mut gpu_type = None;
        let mut gpus = None;
        if let Some(g) = &r.gpus {
            let (ty, n) = gpu_count("gpus", g)?;
            gpu_type = ty;
            gpus = Some(n);
        }
        let mut gpus_per_node = None;
        if let Some(g) = &r.gpus_per_node {
            let (ty, n) = gpu_count("gpus-per-node", g)?;
            gpu_type = ty.or(gpu_type);
            gpus_per_node = Some(n);
        }
        if let Some(g) = &r.gpus_per_task {
            let (ty, n) = gpu_count("gpus-per-task", g)?;
            gpu_type = ty.or(gpu_type);
            gpus = Some(gpus.unwrap_or(0).max(n.saturating_mul(tasks)));
        }
        let total_gpus = gpus.or(gpus_per_node.map(|g| g.saturating_mul(min_nodes)));
        let mut cpus_per_task = r.cpus_per_task.unwrap_or(1).max(1);
        if let (Some(c), Some(g)) = (r.cpus_per_gpu, total_gpus) {
            let cpus = u64::from(c) * u64::from(g);
            let per_task = cpus.div_ceil(u64::from(tasks)).min(u64::from(u32::MAX)) as u32;
            cpus_per_task = cpus_per_task.max(per_task);
        }
        let node_tasks = per_node.unwrap_or_else(|| tasks.div_ceil(min_nodes));
        let memory_per_node_mb = if let Some(m) = r.mem_per_cpu_mb {
            m.saturating_mul(u64::from(node_tasks) * u64::from(cpus_per_task))
        } else if let Some(m) = r.mem_per_gpu_mb {
            let per_node_gpus = gpus_per_node
                .or(total_gpus.map(|g| g.div_ceil(min_nodes)))
                .unwrap_or(1);
            m.saturating_mul(u64::from(per_node_gpus))
        } else {
            r.mem_mb.unwrap_or(0)
        };
        Ok(Self {
            min_nodes,
            tasks,
            cpus_per_task,
            tasks_per_node: per_node
                .filter(|&p| {
                    // Slurm ignores a --ntasks-per-node whose nodes cannot hold the -n tasks
                    // ("can't honor --ntasks-per-node"); kept, no node count would fit the job.
                    let max_nodes = r.max_nodes.unwrap_or(min_nodes).max(min_nodes);
                    u64::from(p) * u64::from(max_nodes) >= u64::from(tasks)
                })
                .unwrap_or(0),
            memory_per_node_mb,
            gpus,
            gpus_per_node,
            gpu_type,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(f: impl FnOnce(&mut SubmitRequest)) -> Shape {
        let mut r = SubmitRequest::default();
        f(&mut r);
        Shape::of(&r).unwrap()
    }

    #[test]
    fn tasks_per_node_sets_tasks_or_nodes() {
        let s = shape(|r| {
            r.min_nodes = Some(2);
            r.ntasks_per_node = Some(4);
        });
        assert_eq!((s.min_nodes, s.tasks, s.tasks_per_node), (2, 8, 4));
        let s = shape(|r| {
            r.ntasks = Some(10);
            r.ntasks_per_node = Some(4);
        });
        assert_eq!((s.min_nodes, s.tasks, s.tasks_per_node), (3, 10, 4));
        let s = shape(|r| r.ntasks = Some(10));
        assert_eq!(s.tasks_per_node, 0, "no per-node count unless one is given");
        let s = shape(|r| {
            r.ntasks = Some(10);
            r.min_nodes = Some(2);
            r.ntasks_per_node = Some(4);
        });
        assert_eq!(
            (s.min_nodes, s.tasks, s.tasks_per_node),
            (2, 10, 0),
            "two nodes cannot hold ten tasks at four each"
        );
    }

    #[test]
    fn memory_per_cpu_and_per_gpu_become_memory_per_node() {
        let s = shape(|r| {
            r.min_nodes = Some(2);
            r.ntasks_per_node = Some(4);
            r.cpus_per_task = Some(2);
            r.mem_per_cpu_mb = Some(1000);
        });
        assert_eq!(s.memory_per_node_mb, 8000);
        let s = shape(|r| {
            r.gpus_per_node = Some("a100:2".into());
            r.mem_per_gpu_mb = Some(40_960);
        });
        assert_eq!(s.memory_per_node_mb, 81_920);
        assert_eq!(
            (s.gpus_per_node, s.gpu_type.as_deref()),
            (Some(2), Some("a100"))
        );
    }

    #[test]
    fn gpus_per_task_and_cpus_per_gpu() {
        let s = shape(|r| {
            r.ntasks = Some(4);
            r.gpus_per_task = Some("1".into());
            r.cpus_per_gpu = Some(8);
        });
        assert_eq!((s.gpus, s.cpus_per_task), (Some(4), 8));
        assert!(
            Shape::of(&SubmitRequest {
                gpus_per_node: Some("x:y".into()),
                ..SubmitRequest::default()
            })
            .is_err()
        );
    }
}
