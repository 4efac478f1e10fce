//! The node copy the selection probe keeps, and the answers it gives from it: first fit on free
//! CPUs, and on request its whole copy, so a test can read what the guest holds.
//!
//! Plain Rust on purpose, not `sluice-policy`'s table: the host models the guest's copy with that
//! code, and a test of that model must not share it with the guest it checks.

/// A selection fixture's glue between its own generated bindings and [`Copy`], expanded where
/// the bindings' `NodeTable`, `JobRequest`, `Mode` and `Placement` and this file's `Answer` and
/// `Copy` are in scope (each fixture's bindings are other types of the same shape): `placement`
/// (an answer as the bindings' placement), `copy_of` (a whole table as the copy), `fit` (a
/// request's first fit on the copy, if there is one, subtracted in allocate mode) and
/// `give_back` (a released placement added back to the copy, if there is one). `with counts`
/// adds `counts`: numbers a probe reports as a placement's nodes, the other columns empty.
#[macro_export]
macro_rules! copy_glue {
    (with counts) => {
        $crate::copy_glue!();

        fn counts(nodes: Vec<u32>) -> Placement {
            Placement {
                nodes,
                cpus: Vec::new(),
                memory_mb: Vec::new(),
                gres: Vec::new(),
                rows: Vec::new(),
            }
        }
    };
    () => {
        fn placement(a: Answer) -> Placement {
            Placement {
                nodes: a.nodes,
                cpus: a.cpus,
                memory_mb: a.memory_mb,
                gres: a.gres,
                rows: Vec::new(),
            }
        }

        fn copy_of(t: NodeTable) -> Copy {
            Copy {
                cpus: t.cpus,
                free_cpus: t.free_cpus,
                free_memory_mb: t.free_memory_mb,
                kinds: t.gres_kinds.len(),
                gres_free: t.gres_free,
            }
        }

        fn fit(copy: Option<&mut Copy>, r: &JobRequest, mode: Mode) -> Option<Placement> {
            let allocate = matches!(mode, Mode::Allocate);
            copy?
                .first_fit(r.tasks, r.cpus_per_task, allocate, &r.candidates)
                .map(placement)
        }

        fn give_back(copy: Option<&mut Copy>, p: Placement) {
            if let Some(copy) = copy {
                copy.give_back(&p.nodes, &p.cpus, &p.memory_mb, &p.gres);
            }
        }
    };
}

/// The free resources a guest holds for each node.
pub struct Copy {
    /// CPUs configured.
    pub cpus: Vec<u32>,
    pub free_cpus: Vec<u32>,
    pub free_memory_mb: Vec<u64>,
    /// GRES kinds; `gres_free` is row-major by node then kind.
    pub kinds: usize,
    pub gres_free: Vec<u32>,
}

/// A placement in plain columns, as both WIT versions shape it.
pub struct Answer {
    pub nodes: Vec<u32>,
    pub cpus: Vec<u32>,
    pub memory_mb: Vec<u64>,
    pub gres: Vec<u32>,
}

impl Copy {
    /// The copy as a placement over every node: free CPUs, free memory and free GRES.
    pub fn report(&self) -> Answer {
        Answer {
            nodes: (0..self.cpus.len() as u32).collect(),
            cpus: self.free_cpus.clone(),
            memory_mb: self.free_memory_mb.clone(),
            gres: self.gres_free.clone(),
        }
    }

    /// Sets one node's free resources (a `begin-pass` change); ignores a node it does not have.
    pub fn set(&mut self, node: u32, free_cpus: u32, free_memory_mb: u64, gres: &[u32]) {
        let n = node as usize;
        if n < self.cpus.len() && gres.len() == self.kinds {
            self.free_cpus[n] = free_cpus;
            self.free_memory_mb[n] = free_memory_mb;
            self.gres_free[n * self.kinds..(n + 1) * self.kinds].copy_from_slice(gres);
        }
    }

    /// The lowest candidate node with the job's CPUs (`tasks` × `cpus_per_task`, at least one
    /// per task) free, all of them given to the job, no memory and no GRES; subtracted from the
    /// copy when `allocate`.
    pub fn first_fit(
        &mut self,
        tasks: u32,
        cpus_per_task: u32,
        allocate: bool,
        candidates: &[u64],
    ) -> Option<Answer> {
        let cpus = tasks * cpus_per_task.max(1);
        let candidate = |n: usize| {
            candidates
                .get(n / 64)
                .is_some_and(|w| w & (1 << (n % 64)) != 0)
        };
        let n = (0..self.cpus.len()).find(|&n| candidate(n) && self.free_cpus[n] >= cpus)?;
        if allocate {
            self.free_cpus[n] -= cpus;
        }
        Some(Answer {
            nodes: vec![n as u32],
            cpus: vec![cpus],
            memory_mb: vec![0],
            gres: vec![0; self.kinds],
        })
    }

    /// Adds a placement back (a `release`).
    pub fn give_back(&mut self, nodes: &[u32], cpus: &[u32], memory_mb: &[u64], gres: &[u32]) {
        for (i, &n) in nodes.iter().enumerate() {
            let n = n as usize;
            if n >= self.cpus.len() {
                continue;
            }
            self.free_cpus[n] += cpus.get(i).copied().unwrap_or(0);
            self.free_memory_mb[n] += memory_mb.get(i).copied().unwrap_or(0);
            for k in 0..self.kinds {
                self.gres_free[n * self.kinds + k] +=
                    gres.get(i * self.kinds + k).copied().unwrap_or(0);
            }
        }
    }
}
