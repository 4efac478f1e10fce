//! Times one priority call on a replay-sized context: the bundle's multifactor as a component
//! against the same policy linked in, with usage unchanged between calls and with usage decayed
//! before every call.
//!
//! The context is the one the KTH-SP2 replay builds (root and 214 users, one partition, one QOS)
//! with the flat machine's weights; `cargo run --release -p sluice-runtime --example
//! priority_call` prints microseconds per call.

use std::time::Instant;

use sluice_policy::{
    Association, JobTable, Partition, PluginKind, PriorityContext, Qos, SettingValue, Settings,
    fixtures,
};
use sluice_runtime::backend::PriorityBackend;
use sluice_runtime::compile::WasmEngine;
use sluice_runtime::{Limits, Loaded, Loader, PluginSpec};

const USERS: u32 = 214;
const JOBS: usize = 8;
const CALLS: u32 = 20_000;

fn context() -> PriorityContext {
    let mut associations = vec![Association {
        name: "root".into(),
        parent: None,
        is_user: false,
        raw_shares: 1,
        priority: 0,
        raw_usage: 0.0,
    }];
    for u in 0..USERS {
        associations.push(Association {
            name: format!("user{u}"),
            parent: Some(0),
            is_user: true,
            raw_shares: 1,
            priority: 0,
            raw_usage: f64::from(u * 7919 % 1000) * 3600.0,
        });
    }
    associations[0].raw_usage = associations.iter().map(|a| a.raw_usage).sum();
    PriorityContext {
        now: 1_700_000_000,
        cluster_version: 0,
        cluster_nodes: 100,
        cluster_cpus: 100,
        partitions: vec![Partition {
            name: "batch".into(),
            priority_job_factor: 1,
            priority_tier: 1,
        }],
        qos: vec![Qos {
            name: "normal".into(),
            priority: 0,
            usage_factor: 1.0,
        }],
        associations,
        skip_factors: false,
    }
}

fn backend(loader: &Loader, plugin: &str, settings: &Settings) -> Box<dyn PriorityBackend> {
    let spec = PluginSpec {
        kind: PluginKind::Priority,
        plugin: plugin.into(),
        settings: settings.clone(),
        limits: Limits::default(),
    };
    match loader.load(&spec).expect("the bundle's multifactor loads") {
        Loaded::Priority(g) => g.backend,
        _ => unreachable!("loaded as a priority plugin"),
    }
}

/// Mean microseconds per call over `CALLS` calls, after one warm-up call.
fn time(
    b: &mut dyn PriorityBackend,
    ctx: &mut PriorityContext,
    jobs: &JobTable,
    decay: bool,
) -> f64 {
    b.compute(ctx, jobs).expect("warm-up call answers");
    let start = Instant::now();
    for _ in 0..CALLS {
        if decay {
            ctx.now += 300;
            for a in &mut ctx.associations {
                a.raw_usage *= 0.999;
            }
        }
        let out = b.compute(ctx, jobs).expect("call answers");
        std::hint::black_box(out);
    }
    start.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS)
}

fn main() {
    let settings = Settings::default()
        .with("weight.age", SettingValue::Integer(1000))
        .with("weight.fairshare", SettingValue::Integer(10_000))
        .with("max_age", SettingValue::Integer(604_800));
    let loader = Loader::new(WasmEngine::new(None));
    let base = context();
    let jobs = fixtures::job_table(&base, JOBS, 7);
    println!(
        "{} associations, {JOBS} jobs, mean of {CALLS} calls",
        base.associations.len()
    );
    for (name, plugin) in [("wasm", "multifactor"), ("native", "builtin:multifactor")] {
        let mut b = backend(&loader, plugin, &settings);
        let same = time(&mut *b, &mut base.clone(), &jobs, false);
        let decayed = time(&mut *b, &mut base.clone(), &jobs, true);
        println!(
            "  {name:<7} usage unchanged {same:7.2} µs/call   usage decayed {decayed:7.2} µs/call"
        );
    }
}
