//! The whole Slurm environment jobs, steps and tasks are given, against the real daemon: every
//! `SLURM_*`, `SLUICE_*` and GPU variable of a two-node GPU array task's batch script and of
//! its srun tasks, and of a one-node job's script and its cyclic srun tasks, compared name by
//! name and value by value with what they were given when the environment was built in four
//! places; so the one builder gives exactly the same.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

mod common;

use common::{BIN, Daemon, end_jobs, poll, state_dir};

/// `sluice ARGS…` in `dir`, with the state directory in the environment and no job around it.
fn run(dir: &Path, args: &[&str], stdin: &str) -> Output {
    common::output_with_stdin(
        Command::new(BIN)
            .args(args)
            .current_dir(dir)
            .env("SLUICE_STATE_DIR", dir)
            .env_remove("SLURM_JOB_ID"),
        stdin.as_bytes(),
    )
}

/// `dump.sh FILE` writes the Slurm side of the environment to FILE, one `NAME=value` a line.
const DUMP: &str = "env | grep -E '^(SLURM|SLURMD|SLUICE|CUDA|GPU)_' | sort > \"$1\"\n";

/// A two-node GPU array (one task at a time, so every task gets the same nodes): each task's
/// script dumps its variables, and the last one's four srun tasks theirs.
const GPU_ARRAY: &str = "#!/bin/sh
#SBATCH --array=1-5:2%1 -N 2 --ntasks-per-node=2 -c 2 -p gpu -J env-gpu
#SBATCH --gpus-per-node=a100:2 --mem-per-cpu=100 -t 10 -o /dev/null
sh DIR/dump.sh batch.$SLURM_ARRAY_TASK_ID
[ $SLURM_ARRAY_TASK_ID = 5 ] && BIN srun -n 4 sh -c 'sh DIR/dump.sh task.$SLURM_PROCID'
touch done.$SLURM_ARRAY_TASK_ID
";

/// A one-node CPU job with its memory asked per node; its srun step deals three tasks
/// cyclically with `-c` given.
const PLAIN: &str = "#!/bin/sh
#SBATCH -n 3 --mem=500 -J env-plain -o /dev/null
sh DIR/dump.sh plain.batch
BIN srun -n 3 -c 1 --distribution=cyclic sh -c 'sh DIR/dump.sh plain.task.$SLURM_PROCID'
touch plain.done
";

/// The variables a dump file holds, with the values that change from run to run (ids, times,
/// this machine and user, the state directory) replaced by what they stand for.
fn vars(file: &Path, dir: &Path) -> BTreeMap<String, String> {
    let body = std::fs::read_to_string(file).unwrap();
    let mut vars: BTreeMap<String, String> = body
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let dir = dir.to_string_lossy().into_owned();
    let start: Option<i64> = vars.get("SLURM_JOB_START_TIME").map(|t| t.parse().unwrap());
    for (k, v) in vars.iter_mut() {
        let stands_for = match k.as_str() {
            "SLURM_JOB_ID" | "SLURM_JOBID" | "SLURM_ARRAY_JOB_ID" => "<job>".to_string(),
            "SLURM_JOB_START_TIME" => "<start>".to_string(),
            "SLURM_JOB_END_TIME" => {
                format!("<start>+{}", v.parse::<i64>().unwrap() - start.unwrap())
            }
            "SLURM_SUBMIT_HOST" => "<host>".to_string(),
            "SLURM_JOB_USER" => "<user>".to_string(),
            "SLURM_JOB_UID" => "<uid>".to_string(),
            _ if *v == dir => "<dir>".to_string(),
            _ => continue,
        };
        *v = stands_for;
    }
    vars
}

/// `vars` as the sorted `NAME=value` lines the expectations below are written in.
fn lines(vars: &BTreeMap<String, String>) -> String {
    vars.iter().map(|(k, v)| format!("{k}={v}\n")).collect()
}

#[test]
fn jobs_steps_and_tasks_get_the_slurm_environment() {
    let scratch = state_dir("job-env");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    std::fs::write(dir.join("dump.sh"), DUMP).unwrap();
    let script = |s: &str| s.replace("DIR", &dir.to_string_lossy()).replace("BIN", BIN);
    for s in [GPU_ARRAY, PLAIN] {
        let out = run(dir, &["submit", "--parsable"], &script(s));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for done in ["done.1", "done.3", "done.5", "plain.done"] {
        poll(120, done, || dir.join(done).exists().then_some(()));
    }
    let mut got = String::new();
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("batch.") || n.starts_with("task.") || n.starts_with("plain."))
        .filter(|n| !n.ends_with(".done"))
        .collect();
    files.sort();
    for f in files {
        got.push_str(&format!("== {f}\n"));
        got.push_str(&lines(&vars(&dir.join(&f), dir)));
    }
    end_jobs(dir);
    // What each dump held when the environment was built in four places (the daemon's launch
    // and step start, the engine's GRES, srun's step and tasks); `JOB_ENV_BLESS=1` rewrites it
    // after a deliberate change.
    let expected = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/job_environment.txt");
    if std::env::var_os("JOB_ENV_BLESS").is_some() {
        std::fs::create_dir_all(expected.parent().unwrap()).unwrap();
        std::fs::write(&expected, &got).unwrap();
    }
    let expected = std::fs::read_to_string(&expected).unwrap();
    for (got, want) in got.lines().zip(expected.lines()) {
        assert_eq!(got, want, "the first line that differs");
    }
    assert_eq!(got, expected);
}
