//! Which handler answers each message to the driver, and who may ask: API requests go to the
//! job, view, plugin and shadow handlers, admin-only ones are checked here, and answers are
//! serialized as `sluice-api`'s types.

use sluice_client::identity::Identity;

use super::{Driver, Msg, Replies};
use crate::api::{ApiError, ApiRequest, ApiResult, answer};

impl Driver {
    pub(super) fn handle(&mut self, msg: Msg, replies: &mut Replies) {
        match msg {
            Msg::Api {
                who,
                req: ApiRequest::Swap { kind, file },
                reply,
            } => {
                // Answered when the load is published or refused, not at the next sync.
                match self.require_admin(&who, "plugin swap") {
                    Ok(()) => self.swap_deferred(&kind, &file.file, &file.settings, reply),
                    Err(e) => replies.push((reply, Err(e))),
                }
            }
            Msg::Api {
                who,
                req: ApiRequest::ShadowStart { kind, file },
                reply,
            } => {
                // Answered once the candidate is loaded off this thread, or refused.
                match self.require_admin(&who, "plugin shadow") {
                    Ok(()) => self.shadow_start_deferred(&kind, &file.file, &file.settings, reply),
                    Err(e) => replies.push((reply, Err(e))),
                }
            }
            Msg::Api {
                who,
                req: ApiRequest::Accounting(query),
                reply,
            } => {
                // Answered by the accounting reader thread, never by a pass-blocking query.
                self.accounting_query(&who, query, reply);
            }
            Msg::Api { who, req, reply } => {
                let result = self.admit(&req).and_then(|()| self.api(&who, req));
                replies.push((reply, result));
            }
            Msg::Exited(report) => self.exited(report),
            Msg::PowerProgramEnded { seq, outcome } => self.power_program_ended(seq, outcome),
            Msg::Reconfigure => {
                if let Err(e) = self.reconfigure() {
                    tracing::error!("{}", e.message);
                }
            }
            Msg::Shutdown => self.shutdown = true,
        }
    }

    pub(super) fn is_admin(&self, who: &Identity) -> bool {
        who.uid == 0 || who.uid == self.admin_uid || self.cfg.admins.contains(&who.user)
    }

    pub(super) fn require_admin(&self, who: &Identity, what: &str) -> Result<(), ApiError> {
        if self.is_admin(who) {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!(
                "{what}: user {} (uid {}) is not an admin; only root, the daemon's user and `admins` in daemon.toml may",
                who.user, who.uid
            )))
        }
    }

    fn api(&mut self, who: &Identity, req: ApiRequest) -> ApiResult {
        match req {
            ApiRequest::Health => answer(&self.health()),
            ApiRequest::Metrics => answer(&self.metrics_report()),
            ApiRequest::Diag => answer(&self.diag_report()),
            ApiRequest::Submit(r) => answer(&self.submit(who, *r)?),
            ApiRequest::WillRun(r) => answer(&self.will_run(who, *r)?),
            ApiRequest::ListJobs(f) => answer(&self.visible_jobs(who, self.list_jobs(&f))),
            ApiRequest::ShowJob(id) => answer(&self.visible_job(who, self.show_job(id)?)?),
            ApiRequest::Cancel { id, signal } => answer(&self.cancel(who, id, signal)?),
            ApiRequest::Hold(id) => answer(&self.hold(who, id)?),
            ApiRequest::Release(id) => answer(&self.release(who, id)?),
            ApiRequest::Update(id, u) => answer(&self.update(who, id, u)?),
            ApiRequest::StepStart(id, s) => answer(&self.step_start(who, id, s)?),
            ApiRequest::StepEnd {
                id,
                step,
                exit_code,
            } => answer(&self.step_end(who, id, step, exit_code)?),
            ApiRequest::Nodes => answer(&self.visible_nodes(who, self.node_rows())),
            ApiRequest::ShowNode(n) => {
                self.check_node_view(who, &n)?;
                answer(&self.show_node(&n)?)
            }
            ApiRequest::NodeAction {
                nodes,
                action,
                reason,
            } => {
                self.require_admin(who, &format!("update NodeName={nodes}"))?;
                answer(&self.node_action(&nodes, action, &reason)?)
            }
            ApiRequest::NodeState {
                nodes,
                state,
                reason,
            } => {
                self.require_admin(who, &format!("update NodeName={nodes}"))?;
                answer(&self.node_state(&nodes, &state, &reason)?)
            }
            ApiRequest::Register { node, req } => answer(&self.register(who, &node, req)?),
            ApiRequest::Partitions => answer(&self.visible_partitions(who, self.partition_rows())),
            ApiRequest::PartitionState { name, state } => {
                self.require_admin(who, &format!("update PartitionName={name}"))?;
                answer(&self.set_partition_state(&name, &state)?)
            }
            ApiRequest::Licenses => answer(&self.license_rows()),
            ApiRequest::Reservations => {
                answer(&self.visible_reservations(who, self.reservation_list()))
            }
            ApiRequest::CreateReservation(r) => {
                self.require_admin(who, "create reservation")?;
                answer(&self.create_reservation(r)?)
            }
            ApiRequest::DeleteReservation(n) => {
                self.require_admin(who, "delete reservation")?;
                answer(&self.delete_reservation(&n)?)
            }
            ApiRequest::Share => {
                let rows = self.share_rows();
                answer(&self.visible_shares(who, rows))
            }
            ApiRequest::Prio => answer(&self.visible_priorities(who, self.priority_rows())),
            ApiRequest::Plugins => answer(&self.plugin_list()),
            ApiRequest::Swap { .. } => Err(ApiError::internal("swaps are answered when staged")),
            ApiRequest::Rollback(kind) => {
                self.require_admin(who, "plugin rollback")?;
                answer(&self.rollback(&kind)?)
            }
            ApiRequest::ShadowStart { .. } => {
                Err(ApiError::internal("shadows are answered when loaded"))
            }
            ApiRequest::ShadowReport => answer(&self.shadow_report()?),
            ApiRequest::ShadowStop => {
                self.require_admin(who, "plugin shadow stop")?;
                answer(&self.shadow_stop()?)
            }
            ApiRequest::Reconfigure => {
                self.require_admin(who, "reconfigure")?;
                answer(&self.reconfigure()?)
            }
            ApiRequest::Config => answer(&self.config_report()),
            ApiRequest::Accounting(_) => Err(ApiError::internal(
                "accounting queries are answered by their reader",
            )),
        }
    }
}
