//! The GRES world over a component instance.

use sluice_policy::{Device, GresNodeConfig, NodeDevices, PickRequest};
use wasmtime::Store;
use wasmtime::component::{Component, HasSelf, Linker};

use super::bindings::gres::{GresPolicy, GresPolicyPre, exports::sluice::policy::gres as w};
use super::instance::{HostState, WasmInstance, World};
use crate::backend::GresBackend;
use crate::error::Fault;

impl World for GresPolicy {
    type Pre = GresPolicyPre<HostState>;
    fn pre(linker: &mut Linker<HostState>, component: &Component) -> wasmtime::Result<Self::Pre> {
        GresPolicy::add_to_linker::<_, HasSelf<_>>(linker, |s| s)?;
        linker.define_unknown_imports_as_traps(component)?;
        GresPolicyPre::new(linker.instantiate_pre(component)?)
    }
    fn instantiate(pre: &Self::Pre, store: &mut Store<HostState>) -> wasmtime::Result<Self> {
        pre.instantiate(store)
    }
}

fn devices(ds: &[Device]) -> Vec<w::Device<'_>> {
    ds.iter()
        .map(|d| w::Device {
            index: d.index,
            type_name: &d.type_name,
            file: &d.file,
            cores: &d.cores,
            links: &d.links,
        })
        .collect()
}

impl GresBackend for WasmInstance<GresPolicy> {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Result<Vec<Result<(), String>>, Fault> {
        let devs: Vec<Vec<w::Device<'_>>> = nodes.iter().map(|n| devices(&n.devices)).collect();
        let configs: Vec<w::NodeConfig<'_>> = nodes
            .iter()
            .zip(&devs)
            .map(|(n, d)| w::NodeConfig {
                node: &n.node,
                count: n.count,
                devices: d,
            })
            .collect();
        self.call(|b, s| b.sluice_policy_gres().call_validate(s, &configs))
    }

    fn pick(&mut self, requests: &[PickRequest]) -> Result<Vec<Vec<u32>>, Fault> {
        let devs: Vec<Vec<w::Device<'_>>> = requests.iter().map(|r| devices(&r.devices)).collect();
        let reqs: Vec<w::PickRequest<'_>> = requests
            .iter()
            .zip(&devs)
            .map(|(r, d)| w::PickRequest {
                node_position: r.node_position,
                count: r.count,
                type_name: &r.type_name,
                free: &r.free,
                cores: &r.cores,
                devices: d,
            })
            .collect();
        self.call(|b, s| b.sluice_policy_gres().call_pick(s, &reqs))
    }

    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Result<Vec<(String, String)>, Fault> {
        let configured = devices(&alloc.configured);
        let a = w::NodeDevices {
            node_position: alloc.node_position,
            devices: &alloc.devices,
            configured: &configured,
        };
        self.call(|b, s| b.sluice_policy_gres().call_env(s, a, step))
    }
}
