//! Jobs contained in cgroups (issue 48, "Containment with cgroups"), against the real daemon as
//! root with jobs of a second, unprivileged user: a job over its `--mem` ends OUT_OF_MEMORY and
//! the daemon stays up; a job sees its own cgroup and the CPUs it was given; a job that forks a
//! daemon and exits leaves no process and no cgroup; a supervisor killed with SIGKILL leaves
//! nothing of its job running once the daemon notices. Each test skips, saying why, when the
//! machine has no usable cgroup controller for it.

use std::path::{Path, PathBuf};

use sluice_api::Health;
use sluice_client::Client;

mod common;

use common::unprivileged::TestUser;
use common::{Daemon, end_jobs, log_of, poll, run_dir, state_dir, wait_for};

/// A daemon for `dir` with `[cgroup]` settings `cgroup`, and the bases its log says jobs go
/// under, with their controllers; `None` (said why) when no cgroup is usable.
fn daemon_with(dir: &Path, cgroup: &str) -> Option<(Daemon, Vec<(PathBuf, String)>)> {
    std::fs::write(dir.join("daemon.toml"), format!("[cgroup]\n{cgroup}\n")).unwrap();
    let d = Daemon::start_with(dir, &[]);
    let log = log_of(dir);
    let bases: Vec<(PathBuf, String)> = log
        .lines()
        .filter_map(|l| {
            let rest = &l[l.find("jobs under ")? + "jobs under ".len()..];
            let (path, controllers) = rest.rsplit_once(" (")?;
            Some((
                PathBuf::from(path),
                controllers.trim_end_matches(')').to_string(),
            ))
        })
        .collect();
    if bases.is_empty() {
        eprintln!("skipped: no cgroup is usable here: {log}");
        return None;
    }
    Some((d, bases))
}

/// The base of controller `c`, if the daemon uses one (v2: the one base, which has them all).
fn base_of(bases: &[(PathBuf, String)], c: &str) -> Option<PathBuf> {
    bases
        .iter()
        .find(|(_, cs)| cs.split(", ").any(|x| x == c))
        .map(|(p, _)| p.clone())
}

/// The pids in a cgroup directory and every cgroup below it.
fn procs_below(dir: &Path) -> Vec<i32> {
    let mut out: Vec<i32> = std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(procs_below(&e.path()));
        }
    }
    out
}

fn alive(pid: i32) -> bool {
    // A zombie is dead: its parent just has not reaped it yet.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
    })
}

/// Processes of `uid` still running.
fn processes_of(uid: u32) -> Vec<String> {
    let out = std::process::Command::new("ps")
        .args(["-o", "pid=,stat=,args=", "-u", &uid.to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.split_whitespace().nth(1).unwrap_or("").starts_with('Z'))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_job_over_its_memory_ends_out_of_memory_and_the_daemon_stays_up() {
    let Some(user) = TestUser::create("m") else {
        return;
    };
    let scratch = state_dir("cg-oom");
    let dir = scratch.path();
    let Some((_d, bases)) = daemon_with(dir, "constrain_ram_space = true") else {
        return;
    };
    if base_of(&bases, "memory").is_none() {
        eprintln!("skipped: no memory controller: {bases:?}");
        return;
    }
    // tail keeps a "line" with no newline whole: 200 MB against a 50 MB limit.
    let id = user.submit(
        dir,
        &[
            "--mem=50M",
            "-o",
            "oom.out",
            "--wrap",
            "head -c 200M /dev/zero | tail >/dev/null; echo after",
        ],
    );
    let j = wait_for(dir, id, &["OUT_OF_MEMORY", "COMPLETED", "FAILED"], 120);
    end_jobs(dir);
    assert_eq!(j.state, "OUT_OF_MEMORY", "{j:?}\n{}", log_of(dir));
    assert_eq!(j.reason, "OutOfMemory", "{j:?}");
    let log = log_of(dir);
    assert!(
        log.contains(&format!("oom_kill event in StepId={id}.batch")),
        "{log}"
    );
    // The script went on after its pipeline was killed, as a step does under Slurm.
    let out = std::fs::read_to_string(user.home.join("oom.out")).unwrap();
    assert!(out.contains("after"), "{out}");
    // The daemon is up, and the next job runs.
    Client::new(dir).get::<Health>("/v1/health").unwrap();
    let next = user.submit(dir, &["--mem=50M", "--wrap", "true"]);
    let j = wait_for(dir, next, &["COMPLETED", "FAILED", "OUT_OF_MEMORY"], 60);
    assert_eq!(j.state, "COMPLETED", "{j:?}");
    let sacct = common::sluice(dir, &["acct", "-j", &id.to_string(), "--json"]);
    println!("sacct: {}", String::from_utf8_lossy(&sacct.stdout));
}

#[test]
fn a_job_runs_in_its_own_cgroup_on_the_cpus_it_was_given() {
    let Some(user) = TestUser::create("c") else {
        return;
    };
    let scratch = state_dir("cg-cpus");
    let dir = scratch.path();
    let Some((_d, bases)) = daemon_with(dir, "constrain_cores = true") else {
        return;
    };
    let Some(cpuset) = base_of(&bases, "cpuset") else {
        eprintln!("skipped: no cpuset controller: {bases:?}");
        return;
    };
    let show = "cat /proc/self/cgroup; grep Cpus_allowed_list /proc/self/status";
    // Two one-CPU jobs on one node: the first holds the node's CPU 0, the second its CPU 1.
    let first = user.submit(
        dir,
        &[
            "-w",
            "node01",
            "-n",
            "1",
            "-o",
            "a.out",
            "--wrap",
            &format!("{show}; sleep 60"),
        ],
    );
    wait_for(dir, first, &["RUNNING"], 60);
    poll(30, "the first job's output", || {
        std::fs::read_to_string(user.home.join("a.out"))
            .ok()
            .filter(|t| t.contains("Cpus_allowed_list"))
    });
    let second = user.submit(
        dir,
        &["-w", "node01", "-n", "1", "-o", "b.out", "--wrap", show],
    );
    let j = wait_for(dir, second, &["COMPLETED", "FAILED"], 60);
    let _ = common::sluice(dir, &["cancel", &first.to_string()]);
    wait_for(dir, first, &["CANCELLED"], 60);
    // Each job's cgroup goes with it, removed by its supervisor.
    poll(60, "the jobs' cgroups to be removed", || {
        [first, second]
            .iter()
            .all(|id| {
                bases
                    .iter()
                    .all(|(b, _)| !b.join(format!("job_{id}")).exists())
            })
            .then_some(())
    });
    end_jobs(dir);
    assert_eq!(j.state, "COMPLETED", "{j:?}");
    // The CPUs the daemon may use, which the node's CPU ids are mapped onto (id % count).
    let allowed = sluice_daemon::cgroup::parse_list(
        &std::fs::read_to_string(cpuset.parent().unwrap().join("cpuset.effective_cpus"))
            .or_else(|_| {
                std::fs::read_to_string(cpuset.parent().unwrap().join("cpuset.cpus.effective"))
            })
            .unwrap(),
    );
    for (id, file, node_cpu) in [(first, "a.out", 0usize), (second, "b.out", 1)] {
        let out = std::fs::read_to_string(user.home.join(file)).unwrap();
        println!("job {id}:\n{out}");
        let step = format!("/job_{id}/step_batch");
        for (base, controllers) in &bases {
            let name = base.file_name().unwrap().to_string_lossy();
            let want = format!("{name}{step}");
            let first_controller = controllers.split(", ").next().unwrap();
            assert!(
                out.lines()
                    .any(|l| l.contains(&want)
                        && (l.starts_with("0::") || l.contains(first_controller))),
                "job {id} is not in {want} ({controllers}): {out}"
            );
        }
        let cpus = out
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_string();
        assert_eq!(
            cpus,
            allowed[node_cpu % allowed.len()].to_string(),
            "job {id} was given node CPU {node_cpu}; the machine has {allowed:?}"
        );
    }
}

/// A script that starts two daemons (one in a session of its own, one double-forked), writes
/// their pids to `pids` in its working directory, and then runs `then`.
fn forking_script(then: &str) -> String {
    format!(
        "setsid nohup sleep 600 >/dev/null 2>&1 </dev/null & echo $! > pids\n\
         (sh -c 'sleep 601 >/dev/null 2>&1 </dev/null & echo $! >> pids' &)\n\
         while [ $(wc -l < pids) -lt 2 ]; do sleep 0.1; done\n\
         {then}\n"
    )
}

fn daemons_of(home: &Path) -> Vec<i32> {
    std::fs::read_to_string(home.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn a_job_that_forks_a_daemon_and_exits_leaves_no_process_and_no_cgroup() {
    let Some(user) = TestUser::create("k") else {
        return;
    };
    let scratch = state_dir("cg-fork");
    let dir = scratch.path();
    let Some((_d, bases)) = daemon_with(dir, "") else {
        return;
    };
    let id = user.submit(dir, &["--wrap", &forking_script("exit 0")]);
    let j = wait_for(dir, id, &["COMPLETED", "FAILED"], 60);
    end_jobs(dir);
    assert_eq!(j.state, "COMPLETED", "{j:?}");
    let daemons = daemons_of(&user.home);
    assert_eq!(daemons.len(), 2, "the job did not start its daemons");
    let left: Vec<i32> = daemons.iter().copied().filter(|p| alive(*p)).collect();
    assert!(
        left.is_empty(),
        "left running: {left:?} {:?}",
        processes_of(user.uid)
    );
    assert!(
        processes_of(user.uid).is_empty(),
        "{:?}",
        processes_of(user.uid)
    );
    for (base, _) in &bases {
        assert!(
            !base.join(format!("job_{id}")).exists(),
            "{} remains",
            base.display()
        );
    }
}

#[test]
fn a_killed_supervisor_leaves_nothing_of_its_job_running_once_the_daemon_notices() {
    let Some(user) = TestUser::create("s") else {
        return;
    };
    let scratch = state_dir("cg-crash");
    let dir = scratch.path();
    let Some((_d, bases)) = daemon_with(dir, "") else {
        return;
    };
    let id = user.submit(dir, &["--wrap", &forking_script("sleep 600")]);
    wait_for(dir, id, &["RUNNING"], 60);
    let job_dir = bases[0].0.join(format!("job_{id}"));
    // The script, its sleep and the two daemons are all in the job's cgroup.
    let members = poll(30, "the job's daemons", || {
        let m = procs_below(&job_dir);
        (daemons_of(&user.home).len() == 2 && m.len() >= 4).then_some(m)
    });
    for d in daemons_of(&user.home) {
        assert!(
            members.contains(&d),
            "{d} is not in {}: {members:?}",
            job_dir.display()
        );
    }
    let pids: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir(dir, id).join("pids")).unwrap()).unwrap();
    let supervisor = pids["supervisor"].as_i64().unwrap() as i32;
    // SAFETY: plain system call, on the supervisor this test's daemon started.
    unsafe { libc::kill(supervisor, libc::SIGKILL) };
    let j = wait_for(dir, id, &["FAILED", "NODE_FAIL", "COMPLETED"], 60);
    println!("after the supervisor's SIGKILL: {} {}", j.state, j.reason);
    let left = poll(90, "the job's processes to end", || {
        let left: Vec<i32> = members.iter().copied().filter(|p| alive(*p)).collect();
        left.is_empty().then_some(left)
    });
    assert!(left.is_empty());
    assert!(
        processes_of(user.uid).is_empty(),
        "{:?}",
        processes_of(user.uid)
    );
    poll(30, "the job's cgroup to be removed", || {
        bases
            .iter()
            .all(|(b, _)| !b.join(format!("job_{id}")).exists())
            .then_some(())
    });
}
