//! Owns no state: what the power pass decides, as the events an executor carries out.

use serde::Serialize;
use sluice_cluster::NodeId;

use crate::job_id::JobId;

/// Which configured program a [`PowerCall`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Program {
    /// `SuspendProgram`: power these nodes down.
    Suspend,
    /// `ResumeProgram`: power these nodes up; `SLURM_RESUME_FILE` holds [`ResumeFile`].
    Resume,
    /// `ResumeFailProgram`: these nodes missed ResumeTimeout.
    ResumeFail,
}

impl Program {
    /// The name in logs: `suspend`, `resume`, `resume_fail`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Suspend => "suspend",
            Self::Resume => "resume",
            Self::ResumeFail => "resume_fail",
        }
    }
}

/// One program call of one power pass: Slurm runs each program at most once per pass, with
/// one argument, the hostlist of every node of that kind, in the order suspend, resume,
/// resume-fail (power-save.md §1.4, §1.17).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PowerCall {
    /// Which program.
    pub program: Program,
    /// Its configured path, if one is set (a pass decides the same without one, so that a
    /// replay can be run without programs; the daemon then only logs).
    pub path: Option<String>,
    /// The nodes, in index order.
    pub nodes: Vec<NodeId>,
    /// The program's arguments after `argv[0]`: the hostlist of `nodes`.
    pub args: Vec<String>,
    /// Why each node is in the call, in the order of `nodes` ("SuspendTime reached",
    /// "POWER_DOWN requested", "job 12 allocated it", …).
    pub reasons: Vec<String>,
    /// The content of `SLURM_RESUME_FILE` (resume calls only).
    pub resume_file: Option<ResumeFile>,
    /// When the pass decided it.
    pub time: i64,
}

/// `SLURM_RESUME_FILE` (§1.5): the jobs the resume is for, then every node it wakes. Field
/// order is Slurm's key order, so serialising it gives the same JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResumeFile {
    /// One entry per job handled this pass, in allocation order.
    pub jobs: Vec<ResumeJob>,
    /// Hostlist of every node this call wakes, manual POWER_UP included.
    pub all_nodes_resume: String,
}

/// One job's entry of [`ResumeFile`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResumeJob {
    /// `NO` or `NODE` (`--exclusive`); sluice has no USER, MCS or TOPO mode.
    pub exclusive: &'static str,
    /// `--extra`, which sluice does not take: always null.
    pub extra: Option<String>,
    /// Job id.
    pub job_id: JobId,
    /// The job's priority in the partition it was allocated in.
    pub priority: u32,
    /// `--constraint` as written, or null.
    pub features: Option<String>,
    /// Hostlist of all the job's nodes.
    pub nodes_alloc: String,
    /// Hostlist of the nodes this pass wakes for the job (part of them when rate-limited).
    pub nodes_resume: String,
    /// `NO` (whole nodes), `YES` (CPUs the partition lets the job share) or `OK`.
    pub oversubscribe: &'static str,
    /// Partition name.
    pub partition: String,
    /// Reservation name, or null.
    pub reservation: Option<String>,
}

/// What the power side of the engine tells an executor besides program calls.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum PowerEvent {
    /// Run a power program.
    Call(PowerCall),
    /// A CONFIGURING job's nodes are all up: it runs from `time`, and its time limit counts
    /// from there (Slurm's `job_config_fini`); launch it now.
    JobReady {
        /// Job.
        job: JobId,
        /// Its (new) start time.
        time: i64,
    },
}
