//! The engine-backed replay's policies: a cluster's plugin bundle as WebAssembly components or
//! linked in natively, behind the same containment as the live host.

use std::sync::{Arc, Mutex};

use anyhow::Context;
use sluice_cluster::Cluster;
use sluice_engine::Policies;
use sluice_runtime::shared::engine_policies;
use sluice_runtime::{PolicySet, specs};

/// How the bundle's policies run (`--bundle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleMode {
    /// The configured plugins as sandboxed WebAssembly components, as the live host runs them.
    Wasm,
    /// The same bundled policies linked into the binary (`builtin:<name>`); plugins given as a
    /// path to a component or library stay as they are.
    Native,
}

impl BundleMode {
    /// Parses `wasm` or `native`.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        match text {
            "wasm" => Ok(BundleMode::Wasm),
            "native" => Ok(BundleMode::Native),
            other => anyhow::bail!("unknown bundle mode `{other}` (expected wasm or native)"),
        }
    }

    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BundleMode::Wasm => "wasm",
            BundleMode::Native => "native",
        }
    }
}

/// Loads `cluster`'s `[plugins.*]` choices and hands the engine handles to them.
pub fn policies(cluster: &Cluster, mode: BundleMode) -> anyhow::Result<Policies> {
    let mut specs = specs::from_cluster(cluster);
    if mode == BundleMode::Native {
        for spec in &mut specs {
            if sluice_bundle::find(spec.kind, &spec.plugin).is_some() {
                spec.plugin = format!("builtin:{}", spec.plugin);
            }
        }
    }
    let loader = super::super::plugin::loader();
    let set = PolicySet::load(&loader, &specs).context("loading the plugin bundle")?;
    Ok(engine_policies(&Arc::new(Mutex::new(set))))
}
