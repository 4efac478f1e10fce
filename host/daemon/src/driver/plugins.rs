//! Plugins: list, swap (staged off the scheduling path, published between passes), rollback,
//! swaps on change of the configured plugin files, reconfigure.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::SystemTime;

use std::sync::Arc;

use sluice_api::{GenerationRow, PluginOrigin, Plugins, Reconfigured, Role, RolledBack, Swapped};
use sluice_policy::{PluginKind, SettingValue};
use sluice_runtime::policy_set::SwapOutcome;
use sluice_runtime::{Loader, PluginSpec, specs};
use tokio::sync::oneshot;

use super::recording::Recorder;
use super::shadow::Shadows;
use super::{Driver, Replies};
use crate::api::{ApiError, ApiResult, answer, plugin_kind};
use crate::image::{PluginChoice, Record};

struct Staging {
    handle: JoinHandle<()>,
    kind: PluginKind,
    origin: String,
    choice: PluginChoice,
    reply: Option<oneshot::Sender<ApiResult>>,
}

/// A swap waiting for the one being staged.
struct Queued {
    spec: PluginSpec,
    /// What is journaled once it is published.
    choice: PluginChoice,
    reply: Option<oneshot::Sender<ApiResult>>,
}

/// Swap bookkeeping.
pub(super) struct PluginState {
    pub(super) loader: Loader,
    specs: Vec<PluginSpec>,
    staging: Option<Staging>,
    queue: VecDeque<Queued>,
    mtimes: BTreeMap<PathBuf, Option<SystemTime>>,
    pub(super) shadows: Shadows,
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
    pub(super) fn new(specs: &[PluginSpec], loader: &Loader, recorder: Arc<Recorder>) -> Self {
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
            shadows: Shadows::new(recorder),
            passes: 0,
        }
    }

    /// Notes that `plugin` is now `kind`'s active generation.
    pub(super) fn set_active(&mut self, kind: PluginKind, plugin: &str) {
        if let Some(s) = self.specs.iter_mut().find(|s| s.kind == kind) {
            s.plugin = plugin.to_string();
        }
    }

    pub(super) fn staging(&self) -> bool {
        self.staging.is_some()
    }

    pub(super) fn before_pass(&mut self) {
        self.passes += 1;
    }

    pub(super) fn shadow_active(&self) -> bool {
        self.shadows.active()
    }
}

impl Driver {
    pub(super) fn plugin_list(&self) -> Plugins {
        let set = self.set.lock().unwrap_or_else(|p| p.into_inner());
        let generations = set
            .status()
            .into_iter()
            .flat_map(|(kind, gens)| {
                gens.into_iter().map(move |g| GenerationRow {
                    kind: kind.name().into(),
                    role: match g.role {
                        sluice_runtime::slot::Role::Active => Role::Active,
                        sluice_runtime::slot::Role::Previous => Role::Previous,
                        sluice_runtime::slot::Role::Fallback => Role::Fallback,
                    },
                    generation: g.id,
                    origin: g.origin,
                    answered: g.health.answered,
                    faults: g.health.faults,
                    quarantined: g.health.quarantined,
                    last_fault: g.health.last_fault,
                })
            })
            .collect();
        let shadows = self.plugins.shadows.list();
        Plugins {
            generations,
            staging: self.plugins.staging.as_ref().map(|s| PluginOrigin {
                kind: s.kind.name().into(),
                origin: s.origin.clone(),
            }),
            queued: self.plugins.queue.len(),
            shadow: shadows.first().cloned(),
            shadows,
        }
    }

    pub(super) fn spec_for(
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
        let kind = match plugin_kind(kind) {
            Ok(k) => k,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let spec = self.spec_for(kind, file, settings);
        let choice = PluginChoice {
            file: Some(file.to_string()),
            settings: settings.clone(),
        };
        self.enqueue_swap(spec, choice, Some(reply));
    }

    fn enqueue_swap(
        &mut self,
        spec: PluginSpec,
        choice: PluginChoice,
        reply: Option<oneshot::Sender<ApiResult>>,
    ) {
        self.plugins.queue.push_back(Queued {
            spec,
            choice,
            reply,
        });
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
            choice: q.choice,
            reply: q.reply,
        });
    }

    /// Between passes: publishes a finished load, starts the next, and adds the answer to
    /// `replies`, sent once the batch's journal sync has made the publication durable.
    pub(super) fn apply_staged(&mut self, replies: &mut Replies) {
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
        let mut reply: ApiResult = Err(ApiError::internal("the staged load reported nothing"));
        for o in outcomes {
            reply = match o {
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
                    if kind == PluginKind::Priority {
                        // The queue is ordered by stored priorities; the new policy ranks it now.
                        self.engine.recalculate_priorities();
                    }
                    // A restart makes it active again (`restore_plugins`).
                    self.commit(Record::PluginPublished {
                        kind: kind.name().into(),
                        choice: staging.choice.clone(),
                    });
                    answer(&Swapped {
                        kind: kind.name().into(),
                        generation,
                        origin: staging.origin.clone(),
                    })
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
        if let Some(to) = staging.reply {
            replies.push((to, reply));
        }
        self.start_next_stage();
    }

    pub(super) fn rollback(&mut self, kind: &str) -> Result<RolledBack, ApiError> {
        let kind = plugin_kind(kind)?;
        let generation = self
            .set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .rollback(kind)
            .map_err(|e| ApiError::conflict(format!("plugin rollback {}: {e}", kind.name())))?;
        if kind == PluginKind::Priority {
            self.engine.recalculate_priorities();
        }
        self.commit(Record::PluginRolledBack {
            kind: kind.name().into(),
        });
        Ok(RolledBack {
            kind: kind.name().into(),
            generation,
        })
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
                self.enqueue_swap(spec, PluginChoice::default(), None);
            }
        }
    }

    /// SIGHUP / `sluice reconfigure`: reloads daemon.toml and the cluster file. A file that does
    /// not load changes nothing. Plugin choices and settings that changed are staged as swaps;
    /// node and partition changes need a restart (jobs keep running across one only in memory).
    pub(super) fn reconfigure(&mut self) -> Result<Reconfigured, ApiError> {
        let cfg = crate::config::load(&self.opts.daemon_file)
            .map_err(|e| ApiError::bad(format!("reconfigure: kept the old configuration: {e}")))?;
        let cluster = super::engine::load_cluster(&self.opts)
            .map_err(|e| ApiError::bad(format!("reconfigure: kept the old configuration: {e}")))?;
        self.cfg = cfg;
        self.opts.quotas.apply(&self.cfg);
        // Nodes change only at a restart: the engine's are the ones in force.
        self.bounds = crate::admission::Bounds::new(&self.cfg, &self.engine.cluster().nodes);
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
                self.enqueue_swap(spec, PluginChoice::default(), None);
            }
        }
        let topology_changed = cluster.nodes.len() != self.cluster.nodes.len()
            || cluster.partitions.len() != self.cluster.partitions.len();
        let note = if topology_changed {
            "nodes or partitions changed: they take effect at the next restart"
        } else {
            ""
        };
        Ok(Reconfigured {
            reloaded: true,
            plugins_staged: staged,
            note: note.into(),
        })
    }
}
