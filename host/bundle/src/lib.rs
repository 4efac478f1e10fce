//! The default plugin bundle: its names, its embedded components, and the same policies linked
//! in natively, which the runtime answers with when a plugin faults and no earlier generation is
//! healthy (and which replay can run without any WebAssembly at all).

use sluice_policy::{
    FromSettings, GresPolicy, HresPolicy, PluginKind, PriorityPolicy, SelectionPolicy, Settings,
};

/// One policy of the default bundle.
#[derive(Clone, Copy, Debug)]
pub struct BundledPolicy {
    /// Kind of plugin.
    pub kind: PluginKind,
    /// Name used in config (`plugin = "multifactor"`), after Slurm's plugin names.
    pub name: &'static str,
    /// Cargo package the component and the native code are built from.
    pub package: &'static str,
}

/// Every policy of the default bundle; the first of each kind is that kind's default.
pub const BUNDLE: &[BundledPolicy] = &[
    BundledPolicy {
        kind: PluginKind::Priority,
        name: "multifactor",
        package: "sluice-plugin-priority-multifactor",
    },
    BundledPolicy {
        kind: PluginKind::Priority,
        name: "basic",
        package: "sluice-plugin-priority-basic",
    },
    BundledPolicy {
        kind: PluginKind::Selection,
        name: "cons_tres",
        package: "sluice-plugin-select-cons-tres",
    },
    BundledPolicy {
        kind: PluginKind::Selection,
        name: "linear",
        package: "sluice-plugin-select-linear",
    },
    BundledPolicy {
        kind: PluginKind::Gres,
        name: "gpu",
        package: "sluice-plugin-gres-gpu",
    },
    BundledPolicy {
        kind: PluginKind::Gres,
        name: "count",
        package: "sluice-plugin-gres-count",
    },
    BundledPolicy {
        kind: PluginKind::Hres,
        name: "modes",
        package: "sluice-plugin-hres-modes",
    },
];

/// The package of the bundle's graph-matching component: Fluxion's ID policies (`high`, `low`,
/// `first`, `hinode`, `lonode`, `hinodex`, `lonodex`, `firstnodex`), chosen by its `policy`
/// setting. Match policies are no [`PluginKind`]: they serve `sluice resource-query`'s
/// traverser, whose native ID policies (`sluice_graph::IdPolicy`) are the same crate linked in.
pub const MATCH_ID_PACKAGE: &str = "sluice-plugin-match-id";

/// The embedded component of the bundle's ID match policies ([`MATCH_ID_PACKAGE`]).
pub fn match_id_component() -> &'static [u8] {
    sluice_plugin_artifacts::embedded(MATCH_ID_PACKAGE)
        .unwrap_or_else(|| panic!("{MATCH_ID_PACKAGE} is not embedded"))
}

/// The default policy of a kind, if the bundle has one.
pub fn default_for(kind: PluginKind) -> Option<&'static BundledPolicy> {
    BUNDLE.iter().find(|p| p.kind == kind)
}

/// The bundled policy of `kind` called `name`.
pub fn find(kind: PluginKind, name: &str) -> Option<&'static BundledPolicy> {
    BUNDLE.iter().find(|p| p.kind == kind && p.name == name)
}

impl BundledPolicy {
    /// The embedded component bytes of this policy.
    pub fn component(&self) -> &'static [u8] {
        sluice_plugin_artifacts::embedded(self.package)
            .unwrap_or_else(|| panic!("{} is not embedded", self.package))
    }
}

/// A natively linked instance of a bundled policy, of any kind.
pub enum NativePolicy {
    /// A priority policy.
    Priority(Box<dyn PriorityPolicy + Send>),
    /// A selection policy.
    Selection(Box<dyn SelectionPolicy + Send>),
    /// A GRES policy.
    Gres(Box<dyn GresPolicy + Send>),
    /// An HRES policy.
    Hres(Box<dyn HresPolicy + Send>),
}

/// Builds the natively linked instance of a bundled policy from its settings.
pub fn instantiate(policy: &BundledPolicy, settings: &Settings) -> NativePolicy {
    match policy.package {
        "sluice-plugin-priority-basic" => NativePolicy::Priority(Box::new(
            sluice_plugin_priority_basic::Basic::from_settings(settings),
        )),
        "sluice-plugin-priority-multifactor" => NativePolicy::Priority(Box::new(
            sluice_plugin_priority_multifactor::Multifactor::from_settings(settings),
        )),
        "sluice-plugin-select-cons-tres" => NativePolicy::Selection(Box::new(
            sluice_plugin_select_cons_tres::ConsTres::from_settings(settings),
        )),
        "sluice-plugin-select-linear" => NativePolicy::Selection(Box::new(
            sluice_plugin_select_linear::Linear::from_settings(settings),
        )),
        "sluice-plugin-gres-gpu" => NativePolicy::Gres(Box::new(
            sluice_plugin_gres_gpu::Gpu::from_settings(settings),
        )),
        "sluice-plugin-gres-count" => NativePolicy::Gres(Box::new(
            sluice_plugin_gres_count::CountOnly::from_settings(settings),
        )),
        "sluice-plugin-hres-modes" => NativePolicy::Hres(Box::new(
            sluice_plugin_hres_modes::HresModes::from_settings(settings),
        )),
        other => unreachable!("bundle entry {other} has no native instance"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_serves_exactly_the_names_configs_may_use() {
        for kind in PluginKind::ALL {
            let served: Vec<&str> = BUNDLE
                .iter()
                .filter(|p| p.kind == kind)
                .map(|p| p.name)
                .collect();
            assert_eq!(
                served,
                sluice_cluster::model::plugins::bundled_names(kind),
                "{kind}"
            );
        }
    }

    #[test]
    fn every_bundled_policy_has_a_native_instance_of_its_kind() {
        for policy in BUNDLE {
            let kind = match instantiate(policy, &Settings::default()) {
                NativePolicy::Priority(_) => PluginKind::Priority,
                NativePolicy::Selection(_) => PluginKind::Selection,
                NativePolicy::Gres(_) => PluginKind::Gres,
                NativePolicy::Hres(_) => PluginKind::Hres,
            };
            assert_eq!(kind, policy.kind, "{}", policy.name);
            assert!(!policy.component().is_empty());
        }
    }

    #[test]
    fn the_match_policy_component_is_embedded() {
        // A component starts with the wasm magic and the component-model layer.
        assert_eq!(&match_id_component()[..8], b"\0asm\x0d\0\x01\0");
    }
}
