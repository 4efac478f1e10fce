//! Resolving `[plugins.<kind>]`: empty names become the kind's default, bundled names are checked.

use crate::model::plugins::{bundled_names, default_plugin};
use crate::model::{PluginKind, PluginSource, Plugins};
use crate::{ConfigError, Source};

/// Fills in default plugin names and rejects unknown bundled names and zero limits.
pub fn resolve_plugins(mut plugins: Plugins, source: Source<'_>) -> Result<Plugins, ConfigError> {
    for kind in PluginKind::ALL {
        let config = plugins.get_mut(kind);
        if config.plugin.is_empty() {
            config.plugin = default_plugin(kind).to_owned();
        }
        let section = format!("[plugins.{}]", kind.name());
        let section_start = source.text.find(&section).unwrap_or(0);
        if let PluginSource::Bundled(name) = config.source()
            && !bundled_names(kind).contains(&name)
        {
            return Err(ConfigError::invalid(
                source.find_key("plugin", section_start),
                format!("{} plugin `{name}`", kind.name()),
                format!(
                    "one of {} or a path ending in .wasm or .so",
                    bundled_names(kind).join(", ")
                ),
            ));
        }
        for (key, value) in [
            ("memory_limit_mb", u64::from(config.memory_limit_mb)),
            ("fuel_per_call", config.fuel_per_call),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(
                    source.find_key(key, section_start),
                    format!("{key} = 0"),
                    "a positive limit",
                ));
            }
        }
    }
    Ok(plugins)
}
