//! The wasmtime engine sluice runs every component on, and the on-disk cache of compiled
//! components keyed by content hash, so a component is compiled once per machine.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use sluice_policy::PluginKind;
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use crate::error::LoadError;

/// Versions of the WIT package `sluice:policy` this host loads: the one `wit/` holds. Once a
/// release is published, a later contract adds its version here and an adapter per world in
/// `wasm/`, and the released one stays; until then `wit/` is edited in place.
pub const SUPPORTED_VERSIONS: &[&str] = &[sluice_policy::WIT_VERSION];

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

    /// The names of the interfaces a component exports.
    fn exports(&self, component: &Component) -> Vec<String> {
        component
            .component_type()
            .exports(&self.engine)
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// Which plugin kind and WIT version a component exports, checked against what this host
    /// supports; the error says what it found and what to do about it.
    pub fn inspect(
        &self,
        origin: &str,
        component: &Component,
    ) -> Result<(PluginKind, &'static str), LoadError> {
        let exports = self.exports(component);
        for kind in PluginKind::ALL {
            if let Some(version) = supported_export(&exports, kind.name()) {
                return Ok((kind, version));
            }
        }
        let reason = match supported_export(&exports, MATCH_INTERFACE) {
            Some(version) => format!(
                "is a match policy (sluice:policy/{MATCH_INTERFACE}@{version}), which \
                 `sluice resource-query --match-policy-file` loads, not a scheduler plugin"
            ),
            None => unsupported(&exports),
        };
        Err(LoadError::World {
            origin: origin.to_string(),
            reason,
        })
    }

    /// The WIT version of a graph-matching component (`match-policy` world), checked against
    /// what this host supports; the error says what it is instead.
    pub fn inspect_match(
        &self,
        origin: &str,
        component: &Component,
    ) -> Result<&'static str, LoadError> {
        let exports = self.exports(component);
        if let Some(version) = supported_export(&exports, MATCH_INTERFACE) {
            return Ok(version);
        }
        let reason = match self.inspect(origin, component) {
            Ok((kind, version)) => format!(
                "is a {kind} plugin (sluice:policy@{version}), expected a match policy \
                 (sluice:policy/{MATCH_INTERFACE})"
            ),
            Err(_) => unsupported(&exports),
        };
        Err(LoadError::World {
            origin: origin.to_string(),
            reason,
        })
    }
}

/// The interface of the `match-policy` world. Match policies are no [`PluginKind`]: they serve
/// `sluice resource-query`'s traverser, not the scheduler's slots.
pub const MATCH_INTERFACE: &str = "vertex-scoring";

/// The supported version at which `exports` has `sluice:policy/<interface>`, if any.
fn supported_export(exports: &[String], interface: &str) -> Option<&'static str> {
    SUPPORTED_VERSIONS
        .iter()
        .copied()
        .find(|version| exports.contains(&format!("sluice:policy/{interface}@{version}")))
}

/// Why a component exporting `exports` is none this host loads: another contract version (then
/// rebuild it), or no policy interface at all.
fn unsupported(exports: &[String]) -> String {
    let other = exports.iter().find_map(|e| {
        let (interface, version) = e.strip_prefix("sluice:policy/")?.split_once('@')?;
        (PluginKind::ALL.iter().any(|k| k.name() == interface) || interface == MATCH_INTERFACE)
            .then(|| format!("sluice:policy/{interface}@{version}"))
    });
    match other {
        Some(found) => format!(
            "is built against {found}, and this host loads sluice:policy@{} only: rebuild it \
             with this release's sluice-sdk (`cargo build --release --target wasm32-wasip2`)",
            SUPPORTED_VERSIONS.join(", @")
        ),
        None => format!(
            "exports [{}], expected one of sluice:policy/{{priority,selection,gres,hres,{MATCH_INTERFACE}}}@{}",
            exports.join(", "),
            SUPPORTED_VERSIONS.join(",")
        ),
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
