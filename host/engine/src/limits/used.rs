//! Owns the decayed use `GrpTRESMins` and `GrpWall` are held to: the TRES-seconds and
//! wall-clock seconds the jobs of each QOS and association ran, decayed with
//! PriorityDecayHalfLife as Slurm's `usage_tres_raw` and `grp_used_wall` are.

use sluice_cluster::{AssocId, Cluster, QosId};

/// The decayed use of one QOS or association.
#[derive(Clone, Debug, Default)]
pub(crate) struct Spent {
    /// TRES-seconds per entry of the layout.
    tres_secs: Vec<f64>,
    /// Wall-clock seconds (one per second a job ran, whatever its size).
    wall_secs: f64,
}

impl Spent {
    /// TRES-minutes of entry `i` (Slurm's `usage_tres_raw / 60`, truncated).
    pub fn tres_mins(&self, i: usize) -> u64 {
        (self.tres_secs.get(i).copied().unwrap_or(0.0) / 60.0) as u64
    }

    /// Wall-clock minutes (Slurm's `grp_used_wall / 60`, truncated).
    pub fn wall_mins(&self) -> u64 {
        (self.wall_secs / 60.0) as u64
    }

    fn add(&mut self, tres: &[u64], seconds: f64) {
        if self.tres_secs.len() < tres.len() {
            self.tres_secs.resize(tres.len(), 0.0);
        }
        for (spent, held) in self.tres_secs.iter_mut().zip(tres) {
            *spent += seconds * *held as f64;
        }
        self.wall_secs += seconds;
    }

    fn decay(&mut self, factor: f64) {
        self.tres_secs.iter_mut().for_each(|s| *s *= factor);
        self.wall_secs *= factor;
    }
}

/// The decayed use of one QOS or association as it is kept across a restart: TRES-seconds
/// by TRES name (`cpu`, `mem`, `gres/gpu`…) and wall-clock seconds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpentUse {
    /// Decayed TRES-seconds by TRES name.
    pub tres_secs: std::collections::BTreeMap<String, f64>,
    /// Decayed wall-clock seconds.
    pub wall_secs: f64,
}

impl Spent {
    /// This use by TRES name (`name` gives each entry's).
    fn to_use(&self, name: impl Fn(usize) -> String) -> SpentUse {
        SpentUse {
            tres_secs: (self.tres_secs.iter().enumerate())
                .filter(|(_, s)| **s != 0.0)
                .map(|(i, s)| (name(i), *s))
                .collect(),
            wall_secs: self.wall_secs,
        }
    }

    /// The use `u` describes, in a layout of `width` entries named by `name`.
    fn of_use(u: &SpentUse, width: usize, name: impl Fn(usize) -> String) -> Self {
        Spent {
            tres_secs: (0..width)
                .map(|i| u.tres_secs.get(&name(i)).copied().unwrap_or(0.0))
                .collect(),
            wall_secs: u.wall_secs,
        }
    }
}

/// Seconds a job ran since it was last charged, times its QOS's UsageFactor: decayed over the
/// span (for associations and QOS that decay) and as run (for `NoDecay` QOS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Run {
    /// `delta × df^delta × UsageFactor`.
    pub decayed: f64,
    /// `delta × UsageFactor`.
    pub undecayed: f64,
}

/// A job's last run, charged after the next decay.
#[derive(Clone, Debug)]
struct Ended {
    qos: Vec<QosId>,
    assocs: Vec<AssocId>,
    tres: Vec<u64>,
    run: Run,
}

/// Decayed use per QOS and association.
#[derive(Clone, Debug)]
pub(crate) struct Used {
    /// Whether a limit needs it (`GrpTRESMins` or `GrpWall` set somewhere); nothing is charged
    /// otherwise.
    pub on: bool,
    qos: Vec<Spent>,
    no_decay: Vec<bool>,
    assoc: Vec<Spent>,
    ended: Vec<Ended>,
}

impl Used {
    /// No use yet but the associations' configured starting usage, which is CPU-seconds (Slurm
    /// keeps `usage_tres_raw[cpu]` in step with it): each association's own, added up the tree.
    pub fn of_cluster(cluster: &Cluster) -> Self {
        let on = cluster
            .qos
            .iter()
            .any(|q| !q.limits.grp_tres_mins.is_empty() || q.limits.grp_wall.is_some())
            || cluster
                .associations
                .iter()
                .any(|a| !a.limits.grp_tres_mins.is_empty() || a.limits.grp_wall.is_some());
        let mut assoc = vec![Spent::default(); cluster.associations.len()];
        for (i, a) in cluster.associations.iter().enumerate() {
            let mut cur = Some(AssocId(i as u32));
            while let Some(id) = cur {
                let spent = &mut assoc[id.index()];
                if spent.tres_secs.is_empty() {
                    spent.tres_secs.push(0.0);
                }
                spent.tres_secs[0] += a.raw_usage;
                cur = cluster.associations[id.index()].parent;
            }
        }
        Self {
            on,
            qos: vec![Spent::default(); cluster.qos.len()],
            no_decay: cluster.qos.iter().map(|q| q.no_decay).collect(),
            assoc,
            ended: Vec::new(),
        }
    }

    /// Every QOS's and association's use (associations' over their subtree), by index, for
    /// a restart to give back with [`Used::restore`]; jobs ended since the last decay are
    /// charged first, as the next decay would.
    pub fn export(&self, name: impl Fn(usize) -> String) -> (Vec<SpentUse>, Vec<SpentUse>) {
        let mut all = self.clone();
        for e in std::mem::take(&mut all.ended) {
            all.charge(&e.qos, &e.assocs, &e.tres, e.run);
        }
        (
            all.qos.iter().map(|s| s.to_use(&name)).collect(),
            all.assoc.iter().map(|s| s.to_use(&name)).collect(),
        )
    }

    /// Sets the use of the QOS and associations given (by index) to what an earlier
    /// [`Used::export`] took; the others keep theirs.
    pub fn restore(
        &mut self,
        qos: &[(QosId, SpentUse)],
        assocs: &[(AssocId, SpentUse)],
        width: usize,
        name: impl Fn(usize) -> String,
    ) {
        for (q, u) in qos {
            if let Some(s) = self.qos.get_mut(q.index()) {
                *s = Spent::of_use(u, width, &name);
            }
        }
        for (a, u) in assocs {
            if let Some(s) = self.assoc.get_mut(a.index()) {
                *s = Spent::of_use(u, width, &name);
            }
        }
    }

    /// What QOS `q` used.
    pub fn qos(&self, q: QosId) -> Option<&Spent> {
        self.qos.get(q.index())
    }

    /// What association `a` and the subtree below it used.
    pub fn assoc(&self, a: AssocId) -> Option<&Spent> {
        self.assoc.get(a.index())
    }

    /// Charges a job holding `tres` for `run` to each QOS in `qos` and each association in
    /// `assocs` (the job's and every one above it).
    pub fn charge(&mut self, qos: &[QosId], assocs: &[AssocId], tres: &[u64], run: Run) {
        if !self.on {
            return;
        }
        for q in qos {
            if self.qos.len() <= q.index() {
                self.qos.resize(q.index() + 1, Spent::default());
            }
            let seconds = if self.no_decay.get(q.index()).copied().unwrap_or(false) {
                run.undecayed
            } else {
                run.decayed
            };
            self.qos[q.index()].add(tres, seconds);
        }
        for a in assocs {
            if self.assoc.len() <= a.index() {
                self.assoc.resize(a.index() + 1, Spent::default());
            }
            self.assoc[a.index()].add(tres, run.decayed);
        }
    }

    /// [`Used::charge`] after the next decay, as an ended job's last usage is.
    pub fn charge_at_next_decay(
        &mut self,
        qos: Vec<QosId>,
        assocs: Vec<AssocId>,
        tres: Vec<u64>,
        run: Run,
    ) {
        if self.on {
            self.ended.push(Ended {
                qos,
                assocs,
                tres,
                run,
            });
        }
    }

    /// Decays every association and every QOS without `NoDecay` by `factor`, then charges the
    /// jobs that ended since the last decay.
    pub fn decay(&mut self, factor: f64) {
        if !self.on {
            return;
        }
        let factor = factor.max(f64::MIN_POSITIVE);
        for (i, q) in self.qos.iter_mut().enumerate() {
            if !self.no_decay.get(i).copied().unwrap_or(false) {
                q.decay(factor);
            }
        }
        self.assoc.iter_mut().for_each(|a| a.decay(factor));
        for e in std::mem::take(&mut self.ended) {
            self.charge(&e.qos, &e.assocs, &e.tres, e.run);
        }
    }
}
