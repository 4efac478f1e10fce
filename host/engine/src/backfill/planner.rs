//! Owns backfill's planning buffers, and plans one job's earliest start (select's WILL_RUN).
//!
//! The earliest time after now at which a job fits on whole nodes that no planned job holds.

use sluice_cluster::SchedulerParams;
use sluice_policy::{Charge, Demand, HresLayer, HresPolicy, NodeBitmap, hres::check_charges};

use super::map::{self, NodeSpaceMap};
use super::releases::{ReleaseBuffers, Releases};
use super::times::{CandidateTimes, MergedTimes};
use crate::config::SchedulerKind;
use crate::fit::Fit;
use crate::job::{Job, plan_limit};
use crate::queue::QueueRecord;

/// Conservative backfilling plans this far ahead, whatever bf_window says.
const CONSERVATIVE_WINDOW: i64 = 10 * 365 * 86_400;

/// The end of the window a pass starting at `now` plans in: bf_window, or ten years when
/// conservative.
pub(super) fn window_end(kind: SchedulerKind, params: &SchedulerParams, now: i64) -> i64 {
    if kind == SchedulerKind::Conservative {
        now + CONSERVATIVE_WINDOW
    } else {
        now + params.bf_window as i64 * 60
    }
}

/// A planned start: when, and the licenses and HRES it holds over its run (its nodes are
/// [`PlanningBuffers::chosen`]).
#[derive(Clone, Debug)]
pub(super) struct WillRun {
    pub start: i64,
    pub licenses: Vec<(usize, i64)>,
    pub hres: Vec<(usize, i64)>,
}

/// What decides a plain job's candidate release times: partition, CPUs and memory per node,
/// and whether it takes whole nodes (jobs with GRES, features or a reservation are not plain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    partition: usize,
    cpus_per_node: u32,
    memory_per_node_mb: u64,
    exclusive: bool,
    share_rows: u32,
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
    pub(super) chosen: NodeBitmap,
    /// The storage of the pass's [`Releases`].
    pub(super) releases: ReleaseBuffers,
    /// Plain jobs this pass found no start in the window for, by shape, nodes and time limit
    /// (see [`Unplannable`]).
    unplannable: Vec<Unplannable>,
    /// A job's candidate nodes, those that cannot take a share now, and those due by a
    /// release time, while `freed` is built.
    candidates: NodeBitmap,
    later: NodeBitmap,
    due: NodeBitmap,
}

/// What one job asks of a plan, read from it once per will-run.
struct Needs<'j> {
    own: Option<usize>,
    limit: i64,
    has_time_limit: bool,
    min_nodes: usize,
    per_node_cpus: u32,
    mem: u64,
    gres: &'j [(u32, u32)],
    exclusive: bool,
    /// Sharing rows the job may use in the partition (`OverSubscribe`), 0 for none.
    share_rows: u32,
    licenses: &'j [(usize, u32)],
    demands: &'j [Demand],
    shape: Shape,
    /// No reservation, GRES or features: the candidate release times follow from the shape.
    plain: bool,
    /// Plain, without licenses or HRES, and remembered when it finds no start.
    simple: bool,
}

impl<'j> Needs<'j> {
    fn of(job: &'j Job, rec: &QueueRecord, share_rows: u32, remember_unplannable: bool) -> Self {
        let own = job.reservation;
        let min_nodes = job.fewest_nodes();
        let per_node_cpus = job.cpus_per_node(min_nodes);
        let mem = job.spec.memory_per_node_mb;
        let gres = &job.gres_per_node[..];
        let exclusive = job.spec.exclusive;
        let licenses = &job.demand.licenses[..];
        let demands = &job.demand.hres[..];
        let plain = own.is_none()
            && gres.is_empty()
            && job.gres_types.is_empty()
            && job.spec.constraint.is_none();
        Needs {
            own,
            limit: plan_limit(job.time_limit) as i64,
            has_time_limit: job.time_limit.is_some(),
            min_nodes: min_nodes as usize,
            per_node_cpus,
            mem,
            gres,
            exclusive,
            share_rows,
            licenses,
            demands,
            shape: Shape {
                partition: rec.partition.index(),
                cpus_per_node: per_node_cpus,
                memory_per_node_mb: mem,
                exclusive,
                share_rows,
            },
            plain,
            simple: plain && licenses.is_empty() && demands.is_empty() && remember_unplannable,
        }
    }

    /// What a later job is compared with when this one finds no start.
    fn unplannable(&self) -> Unplannable {
        Unplannable {
            shape: self.shape,
            min_nodes: self.min_nodes,
            limit: self.limit,
        }
    }
}

/// What every job planned in one backfill pass shares: the pass's times, the shape the release
/// profile was last built for, and buffers reused from job to job.
pub(super) struct Planning<'b> {
    now: i64,
    window_end: i64,
    res: i64,
    with_licenses: bool,
    remember_unplannable: bool,
    /// The job shape `buffers.freed` was built for while it is still true (no start since): jobs
    /// of the same shape share it, as most jobs of a trace do.
    from_shape: Option<Shape>,
    pub buffers: &'b mut PlanningBuffers,
}

impl<'b> Planning<'b> {
    /// A pass's planning over `[now, window_end)` at resolution `res`; `with_licenses` plans
    /// licenses and HRES too (bf_licenses).
    pub fn new(
        (now, window_end, res): (i64, i64, i64),
        with_licenses: bool,
        remember_unplannable: bool,
        buffers: &'b mut PlanningBuffers,
    ) -> Self {
        buffers.unplannable.clear();
        Planning {
            now,
            window_end,
            res,
            with_licenses,
            remember_unplannable,
            from_shape: None,
            buffers,
        }
    }

    /// The pass's resolution: planned starts and ends are rounded to it.
    pub fn res(&self) -> i64 {
        self.res
    }

    /// A job started: release times moved, so no release profile is reused.
    pub fn forget_shape(&mut self) {
        self.from_shape = None;
    }

    /// The earliest time after `now` at which the job fits on whole nodes that no planned job
    /// holds (select's WILL_RUN): nodes count once every job on them has ended, or at once if
    /// what is free there already holds one node's share. The nodes are left in
    /// [`PlanningBuffers::chosen`].
    pub fn will_run(
        &mut self,
        fit: Fit<'_>,
        hres: &mut Option<Box<dyn HresPolicy + Send>>,
        rec: &QueueRecord,
        map: &NodeSpaceMap,
        rel: &mut Releases,
        usable: &NodeBitmap,
    ) -> Option<WillRun> {
        let job = &fit.jobs[&rec.job];
        let share_rows = fit.parts[rec.partition.index()].share_rows(job);
        let needs = Needs::of(job, rec, share_rows, self.remember_unplannable);
        if needs.simple
            && self
                .buffers
                .unplannable
                .iter()
                .any(|u| u.covers(needs.shape, needs.min_nodes, needs.limit))
        {
            return None;
        }
        if !needs.plain || self.from_shape != Some(needs.shape) {
            let (now, res) = (self.now, self.res);
            self.buffers
                .profile_releases(fit, job, rec, &needs, rel, usable, (now, res));
            self.from_shape = needs.plain.then_some(needs.shape);
        }
        let found = self.earliest_start(fit, hres, &needs, map, rel);
        if found.is_none() && needs.simple {
            self.buffers.unplannable.push(needs.unplannable());
        }
        found
    }

    /// The first candidate time at which enough whole nodes, licenses and HRES are free over
    /// the job's run, from the release profile in the buffers.
    fn earliest_start(
        &mut self,
        fit: Fit<'_>,
        hres: &mut Option<Box<dyn HresPolicy + Send>>,
        needs: &Needs<'_>,
        map: &NodeSpaceMap,
        rel: &Releases,
    ) -> Option<WillRun> {
        let (now, window_end, with_licenses) = (self.now, self.window_end, self.with_licenses);
        let PlanningBuffers {
            freed,
            release_times,
            times,
            avail,
            chosen,
            ..
        } = &mut *self.buffers;
        // Before this time fewer than `min_nodes` candidates could take a share.
        let &(enough_at, ..) = freed.get(freed.partition_point(|f| f.1 < needs.min_nodes))?;
        // Start times are whole seconds in `[earliest, window_end)`.
        let earliest = (now + 1).max(enough_at);
        let window = (now, earliest, window_end);
        let candidates = candidate_times(
            fit,
            needs,
            rel,
            with_licenses,
            map,
            release_times,
            times,
            window,
        );
        let mut scan = Scan::default();
        for t in candidates {
            if !scan.whole_nodes_at(fit, needs, freed, map, t, avail) {
                continue;
            }
            let end = t + needs.limit;
            let mut lic_plan = Vec::new();
            // The HRES layers the job's charge is checked against, when it has demands.
            let mut hres_layers = None;
            if with_licenses {
                let Some(LicensePlan {
                    licenses: plan,
                    hres_layers: layers,
                }) = licenses_over(fit, hres, needs, map, rel, (t, end), avail)
                else {
                    continue;
                };
                lic_plan = plan;
                hres_layers = layers;
            }
            pick_nodes(fit.nodes.by_weight(), avail, needs.min_nodes, chosen);
            let mut hres_plan = Vec::new();
            if let Some(layers) = hres_layers {
                let Some(plan) = charge_hres(hres, needs.demands, &layers, chosen) else {
                    continue;
                };
                hres_plan = plan;
            }
            return Some(WillRun {
                start: t,
                licenses: lic_plan,
                hres: hres_plan,
            });
        }
        None
    }
}

impl PlanningBuffers {
    /// Builds the job's release profile: for each time by which more of its candidate nodes
    /// could take one node's share (now for those that can already, else once every job on
    /// them has ended), that time with how many and which (`freed`), and the times rounded up
    /// to `res` (`release_times`).
    #[allow(clippy::too_many_arguments)]
    fn profile_releases(
        &mut self,
        fit: Fit<'_>,
        job: &Job,
        rec: &QueueRecord,
        needs: &Needs<'_>,
        rel: &mut Releases,
        usable: &NodeBitmap,
        (now, res): (i64, i64),
    ) {
        self.split_candidates(fit, job, rec, needs, usable);
        rel.sort_by_release();
        self.fill_freed(rel, (now, res));
    }

    /// Sets `candidates` to the usable nodes of the record's partition (and reservation) that
    /// could take one node's share of the job, `due` to those that can now, and `later` to
    /// the others, which can once every job on them has ended.
    fn split_candidates(
        &mut self,
        fit: Fit<'_>,
        job: &Job,
        rec: &QueueRecord,
        needs: &Needs<'_>,
        usable: &NodeBitmap,
    ) {
        let PlanningBuffers {
            candidates: cand,
            later,
            due: nodes,
            ..
        } = self;
        let (per_node_cpus, mem, gres) = (needs.per_node_cpus, needs.mem, needs.gres);
        let table = fit.nodes.table();
        let kinds = table.gres_kinds.len();
        cand.clone_from(&fit.parts[rec.partition.index()].nodes);
        cand.intersect_with(usable);
        if let Some(r) = needs.own.filter(|r| !fit.resv.get(*r).nodes.is_empty()) {
            cand.intersect_with(&fit.resv.get(r).nodes);
        }
        if job.spec.constraint.is_some() || !job.gres_types.is_empty() || job.spec.lists_nodes() {
            cand.intersect_with(&fit.static_mask(job, rec.partition));
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
            if needs.exclusive {
                fit.nodes.is_idle(i)
            } else {
                table.free_cpus_for(i, needs.share_rows) >= per_node_cpus
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
        if !(gres.is_empty() && fit.nodes.every_node_has(per_node_cpus, mem)) {
            cand.retain(|n| fits_config(n as usize));
        }
        nodes.clone_from(cand);
        nodes.intersect_with(fit.nodes.open_nodes());
        nodes.retain(|n| fits_now(n as usize));
        later.clone_from(cand);
        later.subtract(nodes);
    }

    /// Fills `freed` and `release_times` from `due` (the nodes that can take a share now) and
    /// `later` in the pass's release order.
    fn fill_freed(&mut self, rel: &Releases, (now, res): (i64, i64)) {
        let PlanningBuffers {
            freed,
            release_times,
            later,
            due: nodes,
            ..
        } = self;
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
    }
}

/// Where a job's scan of candidate times stands: what only moves forward as times ascend.
#[derive(Default)]
struct Scan {
    /// A slice that alone left too few nodes at an earlier time: later times that overlap it
    /// are skipped while it still does, without narrowing (see `narrow_between`).
    blocker: Option<map::Blocker>,
    /// How many entries of `freed` are due by the time being checked.
    due: usize,
    /// Where the map's slices ending after the last time narrowed begin.
    cursor: usize,
}

impl Scan {
    /// Sets `avail` to the job's candidate nodes free of planned jobs and other reservations
    /// over its run from `t`, and tells whether they are enough.
    #[inline]
    fn whole_nodes_at(
        &mut self,
        fit: Fit<'_>,
        needs: &Needs<'_>,
        freed: &[(i64, usize, NodeBitmap)],
        map: &NodeSpaceMap,
        t: i64,
        avail: &mut NodeBitmap,
    ) -> bool {
        // The nodes that could take a share by `t`.
        while freed.get(self.due).is_some_and(|(at, ..)| *at <= t) {
            self.due += 1;
        }
        let Some((_, count, due_nodes)) = self.due.checked_sub(1).map(|i| &freed[i]) else {
            return false;
        };
        let min_nodes = needs.min_nodes;
        if *count < min_nodes {
            return false;
        }
        let end = t + needs.limit;
        if self
            .blocker
            .is_some_and(|b| map.blocks(b, due_nodes, t, end, min_nodes))
        {
            return false;
        }
        if let Some(r) = needs.own {
            let resv = fit.resv.get(r);
            if t < resv.start || (needs.has_time_limit && end > resv.end) {
                return false;
            }
        }
        if let Err(found) =
            map.narrow_between(due_nodes, avail, (t, end), min_nodes, &mut self.cursor)
        {
            self.blocker = found;
            return false;
        }
        if !fit.resv.is_empty() {
            avail.subtract(&fit.resv.excluded_nodes(needs.own, t, end));
        }
        avail.len() >= min_nodes
    }
}

/// The job's candidate start times in `[earliest, window_end)` (`window` is now, earliest and
/// the window's end): release times and slice starts, each ascending, merged as the scan asks
/// for them (a job mostly finds its start at one of the first few), unless rarer sources
/// (reservations, license and HRES releases) add times; those are collected and sorted.
#[allow(clippy::too_many_arguments)]
fn candidate_times<'b>(
    fit: Fit<'_>,
    needs: &Needs<'_>,
    rel: &Releases,
    with_licenses: bool,
    map: &'b NodeSpaceMap,
    release_times: &'b [i64],
    times: &'b mut Vec<i64>,
    (now, earliest, window_end): (i64, i64, i64),
) -> CandidateTimes<'b> {
    let keep = |t: i64| t >= earliest && t < window_end;
    let mut merged = MergedTimes::within(release_times, map, earliest, window_end);
    let rare = !fit.resv.is_empty()
        || needs.own.is_some()
        || (with_licenses && !(rel.licenses.is_empty() && rel.hres.is_empty()));
    if !rare {
        return CandidateTimes::Merged(merged);
    }
    times.clear();
    times.extend(&mut merged);
    times.extend(fit.resv.boundaries(now, window_end));
    times.extend(needs.own.map(|r| fit.resv.get(r).start));
    if with_licenses {
        times.extend(rel.licenses.iter().map(|(t, ..)| *t));
        times.extend(rel.hres.iter().map(|(t, ..)| *t));
    }
    times.retain(|&t| keep(t));
    times.sort_unstable();
    times.dedup();
    let times: &'b Vec<i64> = times;
    CandidateTimes::Collected(times.iter().copied())
}

/// What a job holds of licenses over its run, and the HRES layers its charge is checked against
/// when it has HRES demands.
struct LicensePlan {
    licenses: Vec<(usize, i64)>,
    hres_layers: Option<Vec<HresLayer>>,
}

/// Whether the job's licenses fit over `[t, end)` beside running and planned jobs and what
/// reservations hold back, and for a job with HRES demands, whether enough of `avail` is
/// eligible (narrowing it). If so, the licenses the job holds over its run and the HRES
/// layers its charge is checked against.
fn licenses_over(
    fit: Fit<'_>,
    hres: &mut Option<Box<dyn HresPolicy + Send>>,
    needs: &Needs<'_>,
    map: &NodeSpaceMap,
    rel: &Releases,
    (t, end): (i64, i64),
    avail: &mut NodeBitmap,
) -> Option<LicensePlan> {
    let held = map.licenses_between(t, end);
    let fits = needs.licenses.iter().all(|&(i, c)| {
        let still_used: i64 = rel
            .licenses
            .iter()
            .filter(|(e, l, _)| *l == i && *e > t)
            .map(|(_, _, c)| *c)
            .sum();
        let reserved = i64::from(fit.lic.total(i))
            - i64::from(fit.license_free(needs.own, i, t, end))
            - i64::from(fit.lic.used(i));
        i64::from(fit.lic.total(i)) - still_used - reserved.max(0) - held[i] >= i64::from(c)
    });
    if !fits {
        return None;
    }
    let lic_plan = needs
        .licenses
        .iter()
        .map(|&(i, c)| (i, i64::from(c)))
        .collect();
    if needs.demands.is_empty() {
        return Some(LicensePlan {
            licenses: lic_plan,
            hres_layers: None,
        });
    }
    let mut layers = fit.hres_layers_for(needs.own, t, end);
    for (e, l, a) in &rel.hres {
        if *e <= t {
            layers[*l].used -= a;
        }
    }
    for (layer, h) in layers.iter_mut().zip(map.hres_between(t, end)) {
        layer.used += h;
    }
    let hres = hres.as_mut().expect("HRES jobs need a policy");
    hres.begin_pass(fit.lic.hres_resources(), &layers);
    let eligible = hres.eligible(needs.demands, &avail.words);
    avail.intersect_with(&NodeBitmap::from_words(eligible));
    if avail.len() < needs.min_nodes {
        return None;
    }
    Some(LicensePlan {
        licenses: lic_plan,
        hres_layers: Some(layers),
    })
}

/// The HRES the job's demands cost on `chosen`, per layer, if the policy's charge fits `layers`.
fn charge_hres(
    hres: &mut Option<Box<dyn HresPolicy + Send>>,
    demands: &[Demand],
    layers: &[HresLayer],
    chosen: &NodeBitmap,
) -> Option<Vec<(usize, i64)>> {
    let list: Vec<u32> = chosen.iter().collect();
    let hres = hres.as_mut().expect("HRES jobs need a policy");
    match hres.charge(demands, &list) {
        Ok(c) if check_charges(layers, &c).is_ok() => Some(merge_charges(&c)),
        _ => None,
    }
}

/// `t` rounded down to a multiple of `res`.
pub(super) fn floor_to(t: i64, res: i64) -> i64 {
    t.div_euclid(res) * res
}

/// `t` rounded up to a multiple of `res`.
pub(super) fn ceil_to(t: i64, res: i64) -> i64 {
    (t + res - 1).div_euclid(res) * res
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

/// Charges summed per HRES layer.
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
}
