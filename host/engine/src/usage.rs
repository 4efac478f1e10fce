//! Owns fair-share usage per association: accrual up the tree and decay every PriorityCalcPeriod.
//!
//! Fair-share usage: CPU-seconds × UsageFactor accrue to an association and every ancestor, and decay
//! with PriorityDecayHalfLife every PriorityCalcPeriod, as Slurm's `_decay_thread` does.

use sluice_cluster::{AssocId, Association, Cluster};

/// Decayed raw usage per association, with the time the decay last ran.
#[derive(Clone, Debug)]
pub struct Usage {
    raw: Vec<f64>,
    parents: Vec<Option<AssocId>>,
    decay_factor: f64,
    calc_period: u64,
    last_ran: i64,
    /// Usage of jobs that ended since the last decay, added at the next one after the decay.
    ended: Vec<(AssocId, f64)>,
}

impl Usage {
    /// Usage as the cluster configures it, decaying with its PriorityDecayHalfLife every
    /// PriorityCalcPeriod from `now`. The configured starting usage is each association's own;
    /// the tree sum is what the contract shows.
    pub fn of_cluster(cluster: &Cluster, now: i64) -> Self {
        let mut usage = Usage::new(
            &cluster
                .associations
                .iter()
                .map(|a| Association {
                    raw_usage: 0.0,
                    ..a.clone()
                })
                .collect::<Vec<_>>(),
            cluster.priority.priority_decay_half_life,
            cluster.priority.priority_calc_period,
            now,
        );
        for (i, a) in cluster.associations.iter().enumerate() {
            if a.raw_usage != 0.0 {
                usage.add(AssocId(i as u32), a.raw_usage);
            }
        }
        usage
    }

    /// Starts from each association's configured starting usage (already including descendants').
    pub fn new(assocs: &[Association], half_life: u64, calc_period: u64, now: i64) -> Self {
        Self {
            raw: assocs.iter().map(|a| a.raw_usage).collect(),
            parents: assocs.iter().map(|a| a.parent).collect(),
            // Slurm's first-order approximation of e^(ln ½ / half_life), kept for identical numbers.
            decay_factor: if half_life == 0 {
                1.0
            } else {
                1.0 - 0.693 / half_life as f64
            },
            calc_period: calc_period.max(1),
            last_ran: now,
            ended: Vec::new(),
        }
    }

    /// RawUsage of association `a`, including its descendants.
    pub fn raw(&self, a: AssocId) -> f64 {
        self.raw[a.index()]
    }

    /// Every association's RawUsage, in cluster order.
    pub fn all(&self) -> &[f64] {
        &self.raw
    }

    /// [`Usage::all`] with the usage of jobs that ended since the last decay already added:
    /// what a state snapshot keeps, so a restart before the next decay loses none of it.
    pub fn all_with_ended(&self) -> Vec<f64> {
        let mut raw = self.raw.clone();
        for &(a, amount) in &self.ended {
            add_up_the_tree(&mut raw, &self.parents, a, amount);
        }
        raw
    }

    /// The decay factor per second (`1 - 0.693 / half_life`; 1 without decay).
    pub fn decay_factor(&self) -> f64 {
        self.decay_factor
    }

    /// When the decay last ran.
    pub fn last_ran(&self) -> i64 {
        self.last_ran
    }

    /// When the next decay pass is due.
    pub fn next_due(&self) -> i64 {
        self.last_ran + self.calc_period as i64
    }

    /// Registers an association created after start-up, with no usage, under `parent`.
    pub fn grow(&mut self, parent: AssocId) {
        self.raw.push(0.0);
        self.parents.push(Some(parent));
    }

    /// Adds `amount` to `a` and every ancestor up to root, as `_apply_new_usage` does.
    pub fn add(&mut self, a: AssocId, amount: f64) {
        add_up_the_tree(&mut self.raw, &self.parents, a, amount);
    }

    /// Adds `amount` to `a` and its ancestors at the next decay, after it: Slurm's decay thread
    /// charges a job that ended since it last ran on its next run, after decaying, so the
    /// fair-share standing holds still between decays.
    pub fn add_at_next_decay(&mut self, a: AssocId, amount: f64) {
        self.ended.push((a, amount));
    }

    /// Usage a job adds for running `delta` seconds on `cpus` CPUs: `delta × df^delta × cpus × factor`.
    pub fn job_delta(&self, delta: i64, cpus: u64, usage_factor: f64) -> f64 {
        if delta <= 0 {
            return 0.0;
        }
        job_delta_decayed(
            delta,
            self.decay_factor.powf(delta as f64),
            cpus,
            usage_factor,
        )
    }

    /// Decays every association to `now`, then charges the jobs that ended since the last
    /// decay; returns when the decay last ran before, from which running jobs then accrue,
    /// with the decay over that span. Does nothing (and returns `None`) before
    /// PriorityCalcPeriod has passed.
    pub fn decay_if_due(&mut self, now: i64) -> Option<Decayed> {
        if now < self.next_due() {
            return None;
        }
        let delta = now - self.last_ran;
        let decay = self.decay_factor.powf(delta as f64);
        let real = decay.max(f64::MIN_POSITIVE);
        for u in &mut self.raw {
            *u *= real;
        }
        for (a, amount) in self.ended.drain(..) {
            add_up_the_tree(&mut self.raw, &self.parents, a, amount);
        }
        let since = self.last_ran;
        self.last_ran = now;
        Some(Decayed {
            since,
            until: now,
            decay,
        })
    }
}

/// One decay run's span: jobs running through all of it accrue with its `decay`, so the power
/// is taken once per run rather than once per job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decayed {
    /// When the decay ran before this run.
    pub since: i64,
    /// When this run decayed.
    pub until: i64,
    /// `df^(until − since)`, before the clamp the associations' decay applies.
    pub decay: f64,
}

impl Decayed {
    /// [`Usage::job_delta`] for a job accruing from `from` to the end of this run, with the
    /// run's power when the job ran through the whole span.
    pub fn job_delta(&self, usage: &Usage, from: i64, cpus: u64, factor: f64) -> f64 {
        if from == self.since && self.until > from {
            job_delta_decayed(self.until - from, self.decay, cpus, factor)
        } else {
            usage.job_delta(self.until - from, cpus, factor)
        }
    }
}

/// Adds `amount` to `a` in `raw` and to every ancestor up to root, as `_apply_new_usage` does.
fn add_up_the_tree(raw: &mut [f64], parents: &[Option<AssocId>], a: AssocId, amount: f64) {
    let mut cur = Some(a);
    while let Some(id) = cur {
        raw[id.index()] += amount;
        cur = parents[id.index()];
    }
}

/// `delta × decay × cpus × factor`, in that order (the order fixes the rounding).
fn job_delta_decayed(delta: i64, decay: f64, cpus: u64, usage_factor: f64) -> f64 {
    delta as f64 * decay * cpus as f64 * usage_factor
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_cluster::{AssocKind, Shares};

    fn assoc(kind: AssocKind, parent: Option<u32>) -> Association {
        Association {
            kind,
            parent: parent.map(AssocId),
            children: vec![],
            shares: Shares::Raw(1),
            raw_usage: 0.0,
            priority: 0,
            default_qos: None,
            limits: Default::default(),
        }
    }

    #[test]
    fn usage_reaches_every_ancestor_and_halves_in_a_half_life() {
        let tree = vec![
            assoc(AssocKind::Account("root".into()), None),
            assoc(AssocKind::Account("a".into()), Some(0)),
            assoc(AssocKind::User("u".into()), Some(1)),
            assoc(AssocKind::Account("b".into()), Some(0)),
        ];
        let mut u = Usage::new(&tree, 1000, 10, 0);
        u.add(AssocId(2), 100.0);
        assert_eq!(
            (
                u.raw(AssocId(0)),
                u.raw(AssocId(1)),
                u.raw(AssocId(2)),
                u.raw(AssocId(3))
            ),
            (100.0, 100.0, 100.0, 0.0)
        );
        assert_eq!(u.decay_if_due(5), None);
        assert_eq!(u.decay_if_due(1000).map(|d| d.since), Some(0));
        let halved = u.raw(AssocId(2));
        assert!((halved - 50.0).abs() < 0.5, "{halved}");
    }

    #[test]
    fn a_decay_run_gives_each_job_what_its_own_power_gives() {
        let tree = vec![assoc(AssocKind::Account("root".into()), None)];
        let mut u = Usage::new(&tree, 86_400, 300, 1_000);
        let decayed = u.decay_if_due(1_777).expect("a calc period has passed");
        assert_eq!((decayed.since, decayed.until), (1_000, 1_777));
        // Through the whole span (the run's power), from later in it, and from its end.
        for from in [1_000, 1_001, 1_500, 1_776, 1_777] {
            let alone = u.job_delta(1_777 - from, 24, 1.5);
            let in_run = decayed.job_delta(&u, from, 24, 1.5);
            assert_eq!(in_run.to_bits(), alone.to_bits(), "from {from}");
        }
        assert!(decayed.job_delta(&u, 1_000, 24, 1.5) > 0.0);
    }

    #[test]
    fn zero_half_life_means_no_decay() {
        let tree = vec![assoc(AssocKind::Account("root".into()), None)];
        let mut u = Usage::new(&tree, 0, 300, 0);
        u.add(AssocId::ROOT, 7.0);
        u.decay_if_due(1_000_000);
        assert_eq!(u.raw(AssocId::ROOT), 7.0);
        assert_eq!(u.job_delta(10, 4, 2.0), 80.0);
    }
}
