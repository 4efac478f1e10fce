//! Job requests (submit, cancel, hold, release, update, steps, show, list) and the journal
//! records of the engine's decisions about jobs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sluice_api::{
    Job, JobCancelled, JobHeld, JobReleased, JobRequestSummary, JobSubmitted, JobUpdated,
    StepEnded, StepRequest, StepStarted,
};
use sluice_engine::{Dependency, DependencyKind, Hold, JobId, JobState};

use super::Driver;
use super::engine::assoc_key;
use crate::api::{ApiError, JobFilter};
use crate::executor::{ExitReport, Launch};
use crate::identity::Identity;
use crate::image::{HoldBy, JobRecord, Record, State};
use crate::request::{SubmitRequest, SubmitRequestExt, UpdateRequest};

impl Driver {
    /// Submits `request` to the engine under public id `id`; returns the engine's id.
    pub(super) fn enqueue(
        &mut self,
        id: u64,
        user: &str,
        request: &SubmitRequest,
    ) -> Result<JobId, String> {
        let mut deps = Vec::new();
        for d in request.dependencies()? {
            if let Some(&e) = self.eid.get(&u64::from(d.job)) {
                deps.push(Dependency {
                    kind: d.kind,
                    job: e,
                });
                continue;
            }
            // Not in the engine: ended long enough ago to be purged, or never existed.
            let Some(target) = self.store.image().jobs.get(&u64::from(d.job)) else {
                return Err(format!("job dependency problem: unknown job {}", d.job));
            };
            let ok = match d.kind {
                DependencyKind::AfterAny => target.state.is_final(),
                DependencyKind::AfterOk => target.state == State::Completed,
                DependencyKind::AfterNotOk => {
                    target.state.is_final() && target.state != State::Completed
                }
            };
            if !ok {
                let kind = match d.kind {
                    DependencyKind::AfterOk => "afterok",
                    DependencyKind::AfterAny => "afterany",
                    DependencyKind::AfterNotOk => "afternotok",
                };
                return Err(format!(
                    "job dependency problem: job {} ended {}, so {kind}:{} can never be satisfied",
                    d.job,
                    target.state.as_str(),
                    d.job
                ));
            }
        }
        let spec = request.to_spec(user, deps)?;
        let eid = self.engine.submit(spec).map_err(|e| e.to_string())?;
        self.eid.insert(id, eid);
        self.pid.insert(eid, id);
        Ok(eid)
    }

    fn job_record(&self, id: u64) -> Result<&JobRecord, ApiError> {
        self.store
            .image()
            .jobs
            .get(&id)
            .ok_or_else(|| ApiError::not_found(format!("invalid job id specified: {id}")))
    }

    /// Checks that `who` may act on job `id`; says why not.
    fn authorize(&self, who: &Identity, id: u64, action: &str) -> Result<JobRecord, ApiError> {
        let job = self.job_record(id)?.clone();
        if job.uid != who.uid && !self.is_admin(who) {
            return Err(ApiError::forbidden(format!(
                "{action} job {id}: access denied: the job belongs to {} (uid {}) and user {} (uid {}) is not an admin",
                job.user, job.uid, who.user, who.uid
            )));
        }
        Ok(job)
    }

    pub(super) fn submit(
        &mut self,
        who: &Identity,
        request: SubmitRequest,
    ) -> Result<JobSubmitted, ApiError> {
        let id = self.store.image().next_id;
        let eid = match self.enqueue(id, &who.user, &request) {
            Ok(e) => e,
            Err(e) => {
                self.metrics.refused += 1;
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
        });
        if hold {
            let _ = self.engine.hold(eid, Hold::User);
        }
        self.metrics.submitted += 1;
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
        let eid = self.eid.get(&id).copied();
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
        self.eid.get(&job.id).copied().ok_or_else(|| {
            ApiError::internal(format!("job {} is pending but not in the engine", job.id))
        })
    }

    pub(super) fn update(
        &mut self,
        who: &Identity,
        id: u64,
        changes: UpdateRequest,
    ) -> Result<JobUpdated, ApiError> {
        let job = self.authorize(who, id, "update")?;
        let eid = self.pending_eid(&job, "update")?;
        if changes.is_empty() {
            return Err(ApiError::bad(format!("update job {id}: nothing to change")));
        }
        if !self.is_admin(who) {
            if changes.nice.is_some_and(|n| n < job.request.nice.max(0)) {
                return Err(ApiError::forbidden(format!(
                    "update job {id}: only an admin may lower Nice (raise priority)"
                )));
            }
            if let (Some(new), Some(old)) = (changes.time_limit, job.request.time_limit)
                && new > old
            {
                return Err(ApiError::forbidden(format!(
                    "update job {id}: only an admin may raise TimeLimit"
                )));
            }
        }
        let mut request = job.request.clone();
        changes.apply(&mut request);
        // The engine has no update event: requeue the job under the same id and submit time.
        self.eid.remove(&id);
        self.pid.remove(&eid);
        let _ = self.engine.cancel(eid);
        let _ = self.engine.purge(eid);
        self.clock.pin(job.submit_time);
        let result = self.enqueue(id, &job.user, &request);
        let result = match result {
            Ok(e) => Ok(e),
            Err(e) => {
                let back = self.enqueue(id, &job.user, &job.request);
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

    pub(super) fn step_start(
        &mut self,
        who: &Identity,
        id: u64,
        s: StepRequest,
    ) -> Result<StepStarted, ApiError> {
        let job = self.authorize(who, id, "step in")?;
        let eid = self
            .eid
            .get(&id)
            .copied()
            .filter(|_| job.state == State::Running)
            .ok_or_else(|| {
                ApiError::conflict(format!(
                    "step in job {id}: job is {}, steps run only inside a running job",
                    job.state.as_str()
                ))
            })?;
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
        let mut env: BTreeMap<String, String> = BTreeMap::new();
        if let Some(j) = self.engine.job(eid) {
            let st = &j.steps[step as usize];
            let names: Vec<String> = st
                .node_positions
                .iter()
                .map(|p| job.nodes.get(*p as usize).cloned().unwrap_or_default())
                .collect();
            env.insert("SLURM_STEP_ID".into(), step.to_string());
            env.insert("SLURM_STEPID".into(), step.to_string());
            env.insert("SLURM_JOB_ID".into(), id.to_string());
            env.insert("SLURM_STEP_NUM_NODES".into(), names.len().to_string());
            env.insert(
                "SLURM_STEP_NODELIST".into(),
                sluice_hostlist::compress(&names),
            );
            env.insert("SLURM_STEP_NUM_TASKS".into(), names.len().to_string());
        }
        if let Ok(gres) = self.engine.step_env(eid, step, 0) {
            env.extend(gres);
        }
        Ok(StepStarted {
            job_id: id,
            step_id: step,
            env,
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
            .eid
            .get(&id)
            .copied()
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

    /// Journals a start and returns what to launch.
    pub(super) fn record_start(&mut self, eid: JobId) -> Option<Launch> {
        let id = *self.pid.get(&eid)?;
        let job = self.engine.job(eid)?.clone();
        let alloc = job.alloc.as_ref()?;
        let cluster = self.engine.cluster();
        let nodes: Vec<String> = alloc
            .placement
            .nodes
            .iter()
            .map(|n| cluster.nodes[*n as usize].name.clone())
            .collect();
        let partition = cluster.partitions[alloc.partition.index()].name.clone();
        let account = assoc_key(cluster, job.assoc)
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let cpus = alloc.cpus();
        let cpus_first = alloc.placement.cpus.first().copied().unwrap_or(0);
        let time = job.start_time.unwrap_or_else(|| self.engine.now());
        self.commit(Record::Started {
            id,
            time,
            partition: partition.clone(),
            nodes: nodes.clone(),
            cpus,
            account: account.clone(),
        });
        self.metrics.started += 1;
        if let Some(t) = self.accepted_at.remove(&id) {
            let ms = t.elapsed().as_secs_f64() * 1e3;
            self.metrics.start_latency_ms_total += ms;
            self.metrics.start_latency_ms_max = self.metrics.start_latency_ms_max.max(ms);
        }
        let rec = self.store.image().jobs.get(&id)?.clone();
        let req = &rec.request;
        let mut env = req.env.clone();
        if !env.contains_key("PATH") {
            env.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
        }
        let list = sluice_hostlist::compress(&nodes);
        let mut set = |k: &str, v: String| {
            env.insert(k.to_string(), v);
        };
        set("SLURM_JOB_ID", id.to_string());
        set("SLURM_JOBID", id.to_string());
        set("SLURM_JOB_NAME", req.job_name());
        set("SLURM_JOB_NODELIST", list.clone());
        set("SLURM_NODELIST", list);
        set("SLURM_NNODES", nodes.len().to_string());
        set("SLURM_JOB_NUM_NODES", nodes.len().to_string());
        set("SLURM_NTASKS", job.spec.tasks.to_string());
        set("SLURM_NPROCS", job.spec.tasks.to_string());
        set("SLURM_CPUS_PER_TASK", job.spec.cpus_per_task.to_string());
        set("SLURM_CPUS_ON_NODE", cpus_first.to_string());
        set("SLURM_JOB_PARTITION", partition);
        set("SLURM_JOB_ACCOUNT", account);
        set("SLURM_JOB_USER", rec.user.clone());
        set("SLURM_JOB_UID", rec.uid.to_string());
        set("SLURM_SUBMIT_DIR", req.workdir.clone());
        set("SLURM_SUBMIT_HOST", "localhost".into());
        set("SLURM_CLUSTER_NAME", self.cluster.name.clone());
        set(
            "SLURMD_NODENAME",
            nodes.first().cloned().unwrap_or_default(),
        );
        set("SLURM_RESTART_COUNT", rec.restarts.to_string());
        set(
            "SLURM_JOB_QOS",
            req.qos.clone().unwrap_or_else(|| "normal".into()),
        );
        if let Some(mem) = req.mem_mb {
            set("SLURM_MEM_PER_NODE", mem.to_string());
        }
        if let Some(limit) = job.time_limit {
            set("SLURM_JOB_END_TIME", (time + limit as i64).to_string());
        }
        set(
            "SLUICE_STATE_DIR",
            self.opts.state_dir.to_string_lossy().into_owned(),
        );
        if let Ok(gres) = self.engine.job_env(eid, 0) {
            env.extend(gres);
        }
        let workdir = PathBuf::from(&req.workdir);
        let pattern = |p: &str| expand_pattern(p, id, &req.job_name(), &rec.user, &workdir);
        Some(Launch {
            job: id,
            uid: rec.uid,
            script: req.script.clone(),
            output: pattern(req.output.as_deref().unwrap_or("slurm-%j.out")),
            error: req.error.as_deref().map(pattern),
            workdir,
            env,
            nodes,
        })
    }

    /// Journals an end (or a requeue); returns the job whose processes must be stopped.
    pub(super) fn record_end(
        &mut self,
        eid: JobId,
        state: JobState,
        exit_code: Option<i32>,
        time: i64,
    ) -> Option<u64> {
        let id = *self.pid.get(&eid)?;
        let was_running = self
            .store
            .image()
            .jobs
            .get(&id)
            .is_some_and(|j| j.state.is_active());
        if state == JobState::Pending {
            self.commit(Record::Requeued {
                id,
                time,
                reason: "requeued".into(),
            });
            return was_running.then_some(id);
        }
        let reason = self
            .engine
            .job(eid)
            .map(|j| j.reason.as_str().to_string())
            .filter(|r| r != "None");
        self.commit(Record::Ended {
            id,
            time,
            state: state.into(),
            exit_code,
            reason,
        });
        self.metrics.ended += 1;
        self.accepted_at.remove(&id);
        self.purge.push_back((time, eid));
        let own_end = matches!(state, JobState::Completed | JobState::Failed);
        (was_running && !own_end).then_some(id)
    }

    /// The executor saw a job's processes end.
    pub(super) fn exited(&mut self, r: ExitReport) {
        let Some(rec) = self.store.image().jobs.get(&r.job) else {
            return;
        };
        if rec.state.is_final() && rec.exit_code.is_some() {
            return;
        }
        self.commit(Record::Exited {
            id: r.job,
            code: r.code,
            signal: r.signal,
        });
        if let Some(&eid) = self.eid.get(&r.job)
            && self
                .engine
                .job(eid)
                .is_some_and(|j| matches!(j.state, JobState::Running | JobState::Configuring))
        {
            let code = r.code.unwrap_or_else(|| 128 + r.signal.unwrap_or(0));
            let _ = self.engine.job_finished(eid, code);
        }
    }

    /// One job as `scontrol show job` (and squeue) see it.
    pub(super) fn job_view(&self, job: &JobRecord) -> Job {
        let e = self.eid.get(&job.id).and_then(|e| self.engine.job(*e));
        let live = e.filter(|j| !j.state.is_final());
        let now = self.engine.now();
        let run = match (job.start_time, job.end_time) {
            (Some(s), Some(end)) => (end - s).max(0),
            (Some(s), None) => (now - s).max(0),
            _ => 0,
        };
        let reason = match (job.state, live) {
            (State::Pending, Some(j)) => j.reason.as_str().to_string(),
            _ => job.reason.clone().unwrap_or_else(|| "None".into()),
        };
        let partition = job.partition.clone().unwrap_or_else(|| {
            live.map(|j| {
                j.partitions
                    .iter()
                    .map(|p| self.cluster.partitions[p.index()].name.clone())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .or(job.request.partition.clone())
            .unwrap_or_default()
        });
        let nodes = if job.nodes.is_empty() {
            job.request.min_nodes.unwrap_or(1) as usize
        } else {
            job.nodes.len()
        };
        let request = &job.request;
        Job {
            job_id: job.id,
            name: request.job_name(),
            user: job.user.clone(),
            uid: job.uid,
            account: job.account.clone().or_else(|| {
                live.map(|j| {
                    assoc_key(self.engine.cluster(), j.assoc)
                        .split('/')
                        .next()
                        .unwrap_or_default()
                        .to_string()
                })
            }),
            partition,
            state: job.state.as_str().into(),
            st: job.state.short().into(),
            reason,
            hold: job.hold,
            priority: live
                .and_then(|j| j.priority.iter().max().copied())
                .unwrap_or(0),
            time: run,
            time_limit: live.and_then(|j| j.time_limit).or(request.time_limit),
            nodes,
            nodelist: sluice_hostlist::compress(&job.nodes),
            cpus: job.cpus,
            submit_time: job.submit_time,
            start_time: job.start_time.or(live.and_then(|j| j.start_time)),
            end_time: job.end_time,
            exit_code: job.exit_code,
            signal: job.signal,
            restarts: job.restarts,
            requeue: request.requeue.unwrap_or(self.cfg.job_requeue),
            workdir: request.workdir.clone(),
            steps: job.steps.clone(),
            request: JobRequestSummary {
                ntasks: request.ntasks,
                cpus_per_task: request.cpus_per_task,
                mem_mb: request.mem_mb,
                gres: request.gres.clone(),
                gpus: request.gpus.clone(),
                licenses: request.licenses.clone(),
                constraint: request.constraint.clone(),
                dependency: request.dependency.clone(),
                nice: request.nice,
                begin: request.begin,
                qos: request.qos.clone(),
                output: request.output.clone(),
            },
        }
    }

    pub(super) fn show_job(&self, id: u64) -> Result<Job, ApiError> {
        Ok(self.job_view(self.job_record(id)?))
    }

    pub(super) fn list_jobs(&self, f: &JobFilter) -> Vec<Job> {
        let states: Vec<State> = if f.states.is_empty() {
            vec![
                State::Pending,
                State::Configuring,
                State::Running,
                State::Completing,
            ]
        } else {
            f.states.clone()
        };
        let image = self.store.image();
        let keep = |j: &&JobRecord| {
            states.contains(&j.state)
                && (f.users.is_empty() || f.users.contains(&j.user))
                && (f.ids.is_empty() || f.ids.contains(&j.id))
        };
        // squeue's order: running by id, then pending in scheduling order, then the rest by id.
        let order: BTreeMap<u64, usize> = self
            .engine
            .queue_rows()
            .iter()
            .enumerate()
            .filter_map(|(i, r)| self.pid.get(&r.job_id).map(|p| (*p, i)))
            .collect();
        let mut rows: Vec<&JobRecord> = if f.ids.is_empty() {
            image.jobs.values().filter(keep).collect()
        } else {
            f.ids
                .iter()
                .filter_map(|i| image.jobs.get(i))
                .filter(keep)
                .collect()
        };
        rows.sort_by_key(|j| (order.get(&j.id).copied().unwrap_or(usize::MAX), j.id));
        rows.into_iter().map(|j| self.job_view(j)).collect()
    }
}

/// Expands `%j` (job id), `%x` (name), `%u` (user) and `%%` in an output pattern, relative to `dir`.
pub fn expand_pattern(pattern: &str, id: u64, name: &str, user: &str, dir: &Path) -> PathBuf {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('j') | Some('A') => out.push_str(&id.to_string()),
            Some('x') => out.push_str(name),
            Some('u') => out.push_str(user),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    let p = PathBuf::from(out);
    if p.is_absolute() { p } else { dir.join(p) }
}
