//! The switches a trace replay needs: time limits left to the driver, purging ended jobs,
//! associations made for unknown users, backfill cut short where it can start nothing, the
//! priority call of a lone job put off, priorities asked for without their factors, and (the
//! live host's) new jobs' priorities asked alone between recalculations.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use common::*;
use sluice_engine::{Engine, EngineConfig, Event, JobSpec, JobState, ManualClock};
use sluice_policy::{Factor, Priorities, PriorityContext, PriorityPolicy};

fn job(nodes: u32, seconds: u64) -> JobSpec {
    JobSpec {
        min_nodes: nodes,
        tasks: nodes,
        time_limit: Some(seconds),
        ..JobSpec::new("alice")
    }
}

fn replay_engine(enforce: bool) -> (Engine, ManualClock) {
    replay_engine_with(|config| config.enforce_time_limits = enforce)
}

fn replay_engine_with(configure: impl FnOnce(&mut EngineConfig)) -> (Engine, ManualClock) {
    replay_engine_on(2, configure)
}

/// An engine on `nodes` one-CPU nodes with site-factor priorities and first-fit selection.
fn replay_engine_on(
    nodes: usize,
    configure: impl FnOnce(&mut EngineConfig),
) -> (Engine, ManualClock) {
    engine_configured(cluster(nodes, 1), Box::new(SiteFactorPriority), configure)
}

fn timeouts(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Ended {
                    state: JobState::Timeout,
                    ..
                }
            )
        })
        .count()
}

#[test]
fn with_enforcement_a_job_past_its_limit_times_out() {
    let (mut e, clock) = replay_engine(true);
    let id = e.submit(job(1, 60)).unwrap();
    e.tick();
    assert_eq!(e.next_wakeup(), Some(T0 + 60));
    clock.advance(60);
    assert_eq!(timeouts(&e.tick()), 1);
    assert_eq!(e.job(id).unwrap().state, JobState::Timeout);
}

#[test]
fn without_enforcement_a_job_runs_until_the_driver_ends_it() {
    let (mut e, clock) = replay_engine(false);
    let id = e.submit(job(1, 60)).unwrap();
    e.tick();
    let usage_due = e.usage().next_due();
    assert_ne!(usage_due, T0 + 60);
    assert_eq!(e.next_wakeup(), Some(usage_due), "an end time is no wakeup");
    clock.advance(600);
    assert_eq!(timeouts(&e.tick()), 0);
    assert_eq!(e.job(id).unwrap().state, JobState::Running);
    // Planning believes the overrunning job ends at once: a 2-node job gets reserved, not started.
    let wide = e.submit(job(2, 60)).unwrap();
    e.tick();
    e.backfill();
    assert_eq!(e.job(wide).unwrap().state, JobState::Pending);
    assert!(
        e.job(wide)
            .unwrap()
            .start_time
            .is_some_and(|t| t > T0 + 600)
    );
    e.job_finished(id, 0).unwrap();
    let events = e.tick();
    assert_eq!(e.job(id).unwrap().state, JobState::Completed);
    assert!(
        events
            .iter()
            .any(|ev| matches!(ev, Event::Started { job, .. } if *job == wide))
    );
}

#[test]
fn purge_forgets_only_ended_jobs() {
    let (mut e, _clock) = replay_engine(false);
    let id = e.submit(job(1, 60)).unwrap();
    let waiting = e.submit(job(2, 60)).unwrap();
    e.tick();
    assert!(!e.purge(id), "a running job stays");
    assert!(!e.purge(waiting), "a pending job stays");
    e.job_finished(id, 0).unwrap();
    assert!(e.purge(id));
    assert!(e.job(id).is_none());
    assert_eq!(e.jobs().count(), 1);
}

#[test]
fn ticks_with_nothing_pending_call_no_policy() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (mut e, clock) = engine_with(
        cluster(2, 1),
        Box::new(CountingPriority(calls.clone())),
        sluice_engine::SchedulerKind::Backfill,
    );
    let id = e.submit(job(1, 60)).unwrap();
    e.tick();
    let after_start = calls.load(std::sync::atomic::Ordering::SeqCst);
    assert!(after_start >= 1);
    clock.advance(3600);
    e.job_finished(id, 0).unwrap();
    let events = e.tick();
    assert!(events.iter().any(|ev| matches!(ev, Event::Ended { .. })));
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), after_start);
}

#[test]
fn a_backfill_pass_that_could_start_nothing_is_skipped_only_when_asked() {
    for skip in [false, true] {
        let (mut e, clock) = replay_engine_with(|c| c.skip_backfill_without_fit = skip);
        let running = e.submit(job(2, 600)).unwrap();
        e.tick();
        let waiting = e.submit(job(1, 60)).unwrap();
        // Past bf_interval: a backfill pass is due, with no CPU free for the waiting job.
        clock.advance(31);
        e.tick();
        let planned = e.job(waiting).unwrap().start_time;
        assert_eq!(
            planned.is_none(),
            skip,
            "skip {skip}: planned start {planned:?}"
        );
        // Either way the job starts once the nodes come back.
        clock.advance(10);
        e.job_finished(running, 0).unwrap();
        let started = e
            .tick()
            .iter()
            .any(|ev| matches!(ev, Event::Started { job, .. } if *job == waiting));
        assert!(started, "skip {skip}");
    }
}

#[test]
fn a_backfill_pass_stops_where_no_later_job_could_start_only_when_asked() {
    let ranked = |nodes: u32, seconds: u64, site_factor: i64| JobSpec {
        site_factor,
        ..job(nodes, seconds)
    };
    for skip in [false, true] {
        let (mut e, clock) = replay_engine_on(3, |c| c.skip_backfill_without_fit = skip);
        e.submit(job(1, 600)).unwrap();
        e.tick();
        // In queue order: a 3-node job that must wait, a 1-node job that backfills before it,
        // then a 2-node job for which one CPU is left.
        let wide = e.submit(ranked(3, 600, 30)).unwrap();
        let short = e.submit(ranked(1, 60, 20)).unwrap();
        let pair = e.submit(ranked(2, 600, 10)).unwrap();
        clock.advance(31);
        e.tick();
        assert_eq!(
            e.job(short).unwrap().state,
            JobState::Running,
            "skip {skip}"
        );
        assert!(e.job(wide).unwrap().start_time.is_some(), "skip {skip}");
        let stats = e.last_backfill_stats();
        let pair_planned = e.job(pair).unwrap().start_time;
        if skip {
            assert_eq!(stats.stopped_by, Some("no later job fits"));
            assert_eq!(pair_planned, None);
        } else {
            assert_eq!(stats.stopped_by, None);
            assert!(pair_planned.is_some());
        }
    }
}

/// Priority = seconds since T0 plus the job's site factor, so a stored value tells when it was
/// calculated; counts its calls. Its one factor is that priority, unless the context skips it.
struct ClockPriority(Arc<AtomicUsize>);

impl PriorityPolicy for ClockPriority {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &sluice_policy::JobTable) -> Priorities {
        self.0.fetch_add(1, SeqCst);
        let priority: Vec<u32> = jobs
            .site_factor
            .iter()
            .map(|s| (ctx.now - T0 + s) as u32)
            .collect();
        let explained = Factor {
            name: "CLOCK".into(),
            values: priority.iter().map(|&p| f64::from(p)).collect(),
        };
        Priorities {
            factors: (!ctx.skip_factors)
                .then_some(explained)
                .into_iter()
                .collect(),
            priority,
        }
    }
}

#[test]
fn a_replay_asks_for_priorities_without_the_factors_only_sprio_shows() {
    for skip in [false, true] {
        let calls = Arc::new(AtomicUsize::new(0));
        let (mut e, _clock) =
            engine_configured(cluster(1, 1), Box::new(ClockPriority(calls)), |c| {
                c.skip_priority_factors = skip;
            });
        e.submit(job(1, 600)).unwrap();
        let waiting = e.submit(job(1, 600)).unwrap();
        e.tick();
        let rows = e.priority_rows();
        assert_eq!(rows.len(), 1, "skip {skip}");
        assert_eq!(rows[0].job_id, waiting);
        assert_eq!(rows[0].priority, e.job(waiting).unwrap().priority[0]);
        let factors: Vec<&str> = rows[0].factors.iter().map(|(n, _)| n.as_str()).collect();
        let want: &[&str] = if skip { &[] } else { &["CLOCK"] };
        assert_eq!(factors, want, "skip {skip}");
    }
}

fn deferring_engine(
    defer: bool,
    bf_min_prio_reserve: u64,
) -> (Engine, ManualClock, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let (e, clock) =
        engine_configured(cluster(2, 1), Box::new(ClockPriority(calls.clone())), |c| {
            c.defer_lone_priority = defer;
            c.params.bf_min_prio_reserve = bf_min_prio_reserve;
        });
    (e, clock, calls)
}

#[test]
fn a_lone_job_that_starts_at_once_costs_no_priority_call_only_when_asked() {
    for defer in [false, true] {
        let (mut e, _clock, calls) = deferring_engine(defer, 0);
        let id = e.submit(job(1, 600)).unwrap();
        e.tick();
        assert_eq!(e.job(id).unwrap().state, JobState::Running, "defer {defer}");
        assert_eq!(calls.load(SeqCst), usize::from(!defer), "defer {defer}");
        // Two jobs need an order: the call is made before the pass, deferring or not.
        let before = calls.load(SeqCst);
        e.submit(job(1, 600)).unwrap();
        e.submit(job(1, 600)).unwrap();
        e.tick();
        assert_eq!(calls.load(SeqCst), before + 1, "defer {defer}");
    }
    // A priority threshold for reservations reads the lone job's priority: no deferring.
    let (mut e, _clock, calls) = deferring_engine(true, 1);
    e.submit(job(1, 600)).unwrap();
    e.tick();
    assert_eq!(calls.load(SeqCst), 1);
}

#[test]
fn a_lone_job_left_pending_stores_the_priority_an_immediate_call_gives() {
    let mut stored = Vec::new();
    for defer in [false, true] {
        let (mut e, clock, calls) = deferring_engine(defer, 0);
        e.submit(job(1, 600)).unwrap();
        e.tick();
        clock.advance(100);
        let wide = e.submit(job(2, 600)).unwrap();
        let before = calls.load(SeqCst);
        e.tick();
        let waiting = e.job(wide).unwrap();
        assert_eq!(waiting.state, JobState::Pending, "defer {defer}");
        assert!(waiting.priority_time.is_some(), "defer {defer}");
        assert_eq!(calls.load(SeqCst), before + 1, "defer {defer}");
        stored.push(waiting.priority.clone());
        // Nothing new and no decay: the stored value serves the next pass.
        clock.advance(1);
        e.tick();
        assert_eq!(calls.load(SeqCst), before + 1, "defer {defer}");
    }
    assert_eq!(stored[0], vec![100]);
    assert_eq!(stored[0], stored[1]);
}

#[test]
fn a_job_without_account_is_charged_to_its_users_first_association() {
    use sluice_cluster::{AssocId, AssocKind, Association, Shares};
    let mut c = cluster(2, 1);
    // alice also has an association under chem, after the one under physics.
    let chem = c
        .associations
        .iter()
        .position(|a| a.kind == AssocKind::Account("chem".into()))
        .unwrap();
    let second = AssocId(c.associations.len() as u32);
    c.associations.push(Association {
        kind: AssocKind::User("alice".into()),
        parent: Some(AssocId(chem as u32)),
        children: vec![],
        shares: Shares::Raw(1),
        raw_usage: 0.0,
        priority: 0,
        default_qos: None,
        limits: Default::default(),
    });
    c.associations[chem].children.push(second);
    let first = c
        .associations
        .iter()
        .position(|a| a.kind == AssocKind::User("alice".into()))
        .unwrap();
    let (mut e, _clock) = engine_configured(c, Box::new(SiteFactorPriority), |config| {
        config.create_missing_associations = true;
    });
    let id = e.submit(job(1, 60)).unwrap();
    assert_eq!(e.job(id).unwrap().assoc, AssocId(first as u32));
    let with_account = e
        .submit(JobSpec {
            account: Some("chem".into()),
            ..job(1, 60)
        })
        .unwrap();
    assert_eq!(e.job(with_account).unwrap().assoc, second);
    // An unknown user gets one association, which the next job of that user finds.
    let before = e.cluster().associations.len();
    let dave = |e: &mut Engine| {
        e.submit(JobSpec {
            user: "dave".into(),
            ..job(1, 60)
        })
        .unwrap()
    };
    let (a, b) = (dave(&mut e), dave(&mut e));
    assert_eq!(e.cluster().associations.len(), before + 1);
    assert_eq!(e.job(a).unwrap().assoc, AssocId(before as u32));
    assert_eq!(e.job(b).unwrap().assoc, AssocId(before as u32));
}

/// Records the cluster version of every context it is asked with.
struct VersionLog(Arc<std::sync::Mutex<Vec<u64>>>);

impl PriorityPolicy for VersionLog {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &sluice_policy::JobTable) -> Priorities {
        self.0.lock().unwrap().push(ctx.cluster_version);
        SiteFactorPriority.compute(ctx, jobs)
    }
}

#[test]
fn the_cluster_version_stays_while_only_usage_moves_and_changes_with_a_new_association() {
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (mut e, clock) = engine_configured(cluster(2, 1), Box::new(VersionLog(log.clone())), |c| {
        c.create_missing_associations = true;
    });
    e.submit(job(1, 600)).unwrap();
    e.tick();
    clock.advance(400);
    e.submit(job(1, 600)).unwrap();
    e.tick();
    clock.advance(400);
    e.submit(JobSpec {
        min_nodes: 1,
        tasks: 1,
        time_limit: Some(600),
        ..JobSpec::new("zed")
    })
    .unwrap();
    e.tick();
    let versions = log.lock().unwrap().clone();
    assert_eq!(versions.len(), 3, "{versions:?}");
    assert_ne!(versions[0], 0);
    assert_eq!(
        versions[0], versions[1],
        "usage and clock are not the cluster"
    );
    assert_ne!(versions[1], versions[2], "zed's association is");
}

#[test]
fn between_recalculations_only_new_jobs_are_asked_when_the_host_says_so() {
    for alone in [false, true] {
        let calls = Arc::new(AtomicUsize::new(0));
        let (mut e, clock) =
            engine_configured(cluster(1, 1), Box::new(ClockPriority(calls.clone())), |c| {
                c.priority_new_jobs_alone = alone;
            });
        e.submit(job(1, 3_000)).unwrap();
        let first = e.submit(job(1, 600)).unwrap();
        e.tick();
        assert_eq!(e.job(first).unwrap().priority, vec![0]);
        clock.advance(100);
        let second = e.submit(job(1, 600)).unwrap();
        let before = calls.load(SeqCst);
        e.tick();
        assert_eq!(calls.load(SeqCst), before + 1);
        assert_eq!(e.job(second).unwrap().priority, vec![100], "alone {alone}");
        // Recalculating every job moves the first one's priority to now; asking the new
        // job alone leaves it where its own calculation put it, as slurmctld does.
        let kept = if alone { 0 } else { 100 };
        assert_eq!(e.job(first).unwrap().priority, vec![kept], "alone {alone}");
        // sprio lists both, each with the priority it holds.
        let mut rows: Vec<(u32, u32)> = e
            .priority_rows()
            .iter()
            .map(|r| (r.job_id, r.priority))
            .collect();
        rows.sort();
        assert_eq!(rows, vec![(first, kept), (second, 100)], "alone {alone}");
        // PriorityCalcPeriod later every job is recalculated either way.
        clock.advance(300);
        e.tick();
        assert_eq!(e.job(first).unwrap().priority, vec![400], "alone {alone}");
        assert_eq!(e.job(second).unwrap().priority, vec![400], "alone {alone}");
    }
}
