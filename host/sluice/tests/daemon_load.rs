//! Load: clients submit short jobs that really run (`#!/bin/sh true`) over the Unix socket as
//! fast as the API accepts them while the loops start and end them; prints submissions/s, the
//! submit latency's p50 and p99, submit→start latency, jobs ended/s and the recovery time of the
//! resulting state. Never asserts timings. The daemon runs in a session of its own, as under a
//! service manager. 4 clients × 10,000 jobs run in every test run (about
//! 17 s in a debug build); the 64-client benchmark is ignored by default:
//! `cargo test --release -p sluice --test daemon_load -- --include-ignored --nocapture`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sluice_api::{Health, JobSubmitted, Metrics, SubmitRequest};
use sluice_client::Client;

const BIN: &str = env!("CARGO_BIN_EXE_sluice");

fn up(dir: &Path) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let mut serve = Command::new(BIN);
    serve
        .args(["serve", "--state-dir"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // The daemon gets a session of its own, as a service manager starts it. Its clients here
    // are this process's threads; sharing its session would make the kernel weigh them and
    // the daemon as one group (autogroup) against every job's session, which no deployment
    // does. SLUICE_LOAD_SHARED_SESSION=1 measures the daemon in this process's session instead.
    if std::env::var_os("SLUICE_LOAD_SHARED_SESSION").is_none() {
        // SAFETY: setsid is async-signal-safe, called between fork and exec.
        unsafe {
            serve.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let child = serve.spawn().unwrap();
    while Client::new(dir).get::<Health>("/v1/health").is_err() {
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn ten_thousand_submissions() {
    load(4, 10_000);
}

#[test]
#[ignore = "a benchmark: 64 clients, run in release with --include-ignored --nocapture"]
fn sixty_four_clients_submitting_jobs_that_run() {
    load(64, 20_000);
}

/// `clients` threads submit `total` short jobs between them, each on its own connection.
fn load(clients: usize, total: usize) {
    let scratch = tempfile::Builder::new()
        .prefix("sluice-load-")
        .tempdir()
        .unwrap();
    let dir = scratch.path().to_path_buf();
    // Every job's record is kept until the restart counts them: room for all of them.
    std::fs::write(
        dir.join("daemon.toml"),
        format!(
            "max_job_count = {}\n{}",
            total.max(10_000),
            extra_settings()
        ),
    )
    .unwrap();
    let mut daemon = up(&dir);
    let t0 = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|k| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let mut c = Client::new(&dir);
                let mut latencies = Vec::new();
                for i in (k..total).step_by(clients) {
                    let req = SubmitRequest {
                        name: Some(format!("load-{i}")),
                        script: "#!/bin/sh\ntrue\n".into(),
                        workdir: dir.to_string_lossy().into_owned(),
                        output: Some("/dev/null".into()),
                        ..SubmitRequest::default()
                    };
                    let sent = Instant::now();
                    c.post::<_, JobSubmitted>("/v1/jobs", &req).unwrap();
                    latencies.push(sent.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies: Vec<Duration> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let secs = t0.elapsed().as_secs_f64();
    let accepted = latencies.len();
    assert_eq!(accepted, total);
    latencies.sort();
    let percentile = |p: f64| latencies[((accepted - 1) as f64 * p) as usize].as_secs_f64() * 1e3;
    println!(
        "{clients} clients submitted {accepted} jobs in {secs:.2} s: {:.0} submissions/s; submit latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        accepted as f64 / secs,
        percentile(0.5),
        percentile(0.99),
        percentile(1.0),
    );
    let deadline = Instant::now() + Duration::from_secs(900);
    let mut c = Client::new(&dir);
    loop {
        let h: Health = c.get("/v1/health").unwrap();
        if h.pending == 0 && h.running == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "jobs did not drain: {h:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
    let m = c.get::<Metrics>("/v1/metrics").unwrap().counters;
    let started = m.started as f64;
    let drained = t0.elapsed().as_secs_f64();
    println!(
        "all done after {drained:.1} s: {:.0} jobs ended/s; started {started}; submit→start mean {:.1} ms, max {:.1} ms; ticks {} (mean {:.2} ms, max {:.1} ms); journal syncs {}",
        started / drained,
        m.start_latency_ms_total / started.max(1.0),
        m.start_latency_ms_max,
        m.ticks,
        m.tick_ms_total / (m.ticks as f64).max(1.0),
        m.tick_ms_max,
        m.syncs,
    );
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let t1 = Instant::now();
    let mut daemon = up(&dir);
    let h: Health = Client::new(&dir).get("/v1/health").unwrap();
    println!(
        "restart after kill -9 with {} jobs: answering after {:.0} ms (store recovery {:.1} ms, {} records replayed)",
        h.jobs,
        t1.elapsed().as_secs_f64() * 1e3,
        h.recovery.millis,
        h.recovery.replayed
    );
    assert_eq!(h.jobs, total);
    daemon.kill().unwrap();
    daemon.wait().unwrap();
}

/// More daemon.toml lines for a comparison run, from `SLUICE_LOAD_DAEMON_TOML` with `;` for
/// newlines (`SLUICE_LOAD_DAEMON_TOML='[cgroup];plugin = "disabled"'` measures jobs without
/// cgroups).
fn extra_settings() -> String {
    std::env::var("SLUICE_LOAD_DAEMON_TOML")
        .unwrap_or_default()
        .replace(';', "\n")
}
