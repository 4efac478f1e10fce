//! Owns when the driver refreshes the metrics only it can read (jobs by state and partition,
//! plugin generations' answers and faults, the passes the engine ran and their depth); the
//! handles themselves are `crate::metrics`'s, which `GET /metrics` encodes without the driver.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::Driver;
use crate::metrics::JobLabels;

/// Shortest gap between two refreshes of the job and plugin series: counting every job the
/// engine holds is linear in them, and a scrape every few seconds needs no more.
pub(super) const REFRESH_EVERY: Duration = Duration::from_secs(1);

impl Driver {
    /// After a tick: the passes it ran, and their depth.
    pub(super) fn observe_passes(&self) {
        let e = &self.engine;
        let m = &self.opts.metrics;
        m.passes(e.main_totals(), e.backfill_totals());
        m.depths(e.last_main_stats().tested, e.last_backfill_stats().tested);
    }

    /// The job and plugin series, at most every [`REFRESH_EVERY`].
    pub(super) fn refresh_gauges(&mut self, last: &mut Instant) {
        if last.elapsed() < REFRESH_EVERY {
            return;
        }
        *last = Instant::now();
        // Counted by partition ids, named once per distinct set: a queue of many thousand
        // jobs costs no string per job.
        let mut by_ids: BTreeMap<(&'static str, &[_]), i64> = BTreeMap::new();
        for job in self.engine.jobs() {
            let ids = match &job.alloc {
                Some(a) => std::slice::from_ref(&a.partition),
                None => job.partitions.as_slice(),
            };
            *by_ids.entry((job.state.as_str(), ids)).or_default() += 1;
        }
        let partitions = &self.cluster.partitions;
        let counts = by_ids.into_iter().map(|((state, ids), n)| {
            let names: Vec<&str> = ids
                .iter()
                .map(|p| partitions[p.index()].name.as_str())
                .collect();
            ((state, names.join(",")), n)
        });
        let counts: Vec<(JobLabels, i64)> = counts
            .into_iter()
            .map(|((state, partition), n)| {
                (
                    JobLabels {
                        state: state.to_string(),
                        partition,
                    },
                    n,
                )
            })
            .collect();
        self.opts.metrics.jobs(&counts);
        self.opts.metrics.plugins(&self.plugin_list().generations);
    }
}
