//! The real daemon binary swaps plugins on every trigger the issue names: a changed plugin file,
//! SIGHUP and `sluice reconfigure` (a broken configuration keeps the old one), and runs a
//! selection candidate as a shadow that never acts.

mod common;

use std::path::{Path, PathBuf};

use common::{Daemon, json_of, log_of, poll, sluice, state_dir, wait_for, wrap};
use sluice_api::{
    GenerationRow, Health, Job, JobCancelled, JobSubmitted, Plugins, Reconfigured, Role,
    ShadowReports, ShadowStarted, SubmitRequest,
};
use sluice_client::Client;

const DEMO_CLUSTER: &str = include_str!("../../cluster/src/demo/cluster.toml");
const DEMO_RESOURCES: &str = include_str!("../../cluster/src/demo/resources.yaml");

/// Writes the demo cluster into `dir` with `priority` as the priority plugin; returns its path.
fn cluster_file(dir: &Path, priority: &str) -> PathBuf {
    let text = DEMO_CLUSTER.replacen(
        "[plugins.priority]\nplugin = \"multifactor\"",
        &format!("[plugins.priority]\nplugin = {priority:?}"),
        1,
    );
    assert!(
        text.contains(&format!("plugin = {priority:?}")),
        "the demo cluster's priority section moved"
    );
    std::fs::write(dir.join("resources.yaml"), DEMO_RESOURCES).unwrap();
    let p = dir.join("cluster.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Replaces `to` with a copy of `from` in one rename, as a site would deploy it, so the watcher
/// never reads a half-written component.
fn install(from: &str, to: &Path) {
    let tmp = to.with_extension("tmp");
    std::fs::copy(from, &tmp).unwrap();
    std::fs::rename(&tmp, to).unwrap();
}

/// The active generation of `kind` as `plugin list --json` shows it.
fn active(dir: &Path, kind: &str) -> GenerationRow {
    let v: Plugins = json_of(&sluice(dir, &["plugin", "list", "--json"]));
    v.generations
        .iter()
        .find(|g| g.kind == kind && g.role == Role::Active)
        .cloned()
        .unwrap_or_else(|| panic!("no active {kind} generation in {v:?}"))
}

/// Whether generation `g` was loaded from `plugin` (bundled ones say so after the name).
fn from(g: &GenerationRow, plugin: &str) -> bool {
    g.origin == plugin || g.origin.starts_with(&format!("{plugin} ("))
}

#[test]
fn overwriting_the_configured_plugin_file_publishes_a_new_generation() {
    let scratch = state_dir("watch");
    let dir = scratch.path();
    let wasm = dir.join("priority.wasm");
    std::fs::copy(
        sluice_plugin_artifacts::component("sluice-plugin-priority-basic"),
        &wasm,
    )
    .unwrap();
    let cluster = cluster_file(&dir, wasm.to_str().unwrap());
    std::fs::write(dir.join("daemon.toml"), "watch_interval = 1\n").unwrap();
    let _d = Daemon::start_with(&dir, &["--config", cluster.to_str().unwrap()]);
    let before = active(&dir, "priority");
    assert_eq!(before.origin, wasm.to_str().unwrap(), "{before:?}");

    install(
        sluice_plugin_artifacts::component("sluice-plugin-priority-multifactor"),
        &wasm,
    );
    let after = poll(60, "a new priority generation", || {
        let g = active(&dir, "priority");
        (g.generation != before.generation).then_some(g)
    });
    assert_eq!(after.origin, wasm.to_str().unwrap(), "{after:?}");
    assert!(
        after.generation > before.generation,
        "{before:?} → {after:?}"
    );
    // The old generation stays for rollback.
    let list: Plugins = json_of(&sluice(&dir, &["plugin", "list", "--json"]));
    assert!(
        list.generations
            .iter()
            .any(|g| g.kind == "priority" && g.generation == before.generation),
        "{list:?}"
    );
}

#[test]
fn reconfigure_keeps_a_broken_configuration_out_and_stages_a_valid_change() {
    let scratch = state_dir("reconf");
    let dir = scratch.path();
    let cluster = cluster_file(&dir, "multifactor");
    let good = std::fs::read_to_string(&cluster).unwrap();
    let d = Daemon::start_with(&dir, &["--config", cluster.to_str().unwrap()]);
    let before = active(&dir, "priority");

    // Broken: `sluice reconfigure` fails and says why; nothing changes.
    std::fs::write(&cluster, format!("{good}\n[[nodes]\nname = \n")).unwrap();
    let out = sluice(&dir, &["reconfigure"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a broken cluster file was accepted");
    assert!(err.contains("kept the old configuration"), "{err}");
    assert!(
        err.contains("cluster.toml"),
        "the error names the file: {err}"
    );

    // Broken again, by SIGHUP: the daemon logs why and keeps running the old configuration.
    let hup = |pid: u32| assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGHUP) }, 0);
    hup(d.child.id());
    poll(30, "the SIGHUP refusal in the daemon's log", || {
        log_of(&dir)
            .contains("kept the old configuration")
            .then_some(())
    });
    Client::new(&dir).get::<Health>("/v1/health").unwrap();
    assert_eq!(active(&dir, "priority").generation, before.generation);

    // Valid, by `sluice reconfigure`: the new priority plugin is staged, then published.
    cluster_file(&dir, "basic");
    let v: Reconfigured = json_of(&sluice(&dir, &["reconfigure", "--json"]));
    assert!(
        v.plugins_staged
            .iter()
            .any(|s| s.contains("priority basic")),
        "{v:?}"
    );
    let basic = poll(60, "the basic priority generation", || {
        let g = active(&dir, "priority");
        from(&g, "basic").then_some(g)
    });
    assert_ne!(basic.generation, before.generation);

    // Valid, by SIGHUP: back to multifactor.
    cluster_file(&dir, "multifactor");
    hup(d.child.id());
    poll(
        60,
        "the multifactor priority generation after SIGHUP",
        || {
            let g = active(&dir, "priority");
            (from(&g, "multifactor") && g.generation != before.generation).then_some(g)
        },
    );
}

#[test]
fn a_priority_shadow_ranks_the_waiting_jobs_beside_the_active_policy() {
    let scratch = state_dir("prioshadow");
    let dir = scratch.path();
    let _d = Daemon::start_with(&dir, &[]);
    let basic = sluice_plugin_artifacts::component("sluice-plugin-priority-basic");
    let started: ShadowStarted = json_of(&sluice(
        &dir,
        &["plugin", "shadow", "priority", basic, "--json"],
    ));
    assert_eq!(started.shadow, "priority", "{started:?}");

    // Jobs that wait (begin in an hour) in two partitions' worth of rows at most.
    let mut c = Client::new(&dir);
    let begin = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + 3600;
    for i in 0..3 {
        c.post::<_, JobSubmitted>(
            "/v1/jobs",
            &SubmitRequest {
                begin: Some(begin),
                ..wrap(&format!("later-{i}"), "true", &dir)
            },
        )
        .unwrap();
    }
    let report = poll(30, "a priority shadow pass over the waiting jobs", || {
        let r: ShadowReports = c.get("/v1/shadow").unwrap();
        r.priority
            .as_ref()
            .is_some_and(|p| p.rows_compared >= 3)
            .then_some(r)
    });
    let p = report.priority.as_ref().unwrap();
    assert_eq!(p.faults, 0, "{p:?}");
    assert!(p.passes >= 1, "{p:?}");
    assert!(report.selection.is_none(), "{report:?}");
    let stopped: ShadowReports = json_of(&sluice(&dir, &["plugin", "shadow", "stop", "--json"]));
    assert_eq!(
        stopped.priority.as_ref().map(|s| &s.origin),
        Some(&p.origin),
        "{stopped:?}"
    );
}

#[test]
fn a_selection_shadow_reports_where_it_would_place_differently_and_never_acts() {
    let scratch = state_dir("selshadow");
    let dir = scratch.path();
    let _d = Daemon::start_with(&dir, &[]);
    let cons_tres = active(&dir, "selection");
    assert!(from(&cons_tres, "cons_tres"), "{cons_tres:?}");
    let linear = sluice_plugin_artifacts::component("sluice-plugin-select-linear");
    let started: ShadowStarted = json_of(&sluice(
        &dir,
        &["plugin", "shadow", "selection", linear, "--json"],
    ));
    assert_eq!(started.shadow, "selection", "{started:?}");
    let list: Plugins = json_of(&sluice(&dir, &["plugin", "list", "--json"]));
    assert_eq!(
        list.shadow.as_ref().map(|s| s.kind.as_str()),
        Some("selection"),
        "{list:?}"
    );

    // One-CPU jobs: cons_tres packs them onto a node, linear would want a whole idle node each.
    let mut c = Client::new(&dir);
    let ids: Vec<u64> = (0..4)
        .map(|i| {
            let req = wrap(&format!("small-{i}"), "sleep 30", &dir);
            c.post::<_, JobSubmitted>("/v1/jobs", &req).unwrap().job_id
        })
        .collect();
    let jobs: Vec<Job> = ids
        .iter()
        .map(|&id| wait_for(&dir, id, &["RUNNING"], 60))
        .collect();

    let report = poll(30, "a selection shadow pass with a difference", || {
        let r: ShadowReports = c.get("/v1/shadow").unwrap();
        r.selection
            .as_ref()
            .is_some_and(|s| s.placements_compared >= ids.len() as u64)
            .then_some(r)
    });
    let sel = report.selection.as_ref().unwrap();
    assert!(report.priority.is_none(), "{report:?}");
    assert_eq!(sel.faults, 0, "{sel:?}");
    let differing = sel.different_nodes + sel.not_placed;
    assert!(differing > 0, "linear placed like cons_tres: {sel:?}");
    assert!(sel.passes_differing > 0, "{sel:?}");

    // Never acted: every job runs where the active policy put it, not where the candidate would.
    assert!(!sel.recent.is_empty(), "{sel:?}");
    for d in &sel.recent {
        let (job_id, active_nodes, candidate_nodes) = d;
        let job = jobs
            .iter()
            .find(|j| j.job_id == *job_id)
            .unwrap_or_else(|| panic!("difference for an unknown job: {d:?}"));
        assert_eq!(&job.nodelist, active_nodes, "{job:?} vs {d:?}");
        assert_ne!(
            Some(&job.nodelist),
            candidate_nodes.as_ref(),
            "{job:?} vs {d:?}"
        );
    }

    // The same report for people.
    let text = sluice(&dir, &["plugin", "shadow", "report"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.starts_with("selection shadow: "), "{text}");
    assert!(text.contains("placements compared"), "{text}");

    let stopped: ShadowReports = json_of(&sluice(&dir, &["plugin", "shadow", "stop", "--json"]));
    assert_eq!(
        stopped.selection.as_ref().map(|s| &s.origin),
        Some(&sel.origin),
        "{stopped:?}"
    );
    for id in ids {
        let _ = c.post_empty::<JobCancelled>(&format!("/v1/jobs/{id}/cancel"));
    }
}

#[test]
fn a_broken_selection_candidate_is_refused_with_its_error() {
    let scratch = state_dir("selshadow-bad");
    let dir = scratch.path();
    let _d = Daemon::start_with(&dir, &[]);
    let bad = dir.join("broken.wasm");
    std::fs::write(&bad, b"\0asm not really").unwrap();
    let out = sluice(
        &dir,
        &["plugin", "shadow", "selection", bad.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a broken candidate was accepted");
    assert!(err.contains("broken.wasm"), "{err}");
    assert!(
        Client::new(&dir)
            .get::<ShadowReports>("/v1/shadow")
            .is_err(),
        "a shadow runs after a refused load"
    );
}
