//! select/linear: whole nodes only, best fit over consecutive nodes.
//!
//! Every allocated node is idle and the job gets all its CPUs, memory and GRES, as Slurm's
//! select/linear does. Nodes are ordered and chosen exactly as by select/cons_tres (power state,
//! Weight, consecutive-block best fit); the search is that plugin's source file, included here
//! so both plugins always agree and neither carries a copy. Under `OverSubscribe=FORCE:N` a
//! job that shares takes a whole sharing row of each node instead (all its CPUs, the memory and
//! GRES asked), so up to N such jobs share a node, as Slurm's linear does with `FORCE`.

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
        let rows = req.share_rows.min(table.share_rows);
        let busy_ok = if rows > 0 { &maps.open } else { &maps.idle };
        let open = |w| and_word(&req.candidates, busy_ok, w);
        let need = Need::of(req)?;
        // A job that shares takes whole rows, tried in order over every node (row 0 first:
        // nodes no job holds), as linear does under FORCE.
        let row = match rows {
            0 => {
                let slots = |n: u32| whole_node_slots(table, req, n, None);
                search.best_fit(tiers, open, slots, need).then_some(None)?
            }
            rows => (0..rows).find_map(|r| {
                let slots = |n: u32| whole_node_slots(table, req, n, Some(r));
                search.best_fit(tiers, open, slots, need).then_some(Some(r))
            })?,
        };
        let kinds = table.gres_kinds.len();
        let mut p = Placement::default();
        for &(n, _) in &search.chosen {
            let i = n as usize;
            p.nodes.push(n);
            p.cpus.push(table.cpus[i]);
            if let Some(row) = row {
                // A whole row of the node: all its CPUs, the memory and GRES asked.
                p.rows.push(row);
                p.memory_mb.push(req.memory_per_node_mb);
                let asked = |k: usize| {
                    req.gres_per_node
                        .iter()
                        .filter(|&&(kind, _)| kind as usize == k)
                        .map(|&(_, c)| c)
                        .sum::<u32>()
                };
                p.gres.extend((0..kinds).map(asked));
            } else {
                p.memory_mb.push(table.memory_mb[i]);
                p.gres
                    .extend_from_slice(&table.gres_free[i * kinds..(i + 1) * kinds]);
            }
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

/// Tasks an idle node (or, for a job that shares, an empty sharing row `row` of it) can run
/// for the job (its `--ntasks-per-node` if it gives one), 0 if its memory, GRES or CPUs are
/// too small.
fn whole_node_slots(table: &NodeTable, req: &JobRequest, n: u32, row: Option<u32>) -> u32 {
    let i = n as usize;
    let kinds = table.gres_kinds.len();
    let gres_fit = req.gres_per_node.iter().all(|&(kind, count)| {
        count == 0
            || ((kind as usize) < kinds && table.gres_free[i * kinds + kind as usize] >= count)
    });
    if !gres_fit || table.memory_mb[i] < req.memory_per_node_mb {
        return 0;
    }
    if let Some(r) = row {
        // A job that shares takes a whole row, beside the others' memory.
        let row_whole = table.rows_free(i)[r as usize] == table.cpus[i];
        if !row_whole || table.free_memory_mb[i] < req.memory_per_node_mb {
            return 0;
        }
    }
    per_node_slots(table.cpus[i] / req.cpus_per_task.max(1), req.tasks_per_node)
}

#[cfg(feature = "export")]
export_selection!(Linear);
