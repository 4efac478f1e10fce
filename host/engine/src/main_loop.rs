//! Slurm's main scheduling loop (`_schedule`): strict queue order, and once a job of a partition is
//! left pending for resources, the rest of that partition waits for this cycle.

use sluice_policy::{JobRequest, NodeBitmap, PlaceMode, Power, hres::check_charges};

use crate::config::SchedulerKind;
use crate::engine::Engine;
use crate::event::{Event, Loop};
use crate::job::{Allocation, JobId, JobState, Reason, plan_limit};
use crate::pass_buffers::{MainPassBuffers, Plan, StartBuffers};
use crate::queue::QueueRecord;
use crate::stats::PassStats;

impl Engine {
    /// Pending jobs that may be tried now (not held, begin time passed, dependencies met), in id order.
    pub(crate) fn collect_eligible(&mut self, now: i64) -> Vec<JobId> {
        let ids: Vec<JobId> = self.pending.iter().copied().collect();
        ids.into_iter()
            .filter(|&id| self.refresh_job(id, now))
            .collect()
    }

    /// The sorted queue of eligible jobs, or `None` when the priority answer was refused
    /// ([`crate::priority::PriorityPass::order`]).
    pub(crate) fn build_queue(&mut self, now: i64) -> Option<Vec<QueueRecord>> {
        let eligible = self.collect_eligible(now);
        self.priority_pass().order(&eligible, now)
    }

    /// The start both loops share: the sorted queue, and the selection policy due its node table
    /// at the pass's first placement (a pass that places nothing costs the policy nothing). `Err`
    /// is the whole pass's record when there is nothing to do or the priority answer was refused.
    ///
    /// `sorted` is the queue a main-loop pass of the same tick sorted, for the backfill pass
    /// right after it: less the jobs that pass started it is what building the queue again
    /// would give, since nothing else can have changed in between (eligibility follows holds,
    /// begin times and ended jobs; the order, stored priorities).
    pub(crate) fn open_pass(
        &mut self,
        now: i64,
        sorted: Option<Vec<QueueRecord>>,
    ) -> Result<Vec<QueueRecord>, PassStats> {
        let records = match sorted {
            Some(mut records) => {
                records.retain(|r| self.jobs[&r.job].is_pending());
                records
            }
            None => self.build_queue(now).ok_or(PassStats {
                stopped_by: Some("priority answer refused"),
                ..PassStats::default()
            })?,
        };
        if records.is_empty() {
            return Err(PassStats::default());
        }
        self.selection_begun = false;
        Ok(records)
    }

    /// One main-loop pass. `full` is the periodic run over the whole queue; otherwise the
    /// event-triggered run that stops after `default_queue_depth` jobs. Returns the queue it
    /// sorted, for a backfill pass in the same tick ([`Engine::open_pass`]).
    pub(crate) fn run_main_pass(&mut self, full: bool) -> Option<Vec<QueueRecord>> {
        self.sched_requested = false;
        let now = self.clock.now();
        let started_at = self.clock.micros();
        let params = self.pass_params();
        let fcfs = self.config.scheduler == SchedulerKind::Fcfs;
        let records = match self.open_pass(now, None) {
            Ok(records) => records,
            Err(stats) => {
                self.last_main_stats = stats;
                return None;
            }
        };
        let mut stats = PassStats {
            queued: records.len(),
            ..PassStats::default()
        };
        let mut buffers = std::mem::take(&mut self.main_pass_buffers);
        let MainPassBuffers {
            usable,
            plan,
            failed_part,
            part_tested,
            start,
        } = &mut buffers;
        // Owned: the pass changes `self` while it holds this.
        usable.clone_from(self.nodes.usable_nodes());
        plan.exclude.clear_to(self.nodes.len());
        failed_part.clear();
        failed_part.resize(self.parts.len(), false);
        part_tested.clear();
        part_tested.resize(self.parts.len(), 0);
        let depth = if full {
            usize::MAX
        } else {
            params.default_queue_depth as usize
        };
        let budget = params.max_sched_time.saturating_mul(1_000_000);

        for rec in &records {
            if stats.tested >= depth {
                stats.stopped_by = Some("default_queue_depth");
                break;
            }
            if self.clock.micros().saturating_sub(started_at) >= budget {
                stats.stopped_by = Some("max_sched_time");
                break;
            }
            if params.sched_max_job_start > 0
                && stats.started >= params.sched_max_job_start as usize
            {
                stats.stopped_by = Some("sched_max_job_start");
                break;
            }
            if !self.jobs[&rec.job].is_pending() {
                continue;
            }
            let p = rec.partition.index();
            if failed_part[p] {
                self.jobs.get_mut(&rec.job).expect("queued job").reason = Reason::Priority;
                continue;
            }
            if params.partition_job_depth > 0 && part_tested[p] >= params.partition_job_depth {
                continue;
            }
            part_tested[p] += 1;
            stats.tested += 1;
            match self.try_start(rec, now, usable, plan, Loop::Main, start) {
                Ok(()) => stats.started += 1,
                Err(reason) => {
                    self.jobs.get_mut(&rec.job).expect("queued job").reason = reason;
                    if fcfs {
                        // Plain FCFS: nothing behind the first waiting job may start.
                        for r in &records {
                            let job = self.jobs.get_mut(&r.job).expect("queued job");
                            if job.is_pending() && r.job != rec.job && job.reason == Reason::None {
                                job.reason = Reason::Priority;
                            }
                        }
                        stats.stopped_by = Some("fcfs");
                        break;
                    }
                    if matches!(reason, Reason::Resources | Reason::ReqNodeNotAvail) {
                        // fail_by_part: the partition's nodes are off limits for the rest of the cycle.
                        failed_part[p] = true;
                        plan.exclude.union_with(&self.parts[p].nodes);
                    }
                }
            }
        }
        self.last_main_stats = stats;
        self.main_pass_buffers = buffers;
        Some(records)
    }

    /// Sets `cand` to the nodes the job may use now: its partition's usable nodes, its
    /// reservation's, minus other reservations overlapping its run, `exclude`, and nodes lacking
    /// its features or GRES types.
    pub(crate) fn candidates(
        &self,
        rec: &QueueRecord,
        from: i64,
        to: i64,
        usable: &NodeBitmap,
        exclude: &NodeBitmap,
        cand: &mut NodeBitmap,
    ) {
        let job = &self.jobs[&rec.job];
        cand.clone_from(&self.parts[rec.partition.index()].nodes);
        cand.intersect_with(usable);
        if let Some(r) = job
            .reservation
            .filter(|r| !self.resv.get(*r).nodes.is_empty())
        {
            // A reservation of licenses only leaves the choice of nodes open.
            cand.intersect_with(&self.resv.get(r).nodes);
        }
        if !self.resv.is_empty() {
            cand.subtract(&self.resv.excluded_nodes(job.reservation, from, to));
        }
        cand.subtract(exclude);
        if job.spec.constraint.is_some() || !job.gres_types.is_empty() {
            cand.intersect_with(&self.fit().static_mask(job, rec.partition));
        }
        if !job.gres_types.is_empty() {
            // The node table counts GRES per name; which type is free only the device state knows.
            let busy: Vec<u32> = cand
                .iter()
                .filter(|&n| !self.fit().gres_fits_now(job, n as usize))
                .collect();
            for n in busy {
                cand.remove(n);
            }
        }
    }

    /// Makes `req` the placement request for a job on `candidates`, reusing its storage.
    fn fill_job_request(&self, id: JobId, candidates: &NodeBitmap, req: &mut JobRequest) {
        let job = &self.jobs[&id];
        // Every field named, so that a field added to the request cannot be left stale here.
        let JobRequest {
            job_id,
            min_nodes,
            max_nodes,
            tasks,
            cpus_per_task,
            memory_per_node_mb,
            gres_per_node,
            exclusive,
            candidates: words,
        } = req;
        *job_id = id;
        *min_nodes = job.spec.min_nodes.max(1);
        *max_nodes = job.max_nodes();
        *tasks = job.spec.tasks.max(1);
        *cpus_per_task = job.spec.cpus_per_task.max(1);
        *memory_per_node_mb = job.spec.memory_per_node_mb;
        gres_per_node.clone_from(&job.gres_per_node);
        *exclusive = job.spec.exclusive;
        words.clone_from(&candidates.words);
    }

    /// Tries to start one queue record now on nodes not in `exclude`, building its candidates
    /// and request in `buffers`; on success the job runs (or configures) and a `Started` event
    /// is queued. On failure, the reason it stays pending.
    pub(crate) fn try_start(
        &mut self,
        rec: &QueueRecord,
        now: i64,
        usable: &NodeBitmap,
        plan: &Plan,
        by: Loop,
        buffers: &mut StartBuffers,
    ) -> Result<(), Reason> {
        let StartBuffers {
            candidates: cand,
            request: req,
        } = buffers;
        let id = rec.job;
        let (own, limit, min_nodes, licenses, demands) = {
            let job = &self.jobs[&id];
            (
                job.reservation,
                job.time_limit,
                job.spec.min_nodes.max(1),
                job.demand.licenses.clone(),
                job.demand.hres.clone(),
            )
        };
        let end = now + plan_limit(limit) as i64;
        if let Some(r) = own {
            let resv = self.resv.get(r);
            if !resv.active_at(now) || (limit.is_some() && end > resv.end) {
                return Err(Reason::Reservation);
            }
        }
        for &(i, c) in &licenses {
            let held = plan.lic_held.get(i).copied().unwrap_or(0);
            if i64::from(self.fit().license_free(own, i, now, end)) - held < i64::from(c) {
                return Err(Reason::Licenses);
            }
        }
        self.candidates(rec, now, end, usable, &plan.exclude, cand);
        if (cand.len() as u32) < min_nodes {
            return Err(Reason::Resources);
        }
        let mut layers = if demands.is_empty() {
            Vec::new()
        } else {
            self.fit().hres_layers_for(own, now, end)
        };
        for (layer, held) in layers.iter_mut().zip(&plan.hres_held) {
            layer.used += held;
        }
        if !demands.is_empty() {
            let hres = self
                .policies
                .hres
                .as_mut()
                .expect("HRES jobs are refused at submit without a policy");
            hres.begin_pass(self.lic.hres_resources(), &layers);
            let allowed = hres.eligible(&demands, &cand.words);
            cand.intersect_with(&NodeBitmap::from_words(allowed));
            if (cand.len() as u32) < min_nodes {
                return Err(Reason::Licenses);
            }
        }
        self.fill_job_request(id, cand, req);
        if !self
            .nodes
            .table()
            .could_fit_among(req, &self.nodes.open_nodes().words)
        {
            // No placement could pass the contract checks: the policy would answer none.
            return Err(Reason::Resources);
        }
        if !self.selection_begun {
            self.policies.selection.begin_pass(self.nodes.table());
            self.selection_begun = true;
        }
        let Some(placement) = self.policies.selection.place(req, PlaceMode::Allocate) else {
            return Err(Reason::Resources);
        };
        if self.nodes.table().check_placement(req, &placement).is_err() {
            // The policy's table now disagrees with ours; hand it ours again.
            self.faults.selection += 1;
            self.policies.selection.begin_pass(self.nodes.table());
            return Err(Reason::Resources);
        }
        let charges = if demands.is_empty() {
            Vec::new()
        } else {
            let hres = self.policies.hres.as_mut().expect("checked above");
            match hres.charge(&demands, &placement.nodes) {
                Ok(charges) if check_charges(&layers, &charges).is_ok() => charges,
                answer => {
                    if answer.is_ok() {
                        self.faults.hres += 1;
                    }
                    self.policies.selection.release(id, &placement);
                    return Err(Reason::Licenses);
                }
            }
        };
        let picks = match self.pick_gres(id, &placement) {
            Ok(picks) => picks,
            Err(reason) => {
                self.policies.selection.release(id, &placement);
                return Err(reason);
            }
        };
        // Devices and CPUs first, while the placement is still at hand (the start keeps it).
        self.commit_gres(id, &placement, picks);
        self.commit_start(id, rec, placement, licenses, charges, now, by);
        Ok(())
    }

    /// Commits a start: node resources, licenses and HRES are taken and the job's state set.
    #[allow(clippy::too_many_arguments)]
    fn commit_start(
        &mut self,
        id: JobId,
        rec: &QueueRecord,
        placement: sluice_policy::Placement,
        licenses: Vec<(usize, u32)>,
        charges: Vec<sluice_policy::Charge>,
        now: i64,
        by: Loop,
    ) {
        self.nodes.commit(id, &placement);
        self.lic.take(&licenses);
        self.lic.charge_hres(&charges);
        let mut to_boot = Vec::new();
        let mut booting = false;
        for &n in &placement.nodes {
            let node = sluice_cluster::NodeId(n);
            match self.nodes.node(node).power {
                Power::Up => {}
                Power::PoweringUp => booting = true,
                Power::PoweredDown => {
                    booting = true;
                    self.nodes.set_power(node, Power::PoweringUp);
                    to_boot.push(node);
                }
            }
        }
        let nodes = placement
            .nodes
            .iter()
            .map(|n| sluice_cluster::NodeId(*n))
            .collect();
        let job = self.jobs.get_mut(&id).expect("starting a known job");
        job.state = if booting {
            JobState::Configuring
        } else {
            JobState::Running
        };
        job.reason = Reason::None;
        job.start_time = Some(now);
        job.end_time = job.time_limit.map(|l| now + l as i64);
        job.alloc = Some(Allocation {
            partition: rec.partition,
            placement,
            licenses,
            hres: charges,
            reservation: job.reservation,
        });
        self.pending.remove(id);
        self.running.insert(id);
        self.outbox.push(Event::Started {
            job: id,
            partition: rec.partition,
            nodes,
            time: now,
            by,
        });
        if !to_boot.is_empty() {
            self.outbox.push(Event::PowerUp { nodes: to_boot });
        }
    }
}
