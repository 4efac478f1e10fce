//! A step inside an allocation: asks the daemon for it, lays its tasks out on the step's
//! nodes, gives each task Slurm's variables, runs them through a [`Launcher`] and reports
//! the highest exit code as the step's.

use std::collections::BTreeMap;

use anyhow::Context as _;
use sluice_api::{StepEndRequest, StepEnded, StepRequest, StepStarted};
use sluice_daemon::client::Client;
use sluice_daemon::task_layout::Layout;

use super::launch::{Launcher, Task, step_code};
use super::options::Shape;

/// Runs `argv` as a step of `job` with `shape`, over the environment `base`; returns the
/// step's exit code and the daemon's record of its end.
pub fn run(
    client: &mut Client,
    job: u64,
    shape: &Shape,
    argv: &[String],
    base: &BTreeMap<String, String>,
    label: bool,
    launcher: &dyn Launcher,
) -> anyhow::Result<(i32, StepEnded)> {
    let request = StepRequest {
        name: argv[0].clone(),
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
    let mut env = base.clone();
    env.extend(step.env.clone());
    env.extend(step_vars(shape, &layout));
    let mut tasks = tasks(argv, &env, &nodes, &layout);
    for t in &mut tasks {
        t.workdir = shape.workdir.clone();
    }
    let outcomes = launcher.run(&tasks, label);
    let code = step_code(&outcomes);
    let end: StepEnded = client.post(
        &format!("/v1/jobs/{job}/steps/{}/end", step.step_id),
        &StepEndRequest { exit_code: code },
    )?;
    Ok((code, end))
}

/// The CPUs the step claims on each node: its tasks' there, but no more than the fewest the
/// job holds on a node. A policy may spread a `--ntasks-per-node` job's CPUs unevenly (the
/// selection contract carries no per-node task count), and then the tasks share that node's
/// CPUs as with `--overcommit` rather than the step being refused.
fn claim(shape: &Shape, base: &BTreeMap<String, String>) -> u32 {
    let want = shape.per_node * shape.cpus_per_task;
    let fewest = base
        .get("SLURM_JOB_CPUS_PER_NODE")
        .and_then(|t| sluice_daemon::node_counts::expand_run_lengths(t))
        .and_then(|cpus| cpus.into_iter().min());
    fewest.map_or(want, |f| want.min(f)).max(1)
}

/// The variables every task of the step shares, as srun sets them.
pub fn step_vars(shape: &Shape, layout: &Layout) -> Vec<(String, String)> {
    let per_node = layout.per_node_text();
    let mut vars = vec![
        ("SLURM_STEP_NUM_TASKS", shape.tasks.to_string()),
        ("SLURM_STEP_TASKS_PER_NODE", per_node.clone()),
        ("SLURM_NTASKS", shape.tasks.to_string()),
        ("SLURM_NPROCS", shape.tasks.to_string()),
        ("SLURM_TASKS_PER_NODE", per_node),
        ("SLURM_DISTRIBUTION", shape.distribution.name().to_string()),
    ];
    if shape.cpus_per_task_set {
        vars.push(("SLURM_CPUS_PER_TASK", shape.cpus_per_task.to_string()));
    }
    vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// One task per rank, with its own `SLURM_PROCID`, `SLURM_LOCALID`, `SLURM_NODEID`,
/// `SLURMD_NODENAME` and `SLURM_GTIDS` (the ranks on its node), in rank order.
pub fn tasks(
    argv: &[String],
    env: &BTreeMap<String, String>,
    nodes: &[String],
    layout: &Layout,
) -> Vec<Task> {
    let mut out = Vec::new();
    for (node_id, (name, ranks)) in nodes.iter().zip(&layout.tasks).enumerate() {
        let gtids = ranks
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        for (local, rank) in ranks.iter().enumerate() {
            let mut e = env.clone();
            e.insert("SLURM_PROCID".into(), rank.to_string());
            e.insert("SLURM_LOCALID".into(), local.to_string());
            e.insert("SLURM_NODEID".into(), node_id.to_string());
            e.insert("SLURMD_NODENAME".into(), name.clone());
            e.insert("SLURM_GTIDS".into(), gtids.clone());
            out.push(Task {
                rank: *rank,
                node: name.clone(),
                argv: argv.to_vec(),
                env: e,
                workdir: None,
            });
        }
    }
    out.sort_by_key(|t| t.rank);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_daemon::task_layout::Distribution;

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
        let ts = tasks(&["true".into()], &BTreeMap::new(), &nodes, &layout);
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
        let vars: BTreeMap<String, String> = step_vars(&s, &layout).into_iter().collect();
        assert_eq!(vars["SLURM_STEP_TASKS_PER_NODE"], "4(x2)");
        assert_eq!(vars["SLURM_STEP_NUM_TASKS"], "8");
        assert!(!vars.contains_key("SLURM_CPUS_PER_TASK"));
    }
}
