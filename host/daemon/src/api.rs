//! The API's requests as the driver sees them, and its refusals. `routes.rs` maps HTTP to them;
//! `API.md` documents every endpoint; the answers are the types of `sluice-api`.

use serde::Serialize;
use serde_json::Value;
use sluice_api::{NodeAction, PluginFile, StepRequest, SubmitRequest, UpdateRequest};
use sluice_policy::PluginKind;

use crate::image::State;

/// A refused or failed request: an HTTP status and a message saying what to do.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// Lowercase explanation naming the request and what was expected.
    pub message: String,
}

impl ApiError {
    fn with(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
    /// 400: the request is malformed.
    pub fn bad(message: impl Into<String>) -> Self {
        Self::with(400, message)
    }
    /// 401: a TCP request without the right bearer token.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::with(401, message)
    }
    /// 403: the caller may not do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::with(403, message)
    }
    /// 404: no such thing.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::with(404, message)
    }
    /// 405: the path exists, the method does not.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::with(405, message)
    }
    /// 408: the body did not arrive in time.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::with(408, message)
    }
    /// 409: not in a state that allows it.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::with(409, message)
    }
    /// 413: the body is over the limit.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::with(413, message)
    }
    /// 500: the daemon failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::with(500, message)
    }
    /// 507: the state's file system is full; the change was not made.
    pub fn insufficient_storage(message: impl Into<String>) -> Self {
        Self::with(507, message)
    }
    /// 503: the daemon is shutting down.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::with(503, message)
    }
}

/// What the driver answers: one of `sluice-api`'s answer types, serialized on the driver thread
/// so that one channel carries every kind of answer.
pub type ApiResult = Result<Value, ApiError>;

/// Serializes a typed answer.
pub fn answer<T: Serialize>(value: &T) -> ApiResult {
    serde_json::to_value(value)
        .map_err(|e| ApiError::internal(format!("the answer does not serialize: {e}")))
}

/// `squeue` filters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobFilter {
    /// `--user`.
    pub users: Vec<String>,
    /// `--states`; empty means pending and running (squeue's default).
    pub states: Vec<State>,
    /// `--jobs`.
    pub ids: Vec<u64>,
}

/// Every request the driver handles.
#[derive(Clone, Debug, PartialEq)]
pub enum ApiRequest {
    /// `GET /v1/health`.
    Health,
    /// `GET /v1/metrics`.
    Metrics,
    /// `GET /v1/diag`.
    Diag,
    /// `POST /v1/jobs`.
    Submit(Box<SubmitRequest>),
    /// `POST /v1/jobs/will-run`.
    WillRun(Box<SubmitRequest>),
    /// `GET /v1/jobs`.
    ListJobs(JobFilter),
    /// `GET /v1/jobs/{id}`.
    ShowJob(u64),
    /// `POST /v1/jobs/{id}/cancel`.
    Cancel {
        /// Job.
        id: u64,
        /// `--signal`: signal the job's processes instead of cancelling it.
        signal: Option<i32>,
    },
    /// `POST /v1/jobs/{id}/hold`.
    Hold(u64),
    /// `POST /v1/jobs/{id}/release`.
    Release(u64),
    /// `POST /v1/jobs/{id}/update`.
    Update(u64, UpdateRequest),
    /// `POST /v1/jobs/{id}/steps`.
    StepStart(u64, StepRequest),
    /// `POST /v1/jobs/{id}/steps/{step}/end`.
    StepEnd {
        /// Job.
        id: u64,
        /// Step.
        step: u32,
        /// Exit code.
        exit_code: i32,
    },
    /// `GET /v1/nodes`.
    Nodes,
    /// `GET /v1/nodes/{name}`.
    ShowNode(String),
    /// `POST /v1/nodes/{name}/{drain|resume|down}`.
    NodeAction {
        /// Node name or hostlist.
        nodes: String,
        /// Action.
        action: NodeAction,
        /// Reason.
        reason: String,
    },
    /// `POST /v1/nodes/{hostlist}/state`: scontrol's node update, power states included.
    NodeState {
        /// Node name or hostlist.
        nodes: String,
        /// The `State=` value.
        state: String,
        /// Reason.
        reason: String,
    },
    /// `POST /v1/nodes/{name}/register`: the node booted (root or the daemon's user only).
    Register {
        /// Node name.
        node: String,
        /// `NodeAddr=` and `NodeHostname=`.
        req: sluice_api::RegisterRequest,
    },
    /// `GET /v1/partitions`.
    Partitions,
    /// `POST /v1/partitions/{name}/state`.
    PartitionState {
        /// Partition name.
        name: String,
        /// `UP`, `DOWN`, `DRAIN` or `INACTIVE`.
        state: String,
    },
    /// `GET /v1/licenses`.
    Licenses,
    /// `GET /v1/reservations`.
    Reservations,
    /// `POST /v1/reservations`.
    CreateReservation(sluice_api::Reservation),
    /// `DELETE /v1/reservations/{name}`.
    DeleteReservation(String),
    /// `GET /v1/share`.
    Share,
    /// `GET /v1/prio`.
    Prio,
    /// `GET /v1/plugins`.
    Plugins,
    /// `POST /v1/plugins/{kind}/swap`.
    Swap {
        /// Kind name.
        kind: String,
        /// The file and settings.
        file: PluginFile,
    },
    /// `POST /v1/plugins/{kind}/rollback`.
    Rollback(String),
    /// `POST /v1/plugins/{kind}/shadow`.
    ShadowStart {
        /// Kind name.
        kind: String,
        /// The candidate and settings.
        file: PluginFile,
    },
    /// `GET /v1/shadow`.
    ShadowReport,
    /// `DELETE /v1/shadow`.
    ShadowStop,
    /// `POST /v1/reconfigure`.
    Reconfigure,
    /// `GET /v1/config`.
    Config,
    /// `GET /v1/accounting`.
    Accounting(sluice_api::AcctQuery),
}

/// The plugin kind named in a path (`priority`, `selection`, `gres`, `hres`).
pub fn plugin_kind(name: &str) -> Result<PluginKind, ApiError> {
    PluginKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            ApiError::bad(format!(
                "plugin kind '{name}': expected priority, selection, gres or hres"
            ))
        })
}
