//! Containment of a job's processes in cgroups, as Slurm's proctrack/cgroup and task/cgroup do
//! it: each job in a cgroup of its own (`<base>/job_<id>`, its batch step in `step_batch`
//! below), held to the CPUs (cpuset), memory and devices it was given where the `[cgroup]`
//! settings say so, every process in it killed at its end wherever it moved, and its OOM kills
//! counted so it ends OUT_OF_MEMORY. cgroup v1 and v2 differ only behind [`Flavor`]; which is
//! used, and where, is found once at start-up ([`detect`]).
//!
//! The supervisor (root) creates a job's cgroup and puts the job's process in it before it
//! becomes the user; the daemon kills and removes what a crashed supervisor left.

pub mod detect;
mod v1;
mod v2;

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sluice_api::CgroupConfig;

/// The two kinds of cgroup hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    /// One hierarchy per controller (or group of controllers).
    V1,
    /// The unified hierarchy.
    V2,
}

/// The controllers sluice uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Controller {
    /// The CPUs and memory nodes a job may use.
    Cpuset,
    /// A job's memory, and its OOM kills.
    Memory,
    /// The device files a job may open (v1 only).
    Devices,
    /// Stops a job's processes while they are killed, so none forks meanwhile (v1 only).
    Freezer,
}

impl Controller {
    /// The kernel's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpuset => "cpuset",
            Self::Memory => "memory",
            Self::Devices => "devices",
            Self::Freezer => "freezer",
        }
    }
}

/// One directory under which this daemon's jobs' cgroups go, with the controllers in force
/// there: one per v1 hierarchy used, the one of v2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Base {
    /// `<mount>/<the daemon's own cgroup>/<sluice's name>`.
    pub dir: PathBuf,
    /// What it constrains (v1: its hierarchy's controllers sluice uses; v2: those enabled).
    pub controllers: Vec<Controller>,
}

/// Where this daemon's jobs' cgroups go, as found at start-up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hierarchy {
    /// Which kind.
    pub version: Version,
    /// Every directory a job gets a cgroup under (v2: exactly one).
    pub bases: Vec<Base>,
}

impl Hierarchy {
    /// Whether `c` is in force under some base.
    pub fn has(&self, c: Controller) -> bool {
        self.bases.iter().any(|b| b.controllers.contains(&c))
    }
}

/// What a job is held to on its node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// The CPU ids it was given there, mapped onto the CPUs the daemon may use
    /// (`allowed[id % allowed.len()]`, so ids that fit are used as they are); `None`: all.
    pub cpus: Option<Vec<u32>>,
    /// Hard memory limit, bytes.
    pub memory: Option<u64>,
    /// Soft memory limit, bytes (v1 only: reclaim pressure starts here).
    pub memory_soft: Option<u64>,
    /// Memory plus swap, bytes.
    pub memory_swap: Option<u64>,
    /// Device files it may not open (its node's GRES devices it was not given).
    pub denied_devices: Vec<PathBuf>,
}

impl Limits {
    /// What `cfg` holds a job to that was given `cpu_ids`, `memory_mb` MB (0: none given) and
    /// not the devices `others`, by Slurm's rules: the hard limit is the memory given ×
    /// AllowedRAMSpace %, at least MinRAMSpace, the soft one the memory given; RAM + swap is the
    /// memory given × (AllowedRAMSpace + AllowedSwapSpace) %.
    pub fn of(cfg: &CgroupConfig, cpu_ids: &[u32], memory_mb: u64, others: &[PathBuf]) -> Self {
        const MB: u64 = 1 << 20;
        let percent = |p: f64| ((memory_mb as f64) * p / 100.0 * MB as f64) as u64;
        let floor = cfg.min_ram_space.saturating_mul(MB);
        let given = memory_mb > 0;
        let ram = given && (cfg.constrain_ram_space || cfg.constrain_swap_space);
        Self {
            cpus: (cfg.constrain_cores && !cpu_ids.is_empty()).then(|| cpu_ids.to_vec()),
            memory: ram.then(|| percent(cfg.allowed_ram_space).max(floor)),
            memory_soft: ram.then(|| memory_mb.saturating_mul(MB).max(floor)),
            memory_swap: (given && cfg.constrain_swap_space)
                .then(|| percent(cfg.allowed_ram_space + cfg.allowed_swap_space).max(floor)),
            denied_devices: if cfg.constrain_devices {
                others.to_vec()
            } else {
                Vec::new()
            },
        }
    }
}

/// One job's cgroup: where, and what it is held to. Written into the job's spool file, so the
/// supervisor creates it and the daemon, even a restarted one, can end what is in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCgroup {
    /// Where this daemon's jobs go.
    pub hierarchy: Hierarchy,
    /// The job's own directory's name under each base (`job_<id>`, see [`JobCgroup::new`]).
    pub name: String,
    /// What it is held to.
    pub limits: Limits,
}

/// How this node contains jobs: the hierarchy found at start-up and the `[cgroup]` settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Containment {
    /// Where jobs' cgroups go.
    pub hierarchy: Hierarchy,
    /// What they are held to.
    pub config: CgroupConfig,
}

impl Containment {
    /// Finds the hierarchy for `config`, for a daemon whose job spool is `spool`, and logs what
    /// is used, or why nothing is (jobs are then tracked as their supervisors' descendants).
    pub fn start(config: &CgroupConfig, spool: &Path) -> Option<Self> {
        let found = detect::detect(config, &detect::base_name(spool));
        for note in &found.notes {
            tracing::warn!("cgroup: {note}");
        }
        match found.hierarchy {
            Ok(hierarchy) => {
                for b in &hierarchy.bases {
                    sweep(&b.dir);
                    let names: Vec<&str> = b.controllers.iter().map(|c| c.name()).collect();
                    tracing::info!(
                        "cgroup {:?}: jobs under {} ({})",
                        hierarchy.version,
                        b.dir.display(),
                        names.join(", ")
                    );
                }
                Some(Self {
                    hierarchy,
                    config: config.clone(),
                })
            }
            Err(why) => {
                tracing::warn!(
                    "cgroup: none usable, so jobs are neither limited nor tracked by cgroup \
                     (their processes are tracked as their supervisors' descendants): {why}"
                );
                None
            }
        }
    }

    /// The cgroup of run `run` of job `job`, given `cpu_ids` and `memory_mb` MB on this node
    /// and not the device files `others`.
    pub fn job(
        &self,
        (job, run): (u64, u32),
        cpu_ids: &[u32],
        memory_mb: u64,
        others: &[PathBuf],
    ) -> JobCgroup {
        JobCgroup::new(
            self.hierarchy.clone(),
            (job, run),
            Limits::of(&self.config, cpu_ids, memory_mb, others),
        )
    }
}

/// The name of the batch step's cgroup, as Slurm's `step_batch`.
pub const BATCH_STEP: &str = "step_batch";

/// What differs between cgroup v1 and v2.
trait Flavor {
    /// Makes the new cgroup `dir` of `base` ready to be limited and to take processes (v1
    /// cpuset: its parent's CPUs and memory nodes; v2: the base's controllers enabled in its
    /// parent, which holds no process, so `dir` gets them).
    fn prepare(&self, base: &Base, dir: &Path) -> io::Result<()>;

    /// Writes `limits` into the job's cgroup `dir` of `base`; `cpus` are this machine's.
    fn limit(&self, base: &Base, dir: &Path, limits: &Limits, cpus: Option<&str>)
    -> io::Result<()>;

    /// The CPUs the job's cgroups may be given: those of `base`'s parent.
    fn parent_cpus(&self, base: &Base) -> Option<String>;

    /// Kills every process in the job's cgroup once, stopped first where the kernel allows, so
    /// that none forks meanwhile.
    fn kill(&self, cg: &JobCgroup);

    /// OOM kills counted in the job's memory cgroup `dir` and every cgroup below it.
    fn oom_kills(&self, dir: &Path) -> Option<u64>;
}

fn flavor(v: Version) -> &'static dyn Flavor {
    match v {
        Version::V1 => &v1::V1,
        Version::V2 => &v2::V2,
    }
}

impl JobCgroup {
    /// The cgroup of run `run` of job `job` under `hierarchy`, held to `limits`: `job_<id>` as
    /// Slurm's, `job_<id>_<run>` for a requeued job's later runs, so what is left of an earlier
    /// run is never taken for the new one's.
    pub fn new(hierarchy: Hierarchy, (job, run): (u64, u32), limits: Limits) -> Self {
        Self {
            hierarchy,
            name: if run == 0 {
                format!("job_{job}")
            } else {
                format!("job_{job}_{run}")
            },
            limits,
        }
    }

    fn job_dir(&self, base: &Base) -> PathBuf {
        base.dir.join(&self.name)
    }

    /// The `cgroup.procs` files a process writes its pid into to join step `step`.
    pub fn procs_files(&self, step: &str) -> Vec<PathBuf> {
        self.hierarchy
            .bases
            .iter()
            .map(|b| self.job_dir(b).join(step).join("cgroup.procs"))
            .collect()
    }

    /// Creates the job's cgroup, held to its limits, with step `step` below it. What was made
    /// is removed again when a step fails.
    pub fn create(&self, step: &str) -> io::Result<()> {
        let made = self.try_create(step);
        if made.is_err() {
            let _ = self.remove();
        }
        made
    }

    fn try_create(&self, step: &str) -> io::Result<()> {
        let f = flavor(self.hierarchy.version);
        let cpus = self.limits.cpus.as_ref().and_then(|ids| {
            let base = self
                .hierarchy
                .bases
                .iter()
                .find(|b| b.controllers.contains(&Controller::Cpuset))?;
            Some(map_cpus(ids, &parse_list(&f.parent_cpus(base)?)))
        });
        for base in &self.hierarchy.bases {
            // Another job's end may remove the base between its creation and the job's.
            let mut tries = 0;
            let job = loop {
                make_dir(f, base, &base.dir)?;
                let job = self.job_dir(base);
                match make_dir(f, base, &job) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound && tries < 5 => tries += 1,
                    other => break other.map(|()| job)?,
                }
            };
            f.limit(base, &job, &self.limits, cpus.as_deref())
                .map_err(|e| with_path(e, &job))?;
            make_dir(f, base, &job.join(step))?;
        }
        Ok(())
    }

    /// Every process in the job's cgroup, steps included.
    pub fn pids(&self) -> Vec<libc::pid_t> {
        let mut all = BTreeSet::new();
        for base in &self.hierarchy.bases {
            procs_below(&self.job_dir(base), &mut all);
        }
        all.into_iter().collect()
    }

    /// What a member's `/proc/PID/cgroup` lines hold (each with a `/` added): the base's name
    /// (this daemon's) and the job's.
    fn marker(&self) -> String {
        let base = self
            .hierarchy
            .bases
            .first()
            .and_then(|b| b.dir.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("/{base}/{}/", self.name)
    }

    /// Sends `signal` to every process in the job's cgroup (a pid that meanwhile went to a
    /// process outside it is left alone).
    pub fn signal(&self, signal: i32) {
        let marker = self.marker();
        for pid in self.pids() {
            signal_member(pid, signal, &marker);
        }
    }

    /// Kills every process in the job's cgroup, again and again (a dying process may have
    /// forked) until none is left or `give_up` has passed; returns how many are left.
    pub fn kill_all(&self, give_up: Duration) -> usize {
        let f = flavor(self.hierarchy.version);
        let until = Instant::now() + give_up;
        loop {
            let left = self.pids().len();
            if left == 0 || Instant::now() >= until {
                return left;
            }
            f.kill(self);
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// OOM kills in the job's cgroup so far (0 without a memory controller).
    pub fn oom_kills(&self) -> u64 {
        let f = flavor(self.hierarchy.version);
        self.hierarchy
            .bases
            .iter()
            .filter(|b| b.controllers.contains(&Controller::Memory))
            .filter_map(|b| f.oom_kills(&self.job_dir(b)))
            .max()
            .unwrap_or(0)
    }

    /// Removes the job's cgroup (it must be empty), and the base too when no other job is
    /// left under it. Tries every directory; returns the first failure.
    pub fn remove(&self) -> io::Result<()> {
        let mut first = Ok(());
        for base in &self.hierarchy.bases {
            let job = self.job_dir(base);
            if let Err(e) = remove_tree(&job) {
                first = first.and(Err(with_path(e, &job)));
            }
            // Busy while another job runs: then that job's end removes it.
            let _ = fs::remove_dir(&base.dir);
        }
        first
    }
}

/// How old an empty job cgroup must be before start-up takes it for a leftover: a supervisor
/// fills its new cgroup within moments.
const LEFTOVER_AFTER: Duration = Duration::from_secs(60);

/// Removes the empty job cgroups under `base` that a supervisor killed with its daemon left
/// behind (nothing else removes them), and `base` itself when nothing is left in it.
fn sweep(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let dir = e.path();
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age >= LEFTOVER_AFTER));
        let mut members = BTreeSet::new();
        procs_below(&dir, &mut members);
        if old && members.is_empty() && e.file_type().is_ok_and(|t| t.is_dir()) {
            match remove_tree(&dir) {
                Ok(()) => tracing::info!("cgroup: removed {}, left empty", dir.display()),
                Err(e) => tracing::warn!("cgroup: {}: {e}", dir.display()),
            }
        }
    }
    let _ = fs::remove_dir(base);
}

/// Writes `pid` into each of `files` (`cgroup.procs`): the process joins those cgroups. Called
/// in the job's forked process, before it becomes the user.
pub fn enter(files: &[std::ffi::CString], pid: libc::pid_t) -> io::Result<()> {
    let text = pid.to_string();
    for f in files {
        // SAFETY: a NUL-terminated path; the descriptor is closed below.
        let fd = unsafe { libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened, owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: writing a buffer we own.
        let n = unsafe { libc::write(fd.as_raw_fd(), text.as_ptr().cast(), text.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Creates `dir` (one that exists is kept) and prepares it.
fn make_dir(f: &dyn Flavor, base: &Base, dir: &Path) -> io::Result<()> {
    match fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(with_path(e, dir)),
    }
    f.prepare(base, dir).map_err(|e| with_path(e, dir))
}

/// Removes `dir` and the cgroups below it, deepest first; a missing one is no error. A cgroup
/// whose last process has just ended may be busy a moment longer.
fn remove_tree(dir: &Path) -> io::Result<()> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_tree(&e.path())?;
        }
    }
    let mut tries = 0;
    loop {
        match fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
}

/// The sum over `dir` and every cgroup below it of the `key` line of their file `name`;
/// `None` when `dir` has no such file.
fn sum_below(dir: &Path, name: &str, key: &str) -> Option<u64> {
    let own = v1::keyed(&fs::read_to_string(dir.join(name)).ok()?, key).unwrap_or(0);
    let below: u64 = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| sum_below(&e.path(), name, key))
        .sum();
    Some(own + below)
}

/// Adds the pids in `dir`'s `cgroup.procs` and in every cgroup below it to `out`.
fn procs_below(dir: &Path, out: &mut BTreeSet<libc::pid_t>) {
    if let Ok(text) = fs::read_to_string(dir.join("cgroup.procs")) {
        out.extend(
            text.lines()
                .filter_map(|l| l.trim().parse::<libc::pid_t>().ok()),
        );
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            procs_below(&e.path(), out);
        }
    }
}

/// Sends `signal` to `pid` once its `/proc/PID/cgroup` shows `marker` (the job's directory),
/// the process pinned by a pidfd meanwhile.
fn signal_member(pid: libc::pid_t, signal: i32, marker: &str) {
    crate::supervisor::descendants::signal_pinned(pid, signal, || {
        fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .is_ok_and(|t| t.lines().any(|l| format!("{l}/").contains(marker)))
    });
}

fn with_path(e: io::Error, p: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", p.display()))
}

/// Reads a kernel CPU list (`0-3,8,10-11`).
pub fn parse_list(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

/// The CPUs of `allowed` that allocation ids `ids` stand for, as a kernel list: id `i` is
/// `allowed[i % allowed.len()]`, so a virtual node's ids all land on this machine's CPUs and
/// ids that fit are used as they are. `allowed` empty: left to the kernel (an empty list).
pub fn map_cpus(ids: &[u32], allowed: &[u32]) -> String {
    if allowed.is_empty() {
        return String::new();
    }
    let mut cpus: Vec<u32> = ids
        .iter()
        .map(|&i| allowed[i as usize % allowed.len()])
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Device numbers of a device file as `type major:minor`, as the devices controller spells
/// them (`c 195:0`); `None` when it is no device.
pub fn device_rule(path: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = fs::metadata(path).ok()?;
    let kind = if m.file_type().is_char_device() {
        'c'
    } else if m.file_type().is_block_device() {
        'b'
    } else {
        return None;
    };
    let rdev = m.rdev();
    Some(format!(
        "{kind} {}:{}",
        libc::major(rdev),
        libc::minor(rdev)
    ))
}

#[cfg(test)]
mod tests;
