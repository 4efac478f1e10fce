//! The API's requests as the driver sees them, and the routing from HTTP method and path to them.
//! `API.md` documents every endpoint.

use serde::Deserialize;
use serde_json::Value;

use crate::http::Request;
use crate::image::{NodeAction, State};
use crate::request::{SubmitRequest, UpdateRequest};

/// A refused or failed request: an HTTP status and a message saying what to do.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// Lowercase explanation naming the request and what was expected.
    pub message: String,
}

impl ApiError {
    /// 400: the request is malformed.
    pub fn bad(message: impl Into<String>) -> Self {
        Self {
            status: 400,
            message: message.into(),
        }
    }
    /// 403: the caller may not do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self {
            status: 403,
            message: message.into(),
        }
    }
    /// 404: no such thing.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: 404,
            message: message.into(),
        }
    }
    /// 409: not in a state that allows it.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self {
            status: 409,
            message: message.into(),
        }
    }
    /// 500: the daemon failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            status: 500,
            message: message.into(),
        }
    }
}

/// What the driver answers.
pub type ApiResult = Result<Value, ApiError>;

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

/// A step request (`sluice run` inside an allocation).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StepRequest {
    /// Step name (the command).
    pub name: String,
    /// Nodes (`-N`, 1).
    pub nodes: u32,
    /// CPUs per node (`-c` × tasks per node, 1).
    pub cpus_per_node: u32,
}

/// A plugin file to swap in or shadow.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PluginFile {
    /// Path of a `.wasm` component or native library, or a bundled name.
    pub file: String,
    /// Settings to set on top of the configured ones (as text values).
    pub settings: std::collections::BTreeMap<String, String>,
}

/// Every request the driver handles.
#[derive(Clone, Debug, PartialEq)]
pub enum ApiRequest {
    /// `GET /v1/health`.
    Health,
    /// `GET /v1/metrics`.
    Metrics,
    /// `POST /v1/jobs`.
    Submit(Box<SubmitRequest>),
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
    /// `GET /v1/partitions`.
    Partitions,
    /// `GET /v1/licenses`.
    Licenses,
    /// `GET /v1/reservations`.
    Reservations,
    /// `POST /v1/reservations`.
    CreateReservation(sluice_engine::ReservationSpec),
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
}

fn id(text: &str) -> Result<u64, ApiError> {
    text.parse()
        .map_err(|_| ApiError::bad(format!("job id {text:?} is not a number")))
}

fn json<'a, T: Deserialize<'a> + Default>(req: &'a Request) -> Result<T, ApiError> {
    if req.body.is_empty() {
        return Ok(T::default());
    }
    serde_json::from_slice(&req.body)
        .map_err(|e| ApiError::bad(format!("{} {}: body: {e}", req.method, req.path)))
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Reason {
    reason: String,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct CancelBody {
    signal: Option<i32>,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct StepEndBody {
    exit_code: i32,
}

fn list(query: Option<&String>) -> Vec<String> {
    query
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Maps an HTTP request to an API request.
pub fn route(req: &Request) -> Result<ApiRequest, ApiError> {
    let segs: Vec<&str> = req.path.trim_matches('/').split('/').collect();
    let m = req.method.as_str();
    let r = match (m, segs.as_slice()) {
        ("GET", ["v1", "health"]) => ApiRequest::Health,
        ("GET", ["v1", "metrics"]) => ApiRequest::Metrics,
        ("POST", ["v1", "jobs"]) => ApiRequest::Submit(Box::new(json(req)?)),
        ("GET", ["v1", "jobs"]) => {
            let states = list(req.query.get("states"))
                .iter()
                .map(|s| {
                    State::parse(s).ok_or_else(|| {
                        ApiError::bad(format!(
                            "states={s}: expected Slurm state names or codes (PENDING, R, …)"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?;
            let ids = list(req.query.get("jobs"))
                .iter()
                .map(|s| id(s))
                .collect::<Result<_, _>>()?;
            ApiRequest::ListJobs(JobFilter {
                users: list(req.query.get("user")),
                states,
                ids,
            })
        }
        ("GET", ["v1", "jobs", j]) => ApiRequest::ShowJob(id(j)?),
        ("POST", ["v1", "jobs", j, "cancel"]) => ApiRequest::Cancel {
            id: id(j)?,
            signal: json::<CancelBody>(req)?.signal,
        },
        ("POST", ["v1", "jobs", j, "hold"]) => ApiRequest::Hold(id(j)?),
        ("POST", ["v1", "jobs", j, "release"]) => ApiRequest::Release(id(j)?),
        ("POST", ["v1", "jobs", j, "update"]) => ApiRequest::Update(id(j)?, json(req)?),
        ("POST", ["v1", "jobs", j, "steps"]) => ApiRequest::StepStart(id(j)?, json(req)?),
        ("POST", ["v1", "jobs", j, "steps", s, "end"]) => ApiRequest::StepEnd {
            id: id(j)?,
            step: s
                .parse()
                .map_err(|_| ApiError::bad(format!("step id {s:?} is not a number")))?,
            exit_code: json::<StepEndBody>(req)?.exit_code,
        },
        ("GET", ["v1", "nodes"]) => ApiRequest::Nodes,
        ("GET", ["v1", "nodes", n]) => ApiRequest::ShowNode(n.to_string()),
        ("POST", ["v1", "nodes", n, action]) => ApiRequest::NodeAction {
            nodes: n.to_string(),
            action: match *action {
                "drain" => NodeAction::Drain,
                "resume" => NodeAction::Resume,
                "down" => NodeAction::Down,
                other => {
                    return Err(ApiError::not_found(format!(
                        "node action {other:?}: expected drain, resume or down"
                    )));
                }
            },
            reason: json::<Reason>(req)?.reason,
        },
        ("GET", ["v1", "partitions"]) => ApiRequest::Partitions,
        ("GET", ["v1", "licenses"]) => ApiRequest::Licenses,
        ("GET", ["v1", "reservations"]) => ApiRequest::Reservations,
        ("POST", ["v1", "reservations"]) => ApiRequest::CreateReservation(json(req)?),
        ("DELETE", ["v1", "reservations", n]) => ApiRequest::DeleteReservation(n.to_string()),
        ("GET", ["v1", "share"]) => ApiRequest::Share,
        ("GET", ["v1", "prio"]) => ApiRequest::Prio,
        ("GET", ["v1", "plugins"]) => ApiRequest::Plugins,
        ("POST", ["v1", "plugins", k, "swap"]) => ApiRequest::Swap {
            kind: k.to_string(),
            file: json(req)?,
        },
        ("POST", ["v1", "plugins", k, "rollback"]) => ApiRequest::Rollback(k.to_string()),
        ("POST", ["v1", "plugins", k, "shadow"]) => ApiRequest::ShadowStart {
            kind: k.to_string(),
            file: json(req)?,
        },
        ("GET", ["v1", "shadow"]) => ApiRequest::ShadowReport,
        ("DELETE", ["v1", "shadow"]) => ApiRequest::ShadowStop,
        ("POST", ["v1", "reconfigure"]) => ApiRequest::Reconfigure,
        ("GET", ["v1", "config"]) => ApiRequest::Config,
        _ => {
            return Err(ApiError::not_found(format!(
                "{m} {}: no such endpoint (see host/daemon/API.md)",
                req.path
            )));
        }
    };
    Ok(r)
}
