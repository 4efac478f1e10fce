//! The match world over a component instance: a graph-matching policy the traverser asks once
//! per graph (and per property change), never per vertex visit.

use std::path::Path;
use std::sync::Mutex;

use sluice_graph::{
    MatchPolicy, PolicyError, PolicyTable, ResourceGraph, VertexProperties, vertex_table,
};
use sluice_policy::{MatchTraits, Settings, VertexTable};

use crate::compile::WasmEngine;
use crate::error::{Fault, LoadError};
use crate::limits::Limits;
use crate::plugin_file::{PluginFile, PluginFormat};
use crate::wasm::bindings::matching::{
    MatchPolicy as MatchWorld, MatchPolicyPre, exports::sluice::policy::vertex_scoring as w,
};
use crate::wasm::instance::{WasmInstance, impl_world};

impl_world!(MatchWorld, MatchPolicyPre);

/// A match policy served by a component: its traits read once at load, its table one call.
pub struct MatchComponent {
    origin: String,
    traits: MatchTraits,
    // `MatchPolicy::table` takes `&self`; a call needs the instance mutably.
    instance: Mutex<WasmInstance<MatchWorld>>,
}

impl MatchComponent {
    /// Compiles `bytes`, checks it is a match policy of this contract, instantiates it with
    /// `settings` under `limits`, and asks `describe`.
    pub fn new(
        engine: &WasmEngine,
        origin: &str,
        bytes: &[u8],
        settings: Settings,
        limits: Limits,
    ) -> Result<Self, LoadError> {
        let component = engine.compile(origin, bytes)?;
        engine.inspect_match(origin, &component)?;
        let mut instance =
            WasmInstance::<MatchWorld>::new(engine.engine(), &component, origin, settings, limits)?;
        let described = instance
            .call(|b, s| b.sluice_policy_vertex_scoring().call_describe(s))
            .map_err(|fault| LoadError::Smoke {
                origin: origin.to_string(),
                fault,
            })?;
        let t = described.map_err(|reason| LoadError::World {
            origin: origin.to_string(),
            reason,
        })?;
        Ok(MatchComponent {
            origin: origin.to_string(),
            traits: MatchTraits {
                prefers_higher: t.prefers_higher,
                slot_prefers_higher: t.slot_prefers_higher,
                ranks_root_by_runs: t.ranks_root_by_runs,
                stop_on_first_match: t.stop_on_first_match,
                exclusive_types: t.exclusive_types,
                reads_properties: t.reads_properties,
            },
            instance: Mutex::new(instance),
        })
    }

    /// Opens the component file at `path` as every plugin file is opened (no final symlink, a
    /// size cap, told by its first bytes) and loads it; a native library is refused.
    pub fn open(
        engine: &WasmEngine,
        path: &Path,
        settings: Settings,
        limits: Limits,
    ) -> Result<Self, LoadError> {
        let file = PluginFile::open(path)?;
        if file.format() != PluginFormat::Component {
            return Err(LoadError::Refused {
                path: path.to_path_buf(),
                reason: "match policies are loaded as components only".into(),
            });
        }
        Self::new(
            engine,
            &path.display().to_string(),
            &file.read_component()?,
            settings,
            limits,
        )
    }

    /// One `score` call, its answer checked against the contract.
    pub fn score(&self, vertices: &VertexTable) -> Result<PolicyTable, Fault> {
        let props: Vec<w::VertexProperty<'_>> = vertices
            .properties
            .iter()
            .map(|p| w::VertexProperty {
                vertex: p.vertex,
                key: &p.key,
                value: &p.value,
            })
            .collect();
        let types: Vec<&str> = vertices.types.iter().map(String::as_str).collect();
        let table = w::VertexTable {
            types: &types,
            kinds: &vertices.kinds,
            ids: &vertices.ids,
            properties: &props,
        };
        let mut instance = self.instance.lock().unwrap_or_else(|e| e.into_inner());
        let answer = instance
            .call(|b, s| b.sluice_policy_vertex_scoring().call_score(s, table))?
            .map_err(|reason| Fault::Contract(sluice_policy::ContractError::Invalid(reason)))?;
        let scores = PolicyTable {
            own: answer.own,
            factor: answer.factor,
        };
        scores.check(vertices.len())?;
        Ok(scores)
    }
}

impl MatchPolicy for MatchComponent {
    fn name(&self) -> &str {
        &self.origin
    }

    fn table(
        &self,
        graph: &ResourceGraph,
        properties: &VertexProperties,
    ) -> Result<PolicyTable, PolicyError> {
        let props = self.traits.reads_properties.then_some(properties);
        self.score(&vertex_table(graph, props))
            .map_err(|fault| PolicyError::Plugin {
                policy: self.origin.clone(),
                reason: fault.to_string(),
            })
    }

    fn reads_properties(&self) -> bool {
        self.traits.reads_properties
    }

    fn prefers_higher(&self) -> bool {
        self.traits.prefers_higher
    }

    fn slot_prefers_higher(&self) -> bool {
        self.traits.slot_prefers_higher
    }

    fn ranks_root_by_runs(&self) -> bool {
        self.traits.ranks_root_by_runs
    }

    fn stop_on_first_match(&self) -> bool {
        self.traits.stop_on_first_match
    }

    fn exclusive_types(&self) -> Vec<String> {
        self.traits.exclusive_types.clone()
    }
}
