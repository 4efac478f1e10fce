//! A job's Slurm environment, the one place its variables are named: a batch script's, a
//! step's, each task's, and where the GRES policies' go, from plain values the daemon and srun
//! compute (the allocation's layout, the array's indexes, the engine's GRES variables).

use std::collections::BTreeMap;

use crate::{ArrayMember, SubmitRequest};

/// The variables a job's processes are given, by name, built up group by group: a later group
/// replaces a variable an earlier one set, as the GRES variables put last do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlurmEnv {
    vars: BTreeMap<String, String>,
}

/// What a batch script's variables are made of: the job as the daemon launches it.
#[derive(Clone, Copy, Debug)]
pub struct BatchJob<'a> {
    /// Its public job id.
    pub id: u64,
    /// What it was submitted with (its name, directory, QOS, memory and echoed options).
    pub request: &'a SubmitRequest,
    /// Its array and index, with every index of its array, when it is an array task.
    pub array: Option<(ArrayMember, &'a [u32])>,
    /// Its owner's name.
    pub user: &'a str,
    /// Its owner's uid.
    pub uid: u32,
    /// Its nodes' names, in allocation order.
    pub nodes: &'a [String],
    /// Its partition.
    pub partition: &'a str,
    /// Its account.
    pub account: &'a str,
    /// The cluster's name.
    pub cluster: &'a str,
    /// Its task count.
    pub tasks: u32,
    /// CPUs to a task.
    pub cpus_per_task: u32,
    /// CPUs it holds on its first node, where the script runs.
    pub cpus_on_node: u32,
    /// CPUs it holds on each node, in Slurm's run-length form (`4(x2),2`).
    pub cpus_per_node: &'a str,
    /// Its tasks laid out on its nodes, in Slurm's run-length form.
    pub tasks_per_node: &'a str,
    /// When this run started (Unix seconds).
    pub start_time: i64,
    /// When its time limit ends it, if it has one.
    pub end_time: Option<i64>,
    /// Times it was requeued before this run.
    pub restarts: u32,
    /// The host it was submitted from.
    pub submit_host: &'a str,
    /// The daemon's state directory (`SLUICE_STATE_DIR`), where sluice's commands find it.
    pub state_dir: &'a str,
}

/// Where one task of a step runs and which it is.
#[derive(Clone, Copy, Debug)]
pub struct TaskIds<'a> {
    /// Its rank in the step (`SLURM_PROCID`).
    pub rank: u32,
    /// Its place among its node's tasks (`SLURM_LOCALID`).
    pub local: u32,
    /// Its node's place in the step (`SLURM_NODEID`).
    pub node_index: u32,
    /// Its node's name.
    pub node: &'a str,
    /// The ranks its node runs (`SLURM_GTIDS`).
    pub node_ranks: &'a [u32],
}

impl SlurmEnv {
    /// An empty environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// A batch script's variables: the job's ids, allocation and owner, what it asked for,
    /// its array's when it is an array task.
    pub fn batch(job: &BatchJob<'_>) -> Self {
        let req = job.request;
        let mut env = Self::new();
        let list = sluice_hostlist::compress(job.nodes);
        let nodes = job.nodes.len().to_string();
        let tasks = job.tasks.to_string();
        env.set("SLURM_JOB_ID", job.id)
            .set("SLURM_JOBID", job.id)
            .set("SLURM_JOB_NAME", req.job_name())
            .set("SLURM_JOB_NODELIST", &list)
            .set("SLURM_NODELIST", list)
            .set("SLURM_NNODES", &nodes)
            .set("SLURM_JOB_NUM_NODES", nodes)
            .set("SLURM_NTASKS", &tasks)
            .set("SLURM_NPROCS", tasks)
            .set("SLURM_CPUS_PER_TASK", job.cpus_per_task)
            .set("SLURM_CPUS_ON_NODE", job.cpus_on_node)
            .set("SLURM_JOB_PARTITION", job.partition)
            .set("SLURM_JOB_ACCOUNT", job.account)
            .set("SLURM_JOB_USER", job.user)
            .set("SLURM_JOB_UID", job.uid)
            .set("SLURM_SUBMIT_DIR", &req.workdir)
            .set("SLURM_SUBMIT_HOST", job.submit_host)
            .set("SLURM_JOB_CPUS_PER_NODE", job.cpus_per_node)
            .set("SLURM_TASKS_PER_NODE", job.tasks_per_node)
            .set("SLURM_JOB_START_TIME", job.start_time);
        env.extend(request_vars(req));
        if let Some((member, indexes)) = job.array {
            env.extend(array_vars(member, indexes));
        }
        env.set("SLURM_CLUSTER_NAME", job.cluster)
            .set(
                "SLURMD_NODENAME",
                job.nodes.first().map_or("", String::as_str),
            )
            .set("SLURM_RESTART_COUNT", job.restarts)
            .set("SLURM_JOB_QOS", req.qos.as_deref().unwrap_or("normal"));
        if let Some(mem) = req.mem_mb {
            env.set("SLURM_MEM_PER_NODE", mem);
        }
        if let Some(end) = job.end_time {
            env.set("SLURM_JOB_END_TIME", end);
        }
        env.set("SLUICE_STATE_DIR", job.state_dir);
        env
    }

    /// A step's variables as the daemon starts it: its id, its job's, and its nodes.
    pub fn step(job: u64, step: u32, nodes: &[String]) -> Self {
        let mut env = Self::new();
        env.set("SLURM_STEP_ID", step)
            .set("SLURM_STEPID", step)
            .set("SLURM_JOB_ID", job)
            .set("SLURM_STEP_NUM_NODES", nodes.len())
            .set("SLURM_STEP_NODELIST", sluice_hostlist::compress(nodes));
        env
    }

    /// The variables every task of a step shares, as srun sets them over the job's: its task
    /// count, its tasks laid out on its nodes (Slurm's run-length form), its distribution's
    /// name and, when srun was given it, its CPUs per task.
    pub fn step_tasks(
        &mut self,
        tasks: u32,
        tasks_per_node: &str,
        distribution: &str,
        cpus_per_task: Option<u32>,
    ) -> &mut Self {
        self.set("SLURM_STEP_NUM_TASKS", tasks)
            .set("SLURM_STEP_TASKS_PER_NODE", tasks_per_node)
            .set("SLURM_NTASKS", tasks)
            .set("SLURM_NPROCS", tasks)
            .set("SLURM_TASKS_PER_NODE", tasks_per_node)
            .set("SLURM_DISTRIBUTION", distribution);
        if let Some(c) = cpus_per_task {
            self.set("SLURM_CPUS_PER_TASK", c);
        }
        self
    }

    /// One task's environment: this one's variables and its own rank, place and node.
    pub fn task(&self, task: &TaskIds<'_>) -> BTreeMap<String, String> {
        let gtids = task
            .node_ranks
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let mut env = self.clone();
        env.set("SLURM_PROCID", task.rank)
            .set("SLURM_LOCALID", task.local)
            .set("SLURM_NODEID", task.node_index)
            .set("SLURMD_NODENAME", task.node)
            .set("SLURM_GTIDS", gtids);
        env.vars
    }

    /// The GRES policies' variables on the node the environment is for (`CUDA_VISIBLE_DEVICES`,
    /// `SLURM_JOB_GPUS`, …), put last: a policy's variable wins over one of the same name.
    pub fn gres(&mut self, vars: impl IntoIterator<Item = (String, String)>) -> &mut Self {
        self.extend(vars)
    }

    /// Sets `name` to `value`.
    pub fn set(&mut self, name: &str, value: impl ToString) -> &mut Self {
        self.vars.insert(name.to_string(), value.to_string());
        self
    }

    /// Sets each `(name, value)` in turn.
    pub fn extend<K: Into<String>>(
        &mut self,
        vars: impl IntoIterator<Item = (K, String)>,
    ) -> &mut Self {
        self.vars
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v)));
        self
    }

    /// The variables, by name.
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// The variables, by name, to hand to a process.
    pub fn into_vars(self) -> BTreeMap<String, String> {
        self.vars
    }
}

impl From<BTreeMap<String, String>> for SlurmEnv {
    /// An environment that starts from `vars` (srun's: the job's variables it runs in).
    fn from(vars: BTreeMap<String, String>) -> Self {
        Self { vars }
    }
}

/// The variables that echo what was asked: `SLURM_NTASKS_PER_NODE`, `SLURM_MEM_PER_CPU`,
/// `SLURM_GPUS`, `SLURM_GPUS_PER_NODE`, `SLURM_GPUS_PER_TASK`, `SLURM_CPUS_PER_GPU`,
/// `SLURM_MEM_PER_GPU`, each only when given.
pub fn request_vars(req: &SubmitRequest) -> Vec<(&'static str, String)> {
    let given = [
        (
            "SLURM_NTASKS_PER_NODE",
            req.ntasks_per_node.map(|n| n.to_string()),
        ),
        (
            "SLURM_MEM_PER_CPU",
            req.mem_per_cpu_mb.map(|m| m.to_string()),
        ),
        ("SLURM_GPUS", req.gpus.clone()),
        ("SLURM_GPUS_PER_NODE", req.gpus_per_node.clone()),
        ("SLURM_GPUS_PER_TASK", req.gpus_per_task.clone()),
        (
            "SLURM_CPUS_PER_GPU",
            req.cpus_per_gpu.map(|c| c.to_string()),
        ),
        (
            "SLURM_MEM_PER_GPU",
            req.mem_per_gpu_mb.map(|m| m.to_string()),
        ),
    ];
    given
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

/// An array task's `SLURM_ARRAY_*` variables: its array's job id and its own index, and the
/// array's task count, lowest and highest index and step (the common difference when the
/// indexes form one progression, else 1), from `indexes`, its array's indexes in order (its
/// own alone when they are not known).
pub fn array_vars(member: ArrayMember, indexes: &[u32]) -> Vec<(&'static str, String)> {
    let own = [member.task_id];
    let tasks = if indexes.is_empty() {
        &own[..]
    } else {
        indexes
    };
    let (min, max) = (tasks[0], tasks[tasks.len() - 1]);
    let step = match tasks {
        [a, b, ..] if tasks.windows(2).all(|w| w[1] - w[0] == b - a) => b - a,
        _ => 1,
    };
    vec![
        ("SLURM_ARRAY_JOB_ID", member.job_id.to_string()),
        ("SLURM_ARRAY_TASK_ID", member.task_id.to_string()),
        ("SLURM_ARRAY_TASK_COUNT", tasks.len().to_string()),
        ("SLURM_ARRAY_TASK_MAX", max.to_string()),
        ("SLURM_ARRAY_TASK_MIN", min.to_string()),
        ("SLURM_ARRAY_TASK_STEP", step.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job<'a>(req: &'a SubmitRequest, nodes: &'a [String]) -> BatchJob<'a> {
        BatchJob {
            id: 7,
            request: req,
            array: None,
            user: "alice",
            uid: 1000,
            nodes,
            partition: "gpu",
            account: "physics",
            cluster: "demo",
            tasks: 4,
            cpus_per_task: 2,
            cpus_on_node: 4,
            cpus_per_node: "4(x2)",
            tasks_per_node: "2(x2)",
            start_time: 100,
            end_time: Some(700),
            restarts: 0,
            submit_host: "login1",
            state_dir: "/var/spool/sluice",
        }
    }

    #[test]
    fn a_batch_script_sees_its_job_allocation_and_request() {
        let req = SubmitRequest {
            name: Some("train".into()),
            workdir: "/home/alice".into(),
            gpus_per_node: Some("a100:2".into()),
            mem_mb: Some(500),
            ..SubmitRequest::default()
        };
        let nodes = ["n1".to_string(), "n2".to_string()];
        let indexes = [1, 3, 5];
        let member = ArrayMember {
            job_id: 5,
            task_id: 3,
            throttle: 1,
        };
        let mut env = SlurmEnv::batch(&BatchJob {
            array: Some((member, &indexes)),
            ..job(&req, &nodes)
        });
        env.gres([("SLURM_JOB_GPUS".to_string(), "0,1".to_string())]);
        let vars = env.into_vars();
        let expect = [
            ("SLURM_JOB_ID", "7"),
            ("SLURM_JOB_NAME", "train"),
            ("SLURM_JOB_NODELIST", "n[1-2]"),
            ("SLURM_NNODES", "2"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_SUBMIT_DIR", "/home/alice"),
            ("SLURM_GPUS_PER_NODE", "a100:2"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURMD_NODENAME", "n1"),
            ("SLURM_JOB_QOS", "normal"),
            ("SLURM_MEM_PER_NODE", "500"),
            ("SLURM_JOB_END_TIME", "700"),
            ("SLURM_JOB_GPUS", "0,1"),
            ("SLUICE_STATE_DIR", "/var/spool/sluice"),
        ];
        for (k, v) in expect {
            assert_eq!(vars.get(k).map(String::as_str), Some(v), "{k}");
        }
        assert!(!vars.contains_key("SLURM_MEM_PER_CPU"));
    }

    #[test]
    fn a_step_and_its_tasks_add_their_own_over_the_job() {
        let nodes = ["n1".to_string(), "n2".to_string()];
        let mut env = SlurmEnv::from(BTreeMap::from([(
            "SLURM_NTASKS".to_string(),
            "8".to_string(),
        )]));
        env.extend(SlurmEnv::step(7, 1, &nodes).into_vars())
            .step_tasks(3, "2,1", "block", None);
        let task = env.task(&TaskIds {
            rank: 2,
            local: 0,
            node_index: 1,
            node: "n2",
            node_ranks: &[2],
        });
        assert_eq!(task["SLURM_STEP_NODELIST"], "n[1-2]");
        assert_eq!(task["SLURM_STEP_ID"], "1");
        assert_eq!(task["SLURM_NTASKS"], "3");
        assert_eq!(task["SLURM_STEP_TASKS_PER_NODE"], "2,1");
        assert_eq!(task["SLURM_PROCID"], "2");
        assert_eq!(task["SLURMD_NODENAME"], "n2");
        assert_eq!(task["SLURM_GTIDS"], "2");
        assert!(!task.contains_key("SLURM_CPUS_PER_TASK"));
        // The shared variables stay the step's: a task's are its own copy.
        assert!(!env.vars().contains_key("SLURM_PROCID"));
    }

    #[test]
    fn an_array_step_is_its_indexes_common_difference() {
        let member = ArrayMember {
            job_id: 40,
            task_id: 8,
            throttle: 0,
        };
        let vars: BTreeMap<_, _> = array_vars(member, &[0, 4, 8, 12]).into_iter().collect();
        assert_eq!(vars["SLURM_ARRAY_TASK_STEP"], "4");
        assert_eq!(vars["SLURM_ARRAY_TASK_MAX"], "12");
        let vars: BTreeMap<_, _> = array_vars(member, &[1, 3, 8]).into_iter().collect();
        assert_eq!(vars["SLURM_ARRAY_TASK_STEP"], "1");
        let vars: BTreeMap<_, _> = array_vars(member, &[]).into_iter().collect();
        assert_eq!(vars["SLURM_ARRAY_TASK_COUNT"], "1");
        assert_eq!(vars["SLURM_ARRAY_TASK_MIN"], "8");
    }

    #[test]
    fn only_what_was_asked_is_echoed() {
        let req = SubmitRequest {
            ntasks_per_node: Some(4),
            gpus_per_node: Some("a100:2".into()),
            ..SubmitRequest::default()
        };
        assert_eq!(
            request_vars(&req),
            vec![
                ("SLURM_NTASKS_PER_NODE", "4".to_string()),
                ("SLURM_GPUS_PER_NODE", "a100:2".to_string())
            ]
        );
    }
}
