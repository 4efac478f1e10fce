//! Fixed pieces of work whose instruction counts `.ci/instructions` holds to a budget: the
//! engine replaying a prefix of KTH-SP2 with the default policies linked in, one multifactor
//! priority pass and one cons_tres selection pass over fixture tables.
//! `fixed_work replay|priority|selection`; only the piece's `measured_<piece>` function is
//! meant to be counted (callgrind's `--toggle-collect`), so reading the trace and building the
//! fixtures are left out.

use std::hint::black_box;
use std::path::Path;

use sluice_engine::Policies;
use sluice_plugin_priority_multifactor::Multifactor;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_policy::{
    FromSettings, JobRequest, JobTable, NodeTable, PlaceMode, PriorityContext, PriorityPolicy,
    SelectionPolicy, SettingValue, Settings, fixtures,
};
use sluice_sim::scheduler::{EngineOptions, EngineScheduler, FlatMachine};
use sluice_sim::{MemoryWorkload, ReplayConfig, RuntimeMode, Workload, WorkloadJob, replay};

/// Jobs of KTH-SP2 replayed: enough for queues, backfill and fair share to be exercised, few
/// enough for a debug build under valgrind to take seconds.
const REPLAY_JOBS: usize = 600;
/// Pending jobs in the priority pass.
const PRIORITY_JOBS: usize = 20_000;
/// Nodes and job requests in the selection pass.
const SELECTION_NODES: usize = 1_000;
const SELECTION_REQUESTS: usize = 10_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let what = std::env::args().nth(1).unwrap_or_default();
    match what.as_str() {
        "replay" => replay_prefix(),
        "priority" => {
            let ctx = fixtures::priority_context(1_700_000_000, 1_000, 20, 10);
            let jobs = fixtures::job_table(&ctx, PRIORITY_JOBS, 42);
            let mut policy = Multifactor::from_settings(&priority_settings());
            let rows = measured_priority(&mut policy, &ctx, &jobs);
            println!("priority: {rows} rows");
            Ok(())
        }
        "selection" => {
            let table = fixtures::node_table(SELECTION_NODES);
            let requests = fixtures::job_requests(SELECTION_NODES, SELECTION_REQUESTS, 43);
            let mut policy = ConsTres::from_settings(&Settings::default());
            let placed = measured_selection(&mut policy, &table, &requests);
            println!("selection: {placed} of {SELECTION_REQUESTS} placed");
            Ok(())
        }
        _ => Err("usage: fixed_work replay|priority|selection".into()),
    }
}

/// The weights `sluice sim` hands the bundle for a flat machine (FlatMachine's [priority]).
fn priority_settings() -> Settings {
    Settings::default()
        .with("weight.age", SettingValue::Integer(1000))
        .with("weight.fairshare", SettingValue::Integer(10_000))
        .with("max_age", SettingValue::Integer(7 * 86_400))
}

/// Reads the first [`REPLAY_JOBS`] jobs of the trace into memory, then replays them.
fn replay_prefix() -> Result<(), Box<dyn std::error::Error>> {
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/KTH-SP2-1996-2.1-cln.swf.gz");
    let jobs: Vec<WorkloadJob> = Workload::open(&trace)?
        .take(REPLAY_JOBS)
        .collect::<Result<_, _>>()?;
    let procs = 100;
    let cluster = FlatMachine {
        procs,
        cpus_per_node: 1,
    }
    .cluster()?;
    let policies = Policies {
        priority: Box::new(Multifactor::from_settings(&priority_settings())),
        selection: Box::new(ConsTres::from_settings(&Settings::default())),
        hres: None,
        gres: Vec::new(),
    };
    let options = EngineOptions::for_cluster("slurm (linked)", &cluster);
    let scheduler = EngineScheduler::new(cluster, policies, options);
    let (replayed, wait) = measured_replay(scheduler, &jobs, procs)?;
    println!("replay: {replayed} jobs, average wait {wait:.3} s");
    Ok(())
}

/// The counted replay: every decision of the engine over the jobs, on the virtual clock.
#[inline(never)]
fn measured_replay(
    mut scheduler: EngineScheduler,
    jobs: &[WorkloadJob],
    procs: u32,
) -> Result<(u64, f64), Box<dyn std::error::Error>> {
    let config = ReplayConfig {
        procs,
        runtime: RuntimeMode::KillAtLimit,
        keep_records: false,
    };
    let mut source = MemoryWorkload::new(jobs, 0, None);
    let out = replay(&mut source, &mut scheduler, &config, ())?;
    Ok((out.metrics.jobs, out.metrics.avg_wait_s))
}

/// The counted priority pass.
#[inline(never)]
fn measured_priority(policy: &mut Multifactor, ctx: &PriorityContext, jobs: &JobTable) -> usize {
    black_box(policy.compute(ctx, jobs)).priority.len()
}

/// The counted selection pass: the table handed over, then every request placed in turn.
#[inline(never)]
fn measured_selection(policy: &mut ConsTres, table: &NodeTable, requests: &[JobRequest]) -> usize {
    policy.begin_pass(table);
    requests
        .iter()
        .filter(|r| policy.place(r, PlaceMode::Allocate).is_some())
        .count()
}
