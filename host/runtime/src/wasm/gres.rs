//! The GRES world over a component instance.

use sluice_policy::{Device, GresNodeConfig, NodeDevices, PickRequest};

use crate::backend::GresBackend;
use crate::error::Fault;
use crate::wasm::bindings::gres::{GresPolicy, GresPolicyPre, exports::sluice::policy::gres as w};
use crate::wasm::instance::{WasmInstance, impl_world};

impl_world!(GresPolicy, GresPolicyPre);

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
                cores: n.cores,
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
