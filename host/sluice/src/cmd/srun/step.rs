//! A step inside an allocation: asks the daemon for it, lays its tasks out on the step's
//! nodes, gives each task Slurm's variables, its command line and its streams, runs them
//! through a [`Launcher`] while watching that the job still holds them, and reports the
//! highest exit code as the step's.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use sluice_api::job_env::{SlurmEnv, TaskIds};
use sluice_api::layout::Layout;
use sluice_api::{Config, Job, StepEndRequest, StepEnded, StepRequest, StepStarted};
use sluice_client::{Client, segment};

use super::job_end::{self, JobNow, StepName};
use super::launch::{Launcher, Task, Writing, step_code};
use super::options::Shape;
use super::task_io::{Plan, Stdio, TaskPlace, TaskStreams};
use crate::cmd::clock::Zone;

/// How often srun asks the daemon whether the job still holds the running step.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// What srun runs as a step.
pub struct StepSpec<'a> {
    /// Its shape.
    pub shape: &'a Shape,
    /// Its name (srun's command).
    pub name: &'a str,
    /// Each task's command line, by rank.
    pub argvs: &'a [Vec<String>],
    /// `-o`, `-e`, `-i`.
    pub stdio: &'a Stdio,
    /// `--label`, `--open-mode`.
    pub writing: Writing,
}

/// Runs `spec` as a step of `job`, over the environment `base`; returns the step's exit code.
pub fn run(
    client: &mut Client,
    job: u64,
    spec: &StepSpec<'_>,
    base: &BTreeMap<String, String>,
    launcher: &dyn Launcher,
) -> anyhow::Result<i32> {
    let shape = spec.shape;
    let request = StepRequest {
        name: spec.name.to_string(),
        nodes: shape.nodes,
        cpus_per_node: claim(shape, base),
    };
    let step: StepStarted = client.post(&format!("/v1/jobs/{job}/steps"), &request)?;
    let nodes = step
        .env
        .get("SLURM_STEP_NODELIST")
        .map(|list| sluice_hostlist::expand(list))
        .transpose()
        .context("the daemon's step node list does not read as a hostlist")?
        .unwrap_or_default();
    let room = vec![shape.per_node; nodes.len()];
    let layout = Layout::new(shape.tasks, &room, shape.distribution);
    let mut env = SlurmEnv::from(base.clone());
    env.extend(step.env.clone());
    env.extend(step_vars(shape, &layout));
    let plan = plan(spec, env.vars(), job, step.step_id)?;
    let workdir = shape.workdir.clone().unwrap_or_else(|| plan.cwd.clone());
    let mut tasks = tasks(spec.argvs, env.vars(), &nodes, &layout, |place| {
        plan.streams(&TaskPlace {
            workdir: &workdir,
            ..place
        })
    });
    for t in &mut tasks {
        t.workdir = shape.workdir.clone();
    }
    let name = StepName {
        job,
        step: step.step_id,
        node: nodes.first().cloned().unwrap_or_default(),
    };
    let (outcomes, aborted) = job_end::watch(
        |orders| launcher.run(&tasks, spec.writing, orders),
        || look(client, job),
        WATCH_EVERY,
        &name,
        &mut std::io::stderr(),
    );
    let code = step_code(&outcomes);
    let end: Result<StepEnded, _> = client.post(
        &format!("/v1/jobs/{job}/steps/{}/end", step.step_id),
        &StepEndRequest { exit_code: code },
    );
    // A job that ended under the step may be gone from the daemon's live jobs.
    if let Err(e) = end
        && !aborted
    {
        return Err(e.into());
    }
    Ok(code)
}

/// The step's `-o/-e/-i` for its tasks' names: the job's and step's ids, the job's name and
/// array (from the job's variables, as srun reads them), the user, srun's directory.
fn plan(
    spec: &StepSpec<'_>,
    env: &BTreeMap<String, String>,
    job: u64,
    step: u32,
) -> anyhow::Result<Plan> {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut plan = Plan::new(spec.stdio, spec.shape.tasks);
    plan.job = job;
    plan.step = step;
    plan.array_job = env.get("SLURM_ARRAY_JOB_ID").and_then(|v| v.parse().ok());
    plan.array_task = env
        .get("SLURM_ARRAY_TASK_ID")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    plan.job_name = env.get("SLURM_JOB_NAME").cloned().unwrap_or_default();
    plan.user = sluice_client::identity::user_name(uid).unwrap_or_else(|| uid.to_string());
    plan.cwd = std::env::current_dir()?;
    Ok(plan)
}

/// How the job is, as the daemon says: running while it holds its steps; once ended, with
/// when and the cluster's KillWait. An unanswered question counts as running.
fn look(client: &mut Client, job: u64) -> JobNow {
    let Ok(j) = client.get::<Job>(&format!("/v1/jobs/{}", segment(&job.to_string()))) else {
        return JobNow::Running;
    };
    if job_end::holds_steps(&j.state) {
        return JobNow::Running;
    }
    let kill_wait = client
        .get::<Config>("/v1/config")
        .map_or(30, |c| c.daemon.kill_wait);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    JobNow::Ended {
        state: j.state,
        at: Zone::Local.iso(j.end_time.unwrap_or(now)),
        kill_wait: Duration::from_secs(kill_wait),
    }
}

/// The CPUs the step claims on each node: its tasks' there, but no more than the fewest the
/// job holds on a node. A policy may spread a `--ntasks-per-node` job's CPUs unevenly (the
/// selection contract carries no per-node task count), and then the tasks share that node's
/// CPUs as with `--overcommit` rather than the step being refused.
fn claim(shape: &Shape, base: &BTreeMap<String, String>) -> u32 {
    let want = shape.per_node * shape.cpus_per_task;
    let fewest = base
        .get("SLURM_JOB_CPUS_PER_NODE")
        .and_then(|t| sluice_api::node_counts::expand_run_lengths(t))
        .and_then(|cpus| cpus.into_iter().min());
    fewest.map_or(want, |f| want.min(f)).max(1)
}

/// The variables every task of the step shares, as srun sets them.
pub fn step_vars(shape: &Shape, layout: &Layout) -> Vec<(String, String)> {
    let mut vars = SlurmEnv::new();
    vars.step_tasks(
        shape.tasks,
        &layout.per_node_text(),
        shape.distribution.name(),
        shape.cpus_per_task_set.then_some(shape.cpus_per_task),
    );
    vars.into_vars().into_iter().collect()
}

/// One task per rank, with its command line from `argvs`, its own `SLURM_PROCID`,
/// `SLURM_LOCALID`, `SLURM_NODEID`, `SLURMD_NODENAME` and `SLURM_GTIDS` (the ranks on its
/// node), and the streams `streams` gives its place, in rank order.
pub fn tasks(
    argvs: &[Vec<String>],
    env: &BTreeMap<String, String>,
    nodes: &[String],
    layout: &Layout,
    streams: impl Fn(TaskPlace<'_>) -> TaskStreams,
) -> Vec<Task> {
    let env = SlurmEnv::from(env.clone());
    let mut out = Vec::new();
    for (node_id, (name, ranks)) in nodes.iter().zip(&layout.tasks).enumerate() {
        for (local, rank) in ranks.iter().enumerate() {
            let e = env.task(&TaskIds {
                rank: *rank,
                local: local as u32,
                node_index: node_id as u32,
                node: name,
                node_ranks: ranks,
            });
            let place = TaskPlace {
                rank: *rank,
                node_index: node_id as u32,
                node: name,
                workdir: std::path::Path::new(""),
            };
            out.push(Task {
                rank: *rank,
                node: name.clone(),
                argv: argvs.get(*rank as usize).cloned().unwrap_or_default(),
                env: e,
                workdir: None,
                streams: streams(place),
            });
        }
    }
    out.sort_by_key(|t| t.rank);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::srun::task_io::Sink;
    use sluice_api::layout::Distribution;

    fn shape(distribution: Distribution) -> Shape {
        Shape {
            tasks: 8,
            nodes: 2,
            per_node: 4,
            cpus_per_task: 1,
            cpus_per_task_set: false,
            distribution,
            workdir: None,
        }
    }

    #[test]
    fn the_claim_stays_within_the_fewest_cpus_the_job_holds() {
        let s = shape(Distribution::Block);
        let env = |v: &str| BTreeMap::from([("SLURM_JOB_CPUS_PER_NODE".to_string(), v.into())]);
        assert_eq!(claim(&s, &env("8(x2)")), 4);
        assert_eq!(claim(&s, &env("7,1")), 1);
        assert_eq!(claim(&s, &BTreeMap::new()), 4);
    }

    #[test]
    fn each_task_knows_its_rank_node_and_place_on_the_node() {
        let nodes = vec!["n1".to_string(), "n2".to_string()];
        let s = shape(Distribution::Cyclic);
        let layout = Layout::new(8, &[4, 4], s.distribution);
        let argvs: Vec<Vec<String>> = (0..8).map(|r| vec![format!("prog{r}")]).collect();
        let ts = tasks(&argvs, &BTreeMap::new(), &nodes, &layout, |p| TaskStreams {
            stdout: Sink::File(format!("{}-{}-{}", p.rank, p.node_index, p.node).into()),
            ..TaskStreams::default()
        });
        let got: Vec<(&str, &str, &str, &str)> = ts
            .iter()
            .map(|t| {
                (
                    t.env["SLURM_PROCID"].as_str(),
                    t.env["SLURM_LOCALID"].as_str(),
                    t.env["SLURM_NODEID"].as_str(),
                    t.env["SLURMD_NODENAME"].as_str(),
                )
            })
            .collect();
        assert_eq!(
            got[..3],
            [
                ("0", "0", "0", "n1"),
                ("1", "0", "1", "n2"),
                ("2", "1", "0", "n1")
            ]
        );
        assert_eq!(ts[7].env["SLURM_GTIDS"], "1,3,5,7");
        // Each task runs its own command line and has the streams of its place.
        assert_eq!(ts[5].argv, ["prog5"]);
        assert_eq!(ts[5].streams.stdout, Sink::File("5-1-n2".into()));
        let vars: BTreeMap<String, String> = step_vars(&s, &layout).into_iter().collect();
        assert_eq!(vars["SLURM_STEP_TASKS_PER_NODE"], "4(x2)");
        assert_eq!(vars["SLURM_STEP_NUM_TASKS"], "8");
        assert!(!vars.contains_key("SLURM_CPUS_PER_TASK"));
    }
}
