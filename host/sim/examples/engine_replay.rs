//! The engine-backed replay with the default priority and selection policies linked in, no
//! wasmtime: a quick loop for profiling the engine itself.
//! `cargo run --release -p sluice-sim --example engine_replay -- TRACE [PROCS [CSV]]`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use sluice_engine::Policies;
use sluice_plugin_priority_multifactor::Multifactor;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_policy::{
    FromSettings, JobRequest, JobTable, NodeTable, PlaceMode, Placement, Priorities,
    PriorityContext, PriorityPolicy, SelectionPolicy, SettingValue, Settings,
};
use sluice_sim::csv::CsvWriter;
use sluice_sim::scheduler::{EngineOptions, EngineScheduler, FlatMachine};
use sluice_sim::{ReplayConfig, RuntimeMode, Workload, replay};

/// Counts the calls that cross the boundary in a real bundle: priority calculations, selection
/// passes and placements.
#[derive(Default)]
struct Calls {
    priority: AtomicU64,
    priority_rows: AtomicU64,
    begin_pass: AtomicU64,
    place: AtomicU64,
}

struct CountedPriority<P>(P, Arc<Calls>);

impl<P: PriorityPolicy> PriorityPolicy for CountedPriority<P> {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        self.1.priority.fetch_add(1, Relaxed);
        self.1
            .priority_rows
            .fetch_add(jobs.job_id.len() as u64, Relaxed);
        self.0.compute(ctx, jobs)
    }
}

struct CountedSelection<S>(S, Arc<Calls>);

impl<S: SelectionPolicy> SelectionPolicy for CountedSelection<S> {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        self.1.begin_pass.fetch_add(1, Relaxed);
        self.0.begin_pass(nodes);
    }

    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        self.1.place.fetch_add(1, Relaxed);
        self.0.place(req, mode)
    }

    fn release(&mut self, job_id: u32, placement: &Placement) {
        self.0.release(job_id, placement);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let trace = args
        .next()
        .ok_or("usage: engine_replay TRACE [PROCS [CSV]]")?;
    let procs: u32 = args.next().map(|p| p.parse()).transpose()?.unwrap_or(100);
    let csv = args.next();
    let cluster = FlatMachine {
        procs,
        cpus_per_node: 1,
    }
    .cluster()?;
    // The weights `sluice sim` hands the bundle for a flat machine (FlatMachine's [priority]).
    let settings = Settings::default()
        .with("weight.age", SettingValue::Integer(1000))
        .with("weight.fairshare", SettingValue::Integer(10_000))
        .with("max_age", SettingValue::Integer(7 * 86_400));
    let calls = Arc::new(Calls::default());
    let policies = Policies {
        priority: Box::new(CountedPriority(
            Multifactor::from_settings(&settings),
            calls.clone(),
        )),
        selection: Box::new(CountedSelection(
            ConsTres::from_settings(&Settings::default()),
            calls.clone(),
        )),
        hres: None,
        gres: Vec::new(),
    };
    let options = EngineOptions::for_cluster("slurm (linked)", &cluster);
    let mut scheduler = EngineScheduler::new(cluster, policies, options);
    let mut workload = Workload::open(std::path::Path::new(&trace))?;
    let config = ReplayConfig {
        procs,
        runtime: RuntimeMode::KillAtLimit,
        keep_records: false,
    };
    let out = match &csv {
        Some(path) => {
            let file = std::io::BufWriter::new(std::fs::File::create(path)?);
            replay(
                &mut workload,
                &mut scheduler,
                &config,
                CsvWriter::new(file)?,
            )?
        }
        None => replay(&mut workload, &mut scheduler, &config, ())?,
    };
    let m = &out.metrics;
    println!(
        "jobs {} avg_wait_s {:.3} avg_bsld {:.3} wall_s {:.3} jobs_per_s {:.0}",
        m.jobs,
        m.avg_wait_s,
        m.avg_bsld,
        m.wall_s,
        m.jobs as f64 / m.wall_s
    );
    println!(
        "priority calls {} (rows {}) selection passes {} placements {}",
        calls.priority.load(Relaxed),
        calls.priority_rows.load(Relaxed),
        calls.begin_pass.load(Relaxed),
        calls.place.load(Relaxed)
    );
    Ok(())
}
