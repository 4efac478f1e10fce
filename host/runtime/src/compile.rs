//! The wasmtime engine sluice runs every component on, and the caches of compiled components,
//! both keyed by content hash: in memory, one compiled component shared by every generation
//! loaded from the same bytes; on disk, a bounded directory of artifacts, so a component is
//! compiled once per machine.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};
use sluice_policy::PluginKind;
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use crate::error::LoadError;

/// Versions of the WIT package `sluice:policy` this host loads: the one `wit/` holds. Once a
/// release is published, a later contract adds its version here and an adapter per world in
/// `wasm/`, and the released one stays; until then `wit/` is edited in place.
pub const SUPPORTED_VERSIONS: &[&str] = &[sluice_policy::WIT_VERSION];

/// What the on-disk cache keeps at most; past either bound the least recently used artifacts
/// are deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheBound {
    /// Total size of the artifacts, in bytes.
    pub bytes: u64,
    /// Number of artifacts.
    pub entries: usize,
}

impl Default for CacheBound {
    /// 1 GiB and 64 artifacts: some 25 Python policies (~37 MB compiled each), or every Rust
    /// one a site is likely to try.
    fn default() -> Self {
        Self {
            bytes: 1 << 30,
            entries: 64,
        }
    }
}

/// A compiled component, shared by every instance made from the same bytes while any lives.
pub type Compiled = Arc<Component>;

/// The engine and the compiled-artifact caches. Clones share both.
#[derive(Clone)]
pub struct WasmEngine {
    engine: Engine,
    cache_dir: Option<PathBuf>,
    bound: CacheBound,
    memory: Arc<InMemory>,
}

/// The compiled components some generation still holds, by cache key. Held weakly, so a
/// component is freed with the last generation made from it: what stays in memory is bounded
/// by what the slots keep (active, previous, shadows), not by how many swaps there were.
#[derive(Default)]
struct InMemory {
    live: Mutex<HashMap<String, Weak<Component>>>,
    /// Held while a component is compiled or read from disk: a second load of the same bytes
    /// waits and shares it, and two compilations (~300 MB of compiler heap each for an 18 MB
    /// Python component) never run at once.
    loading: Mutex<()>,
}

impl InMemory {
    fn get(&self, key: &str) -> Option<Compiled> {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.get(key).and_then(Weak::upgrade)
    }

    fn insert(&self, key: String, component: &Compiled) {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|_, c| c.strong_count() > 0);
        live.insert(key, Arc::downgrade(component));
    }
}

impl WasmEngine {
    /// An engine with fuel metering on (the per-call budget); compiled components are cached in
    /// `cache_dir` when given, within [`CacheBound::default`].
    pub fn new(cache_dir: Option<PathBuf>) -> Self {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.consume_fuel(true);
        let engine = Engine::new(&config).expect("the engine configuration is fixed and valid");
        Self {
            engine,
            cache_dir,
            bound: CacheBound::default(),
            memory: Arc::default(),
        }
    }

    /// The same engine with the on-disk cache held to `bound`.
    pub fn with_cache_bound(mut self, bound: CacheBound) -> Self {
        self.bound = bound;
        self
    }

    /// The underlying wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// How many distinct compiled components are in memory, each shared by whatever was made
    /// from its bytes.
    pub fn compiled_in_memory(&self) -> usize {
        let live = self.memory.live.lock().unwrap_or_else(|p| p.into_inner());
        live.values().filter(|c| c.strong_count() > 0).count()
    }

    /// Compiles `bytes`, or shares the compiled component a live generation made from the same
    /// bytes, or loads it from the on-disk cache.
    pub fn compile(&self, origin: &str, bytes: &[u8]) -> Result<Compiled, LoadError> {
        let key = self.cache_key(bytes);
        if let Some(shared) = self.memory.get(&key) {
            return Ok(shared);
        }
        let _one = self
            .memory
            .loading
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(shared) = self.memory.get(&key) {
            return Ok(shared);
        }
        let component = Arc::new(self.load_or_compile(origin, &key, bytes)?);
        self.memory.insert(key, &component);
        Ok(component)
    }

    fn load_or_compile(
        &self,
        origin: &str,
        key: &str,
        bytes: &[u8],
    ) -> Result<Component, LoadError> {
        let cached = self.cache_dir.as_ref().map(|dir| dir.join(key));
        if let Some(path) = &cached
            && let Some(component) = self.deserialize(path)
        {
            // Recently used: the last to be evicted.
            let _ = std::fs::File::open(path).and_then(|f| f.set_modified(SystemTime::now()));
            return Ok(component);
        }
        let component = Component::new(&self.engine, bytes).map_err(|e| LoadError::Compile {
            origin: origin.to_string(),
            reason: format!("{e:#}"),
        });
        let from_disk = match (&component, &cached) {
            (Ok(compiled), Some(path)) => match write_atomically(path, compiled) {
                Ok(()) => {
                    self.evict(path);
                    // Code mapped from the artifact is clean page cache, which the kernel can
                    // share and drop; the compiled copy is anonymous memory.
                    self.deserialize(path)
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), "cannot cache compiled component: {e}");
                    None
                }
            },
            _ => None,
        };
        let component = match from_disk {
            Some(mapped) => Ok(mapped),
            None => component,
        };
        release_freed_heap();
        component
    }

    /// The artifact at `path`, when it is there and usable.
    fn deserialize(&self, path: &Path) -> Option<Component> {
        if !path.exists() {
            return None;
        }
        // SAFETY: the file is one this host wrote with `serialize` for an engine of the same
        // configuration (the key includes the engine's compatibility hash); wasmtime also checks
        // the version and configuration stamp and errors on a mismatch.
        match unsafe { Component::deserialize_file(&self.engine, path) } {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), "ignoring unusable cached component: {e:#}");
                None
            }
        }
    }

    /// Deletes the least recently used artifacts beyond the bound, never `kept` (just written),
    /// and temporary files an interrupted write left more than an hour ago.
    fn evict(&self, kept: &Path) {
        let Some(dir) = kept.parent() else { return };
        let Ok(listing) = std::fs::read_dir(dir) else {
            return;
        };
        let stale = SystemTime::now() - Duration::from_secs(3600);
        let mut artifacts = Vec::new();
        for entry in listing.flatten() {
            let (path, name) = (entry.path(), entry.file_name());
            let name = name.to_string_lossy();
            let Ok(meta) = entry.metadata() else { continue };
            let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if !meta.is_file() || !is_cache_file(&name) || path == kept {
                continue;
            }
            if name.ends_with(".cwasm") {
                artifacts.push((used, meta.len(), path));
            } else if used < stale {
                let _ = std::fs::remove_file(&path);
            }
        }
        artifacts.sort_by_key(|(used, ..)| std::cmp::Reverse(*used));
        let mut bytes = std::fs::metadata(kept).map_or(0, |m| m.len());
        let mut entries = 1;
        for (_, len, path) in artifacts {
            bytes += len;
            entries += 1;
            if bytes > self.bound.bytes || entries > self.bound.entries {
                tracing::info!(path = %path.display(), "compiled-component cache full: evicting");
                let _ = std::fs::remove_file(&path);
            }
        }
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

/// Whether `name` is one of the cache's files: `<sha256 hex>-<compatibility hash>.cwasm`, or
/// the temporary file of one being written.
fn is_cache_file(name: &str) -> bool {
    name.len() > 64
        && name.as_bytes()[..64].iter().all(u8::is_ascii_hexdigit)
        && (name.ends_with(".cwasm") || name.contains(".tmp"))
}

/// Hands the heap the compiler freed back to the system. glibc keeps it in the compiling
/// thread's arena, and each staging thread may be given an arena of its own: without this, each
/// compilation of an 18 MB Python component left ~250 MB resident for good.
fn release_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the system, under every arena's lock.
    unsafe {
        libc::malloc_trim(0);
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
