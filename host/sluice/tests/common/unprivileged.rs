//! A second, unprivileged account, created by a test that plays a local user against a daemon
//! running as root, and removed (with its home) when the test ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use super::BIN;

/// The password database is locked per change: tests in one binary create accounts in turn.
static ACCOUNTS: Mutex<()> = Mutex::new(());

/// A throwaway local account.
pub struct TestUser {
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: u32,
    /// Its primary gid.
    pub gid: u32,
    /// Its home directory (created, owned by it).
    pub home: PathBuf,
}

impl TestUser {
    /// Creates account `sl<tag><pid>`, or says why not and returns `None` (not root, no useradd).
    pub fn create(tag: &str) -> Option<Self> {
        // SAFETY: plain system call.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: creating a second, unprivileged user needs root");
            return None;
        }
        let name = format!("sl{tag}{}", std::process::id());
        let _turn = ACCOUNTS.lock().unwrap_or_else(|e| e.into_inner());
        let _ = Command::new("userdel").args(["-r", &name]).output();
        let made = Command::new("useradd")
            .args(["-m", "-U", "-s", "/bin/sh", &name])
            .output();
        match made {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                eprintln!(
                    "skipped: useradd {name} failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                return None;
            }
            Err(e) => {
                eprintln!("skipped: no useradd: {e}");
                return None;
            }
        }
        let entry = Command::new("getent")
            .args(["passwd", &name])
            .output()
            .ok()?;
        let line = String::from_utf8_lossy(&entry.stdout).trim().to_string();
        let fields: Vec<&str> = line.split(':').collect();
        assert!(fields.len() >= 6, "getent passwd {name}: {line:?}");
        Some(Self {
            uid: fields[2].parse().unwrap(),
            gid: fields[3].parse().unwrap(),
            home: PathBuf::from(fields[5]),
            name,
        })
    }

    /// A command run as this user (its uid, gid and no other group), from its home, with a
    /// user's minimal environment.
    pub fn command(&self, program: &str) -> Command {
        use std::os::unix::process::CommandExt;
        let mut c = Command::new(program);
        c.uid(self.uid)
            .gid(self.gid)
            .current_dir(&self.home)
            .env_clear()
            .env("HOME", &self.home)
            .env("USER", &self.name)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin");
        c
    }

    /// `sluice ARGS… --state-dir DIR` as this user.
    pub fn sluice(&self, dir: &Path, args: &[&str]) -> Output {
        self.command(BIN)
            .args(args)
            .arg("--state-dir")
            .arg(dir)
            .output()
            .unwrap()
    }

    /// `sluice submit --parsable ARGS…` as this user; the new job's id.
    pub fn submit(&self, dir: &Path, args: &[&str]) -> u64 {
        let mut all = vec!["submit", "--parsable"];
        all.extend_from_slice(args);
        let out = self.sluice(dir, &all);
        assert!(
            out.status.success(),
            "submit as {}: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }
}

impl TestUser {
    /// Kills every process running as this user: a job's supervisor outlives its daemon by
    /// design, and a process left behind would belong to the next account given this uid.
    fn end_processes(&self) {
        for _ in 0..50 {
            let left: Vec<i32> = std::fs::read_dir("/proc")
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter(|pid| {
                    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
                        s.lines()
                            .find_map(|l| l.strip_prefix("Uid:"))
                            .and_then(|ids| ids.split_whitespace().next()?.parse::<u32>().ok())
                            == Some(self.uid)
                    })
                })
                .collect();
            if left.is_empty() {
                return;
            }
            for pid in left {
                // SAFETY: plain system call on a process of this throwaway account.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        self.end_processes();
        let _turn = ACCOUNTS.lock().unwrap_or_else(|e| e.into_inner());
        // Forced: a job of the user may still be ending.
        let _ = Command::new("userdel")
            .args(["-f", "-r", &self.name])
            .output();
    }
}
