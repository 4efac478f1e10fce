//! Test helpers: small clusters, a first-fit selection policy, controllable priority policies.
#![allow(dead_code)]

use std::sync::Arc;

use sluice_cluster::{
    AssocId, AssocKind, Association, Cluster, HresCount, HresLayer as ConfigLayer, HresMode,
    HresResource as ConfigResource, License, NodeId, Partition, Qos, QosLimits, Shares, TimeLimit,
};
use sluice_engine::bench::synthetic_cluster;
use sluice_engine::request::{Dependency, DependencyKind};
use sluice_engine::{Engine, EngineConfig, ManualClock, Policies, SchedulerKind};
use sluice_policy::{
    Charge, Demand, HresLayer, HresMode as PolicyMode, HresPolicy, HresResource, JobRequest,
    JobTable, NodeBitmap, NodeTable, PlaceMode, Placement, Priorities, PriorityContext,
    PriorityPolicy, SelectionPolicy,
};

/// Start of every test's clock.
pub const T0: i64 = 1_700_000_040;

/// First fit over candidates in index order, one node's share per node (at least its
/// `--ntasks-per-node` tasks' CPUs); whole nodes when exclusive.
#[derive(Default)]
pub struct FirstFit {
    table: NodeTable,
}

impl FirstFit {
    fn fit(&self, req: &JobRequest) -> Option<Placement> {
        let t = &self.table;
        let kinds = t.gres_kinds.len();
        let cand = NodeBitmap::from_words(req.candidates.clone());
        let want = req.fewest_nodes() as usize;
        let per_node = req
            .total_cpus()
            .div_ceil(want as u64)
            .max(req.cpus_per_node()) as u32;
        let mut p = Placement::default();
        for n in cand.iter() {
            let i = n as usize;
            if i >= t.len() {
                break;
            }
            let gres_ok = req
                .gres_per_node
                .iter()
                .all(|&(k, c)| t.gres_free[i * kinds + k as usize] >= c);
            let (cpus, mem) = if req.exclusive {
                if t.free_cpus[i] != t.cpus[i] || t.free_memory_mb[i] != t.memory_mb[i] {
                    continue;
                }
                (t.cpus[i], t.memory_mb[i])
            } else {
                (per_node, req.memory_per_node_mb)
            };
            if t.free_cpus[i] < cpus || t.free_memory_mb[i] < mem || !gres_ok || cpus == 0 {
                continue;
            }
            p.nodes.push(n);
            p.cpus.push(cpus);
            p.memory_mb.push(mem);
            for k in 0..kinds {
                let c = req
                    .gres_per_node
                    .iter()
                    .find(|(kk, _)| *kk as usize == k)
                    .map_or(0, |(_, c)| *c);
                p.gres.push(c);
            }
            if p.nodes.len() == want {
                return Some(p);
            }
        }
        None
    }
}

impl SelectionPolicy for FirstFit {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        self.table = nodes.clone();
    }

    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        let p = self.fit(req)?;
        if mode == PlaceMode::Allocate {
            self.table.commit(&p);
        }
        Some(p)
    }

    fn release(&mut self, _job_id: u32, placement: &Placement) {
        self.table.release(placement);
    }
}

/// Priority = the job's site factor (tests set it to pin Slurm's test priorities), plus a factor column.
pub struct SiteFactorPriority;

impl PriorityPolicy for SiteFactorPriority {
    fn compute(&mut self, _ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        let priority: Vec<u32> = jobs
            .site_factor
            .iter()
            .map(|s| (*s).clamp(0, u32::MAX as i64) as u32)
            .collect();
        let values = priority.iter().map(|p| *p as f64).collect();
        Priorities {
            priority,
            factors: vec![sluice_policy::Factor {
                name: "SITE".into(),
                values,
            }],
        }
    }
}

/// Site-factor priorities that count the calls made to them.
pub struct CountingPriority(pub Arc<std::sync::atomic::AtomicUsize>);

impl PriorityPolicy for CountingPriority {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        SiteFactorPriority.compute(ctx, jobs)
    }
}

/// HRES MODE_1/MODE_2 logic as slurm-semantics §7.3 describes it, for tests only.
#[derive(Default)]
pub struct TestHres {
    resources: Vec<HresResource>,
    layers: Vec<HresLayer>,
}

impl TestHres {
    fn sufficient(&self, l: &HresLayer, count: i64) -> bool {
        l.is_infinite() || l.available() >= count
    }
}

impl HresPolicy for TestHres {
    fn begin_pass(&mut self, resources: &[HresResource], layers: &[HresLayer]) {
        self.resources = resources.to_vec();
        self.layers = layers.to_vec();
    }

    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Vec<u64> {
        let mut out = NodeBitmap::from_words(candidates.to_vec());
        for d in demands {
            let mut good = NodeBitmap::default();
            let mut bad = NodeBitmap::default();
            for l in self.layers.iter().filter(|l| l.resource == d.resource) {
                let nodes = NodeBitmap::from_words(l.nodes.clone());
                if self.sufficient(l, d.count) && l.count != 0 {
                    good.union_with(&nodes);
                } else {
                    bad.union_with(&nodes);
                }
            }
            if self.resources[d.resource as usize].mode == PolicyMode::Mode2 {
                for (i, w) in good.words.iter_mut().enumerate() {
                    *w &= !bad.words.get(i).copied().unwrap_or(0);
                }
            }
            out.intersect_with(&good);
        }
        out.words
    }

    fn charge(&mut self, demands: &[Demand], nodes: &[u32]) -> Result<Vec<Charge>, String> {
        let alloc: NodeBitmap = nodes.iter().copied().collect();
        let mut out = Vec::new();
        for d in demands {
            let overlapping: Vec<usize> = (0..self.layers.len())
                .filter(|&i| {
                    self.layers[i].resource == d.resource
                        && NodeBitmap::from_words(self.layers[i].nodes.clone()).intersects(&alloc)
                })
                .collect();
            match self.resources[d.resource as usize].mode {
                PolicyMode::Mode1 => {
                    let l = overlapping
                        .into_iter()
                        .find(|&i| self.sufficient(&self.layers[i], d.count))
                        .ok_or("no sufficient layer")?;
                    out.push(Charge {
                        layer: l as u32,
                        amount: d.count,
                    });
                }
                _ => {
                    for i in overlapping {
                        if !self.sufficient(&self.layers[i], d.count) {
                            return Err(format!("layer {i} insufficient"));
                        }
                        out.push(Charge {
                            layer: i as u32,
                            amount: d.count,
                        });
                    }
                }
            }
        }
        Ok(out)
    }
}

/// `nodes` nodes named `node[01-NN]` with `cpus` CPUs and 64 GB, one partition `batch`,
/// users alice, bob (account `physics`) and carol (account `chem`).
pub fn cluster(nodes: usize, cpus: u32) -> Cluster {
    let mut c = synthetic_cluster(nodes, 0);
    for (i, n) in c.nodes.iter_mut().enumerate() {
        n.name = format!("node{:02}", i + 1);
        n.cpus = cpus;
        n.real_memory_mb = 64_000;
        n.gres.clear();
        n.features = if i < nodes / 2 {
            vec!["ib".into()]
        } else {
            vec!["eth".into()]
        };
    }
    c.partitions[0].default_time = Some(TimeLimit::Seconds(3600));
    let add = |c: &mut Cluster, kind: AssocKind, parent: AssocId| {
        let id = AssocId(c.associations.len() as u32);
        c.associations.push(Association {
            kind,
            parent: Some(parent),
            children: vec![],
            shares: Shares::Raw(1),
            raw_usage: 0.0,
            priority: 0,
            default_qos: None,
            limits: Default::default(),
        });
        c.associations[parent.index()].children.push(id);
        id
    };
    let physics = add(&mut c, AssocKind::Account("physics".into()), AssocId::ROOT);
    add(&mut c, AssocKind::User("alice".into()), physics);
    add(&mut c, AssocKind::User("bob".into()), physics);
    let chem = add(&mut c, AssocKind::Account("chem".into()), AssocId::ROOT);
    add(&mut c, AssocKind::User("carol".into()), chem);
    c.qos.push(Qos {
        name: "high".into(),
        priority: 100,
        usage_factor: 2.0,
        no_decay: false,
        limits: QosLimits::default(),
        deny_on_limit: false,
        over_part_qos: false,
    });
    c
}

/// Adds cluster licenses.
pub fn with_licenses(mut c: Cluster, licenses: &[(&str, u32)]) -> Cluster {
    c.licenses = licenses
        .iter()
        .map(|(n, count)| License {
            name: (*n).into(),
            count: *count,
        })
        .collect();
    c
}

/// Adds the `natural` (MODE_1) and `flat` (MODE_2) resources of the HRES document (32 nodes).
pub fn with_hres_document(mut c: Cluster) -> Cluster {
    let layer = |from: u32, to: u32, count: u32| ConfigLayer {
        node_exprs: vec![],
        nodes: (from..=to).map(NodeId).collect(),
        count: HresCount::Count(count),
        base: vec![],
        base_usage: 0,
        parent: None,
        depth: 0,
    };
    c.hres = vec![
        ConfigResource {
            name: "natural".into(),
            mode: HresMode::Mode1,
            topology: None,
            variables: vec![],
            layers: vec![layer(0, 31, 50), layer(0, 15, 100), layer(16, 31, 100)],
        },
        ConfigResource {
            name: "flat".into(),
            mode: HresMode::Mode2,
            topology: None,
            variables: vec![],
            layers: vec![
                layer(0, 31, 24),
                layer(0, 15, 16),
                layer(16, 31, 16),
                layer(0, 7, 12),
                layer(8, 15, 12),
                layer(16, 23, 12),
                layer(24, 31, 12),
            ],
        },
    ];
    c
}

/// Adds a second partition `debug` over the first `nodes` nodes with the given PriorityTier.
pub fn with_debug_partition(mut c: Cluster, nodes: usize, tier: u16) -> Cluster {
    let mut p: Partition = c.partitions[0].clone();
    p.name = "debug".into();
    p.default = false;
    p.priority_tier = tier;
    p.nodes.truncate(nodes);
    c.partitions.push(p);
    c
}

/// An engine on `cluster` with first-fit selection and the given priority policy and scheduler.
pub fn engine_with(
    cluster: Cluster,
    priority: Box<dyn PriorityPolicy + Send>,
    scheduler: SchedulerKind,
) -> (Engine, ManualClock) {
    engine_configured(cluster, priority, |c| c.scheduler = scheduler)
}

/// An engine on `cluster` with first-fit selection, the given priority policy and the engine
/// settings `configure` leaves.
pub fn engine_configured(
    cluster: Cluster,
    priority: Box<dyn PriorityPolicy + Send>,
    configure: impl FnOnce(&mut EngineConfig),
) -> (Engine, ManualClock) {
    let clock = ManualClock::new(T0);
    let mut config = EngineConfig::for_cluster(&cluster);
    configure(&mut config);
    let has_hres = !cluster.hres.is_empty();
    let policies = Policies {
        priority,
        selection: Box::new(FirstFit::default()),
        hres: if has_hres {
            Some(Box::new(TestHres::default()))
        } else {
            None
        },
        gres: Vec::new(),
    };
    (
        Engine::with_config(cluster, policies, Arc::new(clock.clone()), config),
        clock,
    )
}

/// An engine with site-factor priorities and Slurm's backfill.
pub fn engine(cluster: Cluster) -> (Engine, ManualClock) {
    engine_with(
        cluster,
        Box::new(SiteFactorPriority),
        SchedulerKind::Backfill,
    )
}

/// A dependency on job `job`: `afterok` when `ok`, else `afterany`.
pub fn after(job: u32, ok: bool) -> Dependency {
    Dependency {
        kind: if ok {
            DependencyKind::AfterOk
        } else {
            DependencyKind::AfterAny
        },
        job,
        task: None,
    }
}
