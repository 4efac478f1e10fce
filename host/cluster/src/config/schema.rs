//! The cluster file's schema: Slurm's key names, a default for every key, unknown keys rejected.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::model::{
    NodeState, Plugins, PowerSaveParams, PriorityParams, SchedulerParams, Shares, TimeLimit,
};

fn one_u16() -> u16 {
    1
}
fn one_u32() -> u32 {
    1
}
fn one_u64() -> u64 {
    1
}
fn one_f64() -> f64 {
    1.0
}
fn default_cluster_name() -> String {
    "sluice".into()
}
fn unlimited() -> TimeLimit {
    TimeLimit::Infinite
}

/// The whole cluster file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `ClusterName` ("sluice").
    #[serde(rename = "ClusterName", default = "default_cluster_name")]
    pub cluster_name: String,
    /// `HresFile`: path of the resources.yaml, relative to this file (none).
    #[serde(rename = "HresFile", default, skip_serializing_if = "Option::is_none")]
    pub hres_file: Option<Spanned<String>>,
    /// `Licenses`: name = count (none).
    #[serde(rename = "Licenses", default)]
    pub licenses: BTreeMap<String, u32>,
    /// `AccountingStorageEnforce`: `associations`, `limits`, `qos`, `safe` (all but `safe`).
    #[serde(
        rename = "AccountingStorageEnforce",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub enforce: Option<Spanned<Vec<String>>>,
    /// `CreateMissingAssociations` (sluice's own): add users the tree lacks under the account
    /// they name, or root (false).
    #[serde(
        rename = "CreateMissingAssociations",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub create_missing_associations: bool,
    /// `[scheduler]`: SchedulerParameters and SelectTypeParameters.
    #[serde(default)]
    pub scheduler: SchedulerParams,
    /// `[priority]`: Priority* parameters.
    #[serde(default)]
    pub priority: PriorityParams,
    /// `[power]`: Suspend*/Resume* parameters.
    #[serde(default)]
    pub power: PowerSaveParams,
    /// `[plugins.<kind>]`: which plugin of each kind, and its settings.
    #[serde(default)]
    pub plugins: Plugins,
    /// `[[nodes]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeSpec>,
    /// `[[gres]]`: gres.conf lines giving device detail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres: Vec<GresTable>,
    /// `[[partitions]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionSpec>,
    /// `[[qos]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub qos: Vec<QosSpec>,
    /// `[[accounts]]`; `root` is implicit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<AccountSpec>,
    /// `[[users]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<UserSpec>,
}

/// `[[nodes]]`: nodes named by a hostlist expression, all with the same shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub struct NodeSpec {
    /// Hostlist expression of node names (required).
    pub node_name: Spanned<String>,
    /// Sockets (1).
    #[serde(default = "one_u16")]
    pub sockets: u16,
    /// Cores per socket (1).
    #[serde(default = "one_u16")]
    pub cores_per_socket: u16,
    /// Threads per core (1).
    #[serde(default = "one_u16")]
    pub threads_per_core: u16,
    /// Schedulable CPUs (sockets × cores × threads).
    #[serde(rename = "CPUs", default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// Memory in MB (1).
    #[serde(default = "one_u64")]
    pub real_memory: u64,
    /// Features (none).
    #[serde(default, alias = "Feature")]
    pub features: Vec<String>,
    /// Weight (1).
    #[serde(default = "one_u32")]
    pub weight: u32,
    /// `Gres=` string such as `gpu:a100:4,nic:1` (none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gres: Option<Spanned<String>>,
    /// Initial state (UNKNOWN).
    #[serde(default)]
    pub state: NodeState,
    /// Per-node SuspendTime in seconds or INFINITE (inherit).
    #[serde(
        default,
        with = "crate::time::option::seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub suspend_time: Option<TimeLimit>,
}

/// `[[gres]]`: one gres.conf line as a table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub struct GresTable {
    /// Nodes (hostlist); all nodes with this GRES when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// GRES name (required).
    pub name: Spanned<String>,
    /// GRES type.
    #[serde(rename = "Type", default, skip_serializing_if = "Option::is_none")]
    pub gres_type: Option<String>,
    /// Device files, ranges allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Count, K/M/G/T/P suffixes allowed (number of files, else 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountValue>,
    /// Logical core indices, ranges allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<String>,
    /// Link counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<String>,
    /// Flags, comma separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
}

/// A count written as a number or as text with a suffix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CountValue {
    /// `Count = 4`.
    Number(u64),
    /// `Count = "4G"`.
    Text(String),
}

/// `[[partitions]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub struct PartitionSpec {
    /// Name (required).
    pub partition_name: Spanned<String>,
    /// Hostlist of member nodes, or `ALL` (required).
    pub nodes: Spanned<String>,
    /// PriorityTier (1).
    #[serde(default = "one_u16")]
    pub priority_tier: u16,
    /// PriorityJobFactor (1).
    #[serde(default = "one_u16")]
    pub priority_job_factor: u16,
    /// MaxTime: minutes, a Slurm time, or UNLIMITED (UNLIMITED).
    #[serde(default = "unlimited", with = "crate::time::limit_minutes")]
    pub max_time: TimeLimit,
    /// DefaultTime (MaxTime).
    #[serde(
        default,
        with = "crate::time::option::minutes",
        skip_serializing_if = "Option::is_none"
    )]
    pub default_time: Option<TimeLimit>,
    /// Default partition (false).
    #[serde(default)]
    pub default: bool,
    /// MaxNodes per job (UNLIMITED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<u32>,
    /// Per-partition SuspendTime in seconds or INFINITE (never suspend; the highest value of a
    /// node's partitions wins); unset leaves it to the node's other partitions, then the global.
    #[serde(
        default,
        with = "crate::time::option::seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub suspend_time: Option<TimeLimit>,
    /// Partition QOS (none).
    #[serde(rename = "QOS", default, skip_serializing_if = "Option::is_none")]
    pub qos: Option<Spanned<String>>,
    /// Per-partition ResumeTimeout in seconds or INFINITE (unset: the global value).
    #[serde(
        default,
        with = "crate::time::option::seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub resume_timeout: Option<TimeLimit>,
    /// Per-partition SuspendTimeout in seconds (unset: the global value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend_timeout: Option<u64>,
    /// PowerDownOnIdle: nodes allocated from here power down once idle (false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub power_down_on_idle: bool,
    /// AllowAccounts (ALL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_accounts: Option<Vec<String>>,
    /// DenyAccounts (none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_accounts: Vec<String>,
    /// AllowGroups (ALL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_groups: Option<Vec<String>>,
    /// AllowQos (ALL); names must be defined QOS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_qos: Option<Vec<Spanned<String>>>,
    /// DenyQos (none); names must be defined QOS.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_qos: Vec<Spanned<String>>,
    /// State: UP, DOWN, DRAIN or INACTIVE (UP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Spanned<String>>,
    /// OverSubscribe: NO, EXCLUSIVE, YES[:count] or FORCE[:count] (NO; count 4 unless given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_subscribe: Option<Spanned<String>>,
    /// DefMemPerCPU in MB (none).
    #[serde(
        rename = "DefMemPerCPU",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub def_mem_per_cpu: Option<u64>,
    /// MaxMemPerCPU in MB (unlimited).
    #[serde(
        rename = "MaxMemPerCPU",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_mem_per_cpu: Option<u64>,
}

/// `[[qos]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub struct QosSpec {
    /// Name (required).
    pub name: Spanned<String>,
    /// Priority (0).
    #[serde(default)]
    pub priority: u32,
    /// UsageFactor (1.0).
    #[serde(default = "one_f64")]
    pub usage_factor: f64,
    /// Flags: `NoDecay`, `DenyOnLimit`, `OverPartQOS` (none).
    #[serde(default)]
    pub flags: Vec<Spanned<String>>,
    /// MaxWall: minutes or a Slurm time (unlimited).
    #[serde(
        default,
        with = "crate::time::option::minutes",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_wall: Option<TimeLimit>,
    /// MaxJobsPerUser (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_jobs_per_user: Option<u32>,
    /// MaxSubmitJobsPerUser (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_submit_jobs_per_user: Option<u32>,
    /// MaxCPUsPerUser, i.e. MaxTRESPerUser=cpu= (unlimited).
    #[serde(
        rename = "MaxCPUsPerUser",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_cpus_per_user: Option<u32>,
    /// MaxNodesPerJob, i.e. MaxTRESPerJob=node= (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes_per_job: Option<u32>,
    /// GrpCPUs, i.e. GrpTRES=cpu= (unlimited).
    #[serde(rename = "GrpCPUs", default, skip_serializing_if = "Option::is_none")]
    pub grp_cpus: Option<u32>,
    /// GrpJobs (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grp_jobs: Option<u32>,
    /// GrpSubmitJobs (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grp_submit_jobs: Option<u32>,
    /// MaxTRESPerJob, sacctmgr's `cpu=4,mem=8G,node=1,gres/gpu=2` (unlimited).
    #[serde(
        rename = "MaxTRESPerJob",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres_per_job: Option<Spanned<String>>,
    /// MaxTRESPerUser (unlimited).
    #[serde(
        rename = "MaxTRESPerUser",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres_per_user: Option<Spanned<String>>,
    /// MaxTRESMinsPerJob (unlimited).
    #[serde(
        rename = "MaxTRESMinsPerJob",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres_mins_per_job: Option<Spanned<String>>,
    /// GrpTRES (unlimited).
    #[serde(rename = "GrpTRES", default, skip_serializing_if = "Option::is_none")]
    pub grp_tres: Option<Spanned<String>>,
    /// MaxTRESPerNode (unlimited).
    #[serde(
        rename = "MaxTRESPerNode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres_per_node: Option<Spanned<String>>,
    /// GrpTRESMins: decayed TRES-minutes used (unlimited).
    #[serde(
        rename = "GrpTRESMins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_tres_mins: Option<Spanned<String>>,
    /// GrpTRESRunMins: TRES × remaining time of running jobs (unlimited).
    #[serde(
        rename = "GrpTRESRunMins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_tres_run_mins: Option<Spanned<String>>,
    /// GrpWall: minutes or a Slurm time of decayed wall-clock use (unlimited).
    #[serde(
        default,
        with = "crate::time::option::minutes",
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_wall: Option<TimeLimit>,
}

/// `[[accounts]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub struct AccountSpec {
    /// Account name (required).
    pub account: Spanned<String>,
    /// Parent account, declared above (root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<Spanned<String>>,
    /// RawShares: a number or "parent" (1).
    #[serde(default)]
    pub fairshare: Shares,
    /// Starting raw usage (0).
    #[serde(default)]
    pub raw_usage: f64,
    /// Association priority (0).
    #[serde(default)]
    pub priority: u32,
    /// Default QOS (inherit).
    #[serde(
        rename = "DefaultQOS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub default_qos: Option<Spanned<String>>,
    /// MaxJobs (inherited, else unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_jobs: Option<u32>,
    /// MaxSubmitJobs (inherited, else unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_submit_jobs: Option<u32>,
    /// MaxWall (inherited, else unlimited).
    #[serde(
        default,
        with = "crate::time::option::minutes",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_wall: Option<TimeLimit>,
    /// MaxTRES per job (inherited, else unlimited).
    #[serde(
        rename = "MaxTRES",
        alias = "MaxTRESPerJob",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres: Option<Spanned<String>>,
    /// MaxTRESMins per job (inherited, else unlimited).
    #[serde(
        rename = "MaxTRESMins",
        alias = "MaxTRESMinsPerJob",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres_mins: Option<Spanned<String>>,
    /// GrpTRES over the subtree (unlimited).
    #[serde(rename = "GrpTRES", default, skip_serializing_if = "Option::is_none")]
    pub grp_tres: Option<Spanned<String>>,
    /// GrpJobs over the subtree (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grp_jobs: Option<u32>,
    /// GrpSubmitJobs over the subtree (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grp_submit_jobs: Option<u32>,
    /// MaxTRESPerNode (inherited, else unlimited).
    #[serde(
        rename = "MaxTRESPerNode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres_per_node: Option<Spanned<String>>,
    /// GrpTRESMins over the subtree: decayed TRES-minutes used (unlimited).
    #[serde(
        rename = "GrpTRESMins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_tres_mins: Option<Spanned<String>>,
    /// GrpTRESRunMins over the subtree: TRES × remaining time of running jobs (unlimited).
    #[serde(
        rename = "GrpTRESRunMins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_tres_run_mins: Option<Spanned<String>>,
    /// GrpWall over the subtree: minutes or a Slurm time of decayed wall-clock use (unlimited).
    #[serde(
        default,
        with = "crate::time::option::minutes",
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_wall: Option<TimeLimit>,
    /// QOS (sacctmgr's QosLevel): the QOS jobs may ask (inherited, else any).
    #[serde(
        rename = "QOS",
        alias = "QosLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub qos: Option<Vec<Spanned<String>>>,
}

/// `[[users]]`: a user association under an account.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub struct UserSpec {
    /// User name (required).
    pub user: Spanned<String>,
    /// Account (required).
    pub account: Spanned<String>,
    /// RawShares: a number or "parent" (1).
    #[serde(default)]
    pub fairshare: Shares,
    /// Starting raw usage (0).
    #[serde(default)]
    pub raw_usage: f64,
    /// Association priority (0).
    #[serde(default)]
    pub priority: u32,
    /// Default QOS (inherit).
    #[serde(
        rename = "DefaultQOS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub default_qos: Option<Spanned<String>>,
    /// MaxJobs (inherited, else unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_jobs: Option<u32>,
    /// MaxSubmitJobs (inherited, else unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_submit_jobs: Option<u32>,
    /// MaxWall (inherited, else unlimited).
    #[serde(
        default,
        with = "crate::time::option::minutes",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_wall: Option<TimeLimit>,
    /// MaxTRES per job (inherited, else unlimited).
    #[serde(
        rename = "MaxTRES",
        alias = "MaxTRESPerJob",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres: Option<Spanned<String>>,
    /// MaxTRESMins per job (inherited, else unlimited).
    #[serde(
        rename = "MaxTRESMins",
        alias = "MaxTRESMinsPerJob",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres_mins: Option<Spanned<String>>,
    /// GrpTRES over the subtree (unlimited).
    #[serde(rename = "GrpTRES", default, skip_serializing_if = "Option::is_none")]
    pub grp_tres: Option<Spanned<String>>,
    /// GrpJobs over the subtree (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grp_jobs: Option<u32>,
    /// GrpSubmitJobs over the subtree (unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grp_submit_jobs: Option<u32>,
    /// MaxTRESPerNode (inherited, else unlimited).
    #[serde(
        rename = "MaxTRESPerNode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tres_per_node: Option<Spanned<String>>,
    /// GrpTRESMins over the subtree: decayed TRES-minutes used (unlimited).
    #[serde(
        rename = "GrpTRESMins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_tres_mins: Option<Spanned<String>>,
    /// GrpTRESRunMins over the subtree: TRES × remaining time of running jobs (unlimited).
    #[serde(
        rename = "GrpTRESRunMins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_tres_run_mins: Option<Spanned<String>>,
    /// GrpWall over the subtree: minutes or a Slurm time of decayed wall-clock use (unlimited).
    #[serde(
        default,
        with = "crate::time::option::minutes",
        skip_serializing_if = "Option::is_none"
    )]
    pub grp_wall: Option<TimeLimit>,
    /// QOS (sacctmgr's QosLevel): the QOS jobs may ask (inherited, else any).
    #[serde(
        rename = "QOS",
        alias = "QosLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub qos: Option<Vec<Spanned<String>>>,
}

/// The limit keys `[[accounts]]` and `[[users]]` share.
#[derive(Debug, Clone, Default)]
pub struct AssocLimitSpec {
    /// MaxJobs.
    pub max_jobs: Option<u32>,
    /// MaxSubmitJobs.
    pub max_submit_jobs: Option<u32>,
    /// MaxWall.
    pub max_wall: Option<TimeLimit>,
    /// MaxTRES.
    pub max_tres: Option<Spanned<String>>,
    /// MaxTRESMins.
    pub max_tres_mins: Option<Spanned<String>>,
    /// GrpTRES.
    pub grp_tres: Option<Spanned<String>>,
    /// GrpJobs.
    pub grp_jobs: Option<u32>,
    /// GrpSubmitJobs.
    pub grp_submit_jobs: Option<u32>,
    /// MaxTRESPerNode.
    pub max_tres_per_node: Option<Spanned<String>>,
    /// GrpTRESMins.
    pub grp_tres_mins: Option<Spanned<String>>,
    /// GrpTRESRunMins.
    pub grp_tres_run_mins: Option<Spanned<String>>,
    /// GrpWall.
    pub grp_wall: Option<TimeLimit>,
    /// QOS.
    pub qos: Option<Vec<Spanned<String>>>,
}

/// The limit keys of `[[accounts]]` and `[[users]]` read and written as one [`AssocLimitSpec`]
/// (the tables keep them as keys of their own, since `deny_unknown_fields` rules out
/// `flatten`).
macro_rules! limit_spec {
    ($spec:ty) => {
        impl $spec {
            /// The association limit keys of this table.
            pub fn limit_spec(&self) -> AssocLimitSpec {
                AssocLimitSpec {
                    max_jobs: self.max_jobs,
                    max_submit_jobs: self.max_submit_jobs,
                    max_wall: self.max_wall,
                    max_tres: self.max_tres.clone(),
                    max_tres_mins: self.max_tres_mins.clone(),
                    grp_tres: self.grp_tres.clone(),
                    grp_jobs: self.grp_jobs,
                    grp_submit_jobs: self.grp_submit_jobs,
                    max_tres_per_node: self.max_tres_per_node.clone(),
                    grp_tres_mins: self.grp_tres_mins.clone(),
                    grp_tres_run_mins: self.grp_tres_run_mins.clone(),
                    grp_wall: self.grp_wall,
                    qos: self.qos.clone(),
                }
            }

            /// Sets every association limit key of this table.
            pub fn set_limits(&mut self, l: AssocLimitSpec) {
                self.max_jobs = l.max_jobs;
                self.max_submit_jobs = l.max_submit_jobs;
                self.max_wall = l.max_wall;
                self.max_tres = l.max_tres;
                self.max_tres_mins = l.max_tres_mins;
                self.grp_tres = l.grp_tres;
                self.grp_jobs = l.grp_jobs;
                self.grp_submit_jobs = l.grp_submit_jobs;
                self.max_tres_per_node = l.max_tres_per_node;
                self.grp_tres_mins = l.grp_tres_mins;
                self.grp_tres_run_mins = l.grp_tres_run_mins;
                self.grp_wall = l.grp_wall;
                self.qos = l.qos;
            }
        }
    };
}
limit_spec!(AccountSpec);
limit_spec!(UserSpec);

impl AccountSpec {
    /// An `[[accounts]]` table under root with every other key at its default.
    pub fn named(account: &str) -> Self {
        let mut spec: Self = toml::from_str(&format!("Account = {account:?}"))
            .expect("a table of one string key reads");
        spec.account = Spanned::new(0..0, account.to_owned());
        spec
    }
}

impl UserSpec {
    /// A `[[users]]` table of `user` under `account` with every other key at its default.
    pub fn named(user: &str, account: &str) -> Self {
        let mut spec: Self = toml::from_str(&format!("User = {user:?}\nAccount = {account:?}"))
            .expect("a table of two string keys reads");
        spec.user = Spanned::new(0..0, user.to_owned());
        spec.account = Spanned::new(0..0, account.to_owned());
        spec
    }
}

impl QosSpec {
    /// A `[[qos]]` table with only its name, every other key at its default.
    pub fn named(name: &str) -> Self {
        Self {
            name: Spanned::new(0..0, name.to_owned()),
            priority: 0,
            usage_factor: 1.0,
            flags: Vec::new(),
            max_wall: None,
            max_jobs_per_user: None,
            max_submit_jobs_per_user: None,
            max_cpus_per_user: None,
            max_nodes_per_job: None,
            grp_cpus: None,
            grp_jobs: None,
            grp_submit_jobs: None,
            max_tres_per_job: None,
            max_tres_per_user: None,
            max_tres_mins_per_job: None,
            grp_tres: None,
            max_tres_per_node: None,
            grp_tres_mins: None,
            grp_tres_run_mins: None,
            grp_wall: None,
        }
    }
}

impl ConfigFile {
    /// The file as TOML text (what `Cluster::from_toml` reads back).
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self)
            .unwrap_or_else(|err| format!("# cannot print the configuration: {err}\n"))
    }
}
