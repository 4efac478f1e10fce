//! Backfill (`_attempt_backfill`): in queue order, start what fits without delaying the planned
//! start of any higher-priority job, and plan (reserve whole nodes for) the jobs that cannot start.
//! The same machinery runs EASY (one reservation) and conservative (all, no limits) backfilling.

pub mod map;

use std::collections::HashMap;

use sluice_policy::{Charge, NodeBitmap, hres::check_charges};

use crate::config::SchedulerKind;
use crate::engine::Engine;
use crate::event::Loop;
use crate::job::{JobId, Reason, plan_limit};
use crate::main_loop::{Plan, StartBuffers};
use crate::queue::QueueRecord;
use crate::stats::PassStats;
use map::NodeSpaceMap;

/// Conservative backfilling plans this far ahead, whatever bf_window says.
const CONSERVATIVE_WINDOW: i64 = 10 * 365 * 86_400;

/// A planned start: when, on which nodes, and what it holds.
#[derive(Clone, Debug)]
struct WillRun {
    start: i64,
    licenses: Vec<(usize, i64)>,
    hres: Vec<(usize, i64)>,
}

/// What running jobs hold and when they give it back, for planning.
struct Releases {
    /// The pass's time, which no release time is earlier than: idle nodes are free at it.
    now: i64,
    /// Per node: when every job on it will have ended.
    node_free_at: Vec<i64>,
    /// Nodes by (`node_free_at`, index), so planning a job needs no sort; empty when stale.
    by_release: Vec<u32>,
    /// The last order sorted (this pass's before a start, or the last pass's), which
    /// `by_release` is sorted from: only the nodes of jobs that started or ended since move.
    last_order: Vec<u32>,
    /// The release times `last_order` was sorted by.
    last_keys: Vec<i64>,
    /// (end, license, count) of running jobs.
    licenses: Vec<(i64, usize, i64)>,
    /// (end, layer, amount) of running jobs.
    hres: Vec<(i64, usize, i64)>,
}

impl Releases {
    /// Nodes `nodes` are now held until at least `end`: their release times move, and the order
    /// sorted so far becomes the one [`Releases::sort_by_release`] sorts again from (a start
    /// moves few nodes, so that costs what moved).
    fn release_later(&mut self, nodes: &[u32], end: i64) {
        if self.by_release.len() == self.node_free_at.len() {
            self.last_order = std::mem::take(&mut self.by_release);
            self.last_keys.clone_from(&self.node_free_at);
        }
        for &n in nodes {
            let slot = &mut self.node_free_at[n as usize];
            *slot = (*slot).max(end);
        }
    }

    /// Returns its storage to `buffers`: the order to start the next pass's sort from (this
    /// pass's, if it sorted one) with the release times it was sorted by, the rest as spares.
    fn into_buffers(self, buffers: &mut PlanningBuffers) {
        if self.by_release.len() == self.node_free_at.len() {
            buffers.release_order = self.by_release;
            buffers.release_keys = self.node_free_at;
            buffers.spare_order = self.last_order;
            buffers.node_free_at = self.last_keys;
        } else {
            buffers.release_order = self.last_order;
            buffers.release_keys = self.last_keys;
            buffers.spare_order = self.by_release;
            buffers.node_free_at = self.node_free_at;
        }
    }

    /// Puts `by_release` in order again after release times changed.
    ///
    /// Nodes free at `now` (idle ones) come first in index order. From the last order sorted,
    /// the other nodes whose release time is still the one it was sorted by keep their order,
    /// and the rest (those of jobs that started or outlived their limit since) are sorted and
    /// merged in: a pass over the nodes and a sort of what moved. Without a last order it
    /// sorts outright.
    fn sort_by_release(&mut self) {
        let n = self.node_free_at.len();
        if self.by_release.len() == n {
            return;
        }
        if self.last_order.len() == n && self.last_keys.len() == n {
            self.merge_moved();
        } else {
            self.sort_outright();
        }
    }

    /// [`Releases::sort_by_release`] from the last order, in its storage and `by_release`'s.
    fn merge_moved(&mut self) {
        let (free_at, sorted_by, now) = (&self.node_free_at, &self.last_keys, self.now);
        let key = |m: u32| (free_at[m as usize], m);
        let mut order = std::mem::take(&mut self.last_order);
        let mut moved = std::mem::take(&mut self.by_release);
        moved.clear();
        // The nodes still where the last order had them, gathered at its front in that order.
        let mut kept = 0;
        for i in 0..order.len() {
            let m = order[i];
            let t = free_at[m as usize];
            if t == now {
                continue;
            }
            if t == sorted_by[m as usize] {
                order[kept] = m;
                kept += 1;
            } else {
                moved.push(m);
            }
        }
        moved.sort_unstable_by_key(|&m| key(m));
        let idle = order.len() - kept - moved.len();
        // Each moved node from the last, its place found among the kept nodes not yet passed,
        // and those after it shifted right at once to the places after the idle nodes: the
        // cost is a search per moved node, not a step per node.
        let (mut i, mut j) = (kept, moved.len());
        while j > 0 {
            let m = moved[j - 1];
            let pos = order[..i].partition_point(|&o| key(o) < key(m));
            order.copy_within(pos..i, pos + j + idle);
            order[pos + j - 1 + idle] = m;
            i = pos;
            j -= 1;
        }
        order.copy_within(0..i, idle);
        let mut w = 0;
        for (m, &t) in free_at.iter().enumerate() {
            if t == now {
                order[w] = m as u32;
                w += 1;
            }
        }
        self.by_release = order;
        self.last_order = moved;
    }

    /// [`Releases::sort_by_release`] without a last order: the nodes free at the earliest time
    /// (idle ones: now) come first in index order without a sort. Release times within 2^32 s
    /// of the earliest (all of them, unless a job asks for more than a century) sort as one
    /// integer each, time above node, which is several times cheaper than sorting pairs; the
    /// order is the same.
    fn sort_outright(&mut self) {
        let free_at = &self.node_free_at;
        let earliest = free_at.iter().copied().min().unwrap_or(0);
        let mut first = Vec::with_capacity(free_at.len());
        let mut keys = Vec::with_capacity(free_at.len());
        for (n, &t) in free_at.iter().enumerate() {
            match t.checked_sub(earliest).and_then(|d| u32::try_from(d).ok()) {
                Some(0) => first.push(n as u32),
                Some(offset) => keys.push((u64::from(offset) << 32) | n as u64),
                None => break,
            }
        }
        if first.len() + keys.len() == free_at.len() {
            keys.sort_unstable();
            first.extend(keys.iter().map(|&k| k as u32));
            self.by_release = first;
        } else {
            self.by_release = (0..free_at.len() as u32).collect();
            self.by_release
                .sort_unstable_by_key(|&n| (free_at[n as usize], n));
        }
    }
}

/// What decides a plain job's candidate release times: partition, CPUs and memory per node,
/// and whether it takes whole nodes (jobs with GRES, features or a reservation are not plain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    partition: usize,
    cpus_per_node: u32,
    memory_per_node_mb: u64,
    exclusive: bool,
}

/// What every job planned in one backfill pass shares: the pass's times, the order nodes are
/// reserved in, and buffers reused from job to job.
struct Planning {
    now: i64,
    window_end: i64,
    res: i64,
    with_licenses: bool,
    /// The job shape `buffers.freed` was built for while it is still true (no start since): jobs
    /// of the same shape share it, as most jobs of a trace do.
    from_shape: Option<Shape>,
    buffers: PlanningBuffers,
}

/// A plain job (no licenses, HRES, GRES, features or reservation) that will-run found no start
/// for. A later job of the same shape that needs at least as many nodes for at least as long
/// has none either: every start it could take is a candidate time of the first job too and
/// would have fitted it. Reservations and starts later in the pass only take nodes away (a
/// start holds free nodes until its end; a reservation takes nodes out of slices), so this
/// stays true for the rest of the pass.
/// ([`crate::EngineConfig::remember_unplannable`])
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Unplannable {
    shape: Shape,
    min_nodes: usize,
    limit: i64,
}

impl Unplannable {
    /// Whether a job needing `min_nodes` of `shape` for `limit` seconds surely fails too.
    fn covers(&self, shape: Shape, min_nodes: usize, limit: i64) -> bool {
        self.shape == shape && self.min_nodes <= min_nodes && self.limit <= limit
    }
}

/// The buffers of a pass's planning, which the engine keeps from pass to pass so that a pass
/// does not grow them from empty again; what they hold is only valid within one pass.
#[derive(Default)]
pub(crate) struct PlanningBuffers {
    /// For each distinct time a candidate node of the job's shape could take one share, ascending:
    /// that time, how many candidates could by then, and which. A job of the same shape as the
    /// last reuses it.
    freed: Vec<(i64, usize, NodeBitmap)>,
    /// The times of `freed` rounded up to `res` (what releases alone offer as start times),
    /// ascending; built with `freed`.
    release_times: Vec<i64>,
    /// Candidate start times, ascending.
    times: Vec<i64>,
    /// The nodes a candidate time is being checked with (kept to spare an allocation per time).
    avail: NodeBitmap,
    /// The whole nodes the last planned job is reserved (kept to spare an allocation per job).
    chosen: NodeBitmap,
    /// The nodes by release time as the last pass left them ([`Releases::last_order`]).
    release_order: Vec<u32>,
    /// The release times `release_order` was sorted by ([`Releases::last_keys`]).
    release_keys: Vec<i64>,
    /// Storage for the pass's [`Releases::by_release`].
    spare_order: Vec<u32>,
    /// Storage for the pass's [`Releases::node_free_at`].
    node_free_at: Vec<i64>,
    /// What the pass's own loop holds, taken out for the pass.
    pass: PassStorage,
    /// Plain jobs this pass found no start in the window for, by shape, nodes and time limit
    /// (see [`Unplannable`]).
    unplannable: Vec<Unplannable>,
    /// A job's candidate nodes, those that cannot take a share now, and those due by a
    /// release time, while `freed` is built.
    candidates: NodeBitmap,
    later: NodeBitmap,
    due: NodeBitmap,
}

/// What a backfill pass's loop over the queue holds while planning borrows the rest of
/// [`PlanningBuffers`]: taken out at the pass's start and given back at its end, as one.
#[derive(Default)]
struct PassStorage {
    /// Every node, and the usable ones at the pass's start.
    all_nodes: NodeBitmap,
    usable: NodeBitmap,
    /// What planned jobs hold during the run of the job being tried.
    plan: Plan,
    /// Jobs tested per partition ([`Engine::run_backfill_pass`]'s bf_max_job_part count).
    per_part: Vec<u32>,
    /// The fewest CPUs a job from each queue position on needs.
    fewest_after: Vec<u64>,
    /// The last pass's node-space map, reset for the next so that its slices are reused.
    map: NodeSpaceMap,
    /// What the pass's start attempts build.
    start: StartBuffers,
}

fn floor_to(t: i64, res: i64) -> i64 {
    t.div_euclid(res) * res
}

fn ceil_to(t: i64, res: i64) -> i64 {
    (t + res - 1).div_euclid(res) * res
}

impl Engine {
    /// What running jobs hold and when they give it back, in the storage of `buffers` (which
    /// [`Releases::into_buffers`] gives back), with the last pass's order to sort from.
    fn releases(&self, now: i64, buffers: &mut PlanningBuffers) -> Releases {
        let mut node_free_at = std::mem::take(&mut buffers.node_free_at);
        node_free_at.clear();
        node_free_at.resize(self.nodes.len(), now);
        let mut by_release = std::mem::take(&mut buffers.spare_order);
        by_release.clear();
        let mut out = Releases {
            now,
            node_free_at,
            by_release,
            last_order: std::mem::take(&mut buffers.release_order),
            last_keys: std::mem::take(&mut buffers.release_keys),
            licenses: Vec::new(),
            hres: Vec::new(),
        };
        for id in &self.running {
            let job = &self.jobs[id];
            let Some(alloc) = &job.alloc else { continue };
            let end = job
                .end_time
                .unwrap_or_else(|| {
                    job.start_time.unwrap_or(now) + plan_limit(job.time_limit) as i64
                })
                // A job still holding resources past its limit (time limits not enforced) frees
                // them no earlier than the next second, never in the past.
                .max(now + 1);
            for &n in &alloc.placement.nodes {
                let slot = &mut out.node_free_at[n as usize];
                *slot = (*slot).max(end);
            }
            out.licenses
                .extend(alloc.licenses.iter().map(|&(i, c)| (end, i, i64::from(c))));
            out.hres
                .extend(alloc.hres.iter().map(|c| (end, c.layer as usize, c.amount)));
        }
        out
    }

    /// One backfill pass with the configured scheduler kind; `queue` is the one a main-loop
    /// pass of the same tick sorted, if one ran.
    pub(crate) fn run_backfill_pass(&mut self, queue: Option<Vec<QueueRecord>>) {
        let now = self.clock.now();
        let started_at = self.clock.micros();
        let params = self.pass_params();
        let kind = self.config.scheduler;
        let limited = kind == SchedulerKind::Backfill;
        let records = match self.open_pass(now, queue) {
            Ok(records) => records,
            Err(stats) => {
                self.last_backfill_stats = stats;
                return;
            }
        };
        let mut stats = PassStats {
            queued: records.len(),
            ..PassStats::default()
        };

        let res = params.bf_resolution.max(1) as i64;
        let window_end = if kind == SchedulerKind::Conservative {
            now + CONSERVATIVE_WINDOW
        } else {
            now + params.bf_window as i64 * 60
        };
        let max_records = if limited {
            params.effective_bf_node_space_size() as usize
        } else {
            usize::MAX
        };
        let mut buffers = std::mem::take(&mut self.planning_buffers);
        let mut pass = std::mem::take(&mut buffers.pass);
        let PassStorage {
            all_nodes,
            usable,
            plan,
            per_part,
            fewest_after,
            map,
            start,
        } = &mut pass;
        if all_nodes.len() != self.nodes.len() {
            *all_nodes = NodeBitmap::full(self.nodes.len());
        }
        // The last pass's map, made this pass's window so that its slices are reused.
        map.reset(
            floor_to(now, res),
            window_end,
            all_nodes,
            self.lic.license_count(),
            self.lic.hres_layers().len(),
            max_records,
        );
        // Owned: the pass changes `self` while it holds this.
        usable.clone_from(self.nodes.usable_nodes());
        // Refilled for every job: what planned jobs hold during its run.
        plan.lic_held.clear();
        plan.hres_held.clear();
        let mut free_cpus = self.nodes.free_cpus_on(usable);
        let mut rel = self.releases(now, &mut buffers);
        per_part.clear();
        per_part.resize(self.parts.len(), 0);
        fewest_after.clear();
        if self.config.skip_backfill_without_fit {
            self.fewest_cpus_from(&records, fewest_after);
        }
        buffers.unplannable.clear();
        let mut planning = Planning {
            now,
            window_end,
            res,
            with_licenses: params.bf_licenses,
            from_shape: None,
            buffers,
        };
        let budget = params.effective_bf_max_time().saturating_mul(1_000_000);
        let mut per_user: HashMap<String, u32> = HashMap::new();
        let mut reservations = 0usize;

        for (i, rec) in records.iter().enumerate() {
            if fewest_after
                .get(i)
                .is_some_and(|&fewest| fewest > free_cpus)
            {
                // No job from here on can start, and planning them would only refresh their
                // expected start times and reasons (see `skip_backfill_without_fit`).
                stats.stopped_by = Some("no later job fits");
                break;
            }
            if !self.jobs[&rec.job].is_pending() {
                continue;
            }
            if self.clock.micros().saturating_sub(started_at) >= budget {
                stats.stopped_by = Some("bf_max_time");
                break;
            }
            if limited && stats.tested >= params.bf_max_job_test as usize {
                stats.stopped_by = Some("bf_max_job_test");
                break;
            }
            if limited
                && params.bf_max_job_start > 0
                && stats.started >= params.bf_max_job_start as usize
            {
                stats.stopped_by = Some("bf_max_job_start");
                break;
            }
            if limited {
                let p = rec.partition.index();
                let user = &self.jobs[&rec.job].spec.user;
                if params.bf_max_job_user > 0
                    && per_user.get(user).copied().unwrap_or(0) >= params.bf_max_job_user
                {
                    continue;
                }
                if params.bf_max_job_part > 0 && per_part[p] >= params.bf_max_job_part {
                    continue;
                }
                per_part[p] += 1;
                if params.bf_max_job_user > 0 {
                    *per_user.entry(user.clone()).or_default() += 1;
                }
            }
            stats.tested += 1;

            let limit = plan_limit(self.jobs[&rec.job].time_limit) as i64;
            let end = now + limit;
            // A job of nodes alone that needs more CPUs than are free fails for Resources
            // whatever the policy says; the check spares building its request and what planned
            // jobs hold during its run. Other jobs go on to find the reason they report
            // (Licenses, a reservation's own).
            let job = &self.jobs[&rec.job];
            let attempt = if job.needs_nodes_alone() && job.cpus() > free_cpus {
                Err(Reason::Resources)
            } else {
                map.reserved_between(all_nodes, &mut plan.exclude, now, end);
                if params.bf_licenses {
                    plan.lic_held = map.licenses_between(now, end);
                    plan.hres_held = map.hres_between(now, end);
                }
                self.try_start(rec, now, usable, plan, Loop::Backfill, start)
            };
            let reason = match attempt {
                Ok(()) => {
                    stats.started += 1;
                    self.note_started(rec.job, now, &mut rel);
                    planning.from_shape = None;
                    free_cpus = self.nodes.free_cpus_on(usable);
                    continue;
                }
                Err(reason) => reason,
            };
            let job = self.jobs.get_mut(&rec.job).expect("queued job");
            if job.reason != Reason::Priority || reason != Reason::Resources {
                job.reason = reason;
            }
            if reason == Reason::Licenses && !params.bf_licenses {
                // Without bf_licenses, license-blocked jobs get no reservation.
                job.start_time = None;
                continue;
            }
            if kind == SchedulerKind::Easy && reservations >= 1 {
                job.start_time = None;
                continue;
            }
            let age = now - job.eligible_time.unwrap_or(now);
            let prio = u64::from(rec.priority);
            if (params.bf_min_age_reserve > 0 && (age as u64) < params.bf_min_age_reserve)
                || (params.bf_min_prio_reserve > 0 && prio < params.bf_min_prio_reserve)
            {
                job.start_time = None;
                continue;
            }
            match self.will_run(rec, &mut planning, map, &mut rel, usable) {
                Some(plan) => {
                    let slot_start = floor_to(plan.start, res);
                    let slot_end = ceil_to(plan.start + limit, res).max(slot_start + res);
                    self.jobs.get_mut(&rec.job).expect("queued job").start_time = Some(plan.start);
                    if map
                        .add_reservation(
                            slot_start,
                            slot_end,
                            &planning.buffers.chosen,
                            &plan.licenses,
                            &plan.hres,
                        )
                        .is_err()
                    {
                        stats.stopped_by = Some("bf_node_space_size");
                        break;
                    }
                    reservations += 1;
                    stats.reserved += 1;
                }
                None => self.jobs.get_mut(&rec.job).expect("queued job").start_time = None,
            }
        }
        let mut buffers = planning.buffers;
        rel.into_buffers(&mut buffers);
        buffers.pass = pass;
        self.planning_buffers = buffers;
        self.last_backfill_stats = stats;
    }

    /// Fills `fewest` with, for each queue position, the fewest CPUs any job from there on
    /// needs: a job starts only on that many free CPUs of usable nodes, as
    /// [`Engine::some_pending_job_fits`] assumes for the whole queue.
    fn fewest_cpus_from(&self, records: &[QueueRecord], fewest: &mut Vec<u64>) {
        fewest.clear();
        fewest.resize(records.len(), 0);
        let mut least = u64::MAX;
        for (i, rec) in records.iter().enumerate().rev() {
            least = least.min(self.jobs[&rec.job].cpus());
            fewest[i] = least;
        }
    }

    /// Records a job started by backfill in the planning picture.
    fn note_started(&self, id: JobId, now: i64, rel: &mut Releases) {
        let job = &self.jobs[&id];
        let end = now + plan_limit(job.time_limit) as i64;
        if let Some(alloc) = &job.alloc {
            rel.release_later(&alloc.placement.nodes, end);
            rel.licenses
                .extend(alloc.licenses.iter().map(|&(i, c)| (end, i, i64::from(c))));
            rel.hres
                .extend(alloc.hres.iter().map(|c| (end, c.layer as usize, c.amount)));
        }
    }

    /// The earliest time after `now` at which the job fits on whole nodes that no planned job holds
    /// (select's WILL_RUN): nodes count once every job on them has ended, or at once if what is
    /// free there already holds one node's share.
    fn will_run(
        &mut self,
        rec: &QueueRecord,
        planning: &mut Planning,
        map: &NodeSpaceMap,
        rel: &mut Releases,
        usable: &NodeBitmap,
    ) -> Option<WillRun> {
        let (now, window_end, res) = (planning.now, planning.window_end, planning.res);
        let with_licenses = planning.with_licenses;
        let from_shape = &mut planning.from_shape;
        let PlanningBuffers {
            freed,
            release_times,
            times,
            avail,
            chosen,
            candidates: cand,
            later,
            due: nodes,
            unplannable,
            ..
        } = &mut planning.buffers;
        let job = &self.jobs[&rec.job];
        let own = job.reservation;
        let limit = plan_limit(job.time_limit) as i64;
        let min_nodes = job.spec.min_nodes.max(1) as usize;
        let per_node_cpus = job.cpus().div_ceil(job.spec.min_nodes.max(1) as u64) as u32;
        let mem = job.spec.memory_per_node_mb;
        let gres = job.gres_per_node.clone();
        let exclusive = job.spec.exclusive;
        let licenses: Vec<(usize, u32)> = job.demand.licenses.clone();
        let demands = job.demand.hres.clone();
        let has_time_limit = job.time_limit.is_some();

        let table = self.nodes.table();
        let kinds = table.gres_kinds.len();
        let shape = Shape {
            partition: rec.partition.index(),
            cpus_per_node: per_node_cpus,
            memory_per_node_mb: mem,
            exclusive,
        };
        let plain = own.is_none()
            && gres.is_empty()
            && job.gres_types.is_empty()
            && job.spec.constraint.is_none();
        let simple =
            plain && licenses.is_empty() && demands.is_empty() && self.config.remember_unplannable;
        let failed = Unplannable {
            shape,
            min_nodes,
            limit,
        };
        if simple
            && unplannable
                .iter()
                .any(|u| u.covers(shape, min_nodes, limit))
        {
            return None;
        }
        if !plain || *from_shape != Some(shape) {
            cand.clone_from(&self.parts[rec.partition.index()].nodes);
            cand.intersect_with(usable);
            if let Some(r) = own.filter(|r| !self.resv.get(*r).nodes.is_empty()) {
                cand.intersect_with(&self.resv.get(r).nodes);
            }
            if job.spec.constraint.is_some() || !job.gres_types.is_empty() {
                cand.intersect_with(&self.fit().static_mask(job, rec.partition));
            }
            // Whether node `i` could ever take one node's share, and whether it can now.
            let fits_config = |i: usize| {
                table.cpus[i] >= per_node_cpus
                    && table.memory_mb[i] >= mem
                    && gres
                        .iter()
                        .all(|&(k, c)| table.gres_total[i * kinds + k as usize] >= c)
            };
            let fits_now = |i: usize| {
                if exclusive {
                    self.nodes.is_idle(i)
                } else {
                    table.free_cpus[i] >= per_node_cpus
                        && table.free_memory_mb[i] >= mem
                        && gres
                            .iter()
                            .all(|&(k, c)| table.gres_free[i * kinds + k as usize] >= c)
                }
            };
            // The candidates that could take one node's share (one the smallest node holds
            // needs no check node by node), those that can now, and the others, which can
            // once every job on them has ended. A share is at least one CPU, so only nodes
            // with a free CPU are asked whether they can now.
            if !(gres.is_empty() && self.nodes.every_node_has(per_node_cpus, mem)) {
                cand.retain(|n| fits_config(n as usize));
            }
            nodes.clone_from(cand);
            nodes.intersect_with(self.nodes.open_nodes());
            nodes.retain(|n| fits_now(n as usize));
            later.clone_from(cand);
            later.subtract(nodes);
            rel.sort_by_release();
            // By time, ascending: the nodes that can now, then the others in the pass's release
            // order (no release is before `now`). The previous shape's sets are overwritten in
            // place, sparing an allocation each.
            let mut due = nodes.len();
            let mut at = (due > 0).then_some(now);
            let mut filled = 0;
            release_times.clear();
            for &n in &rel.by_release {
                if !later.contains(n) {
                    continue;
                }
                let t = rel.node_free_at[n as usize];
                if let Some(before) = at.filter(|&a| a != t) {
                    freed_by(freed, &mut filled, release_times, res, (before, due, nodes));
                }
                at = Some(t);
                nodes.insert(n);
                due += 1;
            }
            if let Some(last) = at {
                freed_by(freed, &mut filled, release_times, res, (last, due, nodes));
            }
            freed.truncate(filled);
            *from_shape = plain.then_some(shape);
        }
        // Before this time fewer than `min_nodes` candidates could take a share.
        let Some(&(enough_at, ..)) = freed.get(freed.partition_point(|f| f.1 < min_nodes)) else {
            if simple {
                unplannable.push(failed);
            }
            return None;
        };
        // Start times are whole seconds in `[earliest, window_end)`.
        let earliest = (now + 1).max(enough_at);
        let keep = |t: i64| t >= earliest && t < window_end;
        // Release times and slice starts are each ascending: merged as the loop below asks for
        // them (a job mostly finds its start at one of the first few), unless rarer sources
        // add times; those are collected and sorted.
        let mut merged = MergedTimes::within(release_times, map, earliest, window_end);
        let rare = !self.resv.is_empty()
            || own.is_some()
            || (with_licenses && !(rel.licenses.is_empty() && rel.hres.is_empty()));
        let candidates = if rare {
            times.clear();
            times.extend(&mut merged);
            times.extend(self.resv.boundaries(now, window_end));
            times.extend(own.map(|r| self.resv.get(r).start));
            if with_licenses {
                times.extend(rel.licenses.iter().map(|(t, ..)| *t));
                times.extend(rel.hres.iter().map(|(t, ..)| *t));
            }
            times.retain(|&t| keep(t));
            times.sort_unstable();
            times.dedup();
            CandidateTimes::Collected(times.iter().copied())
        } else {
            CandidateTimes::Merged(merged)
        };

        // A slice that alone left too few nodes at an earlier time: later times that overlap it
        // are skipped while it still does, without narrowing (see `narrow_between`).
        let mut blocker = None;
        // How many entries of `freed` are due by `t`; times ascend, so it only moves forward.
        let mut due = 0;
        // Where the map's slices ending after the last time narrowed begin.
        let mut cursor = 0;
        for t in candidates {
            // The nodes that could take a share by `t`.
            while freed.get(due).is_some_and(|(at, ..)| *at <= t) {
                due += 1;
            }
            let Some((_, count, due_nodes)) = due.checked_sub(1).map(|i| &freed[i]) else {
                continue;
            };
            if *count < min_nodes {
                continue;
            }
            let end = t + limit;
            if blocker.is_some_and(|b| map.blocks(b, due_nodes, t, end, min_nodes)) {
                continue;
            }
            if let Some(r) = own {
                let resv = self.resv.get(r);
                if t < resv.start || (has_time_limit && end > resv.end) {
                    continue;
                }
            }
            if let Err(found) =
                map.narrow_between(due_nodes, avail, (t, end), min_nodes, &mut cursor)
            {
                blocker = found;
                continue;
            }
            if !self.resv.is_empty() {
                avail.subtract(&self.resv.excluded_nodes(own, t, end));
            }
            if avail.len() < min_nodes {
                continue;
            }
            let mut lic_plan = Vec::new();
            let mut hres_plan = Vec::new();
            // The HRES layers the job's charge is checked against, when it has demands.
            let mut hres_layers = None;
            if with_licenses {
                let held = map.licenses_between(t, end);
                let fits = licenses.iter().all(|&(i, c)| {
                    let still_used: i64 = rel
                        .licenses
                        .iter()
                        .filter(|(e, l, _)| *l == i && *e > t)
                        .map(|(_, _, c)| *c)
                        .sum();
                    let reserved = i64::from(self.lic.total(i))
                        - i64::from(self.fit().license_free(own, i, t, end))
                        - i64::from(self.lic.used(i));
                    i64::from(self.lic.total(i)) - still_used - reserved.max(0) - held[i]
                        >= i64::from(c)
                });
                if !fits {
                    continue;
                }
                lic_plan = licenses.iter().map(|&(i, c)| (i, i64::from(c))).collect();
                if !demands.is_empty() {
                    let mut layers = self.fit().hres_layers_for(own, t, end);
                    for (e, l, a) in &rel.hres {
                        if *e <= t {
                            layers[*l].used -= a;
                        }
                    }
                    for (layer, h) in layers.iter_mut().zip(map.hres_between(t, end)) {
                        layer.used += h;
                    }
                    let hres = self
                        .policies
                        .hres
                        .as_mut()
                        .expect("HRES jobs need a policy");
                    hres.begin_pass(self.lic.hres_resources(), &layers);
                    let eligible = hres.eligible(&demands, &avail.words);
                    avail.intersect_with(&NodeBitmap::from_words(eligible));
                    if avail.len() < min_nodes {
                        continue;
                    }
                    hres_layers = Some(layers);
                }
            }
            pick_nodes(self.nodes.by_weight(), avail, min_nodes, chosen);
            if let Some(layers) = hres_layers {
                let list: Vec<u32> = chosen.iter().collect();
                let hres = self
                    .policies
                    .hres
                    .as_mut()
                    .expect("HRES jobs need a policy");
                match hres.charge(&demands, &list) {
                    Ok(c) if check_charges(&layers, &c).is_ok() => {
                        hres_plan = merge_charges(&c);
                    }
                    _ => continue,
                }
            }
            return Some(WillRun {
                start: t,
                licenses: lic_plan,
                hres: hres_plan,
            });
        }
        if simple {
            unplannable.push(failed);
        }
        None
    }
}

/// A job's candidate start times: merged as asked for (the common case), or collected and
/// sorted when rarer sources add times. An enum rather than a trait object, so that the
/// merge inlines into the planning loop, which asks for a time a million times in a KTH replay.
enum CandidateTimes<'a> {
    Merged(MergedTimes<'a>),
    Collected(std::iter::Copied<std::slice::Iter<'a, i64>>),
}

impl Iterator for CandidateTimes<'_> {
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        match self {
            CandidateTimes::Merged(merged) => merged.next(),
            CandidateTimes::Collected(times) => times.next(),
        }
    }
}

/// A job's candidate start times from release times and slice boundaries, ascending and
/// each once, merged as the planning loop asks for them.
struct MergedTimes<'a> {
    /// Release times still to merge, ascending.
    releases: &'a [i64],
    /// Slices whose beginnings are still to merge, in time order.
    slices: &'a [map::Slice],
    /// The window's end, after the slices, if it is a candidate.
    window_end: Option<i64>,
    last: Option<i64>,
}

impl<'a> MergedTimes<'a> {
    /// The times in `[from, to)` of the ascending `release_times` and of `map`'s boundaries.
    #[inline]
    fn within(release_times: &'a [i64], map: &'a NodeSpaceMap, from: i64, to: i64) -> Self {
        let first = release_times.partition_point(|&t| t < from);
        let last = first + release_times[first..].partition_point(|&t| t < to);
        let (slices, window_end) = map.boundaries_within(from, to);
        MergedTimes {
            releases: &release_times[first..last],
            slices,
            window_end,
            last: None,
        }
    }
}

impl Iterator for MergedTimes<'_> {
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        loop {
            let boundary = self.slices.first().map(|s| s.begin).or(self.window_end);
            let t = match (self.releases.first(), boundary) {
                (Some(&r), Some(b)) if r <= b => {
                    self.releases = &self.releases[1..];
                    r
                }
                (_, Some(b)) => {
                    match self.slices.split_first() {
                        Some((_, rest)) => self.slices = rest,
                        None => self.window_end = None,
                    }
                    b
                }
                (Some(&r), None) => {
                    self.releases = &self.releases[1..];
                    r
                }
                (None, None) => return None,
            };
            if self.last != Some(t) {
                self.last = Some(t);
                return Some(t);
            }
        }
    }
}

/// Sets `chosen` to the first `count` nodes of `avail` in `by_weight` order (the lowest weight,
/// lowest index on ties), or by index when `by_weight` is `None`
/// ([`crate::node_state::NodeState::by_weight`]): whole nodes to reserve.
fn pick_nodes(
    by_weight: Option<&[u32]>,
    avail: &NodeBitmap,
    count: usize,
    chosen: &mut NodeBitmap,
) {
    chosen.words.clear();
    chosen.words.resize(avail.words.len(), 0);
    let Some(by_weight) = by_weight else {
        // The lowest indices: whole words while they fit, then the low bits of the next.
        let mut left = count;
        for (out, &word) in chosen.words.iter_mut().zip(&avail.words) {
            let ones = word.count_ones() as usize;
            if ones <= left {
                *out = word;
                left -= ones;
                continue;
            }
            let mut rest = word;
            for _ in 0..left {
                let lowest = rest & rest.wrapping_neg();
                *out |= lowest;
                rest ^= lowest;
            }
            break;
        }
        return;
    };
    for n in by_weight
        .iter()
        .copied()
        .filter(|&n| avail.contains(n))
        .take(count)
    {
        chosen.insert(n);
    }
}

/// Records that by `t` the `due` candidates `nodes` could take a share, in slot `*filled` of
/// `freed` (overwriting what a previous shape left there), and `t` rounded up to `res` in
/// `release_times` (many nodes free up at the same instant, one job's end: each time once).
fn freed_by(
    freed: &mut Vec<(i64, usize, NodeBitmap)>,
    filled: &mut usize,
    release_times: &mut Vec<i64>,
    res: i64,
    (t, due, nodes): (i64, usize, &NodeBitmap),
) {
    match freed.get_mut(*filled) {
        Some(slot) => {
            slot.0 = t;
            slot.1 = due;
            slot.2.clone_from(nodes);
        }
        None => freed.push((t, due, nodes.clone())),
    }
    *filled += 1;
    let rounded = ceil_to(t, res).max(t);
    if release_times.last() != Some(&rounded) {
        release_times.push(rounded);
    }
}

fn merge_charges(charges: &[Charge]) -> Vec<(usize, i64)> {
    let mut out: Vec<(usize, i64)> = Vec::new();
    for c in charges {
        match out.iter_mut().find(|(l, _)| *l == c.layer as usize) {
            Some(slot) => slot.1 += c.amount,
            None => out.push((c.layer as usize, c.amount)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn releases(free_at: &[i64]) -> Releases {
        Releases {
            now: free_at.iter().copied().min().unwrap_or(0),
            node_free_at: free_at.to_vec(),
            by_release: Vec::new(),
            last_order: Vec::new(),
            last_keys: Vec::new(),
            licenses: Vec::new(),
            hres: Vec::new(),
        }
    }

    #[test]
    fn picking_by_index_takes_what_the_weight_order_takes_when_weights_are_equal() {
        let index_order: Vec<u32> = (0..200).collect();
        let mut rng = sluice_policy::fixtures::Rng::new(0x9e37_79b9_7f4a_7c15);
        for round in 0..200 {
            // A cheap deterministic mix of dense and sparse sets over 200 nodes.
            let mut avail = NodeBitmap::with_capacity(200);
            for n in 0..200 {
                if rng.next_u64().is_multiple_of(1 + round % 5) {
                    avail.insert(n);
                }
            }
            // One kept set for every count: what the last pick left in it must not linger.
            let mut fast = NodeBitmap::default();
            for count in [200, 0, 1, 5, 63, 64, 65, 130] {
                pick_nodes(None, &avail, count, &mut fast);
                let slow = picked(Some(&index_order), &avail, count);
                assert_eq!(
                    fast.len(),
                    count.min(avail.len()),
                    "round {round} count {count}"
                );
                assert_eq!(
                    fast.iter().collect::<Vec<_>>(),
                    slow.iter().collect::<Vec<_>>()
                );
            }
        }
        // A real weight order is followed, not the index order.
        let avail: NodeBitmap = [1, 2, 3].into_iter().collect();
        let by_weight = picked(Some(&[3, 2, 1, 0]), &avail, 2);
        assert_eq!(by_weight.iter().collect::<Vec<_>>(), vec![2, 3]);
    }

    fn picked(by_weight: Option<&[u32]>, avail: &NodeBitmap, count: usize) -> NodeBitmap {
        let mut chosen = NodeBitmap::default();
        pick_nodes(by_weight, avail, count, &mut chosen);
        chosen
    }

    /// Every candidate time of the map's and the releases' within `[from, to)`, collected the
    /// plain way.
    fn times_the_plain_way(map: &NodeSpaceMap, releases: &[i64], from: i64, to: i64) -> Vec<i64> {
        let mut all: Vec<i64> = map.slices().iter().map(|s| s.begin).collect();
        all.push(map.end());
        all.extend(releases);
        all.retain(|t| (from..to).contains(t));
        all.sort_unstable();
        all.dedup();
        all
    }

    #[test]
    fn merged_times_are_the_releases_and_boundaries_in_range_each_once() {
        let nodes = NodeBitmap::full(8);
        let mut map = NodeSpaceMap::new(0, 100, nodes.clone(), 0, 0, 64);
        let two: NodeBitmap = [0, 1].into_iter().collect();
        for (begin, end) in [(10, 20), (20, 40), (55, 70)] {
            map.add_reservation(begin, end, &two, &[], &[])
                .expect("room");
        }
        // Boundaries are 0, 10, 20, 40, 55, 70 and the window's end, 100.
        let releases = [5, 10, 33, 40, 41, 99, 100];
        for (from, to) in [(0, 100), (1, 101), (11, 56), (41, 41), (100, 200), (-5, 3)] {
            let merged: Vec<i64> = MergedTimes::within(&releases, &map, from, to).collect();
            assert_eq!(
                merged,
                times_the_plain_way(&map, &releases, from, to),
                "[{from}, {to})"
            );
        }
    }

    #[test]
    fn a_start_moves_its_nodes_to_their_new_release_order() {
        let mut rel = releases(&[5, 0, 9, 0, 5, 7]);
        rel.sort_by_release();
        assert_eq!(rel.by_release, vec![1, 3, 0, 4, 5, 2]);
        // Nodes 3 and 4 are now held until 8; node 2 already until 9 stays.
        rel.release_later(&[3, 4, 2], 8);
        rel.sort_by_release();
        let incremental = rel.by_release.clone();
        assert_eq!(rel.node_free_at, vec![5, 0, 9, 8, 8, 7]);
        // Sorted outright, without the order before the start.
        rel.by_release.clear();
        rel.last_order.clear();
        rel.sort_by_release();
        assert_eq!(incremental, rel.by_release);
        assert_eq!(incremental, vec![1, 0, 5, 3, 4, 2]);
    }

    #[test]
    fn release_order_is_by_time_then_node_even_centuries_apart() {
        let far = 5_000_000_000; // past what one packed key holds
        for free_at in [
            vec![7, 3, 7, 3, 0, 9],
            vec![far, 3, 7, far, 0, i64::MAX],
            vec![-5, 2, -5],
        ] {
            let mut rel = releases(&free_at);
            rel.sort_by_release();
            let mut expected: Vec<u32> = (0..free_at.len() as u32).collect();
            expected.sort_by_key(|&n| (free_at[n as usize], n));
            assert_eq!(rel.by_release, expected, "{free_at:?}");
        }
    }

    #[test]
    fn release_order_from_the_last_pass_is_the_order_a_full_sort_gives() {
        let mut rng = sluice_policy::fixtures::Rng::new(0x5851_f42d_4c95_7f2d);
        for round in 0..300 {
            let n = 1 + rng.below(150) as usize;
            let time = |rng: &mut sluice_policy::fixtures::Rng| rng.below(40) as i64 * 60;
            let mut free_at: Vec<i64> = (0..n).map(|_| time(&mut rng)).collect();
            let mut last = releases(&free_at);
            last.sort_by_release();
            // A few release times moved since the last pass, all of them, or the node count
            // changed (the last order does not apply). Nodes at the least time are idle.
            match round % 3 {
                0 => (0..1 + rng.below(4)).for_each(|_| {
                    free_at[rng.below(n as u64) as usize] = time(&mut rng);
                }),
                1 => free_at.iter_mut().for_each(|t| *t = time(&mut rng)),
                _ => free_at.push(time(&mut rng)),
            }
            let mut rel = releases(&free_at);
            let mut buffers = PlanningBuffers::default();
            last.into_buffers(&mut buffers);
            rel.last_order = buffers.release_order;
            rel.last_keys = buffers.release_keys;
            rel.sort_by_release();
            let mut expected: Vec<u32> = (0..free_at.len() as u32).collect();
            expected.sort_by_key(|&m| (free_at[m as usize], m));
            assert_eq!(rel.by_release, expected, "round {round}: {free_at:?}");
        }
    }
}
