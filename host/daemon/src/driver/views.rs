//! Read-only views (health, metrics, nodes, partitions, licenses, reservations, shares,
//! priorities, config) and the admin actions on nodes and reservations, answered as
//! `sluice-api`'s types.

use sluice_api::{
    Config, CycleStats, DeviceRow, Diag, Faults, Health, LicenseRow, Metrics, NodeActionDone,
    NodeReport, NodeRow, PartitionRow, PassStats, PriorityRow, Reservation, ReservationCreated,
    ReservationDeleted, ShareRow,
};
use sluice_cluster::NodeId;
use sluice_engine::PartitionState;
use sluice_engine::{JobId, ReservationSpec};

use super::Driver;
use crate::api::ApiError;
use crate::image::{NodeAction, Record, State};

/// A reservation as the API shows it.
pub(super) fn reservation_of(r: &ReservationSpec) -> Reservation {
    Reservation {
        name: r.name.clone(),
        start: r.start,
        end: r.end,
        nodes: r.nodes.clone(),
        licenses: r.licenses.clone(),
        users: r.users.clone(),
        accounts: r.accounts.clone(),
    }
}

/// A reservation as the engine and the journal take it.
fn spec_of(r: Reservation) -> ReservationSpec {
    ReservationSpec {
        name: r.name,
        start: r.start,
        end: r.end,
        nodes: r.nodes,
        licenses: r.licenses,
        users: r.users,
        accounts: r.accounts,
    }
}

/// A share figure, `None` when it is undefined (JSON has no NaN or infinity).
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn pass_stats(p: &sluice_engine::PassStats) -> PassStats {
    PassStats {
        queued: p.queued,
        tested: p.tested,
        started: p.started,
        reserved: p.reserved,
        stopped_by: p.stopped_by.map(String::from),
    }
}

impl Driver {
    /// The public id of an engine job; the engine's own id when the daemon has no record of it.
    fn public_id(&self, e: JobId) -> u64 {
        self.ids.public(e).unwrap_or(u64::from(e))
    }

    pub(super) fn health(&self) -> Health {
        let image = self.store.image();
        let count = |s: State| image.jobs.values().filter(|j| j.state == s).count();
        Health {
            status: "ok".into(),
            pid: std::process::id(),
            uptime_s: self.started_at.elapsed().as_secs(),
            jobs: image.jobs.len(),
            pending: count(State::Pending),
            running: count(State::Running),
            next_job_id: image.next_id,
            journal_seq: image.seq,
            journal_bytes: self.store.journal_bytes(),
            recovery: self.store.recovery.clone(),
            accounting_unstored: self.acct.unstored(),
        }
    }

    /// sdiag's figures: the counters, the jobs held now, both loops' cycles and the API's use.
    pub(super) fn diag_report(&self) -> Diag {
        let e = &self.engine;
        let cycle = |t: &sluice_engine::PassTotals, last: &sluice_engine::PassStats| CycleStats {
            cycles: t.cycles,
            last_cycle_us: t.last_micros,
            max_cycle_us: t.max_micros,
            mean_cycle_us: t.total_micros.checked_div(t.cycles).unwrap_or(0),
            last_depth: last.tested as u64,
            mean_depth: t.total_depth.checked_div(t.cycles).unwrap_or(0),
            last_queue_length: last.queued as u64,
            started: t.total_started,
            last_cycle_when: (t.cycles > 0).then_some(t.last_at),
        };
        let now = e.now();
        Diag {
            server_time: now,
            data_since: now - self.started_at.elapsed().as_secs() as i64,
            counters: self.metrics.clone(),
            jobs_pending: e.pending_count() as u64,
            jobs_running: e.running_ids().count() as u64,
            main: cycle(e.main_totals(), e.last_main_stats()),
            backfill: cycle(e.backfill_totals(), e.last_backfill_stats()),
            endpoints: self.opts.metrics.endpoint_stats(),
        }
    }

    pub(super) fn metrics_report(&self) -> Metrics {
        let e = &self.engine;
        let f = e.faults();
        Metrics {
            counters: self.metrics.clone(),
            engine_faults: Faults {
                priority: f.priority,
                selection: f.selection,
                hres: f.hres,
                gres: f.gres,
            },
            last_main_pass: pass_stats(e.last_main_stats()),
            last_backfill_pass: pass_stats(e.last_backfill_stats()),
            engine_pending: e.pending_count(),
            engine_running: e.running_ids().count(),
        }
    }

    fn node_symbol_state(&self, n: usize) -> (String, &'static str) {
        let mut state = self.engine.nodes().state_name(NodeId(n as u32));
        // An idle node held by a reservation in force is RESERVED, as Slurm shows it.
        let now = self.engine.now();
        if state.starts_with("IDLE")
            && self
                .engine
                .reservations()
                .iter()
                .any(|(_, r)| r.active_at(now) && r.nodes.contains(n as u32))
        {
            state = state.replacen("IDLE", "RESERVED", 1);
        }
        // sinfo's one symbol, by Slurm's precedence (`#` `%` `~` `!` `*`).
        let sym = self.engine.power().node(n).flags.sinfo_symbol();
        (state, sym)
    }

    pub(super) fn node_rows(&self) -> Vec<NodeRow> {
        let c = &self.cluster;
        c.nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let (state, sym) = self.node_symbol_state(i);
                let rt = &self.engine.nodes().nodes()[i];
                NodeRow {
                    name: node.name.clone(),
                    state,
                    power_symbol: sym.into(),
                    cpus: node.cpus,
                    memory_mb: node.real_memory_mb,
                    features: node.features.clone(),
                    partitions: c
                        .partitions
                        .iter()
                        .filter(|p| p.nodes.iter().any(|n| n.0 as usize == i))
                        .map(|p| p.name.clone())
                        .collect(),
                    jobs: rt.jobs.iter().filter_map(|e| self.ids.public(*e)).collect(),
                    reason: rt.reason.clone(),
                }
            })
            .collect()
    }

    pub(super) fn show_node(&self, name: &str) -> Result<NodeReport, ApiError> {
        let r = self
            .engine
            .node_report(name)
            .ok_or_else(|| ApiError::not_found(format!("node {name} not found")))?;
        let address = self.store.image().addresses.get(name).cloned();
        Ok(NodeReport {
            node_name: r.node_name,
            // scontrol's whole state: base and every flag (`IDLE+CLOUD+POWERED_DOWN`).
            state: r.power.state.clone(),
            cpu_tot: r.cpu_tot,
            cpu_alloc: r.cpu_alloc,
            real_memory: r.real_memory,
            alloc_mem: r.alloc_mem,
            features: r.features,
            gres: r.gres,
            gres_used: r.gres_used,
            devices: r
                .devices
                .into_iter()
                .map(|d| DeviceRow {
                    name: d.name,
                    gres_type: d.gres_type,
                    index: d.index,
                    file: d.file,
                    cores: d.cores,
                    job: d.job.map(|e| self.public_id(e)),
                })
                .collect(),
            jobs: r.jobs.into_iter().map(|e| self.public_id(e)).collect(),
            reason: r.reason,
            node_addr: address.as_ref().and_then(|a| a.addr.clone()),
            node_hostname: address.and_then(|a| a.hostname),
            // The engine's clock is the wall clock here: Unix seconds.
            last_busy_time: r.power.last_busy,
            suspend_time: r.power.suspend_time,
            power_reason: r.power.why,
        })
    }

    pub(super) fn node_action(
        &mut self,
        nodes: &str,
        action: NodeAction,
        reason: &str,
    ) -> Result<NodeActionDone, ApiError> {
        let names = sluice_hostlist::expand_at_most(nodes, sluice_hostlist::MAX_HOSTS)
            .map_err(|e| ApiError::bad(format!("update NodeName={nodes}: {e}")))?;
        if action != NodeAction::Resume && reason.trim().is_empty() {
            return Err(ApiError::bad(format!(
                "update NodeName={nodes}: a reason is required to set DOWN or DRAIN (pass --reason)"
            )));
        }
        let mut ids = Vec::new();
        for n in &names {
            let i = self
                .cluster
                .nodes
                .iter()
                .position(|x| &x.name == n)
                .ok_or_else(|| ApiError::not_found(format!("node {n} not found")))?;
            ids.push((n.clone(), NodeId(i as u32)));
        }
        let time = self.engine.now();
        for (name, id) in ids {
            match action {
                NodeAction::Down => self.engine.node_down(id, reason),
                NodeAction::Drain => self.engine.node_drain(id, reason),
                NodeAction::Resume => self.engine.node_resume(id),
            }
            self.commit(Record::Node {
                node: name,
                action,
                reason: reason.to_string(),
                time,
            });
        }
        // slurmctld's words for an admin's node update.
        match action {
            NodeAction::Resume => {
                tracing::info!("update_node: node(s) {nodes} returned to service")
            }
            NodeAction::Down => {
                tracing::info!("update_node: node(s) {nodes} state set to DOWN, reason: {reason}")
            }
            NodeAction::Drain => {
                tracing::info!("update_node: node(s) {nodes} state set to DRAIN, reason: {reason}")
            }
        }
        Ok(NodeActionDone {
            nodes: names,
            action,
        })
    }

    /// `update PartitionName=… State=…`: the engine's state, journaled.
    pub(super) fn set_partition_state(
        &mut self,
        name: &str,
        state: &str,
    ) -> Result<sluice_api::PartitionUpdated, ApiError> {
        let parsed = PartitionState::parse(state).ok_or_else(|| {
            ApiError::bad(format!(
                "update PartitionName={name}: State={state}: expected UP, DOWN, DRAIN or INACTIVE"
            ))
        })?;
        let p = self
            .cluster
            .partitions
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| ApiError::not_found(format!("Partition {name} not found")))?;
        self.engine
            .set_partition_state(sluice_cluster::PartitionId(p as u32), parsed);
        self.commit(Record::Partition {
            name: name.to_string(),
            state: parsed.as_str().to_string(),
        });
        Ok(sluice_api::PartitionUpdated {
            partition: name.to_string(),
            state: parsed.as_str().to_string(),
        })
    }

    pub(super) fn partition_rows(&self) -> Vec<PartitionRow> {
        let c = &self.cluster;
        c.partitions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let names: Vec<String> = p.nodes.iter().map(|n| c.node(*n).name.clone()).collect();
                PartitionRow {
                    name: p.name.clone(),
                    default: p.default,
                    nodes: sluice_hostlist::compress(&names),
                    total_nodes: names.len(),
                    max_time: p.max_time.seconds(),
                    default_time: p.default_time.and_then(|t| t.seconds()),
                    max_nodes: p.max_nodes,
                    priority_tier: p.priority_tier,
                    priority_job_factor: p.priority_job_factor,
                    state: self
                        .engine
                        .partition_state(sluice_cluster::PartitionId(i as u32))
                        .as_str()
                        .to_string(),
                    oversubscribe: p.access.oversubscribe.to_string(),
                }
            })
            .collect()
    }

    pub(super) fn license_rows(&self) -> Vec<LicenseRow> {
        self.engine
            .license_report()
            .into_iter()
            .map(|l| LicenseRow {
                license_name: l.license_name,
                total: l.total,
                used: l.used,
                reserved: l.reserved,
                free: l.free,
                base: l.base,
                nodes: l.nodes,
                mode: l.mode,
            })
            .collect()
    }

    pub(super) fn reservation_list(&self) -> Vec<Reservation> {
        self.store
            .image()
            .reservations
            .values()
            .map(reservation_of)
            .collect()
    }

    pub(super) fn create_reservation(
        &mut self,
        r: Reservation,
    ) -> Result<ReservationCreated, ApiError> {
        if r.name.is_empty() {
            return Err(ApiError::bad(
                "create reservation: ReservationName is required",
            ));
        }
        // All its node expressions together, counted from their ranges before any is expanded.
        sluice_hostlist::Hostlist::parse_at_most(&r.nodes.join(","), sluice_hostlist::MAX_HOSTS)
            .map_err(|e| ApiError::bad(format!("create reservation {}: Nodes: {e}", r.name)))?;
        let spec = spec_of(r);
        self.engine
            .create_reservation(&spec)
            .map_err(|e| ApiError::bad(format!("create reservation {}: {e}", spec.name)))?;
        let reservation = spec.name.clone();
        self.commit(Record::ReservationCreate { spec });
        Ok(ReservationCreated { reservation })
    }

    pub(super) fn delete_reservation(
        &mut self,
        name: &str,
    ) -> Result<ReservationDeleted, ApiError> {
        if !self.engine.delete_reservation(name) {
            return Err(ApiError::not_found(format!("reservation {name} not found")));
        }
        self.commit(Record::ReservationDelete {
            name: name.to_string(),
        });
        Ok(ReservationDeleted {
            deleted: name.to_string(),
        })
    }

    pub(super) fn share_rows(&mut self) -> Vec<ShareRow> {
        self.engine
            .share_rows()
            .into_iter()
            .map(|r| ShareRow {
                account: r.account,
                user: r.user,
                depth: r.depth,
                raw_shares: r.raw_shares,
                norm_shares: finite(r.norm_shares),
                raw_usage: finite(r.raw_usage).unwrap_or(0.0),
                effective_usage: finite(r.effective_usage),
                fair_share: finite(r.fair_share),
                level_fs: finite(r.level_fs),
            })
            .collect()
    }

    pub(super) fn priority_rows(&self) -> Vec<PriorityRow> {
        self.engine
            .priority_rows()
            .into_iter()
            .filter_map(|r| {
                Some(PriorityRow {
                    job_id: self.ids.public(r.job_id)?,
                    partition: r.partition,
                    user: r.user,
                    account: r.account,
                    priority: r.priority,
                    factors: r.factors,
                })
            })
            .collect()
    }

    pub(super) fn config_report(&self) -> Config {
        Config {
            cluster: self.cluster.name.clone(),
            cluster_file: self.opts.cluster_file.clone(),
            daemon_file: self.opts.daemon_file.clone(),
            state_dir: self.opts.state_dir.clone(),
            daemon: self.cfg.clone(),
            engine: serde_json::to_value(self.engine.config()).unwrap_or_default(),
            nodes: self.cluster.nodes.len(),
            partitions: self
                .cluster
                .partitions
                .iter()
                .map(|p| p.name.clone())
                .collect(),
        }
    }
}
