//! Owns no state: timing the power pass on a large idle cluster when nothing is due
//! (`cargo bench -p sluice-engine --bench power`), reported, never asserted.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use sluice_cluster::TimeLimit;

use crate::bench::synthetic_cluster;
use crate::clock::ManualClock;
use crate::config::Policies;
use crate::engine::Engine;

/// What [`run`] measured, in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct PowerBenchReport {
    /// Nodes in the cluster.
    pub nodes: usize,
    /// Passes timed.
    pub rounds: usize,
    /// The fastest pass.
    pub pass_min_ms: f64,
    /// The median pass.
    pub pass_median_ms: f64,
    /// The median `next_wakeup` (the replay asks it after every event).
    pub wakeup_median_ms: f64,
    /// Program calls the passes made: none, since nothing was due.
    pub calls: usize,
}

/// Times `rounds` power passes over `nodes` idle nodes with automatic power saving on
/// (SuspendTime one hour, both programs set), 11 s apart, so that every pass finds nothing due.
pub fn run(policies: Policies, nodes: usize, rounds: usize) -> PowerBenchReport {
    let mut cluster = synthetic_cluster(nodes, 1);
    cluster.power.suspend_program = Some("/bin/true".into());
    cluster.power.resume_program = Some("/bin/true".into());
    cluster.power.suspend_time = TimeLimit::Seconds(3600);
    let clock = ManualClock::new(1_700_000_000);
    let mut engine = Engine::new(cluster, policies, Arc::new(clock.clone()));
    let mut calls = engine.tick().len();
    let (mut passes, mut wakeups) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        clock.advance(11);
        let now = engine.now();
        let t = Instant::now();
        engine.power_pass(now);
        passes.push(t.elapsed().as_secs_f64() * 1e3);
        calls += engine.outbox.len();
        engine.outbox.clear();
        let t = Instant::now();
        std::hint::black_box(engine.next_wakeup());
        wakeups.push(t.elapsed().as_secs_f64() * 1e3);
    }
    passes.sort_by(f64::total_cmp);
    wakeups.sort_by(f64::total_cmp);
    PowerBenchReport {
        nodes,
        rounds: passes.len(),
        pass_min_ms: passes[0],
        pass_median_ms: passes[passes.len() / 2],
        wakeup_median_ms: wakeups[wakeups.len() / 2],
        calls,
    }
}
