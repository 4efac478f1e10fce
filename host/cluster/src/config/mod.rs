//! sluice's own cluster file (TOML): reading it into a [`Cluster`] and writing one back out.

mod build;
mod export;
mod locate;
mod schema;

pub use export::to_config_file;
pub use locate::node_gres_location;
pub use schema::{
    AccountSpec, AssocLimitSpec, ConfigFile, CountValue, GresTable, NodeSpec, PartitionSpec,
    QosSpec, UserSpec,
};

use std::path::Path;

use crate::error::tidy_message;
use crate::{Cluster, ConfigError, Source};

/// Parses the TOML text of a cluster file without resolving it (unknown keys are errors).
pub fn parse_config_file(source: Source<'_>) -> Result<ConfigFile, ConfigError> {
    toml::from_str(source.text).map_err(|err| ConfigError::Syntax {
        at: source.at(err.span().map_or(0, |span| span.start)),
        message: tidy_message(err.message()),
    })
}

impl Cluster {
    /// Loads a cluster from TOML text and, optionally, the resources.yaml text for its HRES.
    ///
    /// Pure: the same texts give the same result, and nothing is read from disk.
    pub fn from_toml(
        config: Source<'_>,
        resources: Option<Source<'_>>,
    ) -> Result<Self, ConfigError> {
        let file = parse_config_file(config)?;
        build::build(file, config, resources)
    }

    /// Reads a cluster file from disk, plus the resources.yaml its `HresFile` key names (relative to
    /// the cluster file's directory).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let name = path.display().to_string();
        let text = read(path)?;
        let config = Source::new(&name, &text);
        let file = parse_config_file(config)?;
        let hres_path = file.hres_file.as_ref().map(|relative| {
            path.parent()
                .unwrap_or_else(|| Path::new("."))
                .join(relative.get_ref())
        });
        let hres_text = hres_path.as_deref().map(read).transpose()?;
        let hres_name = hres_path
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let resources = hres_text
            .as_deref()
            .map(|text| Source::new(&hres_name, text));
        build::build(file, config, resources)
    }

    /// The effective configuration as sluice TOML, every default written out.
    pub fn to_toml(&self) -> String {
        let file = to_config_file(self);
        toml::to_string(&file)
            .unwrap_or_else(|err| format!("# cannot print the configuration: {err}\n"))
    }
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|error| ConfigError::Io {
        file: path.display().to_string(),
        error,
    })
}
