//! The durable image of the daemon's state and the journal records that change it.
//!
//! The image is what a snapshot holds; [`Image::apply`] is a pure function of the image and one
//! record, so snapshot + journal always rebuild the same image. The engine is then rebuilt from
//! the image (see `recover`), never from a replay of scheduling passes, whose answers depend on
//! plugin generations and wall-clock budgets.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sluice_engine::{JobState, ReservationSpec};

pub use sluice_api::{ArrayMember, HoldBy, NodeAction, StepRecord};

use crate::power_image::{NodeAddress, NodePowerImage, PowerCallImage};
use sluice_api::{SubmitRequest, UpdateRequest};

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
    /// Processes killed for exceeding the job's memory.
    OutOfMemory,
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

const ALL: [State; 10] = [
    State::Pending,
    State::Configuring,
    State::Running,
    State::Completing,
    State::Completed,
    State::Failed,
    State::Cancelled,
    State::Timeout,
    State::NodeFail,
    State::OutOfMemory,
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
            JobState::OutOfMemory => Self::OutOfMemory,
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
            State::OutOfMemory => Self::OutOfMemory,
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
    /// The accounting store holds the job as it is now (any later record about it clears this,
    /// so an exit reported after the end is stored again); until then the daemon keeps
    /// offering it to the store, after a restart too.
    #[serde(default)]
    pub accounted: bool,
    /// The array it is a task of, if any.
    #[serde(default)]
    pub array: Option<ArrayMember>,
    /// An admin made its time limit UNLIMITED while it ran (its request, which a pending job
    /// is rebuilt from, cannot say so: there UNLIMITED means the partition's limit).
    #[serde(default)]
    pub unlimited_while_running: bool,
    /// Runs that ended in a requeue and the accounting store does not have yet (sacct -D
    /// shows them); cleared by `Accounted`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<EarlierRun>,
    /// Its script and environment are kept in files of their own under the state directory
    /// (`job_files`), not in `request`, so the image holds no script in memory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stored: bool,
}

/// A run of a job that went back to the queue, as it was when it did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlierRun {
    /// Requeues before this run (the job's `restarts` while it ran).
    pub restarts: u32,
    /// Its start.
    pub start: i64,
    /// When it was requeued.
    pub end: i64,
    /// Partition it ran in.
    pub partition: Option<String>,
    /// Nodes it ran on.
    pub nodes: Vec<String>,
    /// CPUs allocated.
    pub cpus: u64,
    /// Account charged.
    pub account: Option<String>,
    /// Why it was requeued.
    pub reason: String,
    /// Its steps.
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
        /// The array it is a task of, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        array: Option<ArrayMember>,
    },
    /// A job array accepted: one job per task, public ids in a row from `id` (the
    /// `ArrayJobId`), in one record so a crash keeps all of its tasks or none.
    SubmitArray {
        /// Public id of the first task, the array's id.
        id: u64,
        /// Public id of the last task (what the ids of a damaged record can be told by).
        last_id: u64,
        /// Submit time.
        time: i64,
        /// Owner uid.
        uid: u32,
        /// Owner name.
        user: String,
        /// The request every task runs, as accepted.
        request: Box<SubmitRequest>,
        /// Submitted held (`-H`).
        hold: bool,
        /// Each task's index, in id order.
        tasks: Vec<u32>,
        /// `%N`: most tasks running at once (0: no limit).
        throttle: u32,
    },
    /// Ended jobs, accounted and older than MinJobAge, leave the image.
    Purged {
        /// Jobs purged.
        ids: Vec<u64>,
    },
    /// The first record of a journal a snapshot emptied: its sequence number is the
    /// snapshot's, so start-up can tell a missing or older snapshot from a fresh state.
    Checkpoint {
        /// The next public job id when the snapshot was taken.
        next_id: u64,
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
        /// Its nodes are booting: it is CONFIGURING and launches at its `Ready`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        configuring: bool,
    },
    /// A CONFIGURING job's nodes all booted: it runs from `time` and is launched now.
    Ready {
        /// Job.
        id: u64,
        /// Its start time from now on (its time limit counts from it).
        time: i64,
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
        /// Eligible again only from then (Slurm's 121 s after a node failure), as BeginTime.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        begin: Option<i64>,
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
    /// A partition's state was set (`update PartitionName=… State=…`).
    Partition {
        /// Partition name.
        name: String,
        /// `UP`, `DOWN`, `DRAIN` or `INACTIVE`.
        state: String,
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
    /// A node's power record or health changed (power pass, registration, node update).
    Power {
        /// Node name.
        node: String,
        /// Its record now.
        power: NodePowerImage,
    },
    /// A power program call, journaled before the program runs.
    PowerCall {
        /// Its number.
        seq: u64,
        /// What runs.
        call: PowerCallImage,
    },
    /// A power program call ended (or was found interrupted at start-up).
    PowerCallDone {
        /// The call's number.
        seq: u64,
        /// How it ended (`exit 0`, `killed after 60 s`, `cannot run: …`).
        outcome: String,
    },
    /// A plugin generation was published (a swap, or the configuration's after a reconfigure or
    /// a change of its file).
    PluginPublished {
        /// Kind name.
        kind: String,
        /// What was published.
        choice: PluginChoice,
    },
    /// A kind's previous generation was made active again (and the active one previous).
    PluginRolledBack {
        /// Kind name.
        kind: String,
    },
    /// A shadow candidate started.
    ShadowStarted {
        /// Kind name.
        kind: String,
        /// The candidate.
        choice: PluginChoice,
    },
    /// Every shadow stopped.
    ShadowsStopped,
    /// A node registered (`sluice register`).
    Registered {
        /// Node name.
        node: String,
        /// Where it is reached.
        address: NodeAddress,
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
    /// The accounting store has these ended jobs as they were when this was journaled.
    Accounted {
        /// Jobs stored.
        ids: Vec<u64>,
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

impl Record {
    /// The job the record is about, if it is about one.
    pub fn job_id(&self) -> Option<u64> {
        match self {
            Record::Submit { id, .. }
            | Record::SubmitArray { id, .. }
            | Record::Cancel { id, .. }
            | Record::Hold { id, .. }
            | Record::Release { id }
            | Record::Update { id, .. }
            | Record::Started { id, .. }
            | Record::Ready { id, .. }
            | Record::Ended { id, .. }
            | Record::Exited { id, .. }
            | Record::Requeued { id, .. }
            | Record::StepStarted { id, .. }
            | Record::StepEnded { id, .. } => Some(*id),
            Record::Node { .. }
            | Record::Power { .. }
            | Record::PowerCall { .. }
            | Record::PowerCallDone { .. }
            | Record::PluginPublished { .. }
            | Record::PluginRolledBack { .. }
            | Record::ShadowStarted { .. }
            | Record::ShadowsStopped
            | Record::Registered { .. }
            | Record::Partition { .. }
            | Record::ReservationCreate { .. }
            | Record::ReservationDelete { .. }
            | Record::Purged { .. }
            | Record::Checkpoint { .. }
            | Record::Accounted { .. } => None,
        }
    }

    /// The highest public job id the record names (an array's last task), so recovery never
    /// hands out an id a readable record used.
    pub fn highest_job_id(&self) -> Option<u64> {
        match self {
            Record::SubmitArray { last_id, .. } => Some(*last_id),
            Record::Purged { ids } | Record::Accounted { ids } => ids.iter().max().copied(),
            Record::Checkpoint { next_id } => Some(next_id.saturating_sub(1)),
            other => other.job_id(),
        }
    }

    /// The public ids of the jobs the record creates.
    pub fn submitted_ids(&self) -> std::ops::RangeInclusive<u64> {
        match self {
            Record::Submit { id, .. } => *id..=*id,
            Record::SubmitArray { id, last_id, .. } => *id..=*last_id,
            #[allow(clippy::reversed_empty_ranges)]
            _ => 1..=0,
        }
    }
}

/// The decayed use limits are held to, kept across a restart.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LimitUseImage {
    /// Per QOS name.
    pub qos: BTreeMap<String, sluice_engine::limits::SpentUse>,
    /// Per association key.
    pub assocs: BTreeMap<String, sluice_engine::limits::SpentUse>,
}

/// Everything the daemon must not lose.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Image {
    /// Sequence number of the last record applied.
    pub seq: u64,
    /// Next public job id.
    pub next_id: u64,
    /// Every job, by public id. Shared with a snapshot being written (`Store::begin_snapshot`
    /// copies the image on the driver's thread); a change copies a record only while a
    /// snapshot still holds it.
    pub jobs: BTreeMap<u64, Arc<JobRecord>>,
    /// Nodes with an admin state (absent: as configured).
    pub nodes: BTreeMap<String, NodeAdmin>,
    /// Advance reservations, by name.
    pub reservations: BTreeMap<String, ReservationSpec>,
    /// Partitions not UP, with their state (absent: UP).
    #[serde(default)]
    pub partitions: BTreeMap<String, String>,
    /// Each association's own raw usage (`account` or `account/user`): the engine's at the last
    /// snapshot plus CPU-seconds of runs ended since.
    pub usage: BTreeMap<String, f64>,
    /// When `usage` was taken from the engine; runs count only from then on.
    pub usage_time: i64,
    /// The decayed use `GrpTRESMins` and `GrpWall` are held to, as the engine had it at the
    /// last snapshot: per QOS name and per association (`account` or `account/user`, over
    /// its subtree). Runs ended since are not added (fair-share `usage` is; limits' use after
    /// a crash may lag by the jobs ended since the last snapshot).
    #[serde(default)]
    pub limit_use: LimitUseImage,
    /// Nodes whose power record or health changed since start-up, as last journaled (absent:
    /// as the configuration starts them).
    #[serde(default)]
    pub power: BTreeMap<String, NodePowerImage>,
    /// Power program calls journaled and not yet ended, by number.
    #[serde(default)]
    pub power_calls: BTreeMap<u64, PowerCallImage>,
    /// The next power call's number.
    #[serde(default)]
    pub next_power_call: u64,
    /// Where registered nodes are reached.
    #[serde(default)]
    pub addresses: BTreeMap<String, NodeAddress>,
    /// Per plugin kind, its previous and active generation as chosen (previous first), once a
    /// swap made them differ from the configuration's: what a restart makes active again.
    #[serde(default)]
    pub plugins: BTreeMap<String, Vec<PluginChoice>>,
    /// The shadow candidates running, per kind.
    #[serde(default)]
    pub shadows: BTreeMap<String, PluginChoice>,
}

/// A plugin generation as an admin chose it: what a restart loads again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginChoice {
    /// The component, library or bundled name swapped in; `None` is the configuration's
    /// plugin, read from the cluster file at the time.
    pub file: Option<String>,
    /// Settings given with the swap, on top of the configured ones.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
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
                array,
            } => {
                self.next_id = self.next_id.max(id + 1);
                let mut job = JobRecord::submitted(*id, *time, *uid, user, request, *hold);
                job.array = *array;
                self.jobs.insert(*id, Arc::new(job));
            }
            Record::SubmitArray {
                id,
                last_id,
                time,
                uid,
                user,
                request,
                hold,
                tasks,
                throttle,
            } => {
                self.next_id = self.next_id.max(last_id + 1);
                for (i, &task_id) in tasks.iter().enumerate() {
                    let task = id + i as u64;
                    let mut job = JobRecord::submitted(task, *time, *uid, user, request, *hold);
                    job.array = Some(ArrayMember {
                        job_id: *id,
                        task_id,
                        throttle: *throttle,
                    });
                    self.jobs.insert(task, Arc::new(job));
                }
            }
            Record::Purged { ids } => {
                for id in ids {
                    self.jobs.remove(id);
                }
            }
            Record::Checkpoint { next_id } => self.next_id = self.next_id.max(*next_id),
            Record::Node {
                node,
                action,
                reason,
                time,
            } => self.set_node_admin(node, *action, reason, *time),
            Record::Partition { name, state } => {
                if state == "UP" {
                    self.partitions.remove(name);
                } else {
                    self.partitions.insert(name.clone(), state.clone());
                }
            }
            Record::ReservationCreate { spec } => {
                self.reservations.insert(spec.name.clone(), spec.clone());
            }
            Record::ReservationDelete { name } => {
                self.reservations.remove(name);
            }
            Record::Power { node, power } => {
                self.power.insert(node.clone(), power.clone());
            }
            Record::PluginPublished { kind, choice } => {
                let history = self.plugins.entry(kind.clone()).or_default();
                if history.is_empty() {
                    history.push(PluginChoice::default());
                }
                history.push(choice.clone());
                if history.len() > 2 {
                    history.remove(0);
                }
            }
            Record::PluginRolledBack { kind } => {
                if let Some(history) = self.plugins.get_mut(kind) {
                    history.reverse();
                }
            }
            Record::ShadowStarted { kind, choice } => {
                self.shadows.insert(kind.clone(), choice.clone());
            }
            Record::ShadowsStopped => self.shadows.clear(),
            Record::PowerCall { seq, call } => {
                self.next_power_call = self.next_power_call.max(seq + 1);
                self.power_calls.insert(*seq, call.clone());
            }
            Record::PowerCallDone { seq, .. } => {
                self.power_calls.remove(seq);
            }
            Record::Registered { node, address } => {
                self.addresses.insert(node.clone(), address.clone());
            }
            Record::Accounted { ids } => {
                for id in ids {
                    if let Some(job) = self.jobs.get_mut(id).map(Arc::make_mut) {
                        job.accounted = true;
                        job.runs.clear();
                    }
                }
            }
            Record::Ended { id, time, .. } => {
                self.accrue_usage(*id, *time);
                self.apply_to_job(*id, record);
            }
            Record::Cancel { id, .. }
            | Record::Hold { id, .. }
            | Record::Release { id }
            | Record::Update { id, .. }
            | Record::Started { id, .. }
            | Record::Ready { id, .. }
            | Record::Exited { id, .. }
            | Record::Requeued { id, .. }
            | Record::StepStarted { id, .. }
            | Record::StepEnded { id, .. } => self.apply_to_job(*id, record),
        }
    }

    fn apply_to_job(&mut self, id: u64, record: &Record) {
        if let Some(job) = self.jobs.get_mut(&id).map(Arc::make_mut) {
            job.apply(record);
            job.accounted = false;
        }
    }

    /// Adds the CPU-seconds of job `id`'s run ending at `time` (those since the snapshot's
    /// usage was taken) to its association, so fair share survives a restart.
    fn accrue_usage(&mut self, id: u64, time: i64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        if let (Some(start), Some(account)) = (job.start_time, &job.account) {
            let key = format!("{account}/{}", job.user);
            *self.usage.entry(key).or_default() +=
                (time - start.max(self.usage_time)).max(0) as f64 * job.cpus as f64;
        }
    }

    /// Records an admin state of `node`; RESUME returns it to its configured state.
    fn set_node_admin(&mut self, node: &str, action: NodeAction, reason: &str, time: i64) {
        if action == NodeAction::Resume {
            self.nodes.remove(node);
        } else {
            let admin = NodeAdmin {
                action,
                reason: reason.to_string(),
                time,
            };
            self.nodes.insert(node.to_string(), admin);
        }
    }
}

impl JobRecord {
    /// A job as accepted: pending, held if it asked to be.
    fn submitted(
        id: u64,
        time: i64,
        uid: u32,
        user: &str,
        request: &SubmitRequest,
        hold: bool,
    ) -> Self {
        Self {
            id,
            uid,
            user: user.to_string(),
            request: request.clone(),
            submit_time: time,
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
            accounted: false,
            array: None,
            unlimited_while_running: false,
            runs: Vec::new(),
            stored: false,
        }
    }

    /// Applies a record about this job; records about other things leave it alone.
    fn apply(&mut self, record: &Record) {
        match record {
            Record::Cancel { time, .. } => self.cancel(*time),
            Record::Hold { by, .. } => self.hold = Some(*by),
            Record::Release { .. } => self.hold = None,
            Record::Update { changes, .. } => {
                if self.state == State::Running
                    && (changes.unlimited_time || changes.time_limit.is_some())
                {
                    self.unlimited_while_running = changes.unlimited_time;
                }
                changes.apply(&mut self.request);
                if let (Some(a), Some(t)) = (&mut self.array, changes.array_task_throttle) {
                    a.throttle = t;
                }
            }
            Record::Started {
                time,
                partition,
                nodes,
                cpus,
                account,
                configuring,
                ..
            } => {
                self.start(*time, partition, nodes, *cpus, account);
                if *configuring {
                    self.state = State::Configuring;
                }
            }
            Record::Ready { time, .. } => {
                if self.state == State::Configuring {
                    self.state = State::Running;
                    self.start_time = Some(*time);
                }
            }
            Record::Ended {
                time,
                state,
                exit_code,
                reason,
                ..
            } => self.end(*time, *state, *exit_code, reason.clone()),
            Record::Exited { code, signal, .. } => {
                self.exit_code = *code;
                self.signal = *signal;
            }
            Record::Requeued {
                time,
                reason,
                begin,
                ..
            } => self.requeue(*time, reason, *begin),
            Record::StepStarted {
                step, name, time, ..
            } => self.steps.push(StepRecord {
                id: *step,
                name: name.clone(),
                start: *time,
                end: None,
                exit_code: None,
            }),
            Record::StepEnded {
                step,
                exit_code,
                time,
                ..
            } => {
                if let Some(s) = self.steps.iter_mut().find(|s| s.id == *step) {
                    s.end = Some(*time);
                    s.exit_code = Some(*exit_code);
                }
            }
            Record::Submit { .. }
            | Record::SubmitArray { .. }
            | Record::Purged { .. }
            | Record::Checkpoint { .. }
            | Record::Node { .. }
            | Record::Power { .. }
            | Record::PowerCall { .. }
            | Record::PowerCallDone { .. }
            | Record::PluginPublished { .. }
            | Record::PluginRolledBack { .. }
            | Record::ShadowStarted { .. }
            | Record::ShadowsStopped
            | Record::Registered { .. }
            | Record::Partition { .. }
            | Record::ReservationCreate { .. }
            | Record::ReservationDelete { .. }
            | Record::Accounted { .. } => {}
        }
    }

    /// A pending job ends CANCELLED now; an active one is marked so a crash still cancels it.
    fn cancel(&mut self, time: i64) {
        if self.state == State::Pending {
            self.state = State::Cancelled;
            self.end_time = Some(time);
        } else if self.state.is_active() {
            self.cancel_requested = true;
        }
    }

    /// A run starts: where, on what, charged to whom; the last run's results are cleared.
    fn start(&mut self, time: i64, partition: &str, nodes: &[String], cpus: u64, account: &str) {
        self.state = State::Running;
        self.start_time = Some(time);
        self.end_time = None;
        self.partition = Some(partition.to_string());
        self.nodes = nodes.to_vec();
        self.cpus = cpus;
        self.account = Some(account.to_string());
        self.exit_code = None;
        self.signal = None;
        self.steps.clear();
    }

    /// The job ends in `state`; steps still open end with it.
    fn end(&mut self, time: i64, state: State, exit_code: Option<i32>, reason: Option<String>) {
        self.state = state;
        self.end_time = Some(time);
        if exit_code.is_some() {
            self.exit_code = exit_code;
        }
        self.reason = reason;
        for step in self.steps.iter_mut().filter(|s| s.end.is_none()) {
            step.end = Some(time);
        }
    }

    /// Back to pending after a run, counting the restart; eligible again from `begin`, if given.
    /// The run that ends here is kept for the accounting store.
    fn requeue(&mut self, time: i64, reason: &str, begin: Option<i64>) {
        if begin.is_some() {
            self.request.begin = begin;
        }
        if let Some(start) = self.start_time {
            self.runs.push(EarlierRun {
                restarts: self.restarts,
                start,
                end: time,
                partition: self.partition.clone(),
                nodes: std::mem::take(&mut self.nodes),
                cpus: self.cpus,
                account: self.account.clone(),
                reason: reason.to_string(),
                steps: std::mem::take(&mut self.steps),
            });
        }
        self.state = State::Pending;
        self.start_time = None;
        self.end_time = None;
        self.nodes.clear();
        self.partition = None;
        self.reason = Some(reason.to_string());
        self.restarts += 1;
        self.steps.clear();
    }
}
