//! Mail about a job's events (`--mail-type`, `--mail-user`), as slurmctld sends it: the
//! daemon.toml `mail_prog` (Slurm's MailProg) run as `MAILPROG -s SUBJECT USER` with the job's
//! `SLURM_JOB_*` variables, as the job's user when the daemon is root, off the driver thread.
//!
//! The program runs as the user, who may stop it (SIGSTOP) or make it wait: each user's mail
//! has a worker and a bounded queue of its own, and a run that outlasts [`TIME_LIMIT`] is
//! killed, so one user's stuck mail delays only that user's.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use sluice_cluster::time::format_duration;

use super::Driver;
use crate::escaped::escaped;

/// Mails waiting for one user's worker; beyond this many, that user's new ones are dropped with
/// a warning.
const QUEUE_PER_USER: usize = 64;

/// Users whose mail is sent at once, a worker thread each; mail of a further user is dropped
/// with a warning while this many are busy.
const MAX_WORKERS: usize = 32;

/// The longest one run of the mail program may take before it is killed (with whatever it
/// started in its process group).
pub const TIME_LIMIT: Duration = Duration::from_secs(60);

/// How long a worker with nothing to send waits for its user's next mail before it ends.
const IDLE: Duration = Duration::from_secs(30);

/// A job event mail may be sent for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailEvent {
    /// The job started, after waiting `queued` seconds.
    Began {
        /// Seconds from submission to start.
        queued: u64,
    },
    /// The job ended.
    Ended {
        /// Seconds it ran (0 if it never did).
        run: u64,
        /// Its final state's long name (`COMPLETED`, `FAILED`…).
        state: &'static str,
        /// Its exit code.
        exit_code: i32,
    },
}

/// One mail to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    /// The program.
    pub prog: String,
    /// `-s` subject.
    pub subject: String,
    /// Recipient.
    pub to: String,
    /// The job's owner, whose worker sends it.
    pub owner: u32,
    /// Run as this uid and gid (when the daemon is root).
    pub as_user: Option<(u32, u32)>,
    /// `SLURM_JOB_*` variables.
    pub env: Vec<(String, String)>,
}

/// Whether `mail_type` (`BEGIN,END`…) asks for mail about `event`; if so, the word Slurm's
/// subject uses (`Began`, `Ended`, `Failed`). A failed job gets the `Failed` mail when FAIL is
/// asked for, else the `Ended` one.
pub fn verb(mail_type: &str, event: MailEvent) -> Option<&'static str> {
    let types: Vec<String> = mail_type
        .split(',')
        .map(|t| t.trim().to_ascii_uppercase())
        .collect();
    let has = |t: &str| types.iter().any(|x| x == t || x == "ALL");
    match event {
        MailEvent::Began { .. } => has("BEGIN").then_some("Began"),
        MailEvent::Ended { state, .. } => {
            let failed = matches!(state, "FAILED" | "NODE_FAIL");
            if failed && has("FAIL") {
                Some("Failed")
            } else if has("END") {
                Some("Ended")
            } else {
                None
            }
        }
    }
}

/// Slurm's subject: `Slurm Job_id=5 Name=train Ended, Run time 00:01:02, COMPLETED, ExitCode 0`
/// (the name cut at 24 characters, as Slurm does).
pub fn subject(id: u64, name: &str, verb: &str, event: MailEvent) -> String {
    let name: String = name.chars().take(24).collect();
    let detail = match event {
        MailEvent::Began { queued } => format!(", Queued time {}", format_duration(queued)),
        MailEvent::Ended {
            run,
            state,
            exit_code,
        } => format!(
            ", Run time {}, {state}, ExitCode {exit_code}",
            format_duration(run)
        ),
    };
    format!("Slurm Job_id={id} Name={name} {verb}{detail}")
}

/// The mail workers: one per user with mail to send, each ending when idle.
struct PostOffice {
    /// How long one run of the mail program may take.
    time_limit: Duration,
    /// Each busy user's worker queue, by uid.
    workers: Mutex<HashMap<u32, SyncSender<Mail>>>,
}

impl PostOffice {
    fn new(time_limit: Duration) -> Arc<Self> {
        Arc::new(Self {
            time_limit,
            workers: Mutex::default(),
        })
    }

    /// The daemon's post office, made on first use.
    fn shared() -> &'static Arc<Self> {
        static OFFICE: OnceLock<Arc<PostOffice>> = OnceLock::new();
        OFFICE.get_or_init(|| Self::new(TIME_LIMIT))
    }

    /// Queues `mail` for its owner's worker, starting one if needed, or drops it with a
    /// warning saying why.
    fn post(self: &Arc<Self>, mail: Mail) {
        let dropped = |m: &Mail, why: &str| {
            tracing::warn!("mail: {why}; dropped \"{}\"", escaped(&m.subject));
        };
        let owner = mail.owner;
        let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        let mail = match workers.get(&owner) {
            None => mail,
            Some(tx) => match tx.try_send(mail) {
                Ok(()) => return,
                Err(TrySendError::Full(m)) => {
                    return dropped(&m, &format!("{QUEUE_PER_USER} mails of its user wait"));
                }
                // A worker that ended (it panicked) is replaced.
                Err(TrySendError::Disconnected(m)) => m,
            },
        };
        workers.remove(&owner);
        if workers.len() >= MAX_WORKERS {
            return dropped(&mail, &format!("{MAX_WORKERS} users' mail is being sent"));
        }
        let (tx, rx) = sync_channel(QUEUE_PER_USER);
        let office = self.clone();
        let started = std::thread::Builder::new()
            .name(format!("mail-{owner}"))
            .stack_size(128 * 1024)
            .spawn(move || office.work(owner, rx));
        if let Err(e) = started {
            return dropped(&mail, &format!("cannot start a mail thread: {e}"));
        }
        let _ = tx.try_send(mail);
        workers.insert(owner, tx);
    }

    /// One user's worker: sends their mail in order, and ends once none came for [`IDLE`].
    fn work(&self, owner: u32, rx: Receiver<Mail>) {
        loop {
            match rx.recv_timeout(IDLE) {
                Ok(m) => send(&m, self.time_limit),
                Err(RecvTimeoutError::Timeout) => {
                    // Under the lock `post` queues with, so no mail is left behind unsent.
                    let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
                    match rx.try_recv() {
                        Ok(m) => {
                            drop(workers);
                            send(&m, self.time_limit);
                        }
                        Err(_) => {
                            workers.remove(&owner);
                            return;
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}

/// Runs the mail program for one mail and waits for it, killing it (and its process group)
/// once it has run for `limit`.
fn send(m: &Mail, limit: Duration) {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(&m.prog);
    cmd.arg("-s")
        .arg(&m.subject)
        .arg(&m.to)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(m.env.iter().map(|(k, v)| (k, v)))
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // A group of its own, so a stuck run is killed with what it started.
        .process_group(0);
    if let Some((uid, gid)) = m.as_user {
        // As the job's user: the mail program gets no more rights than the job has.
        cmd.uid(uid).gid(gid);
    }
    let subject = escaped(&m.subject);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("mail: cannot run {}: {e}", m.prog);
            return;
        }
    };
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => return,
            Ok(Some(s)) => {
                tracing::warn!("mail: {} ended with {s} for \"{subject}\"", m.prog);
                return;
            }
            Ok(None) if Instant::now() >= deadline => {
                // SAFETY: the child is unreaped, so its pid still names its group.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                tracing::warn!(
                    "mail: {} killed after {} s for \"{subject}\"",
                    m.prog,
                    limit.as_secs()
                );
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                tracing::warn!("mail: waiting for {}: {e}", m.prog);
                return;
            }
        }
    }
}

impl Driver {
    /// Queues the mail job `id`'s `--mail-type` asks for about `event`, if any.
    pub(super) fn mail(&self, id: u64, event: MailEvent) {
        let Some(rec) = self.store.image().jobs.get(&id) else {
            return;
        };
        let req = &rec.request;
        let Some(verb) = req.mail_type.as_deref().and_then(|t| verb(t, event)) else {
            return;
        };
        let prog = self.cfg.mail_prog.trim();
        if prog.is_empty() {
            return;
        }
        let to = req.mail_user.clone().unwrap_or_else(|| rec.user.clone());
        if !crate::admission::valid_recipient(&to) {
            tracing::warn!("job {id}: mail recipient \"{}\" refused", escaped(&to));
            return;
        }
        // SAFETY: plain system call.
        let root = unsafe { libc::geteuid() } == 0;
        let as_user = if root {
            match sluice_client::identity::passwd_entry(rec.uid) {
                Some((_, gid)) => Some((rec.uid, gid)),
                None => return,
            }
        } else {
            None
        };
        let name = req.job_name();
        let mut env = vec![
            ("SLURM_JOB_ID".to_string(), id.to_string()),
            ("SLURM_JOBID".to_string(), id.to_string()),
            ("SLURM_JOB_NAME".to_string(), name.clone()),
            ("SLURM_JOB_USER".to_string(), rec.user.clone()),
            ("SLURM_JOB_MAIL_TYPE".to_string(), verb.to_string()),
        ];
        if let MailEvent::Ended {
            state, exit_code, ..
        } = event
        {
            env.push(("SLURM_JOB_STATE".into(), state.into()));
            env.push(("SLURM_JOB_EXIT_CODE_MAX".into(), exit_code.to_string()));
        }
        let mail = Mail {
            prog: prog.to_string(),
            subject: subject(id, &name, verb, event),
            to,
            owner: rec.uid,
            as_user,
            env,
        };
        PostOffice::shared().post(mail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DONE: MailEvent = MailEvent::Ended {
        run: 62,
        state: "COMPLETED",
        exit_code: 0,
    };
    const FAILED: MailEvent = MailEvent::Ended {
        run: 5,
        state: "FAILED",
        exit_code: 3,
    };

    /// A mail program script `body` in `dir`, named `name`.
    fn program(dir: &std::path::Path, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn mail(prog: &str, owner: u32, to: &str) -> Mail {
        Mail {
            prog: prog.into(),
            subject: format!("Slurm Job_id={owner} Name=x Ended"),
            to: to.into(),
            owner,
            as_user: None,
            env: Vec::new(),
        }
    }

    /// Waits (up to 30 s, a bound and no assertion on time) until `path` names `to`; returns
    /// how long that took.
    fn delivered(path: &std::path::Path, to: &str) -> Duration {
        let t = Instant::now();
        while !std::fs::read_to_string(path).is_ok_and(|s| s.lines().any(|l| l == to)) {
            assert!(t.elapsed() < Duration::from_secs(30), "no mail for {to}");
            std::thread::sleep(Duration::from_millis(20));
        }
        t.elapsed()
    }

    /// Lets a program blocked reading a FIFO go, when dropped (the test failing included).
    struct Release(std::path::PathBuf);

    impl Release {
        /// Opens the FIFO for writing and closes it, which ends its reader's wait; fails while
        /// no reader has it open.
        fn release(&self) -> bool {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.0)
                .is_ok()
        }
    }

    impl Drop for Release {
        fn drop(&mut self) {
            self.release();
        }
    }

    #[test]
    fn one_users_stuck_mail_delays_no_other_users() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("held");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let release = Release(fifo.clone());
        let log = dir.path().join("log");
        let stuck = program(
            dir.path(),
            "stuck",
            &format!("cat {} >/dev/null", fifo.display()),
        );
        let deliver = program(
            dir.path(),
            "deliver",
            &format!("echo \"$3\" >> {}", log.display()),
        );
        let office = PostOffice::new(Duration::from_secs(600));
        office.post(mail(&stuck, 1001, "mallory"));
        office.post(mail(&deliver, 1001, "mallory-later"));
        office.post(mail(&deliver, 1002, "alice"));
        let took = delivered(&log, "alice");
        println!(
            "alice's mail, with mallory's stuck: {} ms",
            took.as_millis()
        );
        let mallory = std::fs::read_to_string(&log).unwrap();
        assert!(!mallory.contains("mallory-later"), "{mallory}");
        let t = Instant::now();
        while !release.release() {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the stuck program never read"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        delivered(&log, "mallory-later");
    }

    #[test]
    fn a_mail_program_past_its_time_limit_is_killed_and_the_next_mail_goes() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let pids = dir.path().join("pids");
        // The program and what it started, both to be killed.
        let stuck = program(
            dir.path(),
            "stuck",
            &format!("sleep 600 & echo $! > {}; wait", pids.display()),
        );
        let deliver = program(
            dir.path(),
            "deliver",
            &format!("echo \"$3\" >> {}", log.display()),
        );
        let office = PostOffice::new(Duration::from_millis(500));
        office.post(mail(&stuck, 1001, "mallory"));
        office.post(mail(&deliver, 1001, "mallory-later"));
        let took = delivered(&log, "mallory-later");
        println!("the next mail after a stuck one: {} ms", took.as_millis());
        let sleeper: i32 = std::fs::read_to_string(&pids)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let t = Instant::now();
        // Killed with its group; gone once its parent (the killed program) is reaped by init.
        while std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
            .is_ok_and(|s| !s.contains(") Z "))
        {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the program's child lives on"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn mail_types_choose_the_events() {
        let began = MailEvent::Began { queued: 3 };
        assert_eq!(verb("BEGIN", began), Some("Began"));
        assert_eq!(verb("END", began), None);
        assert_eq!(verb("end", DONE), Some("Ended"));
        assert_eq!(verb("FAIL", DONE), None);
        assert_eq!(verb("END,FAIL", FAILED), Some("Failed"));
        assert_eq!(verb("END", FAILED), Some("Ended"));
        assert_eq!(verb("ALL", began), Some("Began"));
        assert_eq!(verb("NONE", DONE), None);
    }

    #[test]
    fn subjects_read_as_slurms() {
        assert_eq!(
            subject(5, "train", "Ended", DONE),
            "Slurm Job_id=5 Name=train Ended, Run time 00:01:02, COMPLETED, ExitCode 0"
        );
        assert_eq!(
            subject(
                6,
                "a-very-long-job-name-indeed-yes",
                "Began",
                MailEvent::Began { queued: 90_000 }
            ),
            "Slurm Job_id=6 Name=a-very-long-job-name-ind Began, Queued time 1-01:00:00"
        );
    }
}
