//! The daemon's own settings (`DIR/daemon.toml`), which slurm.conf-like cluster files do not
//! carry. The types are `sluice-api`'s, since `/v1/config` shows them.

use std::path::Path;

pub use sluice_api::{DaemonConfig, OnCrash};

/// Reads `path`; a missing file gives the defaults.
pub fn load(path: &Path) -> Result<DaemonConfig, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DaemonConfig::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}
