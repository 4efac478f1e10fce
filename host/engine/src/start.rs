//! Owns no state: a job's start, shared by both loops, the one place a start changes state.
//!
//! It asks the selection, HRES and GRES policies, checks their answers, and only then changes
//! node, license, HRES and job state.

use sluice_policy::{
    Charge, Demand, HresLayer, JobRequest, NodeBitmap, PlaceMode, Placement, hres::check_charges,
};

use crate::engine::Engine;
use crate::event::{Event, Loop};
use crate::job::{Allocation, JobId, JobState, Reason, plan_limit};
use crate::pass_buffers::{Plan, StartBuffers};
use crate::queue::QueueRecord;
use sluice_cluster::PartitionId;

impl Engine {
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
        if job.spec.constraint.is_some() || !job.gres_types.is_empty() || job.spec.lists_nodes() {
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
    fn fill_job_request(
        &self,
        id: JobId,
        partition: PartitionId,
        candidates: &NodeBitmap,
        req: &mut JobRequest,
    ) {
        let job = &self.jobs[&id];
        // Every field named, so that a field added to the request cannot be left stale here.
        let JobRequest {
            job_id,
            min_nodes,
            max_nodes,
            tasks,
            cpus_per_task,
            tasks_per_node,
            memory_per_node_mb,
            gres_per_node,
            exclusive,
            share_rows,
            candidates: words,
        } = req;
        *job_id = id;
        *min_nodes = job.spec.min_nodes.max(1);
        *max_nodes = job.max_nodes();
        *tasks = job.spec.tasks.max(1);
        *cpus_per_task = job.spec.cpus_per_task.max(1);
        *tasks_per_node = job.spec.tasks_per_node;
        *memory_per_node_mb = job.spec.memory_per_node_mb;
        gres_per_node.clone_from(&job.gres_per_node);
        *exclusive = job.spec.exclusive;
        *share_rows = self.parts[partition.index()].share_rows(job);
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
        let (own, limit, licenses, demands) = self.start_needs(id);
        let end = now + plan_limit(limit) as i64;
        self.admits_start(own, limit.is_some(), &licenses, plan, (now, end))?;
        let layers = self.start_candidates(rec, &demands, usable, plan, (now, end), cand)?;
        self.fill_job_request(id, rec.partition, cand, req);
        let placement = self.ask_placement(req, PlaceMode::Allocate)?;
        if let Err(reason) = self.power_admits(&placement) {
            self.policies.selection.release(id, &placement);
            return Err(reason);
        }
        let charges = match self.charge_start(&demands, &layers, &placement) {
            Ok(charges) => charges,
            Err(reason) => {
                self.policies.selection.release(id, &placement);
                return Err(reason);
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

    /// Where the record could start now on nodes not in `plan.exclude`, asking the selection
    /// policy in test mode, so that nothing changes (`--test-only`; GRES devices and HRES
    /// charges are not picked).
    pub(crate) fn test_start(
        &mut self,
        rec: &QueueRecord,
        now: i64,
        usable: &NodeBitmap,
        plan: &Plan,
        buffers: &mut StartBuffers,
    ) -> Result<Placement, Reason> {
        let StartBuffers {
            candidates: cand,
            request: req,
        } = buffers;
        let (own, limit, licenses, demands) = self.start_needs(rec.job);
        let end = now + plan_limit(limit) as i64;
        self.admits_start(own, limit.is_some(), &licenses, plan, (now, end))?;
        self.start_candidates(rec, &demands, usable, plan, (now, end), cand)?;
        self.fill_job_request(rec.job, rec.partition, cand, req);
        self.ask_placement(req, PlaceMode::Test)
    }

    /// What a start checks besides nodes: the job's reservation, time limit, licenses and
    /// HRES demands.
    #[inline]
    fn start_needs(
        &self,
        id: JobId,
    ) -> (Option<usize>, Option<u64>, Vec<(usize, u32)>, Vec<Demand>) {
        let job = &self.jobs[&id];
        (
            job.reservation,
            job.time_limit,
            job.demand.licenses.clone(),
            job.demand.hres.clone(),
        )
    }

    /// Whether a job in reservation `own` may start over `[now, end)` as far as its
    /// reservation's window and its licenses go (beside what `plan` holds back).
    #[inline]
    fn admits_start(
        &self,
        own: Option<usize>,
        has_time_limit: bool,
        licenses: &[(usize, u32)],
        plan: &Plan,
        (now, end): (i64, i64),
    ) -> Result<(), Reason> {
        if let Some(r) = own {
            let resv = self.resv.get(r);
            if !resv.active_at(now) || (has_time_limit && end > resv.end) {
                return Err(Reason::Reservation);
            }
        }
        let fit = self.fit();
        for &(i, c) in licenses {
            let held = plan.lic_held.get(i).copied().unwrap_or(0);
            if i64::from(fit.license_free(own, i, now, end)) - held < i64::from(c) {
                return Err(Reason::Licenses);
            }
        }
        Ok(())
    }

    /// Sets `cand` to the nodes the record may start on over `[now, end)` ([`Engine::candidates`]),
    /// narrowed for a job with HRES demands to those its HRES policy finds eligible; gives the
    /// HRES layers its charge is checked against (empty without demands).
    #[inline]
    fn start_candidates(
        &mut self,
        rec: &QueueRecord,
        demands: &[Demand],
        usable: &NodeBitmap,
        plan: &Plan,
        (now, end): (i64, i64),
        cand: &mut NodeBitmap,
    ) -> Result<Vec<HresLayer>, Reason> {
        let (own, min_nodes) = {
            let job = &self.jobs[&rec.job];
            (job.reservation, job.fewest_nodes())
        };
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
            let allowed = hres.eligible(demands, &cand.words);
            cand.intersect_with(&NodeBitmap::from_words(allowed));
            if (cand.len() as u32) < min_nodes {
                return Err(Reason::Licenses);
            }
        }
        Ok(layers)
    }

    /// Asks the selection policy to place `req` (handing it this pass's node table first), and
    /// checks its answer against the contract.
    #[inline]
    fn ask_placement(&mut self, req: &JobRequest, mode: PlaceMode) -> Result<Placement, Reason> {
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
        let Some(placement) = self.policies.selection.place(req, mode) else {
            return Err(Reason::Resources);
        };
        if self.nodes.table().check_placement(req, &placement).is_err() {
            // The policy's table now disagrees with ours; hand it ours again.
            self.faults.selection += 1;
            self.policies.selection.begin_pass(self.nodes.table());
            return Err(Reason::Resources);
        }
        Ok(placement)
    }

    /// What the job's HRES demands cost on its placement, if the HRES policy's answer fits
    /// `layers` (none without demands).
    #[inline]
    fn charge_start(
        &mut self,
        demands: &[Demand],
        layers: &[HresLayer],
        placement: &Placement,
    ) -> Result<Vec<Charge>, Reason> {
        if demands.is_empty() {
            return Ok(Vec::new());
        }
        let hres = self.policies.hres.as_mut().expect("checked above");
        match hres.charge(demands, &placement.nodes) {
            Ok(charges) if check_charges(layers, &charges).is_ok() => Ok(charges),
            answer => {
                if answer.is_ok() {
                    self.faults.hres += 1;
                }
                Err(Reason::Licenses)
            }
        }
    }

    /// Commits a start: node resources, licenses and HRES are taken and the job's state set.
    #[allow(clippy::too_many_arguments)]
    fn commit_start(
        &mut self,
        id: JobId,
        rec: &QueueRecord,
        placement: Placement,
        licenses: Vec<(usize, u32)>,
        charges: Vec<Charge>,
        now: i64,
        by: Loop,
    ) {
        self.nodes.commit(id, &placement);
        self.lic.take(&licenses);
        self.lic.charge_hres(&charges);
        let booting = self.power_allocated(id, rec.partition, &placement.nodes, now);
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
        self.count_start(id, rec.partition);
        self.outbox.push(Event::Started {
            job: id,
            partition: rec.partition,
            nodes,
            time: now,
            by,
        });
    }
}
