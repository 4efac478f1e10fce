//! Job arrays against the real daemon: a `#SBATCH --array=1-6%2` script with `%A_%a` output
//! names runs at most two tasks at once, each task writes its own SLURM_ARRAY_* values to its
//! own file, squeue folds the pending tasks into one row, `scancel 123_[5-6]` cancels those two
//! only, `update ArrayTaskThrottle=` takes effect, and an array survives a daemon restart.

use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;

use common::{BIN, Daemon, all_jobs, end_jobs, poll, state_dir, wait_for};

/// `sluice ARGS…` run in `dir`, with the state directory in the environment.
fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("SLUICE_STATE_DIR", dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// squeue's `%i %t` lines.
fn queue(dir: &Path) -> Vec<String> {
    ok(&run(dir, &["queue", "-h", "-o", "%i %t"]))
        .lines()
        .map(String::from)
        .collect()
}

/// When task `t` started and ended, as it wrote them.
fn span(dir: &Path, t: u32) -> (f64, f64) {
    let read = |what: &str| -> f64 {
        std::fs::read_to_string(dir.join(format!("{what}_{t}")))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    (read("start"), read("end"))
}

const SCRIPT: &str = r#"#!/bin/bash
#SBATCH --array=1-6%2
#SBATCH --output=out_%A_%a.txt
#SBATCH --time=00:05:00
echo "task=$SLURM_ARRAY_TASK_ID job=$SLURM_JOB_ID array=$SLURM_ARRAY_JOB_ID count=$SLURM_ARRAY_TASK_COUNT min=$SLURM_ARRAY_TASK_MIN max=$SLURM_ARRAY_TASK_MAX step=$SLURM_ARRAY_TASK_STEP"
date +%s.%N > start_$SLURM_ARRAY_TASK_ID
sleep 2
date +%s.%N > end_$SLURM_ARRAY_TASK_ID
"#;

#[test]
fn an_array_runs_throttled_with_its_own_names_and_cancels_by_task() {
    let scratch = state_dir("arrays");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    std::fs::write(dir.join("array.sh"), SCRIPT).unwrap();
    let printed = ok(&run(dir, &["submit", "array.sh"]));
    let a: u64 = printed
        .trim()
        .strip_prefix("Submitted batch job ")
        .unwrap_or_else(|| panic!("sbatch printed {printed:?}"))
        .parse()
        .unwrap();
    // Two run, and the other four show as one row, as squeue shows an array's remainder.
    let lines = poll(30, "two tasks running", || {
        let lines = queue(dir);
        (lines.iter().filter(|l| l.ends_with(" R")).count() == 2).then_some(lines)
    });
    assert!(
        lines.contains(&format!("{a}_[3-6%2] PD")),
        "no compact pending row in {lines:?}"
    );
    assert!(lines.contains(&format!("{a}_1 R")), "{lines:?}");
    // scancel A_[5-6] takes those two only.
    ok(&run(dir, &["cancel", &format!("{a}_[5-6]")]));
    let lines = queue(dir);
    assert!(lines.contains(&format!("{a}_[3-4%2] PD")), "{lines:?}");
    let shown = ok(&run(dir, &["show", "job", &format!("{a}_5")]));
    assert!(
        shown.contains(&format!("ArrayJobId={a} ArrayTaskId=5 ArrayTaskThrottle=2"))
            && shown.contains("JobState=CANCELLED"),
        "{shown}"
    );
    // One at a time from now on: 3 and 4 do not overlap.
    ok(&run(
        dir,
        &["update", &format!("JobId={a}"), "ArrayTaskThrottle=1"],
    ));
    for t in 0..4 {
        let job = wait_for(dir, a + t, &["COMPLETED", "FAILED"], 60);
        assert_eq!(job.state, "COMPLETED", "task {}", t + 1);
    }
    let jobs = all_jobs(dir);
    for t in [5u32, 6] {
        let j = jobs
            .iter()
            .find(|j| j.array.is_some_and(|m| m.task_id == t))
            .unwrap();
        assert_eq!(j.state, "CANCELLED");
        assert!(!dir.join(format!("out_{a}_{t}.txt")).exists());
    }
    for t in 1..=4u32 {
        let text = std::fs::read_to_string(dir.join(format!("out_{a}_{t}.txt"))).unwrap();
        let id = a + u64::from(t) - 1;
        assert_eq!(
            text.trim(),
            format!("task={t} job={id} array={a} count=6 min=1 max=6 step=1")
        );
    }
    let spans: Vec<(f64, f64)> = (1..=4).map(|t| span(dir, t)).collect();
    for (i, (start, _)) in spans.iter().enumerate() {
        let at_once = spans
            .iter()
            .filter(|(s, e)| s <= start && start < e)
            .count();
        assert!(
            at_once <= 2,
            "task {} started with {at_once} running",
            i + 1
        );
    }
    let (s3, e3) = spans[2];
    let (s4, e4) = spans[3];
    assert!(e3 <= s4 || e4 <= s3, "throttle 1 let tasks 3 and 4 overlap");
    // `show job A` is every task, in scontrol's layout.
    let shown = ok(&run(dir, &["show", "job", &a.to_string()]));
    for t in 1..=6 {
        assert!(
            shown.contains(&format!(
                "ArrayJobId={a} ArrayTaskId={t} ArrayTaskThrottle=1"
            )),
            "task {t} missing in\n{shown}"
        );
    }
    end_jobs(dir);
}

#[test]
fn max_array_size_bounds_task_ids_and_malformed_specs_are_refused() {
    let scratch = state_dir("arrays-bad");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let huge = run(dir, &["submit", "--array=0-4000000000", "--wrap", "true"]);
    assert!(!huge.status.success());
    let err = String::from_utf8_lossy(&huge.stderr);
    assert!(
        err.contains("task ids must be below MaxArraySize=1001"),
        "{err}"
    );
    let bad = run(dir, &["submit", "--array=5-2", "--wrap", "true"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("invalid job array specification"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    // A thousand copies of a 20 kB request would hold more than one submission may.
    let big = format!("true # {}", "x".repeat(20_000));
    let heavy = run(dir, &["submit", "--array=0-1000", "--wrap", &big]);
    assert!(!heavy.status.success());
    assert!(
        String::from_utf8_lossy(&heavy.stderr).contains("bytes an array may hold"),
        "{}",
        String::from_utf8_lossy(&heavy.stderr)
    );
    assert!(all_jobs(dir).is_empty(), "a refused array left jobs behind");
}

#[test]
fn an_array_and_its_throttle_survive_a_restart_and_dependencies_wait_for_it() {
    let scratch = state_dir("arrays-restart");
    let dir = scratch.path();
    let d = Daemon::start(dir);
    let script = "#!/bin/sh\ndate +%s.%N > start_$SLURM_ARRAY_TASK_ID\nsleep 1\ndate +%s.%N > end_$SLURM_ARRAY_TASK_ID\n";
    std::fs::write(dir.join("t.sh"), script).unwrap();
    let a: u64 = ok(&run(
        dir,
        &["submit", "--parsable", "--hold", "--array=0-2%1", "t.sh"],
    ))
    .trim()
    .parse()
    .unwrap();
    let after: u64 = ok(&run(
        dir,
        &[
            "submit",
            "--parsable",
            &format!("--dependency=afterok:{a}"),
            "--wrap",
            "date +%s.%N > after",
        ],
    ))
    .trim()
    .parse()
    .unwrap();
    d.terminate();
    let _d = Daemon::start(dir);
    let jobs = all_jobs(dir);
    let tasks: Vec<_> = jobs.iter().filter(|j| j.array.is_some()).collect();
    assert_eq!(tasks.len(), 3);
    assert!(
        tasks
            .iter()
            .all(|j| j.array.unwrap().throttle == 1 && j.state == "PENDING")
    );
    for t in 0..3 {
        ok(&run(dir, &["release", &(a + t).to_string()]));
    }
    for t in 0..3 {
        let job = wait_for(dir, a + t, &["COMPLETED", "FAILED"], 60);
        assert_eq!(job.state, "COMPLETED");
    }
    let job = wait_for(dir, after, &["COMPLETED", "FAILED"], 60);
    assert_eq!(job.state, "COMPLETED");
    let spans: Vec<(f64, f64)> = (0..3).map(|t| span(dir, t)).collect();
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            assert!(
                a.1 <= b.0 || b.1 <= a.0,
                "throttle 1 let tasks overlap after a restart"
            );
        }
    }
    let last_end = spans.iter().map(|s| s.1).fold(0.0, f64::max);
    let after_start: f64 = std::fs::read_to_string(dir.join("after"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        after_start >= last_end,
        "afterok on the array started before its last task ended"
    );
    end_jobs(dir);
}

#[test]
fn aftercorr_pairs_tasks_by_index() {
    let scratch = state_dir("arrays-corr");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    // Task 1 of the first array fails; task 0 completes.
    let a: u64 = ok(&run(
        dir,
        &[
            "submit",
            "--parsable",
            "--array=0-1",
            "--wrap",
            "exit $SLURM_ARRAY_TASK_ID",
        ],
    ))
    .trim()
    .parse()
    .unwrap();
    let b: u64 = ok(&run(
        dir,
        &[
            "submit",
            "--parsable",
            "--array=0-1",
            &format!("--dependency=aftercorr:{a}"),
            "--wrap",
            "true",
        ],
    ))
    .trim()
    .parse()
    .unwrap();
    assert_eq!(b, a + 2);
    assert_eq!(
        wait_for(dir, a, &["COMPLETED", "FAILED"], 60).state,
        "COMPLETED"
    );
    assert_eq!(
        wait_for(dir, a + 1, &["COMPLETED", "FAILED"], 60).state,
        "FAILED"
    );
    assert_eq!(
        wait_for(dir, b, &["COMPLETED", "FAILED"], 60).state,
        "COMPLETED"
    );
    let j = poll(30, "task 1 of the second array held for good", || {
        let j = wait_for(dir, b + 1, &["PENDING"], 5);
        (j.reason == "DependencyNeverSatisfied").then_some(j)
    });
    assert_eq!(j.state, "PENDING");
    end_jobs(dir);
}
