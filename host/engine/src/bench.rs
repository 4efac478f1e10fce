//! Owns no state: a pass benchmark on a synthetic cluster for the CLI and `benches/passes.rs`.
//!
//! A pass benchmark the CLI and `benches/passes.rs` call: one main-loop pass and one backfill pass
//! over many pending jobs on a synthetic cluster, with whatever policies the caller hands in.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use sluice_cluster::{
    AssocId, AssocKind, Association, Cluster, Node, NodeId, NodeState as ConfigState, Partition,
    PowerSaveParams, PriorityParams, Qos, QosLimits, SchedulerParams, Shares, TimeLimit,
};
use sluice_policy::fixtures::Rng;

use crate::clock::ManualClock;
use crate::config::{EngineConfig, Policies};
use crate::engine::Engine;
use crate::job::JobSpec;
use crate::stats::PassStats;

/// Benchmark size.
#[derive(Clone, Debug, Serialize)]
pub struct BenchConfig {
    /// Nodes in the synthetic cluster (64 CPUs, 256 GB each).
    pub nodes: usize,
    /// Pending jobs.
    pub jobs: usize,
    /// Users (each its own account under root).
    pub users: usize,
    /// Backfill's bf_max_job_test (Slurm's default is 500).
    pub bf_max_job_test: u32,
    /// Workload seed.
    pub seed: u64,
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self {
            nodes: 10_000,
            jobs: 100_000,
            users: 100,
            bf_max_job_test: 500,
            seed: 42,
        }
    }
}

/// Timings of one main-loop pass and one backfill pass, wall-clock.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// The configuration measured.
    pub config: BenchConfig,
    /// Submitting every job, in milliseconds (not a scheduling cost, shown for scale).
    pub submit_ms: f64,
    /// One full main-loop pass, in milliseconds.
    pub main_pass_ms: f64,
    /// Counters of that pass.
    pub main_stats: PassStats,
    /// One backfill pass right after, in milliseconds.
    pub backfill_pass_ms: f64,
    /// Counters of that pass.
    pub backfill_stats: PassStats,
}

/// A cluster of `nodes` identical nodes (`node[00001-…]`, 64 CPUs, 256 GB, every 4th with 4 GPUs)
/// in one partition `batch`, one QOS `normal` and `users` users each under its own account.
pub fn synthetic_cluster(nodes: usize, users: usize) -> Cluster {
    let node_list = synthetic_nodes(nodes);
    let associations = synthetic_associations(users);
    Cluster {
        name: "bench".into(),
        nodes: node_list,
        partitions: vec![Partition {
            name: "batch".into(),
            nodes: (0..nodes as u32).map(NodeId).collect(),
            priority_tier: 1,
            priority_job_factor: 1,
            max_time: TimeLimit::Infinite,
            default_time: Some(TimeLimit::Seconds(3600)),
            default: true,
            max_nodes: None,
            suspend_time: None,
            qos: None,
            power: Default::default(),
            access: Default::default(),
        }],
        qos: vec![Qos {
            name: "normal".into(),
            priority: 0,
            usage_factor: 1.0,
            no_decay: false,
            limits: QosLimits::default(),
            deny_on_limit: false,
            over_part_qos: false,
        }],
        associations,
        licenses: vec![],
        hres: vec![],
        scheduler: SchedulerParams::default(),
        priority: PriorityParams::default(),
        power: PowerSaveParams::default(),
        plugins: Default::default(),
        enforce: Default::default(),
    }
}

/// `nodes` nodes of 64 CPUs and 256 GB: every second one with the `ib` feature, every fourth
/// with four A100 GPUs.
fn synthetic_nodes(nodes: usize) -> Vec<Node> {
    (0..nodes)
        .map(|i| Node {
            name: format!("node{:05}", i + 1),
            sockets: 2,
            cores_per_socket: 32,
            threads_per_core: 1,
            cpus: 64,
            real_memory_mb: 256_000,
            features: if i % 2 == 0 {
                vec!["ib".into()]
            } else {
                vec![]
            },
            weight: 1,
            gres: if i % 4 == 3 {
                vec![sluice_cluster::Gres {
                    name: "gpu".into(),
                    gres_type: Some("a100".into()),
                    count: 4,
                    no_consume: false,
                    flags: vec![],
                    devices: vec![],
                }]
            } else {
                vec![]
            },
            state: ConfigState::Idle,
            suspend_time: None,
        })
        .collect()
}

/// A root account with one account per user and its user association under it.
fn synthetic_associations(users: usize) -> Vec<Association> {
    let mut associations = vec![Association {
        kind: AssocKind::Account("root".into()),
        parent: None,
        children: vec![],
        shares: Shares::Raw(1),
        raw_usage: 0.0,
        priority: 0,
        default_qos: None,
        limits: Default::default(),
    }];
    for u in 0..users {
        let account = AssocId(associations.len() as u32);
        associations[0].children.push(account);
        associations.push(Association {
            kind: AssocKind::Account(format!("acct{u}")),
            parent: Some(AssocId::ROOT),
            children: vec![AssocId(account.0 + 1)],
            shares: Shares::Raw(1 + (u as u32 % 4)),
            raw_usage: 0.0,
            priority: 0,
            default_qos: None,
            limits: Default::default(),
        });
        associations.push(Association {
            kind: AssocKind::User(format!("user{u}")),
            parent: Some(account),
            children: vec![],
            shares: Shares::Raw(1),
            raw_usage: 0.0,
            priority: 0,
            default_qos: None,
            limits: Default::default(),
        });
    }
    associations
}

/// Submits `config.jobs` jobs (1–8 nodes, 1–64 CPUs per node, 10 min–2 days) to a fresh engine on
/// the synthetic cluster, then times one full main-loop pass and one backfill pass.
pub fn run(policies: Policies, config: BenchConfig) -> BenchReport {
    let clock = ManualClock::new(1_700_000_000);
    let cluster = synthetic_cluster(config.nodes, config.users);
    let mut engine_config = EngineConfig::for_cluster(&cluster);
    engine_config.params.bf_max_job_test = config.bf_max_job_test;
    // Budgets are wall-clock in the daemon; here the whole pass is what is measured.
    engine_config.params.max_sched_time = u64::MAX / 2_000_000;
    engine_config.params.bf_max_time = Some(u64::MAX / 2_000_000);
    let mut engine = Engine::with_config(cluster, policies, Arc::new(clock.clone()), engine_config);
    let mut rng = Rng::new(config.seed);
    let t = Instant::now();
    for i in 0..config.jobs {
        let nodes = 1 + rng.below(8) as u32;
        let spec = JobSpec {
            name: format!("j{i}"),
            min_nodes: nodes,
            tasks: nodes * (1 + rng.below(64) as u32),
            time_limit: Some(600 + rng.below(2 * 86_400 - 600)),
            memory_per_node_mb: 1024 * (1 + rng.below(64)),
            nice: if rng.below(10) == 0 { 100 } else { 0 },
            ..JobSpec::new(format!("user{}", rng.below(config.users as u64)))
        };
        engine.submit(spec).expect("synthetic jobs are valid");
        if i % 1000 == 999 {
            clock.advance(1);
        }
    }
    let submit_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    engine.schedule();
    let main_pass_ms = t.elapsed().as_secs_f64() * 1e3;
    let main_stats = engine.last_main_stats().clone();
    let t = Instant::now();
    engine.backfill();
    let backfill_pass_ms = t.elapsed().as_secs_f64() * 1e3;
    BenchReport {
        config,
        submit_ms,
        main_pass_ms,
        main_stats,
        backfill_pass_ms,
        backfill_stats: engine.last_backfill_stats().clone(),
    }
}
