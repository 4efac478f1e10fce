//! The selection world over a component instance, for every supported WIT version.
//!
//! The versions' selection interfaces are the same shape in different generated modules, so the
//! adapter is written once and stamped out per version.

/// The selection adapter over the bindings of WIT version `$version`.
macro_rules! adapter {
    ($version:ident) => {
        mod $version {
            use sluice_policy::{JobRequest, NodeTable, PlaceMode, Placement, Power};

            use crate::backend::SelectionBackend;
            use crate::error::Fault;
            use crate::wasm::bindings::$version::selection::{
                SelectionPolicy, SelectionPolicyPre, exports::sluice::policy::selection as w,
            };
            use crate::wasm::instance::{WasmInstance, impl_world};

            impl_world!(SelectionPolicy, SelectionPolicyPre);

            fn placement_param(p: &Placement) -> w::PlacementParam<'_> {
                w::PlacementParam {
                    nodes: &p.nodes,
                    cpus: &p.cpus,
                    memory_mb: &p.memory_mb,
                    gres: &p.gres,
                }
            }

            impl SelectionBackend for WasmInstance<SelectionPolicy> {
                fn begin_pass(&mut self, t: &NodeTable) -> Result<(), Fault> {
                    let power: Vec<w::Power> = t
                        .power
                        .iter()
                        .map(|p| match p {
                            Power::Up => w::Power::Up,
                            Power::PoweringUp => w::Power::PoweringUp,
                            Power::PoweredDown => w::Power::PoweredDown,
                        })
                        .collect();
                    let kinds: Vec<&str> = t.gres_kinds.iter().map(String::as_str).collect();
                    let table = w::NodeTable {
                        cpus: &t.cpus,
                        free_cpus: &t.free_cpus,
                        memory_mb: &t.memory_mb,
                        free_memory_mb: &t.free_memory_mb,
                        weight: &t.weight,
                        power: &power,
                        gres_kinds: &kinds,
                        gres_total: &t.gres_total,
                        gres_free: &t.gres_free,
                    };
                    self.call(|b, s| b.sluice_policy_selection().call_begin_pass(s, table))
                }

                fn place(
                    &mut self,
                    r: &JobRequest,
                    mode: PlaceMode,
                ) -> Result<Option<Placement>, Fault> {
                    let req = w::JobRequest {
                        job_id: r.job_id,
                        min_nodes: r.min_nodes,
                        max_nodes: r.max_nodes,
                        tasks: r.tasks,
                        cpus_per_task: r.cpus_per_task,
                        memory_per_node_mb: r.memory_per_node_mb,
                        gres_per_node: &r.gres_per_node,
                        exclusive: r.exclusive,
                        candidates: &r.candidates,
                    };
                    let mode = match mode {
                        PlaceMode::Allocate => w::Mode::Allocate,
                        PlaceMode::Test => w::Mode::Test,
                    };
                    let out =
                        self.call(|b, s| b.sluice_policy_selection().call_place(s, req, mode))?;
                    Ok(out.map(|p| Placement {
                        nodes: p.nodes,
                        cpus: p.cpus,
                        memory_mb: p.memory_mb,
                        gres: p.gres,
                    }))
                }

                fn release(&mut self, job_id: u32, p: &Placement) -> Result<(), Fault> {
                    self.call(|b, s| {
                        b.sluice_policy_selection()
                            .call_release(s, job_id, placement_param(p))
                    })
                }
            }
        }
    };
}

adapter!(v0_1);
adapter!(v0_2);
