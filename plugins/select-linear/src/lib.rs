//! select/linear: whole nodes only, best fit over consecutive nodes.
//!
//! Every allocated node is idle and the job gets all its CPUs, memory and GRES, as Slurm's
//! select/linear does. Nodes are ordered and chosen exactly as by select/cons_tres (power state,
//! Weight, consecutive-block best fit); the search is that plugin's source file, included here
//! so both plugins always agree and neither carries a copy.

#[path = "../../select-cons-tres/src/consec.rs"]
mod consec;
#[path = "../../select-cons-tres/src/free_maps.rs"]
mod free_maps;

use consec::{Need, Search, Tiers, per_node_slots};
use free_maps::{FreeMaps, and_word};
use sluice_sdk::*;

/// The linear selection policy: the pass's node table and what has been placed on it.
#[derive(Debug, Default)]
pub struct Linear {
    table: NodeTable,
    tiers: Tiers,
    maps: FreeMaps,
    search: Search,
}

impl FromSettings for Linear {
    fn from_settings(_: &Settings) -> Self {
        Linear::default()
    }
}

impl SelectionPolicy for Linear {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        self.table.clone_from(nodes);
        self.tiers.refresh(nodes);
        self.maps.reset(nodes);
    }

    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        let Self {
            table,
            tiers,
            maps,
            search,
        } = self;
        let open = |w| and_word(&req.candidates, &maps.idle, w);
        let slots = |n: u32| whole_node_slots(table, req, n);
        let need = Need::of(req)?;
        if !search.best_fit(tiers, open, slots, need) {
            return None;
        }
        let kinds = table.gres_kinds.len();
        let mut p = Placement::default();
        for &(n, _) in &search.chosen {
            let i = n as usize;
            p.nodes.push(n);
            p.cpus.push(table.cpus[i]);
            p.memory_mb.push(table.memory_mb[i]);
            p.gres
                .extend_from_slice(&table.gres_free[i * kinds..(i + 1) * kinds]);
        }
        if mode == PlaceMode::Allocate {
            table.commit(&p);
            p.nodes.iter().for_each(|&n| maps.refresh(table, n));
        }
        Some(p)
    }

    fn release(&mut self, _job_id: u32, placement: &Placement) {
        self.table.release(placement);
        for &n in placement
            .nodes
            .iter()
            .filter(|&&n| (n as usize) < self.table.len())
        {
            self.maps.refresh(&self.table, n);
        }
    }
}

/// Tasks an idle node can run for the job (its `--ntasks-per-node` if it gives one), 0 if its
/// memory, GRES or CPUs are too small.
fn whole_node_slots(table: &NodeTable, req: &JobRequest, n: u32) -> u32 {
    let i = n as usize;
    let kinds = table.gres_kinds.len();
    let gres_fit = req.gres_per_node.iter().all(|&(kind, count)| {
        count == 0
            || ((kind as usize) < kinds && table.gres_free[i * kinds + kind as usize] >= count)
    });
    if !gres_fit || table.memory_mb[i] < req.memory_per_node_mb {
        return 0;
    }
    per_node_slots(table.cpus[i] / req.cpus_per_task.max(1), req.tasks_per_node)
}

#[cfg(feature = "export")]
export_selection!(Linear);
