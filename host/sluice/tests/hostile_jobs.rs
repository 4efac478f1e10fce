//! A job's processes against the root daemon that runs them (issue 46, finding 5 and four of
//! finding 9): a job holds none of the descriptors the daemon inherited; it runs with its
//! submitter's resource limits and an OOM score of 0 whatever the daemon's; every process it
//! starts ends with it, in another session or not; one user's stopped mail program holds up no
//! other user's mail; and a newline in `-o` forges no line of the daemon's log.
//! Each test creates unprivileged accounts and skips, saying so, when not root.

mod common;

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use common::unprivileged::TestUser;
use common::{BIN, Daemon, end_jobs, log_of, poll, state_dir, wait_for, wrap};
use sluice_api::JobSubmitted;
use sluice_client::Client;

/// `sluice serve --state-dir DIR` with its log in `DIR/daemon.err`, with `before_exec` run in
/// the daemon's process just before it starts (what a service manager gives it).
fn serve_with(
    dir: &Path,
    before_exec: impl FnMut() -> io::Result<()> + Send + Sync + 'static,
) -> Daemon {
    let log = std::fs::File::create(dir.join("daemon.err")).unwrap();
    let mut serve = Command::new(BIN);
    serve
        .args(["serve", "--state-dir"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(log);
    // SAFETY: the callers' closures make system calls only.
    unsafe { serve.pre_exec(before_exec) };
    Daemon::adopt(serve.spawn().unwrap(), dir)
}

/// A directory only root may enter, removed when dropped.
fn root_only_dir(prefix: &str) -> tempfile::TempDir {
    let d = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}

/// The capability lowering an OOM score needs.
const CAP_SYS_RESOURCE: u32 = 24;

/// Whether this process holds capability `cap` (its bit in /proc/self/status's `CapEff`).
fn has_capability(cap: u32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let effective = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    effective & (1 << cap) != 0
}

/// Whether process `pid` still runs (a zombie has ended).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rfind(')').is_some_and(|at| !s[at..].starts_with(") Z")))
}

/// Kills, when dropped, whatever the test's user still runs, so a failing test leaves no
/// process behind.
struct KillLeftovers<'a>(&'a TestUser);

impl Drop for KillLeftovers<'_> {
    fn drop(&mut self) {
        let _ = Command::new("pkill")
            .args(["-KILL", "-u", &self.0.uid.to_string()])
            .status();
    }
}

#[test]
fn a_job_holds_none_of_the_descriptors_the_daemon_inherited() {
    let Some(user) = TestUser::create("fd") else {
        return;
    };
    let scratch = state_dir("hostile-fds");
    let dir = scratch.path();
    let root = root_only_dir("sluice-root-secret-");
    let secret = root.path().join("secret");
    let root_log = root.path().join("log");
    std::fs::write(&secret, "root's secret\n").unwrap();
    std::fs::write(&root_log, "").unwrap();
    for f in [&secret, &root_log] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    // `sluice serve … 8</root/secret 9>>/root/log`, as the report started it.
    let read = std::fs::File::open(&secret).unwrap();
    let append = std::fs::OpenOptions::new()
        .append(true)
        .open(&root_log)
        .unwrap();
    let (r, a): (RawFd, RawFd) = (read.as_raw_fd(), append.as_raw_fd());
    let _d = serve_with(dir, move || {
        // SAFETY: dup2 only; the copies are not close-on-exec, as a shell's redirections.
        if unsafe { libc::dup2(r, 8) } < 0 || unsafe { libc::dup2(a, 9) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    });
    // The batch shell lists its own descriptors (`ls` reads the shell's, not its own) to its
    // output, with no redirection that would make the shell save a stream aside, then tries
    // both of the daemon's.
    let script = "ls -l /proc/$$/fd\ncat <&8 > read8.txt 2>&1\necho forged >&9\ntrue";
    let id = user.submit(dir, &["-o", "fds.txt", "--wrap", script]);
    let j = wait_for(dir, id, &["COMPLETED", "FAILED"], 30);
    end_jobs(dir);
    assert_eq!(j.state, "COMPLETED", "{j:?}");
    let listing = std::fs::read_to_string(user.home.join("fds.txt")).unwrap();
    let open: Vec<(i32, String)> = listing
        .lines()
        .filter_map(|l| {
            let (left, target) = l.split_once(" -> ")?;
            Some((
                left.split_whitespace().last()?.parse().ok()?,
                target.to_string(),
            ))
        })
        .collect();
    println!("the job's descriptors:\n{listing}");
    let mut fds: Vec<i32> = open.iter().map(|(fd, _)| *fd).collect();
    fds.sort();
    assert!(fds.starts_with(&[0, 1, 2]), "{listing}");
    // Beyond the standard streams, only the job's own script (the interpreter of a `#!` line
    // reads it by descriptor, and the shell keeps its own copy).
    for (fd, target) in &open {
        assert!(
            *fd <= 2 || target.ends_with("/script"),
            "descriptor {fd} ({target}) reached the job:\n{listing}"
        );
    }
    let read8 = std::fs::read_to_string(user.home.join("read8.txt")).unwrap_or_default();
    assert!(
        !read8.contains("root's secret"),
        "the job read fd 8: {read8}"
    );
    assert_eq!(
        std::fs::read_to_string(&root_log).unwrap(),
        "",
        "the job wrote fd 9"
    );
}

#[test]
fn a_job_runs_with_its_submitters_limits_and_an_oom_score_of_zero() {
    let Some(user) = TestUser::create("rl") else {
        return;
    };
    let scratch = state_dir("hostile-limits");
    let dir = scratch.path();
    // The daemon: at most 777 descriptors (hard limit 2000), shielded from the OOM killer as
    // slurmd is; where this machine withholds CAP_SYS_RESOURCE, which lowering a score needs,
    // a daemon that the OOM killer prefers instead.
    let oom_adj: &[u8] = if has_capability(CAP_SYS_RESOURCE) {
        b"-500"
    } else {
        b"500"
    };
    println!(
        "the daemon's oom_score_adj: {}",
        String::from_utf8_lossy(oom_adj)
    );
    let _d = serve_with(dir, move || {
        let limit = libc::rlimit {
            rlim_cur: 777,
            rlim_max: 2000,
        };
        // SAFETY: plain system calls on a path and data of this closure.
        unsafe {
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = libc::open(c"/proc/self/oom_score_adj".as_ptr(), libc::O_WRONLY);
            let written = libc::write(fd, oom_adj.as_ptr().cast(), oom_adj.len());
            if fd < 0 || written != oom_adj.len() as isize {
                return Err(io::Error::last_os_error());
            }
            libc::close(fd);
        }
        Ok(())
    });
    let report = "ulimit -n; cat /proc/self/oom_score_adj";
    // sbatch from a shell whose `ulimit -n` is 555.
    let out = user
        .command("sh")
        .args([
            "-c",
            "ulimit -n 555; exec \"$@\"",
            "sh",
            BIN,
            "submit",
            "--parsable",
        ])
        .args(["-o", "limits.out", "--wrap", report, "--state-dir"])
        .arg(dir)
        .output()
        .unwrap();
    let id = common::submitted_id(&out);
    // An API client sends no limits (the job keeps the daemon's), or asks for more than the
    // hard limit (it gets the hard limit).
    let api = |name: &str, nofile: Option<u64>| {
        let mut req = wrap(name, report, dir);
        req.output = Some(
            dir.join(format!("{name}.out"))
                .to_string_lossy()
                .into_owned(),
        );
        if let Some(n) = nofile {
            req.rlimits.insert("NOFILE".into(), Some(n));
        }
        let done: JobSubmitted = Client::new(dir).post("/v1/jobs", &req).unwrap();
        (done.job_id, dir.join(format!("{name}.out")))
    };
    let (none, none_out) = api("no-limits", None);
    let (greedy, greedy_out) = api("greedy", Some(1 << 40));
    for job in [id, none, greedy] {
        let j = wait_for(dir, job, &["COMPLETED", "FAILED"], 30);
        assert_eq!(j.state, "COMPLETED", "{j:?}");
    }
    end_jobs(dir);
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    assert_eq!(read(&user.home.join("limits.out")), "555\n0\n");
    assert_eq!(read(&none_out), "777\n0\n");
    assert_eq!(read(&greedy_out), "2000\n0\n");
}

#[test]
fn processes_a_job_started_in_other_sessions_end_with_it() {
    let Some(user) = TestUser::create("ss") else {
        return;
    };
    let _leftovers = KillLeftovers(&user);
    let scratch = state_dir("hostile-setsid");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    // A `setsid` child, and a double-forked one in a session of its own, each writing its pid.
    let escape = |tag: &str| {
        format!(
            "setsid sh -c 'echo $$ > {tag}1.pid; exec sleep 600' &\n\
             (setsid sh -c 'echo $$ > {tag}2.pid; exec sleep 600' &)\n\
             while [ ! -s {tag}1.pid ] || [ ! -s {tag}2.pid ]; do sleep 0.1; done\n"
        )
    };
    // One cancelled while it runs, one whose script ends by itself.
    let cancelled = format!("{}sleep 600\n", escape("c"));
    let c = user.submit(dir, &["-o", "c.out", "--wrap", &cancelled]);
    let e = user.submit(dir, &["-o", "e.out", "--wrap", &escape("e")]);
    let pid = |name: &str| -> i32 {
        poll(30, name, || {
            std::fs::read_to_string(user.home.join(name))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
    };
    let (c1, c2) = (pid("c1.pid"), pid("c2.pid"));
    assert!(running(c1) && running(c2));
    let out = user.sluice(dir, &["cancel", &c.to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for(dir, c, &["CANCELLED"], 30);
    let j = wait_for(dir, e, &["COMPLETED", "FAILED"], 30);
    assert_eq!(j.state, "COMPLETED", "{j:?}");
    let (e1, e2) = (pid("e1.pid"), pid("e2.pid"));
    let t = Instant::now();
    poll(30, "the job's escaped processes to end", || {
        [c1, c2, e1, e2].iter().all(|p| !running(*p)).then_some(())
    });
    println!(
        "escaped processes gone {} ms after both jobs ended",
        t.elapsed().as_millis()
    );
    end_jobs(dir);
}

#[test]
fn one_users_stopped_mail_program_holds_up_no_other_users_mail() {
    let (Some(mallory), Some(alice)) = (TestUser::create("mm"), TestUser::create("ma")) else {
        return;
    };
    let _leftovers = KillLeftovers(&mallory);
    let scratch = state_dir("hostile-mail");
    let dir = scratch.path();
    let post = tempfile::Builder::new()
        .prefix("sluice-mail-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(post.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let delivered = post.path().join("delivered");
    std::fs::write(&delivered, "").unwrap();
    std::fs::set_permissions(&delivered, std::fs::Permissions::from_mode(0o666)).unwrap();
    // The admin's mail program: delivery takes a moment, as a relay's answer does.
    let prog = post.path().join("mailprog");
    common::install_mail_prog(
        dir,
        &prog,
        &format!(
            "#!/bin/sh\nsleep 1\necho \"$3\" >> {}\n",
            delivered.display()
        ),
    );
    let _d = Daemon::start(dir);
    // Mallory's mail program runs as Mallory, who stops it as it starts.
    mallory.submit(
        dir,
        &["--mail-type=END", "-o", "/dev/null", "--wrap", "true"],
    );
    let uid = mallory.uid.to_string();
    poll(30, "Mallory to stop her mail program", || {
        let stopped = mallory
            .command("pkill")
            .args(["-STOP", "-u", &uid, "-f", &prog.to_string_lossy()])
            .status()
            .unwrap();
        stopped.success().then_some(())
    });
    let t = Instant::now();
    alice.submit(
        dir,
        &["--mail-type=END", "-o", "/dev/null", "--wrap", "true"],
    );
    poll(30, "Alice's mail", || {
        let got = std::fs::read_to_string(&delivered).unwrap();
        got.lines().any(|l| l == alice.name).then_some(())
    });
    println!(
        "Alice's mail delivered {} ms after her submission, Mallory's stopped",
        t.elapsed().as_millis()
    );
    let got = std::fs::read_to_string(&delivered).unwrap();
    assert!(!got.lines().any(|l| l == mallory.name), "{got}");
    end_jobs(dir);
}

#[test]
fn a_newline_in_an_output_path_forges_no_line_of_the_daemons_log() {
    let Some(user) = TestUser::create("nl") else {
        return;
    };
    let scratch = state_dir("hostile-newline");
    let dir = scratch.path();
    let _d = Daemon::start_with(dir, &[]);
    const FORGED: &str = "[2026-01-01T00:00:00] error: forged";
    // A directory that does not exist, so the job's failure is logged with the path.
    let output = format!("/nonexistent-{}/x\n{FORGED}", std::process::id());
    let out = user.sluice(
        dir,
        &["submit", "--parsable", "-o", &output, "--wrap", "true"],
    );
    if out.status.success() {
        let id = common::submitted_id(&out);
        let j = wait_for(dir, id, &["FAILED", "COMPLETED"], 30);
        assert_eq!(j.state, "FAILED", "{j:?}");
        // The failure was logged, with the newline shown escaped.
        poll(10, "the job's failure in the log", || {
            log_of(dir).contains(&format!("\\n{FORGED}")).then_some(())
        });
    }
    let log = log_of(dir);
    assert!(
        !log.lines().any(|l| l.starts_with(FORGED)),
        "a forged line in the daemon's log:\n{log}"
    );
}
