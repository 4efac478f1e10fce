//! Which policy plugin of each kind to load, its sandbox limits, and its free-form settings.

use serde::{Deserialize, Serialize};

/// Default per-instance memory cap of a plugin, in MiB.
pub const DEFAULT_MEMORY_LIMIT_MB: u32 = 64;

/// Default fuel (roughly wasm instructions) per plugin call: about a second of work, enough for any
/// reasonable policy pass over thousands of jobs while still stopping a runaway loop.
pub const DEFAULT_FUEL_PER_CALL: u64 = 2_000_000_000;

pub use sluice_policy::PluginKind;

/// Names of the bundled plugins of `kind`, default first, as config files may name them. The
/// bundle crate checks in its tests that it serves exactly these.
pub fn bundled_names(kind: PluginKind) -> &'static [&'static str] {
    match kind {
        PluginKind::Priority => &["multifactor", "basic"],
        PluginKind::Selection => &["cons_tres", "linear"],
        PluginKind::Gres => &["gpu", "count"],
        PluginKind::Hres => &["modes"],
    }
}

/// The bundled plugin loaded for `kind` when none is named.
pub fn default_plugin(kind: PluginKind) -> &'static str {
    bundled_names(kind)[0]
}

/// Where a plugin comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource<'a> {
    /// A plugin of the default bundle, by name.
    Bundled(&'a str),
    /// A WebAssembly component file.
    Wasm(&'a str),
    /// A native shared library.
    Native(&'a str),
}

/// One `[plugins.<kind>]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PluginConfig {
    /// A bundled name or a path ending in `.wasm` or `.so`; empty means the kind's default.
    pub plugin: String,
    /// Per-instance memory cap in MiB (64).
    pub memory_limit_mb: u32,
    /// Fuel per call (2,000,000,000).
    pub fuel_per_call: u64,
    /// Free-form table handed to the plugin as data.
    pub settings: toml::Table,
}

impl Default for PluginConfig {
    fn default() -> Self {
        Self {
            plugin: String::new(),
            memory_limit_mb: DEFAULT_MEMORY_LIMIT_MB,
            fuel_per_call: DEFAULT_FUEL_PER_CALL,
            settings: toml::Table::new(),
        }
    }
}

impl PluginConfig {
    /// Where the plugin comes from.
    pub fn source(&self) -> PluginSource<'_> {
        if self.plugin.ends_with(".wasm") {
            PluginSource::Wasm(&self.plugin)
        } else if self.plugin.ends_with(".so") {
            PluginSource::Native(&self.plugin)
        } else {
            // `builtin:<name>` is the same bundled policy linked in natively instead of sandboxed.
            PluginSource::Bundled(self.plugin.strip_prefix("builtin:").unwrap_or(&self.plugin))
        }
    }
}

/// The `[plugins]` section: one plugin per kind.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Plugins {
    /// Priority plugin.
    pub priority: PluginConfig,
    /// Selection plugin.
    pub selection: PluginConfig,
    /// GRES plugin.
    pub gres: PluginConfig,
    /// HRES plugin.
    pub hres: PluginConfig,
}

impl Plugins {
    /// The section of one kind.
    pub fn get(&self, kind: PluginKind) -> &PluginConfig {
        match kind {
            PluginKind::Priority => &self.priority,
            PluginKind::Selection => &self.selection,
            PluginKind::Gres => &self.gres,
            PluginKind::Hres => &self.hres,
        }
    }

    /// Mutable access to the section of one kind.
    pub fn get_mut(&mut self, kind: PluginKind) -> &mut PluginConfig {
        match kind {
            PluginKind::Priority => &mut self.priority,
            PluginKind::Selection => &mut self.selection,
            PluginKind::Gres => &mut self.gres,
            PluginKind::Hres => &mut self.hres,
        }
    }
}
