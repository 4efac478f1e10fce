//! Requests whose every size a local user controls, sent to a root daemon by a second,
//! unprivileged account (issue 46, findings 2 and 7): file name patterns that expand past
//! `max_path_size`, a 4 MB `--array`, a 2 MB `--dependency`, hostlists naming more than the
//! cluster, oversized scripts, environments and updates are each refused with a message naming
//! the option and the limit, before anything is journaled, while the daemon keeps answering
//! others and restarts cleanly; a pattern an older daemon journaled fails its job, not the
//! daemon. Each test skips, saying so, when not root.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::unprivileged::TestUser;
use common::{Daemon, all_jobs, log_of, sluice, state_dir, wait_for};
use sluice_client::socket_path;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `text` written to file `name` in `user`'s home, owned by the user.
fn user_file(user: &TestUser, name: &str, text: &str) -> PathBuf {
    let path = user.home.join(name);
    std::fs::write(&path, text).unwrap();
    std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid)).unwrap();
    path
}

/// A batch script with `#SBATCH` lines `options`, in `user`'s home.
fn script(user: &TestUser, name: &str, options: &[String]) -> PathBuf {
    let mut text = String::from("#!/bin/sh\n");
    for o in options {
        text.push_str(&format!("#SBATCH {o}\n"));
    }
    text.push_str("true\n");
    user_file(user, name, &text)
}

/// `sluice submit [ARGS…] SCRIPT` as `user`: the options before the script, which ends them.
fn submit_file(user: &TestUser, dir: &Path, args: &[&str], script: &Path) -> Output {
    user.command(common::BIN)
        .arg("submit")
        .args(args)
        .arg("--state-dir")
        .arg(dir)
        .arg(script)
        .output()
        .unwrap()
}

/// Asserts `out` failed saying every one of `words`.
fn refused(out: &Output, words: &[&str]) {
    assert!(!out.status.success(), "the request was accepted");
    let e = stderr(out);
    for w in words {
        assert!(e.contains(w), "{w:?} not in: {}", &e[..e.len().min(2000)]);
    }
}

/// What root's `sluice queue -t all` lists: the daemon answers and `user` has no job in it.
fn no_job_of(dir: &Path, user: &TestUser) {
    let out = sluice(dir, &["queue", "-t", "all", "-o", "%i %u"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(!listed.contains(&user.name), "journaled: {listed}");
    assert!(all_jobs(dir).iter().all(|j| j.user != user.name));
}

/// Stops the daemon and starts it again on the same state: it comes up (no crash loop) and
/// still holds no job of `user`.
fn restarts_clean(dir: &Path, daemon: Daemon, user: &TestUser) -> Daemon {
    daemon.terminate();
    let again = Daemon::start_with(dir, &[]);
    no_job_of(dir, user);
    again
}

#[test]
fn patterns_that_could_expand_past_max_path_size_are_refused() {
    let Some(user) = TestUser::create("fp") else {
        return;
    };
    let scratch = state_dir("hostile-patterns");
    let dir = scratch.path();
    let d = Daemon::start_with(dir, &[]);
    // Issue 46 as written: `-J` of 1 MB and `-o` of 100,000 `%x` (a 100 GB path).
    let big = script(
        &user,
        "big.sh",
        &[
            format!("-J {}", "n".repeat(1 << 20)),
            format!("-o {}", "%x".repeat(100_000)),
        ],
    );
    let out = submit_file(&user, dir, &[], &big);
    refused(
        &out,
        &["--job-name is 1048576 bytes", "max_text_size is 4096"],
    );
    // Each within its own limit; the expansion, 4 MB, is not.
    let expands = script(
        &user,
        "expands.sh",
        &[
            format!("-J {}", "n".repeat(4000)),
            format!("-e {}", "%x".repeat(1000)),
        ],
    );
    let out = submit_file(&user, dir, &[], &expands);
    refused(&out, &["--error can expand to", "max_path_size is 4096"]);
    let padded = user.sluice(
        dir,
        &["submit", "-o", &"%10j".repeat(300), "--wrap", "true"],
    );
    refused(&padded, &["--output can expand to"]);
    let chdir = user.sluice(dir, &["submit", "-D", &"d/".repeat(2100), "--wrap", "true"]);
    refused(&chdir, &["--chdir is", "max_path_size"]);
    no_job_of(dir, &user);
    let _d = restarts_clean(dir, d, &user);
}

#[test]
fn a_pattern_journaled_before_the_bound_fails_its_job_not_the_daemon() {
    let Some(user) = TestUser::create("fj") else {
        return;
    };
    let scratch = state_dir("hostile-journaled-pattern");
    let dir = scratch.path();
    // An older daemon accepted any pattern: limits this wide let the request be journaled.
    std::fs::write(
        dir.join("daemon.toml"),
        "max_text_size = 2000000\nmax_path_size = 200000000000\n",
    )
    .unwrap();
    let d = Daemon::start_with(dir, &[]);
    let big = script(
        &user,
        "big.sh",
        &[
            "--hold".into(),
            format!("-J {}", "n".repeat(1 << 20)),
            format!("-o {}", "%x".repeat(100_000)),
        ],
    );
    let out = submit_file(&user, dir, &["--parsable"], &big);
    let id = common::submitted_id(&out);
    d.terminate();
    // Today's limits: the journaled job is taken back, and launching it expands within them.
    std::fs::write(dir.join("daemon.toml"), "").unwrap();
    let d = Daemon::start_with(dir, &[]);
    let release = user.sluice(dir, &["release", &id.to_string()]);
    assert!(release.status.success(), "{}", stderr(&release));
    let job = wait_for(dir, id, &["FAILED"], 60);
    assert!(
        log_of(dir).contains("expands past 4096 bytes"),
        "{job:?}: {}",
        &log_of(dir)[..2000.min(log_of(dir).len())]
    );
    d.terminate();
    let _d = Daemon::start_with(dir, &[]);
    assert_eq!(wait_for(dir, id, &["FAILED"], 10).state, "FAILED");
}

/// A raw `POST /v1/jobs` of `body` made by `user` with curl on the daemon's socket: the status
/// and the answer.
fn post_as(user: &TestUser, dir: &Path, body: &str) -> (u16, String) {
    let file = user_file(user, "body.json", body);
    let out = user
        .command("curl")
        .args(["-s", "-o", "-", "-w", "\n%{http_code}", "-X", "POST"])
        .arg("--unix-socket")
        .arg(socket_path(dir))
        .arg("--data-binary")
        .arg(format!("@{}", file.display()))
        .arg("http://localhost/v1/jobs")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (answer, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), answer.to_string())
}

#[test]
fn a_four_megabyte_array_is_refused_while_another_user_is_answered() {
    let (Some(user), Some(victim)) = (TestUser::create("ar"), TestUser::create("av")) else {
        return;
    };
    if std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no curl to send a raw request with");
        return;
    }
    let scratch = state_dir("hostile-array");
    let dir = scratch.path();
    let d = Daemon::start_with(dir, &[]);
    // Issue 46: `--array="0-1000,"×N` in a 4 MB body stalled every user for 14 s.
    let array = "0-1000,".repeat((4 << 20) / 7) + "0";
    let body = serde_json::json!({
        "script": "#!/bin/sh\ntrue\n",
        "workdir": user.home,
        "array": array,
    })
    .to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let waits = Arc::new(Mutex::new(Vec::new()));
    let watcher = {
        let (stop, waits, dir) = (stop.clone(), waits.clone(), dir.to_path_buf());
        let victim_cmd = move || victim.sluice(&dir, &["queue"]);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                let out = victim_cmd();
                assert!(out.status.success(), "{}", stderr(&out));
                waits.lock().unwrap().push(t.elapsed());
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let t = Instant::now();
    let (status, answer) = post_as(&user, dir, &body);
    let took = t.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    watcher.join().expect("the other user's queue failed");
    let waits = waits.lock().unwrap();
    let longest = waits.iter().max().copied().unwrap_or_default();
    eprintln!(
        "4 MB --array refused in {took:?}; the other user's {} queue calls took at most {longest:?}",
        waits.len()
    );
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer.contains("--array is") && answer.contains("max_text_size is 4096"),
        "{}",
        &answer[..answer.len().min(2000)]
    );
    assert!(!waits.is_empty(), "the other user was never answered");
    no_job_of(dir, &user);
    let _d = restarts_clean(dir, d, &user);
}

#[test]
fn a_two_megabyte_dependency_list_is_refused() {
    let Some(user) = TestUser::create("dp") else {
        return;
    };
    let scratch = state_dir("hostile-dependency");
    let dir = scratch.path();
    let _d = Daemon::start_with(dir, &[]);
    let first = user.submit(dir, &["--hold", "--wrap", "true"]);
    let ids = format!(":{first}").repeat((2 << 20) / (first.to_string().len() + 1));
    let deps = script(&user, "deps.sh", &[format!("--dependency=afterok{ids}")]);
    let t = Instant::now();
    let out = submit_file(&user, dir, &[], &deps);
    eprintln!("2 MB --dependency refused in {:?}", t.elapsed());
    refused(&out, &["--dependency is", "max_dependencies"]);
    let many = format!("afterok{}", format!(":{first}").repeat(1001));
    let out = user.sluice(dir, &["submit", "--dependency", &many, "--wrap", "true"]);
    refused(&out, &["names 1001 jobs, max_dependencies is 1000"]);
    // The only job is the one the list named.
    let jobs = all_jobs(dir);
    assert_eq!(jobs.iter().map(|j| j.job_id).collect::<Vec<_>>(), [first]);
}

#[test]
fn hostlists_naming_more_than_the_cluster_are_refused() {
    let Some(user) = TestUser::create("hl") else {
        return;
    };
    let scratch = state_dir("hostile-hostlist");
    let dir = scratch.path();
    let d = Daemon::start_with(dir, &[]);
    let wide = user.sluice(
        dir,
        &["submit", "-w", "node[0-999999999]", "--wrap", "true"],
    );
    refused(&wide, &["Invalid node name specified"]);
    // 65,536 names of 4 KB each: 256 MB kept for one pending job.
    let long = format!("--exclude={}[1-65536]", "x".repeat(4000));
    let out = user.sluice(dir, &["submit", &long, "--wrap", "true"]);
    refused(&out, &["Invalid node name specified", "--exclude"]);
    no_job_of(dir, &user);
    let _d = restarts_clean(dir, d, &user);
}

#[test]
fn scripts_environments_and_updates_past_their_limits_are_refused() {
    let Some(user) = TestUser::create("se") else {
        return;
    };
    let scratch = state_dir("hostile-sizes");
    let dir = scratch.path();
    let d = Daemon::start_with(dir, &[]);
    let long = user_file(
        &user,
        "long.sh",
        &format!("#!/bin/sh\n{}\ntrue\n", "#".repeat(5 << 20)),
    );
    let out = submit_file(&user, dir, &[], &long);
    refused(&out, &["Batch job script size", "max_script_size"]);
    let lines: String = (0..40_000)
        .map(|i| format!("V{i}={}\n", "x".repeat(40)))
        .collect();
    let env = user_file(&user, "env", &lines);
    let export = format!("--export-file={}", env.display());
    let out = user.sluice(dir, &["submit", &export, "--wrap", "true"]);
    refused(&out, &["max_env_size"]);
    no_job_of(dir, &user);
    let d = restarts_clean(dir, d, &user);

    // An update is held to the same limits (scontrol's Comment= and JobName=).
    let id = user.submit(dir, &["--hold", "--wrap", "true"]);
    let job = format!("JobId={id}");
    for field in ["Comment", "JobName"] {
        let big = format!("{field}={}", "c".repeat(100_000));
        let out = user.sluice(dir, &["update", &job, &big]);
        refused(&out, &["max_text_size is 4096"]);
    }
    let shown = sluice(dir, &["show", "job", &id.to_string()]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(
        !String::from_utf8_lossy(&shown.stdout).contains("ccc"),
        "an update was kept"
    );
    drop(d);
}
