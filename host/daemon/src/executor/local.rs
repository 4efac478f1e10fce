//! The local executor: the demo cluster's nodes are virtual nodes on this machine. Each job runs
//! under its own supervisor process (`sluice supervise`, [`crate::supervisor`]) that outlives
//! the daemon, so a restarted daemon attaches to running jobs instead of running them again.
//!
//! The thread that schedules only queues launches and sends signals: a launch thread writes the
//! spool and has the resident spawner fork supervisors, and one small thread per job waits for
//! its supervisor's end.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::launcher::{self, run_dir};
use super::spawner::Spawner;
use super::watch;
use super::{Attached, Executor, ExitReport, Launch};
use crate::cgroup::Containment;

/// A callback told when a job's processes have ended.
pub type OnExit = Arc<dyn Fn(ExitReport) + Send + Sync>;

/// The current run of a job whose supervisor is (or is about to be) running.
#[derive(Clone, Debug)]
struct Tracked {
    run: u32,
    /// Ended before its supervisor started: the launch thread skips it.
    cancelled: bool,
}

type Jobs = Arc<Mutex<HashMap<u64, Tracked>>>;

/// What the launch thread does.
enum Work {
    /// Start a supervisor (boxed: a launch is large beside a job id).
    Launch(Box<Launch>),
    /// Remove a job's spool, unless a supervisor of it still runs.
    Forget(u64),
}

/// Runs jobs under local supervisors; their spool is `DIR/jobs/<id>/<run>/`.
pub struct LocalExecutor {
    spool: PathBuf,
    jobs: Jobs,
    work: Sender<Work>,
    on_exit: OnExit,
}

impl LocalExecutor {
    /// An executor keeping job spools under `spool`, starting supervisors as
    /// children of `program spawn-supervisors …` (see [`supervisor_program`]), containing jobs
    /// in cgroups as `cgroup` says where a hierarchy is usable, and reporting ends to `on_exit`.
    pub fn new(
        spool: PathBuf,
        program: PathBuf,
        on_exit: OnExit,
        cgroup: &sluice_api::CgroupConfig,
    ) -> Self {
        let containment = Containment::start(cgroup, &spool);
        let jobs: Jobs = Arc::default();
        let (work, rx) = mpsc::channel::<Work>();
        let (s, j, cb) = (spool.clone(), jobs.clone(), on_exit.clone());
        std::thread::Builder::new()
            .name("launch".into())
            .spawn(move || {
                let nice = yield_to_the_api();
                let mut spawner = Spawner::new(program, nice);
                for w in rx {
                    match w {
                        Work::Launch(l) => {
                            launch_one(&s, &mut spawner, containment.as_ref(), &j, &cb, *l)
                        }
                        Work::Forget(job) => remove_spool(&s.join(job.to_string())),
                    }
                }
            })
            .expect("starting the launch thread");
        Self {
            spool,
            jobs,
            work,
            on_exit,
        }
    }

    fn current(&self, job: u64) -> Option<Tracked> {
        self.jobs.lock().expect("job map").get(&job).cloned()
    }
}

/// How much lower than the daemon's the priority (nice value) of the launch thread, and so of
/// the spawner, is when the daemon runs as root: writing spools and forking supervisors yields
/// to the threads that answer the API. Supervisors run a little below the daemon's priority and
/// jobs at it, which only root may give back to them; a daemon of another user changes no
/// priority at all.
pub const NICER_BY: i32 = 10;

/// Lowers the calling thread's priority by [`NICER_BY`] when the daemon runs as root; returns
/// the nice value jobs run at (the daemon's).
fn yield_to_the_api() -> i32 {
    // SAFETY: plain system calls, on this thread alone (Linux keeps a nice value per thread).
    unsafe {
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        if libc::geteuid() == 0 {
            libc::setpriority(
                libc::PRIO_PROCESS,
                libc::gettid() as libc::id_t,
                (nice + NICER_BY).min(19),
            );
        }
        nice
    }
}

/// The supervisor program: `sluice-supervise` beside this executable when it is installed (a
/// small program: the spawner forks it once per job), else this executable, whose
/// `spawn-supervisors` subcommand is the same code.
pub fn supervisor_program() -> std::io::Result<PathBuf> {
    let me = std::env::current_exe()?;
    let small = me.with_file_name("sluice-supervise");
    Ok(if small.is_file() { small } else { me })
}

/// Starts one launch's supervisor and its watcher, or reports why it could not.
fn launch_one(
    spool: &Path,
    spawner: &mut Spawner,
    containment: Option<&Containment>,
    jobs: &Jobs,
    on_exit: &OnExit,
    l: Launch,
) {
    let (job, run) = (l.job, l.run);
    let cancelled = jobs
        .lock()
        .expect("job map")
        .get(&job)
        .is_none_or(|t| t.run != run || t.cancelled);
    if cancelled {
        forget(jobs, job, run);
        on_exit(ExitReport::failed(
            job,
            run,
            "ended before it started".into(),
        ));
        return;
    }
    let dir = run_dir(spool, job, run);
    match launcher::start(spawner, containment, &dir, &l) {
        Ok(()) => watch_run(dir, job, run, jobs.clone(), on_exit.clone()),
        Err(e) => {
            tracing::error!("job {job}: launch failed: {e}");
            forget(jobs, job, run);
            on_exit(ExitReport::failed(job, run, format!("launch failed: {e}")));
        }
    }
}

/// A thread that waits for the supervisor in `dir` and reports the job's end.
fn watch_run(dir: PathBuf, job: u64, run: u32, jobs: Jobs, on_exit: OnExit) {
    let spawned = std::thread::Builder::new()
        .name(format!("job-{job}"))
        .stack_size(64 * 1024)
        .spawn(move || {
            let report = watch::until_end(&dir, job, run);
            forget(&jobs, job, run);
            on_exit(report);
        });
    if let Err(e) = spawned {
        tracing::error!("job {job}: cannot watch its supervisor: {e}");
    }
}

/// Removes a job's spool directory, unless a supervisor of one of its runs still holds its lock.
fn remove_spool(job_dir: &Path) {
    let Ok(runs) = std::fs::read_dir(job_dir) else {
        return;
    };
    let live = runs.filter_map(|e| e.ok()).any(|e| watch::alive(&e.path()));
    if !live && let Err(e) = std::fs::remove_dir_all(job_dir) {
        tracing::warn!("{}: {e}", job_dir.display());
    }
}

/// Drops `job` from the map if `run` is still its current run.
fn forget(jobs: &Jobs, job: u64, run: u32) {
    let mut map = jobs.lock().expect("job map");
    if map.get(&job).is_some_and(|t| t.run == run) {
        map.remove(&job);
    }
}

/// Sends `signal` to the supervisor in `dir` (`to_job`: to the job's process group instead).
fn signal_run(dir: &Path, signal: i32, to_job: bool) -> Result<(), String> {
    if !watch::alive(dir) {
        return Err("its supervisor has ended".into());
    }
    let pids = watch::pids(dir).ok_or("its processes are still starting")?;
    let target = if to_job {
        -(pids.job as i32)
    } else {
        pids.supervisor as i32
    };
    // SAFETY: plain system call.
    if unsafe { libc::kill(target, signal) } < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

impl Executor for LocalExecutor {
    fn launch(&mut self, l: Launch) -> Result<(), String> {
        self.jobs.lock().expect("job map").insert(
            l.job,
            Tracked {
                run: l.run,
                cancelled: false,
            },
        );
        let (job, run) = (l.job, l.run);
        self.work.send(Work::Launch(Box::new(l))).map_err(|_| {
            forget(&self.jobs, job, run);
            "the launch thread has stopped".to_string()
        })
    }

    fn signal(&mut self, job: u64, signal: i32) -> Result<(), String> {
        let t = self
            .current(job)
            .ok_or_else(|| format!("job {job} has no running processes"))?;
        signal_run(&run_dir(&self.spool, job, t.run), signal, true)
            .map_err(|e| format!("job {job}: {e}"))
    }

    fn set_time_limit(&mut self, job: u64, limit: Option<Duration>) -> Result<(), String> {
        use crate::supervisor::spool::{self, JOB, JobFile};
        let t = self
            .current(job)
            .ok_or_else(|| format!("job {job} has no running processes"))?;
        let dir = run_dir(&self.spool, job, t.run);
        let mut file: JobFile = spool::read_json(&dir, JOB)
            .map_err(|e| format!("job {job}: {e}"))?
            .ok_or_else(|| format!("job {job}: its spool has no job file"))?;
        file.time_limit = limit.map(|d| d.as_secs());
        spool::write_json(&dir, JOB, &file, spool::Persist::Atomic)
            .map_err(|e| format!("job {job}: {e}"))?;
        // The supervisor reads its limit again on SIGHUP.
        signal_run(&dir, libc::SIGHUP, false).map_err(|e| format!("job {job}: {e}"))
    }

    fn terminate(&mut self, job: u64) {
        let Some(t) = self.current(job) else { return };
        if let Some(entry) = self.jobs.lock().expect("job map").get_mut(&job) {
            entry.cancelled = true;
        }
        let dir = run_dir(&self.spool, job, t.run);
        if signal_run(&dir, libc::SIGTERM, false).is_ok() {
            return;
        }
        // Not started yet, or between its start and its job's fork: ask again shortly, off
        // this thread; a supervisor that ends first needs nothing.
        let spawned = std::thread::Builder::new()
            .name(format!("end-{job}"))
            .stack_size(64 * 1024)
            .spawn(move || {
                for _ in 0..600 {
                    std::thread::sleep(Duration::from_millis(100));
                    if signal_run(&dir, libc::SIGTERM, false).is_ok()
                        || (dir.join(crate::supervisor::spool::STATUS).exists())
                    {
                        return;
                    }
                }
                tracing::warn!("job {job}: its supervisor never answered SIGTERM");
            });
        if let Err(e) = spawned {
            tracing::error!("job {job}: {e}");
        }
    }

    fn attach(&mut self, job: u64, run: u32) -> Attached {
        let dir = run_dir(&self.spool, job, run);
        if watch::alive(&dir) {
            self.jobs.lock().expect("job map").insert(
                job,
                Tracked {
                    run,
                    cancelled: false,
                },
            );
            watch_run(dir, job, run, self.jobs.clone(), self.on_exit.clone());
            return Attached::Running;
        }
        match watch::outcome(&dir, job, run) {
            Some(report) => Attached::Ended(report),
            // Its supervisor records the job's process before anything of the job runs.
            None if watch::pids(&dir).is_none() => Attached::NotStarted,
            None => {
                // Killing what is left may wait on processes that will not die (up to
                // UnkillableStepTimeout): never on the thread that asked, the driver.
                let left = dir.clone();
                let spawned = std::thread::Builder::new()
                    .name("end-orphans".into())
                    .spawn(move || watch::end_orphans(&left));
                if let Err(e) = spawned {
                    tracing::error!("{}: cannot end the job's orphans: {e}", dir.display());
                }
                Attached::Gone
            }
        }
    }

    fn forget(&mut self, job: u64) {
        let _ = self.work.send(Work::Forget(job));
    }

    fn running(&self) -> Vec<u64> {
        self.jobs.lock().expect("job map").keys().copied().collect()
    }
}
