//! cgroup v2: one hierarchy; a cgroup's children get a controller once it is enabled in its
//! `cgroup.subtree_control`, which only a cgroup holding no process may do, so processes live
//! in the leaves (a job's step) alone. `cgroup.kill` ends a whole job at once.

use std::fs;
use std::io;
use std::path::Path;

use super::v1::keyed;
use super::{Base, Controller, Flavor, JobCgroup, Limits};

/// The v2 flavour.
pub(super) struct V2;

fn write(dir: &Path, name: &str, value: &str) -> io::Result<()> {
    fs::write(dir.join(name), value)
        .map_err(|e| io::Error::new(e.kind(), format!("{name} = {value}: {e}")))
}

/// `+cpuset +memory` for `base`'s controllers.
pub(super) fn enabling(base: &Base) -> String {
    base.controllers
        .iter()
        .map(|c| format!("+{}", c.name()))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Flavor for V2 {
    fn prepare(&self, base: &Base, dir: &Path) -> io::Result<()> {
        if base.controllers.is_empty() {
            return Ok(());
        }
        let parent = dir.parent().unwrap_or(dir);
        write(parent, "cgroup.subtree_control", &enabling(base))
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
                    if let Some(hard) = limits.memory {
                        write(dir, "memory.max", &hard.to_string())?;
                        // v2 limits swap alone: what RAM + swap allows beyond the RAM limit.
                        if let Some(both) = limits.memory_swap
                            && dir.join("memory.swap.max").exists()
                        {
                            write(
                                dir,
                                "memory.swap.max",
                                &both.saturating_sub(hard).to_string(),
                            )?;
                        }
                    }
                }
                // Devices are an eBPF program under v2, not a controller: not enabled (detect).
                Controller::Devices | Controller::Freezer => {}
            }
        }
        Ok(())
    }

    fn parent_cpus(&self, base: &Base) -> Option<String> {
        let text = fs::read_to_string(base.dir.parent()?.join("cpuset.cpus.effective")).ok()?;
        Some(text.trim().to_string())
    }

    fn kill(&self, cg: &JobCgroup) {
        for base in &cg.hierarchy.bases {
            let dir = cg.job_dir(base);
            // cgroup.kill (Linux 5.14) kills the whole subtree at once, forks included.
            if write(&dir, "cgroup.kill", "1").is_ok() {
                continue;
            }
            let _ = write(&dir, "cgroup.freeze", "1");
            let marker = cg.marker();
            let mut pids = std::collections::BTreeSet::new();
            super::procs_below(&dir, &mut pids);
            for pid in pids {
                super::signal_member(pid, libc::SIGKILL, &marker);
            }
            let _ = write(&dir, "cgroup.freeze", "0");
        }
    }

    fn oom_kills(&self, dir: &Path) -> Option<u64> {
        // `memory.events` counts the subtree's, unless the hierarchy is mounted with
        // `memory_localevents`; the `.local` files (Linux 5.2) count each cgroup's own.
        super::sum_below(dir, "memory.events.local", "oom_kill").or_else(|| {
            keyed(
                &fs::read_to_string(dir.join("memory.events")).ok()?,
                "oom_kill",
            )
        })
    }
}
