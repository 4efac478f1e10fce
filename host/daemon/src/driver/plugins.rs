//! Plugins: list, swap (staged off the scheduling path, published between passes), rollback,
//! swaps on change of the configured plugin files, reconfigure, and shadow evaluation of a
//! priority candidate beside the active policy.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::{Value, json};
use sluice_engine::JobState;
use sluice_policy::{JobTable, PluginKind, SettingValue};
use sluice_runtime::backend::PriorityBackend;
use sluice_runtime::policy_set::SwapOutcome;
use sluice_runtime::shared::SharedSet;
use sluice_runtime::{Loaded, Loader, PluginSpec, specs};
use tokio::sync::oneshot;

use super::Driver;
use crate::api::{ApiError, ApiResult};
use crate::config::DaemonConfig;

/// The shared plugin set the engine's handles lock.
pub(super) type Set = SharedSet;

struct Staging {
    handle: JoinHandle<()>,
    kind: PluginKind,
    origin: String,
    reply: Option<oneshot::Sender<ApiResult>>,
}

/// A swap waiting for the one being staged.
struct Queued {
    spec: PluginSpec,
    reply: Option<oneshot::Sender<ApiResult>>,
}

/// Swap bookkeeping.
pub(super) struct PluginState {
    loader: Loader,
    specs: Vec<PluginSpec>,
    staging: Option<Staging>,
    queue: VecDeque<Queued>,
    mtimes: BTreeMap<PathBuf, Option<SystemTime>>,
    shadow: Option<Shadow>,
    passes: u64,
}

fn mtime(p: &PathBuf) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

fn file_of(spec: &PluginSpec) -> Option<PathBuf> {
    let p = &spec.plugin;
    (p.contains('/') || p.ends_with(".wasm")).then(|| PathBuf::from(p))
}

impl PluginState {
    pub(super) fn new(specs: &[PluginSpec], loader: &Loader) -> Self {
        let mtimes = specs
            .iter()
            .filter_map(file_of)
            .map(|p| {
                let t = mtime(&p);
                (p, t)
            })
            .collect();
        Self {
            loader: loader.clone(),
            specs: specs.to_vec(),
            staging: None,
            queue: VecDeque::new(),
            mtimes,
            shadow: None,
            passes: 0,
        }
    }

    pub(super) fn staging(&self) -> bool {
        self.staging.is_some()
    }

    pub(super) fn before_pass(&mut self) {
        self.passes += 1;
    }

    pub(super) fn shadow_active(&self) -> bool {
        self.shadow.is_some()
    }
}

/// Parses a kind name.
fn kind_of(name: &str) -> Result<PluginKind, ApiError> {
    PluginKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            ApiError::bad(format!(
                "plugin kind {name:?}: expected priority, selection, gres or hres"
            ))
        })
}

/// A priority candidate evaluated beside the active policy on every pass.
pub struct Shadow {
    kind: PluginKind,
    origin: String,
    backend: Box<dyn PriorityBackend>,
    report: ShadowReport,
}

/// How often and where a shadow candidate would have decided differently.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ShadowReport {
    /// Kind.
    pub kind: String,
    /// Candidate.
    pub origin: String,
    /// Passes evaluated.
    pub passes: u64,
    /// Passes where at least one job's rank differed.
    pub passes_differing: u64,
    /// Job rows compared, summed over passes.
    pub rows_compared: u64,
    /// Rows whose rank differed, summed over passes.
    pub rows_differing: u64,
    /// Calls where the candidate faulted (it never acts, so nothing else happens).
    pub faults: u64,
    /// Last fault.
    pub last_fault: Option<String>,
    /// The largest rank moves seen: (job, partition, active rank, candidate rank), largest first.
    pub largest_moves: Vec<(u64, String, usize, usize)>,
}

impl Driver {
    pub(super) fn plugins_json(&self) -> Value {
        let set = self.set.lock().unwrap_or_else(|p| p.into_inner());
        let rows: Vec<Value> = set
            .status()
            .into_iter()
            .flat_map(|(kind, gens)| {
                gens.into_iter().map(move |g| {
                    json!({
                        "kind": kind.name(),
                        "role": format!("{:?}", g.role).to_lowercase(),
                        "generation": g.id,
                        "origin": g.origin,
                        "answered": g.health.answered,
                        "faults": g.health.faults,
                        "quarantined": g.health.quarantined,
                        "last_fault": g.health.last_fault,
                    })
                })
            })
            .collect();
        json!({
            "generations": rows,
            "staging": self.plugins.staging.as_ref().map(|s| json!({"kind": s.kind.name(), "origin": s.origin})),
            "queued": self.plugins.queue.len(),
            "shadow": self.plugins.shadow.as_ref().map(|s| json!({"kind": s.kind.name(), "origin": s.origin})),
        })
    }

    fn spec_for(
        &self,
        kind: PluginKind,
        file: &str,
        settings: &BTreeMap<String, String>,
    ) -> PluginSpec {
        let mut spec = self
            .plugins
            .specs
            .iter()
            .find(|s| s.kind == kind)
            .cloned()
            .expect("from_cluster gives every kind");
        spec.plugin = file.to_string();
        for (k, v) in settings {
            spec.settings =
                std::mem::take(&mut spec.settings).with(k, SettingValue::Text(v.clone()));
        }
        spec
    }

    /// `plugin swap`: answered once the candidate is published or refused.
    pub(super) fn swap_deferred(
        &mut self,
        kind: &str,
        file: &str,
        settings: &BTreeMap<String, String>,
        reply: oneshot::Sender<ApiResult>,
    ) {
        let kind = match kind_of(kind) {
            Ok(k) => k,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let spec = self.spec_for(kind, file, settings);
        self.enqueue_swap(spec, Some(reply));
    }

    fn enqueue_swap(&mut self, spec: PluginSpec, reply: Option<oneshot::Sender<ApiResult>>) {
        self.plugins.queue.push_back(Queued { spec, reply });
        self.start_next_stage();
    }

    fn start_next_stage(&mut self) {
        if self.plugins.staging.is_some() {
            return;
        }
        let Some(q) = self.plugins.queue.pop_front() else {
            return;
        };
        let handle = self
            .set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .stage(&self.plugins.loader, q.spec.clone());
        self.plugins.staging = Some(Staging {
            handle,
            kind: q.spec.kind,
            origin: q.spec.plugin,
            reply: q.reply,
        });
    }

    /// Between passes: publishes a finished load, answers whoever asked, starts the next.
    pub(super) fn apply_staged(&mut self) {
        if !self
            .plugins
            .staging
            .as_ref()
            .is_some_and(|s| s.handle.is_finished())
        {
            return;
        }
        let staging = self.plugins.staging.take().expect("checked above");
        let _ = staging.handle.join();
        let outcomes = self
            .set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .apply_staged();
        let mut answer: ApiResult = Err(ApiError::internal("the staged load reported nothing"));
        for o in outcomes {
            answer = match o {
                SwapOutcome::Published { kind, generation } => {
                    self.metrics.swaps_published += 1;
                    tracing::info!(
                        "plugin swap: {} generation {generation} from {} is active",
                        kind.name(),
                        staging.origin
                    );
                    if let Some(s) = self.plugins.specs.iter_mut().find(|s| s.kind == kind) {
                        s.plugin = staging.origin.clone();
                    }
                    Ok(
                        json!({"kind": kind.name(), "generation": generation, "origin": staging.origin}),
                    )
                }
                SwapOutcome::Refused(e) => {
                    self.metrics.swaps_refused += 1;
                    Err(ApiError::bad(format!(
                        "plugin swap {} {}: refused, the active generation keeps running: {e}",
                        staging.kind.name(),
                        staging.origin
                    )))
                }
            };
        }
        if let Some(reply) = staging.reply {
            let _ = reply.send(answer);
        }
        self.start_next_stage();
    }

    pub(super) fn rollback(&mut self, kind: &str) -> ApiResult {
        let kind = kind_of(kind)?;
        let generation = self
            .set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .rollback(kind)
            .map_err(|e| ApiError::conflict(format!("plugin rollback {}: {e}", kind.name())))?;
        Ok(json!({"kind": kind.name(), "generation": generation}))
    }

    /// Stages a swap for every configured plugin file whose modification time changed.
    pub(super) fn watch_plugin_files(&mut self) {
        let changed: Vec<PathBuf> = self
            .plugins
            .mtimes
            .iter()
            .filter(|(p, t)| mtime(p) != **t)
            .map(|(p, _)| p.clone())
            .collect();
        for p in changed {
            let t = mtime(&p);
            self.plugins.mtimes.insert(p.clone(), t);
            let specs: Vec<PluginSpec> = self
                .plugins
                .specs
                .iter()
                .filter(|s| file_of(s).as_ref() == Some(&p))
                .cloned()
                .collect();
            for spec in specs {
                tracing::info!(
                    "{}: changed, staging a new {} generation",
                    p.display(),
                    spec.kind.name()
                );
                self.enqueue_swap(spec, None);
            }
        }
    }

    /// SIGHUP / `sluice reconfigure`: reloads daemon.toml and the cluster file. A file that does
    /// not load changes nothing. Plugin choices and settings that changed are staged as swaps;
    /// node and partition changes need a restart (jobs keep running across one only in memory).
    pub(super) fn reconfigure(&mut self) -> ApiResult {
        let cfg = DaemonConfig::load(&self.opts.daemon_file)
            .map_err(|e| ApiError::bad(format!("reconfigure: kept the old configuration: {e}")))?;
        let cluster = super::recover::load_cluster(&self.opts)
            .map_err(|e| ApiError::bad(format!("reconfigure: kept the old configuration: {e}")))?;
        self.cfg = cfg;
        let new_specs = specs::from_cluster(&cluster);
        let mut staged = Vec::new();
        for spec in new_specs {
            let old = self.plugins.specs.iter().find(|s| s.kind == spec.kind);
            let differs = old.is_none_or(|o| {
                o.plugin != spec.plugin
                    || format!("{:?}", o.settings) != format!("{:?}", spec.settings)
            });
            if let Some(p) = file_of(&spec) {
                let t = mtime(&p);
                self.plugins.mtimes.insert(p, t);
            }
            if differs {
                staged.push(format!("{} {}", spec.kind.name(), spec.plugin));
                self.enqueue_swap(spec, None);
            }
        }
        let topology_changed = cluster.nodes.len() != self.cluster.nodes.len()
            || cluster.partitions.len() != self.cluster.partitions.len();
        Ok(json!({
            "reloaded": true,
            "plugins_staged": staged,
            "note": if topology_changed { "nodes or partitions changed: they take effect at the next restart" } else { "" },
        }))
    }

    pub(super) fn shadow_start(
        &mut self,
        kind: &str,
        file: &str,
        settings: &BTreeMap<String, String>,
    ) -> ApiResult {
        let kind = kind_of(kind)?;
        if kind != PluginKind::Priority {
            return Err(ApiError::bad(format!(
                "plugin shadow {}: only priority candidates can be shadowed so far",
                kind.name()
            )));
        }
        let spec = self.spec_for(kind, file, settings);
        // Loading compiles the component; done here on the driver, so keep candidates small.
        let loaded = self
            .plugins
            .loader
            .load(&spec)
            .map_err(|e| ApiError::bad(format!("plugin shadow priority {file}: {e}")))?;
        let Loaded::Priority(g) = loaded else {
            return Err(ApiError::bad(format!(
                "plugin shadow priority {file}: not a priority plugin"
            )));
        };
        self.plugins.shadow = Some(Shadow {
            kind,
            origin: g.origin.clone(),
            backend: g.backend,
            report: ShadowReport {
                kind: kind.name().into(),
                origin: g.origin,
                ..ShadowReport::default()
            },
        });
        Ok(json!({"shadow": kind.name(), "origin": file}))
    }

    pub(super) fn shadow_report(&self) -> ApiResult {
        let s = self
            .plugins
            .shadow
            .as_ref()
            .ok_or_else(|| ApiError::not_found("plugin shadow report: no shadow is running; start one with `sluice plugin shadow priority FILE`"))?;
        Ok(json!(s.report))
    }

    pub(super) fn shadow_stop(&mut self) -> ApiResult {
        let s = self
            .plugins
            .shadow
            .take()
            .ok_or_else(|| ApiError::not_found("plugin shadow stop: no shadow is running"))?;
        Ok(json!(s.report))
    }

    /// Asks the shadow candidate about the pending jobs the active policy just ranked and
    /// compares the two orders; nothing the candidate says is acted on.
    pub(super) fn shadow_pass(&mut self) {
        let Some(shadow) = self.plugins.shadow.as_mut() else {
            return;
        };
        let ctx = self.engine.priority_context();
        let gpu = self.engine.nodes().gres_kind("gpu");
        let mut t = JobTable::default();
        let mut rows = Vec::new();
        let mut active = Vec::new();
        let qos_n = ctx.qos.len().max(1) as u32;
        for id in self.engine.pending_ids().collect::<Vec<_>>() {
            let Some(job) = self.engine.job(id) else {
                continue;
            };
            if job.state != JobState::Pending || job.hold.is_some() || job.priority.is_empty() {
                continue;
            }
            let gpn: u32 = job
                .gres_per_node
                .iter()
                .filter(|(k, _)| Some(*k) == gpu)
                .map(|(_, c)| *c)
                .sum();
            for (pos, p) in job.partitions.iter().enumerate() {
                rows.push((id, p.index()));
                active.push(job.priority.get(pos).copied().unwrap_or(0));
                t.job_id.push(id);
                t.submit_time.push(job.submit_time);
                t.eligible_time
                    .push(job.eligible_time.unwrap_or(job.submit_time));
                t.association.push(job.assoc.0);
                t.partition.push(p.0);
                t.qos.push(job.qos.0.min(qos_n - 1));
                let n = job.spec.min_nodes.max(1);
                t.nodes.push(n);
                t.cpus.push(job.cpus().min(u64::from(u32::MAX)) as u32);
                t.memory_mb
                    .push(job.spec.memory_per_node_mb.saturating_mul(u64::from(n)));
                t.gpus.push(gpn.saturating_mul(n));
                t.time_limit.push(
                    job.time_limit
                        .unwrap_or(u64::from(u32::MAX))
                        .min(u64::from(u32::MAX)) as u32,
                );
                t.nice.push(job.spec.nice);
                t.site_factor.push(job.spec.site_factor);
            }
        }
        if rows.is_empty() {
            return;
        }
        let r = &mut shadow.report;
        r.passes += 1;
        let candidate = match shadow.backend.compute(&ctx, &t) {
            Ok(p) if p.check(rows.len()).is_ok() => p.priority,
            Ok(p) => {
                r.faults += 1;
                r.last_fault = Some(format!(
                    "answer failed the contract check: {:?}",
                    p.check(rows.len()).err()
                ));
                return;
            }
            Err(f) => {
                r.faults += 1;
                r.last_fault = Some(f.to_string());
                return;
            }
        };
        let rank = |prio: &[u32]| {
            let mut order: Vec<usize> = (0..prio.len()).collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(prio[i]), t.submit_time[i], t.job_id[i]));
            let mut rank = vec![0; prio.len()];
            for (r, i) in order.into_iter().enumerate() {
                rank[i] = r;
            }
            rank
        };
        let (ra, rc) = (rank(&active), rank(&candidate));
        let mut differ = 0;
        let mut moves = Vec::new();
        for i in 0..rows.len() {
            if ra[i] != rc[i] {
                differ += 1;
                let job = self.pid.get(&rows[i].0).copied().unwrap_or(0);
                let part = self.cluster.partitions[rows[i].1].name.clone();
                moves.push((job, part, ra[i], rc[i]));
            }
        }
        r.rows_compared += rows.len() as u64;
        r.rows_differing += differ;
        if differ > 0 {
            r.passes_differing += 1;
        }
        r.largest_moves.extend(moves);
        r.largest_moves
            .sort_by_key(|m| std::cmp::Reverse(m.2.abs_diff(m.3)));
        r.largest_moves.dedup_by_key(|m| (m.0, m.1.clone()));
        r.largest_moves.truncate(10);
    }
}
