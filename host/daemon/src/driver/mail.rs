//! Mail about a job's events (`--mail-type`, `--mail-user`), as slurmctld sends it: the
//! daemon.toml `mail_prog` (Slurm's MailProg) run as `MAILPROG -s SUBJECT USER` with the job's
//! `SLURM_JOB_*` variables, as the job's user when the daemon is root, by one worker thread so
//! the driver never waits for it.

use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

use sluice_cluster::time::format_duration;

use super::Driver;

/// Mails waiting for the worker; beyond this many, new ones are dropped with a warning.
const QUEUE: usize = 1024;

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

/// The worker's queue, started on first use.
fn worker() -> &'static SyncSender<Mail> {
    static SENDER: OnceLock<SyncSender<Mail>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (tx, rx) = sync_channel::<Mail>(QUEUE);
        let spawned = std::thread::Builder::new()
            .name("mail".into())
            .spawn(move || {
                for m in rx {
                    send(&m);
                }
            });
        if let Err(e) = spawned {
            tracing::error!("mail: cannot start the mail thread: {e}");
        }
        tx
    })
}

/// Runs the mail program for one mail and waits for it.
fn send(m: &Mail) {
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
        .stderr(Stdio::null());
    if let Some((uid, gid)) = m.as_user {
        use std::os::unix::process::CommandExt;
        // As the job's user: the mail program gets no more rights than the job has.
        cmd.uid(uid).gid(gid);
    }
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => tracing::warn!("mail: {} ended with {s} for {:?}", m.prog, m.subject),
        Err(e) => tracing::warn!("mail: cannot run {}: {e}", m.prog),
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
            tracing::warn!("job {id}: mail recipient {to:?} refused");
            return;
        }
        // SAFETY: plain system call.
        let root = unsafe { libc::geteuid() } == 0;
        let as_user = if root {
            match crate::identity::passwd_entry(rec.uid) {
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
            as_user,
            env,
        };
        match worker().try_send(mail) {
            Ok(()) => {}
            Err(TrySendError::Full(m)) => {
                tracing::warn!("mail: queue full, dropped {:?}", m.subject)
            }
            Err(TrySendError::Disconnected(m)) => {
                tracing::warn!("mail: no mail thread, dropped {:?}", m.subject)
            }
        }
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
