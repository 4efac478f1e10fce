//! `sluice demo`: the engine with the default plugin bundle (as WebAssembly components) on the
//! embedded 32-node demo cluster, replaying a generated day of work on a virtual clock, with a
//! hot swap of the priority policy half-way through.

mod words;
mod workload;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use sluice_cluster::Cluster;
use sluice_cluster::NodeId;
use sluice_engine::{Clock, Engine, Event, JobId, JobState, ManualClock};
use sluice_policy::PluginKind;
use sluice_runtime::shared::engine_policies;
use sluice_runtime::{PolicySet, specs};

/// Arguments of `sluice demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Jobs to submit.
    #[arg(long, default_value_t = 150)]
    jobs: usize,
    /// Seed of the generated workload.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print every start and end, not only a sample.
    #[arg(long)]
    verbose: bool,
}

const START: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z

/// Runs the demo.
pub fn run(args: Args) -> anyhow::Result<()> {
    let cluster = Cluster::demo();
    let loader = super::plugin::loader();
    let specs = specs::from_cluster(&cluster);
    println!(
        "sluice demo: cluster {}, {} nodes, {} partitions; {} generated jobs on a virtual clock \
         ([+H:MM:SS] is the virtual time since the start)",
        cluster.name,
        cluster.nodes.len(),
        cluster.partitions.len(),
        args.jobs
    );
    for s in &specs {
        println!(
            "  loading {:<9} plugin {:<12} (WebAssembly component, fuel {} per call, {} MiB memory)",
            s.kind.name(),
            s.plugin,
            s.limits.fuel_per_call,
            s.limits.memory_bytes >> 20
        );
    }
    let set =
        PolicySet::load_for_cluster(&loader, &cluster).context("loading the default bundle")?;
    let set = Arc::new(Mutex::new(set));
    let clock = ManualClock::new(START);
    let policies = engine_policies(&set);
    let mut engine = Engine::new(cluster, policies, Arc::new(clock.clone()));

    let workload = workload::generate(args.jobs, args.seed, START);
    let horizon = workload.last().map_or(START, |j| j.submit);
    let swap_at = START + (horizon - START) / 2;
    let mut swapped = false;
    let mut rolled_back = false;
    let mut pending_submits = workload.into_iter().peekable();
    let mut finishes: BinaryHeap<Reverse<(i64, JobId)>> = BinaryHeap::new();
    let mut runtime_of: BTreeMap<JobId, i64> = BTreeMap::new();
    let mut stats = Stats::default();
    let mut printed = 0usize;

    loop {
        let now = clock.now();
        while let Some(job) = pending_submits.next_if(|j| j.submit <= now) {
            match engine.submit(job.spec.clone()) {
                Ok(id) => {
                    runtime_of.insert(id, job.run_seconds);
                    stats.submitted += 1;
                }
                Err(e) => println!("[{}] submit refused: {e}", stamp(now)),
            }
        }
        while let Some(Reverse((t, id))) = finishes.peek().copied() {
            if t > now {
                break;
            }
            finishes.pop();
            let _ = engine.job_finished(id, 0);
        }
        if !swapped && now >= swap_at {
            swapped = true;
            let spec = sluice_runtime::PluginSpec {
                plugin: "basic".into(),
                ..specs[0].clone()
            };
            let mut guard = set.lock().unwrap();
            guard.stage(&loader, spec).join().ok();
            for outcome in guard.apply_staged() {
                println!(
                    "[{}] hot swap between passes: priority multifactor -> basic: {}",
                    stamp(now),
                    outcome
                );
            }
        } else if swapped && !rolled_back && now >= swap_at + 3600 {
            rolled_back = true;
            let generation = set.lock().unwrap().rollback(PluginKind::Priority);
            println!(
                "[{}] rollback of priority to the previous generation: {}",
                stamp(now),
                words::rollback(generation)
            );
        }
        for event in engine.tick() {
            match event {
                Event::Started {
                    job,
                    nodes,
                    time,
                    by,
                    ..
                } => {
                    let run = runtime_of.get(&job).copied().unwrap_or(60);
                    finishes.push(Reverse((time + run, job)));
                    let j = engine.job(job).expect("started job exists");
                    stats.started(j.submit_time, time);
                    if args.verbose || printed < 25 {
                        printed += 1;
                        println!(
                            "[{}] start  job {:>4} {:<8} {:<10} {:>2} node(s) {:<14} by {}",
                            stamp(time),
                            job,
                            j.spec.user,
                            j.spec.partitions.first().cloned().unwrap_or_default(),
                            nodes.len(),
                            hostlist(&engine, &nodes),
                            by,
                        );
                    }
                }
                Event::Ended {
                    job, state, time, ..
                } => {
                    stats.ended(state);
                    if args.verbose {
                        println!("[{}] end    job {job:>4} {}", stamp(time), state.as_str());
                    }
                }
                Event::Power(sluice_engine::PowerEvent::Call(call)) => {
                    println!(
                        "[{}] power {} {}",
                        stamp(now),
                        call.program.as_str(),
                        hostlist(&engine, &call.nodes)
                    )
                }
                Event::Power(sluice_engine::PowerEvent::JobReady { .. }) => {}
            }
        }
        if stats.snapshot_due(now) {
            print_queue(&engine, now);
        }
        let next = [
            pending_submits.peek().map(|j| j.submit),
            finishes.peek().map(|Reverse((t, _))| *t),
            engine.next_wakeup(),
        ]
        .into_iter()
        .flatten()
        .filter(|t| *t > now)
        .min();
        match next {
            Some(t) => clock.set(t),
            None => break,
        }
        if engine.pending_ids().next().is_none()
            && engine.running_ids().next().is_none()
            && pending_submits.peek().is_none()
        {
            break;
        }
    }
    stats.print(clock.now() - START);
    println!("\nplugins:");
    let mut table =
        crate::cmd::table(["KIND", "ROLE", "GENERATION", "ORIGIN", "ANSWERED", "FAULTS"]);
    for (kind, gens) in set.lock().unwrap().status() {
        for g in gens {
            table.add_row([
                kind.name().to_string(),
                g.role.to_string(),
                g.id.to_string(),
                g.origin,
                g.health.answered.to_string(),
                g.health.faults.to_string(),
            ]);
        }
    }
    crate::cmd::align_right(&mut table, [2, 4, 5]);
    println!("{table}");
    Ok(())
}

fn print_queue(engine: &Engine, now: i64) {
    let rows = engine.queue_rows();
    println!("[{}] squeue ({} jobs):", stamp(now), rows.len());
    println!(
        "  {:>6} {:<9} {:<10} {:<8} {:>2} {:>10} {:>5} NODELIST(REASON)",
        "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES"
    );
    for r in rows.iter().take(12) {
        let place = if r.st == "PD" {
            format!("({})", r.reason)
        } else {
            r.nodelist.clone()
        };
        println!(
            "  {:>6} {:<9} {:<10} {:<8} {:>2} {:>10} {:>5} {place}",
            r.job_id,
            r.partition,
            r.name,
            r.user,
            r.st,
            duration(r.time),
            r.nodes
        );
    }
    if rows.len() > 12 {
        println!("  … {} more", rows.len() - 12);
    }
}

fn hostlist(engine: &Engine, nodes: &[NodeId]) -> String {
    let names: Vec<&str> = nodes
        .iter()
        .map(|n| engine.cluster().node(*n).name.as_str())
        .collect();
    sluice_hostlist::compress(&names)
}

fn stamp(t: i64) -> String {
    format!("+{}", duration((t - START).max(0) as u64))
}

fn duration(secs: u64) -> String {
    format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

#[derive(Default)]
struct Stats {
    submitted: usize,
    started: usize,
    wait_total: i64,
    wait_max: i64,
    completed: usize,
    timeouts: usize,
    other_ends: usize,
    next_snapshot: i64,
}

impl Stats {
    fn started(&mut self, submit: i64, start: i64) {
        self.started += 1;
        self.wait_total += start - submit;
        self.wait_max = self.wait_max.max(start - submit);
    }

    fn ended(&mut self, state: JobState) {
        match state {
            JobState::Completed => self.completed += 1,
            JobState::Timeout => self.timeouts += 1,
            _ => self.other_ends += 1,
        }
    }

    fn snapshot_due(&mut self, now: i64) -> bool {
        if self.next_snapshot == 0 {
            self.next_snapshot = START + 1800;
        }
        if now >= self.next_snapshot {
            self.next_snapshot += 4 * 3600;
            return true;
        }
        false
    }

    fn print(&self, makespan: i64) {
        println!(
            "\nsummary: {} submitted, {} started, {} completed, {} timed out, {} other ends",
            self.submitted, self.started, self.completed, self.timeouts, self.other_ends
        );
        let avg = if self.started > 0 {
            self.wait_total / self.started as i64
        } else {
            0
        };
        println!(
            "         average wait {}, longest wait {}, makespan {}",
            duration(avg as u64),
            duration(self.wait_max as u64),
            duration(makespan as u64)
        );
    }
}
