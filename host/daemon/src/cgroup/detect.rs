//! Finding, once at start-up, which cgroup hierarchy jobs go in and where: the mounts in
//! `/proc/self/mountinfo`, the daemon's own cgroups in `/proc/self/cgroup`, and a probe that
//! creates and removes a cgroup there. Jobs' cgroups go below the daemon's own, so whatever a
//! service manager holds the daemon to holds its jobs too.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sluice_api::{CgroupConfig, CgroupPlugin};

use super::{Base, Controller, Hierarchy, Version};

/// One cgroup filesystem mounted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The cgroup of the hierarchy mounted there.
    pub root: String,
    /// Where.
    pub point: PathBuf,
    /// v1 or v2.
    pub version: Version,
    /// The controllers of a v1 hierarchy (its super options); empty for v2.
    pub controllers: Vec<String>,
}

/// Reads the cgroup mounts of `/proc/self/mountinfo`'s text.
pub fn mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let (before, after) = l.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let mut after = after.split(' ');
            let fstype = after.next()?;
            let _source = after.next()?;
            let options = after.next().unwrap_or("");
            let version = match fstype {
                "cgroup" => Version::V1,
                "cgroup2" => Version::V2,
                _ => return None,
            };
            Some(Mount {
                root: fields.get(3)?.to_string(),
                point: PathBuf::from(fields.get(4)?.replace("\\040", " ")),
                version,
                controllers: match version {
                    Version::V1 => options.split(',').map(str::to_string).collect(),
                    Version::V2 => Vec::new(),
                },
            })
        })
        .collect()
}

/// The process's cgroup in the hierarchy of `mount`, from `/proc/self/cgroup`'s text, as a
/// directory under the mount point.
pub fn own_dir(self_cgroup: &str, mount: &Mount) -> Option<PathBuf> {
    let path = self_cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (id, list, path) = (parts.next()?, parts.next()?, parts.next()?);
        let matches = match mount.version {
            Version::V2 => id == "0" && list.is_empty(),
            Version::V1 => list
                .split(',')
                .any(|c| !c.is_empty() && mount.controllers.iter().any(|m| m == c)),
        };
        matches.then(|| path.to_string())
    })?;
    let inside = path
        .strip_prefix(mount.root.trim_end_matches('/'))
        .unwrap_or(&path);
    Some(mount.point.join(inside.trim_start_matches('/')))
}

/// The name of this daemon's directory in each hierarchy: `sluice_` and a hash of its spool
/// directory, so daemons with other state directories on one machine never share one.
pub fn base_name(spool: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    // FNV-1a: stable across builds and restarts, which the name must be.
    let hash = spool
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
        });
    format!("sluice_{:08x}", hash as u32)
}

/// What start-up found: the hierarchy in use, or why none is, and notes on what `[cgroup]`
/// asks that it cannot do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The hierarchy, or why none is usable.
    pub hierarchy: Result<Hierarchy, String>,
    /// Constraints asked for that the hierarchy cannot apply.
    pub notes: Vec<String>,
}

/// Finds this process's hierarchy for `cfg`, naming its directory `name`, from the system's
/// own files.
pub fn detect(cfg: &CgroupConfig, name: &str) -> Found {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    choose(cfg, &mounts(&mountinfo), &own, name)
}

/// [`detect`] from the mounts and `/proc/self/cgroup` text given.
pub fn choose(cfg: &CgroupConfig, mounts: &[Mount], own: &str, name: &str) -> Found {
    let mut notes = Vec::new();
    let v1 = || v1_bases(cfg, mounts, own, name, &mut Vec::new());
    let v2_mount = mounts.iter().find(|m| m.version == Version::V2);
    let v2_memory = v2_mount
        .and_then(|m| own_dir(own, m))
        .is_some_and(|d| available(&d).iter().any(|c| c == "memory"));
    let version = match cfg.plugin {
        CgroupPlugin::Disabled => {
            return Found {
                hierarchy: Err("cgroups are disabled in daemon.toml ([cgroup] plugin)".into()),
                notes,
            };
        }
        CgroupPlugin::V1 => Version::V1,
        CgroupPlugin::V2 => Version::V2,
        // v2 when it has the controllers (current distributions), else v1 where mounted.
        CgroupPlugin::Autodetect if v2_memory || (v2_mount.is_some() && v1().is_empty()) => {
            Version::V2
        }
        CgroupPlugin::Autodetect => Version::V1,
    };
    let hierarchy = match version {
        Version::V1 => {
            let bases = v1_bases(cfg, mounts, own, name, &mut notes);
            if bases.is_empty() {
                Err(
                    "no cgroup v1 hierarchy of freezer, memory, cpuset or devices is mounted"
                        .into(),
                )
            } else {
                Ok(Hierarchy { version, bases })
            }
        }
        Version::V2 => match v2_mount.and_then(|m| own_dir(own, m)) {
            None => Err("no cgroup v2 hierarchy is mounted".into()),
            Some(dir) => v2_base(cfg, &dir, name, &mut notes).map(|b| Hierarchy {
                version,
                bases: vec![b],
            }),
        },
    };
    Found {
        hierarchy: hierarchy.and_then(|h| probe(&h).map(|()| h)),
        notes,
    }
}

/// The v1 hierarchies used: the freezer and memory where mounted, the cpuset and devices where
/// `cfg` constrains them.
fn v1_bases(
    cfg: &CgroupConfig,
    mounts: &[Mount],
    own: &str,
    name: &str,
    notes: &mut Vec<String>,
) -> Vec<Base> {
    let wanted = [
        (Controller::Freezer, true),
        (Controller::Memory, true),
        (Controller::Cpuset, cfg.constrain_cores),
        (Controller::Devices, cfg.constrain_devices),
    ];
    let mut bases: Vec<Base> = Vec::new();
    for (c, use_it) in wanted {
        if !use_it {
            continue;
        }
        let Some(m) = mounts
            .iter()
            .find(|m| m.version == Version::V1 && m.controllers.iter().any(|x| x == c.name()))
        else {
            if c != Controller::Freezer {
                notes.push(format!("no cgroup v1 {} hierarchy is mounted", c.name()));
            }
            continue;
        };
        let Some(dir) = own_dir(own, m) else {
            notes.push(format!(
                "this process has no cgroup in {}",
                m.point.display()
            ));
            continue;
        };
        let dir = dir.join(name);
        // Controllers mounted together share one hierarchy, and so one directory.
        match bases.iter_mut().find(|b| b.dir == dir) {
            Some(b) => b.controllers.push(c),
            None => bases.push(Base {
                dir,
                controllers: vec![c],
            }),
        }
    }
    if cfg.constrain_ram_space
        && !bases
            .iter()
            .any(|b| b.controllers.contains(&Controller::Memory))
    {
        notes.push("constrain_ram_space: no memory controller; memory is not limited".into());
    }
    bases
}

/// The controllers a v2 cgroup `dir` can enable for its children.
fn available(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("cgroup.controllers"))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The v2 base under the process's cgroup `own`, with the controllers `cfg` needs enabled in
/// `own` for it. A cgroup holding processes may not enable any, so the daemon first moves
/// itself into a leaf of its own (`<name>_daemon`), as slurmd does under systemd.
fn v2_base(
    cfg: &CgroupConfig,
    own: &Path,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<Base, String> {
    let have = available(own);
    let mut controllers = Vec::new();
    for (c, wanted) in [
        (Controller::Memory, true),
        (Controller::Cpuset, cfg.constrain_cores),
    ] {
        if !wanted {
            continue;
        }
        if have.iter().any(|h| h == c.name()) {
            controllers.push(c);
        } else if c != Controller::Memory || cfg.constrain_ram_space {
            notes.push(format!(
                "the {} controller is not available in {}",
                c.name(),
                own.display()
            ));
        }
    }
    if cfg.constrain_devices {
        notes.push(
            "constrain_devices: device rules need cgroup v1 here (v2's eBPF is not done)".into(),
        );
    }
    let base = Base {
        dir: own.join(name),
        controllers,
    };
    if base.controllers.is_empty() {
        return Ok(base);
    }
    let enable = super::v2::enabling(&base);
    let control = own.join("cgroup.subtree_control");
    match fs::write(&control, &enable) {
        Ok(()) => Ok(base),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            let leaf = own.join(format!("{name}_daemon"));
            let moved = fs::create_dir_all(&leaf)
                .and_then(|()| fs::write(leaf.join("cgroup.procs"), std::process::id().to_string()))
                .and_then(|()| fs::write(&control, &enable));
            moved.map(|()| base).map_err(|e| {
                format!(
                    "cannot enable {enable} in {}: {e} (other processes share the daemon's cgroup; \
                     start it in a cgroup of its own, e.g. a service with Delegate=yes)",
                    control.display()
                )
            })
        }
        Err(e) => Err(format!(
            "cannot enable {enable} in {}: {e}",
            control.display()
        )),
    }
}

/// Creates and removes a cgroup under each base, so a hierarchy that cannot be used (read-only,
/// not root, no delegation) is found at start-up rather than at a job's.
fn probe(h: &Hierarchy) -> Result<(), String> {
    let f = super::flavor(h.version);
    for base in &h.bases {
        let existed = base.dir.exists();
        let probe = base.dir.join("probe");
        let made = super::make_dir(f, base, &base.dir)
            .and_then(|()| super::make_dir(f, base, &probe))
            .and_then(|()| fs::remove_dir(&probe).map_err(|e| super::with_path(e, &probe)));
        if !existed {
            let _ = fs::remove_dir(&base.dir);
        }
        made.map_err(|e: io::Error| format!("cannot create a cgroup: {e}"))?;
    }
    Ok(())
}
