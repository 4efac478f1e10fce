//! What a job's owner may change and what another user may read, attacked by local users of a
//! root daemon (issue 46, findings 4 and 8): an owner neither replaces nor lifts an admin's
//! hold, raises a pending job's limit with `UNLIMITED` or `0` past its partition's MaxTime, nor
//! reads another user's jobs under `private_data` in any case and through any view. Each test
//! creates its unprivileged accounts and skips, saying so, when not root.

mod common;

use std::path::Path;

use common::unprivileged::TestUser;
use common::{Daemon, sluice, state_dir, wait_for};

/// The job's pending reason and time limit as `sluice show job --json` gives them to root.
fn show(dir: &Path, id: u64) -> serde_json::Value {
    let out = sluice(dir, &["show", "job", &id.to_string(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A pending job of `user` that stays pending for an hour: `ARGS…` added to its submission.
fn later_job(user: &TestUser, dir: &Path, args: &[&str]) -> u64 {
    let mut all = vec!["--begin", "now+1hour", "--wrap", "sleep 1"];
    all.extend_from_slice(args);
    user.submit(dir, &all)
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_owner_neither_replaces_nor_lifts_an_admins_hold() {
    let Some(user) = TestUser::create("ah") else {
        return;
    };
    let scratch = state_dir("admin-hold");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let id = later_job(&user, dir, &[]);
    let held = sluice(dir, &["hold", &id.to_string()]);
    assert!(held.status.success(), "{}", stderr(&held));
    assert_eq!(wait_for(dir, id, &["PENDING"], 10).reason, "JobHeldAdmin");

    let own_hold = user.sluice(dir, &["hold", &id.to_string()]);
    assert!(!own_hold.status.success(), "the owner's hold was taken");
    assert!(
        stderr(&own_hold).contains("held by an admin"),
        "{}",
        stderr(&own_hold)
    );
    let release = user.sluice(dir, &["release", &id.to_string()]);
    assert!(
        !release.status.success(),
        "the owner released an admin's hold"
    );
    // Priority=0 is scontrol's other spelling of a hold.
    let zero = user.sluice(dir, &["update", &format!("JobId={id}"), "Priority=0"]);
    assert!(
        !zero.status.success(),
        "Priority=0 replaced the admin's hold"
    );
    assert_eq!(wait_for(dir, id, &["PENDING"], 10).reason, "JobHeldAdmin");

    let admin_release = sluice(dir, &["release", &id.to_string()]);
    assert!(admin_release.status.success(), "{}", stderr(&admin_release));
    assert_ne!(wait_for(dir, id, &["PENDING"], 10).reason, "JobHeldAdmin");
}

#[test]
fn an_owner_raises_a_pending_limit_only_within_the_partitions_max_time() {
    let Some(user) = TestUser::create("tl") else {
        return;
    };
    let scratch = state_dir("time-limit");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    // The demo's default partition has MaxTime=2-00:00:00.
    let id = later_job(&user, dir, &["-t", "10"]);
    let limit = |dir: &Path| show(dir, id)["time_limit"].clone();
    let before = limit(dir);
    assert_eq!(before, serde_json::json!(600), "{}", show(dir, id));
    for past in ["UNLIMITED", "0", "3-00:00:00"] {
        let out = user.sluice(
            dir,
            &[
                "update",
                &format!("JobId={id}"),
                &format!("TimeLimit={past}"),
            ],
        );
        assert!(
            !out.status.success(),
            "TimeLimit={past} was taken from the owner"
        );
        assert!(stderr(&out).contains("access denied"), "{}", stderr(&out));
        assert_eq!(limit(dir), before, "TimeLimit={past}");
    }
    // Within MaxTime a pending job's owner may raise it, as Slurm allows.
    let within = user.sluice(dir, &["update", &format!("JobId={id}"), "TimeLimit=60"]);
    assert!(within.status.success(), "{}", stderr(&within));
    assert_eq!(limit(dir), serde_json::json!(3600));
    // An admin may give it the partition's limit back.
    let admin = sluice(
        dir,
        &["update", &format!("JobId={id}"), "TimeLimit=UNLIMITED"],
    );
    assert!(admin.status.success(), "{}", stderr(&admin));
    assert_eq!(limit(dir), serde_json::json!(2 * 86_400));
}

/// Another user's jobs under `private_data` spelt `spelling` in daemon.toml: absent from their
/// squeue, `show job` and sprio, as if unknown; their owner and root still see them.
fn private_jobs_stay_private(spelling: Option<&str>, tag: &str) {
    let (Some(owner), Some(other)) = (
        TestUser::create(&format!("p{tag}")),
        TestUser::create(&format!("q{tag}")),
    ) else {
        return;
    };
    let scratch = state_dir(&format!("private-{tag}"));
    let dir = scratch.path();
    if let Some(words) = spelling {
        std::fs::write(
            dir.join("daemon.toml"),
            format!("private_data = [{words}]\n"),
        )
        .unwrap();
    }
    let _d = Daemon::start(dir);
    let id = owner.submit(dir, &["-J", "secret-name", "--wrap", "sleep 300"]);
    let text = id.to_string();

    let queue = other.sluice(dir, &["queue", "-t", "all", "-o", "%i %j %u"]);
    assert!(queue.status.success(), "{}", stderr(&queue));
    let seen = String::from_utf8_lossy(&queue.stdout).into_owned();
    assert!(
        !seen.contains("secret-name") && !seen.contains(&text),
        "{seen}"
    );
    let show = other.sluice(dir, &["show", "job", &text]);
    assert!(!show.status.success(), "another user read job {id}");
    assert!(!String::from_utf8_lossy(&show.stdout).contains("secret-name"));
    assert!(
        stderr(&show).to_lowercase().contains("invalid job id"),
        "{}",
        stderr(&show)
    );
    let prio = other.sluice(dir, &["prio", "--json"]);
    assert!(prio.status.success(), "{}", stderr(&prio));
    assert!(!String::from_utf8_lossy(&prio.stdout).contains(&owner.name));

    let own = owner.sluice(dir, &["queue", "-t", "all", "-o", "%i %j"]);
    assert!(String::from_utf8_lossy(&own.stdout).contains("secret-name"));
    let root = sluice(dir, &["queue", "-t", "all", "-o", "%i %j"]);
    assert!(String::from_utf8_lossy(&root.stdout).contains("secret-name"));
    let _ = sluice(dir, &["cancel", &text]);
    common::end_jobs(dir);
}

#[test]
fn private_jobs_are_private_in_every_view_whatever_the_case_of_the_word() {
    private_jobs_stay_private(Some("\"Jobs\""), "c");
}

#[test]
fn private_jobs_are_the_default_in_every_live_view() {
    private_jobs_stay_private(None, "d");
}
