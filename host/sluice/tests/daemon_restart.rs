//! A daemon restart is invisible to running jobs (issue 33, item 8): across a graceful SIGTERM
//! and a kill -9, a running job keeps running under its supervisor and runs exactly once, with
//! `Restarts=0`; a job that ended while the daemon was away has its exit code recorded after the
//! restart; a job whose processes are gone without a recorded end is requeued (its lost run kept
//! in the accounting store) or failed.

use std::path::Path;
use std::time::Duration;

use sluice_api::{AcctAnswer, Job, JobSubmitted};
use sluice_client::Client;

mod common;

use common::{Daemon, json_of, poll, run_dir, sluice, state_dir, wait_for, wrap};

/// A job that appends a line to `count-NAME` when it starts, then waits for `go-NAME` to exist
/// and exits with `code`: its runs are counted and its end is the test's to decide.
fn counted(dir: &Path, name: &str, code: i32) -> u64 {
    let cmd = format!(
        "echo run >> {d}/count-{name}\nwhile [ ! -e {d}/go-{name} ]; do sleep 0.1; done\nexit {code}",
        d = dir.display()
    );
    Client::new(dir)
        .post::<_, JobSubmitted>("/v1/jobs", &wrap(name, &cmd, dir))
        .unwrap()
        .job_id
}

fn runs(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join(format!("count-{name}")))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn job(dir: &Path, id: u64) -> Job {
    Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap()
}

/// Lets job `name` end, and waits until its supervisor has recorded the end on disk.
fn release(dir: &Path, name: &str, id: u64) {
    std::fs::write(dir.join(format!("go-{name}")), "").unwrap();
    let status = run_dir(dir, id).join("status");
    poll(30, &format!("{} to exist", status.display()), || {
        status.exists().then_some(())
    });
}

fn restart_is_invisible(stop: impl Fn(Daemon), how: &str) {
    let scratch = state_dir(&format!("restart-{how}"));
    let dir = scratch.path();
    let daemon = Daemon::start(dir);
    let through = counted(dir, "through", 3);
    let while_away = counted(dir, "away", 5);
    for id in [through, while_away] {
        wait_for(dir, id, &["RUNNING"], 30);
    }
    for name in ["through", "away"] {
        poll(30, &format!("job {name} to start"), || {
            (runs(dir, name) == 1).then_some(())
        });
    }

    stop(daemon);
    // While the daemon is away, one job ends; the other keeps running.
    release(dir, "away", while_away);
    std::thread::sleep(Duration::from_millis(300));
    let daemon = Daemon::start(dir);

    let j = job(dir, through);
    assert_eq!(j.state, "RUNNING", "after {how}: {j:?}");
    assert_eq!(j.restarts, 0, "after {how}: {j:?}");
    let j = job(dir, while_away);
    assert_eq!(j.state, "FAILED", "after {how}: {j:?}");
    assert_eq!(j.exit_code, Some(5), "after {how}: {j:?}");
    assert_eq!(j.restarts, 0, "after {how}: {j:?}");

    // A second restart of the same kind, then the job that ran through both ends.
    let daemon = {
        stop(daemon);
        Daemon::start(dir)
    };
    assert_eq!(job(dir, through).state, "RUNNING");
    std::fs::write(dir.join("go-through"), "").unwrap();
    let j = wait_for(dir, through, &["FAILED", "COMPLETED"], 30);
    assert_eq!(j.exit_code, Some(3), "after {how}: {j:?}");
    assert_eq!(j.restarts, 0, "after {how}: {j:?}");
    // Give a duplicate run, if there were one, time to show.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(runs(dir, "through"), 1, "after {how}: ran more than once");
    assert_eq!(runs(dir, "away"), 1, "after {how}: ran more than once");
    drop(daemon);
}

#[test]
fn running_jobs_survive_a_graceful_restart_and_run_once() {
    restart_is_invisible(Daemon::terminate, "sigterm");
}

#[test]
fn running_jobs_survive_kill_9_and_run_once() {
    restart_is_invisible(Daemon::kill9, "kill9");
}

/// Kills the supervisor and the job of run 0 of `id`, as a node reboot would, and waits until
/// the supervisor's lock is free.
fn vanish(dir: &Path, id: u64) {
    let run = run_dir(dir, id);
    let pids: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("pids")).unwrap()).unwrap();
    let supervisor = pids["supervisor"].as_i64().unwrap() as i32;
    let group = pids["job"].as_i64().unwrap() as i32;
    // SAFETY: SIGKILL to the supervisor and the job's process group this test started.
    unsafe {
        libc::kill(supervisor, libc::SIGKILL);
        libc::kill(-group, libc::SIGKILL);
    }
    poll(10, "the supervisor to be gone", || {
        // The run's directory is its supervisor's lock.
        let f = std::fs::File::open(&run).unwrap();
        // SAFETY: a try-lock on a descriptor this test owns.
        let free = unsafe {
            use std::os::fd::AsRawFd;
            libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0
        };
        free.then_some(())
    });
}

#[test]
fn a_job_whose_processes_vanished_without_an_end_is_requeued_and_runs_again() {
    let scratch = state_dir("restart-vanished");
    let dir = scratch.path();
    let daemon = Daemon::start(dir);
    let id = counted(dir, "lost", 0);
    wait_for(dir, id, &["RUNNING"], 30);
    poll(30, "job lost to start", || {
        (runs(dir, "lost") == 1).then_some(())
    });
    daemon.kill9();
    vanish(dir, id);
    let _daemon = Daemon::start(dir);
    // Requeued (the default), so it runs a second time, as run 1.
    poll(30, "job lost to run again", || {
        (runs(dir, "lost") == 2).then_some(())
    });
    std::fs::write(dir.join("go-lost"), "").unwrap();
    let j = wait_for(dir, id, &["COMPLETED"], 30);
    assert_eq!(j.restarts, 1, "{j:?}");
    // The accounting store keeps the lost run too: sacct -D shows it, REQUEUED, before the
    // last; without -D only the last.
    let ids = id.to_string();
    let acct = |extra: &[&str]| {
        let mut args = vec!["acct", "--json", "-j", &ids];
        args.extend_from_slice(extra);
        json_of::<AcctAnswer>(&sluice(dir, &args)).jobs
    };
    let every = poll(30, "both runs in the accounting store", || {
        Some(acct(&["-D"])).filter(|runs| runs.len() == 2)
    });
    let seen: Vec<(u32, &str)> = every
        .iter()
        .map(|r| (r.restarts, r.state.as_str()))
        .collect();
    assert_eq!(seen, vec![(0, "REQUEUED"), (1, "COMPLETED")]);
    let last = acct(&[]);
    assert_eq!((last.len(), last[0].restarts), (1, 1));
}

#[test]
fn a_vanished_job_that_may_not_be_requeued_ends_node_fail() {
    let scratch = state_dir("restart-no-requeue");
    let dir = scratch.path();
    let daemon = Daemon::start(dir);
    let cmd = format!("echo run >> {}/count-once\nsleep 300", dir.display());
    let mut req = wrap("once", &cmd, dir);
    req.requeue = Some(false);
    let id = Client::new(dir)
        .post::<_, JobSubmitted>("/v1/jobs", &req)
        .unwrap()
        .job_id;
    wait_for(dir, id, &["RUNNING"], 30);
    poll(30, "job once to start", || {
        (runs(dir, "once") == 1).then_some(())
    });
    daemon.terminate();
    vanish(dir, id);
    let _daemon = Daemon::start(dir);
    let j = job(dir, id);
    assert_eq!(j.state, "NODE_FAIL", "{j:?}");
    assert_eq!(j.restarts, 0, "{j:?}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(runs(dir, "once"), 1, "it ran again");
}

#[test]
fn the_supervisor_ends_a_job_past_its_time_limit_while_the_daemon_is_away() {
    let scratch = state_dir("restart-limit");
    let dir = scratch.path();
    std::fs::write(dir.join("daemon.toml"), "kill_wait = 1\n").unwrap();
    let daemon = Daemon::start(dir);
    let mut req = wrap("overrun", "trap '' TERM; sleep 300", dir);
    req.time_limit = Some(2);
    let id = Client::new(dir)
        .post::<_, JobSubmitted>("/v1/jobs", &req)
        .unwrap()
        .job_id;
    wait_for(dir, id, &["RUNNING"], 30);
    let run = run_dir(dir, id);
    poll(30, "the job's process to start", || {
        run.join("pids").exists().then_some(())
    });
    daemon.kill9();
    // Past the limit, its slack and KillWait, with no daemon to end it.
    let status = run_dir(dir, id).join("status");
    poll(60, "the supervisor to end the job", || {
        status.exists().then_some(())
    });
    let _daemon = Daemon::start(dir);
    let j = job(dir, id);
    assert_eq!(j.state, "TIMEOUT", "{j:?}");
    assert_eq!(j.reason, "TimeLimit", "{j:?}");
    assert_eq!(
        j.signal,
        Some(9),
        "SIGTERM was ignored, so SIGKILL ended it: {j:?}"
    );
}

#[test]
fn a_job_journaled_as_started_but_never_launched_starts_after_the_restart_as_its_first_run() {
    let scratch = state_dir("restart-unlaunched");
    let dir = scratch.path();
    let daemon = Daemon::start(dir);
    let id = counted(dir, "late", 4);
    wait_for(dir, id, &["RUNNING"], 30);
    poll(30, "job late to start", || {
        (runs(dir, "late") == 1).then_some(())
    });
    daemon.kill9();
    // As if the daemon had stopped between journaling the start and launching the supervisor:
    // no process, no spool.
    vanish(dir, id);
    std::fs::remove_dir_all(run_dir(dir, id)).unwrap();
    let _daemon = Daemon::start(dir);
    poll(30, "job late to be launched", || {
        (runs(dir, "late") == 2).then_some(())
    });
    let j = job(dir, id);
    assert_eq!(j.state, "RUNNING", "{j:?}");
    assert_eq!(j.restarts, 0, "{j:?}");
    std::fs::write(dir.join("go-late"), "").unwrap();
    let j = wait_for(dir, id, &["FAILED"], 30);
    assert_eq!(j.exit_code, Some(4), "{j:?}");
    assert_eq!(j.restarts, 0, "{j:?}");
}

/// The active generation of `kind`'s origin, and its previous one's.
fn generations(dir: &Path, kind: &str) -> (String, Option<String>) {
    let plugins: sluice_api::Plugins = Client::new(dir).get("/v1/plugins").unwrap();
    let of = |role| {
        plugins
            .generations
            .iter()
            .find(|g| g.kind == kind && g.role == role)
            .map(|g| g.origin.clone())
    };
    (
        of(sluice_api::Role::Active).unwrap(),
        of(sluice_api::Role::Previous),
    )
}

/// Issue 35: a policy swapped in live, a rollback, and a running shadow survive restarts (they
/// were journaled), and the daemon says what it restored.
#[test]
fn swaps_rollbacks_and_shadows_survive_a_restart() {
    use sluice_api::{PluginFile, Plugins, RolledBack, ShadowStarted, Swapped};
    let scratch = state_dir("plugins-restart");
    let dir = scratch.path();
    let daemon = Daemon::start(dir);
    let mut c = Client::new(dir);
    let swap = PluginFile {
        file: "basic".into(),
        ..PluginFile::default()
    };
    let _: Swapped = c.post("/v1/plugins/priority/swap", &swap).unwrap();
    let shadow = PluginFile {
        file: "linear".into(),
        ..PluginFile::default()
    };
    let _: ShadowStarted = c.post("/v1/plugins/selection/shadow", &shadow).unwrap();
    let (active, previous) = generations(dir, "priority");
    assert!(active.contains("basic"), "{active}");
    assert!(
        previous
            .as_deref()
            .is_some_and(|p| p.contains("multifactor"))
    );

    daemon.kill9();
    let daemon = Daemon::start_with(dir, &[]);
    let (active, previous) = generations(dir, "priority");
    assert!(active.contains("basic"), "after a restart: {active}");
    assert!(
        previous
            .as_deref()
            .is_some_and(|p| p.contains("multifactor")),
        "a rollback after the restart goes where it went before: {previous:?}"
    );
    let plugins: Plugins = poll(30, "the shadow running again", || {
        let p: Plugins = Client::new(dir).get("/v1/plugins").unwrap();
        (!p.shadows.is_empty()).then_some(p)
    });
    assert!(plugins.shadows[0].origin.contains("linear"), "{plugins:?}");
    let log = common::log_of(dir);
    assert!(
        log.contains("restored") && log.contains("priority: generation"),
        "the daemon says what it restored:\n{log}"
    );

    let _: RolledBack = Client::new(dir)
        .post_empty("/v1/plugins/priority/rollback")
        .unwrap();
    daemon.terminate();
    let _daemon = Daemon::start_with(dir, &[]);
    let (active, previous) = generations(dir, "priority");
    assert!(
        active.contains("multifactor"),
        "the rollback held: {active}"
    );
    assert!(previous.is_some_and(|p| p.contains("basic")));
}
