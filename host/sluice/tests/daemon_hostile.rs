//! The API as an attacker meets it, on the real daemon binary: a 64 MB request line, 200 idle
//! and half-sent connections, malformed query strings and a missing bearer token are each
//! answered with an error, while a normal request still answers promptly and the daemon's
//! memory stays bounded.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{Daemon, log_of, state_dir};
use sluice_api::{
    ErrorBody, Health, Job, JobSubmitted, NodeActionDone, NodeActionRequest, Reservation,
    ReservationCreated,
};
use sluice_client::{Client, Target, segment, socket_path};
use sluice_daemon::server::MAX_CONNECTIONS;

const TOKEN: &str = "hostile-test-token";

/// Resident memory of process `pid`, kB.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A TCP port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A connection the test writes to from one thread and reads from another.
trait Duplex: Read + Write + Send + 'static + Sized {
    fn other_half(&self) -> Self;
}

impl Duplex for UnixStream {
    fn other_half(&self) -> Self {
        self.try_clone().unwrap()
    }
}

impl Duplex for TcpStream {
    fn other_half(&self) -> Self {
        self.try_clone().unwrap()
    }
}

/// Sends `request` raw (from another thread, so a daemon that answers before reading it all is
/// heard) and reads the answer: the status code and the body, or `None` if the connection was
/// cut without one.
fn raw<S: Duplex>(mut s: S, request: Vec<u8>) -> Option<(u16, String)> {
    let mut writer = s.other_half();
    let sent = std::thread::spawn(move || {
        // The daemon may close before taking it all; that is its answer to refuse.
        let _ = writer.write_all(&request);
    });
    let answer = read_answer(&mut s);
    drop(s);
    let _ = sent.join();
    answer
}

fn read_answer<S: Read>(s: &mut S) -> Option<(u16, String)> {
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if let Some(head_end) = find(&answer, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&answer[..head_end]).to_string();
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap_or(0))
                })
                .unwrap_or(0);
            if answer.len() >= head_end + 4 + len {
                let status = head.split_whitespace().nth(1)?.parse().ok()?;
                let body = String::from_utf8_lossy(&answer[head_end + 4..head_end + 4 + len]);
                return Some((status, body.into_owned()));
            }
        }
    }
    let head = String::from_utf8_lossy(&answer).to_string();
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, String::new()))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn unix(dir: &Path) -> UnixStream {
    let s = UnixStream::connect(socket_path(dir)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s
}

/// A 64 MB request line: the daemon must answer (or cut the connection) after reading a bounded
/// head, not buffer it all.
fn huge_request_line<S: Duplex>(stream: S) -> Option<u16> {
    let mut line = Vec::with_capacity(65 << 20);
    line.extend_from_slice(b"GET /v1/jobs?user=");
    line.resize(64 << 20, b'a');
    line.extend_from_slice(b" HTTP/1.1\r\nHost: sluice\r\n\r\n");
    raw(stream, line).map(|(status, _)| status)
}

#[test]
fn hostile_requests_are_refused_and_the_daemon_stays_responsive_and_small() {
    let scratch = state_dir("hostile");
    let dir = scratch.path();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let token_file = dir.join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    // Private, or the daemon refuses it as ssh refuses such a key.
    let private = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600);
    std::fs::set_permissions(&token_file, private).unwrap();
    let mut daemon = Daemon::start_with(
        dir,
        &[
            "--listen",
            &addr,
            "--token-file",
            token_file.to_str().unwrap(),
        ],
    );
    let pid = daemon.child.id();
    let mut tcp_client = Client::to(Target::Tcp {
        addr: addr.clone(),
        token: TOKEN.into(),
    })
    .with_timeout(Duration::from_secs(5));
    // Warm both doors up so the baseline includes the runtime's first allocations.
    tcp_client.get::<Health>("/v1/health").unwrap();
    Client::new(dir).get::<Health>("/v1/health").unwrap();
    let before = rss_kb(pid);

    // A 64 MB request line on the socket and on TCP (before any token is checked).
    let on_socket = huge_request_line(unix(dir));
    let status = on_socket.expect("the socket connection was cut without an answer");
    assert!(
        (400..500).contains(&status),
        "64 MB request line answered {status}"
    );
    let tcp = TcpStream::connect(&addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    // On TCP the daemon may reset the connection while bytes are still in flight; either way
    // it must not have read them all.
    if let Some(status) = huge_request_line(tcp) {
        assert!((400..500).contains(&status), "answered {status}");
    }

    // Malformed query strings: raw non-ASCII bytes, bad percent-escapes, unknown keys.
    for (query, why) in [
        ("user=%aé", "query"),
        ("user=é", "non-ASCII"),
        ("user=%FF", "UTF-8"),
        ("jobs=%ZZ", "percent-escape"),
        ("user=a%", "percent-escape"),
        ("jobs=1x", "job id"),
        ("states=%C3%A9", "states="),
        ("color=red", "query"),
    ] {
        let request = format!("GET /v1/jobs?{query} HTTP/1.1\r\nHost: sluice\r\n\r\n");
        let (status, body) =
            raw(unix(dir), request.into_bytes()).unwrap_or_else(|| panic!("no answer to ?{query}"));
        assert_eq!(status, 400, "?{query}: {body}");
        let error: ErrorBody = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("?{query}: the error is not JSON ({e}): {body}"));
        assert!(error.error.contains(why), "?{query}: {}", error.error);
    }
    // A well-formed one naming nobody is a filter that matches nothing.
    let nobody: Vec<Job> = Client::new(dir).get("/v1/jobs?user=%C3%A9").unwrap();
    assert!(nobody.is_empty());

    // TCP without the token, or with a wrong one: 401 with a message, before any routing.
    let (status, body) = raw(
        TcpStream::connect(&addr).unwrap(),
        b"GET /v1/health HTTP/1.1\r\nHost: sluice\r\n\r\n".to_vec(),
    )
    .unwrap();
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("bearer token"), "{body}");
    let wrong = Client::to(Target::Tcp {
        addr: addr.clone(),
        token: "guess".into(),
    })
    .get::<Health>("/v1/health")
    .unwrap_err()
    .to_string();
    assert!(wrong.contains("bearer token"), "{wrong}");

    // 200 connections that never finish a request: half of them silent on TCP, half mid-header
    // on the socket.
    let mut idle_tcp = Vec::new();
    let mut idle_socket = Vec::new();
    for i in 0..200 {
        if i % 2 == 0 {
            idle_tcp.push(TcpStream::connect(&addr).unwrap());
        } else {
            let mut s = unix(dir);
            s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: sl").unwrap();
            idle_socket.push(s);
        }
    }
    let t0 = Instant::now();
    let mut socket_client = Client::new(dir).with_timeout(Duration::from_secs(5));
    let h: Health = socket_client.get("/v1/health").unwrap();
    assert_eq!(h.pid, pid);
    tcp_client.get::<Health>("/v1/health").unwrap();
    let answered = t0.elapsed();
    assert!(
        answered < Duration::from_secs(5),
        "a normal request took {answered:?} beside 200 idle connections"
    );

    // TCP clients past that door's cap wait in its backlog; the socket door stays open.
    for _ in 0..MAX_CONNECTIONS {
        idle_tcp.push(TcpStream::connect(&addr).unwrap());
    }
    let t0 = Instant::now();
    socket_client.get::<Health>("/v1/health").unwrap();
    let beside_full_tcp = t0.elapsed();
    assert!(
        beside_full_tcp < Duration::from_secs(5),
        "the socket took {beside_full_tcp:?} to answer while TCP was full"
    );

    let after = rss_kb(pid);
    drop((idle_tcp, idle_socket));
    assert!(
        daemon.child.try_wait().unwrap().is_none(),
        "the daemon died: {}",
        log_of(dir)
    );
    assert!(
        after < before + 32 * 1024,
        "the daemon grew from {before} kB to {after} kB under attack"
    );
    assert!(!log_of(dir).contains("panicked"), "{}", log_of(dir));
    println!("daemon RSS {before} kB before, {after} kB after; normal request in {answered:?}");
}

#[test]
fn the_tcp_token_comes_from_the_environment_or_a_file_never_the_command_line() {
    let scratch = state_dir("token");
    let dir = scratch.path();
    let addr = format!("127.0.0.1:{}", free_port());
    // No token at all: refused at start, naming both ways to give one.
    let out = std::process::Command::new(common::BIN)
        .args(["serve", "--listen", &addr, "--state-dir"])
        .arg(dir)
        .env_remove("SLUICE_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--token-file") && err.contains("SLUICE_TOKEN"),
        "{err}"
    );
    // `--token` is gone: a token on the command line would show in the process list.
    let out = std::process::Command::new(common::BIN)
        .args(["serve", "--listen", &addr, "--token", TOKEN, "--state-dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(!out.status.success(), "serve --token was accepted");

    // From the environment.
    let log = std::fs::File::create(dir.join("daemon.err")).unwrap();
    let child = std::process::Command::new(common::BIN)
        .args(["serve", "--listen", &addr, "--state-dir"])
        .arg(dir)
        .env("SLUICE_TOKEN", TOKEN)
        .stderr(log)
        .spawn()
        .unwrap();
    let _daemon = Daemon { child };
    let mut c = Client::to(Target::Tcp {
        addr,
        token: TOKEN.into(),
    });
    let h = common::poll(60, "the daemon on TCP", || {
        c.get::<Health>("/v1/health").ok()
    });
    assert_eq!(h.status, "ok");
}

/// `sluice ARGS… --state-dir DIR` run as uid 65534 (nobody), an unprivileged second user.
fn as_nobody(dir: &Path, args: &[&str]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(common::BIN)
        .args(args)
        .arg("--state-dir")
        .arg(dir)
        .current_dir("/")
        .env_clear()
        .uid(65534)
        .output()
        .unwrap()
}

/// Issue 33, item 9: each bad input as the issue wrote it is refused with a message naming it,
/// by the rule submit and update share, and creates no job.
#[test]
fn bad_job_requests_are_refused_by_one_rule_and_create_no_job() {
    let scratch = state_dir("input");
    let dir = scratch.path();
    let _daemon = Daemon::start(dir);
    let mut c = Client::new(dir);

    // ntasks = cpus_per_task = 4294967295: even an admin's is refused, in full figures.
    let mut huge = common::wrap("huge", "true", dir);
    huge.ntasks = Some(u32::MAX);
    huge.cpus_per_task = Some(u32::MAX);
    let err = c
        .post::<_, JobSubmitted>("/v1/jobs", &huge)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("requested node configuration is not available")
            && err.contains("4294967295 × 4294967295 = 18446744065119617025 CPUs"),
        "{err}"
    );

    // An empty body, and two Content-Length headers that differ (the last once won).
    let (status, body) = raw(
        unix(dir),
        b"POST /v1/jobs HTTP/1.1\r\nHost: sluice\r\nContent-Length: 0\r\n\r\n".to_vec(),
    )
    .expect("no answer to an empty submission");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("the body is empty"), "{body}");
    let job = serde_json::to_string(&common::wrap("twice", "true", dir)).unwrap();
    let twice = |first: usize, second: usize| {
        format!(
            "POST /v1/jobs HTTP/1.1\r\nHost: sluice\r\nContent-Length: {first}\r\nContent-Length: {second}\r\n\r\n{job}"
        )
        .into_bytes()
    };
    for (first, second) in [(job.len(), 2), (2, job.len())] {
        let (status, body) = raw(unix(dir), twice(first, second)).expect("no answer");
        assert_eq!(status, 400, "Content-Length {first} and {second}: {body}");
    }
    // An admin's node update and reservation naming 16.7 million hosts: refused from the
    // ranges, before a name is made.
    let many = vec!["n[0-65535]"; 256].join(",");
    let drain = NodeActionRequest {
        reason: "maintenance".into(),
    };
    let err = c
        .post::<_, NodeActionDone>(&format!("/v1/nodes/{}/drain", segment(&many)), &drain)
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected at most 65536 in all"), "{err}");
    let reservation = Reservation {
        name: "everything".into(),
        start: 0,
        end: i64::MAX,
        nodes: vec![many],
        users: vec!["root".into()],
        ..Reservation::default()
    };
    let err = c
        .post::<_, ReservationCreated>("/v1/reservations", &reservation)
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected at most 65536 in all"), "{err}");

    assert!(
        common::all_jobs(dir).is_empty(),
        "a refused request created a job: {:?}",
        common::all_jobs(dir)
    );

    // Equal lengths frame the body unambiguously (hyper keeps one, as RFC 9110 allows): one
    // job. And the queue is not blocked by what was refused: it runs.
    let (status, body) = raw(unix(dir), twice(job.len(), job.len())).expect("no answer");
    assert_eq!(status, 200, "{body}");
    let ok: JobSubmitted = serde_json::from_str(&body).unwrap();
    assert_eq!(common::all_jobs(dir).len(), 1);
    common::wait_for(dir, ok.job_id, &["COMPLETED"], 30);

    // SAFETY: geteuid has no preconditions.
    if unsafe { geteuid() } != 0 {
        eprintln!("non-admin cases skipped: switching uid needs root");
        return;
    }
    // A non-admin's negative nice, at submit: out of Slurm's range, then merely negative.
    for (nice, why) in [
        (
            "--nice=-2147483648",
            "expected between -2147483645 and 2147483645",
        ),
        ("--nice=-1", "only an admin may set a negative nice"),
    ] {
        let out = as_nobody(dir, &["submit", "--export-none", nice, "--wrap", "true"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(why), "{nice}: {err}");
    }
    assert_eq!(
        common::all_jobs(dir).len(),
        1,
        "a refused submission created a job"
    );
    // The same rule at update: a held job of nobody's may be made nicer, not less nice.
    let out = as_nobody(
        dir,
        &[
            "submit",
            "--parsable",
            "--export-none",
            "--hold",
            "--nice=5",
            "--wrap",
            "true",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = as_nobody(dir, &["update", "job", &id, "Nice=1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("only an admin may set a negative nice or lower it"),
        "{err}"
    );
    assert!(
        as_nobody(dir, &["update", "job", &id, "Nice=9"])
            .status
            .success()
    );
    // An admin may.
    let root = common::sluice(
        dir,
        &[
            "submit",
            "--export-none",
            "--nice=-1",
            "--hold",
            "--wrap",
            "true",
        ],
    );
    assert!(
        root.status.success(),
        "{}",
        String::from_utf8_lossy(&root.stderr)
    );
}

unsafe extern "C" {
    fn geteuid() -> u32;
}
