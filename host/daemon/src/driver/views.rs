//! Read-only views (health, metrics, nodes, partitions, reservations, priorities, config) and
//! the admin actions on nodes and reservations.

use serde_json::{Value, json};
use sluice_cluster::NodeId;
use sluice_engine::ReservationSpec;
use sluice_policy::Power;

use super::Driver;
use crate::api::{ApiError, ApiResult};
use crate::image::{NodeAction, Record, State};

impl Driver {
    pub(super) fn health(&self) -> Value {
        let image = self.store.image();
        let count = |s: State| image.jobs.values().filter(|j| j.state == s).count();
        json!({
            "status": "ok",
            "pid": std::process::id(),
            "uptime_s": self.started_at.elapsed().as_secs(),
            "jobs": image.jobs.len(),
            "pending": count(State::Pending),
            "running": count(State::Running),
            "next_job_id": image.next_id,
            "journal_seq": image.seq,
            "journal_bytes": self.store.journal_bytes(),
            "recovery": self.store.recovery,
        })
    }

    pub(super) fn metrics_json(&self) -> Value {
        let mut m = serde_json::to_value(&self.metrics).unwrap_or_default();
        let e = &self.engine;
        m["engine_faults"] = json!(e.faults());
        m["last_main_pass"] = json!(e.last_main_stats());
        m["last_backfill_pass"] = json!(e.last_backfill_stats());
        m["engine_pending"] = json!(e.pending_ids().count());
        m["engine_running"] = json!(e.running_ids().count());
        m
    }

    fn node_symbol_state(&self, n: usize) -> (String, &'static str) {
        let rt = &self.engine.nodes().nodes()[n];
        let state = self.engine.nodes().state_name(NodeId(n as u32));
        let sym = match rt.power {
            Power::PoweredDown => "~",
            Power::PoweringUp => "#",
            _ => "",
        };
        (state, sym)
    }

    pub(super) fn nodes_json(&self) -> Value {
        let c = &self.cluster;
        let rows: Vec<Value> = c
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let (state, sym) = self.node_symbol_state(i);
                let rt = &self.engine.nodes().nodes()[i];
                let partitions: Vec<&str> = c
                    .partitions
                    .iter()
                    .filter(|p| p.nodes.iter().any(|n| n.0 as usize == i))
                    .map(|p| p.name.as_str())
                    .collect();
                json!({
                    "name": node.name,
                    "state": state,
                    "power_symbol": sym,
                    "cpus": node.cpus,
                    "memory_mb": node.real_memory_mb,
                    "features": node.features,
                    "partitions": partitions,
                    "jobs": rt.jobs.iter().filter_map(|e| self.pid.get(e)).collect::<Vec<_>>(),
                    "reason": rt.reason,
                })
            })
            .collect();
        Value::Array(rows)
    }

    pub(super) fn show_node(&self, name: &str) -> ApiResult {
        let mut report = self
            .engine
            .node_report(name)
            .ok_or_else(|| ApiError::not_found(format!("node {name} not found")))
            .map(|r| json!(r))?;
        if let Some(jobs) = report.get_mut("jobs").and_then(Value::as_array_mut) {
            for j in jobs.iter_mut() {
                if let Some(e) = j.as_u64()
                    && let Some(p) = self.pid.get(&(e as u32 as _))
                {
                    *j = json!(p);
                }
            }
        }
        Ok(report)
    }

    pub(super) fn node_action(
        &mut self,
        nodes: &str,
        action: NodeAction,
        reason: &str,
    ) -> ApiResult {
        let names = sluice_hostlist::expand(nodes)
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
        Ok(json!({ "nodes": names, "action": action }))
    }

    pub(super) fn partitions_json(&self) -> Value {
        let c = &self.cluster;
        Value::Array(
            c.partitions
                .iter()
                .map(|p| {
                    let names: Vec<String> =
                        p.nodes.iter().map(|n| c.node(*n).name.clone()).collect();
                    json!({
                        "name": p.name,
                        "default": p.default,
                        "nodes": sluice_hostlist::compress(&names),
                        "total_nodes": names.len(),
                        "max_time": p.max_time.seconds(),
                        "default_time": p.default_time.and_then(|t| t.seconds()),
                        "max_nodes": p.max_nodes,
                        "priority_tier": p.priority_tier,
                        "priority_job_factor": p.priority_job_factor,
                    })
                })
                .collect(),
        )
    }

    pub(super) fn reservations_json(&self) -> Value {
        json!(self.store.image().reservations.values().collect::<Vec<_>>())
    }

    pub(super) fn create_reservation(&mut self, r: ReservationSpec) -> ApiResult {
        if r.name.is_empty() {
            return Err(ApiError::bad(
                "create reservation: ReservationName is required",
            ));
        }
        self.engine
            .create_reservation(&r)
            .map_err(|e| ApiError::bad(format!("create reservation {}: {e}", r.name)))?;
        let name = r.name.clone();
        self.commit(Record::ReservationCreate { spec: r });
        Ok(json!({ "reservation": name }))
    }

    pub(super) fn delete_reservation(&mut self, name: &str) -> ApiResult {
        if !self.engine.delete_reservation(name) {
            return Err(ApiError::not_found(format!("reservation {name} not found")));
        }
        self.commit(Record::ReservationDelete {
            name: name.to_string(),
        });
        Ok(json!({ "deleted": name }))
    }

    pub(super) fn prio_json(&self) -> Value {
        let rows: Vec<Value> = self
            .engine
            .priority_rows()
            .into_iter()
            .filter_map(|r| {
                let p = self.pid.get(&r.job_id)?;
                let mut v = json!(r);
                v["job_id"] = json!(p);
                Some(v)
            })
            .collect();
        Value::Array(rows)
    }

    pub(super) fn config_json(&self) -> Value {
        json!({
            "cluster": self.cluster.name,
            "cluster_file": self.opts.cluster_file,
            "daemon_file": self.opts.daemon_file,
            "state_dir": self.opts.state_dir,
            "daemon": self.cfg,
            "engine": self.engine.config(),
            "nodes": self.cluster.nodes.len(),
            "partitions": self.cluster.partitions.iter().map(|p| &p.name).collect::<Vec<_>>(),
        })
    }
}
