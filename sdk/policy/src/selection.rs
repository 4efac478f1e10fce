//! Node selection: a node table once per pass, then one placement per job.

use serde::{Deserialize, Serialize};

use crate::contract::ContractError;

/// Power state of a node, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Power {
    /// Powered up and ready.
    Up,
    /// Resuming.
    PoweringUp,
    /// Powered down or not yet allocated (CLOUD).
    PoweredDown,
}

/// The nodes as columns; node index `n` is the position in every column.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeTable {
    /// CPUs configured.
    pub cpus: Vec<u32>,
    /// CPUs free.
    pub free_cpus: Vec<u32>,
    /// RealMemory in MB.
    pub memory_mb: Vec<u64>,
    /// Free memory in MB.
    pub free_memory_mb: Vec<u64>,
    /// Weight; lower is preferred.
    pub weight: Vec<u32>,
    /// Power state.
    pub power: Vec<Power>,
    /// GRES kinds known to the cluster.
    pub gres_kinds: Vec<String>,
    /// Configured GRES, row-major by node then kind.
    pub gres_total: Vec<u32>,
    /// Free GRES, row-major by node then kind.
    pub gres_free: Vec<u32>,
    /// Rows of CPU sharing (Slurm's `OverSubscribe=FORCE:N`/`YES:N` rows): the largest `N` of
    /// any partition, 0 when no partition shares CPUs.
    #[serde(default)]
    pub share_rows: u32,
    /// Free CPUs of each sharing row, row-major by node then row: CPUs that no job holding
    /// CPUs alone and no job of that row holds. `free_cpus` is the least of a node's rows.
    #[serde(default)]
    pub row_free_cpus: Vec<u32>,
}

// By hand for `clone_from`: a selection policy copies the table at every pass, and reusing
// its columns spares an allocation per column (dear inside a WebAssembly guest).
impl Clone for NodeTable {
    fn clone(&self) -> Self {
        Self {
            cpus: self.cpus.clone(),
            free_cpus: self.free_cpus.clone(),
            memory_mb: self.memory_mb.clone(),
            free_memory_mb: self.free_memory_mb.clone(),
            weight: self.weight.clone(),
            power: self.power.clone(),
            gres_kinds: self.gres_kinds.clone(),
            gres_total: self.gres_total.clone(),
            gres_free: self.gres_free.clone(),
            share_rows: self.share_rows,
            row_free_cpus: self.row_free_cpus.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.cpus.clone_from(&source.cpus);
        self.free_cpus.clone_from(&source.free_cpus);
        self.memory_mb.clone_from(&source.memory_mb);
        self.free_memory_mb.clone_from(&source.free_memory_mb);
        self.weight.clone_from(&source.weight);
        self.power.clone_from(&source.power);
        self.gres_kinds.clone_from(&source.gres_kinds);
        self.gres_total.clone_from(&source.gres_total);
        self.gres_free.clone_from(&source.gres_free);
        self.share_rows = source.share_rows;
        self.row_free_cpus.clone_from(&source.row_free_cpus);
    }
}

impl NodeTable {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }

    /// Free GRES of `kind` on node `n`.
    pub fn gres_free_at(&self, n: u32, kind: u32) -> u32 {
        self.gres_free[n as usize * self.gres_kinds.len() + kind as usize]
    }

    /// Checks that the columns agree in length.
    pub fn check(&self) -> Result<(), ContractError> {
        let n = self.len();
        for (what, len) in [
            ("free cpus column", self.free_cpus.len()),
            ("memory column", self.memory_mb.len()),
            ("free memory column", self.free_memory_mb.len()),
            ("weight column", self.weight.len()),
            ("power column", self.power.len()),
        ] {
            ContractError::check_length(what, n, len)?;
        }
        let g = n * self.gres_kinds.len();
        ContractError::check_length("gres total", g, self.gres_total.len())?;
        ContractError::check_length("gres free", g, self.gres_free.len())?;
        let rows = n * self.share_rows as usize;
        ContractError::check_length("row free cpus", rows, self.row_free_cpus.len())
    }

    /// Free CPUs of node `n`'s sharing rows (empty when no partition shares CPUs).
    pub fn rows_free(&self, n: usize) -> &[u32] {
        let r = self.share_rows as usize;
        self.row_free_cpus.get(n * r..(n + 1) * r).unwrap_or(&[])
    }

    /// The most CPUs of node `n` a job that may share CPUs with `share_rows` rows can take
    /// in one row; `None` when it shares nothing (or the table has no rows).
    pub fn most_row_free(&self, n: usize, share_rows: u32) -> Option<u32> {
        let open = share_rows.min(self.share_rows) as usize;
        self.rows_free(n).get(..open)?.iter().copied().max()
    }

    /// The row a job that shares CPUs takes for `cpus` CPUs on node `n`: the lowest of its
    /// `share_rows` rows with that many free, as cons_tres puts a job in the first partition
    /// row it fits. Row 0 thus fills with CPUs no other job holds before any CPU is shared.
    pub fn row_for(&self, n: usize, share_rows: u32, cpus: u32) -> Option<u32> {
        let open = share_rows.min(self.share_rows) as usize;
        let rows = self.rows_free(n).get(..open)?;
        rows.iter().position(|&free| free >= cpus).map(|r| r as u32)
    }

    /// CPUs of node `n` a job may take: in its best row when it may share CPUs with
    /// `share_rows` rows ([`NodeTable::most_row_free`]), else those no job holds.
    #[inline]
    pub fn free_cpus_for(&self, n: usize, share_rows: u32) -> u32 {
        // The common table has no rows: one read, as before rows existed.
        if share_rows == 0 || self.share_rows == 0 {
            return self.free_cpus[n];
        }
        match self.most_row_free(n, share_rows) {
            Some(free) => free,
            None => self.free_cpus[n],
        }
    }

    /// Whether node `n` has a CPU free to some job: one no job holds, or one free in a row.
    #[inline]
    pub fn has_free_cpu(&self, n: usize) -> bool {
        self.free_cpus[n] > 0 || self.rows_free(n).iter().any(|&f| f > 0)
    }

    /// Subtracts a placement from the free columns. The placement must have been checked.
    pub fn commit(&mut self, p: &Placement) {
        let kinds = self.gres_kinds.len();
        // Zipped, and GRES rows as slices, like `check_fits`: a commit follows every start.
        for (i, ((&n, &cpus), &memory)) in p.nodes.iter().zip(&p.cpus).zip(&p.memory_mb).enumerate()
        {
            let n = n as usize;
            if self.share_rows == 0 {
                self.free_cpus[n] -= cpus;
            } else {
                self.take_cpus(n, p.rows.get(i).copied(), cpus);
            }
            self.free_memory_mb[n] -= memory;
            if kinds > 0 {
                let taken = &p.gres[i * kinds..(i + 1) * kinds];
                for (free, &t) in self.gres_free[n * kinds..(n + 1) * kinds]
                    .iter_mut()
                    .zip(taken)
                {
                    *free -= t;
                }
            }
        }
    }

    /// Takes `cpus` of node `n`'s CPUs: in `row` for a job that shares them, else from every
    /// row (a job holding CPUs alone); the CPUs no job holds are then the least of the rows.
    /// Only for a table with sharing rows.
    fn take_cpus(&mut self, n: usize, row: Option<u32>, cpus: u32) {
        let r = self.share_rows as usize;
        let rows = &mut self.row_free_cpus[n * r..(n + 1) * r];
        match row {
            Some(row) => rows[row as usize] = rows[row as usize].saturating_sub(cpus),
            None => rows.iter_mut().for_each(|f| *f = f.saturating_sub(cpus)),
        }
        self.free_cpus[n] = rows.iter().copied().min().unwrap_or(0);
    }

    /// Gives `cpus` of node `n`'s CPUs back to `row` (or to every row), never above what is
    /// configured; the inverse of [`NodeTable::take_cpus`].
    fn give_cpus(&mut self, n: usize, row: Option<u32>, cpus: u32) {
        let (r, total) = (self.share_rows as usize, self.cpus[n]);
        let rows = &mut self.row_free_cpus[n * r..(n + 1) * r];
        let back = |f: &mut u32| *f = (*f + cpus).min(total);
        match row.and_then(|row| rows.get_mut(row as usize)) {
            Some(f) => back(f),
            None => rows.iter_mut().for_each(back),
        }
        self.free_cpus[n] = rows.iter().copied().min().unwrap_or(0);
    }

    /// Adds a placement back to the free columns, never above what is configured.
    pub fn release(&mut self, p: &Placement) {
        let kinds = self.gres_kinds.len();
        for (i, &n) in p.nodes.iter().enumerate() {
            let n = n as usize;
            if n >= self.len() {
                continue;
            }
            let cpus = p.cpus.get(i).copied().unwrap_or(0);
            if self.share_rows == 0 {
                self.free_cpus[n] = (self.free_cpus[n] + cpus).min(self.cpus[n]);
            } else {
                self.give_cpus(n, p.rows.get(i).copied(), cpus);
            }
            self.free_memory_mb[n] = (self.free_memory_mb[n]
                + p.memory_mb.get(i).copied().unwrap_or(0))
            .min(self.memory_mb[n]);
            for k in 0..kinds {
                let slot = n * kinds + k;
                let back = p.gres.get(i * kinds + k).copied().unwrap_or(0);
                self.gres_free[slot] = (self.gres_free[slot] + back).min(self.gres_total[slot]);
            }
        }
    }

    /// Whether some placement could pass [`NodeTable::check_placement`] for `req`: at least
    /// [`JobRequest::fewest_nodes`] candidates with a free CPU (and the per-node count's CPUs,
    /// if any) and the memory and GRES asked free (all of the node when exclusive), holding
    /// enough free CPUs between them. A host asks the policy only then,
    /// so a job that cannot fit costs no call across the boundary.
    pub fn could_fit(&self, req: &JobRequest) -> bool {
        self.could_fit_reading(req, |w| req.candidates[w])
    }

    /// [`NodeTable::could_fit`], reading only the candidates in `open`, which must hold every
    /// node with a free CPU, in a sharing row or not ([`NodeTable::has_free_cpu`]; the others
    /// cannot take a share, so the answer is the same).
    pub fn could_fit_among(&self, req: &JobRequest, open: &[u64]) -> bool {
        self.could_fit_reading(req, |w| {
            req.candidates[w] & open.get(w).copied().unwrap_or(0)
        })
    }

    /// [`NodeTable::could_fit`] over the candidates word `w` of `word` gives.
    fn could_fit_reading(&self, req: &JobRequest, word: impl Fn(usize) -> u64) -> bool {
        let kinds = self.gres_kinds.len();
        let min_nodes = req.fewest_nodes();
        let needed = req.total_cpus();
        // A node short of a per-node count's CPUs cannot be chosen (0 without one: any will do).
        let per_node = req.cpus_per_node();
        let (mut nodes, mut cpus) = (0u32, 0u64);
        // A job that may share CPUs reads its best row's free CPUs (a sharing job is never
        // exclusive: the host gives an exclusive job no rows).
        let shares = req.share_rows > 0 && self.share_rows > 0;
        // Each column cut to the node count, so that one comparison bounds every read below.
        let len = self.len();
        let (free_cpus, free_memory) = (&self.free_cpus[..len], &self.free_memory_mb[..len]);
        let (all_cpus, all_memory) = (&self.cpus[..len], &self.memory_mb[..len]);
        for n in crate::bitmap::nodes_of_words(0, (0..req.candidates.len()).map(word)) {
            let i = n as usize;
            if i >= len {
                break;
            }
            let free = if shares {
                self.free_cpus_for(i, req.share_rows)
            } else {
                free_cpus[i]
            };
            if free == 0 {
                // Most candidates of a busy machine: decided before reading anything else.
                continue;
            }
            let free_mem = free_memory[i];
            let whole = free_cpus[i] == all_cpus[i] && free_mem == all_memory[i];
            let gres_ok = req.gres_per_node.iter().all(|&(k, c)| {
                self.gres_free
                    .get(i * kinds + k as usize)
                    .is_some_and(|&f| f >= c)
            });
            if free_mem >= req.memory_per_node_mb
                && (whole || !req.exclusive)
                && u64::from(free) >= per_node
                && gres_ok
            {
                nodes += 1;
                cpus += u64::from(free);
                if nodes >= min_nodes && cpus >= needed {
                    return true;
                }
            }
        }
        false
    }

    /// Checks `p` against every rule of `selection.place` for `req`, on this table's free state:
    /// the rules of any placement on this table ([`NodeTable::check_fits`]), then the job's.
    pub fn check_placement(&self, req: &JobRequest, p: &Placement) -> Result<(), ContractError> {
        let kinds = self.gres_kinds.len();
        let k = p.nodes.len();
        if (k as u32) < req.min_nodes.max(1) || k as u32 > req.max_nodes.max(req.min_nodes).max(1) {
            return Err(ContractError::Invalid(format!(
                "placement has {k} nodes, expected {}..={}",
                req.min_nodes, req.max_nodes
            )));
        }
        self.check_fits(p)?;
        if let Some(&row) = p.rows.iter().find(|&&r| r >= req.share_rows) {
            return Err(ContractError::Invalid(match req.share_rows {
                0 => "placement shares cpus, job shares none".to_owned(),
                n => format!("placement puts the job in sharing row {row}, job may use {n}"),
            }));
        }
        if (k as u32) < req.fewest_nodes() {
            return Err(ContractError::Invalid(format!(
                "placement has {k} nodes, too few for {} tasks at {} per node",
                req.tasks, req.tasks_per_node
            )));
        }
        let per_node = req.cpus_per_node();
        let mut cpus = 0u64;
        // `check_fits` found the columns as long as the nodes, and every node in the table.
        for (i, ((&n, &node_cpus), &memory)) in
            p.nodes.iter().zip(&p.cpus).zip(&p.memory_mb).enumerate()
        {
            if !crate::bitmap::words_contain(&req.candidates, n) {
                return Err(ContractError::NotCandidate(n));
            }
            let ni = n as usize;
            if node_cpus == 0 {
                return Err(ContractError::Invalid(format!(
                    "node {n} is allocated no cpus"
                )));
            }
            if u64::from(node_cpus) < per_node {
                return Err(ContractError::Invalid(format!(
                    "node {n} gets {node_cpus} cpus, job needs {per_node} per node \
                     ({} tasks of {} cpus)",
                    req.tasks_per_node,
                    req.cpus_per_task.max(1)
                )));
            }
            if memory < req.memory_per_node_mb {
                return Err(ContractError::Invalid(format!(
                    "node {n} gets {memory} MB, job needs {} MB per node",
                    req.memory_per_node_mb
                )));
            }
            if req.exclusive && (node_cpus != self.cpus[ni] || memory != self.memory_mb[ni]) {
                return Err(ContractError::Invalid(format!(
                    "exclusive job does not get all of node {n}"
                )));
            }
            for &(kind, count) in &req.gres_per_node {
                let got = p.gres.get(i * kinds + kind as usize).copied().unwrap_or(0);
                if got < count {
                    return Err(ContractError::Invalid(format!(
                        "node {n} gets {got} of gres kind {kind}, job needs {count} per node"
                    )));
                }
            }
            cpus += node_cpus as u64;
        }
        let needed = req.total_cpus();
        if cpus < needed {
            return Err(ContractError::Invalid(format!(
                "placement has {cpus} cpus, job needs {needed}"
            )));
        }
        Ok(())
    }

    /// Checks the rules of any placement on this table, whatever the job: one CPU and memory
    /// count per node and a GRES row per node, nodes of the table in strictly ascending order,
    /// nothing above what is free.
    pub fn check_fits(&self, p: &Placement) -> Result<(), ContractError> {
        let kinds = self.gres_kinds.len();
        let k = p.nodes.len();
        ContractError::check_length("cpus per node", k, p.cpus.len())?;
        ContractError::check_length("memory per node", k, p.memory_mb.len())?;
        ContractError::check_length("gres per node", k * kinds, p.gres.len())?;
        if !p.rows.is_empty() {
            ContractError::check_length("rows per node", k, p.rows.len())?;
        }
        let mut before = None;
        // Zipped: the lengths were checked above, and a placement is checked at every start.
        for (i, ((&n, &cpus), &memory)) in p.nodes.iter().zip(&p.cpus).zip(&p.memory_mb).enumerate()
        {
            let ni = n as usize;
            if ni >= self.len() {
                return Err(ContractError::NotCandidate(n));
            }
            if before.is_some_and(|b| b >= n) {
                return Err(ContractError::Invalid(
                    "placement nodes are not strictly ascending".into(),
                ));
            }
            before = Some(n);
            let free_cpus = match p.rows.get(i) {
                Some(&row) => match self.rows_free(ni).get(row as usize) {
                    Some(&free) => free,
                    None => {
                        return Err(ContractError::Invalid(format!(
                            "node {n} has no sharing row {row}"
                        )));
                    }
                },
                None => self.free_cpus[ni],
            };
            over("cpus", n, cpus as u64, free_cpus as u64)?;
            over("memory", n, memory, self.free_memory_mb[ni])?;
            if kinds > 0 {
                let asked = &p.gres[i * kinds..(i + 1) * kinds];
                let free = &self.gres_free[ni * kinds..(ni + 1) * kinds];
                for (&a, &f) in asked.iter().zip(free) {
                    over("gres", n, a as u64, f as u64)?;
                }
            }
        }
        Ok(())
    }
}

fn over(what: &'static str, node: u32, asked: u64, free: u64) -> Result<(), ContractError> {
    if asked > free {
        Err(ContractError::Overcommit {
            what,
            node,
            asked,
            free,
        })
    } else {
        Ok(())
    }
}

/// What a job needs, with its candidate nodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobRequest {
    /// Job id.
    pub job_id: u32,
    /// Minimum nodes.
    pub min_nodes: u32,
    /// Maximum nodes.
    pub max_nodes: u32,
    /// Tasks.
    pub tasks: u32,
    /// CPUs per task.
    pub cpus_per_task: u32,
    /// Tasks on each allocated node (`--ntasks-per-node`); 0 means no per-node count.
    pub tasks_per_node: u32,
    /// Memory per allocated node, MB.
    pub memory_per_node_mb: u64,
    /// GRES per node as (kind index, count).
    pub gres_per_node: Vec<(u32, u32)>,
    /// Whole nodes only.
    pub exclusive: bool,
    /// Sharing rows the job may use (its partition's `OverSubscribe` count when it shares
    /// CPUs); 0 when it holds its CPUs alone.
    #[serde(default)]
    pub share_rows: u32,
    /// Candidate nodes, bitmap words.
    pub candidates: Vec<u64>,
}

impl JobRequest {
    /// CPUs the job needs in total.
    pub fn total_cpus(&self) -> u64 {
        self.tasks as u64 * self.cpus_per_task.max(1) as u64
    }

    /// CPUs every chosen node must give: tasks-per-node × cpus-per-task, or 0 without a
    /// per-node count (any node with a CPU to give will do).
    pub fn cpus_per_node(&self) -> u64 {
        u64::from(self.tasks_per_node) * u64::from(self.cpus_per_task.max(1))
    }

    /// The fewest nodes a placement may have: `min_nodes`, and with a per-node count enough
    /// nodes to hold the tasks at tasks-per-node each.
    pub fn fewest_nodes(&self) -> u32 {
        fewest_nodes(self.min_nodes, self.tasks, self.tasks_per_node)
    }
}

/// The fewest nodes a job of `tasks` tasks may have: `min_nodes` (at least one), and with a
/// per-node count (`tasks_per_node` > 0) enough nodes to hold the tasks at that many each.
/// The host's own view of a job uses it too, so both count the same.
pub fn fewest_nodes(min_nodes: u32, tasks: u32, tasks_per_node: u32) -> u32 {
    let min = min_nodes.max(1);
    match tasks_per_node {
        0 => min,
        per_node => min.max(tasks.div_ceil(per_node)),
    }
}

/// Whether a placement is to be committed or only tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlaceMode {
    /// Start the job: the policy subtracts it from its table.
    Allocate,
    /// Only test whether it fits.
    Test,
}

/// The chosen nodes and what the job gets on each, indexed by allocation position.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// Node indices, ascending.
    pub nodes: Vec<u32>,
    /// CPUs per chosen node.
    pub cpus: Vec<u32>,
    /// Memory per chosen node, MB.
    pub memory_mb: Vec<u64>,
    /// GRES per chosen node and kind, row-major.
    pub gres: Vec<u32>,
    /// The sharing row of each chosen node's CPUs; empty when the job holds its CPUs alone.
    #[serde(default)]
    pub rows: Vec<u32>,
}

/// A node selection policy.
pub trait SelectionPolicy {
    /// Takes the node table for a new pass. Not every pass calls it: in a component
    /// a pass whose table is the last one given, less this policy's own allocate-mode
    /// placements and plus what `release` gave back, goes straight to `place`, so the policy
    /// must keep its table current itself ([`PlaceMode::Allocate`]).
    fn begin_pass(&mut self, nodes: &NodeTable);

    /// Takes the node table for a new pass, told which nodes changed: `nodes` is the table
    /// this policy was last given, less its own allocate-mode placements and plus what
    /// `release` gave back since, with the free CPUs, free memory, GRES and power state of the
    /// nodes in `changed` (indices, perhaps repeated) set anew; nothing else differs.
    ///
    /// A component built with the SDK is called so at a `begin-pass`, which carries
    /// only the changed nodes, so that a policy can update what it keeps per node instead of
    /// rebuilding it (cons_tres's maps of free nodes). The default is [`Self::begin_pass`].
    fn begin_pass_changed(&mut self, nodes: &NodeTable, changed: &[u32]) {
        let _ = changed;
        self.begin_pass(nodes)
    }

    /// Places a job, or returns `None` if it does not fit now.
    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement>;

    /// Gives back an allocate-mode placement the host did not commit.
    fn release(&mut self, job_id: u32, placement: &Placement);
}

impl<T: SelectionPolicy + ?Sized> SelectionPolicy for Box<T> {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        (**self).begin_pass(nodes)
    }
    fn begin_pass_changed(&mut self, nodes: &NodeTable, changed: &[u32]) {
        (**self).begin_pass_changed(nodes, changed)
    }
    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        (**self).place(req, mode)
    }
    fn release(&mut self, job_id: u32, placement: &Placement) {
        (**self).release(job_id, placement)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> NodeTable {
        NodeTable {
            cpus: vec![8, 8],
            free_cpus: vec![8, 4],
            memory_mb: vec![1000, 1000],
            free_memory_mb: vec![1000, 500],
            weight: vec![1, 1],
            power: vec![Power::Up; 2],
            gres_kinds: vec!["gpu".into()],
            gres_total: vec![2, 2],
            gres_free: vec![2, 0],
            row_free_cpus: vec![],
            share_rows: 0,
        }
    }

    fn request() -> JobRequest {
        JobRequest {
            job_id: 1,
            min_nodes: 1,
            max_nodes: 1,
            tasks: 4,
            cpus_per_task: 1,
            tasks_per_node: 0,
            memory_per_node_mb: 100,
            gres_per_node: vec![(0, 1)],
            exclusive: false,
            candidates: vec![0b11],
            share_rows: 0,
        }
    }

    #[test]
    fn a_valid_placement_passes_and_commits() {
        let mut t = table();
        let p = Placement {
            nodes: vec![0],
            cpus: vec![4],
            memory_mb: vec![100],
            gres: vec![1],
            rows: vec![],
        };
        t.check_placement(&request(), &p).unwrap();
        t.commit(&p);
        assert_eq!(
            (t.free_cpus[0], t.free_memory_mb[0], t.gres_free[0]),
            (4, 900, 1)
        );
        t.release(&p);
        assert_eq!(t, table());
    }

    #[test]
    fn could_fit_refuses_what_no_placement_satisfies() {
        let t = table();
        assert!(t.could_fit(&request()));
        // Node 1 has no GPU free, so a GPU job restricted to it cannot fit.
        assert!(!t.could_fit(&JobRequest {
            candidates: vec![0b10],
            ..request()
        }));
        // 13 CPUs are more than the 12 free on both nodes together.
        assert!(!t.could_fit(&JobRequest {
            tasks: 13,
            gres_per_node: vec![],
            min_nodes: 2,
            max_nodes: 2,
            ..request()
        }));
        // Exclusive: node 1 is partly used.
        assert!(!t.could_fit(&JobRequest {
            exclusive: true,
            candidates: vec![0b10],
            gres_per_node: vec![],
            ..request()
        }));
    }

    /// A table without GRES of drawn (CPUs, free CPUs, memory, free memory) nodes, the free
    /// amounts capped at the totals.
    fn drawn_table(nodes: impl Iterator<Item = (u32, u32, u64, u64)>) -> NodeTable {
        let mut t = NodeTable::default();
        for (cpus, free_cpus, memory_mb, free_memory_mb) in nodes {
            t.cpus.push(cpus);
            t.free_cpus.push(free_cpus.min(cpus));
            t.memory_mb.push(memory_mb);
            t.free_memory_mb.push(free_memory_mb.min(memory_mb));
            t.weight.push(1);
            t.power.push(Power::Up);
        }
        t
    }

    proptest::proptest! {
        /// Any placement the contract accepts implies `could_fit`: skipping the policy when it
        /// says no never loses a start.
        #[test]
        fn could_fit_holds_whenever_a_valid_placement_exists(
            nodes in proptest::collection::vec((1u32..5, 0u32..5, 1u64..4, 0u64..4, 0u32..3), 1..7),
            pick in proptest::collection::vec(proptest::bool::ANY, 7),
            tasks_per_node in 0u32..3,
            exclusive in proptest::bool::ANY,
            extra_candidates in 0u64..128,
        ) {
            let t = NodeTable {
                gres_kinds: vec!["gpu".into()],
                gres_total: nodes.iter().map(|n| n.4).collect(),
                gres_free: nodes.iter().map(|n| n.4).collect(),
                ..drawn_table(nodes.iter().map(|n| (n.0, n.1, n.2, n.3)))
            };
            // A placement built from what is free on the picked nodes.
            let chosen: Vec<usize> = (0..nodes.len())
                .filter(|&i| pick[i] && t.free_cpus[i] > 0)
                .filter(|&i| !exclusive || (t.free_cpus[i] == t.cpus[i] && t.free_memory_mb[i] == t.memory_mb[i]))
                .collect();
            proptest::prop_assume!(!chosen.is_empty());
            let mem = chosen.iter().map(|&i| t.free_memory_mb[i]).min().unwrap();
            let gpus = chosen.iter().map(|&i| t.gres_free[i]).min().unwrap();
            let p = Placement {
                nodes: chosen.iter().map(|&i| i as u32).collect(),
                cpus: chosen.iter().map(|&i| t.free_cpus[i]).collect(),
                memory_mb: chosen.iter().map(|&i| if exclusive { t.memory_mb[i] } else { mem }).collect(),
                gres: chosen.iter().map(|&i| if exclusive { t.gres_free[i] } else { gpus }).collect(),
                rows: vec![],
            };
            // A per-node count every chosen node can give, with the tasks it implies.
            let tasks_per_node = tasks_per_node.min(p.cpus.iter().copied().min().unwrap());
            let tasks = match tasks_per_node {
                0 => p.cpus.iter().sum(),
                t => t * chosen.len() as u32,
            };
            let mut candidates = extra_candidates & ((1 << nodes.len()) - 1);
            for &i in &chosen {
                candidates |= 1 << i;
            }
            let req = JobRequest {
                job_id: 1,
                min_nodes: chosen.len() as u32,
                max_nodes: chosen.len() as u32,
                tasks,
                cpus_per_task: 1,
                tasks_per_node,
                memory_per_node_mb: mem,
                gres_per_node: if gpus > 0 { vec![(0, gpus)] } else { vec![] },
                exclusive,
                candidates: vec![candidates],
                share_rows: 0,
            };
            proptest::prop_assert!(t.check_placement(&req, &p).is_ok());
            proptest::prop_assert!(t.could_fit(&req));
        }

        /// Reading only the nodes of a mask that holds every node with a free CPU (and maybe
        /// others) answers as reading every candidate.
        #[test]
        fn could_fit_among_open_nodes_answers_as_could_fit(
            nodes in proptest::collection::vec((1u32..5, 0u32..5, 1u64..4, 0u64..4), 1..70),
            tasks in 1u32..12,
            tasks_per_node in 0u32..4,
            min_nodes in 1u32..4,
            exclusive in proptest::bool::ANY,
            candidates in proptest::collection::vec(proptest::num::u64::ANY, 2),
            also_open in proptest::num::u64::ANY,
        ) {
            let t = drawn_table(nodes.iter().copied());
            let mut open = vec![also_open, 0];
            for (i, &free) in t.free_cpus.iter().enumerate() {
                if free > 0 {
                    open[i / 64] |= 1 << (i % 64);
                }
            }
            let req = JobRequest {
                job_id: 1,
                min_nodes,
                max_nodes: min_nodes,
                tasks,
                cpus_per_task: 1,
                tasks_per_node,
                memory_per_node_mb: 1,
                gres_per_node: vec![],
                exclusive,
                candidates,
                share_rows: 0,
            };
            proptest::prop_assert_eq!(t.could_fit_among(&req, &open), t.could_fit(&req));
        }
    }

    #[test]
    fn a_node_short_of_its_tasks_per_node_is_a_fault() {
        let t = NodeTable {
            free_cpus: vec![8, 8],
            free_memory_mb: vec![1000, 1000],
            gres_free: vec![2, 2],
            ..table()
        };
        let r = JobRequest {
            min_nodes: 2,
            max_nodes: 2,
            tasks: 8,
            tasks_per_node: 4,
            gres_per_node: vec![],
            ..request()
        };
        let placement = |cpus: Vec<u32>| Placement {
            nodes: (0..cpus.len() as u32).collect(),
            memory_mb: vec![100; cpus.len()],
            gres: vec![0; cpus.len()],
            cpus,
            rows: vec![],
        };
        t.check_placement(&r, &placement(vec![4, 4])).unwrap();
        let err = t.check_placement(&r, &placement(vec![7, 1])).unwrap_err();
        assert!(err.to_string().contains("job needs 4 per node"), "{err}");
        // Eight tasks at four per node need two nodes, whatever min-nodes says.
        let one_node = JobRequest {
            min_nodes: 1,
            ..r.clone()
        };
        assert!(t.check_placement(&one_node, &placement(vec![8])).is_err());
        assert_eq!(one_node.fewest_nodes(), 2);
        // Two CPUs per task: each node must give eight.
        let wide = JobRequest {
            tasks: 4,
            tasks_per_node: 2,
            cpus_per_task: 2,
            ..r
        };
        assert!(t.check_placement(&wide, &placement(vec![6, 2])).is_err());
        t.check_placement(&wide, &placement(vec![4, 4])).unwrap();
        assert!(t.could_fit(&wide));
        let busy = NodeTable {
            free_cpus: vec![8, 3],
            ..t
        };
        assert!(
            !busy.could_fit(&wide),
            "node 1 cannot give two tasks of two cpus"
        );
    }

    #[test]
    fn every_broken_rule_is_refused() {
        let t = table();
        let r = request();
        let bad = [
            Placement {
                nodes: vec![1],
                cpus: vec![4],
                memory_mb: vec![100],
                gres: vec![1],
                rows: vec![],
            }, // no gpu free
            Placement {
                nodes: vec![0],
                cpus: vec![9],
                memory_mb: vec![100],
                gres: vec![1],
                rows: vec![],
            }, // too many cpus
            Placement {
                nodes: vec![0],
                cpus: vec![2],
                memory_mb: vec![100],
                gres: vec![1],
                rows: vec![],
            }, // too few cpus
            Placement {
                nodes: vec![5],
                cpus: vec![4],
                memory_mb: vec![100],
                gres: vec![1],
                rows: vec![],
            }, // unknown node
            Placement {
                nodes: vec![0],
                cpus: vec![4],
                memory_mb: vec![10],
                gres: vec![1],
                rows: vec![],
            }, // too little memory
            Placement {
                nodes: vec![0],
                cpus: vec![4],
                memory_mb: vec![100],
                gres: vec![],
                rows: vec![],
            }, // wrong length
            Placement {
                nodes: vec![0, 1],
                cpus: vec![2, 2],
                memory_mb: vec![100, 100],
                gres: vec![1, 0],
                rows: vec![],
            }, // too many nodes
        ];
        for p in bad {
            assert!(
                t.check_placement(&r, &p).is_err(),
                "{p:?} should be refused"
            );
        }
    }

    /// One 4-CPU node in a table with two sharing rows, nothing used.
    fn shared_table() -> NodeTable {
        NodeTable {
            cpus: vec![4],
            free_cpus: vec![4],
            memory_mb: vec![1000],
            free_memory_mb: vec![1000],
            weight: vec![1],
            power: vec![Power::Up],
            share_rows: 2,
            row_free_cpus: vec![4, 4],
            ..NodeTable::default()
        }
    }

    fn on_node_zero(cpus: u32, rows: Vec<u32>) -> Placement {
        Placement {
            nodes: vec![0],
            cpus: vec![cpus],
            memory_mb: vec![100],
            gres: vec![],
            rows,
        }
    }

    #[test]
    fn jobs_that_share_cpus_fill_one_row_each_and_leave_no_cpu_to_others() {
        let mut t = shared_table();
        let sharing = JobRequest {
            share_rows: 2,
            gres_per_node: vec![],
            candidates: vec![1],
            ..request()
        };
        let alone = JobRequest {
            share_rows: 0,
            ..sharing.clone()
        };
        // Two four-CPU jobs share the node's four CPUs, one per row.
        let first = on_node_zero(4, vec![0]);
        t.check_placement(&sharing, &first).unwrap();
        t.commit(&first);
        assert_eq!((t.free_cpus[0], t.rows_free(0)), (0, &[0, 4][..]));
        assert_eq!(t.row_for(0, 2, 4), Some(1));
        assert_eq!(
            t.row_for(0, 1, 1),
            None,
            "a job of one row finds row 0 full"
        );
        assert!(t.could_fit(&sharing) && t.has_free_cpu(0));
        // A job that holds its CPUs alone finds none: every CPU has a job.
        assert!(!t.could_fit(&alone));
        assert!(t.check_placement(&alone, &on_node_zero(4, vec![])).is_err());
        // Nor may it be put in a row, nor a sharing job in a row past its count.
        let err = t
            .check_placement(&alone, &on_node_zero(4, vec![1]))
            .unwrap_err();
        assert!(err.to_string().contains("job shares none"), "{err}");
        let one_row = JobRequest {
            share_rows: 1,
            ..sharing.clone()
        };
        assert!(
            t.check_placement(&one_row, &on_node_zero(4, vec![1]))
                .is_err()
        );
        assert!(!t.could_fit(&one_row), "row 0 is full");
        let second = on_node_zero(4, vec![1]);
        t.check_placement(&sharing, &second).unwrap();
        t.commit(&second);
        assert!(!t.could_fit(&sharing) && !t.has_free_cpu(0));
        // Ending the first job opens its row again; ending both gives the node back whole.
        t.release(&first);
        assert_eq!((t.free_cpus[0], t.rows_free(0)), (0, &[4, 0][..]));
        t.release(&second);
        assert_eq!(t, shared_table());
    }

    #[test]
    fn a_job_holding_cpus_alone_takes_them_from_every_row() {
        let mut t = shared_table();
        let p = on_node_zero(3, vec![]);
        t.commit(&p);
        assert_eq!((t.free_cpus[0], t.rows_free(0)), (1, &[1, 1][..]));
        let sharing = JobRequest {
            share_rows: 2,
            tasks: 2,
            gres_per_node: vec![],
            candidates: vec![1],
            ..request()
        };
        assert!(!t.could_fit(&sharing), "one CPU in each row, two asked");
        t.release(&p);
        assert_eq!(t, shared_table());
    }
}
