//! The wasmtime engine sluice runs every component on, and the on-disk cache of compiled
//! components keyed by content hash, so a component is compiled once per machine.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use sluice_policy::PluginKind;
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use crate::error::LoadError;

/// A version of the WIT package `sluice:policy` this host has bindings for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WitVersion {
    /// `wit/v0.1.0`: the whole priority context with every priority call.
    V0_1_0,
    /// `wit/v0.2.0`: the priority context's static part only when it changed (`set-cluster`).
    V0_2_0,
    /// `wit/v0.3.0`: the node table only when it changed (`set-nodes`), and per pass only the
    /// nodes whose free resources moved.
    V0_3_0,
    /// `wit/v0.4.0`: the priority job table's columns concatenated by type, two lists in all.
    V0_4_0,
    /// `wit/v0.5.0`: `compute` told whether the per-factor breakdown will be shown.
    V0_5_0,
    /// `wit/v0.6.0`: a pass's node changes ride along with its first `place`, and a grown
    /// cluster is sent only its new associations.
    V0_6_0,
}

impl WitVersion {
    /// The version as the package names it (`0.2.0`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V0_1_0 => "0.1.0",
            Self::V0_2_0 => "0.2.0",
            Self::V0_3_0 => "0.3.0",
            Self::V0_4_0 => "0.4.0",
            Self::V0_5_0 => "0.5.0",
            Self::V0_6_0 => "0.6.0",
        }
    }
}

impl std::fmt::Display for WitVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// WIT package versions this host loads; a later version gets its own folder and is added here
/// while the older ones stay.
pub const SUPPORTED_VERSIONS: &[WitVersion] = &[
    WitVersion::V0_1_0,
    WitVersion::V0_2_0,
    WitVersion::V0_3_0,
    WitVersion::V0_4_0,
    WitVersion::V0_5_0,
    WitVersion::V0_6_0,
];

/// The engine and the compiled-artifact cache.
#[derive(Clone)]
pub struct WasmEngine {
    engine: Engine,
    cache_dir: Option<PathBuf>,
}

impl WasmEngine {
    /// An engine with fuel metering on (the per-call budget); compiled components are cached in
    /// `cache_dir` when given.
    pub fn new(cache_dir: Option<PathBuf>) -> Self {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.consume_fuel(true);
        let engine = Engine::new(&config).expect("the engine configuration is fixed and valid");
        Self { engine, cache_dir }
    }

    /// The underlying wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compiles `bytes`, or loads the compiled artifact from the cache when it is there.
    pub fn compile(&self, origin: &str, bytes: &[u8]) -> Result<Component, LoadError> {
        let cached = self
            .cache_dir
            .as_ref()
            .map(|dir| dir.join(self.cache_key(bytes)));
        if let Some(path) = &cached
            && path.exists()
        {
            // SAFETY: the file is one this host wrote with `serialize` for an engine of the same
            // configuration (the key includes the engine's compatibility hash); wasmtime also
            // checks the version and configuration stamp and errors on a mismatch.
            match unsafe { Component::deserialize_file(&self.engine, path) } {
                Ok(component) => return Ok(component),
                Err(e) => {
                    tracing::warn!(path = %path.display(), "ignoring unusable cached component: {e:#}")
                }
            }
        }
        let component = Component::new(&self.engine, bytes).map_err(|e| LoadError::Compile {
            origin: origin.to_string(),
            reason: format!("{e:#}"),
        })?;
        if let Some(path) = &cached
            && let Err(e) = write_atomically(path, &component)
        {
            tracing::warn!(path = %path.display(), "cannot cache compiled component: {e}");
        }
        Ok(component)
    }

    fn cache_key(&self, bytes: &[u8]) -> String {
        let mut compat = std::collections::hash_map::DefaultHasher::new();
        self.engine
            .precompile_compatibility_hash()
            .hash(&mut compat);
        let digest = Sha256::digest(bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}-{:016x}.cwasm", compat.finish())
    }

    /// Which plugin kind and WIT version a component exports, checked against what this host
    /// supports; the error says what it found and what was expected.
    pub fn inspect(
        &self,
        origin: &str,
        component: &Component,
    ) -> Result<(PluginKind, WitVersion), LoadError> {
        let ty = component.component_type();
        let exports: Vec<String> = ty
            .exports(&self.engine)
            .map(|(name, _)| name.to_string())
            .collect();
        for kind in PluginKind::ALL {
            for &version in SUPPORTED_VERSIONS {
                let name = format!("sluice:policy/{}@{version}", kind.name());
                if exports.contains(&name) {
                    return Ok((kind, version));
                }
            }
        }
        Err(LoadError::World {
            origin: origin.to_string(),
            reason: format!(
                "exports [{}], expected one of sluice:policy/{{priority,selection,gres,hres}}@{{{}}}",
                exports.join(", "),
                SUPPORTED_VERSIONS
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        })
    }
}

fn write_atomically(path: &Path, component: &Component) -> std::io::Result<()> {
    let bytes = component.serialize().map_err(std::io::Error::other)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}
