//! The per-job supervisor against a local user who attacks the root daemon (issue 33, items 1,
//! 2 and 4): output files opened as the user, symlinks included; the job holds exactly the
//! user's groups; a uid without a password entry never runs; a FIFO as output stalls nothing; a
//! supervisor killed on its own leaves no process of its job running.
//! Each test creates a second, unprivileged account and skips, saying so, when not root.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sluice_api::Health;
use sluice_client::Client;

mod common;

use common::unprivileged::TestUser;
use common::{BIN, Daemon, run_dir, state_dir, wait_for};

#[test]
fn output_into_a_root_only_directory_is_not_created_and_the_job_fails_saying_why() {
    let Some(user) = TestUser::create("o") else {
        return;
    };
    let scratch = state_dir("sup-root-dir");
    let dir = scratch.path();
    let root_only = tempfile::Builder::new()
        .prefix("sluice-root-only-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(root_only.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let victim = root_only.path().join("victim.txt");
    let _d = Daemon::start(dir);
    let id = user.submit(dir, &["-o", victim.to_str().unwrap(), "--wrap", "echo x"]);
    let j = wait_for(dir, id, &["FAILED"], 30);
    assert!(!victim.exists(), "the job created {}", victim.display());
    assert!(
        j.reason.contains("cannot open output") && j.reason.contains("Permission denied"),
        "{j:?}"
    );
}

#[test]
fn a_symlink_in_the_users_home_is_not_followed_into_a_root_file() {
    let Some(user) = TestUser::create("l") else {
        return;
    };
    let scratch = state_dir("sup-symlink");
    let dir = scratch.path();
    let target_dir = tempfile::Builder::new()
        .prefix("sluice-root-file-")
        .tempdir()
        .unwrap();
    // World-searchable and readable, writable by root alone: the user may read, not write.
    std::fs::set_permissions(target_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let precious = target_dir.path().join("precious");
    std::fs::write(&precious, "root's own\n").unwrap();
    std::fs::set_permissions(&precious, std::fs::Permissions::from_mode(0o644)).unwrap();
    let link = user.home.join("link");
    symlink(&precious, &link).unwrap();
    let _d = Daemon::start(dir);
    let id = user.submit(dir, &["-o", "link", "--wrap", "echo overwritten"]);
    let j = wait_for(dir, id, &["FAILED"], 30);
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "root's own\n");
    assert!(j.reason.contains("cannot open output"), "{j:?}");
}

#[test]
fn a_job_holds_exactly_its_users_groups_never_root() {
    let Some(user) = TestUser::create("g") else {
        return;
    };
    let scratch = state_dir("sup-groups");
    let dir = scratch.path();
    // The daemon starts with root's group and two more, as a service manager might give it.
    let log = std::fs::File::create(dir.join("daemon.err")).unwrap();
    let mut serve = Command::new(BIN);
    serve
        .args(["serve", "--state-dir"])
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .stderr(log);
    // SAFETY: setgroups only, between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        serve.pre_exec(|| {
            let groups: [libc::gid_t; 3] = [0, 4, 27];
            if libc::setgroups(groups.len(), groups.as_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let _d = Daemon::adopt(serve.spawn().unwrap(), dir);
    let id = user.submit(dir, &["-o", "ids.out", "--wrap", "id -u; id -g; id -G"]);
    let j = wait_for(dir, id, &["COMPLETED", "FAILED"], 30);
    assert_eq!(j.state, "COMPLETED", "{j:?}");
    let out = std::fs::read_to_string(user.home.join("ids.out")).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], user.uid.to_string(), "{out}");
    assert_eq!(lines[1], user.gid.to_string(), "{out}");
    let expected = Command::new("id")
        .args(["-G", &user.name])
        .output()
        .unwrap();
    let mut want: Vec<&str> = std::str::from_utf8(&expected.stdout)
        .unwrap()
        .split_whitespace()
        .collect();
    let mut got: Vec<&str> = lines[2].split_whitespace().collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "the job's groups are not exactly the user's");
    assert!(!got.contains(&"0"), "the job runs with group 0: {out}");
}

#[test]
fn a_uid_without_a_password_entry_is_refused_at_submit() {
    // SAFETY: plain system call.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: submitting as another uid needs root");
        return;
    }
    let scratch = state_dir("sup-no-passwd");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    // A uid no account has.
    let uid = 54_321;
    let known = Command::new("getent")
        .args(["passwd", &uid.to_string()])
        .output()
        .unwrap();
    assert!(!known.status.success(), "uid {uid} has an account here");
    let out = {
        use std::os::unix::process::CommandExt;
        Command::new(BIN)
            .args(["submit", "--parsable", "--wrap", "true", "--state-dir"])
            .arg(dir)
            .current_dir("/")
            .env_clear()
            .uid(uid)
            .gid(uid)
            .output()
            .unwrap()
    };
    assert!(!out.status.success(), "the submission was accepted");
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(msg.contains("no entry in the password database"), "{msg}");
    assert!(common::all_jobs(dir).is_empty());
}

#[test]
fn a_job_whose_user_was_deleted_before_it_started_never_runs() {
    let Some(user) = TestUser::create("d") else {
        return;
    };
    let scratch = state_dir("sup-deleted");
    let dir = scratch.path();
    let shared = tempfile::Builder::new()
        .prefix("sluice-deleted-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let ran = shared.path().join("ran");
    let _d = Daemon::start(dir);
    let out = shared.path().join("out");
    let touch = format!("touch {}", ran.display());
    let id = user.submit(dir, &["-H", "-o", out.to_str().unwrap(), "--wrap", &touch]);
    // The account goes while the job waits; then an admin releases it.
    drop(user);
    let released = common::sluice(dir, &["release", &id.to_string()]);
    assert!(
        released.status.success(),
        "{}",
        String::from_utf8_lossy(&released.stderr)
    );
    let j = wait_for(dir, id, &["FAILED", "COMPLETED"], 30);
    assert_eq!(j.state, "FAILED", "{j:?}");
    assert!(j.reason.contains("password database"), "{j:?}");
    assert!(!ran.exists(), "the job ran");
    assert!(!out.exists(), "the job's output was created");
}

#[test]
fn a_fifo_as_output_stalls_nothing_but_its_own_job() {
    let Some(user) = TestUser::create("f") else {
        return;
    };
    let scratch = state_dir("sup-fifo");
    let dir = scratch.path();
    let fifo = user.home.join("f");
    let made = user.command("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let _d = Daemon::start(dir);
    let fifo_job = user.submit(dir, &["-o", "f", "--wrap", "true"]);
    // Every API call must still answer, promptly, while and after that job starts.
    let (tx, rx) = mpsc::channel();
    let probe_dir = dir.to_path_buf();
    std::thread::spawn(move || {
        for _ in 0..20 {
            let t = Instant::now();
            let ok = Client::new(&probe_dir).get::<Health>("/v1/health").is_ok();
            let _ = tx.send((ok, t.elapsed()));
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    for _ in 0..20 {
        let (ok, took) = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the daemon stopped answering");
        assert!(ok, "health failed");
        assert!(took < Duration::from_secs(5), "a call took {took:?}");
    }
    let j = wait_for(dir, fifo_job, &["FAILED", "COMPLETED"], 30);
    assert_eq!(j.state, "FAILED", "{j:?}");
    assert!(j.reason.contains("FIFO"), "{j:?}");
    // Another job of the same user still runs to its end.
    let next = user.submit(dir, &["-o", "next.out", "--wrap", "echo fine"]);
    wait_for(dir, next, &["COMPLETED"], 30);
    assert_eq!(
        std::fs::read_to_string(user.home.join("next.out")).unwrap(),
        "fine\n"
    );
}

#[test]
fn a_finished_jobs_spool_goes_once_the_job_leaves_the_engine() {
    let scratch = state_dir("sup-spool");
    let dir = scratch.path();
    std::fs::write(dir.join("daemon.toml"), "min_job_age = 1\n").unwrap();
    let _d = Daemon::start(dir);
    // Long enough for the spool to be seen: with MinJobAge=1 it may go a moment after the end.
    let id = Client::new(dir)
        .post::<_, sluice_api::JobSubmitted>("/v1/jobs", &common::wrap("brief", "sleep 1", dir))
        .unwrap()
        .job_id;
    let spool = dir.join("jobs").join(id.to_string());
    common::poll(30, "the job's spool to exist", || {
        spool.exists().then_some(())
    });
    common::poll(30, "the job's spool to go", || {
        (!spool.exists()).then_some(())
    });
    // Its end is kept where sacct reads it, whether or not the live record is purged yet.
    let ended = common::poll(30, "the job in the accounting store", || {
        let out = common::sluice(
            dir,
            &["acct", "-j", &id.to_string(), "-n", "-o", "State,ExitCode"],
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.contains("COMPLETED").then_some(text)
    });
    assert!(ended.contains("0:0"), "{ended}");
}

#[test]
fn sluice_supervise_runs_a_spooled_job_and_records_its_end() {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let scratch = state_dir("sup-direct");
    let run = scratch.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(
        run.join("script"),
        "#!/bin/sh\necho \"$GREETING\"\nexit 6\n",
    )
    .unwrap();
    std::fs::set_permissions(run.join("script"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = scratch.path().join("out");
    // SAFETY: plain system call.
    let uid = unsafe { libc::geteuid() };
    let job = serde_json::json!({
        "job": 1, "uid": uid, "workdir": scratch.path(), "output": out, "error": null,
        "env": {"GREETING": "hello", "PATH": "/usr/bin:/bin"},
        "time_limit": null, "kill_wait": 1
    });
    std::fs::write(run.join("job.json"), job.to_string()).unwrap();
    // The run's directory is its lock, as the daemon hands it over.
    let lock = std::fs::File::open(&run).unwrap();
    let fd = lock.as_raw_fd();
    // SAFETY: locking our descriptor; between fork and exec only fcntl.
    unsafe {
        assert_eq!(libc::flock(fd, libc::LOCK_EX), 0);
    }
    let mut cmd = Command::new(BIN);
    cmd.args(["supervise"])
        .arg(&run)
        .args(["--lock-fd", &fd.to_string()]);
    unsafe {
        cmd.pre_exec(move || {
            libc::fcntl(fd, libc::F_SETFD, 0);
            Ok(())
        });
    }
    let status = cmd.status().unwrap();
    assert!(status.success(), "{status}");
    let recorded: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("status")).unwrap()).unwrap();
    assert_eq!(recorded["code"], 6, "{recorded}");
    assert_eq!(recorded["timed_out"], false, "{recorded}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "hello\n");
    let pids: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("pids")).unwrap()).unwrap();
    assert!(pids["job"].as_u64().unwrap() > 0, "{pids}");
}

/// Issue 33: a supervisor killed on its own (by an admin, by the OOM killer) leaves no job
/// process behind that the daemon counts as ended: the batch script dies with it (its
/// parent-death signal) and the daemon ends the rest of the job's process group.
#[test]
fn a_supervisor_killed_alone_leaves_no_process_of_its_job_running() {
    let scratch = state_dir("orphans");
    let dir = scratch.path();
    let _daemon = Daemon::start(dir);
    let pid_file = dir.join("child.pid");
    let script = format!("sleep 300 &\necho $! > {}\nwait\n", pid_file.display());
    let id = Client::new(dir)
        .post::<_, sluice_api::JobSubmitted>("/v1/jobs", &common::wrap("orphan", &script, dir))
        .unwrap()
        .job_id;
    wait_for(dir, id, &["RUNNING"], 30);
    let child: i32 = common::poll(30, "the job's background process", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    let pids_file = std::fs::read_dir(dir.join("jobs").join(id.to_string()))
        .unwrap()
        .flatten()
        .map(|run| run.path().join("pids"))
        .find(|p| p.exists())
        .expect("the run's pids file");
    let pids: serde_json::Value =
        serde_json::from_slice(&std::fs::read(pids_file).unwrap()).unwrap();
    let supervisor = pids["supervisor"].as_i64().unwrap() as i32;
    // SAFETY: signalling the supervisor this test's daemon started.
    unsafe { libc::kill(supervisor, libc::SIGKILL) };
    let ended = wait_for(dir, id, &["FAILED", "NODE_FAIL", "PENDING", "REQUEUED"], 30);
    common::poll(30, "the job's background process to be gone", || {
        let alive = std::fs::read_to_string(format!("/proc/{child}/stat"))
            .is_ok_and(|s| !s.contains(") Z "));
        (!alive).then_some(())
    });
    assert_ne!(ended.state, "RUNNING");
}

/// A job starts with every signal at its default action: ignored signals stay ignored across
/// `exec`, and the supervisor's Rust runtime ignores SIGPIPE (a job's `yes | head` would then
/// never see it) while the spawner ignores SIGCHLD.
#[test]
fn a_job_starts_with_no_signal_ignored() {
    let scratch = state_dir("sup-signals");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let out = dir.join("status.out");
    let id = submit_to_file(dir, "signals", "cat /proc/self/status", &out);
    wait_for(dir, id, &["COMPLETED"], 30);
    let status = std::fs::read_to_string(&out).unwrap();
    let ignored = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
        .expect("a SigIgn line");
    for (name, signal) in [("SIGPIPE", libc::SIGPIPE), ("SIGCHLD", libc::SIGCHLD)] {
        assert_eq!(
            ignored & (1 << (signal - 1)),
            0,
            "the job inherits an ignored {name}: {status}"
        );
    }
}

/// The supervisors' spawner is one resident process; killed, it takes no job with it (each
/// supervisor has a session of its own) and the next launch starts another.
#[test]
fn a_killed_spawner_ends_no_job_and_the_next_launch_starts_another() {
    let scratch = state_dir("sup-spawner");
    let dir = scratch.path();
    let d = Daemon::start(dir);
    let submit = |name: &str, cmd: &str| post(dir, &common::wrap(name, cmd, dir));
    let long = submit("long", "sleep 3; echo survived");
    wait_for(dir, long, &["RUNNING"], 30);
    // RUNNING is the daemon's decision; the spawner may not have forked the job's supervisor
    // yet, and the test is about a spawner killed after it did.
    common::poll(30, "the long job's supervisor", || {
        run_dir(dir, long).join("pids").exists().then_some(())
    });
    let spawner = common::poll(30, "the spawner", || spawner_of(d.child.id()));
    // SAFETY: plain system call on a process this test found.
    assert_eq!(unsafe { libc::kill(spawner as i32, libc::SIGKILL) }, 0);
    common::poll(30, "the spawner to go", || {
        (spawner_of(d.child.id()) != Some(spawner)).then_some(())
    });
    let next = submit("next", "true");
    assert_eq!(wait_for(dir, next, &["COMPLETED"], 30).state, "COMPLETED");
    let j = wait_for(dir, long, &["COMPLETED", "FAILED"], 30);
    assert_eq!(j.state, "COMPLETED", "{j:?}");
    let again = spawner_of(d.child.id()).expect("a new spawner");
    assert_ne!(again, spawner);
}

/// Submits `req` over the socket; the job's id.
fn post(dir: &std::path::Path, req: &sluice_api::SubmitRequest) -> u64 {
    Client::new(dir)
        .post::<_, sluice_api::JobSubmitted>("/v1/jobs", req)
        .unwrap()
        .job_id
}

/// Submits `cmd` as job `name` with its output in `out`; the job's id.
fn submit_to_file(dir: &std::path::Path, name: &str, cmd: &str, out: &std::path::Path) -> u64 {
    let mut req = common::wrap(name, cmd, dir);
    req.output = Some(out.to_string_lossy().into_owned());
    post(dir, &req)
}

/// The pid of the daemon `daemon`'s child running `spawn-supervisors`, if it has one.
fn spawner_of(daemon: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The parent's pid is the second field after the parenthesised command name.
        let ppid: u32 = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let spawner = cmdline
            .split(|b| *b == 0)
            .any(|arg| arg == b"spawn-supervisors");
        (ppid == daemon && spawner).then_some(pid)
    })
}

/// Under a root daemon the spawner runs at a lower priority than the daemon (starting jobs
/// yields to the threads that answer the API) and its supervisors a little below the daemon's,
/// in its session; the job runs at the daemon's own priority, in a session of its own with no
/// controlling terminal.
#[test]
fn the_spawner_yields_to_the_daemon_and_jobs_run_at_its_priority_in_their_own_session() {
    let scratch = state_dir("sup-priority");
    let dir = scratch.path();
    let d = Daemon::start(dir);
    let out = dir.join("stat.out");
    let id = submit_to_file(dir, "priority", "cat /proc/self/stat; sleep 2", &out);
    wait_for(dir, id, &["RUNNING"], 30);
    let pids = run_dir(dir, id).join("pids");
    let pids: serde_json::Value = common::poll(30, "the job's pids", || {
        serde_json::from_slice(&std::fs::read(&pids).ok()?).ok()
    });
    let supervisor = stat_of(pids["supervisor"].as_u64().unwrap() as u32);
    let daemon = stat_of(d.child.id());
    wait_for(dir, id, &["COMPLETED"], 30);
    let job = parse_stat(&std::fs::read_to_string(&out).unwrap());
    // SAFETY: plain system call.
    if unsafe { libc::geteuid() } == 0 {
        // Lowered only where the job's priority can be given back: by root.
        let spawner = stat_of(spawner_of(d.child.id()).expect("the spawner"));
        let lowered = |by: i64| (daemon.nice + by).min(19);
        assert_eq!(spawner.nice, lowered(10), "the spawner's priority");
        assert_eq!(supervisor.nice, lowered(5), "the supervisor's priority");
    } else {
        assert_eq!(supervisor.nice, daemon.nice, "the supervisor's priority");
    }
    assert_eq!(job.nice, daemon.nice, "the job's priority");
    assert_eq!(
        supervisor.session, daemon.session,
        "the supervisor's session"
    );
    assert_ne!(job.session, daemon.session, "the job's session");
    assert_eq!(job.tty, 0, "the job has a controlling terminal");
}

/// What this test reads of `/proc/PID/stat`.
struct Stat {
    session: i64,
    tty: i64,
    nice: i64,
}

fn stat_of(pid: u32) -> Stat {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap())
}

/// Fields after the parenthesised command name: state, ppid, pgrp, session, tty_nr, … nice
/// is the 17th of them (proc(5)'s field 19).
fn parse_stat(stat: &str) -> Stat {
    let fields: Vec<i64> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    Stat {
        session: fields[2],
        tty: fields[3],
        nice: fields[15],
    }
}
