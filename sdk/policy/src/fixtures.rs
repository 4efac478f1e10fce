//! Deterministic test inputs shared by the SDK harness, the conformance suite and benchmarks.

use crate::{
    Association, Device, GresNodeConfig, HresLayer, HresMode, HresResource, JobRequest, JobTable,
    NodeBitmap, NodeTable, Partition, PickRequest, Power, PriorityContext, Qos,
};

/// A small xorshift generator, so fixtures need no dependency and are the same everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A context with two partitions, two QOS and an association tree of `accounts` accounts with
/// `users_per_account` users each, with varied shares and usage.
pub fn priority_context(
    now: i64,
    cluster_nodes: u32,
    accounts: u32,
    users_per_account: u32,
) -> PriorityContext {
    let mut associations = vec![Association {
        name: "root".into(),
        parent: None,
        is_user: false,
        raw_shares: 1,
        priority: 0,
        raw_usage: 0.0,
    }];
    let mut rng = Rng::new(7);
    for a in 0..accounts {
        let account = associations.len() as u32;
        associations.push(Association {
            name: format!("acct{a}"),
            parent: Some(0),
            is_user: false,
            raw_shares: 1 + (a % 4) * 10,
            priority: (a % 3) * 100,
            raw_usage: 0.0,
        });
        for u in 0..users_per_account {
            associations.push(Association {
                name: format!("user{a}_{u}"),
                parent: Some(account),
                is_user: true,
                raw_shares: 1 + u % 3,
                priority: (a % 3) * 100,
                raw_usage: rng.below(1_000_000) as f64,
            });
        }
    }
    // Usage of an account includes its users', and root's everything, as the host keeps it.
    for i in (1..associations.len()).rev() {
        if associations[i].is_user {
            let usage = associations[i].raw_usage;
            let parent = associations[i].parent.unwrap() as usize;
            associations[parent].raw_usage += usage;
            associations[0].raw_usage += usage;
        }
    }
    PriorityContext {
        now,
        cluster_version: 0,
        cluster_nodes,
        cluster_cpus: cluster_nodes * 64,
        partitions: vec![
            Partition {
                name: "batch".into(),
                priority_job_factor: 1,
                priority_tier: 1,
            },
            Partition {
                name: "gpu".into(),
                priority_job_factor: 2,
                priority_tier: 1,
            },
        ],
        qos: vec![
            Qos {
                name: "normal".into(),
                priority: 0,
                usage_factor: 1.0,
            },
            Qos {
                name: "high".into(),
                priority: 100,
                usage_factor: 2.0,
            },
        ],
        associations,
        skip_factors: false,
    }
}

/// `n` pending jobs pointing into `ctx`, with varied sizes, ages and nice values.
pub fn job_table(ctx: &PriorityContext, n: usize, seed: u64) -> JobTable {
    let mut rng = Rng::new(seed);
    let users: Vec<u32> = ctx
        .associations
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_user)
        .map(|(i, _)| i as u32)
        .collect();
    let mut t = JobTable::default();
    for i in 0..n {
        let nodes = 1 + rng.below(8) as u32;
        let submit = ctx.now - rng.below(14 * 86_400) as i64;
        t.job_id.push(i as u32 + 1);
        t.submit_time.push(submit);
        t.eligible_time.push(submit);
        t.association
            .push(users[rng.below(users.len() as u64) as usize]);
        t.partition
            .push(rng.below(ctx.partitions.len() as u64) as u32);
        t.qos.push(rng.below(ctx.qos.len() as u64) as u32);
        t.nodes.push(nodes);
        t.cpus.push(nodes * (1 + rng.below(64) as u32));
        t.memory_mb.push(nodes as u64 * 1024 * (1 + rng.below(64)));
        t.gpus.push(rng.below(3) as u32);
        t.time_limit.push(60 * (1 + rng.below(48 * 60) as u32));
        t.nice.push(if rng.below(10) == 0 { 100 } else { 0 });
        t.site_factor.push(0);
    }
    t
}

/// A job table of `rows` rows in which every cell differs from every other: row `i` of the
/// `k`-th column of [`JobTable`] (in field order, from 1) holds `k × 100000 + i`, negated for
/// `nice` and `site_factor`. A column read in another's place cannot pass unnoticed.
pub fn distinct_job_table(rows: usize) -> JobTable {
    let col = |k: u32| (0..rows as u32).map(move |i| k * 100_000 + i);
    JobTable {
        job_id: col(1).collect(),
        submit_time: col(2).map(i64::from).collect(),
        eligible_time: col(3).map(i64::from).collect(),
        association: col(4).collect(),
        partition: col(5).collect(),
        qos: col(6).collect(),
        nodes: col(7).collect(),
        cpus: col(8).collect(),
        memory_mb: col(9).map(u64::from).collect(),
        gpus: col(10).collect(),
        time_limit: col(11).collect(),
        nice: col(12).map(|v| -(v as i32)).collect(),
        site_factor: col(13).map(|v| -i64::from(v)).collect(),
    }
}

/// `n` up nodes of 64 CPUs and 256 GB; every fourth has 4 GPUs; weights vary in blocks.
pub fn node_table(n: usize) -> NodeTable {
    let mut t = NodeTable {
        gres_kinds: vec!["gpu".into()],
        ..Default::default()
    };
    for i in 0..n {
        t.cpus.push(64);
        t.free_cpus.push(64);
        t.memory_mb.push(256_000);
        t.free_memory_mb.push(256_000);
        t.weight.push(1 + (i / 64 % 3) as u32);
        t.power.push(Power::Up);
        let gpus = if i % 4 == 3 { 4 } else { 0 };
        t.gres_total.push(gpus);
        t.gres_free.push(gpus);
    }
    t
}

/// `n` job requests over a table of `nodes` nodes, every node a candidate.
pub fn job_requests(nodes: usize, n: usize, seed: u64) -> Vec<JobRequest> {
    let mut rng = Rng::new(seed);
    let all = NodeBitmap::full(nodes).words;
    (0..n)
        .map(|i| {
            let want = 1 + rng.below(4) as u32;
            JobRequest {
                job_id: i as u32 + 1,
                min_nodes: want,
                max_nodes: want,
                tasks: want * (1 + rng.below(32) as u32),
                cpus_per_task: 1 + rng.below(2) as u32,
                tasks_per_node: 0,
                memory_per_node_mb: 1024 * (1 + rng.below(16)),
                gres_per_node: if rng.below(5) == 0 {
                    vec![(0, 1)]
                } else {
                    vec![]
                },
                exclusive: rng.below(10) == 0,
                share_rows: 0,
                candidates: all.clone(),
            }
        })
        .collect()
}

/// Job `id` of `tasks` one-CPU tasks on `min..=max` nodes, 100 MB per node, every one of `nodes`
/// nodes a candidate: the shape hand-made selection tests place.
pub fn tasks_job(id: u32, tasks: u32, min: u32, max: u32, nodes: usize) -> JobRequest {
    JobRequest {
        job_id: id,
        min_nodes: min,
        max_nodes: max,
        tasks,
        cpus_per_task: 1,
        tasks_per_node: 0,
        memory_per_node_mb: 100,
        gres_per_node: vec![],
        exclusive: false,
        share_rows: 0,
        candidates: NodeBitmap::full(nodes).words,
    }
}

/// `n` up nodes of `cpus` CPUs and 1000 MB with `free_cpus[i]` of node `i`'s CPUs free, no GRES:
/// the small tables hand-made selection cases place on.
pub fn cpu_nodes(cpus: u32, free_cpus: &[u32]) -> NodeTable {
    let n = free_cpus.len();
    NodeTable {
        cpus: vec![cpus; n],
        free_cpus: free_cpus.iter().map(|&f| f.min(cpus)).collect(),
        memory_mb: vec![1000; n],
        free_memory_mb: vec![1000; n],
        weight: vec![1; n],
        power: vec![Power::Up; n],
        ..Default::default()
    }
}

/// GPU configuration of `n` nodes with 4 devices each, two per socket of 32 cores.
pub fn gpu_nodes(n: usize) -> Vec<GresNodeConfig> {
    (0..n)
        .map(|i| GresNodeConfig {
            node: format!("node{:02}", i + 1),
            count: 4,
            cores: 64,
            devices: (0..4)
                .map(|d| Device {
                    index: d,
                    type_name: "a100".into(),
                    file: format!("/dev/nvidia{d}"),
                    cores: if d < 2 {
                        (0..32).collect()
                    } else {
                        (32..64).collect()
                    },
                    links: vec![],
                })
                .collect(),
        })
        .collect()
}

/// A pick request on one GPU node with the given free devices and allocated cores.
pub fn gpu_pick(node_position: u32, count: u32, free: Vec<u32>, cores: Vec<u32>) -> PickRequest {
    PickRequest {
        node_position,
        count,
        type_name: String::new(),
        free,
        cores,
        devices: gpu_nodes(1).remove(0).devices,
    }
}

/// The `natural` (MODE_1) and `flat` (MODE_2) resources of the HRES document on 32 nodes.
pub fn hres_document() -> (Vec<HresResource>, Vec<HresLayer>) {
    let range = |a: u32, b: u32| -> Vec<u64> { (a..=b).collect::<NodeBitmap>().words };
    let resources = vec![
        HresResource {
            name: "natural".into(),
            mode: HresMode::Mode1,
            variables: vec![],
        },
        HresResource {
            name: "flat".into(),
            mode: HresMode::Mode2,
            variables: vec![],
        },
    ];
    let layer = |resource, count, nodes| HresLayer {
        resource,
        count,
        base: 0,
        used: 0,
        nodes,
        parent: None,
    };
    let layers = vec![
        layer(0, 50, range(0, 31)),
        layer(0, 100, range(0, 15)),
        layer(0, 100, range(16, 31)),
        layer(1, 24, range(0, 31)),
        layer(1, 16, range(0, 15)),
        layer(1, 16, range(16, 31)),
        layer(1, 12, range(0, 7)),
        layer(1, 12, range(8, 15)),
        layer(1, 12, range(16, 23)),
        layer(1, 12, range(24, 31)),
    ];
    (resources, layers)
}
