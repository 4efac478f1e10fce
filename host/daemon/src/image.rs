//! The durable image of the daemon's state and the journal records that change it.
//!
//! The image is what a snapshot holds; [`Image::apply`] is a pure function of the image and one
//! record, so snapshot + journal always rebuild the same image. The engine is then rebuilt from
//! the image (see `recover`), never from a replay of scheduling passes, whose answers depend on
//! plugin generations and wall-clock budgets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sluice_engine::{JobState, ReservationSpec};

pub use sluice_api::{HoldBy, NodeAction, StepRecord};

use crate::request::{SubmitRequest, UpdateRequest};

/// Job states with Slurm's names, as the journal stores them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum State {
    /// Waiting in the queue.
    Pending,
    /// Allocated, nodes booting.
    Configuring,
    /// Running.
    Running,
    /// Ending.
    Completing,
    /// Exit code 0.
    Completed,
    /// Non-zero exit code.
    Failed,
    /// Cancelled.
    Cancelled,
    /// Time limit reached.
    Timeout,
    /// Node failure (or its processes vanished with the daemon and it is not requeueable).
    NodeFail,
}

impl State {
    /// The long name.
    pub fn as_str(self) -> &'static str {
        JobState::from(self).as_str()
    }

    /// The squeue ST code.
    pub fn short(self) -> &'static str {
        JobState::from(self).short()
    }

    /// Whether the job can never run again.
    pub fn is_final(self) -> bool {
        JobState::from(self).is_final()
    }

    /// Whether the job holds nodes.
    pub fn is_active(self) -> bool {
        matches!(self, Self::Configuring | Self::Running | Self::Completing)
    }

    /// Parses a long name or ST code (`PENDING`, `PD`, `r`).
    pub fn parse(text: &str) -> Option<Self> {
        let up = text.trim().to_ascii_uppercase();
        ALL.into_iter()
            .find(|s| s.as_str() == up || s.short() == up)
    }
}

const ALL: [State; 9] = [
    State::Pending,
    State::Configuring,
    State::Running,
    State::Completing,
    State::Completed,
    State::Failed,
    State::Cancelled,
    State::Timeout,
    State::NodeFail,
];

impl From<JobState> for State {
    fn from(s: JobState) -> Self {
        match s {
            JobState::Pending => Self::Pending,
            JobState::Configuring => Self::Configuring,
            JobState::Running => Self::Running,
            JobState::Completing => Self::Completing,
            JobState::Completed => Self::Completed,
            JobState::Failed => Self::Failed,
            JobState::Cancelled => Self::Cancelled,
            JobState::Timeout => Self::Timeout,
            JobState::NodeFail => Self::NodeFail,
        }
    }
}

impl From<State> for JobState {
    fn from(s: State) -> Self {
        match s {
            State::Pending => Self::Pending,
            State::Configuring => Self::Configuring,
            State::Running => Self::Running,
            State::Completing => Self::Completing,
            State::Completed => Self::Completed,
            State::Failed => Self::Failed,
            State::Cancelled => Self::Cancelled,
            State::Timeout => Self::Timeout,
            State::NodeFail => Self::NodeFail,
        }
    }
}

/// A node's admin state as the image keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeAdmin {
    /// The last action.
    pub action: NodeAction,
    /// Its reason.
    pub reason: String,
    /// When.
    pub time: i64,
}

/// One job as the daemon keeps it durably.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// Public job id (what users see; the engine's own ids are internal).
    pub id: u64,
    /// Owner's uid.
    pub uid: u32,
    /// Owner's user name.
    pub user: String,
    /// What was submitted (updates applied).
    pub request: SubmitRequest,
    /// Submit time.
    pub submit_time: i64,
    /// State.
    pub state: State,
    /// Hold, if any.
    pub hold: Option<HoldBy>,
    /// Partition it runs or ran in.
    pub partition: Option<String>,
    /// Nodes it runs or ran on.
    pub nodes: Vec<String>,
    /// CPUs allocated.
    pub cpus: u64,
    /// Account charged.
    pub account: Option<String>,
    /// Start time of the current or last run.
    pub start_time: Option<i64>,
    /// End time once ended.
    pub end_time: Option<i64>,
    /// Exit code of the batch script, once known.
    pub exit_code: Option<i32>,
    /// Signal that ended the batch script, if one did.
    pub signal: Option<i32>,
    /// Reason of the end (TimeLimit, NodeDown, …) or of the last requeue.
    pub reason: Option<String>,
    /// A cancel was acknowledged while it ran (so a crash before its end still cancels it).
    pub cancel_requested: bool,
    /// Times requeued.
    pub restarts: u32,
    /// Steps.
    pub steps: Vec<StepRecord>,
}

/// One acknowledged change. Inputs (submit, cancel, …) and the engine's decisions (start, end)
/// are both recorded, so recovery never has to re-run a pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Record {
    /// A job accepted under `id`.
    Submit {
        /// Public id.
        id: u64,
        /// Submit time.
        time: i64,
        /// Owner uid.
        uid: u32,
        /// Owner name.
        user: String,
        /// The request as accepted (boxed: it is most of the record's size).
        request: Box<SubmitRequest>,
        /// Submitted held (`-H`).
        hold: bool,
    },
    /// A cancel was acknowledged (a pending job ends now; a running one by its `Ended`).
    Cancel {
        /// Job.
        id: u64,
        /// When.
        time: i64,
    },
    /// A pending job was held.
    Hold {
        /// Job.
        id: u64,
        /// By whom.
        by: HoldBy,
    },
    /// A held job was released.
    Release {
        /// Job.
        id: u64,
    },
    /// A pending job's request changed.
    Update {
        /// Job.
        id: u64,
        /// Fields changed.
        changes: UpdateRequest,
    },
    /// The engine started the job.
    Started {
        /// Job.
        id: u64,
        /// When.
        time: i64,
        /// Partition.
        partition: String,
        /// Nodes.
        nodes: Vec<String>,
        /// CPUs allocated.
        cpus: u64,
        /// Account charged.
        account: String,
    },
    /// The job ended.
    Ended {
        /// Job.
        id: u64,
        /// When.
        time: i64,
        /// Final state.
        state: State,
        /// Exit code, when it finished by itself.
        exit_code: Option<i32>,
        /// Reason (TimeLimit, NodeDown, …).
        reason: Option<String>,
    },
    /// The batch script's process exited (after its end for TIMEOUT/CANCELLED).
    Exited {
        /// Job.
        id: u64,
        /// Exit code, if it exited.
        code: Option<i32>,
        /// Signal, if one killed it.
        signal: Option<i32>,
    },
    /// A running job went back to the queue.
    Requeued {
        /// Job.
        id: u64,
        /// When.
        time: i64,
        /// Why.
        reason: String,
    },
    /// A node was set DOWN, DRAIN or RESUME.
    Node {
        /// Node name.
        node: String,
        /// Action.
        action: NodeAction,
        /// Reason.
        reason: String,
        /// When.
        time: i64,
    },
    /// An advance reservation was created.
    ReservationCreate {
        /// What was asked.
        spec: ReservationSpec,
    },
    /// An advance reservation was deleted.
    ReservationDelete {
        /// Its name.
        name: String,
    },
    /// A step started.
    StepStarted {
        /// Job.
        id: u64,
        /// Step id.
        step: u32,
        /// Name.
        name: String,
        /// When.
        time: i64,
    },
    /// A step ended.
    StepEnded {
        /// Job.
        id: u64,
        /// Step id.
        step: u32,
        /// Exit code.
        exit_code: i32,
        /// When.
        time: i64,
    },
}

/// Everything the daemon must not lose.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Image {
    /// Sequence number of the last record applied.
    pub seq: u64,
    /// Next public job id.
    pub next_id: u64,
    /// Every job, by public id.
    pub jobs: BTreeMap<u64, JobRecord>,
    /// Nodes with an admin state (absent: as configured).
    pub nodes: BTreeMap<String, NodeAdmin>,
    /// Advance reservations, by name.
    pub reservations: BTreeMap<String, ReservationSpec>,
    /// Each association's own raw usage (`account` or `account/user`): the engine's at the last
    /// snapshot plus CPU-seconds of runs ended since.
    pub usage: BTreeMap<String, f64>,
    /// When `usage` was taken from the engine; runs count only from then on.
    pub usage_time: i64,
}

impl Image {
    /// An empty image whose first job will be `first_id` (Slurm's FirstJobId, 1).
    pub fn new(first_id: u64) -> Self {
        Self {
            next_id: first_id.max(1),
            ..Self::default()
        }
    }

    /// Applies one record. Records about unknown jobs are ignored: they can only come from a
    /// journal older than the snapshot it follows, which recovery never replays.
    pub fn apply(&mut self, record: &Record) {
        match record {
            Record::Submit {
                id,
                time,
                uid,
                user,
                request,
                hold,
            } => {
                self.next_id = self.next_id.max(id + 1);
                self.jobs.insert(
                    *id,
                    JobRecord {
                        id: *id,
                        uid: *uid,
                        user: user.clone(),
                        request: (**request).clone(),
                        submit_time: *time,
                        state: State::Pending,
                        hold: hold.then_some(HoldBy::User),
                        partition: None,
                        nodes: Vec::new(),
                        cpus: 0,
                        account: request.account.clone(),
                        start_time: None,
                        end_time: None,
                        exit_code: None,
                        signal: None,
                        reason: None,
                        cancel_requested: false,
                        restarts: 0,
                        steps: Vec::new(),
                    },
                );
            }
            Record::Cancel { id, time } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    if job.state == State::Pending {
                        job.state = State::Cancelled;
                        job.end_time = Some(*time);
                    } else if job.state.is_active() {
                        job.cancel_requested = true;
                    }
                }
            }
            Record::Hold { id, by } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    job.hold = Some(*by);
                }
            }
            Record::Release { id } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    job.hold = None;
                }
            }
            Record::Update { id, changes } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    changes.apply(&mut job.request);
                }
            }
            Record::Started {
                id,
                time,
                partition,
                nodes,
                cpus,
                account,
            } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    job.state = State::Running;
                    job.start_time = Some(*time);
                    job.end_time = None;
                    job.partition = Some(partition.clone());
                    job.nodes = nodes.clone();
                    job.cpus = *cpus;
                    job.account = Some(account.clone());
                    job.exit_code = None;
                    job.signal = None;
                    job.steps.clear();
                }
            }
            Record::Ended {
                id,
                time,
                state,
                exit_code,
                reason,
            } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    if let (Some(start), Some(account)) = (job.start_time, &job.account) {
                        // Usage of runs since the snapshot, so fair share survives a restart.
                        let key = format!("{account}/{}", job.user);
                        *self.usage.entry(key).or_default() +=
                            (time - start.max(self.usage_time)).max(0) as f64 * job.cpus as f64;
                    }
                    job.state = *state;
                    job.end_time = Some(*time);
                    if exit_code.is_some() {
                        job.exit_code = *exit_code;
                    }
                    job.reason = reason.clone();
                    for step in job.steps.iter_mut().filter(|s| s.end.is_none()) {
                        step.end = Some(*time);
                    }
                }
            }
            Record::Exited { id, code, signal } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    job.exit_code = *code;
                    job.signal = *signal;
                }
            }
            Record::Requeued { id, time, reason } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    job.state = State::Pending;
                    job.start_time = None;
                    job.end_time = None;
                    job.nodes.clear();
                    job.partition = None;
                    job.reason = Some(reason.clone());
                    job.restarts += 1;
                    job.steps.clear();
                    let _ = time;
                }
            }
            Record::Node {
                node,
                action,
                reason,
                time,
            } => {
                if *action == NodeAction::Resume {
                    self.nodes.remove(node);
                } else {
                    self.nodes.insert(
                        node.clone(),
                        NodeAdmin {
                            action: *action,
                            reason: reason.clone(),
                            time: *time,
                        },
                    );
                }
            }
            Record::ReservationCreate { spec } => {
                self.reservations.insert(spec.name.clone(), spec.clone());
            }
            Record::ReservationDelete { name } => {
                self.reservations.remove(name);
            }
            Record::StepStarted {
                id,
                step,
                name,
                time,
            } => {
                if let Some(job) = self.jobs.get_mut(id) {
                    job.steps.push(StepRecord {
                        id: *step,
                        name: name.clone(),
                        start: *time,
                        end: None,
                        exit_code: None,
                    });
                }
            }
            Record::StepEnded {
                id,
                step,
                exit_code,
                time,
            } => {
                if let Some(s) = self
                    .jobs
                    .get_mut(id)
                    .and_then(|j| j.steps.iter_mut().find(|s| s.id == *step))
                {
                    s.end = Some(*time);
                    s.exit_code = Some(*exit_code);
                }
            }
        }
    }
}
