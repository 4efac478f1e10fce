//! HRES mode logic: MODE_1, MODE_2 and MODE_3 of resources.yaml, as Slurm 25.11 plans them.
//!
//! * `eligible`: MODE_1 admits the nodes of any layer that can give the count; MODE_2 admits only
//!   nodes all of whose layers can; MODE_3 admits nodes in a leaf whose whole path can give the
//!   per-node count. Zero-count layers never admit (MODE_1) or block their nodes (MODE_2); infinite
//!   layers always admit (MODE_1) or are no-ops (MODE_2, MODE_3).
//! * `charge`: MODE_1 charges the count once, to the first sufficient layer over the job's nodes
//!   in the order of the `mode1_order` setting; MODE_2 charges it to every layer over the job's
//!   nodes; MODE_3 charges count × (job nodes in the layer) to every layer, refused if any finite
//!   layer would go past count - base - used.
//! * Several demands on one resource are summed; zero counts are dropped; negative counts and
//!   unknown resources are refused.
//! * Charges made in a pass are added to this plugin's copy of `used`, so later jobs of the same
//!   pass see them before the host's next `begin_pass`.

pub mod layout;
pub mod modes;

use layout::{Layout, Mode1Order};
use sluice_sdk::*;

/// The HRES mode policy: the pass's resources and layers, plus what it charged since.
#[derive(Debug, Default)]
pub struct HresModes {
    order: Mode1Order,
    resources: Vec<HresResource>,
    layers: Vec<HresLayer>,
    layout: Layout,
}

impl FromSettings for HresModes {
    /// `mode1_order = "narrowest"` (default) or `"count"` (Slurm 25.05's count-descending order).
    fn from_settings(settings: &Settings) -> Self {
        let order = match settings.text("mode1_order") {
            Some("count") => Mode1Order::Count,
            _ => Mode1Order::Narrowest,
        };
        HresModes {
            order,
            ..Default::default()
        }
    }
}

impl HresPolicy for HresModes {
    fn begin_pass(&mut self, resources: &[HresResource], layers: &[HresLayer]) {
        self.resources = resources.to_vec();
        self.layers = layers.to_vec();
        self.layout = Layout::new(resources, layers, self.order);
    }

    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Vec<u64> {
        let mut out = candidates.to_vec();
        let Ok(merged) = modes::merge(demands, &self.resources) else {
            return vec![0; candidates.len()];
        };
        for (r, count) in merged {
            let mode = self.resources[r as usize].mode;
            let mask = modes::allowed(r, count, mode, &self.layers, &self.layout);
            for (i, word) in out.iter_mut().enumerate() {
                *word &= mask.get(i).copied().unwrap_or(0);
            }
        }
        out
    }

    fn charge(&mut self, demands: &[Demand], nodes: &[u32]) -> Result<Vec<Charge>, String> {
        let mut all = Vec::new();
        for (r, count) in modes::merge(demands, &self.resources)? {
            let resource = &self.resources[r as usize];
            all.extend(modes::charges(
                r,
                count,
                resource,
                nodes,
                &self.layers,
                &self.layout,
            )?);
        }
        for c in &all {
            let used = &mut self.layers[c.layer as usize].used;
            *used = used.saturating_add(c.amount);
        }
        Ok(all)
    }
}

#[cfg(feature = "export")]
export_hres!(HresModes);
