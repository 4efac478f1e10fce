//! The event API: submit, cancel, hold/release, job end, node state changes, reservations.

use sluice_cluster::{AssocId, AssocKind, Association, NodeId, PartitionId, QosId, Shares};
use sluice_policy::Power;

use crate::engine::Engine;
use crate::error::{JobError, SubmitError};
use crate::event::Event;
use crate::job::{CpuIds, Hold, Job, JobId, JobSpec, JobState, Reason};
use crate::licenses::LicenseError;
use crate::node_state::Health;
use crate::reservation::{Reservation, ReservationError, ReservationSpec};

impl Engine {
    /// Submits a job (sbatch). It is validated and queued; the next [`Engine::tick`] runs the
    /// event-triggered main loop over it unless `defer` is set.
    pub fn submit(&mut self, spec: JobSpec) -> Result<JobId, SubmitError> {
        let now = self.clock.now();
        let assoc = self.resolve_assoc(&spec)?;
        let account = self.account_of(assoc);
        let qos = self.resolve_qos(&spec, assoc)?;
        let mut parts = self.resolve_partitions(&spec)?;

        let gres = self.resolve_gres(&spec)?;
        let mut gres_per_node: Vec<(u32, u32)> = Vec::new();
        let mut gres_types = Vec::new();
        for r in &gres.records {
            if let Some(t) = &r.gres_type {
                gres_types.push((r.name.clone(), t.clone()));
            }
            add_gres(&mut gres_per_node, r.kind, r.per_node);
        }

        let demand = self.lic.resolve(&spec.licenses)?;
        if !demand.hres.is_empty() && self.policies.hres.is_none() {
            let name = &self.lic.hres_resources()[demand.hres[0].resource as usize].name;
            return Err(LicenseError::Unknown(name.clone()).into());
        }

        let reservation = match &spec.reservation {
            None => None,
            Some(name) => {
                let r = self
                    .resv
                    .find(name)
                    .ok_or_else(|| SubmitError::Reservation(name.clone()))?;
                if !self.resv.get(r).admits(&spec.user, &account) {
                    return Err(SubmitError::Reservation(name.clone()));
                }
                Some(r)
            }
        };
        for dep in &spec.dependencies {
            if !self.jobs.contains_key(&dep.job) {
                return Err(SubmitError::Dependency(dep.job));
            }
        }

        // Keep the partitions where the request fits their limits, in the order asked
        // (EnforcePartLimits=ANY): the job is refused only if it fits none.
        let first = &self.cluster.partitions[parts[0].index()];
        let time_limit = spec
            .time_limit
            .or(first.default_time.unwrap_or(first.max_time).seconds());
        parts.retain(|p| {
            let part = &self.cluster.partitions[p.index()];
            match (part.max_time.seconds(), time_limit) {
                (None, _) => true,
                (Some(max), Some(limit)) => limit <= max,
                (Some(_), None) => false,
            }
        });
        if parts.is_empty() {
            return Err(SubmitError::TimeLimit);
        }
        parts.retain(|p| {
            let part = &self.cluster.partitions[p.index()];
            spec.min_nodes <= part.max_nodes.unwrap_or(u32::MAX)
                && spec.min_nodes as usize <= part.nodes.len()
        });
        if parts.is_empty() {
            return Err(SubmitError::NodeCount);
        }
        let mut job = Job {
            id: self.next_id,
            assoc,
            partitions: parts,
            qos,
            time_limit,
            submit_time: now,
            eligible_time: None,
            state: JobState::Pending,
            reason: Reason::None,
            hold: spec.hold.then_some(Hold::User),
            priority: Vec::new(),
            priority_time: None,
            start_time: None,
            end_time: None,
            exit_code: None,
            alloc: None,
            steps: Vec::new(),
            reservation,
            demand,
            gres_per_node,
            gres_types,
            gres,
            cpu_ids: CpuIds::default(),
            final_state: None,
            spec,
        };
        let fitting: Vec<PartitionId> = job
            .partitions
            .iter()
            .copied()
            .filter(|p| self.fit().fits_somewhere(&job, *p))
            .collect();
        job.partitions = fitting;
        if job.partitions.is_empty() {
            return Err(SubmitError::NodeConfig);
        }
        job.priority = vec![0; job.partitions.len()];
        let id = job.id;
        self.next_id += 1;
        self.pending.insert(id, job.cpus());
        self.jobs.insert(id, job);
        self.refresh_job(id, now);
        self.sched_requested = true;
        Ok(id)
    }

    /// Cancels a job (scancel): a pending job ends at once, a running one releases its nodes.
    pub fn cancel(&mut self, id: JobId) -> Result<(), JobError> {
        let now = self.clock.now();
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        match job.state {
            JobState::Pending => {
                job.state = JobState::Cancelled;
                job.end_time = Some(now);
                job.start_time = None;
                self.pending.remove(id);
                self.outbox.push(Event::Ended {
                    job: id,
                    state: JobState::Cancelled,
                    exit_code: None,
                    time: now,
                });
                Ok(())
            }
            JobState::Configuring | JobState::Running => {
                self.end_job(id, JobState::Cancelled, None, Reason::None);
                Ok(())
            }
            state => Err(JobError::WrongState { job: id, state }),
        }
    }

    /// Pending job `id`, or why an action on pending jobs cannot apply to it.
    fn pending_job(&mut self, id: JobId) -> Result<&mut Job, JobError> {
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        if job.state != JobState::Pending {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        Ok(job)
    }

    /// Holds a pending job (scontrol hold / uhold); its priority becomes 0.
    pub fn hold(&mut self, id: JobId, who: Hold) -> Result<(), JobError> {
        let now = self.clock.now();
        self.pending_job(id)?.hold = Some(who);
        self.refresh_job(id, now);
        Ok(())
    }

    /// Releases a held job (scontrol release); holding cleared its priority, so the next pass
    /// calculates one.
    pub fn release(&mut self, id: JobId) -> Result<(), JobError> {
        let now = self.clock.now();
        self.pending_job(id)?.hold = None;
        self.refresh_job(id, now);
        self.sched_requested = true;
        Ok(())
    }

    /// The executor reports that a job's batch script ended with `exit_code`.
    pub fn job_finished(&mut self, id: JobId, exit_code: i32) -> Result<(), JobError> {
        let job = self.jobs.get(&id).ok_or(JobError::UnknownJob(id))?;
        if !matches!(job.state, JobState::Running | JobState::Configuring) {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        let (state, reason) = if exit_code == 0 {
            (JobState::Completed, Reason::None)
        } else {
            (JobState::Failed, Reason::NonZeroExitCode)
        };
        self.end_job(id, state, Some(exit_code), reason);
        Ok(())
    }

    /// The epilog finished on every node of a COMPLETING job: its resources are free.
    pub fn epilog_complete(&mut self, id: JobId) -> Result<(), JobError> {
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        if job.state != JobState::Completing {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        job.state = job.final_state.take().unwrap_or(JobState::Completed);
        self.release_resources(id);
        self.sched_requested = true;
        Ok(())
    }

    /// A node stopped responding or was set DOWN: its jobs end with NODE_FAIL.
    pub fn node_down(&mut self, node: NodeId, reason: &str) {
        self.nodes
            .set_health(node, Health::Down, Some(reason.into()));
        let victims = self.nodes.node(node).jobs.clone();
        for id in victims {
            if matches!(
                self.jobs[&id].state,
                JobState::Running | JobState::Configuring
            ) {
                self.end_job(id, JobState::NodeFail, None, Reason::NodeDown);
            }
        }
    }

    /// A node is drained: running jobs continue, nothing new starts there.
    pub fn node_drain(&mut self, node: NodeId, reason: &str) {
        self.nodes
            .set_health(node, Health::Drain, Some(reason.into()));
    }

    /// A node is back (scontrol update State=RESUME, or slurmd registered again).
    pub fn node_resume(&mut self, node: NodeId) {
        self.nodes.set_health(node, Health::Up, None);
        self.sched_requested = true;
    }

    /// A node finished booting (ResumeProgram done): CONFIGURING jobs whose nodes are all up
    /// start RUNNING, and their time limit counts from now.
    pub fn node_powered_up(&mut self, node: NodeId) {
        let now = self.clock.now();
        self.nodes.set_power(node, Power::Up);
        for id in self.nodes.node(node).jobs.clone() {
            let ready = {
                let job = &self.jobs[&id];
                job.state == JobState::Configuring
                    && job.alloc.as_ref().is_some_and(|a| {
                        a.placement
                            .nodes
                            .iter()
                            .all(|n| self.nodes.node(NodeId(*n)).power == Power::Up)
                    })
            };
            if ready {
                let job = self.jobs.get_mut(&id).expect("job on a node exists");
                job.state = JobState::Running;
                job.start_time = Some(now);
                job.end_time = job.time_limit.map(|l| now + l as i64);
            }
        }
    }

    /// A node was powered down by power saving (SuspendProgram done); it boots again when needed.
    pub fn node_powered_down(&mut self, node: NodeId) {
        self.nodes.set_power(node, Power::PoweredDown);
    }

    /// Creates an advance reservation (scontrol create reservation).
    pub fn create_reservation(&mut self, spec: &ReservationSpec) -> Result<(), ReservationError> {
        let resv = Reservation::resolve(spec, &self.cluster, &self.lic)?;
        self.resv.add(resv)?;
        self.sched_requested = true;
        Ok(())
    }

    /// Forgets a job that has ended (Slurm's purge after MinJobAge), so a long replay keeps only
    /// the jobs in flight. Returns whether the job was in a final state and is now gone. A pending
    /// job's dependency on it then counts as satisfied; a new submission naming it is refused.
    pub fn purge(&mut self, id: JobId) -> bool {
        let done = self.jobs.get(&id).is_some_and(|job| job.state.is_final());
        if done {
            self.jobs.remove(&id);
        }
        done
    }

    /// Deletes an advance reservation; jobs waiting for it stay pending.
    pub fn delete_reservation(&mut self, name: &str) -> bool {
        self.resv.remove(name)
    }

    /// Ends a job that holds resources, leaving its last usage to be charged at the next decay
    /// and releasing (or, with `track_completing`, keeping until the epilog completes) what it
    /// holds.
    pub(crate) fn end_job(
        &mut self,
        id: JobId,
        state: JobState,
        exit_code: Option<i32>,
        reason: Reason,
    ) {
        let now = self.clock.now();
        let (assoc, qos, start, cpus) = {
            let job = &self.jobs[&id];
            (
                job.assoc,
                job.qos,
                job.start_time.unwrap_or(now),
                job.alloc.as_ref().map_or(0, |a| a.cpus()),
            )
        };
        if self.jobs[&id].state == JobState::Running {
            let from = start.max(self.usage.last_ran());
            let factor = self
                .qos_view
                .get(qos.index())
                .map_or(1.0, |q| q.usage_factor);
            let amount = self.usage.job_delta(now - from, cpus, factor);
            self.usage.add_at_next_decay(assoc, amount);
        }
        let job = self.jobs.get_mut(&id).expect("ending a known job");
        job.end_time = Some(now);
        job.exit_code = exit_code;
        job.reason = reason;
        for step in job
            .steps
            .iter_mut()
            .filter(|s| s.state == JobState::Running)
        {
            step.state = if state == JobState::Completed {
                JobState::Completed
            } else {
                JobState::Cancelled
            };
        }
        if self.config.track_completing {
            job.state = JobState::Completing;
            job.final_state = Some(state);
        } else {
            job.state = state;
            self.release_resources(id);
        }
        self.outbox.push(Event::Ended {
            job: id,
            state,
            exit_code,
            time: now,
        });
        self.sched_requested = true;
    }

    pub(crate) fn release_resources(&mut self, id: JobId) {
        let positions = self.jobs[&id]
            .alloc
            .as_ref()
            .map_or(0, |a| a.placement.nodes.len());
        self.release_gres(id, 0..positions);
        let job = self.jobs.get_mut(&id).expect("releasing a known job");
        for r in &mut job.gres.records {
            r.bit_step_alloc.iter_mut().for_each(Vec::clear);
        }
        if let Some(alloc) = &job.alloc {
            self.nodes.release(id, &alloc.placement);
            self.lic.give_back(&alloc.licenses);
            self.lic.refund_hres(&alloc.hres);
        }
        self.running.remove(&id);
    }

    /// Ends running jobs whose time limit has passed, with TIMEOUT.
    pub(crate) fn enforce_time_limits(&mut self, now: i64) {
        if !self.config.enforce_time_limits {
            return;
        }
        let expired: Vec<JobId> = self
            .running
            .iter()
            .copied()
            .filter(|id| {
                let job = &self.jobs[id];
                job.state == JobState::Running && job.end_time.is_some_and(|end| end <= now)
            })
            .collect();
        for id in expired {
            self.end_job(id, JobState::Timeout, None, Reason::TimeLimit);
        }
    }

    /// Decays usage every PriorityCalcPeriod and accrues running jobs' CPU time since the last run.
    pub(crate) fn accrue_usage(&mut self, now: i64) {
        let Some(decayed) = self.usage.decay_if_due(now) else {
            return;
        };
        // Slurm's decay thread recalculates every pending job's priority after decaying usage.
        self.priorities.due = true;
        for id in self.running.iter() {
            let job = &self.jobs[id];
            if job.state != JobState::Running {
                continue;
            }
            let from = job.start_time.unwrap_or(now).max(decayed.since);
            let cpus = job.alloc.as_ref().map_or(0, |a| a.cpus());
            let factor = self
                .qos_view
                .get(job.qos.index())
                .map_or(1.0, |q| q.usage_factor);
            let amount = decayed.job_delta(&self.usage, from, cpus, factor);
            self.usage.add(job.assoc, amount);
        }
    }

    /// Recomputes one pending job's eligibility (hold, begin time, dependencies) and reason.
    /// Returns whether the job may be tried this pass.
    pub(crate) fn refresh_job(&mut self, id: JobId, now: i64) -> bool {
        let blocked = {
            let job = &self.jobs[&id];
            if let Some(hold) = job.hold {
                Some(if hold == Hold::User {
                    Reason::JobHeldUser
                } else {
                    Reason::JobHeldAdmin
                })
            } else if job.spec.begin_time.is_some_and(|b| b > now) {
                Some(Reason::BeginTime)
            } else {
                self.dependency_reason(job)
            }
        };
        let job = self.jobs.get_mut(&id).expect("refreshing a known job");
        match blocked {
            Some(reason) => {
                job.reason = reason;
                if job.hold.is_some() {
                    job.priority.iter_mut().for_each(|p| *p = 0);
                    job.priority_time = None;
                }
                false
            }
            None => {
                if job.eligible_time.is_none() {
                    job.eligible_time = Some(now);
                }
                if matches!(
                    job.reason,
                    Reason::JobHeldUser
                        | Reason::JobHeldAdmin
                        | Reason::BeginTime
                        | Reason::Dependency
                ) {
                    job.reason = Reason::None;
                }
                true
            }
        }
    }

    /// `Some(Dependency)` while a dependency is unresolved, `Some(DependencyNeverSatisfied)` if one
    /// can never be, `None` once all are satisfied.
    fn dependency_reason(&self, job: &Job) -> Option<Reason> {
        use crate::request::DependencyKind::*;
        let mut waiting = false;
        for dep in &job.spec.dependencies {
            let Some(other) = self.jobs.get(&dep.job) else {
                continue;
            };
            let done = other.state.is_final();
            let ok = other.state == JobState::Completed;
            match (dep.kind, done) {
                (_, false) => waiting = true,
                (AfterOk, true) if !ok => return Some(Reason::DependencyNeverSatisfied),
                (AfterNotOk, true) if ok => return Some(Reason::DependencyNeverSatisfied),
                _ => {}
            }
        }
        waiting.then_some(Reason::Dependency)
    }

    fn resolve_assoc(&mut self, spec: &JobSpec) -> Result<AssocId, SubmitError> {
        let found = match &spec.account {
            Some(account) => self.cluster.user_assoc(&spec.user, account),
            None => self.user_assocs.get(&spec.user).copied(),
        };
        if let Some(id) = found {
            return Ok(id);
        }
        if !self.config.create_missing_associations || self.cluster.associations.is_empty() {
            return Err(SubmitError::UnknownAssociation {
                user: spec.user.clone(),
                account: spec.account.clone(),
            });
        }
        let parent = spec
            .account
            .as_deref()
            .and_then(|a| self.cluster.account_id(a))
            .unwrap_or(AssocId::ROOT);
        let id = AssocId(self.cluster.associations.len() as u32);
        self.cluster.associations.push(Association {
            kind: AssocKind::User(spec.user.clone()),
            parent: Some(parent),
            children: Vec::new(),
            shares: Shares::Raw(1),
            raw_usage: 0.0,
            priority: 0,
            default_qos: None,
        });
        self.cluster.associations[parent.index()].children.push(id);
        self.user_assocs.entry(spec.user.clone()).or_insert(id);
        self.usage.grow(parent);
        Ok(id)
    }

    /// The account a user association sits under (the association's own name for an account).
    pub(crate) fn account_of(&self, assoc: AssocId) -> String {
        let a = &self.cluster.associations[assoc.index()];
        match (a.is_user(), a.parent) {
            (true, Some(p)) => self.cluster.associations[p.index()].name().to_string(),
            _ => a.name().to_string(),
        }
    }

    fn resolve_qos(&self, spec: &JobSpec, assoc: AssocId) -> Result<QosId, SubmitError> {
        if let Some(name) = &spec.qos {
            if self.cluster.qos.is_empty() && name == "normal" {
                return Ok(QosId(0));
            }
            return self
                .cluster
                .qos_id(name)
                .ok_or_else(|| SubmitError::UnknownQos(name.clone()));
        }
        let mut cur = Some(assoc);
        while let Some(a) = cur {
            let assoc = &self.cluster.associations[a.index()];
            if let Some(q) = assoc.default_qos {
                return Ok(q);
            }
            cur = assoc.parent;
        }
        Ok(self.cluster.qos_id("normal").unwrap_or(QosId(0)))
    }

    fn resolve_partitions(&self, spec: &JobSpec) -> Result<Vec<PartitionId>, SubmitError> {
        if spec.partitions.is_empty() {
            return self
                .cluster
                .default_partition()
                .map(|p| vec![p])
                .ok_or_else(|| SubmitError::UnknownPartition("(default)".into()));
        }
        let mut out = Vec::new();
        for name in &spec.partitions {
            let id = self
                .cluster
                .partition_id(name)
                .ok_or_else(|| SubmitError::UnknownPartition(name.clone()))?;
            if !out.contains(&id) {
                out.push(id);
            }
        }
        Ok(out)
    }
}

fn add_gres(list: &mut Vec<(u32, u32)>, kind: u32, count: u32) {
    // Records of one name differ in type, so their counts add up on the node.
    match list.iter_mut().find(|(k, _)| *k == kind) {
        Some(slot) => slot.1 += count,
        None => list.push((kind, count)),
    }
}
