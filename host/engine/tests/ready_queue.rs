//! The queue kept between passes decides as sorting every pending job at each pass does.
//!
//! Two engines get the same random stream of submissions (some held, delayed, dependent or in
//! two partitions), holds, releases, cancellations, ends and requeues; one keeps its queue
//! between passes, the other builds it at every pass. Every tick must give the same events,
//! and every job the same state, reason and priority. Debug builds also check, at each pass
//! from the kept queue, that it holds what a full build would.

mod common;

use common::*;
use proptest::prelude::*;
use sluice_engine::{Clock, Engine, Event, Hold, JobSpec, JobState, ManualClock, Reason};
use sluice_plugin_priority_multifactor::Multifactor;
use sluice_policy::{FromSettings, SettingValue, Settings};

/// A job to submit.
#[derive(Clone, Debug)]
struct Submission {
    user: usize,
    nodes: u32,
    prio: i64,
    begin: Option<i64>,
    /// An earlier submission this one waits for (afterok when true, else afterany).
    after: Option<(usize, bool)>,
    held: bool,
    both_partitions: bool,
}

#[derive(Clone, Debug)]
enum Step {
    Submit(Submission),
    Hold(usize),
    Release(usize),
    Cancel(usize),
    Finish(usize, i32),
    Requeue(usize),
    Advance(i64),
    Tick,
}

fn step() -> impl Strategy<Value = Step> {
    let submit = (
        (0usize..3, 1u32..4, 0i64..50),
        (
            proptest::option::of(1i64..400),
            proptest::option::of((0usize..60, any::<bool>())),
            prop::bool::weighted(0.15),
            prop::bool::weighted(0.2),
        ),
    )
        .prop_map(
            |((user, nodes, prio), (begin, after, held, both_partitions))| {
                Step::Submit(Submission {
                    user,
                    nodes,
                    prio,
                    begin,
                    after,
                    held,
                    both_partitions,
                })
            },
        );
    prop_oneof![
        6 => submit,
        1 => (0usize..60).prop_map(Step::Hold),
        1 => (0usize..60).prop_map(Step::Release),
        1 => (0usize..60).prop_map(Step::Cancel),
        3 => ((0usize..60), 0i32..2).prop_map(|(k, code)| Step::Finish(k, code)),
        1 => (0usize..60).prop_map(Step::Requeue),
        2 => (1i64..200).prop_map(Step::Advance),
        4 => Just(Step::Tick),
    ]
}

/// An engine as the daemon configures its queue: new jobs' priorities calculated alone, with
/// the queue kept between passes or not.
fn twin(keep: bool) -> (Engine, ManualClock) {
    let c = with_debug_partition(cluster(6, 2), 3, 1);
    // Priorities that move with age and differ by site factor, so that kept and recalculated
    // priorities would tell apart a queue ordered from stale ones.
    let settings = Settings::default()
        .with("weight.age", SettingValue::Integer(1000))
        .with("weight.fairshare", SettingValue::Integer(500));
    let priority = Box::new(Multifactor::from_settings(&settings));
    let (e, clock) = engine_configured(c, priority, |c| {
        c.priority_new_jobs_alone = true;
        c.keep_ready_queue = keep;
        c.params.default_queue_depth = 4;
        c.params.bf_interval = 120;
        c.params.sched_interval = 300;
    });
    (e, clock)
}

/// Applies `step` to `e`; `ids` are the engine's ids of the submissions so far.
fn apply(e: &mut Engine, clock: &ManualClock, ids: &mut Vec<u32>, step: &Step) -> Vec<Event> {
    let pick = |k: &usize| (!ids.is_empty()).then(|| ids[k % ids.len()]);
    match step {
        Step::Submit(s) => {
            let dependencies = s
                .after
                .and_then(|(k, ok)| pick(&k).map(|job| after(job, ok)))
                .into_iter()
                .collect();
            let spec = JobSpec {
                min_nodes: s.nodes,
                tasks: s.nodes * 2,
                time_limit: Some(600),
                site_factor: s.prio,
                begin_time: s.begin.map(|b| clock.now() + b),
                dependencies,
                hold: s.held,
                partitions: if s.both_partitions {
                    vec!["debug".into(), "batch".into()]
                } else {
                    vec![]
                },
                ..JobSpec::new(["alice", "bob", "carol"][s.user])
            };
            if let Ok(id) = e.submit(spec) {
                ids.push(id);
            }
        }
        Step::Hold(k) => {
            if let Some(id) = pick(k) {
                let _ = e.hold(id, Hold::User);
            }
        }
        Step::Release(k) => {
            if let Some(id) = pick(k) {
                let _ = e.release(id);
            }
        }
        Step::Cancel(k) => {
            if let Some(id) = pick(k) {
                let _ = e.cancel(id);
            }
        }
        Step::Finish(k, code) => {
            if let Some(id) = pick(k) {
                let _ = e.job_finished(id, *code);
            }
        }
        Step::Requeue(k) => {
            if let Some(id) = pick(k) {
                let _ = e.requeue(id);
            }
        }
        Step::Advance(s) => clock.advance(*s),
        Step::Tick => return e.tick(),
    }
    Vec::new()
}

/// What a job shows: state, reason and priorities.
fn shown(e: &Engine, id: u32) -> Option<(JobState, Reason, Vec<u32>)> {
    e.job(id).map(|j| (j.state, j.reason, j.priority.clone()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn keeping_the_queue_between_passes_changes_no_decision(
        steps in proptest::collection::vec(step(), 20..160)
    ) {
        let (mut kept, kept_clock) = twin(true);
        let (mut built, built_clock) = twin(false);
        let (mut kept_ids, mut built_ids) = (Vec::new(), Vec::new());
        for (n, s) in steps.iter().enumerate() {
            let a = apply(&mut kept, &kept_clock, &mut kept_ids, s);
            let b = apply(&mut built, &built_clock, &mut built_ids, s);
            prop_assert_eq!(&a, &b, "events of step {} ({:?})", n, s);
            prop_assert_eq!(&kept_ids, &built_ids);
            for &id in &kept_ids {
                prop_assert_eq!(shown(&kept, id), shown(&built, id), "job {} after step {}", id, n);
            }
        }
    }
}

#[test]
fn an_event_pass_from_the_kept_queue_sorts_nothing_it_did_not_see_change() {
    // The kept queue is used at all: with a thousand jobs waiting behind a full cluster, a
    // pass after one more submission reports the whole queue and looks at the depth only.
    let (mut e, clock) = twin(true);
    e.submit(JobSpec {
        min_nodes: 6,
        tasks: 12,
        time_limit: Some(600),
        ..JobSpec::new("alice")
    })
    .unwrap();
    e.tick();
    for i in 0..1000 {
        e.submit(JobSpec {
            min_nodes: 1,
            tasks: 1,
            time_limit: Some(600),
            site_factor: i % 7,
            ..JobSpec::new("bob")
        })
        .unwrap();
    }
    e.tick();
    clock.advance(1);
    e.submit(JobSpec {
        min_nodes: 1,
        tasks: 1,
        time_limit: Some(600),
        ..JobSpec::new("carol")
    })
    .unwrap();
    e.tick();
    let stats = e.last_main_stats();
    assert_eq!(stats.queued, 1001);
    assert_eq!(stats.stopped_by, Some("default_queue_depth"));
    assert_eq!(stats.tested, 1);
}
