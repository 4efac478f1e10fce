//! Job arrays in the driver: a submission made into one public job per task (journaled as one
//! record, with room for all of it reserved first, before it is acknowledged), dependencies on an array or one of its tasks mapped to the engine's,
//! `ArrayTaskThrottle=` updates, and the outcomes of tasks a restart leaves out of the engine.

use sluice_api::{ArrayMember, JobSubmitted, JobUpdated, UpdateRequest};
use sluice_client::identity::Identity;
use sluice_engine::array_spec::parse_array;
use sluice_engine::{ArrayTask, Dependency, DependencyKind, Hold, JobId};

use super::Driver;
use crate::api::ApiError;
use crate::image::{JobRecord, Record, State};
use crate::request::SubmitRequest;

impl Driver {
    /// Submits `request`, whose `--array` is `text`: one job per task, public ids in a row
    /// from the next free one (the first is the `ArrayJobId`). Nothing is kept if any task is
    /// refused; the answer waits until every task is journaled.
    pub(super) fn submit_array(
        &mut self,
        who: &Identity,
        request: SubmitRequest,
        text: &str,
    ) -> Result<JobSubmitted, ApiError> {
        let spec = parse_array(text, self.cluster.scheduler.max_array_size).map_err(|e| {
            self.metrics.refused += 1;
            ApiError::bad(format!("batch job submission failed: {e}"))
        })?;
        // Every task keeps (and journals) the request: all of them together may hold no more
        // than one submission may, so an array cannot multiply a large request a thousandfold.
        let size = serde_json::to_vec(&request).map_or(usize::MAX, |b| b.len());
        if size.saturating_mul(spec.tasks.len()) > crate::extract::MAX_BODY {
            self.metrics.refused += 1;
            return Err(ApiError::bad(format!(
                "batch job submission failed: {} tasks of a {size}-byte request exceed the {} bytes an array may hold; submit fewer tasks or a smaller script and environment",
                spec.tasks.len(),
                crate::extract::MAX_BODY
            )));
        }
        // Room for every task before any is queued: the one record of the array (its task
        // indexes besides the request `admit` counted) and each further task's files.
        let more = (spec.tasks.len() as u64).saturating_sub(1);
        let files = super::room::job_file_bytes(&request);
        self.admit_jobs(spec.tasks.len() as u64 * 12, more, more * files)?;
        let first = self.store.image().next_id;
        let mut queued: Vec<(u64, JobId, ArrayMember)> = Vec::with_capacity(spec.tasks.len());
        for (i, &task_id) in spec.tasks.iter().enumerate() {
            let id = first + i as u64;
            let member = ArrayMember {
                job_id: first,
                task_id,
                throttle: spec.throttle,
            };
            match self.enqueue(id, &who.user, &request, Some(member)) {
                Ok(eid) => queued.push((id, eid, member)),
                Err(e) => {
                    for (id, eid, _) in queued {
                        self.ids.unlink(id);
                        let _ = self.engine.cancel(eid);
                        let _ = self.engine.purge(eid);
                    }
                    self.ids.unlink_array(first);
                    self.metrics.refused += 1;
                    return Err(ApiError::bad(format!("batch job submission failed: {e}")));
                }
            }
        }
        let time = self.engine.now();
        let last_id = (first + queued.len() as u64).saturating_sub(1).max(first);
        let hold = request.hold;
        for &(id, eid, _) in &queued {
            if hold {
                let _ = self.engine.hold(eid, Hold::User);
            }
            self.metrics.submitted += 1;
            self.accepted_at.insert(id, std::time::Instant::now());
        }
        // One record for the whole array: a crash keeps every task of it or none.
        self.commit(Record::SubmitArray {
            id: first,
            last_id,
            time,
            uid: who.uid,
            user: who.user.clone(),
            request: Box::new(request),
            hold,
            tasks: queued.iter().map(|(_, _, m)| m.task_id).collect(),
            throttle: spec.throttle,
        });
        Ok(JobSubmitted { job_id: first })
    }

    /// The engine's side of a task: its array (created when the first of its tasks is
    /// queued in this engine) and index.
    pub(super) fn engine_task(&mut self, member: ArrayMember) -> ArrayTask {
        let array = match self.ids.array(member.job_id) {
            Some(a) => a,
            None => {
                let a = self.engine.create_array(member.throttle);
                self.ids.link_array(member.job_id, a);
                a
            }
        };
        ArrayTask {
            array,
            task_id: member.task_id,
        }
    }

    /// The tasks of array `array_id` in the image, in task order of submission.
    fn array_tasks(&self, array_id: u64) -> Vec<&JobRecord> {
        self.store
            .image()
            .jobs
            .range(array_id..)
            .map(|(_, j)| &**j)
            .take_while(|j| j.array.is_some_and(|a| a.job_id == array_id))
            .collect()
    }

    /// A dependency as written (public ids) made into the engine's, or `None` when it is
    /// decided already and satisfied; refused when it can never be. `member` is the task
    /// being queued, for `aftercorr`.
    pub(super) fn resolve_dependency(
        &self,
        d: Dependency,
        member: Option<ArrayMember>,
    ) -> Result<Option<Dependency>, String> {
        let public = u64::from(d.job);
        let is_array = self
            .store
            .image()
            .jobs
            .get(&public)
            .and_then(|j| j.array)
            .is_some_and(|a| a.job_id == public);
        match (d.kind, d.task) {
            (DependencyKind::AfterCorr, _) if !is_array => Err(format!(
                "job dependency problem: aftercorr:{public} names a job that is not an array"
            )),
            (DependencyKind::AfterCorr, _) => match self.ids.array(public) {
                Some(e) => Ok(Some(Dependency::on(d.kind, e))),
                None => {
                    let partner = member.and_then(|m| {
                        self.array_tasks(public)
                            .into_iter()
                            .find(|j| j.array.is_some_and(|a| a.task_id == m.task_id))
                    });
                    match partner {
                        Some(p) => decided(DependencyKind::AfterOk, &[p.state], &d),
                        None => Ok(None),
                    }
                }
            },
            (_, Some(t)) => {
                let task = self
                    .array_tasks(public)
                    .into_iter()
                    .find(|j| j.array.is_some_and(|a| a.task_id == t))
                    .ok_or_else(|| format!("job dependency problem: unknown job {public}_{t}"))?;
                self.job_dependency(d.kind, task.id)
            }
            (_, None) if is_array => match self.ids.array(public) {
                Some(e) => Ok(Some(Dependency::on(d.kind, e))),
                None => {
                    let states: Vec<State> =
                        self.array_tasks(public).iter().map(|j| j.state).collect();
                    decided(d.kind, &states, &d)
                }
            },
            (_, None) => self.job_dependency(d.kind, public),
        }
    }

    /// A dependency on one job by public id: the engine's job while it holds it, else decided
    /// from how the job ended.
    fn job_dependency(
        &self,
        kind: DependencyKind,
        public: u64,
    ) -> Result<Option<Dependency>, String> {
        if let Some(e) = self.ids.engine(public) {
            return Ok(Some(Dependency::on(kind, e)));
        }
        // Not in the engine: ended long enough ago to be purged, or never existed.
        let Some(target) = self.store.image().jobs.get(&public) else {
            return Err(format!("job dependency problem: unknown job {public}"));
        };
        decided(
            kind,
            &[target.state],
            &Dependency::on(kind, public as JobId),
        )
    }

    /// `ArrayTaskThrottle=`: the array job `id` belongs to runs at most `throttle` tasks at
    /// once from the next pass; every task's record says so.
    pub(super) fn update_throttle(
        &mut self,
        who: &Identity,
        id: u64,
        throttle: u32,
    ) -> Result<JobUpdated, ApiError> {
        let job = self.authorize(who, id, "update")?;
        let Some(member) = job.array else {
            return Err(ApiError::bad(format!(
                "update job {id}: ArrayTaskThrottle applies to job arrays, and job {id} is not one"
            )));
        };
        if let Some(e) = self.ids.array(member.job_id) {
            self.engine
                .set_array_throttle(e, throttle)
                .map_err(|e| ApiError::conflict(format!("update job {id}: {e}")))?;
        }
        let tasks: Vec<u64> = self
            .array_tasks(member.job_id)
            .iter()
            .map(|j| j.id)
            .collect();
        for task in tasks {
            self.commit(Record::Update {
                id: task,
                changes: UpdateRequest {
                    array_task_throttle: Some(throttle),
                    ..UpdateRequest::default()
                },
            });
        }
        Ok(JobUpdated {
            job_id: id,
            updated: true,
        })
    }

    /// Tells the engine how the tasks a restart left out (ended ones) ended, for the arrays
    /// it holds again, so whole-array and `aftercorr` dependencies still see them.
    pub(super) fn note_ended_tasks(&mut self, ended: &[(ArrayMember, State)]) {
        for (member, state) in ended {
            if let Some(e) = self.ids.array(member.job_id) {
                self.engine
                    .array_task_ended(e, member.task_id, *state == State::Completed);
            }
        }
    }
}

/// A dependency whose targets all ended (or not) already: `None` if it holds or must wait no
/// longer, an error if it never can. A target not yet ended cannot be decided here, so the
/// targets are all final when this is asked for engine-less jobs.
fn decided(
    kind: DependencyKind,
    states: &[State],
    d: &Dependency,
) -> Result<Option<Dependency>, String> {
    let all_final = states.iter().all(|s| s.is_final());
    let all_ok = states.iter().all(|s| *s == State::Completed);
    let ok = match kind {
        DependencyKind::AfterAny => all_final,
        DependencyKind::AfterOk | DependencyKind::AfterCorr => all_final && all_ok,
        DependencyKind::AfterNotOk => all_final && !all_ok,
    };
    if ok {
        return Ok(None);
    }
    let ended = states
        .iter()
        .find(|s| s.is_final() && (**s != State::Completed) == all_ok)
        .or(states.first())
        .map_or("PENDING", |s| s.as_str());
    let target = match d.task {
        Some(t) => format!("{}_{t}", d.job),
        None => d.job.to_string(),
    };
    Err(format!(
        "job dependency problem: job {target} ended {ended}, so {}:{target} can never be satisfied",
        kind.as_str()
    ))
}
