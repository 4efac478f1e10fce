//! Owns a replay's power accounting: node-seconds per power state, boots, the wait boots add to
//! jobs, job waits, and energy when the cluster gives watts per state.

use serde::Serialize;
use sluice_cluster::{NodeId, PowerWatts};
use sluice_engine::Engine;
use sluice_engine::power::PowerFlags as F;

/// The power state a node is accounted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Category {
    Busy,
    Idle,
    Booting,
    PoweringDown,
    Off,
}

impl Category {
    /// A node's category now: booting, powering down or off by its flags, else busy or idle
    /// by its jobs (an allocated node waiting to be resumed is still off).
    fn of(engine: &Engine, n: usize) -> Self {
        let flags = engine.power().node(n).flags;
        if flags.has(F::POWERING_UP) {
            Category::Booting
        } else if flags.has(F::POWERING_DOWN) {
            Category::PoweringDown
        } else if flags.has(F::POWERED_DOWN) {
            Category::Off
        } else if engine.nodes().is_idle(n) {
            Category::Idle
        } else {
            Category::Busy
        }
    }
}

/// What power saving cost and saved over a replay.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PowerMetrics {
    /// Node-hours running at least one job.
    pub busy_node_h: f64,
    /// Node-hours powered up with nothing to run.
    pub idle_node_h: f64,
    /// Node-hours between ResumeProgram and registration.
    pub booting_node_h: f64,
    /// Node-hours between SuspendProgram and SuspendTimeout.
    pub powering_down_node_h: f64,
    /// Node-hours powered down.
    pub off_node_h: f64,
    /// Nodes resumed (each node of each ResumeProgram call).
    pub boots: u64,
    /// Nodes suspended.
    pub suspends: u64,
    /// Seconds jobs spent CONFIGURING, waiting for their nodes to boot, summed over jobs.
    pub boot_delay_s: i64,
    /// Jobs that started running.
    pub jobs_started: u64,
    /// Mean seconds from submission to the first RUNNING of the jobs that started.
    pub avg_wait_s: f64,
    /// Jobs requeued after a node failure (boot failures included), counted per requeue.
    pub requeues: u64,
    /// Energy in kWh, when the cluster gives `[power.Watts]`.
    pub energy_kwh: Option<f64>,
    /// The most the cluster drew at once, in kW, when it gives `[power.Watts]`.
    pub peak_kw: Option<f64>,
}

/// Accumulates [`PowerMetrics`] as the replay observes the engine.
pub(crate) struct PowerAccounting {
    /// Per node: its category and since when.
    nodes: Vec<(Category, i64)>,
    /// Node-seconds per category: busy, idle, booting, powering down, off.
    seconds: [i64; 5],
    boots: u64,
    suspends: u64,
    boot_delay_s: i64,
    jobs_started: u64,
    wait_s: i64,
    requeues: u64,
    /// Watts per category (busy, idle, booting, powering down, off), if configured.
    watts: Option<[f64; 5]>,
    /// Nodes per category now.
    counts: [u64; 5],
    peak_w: f64,
}

impl PowerAccounting {
    /// Starts accounting every node at `now`.
    pub fn new(engine: &Engine, now: i64) -> Self {
        let nodes: Vec<(Category, i64)> = (0..engine.nodes().len())
            .map(|n| (Category::of(engine, n), now))
            .collect();
        let mut counts = [0; 5];
        nodes.iter().for_each(|(c, _)| counts[Self::slot(*c)] += 1);
        let watts = engine
            .cluster()
            .power
            .watts
            .map(|w| [w.busy, w.idle, w.booting, w.powering_down, w.off]);
        let mut accounting = Self {
            nodes,
            seconds: [0; 5],
            boots: 0,
            suspends: 0,
            boot_delay_s: 0,
            jobs_started: 0,
            wait_s: 0,
            requeues: 0,
            watts,
            counts,
            peak_w: 0.0,
        };
        accounting.note_draw();
        accounting
    }

    /// Raises the peak to what the nodes draw now.
    fn note_draw(&mut self) {
        if let Some(w) = self.watts {
            let draw: f64 = (0..5).map(|i| self.counts[i] as f64 * w[i]).sum();
            self.peak_w = self.peak_w.max(draw);
        }
    }

    fn slot(category: Category) -> usize {
        category as usize
    }

    /// Moves every node whose category changed into its new one at `now`.
    pub fn observe(&mut self, engine: &Engine, now: i64) {
        for (n, (category, since)) in self.nodes.iter_mut().enumerate() {
            let current = Category::of(engine, n);
            if current != *category {
                self.seconds[Self::slot(*category)] += now - *since;
                self.counts[Self::slot(*category)] -= 1;
                self.counts[Self::slot(current)] += 1;
                (*category, *since) = (current, now);
            }
        }
        self.note_draw();
    }

    /// A job was requeued after a node failure.
    pub fn requeued(&mut self) {
        self.requeues += 1;
    }

    /// Counts a program call's nodes.
    pub fn program(&mut self, resume: bool, nodes: &[NodeId]) {
        if resume {
            self.boots += nodes.len() as u64;
        } else {
            self.suspends += nodes.len() as u64;
        }
    }

    /// A job left CONFIGURING after `seconds`.
    pub fn configured(&mut self, seconds: i64) {
        self.boot_delay_s += seconds;
    }

    /// A job started running for the first time, `wait` seconds after its submission.
    pub fn started(&mut self, wait: i64) {
        self.jobs_started += 1;
        self.wait_s += wait;
    }

    /// The totals at `end`, with energy from `watts`.
    pub fn finish(mut self, end: i64, watts: Option<&PowerWatts>) -> PowerMetrics {
        for (category, since) in std::mem::take(&mut self.nodes) {
            self.seconds[Self::slot(category)] += end - since;
        }
        let hours = |s: i64| s as f64 / 3600.0;
        let [busy, idle, booting, down, off] = self.seconds;
        PowerMetrics {
            busy_node_h: hours(busy),
            idle_node_h: hours(idle),
            booting_node_h: hours(booting),
            powering_down_node_h: hours(down),
            off_node_h: hours(off),
            boots: self.boots,
            suspends: self.suspends,
            boot_delay_s: self.boot_delay_s,
            jobs_started: self.jobs_started,
            requeues: self.requeues,
            peak_kw: self.watts.map(|_| self.peak_w / 1000.0),
            avg_wait_s: if self.jobs_started == 0 {
                0.0
            } else {
                self.wait_s as f64 / self.jobs_started as f64
            },
            energy_kwh: watts.map(|w| {
                (hours(busy) * w.busy
                    + hours(idle) * w.idle
                    + hours(booting) * w.booting
                    + hours(down) * w.powering_down
                    + hours(off) * w.off)
                    / 1000.0
            }),
        }
    }
}
