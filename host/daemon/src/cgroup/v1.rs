//! cgroup v1: one hierarchy per controller, each job's cgroup made in each; cpusets must be
//! given CPUs and memory nodes before they take a process, and the freezer stops a job while
//! it is killed.

use std::fs;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{Base, Controller, Flavor, JobCgroup, Limits};

/// The v1 flavour.
pub(super) struct V1;

/// Writes `value` into the cgroup file `name` of `dir`.
fn write(dir: &Path, name: &str, value: &str) -> io::Result<()> {
    fs::write(dir.join(name), value)
        .map_err(|e| io::Error::new(e.kind(), format!("{name} = {value}: {e}")))
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The value of `key` in a cgroup file of `key value` lines.
pub(super) fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

impl Flavor for V1 {
    fn prepare(&self, base: &Base, dir: &Path) -> io::Result<()> {
        if !base.controllers.contains(&Controller::Cpuset) {
            return Ok(());
        }
        // A new cpuset has no CPUs and no memory nodes, and takes no process until given some.
        let parent = dir.parent().unwrap_or(dir);
        for name in ["cpuset.cpus", "cpuset.mems"] {
            if read(dir, name).is_empty() {
                write(dir, name, &read(parent, name))?;
            }
        }
        Ok(())
    }

    fn limit(
        &self,
        base: &Base,
        dir: &Path,
        limits: &Limits,
        cpus: Option<&str>,
    ) -> io::Result<()> {
        for c in &base.controllers {
            match c {
                Controller::Cpuset => {
                    if let Some(cpus) = cpus.filter(|c| !c.is_empty()) {
                        write(dir, "cpuset.cpus", cpus)?;
                    }
                }
                Controller::Memory => {
                    if let Some(soft) = limits.memory_soft {
                        write(dir, "memory.soft_limit_in_bytes", &soft.to_string())?;
                    }
                    if let Some(hard) = limits.memory {
                        write(dir, "memory.limit_in_bytes", &hard.to_string())?;
                    }
                    // Only where the kernel accounts swap (`swapaccount`).
                    if let Some(both) = limits.memory_swap
                        && dir.join("memory.memsw.limit_in_bytes").exists()
                    {
                        write(dir, "memory.memsw.limit_in_bytes", &both.to_string())?;
                    }
                }
                Controller::Devices => {
                    for file in &limits.denied_devices {
                        if let Some(rule) = super::device_rule(file) {
                            write(dir, "devices.deny", &format!("{rule} rwm"))?;
                        }
                    }
                }
                Controller::Freezer => {}
            }
        }
        Ok(())
    }

    fn parent_cpus(&self, base: &Base) -> Option<String> {
        let parent = base.dir.parent()?;
        let effective = read(parent, "cpuset.effective_cpus");
        Some(if effective.is_empty() {
            read(parent, "cpuset.cpus")
        } else {
            effective
        })
    }

    fn kill(&self, cg: &JobCgroup) {
        let freezer = cg
            .hierarchy
            .bases
            .iter()
            .find(|b| b.controllers.contains(&Controller::Freezer))
            .map(|b| cg.job_dir(b));
        // Frozen, no process forks or exits while each is sent SIGKILL, so every pid read is
        // still its process; the signals take effect at the thaw.
        let frozen = freezer.as_deref().is_some_and(freeze);
        for pid in cg.pids() {
            if frozen {
                // SAFETY: plain system call on a stopped process of the job.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            } else {
                super::signal_member(pid, libc::SIGKILL, &cg.marker());
            }
        }
        if let Some(f) = &freezer {
            let _ = write(f, "freezer.state", "THAWED");
        }
    }

    fn oom_kills(&self, dir: &Path) -> Option<u64> {
        // Each v1 cgroup counts the kills of its own processes alone.
        super::sum_below(dir, "memory.oom_control", "oom_kill")
    }
}

/// Freezes the cgroup `dir`, waiting a little for it to be frozen; false when it is not.
fn freeze(dir: &Path) -> bool {
    if write(dir, "freezer.state", "FROZEN").is_err() {
        return false;
    }
    let until = Instant::now() + Duration::from_millis(500);
    loop {
        if read(dir, "freezer.state") == "FROZEN" {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
