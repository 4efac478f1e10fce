//! The four plugin slots of a running host, and hot swap: new generations are loaded and
//! smoke-called off the scheduling path, then published between passes.
//!
//! A pass borrows the set mutably from start to end, and [`PolicySet::apply_staged`] also needs
//! it mutably, so a pass can never see two generations of a kind. Loads finish in any order
//! (a small component compiles faster than a large one staged before it) but are published in
//! the order they were staged, so the swap asked for last is the one left active.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

use sluice_policy::PluginKind;

use crate::contained::{GresSlot, HresSlot, PrioritySlot, SelectionSlot};
use crate::error::LoadError;
use crate::loader::{Loaded, Loader, PluginSpec};
use crate::slot::{GenerationStatus, Slot};

/// The plugins one host schedules with.
pub struct PolicySet {
    /// Job priority.
    pub priority: PrioritySlot,
    /// Node selection.
    pub selection: SelectionSlot,
    /// GRES device logic for `gpu`, the plugin `[plugins.gres]` names.
    pub gres: GresSlot,
    /// Every other GRES name of the cluster (`nic`, …), each served by its own generation of the
    /// bundle's count-only plugin: the GRES interface is not GPU-shaped.
    pub gres_by_name: std::collections::BTreeMap<String, GresSlot>,
    /// HRES mode logic.
    pub hres: HresSlot,
    staged_tx: Sender<Staged>,
    staged_rx: Receiver<Staged>,
    /// The number the next staged load gets.
    next_staged: AtomicU64,
    /// The number of the next load to publish, and finished loads waiting for earlier ones.
    next_published: u64,
    finished: BTreeMap<u64, Result<Loaded, LoadError>>,
}

/// A finished load and the order it was staged in.
type Staged = (u64, Result<Loaded, LoadError>);

/// What happened to a staged load when it was applied.
#[derive(Debug)]
pub enum SwapOutcome {
    /// Published as the active generation.
    Published {
        /// Kind.
        kind: PluginKind,
        /// New generation id.
        generation: u64,
    },
    /// Refused; the previous generation keeps answering.
    Refused(LoadError),
}

impl std::fmt::Display for SwapOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Published { generation, .. } => write!(f, "generation {generation} is active"),
            Self::Refused(e) => write!(f, "refused, the previous generation keeps answering: {e}"),
        }
    }
}

impl PolicySet {
    /// Loads one plugin per kind; each falls back to its kind's built-in default.
    pub fn load(loader: &Loader, specs: &[PluginSpec]) -> Result<Self, LoadError> {
        let mut active = Vec::new();
        for kind in PluginKind::ALL {
            let spec = specs.iter().find(|s| s.kind == kind);
            let loaded = match spec {
                Some(spec) => loader.load(spec)?,
                None => default_of(kind)?,
            };
            active.push(loaded);
        }
        let mut it = active.into_iter();
        let (tx, rx) = channel();
        let fallback = |kind| default_of(kind).expect("the bundle has a default of every kind");
        Ok(Self {
            priority: match (it.next(), fallback(PluginKind::Priority)) {
                (Some(Loaded::Priority(a)), Loaded::Priority(f)) => {
                    Slot::new(PluginKind::Priority, a, f)
                }
                _ => unreachable!("loaded in kind order"),
            },
            selection: match (it.next(), fallback(PluginKind::Selection)) {
                (Some(Loaded::Selection(a)), Loaded::Selection(f)) => {
                    SelectionSlot::new(Slot::new(PluginKind::Selection, a, f))
                }
                _ => unreachable!("loaded in kind order"),
            },
            gres: match (it.next(), fallback(PluginKind::Gres)) {
                (Some(Loaded::Gres(a)), Loaded::Gres(f)) => Slot::new(PluginKind::Gres, a, f),
                _ => unreachable!("loaded in kind order"),
            },
            hres: match (it.next(), fallback(PluginKind::Hres)) {
                (Some(Loaded::Hres(a)), Loaded::Hres(f)) => {
                    HresSlot::new(Slot::new(PluginKind::Hres, a, f))
                }
                _ => unreachable!("loaded in kind order"),
            },
            gres_by_name: Default::default(),
            staged_tx: tx,
            staged_rx: rx,
            next_staged: AtomicU64::new(0),
            next_published: 0,
            finished: BTreeMap::new(),
        })
    }

    /// Loads the plugins a cluster's configuration names, plus a count-only GRES slot for every
    /// GRES name other than `gpu` that its nodes configure.
    pub fn load_for_cluster(
        loader: &Loader,
        cluster: &sluice_cluster::Cluster,
    ) -> Result<Self, LoadError> {
        let mut set = Self::load(loader, &crate::specs::from_cluster(cluster))?;
        for (name, spec) in crate::specs::gres_by_name(cluster) {
            let Loaded::Gres(active) = loader.load(&spec)? else {
                unreachable!("a gres spec loads a gres plugin")
            };
            let Loaded::Gres(fallback) =
                Loader::builtin(PluginKind::Gres, "count", &spec.settings)?
            else {
                unreachable!("the bundle's count plugin is a gres plugin")
            };
            set.gres_by_name
                .insert(name, Slot::new(PluginKind::Gres, active, fallback));
        }
        Ok(set)
    }

    /// Starts loading `spec` on a background thread; the result is published by the first
    /// [`PolicySet::apply_staged`] between passes after it and every load staged before it
    /// finished.
    pub fn stage(&self, loader: &Loader, spec: PluginSpec) -> std::thread::JoinHandle<()> {
        let (loader, tx) = (loader.clone(), self.staged_tx.clone());
        let number = self.next_staged.fetch_add(1, Ordering::Relaxed);
        std::thread::spawn(move || {
            // A panicking load must still report, or every later one would wait for it.
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loader.load(&spec)))
                    .unwrap_or_else(|_| {
                        Err(LoadError::Instantiate {
                            origin: spec.plugin.clone(),
                            reason: "the load panicked".into(),
                        })
                    });
            let _ = tx.send((number, result));
        })
    }

    /// Publishes, in staging order, every load that finished since the last call and has no
    /// earlier load still running. Call it between passes.
    pub fn apply_staged(&mut self) -> Vec<SwapOutcome> {
        while let Ok((number, result)) = self.staged_rx.try_recv() {
            self.finished.insert(number, result);
        }
        let mut out = Vec::new();
        while let Some(result) = self.finished.remove(&self.next_published) {
            self.next_published += 1;
            out.push(match result {
                Ok(loaded) => {
                    let kind = loaded.kind();
                    SwapOutcome::Published {
                        kind,
                        generation: self.publish(loaded),
                    }
                }
                Err(e) => {
                    tracing::warn!(
                        "plugin swap refused, the previous generation keeps running: {e}"
                    );
                    SwapOutcome::Refused(e)
                }
            });
        }
        out
    }

    /// Publishes a loaded generation now (the caller is between passes); returns its id.
    pub fn publish(&mut self, loaded: Loaded) -> u64 {
        match loaded {
            Loaded::Priority(g) => {
                self.priority.publish(g);
                self.priority.active_id()
            }
            Loaded::Selection(g) => {
                self.selection.slot.publish(g);
                self.selection.slot.active_id()
            }
            Loaded::Gres(g) => {
                self.gres.publish(g);
                self.gres.active_id()
            }
            Loaded::Hres(g) => {
                self.hres.slot.publish(g);
                self.hres.slot.active_id()
            }
        }
    }

    /// Makes the previous generation of `kind` active again.
    pub fn rollback(&mut self, kind: PluginKind) -> Result<u64, &'static str> {
        match kind {
            PluginKind::Priority => self.priority.rollback(),
            PluginKind::Selection => self.selection.slot.rollback(),
            PluginKind::Gres => self.gres.rollback(),
            PluginKind::Hres => self.hres.slot.rollback(),
        }
    }

    /// Every generation of every kind.
    pub fn status(&self) -> Vec<(PluginKind, Vec<GenerationStatus>)> {
        let mut out = vec![
            (PluginKind::Priority, self.priority.status()),
            (PluginKind::Selection, self.selection.slot.status()),
            (PluginKind::Gres, self.gres.status()),
            (PluginKind::Hres, self.hres.slot.status()),
        ];
        out.extend(
            self.gres_by_name
                .values()
                .map(|slot| (PluginKind::Gres, slot.status())),
        );
        out
    }
}

fn default_of(kind: PluginKind) -> Result<Loaded, LoadError> {
    Loader::default_builtin(kind).ok_or_else(|| LoadError::Unknown {
        kind: kind.name(),
        name: "<default>".into(),
        known: "nothing: the bundle has no policy of this kind".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::WasmEngine;
    use crate::limits::Limits;

    fn builtin(name: &str) -> Loaded {
        Loader::builtin(PluginKind::Priority, name, &Default::default()).unwrap()
    }

    #[test]
    fn loads_are_published_in_the_order_they_were_staged() {
        let spec = PluginSpec {
            kind: PluginKind::Priority,
            plugin: "builtin:basic".into(),
            settings: Default::default(),
            limits: Limits::default(),
        };
        let mut set = PolicySet::load(&Loader::new(WasmEngine::new(None)), &[spec]).unwrap();
        let (first, second) = (
            set.next_staged.fetch_add(1, Ordering::Relaxed),
            set.next_staged.fetch_add(1, Ordering::Relaxed),
        );
        // The second staged load finishes first: it waits for the first.
        set.staged_tx
            .send((second, Ok(builtin("multifactor"))))
            .unwrap();
        assert!(set.apply_staged().is_empty());
        set.staged_tx.send((first, Ok(builtin("basic")))).unwrap();
        let published: Vec<u64> = set
            .apply_staged()
            .into_iter()
            .map(|o| match o {
                SwapOutcome::Published { generation, .. } => generation,
                SwapOutcome::Refused(e) => panic!("{e}"),
            })
            .collect();
        assert_eq!(published.len(), 2);
        assert!(published[0] < published[1], "{published:?}");
        assert_eq!(set.priority.active_id(), published[1]);
        let status = set.priority.status();
        assert!(
            status[0].origin.contains("multifactor"),
            "the last staged is active"
        );
    }
}
