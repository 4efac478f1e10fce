//! Issue 35, logs and metrics: a busy daemon's `GET /metrics` parses with the Prometheus
//! client library's own OpenMetrics parser and counts what happened; `sluice sdiag` reports it
//! in sdiag's layout; `--log-file` holds slurmctld-style lines for submissions, starts, ends and
//! node updates, without colour codes.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Daemon, end_jobs, poll, sluice, state_dir, wrap};
use sluice_api::{JobSubmitted, NodeRow};
use sluice_client::Client;

/// A Python with the official Prometheus client library (its OpenMetrics parser), installed
/// once into the target directory from PyPI.
fn prometheus_python() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("prometheus-venv");
    let python = dir.join("bin/python3");
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    let lock = std::fs::File::create(dir.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    if !dir.join(".installed").exists() {
        let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
        assert!(
            ok(Command::new("python3").args(["-m", "venv"]).arg(&dir)),
            "python3 -m venv"
        );
        assert!(
            ok(Command::new(dir.join("bin/pip")).args([
                "install",
                "-q",
                "prometheus-client==0.21.1"
            ])),
            "pip install prometheus-client"
        );
        std::fs::write(dir.join(".installed"), "").unwrap();
    }
    python
}

/// The scrape parsed by `prometheus_client.openmetrics.parser`: each sample's name and
/// labels (as `name{k="v",…}`, labels sorted) with its value. The parser refuses anything the
/// format does not allow (a missing `# EOF`, a counter without `_total`, buckets out of order).
fn parse(scrape: &str) -> BTreeMap<String, f64> {
    let script = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
        out[s.name + ("{" + labels + "}" if labels else "")] = s.value
print(json.dumps(out))
"#;
    let out = common::output_with_stdin(
        Command::new(prometheus_python()).args(["-c", script]),
        scrape.as_bytes(),
    );
    assert!(
        out.status.success(),
        "the OpenMetrics parser refused the scrape: {}\n{scrape}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_busy_daemon_is_observable_through_metrics_sdiag_and_its_log() {
    let scratch = state_dir("observe");
    let dir = scratch.path();
    let log = dir.join("slurmctld.log");
    let daemon = Daemon::start_with(
        dir,
        &["--log-file", log.to_str().unwrap(), "--log-level", "info"],
    );
    let mut c = Client::new(dir);
    for (name, cmd) in [("ok1", "true"), ("ok2", "true"), ("bad", "exit 3")] {
        c.post::<_, JobSubmitted>("/v1/jobs", &wrap(name, cmd, dir))
            .unwrap();
    }
    let nodes: Vec<NodeRow> = c.get("/v1/nodes").unwrap();
    let node = nodes[nodes.len() - 1].name.clone();
    let out = sluice(
        dir,
        &[
            "update",
            &format!("NodeName={node}"),
            "State=DRAIN",
            "Reason=disk",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The priority plugin's answers so far, over its generations.
    let answered = |s: &BTreeMap<String, f64>| -> f64 {
        s.iter()
            .filter(|(k, _)| {
                k.starts_with("sluice_plugin_answers_total{") && k.contains("priority")
            })
            .map(|(_, v)| v)
            .sum()
    };
    // Wait for the three ends and for the driver's refresh of the plugin and job series (at
    // most a second after a change).
    let samples = poll(
        60,
        "three ended jobs and the plugin series in the scrape",
        || {
            let s = parse(&c.get_text("/metrics").unwrap());
            let ended = ["COMPLETED", "FAILED"]
                .iter()
                .map(|st| s.get(&format!("sluice_job_ends_total{{state=\"{st}\"}}")))
                .map(|v| v.copied().unwrap_or(0.0))
                .sum::<f64>();
            (ended == 3.0 && answered(&s) >= 1.0).then_some(s)
        },
    );
    let at = |k: &str| {
        samples
            .get(k)
            .copied()
            .unwrap_or_else(|| panic!("no sample {k} in {:#?}", samples.keys().collect::<Vec<_>>()))
    };
    assert_eq!(at("sluice_job_submissions_total"), 3.0);
    assert_eq!(at("sluice_job_starts_total"), 3.0);
    assert_eq!(at("sluice_job_ends_total{state=\"COMPLETED\"}"), 2.0);
    assert_eq!(at("sluice_job_ends_total{state=\"FAILED\"}"), 1.0);
    assert_eq!(
        at("sluice_api_requests_total{endpoint=\"/v1/jobs\",method=\"POST\",status=\"200\"}"),
        3.0
    );
    assert!(at("sluice_pass_duration_seconds_count{pass=\"main\"}") >= 1.0);
    assert!(at("sluice_journal_fsync_duration_seconds_count") >= 4.0);
    assert!(
        samples.keys().any(|k| k.starts_with("sluice_jobs{")),
        "the job series: {samples:#?}"
    );

    let sdiag = sluice(dir, &["sdiag"]);
    let text = String::from_utf8_lossy(&sdiag.stdout);
    for line in [
        "Jobs submitted: 3",
        "Jobs completed: 2",
        "Jobs failed:    1",
        "Main schedule statistics (microseconds):",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} not in:\n{text}");
    }
    assert!(text.contains("POST /v1/jobs"), "{text}");

    daemon.terminate();
    let lines = std::fs::read_to_string(&log).unwrap();
    for needle in [
        "] _slurm_rpc_submit_batch_job: JobId=1 UserId=",
        "] sched: Allocate JobId=1 NodeList=",
        "] _job_complete: JobId=3 FAILED ExitCode=3",
        &format!("] update_node: node(s) {node} state set to DRAIN, reason: disk"),
    ] {
        assert!(
            lines.contains(needle),
            "{needle:?} not in the log:\n{lines}"
        );
    }
    assert!(
        !lines.contains('\u{1b}'),
        "colour codes in a file:\n{lines}"
    );
    assert!(
        lines
            .lines()
            .all(|l| l.starts_with('[') && l.as_bytes().get(24) == Some(&b']')),
        "every line starts with slurmctld's [time]:\n{lines}"
    );
    end_jobs(dir);
}
