//! Turns a plugin name or path into a checked, smoke-called generation, off the scheduling path.

use std::path::Path;

use sluice_bundle::NativePolicy;
use sluice_policy::native::{
    Guarded, NativeGres, NativeHres, NativePlugin, NativePriority, NativeSelection,
};
use sluice_policy::{NodeBitmap, PlaceMode, PluginKind, Settings, fixtures};

use crate::backend::{GresBackend, HresBackend, PriorityBackend, SelectionBackend};
use crate::compile::WasmEngine;
use crate::error::{Fault, LoadError};
use crate::limits::Limits;
use crate::plugin_file::{PluginFile, PluginFormat};
use crate::slot::Generation;
use crate::wasm::bindings;
use crate::wasm::instance::{WasmInstance, World};
use crate::wasm::priority::PriorityComponent;
use crate::wasm::selection::SelectionComponent;

/// Which plugin to load for a kind, with its settings and limits.
#[derive(Clone, Debug)]
pub struct PluginSpec {
    /// The kind the plugin must be.
    pub kind: PluginKind,
    /// A bundled name (`multifactor`, served as its embedded component), `builtin:<name>` (the
    /// bundled policy linked in natively), or a path to a component or a native library, told
    /// apart by their first bytes (see [`PluginFile`]; a native library must be as trusted as
    /// the daemon).
    pub plugin: String,
    /// The plugin's settings.
    pub settings: Settings,
    /// Its memory cap and fuel budget.
    pub limits: Limits,
}

/// A loaded generation of any kind.
pub enum Loaded {
    /// Priority.
    Priority(Generation<dyn PriorityBackend>),
    /// Selection.
    Selection(Generation<dyn SelectionBackend>),
    /// GRES.
    Gres(Generation<dyn GresBackend>),
    /// HRES.
    Hres(Generation<dyn HresBackend>),
}

impl Loaded {
    /// Its kind.
    pub fn kind(&self) -> PluginKind {
        match self {
            Self::Priority(_) => PluginKind::Priority,
            Self::Selection(_) => PluginKind::Selection,
            Self::Gres(_) => PluginKind::Gres,
            Self::Hres(_) => PluginKind::Hres,
        }
    }

    /// Where it came from.
    pub fn origin(&self) -> &str {
        match self {
            Self::Priority(g) => &g.origin,
            Self::Selection(g) => &g.origin,
            Self::Gres(g) => &g.origin,
            Self::Hres(g) => &g.origin,
        }
    }
}

/// Loads plugins for one host.
#[derive(Clone)]
pub struct Loader {
    engine: WasmEngine,
}

impl Loader {
    /// A loader compiling with `engine`.
    pub fn new(engine: WasmEngine) -> Self {
        Self { engine }
    }

    /// The engine components are compiled with.
    pub fn engine(&self) -> &WasmEngine {
        &self.engine
    }

    /// Loads, checks and smoke-calls the plugin `spec` names.
    pub fn load(&self, spec: &PluginSpec) -> Result<Loaded, LoadError> {
        let kind = spec.kind;
        let name = spec.plugin.as_str();
        let mut loaded = if let Some(builtin) = name.strip_prefix("builtin:") {
            Self::builtin(kind, builtin, &spec.settings)?
        } else if let Some(bundled) = sluice_bundle::find(kind, name) {
            self.component(
                kind,
                &format!("{name} (bundle component)"),
                bundled.component(),
                spec,
            )?
        } else if name.contains('/') || name.contains('.') {
            // The first bytes decide, not the name; nothing of the file runs before that.
            let file = PluginFile::open(Path::new(name))?;
            match file.format() {
                PluginFormat::Component => {
                    self.component(kind, name, &file.read_component()?, spec)?
                }
                PluginFormat::Native => {
                    native_generation(kind, name, crate::native::load(file, &spec.settings)?)?
                }
            }
        } else {
            return Err(unknown(kind, name));
        };
        smoke(&mut loaded).map_err(|fault| LoadError::Smoke {
            origin: loaded.origin().to_string(),
            fault,
        })?;
        Ok(loaded)
    }

    /// Loads a component from bytes as a plugin of `kind`.
    pub fn component(
        &self,
        kind: PluginKind,
        origin: &str,
        bytes: &[u8],
        spec: &PluginSpec,
    ) -> Result<Loaded, LoadError> {
        let component = self.engine.compile(origin, bytes)?;
        let (found, version) = self.engine.inspect(origin, &component)?;
        if found != kind {
            return Err(LoadError::World {
                origin: origin.to_string(),
                reason: format!(
                    "is a {found} plugin (sluice:policy@{version}), expected a {kind} plugin"
                ),
            });
        }
        // One adapter per world; a second supported version would add its own here.
        let new = Instantiate {
            engine: self.engine.engine(),
            component: &component,
            origin,
            spec,
        };
        Ok(match kind {
            PluginKind::Priority => Loaded::Priority(Generation::new(
                origin,
                Box::new(PriorityComponent::new(new.instance()?)),
            )),
            PluginKind::Selection => Loaded::Selection(Generation::new(
                origin,
                Box::new(SelectionComponent::new(new.instance()?)),
            )),
            PluginKind::Gres => Loaded::Gres(Generation::new(
                origin,
                Box::new(new.instance::<bindings::gres::GresPolicy>()?),
            )),
            PluginKind::Hres => Loaded::Hres(Generation::new(
                origin,
                Box::new(new.instance::<bindings::hres::HresPolicy>()?),
            )),
        })
    }

    /// The bundled policy `name` of `kind`, linked in natively.
    pub fn builtin(kind: PluginKind, name: &str, settings: &Settings) -> Result<Loaded, LoadError> {
        let bundled = sluice_bundle::find(kind, name).ok_or_else(|| unknown(kind, name))?;
        let origin = format!("builtin:{name}");
        let plugin = match sluice_bundle::instantiate(bundled, settings) {
            NativePolicy::Priority(p) => NativePlugin::Priority(Box::new(Guarded(p))),
            NativePolicy::Selection(p) => NativePlugin::Selection(Box::new(Guarded(p))),
            NativePolicy::Gres(p) => NativePlugin::Gres(Box::new(Guarded(p))),
            NativePolicy::Hres(p) => NativePlugin::Hres(Box::new(Guarded(p))),
        };
        native_generation(kind, &origin, plugin)
    }

    /// The built-in default of `kind`: the first bundled policy of that kind, linked in.
    pub fn default_builtin(kind: PluginKind) -> Option<Loaded> {
        let bundled = sluice_bundle::default_for(kind)?;
        Self::builtin(kind, bundled.name, &Settings::default()).ok()
    }
}

/// What every component instance of one load is made from.
struct Instantiate<'a> {
    engine: &'a wasmtime::Engine,
    component: &'a crate::compile::Compiled,
    origin: &'a str,
    spec: &'a PluginSpec,
}

impl Instantiate<'_> {
    /// A live instance of world `W`, with the spec's settings and limits.
    fn instance<W: World>(&self) -> Result<WasmInstance<W>, LoadError> {
        WasmInstance::new(
            self.engine,
            self.component,
            self.origin,
            self.spec.settings.clone(),
            self.spec.limits,
        )
    }
}

fn unknown(kind: PluginKind, name: &str) -> LoadError {
    let known: Vec<&str> = sluice_bundle::BUNDLE
        .iter()
        .filter(|p| p.kind == kind)
        .map(|p| p.name)
        .collect();
    LoadError::Unknown {
        kind: kind.name(),
        name: name.to_string(),
        known: known.join(", "),
    }
}

fn native_generation(
    kind: PluginKind,
    origin: &str,
    plugin: NativePlugin,
) -> Result<Loaded, LoadError> {
    if plugin.kind() != kind {
        return Err(LoadError::Native {
            origin: origin.into(),
            reason: format!("is a {} plugin, expected {kind}", plugin.kind()),
        });
    }
    Ok(match plugin {
        NativePlugin::Priority(p) => Loaded::Priority(Generation::new(
            origin,
            Box::new(p) as Box<dyn PriorityBackend>,
        )),
        NativePlugin::Selection(p) => Loaded::Selection(Generation::new(
            origin,
            Box::new(p) as Box<dyn SelectionBackend>,
        )),
        NativePlugin::Gres(p) => {
            Loaded::Gres(Generation::new(origin, Box::new(p) as Box<dyn GresBackend>))
        }
        NativePlugin::Hres(p) => {
            Loaded::Hres(Generation::new(origin, Box::new(p) as Box<dyn HresBackend>))
        }
    })
}

// Keeps the boxed native trait objects nameable for `native_generation`'s casts.
#[allow(dead_code)]
type NativeObjects = (
    Box<dyn NativePriority>,
    Box<dyn NativeSelection>,
    Box<dyn NativeGres>,
    Box<dyn NativeHres>,
);

/// One cheap call of each export with fixture data, checked against the contract.
pub fn smoke(loaded: &mut Loaded) -> Result<(), Fault> {
    match loaded {
        Loaded::Priority(g) => {
            let ctx = fixtures::priority_context(1_700_000_000, 16, 2, 2);
            let jobs = fixtures::job_table(&ctx, 20, 1);
            g.backend.compute(&ctx, &jobs)?.check(jobs.len())?;
        }
        Loaded::Selection(g) => {
            let table = fixtures::node_table(16);
            g.backend.begin_pass(&table)?;
            let mut req = fixtures::job_requests(16, 1, 1).remove(0);
            req.exclusive = false;
            req.gres_per_node.clear();
            if let Some(p) = g.backend.place(&req, PlaceMode::Test)? {
                table.check_placement(&req, &p)?;
            }
        }
        Loaded::Gres(g) => {
            let nodes = fixtures::gpu_nodes(2);
            let answers = g.backend.validate(&nodes)?;
            sluice_policy::ContractError::check_length(
                "validate answers",
                nodes.len(),
                answers.len(),
            )?;
        }
        Loaded::Hres(g) => {
            let (resources, layers) = fixtures::hres_document();
            g.backend.begin_pass(&resources, &layers)?;
            let candidates = NodeBitmap::full(32);
            let eligible = g.backend.eligible(
                &[sluice_policy::Demand {
                    resource: 0,
                    count: 1,
                }],
                &candidates.words,
            )?;
            if !NodeBitmap::from_words(eligible).is_subset_of(&candidates) {
                return Err(sluice_policy::ContractError::Invalid(
                    "eligible nodes that were not candidates".into(),
                )
                .into());
            }
        }
    }
    Ok(())
}
