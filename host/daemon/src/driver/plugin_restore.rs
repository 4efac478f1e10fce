//! Start-up: the plugin generations and shadows an admin chose, as the journal holds them,
//! made active again over the configuration's, so a restart does not silently undo a swap.

use sluice_policy::PluginKind;

use super::Driver;
use crate::image::PluginChoice;

impl Driver {
    /// Loads every kind's journaled previous and active choice (previous first, so a rollback
    /// after the restart goes where it would have gone before it) and starts the journaled
    /// shadows; says what it did, and what no longer loads, in the recovery report.
    pub(super) fn restore_plugins(&mut self) {
        let image = self.store.image();
        let (histories, shadows) = (image.plugins.clone(), image.shadows.clone());
        let mut said = Vec::new();
        for (kind_name, history) in histories {
            let Some(kind) = PluginKind::ALL.into_iter().find(|k| k.name() == kind_name) else {
                continue;
            };
            if history.iter().all(|c| c.file.is_none()) {
                continue;
            }
            for (n, choice) in history.iter().enumerate() {
                // The configuration's plugin is already active when it is the previous one.
                if n == 0 && choice.file.is_none() {
                    continue;
                }
                match self.load_choice(kind, choice) {
                    Ok(generation) => said.push(format!(
                        "{kind_name}: generation {generation} from {}",
                        describe(choice)
                    )),
                    Err(e) => {
                        said.push(format!(
                            "{kind_name}: {} no longer loads, the configured plugin stays: {e}",
                            describe(choice)
                        ));
                        break;
                    }
                }
            }
        }
        for (kind, choice) in shadows {
            let (reply, _) = tokio::sync::oneshot::channel();
            let file = choice.file.clone().unwrap_or_default();
            self.shadow_start_deferred(&kind, &file, &choice.settings, reply);
            said.push(format!("shadow {kind}: {file} (loading)"));
        }
        for line in &said {
            tracing::info!("restored from the journal: plugin {line}");
        }
        self.store.recovery.plugins = said;
    }

    /// Loads `choice` of `kind` now and publishes it.
    fn load_choice(&mut self, kind: PluginKind, choice: &PluginChoice) -> Result<u64, String> {
        let spec = match &choice.file {
            Some(file) => self.spec_for(kind, file, &choice.settings),
            None => sluice_runtime::specs::from_cluster(&self.cluster)
                .into_iter()
                .find(|s| s.kind == kind)
                .ok_or_else(|| format!("no configured {} plugin", kind.name()))?,
        };
        let loaded = self.plugins.loader.load(&spec).map_err(|e| e.to_string())?;
        let generation = self
            .set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .publish(loaded);
        self.plugins.set_active(kind, &spec.plugin);
        if kind == PluginKind::Priority {
            self.engine.recalculate_priorities();
        }
        Ok(generation)
    }
}

fn describe(choice: &PluginChoice) -> String {
    match &choice.file {
        Some(f) if choice.settings.is_empty() => f.clone(),
        Some(f) => {
            let set: Vec<String> = choice
                .settings
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            format!("{f} with {}", set.join(" "))
        }
        None => "the configuration".into(),
    }
}
