//! Owns the daemon's Prometheus metrics: one registry whose handles the driver and the API layer
//! update as things happen, encoded at `GET /metrics` without a trip to the driver thread, so a
//! scrape never waits on (or delays) a scheduling pass.

use std::sync::{Arc, Mutex};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sluice_engine::PassTotals;

/// What `GET /metrics` answers with: OpenMetrics text, which Prometheus reads.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A job state and partition.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobLabels {
    /// Slurm's state name (`PENDING`, `RUNNING`, …).
    pub state: String,
    /// The job's partition.
    pub partition: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PassLabel {
    pass: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PluginLabels {
    kind: String,
    generation: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: String,
    method: String,
    status: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn pass_histogram() -> Histogram {
    // 50 µs to ~1.6 s.
    Histogram::new(exponential_buckets(50e-6, 2.0, 16))
}

fn request_histogram() -> Histogram {
    // 100 µs to ~3.3 s.
    Histogram::new(exponential_buckets(100e-6, 2.0, 16))
}

/// The handles, cheap to clone (each is shared), and the registry they are in.
#[derive(Clone)]
pub struct SiteMetrics {
    registry: Arc<Registry>,
    submissions: Counter,
    refusals: Counter,
    starts: Counter,
    ends: Family<StateLabel, Counter>,
    requeues: Counter,
    jobs: Family<JobLabels, Gauge>,
    pass_seconds: HistogramFamily<PassLabel>,
    pass_depth: Family<PassLabel, Gauge>,
    plugin_answers: Family<PluginLabels, Counter>,
    plugin_faults: Family<PluginLabels, Counter>,
    fsync_seconds: Histogram,
    requests: Family<RequestLabels, Counter>,
    request_seconds: HistogramFamily<RequestLabels>,
    /// What the last refresh saw, to turn totals into counter increments and to zero the job
    /// series that emptied.
    seen: Arc<Mutex<Seen>>,
    /// Requests and their total µs per `METHOD pattern`, for sdiag (bounded by the routes).
    endpoints: Arc<Mutex<std::collections::BTreeMap<String, (u64, u64)>>>,
}

#[derive(Default)]
struct Seen {
    main_cycles: u64,
    backfill_cycles: u64,
    jobs: Vec<JobLabels>,
    plugins: std::collections::HashMap<(String, u64), (u64, u64)>,
}

impl Default for SiteMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl SiteMetrics {
    /// A registry with every metric of the daemon, all at zero.
    pub fn new() -> Self {
        let mut r = Registry::with_prefix("sluice");
        let m = SiteMetrics {
            registry: Arc::new(Registry::default()),
            submissions: Counter::default(),
            refusals: Counter::default(),
            starts: Counter::default(),
            ends: Family::default(),
            requeues: Counter::default(),
            jobs: Family::default(),
            pass_seconds: Family::new_with_constructor(pass_histogram),
            pass_depth: Family::default(),
            plugin_answers: Family::default(),
            plugin_faults: Family::default(),
            fsync_seconds: Histogram::new(exponential_buckets(20e-6, 2.0, 16)),
            requests: Family::default(),
            request_seconds: Family::new_with_constructor(request_histogram),
            seen: Arc::default(),
            endpoints: Arc::default(),
        };
        r.register("job_submissions", "Jobs accepted", m.submissions.clone());
        r.register("job_refusals", "Submissions refused", m.refusals.clone());
        r.register("job_starts", "Jobs started", m.starts.clone());
        r.register("job_ends", "Jobs ended, by final state", m.ends.clone());
        r.register("job_requeues", "Jobs requeued", m.requeues.clone());
        r.register(
            "jobs",
            "Jobs the daemon holds, by state and partition",
            m.jobs.clone(),
        );
        r.register(
            "pass_duration_seconds",
            "Scheduling passes (main, backfill), timed on the engine's clock",
            m.pass_seconds.clone(),
        );
        r.register(
            "pass_depth",
            "Records (job x partition) the last pass of each kind tried",
            m.pass_depth.clone(),
        );
        r.register(
            "plugin_answers",
            "Plugin calls answered, by kind and generation",
            m.plugin_answers.clone(),
        );
        r.register(
            "plugin_faults",
            "Plugin calls that faulted, by kind and generation",
            m.plugin_faults.clone(),
        );
        r.register(
            "journal_fsync_duration_seconds",
            "Journal syncs (group commits)",
            m.fsync_seconds.clone(),
        );
        r.register(
            "api_requests",
            "API requests, by endpoint, method and status",
            m.requests.clone(),
        );
        r.register(
            "api_request_duration_seconds",
            "API requests' time to answer, by endpoint, method and status",
            m.request_seconds.clone(),
        );
        SiteMetrics {
            registry: Arc::new(r),
            ..m
        }
    }

    /// Every metric as OpenMetrics text.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// A job was accepted.
    pub fn job_submitted(&self) {
        self.submissions.inc();
    }

    /// A submission was refused.
    pub fn job_refused(&self) {
        self.refusals.inc();
    }

    /// A job started.
    pub fn job_started(&self) {
        self.starts.inc();
    }

    /// A job ended in `state` (Slurm's name).
    pub fn job_ended(&self, state: &str) {
        self.ends
            .get_or_create(&StateLabel {
                state: state.to_string(),
            })
            .inc();
    }

    /// A job went back to the queue.
    pub fn job_requeued(&self) {
        self.requeues.inc();
    }

    /// A journal sync took `seconds`.
    pub fn journal_synced(&self, seconds: f64) {
        self.fsync_seconds.observe(seconds);
    }

    /// An API request to `endpoint` (the route's pattern) answered `status` after `seconds`.
    pub fn request(&self, endpoint: &str, method: &str, status: u16, seconds: f64) {
        let labels = RequestLabels {
            endpoint: endpoint.to_string(),
            method: method.to_string(),
            status: status.to_string(),
        };
        self.requests.get_or_create(&labels).inc();
        self.request_seconds.get_or_create(&labels).observe(seconds);
        let mut endpoints = self.endpoints.lock().unwrap_or_else(|e| e.into_inner());
        let e = endpoints.entry(format!("{method} {endpoint}")).or_default();
        e.0 += 1;
        e.1 += (seconds * 1e6) as u64;
    }

    /// Requests per `METHOD pattern` so far, for sdiag.
    pub fn endpoint_stats(&self) -> Vec<sluice_api::EndpointStats> {
        let endpoints = self.endpoints.lock().unwrap_or_else(|e| e.into_inner());
        endpoints
            .iter()
            .map(
                |(endpoint, &(count, total_time_us))| sluice_api::EndpointStats {
                    endpoint: endpoint.clone(),
                    count,
                    total_time_us,
                },
            )
            .collect()
    }

    /// Observes the passes run since the last call: the engine keeps totals, and the last pass
    /// of each kind is what a tick adds (a tick runs at most one of each).
    pub fn passes(&self, main: &PassTotals, backfill: &PassTotals) {
        let mut guard = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let seen = &mut *guard;
        for (pass, totals, last) in [
            ("main", main, &mut seen.main_cycles),
            ("backfill", backfill, &mut seen.backfill_cycles),
        ] {
            if totals.cycles > *last {
                let label = PassLabel { pass };
                self.pass_seconds
                    .get_or_create(&label)
                    .observe(totals.last_micros as f64 / 1e6);
                *last = totals.cycles;
            }
        }
    }

    /// Sets the depth of the last pass of each kind.
    pub fn depths(&self, main: usize, backfill: usize) {
        for (pass, depth) in [("main", main), ("backfill", backfill)] {
            self.pass_depth
                .get_or_create(&PassLabel { pass })
                .set(depth as i64);
        }
    }

    /// Sets the jobs gauge to `counts`; a state and partition no longer held reads 0.
    pub fn jobs(&self, counts: &[(JobLabels, i64)]) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        for old in &seen.jobs {
            if !counts.iter().any(|(l, _)| l == old) {
                self.jobs.get_or_create(old).set(0);
            }
        }
        for (labels, n) in counts {
            self.jobs.get_or_create(labels).set(*n);
        }
        seen.jobs = counts.iter().map(|(l, _)| l.clone()).collect();
    }

    /// Brings the plugin counters up to each generation's totals of answers and faults.
    pub fn plugins(&self, rows: &[sluice_api::GenerationRow]) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        for row in rows {
            let labels = PluginLabels {
                kind: row.kind.clone(),
                generation: row.generation.to_string(),
            };
            let last = seen
                .plugins
                .entry((row.kind.clone(), row.generation))
                .or_default();
            self.plugin_answers
                .get_or_create(&labels)
                .inc_by(row.answered.saturating_sub(last.0));
            self.plugin_faults
                .get_or_create(&labels)
                .inc_by(row.faults.saturating_sub(last.1));
            *last = (last.0.max(row.answered), last.1.max(row.faults));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_of(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
    }

    #[test]
    fn counters_follow_events_and_totals_become_increments() {
        let m = SiteMetrics::new();
        m.job_submitted();
        m.job_submitted();
        m.job_ended("COMPLETED");
        m.jobs(&[(
            JobLabels {
                state: "PENDING".into(),
                partition: "batch".into(),
            },
            3,
        )]);
        let row = |answered, faults| sluice_api::GenerationRow {
            kind: "priority".into(),
            role: sluice_api::Role::Active,
            generation: 2,
            origin: "multifactor".into(),
            answered,
            faults,
            quarantined: false,
            last_fault: None,
        };
        m.plugins(&[row(5, 1)]);
        m.plugins(&[row(9, 1)]);
        m.jobs(&[]);
        let text = m.encode();
        assert_eq!(value_of(&text, "sluice_job_submissions_total"), Some(2.0));
        assert_eq!(
            value_of(&text, "sluice_job_ends_total{state=\"COMPLETED\"}"),
            Some(1.0)
        );
        assert_eq!(
            value_of(
                &text,
                "sluice_plugin_answers_total{kind=\"priority\",generation=\"2\"}"
            ),
            Some(9.0),
            "totals of 5 then 9 are 9 answers, not 14"
        );
        assert_eq!(
            value_of(&text, "sluice_jobs{state=\"PENDING\",partition=\"batch\"}"),
            Some(0.0),
            "a series that emptied reads 0"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn a_pass_is_observed_once() {
        let m = SiteMetrics::new();
        let mut main = PassTotals::default();
        main.cycles = 1;
        main.last_micros = 1500;
        m.passes(&main, &PassTotals::default());
        m.passes(&main, &PassTotals::default());
        let text = m.encode();
        assert_eq!(
            value_of(&text, "sluice_pass_duration_seconds_count{pass=\"main\"}"),
            Some(1.0)
        );
        assert_eq!(
            value_of(&text, "sluice_pass_duration_seconds_sum{pass=\"main\"}"),
            Some(0.0015)
        );
    }
}
