//! Owns a job's record: what the user submitted, its state and reason, allocation and steps.
//!
//! Jobs: what a user submits, the states and reasons Slurm shows, allocations and steps.

use serde::Serialize;
use sluice_cluster::{AssocId, PartitionId, QosId};
use sluice_policy::{Charge, Placement};

use crate::array::ArrayTask;
use crate::gres::job::{JobGres, StepGres};
use crate::licenses::LicenseDemand;
use crate::limits::reason::LimitReason;
use crate::request::{Constraint, Dependency, GresRequest, LicenseRequest};

pub use crate::job_id::JobId;

/// What a user sets at submission, with sbatch's defaults.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobSpec {
    /// `--job-name`.
    pub name: String,
    /// The submitting user.
    pub user: String,
    /// `--account`; `None` takes the user's first association.
    pub account: Option<String>,
    /// `--partition`, possibly several; empty means the default partition.
    pub partitions: Vec<String>,
    /// `--qos`; `None` takes the association's default QOS, else `normal`, else the first.
    pub qos: Option<String>,
    /// `--nodes` minimum (1).
    pub min_nodes: u32,
    /// `--nodes` maximum; `None` means the minimum.
    pub max_nodes: Option<u32>,
    /// `--ntasks` (1).
    pub tasks: u32,
    /// `--cpus-per-task` (1).
    pub cpus_per_task: u32,
    /// `--ntasks-per-node`; 0 when not given. When given, every node of the job runs that many
    /// tasks (at most, if `--ntasks` leaves fewer) and gets their CPUs.
    pub tasks_per_node: u32,
    /// `--mem` per node in MB; 0 asks for no memory.
    pub memory_per_node_mb: u64,
    /// `--time` in seconds; `None` takes the partition's DefaultTime, else its MaxTime.
    pub time_limit: Option<u64>,
    /// `--gres`, per node.
    pub gres: Vec<GresRequest>,
    /// `--gpus`, in total over the job.
    pub gpus: Option<u32>,
    /// `--gpus-per-node`.
    pub gpus_per_node: Option<u32>,
    /// The type of `--gpus` / `--gpus-per-node` (`--gpus=a100:2`), if given.
    pub gpu_type: Option<String>,
    /// `-L/--licenses`: cluster licenses and HRES resources.
    pub licenses: Vec<LicenseRequest>,
    /// `--constraint`.
    pub constraint: Option<Constraint>,
    /// `--exclusive`.
    pub exclusive: bool,
    /// `-s/--oversubscribe`: the job may share CPUs in a partition that is
    /// `OverSubscribe=YES` (under FORCE every job does; under NO none).
    pub oversubscribe: bool,
    /// `--nice` (0); positive lowers priority.
    pub nice: i32,
    /// A fixed priority (an admin's `--priority` or `Priority=`): stored in place of the
    /// priority policy's answer, in every partition (Slurm's `direct_set_prio`).
    pub priority: Option<u32>,
    /// `--begin`, Unix seconds.
    pub begin_time: Option<i64>,
    /// `--dependency`.
    pub dependencies: Vec<Dependency>,
    /// `--hold`: submitted held by the user.
    pub hold: bool,
    /// `--reservation`.
    pub reservation: Option<String>,
    /// The submitting user's Unix groups, which partitions' `AllowGroups` are checked against
    /// (filled by the host that knows the user; empty matches no `AllowGroups` list).
    pub groups: Vec<String>,
    /// Admin-set site factor (`scontrol update SiteFactor=`).
    pub site_factor: i64,
    /// A batch script (`sbatch`, true) rather than an interactive allocation (`salloc`/`srun`),
    /// which a node failure always kills.
    pub batch: bool,
    /// `--requeue` (`Some(true)`) or `--no-requeue` (`Some(false)`); `None` follows `JobRequeue`.
    /// A batch job that may be requeued goes back to the queue when its node fails or is set
    /// DOWN, rather than ending NODE_FAIL.
    pub requeue: Option<bool>,
    /// `-w/--nodelist`, sorted: when not empty, the only nodes the job may use.
    pub required_nodes: Vec<String>,
    /// `-x/--exclude`, sorted: nodes the job never uses.
    pub excluded_nodes: Vec<String>,
    /// `--time-min`, seconds: backfill may start the job with this shorter limit where its
    /// whole one does not fit before what is planned.
    pub time_min: Option<u64>,
    /// The array and index this job is a task of (`--array`), if any.
    pub array: Option<ArrayTask>,
}

impl JobSpec {
    /// Whether `--nodelist` or `--exclude` narrows the nodes the job may use.
    pub fn lists_nodes(&self) -> bool {
        !self.required_nodes.is_empty() || !self.excluded_nodes.is_empty()
    }

    /// Whether the node lists let the job use node `name` (`--nodelist`, `--exclude`).
    pub fn allows_node(&self, name: &str) -> bool {
        (self.required_nodes.is_empty()
            || self
                .required_nodes
                .binary_search_by(|n| n.as_str().cmp(name))
                .is_ok())
            && self
                .excluded_nodes
                .binary_search_by(|n| n.as_str().cmp(name))
                .is_err()
    }

    /// A one-task, one-node job of `user` with every other field at sbatch's default.
    pub fn new(user: impl Into<String>) -> Self {
        Self {
            name: "job".into(),
            user: user.into(),
            account: None,
            partitions: Vec::new(),
            qos: None,
            min_nodes: 1,
            max_nodes: None,
            tasks: 1,
            cpus_per_task: 1,
            tasks_per_node: 0,
            memory_per_node_mb: 0,
            time_limit: None,
            gres: Vec::new(),
            gpus: None,
            gpus_per_node: None,
            gpu_type: None,
            licenses: Vec::new(),
            constraint: None,
            exclusive: false,
            oversubscribe: false,
            nice: 0,
            priority: None,
            begin_time: None,
            dependencies: Vec::new(),
            hold: false,
            reservation: None,
            groups: Vec::new(),
            site_factor: 0,
            batch: true,
            requeue: None,
            required_nodes: Vec::new(),
            excluded_nodes: Vec::new(),
            time_min: None,
            array: None,
        }
    }
}

/// Job states with Slurm's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobState {
    /// Waiting for resources or eligibility.
    Pending,
    /// Allocated, waiting for nodes to boot (power saving, cloud).
    Configuring,
    /// Running.
    Running,
    /// Finished, waiting for the epilog to complete on its nodes.
    Completing,
    /// Ended with exit code 0.
    Completed,
    /// Ended with a non-zero exit code.
    Failed,
    /// Cancelled by a user or admin.
    Cancelled,
    /// Reached its time limit.
    Timeout,
    /// One of its nodes failed.
    NodeFail,
    /// The kernel killed some of its processes for exceeding its memory (its cgroup's limit).
    OutOfMemory,
}

impl JobState {
    /// The long name `squeue --long` and `sacct` print.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Configuring => "CONFIGURING",
            Self::Running => "RUNNING",
            Self::Completing => "COMPLETING",
            Self::Completed => "COMPLETED",
            Self::Failed => "FAILED",
            Self::Cancelled => "CANCELLED",
            Self::Timeout => "TIMEOUT",
            Self::NodeFail => "NODE_FAIL",
            Self::OutOfMemory => "OUT_OF_MEMORY",
        }
    }

    /// The compact code `squeue` prints in its ST column.
    pub fn short(self) -> &'static str {
        match self {
            Self::Pending => "PD",
            Self::Configuring => "CF",
            Self::Running => "R",
            Self::Completing => "CG",
            Self::Completed => "CD",
            Self::Failed => "F",
            Self::Cancelled => "CA",
            Self::Timeout => "TO",
            Self::NodeFail => "NF",
            Self::OutOfMemory => "OOM",
        }
    }

    /// True once the job can never run again.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Self::Completed
                | Self::Failed
                | Self::Cancelled
                | Self::Timeout
                | Self::NodeFail
                | Self::OutOfMemory
        )
    }

    /// True while the job holds resources.
    pub fn holds_resources(self) -> bool {
        matches!(self, Self::Configuring | Self::Running | Self::Completing)
    }
}

/// Why a job is pending (or how it ended), with the names `squeue` prints (and serialized as).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// No reason (running, or not yet looked at).
    None,
    /// A higher-priority job of the partition is waiting.
    Priority,
    /// Not enough free nodes, CPUs, memory or GRES.
    Resources,
    /// Not enough licenses or HRES.
    Licenses,
    /// Waiting for dependencies.
    Dependency,
    /// A dependency can never be satisfied.
    DependencyNeverSatisfied,
    /// Waiting for the begin time.
    BeginTime,
    /// Held by the user.
    JobHeldUser,
    /// Held by an admin.
    JobHeldAdmin,
    /// Waiting for its advance reservation to start.
    Reservation,
    /// Required nodes are down, drained or reserved.
    ReqNodeNotAvail,
    /// The job can never run in its partitions as requested.
    BadConstraints,
    /// Ended by its time limit.
    TimeLimit,
    /// Ended with a non-zero exit code.
    NonZeroExitCode,
    /// Ended because a node failed.
    NodeDown,
    /// Ended because it exceeded its memory.
    OutOfMemory,
    /// Starting would power up more nodes than `max_powered_nodes` allows.
    MaxPoweredUpNodes,
    /// Its partition is DOWN.
    PartitionDown,
    /// Its partition is INACTIVE.
    PartitionInactive,
    /// An association or QOS limit holds it.
    Limit(LimitReason),
    /// As many tasks of its array run as the array's throttle (`%N`) allows.
    JobArrayTaskLimit,
}

impl Reason {
    /// Whether the reason is a limit or a partition's state, which no free resources end and
    /// for which backfill plans nothing.
    pub fn holds_without_reservation(self) -> bool {
        matches!(
            self,
            Self::Limit(_)
                | Self::PartitionDown
                | Self::PartitionInactive
                | Self::JobArrayTaskLimit
        )
    }
}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Reason {
    /// Slurm's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Priority => "Priority",
            Self::Resources => "Resources",
            Self::Licenses => "Licenses",
            Self::Dependency => "Dependency",
            Self::DependencyNeverSatisfied => "DependencyNeverSatisfied",
            Self::BeginTime => "BeginTime",
            Self::JobHeldUser => "JobHeldUser",
            Self::JobHeldAdmin => "JobHeldAdmin",
            Self::Reservation => "Reservation",
            Self::ReqNodeNotAvail => "ReqNodeNotAvail",
            Self::BadConstraints => "BadConstraints",
            Self::TimeLimit => "TimeLimit",
            Self::NonZeroExitCode => "NonZeroExitCode",
            Self::NodeDown => "NodeDown",
            Self::OutOfMemory => "OutOfMemory",
            Self::MaxPoweredUpNodes => "MaxPoweredUpNodes",
            Self::PartitionDown => "PartitionDown",
            Self::PartitionInactive => "PartitionInactive",
            Self::Limit(limit) => limit.as_str(),
            Self::JobArrayTaskLimit => "JobArrayTaskLimit",
        }
    }
}

/// Who holds a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Hold {
    /// `scontrol hold` by the owner, or `--hold`.
    User,
    /// `scontrol hold` by an admin.
    Admin,
}

/// What a started job holds: nodes and per-node resources, licenses and HRES charges.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Allocation {
    /// Partition the job runs in.
    pub partition: PartitionId,
    /// Nodes (indices into the cluster's nodes) and what the job got on each.
    #[serde(skip)]
    pub placement: Placement,
    /// Cluster licenses held: (license index, count).
    pub licenses: Vec<(usize, u32)>,
    /// HRES charges, returned exactly at the end.
    #[serde(skip)]
    pub hres: Vec<Charge>,
    /// Advance reservation the job runs in, by index.
    pub reservation: Option<usize>,
}

impl Allocation {
    /// CPUs allocated over every node.
    pub fn cpus(&self) -> u64 {
        self.placement.cpus.iter().map(|c| u64::from(*c)).sum()
    }
}

/// A job step inside an allocation (`srun` within the job).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// Step id within the job (0, 1, …).
    pub id: u32,
    /// Step name.
    pub name: String,
    /// Positions in the job's allocation the step uses.
    pub node_positions: Vec<u32>,
    /// CPUs the step uses on each of those nodes.
    pub cpus: Vec<u32>,
    /// Running, or how it ended.
    pub state: JobState,
    /// Exit code once ended.
    pub exit_code: Option<i32>,
    /// The subset of the job's devices the step uses, per job record.
    pub gres: Vec<StepGres>,
}

/// A job as the engine tracks it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Job {
    /// Job id.
    pub id: JobId,
    /// What was submitted.
    pub spec: JobSpec,
    /// The user association jobs are charged to.
    pub assoc: AssocId,
    /// Partitions, in the order requested.
    pub partitions: Vec<PartitionId>,
    /// QOS.
    pub qos: QosId,
    /// Time limit in seconds; `None` is UNLIMITED.
    pub time_limit: Option<u64>,
    /// Submit time.
    pub submit_time: i64,
    /// When the job became eligible (begin time passed, dependencies met, released).
    pub eligible_time: Option<i64>,
    /// State.
    pub state: JobState,
    /// Pending reason, or how it ended.
    pub reason: Reason,
    /// Hold, if any.
    pub hold: Option<Hold>,
    /// Priority per requested partition (same order as `partitions`) from the last priority
    /// calculation that saw the job eligible.
    pub priority: Vec<u32>,
    /// When `priority` was calculated; `None` until a pass sees the job eligible, and again after
    /// a hold, release or requeue, so the next pass recalculates.
    pub priority_time: Option<i64>,
    /// Start time: actual once started, the backfill estimate while pending.
    pub start_time: Option<i64>,
    /// End time: the time-limit end while running, the actual end once ended.
    pub end_time: Option<i64>,
    /// Exit code once ended.
    pub exit_code: Option<i32>,
    /// What the job holds while it runs.
    pub alloc: Option<Allocation>,
    /// Steps.
    pub steps: Vec<Step>,
    /// Advance reservation requested, by index.
    pub reservation: Option<usize>,
    /// Resolved `-L` request.
    pub demand: LicenseDemand,
    /// GRES per node as (kind index, count), `--gpus` spread over the minimum node count.
    pub gres_per_node: Vec<(u32, u32)>,
    /// Typed GRES asked for, as (name, type): only nodes configuring that type qualify.
    pub gres_types: Vec<(String, String)>,
    /// GRES as written and per type, with the devices held on each allocated node.
    pub gres: JobGres,
    /// Per allocation position: the CPU ids the job holds there (the lowest free at its start).
    pub cpu_ids: CpuIds,
    /// The state a COMPLETING job will end in once its epilog completes.
    pub final_state: Option<JobState>,
    /// Times the job was requeued after a node failure (`Restarts`).
    pub restarts: u32,
}

/// CPU ids per allocation position, in one buffer: a job on many nodes holds one list, not one
/// per node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuIds {
    ids: Vec<u32>,
    /// Where each position's ids end in `ids`.
    ends: Vec<u32>,
}

/// As a list per position, the shape the API has always shown.
impl Serialize for CpuIds {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for i in 0..self.len() {
            seq.serialize_element(self.node(i).unwrap_or(&[]))?;
        }
        seq.end()
    }
}

impl CpuIds {
    /// No ids yet, with room for `positions` positions holding `ids` ids in all.
    pub fn with_capacity(positions: usize, ids: usize) -> Self {
        Self {
            ids: Vec::with_capacity(ids),
            ends: Vec::with_capacity(positions),
        }
    }

    /// The ids held at allocation position `i`, if the job has that position.
    pub fn node(&self, i: usize) -> Option<&[u32]> {
        let end = *self.ends.get(i)? as usize;
        let start = i.checked_sub(1).map_or(0, |prev| self.ends[prev] as usize);
        Some(&self.ids[start..end])
    }

    /// Adds the next position's ids.
    pub fn push_node(&mut self, ids: impl IntoIterator<Item = u32>) {
        self.ids.extend(ids);
        self.ends.push(self.ids.len() as u32);
    }

    /// Allocation positions held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no position is held.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Forgets every position.
    pub fn clear(&mut self) {
        self.ids.clear();
        self.ends.clear();
    }

    /// The ids of `positions` only, renumbered in that order (positions the job lacks are skipped).
    pub fn only(&self, positions: &[usize]) -> CpuIds {
        let mut kept = CpuIds::default();
        for ids in positions.iter().filter_map(|&p| self.node(p)) {
            kept.push_node(ids.iter().copied());
        }
        kept
    }
}

impl Job {
    /// Total CPUs requested: tasks × CPUs per task.
    pub fn cpus(&self) -> u64 {
        u64::from(self.spec.tasks.max(1)) * u64::from(self.spec.cpus_per_task.max(1))
    }

    /// One node's share of [`Job::cpus`] spread over `nodes` nodes, saturating: a share too big
    /// for `u32` fits no node rather than wrapping round to a small one. With
    /// `--ntasks-per-node` every node must give that many tasks' CPUs, whatever the share.
    pub fn cpus_per_node(&self, nodes: u32) -> u32 {
        let share = self.cpus().div_ceil(u64::from(nodes.max(1)));
        let per_node =
            u64::from(self.spec.tasks_per_node) * u64::from(self.spec.cpus_per_task.max(1));
        u32::try_from(share.max(per_node)).unwrap_or(u32::MAX)
    }

    /// Whether the job asks for nodes alone: no licenses, no HRES, no advance reservation. When
    /// fewer CPUs than [`Job::cpus`] are free, such a job is waiting for Resources and nothing
    /// else, so a pass need not ask the policies about it; another may be waiting for something
    /// it reports first.
    pub fn needs_nodes_alone(&self) -> bool {
        self.demand.licenses.is_empty() && self.demand.hres.is_empty() && self.reservation.is_none()
    }

    /// Fewest nodes the job can run on: `--nodes`, and with `--ntasks-per-node` enough nodes to
    /// hold the tasks at that many each (the selection contract's `fewest_nodes`).
    pub fn fewest_nodes(&self) -> u32 {
        let spec = &self.spec;
        sluice_policy::selection::fewest_nodes(
            spec.min_nodes,
            spec.tasks.max(1),
            spec.tasks_per_node,
        )
    }

    /// Largest node count the job accepts.
    pub fn max_nodes(&self) -> u32 {
        self.spec
            .max_nodes
            .unwrap_or(self.spec.min_nodes)
            .max(self.spec.min_nodes)
            .max(1)
    }

    /// Whether the job is waiting in the queue.
    pub fn is_pending(&self) -> bool {
        self.state == JobState::Pending
    }
}

/// Slurm's answer for an infinite time limit when a finite one is needed (backfill planning):
/// one year, as backfill's `YEAR_MINUTES`.
pub const INFINITE_PLAN_SECS: u64 = 365 * 86_400;

/// A time limit to plan with: the limit, or a year when UNLIMITED.
pub fn plan_limit(limit: Option<u64>) -> u64 {
    limit.unwrap_or(INFINITE_PLAN_SECS).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ids_keep_each_position_apart_and_show_as_a_list_per_position() {
        let mut ids = CpuIds::default();
        ids.push_node([0, 1]);
        ids.push_node([]);
        ids.push_node([4, 5, 6]);
        assert_eq!(ids.len(), 3);
        assert_eq!(ids.node(0), Some(&[0, 1][..]));
        assert_eq!(ids.node(1), Some(&[][..]));
        assert_eq!(ids.node(2), Some(&[4, 5, 6][..]));
        assert_eq!(ids.node(3), None);
        let kept = ids.only(&[2, 0, 7]);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept.node(0), Some(&[4, 5, 6][..]));
        assert_eq!(kept.node(1), Some(&[0, 1][..]));
        assert_eq!(serde_json::to_string(&ids).unwrap(), "[[0,1],[],[4,5,6]]");
        ids.clear();
        assert!(ids.is_empty() && ids.node(0).is_none());
    }
}
