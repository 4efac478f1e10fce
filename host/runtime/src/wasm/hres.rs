//! The HRES world over a component instance.

use sluice_policy::{Charge, Demand, HresLayer, HresMode, HresResource};

use crate::backend::HresBackend;
use crate::error::Fault;
use crate::wasm::bindings::hres::{HresPolicy, HresPolicyPre, exports::sluice::policy::hres as w};
use crate::wasm::instance::{WasmInstance, impl_world};

impl_world!(HresPolicy, HresPolicyPre);

fn demands(d: &[Demand]) -> Vec<w::Demand> {
    d.iter()
        .map(|d| w::Demand {
            resource: d.resource,
            count: d.count,
        })
        .collect()
}

impl HresBackend for WasmInstance<HresPolicy> {
    fn begin_pass(
        &mut self,
        resources: &[HresResource],
        layers: &[HresLayer],
    ) -> Result<(), Fault> {
        let variables: Vec<Vec<(&str, i64)>> = resources
            .iter()
            .map(|r| r.variables.iter().map(|(n, v)| (n.as_str(), *v)).collect())
            .collect();
        let rs: Vec<w::Resource<'_>> = resources
            .iter()
            .zip(&variables)
            .map(|(r, variables)| w::Resource {
                name: &r.name,
                mode: match r.mode {
                    HresMode::Mode1 => w::Mode::Mode1,
                    HresMode::Mode2 => w::Mode::Mode2,
                    HresMode::Mode3 => w::Mode::Mode3,
                },
                variables,
            })
            .collect();
        let ls: Vec<w::Layer<'_>> = layers
            .iter()
            .map(|l| w::Layer {
                resource: l.resource,
                count: l.count,
                base: l.base,
                used: l.used,
                nodes: &l.nodes,
                parent: l.parent,
            })
            .collect();
        self.call(|b, s| b.sluice_policy_hres().call_begin_pass(s, &rs, &ls))
    }

    fn eligible(&mut self, d: &[Demand], candidates: &[u64]) -> Result<Vec<u64>, Fault> {
        let d = demands(d);
        self.call(|b, s| b.sluice_policy_hres().call_eligible(s, &d, candidates))
    }

    fn charge(
        &mut self,
        d: &[Demand],
        nodes: &[u32],
    ) -> Result<Result<Vec<Charge>, String>, Fault> {
        let d = demands(d);
        let out = self.call(|b, s| b.sluice_policy_hres().call_charge(s, &d, nodes))?;
        Ok(out.map(|cs| {
            cs.into_iter()
                .map(|c| Charge {
                    layer: c.layer,
                    amount: c.amount,
                })
                .collect()
        }))
    }
}
