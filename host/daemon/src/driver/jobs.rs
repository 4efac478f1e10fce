//! Requests on jobs (submit, cancel, hold, release, update, steps): checked against the caller,
//! applied to the engine and journaled before they are answered.

use std::time::Instant;

use sluice_api::job_env::SlurmEnv;
use sluice_api::{
    ArrayMember, JobCancelled, JobHeld, JobReleased, JobSubmitted, JobUpdated, StepEnded,
    StepRequest, StepStarted,
};
use sluice_client::identity::Identity;
use sluice_engine::{Hold, JobId, JobSpec};

use super::Driver;
use crate::admission::Admission;
use crate::api::ApiError;
use crate::image::{HoldBy, JobRecord, Record, State};
use crate::request::{SubmitRequest, SubmitRequestExt, UpdateRequest};

impl Driver {
    /// Submits `request` to the engine under public id `id` (as task `array` of its array, if
    /// one); returns the engine's id.
    pub(super) fn enqueue(
        &mut self,
        id: u64,
        user: &str,
        request: &SubmitRequest,
        array: Option<ArrayMember>,
    ) -> Result<JobId, String> {
        let spec = self.job_spec(user, request, array)?;
        let eid = self.engine.submit(spec).map_err(|e| e.to_string())?;
        self.ids.link(id, eid);
        if request.deadline.is_some() {
            let limit = self.engine.job(eid).and_then(|j| j.time_limit);
            self.note_deadline(id, request, limit);
        }
        Ok(eid)
    }

    /// The engine's spec of `request` from `user` (as task `array` of its array, if one), its
    /// dependencies resolved to engine ids.
    pub(super) fn job_spec(
        &mut self,
        user: &str,
        request: &SubmitRequest,
        array: Option<ArrayMember>,
    ) -> Result<JobSpec, String> {
        let mut deps = Vec::new();
        for d in request.dependencies()? {
            deps.extend(self.resolve_dependency(d, array)?);
        }
        let mut spec = request.to_spec(user, deps)?;
        spec.array = array.map(|m| self.engine_task(m));
        spec.requeue = Some(request.requeue.unwrap_or(self.cfg.job_requeue));
        if self
            .cluster
            .partitions
            .iter()
            .any(|p| p.access.allow_groups.is_some())
        {
            spec.groups = sluice_client::identity::group_names(user);
        }
        Ok(spec)
    }

    pub(super) fn job_record(&self, id: u64) -> Result<&JobRecord, ApiError> {
        self.store
            .image()
            .jobs
            .get(&id)
            .map(|j| &**j)
            .ok_or_else(|| ApiError::not_found(format!("invalid job id specified: {id}")))
    }

    /// Checks that `who` may act on job `id`; says why not.
    pub(super) fn authorize(
        &self,
        who: &Identity,
        id: u64,
        action: &str,
    ) -> Result<JobRecord, ApiError> {
        let job = self.job_record(id)?.clone();
        if job.uid != who.uid && !self.is_admin(who) {
            return Err(ApiError::forbidden(format!(
                "{action} job {id}: access denied: the job belongs to {} (uid {}) and user {} (uid {}) is not an admin",
                job.user, job.uid, who.user, who.uid
            )));
        }
        Ok(job)
    }

    /// The rule submit and update share, for `who` on this cluster.
    pub(super) fn admission(&self, who: &Identity) -> Admission {
        Admission {
            admin: self.is_admin(who),
            cluster_cpus: self.cluster_cpus,
            unknown_uid: (self.admin_uid == 0 && !who.known).then_some(who.uid),
            bounds: self.bounds,
        }
    }

    pub(super) fn submit(
        &mut self,
        who: &Identity,
        request: SubmitRequest,
    ) -> Result<JobSubmitted, ApiError> {
        if let Err(e) = self
            .admission(who)
            .check("batch job submission failed", &request, None)
        {
            self.metrics.refused += 1;
            self.opts.metrics.job_refused();
            return Err(e);
        }
        if !self.partitions_take_jobs(&request) {
            self.metrics.refused += 1;
            self.opts.metrics.job_refused();
            return Err(ApiError::bad(
                "batch job submission failed: Required partition not available (inactive or drain)",
            ));
        }
        if let Some(text) = request.array.clone() {
            return self.submit_array(who, request, &text);
        }
        let id = self.store.image().next_id;
        let eid = match self.enqueue(id, &who.user, &request, None) {
            Ok(e) => e,
            Err(e) => {
                self.metrics.refused += 1;
                self.opts.metrics.job_refused();
                return Err(ApiError::bad(format!("batch job submission failed: {e}")));
            }
        };
        let time = self
            .engine
            .job(eid)
            .map_or(self.engine.now(), |j| j.submit_time);
        let hold = request.hold;
        self.commit(Record::Submit {
            id,
            time,
            uid: who.uid,
            user: who.user.clone(),
            request: Box::new(request),
            hold,
            array: None,
        });
        if hold {
            let _ = self.engine.hold(eid, Hold::User);
        }
        self.metrics.submitted += 1;
        self.opts.metrics.job_submitted();
        tracing::info!(
            "_slurm_rpc_submit_batch_job: JobId={id} UserId={}({})",
            who.user,
            who.uid
        );
        self.accepted_at.insert(id, Instant::now());
        Ok(JobSubmitted { job_id: id })
    }

    pub(super) fn cancel(
        &mut self,
        who: &Identity,
        id: u64,
        signal: Option<i32>,
    ) -> Result<JobCancelled, ApiError> {
        let job = self.authorize(who, id, "cancel")?;
        if job.state.is_final() {
            return Err(ApiError::conflict(format!(
                "cancel job {id}: job has already finished ({})",
                job.state.as_str()
            )));
        }
        if let Some(sig) = signal {
            if job.state != State::Running {
                return Err(ApiError::conflict(format!(
                    "signal job {id}: job is {}, only a running job can be signalled",
                    job.state.as_str()
                )));
            }
            self.exec
                .signal(id, sig)
                .map_err(|e| ApiError::conflict(format!("signal job {id}: {e}")))?;
            return Ok(JobCancelled {
                job_id: id,
                cancelled: false,
                signal: Some(sig),
            });
        }
        let eid = self.ids.engine(id);
        if let Some(eid) = eid {
            self.engine
                .cancel(eid)
                .map_err(|e| ApiError::conflict(format!("cancel job {id}: {e}")))?;
        }
        let time = self.engine.now();
        self.commit(Record::Cancel { id, time });
        Ok(JobCancelled {
            job_id: id,
            cancelled: true,
            signal: None,
        })
    }

    pub(super) fn hold(&mut self, who: &Identity, id: u64) -> Result<JobHeld, ApiError> {
        let job = self.authorize(who, id, "hold")?;
        let eid = self.pending_eid(&job, "hold")?;
        let by = if self.is_admin(who) && who.uid != job.uid {
            HoldBy::Admin
        } else {
            HoldBy::User
        };
        // An owner's hold would replace an admin's with one the owner may release: the admin's
        // stays, as slurmctld keeps a job held by an admin out of its user's reach.
        if job.hold == Some(HoldBy::Admin) && by == HoldBy::User {
            return Err(ApiError::forbidden(format!(
                "hold job {id}: it is held by an admin, and only an admin may change that hold"
            )));
        }
        let h = match by {
            HoldBy::Admin => Hold::Admin,
            HoldBy::User => Hold::User,
        };
        self.engine
            .hold(eid, h)
            .map_err(|e| ApiError::conflict(format!("hold job {id}: {e}")))?;
        self.commit(Record::Hold { id, by });
        Ok(JobHeld {
            job_id: id,
            hold: by,
        })
    }

    pub(super) fn release(&mut self, who: &Identity, id: u64) -> Result<JobReleased, ApiError> {
        let job = self.authorize(who, id, "release")?;
        let eid = self.pending_eid(&job, "release")?;
        if job.hold == Some(HoldBy::Admin) && !self.is_admin(who) {
            return Err(ApiError::forbidden(format!(
                "release job {id}: it is held by an admin, and only an admin may release it"
            )));
        }
        if job.hold.is_none() {
            return Err(ApiError::conflict(format!(
                "release job {id}: job is not held"
            )));
        }
        self.engine
            .release(eid)
            .map_err(|e| ApiError::conflict(format!("release job {id}: {e}")))?;
        self.commit(Record::Release { id });
        Ok(JobReleased {
            job_id: id,
            released: true,
        })
    }

    fn pending_eid(&self, job: &JobRecord, action: &str) -> Result<JobId, ApiError> {
        if job.state != State::Pending {
            return Err(ApiError::conflict(format!(
                "{action} job {}: job is {}, only a pending job can be changed",
                job.id,
                job.state.as_str()
            )));
        }
        self.ids.engine(job.id).ok_or_else(|| {
            ApiError::internal(format!("job {} is pending but not in the engine", job.id))
        })
    }

    pub(super) fn update(
        &mut self,
        who: &Identity,
        id: u64,
        mut changes: UpdateRequest,
    ) -> Result<JobUpdated, ApiError> {
        if let Some(throttle) = changes.array_task_throttle.take() {
            let done = self.update_throttle(who, id, throttle)?;
            if changes.is_empty() {
                return Ok(done);
            }
        }
        let job = self.authorize(who, id, "update")?;
        if job.state == State::Running {
            return self.update_running(who, &job, changes);
        }
        let eid = self.pending_eid(&job, "update")?;
        if changes.time_limit == Some(0) {
            // `TimeLimit=0` is Slurm's "no limit", as `-t 0` is: one rule for both spellings.
            changes.time_limit = None;
            changes.unlimited_time = true;
        }
        self.check_pending_time_limit(who, id, eid, &changes)?;
        if let Some(p) = changes.priority {
            self.check_priority_change(who, id, eid, p)?;
            if p == 0 {
                // As scontrol: Priority=0 holds the job, and the priority is left as it was.
                changes.priority = None;
                let held = self.hold(who, id)?;
                if changes.is_empty() {
                    return Ok(JobUpdated {
                        job_id: held.job_id,
                        updated: true,
                    });
                }
            }
        }
        if changes.is_empty() {
            return Err(ApiError::bad(format!("update job {id}: nothing to change")));
        }
        let mut request = job.request.clone();
        changes.apply(&mut request);
        self.admission(who)
            .check(&format!("update job {id}"), &request, Some(&job.request))?;
        // The engine has no update event: requeue the job under the same id and submit time.
        self.ids.unlink(id);
        let _ = self.engine.cancel(eid);
        let _ = self.engine.purge(eid);
        self.clock.pin(job.submit_time);
        let result = self.enqueue(id, &job.user, &request, job.array);
        let result = match result {
            Ok(e) => Ok(e),
            Err(e) => {
                let back = self.enqueue(id, &job.user, &job.request, job.array);
                self.clock.unpin();
                let back = back.map_err(|b| {
                    ApiError::internal(format!("update job {id}: restoring it failed: {b}"))
                })?;
                if let Some(h) = job.hold {
                    let _ = self.engine.hold(
                        back,
                        if h == HoldBy::Admin {
                            Hold::Admin
                        } else {
                            Hold::User
                        },
                    );
                }
                return Err(ApiError::bad(format!("update job {id}: {e}")));
            }
        };
        self.clock.unpin();
        let new = result?;
        if let Some(h) = job.hold {
            let _ = self.engine.hold(
                new,
                if h == HoldBy::Admin {
                    Hold::Admin
                } else {
                    Hold::User
                },
            );
        }
        self.commit(Record::Update { id, changes });
        Ok(JobUpdated {
            job_id: id,
            updated: true,
        })
    }

    /// Whether one of the partitions a new job names (else the default one) takes new jobs:
    /// not DRAIN or INACTIVE. Names the cluster lacks are left to the engine to refuse.
    pub(super) fn partitions_take_jobs(&self, request: &SubmitRequest) -> bool {
        let parts = &self.cluster.partitions;
        let named: Vec<usize> = match &request.partition {
            Some(list) => list
                .split(',')
                .filter_map(|n| parts.iter().position(|p| p.name == n.trim()))
                .collect(),
            None => parts.iter().position(|p| p.default).into_iter().collect(),
        };
        named.is_empty()
            || named.iter().any(|&p| {
                self.engine
                    .partition_state(sluice_cluster::PartitionId(p as u32))
                    .takes_jobs()
            })
    }

    /// `Priority=` of a pending job, as slurmctld's `_update_job` allows it: an admin sets any
    /// priority, the job's owner may only lower it.
    fn check_priority_change(
        &self,
        who: &Identity,
        id: u64,
        eid: JobId,
        new: u32,
    ) -> Result<(), ApiError> {
        if self.is_admin(who) {
            return Ok(());
        }
        let current = self
            .engine
            .job(eid)
            .and_then(|j| j.priority.iter().copied().max())
            .unwrap_or(0);
        if new >= current {
            return Err(ApiError::forbidden(format!(
                "update job {id}: Priority={new}: access denied: only an admin may raise a job's priority (it is {current})"
            )));
        }
        Ok(())
    }

    /// `TimeLimit=` of a pending job, as slurmctld's `_update_job` allows it: an admin sets any
    /// limit; the owner may lower it, or raise it up to the MaxTime of the partition the job is
    /// queued in, so `UNLIMITED` is theirs only where that MaxTime is UNLIMITED too.
    fn check_pending_time_limit(
        &self,
        who: &Identity,
        id: u64,
        eid: JobId,
        changes: &UpdateRequest,
    ) -> Result<(), ApiError> {
        // `None` inside is no limit.
        let asked = match (changes.time_limit, changes.unlimited_time) {
            (_, true) => Some(None),
            (Some(t), false) => Some(Some(t)),
            (None, false) => None,
        };
        let (Some(asked), false) = (asked, self.is_admin(who)) else {
            return Ok(());
        };
        let Some(job) = self.engine.job(eid) else {
            return Ok(());
        };
        let within = |limit: Option<u64>| match (limit, asked) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(l), Some(a)) => a <= l,
        };
        let max_time = job
            .partitions
            .first()
            .and_then(|p| self.cluster.partitions.get(p.index()))
            .and_then(|p| p.max_time.seconds());
        if within(job.time_limit) || within(max_time) {
            return Ok(());
        }
        let asked = asked.map_or("UNLIMITED".to_string(), |s| {
            format!("{} min", s.div_ceil(60))
        });
        Err(ApiError::forbidden(format!(
            "update job {id}: TimeLimit={asked}: access denied: only an admin may raise a job's time limit past its partition's MaxTime"
        )))
    }

    /// `TimeLimit=` of a running job: anyone may shorten their job's limit, only an admin may
    /// extend it (Slurm's rule, which makes UNLIMITED an admin's); the engine and the job's
    /// supervisor both hold it to the new one.
    fn update_running(
        &mut self,
        who: &Identity,
        job: &JobRecord,
        changes: UpdateRequest,
    ) -> Result<JobUpdated, ApiError> {
        let id = job.id;
        let limit_only = UpdateRequest {
            time_limit: changes.time_limit,
            unlimited_time: changes.unlimited_time,
            ..UpdateRequest::default()
        };
        let new = match (changes.time_limit, changes.unlimited_time) {
            _ if changes != limit_only => None,
            (Some(limit), false) => Some(Some(limit)),
            (None, true) => Some(None),
            _ => None,
        };
        let Some(new) = new else {
            return Err(ApiError::conflict(format!(
                "update job {id}: job is RUNNING; only TimeLimit can change while it runs"
            )));
        };
        let eid = self.ids.engine(id).ok_or_else(|| {
            ApiError::internal(format!("job {id} is running but not in the engine"))
        })?;
        // Compared with the limit in force, which may be the partition's default.
        let current = self.engine.job(eid).and_then(|j| j.time_limit);
        let extends = match (current, new) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(c), Some(n)) => n > c,
        };
        if extends && !self.is_admin(who) {
            return Err(ApiError::forbidden(format!(
                "update job {id}: TimeLimit: only an admin may extend a job's time limit"
            )));
        }
        self.engine
            .set_time_limit(eid, new)
            .map_err(|e| ApiError::conflict(format!("update job {id}: {e}")))?;
        if let Err(e) = self
            .exec
            .set_time_limit(id, new.map(std::time::Duration::from_secs))
        {
            // The daemon still ends the job at the new limit; only its fallback is the old one.
            tracing::warn!("update job {id}: the supervisor's limit stays: {e}");
        }
        self.commit(Record::Update { id, changes });
        Ok(JobUpdated {
            job_id: id,
            updated: true,
        })
    }

    pub(super) fn step_start(
        &mut self,
        who: &Identity,
        id: u64,
        s: StepRequest,
    ) -> Result<StepStarted, ApiError> {
        let job = self.authorize(who, id, "step in")?;
        let eid = self
            .ids
            .engine(id)
            .filter(|_| job.state == State::Running)
            .ok_or_else(|| {
                ApiError::conflict(format!(
                    "step in job {id}: job is {}, steps run only inside a running job",
                    job.state.as_str()
                ))
            })?;
        // Journaled with the step: held to the bound every other name is.
        if s.name.len() > self.cfg.max_text_size {
            return Err(ApiError::bad(format!(
                "step in job {id}: step name of {} bytes exceeds max_text_size ({})",
                s.name.len(),
                self.cfg.max_text_size
            )));
        }
        let name = if s.name.is_empty() {
            "step".into()
        } else {
            s.name
        };
        let step = self
            .engine
            .start_step(eid, &name, s.nodes.max(1), s.cpus_per_node.max(1))
            .map_err(|e| ApiError::conflict(format!("step in job {id}: {e}")))?;
        let time = self.engine.now();
        self.commit(Record::StepStarted {
            id,
            step,
            name,
            time,
        });
        let mut env = SlurmEnv::new();
        if let Some(j) = self.engine.job(eid) {
            let st = &j.steps[step as usize];
            let names: Vec<String> = st
                .node_positions
                .iter()
                .map(|p| job.nodes.get(*p as usize).cloned().unwrap_or_default())
                .collect();
            env = SlurmEnv::step(id, step, &names);
        }
        if let Ok(gres) = self.engine.step_env(eid, step, 0) {
            env.gres(gres);
        }
        Ok(StepStarted {
            job_id: id,
            step_id: step,
            env: env.into_vars(),
        })
    }

    pub(super) fn step_end(
        &mut self,
        who: &Identity,
        id: u64,
        step: u32,
        code: i32,
    ) -> Result<StepEnded, ApiError> {
        self.authorize(who, id, "end step of")?;
        let eid = self
            .ids
            .engine(id)
            .ok_or_else(|| ApiError::conflict(format!("step {id}.{step}: job has ended")))?;
        self.engine
            .end_step(eid, step, code)
            .map_err(|e| ApiError::conflict(format!("step {id}.{step}: {e}")))?;
        let time = self.engine.now();
        self.commit(Record::StepEnded {
            id,
            step,
            exit_code: code,
            time,
        });
        Ok(StepEnded {
            job_id: id,
            step_id: step,
            exit_code: code,
        })
    }
}
