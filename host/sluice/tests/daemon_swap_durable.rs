//! A plugin swap or shadow is acknowledged only once its journal record is on disk: the daemon
//! is killed with SIGKILL the moment the answer arrives, with a queue long enough that the pass
//! after a swap keeps the driver busy, and the restarted daemon has the swap and the shadow.

mod common;

use std::path::Path;

use common::{Daemon, json_of, poll, sluice, state_dir};
use sluice_api::{JobSubmitted, Plugins, Role, ShadowReports, SubmitRequest};
use sluice_client::Client;

/// Queues `n` jobs that wait an hour, so every pass (and the recalculation a priority swap
/// asks for) ranks them all.
fn queue_waiting_jobs(_daemon: &Daemon, dir: &Path, n: usize) {
    let begin = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + 3600;
    let mut c = Client::new(dir);
    for i in 0..n {
        c.post::<_, JobSubmitted>(
            "/v1/jobs",
            &SubmitRequest {
                begin: Some(begin),
                ..common::wrap(&format!("later-{i}"), "true", dir)
            },
        )
        .unwrap();
    }
}

fn active_priority(dir: &Path) -> String {
    let list: Plugins = json_of(&sluice(dir, &["plugin", "list", "--json"]));
    list.generations
        .iter()
        .find(|g| g.kind == "priority" && g.role == Role::Active)
        .map(|g| g.origin.clone())
        .unwrap_or_default()
}

/// Rounds of answer-then-SIGKILL per test: the window a premature answer leaves is a few
/// milliseconds of a pass, so one round may miss it where three rarely all do.
const ROUNDS: usize = 3;

#[test]
fn a_swap_answered_is_on_disk_when_the_daemon_is_killed_at_once() {
    let scratch = state_dir("swap-durable");
    let dir = scratch.path();
    queue_waiting_jobs(&Daemon::start(dir), dir, 2000);
    for round in 0..ROUNDS {
        let (name, file) = if round % 2 == 0 {
            ("priority_basic", "sluice-plugin-priority-basic")
        } else {
            ("priority_multifactor", "sluice-plugin-priority-multifactor")
        };
        let daemon = Daemon::start(dir);
        let file = sluice_plugin_artifacts::component(file);
        let swapped = sluice(dir, &["plugin", "swap", "priority", file]);
        daemon.kill9();
        assert!(
            swapped.status.success(),
            "{}",
            String::from_utf8_lossy(&swapped.stderr)
        );
        let _again = Daemon::start(dir);
        let active = active_priority(dir);
        assert!(active.contains(name), "round {round}: {active}");
    }
}

/// Waits for the priority shadow a restart loads again off the driver thread.
fn shadow_back(dir: &Path, round: usize) {
    poll(
        30,
        &format!("round {round}: the shadow back after a restart"),
        || {
            let out = sluice(dir, &["plugin", "shadow", "report", "--json"]);
            let report: Option<ShadowReports> = serde_json::from_slice(&out.stdout).ok();
            report.filter(|r| r.priority.is_some())
        },
    );
}

#[test]
fn a_shadow_answered_is_on_disk_when_the_daemon_is_killed_at_once() {
    let scratch = state_dir("shadow-durable");
    let dir = scratch.path();
    queue_waiting_jobs(&Daemon::start(dir), dir, 2000);
    let basic = sluice_plugin_artifacts::component("sluice-plugin-priority-basic");
    for round in 0..ROUNDS {
        let daemon = Daemon::start(dir);
        if round > 0 {
            // The journaled shadow is loaded again off the driver thread: stop it once back.
            shadow_back(dir, round);
            let stopped = sluice(dir, &["plugin", "shadow", "stop"]);
            assert!(
                stopped.status.success(),
                "{}",
                String::from_utf8_lossy(&stopped.stderr)
            );
        }
        let started = sluice(dir, &["plugin", "shadow", "priority", basic]);
        daemon.kill9();
        assert!(
            started.status.success(),
            "{}",
            String::from_utf8_lossy(&started.stderr)
        );
        let _again = Daemon::start(dir);
        shadow_back(dir, round);
    }
}
