//! select/cons_tres: per-node CPUs, memory and GRES, best fit over consecutive nodes.
//!
//! Among a job's candidates, nodes are tried by power state (up, powering up, powered down),
//! then Weight, then Slurm's consecutive-block best fit (see [`consec`]). A node can take the job
//! if it has the memory per node, the GRES per node and room for at least one task
//! (cpus-per-task CPUs); an exclusive job needs an idle node and gets all its CPUs, memory and
//! free GRES. Tasks are spread one per chosen node first, then packed in ascending node order
//! (block distribution), and each node gets tasks × cpus-per-task CPUs. With `--ntasks-per-node`
//! a node must hold that many tasks and gets exactly their CPUs, as Slurm's cons_tres does.
//! A job that may share CPUs (`OverSubscribe`) is placed in the first sharing row where it
//! fits, every node counting that row's free CPUs, as cons_tres tries a partition's rows.

pub mod consec;
pub mod free_maps;

use consec::{Need, Search, Tiers, per_node_slots};
use free_maps::{FreeMaps, and_word};
use sluice_sdk::*;

/// The cons_tres selection policy: the pass's node table and what has been placed on it.
#[derive(Debug, Default)]
pub struct ConsTres {
    table: NodeTable,
    tiers: Tiers,
    maps: FreeMaps,
    search: Search,
    /// GRES needed per node by the current request, by kind (reused between calls).
    gres_need: Vec<u32>,
}

impl FromSettings for ConsTres {
    fn from_settings(_: &Settings) -> Self {
        ConsTres::default()
    }
}

impl SelectionPolicy for ConsTres {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        self.table.clone_from(nodes);
        self.tiers.refresh(nodes);
        self.maps.reset(nodes);
        self.gres_need = vec![0; nodes.gres_kinds.len()];
    }

    /// Takes only the changed nodes' rows when no power state changed (the tiers are then as
    /// they were; what its own placements and releases changed, this table already holds);
    /// otherwise the whole table.
    fn begin_pass_changed(&mut self, nodes: &NodeTable, changed: &[u32]) {
        let table = &self.table;
        let in_step = table.len() == nodes.len()
            && table.gres_kinds.len() == nodes.gres_kinds.len()
            && changed.iter().all(|&n| {
                let i = n as usize;
                i < table.len() && table.power[i] == nodes.power[i]
            });
        if !in_step {
            return self.begin_pass(nodes);
        }
        for &n in changed {
            self.table.copy_free_from(nodes, n as usize);
            self.maps.refresh(&self.table, n);
        }
    }

    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        let need = Need::of(req)?;
        if !self.load_gres_need(req) {
            return None;
        }
        let cpt = req.cpus_per_task.max(1);
        let Self {
            table,
            tiers,
            maps,
            search,
            gres_need,
        } = self;
        let busy_ok = if req.exclusive {
            &maps.idle
        } else {
            &maps.open
        };
        let open = |w| and_word(&req.candidates, busy_ok, w);
        // A job that may share CPUs tries its rows in order, each over every node, as
        // cons_tres tries a partition's rows: row 0 holds the jobs that share nothing yet.
        let rows = req.share_rows.min(table.share_rows);
        let row = match rows {
            0 => {
                let slots = |n: u32| node_slots(table, gres_need, req, cpt, n, None);
                search.best_fit(tiers, open, slots, need).then_some(None)?
            }
            rows => (0..rows).find_map(|r| {
                let slots = |n: u32| node_slots(table, gres_need, req, cpt, n, Some(r));
                search.best_fit(tiers, open, slots, need).then_some(Some(r))
            })?,
        };
        let placement = self.build(req, cpt, row);
        if mode == PlaceMode::Allocate {
            self.table.commit(&placement);
            for &n in &placement.nodes {
                self.maps.refresh(&self.table, n);
            }
        }
        Some(placement)
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

/// Task slots node `n` offers the job: 0 unless memory and GRES fit and one task fits (its
/// `--ntasks-per-node` tasks, when it gives one: then exactly those), counting the CPUs free
/// in sharing row `row` for a job that shares them.
#[inline(always)]
fn node_slots(
    table: &NodeTable,
    gres_need: &[u32],
    req: &JobRequest,
    cpt: u32,
    n: u32,
    row: Option<u32>,
) -> u32 {
    let i = n as usize;
    if table.free_memory_mb[i] < req.memory_per_node_mb {
        return 0;
    }
    let kinds = gres_need.len();
    let free = &table.gres_free[i * kinds..(i + 1) * kinds];
    if gres_need.iter().zip(free).any(|(need, free)| need > free) {
        return 0;
    }
    let cpus = match row {
        _ if req.exclusive => table.cpus[i],
        None => table.free_cpus[i],
        Some(r) => table.rows_free(i)[r as usize],
    };
    per_node_slots(cpus / cpt, req.tasks_per_node)
}

impl ConsTres {
    /// Sums the request's GRES per kind; false if it names a kind the cluster does not have.
    fn load_gres_need(&mut self, req: &JobRequest) -> bool {
        self.gres_need.iter_mut().for_each(|g| *g = 0);
        for &(kind, count) in &req.gres_per_node {
            match self.gres_need.get_mut(kind as usize) {
                Some(g) => *g = g.saturating_add(count),
                None if count == 0 => {}
                None => return false,
            }
        }
        true
    }

    /// Turns the search's chosen nodes into a placement, distributing the tasks.
    fn build(&self, req: &JobRequest, cpt: u32, row: Option<u32>) -> Placement {
        let chosen = &self.search.chosen;
        let kinds = self.gres_need.len();
        let mut p = Placement {
            nodes: Vec::with_capacity(chosen.len()),
            cpus: Vec::with_capacity(chosen.len()),
            memory_mb: Vec::with_capacity(chosen.len()),
            gres: Vec::with_capacity(chosen.len() * kinds),
            rows: row.map_or_else(Vec::new, |r| vec![r; chosen.len()]),
        };
        // With --ntasks-per-node every node runs that many tasks (Slurm's cons_tres: exactly
        // ntasks-per-node × cpus-per-task CPUs each, whatever -n leaves for the last node).
        let per_node = req.tasks_per_node.saturating_mul(cpt);
        // Otherwise every node runs at least one task; the rest fill nodes in ascending order.
        let mut extra = (req.tasks as u64).saturating_sub(chosen.len() as u64);
        for &(n, slots) in chosen {
            let i = n as usize;
            let more = extra.min(slots as u64 - 1);
            extra -= more;
            let cpus = if req.exclusive {
                self.table.cpus[i]
            } else if per_node > 0 {
                per_node
            } else {
                (1 + more as u32) * cpt
            };
            p.nodes.push(n);
            p.cpus.push(cpus);
            if req.exclusive {
                p.memory_mb.push(self.table.memory_mb[i]);
                p.gres
                    .extend_from_slice(&self.table.gres_free[i * kinds..(i + 1) * kinds]);
            } else {
                p.memory_mb.push(req.memory_per_node_mb);
                p.gres.extend_from_slice(&self.gres_need);
            }
        }
        p
    }
}

#[cfg(feature = "export")]
export_selection!(ConsTres);
