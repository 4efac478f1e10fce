//! Owns no state: `--test-only`, when and where a job would start if it were queued now, from
//! the backfill plan (Slurm's `job_will_run`), without queueing it.
//!
//! The job is validated as submission validates it, then tried now on the nodes the last
//! backfill pass did not plan for other jobs (the selection policy asked in test mode), else
//! planned as backfill plans a job: behind every planned job, at the earliest time enough whole
//! nodes are free. Limits that would hold it (QOS, association) are not consulted, as Slurm's
//! will-run test does not consult them.

use sluice_policy::NodeBitmap;

use super::map::NodeSpaceMap;
use super::planner::{Planning, PlanningBuffers, floor_to, window_end};
use super::releases::Releases;
use crate::engine::Engine;
use crate::error::WillRunError;
use crate::job::{JobSpec, plan_limit};
use crate::pass_buffers::{Plan, StartBuffers};
use crate::queue::QueueRecord;
use crate::submit::AssocFound;

/// When and where a job would start, and with how many CPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WillRunAnswer {
    /// The expected start, in the engine's clock's seconds (now if it would start at once).
    pub start: i64,
    /// The nodes it would run on, by name, in node order.
    pub nodes: Vec<String>,
    /// The CPUs it would be given (what it asks for when it cannot start now).
    pub cpus: u32,
    /// The partition it would run in.
    pub partition: String,
}

impl Engine {
    /// Where and when a job would start if it were submitted now (sbatch `--test-only`).
    /// Nothing changes: the job is not queued and takes no id. An association the engine would
    /// create at submission is stood in for by its account's.
    pub fn will_run(&mut self, spec: JobSpec) -> Result<WillRunAnswer, WillRunError> {
        let now = self.clock.now();
        let assoc = match self.find_assoc(&spec)? {
            AssocFound::Existing(id) | AssocFound::ToCreateUnder(id) => id,
        };
        let job = self.admit(spec, assoc, now)?;
        let id = job.id;
        let records: Vec<QueueRecord> = job
            .partitions
            .iter()
            .enumerate()
            .map(|(pos, &p)| QueueRecord {
                job: id,
                partition: p,
                part_pos: pos as u16,
                has_reservation: job.reservation.is_some(),
                tier: self.cluster.partitions[p.index()].priority_tier,
                priority: 0,
                submit_time: now,
            })
            .collect();
        self.jobs.insert(id, job);
        let mut best: Option<WillRunAnswer> = None;
        for rec in &records {
            if let Some(answer) = self.will_run_in(rec, now)
                && best.as_ref().is_none_or(|b| answer.start < b.start)
            {
                best = Some(answer);
            }
        }
        self.jobs.remove(&id);
        // A later pass must hand the selection policy its table again.
        self.selection_begun = false;
        best.ok_or(WillRunError::NoStart {
            window_minutes: self.pass_params().bf_window,
        })
    }

    /// The record's start in its partition: now, or the backfill plan's earliest.
    fn will_run_in(&mut self, rec: &QueueRecord, now: i64) -> Option<WillRunAnswer> {
        let params = self.pass_params();
        let res = params.bf_resolution.max(1) as i64;
        let mut buffers = std::mem::take(&mut self.pass_buffers.backfill);
        let all = NodeBitmap::full(self.nodes.len());
        if buffers.map.end() <= now {
            // No pass has planned up to now: nothing is planned for other jobs.
            buffers.map = NodeSpaceMap::new(
                floor_to(now, res),
                window_end(self.config.scheduler, &params, now),
                all.clone(),
                self.lic.license_count(),
                self.lic.hres_layers().len(),
                usize::MAX,
            );
        }
        let map = &buffers.map;
        let usable = self.nodes.usable_nodes().clone();
        let end = now + plan_limit(self.jobs[&rec.job].time_limit) as i64;
        let mut plan = Plan::default();
        map.reserved_between(&all, &mut plan.exclude, now, end);
        if params.bf_licenses {
            plan.lic_held = map.licenses_between(now, end);
            plan.hres_held = map.hres_between(now, end);
        }
        let mut start = StartBuffers::default();
        let answer = match self.test_start(rec, now, &usable, &plan, &mut start) {
            Ok(placement) => Some((now, placement.nodes, placement.cpus.iter().sum())),
            Err(_) => {
                let mut planning_buffers = PlanningBuffers::default();
                let mut rel = Releases::of_running(
                    &self.jobs,
                    &self.running,
                    self.nodes.len(),
                    now,
                    &mut planning_buffers.releases,
                );
                let cpus = self.jobs[&rec.job].cpus() as u32;
                let mut planning = Planning::new(
                    (now, map.end(), res),
                    params.bf_licenses,
                    false,
                    &mut planning_buffers,
                );
                let (fit, hres) = self.fit_and_hres();
                planning
                    .will_run(fit, hres, rec, map, &mut rel, &usable)
                    .map(|planned| {
                        let nodes = planning.buffers.chosen.iter().collect();
                        (planned.start, nodes, cpus)
                    })
            }
        };
        self.pass_buffers.backfill = buffers;
        let (start, nodes, cpus) = answer?;
        Some(WillRunAnswer {
            start,
            nodes: nodes
                .into_iter()
                .map(|n: u32| self.cluster.nodes[n as usize].name.clone())
                .collect(),
            cpus,
            partition: self.cluster.partitions[rec.partition.index()].name.clone(),
        })
    }
}
