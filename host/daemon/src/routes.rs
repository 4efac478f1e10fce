//! The API's routes: HTTP method and path to an [`ApiRequest`] for the driver, with the caller
//! taken from the door the request came in by (`caller.rs`) and the parameters by `extract.rs`.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc::Sender;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, MatchedPath, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use sluice_api::query::items;
use sluice_api::{
    CancelRequest, JobQuery, NodeAction, NodeActionRequest, NodeStateRequest, RegisterRequest,
    StepEndRequest,
};
use tokio::sync::oneshot;

use crate::api::{ApiError, ApiRequest, JobFilter};
use crate::caller::Caller;
use crate::driver::Msg;
use crate::extract::{Body, MAX_BODY, Params, Raw, Required, check_query, parse};
use crate::image;
use crate::metrics::SiteMetrics;

/// The driver's channel, the routes' state.
type Tx = Sender<Msg>;

/// What a route for a fixed request answers with.
type Reply = Pin<Box<dyn Future<Output = Response> + Send>>;

/// A route that always asks the driver the same request.
fn fixed(req: ApiRequest) -> impl Fn(State<Tx>, Caller) -> Reply + Clone + Send + Sync + 'static {
    move |state, caller| Box::pin(ask(state, caller, req.clone()))
}

/// The API's router; each connection's requests carry their [`crate::caller::Door`]. Every
/// request is counted and timed in `metrics`, which `GET /metrics` encodes.
pub fn router(tx: Tx, metrics: SiteMetrics) -> Router {
    let scraped = metrics.clone();
    Router::new()
        .route(
            "/metrics",
            get(move |_: Caller| {
                let text = scraped.encode();
                async move { ([(CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text) }
            }),
        )
        .route("/v1/health", get(fixed(ApiRequest::Health)))
        .route("/v1/metrics", get(fixed(ApiRequest::Metrics)))
        .route("/v1/diag", get(fixed(ApiRequest::Diag)))
        .route("/v1/jobs", get(list_jobs).post(submit))
        .route("/v1/jobs/will-run", post(will_run))
        .route("/v1/jobs/{id}", get(show_job))
        .route("/v1/jobs/{id}/{action}", post(job_action))
        .route("/v1/jobs/{id}/steps/{step}/end", post(step_end))
        .route("/v1/nodes", get(fixed(ApiRequest::Nodes)))
        .route("/v1/nodes/{name}", get(show_node))
        .route("/v1/nodes/{name}/{action}", post(node_action))
        .route("/v1/partitions", get(fixed(ApiRequest::Partitions)))
        .route("/v1/partitions/{name}/state", post(partition_state))
        .route("/v1/licenses", get(fixed(ApiRequest::Licenses)))
        .route(
            "/v1/reservations",
            get(fixed(ApiRequest::Reservations)).post(create_reservation),
        )
        .route(
            "/v1/reservations/{name}",
            axum::routing::delete(delete_reservation),
        )
        .route("/v1/share", get(fixed(ApiRequest::Share)))
        .route("/v1/prio", get(fixed(ApiRequest::Prio)))
        .route("/v1/plugins", get(fixed(ApiRequest::Plugins)))
        .route("/v1/plugins/{kind}/{action}", post(plugin_action))
        .route(
            "/v1/shadow",
            get(fixed(ApiRequest::ShadowReport)).delete(fixed(ApiRequest::ShadowStop)),
        )
        .route("/v1/reconfigure", post(fixed(ApiRequest::Reconfigure)))
        .route("/v1/config", get(fixed(ApiRequest::Config)))
        .route("/v1/accounting", get(accounting))
        .fallback(|method: Method, uri: Uri| async move {
            ApiError::not_found(format!(
                "{method} {}: no such endpoint (see host/daemon/API.md)",
                uri.path()
            ))
        })
        .method_not_allowed_fallback(|method: Method, uri: Uri| async move {
            ApiError::method_not_allowed(format!(
                "{method} {}: this path takes another method (see host/daemon/API.md)",
                uri.path()
            ))
        })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(metrics, count_request))
        .with_state(tx)
}

/// Counts and times a request by the route it matched (its pattern, so ids do not make new
/// series a client could multiply without bound).
async fn count_request(
    State(metrics): State<SiteMetrics>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let endpoint = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    // A client may send any method name: only the API's own make series.
    let method = match *req.method() {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        _ => "other",
    };
    let t0 = std::time::Instant::now();
    let response = next.run(req).await;
    metrics.request(
        &endpoint,
        method,
        response.status().as_u16(),
        t0.elapsed().as_secs_f64(),
    );
    response
}

/// Hands a request to the driver and waits for its answer.
async fn ask(State(tx): State<Tx>, Caller(who): Caller, req: ApiRequest) -> Response {
    let (reply, rx) = oneshot::channel();
    if tx.send(Msg::Api { who, req, reply }).is_err() {
        return ApiError::unavailable("the daemon is shutting down").into_response();
    }
    match rx.await {
        Ok(Ok(value)) => axum::Json(value).into_response(),
        Ok(Err(e)) => e.into_response(),
        Err(_) => ApiError::unavailable("the daemon stopped before answering").into_response(),
    }
}

fn job_id(text: &str) -> Result<u64, ApiError> {
    text.parse()
        .map_err(|_| ApiError::bad(format!("job id '{text}' is not a number")))
}

async fn list_jobs(
    state: State<Tx>,
    caller: Caller,
    uri: Uri,
    query: Result<Query<JobQuery>, QueryRejection>,
) -> Response {
    let filter = check_query(uri.query().unwrap_or_default())
        .map_err(|e| ApiError::bad(format!("GET /v1/jobs: query: {e}")))
        .and_then(|()| {
            query.map_err(|e| ApiError::bad(format!("GET /v1/jobs: query: {}", e.body_text())))
        })
        .and_then(|Query(q)| job_filter(&q));
    match filter {
        Ok(f) => ask(state, caller, ApiRequest::ListJobs(f)).await,
        Err(e) => e.into_response(),
    }
}

fn job_filter(q: &JobQuery) -> Result<JobFilter, ApiError> {
    let states = items(q.states.as_deref())
        .map(|s| {
            image::State::parse(s).ok_or_else(|| {
                ApiError::bad(format!(
                    "states={s}: expected Slurm state names or codes (PENDING, R, …)"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    let ids = items(q.jobs.as_deref())
        .map(job_id)
        .collect::<Result<_, _>>()?;
    Ok(JobFilter {
        users: items(q.user.as_deref()).map(String::from).collect(),
        states,
        ids,
    })
}

async fn submit(
    state: State<Tx>,
    caller: Caller,
    Required(req): Required<sluice_api::SubmitRequest>,
) -> Response {
    ask(state, caller, ApiRequest::Submit(Box::new(req))).await
}

async fn will_run(
    state: State<Tx>,
    caller: Caller,
    Required(req): Required<sluice_api::SubmitRequest>,
) -> Response {
    ask(state, caller, ApiRequest::WillRun(Box::new(req))).await
}

async fn show_job(state: State<Tx>, caller: Caller, Params(id): Params<String>) -> Response {
    match job_id(&id) {
        Ok(id) => ask(state, caller, ApiRequest::ShowJob(id)).await,
        Err(e) => e.into_response(),
    }
}

async fn job_action(
    state: State<Tx>,
    caller: Caller,
    Params((id, action)): Params<(String, String)>,
    Raw(body): Raw,
) -> Response {
    let req = (|| {
        let id = job_id(&id)?;
        let path = format!("POST /v1/jobs/{id}/{action}");
        Ok(match action.as_str() {
            "cancel" => ApiRequest::Cancel {
                id,
                signal: parse::<CancelRequest>(&path, &body)?.signal,
            },
            "hold" => ApiRequest::Hold(id),
            "release" => ApiRequest::Release(id),
            "update" => ApiRequest::Update(id, parse(&path, &body)?),
            "steps" => ApiRequest::StepStart(id, parse(&path, &body)?),
            other => {
                return Err(ApiError::not_found(format!(
                    "job action '{other}': expected cancel, hold, release, update or steps"
                )));
            }
        })
    })();
    match req {
        Ok(r) => ask(state, caller, r).await,
        Err(e) => e.into_response(),
    }
}

async fn step_end(
    state: State<Tx>,
    caller: Caller,
    Params((id, step)): Params<(String, String)>,
    Body(body): Body<StepEndRequest>,
) -> Response {
    let req = job_id(&id).and_then(|id| {
        let step = step
            .parse()
            .map_err(|_| ApiError::bad(format!("step id '{step}' is not a number")))?;
        Ok(ApiRequest::StepEnd {
            id,
            step,
            exit_code: body.exit_code,
        })
    });
    match req {
        Ok(r) => ask(state, caller, r).await,
        Err(e) => e.into_response(),
    }
}

async fn show_node(state: State<Tx>, caller: Caller, Params(name): Params<String>) -> Response {
    ask(state, caller, ApiRequest::ShowNode(name)).await
}

async fn node_action(
    state: State<Tx>,
    caller: Caller,
    Params((nodes, action)): Params<(String, String)>,
    Raw(body): Raw,
) -> Response {
    let path = format!("POST /v1/nodes/{nodes}/{action}");
    let req = match action.as_str() {
        "state" => parse::<NodeStateRequest>(&path, &body).map(|b| ApiRequest::NodeState {
            nodes,
            state: b.state,
            reason: b.reason,
        }),
        "register" => parse::<RegisterRequest>(&path, &body)
            .map(|req| ApiRequest::Register { node: nodes, req }),
        other => match NodeAction::parse(other) {
            Some(action) => {
                parse::<NodeActionRequest>(&path, &body).map(|b| ApiRequest::NodeAction {
                    nodes,
                    action,
                    reason: b.reason,
                })
            }
            None => Err(ApiError::not_found(format!(
                "node action '{other}': expected drain, resume, down, state or register"
            ))),
        },
    };
    match req {
        Ok(r) => ask(state, caller, r).await,
        Err(e) => e.into_response(),
    }
}

async fn partition_state(
    state: State<Tx>,
    caller: Caller,
    Params(name): Params<String>,
    Body(body): Body<sluice_api::PartitionStateRequest>,
) -> Response {
    let req = ApiRequest::PartitionState {
        name,
        state: body.state,
    };
    ask(state, caller, req).await
}

async fn create_reservation(
    state: State<Tx>,
    caller: Caller,
    Body(r): Body<sluice_api::Reservation>,
) -> Response {
    ask(state, caller, ApiRequest::CreateReservation(r)).await
}

async fn delete_reservation(
    state: State<Tx>,
    caller: Caller,
    Params(name): Params<String>,
) -> Response {
    ask(state, caller, ApiRequest::DeleteReservation(name)).await
}

async fn plugin_action(
    state: State<Tx>,
    caller: Caller,
    Params((kind, action)): Params<(String, String)>,
    Raw(body): Raw,
) -> Response {
    let path = format!("POST /v1/plugins/{kind}/{action}");
    let req = match action.as_str() {
        "swap" => parse(&path, &body).map(|file| ApiRequest::Swap { kind, file }),
        "shadow" => parse(&path, &body).map(|file| ApiRequest::ShadowStart { kind, file }),
        "rollback" => Ok(ApiRequest::Rollback(kind)),
        other => Err(ApiError::not_found(format!(
            "plugin action '{other}': expected swap, rollback or shadow"
        ))),
    };
    match req {
        Ok(r) => ask(state, caller, r).await,
        Err(e) => e.into_response(),
    }
}

async fn accounting(
    state: State<Tx>,
    caller: Caller,
    uri: Uri,
    query: Result<Query<sluice_api::AcctQuery>, QueryRejection>,
) -> Response {
    let q = check_query(uri.query().unwrap_or_default())
        .map_err(|e| ApiError::bad(format!("GET /v1/accounting: query: {e}")))
        .and_then(|()| {
            query
                .map_err(|e| ApiError::bad(format!("GET /v1/accounting: query: {}", e.body_text())))
        });
    match q {
        Ok(Query(q)) => ask(state, caller, ApiRequest::Accounting(q)).await,
        Err(e) => e.into_response(),
    }
}
