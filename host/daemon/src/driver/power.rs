//! Power saving in the live daemon (docs/power-save.md, "The live daemon"): the power pass's
//! program calls journaled, then run off the driver thread (`power_programs`); a node's
//! registration; scontrol's node updates, power states included; and every node's power record
//! journaled whenever it changes, and put back at start-up before the jobs are.

use std::fs::File;
use std::io::LineWriter;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

use sluice_api::{NodeRegistered, NodeStateDone, RegisterRequest};
use sluice_client::identity::Identity;
use sluice_cluster::NodeId;
use sluice_engine::power::PowerState;
use sluice_engine::state_log::JobSeen;
use sluice_engine::{NodeUpdate, PowerCall};

use super::power_programs::{self, ProgramRun};
use super::{Driver, Msg};
use crate::api::ApiError;
use crate::error::DaemonError;
use crate::image::{NodeAction, Record};
use crate::power_image::{NodeAddress, NodePowerImage, PowerCallImage};

/// Longest `NodeAddr=`/`NodeHostname=` taken.
const MAX_ADDRESS: usize = 255;

/// Longest `Reason=` a node update takes: it is kept, and journaled, once per node named.
const MAX_REASON: usize = 1024;

/// The power log: the scenario replay's, each line written out as it is made.
pub(super) type PowerLog = sluice_engine::state_log::StateLog<LineWriter<File>>;

impl Driver {
    /// Journals every node whose power record or health differs from what the journal last
    /// said: the power pass, a job's end, a registration or an update may have changed it.
    pub(super) fn journal_power(&mut self) {
        for n in 0..self.power_journaled.len() {
            let id = NodeId(n as u32);
            if self.power_journaled[n].matches(&self.engine, id) {
                continue;
            }
            let power = NodePowerImage::of(&self.engine, id);
            self.power_journaled[n] = power.clone();
            let node = self.cluster.nodes[n].name.clone();
            self.commit(Record::Power { node, power });
        }
    }

    /// Start-up, before the jobs are taken back: each node's journaled health and power record
    /// put back, and the program calls a restart interrupted journaled as ended. Those are not
    /// run again (as slurmctld does not): a node whose boot was asked for and that does not
    /// register times out at ResumeTimeout from the original request.
    pub(super) fn restore_power(&mut self) {
        let image = self.store.image().clone();
        for (name, power) in &image.power {
            let Some(n) = self.cluster.nodes.iter().position(|x| &x.name == name) else {
                tracing::warn!("node {name} is no longer configured; its power state is dropped");
                continue;
            };
            let id = NodeId(n as u32);
            self.restore_health(id, power);
            self.engine.restore_node_power(id, power.saved());
            // Journaled already: only a change from here on is journaled again.
            self.power_journaled[n] = power.clone();
        }
        for (seq, call) in &image.power_calls {
            tracing::warn!(
                "power: {} program for {} was interrupted by a restart; not run again (its nodes time out if they do not register)",
                call.program,
                call.args.join(" ")
            );
            self.commit(Record::PowerCallDone {
                seq: *seq,
                outcome: "interrupted by a restart of the daemon".into(),
            });
        }
    }

    /// Puts a node's journaled health back, through the engine's own node updates (no job is
    /// on it yet at start-up, so none is failed).
    fn restore_health(&mut self, id: NodeId, power: &NodePowerImage) {
        use sluice_engine::node_state::Health;
        let Some(health) = power.health() else {
            return;
        };
        let reason = power.reason.clone().unwrap_or_default();
        let named = |r: &str| {
            if r.is_empty() {
                "restored".to_string()
            } else {
                r.to_string()
            }
        };
        match health {
            Health::Up => self.engine.node_resume(id),
            Health::Down => self.engine.node_down(id, &reason),
            Health::Drain => self.engine.node_drain(id, &reason),
            Health::Fail => {
                let _ = self
                    .engine
                    .update_node(id, NodeUpdate::Fail, Some(&named(&reason)));
            }
            Health::Future => {
                let _ = self.engine.update_node(id, NodeUpdate::Future, None);
            }
        }
    }

    /// Opens daemon.toml's `power_log` for appending, if one is set.
    pub(super) fn open_power_log(&self) -> Result<Option<PowerLog>, DaemonError> {
        let path = self.cfg.power_log.trim();
        if path.is_empty() {
            return Ok(None);
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o640)
            .open(path)
            .map_err(|e| {
                DaemonError::Config(format!(
                    "{}: power_log = {path:?}: cannot open it for appending: {e}",
                    self.opts.daemon_file.display()
                ))
            })?;
        // Times are Unix seconds: a live log has no replay start to count from.
        Ok(Some(PowerLog::new(LineWriter::new(file), 0)))
    }

    /// Writes the nodes whose state changed and the pass's program calls to the power log; a
    /// log that cannot be written is closed with a warning (the journal keeps what matters).
    pub(super) fn log_power(&mut self, calls: &[PowerCall]) {
        let Some(log) = self.power_log.as_mut() else {
            return;
        };
        let (engine, ids) = (&self.engine, &self.ids);
        let now = engine.now();
        let written = log
            .nodes(engine)
            .and_then(|()| calls.iter().try_for_each(|c| log.program(c)))
            .and_then(|()| {
                // Jobs by their public ids, as `sluice sim --log` gives them by trace id.
                engine.jobs().try_for_each(|job| match ids.public(job.id) {
                    Some(id) => log.job(now, id, JobSeen::of(job)),
                    None => Ok(()),
                })
            });
        log.retain_jobs(|id| ids.engine(id).is_some_and(|e| engine.job(e).is_some()));
        if let Err(e) = written {
            tracing::warn!("power_log {}: {e}; no longer written", self.cfg.power_log);
            self.power_log = None;
        }
    }

    /// Journals the power pass's program calls and returns the runs to start once the journal
    /// is synced; a call with no program configured is only logged.
    pub(super) fn journal_power_calls(&mut self, calls: Vec<PowerCall>) -> Vec<ProgramRun> {
        let timeout = PowerState::program_timeout(&self.cluster).map(Duration::from_secs);
        let mut runs = Vec::new();
        for call in calls {
            let program = call.program.as_str();
            let hostlist = call.args.join(" ");
            let reasons = summarise(&call.reasons);
            let Some(path) = call.path.clone().filter(|p| !p.trim().is_empty()) else {
                tracing::info!("power: {program} {hostlist} ({reasons}): no program configured");
                continue;
            };
            let resume_file = call
                .resume_file
                .as_ref()
                .and_then(|f| serde_json::to_string(f).ok());
            tracing::info!(
                "power: {program} {hostlist} ({reasons}): running {path}{}",
                resume_file
                    .as_deref()
                    .map(|f| format!(" with SLURM_RESUME_FILE {f}"))
                    .unwrap_or_default()
            );
            let seq = self.store.image().next_power_call;
            self.commit(Record::PowerCall {
                seq,
                call: PowerCallImage {
                    program: program.to_string(),
                    path: Some(path.clone()),
                    args: call.args.clone(),
                    time: call.time,
                },
            });
            runs.push(ProgramRun {
                seq,
                program,
                path,
                args: call.args,
                resume_file,
                timeout,
                env: self.program_env(),
                spool: self.opts.state_dir.join("power"),
            });
        }
        runs
    }

    /// Starts journaled runs, each on its own thread; their ends come back as messages.
    pub(super) fn start_power_programs(&self, runs: Vec<ProgramRun>) {
        for run in runs {
            power_programs::start(run, self.tx.clone(), |seq, outcome| {
                Msg::PowerProgramEnded { seq, outcome }
            });
        }
    }

    /// A power program ended: logged and journaled. Its exit status changes no node, as in
    /// Slurm: a node that does not register times out at ResumeTimeout.
    pub(super) fn power_program_ended(&mut self, seq: u64, outcome: String) {
        let Some(call) = self.store.image().power_calls.get(&seq).cloned() else {
            return;
        };
        let what = format!("power: {} {}", call.program, call.args.join(" "));
        if outcome == "exit 0" {
            tracing::info!("{what}: {outcome}");
        } else {
            tracing::warn!(
                "{what}: {outcome} (ignored; its nodes time out if they do not come up)"
            );
        }
        self.commit(Record::PowerCallDone { seq, outcome });
    }

    /// The environment of a power program, built from scratch as Slurm's: `SLURM_CONF` (the
    /// cluster file), plus `SLUICE_STATE_DIR` and a `PATH` holding this binary's folder, so that
    /// a program can call `sluice register` on this daemon.
    fn program_env(&self) -> Vec<(String, String)> {
        let mut path = String::from("/usr/local/bin:/usr/bin:/bin");
        if let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.to_string_lossy().into_owned()))
        {
            path = format!("{dir}:{path}");
        }
        let mut env = vec![
            (
                "SLUICE_STATE_DIR".to_string(),
                self.opts.state_dir.to_string_lossy().into_owned(),
            ),
            ("PATH".to_string(), path),
        ];
        if let Some(conf) = &self.opts.cluster_file {
            env.push(("SLURM_CONF".into(), conf.to_string_lossy().into_owned()));
        }
        env
    }

    /// `sluice register NODE [NodeAddr=… NodeHostname=…]`: the node booted. Only root or the
    /// daemon's user may say so (slurmd's registration is authenticated as SlurmUser/root).
    pub(super) fn register(
        &mut self,
        who: &Identity,
        node: &str,
        req: RegisterRequest,
    ) -> Result<NodeRegistered, ApiError> {
        if who.uid != 0 && who.uid != self.admin_uid {
            return Err(ApiError::forbidden(format!(
                "register {node}: user {} (uid {}) may not register nodes; only root and the daemon's user may",
                who.user, who.uid
            )));
        }
        for (key, value) in [
            ("NodeAddr", &req.node_addr),
            ("NodeHostname", &req.node_hostname),
        ] {
            if let Some(v) = value
                && (v.is_empty()
                    || v.len() > MAX_ADDRESS
                    || !v
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-.:_[]".contains(c)))
            {
                return Err(ApiError::bad(format!(
                    "register {node}: {key}={v}: expected a host name or address (letters, digits, - . : _ [ ], at most {MAX_ADDRESS} characters)"
                )));
            }
        }
        let id = self.node_id(node)?;
        self.engine.register_node(id);
        let time = self.engine.now();
        let old = self
            .store
            .image()
            .addresses
            .get(node)
            .cloned()
            .unwrap_or_default();
        self.commit(Record::Registered {
            node: node.to_string(),
            address: NodeAddress {
                addr: req.node_addr.or(old.addr),
                hostname: req.node_hostname.or(old.hostname),
                time,
            },
        });
        tracing::info!("power: node {node} registered");
        Ok(NodeRegistered {
            node: node.to_string(),
            state: self.engine.node_state_string(id),
        })
    }

    /// `update NodeName=NAMES State=… [Reason=…]` through the engine's node update (power
    /// states, RESUME, DOWN, DRAIN…), refused as scontrol refuses it.
    pub(super) fn node_state(
        &mut self,
        nodes: &str,
        state: &str,
        reason: &str,
    ) -> Result<NodeStateDone, ApiError> {
        let update: NodeUpdate = state
            .parse()
            .map_err(|e| ApiError::bad(format!("update NodeName={nodes}: {e}")))?;
        if reason.len() > MAX_REASON {
            return Err(ApiError::bad(format!(
                "update NodeName={nodes}: Reason is {} bytes; at most {MAX_REASON} are taken",
                reason.len()
            )));
        }
        let names = sluice_hostlist::expand_at_most(nodes, sluice_hostlist::MAX_HOSTS)
            .map_err(|e| ApiError::bad(format!("update NodeName={nodes}: {e}")))?;
        let ids = names
            .iter()
            .map(|n| self.node_id(n))
            .collect::<Result<Vec<_>, _>>()?;
        let reason = Some(reason).filter(|r| !r.trim().is_empty());
        let time = self.engine.now();
        let mut refused = Vec::new();
        for (name, id) in names.iter().zip(ids) {
            match self.engine.update_node(id, update, reason) {
                Ok(()) => {
                    tracing::info!("power: update NodeName={name} State={update}");
                    // The admin state the image keeps for DOWN/DRAIN/RESUME, as `node_action`'s.
                    let action = match update {
                        NodeUpdate::Down => Some(NodeAction::Down),
                        NodeUpdate::Drain => Some(NodeAction::Drain),
                        NodeUpdate::Resume | NodeUpdate::Undrain => Some(NodeAction::Resume),
                        _ => None,
                    };
                    if let Some(action) = action {
                        self.commit(Record::Node {
                            node: name.clone(),
                            action,
                            reason: reason.unwrap_or_default().to_string(),
                            time,
                        });
                    }
                }
                Err(e) => refused.push(format!("{name}: {e}")),
            }
        }
        if !refused.is_empty() {
            return Err(ApiError::bad(format!(
                "update NodeName={nodes} State={update}: {}",
                refused.join("; ")
            )));
        }
        Ok(NodeStateDone {
            nodes: names,
            state: update.to_string(),
        })
    }

    /// The node named `name`, or a 404 naming it.
    fn node_id(&self, name: &str) -> Result<NodeId, ApiError> {
        self.cluster
            .nodes
            .iter()
            .position(|x| x.name == name)
            .map(|i| NodeId(i as u32))
            .ok_or_else(|| ApiError::not_found(format!("node {name} not found")))
    }
}

/// The reasons of a call's nodes, each once: `job 3 allocated it`, `SuspendTime reached`.
fn summarise(reasons: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for r in reasons {
        if !seen.contains(&r.as_str()) {
            seen.push(r);
        }
    }
    seen.join("; ")
}
